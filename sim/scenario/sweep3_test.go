package scenario

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/host"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/topo"
)

// Tests from a third mutation sweep of the scenario package: each pins an
// outcome that a mutant changed without failing the earlier tests (unit
// spellings, the exact message and line of errors in block-style YAML,
// limits at their value, what the runner passes to the scheme and the
// apps, the result fields it fills in, the text report's other columns).

// TestSweep3Units: spellings the other tables leave out (an exponent with
// "+", a blank before the unit, the short size units, the smallest rate)
// and the exact unit errors, which list the units known.
func TestSweep3Units(t *testing.T) {
	for s, want := range map[string]element.Time{"1e+3ms": element.Second, "1 ms": element.Millisecond} {
		if got, err := ParseTime(s); err != nil || got != want {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	if got, err := ParseRate("1"); err != nil || got != 1 {
		t.Errorf("ParseRate(1) = %v, %v; want 1", got, err)
	}
	for s, want := range map[string]int64{"2k": 2000, "100B": 100, "3m": 3e6, "1G": 1e9} {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, c := range []struct {
		f    func(string) error
		s    string
		want string
	}{
		// An "e" at the end is a unit, not an exponent.
		{func(s string) error { _, err := ParseTime(s); return err }, "1e", `bad value: "1e": unknown time unit "e" (s, ms, us, µs, ns, ps, m, min)`},
		{func(s string) error { _, err := ParseRate(s); return err }, "1e", `bad value: "1e": unknown rate unit (bps, kbps, Mbps, Gbps, Tbps)`},
		{func(s string) error { _, err := ParseRate(s); return err }, "0.9", `bad value: "0.9": a rate must be at least 1 bit/s`},
		{func(s string) error { _, err := ParseRate(s); return err }, "1GB/s", `bad value: "1GB/s": rates are in bits per second (Gbps, Gb/s, Mbps); "GB/s" reads as bytes`},
		{func(s string) error { _, err := ParseSize(s); return err }, "1PB", `bad value: "1PB": unknown size unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)`},
	} {
		if err := c.f(c.s); !errors.Is(err, ErrBadUnit) || err.Error() != c.want {
			t.Errorf("%q: %v, want %s", c.s, err, c.want)
		}
	}
}

// TestSweep3ParseErrors: exact messages the other tables check only in
// part, and the line of a value written on a line of its own (block
// style), where the entry's line and the value's differ.
func TestSweep3ParseErrors(t *testing.T) {
	const head = "topology: line:3\nscheme: learn\nduration: 1s\n"
	exactParseErrors(t, []parseErrorCase{
		// The raw layer.
		{"mapping for a value", "seed: {a: 1}\n" + head, "test.yaml:1: bad scenario: expected a single value, got a mapping"},
		{"mapping for names", head + "workloads:\n  - ping: {from: {a: 1}, to: h2}\n", "test.yaml:5: bad scenario: expected a name or a list of names, got a mapping"},
		{"list in a name list", head + "workloads:\n  - ping: {from: [[h1]], to: h2}\n", "test.yaml:5: bad scenario: expected a single value, got a list"},
		{"empty workload", head + "workloads:\n  - {}\n", "test.yaml:5: bad scenario: a workload is one of {ping: ...}, {udp: ...}, {tcp: ...}, {tcp_rr: ...}, {shuffle: ...}"},
		{"workload as a list", head + "workloads:\n  - [ping, x]\n", "test.yaml:5: bad scenario: a workload is one of {ping: ...}, {udp: ...}, {tcp: ...}, {tcp_rr: ...}, {shuffle: ...}"},
		{"workload settings line", head + "workloads:\n  - ping:\n      5\n", "test.yaml:6: bad scenario: workload ping: expected a mapping of its settings"},
		{"failure not a mapping", head + "failures:\n  - 5\n", "test.yaml:5: bad scenario: a failure is a mapping like {at: 2s, link: [s1, s2], down}"},
		{"down as a string", head + "failures:\n  - {at: 500ms, link: [s1, s2], down: \"true\"}\n", `test.yaml:5: bad scenario: failure: write a bare "down" (or state: down)`},
		{"failure field", head + "failures:\n  - {at: 500ms, node: s1, down, colour: 1}\n", `test.yaml:5: bad scenario: failure: unknown field "colour" (at, link, node, down, up, state)`},
		// An untagged Go field (the entry's line) is no key of the file.
		{"empty key", head + "link:\n  - {ends: [s1, s2], \"\": 1}\n", `test.yaml:5: bad scenario: unknown field ""`},
		{"unknown field line", head + "link:\n  - ends: [s1, s2]\n    colour: red\n", `test.yaml:6: bad scenario: unknown field "colour"`},
		// yaml's own messages, without its Go type names and wrapping.
		{"link as a mapping", head + "link: {ends: [s1, s2], loss: 0.1}\n", "test.yaml:4: bad scenario: cannot unmarshal !!map into a list"},
		{"links as a list", head + "links: [1]\n", "test.yaml:4: bad scenario: cannot unmarshal !!seq into a mapping"},
		{"unknown top-level field", head + "colour: blue\n", "test.yaml:4: bad scenario: field colour not found"},
		// The resolver.
		{"empty topology", "topology: \"\"\nscheme: learn\nduration: 1s\n", "test.yaml:1: topology: bad scenario: missing (a spec like fattree:4 or a file)"},
		{"topology line", "scheme: learn\ntopology: fattree:3\nduration: 1s\n", `test.yaml:2: topology: bad scenario: topo: spec "fattree:3": p: bad value: must be even and at least 2, got 3`},
		{"no scheme", "topology: line:3\nduration: 1s\n", "test.yaml:1: scheme: bad scenario: missing (one of: agent, learn)"},
		{"no duration", "topology: line:3\nscheme: learn\n", "test.yaml:1: duration: bad scenario: missing (e.g. duration: 10s)"},
		{"loss NaN", head + "links: {loss: NaN}\n", `test.yaml:4: links.loss: bad scenario: "NaN" is not a probability in [0, 1]`},
		{"corrupt", head + "links: {corrupt: 2}\n", `test.yaml:4: links.corrupt: bad scenario: "2" is not a probability in [0, 1]`},
		{"empty host list", head + "workloads:\n  - ping: {from: [], to: h2}\n", "test.yaml:5: workloads[0].ping.from: bad scenario: missing (a host, a list of hosts, or all)"},
		{"not a host line", head + "workloads:\n  - ping:\n      to: h2\n      from:\n        - h1\n        - s1\n", `test.yaml:9: workloads[0].ping.from: bad scenario: "s1" is a switch, not a host`},
		{"no link line", head + "link:\n  - rate: 1Gbps\n    ends: [s1, s3]\n", "test.yaml:6: link[0].ends: bad scenario: no link between s1 and s3"},
		{"timing unknown node", head + "timing:\n  - {nodes: [s9], latency: 1us}\n", `test.yaml:5: timing[0].nodes: bad scenario: unknown node "s9" in line:3`},
		{"timing kind", head + "timing:\n  - latency: 1us\n    kind: router\n", `test.yaml:6: timing[0].kind: bad scenario: "router" is not switch or host`},
		{"timing role line", head + "timing:\n  - latency: 1us\n    role: core\n", `test.yaml:6: timing[0].role: bad scenario: no node of line:3 has role "core"`},
		{"cut-through host line", head + "timing:\n  - kind: host\n    cut_through: 14\n", "test.yaml:6: timing[0].cut_through: bad scenario: h1 does not forward frames (a host takes them whole and checks the FCS); give cut_through to switches"},
		{"setting of another kind", head + "workloads:\n  - shuffle:\n      hosts: all\n      bytes: 1KB\n      from: h1\n", "test.yaml:8: workloads[0].shuffle.from: bad scenario: not a setting of shuffle (it takes hosts, at, bytes)"},
		{"hosts is shuffle's", head + "workloads:\n  - ping: {from: h1, to: h2, hosts: all}\n", "test.yaml:5: workloads[0].ping.hosts: bad scenario: not a setting of ping (it takes from, to, at, count, interval, size)"},
		{"response 0", head + "workloads:\n  - tcp_rr: {from: h1, to: h2, response: 0}\n", `test.yaml:5: workloads[0].tcp_rr.response: bad scenario: "0" must be between 1 and 16777216 bytes`},
		{"rate line", head + "workloads:\n  - udp:\n      from: h1\n      to: h2\n      rate: 1GB/s\n", `test.yaml:8: workloads[0].udp.rate: bad scenario: bad value: "1GB/s": rates are in bits per second (Gbps, Gb/s, Mbps); "GB/s" reads as bytes`},
		{"bytes line", head + "workloads:\n  - tcp:\n      from: h1\n      to: h2\n      bytes: 0\n", `test.yaml:8: workloads[0].tcp.bytes: bad scenario: "0" must be at least one byte`},
		// A missing setting is reported at its workload's line.
		{"udp no rate", head + "workloads:\n  - udp: {from: h1, to: h2}\n", "test.yaml:5: workloads[0].udp.rate: bad scenario: missing (e.g. rate: 100Mbps)"},
		{"udp under a picosecond", head + "workloads:\n  - udp: {from: h1, to: h2, rate: 1000Tbps, size: 1}\n", `test.yaml:5: workloads[0].udp.rate: bad scenario: "1000Tbps" with 1-byte datagrams is one every 0.008 ps: the clock's tick is 1 ps (at most 8Tbps with this size)`},
		{"udp 100 B under a picosecond", head + "workloads:\n  - udp: {from: h1, to: h2, rate: 900Tbps, size: 100}\n", `test.yaml:5: workloads[0].udp.rate: bad scenario: "900Tbps" with 100-byte datagrams is one every 0.89 ps: the clock's tick is 1 ps (at most 800Tbps with this size)`},
		{"tcp no bytes", head + "workloads:\n  - tcp: {from: h1, to: h2}\n", "test.yaml:5: workloads[0].tcp.bytes: bad scenario: missing (e.g. bytes: 10MB)"},
		{"shuffle no bytes", head + "workloads:\n  - shuffle: {hosts: all}\n", "test.yaml:5: workloads[0].shuffle.bytes: bad scenario: missing (bytes each host sends each other host)"},
		{"shuffle hosts line", head + "workloads:\n  - shuffle:\n      hosts: [h1]\n      bytes: 1KB\n", "test.yaml:6: workloads[0].shuffle.hosts: bad scenario: a shuffle needs at least two hosts"},
		{"failure no at", head + "failures:\n  - {link: [s1, s2], down}\n", "test.yaml:5: failures[0].at: bad scenario: missing"},
		{"failure neither", head + "failures:\n  - {at: 500ms, down}\n", "test.yaml:5: failures[0]: bad scenario: give a link: [a, b] or a node: name"},
	})
}

// TestSweep3ParseAccepts: what must load: upper limits at their value,
// a loss of 0, a tcp port, a decimal seed with a leading zero, and the
// default name, the file's without its extension.
func TestSweep3ParseAccepts(t *testing.T) {
	sc, err := parse(t, `
topology: line:3
scheme: learn
duration: 1s
seed: 010
links: {loss: 0}
timing:
  - {kind: switch, cut_through: 65536}
workloads:
  - ping: {from: h1, to: h2, count: 65536}
  - tcp_rr: {from: h1, to: h2, count: 1073741824, response: 16777216}
  - tcp: {from: h1, to: h2, bytes: 1KB, port: 80}
`)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Name != "test" || sc.Seed != 10 || len(sc.Links) != 1 || !sc.Links[0].LossSet || sc.Links[0].Fault.Loss != 0 {
		t.Errorf("name %q seed %d links %+v", sc.Name, sc.Seed, sc.Links)
	}
	if len(sc.Timing) != 3 || sc.Timing[0].Timing.CutThrough != 65536 {
		t.Errorf("timing %+v", sc.Timing)
	}
	w := sc.Workloads
	if len(w) != 3 || w[0].Count != 65536 || w[1].Count != 1<<30 || w[1].Response != 1<<24 || w[2].Port != 80 {
		t.Errorf("workloads %+v", w)
	}
}

// TestSweep3LoadFiles: a topology spec stays a spec beside a scenario in
// another directory; a file of exactly MaxFileSize is read (and refused
// for its content, not its size); a link is found past an unconnected
// port; on an empty topology, an unknown node is reported, not looked up.
func TestSweep3LoadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sc, err := Load(write("spec.yaml", "topology: line:1\nscheme: learn\nduration: 1s\n"), Options{Registry: testRegistry()})
	if err != nil || sc.Graph.NumNodes() != 3 {
		t.Fatalf("spec beside a scenario in %s: %v", dir, err)
	}

	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileSize); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Load(big, Options{Registry: testRegistry()}); err == nil || err.Error() != big+": bad scenario: control characters are not allowed" {
		t.Errorf("a file of MaxFileSize NUL bytes: %v", err)
	}

	// s1's port 2 has no link.
	write("gap.yaml", "name: gap\nnodes:\n  - {name: s1, kind: switch}\n  - {name: h1, kind: host}\n  - {name: h2, kind: host}\n"+
		"links:\n  - [s1:1, h1:1]\n  - [s1:3, h2:1]\n")
	sc, err = Load(write("sc.yaml", "topology: gap.yaml\nscheme: learn\nduration: 1s\nlink:\n  - {ends: [s1, h2], loss: 0.5}\n"), Options{Registry: testRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := sc.Graph.PortLink(0, 3); len(sc.Links) != 1 || sc.Links[0].Link != l {
		t.Errorf("links %+v, want link %d", sc.Links, l)
	}

	// On an empty topology, a port given with an unknown node is not
	// looked up (there is no node 0 to fall back on).
	write("empty.yaml", "name: empty\nnodes: []\nlinks: []\n")
	for _, c := range []struct{ body, want string }{
		{"captures:\n  - {node: h1, port: 1}\n", `:5: captures[0].node: bad scenario: unknown node "h1" in empty`},
		{"link:\n  - {ends: [s1:1, s2], loss: 1}\n", `:5: link[0].ends: bad scenario: unknown node "s1" in empty`},
	} {
		p := write("sc.yaml", "topology: empty.yaml\nscheme: learn\nduration: 1s\n"+c.body)
		if _, err := Load(p, Options{Registry: testRegistry()}); err == nil || err.Error() != p+c.want {
			t.Errorf("%q on an empty topology: %v, want %s", c.body, err, c.want)
		}
	}
}

// TestSweep3TimingRole: role: selects exactly the nodes with that role.
func TestSweep3TimingRole(t *testing.T) {
	sc, err := parse(t, "topology: fattree:4\nscheme: learn\nduration: 1s\ntiming:\n  - {role: core, latency: 1us}\n")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[topo.NodeID]bool{}
	for _, nt := range sc.Timing {
		if sc.Graph.Node(nt.Node).Role != "core" || seen[nt.Node] {
			t.Errorf("timing entry for %s (role %q)", sc.Graph.Node(nt.Node).Name, sc.Graph.Node(nt.Node).Role)
		}
		seen[nt.Node] = true
	}
	if len(seen) != 4 {
		t.Errorf("%d core switches timed, want 4", len(seen))
	}
}

// TestSweep3LinkZero: link 0 (h1-s1 in line:2) is a link like any other,
// not "every link", in link: entries and in failures; an entry giving
// only a rate keeps the topology's delay.
func TestSweep3LinkZero(t *testing.T) {
	sc, err := parse(t, `
topology: line:2
scheme: learn
duration: 100ms
link:
  - {ends: [h1, s1], rate: 100Mbps}
workloads:
  - ping: {from: h2, to: h3, count: 1, at: 10ms}
  - ping: {from: h1, to: h2, count: 1, at: 10ms}
failures:
  - {at: 5ms, link: [s1, h1], down}
`)
	if err != nil {
		t.Fatal(err)
	}
	g := sc.Graph
	if lk := g.Link(0); g.Node(lk.A.Node).Name+g.Node(lk.B.Node).Name != "s1h1" || sc.Links[0].Link != 0 {
		t.Fatalf("link 0 is %+v, setting %+v", lk, sc.Links)
	}
	r, err := sc.Setup(RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for l := range g.NumLinks() {
		c, _ := r.Sim.LinkConfig(topo.LinkID(l))
		want := topo.DefaultRate
		if l == 0 {
			want = 100_000_000
		}
		if c.Rate != want || c.Delay != g.Link(topo.LinkID(l)).Delay || c.Delay == 0 {
			t.Errorf("link %d: %+v, want rate %d and the topology's delay", l, c, want)
		}
	}
	res, err := r.Execute()
	if err != nil {
		t.Fatal(err)
	}
	if a, b := res.Flows[0].Received, res.Flows[1].Received; a != 1 || b != 0 {
		t.Errorf("h2->h3 received %d (want 1), h1->h2 %d (want 0, h1's link is down)", a, b)
	}
}

// ctNeg is the test bridge declaring a negative cut-through, which the
// runner must read as store-and-forward.
type ctNeg struct{ bridge }

func (*ctNeg) CutThrough() int { return -1 }

func sweep3Registry(got *scheme.Options) *scheme.Registry {
	r := sweepRegistry()
	for _, s := range []scheme.Scheme{
		{Name: "opts", Summary: "records its options", New: func(g *topo.Graph, o scheme.Options) (scheme.Fabric, error) {
			*got = o
			return fabricFunc(func(topo.NodeID) element.Element { return nil }), nil
		}},
		{Name: "broken", Summary: "fails", New: func(*topo.Graph, scheme.Options) (scheme.Fabric, error) {
			return nil, errors.New("no")
		}},
		{Name: "ctneg", Summary: "negative cut-through", New: func(g *topo.Graph, o scheme.Options) (scheme.Fabric, error) {
			return fabricFunc(func(n topo.NodeID) element.Element {
				if g.Node(n).Kind == topo.Switch {
					return &ctNeg{}
				}
				return nil
			}), nil
		}},
	} {
		if err := r.Register(s); err != nil {
			panic(err)
		}
	}
	return r
}

// TestSweep3Scheme: the scheme gets the scenario's seed and params; a
// fabric without elements is set up (nothing placed); the scheme's error
// names the file, the scheme's line, the scheme and the topology; a negative cut-through declared by
// an element is taken as none.
func TestSweep3Scheme(t *testing.T) {
	var got scheme.Options
	setup := func(y string) (*Run, error) {
		sc, err := Parse([]byte(y), "test.yaml", Options{Registry: sweep3Registry(&got)})
		if err != nil {
			t.Fatal(err)
		}
		return sc.Setup(RunOptions{})
	}
	if _, err := setup("topology: line:1\nscheme: opts\nseed: 7\nparams: {a: b}\nduration: 1s\n"); err != nil {
		t.Fatalf("a fabric without elements: %v", err)
	}
	if got.Seed != 7 || len(got.Params) != 1 || got.Params["a"] != "b" {
		t.Errorf("scheme options %+v, want seed 7, params a=b", got)
	}
	if _, err := setup("topology: line:1\nscheme: broken\nduration: 1s\n"); err == nil || err.Error() != "test.yaml:2: scheme: bad scenario: scheme broken on line:1: no" {
		t.Errorf("scheme error: %v", err)
	}
	if _, err := setup("topology: line:1\nscheme: ctneg\nduration: 1s\ntiming:\n  - {kind: switch, latency: 1us}\n"); err != nil {
		t.Errorf("negative cut-through with a latency entry: %v", err)
	}
}

// TestSweep3Flows: what the runner gives each app and reports of it: ids
// from 1, start times, the host's name, a ping's size (its RTT: four hops
// of a 1054-byte frame, 8432 ns each, plus 1 us), udp's default size and
// its goodput and count received, tcp_rr's 1-byte default request and
// response and its RTT samples (in the aggregate too), a started
// shuffle's names and goodput, the result's header fields; with no drop
// anywhere, no port and no drop reason is listed (the agent's stack port
// neither).
func TestSweep3Flows(t *testing.T) {
	_, res := sweepRun(t, `
topology: line:2
scheme: agent
seed: 5
duration: 1s
workloads:
  - ping: {from: h1, to: h2, count: 2, interval: 5ms, size: 1000, at: 10ms}
  - udp: {from: h1, to: h3, rate: 10Mbps, duration: 10ms, at: 20ms}
  - tcp_rr: {from: h2, to: h4, count: 3, at: 30ms}
  - shuffle: {hosts: [h1, h2, h3], bytes: 10KB, at: 40ms}
`, RunOptions{})
	if res.Scenario != "test" || res.Scheme != "agent" || res.Topology != "line:2" || res.Seed != 5 || len(res.Flows) != 4 {
		t.Fatalf("result %+v", res)
	}
	for i, f := range res.Flows {
		if f.ID != i+1 || f.StartS != float64(i+1)/100 || !f.Done || f.Error != "" {
			t.Errorf("flow %d: id %d start %v done %v error %q", i, f.ID, f.StartS, f.Done, f.Error)
		}
	}
	ping := res.Flows[0].Detail.(host.PingResult)
	if want := 4 * (8432*element.Nanosecond + element.Microsecond); ping.Src != "h1" || len(ping.RTTs) != 2 || ping.RTTs[1] != want {
		t.Errorf("ping from %q, RTTs %v, want the second %v", ping.Src, ping.RTTs, want)
	}
	uf := res.Flows[1]
	udp := uf.Detail.(host.UDPResult)
	if udp.Size != 1472 || udp.Received == 0 || uf.Received != int64(udp.Received) || uf.ThroughputBps != udp.GoodputBps || uf.ThroughputBps == 0 {
		t.Errorf("udp flow %+v, detail %+v", uf, udp)
	}
	rf := res.Flows[2]
	rr := rf.Detail.(host.RRResult)
	if rr.ReqSize != 1 || rr.RespSize != 1 || rf.RTT == nil || rf.RTT.Count != 3 || res.Aggregate.RTT.Count != 2+3 {
		t.Errorf("tcp_rr %+v, flow rtt %+v, aggregate rtt %+v", rr, rf.RTT, res.Aggregate.RTT)
	}
	sf := res.Flows[3]
	sh := sf.Detail.(host.ShuffleResult)
	if sf.Src != "3 hosts" || sf.Dst != "" || sf.ThroughputBps != sh.AggregateGoodput || sh.AggregateGoodput == 0 {
		t.Errorf("shuffle flow %+v", sf)
	}
	if len(res.Ports) != 0 || len(res.Drops) != 0 {
		t.Errorf("ports %+v drops %v, want none", res.Ports, res.Drops)
	}
}

// TestSweep3TCPStoppedAtStart: a tcp flow whose run stops at the instant
// it starts reports its goodput (0), not 0 bytes over 0 seconds (NaN,
// which --json cannot encode).
func TestSweep3TCPStoppedAtStart(t *testing.T) {
	sc, err := parse(t, "topology: line:1\nscheme: learn\nduration: 1s\nworkloads:\n  - tcp: {from: h1, to: h2, bytes: 1MB, at: 10ms}\n")
	if err != nil {
		t.Fatal(err)
	}
	r, err := sc.Setup(RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.Sim.At(10*element.Millisecond, r.Sim.Stop)
	res, err := r.Execute()
	if err != nil {
		t.Fatal(err)
	}
	if f := res.Flows[0]; f.Done || f.ThroughputBps != 0 || f.StartS != 0.01 {
		t.Errorf("flow %+v", f)
	}
	if _, err := json.Marshal(res); err != nil {
		t.Errorf("json: %v", err)
	}
}

// TestSweep3CaptureSetupError: when a capture file cannot be created,
// Setup fails with the path, and the files opened before it are flushed
// and closed (h1-1.pcap has its 24-byte header).
func TestSweep3CaptureSetupError(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "h2-1.pcap"), 0o755); err != nil {
		t.Fatal(err)
	}
	sc, err := parse(t, "topology: line:1\nscheme: learn\nduration: 1s\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "scenario: pcap: open " + filepath.Join(dir, "h2-1.pcap") + ": is a directory"
	if _, err := sc.Setup(RunOptions{PcapDir: dir}); err == nil || err.Error() != want {
		t.Fatalf("Setup: %v, want %s", err, want)
	}
	if st, err := os.Stat(filepath.Join(dir, "h1-1.pcap")); err != nil || st.Size() != 24 {
		t.Errorf("h1-1.pcap: %v, %v; want the 24-byte header written", st, err)
	}
}

// TestSweep3StackPortMaxQueue: the stack port's entry reports the
// engine's counters for it, its longest queue included.
func TestSweep3StackPortMaxQueue(t *testing.T) {
	r, res := sweepRun(t, `
topology: line:1
scheme: agent
duration: 1s
workloads:
  - ping: {from: h1, to: h2, count: 10, interval: 50ms, at: 10ms}
failures:
  - {at: 100ms, node: h1, down}
  - {at: 300ms, node: h1, up}
`, RunOptions{})
	h1, _ := r.Sc.Graph.Lookup("h1")
	st, _ := r.Sim.StackPortStats(h1)
	for _, p := range res.Ports {
		if p.Node == "h1/stack" {
			if p.MaxQueue != st.MaxQueue || p.TxFrames != st.TxFrames || p.RxFrames != st.RxFrames {
				t.Errorf("h1/stack %+v, engine %+v", p, st)
			}
			return
		}
	}
	t.Errorf("no h1/stack among %+v", res.Ports)
}

// TestSweep3WriteText: the columns TestSweep2WriteText leaves at zero:
// RTT percentiles (p99, not p90, in a flow's line; p50, p90, p99 in the
// aggregate), the count lost, rates in Mb/s and b/s, a fractional
// duration and a failure's error.
func TestSweep3WriteText(t *testing.T) {
	res := &Result{Scenario: "x", Topology: "line:1", Scheme: "learn", Seed: 2, DurationS: 0.5, Events: 9, TraceHash: "0000000000000001",
		Flows: []Flow{
			{ID: 1, Kind: "tcp_rr", Src: "h1", Dst: "h2", Done: true, ThroughputBps: 1e6, RTT: &host.Summary{Count: 3, P50Us: 1.25, P90Us: 2.5, P99Us: 3.75}},
			{ID: 2, Kind: "udp", Src: "h2", Dst: "h1", ThroughputBps: 999},
		},
		Aggregate: Aggregate{Flows: 2, Completed: 1, Unfinished: 1, ThroughputBps: 1e6 + 999, RTT: host.Summary{Count: 3, P50Us: 1.25, P90Us: 2.5, P99Us: 3.75}, Sent: 10, Received: 7, Loss: 0.3},
		Failures:  []FailureEvent{{AtS: 0.25, What: "node s1", State: "up", Error: "sim: oops"}},
	}
	var b strings.Builder
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `scenario x: learn on line:1, seed 2, 0.5s simulated, 9 events
  id  kind     src         dst         done       throughput     rtt p50     rtt p99     loss  note
   1  tcp_rr   h1          h2          true       1.000 Mb/s       1.2us       3.8us        -
   2  udp      h2          h1          false         999 b/s           -           -        -
aggregate: 2 flows, 1 completed, 0 failed, 1 unfinished; throughput 1.001 Mb/s (sum over flows); rtt p50 1.2us p90 2.5us p99 3.8us (3 samples); loss 30.00% (3/10)
at 0.25s: node s1 up sim: oops
trace_hash 0000000000000001
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestYAMLAliases: a YAML alias is a value like any other. yaml resolves
// it where it decodes a field itself ("from: *a" loads), but our own
// UnmarshalYAML methods walked into the alias node itself and refused it
// ("expected a single value, got a alias") in a name list, in every
// value of a failure and as a workload's settings. An error about an
// aliased value names the line of the alias, where the mistake is used.
func TestYAMLAliases(t *testing.T) {
	const head = "topology: line:3\nscheme: learn\nduration: 1s\n"
	sc, err := parse(t, head+"workloads:\n  - ping: {from: &a h1, to: h2}\n  - ping: {from: [*a], to: h3}\n")
	if err != nil || len(sc.Workloads) != 2 || sc.Workloads[1].Src != sc.Workloads[0].Src {
		t.Errorf("alias in a name list: %v", err)
	}
	sc, err = parse(t, head+"failures:\n  - {at: &t 500ms, link: [s1, s2], down}\n  - {at: *t, node: s3, down}\n")
	if err != nil || len(sc.Failures) != 2 || sc.Failures[1].At != 500*element.Millisecond {
		t.Errorf("alias in a failure: %v", err)
	}
	sc, err = parse(t, head+"workloads:\n  - ping: &p {from: h1, to: h2}\n  - ping: *p\n")
	if err != nil || len(sc.Workloads) != 2 || sc.Workloads[1].Dst != sc.Workloads[0].Dst {
		t.Errorf("alias as a workload's settings: %v", err)
	}
	exactParseErrors(t, []parseErrorCase{
		{"aliased unknown host", head + "workloads:\n  - ping: {from: &a h9, to: h2}\n", `test.yaml:5: workloads[0].ping.from: bad scenario: unknown node "h9" in line:3`},
		{"aliased failure node", "name: &n h9\n" + head + "failures:\n  - {at: 500ms,\n     node: *n, down}\n", `test.yaml:7: failures[0].node: bad scenario: unknown node "h9" in line:3`},
	})
}

// TestFailureChangesNothing: a failure entry that sets a link or node to
// the state it is already in at that time is refused with the entry that
// set it (or the start of the run), in time order whatever the file's
// order; a working sequence loads.
func TestFailureChangesNothing(t *testing.T) {
	const head = "topology: line:3\nscheme: learn\nduration: 20s\nfailures:\n"
	for _, c := range []struct{ body, want string }{
		{"  - {at: 12s, link: [s1, h1], up}\n",
			"test.yaml:5: failures[0]: bad scenario: link s1-h1 is already up at 12s (every link and node is up when the run starts)"},
		{"  - {at: 13s, node: h1, down}\n  - {at: 14s, node: h1, down}\n",
			"test.yaml:6: failures[1]: bad scenario: node h1 is already down at 14s (failures[0] set it down at 13s)"},
		{"  - {at: 14s, link: [s1, s2], down}\n  - {at: 13s, link: [s1, s2], down}\n",
			"test.yaml:5: failures[0]: bad scenario: link s1-s2 is already down at 14s (failures[1] set it down at 13s)"},
	} {
		if _, err := parse(t, head+c.body); err == nil || err.Error() != c.want {
			t.Errorf("%q: %v, want %s", c.body, err, c.want)
		}
	}
	ok := "  - {at: 1s, link: [s1, s2], down}\n  - {at: 1s, node: s2, down}\n  - {at: 2s, link: [s1, s2], up}\n  - {at: 2s, link: [s1, s2], down}\n  - {at: 3s, node: s2, up}\n"
	if sc, err := parse(t, head+ok); err != nil || len(sc.Failures) != 5 {
		t.Fatalf("a working sequence: %v", err)
	}
}
