package experiment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/emu"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/topo"
)

// lateHostWait bounds how long the demo waits, after discovery, for the
// controller to place hosts whose answers came late.
const lateHostWait = 10 * time.Second

func demoEmu(ctx context.Context, g *topo.Graph, o DemoOptions, rep *DemoReport, want *dumbnet.Topology) (err error) {
	for _, tool := range []string{"ping", "iperf3"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("demo: %s is not installed (scripts/deps installs it)", tool)
		}
	}
	// The name is ours from here to the teardown: of two demos (or a
	// demo and an up) of one name, the second stops here.
	if err := claimLab(o); err != nil {
		return err
	}
	built := false
	defer func() {
		if !built {
			// Up failed before it built anything (after that it
			// removes the directory itself): the claim goes.
			emu.ReleaseName(o.Name)
		}
	}()

	var fab *dumbnet.Fabric
	var ctrlStart atomic.Int64 // element time at which discovery started
	reg, err := dumbnetRegistry(&fab, &ctrlStart)
	if err != nil {
		return err
	}
	o.step("bringing up DumbNet on %s in the emulator: %d switch and %d host namespaces",
		o.Topology, rep.ExpectedSwitches, rep.ExpectedHosts)
	t0 := time.Now()
	l, err := emu.Up(ctx, g, "dumbnet", emu.Options{Name: o.Name, Registry: reg, Topology: o.Topology,
		Scheme: scheme.Options{Seed: o.Seed}, ReadyTimeout: 2 * time.Minute})
	if err != nil {
		return err
	}
	built = true
	defer func() {
		o.step("tearing down")
		if derr := l.Down(); derr != nil && err == nil {
			err = derr
		}
	}()
	o.step("fabric ready after %.1f s", time.Since(t0).Seconds())

	c := fab.Controller()
	got := c.Snapshot()
	if got == nil {
		return fmt.Errorf("demo: the controller reports no topology")
	}
	rep.DiscoveryMS = discoveryMS(c, &ctrlStart)
	if len(got.Diff(want)) > 0 {
		later, waited, err := awaitTopology(ctx, c, want)
		if err != nil {
			return err
		}
		if later != nil {
			got = later
		}
		if len(got.Diff(want)) == 0 {
			rep.DiscoveryLateMS = float64(waited.Microseconds()) / 1000
		}
	}
	rep.DiscoveryProbes = c.Probes()
	o.recordDiscovery(rep, got, want)

	hs := g.Nodes(topo.Host)
	ips := map[string]string{}
	for _, h := range hs {
		_, ip, _ := g.HostAddr(h)
		name := g.Node(h).Name
		ips[name] = ip.Addr().String()
	}

	// All pairs ping, one source host per goroutine, two at a time (the
	// machine may have two cores).
	o.step("pinging all %d ordered host pairs", len(hs)*(len(hs)-1))
	// The counts reach the report once every pair was tried: a pair not
	// tried because the run was interrupted did not fail.
	var pingOK, pingTotal int
	var pingFailed []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, a := range hs {
		wg.Add(1)
		go func(a topo.NodeID) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			an := g.Node(a).Name
			for _, b := range hs {
				if a == b {
					continue
				}
				bn := g.Node(b).Name
				ok := false
				for try := 0; try < 3 && !ok && ctx.Err() == nil; try++ {
					_, err := l.Exec(ctx, an, "ping", "-n", "-q", "-c", "1", "-W", "1", ips[bn])
					ok = err == nil
				}
				mu.Lock()
				pingTotal++
				if ok {
					pingOK++
				} else {
					pingFailed = append(pingFailed, an+"->"+bn)
				}
				mu.Unlock()
			}
		}(a)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	rep.PingPairsOK, rep.PingPairsTotal, rep.PingFailed = pingOK, pingTotal, pingFailed
	rep.done = DemoPing
	o.step("ping: %d/%d host pairs answer", rep.PingPairsOK, rep.PingPairsTotal)

	// iperf3 between two pods; a second into it, fail a link while a 1 ms
	// ping stream between the same hosts measures the outage. The agents
	// hash each flow onto one of their k paths, so ping and iperf3 may
	// take different ones: first find the ping stream's links from the
	// ports' counters (a burst of pings, the same flow as the stream's),
	// then, with iperf3 running, fail the busiest of them; when iperf3
	// crosses none of them, the one the burst used most, and the report
	// says so.
	src, dst := farHosts(g)
	sn, dn := g.Node(src).Name, g.Node(dst).Name
	isSwitch := func(name string) bool {
		n, ok := g.Lookup(name)
		return ok && g.Node(n).Kind == topo.Switch
	}
	fabricLink := func(a, b string) bool { return isSwitch(a) && isSwitch(b) }
	const burst = 50
	before := l.Status().LinkTxFrames(fabricLink)
	if out, err := l.Exec(ctx, sn, "ping", "-n", "-q", "-c", fmt.Sprint(burst), "-i", "0.01", "-W", "1", ips[dn]); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("demo: ping burst %s -> %s to find its path: %v: %s", sn, dn, err, firstLine(string(out)))
	}
	after := l.Status().LinkTxFrames(fabricLink)
	pingLinks := map[[2]string]uint64{}
	for k, n := range after {
		// Requests on the way out, replies on the way back: a link of
		// either path carries the burst once, most of it at least.
		if d := n - before[k]; d >= burst/2 {
			pingLinks[k] = d
		}
	}
	if len(pingLinks) == 0 {
		return fmt.Errorf("demo: no switch-to-switch link carried the ping stream %s -> %s", sn, dn)
	}
	const iperfSecs = 8
	server := exec.Command("iperf3", "-s", "-1", "-J")
	if err := l.Start(dn, server); err != nil {
		return fmt.Errorf("demo: iperf3 server: %w", err)
	}
	// Killed at the end: gone already when the run ended well (-1), or
	// still waiting for a client that never came.
	defer started(server).stop()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	err = l.WaitListening(wctx, dn, 5201)
	wcancel()
	if err != nil {
		return fmt.Errorf("demo: iperf3 server: %w", err)
	}
	client := exec.Command("iperf3", "-c", ips[dn], "-t", fmt.Sprint(iperfSecs), "-J")
	var clientOut strings.Builder
	client.Stdout = &clientOut
	o.step("iperf3 %s -> %s for %d s", sn, dn, iperfSecs)
	if err := l.Start(sn, client); err != nil {
		return fmt.Errorf("demo: iperf3 client: %w", err)
	}
	cp := started(client)
	defer cp.stop() // on an early return; a no-op once it has exited
	if err := sleep(ctx, time.Second); err != nil {
		return err
	}
	before = l.Status().LinkTxFrames(fabricLink)
	if err := sleep(ctx, 500*time.Millisecond); err != nil {
		return err
	}
	after = l.Status().LinkTxFrames(fabricLink)
	best := pickFailLink(pingLinks, func(k [2]string) uint64 { return after[k] - before[k] })
	// Half a second of iperf3 is thousands of frames on each link it
	// crosses (acknowledgements included); the fabric's own traffic on
	// a link is a few frames.
	rep.FailedLinkOnIperf = after[best]-before[best] >= 200
	if rep.FailedLinkOnIperf {
		o.step("failing %s-%s, the busiest link of the ping stream's path, which iperf3 crosses", best[0], best[1])
	} else {
		o.step("failing %s-%s, on the ping stream's path (iperf3 took another)", best[0], best[1])
	}
	res, err := l.Failover(ctx, emu.FailoverSpec{From: sn, To: dn, A: best[0], B: best[1],
		Interval: time.Millisecond, Settle: 500 * time.Millisecond, Max: 20 * time.Second})
	if err != nil {
		return err
	}
	// Failover stops waiting for recovery when ctx ends, and reports
	// what it saw by then without an error: not a measurement.
	if err := ctx.Err(); err != nil {
		return err
	}
	rep.FailedLink = best
	rep.FailoverOutageMS = float64(res.Outage) / float64(time.Millisecond)
	rep.FailoverLost, rep.FailoverSent, rep.Recovered = res.Lost, res.Sent, res.Recovered
	rep.FailoverProbeMS = 1
	rep.done = DemoFailover
	if !rep.Recovered {
		// The failed link was the only way (a cut edge, as on line:2):
		// the stream cannot finish, and iperf3 would retry for ever.
		// The report shows recovered false, and iperf3 not reached.
		o.step("failover: outage %.1f ms, not recovered; iperf3 stopped", rep.FailoverOutageMS)
		cp.stop()
		rep.StoppedBefore = DemoIperf3
		return nil
	}
	o.step("failover: outage %.1f ms, recovered %v; waiting for iperf3", rep.FailoverOutageMS, rep.Recovered)
	// Bounded all the same: a stream that stalls after recovering must
	// not hold the demo.
	wctx, cancel := context.WithTimeout(ctx, (iperfSecs+30)*time.Second)
	defer cancel()
	if err := cp.wait(wctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if wctx.Err() != nil {
			cp.stop()
			return fmt.Errorf("demo: iperf3 client did not finish within %d s of its %d s run", iperfSecs+30, iperfSecs)
		}
		if line := firstLine(clientOut.String()); line != "" {
			return fmt.Errorf("demo: iperf3 client: %v: %s", err, line)
		}
		return fmt.Errorf("demo: iperf3 client: %v (its lab removed under it?)", err)
	}
	bps, err := iperfReceived(clientOut.String())
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	rep.IperfFrom, rep.IperfTo = sn, dn
	rep.Iperf3Mbps = bps / 1e6
	rep.done = DemoIperf3
	o.step("iperf3: %.1f Mb/s; outage %.1f ms, recovered %v", rep.Iperf3Mbps, rep.FailoverOutageMS, rep.Recovered)
	return nil
}

// dumbnetRegistry is a registry holding the one scheme dumbnet, whose
// fabric, once the lab builds it, *fab holds (the controller is read from
// it). With start set, the controller's agent stores there the element
// time at which it is attached, when its discovery starts: an emulator
// lab's element clock runs from the start of the lab's build
// (namespaces, veths), not from the elements' start, so the controller's
// DoneAt counts the build too.
func dumbnetRegistry(fab **dumbnet.Fabric, start *atomic.Int64) (*scheme.Registry, error) {
	reg := &scheme.Registry{}
	err := reg.Register(scheme.Scheme{Name: "dumbnet", New: func(g *topo.Graph, so scheme.Options) (scheme.Fabric, error) {
		f, err := dumbnet.New(g, so)
		*fab = f
		if err != nil || start == nil {
			return f, err
		}
		return clockedFabric{f, start}, nil
	}})
	return reg, err
}

// discoveryMS is how long c's first discovery took, in ms, from the
// controller's start (start, the element time its agent was attached
// at), as in the simulator, whose clock starts with the elements: not
// from the start of the emulator lab's build, which the element clock
// counts from.
func discoveryMS(c *dumbnet.Controller, start *atomic.Int64) float64 {
	return float64(c.DoneAt()-element.Time(start.Load())) / float64(element.Millisecond)
}

// clockedFabric is DumbNet's fabric whose controller's agent notes, in
// *start, the element time at which it is attached. Every other method
// (SettleTime, Ready) is the fabric's own.
type clockedFabric struct {
	*dumbnet.Fabric
	start *atomic.Int64
}

func (f clockedFabric) Element(n topo.NodeID) element.Element {
	e := f.Fabric.Element(n)
	if a, ok := e.(*dumbnet.Agent); ok && n == f.ControllerNode() {
		return &attachClock{a, f.start}
	}
	return e
}

// attachClock is an agent that stores the time it is attached at; its
// other methods (Receive, LinkChange, Counters, ...) are the agent's.
type attachClock struct {
	*dumbnet.Agent
	at *atomic.Int64
}

func (a *attachClock) Attach(env element.Env, ports []element.PortInfo) {
	a.at.Store(int64(env.Now()))
	a.Agent.Attach(env, ports)
}

// awaitTopology waits, up to lateHostWait, until c's topology is want:
// on a loaded machine a host may answer after its round ended, and the
// controller looks for it again at once (docs/dumbnet.md, missed hosts).
// It returns the last snapshot (nil if there was none) and how long it
// waited; an error only when ctx ends.
func awaitTopology(ctx context.Context, c *dumbnet.Controller, want *dumbnet.Topology) (*dumbnet.Topology, time.Duration, error) {
	t0 := time.Now()
	for {
		got := c.Snapshot()
		if (got != nil && len(got.Diff(want)) == 0) || time.Since(t0) >= lateHostWait {
			return got, time.Since(t0), nil
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return got, time.Since(t0), err
		}
	}
}

// claimLab reserves lab name o.Name for this demo, as up does. A lab of
// that name that something holds (a daemon, a process running it, an up
// or a demo still starting: each records its owner as it claims the
// name) is refused as bad input; a crashed one, whose owner is gone, is
// removed first, and only then, in one step with the claim
// (emu.ReclaimCrashed), so that two demos cannot remove each other's.
func claimLab(o DemoOptions) error {
	removed, err := emu.ReclaimCrashed(o.Name, 30*time.Second)
	if errors.Is(err, emu.ErrLabExists) {
		return inputError{labInUse{o.Name, labHolder(o.Name)}}
	}
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if removed {
		o.step("removed the leftovers of a crashed %q lab", o.Name)
	}
	return nil
}

// labHolder says, in a few words for a message, what holds lab name,
// which a live process owns.
func labHolder(name string) string {
	if pid, alive := emu.Owner(name); alive {
		return fmt.Sprintf("running (pid %d)", pid)
	}
	if st, err := emu.ReadState(name); err == nil {
		return fmt.Sprintf("running (pid %d)", st.Pid)
	}
	return "starting"
}

// labInUse is the demo's refusal of a lab name something holds.
type labInUse struct{ name, state string }

func (e labInUse) Error() string {
	return fmt.Sprintf("demo: lab %s is %s: choose another --name or run 'edgefabric down %s'", e.name, e.state, e.name)
}

func (e labInUse) Unwrap() error { return emu.ErrLabExists }

// sleep waits for d or until ctx ends, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// proc is a started command whose exit is awaited once, by whoever asks
// first; stop kills it if it still runs.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func started(cmd *exec.Cmd) *proc {
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p
}

// wait returns the command's exit, or kills it when ctx ends first.
func (p *proc) wait(ctx context.Context) error {
	// An interrupt comes first: when the process has ended too, a select
	// over both would pick either at random.
	if ctx.Err() != nil {
		p.stop()
		return ctx.Err()
	}
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		p.stop()
		return ctx.Err()
	}
}

func (p *proc) stop() {
	p.cmd.Process.Kill() //nolint:errcheck // gone already when the run ended well
	<-p.done
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// pickFailLink returns the link of candidates (the ping stream's links,
// with the frames its burst put on each) that carries the most iperf3
// traffic by load; where load does not tell (none, or a tie), the one
// the burst used most, then the first by name: the same choice for the
// same counts.
func pickFailLink(candidates map[[2]string]uint64, load func([2]string) uint64) [2]string {
	keys := make([][2]string, 0, len(candidates))
	for k := range candidates {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]string) int {
		if la, lb := load(a), load(b); la != lb {
			return cmp.Compare(lb, la)
		}
		if pa, pb := candidates[a], candidates[b]; pa != pb {
			return cmp.Compare(pb, pa)
		}
		return cmp.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1])
	})
	return keys[0]
}
