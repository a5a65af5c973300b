package scenario

import (
	"bufio"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/host"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/sim"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// RunOptions tunes a run.
type RunOptions struct {
	// PcapDir, when set, receives one pcap file per captured port: the
	// scenario's captures, or every host NIC when it lists none.
	PcapDir string
	// Trace is the trace-hash mode (full by default).
	Trace sim.TraceMode
	// Log receives element logs; nil discards them.
	Log *slog.Logger
	// Stop, when closed (from any goroutine: a signal handler's), asks
	// the run to stop at the next event boundary (sim.Sim.Stop): Execute
	// then returns normally, with the captures flushed and closed and a
	// Result marked Interrupted at the simulated time reached. Closed
	// before Execute, the run stops before its first event. Pass a
	// context's Done() to stop with the context.
	Stop <-chan struct{}
}

// Run is a scenario set up in the simulator, ready to run: tests use it to
// look inside (Sim, Host) before and after Run.
type Run struct {
	Sc    *Scenario
	Sim   *sim.Sim
	Fab   scheme.Fabric
	hosts map[topo.NodeID]*host.Host
	flows []*flow
	fails []FailureEvent
	pcaps []*pcapFile
	watch *portWatch // nil when no element reports port states
	stop  <-chan struct{}
}

type flow struct {
	w      Workload
	id     int
	result func() Flow
}

type pcapFile struct {
	path string
	f    *os.File
	bw   *bufio.Writer
}

// Setup builds the simulation: the scheme on every node, a host stack on
// every host, link settings, timing, failures, workloads and captures, all
// scheduled but not yet run.
func (sc *Scenario) Setup(opt RunOptions) (*Run, error) {
	g := sc.Graph
	s, err := sim.New(g, sim.Options{Seed: sc.Seed, Trace: opt.Trace, Log: opt.Log})
	if err != nil {
		return nil, err
	}
	r := &Run{Sc: sc, Sim: s, hosts: map[topo.NodeID]*host.Host{}, stop: opt.Stop}
	// Settings apply in order, each changing only the fields it sets:
	// `links:` first, then every `link:` entry.
	type linkState struct {
		rate       int64
		delay      element.Time
		queue      int
		fault      sim.Fault
		faultTouch bool
	}
	state := make(map[topo.LinkID]*linkState)
	var order []topo.LinkID
	for _, ls := range sc.Links {
		links := []topo.LinkID{ls.Link}
		if ls.Link < 0 {
			links = links[:0]
			for l := range g.NumLinks() {
				links = append(links, topo.LinkID(l))
			}
		}
		for _, l := range links {
			st := state[l]
			if st == nil {
				lk := g.Link(l)
				st = &linkState{rate: lk.Rate, delay: lk.Delay}
				state[l] = st
				order = append(order, l)
			}
			if ls.Rate > 0 {
				st.rate = ls.Rate
			}
			if ls.DelaySet {
				st.delay = ls.Delay
			}
			if ls.Queue > 0 {
				st.queue = ls.Queue
			}
			if ls.LossSet {
				st.fault.Loss, st.faultTouch = ls.Fault.Loss, true
			}
			if ls.CorruptSet {
				st.fault.Corrupt, st.faultTouch = ls.Fault.Corrupt, true
			}
		}
	}
	for _, l := range order {
		st := state[l]
		if err := s.SetLinkParams(l, st.rate, st.delay); err != nil {
			return nil, err
		}
		if st.queue > 0 {
			if err := s.SetQueue(l, st.queue); err != nil {
				return nil, err
			}
		}
		if st.faultTouch {
			if err := s.SetFault(l, st.fault); err != nil {
				return nil, err
			}
		}
	}
	fab, err := sc.Scheme.New(g, scheme.Options{Seed: sc.Seed, Params: sc.Params})
	if err != nil {
		return nil, sc.schemeError(err)
	}
	r.Fab = fab
	elems := make([]element.Element, g.NumNodes())
	for i := range g.NumNodes() {
		n := topo.NodeID(i)
		e := fab.Element(n)
		elems[i] = e
		if g.Node(n).Kind != topo.Host {
			if e != nil {
				if err := s.Place(n, e); err != nil {
					return nil, err
				}
			}
			continue
		}
		mac, ip, err := g.HostAddr(n)
		if err != nil {
			return nil, err
		}
		h := host.New(host.Config{Name: g.Node(n).Name, MAC: mac, IP: ip, TCP: sc.TCP})
		r.hosts[n] = h
		if err := s.PlaceHost(n, e, h); err != nil {
			return nil, err
		}
	}
	// Timing entries apply in order, each changing only the fields it
	// names; cut-through starts from what the node's element declares, so
	// that an entry giving only a latency does not turn it off.
	timing := map[topo.NodeID]*sim.Timing{}
	var timed []topo.NodeID
	for _, t := range sc.Timing {
		tm := timing[t.Node]
		if tm == nil {
			tm = &sim.Timing{}
			if c, ok := elems[t.Node].(sim.CutThrougher); ok {
				tm.CutThrough = max(c.CutThrough(), 0)
			}
			timing[t.Node] = tm
			timed = append(timed, t.Node)
		}
		if t.LatencySet {
			tm.Latency = t.Timing.Latency
		}
		if t.CutThroughSet {
			tm.CutThrough = t.Timing.CutThrough
		}
	}
	for _, n := range timed {
		if err := s.SetTiming(n, *timing[n]); err != nil {
			return nil, err
		}
	}
	r.watch = newPortWatch(sc.Graph, s.Element)
	for _, f := range sc.Failures {
		s.At(f.At, func() {
			state := map[bool]string{true: "up", false: "down"}[f.Up]
			if r.watch != nil {
				r.watch.begin(s.Now(), f.What+" "+state)
			}
			var err error
			if f.Link >= 0 {
				err = s.SetLink(f.Link, f.Up)
			} else {
				err = s.SetNode(f.Node, f.Up)
			}
			ev := FailureEvent{AtS: f.At.Seconds(), What: f.What, State: state}
			if err != nil {
				ev.Error = err.Error()
			}
			r.fails = append(r.fails, ev)
			if r.watch != nil {
				r.watch.sample(s.Now()) // what the failure did at once
			}
		})
	}
	for i, w := range sc.Workloads {
		fl := &flow{w: w, id: i + 1}
		r.flows = append(r.flows, fl)
		s.At(w.At, func() { r.start(fl) })
	}
	if opt.PcapDir != "" {
		if err := r.openCaptures(opt.PcapDir); err != nil {
			r.closeCaptures()
			return nil, err
		}
	}
	return r, nil
}

// schemeError reports the scheme's refusal as FILE:LINE: FIELD: bad
// scenario: scheme S on T: ERR. Schemes say which parameter they refuse
// only in words, so the parameter at fault is found by trying the scheme
// without any (the fault is then the scheme's or the topology's: the
// scheme's line), then with all but one (when the removal of exactly one
// is accepted, that one is at fault: its line, as params.NAME, with the
// error it gets alone when it is refused alone, which is about it), then
// with each alone (the first, in name order, refused on its own). A fault of several
// together is reported at the first parameter's line, as params. (Each
// alone came first once: stp's forward_delay 4s is refused alone, with
// the default max age, so {hello: 0s, max_age: 6s, forward_delay: 4s}
// blamed forward_delay, not hello.)
func (sc *Scenario) schemeError(err error) error {
	g := sc.Graph
	line, field := sc.schemeLine, "scheme"
	refused := func(p map[string]string) error {
		_, err := sc.Scheme.New(g, scheme.Options{Seed: sc.Seed, Params: p})
		return err
	}
	if len(sc.Params) > 0 && refused(nil) == nil {
		field, line = "params", 0
		for _, k := range slices.Sorted(maps.Keys(sc.Params)) {
			if l := sc.paramLines[k]; l > 0 && (line == 0 || l < line) {
				line = l
			}
		}
		keys := slices.Sorted(maps.Keys(sc.Params))
		var fixers []string // the parameters whose removal is accepted
		for _, k := range keys {
			rest := maps.Clone(sc.Params)
			delete(rest, k)
			if len(keys) > 1 && refused(rest) == nil {
				if fixers = append(fixers, k); len(fixers) > 1 {
					break // not exactly one: no need to build more
				}
			}
		}
		found := false
		if len(fixers) == 1 {
			k := fixers[0]
			line, field, found = sc.paramLines[k], "params."+k, true
			// The error of k alone, so that the message is about the
			// parameter named: with all of them, the scheme may
			// complain first about another one refused with k.
			if e := refused(map[string]string{k: sc.Params[k]}); e != nil {
				err = e
			}
		}
		for _, k := range keys {
			if found {
				break
			}
			if e := refused(map[string]string{k: sc.Params[k]}); e != nil {
				line, field, err, found = sc.paramLines[k], "params."+k, e, true
			}
		}
	}
	where := sc.File
	if line > 0 {
		where = fmt.Sprintf("%s:%d", sc.File, line)
	}
	return fmt.Errorf("%s: %s: %w: scheme %s on %s: %v", where, field, ErrScenario, sc.Scheme.Name, g.Name, err)
}

// Host returns the host stack on node n.
func (r *Run) Host(n topo.NodeID) *host.Host { return r.hosts[n] }

func (r *Run) addr(n topo.NodeID) netip.Addr {
	_, p, _ := r.Sc.Graph.HostAddr(n)
	return p.Addr()
}

// start launches a workload; it runs in the engine's context.
func (r *Run) start(fl *flow) {
	w := fl.w
	g := r.Sc.Graph
	src, dst := r.hosts[w.Src], r.hosts[w.Dst]
	base := Flow{ID: fl.id, Kind: w.Kind.String(), Src: g.Node(w.Src).Name, StartS: r.Sim.Now().Seconds()}
	if w.Kind != Shuffle {
		base.Dst = g.Node(w.Dst).Name
	}
	port := w.Port
	if port == 0 {
		port = host.DiscardPort
	}
	switch w.Kind {
	case Ping:
		app := src.PingWith(r.addr(w.Dst), host.PingOptions{Count: w.Count, Interval: w.Interval, Size: w.Size})
		fl.result = func() Flow {
			f := base
			res := app.Result()
			f.Done, f.Detail = app.Done(), res
			f.Sent, f.Received, f.InFlight = int64(res.Sent), int64(res.Received), int64(res.InFlight)
			f.Loss = ptr(res.Loss)
			f.RTT = &res.RTT
			f.rtts = res.RTTs
			f.Error = res.Error
			return f
		}
	case UDP:
		size := w.Size
		if size == 0 {
			size = 1472
		}
		dur := w.Duration
		if dur == 0 {
			dur = r.Sc.Duration - w.At
		}
		app := src.UDP(r.addr(w.Dst), port, w.Rate, size, dur)
		fl.result = func() Flow {
			f := base
			res := app.ResultWith(dst)
			f.Done, f.Detail = app.Done(), res
			f.Sent, f.Received, f.InFlight = int64(res.Sent), int64(res.Received), int64(res.InFlight)
			f.Loss = res.Loss // nil when not measured (payloads under 20 bytes)
			f.ThroughputBps = res.GoodputBps
			f.Error = res.Error
			return f
		}
	case TCP:
		c := src.TCPBulk(r.addr(w.Dst), port, w.Bytes)
		fl.result = func() Flow {
			f := base
			res := c.Result()
			f.Done, f.Detail = c.Done(), res
			f.ThroughputBps = res.GoodputBps
			if !f.Done && r.Sim.Now() > element.Time(res.Start) {
				// Not finished: report the rate so far.
				f.ThroughputBps = float64(res.BytesAcked) * 8 / (r.Sim.Now() - element.Time(res.Start)).Seconds()
			}
			f.Error = res.Error
			return f
		}
	case TCPRR:
		req, resp := max(w.Request, 1), max(w.Response, 1)
		count := w.Count
		if count == 0 {
			count = 1000
		}
		app := src.TCPRR(r.addr(w.Dst), req, resp, count)
		fl.result = func() Flow {
			f := base
			res := app.Result()
			f.Done, f.Detail = app.Done(), res
			f.RTT = &res.RTT
			f.rtts = res.RTTs
			f.Error = res.Error
			return f
		}
	case Shuffle:
		var hs []*host.Host
		for _, n := range w.Hosts {
			hs = append(hs, r.hosts[n])
		}
		sh := host.StartShuffle(hs, host.ShuffleOptions{Bytes: w.Bytes})
		base.Src = fmt.Sprintf("%d hosts", len(hs))
		fl.result = func() Flow {
			f := base
			res := sh.Result()
			f.Done, f.Detail = sh.Done(), res
			f.ThroughputBps = res.AggregateGoodput
			if res.Failed > 0 {
				f.Error = fmt.Sprintf("%d transfers failed", res.Failed)
			}
			return f
		}
	}
}

func ptr[T any](v T) *T { return &v }

// capturePort is one port a run captures.
type capturePort struct {
	n topo.NodeID
	p element.Port
}

// capturePorts lists the ports a run captures, each once.
func (sc *Scenario) capturePorts() []capturePort {
	g := sc.Graph
	var ports []capturePort
	caps := sc.Captures
	if len(caps) == 0 {
		// Every NIC of every host (port 0: all its connected ports).
		for _, h := range g.Nodes(topo.Host) {
			caps = append(caps, Capture{Node: h})
		}
	}
	// A port named twice ({node: h1} and {node: h1, port: 1}) is captured
	// once: two writers on one file would each write a header and
	// interleave their records, and the file would not decode.
	seen := map[capturePort]bool{}
	add := func(c capturePort) {
		if !seen[c] {
			seen[c] = true
			ports = append(ports, c)
		}
	}
	for _, c := range caps {
		if c.Port != 0 {
			add(capturePort{c.Node, c.Port})
			continue
		}
		for p, l := range g.Ports(c.Node) {
			if l != topo.NoLink {
				add(capturePort{c.Node, element.Port(p + 1)})
			}
		}
	}
	return ports
}

// PcapFiles names the files a run with a capture directory writes into
// it, so that a caller can check the directory before the run.
func (sc *Scenario) PcapFiles() []string {
	var names []string
	for _, c := range sc.capturePorts() {
		names = append(names, PcapName(sc.Graph, c.n, c.p))
	}
	return names
}

func (r *Run) openCaptures(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("scenario: pcap dir: %w", err)
	}
	g := r.Sc.Graph
	for _, c := range r.Sc.capturePorts() {
		path := filepath.Join(dir, PcapName(g, c.n, c.p))
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("scenario: pcap: %w", err)
		}
		pf := &pcapFile{path: path, f: f, bw: bufio.NewWriterSize(f, 64<<10)}
		r.pcaps = append(r.pcaps, pf)
		w, err := wire.NewPcapWriter(pf.bw, wire.LinkTypeEthernet, element0)
		if err != nil {
			return fmt.Errorf("scenario: pcap %s: %w", path, err)
		}
		if err := r.Sim.Capture(c.n, c.p, sim.Pcap{W: w}); err != nil {
			return err
		}
	}
	return nil
}

// PcapName is the name of the capture file of port p of node n: NAME-P.pcap,
// where NAME is the node's name with every byte other than an ASCII letter,
// digit, '_', '.' or '-' written as %XX (its hex value, upper case), so that
// "h1" stays h1-1.pcap while "../evil" becomes ..%2Fevil-1.pcap, a file in
// the capture directory. The mapping is one to one ('%' itself is escaped),
// and the port is what follows the last '-', so two ports never share a
// file. A name that would make the file name too long for a file system
// (over 200 bytes escaped) keeps its first 180 and ends in %n<node id>,
// which no escaped name contains.
func PcapName(g *topo.Graph, n topo.NodeID, p element.Port) string {
	return fmt.Sprintf("%s-%d.pcap", pcapNodeName(g.Node(n).Name, n), p)
}

func pcapNodeName(name string, n topo.NodeID) string {
	const maxName, keep = 200, 180
	var b strings.Builder
	cut := -1 // where a long name is cut: never inside an escape
	for i := 0; i < len(name); i++ {
		c := name[i]
		plain := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
		if l := b.Len(); cut < 0 && (plain && l+1 > keep || !plain && l+3 > keep) {
			cut = l
		}
		if plain {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	if b.Len() <= maxName {
		return b.String()
	}
	return fmt.Sprintf("%s%%n%d", b.String()[:cut], n)
}

func (r *Run) closeCaptures() error {
	var first error
	for _, p := range r.pcaps {
		if err := p.bw.Flush(); err != nil && first == nil {
			first = fmt.Errorf("scenario: pcap %s: %w", p.path, err)
		}
		if err := p.f.Close(); err != nil && first == nil {
			first = fmt.Errorf("scenario: pcap %s: %w", p.path, err)
		}
	}
	r.pcaps = nil
	return first
}

// Unwatch turns off the sampling of port states (Result.PortStates is
// then empty): tests compare a watched run with an unwatched one.
func (r *Run) Unwatch() { r.watch = nil }

// Execute runs the simulation to the scenario's duration and collects the
// results. A stop (RunOptions.Stop, or a Sim.Stop from an action) ends the
// run at an event boundary; the results are then those of the run so far,
// marked Interrupted.
func (r *Run) Execute() (*Result, error) {
	endRelay := r.relayStop()
	if r.watch == nil {
		r.Sim.Run(r.Sc.Duration)
	} else {
		// Run in steps, sampling the port states between them; a Stop
		// ends the run as it ends an unwatched one.
		for t := element.Time(0); t < r.Sc.Duration && !r.Sim.Stopped(); {
			t = min(t+WatchEvery, r.Sc.Duration)
			r.Sim.Run(t)
			r.watch.sample(r.Sim.Now())
		}
		r.watch.end(r.Sim.Now())
	}
	endRelay()
	interrupted := r.Sim.Stopped()
	paths := make([]string, 0, len(r.pcaps))
	for _, p := range r.pcaps {
		paths = append(paths, p.path)
	}
	if err := r.closeCaptures(); err != nil {
		return nil, err
	}
	if err := r.Sim.Err(); err != nil {
		return nil, err
	}
	res := r.collect()
	res.Captures = paths
	res.Interrupted = interrupted
	return res, nil
}

// relayStop turns RunOptions.Stop into a Sim.Stop, the one call safe
// from another goroutine: the loop reads no channel. A Stop closed
// already (a Ctrl-C during the setup) stops the run before its first
// event; one closed later, at the next event boundary. The returned func
// ends the goroutine that waits for it: a close that comes as the run
// ends may then have left a Stop pending in the Sim, which would end
// its next Run at once.
func (r *Run) relayStop() (end func()) {
	select {
	case <-r.stop:
		r.Sim.Stop()
		return func() {}
	default:
	}
	if r.stop == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-r.stop:
			r.Sim.Stop()
		case <-done:
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// Run sets the scenario up and runs it.
func (sc *Scenario) Run(opt RunOptions) (*Result, error) {
	r, err := sc.Setup(opt)
	if err != nil {
		return nil, err
	}
	return r.Execute()
}
