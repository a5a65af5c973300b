package scenario

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/host"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/scheme/all"
	"github.com/edgefabric/edgefabric/sim"
	"github.com/edgefabric/edgefabric/topo"
)

// ErrScenario is wrapped by every error about a scenario file's content; the
// message names the file, the line and the field.
var ErrScenario = errors.New("bad scenario")

// Scenario is a resolved scenario: every name looked up, every unit parsed.
type Scenario struct {
	Name     string
	File     string
	Topology string
	Graph    *topo.Graph
	Scheme   *scheme.Scheme
	Params   map[string]string
	Seed     uint64
	Duration element.Time

	// Links are per-link settings, defaults first, in file order.
	Links     []LinkSetting
	Timing    []NodeTiming
	Workloads []Workload
	Failures  []Failure
	Captures  []Capture
	// TCP tunes every host's TCP; zero fields keep host.TCPConfig's
	// defaults.
	TCP host.TCPConfig

	// Where the scheme and each parameter are in the file, for the
	// scheme's errors, which come when the run is set up.
	schemeLine int
	paramLines map[string]int
}

// LinkSetting overrides a link's parameters; fields left unset (zero
// rate and queue, the *Set flags false) keep the values before it: the
// topology's, then `links:`, then earlier `link:` entries. Link is -1 for
// "every link".
type LinkSetting struct {
	Link       topo.LinkID
	Rate       int64
	Delay      element.Time
	DelaySet   bool
	Queue      int
	Fault      sim.Fault
	LossSet    bool
	CorruptSet bool
}

// NodeTiming sets a node's processing latency and cut-through mode.
// Entries apply in file order, each changing only the fields it names
// (LatencySet, CutThroughSet); a node whose cut_through no entry names
// keeps its element's own (sim.CutThrougher).
type NodeTiming struct {
	Node          topo.NodeID
	Timing        sim.Timing
	LatencySet    bool
	CutThroughSet bool
}

// Kind is a workload kind. The zero value is invalid.
type Kind uint8

const (
	kindInvalid Kind = iota
	Ping
	UDP
	TCP
	TCPRR
	Shuffle
)

var kindNames = map[string]Kind{"ping": Ping, "udp": UDP, "tcp": TCP, "tcp_rr": TCPRR, "shuffle": Shuffle}

func (k Kind) String() string {
	for n, v := range kindNames {
		if v == k {
			return n
		}
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Workload is one application run between two hosts (or, for Shuffle, among
// a set of hosts), started at At.
type Workload struct {
	Kind     Kind
	At       element.Time
	Src, Dst topo.NodeID
	Hosts    []topo.NodeID // Shuffle
	Count    int
	Interval element.Time
	Size     int
	Rate     int64
	Duration element.Time
	Bytes    int64
	Port     uint16
	Request  int
	Response int
	// Line is where the workload is in the file, for messages.
	Line int
}

// Failure takes a link or a node down or up at a time.
type Failure struct {
	At   element.Time
	Link topo.LinkID // -1 for a node failure
	Node topo.NodeID
	Up   bool
	What string // "link s1-s2", "node s3"
}

// Capture records one port (or, with Port 0, every port) of a node.
type Capture struct {
	Node topo.NodeID
	Port element.Port
}

// Options tunes loading.
type Options struct {
	// Seed, when SeedSet, overrides the file's seed (the --seed flag).
	Seed    uint64
	SeedSet bool
	// Registry resolves scheme names; nil means every shipped scheme.
	Registry *scheme.Registry
}

// Load reads and resolves a scenario file. Relative topology file paths are
// taken relative to the scenario file.
func Load(path string, opt Options) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	defer f.Close()
	// Read at most one byte past the limit: a path like /dev/zero or a
	// huge file must be refused, not read until memory runs out.
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%s: %w: larger than %d bytes", path, ErrScenario, MaxFileSize)
	}
	return Parse(data, path, opt)
}

// MaxFileSize bounds the scenario files Load reads. Scenarios are short;
// topologies, which can be large, live in their own files.
const MaxFileSize = 64 << 20

// Parse resolves a scenario from YAML; file names it in messages.
func Parse(data []byte, file string, opt Options) (*Scenario, error) {
	var raw rawScenario
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		return nil, decodeError(file, err)
	}
	// One scenario per file: a second YAML document would be ignored.
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, fmt.Errorf("%s:%d: %w: a second YAML document (---): one scenario per file", file, extra.Line, ErrScenario)
	case !errors.Is(err, io.EOF):
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if m := lineMsg.FindStringSubmatch(msg); m != nil {
			return nil, fmt.Errorf("%s:%s: %w: a second YAML document (---), and a broken one: %s", file, m[1], ErrScenario, m[2])
		}
		return nil, fmt.Errorf("%s: %w: a second YAML document (---), and a broken one: %s", file, ErrScenario, msg)
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) == nil {
		if e := findNull(&doc); e != nil {
			return nil, fmt.Errorf("%s:%d: %s: %w: %v", file, e.line, e.field, ErrScenario, e)
		}
	}
	r := &resolver{file: file, opt: opt}
	sc := r.resolve(&raw)
	if r.err != nil {
		return nil, r.err
	}
	return sc, nil
}

// decodeError reports an error of the raw layer or of yaml itself as
// FILE:LINE: bad scenario: MESSAGE. Both say where as "line N: " (yaml
// also as "yaml: line N: "); of several, the first is reported, as the
// resolver reports its first.
func decodeError(file string, err error) error {
	if err.Error() == "EOF" {
		return fmt.Errorf("%s: %w: empty file", file, ErrScenario)
	}
	var re *rawError
	if errors.As(err, &re) {
		return fmt.Errorf("%s:%d: %w: %s", file, re.line, ErrScenario, re.msg)
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	// "field colour not found in type scenario.rawScenario": the type is
	// ours, not the file's.
	msg = inGoType.ReplaceAllString(msg, "")
	// yaml's "cannot unmarshal !!map into []scenario.rawLink" names our
	// Go types: say what was expected in the file's terms.
	msg = goTypeName.ReplaceAllStringFunc(msg, func(m string) string {
		switch {
		case strings.HasPrefix(m, "[]"):
			return "a list"
		case strings.HasPrefix(m, "map["), strings.HasPrefix(m, "scenario.raw"), strings.HasPrefix(m, "*scenario.raw"):
			return "a mapping"
		}
		return "a single value"
	})
	if m := lineMsg.FindStringSubmatch(msg); m != nil {
		if line, err := strconv.Atoi(m[1]); err == nil {
			return fmt.Errorf("%s:%d: %w: %s", file, line, ErrScenario, m[2])
		}
	}
	return fmt.Errorf("%s: %w: %s", file, ErrScenario, msg)
}

var (
	// goTypeName matches the Go type names yaml puts in its messages.
	goTypeName = regexp.MustCompile(`(\[\]|map\[[a-z]+\])?\*?scenario\.[A-Za-z]+`)
	inGoType   = regexp.MustCompile(` in type \S+`)
	lineMsg    = regexp.MustCompile(`(?s)^line ([0-9]+): (.*)$`)
)

// MaxFlows bounds the flows one scenario may ask for: every ordered pair
// a ping, udp, tcp or tcp_rr workload expands to, and every transfer of a
// shuffle (n hosts make n(n-1)). "from: all, to: all" on a large fabric
// would otherwise allocate hundreds of millions of flows before the run
// starts; the design's scale is hundreds of thousands.
const MaxFlows = 1 << 20

type resolver struct {
	file  string
	opt   Options
	g     *topo.Graph
	err   error
	flows int // flows asked for so far, checked against MaxFlows
}

// addFlows counts n more flows and refuses the workload that goes past
// MaxFlows. n is a float64 so that the product of two host counts cannot
// overflow.
func (r *resolver) addFlows(line int, field string, n float64) bool {
	if float64(r.flows)+n > MaxFlows {
		r.fail(line, field, "asks for up to %.0f flows, with %d in the scenario before it; the limit is %d", n, r.flows, MaxFlows)
		return false
	}
	r.flows += int(n)
	return true
}

// fail records the first error, naming the file, line and field.
func (r *resolver) fail(line int, field string, format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%s:%d: %s: %w: %s", r.file, line, field, ErrScenario, fmt.Sprintf(format, args...))
	}
}

func (r *resolver) resolve(raw *rawScenario) *Scenario {
	sc := &Scenario{File: r.file, Name: raw.Name.V, Params: map[string]string{}}
	if sc.Name == "" {
		sc.Name = strings.TrimSuffix(filepath.Base(r.file), filepath.Ext(r.file))
	}
	// Seed first: the topology (jellyfish) may depend on it.
	sc.Seed = 1
	if raw.Seed.Set {
		v, err := strconv.ParseUint(raw.Seed.V, 10, 64)
		if err != nil {
			r.fail(raw.Seed.Line, "seed", "%q is not a non-negative integer", raw.Seed.V)
		}
		sc.Seed = v
	}
	if r.opt.SeedSet {
		sc.Seed = r.opt.Seed
	}
	if !raw.Topology.Set || raw.Topology.V == "" {
		r.fail(1, "topology", "missing (a spec like fattree:4 or a file)")
		return nil
	}
	sc.Topology = raw.Topology.V
	spec := raw.Topology.V
	if !topo.IsSpec(spec) && !filepath.IsAbs(spec) {
		spec = filepath.Join(filepath.Dir(r.file), spec)
	}
	g, err := topo.Resolve(spec, sc.Seed)
	if err != nil {
		r.fail(raw.Topology.Line, "topology", "%v", err)
		return nil
	}
	sc.Graph, r.g = g, g

	reg := r.opt.Registry
	if reg == nil {
		reg = all.Registry()
	}
	if !raw.Scheme.Set {
		r.fail(1, "scheme", "missing (one of: %s)", strings.Join(reg.Names(), ", "))
		return nil
	}
	s, err := reg.Get(raw.Scheme.V)
	if err != nil {
		// The field already names the scheme: "scheme: scheme: ..." read
		// twice.
		r.fail(raw.Scheme.Line, "scheme", "%s", strings.TrimPrefix(err.Error(), "scheme: "))
		return nil
	}
	sc.Scheme, sc.schemeLine = s, raw.Scheme.Line
	sc.paramLines = make(map[string]int, len(raw.Params))
	for k, v := range raw.Params {
		sc.Params[k], sc.paramLines[k] = v.V, v.Line
	}

	if !raw.Duration.Set {
		r.fail(1, "duration", "missing (e.g. duration: 10s)")
		return nil
	}
	sc.Duration = r.time(raw.Duration, "duration")
	if sc.Duration <= 0 && r.err == nil {
		r.fail(raw.Duration.Line, "duration", "must be positive")
	}

	sc.TCP = r.tcp(&raw.TCP)
	if ls, ok := r.linkParams(&raw.Links, "links", -1); ok {
		sc.Links = append(sc.Links, ls)
	}
	for i := range raw.Link {
		rl := &raw.Link[i]
		field := fmt.Sprintf("link[%d]", i)
		l := r.link(rl.Ends, rl.line, field+".ends")
		if ls, ok := r.linkParams(&rl.rawLinkParams, field, l); ok {
			sc.Links = append(sc.Links, ls)
		} else if r.err == nil {
			// As a timing entry: an override that sets nothing is a
			// mistake, not a no-op.
			r.fail(rl.line, field, "say what to set: rate, delay, queue, loss or corrupt")
		}
	}
	for i := range raw.Timing {
		sc.Timing = append(sc.Timing, r.timing(&raw.Timing[i], fmt.Sprintf("timing[%d]", i))...)
	}
	for i := range raw.Workloads {
		sc.Workloads = append(sc.Workloads, r.workload(&raw.Workloads[i], fmt.Sprintf("workloads[%d]", i), sc.Duration)...)
	}
	var fidx []int // per failure kept, its index in the file
	for i := range raw.Failures {
		if f, ok := r.failure(&raw.Failures[i], fmt.Sprintf("failures[%d]", i), sc.Duration); ok {
			sc.Failures = append(sc.Failures, f)
			fidx = append(fidx, i)
		}
	}
	if r.err == nil {
		r.failureChanges(sc.Failures, fidx, raw.Failures)
	}
	for i := range raw.Captures {
		c := &raw.Captures[i]
		field := fmt.Sprintf("captures[%d]", i)
		if !c.Node.Set {
			c.Node.Line = c.line // a missing node has no line of its own
		}
		n := r.nodeName(c.Node, field+".node")
		var p element.Port
		if c.Port.Set && r.err == nil {
			v, err := strconv.Atoi(c.Port.V)
			if err != nil || v < 1 || v > g.Node(n).Ports {
				r.fail(c.Port.Line, field+".port", "%q is not a port of %s (1..%d)", c.Port.V, g.Node(n).Name, g.Node(n).Ports)
			}
			p = element.Port(v)
		}
		if r.err == nil {
			sc.Captures = append(sc.Captures, Capture{Node: n, Port: p})
		}
	}
	return sc
}

// failureChanges refuses a failure entry that changes nothing: a link or
// node set down (or up) when it already is at that time (every link and
// node is up when the run starts). Entries take effect in time order,
// those at the same time in file order.
func (r *resolver) failureChanges(fs []Failure, fidx []int, raw []rawFailure) {
	order := make([]int, len(fs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(fs[a].At, fs[b].At) })
	type key struct {
		link topo.LinkID
		node topo.NodeID
	}
	last := map[key]int{} // the entry that set the state, by position in fs
	up := map[key]bool{}
	for _, i := range order {
		f := fs[i]
		k := key{f.Link, -1}
		if f.Link < 0 {
			k = key{-1, f.Node}
		}
		cur, seen := up[k]
		if !seen {
			cur = true
		}
		if f.Up == cur {
			state := map[bool]string{true: "up", false: "down"}[f.Up]
			why := "every link and node is up when the run starts"
			if j, ok := last[k]; ok {
				why = fmt.Sprintf("failures[%d] set it %s at %v", fidx[j], state, fs[j].At)
			}
			r.fail(raw[fidx[i]].line, fmt.Sprintf("failures[%d]", fidx[i]), "%s is already %s at %v (%s)", f.What, state, f.At, why)
			return
		}
		up[k], last[k] = f.Up, i
	}
}

func (r *resolver) time(s scalar, field string) element.Time {
	if !s.Set {
		return 0
	}
	t, err := ParseTime(s.V)
	if err != nil {
		r.fail(s.Line, field, "%v", err)
	}
	return t
}

func (r *resolver) intv(s scalar, field string, lo, hi int) int {
	if !s.Set {
		return 0
	}
	v, err := strconv.Atoi(s.V)
	if err != nil || v < lo || v > hi {
		r.fail(s.Line, field, "%q is not an integer in [%d, %d]", s.V, lo, hi)
	}
	return v
}

// size resolves a byte count written as bytes takes it (56, 1KB, 4KiB),
// in [lo, hi].
func (r *resolver) size(s scalar, field string, lo, hi int) int {
	if !s.Set {
		return 0
	}
	v, err := ParseSize(s.V)
	if err != nil {
		r.fail(s.Line, field, "%v", err)
		return 0
	}
	if v < int64(lo) || v > int64(hi) {
		r.fail(s.Line, field, "%q must be between %d and %d bytes", s.V, lo, hi)
		return 0
	}
	return int(v)
}

func (r *resolver) prob(s scalar, field string) float64 {
	v, err := strconv.ParseFloat(s.V, 64)
	if err != nil || !(v >= 0 && v <= 1) {
		r.fail(s.Line, field, "%q is not a probability in [0, 1]", s.V)
	}
	return v
}

func (r *resolver) nodeName(s scalar, field string) topo.NodeID {
	if !s.Set {
		r.fail(s.Line, field, "missing")
		return 0
	}
	n, ok := r.g.Lookup(s.V)
	if !ok {
		r.fail(s.Line, field, "unknown node %q in %s", s.V, r.g.Name)
		return 0
	}
	return n
}

// hosts resolves a host list; "all" means every host.
func (r *resolver) hosts(ns names, field string, line int) []topo.NodeID {
	if !ns.Set || len(ns.V) == 0 {
		r.fail(line, field, "missing (a host, a list of hosts, or all)")
		return nil
	}
	if len(ns.V) == 1 && ns.V[0].V == "all" {
		return r.g.Nodes(topo.Host)
	}
	var out []topo.NodeID
	seen := make(map[topo.NodeID]bool, len(ns.V))
	for _, s := range ns.V {
		n := r.nodeName(s, field)
		if r.err != nil {
			return nil
		}
		if r.g.Node(n).Kind != topo.Host {
			r.fail(s.Line, field, "%q is a %v, not a host", s.V, r.g.Node(n).Kind)
			return nil
		}
		// A host twice would run its flows twice (or, in a shuffle, be
		// counted as a second host).
		if seen[n] {
			r.fail(s.Line, field, "%s listed twice", s.V)
			return nil
		}
		seen[n] = true
		out = append(out, n)
	}
	return out
}

// link finds the link between two named nodes.
func (r *resolver) link(ns names, line int, field string) topo.LinkID {
	if !ns.Set || len(ns.V) != 2 {
		r.fail(max(line, ns.Line), field, "expected two node names, like [s1, s2]")
		return -1
	}
	a, pa := r.linkEnd(ns.V[0], field)
	b, pb := r.linkEnd(ns.V[1], field)
	if r.err != nil {
		return -1
	}
	// Every link between the two, on the ports named if any: with
	// parallel links, taking the first would silently leave the others
	// as they were.
	var found []topo.LinkID
	for p, l := range r.g.Ports(a) {
		if l == topo.NoLink || pa != 0 && element.Port(p+1) != pa {
			continue
		}
		if o := r.g.Link(l).Other(a); o.Node == b && (pb == 0 || element.Port(o.Port) == pb) {
			found = append(found, l)
		}
	}
	switch len(found) {
	case 0:
		r.fail(ns.Line, field, "no link between %s and %s", ns.V[0].V, ns.V[1].V)
		return -1
	case 1:
		return found[0]
	}
	pa = r.g.Link(found[0]).A.Port
	if r.g.Link(found[0]).A.Node != a {
		pa = r.g.Link(found[0]).B.Port
	}
	r.fail(ns.Line, field, "%d links between %s and %s: name a port, like [%s:%d, %s]", len(found), ns.V[0].V, ns.V[1].V,
		r.g.Node(a).Name, pa, r.g.Node(b).Name)
	return -1
}

// linkEnd resolves one end of a link: a node name, or NAME:PORT to pick
// one of several parallel links.
func (r *resolver) linkEnd(s scalar, field string) (topo.NodeID, element.Port) {
	if s.Set {
		if _, ok := r.g.Lookup(s.V); !ok {
			if i := strings.LastIndexByte(s.V, ':'); i > 0 {
				if p, err := strconv.ParseUint(s.V[i+1:], 10, 16); err == nil && p > 0 {
					n := r.nodeName(scalar{V: s.V[:i], Set: true, Line: s.Line}, field)
					if r.err == nil && int(p) > len(r.g.Ports(n)) {
						r.fail(s.Line, field, "%s has no port %d", s.V[:i], p)
					}
					return n, element.Port(p)
				}
			}
		}
	}
	return r.nodeName(s, field), 0
}

func (r *resolver) linkParams(p *rawLinkParams, field string, l topo.LinkID) (LinkSetting, bool) {
	ls := LinkSetting{Link: l}
	any := false
	if p.Rate.Set {
		v, err := ParseRate(p.Rate.V)
		if err != nil {
			r.fail(p.Rate.Line, field+".rate", "%v", err)
		}
		ls.Rate, any = v, true
	}
	if p.Delay.Set {
		ls.Delay, ls.DelaySet, any = r.time(p.Delay, field+".delay"), true, true
	}
	if p.Queue.Set {
		v, err := ParseSize(p.Queue.V)
		if err == nil && (v < 64 || v > 1<<40) {
			err = fmt.Errorf("%q must be between 64 bytes and 1 TiB", p.Queue.V)
		}
		if err != nil {
			r.fail(p.Queue.Line, field+".queue", "%v", err)
		}
		ls.Queue, any = int(v), true
	}
	if p.Loss.Set {
		ls.Fault.Loss, ls.LossSet, any = r.prob(p.Loss, field+".loss"), true, true
	}
	if p.Corrupt.Set {
		ls.Fault.Corrupt, ls.CorruptSet, any = r.prob(p.Corrupt, field+".corrupt"), true, true
	}
	return ls, any && r.err == nil
}

// tcp resolves the tcp: section. Every value must be in a range a TCP
// can run with: a window the scale option can carry (RFC 7323: 1 GiB),
// timers of at least a millisecond, RTO bounds in order.
func (r *resolver) tcp(t *rawTCP) host.TCPConfig {
	var c host.TCPConfig
	c.RecvWindow = r.size(t.RecvWindow, "tcp.recv_window", 1024, 1<<30)
	c.InitialCwnd = r.intv(t.InitialCwnd, "tcp.initial_cwnd", 1, 1000)
	timer := func(s scalar, field string, lo, hi element.Time) element.Time {
		v := r.time(s, field)
		if s.Set && r.err == nil && (v < lo || v > hi) {
			r.fail(s.Line, field, "%q must be between %v and %v", s.V, lo, hi)
		}
		return v
	}
	c.InitialRTO = timer(t.InitialRTO, "tcp.initial_rto", element.Millisecond, 600*element.Second)
	c.MinRTO = timer(t.MinRTO, "tcp.min_rto", element.Millisecond, 600*element.Second)
	c.MaxRTO = timer(t.MaxRTO, "tcp.max_rto", element.Millisecond, 3600*element.Second)
	c.DelayedACKTimeout = timer(t.DelayedACKTimeout, "tcp.delayed_ack_timeout", element.Millisecond, 10*element.Second)
	if t.DelayedACK.Set {
		switch t.DelayedACK.V {
		case "true", "on", "yes":
			c.DelayedACK = true
		case "false", "off", "no":
		default:
			r.fail(t.DelayedACK.Line, "tcp.delayed_ack", "%q: want true or false", t.DelayedACK.V)
		}
	}
	if t.DelayedACKTimeout.Set && !c.DelayedACK && r.err == nil {
		r.fail(t.DelayedACKTimeout.Line, "tcp.delayed_ack_timeout", "set without delayed_ack: true, it would change nothing")
	}
	// The bounds in order, a default counting as given: a host would
	// otherwise raise max_rto to min_rto without a word.
	if (t.MinRTO.Set || t.MaxRTO.Set) && r.err == nil {
		d := host.TCPConfig{}.WithDefaults()
		minRTO, maxRTO := d.MinRTO, d.MaxRTO
		if t.MinRTO.Set {
			minRTO = c.MinRTO
		}
		if t.MaxRTO.Set {
			maxRTO = c.MaxRTO
		}
		switch {
		case minRTO <= maxRTO:
		case t.MaxRTO.Set && t.MinRTO.Set:
			r.fail(t.MaxRTO.Line, "tcp.max_rto", "%v is below min_rto %v", maxRTO, minRTO)
		case t.MaxRTO.Set:
			r.fail(t.MaxRTO.Line, "tcp.max_rto", "%v is below min_rto's default %v: give min_rto too", maxRTO, minRTO)
		default:
			r.fail(t.MinRTO.Line, "tcp.min_rto", "%v is above max_rto's default %v: give max_rto too", minRTO, maxRTO)
		}
	}
	return c
}

func (r *resolver) timing(t *rawTiming, field string) []NodeTiming {
	var tm sim.Timing
	tm.Latency = r.time(t.Latency, field+".latency")
	tm.CutThrough = r.intv(t.CutThrough, field+".cut_through", 0, 1<<16)
	if !t.Latency.Set && !t.CutThrough.Set && r.err == nil {
		r.fail(t.line, field, "say what to set: latency, cut_through or both")
		return nil
	}
	// One selector: with two, all but one would be silently ignored.
	var sel []string
	for _, c := range []struct {
		name string
		set  bool
	}{{"nodes", t.Nodes.Set}, {"role", t.Role.Set}, {"kind", t.Kind.Set}} {
		if c.set {
			sel = append(sel, c.name)
		}
	}
	if len(sel) > 1 && r.err == nil {
		r.fail(t.line, field, "give one of nodes, role or kind, not %s", strings.Join(sel, " and "))
		return nil
	}
	var nodes []topo.NodeID
	switch {
	case t.Nodes.Set:
		if len(t.Nodes.V) == 1 && t.Nodes.V[0].V == "all" {
			nodes = r.g.Nodes(topo.Switch)
			break
		}
		seen := map[topo.NodeID]bool{}
		for _, s := range t.Nodes.V {
			n := r.nodeName(s, field+".nodes")
			if r.err != nil {
				return nil
			}
			// As in a workload's host list: twice is a slip.
			if seen[n] {
				r.fail(s.Line, field+".nodes", "%s listed twice", s.V)
				return nil
			}
			seen[n] = true
			nodes = append(nodes, n)
		}
	case t.Role.Set:
		for i := range r.g.NumNodes() {
			if r.g.Node(topo.NodeID(i)).Role == t.Role.V {
				nodes = append(nodes, topo.NodeID(i))
			}
		}
		if len(nodes) == 0 {
			r.fail(t.Role.Line, field+".role", "no node of %s has role %q", r.g.Name, t.Role.V)
		}
	case t.Kind.Set:
		switch t.Kind.V {
		case "switch":
			nodes = r.g.Nodes(topo.Switch)
		case "host":
			nodes = r.g.Nodes(topo.Host)
		default:
			r.fail(t.Kind.Line, field+".kind", "%q is not switch or host", t.Kind.V)
		}
	default:
		r.fail(t.line, field, "say which nodes: nodes: [...], role: ..., or kind: switch")
	}
	if r.err != nil {
		return nil
	}
	// Cut-through is a way of forwarding: a node that only consumes frames
	// takes them whole and checks their FCS, as a NIC does.
	if tm.CutThrough > 0 {
		for _, n := range nodes {
			if !r.g.Node(n).Forwards() {
				r.fail(t.CutThrough.Line, field+".cut_through", "%s does not forward frames (a host takes them whole and checks the FCS); give cut_through to switches", r.g.Node(n).Name)
				return nil
			}
		}
	}
	out := make([]NodeTiming, len(nodes))
	for i, n := range nodes {
		out[i] = NodeTiming{Node: n, Timing: tm, LatencySet: t.Latency.Set, CutThroughSet: t.CutThrough.Set}
	}
	return out
}

// allowed lists the settings each workload kind takes.
var allowed = map[Kind][]string{
	Ping:    {"from", "to", "at", "count", "interval", "size"},
	UDP:     {"from", "to", "at", "rate", "size", "duration", "port"},
	TCP:     {"from", "to", "at", "bytes", "port"},
	TCPRR:   {"from", "to", "at", "count", "request", "response"},
	Shuffle: {"hosts", "at", "bytes"},
}

func (r *resolver) workload(w *rawWorkload, field string, dur element.Time) []Workload {
	k, ok := kindNames[w.Kind]
	if !ok {
		r.fail(w.line, field, "unknown workload %q (ping, udp, tcp, tcp_rr, shuffle)", w.Kind)
		return nil
	}
	field += "." + w.Kind
	a := &w.App
	// In a fixed order, so that the first error reported is always the same.
	set := []struct {
		name string
		s    scalar
	}{{"from", scalar{Set: a.From.Set, Line: a.From.Line}}, {"to", scalar{Set: a.To.Set, Line: a.To.Line}},
		{"hosts", scalar{Set: a.Hosts.Set, Line: a.Hosts.Line}}, {"at", a.At}, {"count", a.Count}, {"interval", a.Interval},
		{"size", a.Size}, {"rate", a.Rate}, {"duration", a.Duration}, {"bytes", a.Bytes}, {"port", a.Port},
		{"request", a.Request}, {"response", a.Response}}
	for _, f := range set {
		if f.s.Set && !slices.Contains(allowed[k], f.name) {
			r.fail(f.s.Line, field+"."+f.name, "not a setting of %s (it takes %s)", w.Kind, strings.Join(allowed[k], ", "))
			return nil
		}
	}
	base := Workload{Kind: k, Line: w.line}
	base.At = r.time(a.At, field+".at")
	if r.err == nil && base.At >= dur {
		r.fail(a.At.Line, field+".at", "starts at %v, at or after the end of the run (%v)", base.At, dur)
	}
	base.Interval = r.time(a.Interval, field+".interval")
	base.Duration = r.time(a.Duration, field+".duration")
	// Zero is how a Workload says "default" (1 s between pings, to the
	// end of the run): written out, it must not silently mean that.
	if a.Interval.Set && base.Interval <= 0 && r.err == nil {
		r.fail(a.Interval.Line, field+".interval", "%q must be positive", a.Interval.V)
	}
	if a.Duration.Set && base.Duration <= 0 && r.err == nil {
		r.fail(a.Duration.Line, field+".duration", "%q must be positive (leave it out to send until the end of the run)", a.Duration.V)
	}
	// The host's own limits, checked here so that a scenario asking past
	// them fails to load instead of running with a flow that reports an
	// error: ping sequence numbers are 16 bits, and neither ping nor udp
	// fragments, so a payload must fit the host MTU with IPv4 and the
	// 8-byte ICMP or UDP header.
	maxCount := 1 << 30
	if k == Ping {
		maxCount = 65536
	}
	base.Count = r.intv(a.Count, field+".count", 1, maxCount)
	// At least one byte: a size of 0 would be taken as "the default"
	// (56 for ping, 1472 for udp).
	base.Size = r.size(a.Size, field+".size", 1, host.DefaultMTU-28)
	base.Request = r.size(a.Request, field+".request", 1, 1<<24)
	base.Response = r.size(a.Response, field+".response", 1, 1<<24)
	base.Port = uint16(r.intv(a.Port, field+".port", 1, 65535))
	if a.Rate.Set {
		v, err := ParseRate(a.Rate.V)
		if err != nil {
			r.fail(a.Rate.Line, field+".rate", "%v", err)
		}
		base.Rate = v
	}
	if a.Bytes.Set {
		v, err := ParseSize(a.Bytes.V)
		if err == nil && v < 1 {
			err = fmt.Errorf("%q must be at least one byte", a.Bytes.V)
		}
		if err != nil {
			r.fail(a.Bytes.Line, field+".bytes", "%v", err)
		}
		base.Bytes = v
	}
	switch k {
	case UDP:
		if !a.Rate.Set && r.err == nil {
			r.fail(w.line, field+".rate", "missing (e.g. rate: 100Mbps)")
		}
		// The host sends one datagram per picosecond (the clock's tick)
		// at most.
		size := base.Size
		if size == 0 {
			size = 1472
		}
		if bitTime := float64(size) * 8 * float64(element.Second); r.err == nil && float64(base.Rate) > bitTime {
			r.fail(a.Rate.Line, field+".rate", "%q with %d-byte datagrams is one every %.2g ps: the clock's tick is 1 ps (at most %sbps with this size)", a.Rate.V, size, bitTime/float64(base.Rate), topo.FormatRate(int64(bitTime)))
		}
	case TCP:
		if !a.Bytes.Set && r.err == nil {
			r.fail(w.line, field+".bytes", "missing (e.g. bytes: 10MB)")
		}
	case Shuffle:
		base.Hosts = r.hosts(a.Hosts, field+".hosts", w.line)
		if r.err == nil && len(base.Hosts) < 2 {
			r.fail(a.Hosts.Line, field+".hosts", "a shuffle needs at least two hosts")
		}
		if !a.Bytes.Set && r.err == nil {
			r.fail(w.line, field+".bytes", "missing (bytes each host sends each other host)")
		}
		if r.err != nil {
			return nil
		}
		n := float64(len(base.Hosts))
		if !r.addFlows(w.line, field, n*(n-1)) {
			return nil
		}
		return []Workload{base}
	}
	from := r.hosts(a.From, field+".from", w.line)
	to := r.hosts(a.To, field+".to", w.line)
	if r.err != nil {
		return nil
	}
	// An upper bound (pairs of a host with itself are skipped below),
	// checked before anything is allocated.
	if !r.addFlows(w.line, field, float64(len(from))*float64(len(to))) {
		return nil
	}
	var out []Workload
	for _, s := range from {
		for _, d := range to {
			if s == d {
				continue // "from: all, to: all" means every ordered pair
			}
			wl := base
			wl.Src, wl.Dst = s, d
			out = append(out, wl)
		}
	}
	if len(out) == 0 {
		r.fail(w.line, field, "no pair of distinct hosts")
	}
	return out
}

func (r *resolver) failure(f *rawFailure, field string, dur element.Time) (Failure, bool) {
	var out Failure
	if !f.At.Set {
		r.fail(f.line, field+".at", "missing")
		return out, false
	}
	out.At = r.time(f.At, field+".at")
	if r.err == nil && out.At >= dur {
		// It would never happen, and nothing would say so.
		r.fail(f.At.Line, field+".at", "at %v, at or after the end of the run (%v)", out.At, dur)
	}
	switch {
	case !f.State.Set:
		r.fail(f.line, field, "say down or up")
	case f.State.V == "down":
	case f.State.V == "up":
		out.Up = true
	default:
		r.fail(f.State.Line, field+".state", "%q is not down or up", f.State.V)
	}
	switch {
	case f.Link.Set && f.Node.Set:
		r.fail(f.line, field, "give a link or a node, not both")
	case f.Link.Set:
		out.Link = r.link(f.Link, f.line, field+".link")
		if r.err == nil {
			out.What = "link " + f.Link.V[0].V + "-" + f.Link.V[1].V
		}
	case f.Node.Set:
		out.Link = -1
		out.Node = r.nodeName(f.Node, field+".node")
		out.What = "node " + f.Node.V
	default:
		r.fail(f.line, field, "give a link: [a, b] or a node: name")
	}
	return out, r.err == nil
}
