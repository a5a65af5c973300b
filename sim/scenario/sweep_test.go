package scenario

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/host"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/sim"
	"github.com/edgefabric/edgefabric/topo"
)

// Tests that pin behaviour a mutation sweep of the scenario package found
// no test held.

// parseErrorCase is a scenario text and the exact error it must give.
type parseErrorCase struct{ name, yaml, want string }

// exactParseErrors checks that each case's text fails to parse with
// exactly its message.
func exactParseErrors(t *testing.T, cases []parseErrorCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(t, c.yaml)
			if err == nil || err.Error() != c.want {
				t.Fatalf("error %v\nwant %s", err, c.want)
			}
		})
	}
}

// TestSweepParseErrors: bounds and names the other tables leave out, with
// the exact message, file, line and field.
func TestSweepParseErrors(t *testing.T) {
	const head = "topology: line:3\nscheme: learn\nduration: 1s\n"
	exactParseErrors(t, []parseErrorCase{
		{"zero duration", "topology: line:3\nscheme: learn\nduration: 0\n", "test.yaml:3: duration: bad scenario: must be positive"},
		{"queue past 1 TiB", head + "links: {queue: 2000GiB}\n", `test.yaml:4: links.queue: bad scenario: "2000GiB" must be between 64 bytes and 1 TiB`},
		{"cut_through past 65536", head + "timing:\n  - {kind: switch, cut_through: 65537}\n", `test.yaml:5: timing[0].cut_through: bad scenario: "65537" is not an integer in [0, 65536]`},
		{"workload at the end", head + "workloads:\n  - ping: {from: h1, to: h2, at: 1s}\n", "test.yaml:5: workloads[0].ping.at: bad scenario: starts at 1s, at or after the end of the run (1s)"},
		{"udp port 0", head + "workloads:\n  - udp: {from: h1, to: h2, rate: 1Mbps, port: 0}\n", `test.yaml:5: workloads[0].udp.port: bad scenario: "0" is not an integer in [1, 65535]`},
		{"tcp bytes 0", head + "workloads:\n  - tcp: {from: h1, to: h2, bytes: 0}\n", `test.yaml:5: workloads[0].tcp.bytes: bad scenario: "0" must be at least one byte`},
		{"capture port 0", head + "captures:\n  - {node: h1, port: 0}\n", `test.yaml:5: captures[0].port: bad scenario: "0" is not a port of h1 (1..1)`},
		{"link end port 0", head + "link:\n  - {ends: [s1:0, s2], rate: 1Gbps}\n", `test.yaml:5: link[0].ends: bad scenario: unknown node "s1:0" in line:3`},
		{"link end port past the last", head + "link:\n  - {ends: [s1:4, s2], rate: 1Gbps}\n", "test.yaml:5: link[0].ends: bad scenario: s1 has no port 4"},
		// The line of the ends list, not of the entry, when they differ.
		{"link ends line", head + "link:\n  - rate: 1Gbps\n    ends: [s1]\n", "test.yaml:6: link[0].ends: bad scenario: expected two node names, like [s1, s2]"},
		// "all" means every host only on its own.
		{"all in a list", head + "workloads:\n  - ping: {from: [all, h1], to: h2}\n", `test.yaml:5: workloads[0].ping.from: bad scenario: unknown node "all" in line:3`},
	})
}

// TestSweepParseAccepts: what must load: the default seed, a latency for
// hosts (only cut-through is refused them), exactly MaxFlows flows.
func TestSweepParseAccepts(t *testing.T) {
	sc, err := parse(t, "topology: line:1\nscheme: learn\nduration: 1s\n")
	if err != nil || sc.Seed != 1 || len(sc.Links) != 0 {
		t.Fatalf("defaults: %+v, %v; want seed 1, no link settings", sc, err)
	}
	sc, err = parse(t, "topology: line:1\nscheme: learn\nduration: 1s\ntiming:\n  - {kind: host, latency: 1us}\n")
	if err != nil || len(sc.Timing) != 2 || sc.Timing[0].Timing.Latency != element.Microsecond || sc.Timing[0].CutThroughSet {
		t.Fatalf("host latency: %+v, %v", sc, err)
	}
	// 1024 x 1023 shuffle transfers and 1 x 1024 pings (self included in
	// the bound): 1048576, the limit itself.
	sc, err = parse(t, "topology: fattree:16\nscheme: learn\nduration: 1s\nworkloads:\n  - shuffle: {hosts: all, bytes: 1KB}\n  - ping: {from: h1, to: all}\n")
	if err != nil || len(sc.Workloads) != 1+1023 {
		t.Fatalf("exactly MaxFlows: %v", err)
	}
}

// TestSweepAbsoluteTopology: an absolute topology path is used as it is,
// not joined to the scenario's directory.
func TestSweepAbsoluteTopology(t *testing.T) {
	tdir, sdir := t.TempDir(), t.TempDir()
	tp := filepath.Join(tdir, "tiny.yaml")
	topoYAML := "name: tiny\nnodes:\n  - {name: s1, kind: switch}\n  - {name: h1, kind: host}\n  - {name: h2, kind: host}\nlinks:\n  - [s1, h1]\n  - [s1, h2]\n"
	if err := os.WriteFile(tp, []byte(topoYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(sdir, "sc.yaml")
	if err := os.WriteFile(p, []byte("topology: "+tp+"\nscheme: learn\nduration: 1s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := Load(p, Options{Registry: testRegistry()})
	if err != nil || sc.Graph.NumNodes() != 3 {
		t.Fatalf("absolute topology path: %v", err)
	}
}

// TestSweepLinkOverrides: a link: entry's delay of 0 and queue override
// what links: set.
func TestSweepLinkOverrides(t *testing.T) {
	sc, err := parse(t, `
topology: line:2
scheme: learn
duration: 1s
links: {delay: 5us, queue: 64KiB}
link:
  - {ends: [s1, s2], delay: 0, queue: 1MiB}
`)
	if err != nil {
		t.Fatal(err)
	}
	r, err := sc.Setup(RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l, _ := sc.Graph.PortLink(0, 3) // s1-s2
	got, _ := r.Sim.LinkConfig(l)
	if got.Delay != 0 || got.Queue != 1<<20 || got.Rate != topo.DefaultRate {
		t.Errorf("s1-s2: %+v, want delay 0, queue 1MiB", got)
	}
}

// ctBridge is the test bridge declaring itself cut-through (6 bytes).
type ctBridge struct{ bridge }

func (*ctBridge) CutThrough() int { return 6 }

// lcAgent relays like relayAgent, sends on a port its host does not have
// once, and tells its stack (on the Local port) when a NIC goes down, which
// while the host is down is dropped on that Local port.
type lcAgent struct{ relayAgent }

func (a *lcAgent) Attach(env element.Env, ports []element.PortInfo) {
	a.relayAgent.Attach(env, ports)
	env.After(0, func() { env.Send(99, []byte{1}) })
}

func (a *lcAgent) LinkChange(p element.Port, up bool) {
	if !up {
		a.env.Send(a.local, make([]byte, 60))
	}
}

type fabricFunc func(topo.NodeID) element.Element

func (f fabricFunc) Element(n topo.NodeID) element.Element { return f(n) }

func sweepRegistry() *scheme.Registry {
	r := testRegistry()
	for _, s := range []scheme.Scheme{
		{Name: "ctlearn", Summary: "cut-through test bridge", New: func(g *topo.Graph, o scheme.Options) (scheme.Fabric, error) {
			return fabricFunc(func(n topo.NodeID) element.Element {
				if g.Node(n).Kind == topo.Switch {
					return &ctBridge{}
				}
				return nil
			}), nil
		}},
		{Name: "lcagent", Summary: "test agent", New: func(g *topo.Graph, o scheme.Options) (scheme.Fabric, error) {
			return fabricFunc(func(n topo.NodeID) element.Element {
				if g.Node(n).Kind == topo.Host {
					return &lcAgent{}
				}
				return &bridge{}
			}), nil
		}},
	} {
		if err := r.Register(s); err != nil {
			panic(err)
		}
	}
	return r
}

func sweepRun(t *testing.T, y string, opt RunOptions) (*Run, *Result) {
	t.Helper()
	sc, err := Parse([]byte(y), "test.yaml", Options{Registry: sweepRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := sc.Setup(opt)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute()
	if err != nil {
		t.Fatal(err)
	}
	return r, res
}

// TestSweepTimingKeepsElementCutThrough: a latency-only entry on a node
// whose element declares cut-through keeps it cut-through: the RTTs of
// TestTimingEntriesMerge, with no cut_through in the file.
func TestSweepTimingKeepsElementCutThrough(t *testing.T) {
	_, res := sweepRun(t, `
topology: line:1
scheme: ctlearn
duration: 1s
timing:
  - {nodes: [s1], latency: 300ns}
workloads:
  - ping: {from: h1, to: h2, count: 3, interval: 10ms, at: 10ms}
`, RunOptions{})
	d := res.Flows[0].Detail.(host.PingResult)
	want := 4*(880*element.Nanosecond+element.Microsecond) - 2*768*element.Nanosecond + 2*300*element.Nanosecond
	if d.Received != 3 || d.RTTs[1] != want || d.RTTs[2] != want {
		t.Fatalf("RTTs %v, want %v after the first", d.RTTs, want)
	}
}

// TestSweepWorkloadDefaults: udp without duration sends until the end of
// the run, no further (50 ms at 100 Mb/s of 1000-byte payloads: 625);
// tcp_rr without count runs 1000 transactions.
func TestSweepWorkloadDefaults(t *testing.T) {
	_, res := sweepRun(t, `
topology: line:1
scheme: learn
duration: 100ms
workloads:
  - udp: {from: h1, to: h2, rate: 100Mbps, size: 1000, at: 50ms}
  - tcp_rr: {from: h2, to: h1}
`, RunOptions{})
	u := res.Flows[0].Detail.(host.UDPResult)
	if u.Sent != 625 || u.Received != 625 {
		t.Errorf("udp sent %d received %d, want 625", u.Sent, u.Received)
	}
	rr := res.Flows[1].Detail.(host.RRResult)
	if rr.Count != 1000 || rr.Transactions != 1000 || !res.Flows[1].Done {
		t.Errorf("tcp_rr count %d transactions %d done %v, want 1000", rr.Count, rr.Transactions, res.Flows[1].Done)
	}
}

// TestSweepResultFields: the --json fields the runner computes itself.
func TestSweepResultFields(t *testing.T) {
	t.Run("unfinished tcp throughput", func(t *testing.T) {
		_, res := sweepRun(t, "topology: line:1\nscheme: learn\nduration: 100ms\nworkloads:\n  - tcp: {from: h1, to: h2, bytes: 100MB}\n", RunOptions{})
		f := res.Flows[0]
		d := f.Detail.(host.TCPResult)
		want := float64(d.BytesAcked) * 8 / (100*element.Millisecond - element.Time(d.Start)).Seconds()
		if f.Done || d.BytesAcked == 0 || f.ThroughputBps != want || res.Aggregate.ThroughputBps != want {
			t.Errorf("throughput %v (aggregate %v), want %v: acked bytes over the time since the start", f.ThroughputBps, res.Aggregate.ThroughputBps, want)
		}
	})
	t.Run("hash width and events", func(t *testing.T) {
		r, res := sweepRun(t, "topology: line:1\nscheme: learn\nduration: 10ms\nworkloads:\n  - ping: {from: h1, to: h2}\n", RunOptions{Trace: sim.TraceOff})
		if res.TraceHash != "0000000000000000" || res.Events == 0 || res.Events != r.Sim.Events() {
			t.Errorf("trace_hash %q events %d (engine %d)", res.TraceHash, res.Events, r.Sim.Events())
		}
	})
	t.Run("aggregate loss", func(t *testing.T) {
		// Probes at 10, 110, 210, 310, 410 ms; h1's link is down from 150
		// to 350 ms: two of five lost.
		_, res := sweepRun(t, `
topology: line:1
scheme: learn
duration: 2s
workloads:
  - ping: {from: h1, to: h2, count: 5, interval: 100ms, at: 10ms}
failures:
  - {at: 150ms, link: [h1, s1], down}
  - {at: 350ms, link: [h1, s1], up}
`, RunOptions{})
		a := res.Aggregate
		if a.Sent != 5 || a.Received != 3 || a.Loss != 0.4 || *res.Flows[0].Loss != 0.4 {
			t.Errorf("aggregate %+v, want 5 sent, 3 received, loss 0.4", a)
		}
	})
	t.Run("not started", func(t *testing.T) {
		sc, err := parse(t, "topology: line:1\nscheme: learn\nduration: 1s\nworkloads:\n  - ping: {from: h1, to: h2, at: 10ms}\n")
		if err != nil {
			t.Fatal(err)
		}
		r, err := sc.Setup(RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r.Sim.At(0, r.Sim.Stop)
		res, err := r.Execute()
		if err != nil {
			t.Fatal(err)
		}
		if f := res.Flows[0]; f.Error != "not started" || res.Aggregate.Failed != 1 || res.Aggregate.Completed != 0 {
			t.Errorf("flow %+v aggregate %+v", f, res.Aggregate)
		}
	})
	t.Run("queue drops", func(t *testing.T) {
		// 100 Mb/s of 1514-byte frames into a 10 Mb/s link with room for
		// one: h1's port drops, and reports the engine's counters.
		r, res := sweepRun(t, `
topology: line:1
scheme: learn
duration: 20ms
links: {queue: 2000}
link:
  - {ends: [h1, s1], rate: 10Mbps}
workloads:
  - udp: {from: h1, to: h2, rate: 100Mbps, duration: 10ms}
`, RunOptions{})
		var p *PortResult
		for i := range res.Ports {
			if res.Ports[i].Node == "h1" && res.Ports[i].Port == 1 {
				p = &res.Ports[i]
			}
		}
		if p == nil {
			t.Fatalf("no h1 port 1 among %+v", res.Ports)
		}
		h1, _ := r.Sc.Graph.Lookup("h1")
		st, _ := r.Sim.PortStats(h1, 1)
		if p.MaxQueue < 1514 || p.MaxQueue != st.MaxQueue || p.TxFrames != st.TxFrames || p.RxFrames != st.RxFrames ||
			p.Drops["queue_full"] == 0 || p.Drops["queue_full"] != st.DropCount(sim.DropQueueFull) || len(p.Drops) != 1 ||
			res.Drops["queue_full"] != p.Drops["queue_full"] {
			t.Errorf("h1 port 1 %+v, engine %+v, drops %v", *p, st, res.Drops)
		}
	})
	t.Run("agent port and bad port", func(t *testing.T) {
		// Each host's agent sends once on port 99; h1's, told its NIC went
		// down with the host, sends to its stack on the Local port 2.
		_, res := sweepRun(t, "topology: line:1\nscheme: lcagent\nduration: 20ms\nfailures:\n  - {at: 10ms, node: h1, down}\n", RunOptions{})
		found := false
		for _, p := range res.Ports {
			if p.Node == "h1" && p.Port == 2 && p.Drops["node_down"] == 1 {
				found = true
			}
		}
		if !found || res.Drops["bad_port"] != 2 || res.Drops["node_down"] != 1 {
			t.Errorf("drops %v, ports %+v: want h1 port 2 node_down 1, bad_port 2", res.Drops, res.Ports)
		}
	})
}

// TestSweepDoneWithErrorFails: a flow that finished with an error counts
// as failed, not completed.
func TestSweepDoneWithErrorFails(t *testing.T) {
	_, res := sweepRun(t, `
topology: line:1
scheme: learn
duration: 300s
workloads:
  - tcp: {from: h1, to: h2, bytes: 1KB, at: 1ms}
failures:
  - {at: 0s, link: [h1, s1], down}
`, RunOptions{})
	f := res.Flows[0]
	if !f.Done || f.Error == "" || res.Aggregate.Failed != 1 || res.Aggregate.Completed != 0 {
		t.Errorf("flow done %v error %q, aggregate %+v", f.Done, f.Error, res.Aggregate)
	}
}

// TestSweepFailureState: a failure's state is given once, whichever way
// (bare down/up or state:), in either order; down: takes no value but
// true. "down, state: up" used to become a repair, silently.
func TestSweepFailureState(t *testing.T) {
	const head = "topology: line:3\nscheme: learn\nduration: 1s\nfailures:\n"
	for _, c := range []struct{ body, want string }{
		{"  - {at: 500ms, link: [s1, s2], down, state: up}\n", "test.yaml:5: bad scenario: failure: state given twice"},
		{"  - {at: 500ms, link: [s1, s2], state: up, down}\n", "test.yaml:5: bad scenario: failure: state given twice"},
		{"  - {at: 500ms, link: [s1, s2], down: false}\n", `test.yaml:5: bad scenario: failure: write a bare "down" (or state: down)`},
	} {
		if _, err := parse(t, head+c.body); err == nil || err.Error() != c.want {
			t.Errorf("%q: %v, want %s", c.body, err, c.want)
		}
	}
	sc, err := parse(t, head+"  - {at: 500ms, link: [s1, s2], down: true}\n  - {at: 600ms, link: [s1, s2], up: }\n")
	if err != nil || len(sc.Failures) != 2 || sc.Failures[0].Up || !sc.Failures[1].Up {
		t.Fatalf("%+v, %v", sc, err)
	}
	// "min" is minutes, as "m" is.
	if d, err := ParseTime("2min"); err != nil || d != 120*element.Second {
		t.Errorf("ParseTime(2min) = %v, %v", d, err)
	}
}
