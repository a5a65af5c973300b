package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/sim"
	"github.com/edgefabric/edgefabric/topo"
)

func parse(t *testing.T, y string) (*Scenario, error) {
	t.Helper()
	return Parse([]byte(y), "test.yaml", Options{Registry: testRegistry()})
}

func TestParseErrors(t *testing.T) {
	const head = "topology: line:3\nscheme: learn\nduration: 1s\n"
	for _, c := range []struct {
		name, yaml, want string
	}{
		{"empty", "", "test.yaml: bad scenario: empty file"},
		{"link as a mapping", head + "link: {ends: [s1, s2], loss: 0.1}\n", "test.yaml:4: bad scenario: cannot unmarshal !!map into a list"},
		{"failure key twice", head + "failures:\n  - {at: 1s, at: 5s, node: s1, down}\n", "test.yaml:5: bad scenario: failure: \"at\" given twice"},
		{"second document", head + "---\ntopology: ring:3\n", "test.yaml:4: bad scenario: a second YAML document"},
		{"broken second document", head + "---\ntopology: [ring:3\n", "test.yaml:4: bad scenario: a second YAML document (---), and a broken one: did not find expected ',' or ']'"},
		{"params as a list", head + "params: [1]\n", "cannot unmarshal !!seq into a mapping"},
		{"cut-through host", head + "timing: [{kind: host, cut_through: 14}]\n", "timing[0].cut_through: bad scenario: h1 does not forward frames"},
		{"not yaml", "topology: [", "test.yaml:1: bad scenario: did not find expected node content"},
		{"unknown field", head + "colour: blue\n", "test.yaml:4: bad scenario: field colour not found"},
		{"no topology", "scheme: learn\nduration: 1s\n", "test.yaml:1: topology: bad scenario: missing"},
		{"bad topology", "topology: fattree:3\nscheme: learn\nduration: 1s\n", "test.yaml:1: topology: bad scenario:"},
		{"missing file", "topology: nosuch.yaml\nscheme: learn\nduration: 1s\n", "test.yaml:1: topology:"},
		{"unknown scheme", "topology: line:3\nscheme: axon9\nduration: 1s\n", "test.yaml:2: scheme: bad scenario: unknown scheme \"axon9\" (known: agent, learn)"},
		{"no duration", "topology: line:3\nscheme: learn\n", "duration: bad scenario: missing"},
		{"bad duration", "topology: line:3\nscheme: learn\nduration: 3 parsecs\n", "test.yaml:3: duration: bad scenario: bad value: \"3 parsecs\": unknown time unit"},
		{"negative duration", "topology: line:3\nscheme: learn\nduration: -1s\n", "test.yaml:3: duration: bad scenario: bad value: \"-1s\" is negative"},
		{"bad seed", head + "seed: -4\n", "test.yaml:4: seed: bad scenario"},
		{"bad rate", head + "links: {rate: 1Gbananas}\n", "test.yaml:4: links.rate: bad scenario: bad value: \"1Gbananas\": unknown rate unit"},
		{"bad queue", head + "links: {queue: 3}\n", "test.yaml:4: links.queue: bad scenario"},
		{"bad loss", head + "links: {loss: 1.5}\n", "test.yaml:4: links.loss: bad scenario: \"1.5\" is not a probability"},
		{"no such link", head + "link:\n  - {ends: [s1, s3], rate: 10Gbps}\n", "test.yaml:5: link[0].ends: bad scenario: no link between s1 and s3"},
		{"unknown node in link", head + "link:\n  - {ends: [s1, s9], rate: 10Gbps}\n", "test.yaml:5: link[0].ends: bad scenario: unknown node \"s9\""},
		{"link field", head + "link:\n  - {ends: [s1, s2], colour: red}\n", "test.yaml:5: bad scenario: unknown field \"colour\""},
		{"timing no selector", head + "timing:\n  - {latency: 1us}\n", "test.yaml:5: timing[0]: bad scenario: say which nodes"},
		{"timing role", head + "timing:\n  - {role: core, latency: 1us}\n", "test.yaml:5: timing[0].role: bad scenario: no node of line:3 has role \"core\""},
		{"timing ct", head + "timing:\n  - {kind: switch, cut_through: -6}\n", "test.yaml:5: timing[0].cut_through: bad scenario"},
		// Two selectors: the second was silently ignored.
		{"timing nodes and role", head + "timing:\n  - {nodes: [s1], role: core, latency: 1us}\n", "test.yaml:5: timing[0]: bad scenario: give one of nodes, role or kind, not nodes and role"},
		{"timing kind and role", head + "timing:\n  - {kind: switch, role: core, latency: 1us}\n", "test.yaml:5: timing[0]: bad scenario: give one of nodes, role or kind, not role and kind"},
		{"timing nothing to set", head + "timing:\n  - {nodes: [s1]}\n", "test.yaml:5: timing[0]: bad scenario: say what to set"},
		{"workload kind", head + "workloads:\n  - iperf: {from: h1, to: h2}\n", "test.yaml:5: workloads[0]: bad scenario: unknown workload \"iperf\""},
		{"workload two kinds", head + "workloads:\n  - {ping: {from: h1, to: h2}, tcp: {from: h1, to: h2}}\n", "test.yaml:5: bad scenario: a workload is one of"},
		{"workload setting", head + "workloads:\n  - ping: {from: h1, to: h2, bytes: 10MB}\n", "test.yaml:5: workloads[0].ping.bytes: bad scenario: not a setting of ping"},
		{"workload unknown setting", head + "workloads:\n  - ping: {from: h1, to: h2, colour: 3}\n", "test.yaml:5: bad scenario: unknown field \"colour\""},
		{"workload to a switch", head + "workloads:\n  - ping: {from: h1, to: s2}\n", "test.yaml:5: workloads[0].ping.to: bad scenario: \"s2\" is a switch, not a host"},
		{"workload no from", head + "workloads:\n  - ping: {to: h2}\n", "test.yaml:5: workloads[0].ping.from: bad scenario: missing"},
		{"workload self", head + "workloads:\n  - ping: {from: h1, to: h1}\n", "test.yaml:5: workloads[0].ping: bad scenario: no pair of distinct hosts"},
		{"workload late", head + "workloads:\n  - ping: {from: h1, to: h2, at: 2s}\n", "test.yaml:5: workloads[0].ping.at: bad scenario: starts at 2s"},
		{"tcp no bytes", head + "workloads:\n  - tcp: {from: h1, to: h2}\n", "workloads[0].tcp.bytes: bad scenario: missing"},
		// Written-out zeros meant the defaults: a 56-byte ping, a 1472-byte
		// datagram, 1 s between pings, udp until the end of the run.
		{"ping size 0", head + "workloads:\n  - ping: {from: h1, to: h2, size: 0}\n", "test.yaml:5: workloads[0].ping.size: bad scenario: \"0\" must be between 1 and 1472 bytes"},
		{"udp size 0", head + "workloads:\n  - udp: {from: h1, to: h2, rate: 1Mbps, size: 0}\n", "test.yaml:5: workloads[0].udp.size: bad scenario"},
		{"ping interval 0", head + "workloads:\n  - ping: {from: h1, to: h2, count: 3, interval: 0s}\n", "test.yaml:5: workloads[0].ping.interval: bad scenario: \"0s\" must be positive"},
		{"ping interval rounds to 0", head + "workloads:\n  - ping: {from: h1, to: h2, count: 3, interval: 0.1ps}\n", "workloads[0].ping.interval: bad scenario"},
		{"udp duration 0", head + "workloads:\n  - udp: {from: h1, to: h2, rate: 1Mbps, duration: 0}\n", "test.yaml:5: workloads[0].udp.duration: bad scenario: \"0\" must be positive"},
		{"udp no rate", head + "workloads:\n  - udp: {from: h1, to: h2}\n", "workloads[0].udp.rate: bad scenario: missing"},
		{"udp bad port", head + "workloads:\n  - udp: {from: h1, to: h2, rate: 1Mbps, port: 70000}\n", "test.yaml:5: workloads[0].udp.port: bad scenario"},
		{"shuffle one host", head + "workloads:\n  - shuffle: {hosts: [h1], bytes: 1MB}\n", "workloads[0].shuffle.hosts: bad scenario: a shuffle needs at least two hosts"},
		{"failure no state", head + "failures:\n  - {at: 500ms, link: [s1, s2]}\n", "test.yaml:5: failures[0]: bad scenario: say down or up"},
		{"failure bad state", head + "failures:\n  - {at: 500ms, link: [s1, s2], state: sideways}\n", "test.yaml:5: failures[0].state: bad scenario: \"sideways\" is not down or up"},
		{"failure both", head + "failures:\n  - {at: 500ms, link: [s1, s2], node: s1, down}\n", "failures[0]: bad scenario: give a link or a node, not both"},
		{"failure field", head + "failures:\n  - {at: 500ms, link: [s1, s2], down, colour: 1}\n", "test.yaml:5: bad scenario: failure: unknown field \"colour\""},
		{"failure down value", head + "failures:\n  - {at: 500ms, link: [s1, s2], down: 3}\n", "test.yaml:5: bad scenario: failure: write a bare \"down\""},
		{"ping count", head + "workloads:\n  - ping: {from: h1, to: h2, count: 65537}\n", "test.yaml:5: workloads[0].ping.count: bad scenario: \"65537\" is not an integer in [1, 65536]"},
		{"ping size", head + "workloads:\n  - ping: {from: h1, to: h2, size: 1473}\n", "test.yaml:5: workloads[0].ping.size: bad scenario: \"1473\" must be between 1 and 1472 bytes"},
		{"udp size", head + "workloads:\n  - udp: {from: h1, to: h2, rate: 1Mbps, size: 9000}\n", "test.yaml:5: workloads[0].udp.size: bad scenario: \"9000\" must be between 1 and 1472 bytes"},
		{"failure late", head + "failures:\n  - {at: 1s, link: [s1, s2], down}\n", "test.yaml:5: failures[0].at: bad scenario: at 1s, at or after the end of the run (1s)"},
		{"failure no at", head + "failures:\n  - {link: [s1, s2], down}\n", "failures[0].at: bad scenario: missing"},
		{"capture port", head + "captures:\n  - {node: h1, port: 2}\n", "test.yaml:5: captures[0].port: bad scenario: \"2\" is not a port of h1 (1..1)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(t, c.yaml)
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q\nwant it to contain %q", err, c.want)
			}
			if !errors.Is(err, ErrScenario) && !strings.Contains(c.want, "field") && !strings.Contains(c.want, "line ") {
				t.Errorf("error does not wrap ErrScenario: %v", err)
			}
		})
	}
}

func TestParseResolves(t *testing.T) {
	sc, err := parse(t, `
name: demo
topology: line:3
scheme: learn
params: {hello: 1s}
seed: 7
duration: 2s
links: {rate: 10Gbps, delay: 500ns, queue: 64KiB}
link:
  - {ends: [s1, s2], rate: 1Gbps, loss: 0.01}
timing:
  - {nodes: [s2], latency: 1us, cut_through: 6}
workloads:
  - ping: {from: all, to: all, count: 2, interval: 10ms, at: 100ms}
  - tcp: {from: h1, to: h6, bytes: 1MB}
  - shuffle: {hosts: all, bytes: 10KB, at: 1s}
failures:
  - {at: 1.5s, link: [s2, s3], down}
  - {at: 1.55s, node: s2, state: down}
  - {at: 1.6s, node: s2, state: up}
`)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Name != "demo" || sc.Seed != 7 || sc.Duration != 2*element.Second || sc.Params["hello"] != "1s" {
		t.Errorf("scenario %+v", sc)
	}
	if len(sc.Links) != 2 || sc.Links[0].Link != -1 || sc.Links[0].Rate != 10_000_000_000 || sc.Links[0].Delay != 500*element.Nanosecond ||
		sc.Links[0].Queue != 65536 || sc.Links[1].Rate != 1_000_000_000 || sc.Links[1].Fault.Loss != 0.01 {
		t.Errorf("links %+v", sc.Links)
	}
	if len(sc.Timing) != 1 || sc.Timing[0].Timing.CutThrough != 6 || sc.Timing[0].Timing.Latency != element.Microsecond {
		t.Errorf("timing %+v", sc.Timing)
	}
	// 6 hosts: 30 ordered pairs of pings, one tcp, one shuffle.
	if len(sc.Workloads) != 32 || sc.Workloads[30].Kind != TCP || sc.Workloads[30].Bytes != 1_000_000 || len(sc.Workloads[31].Hosts) != 6 {
		t.Errorf("%d workloads", len(sc.Workloads))
	}
	if len(sc.Failures) != 3 || sc.Failures[0].Up || sc.Failures[0].What != "link s2-s3" || sc.Failures[1].Up || !sc.Failures[2].Up || sc.Failures[2].Link != -1 {
		t.Errorf("failures %+v", sc.Failures)
	}
	// --seed overrides the file's seed.
	sc, err = Parse([]byte("topology: line:1\nscheme: learn\nduration: 1s\nseed: 3\n"), "x.yaml", Options{Registry: testRegistry(), Seed: 9, SeedSet: true})
	if err != nil || sc.Seed != 9 {
		t.Errorf("seed override: %v %v", sc, err)
	}
}

func TestLoadRelativeTopologyFile(t *testing.T) {
	dir := t.TempDir()
	topoYAML := "name: tiny\nnodes:\n  - {name: s1, kind: switch}\n  - {name: h1, kind: host}\n  - {name: h2, kind: host}\nlinks:\n  - [s1, h1]\n  - [s1, h2]\n"
	if err := os.WriteFile(filepath.Join(dir, "tiny.yaml"), []byte(topoYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "sc.yaml")
	if err := os.WriteFile(p, []byte("topology: tiny.yaml\nscheme: learn\nduration: 1s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Loaded from another directory: the topology is found beside the
	// scenario, not in the working directory.
	t.Chdir(t.TempDir())
	sc, err := Load(p, Options{Registry: testRegistry()})
	if err != nil {
		t.Fatalf("scenario beside tiny.yaml: %v", err)
	}
	if sc.Graph.NumNodes() != 3 {
		t.Errorf("graph has %d nodes", sc.Graph.NumNodes())
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml"), Options{}); err == nil {
		t.Error("missing scenario file loaded")
	}
}

func TestUnits(t *testing.T) {
	for s, want := range map[string]element.Time{"2s": 2 * element.Second, "1.5us": 1500 * element.Nanosecond, "80ps": 80, "100ms": 100 * element.Millisecond, "3": 3 * element.Second, "1µs": element.Microsecond, "1m": 60 * element.Second} {
		if got, err := ParseTime(s); err != nil || got != want {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for s, want := range map[string]int64{"1Gbps": 1e9, "10Gb/s": 1e10, "100Mbps": 1e8, "1e9": 1e9, "64kbps": 64000, "2.5G": 2.5e9, "1Gbit/s": 1e9, "1GBit/s": 1e9, "10Gbit": 1e10} {
		if got, err := ParseRate(s); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for s, want := range map[string]int64{"1500": 1500, "64KiB": 65536, "10MB": 10e6, "1GiB": 1 << 30, "2kB": 2000, "3k": 3000} {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "s", "1 lightyear", "-1s", "1e400s", "NaN"} {
		if _, err := ParseTime(s); !errors.Is(err, ErrBadUnit) {
			t.Errorf("ParseTime(%q): %v", s, err)
		}
	}
	// Byte rates (capital B) used to be read as bit rates, 8 times too slow.
	for _, s := range []string{"fast", "0.1bps", "1Xbps", "-1Gbps", "1GB/s", "100MBps", "10GBps", "1KB/s"} {
		if _, err := ParseRate(s); !errors.Is(err, ErrBadUnit) {
			t.Errorf("ParseRate(%q): %v", s, err)
		}
	}
	for _, s := range []string{"big", "1PiB", "-3"} {
		if _, err := ParseSize(s); !errors.Is(err, ErrBadUnit) {
			t.Errorf("ParseSize(%q): %v", s, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("topology: line:3\nscheme: learn\nduration: 1s\nworkloads:\n  - ping: {from: all, to: all}\nfailures:\n  - {at: 500ms, link: [s1, s2], down}\n"))
	f.Add([]byte("topology: [\n"))
	f.Add([]byte("failures: [{down}]\n"))
	f.Add([]byte("topology: line:1\nscheme: learn\nduration: 1s\ntcp: {recv_window: 64KiB, initial_cwnd: 4, min_rto: 1ms, max_rto: 2s, delayed_ack: on, delayed_ack_timeout: 5ms}\n"))
	reg := testRegistry()
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse(data, "fuzz.yaml", Options{Registry: reg})
		if err == nil && sc.Graph.NumNodes() > 20000 {
			t.Skip()
		}
		checkParsed(t, sc, err)
	})
}

// TestParseFlowLimit: a workload that expands to more than MaxFlows flows
// is refused while loading, before the flows are allocated; the count
// adds up across workloads and includes a shuffle's n(n-1) transfers.
func TestParseFlowLimit(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		// fattree:48 has 27648 hosts: 764 million ordered pairs
		{"all pairs", "topology: fattree:48\nscheme: learn\nduration: 1s\nworkloads:\n  - ping: {from: all, to: all}\n",
			"test.yaml:5: workloads[0].ping: bad scenario: asks for up to 764411904 flows"},
		{"shuffle", "topology: fattree:48\nscheme: learn\nduration: 1s\nworkloads:\n  - shuffle: {hosts: all, bytes: 1KB}\n",
			"test.yaml:5: workloads[0].shuffle: bad scenario: asks for up to 764384256 flows"},
		// 1024 hosts x 1023 = 1047552 flows fit; a second workload does not
		{"sum", "topology: fattree:16\nscheme: learn\nduration: 1s\nworkloads:\n  - shuffle: {hosts: all, bytes: 1KB}\n  - ping: {from: [h1, h2], to: all}\n",
			"test.yaml:6: workloads[1].ping: bad scenario: asks for up to 2048 flows, with 1047552 in the scenario before it; the limit is 1048576"},
	} {
		_, err := parse(t, c.yaml)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got  %v\n want %s", c.name, err, c.want)
		}
	}
}

// TestLoadTooLarge: a file past MaxFileSize, or an endless one like
// /dev/zero, is refused after reading MaxFileSize bytes, not read until
// memory runs out.
func TestLoadTooLarge(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := Load("/dev/zero", Options{Registry: testRegistry()})
	if !errors.Is(err, ErrScenario) || !strings.Contains(err.Error(), "/dev/zero: bad scenario: larger than 67108864 bytes") {
		t.Fatalf("%v", err)
	}
}

// TestLinkOverridesApplyInOrder: what reaches the engine. `links:` sets
// every link, a `link:` entry changes only the fields it names (rate,
// delay and the other fault field stay `links:`'s; it once reset them to
// the topology's), and a later entry for the same link goes on from there.
func TestLinkOverridesApplyInOrder(t *testing.T) {
	sc, err := parse(t, `
topology: line:3
scheme: learn
duration: 1s
links: {rate: 10Gbps, delay: 500ns, corrupt: 0.01, queue: 64KiB}
link:
  - {ends: [s1, s2], loss: 0.1}
  - {ends: [s1, s2], rate: 1Gbps}
`)
	if err != nil {
		t.Fatal(err)
	}
	r, err := sc.Setup(RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]sim.LinkConfig{
		"s1-s2": {Rate: 1_000_000_000, Delay: 500 * element.Nanosecond, Queue: 65536, Fault: sim.Fault{Loss: 0.1, Corrupt: 0.01}},
		"s2-s3": {Rate: 10_000_000_000, Delay: 500 * element.Nanosecond, Queue: 65536, Fault: sim.Fault{Corrupt: 0.01}},
	}
	g := sc.Graph
	for i := range g.NumLinks() {
		lk := g.Link(topo.LinkID(i))
		name := g.Node(lk.A.Node).Name + "-" + g.Node(lk.B.Node).Name
		w, ok := want[name]
		if !ok {
			continue // host links
		}
		got, err := r.Sim.LinkConfig(topo.LinkID(i))
		if err != nil || got != w {
			t.Errorf("%s: %+v (%v), want %+v", name, got, err, w)
		}
	}
}

// TestParallelLinks: with two links between s1 and s2, ends [s1, s2] is
// ambiguous (the first link used to be taken silently, leaving the other
// as it was) and NAME:PORT picks one, in link: overrides and failures.
func TestParallelLinks(t *testing.T) {
	dir := t.TempDir()
	topoYAML := `name: parallel
nodes:
  - {name: s1, kind: switch}
  - {name: s2, kind: switch}
  - {name: h1, kind: host}
  - {name: h2, kind: host}
links:
  - [s1:1, s2:1]
  - [s1:2, s2:2]
  - [s1:3, h1:1]
  - [s2:3, h2:1]
`
	if err := os.WriteFile(filepath.Join(dir, "parallel.yaml"), []byte(topoYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	load := func(body string) (*Scenario, error) {
		p := filepath.Join(dir, "sc.yaml")
		if err := os.WriteFile(p, []byte("topology: parallel.yaml\nscheme: learn\nduration: 1s\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
		return Load(p, Options{Registry: testRegistry()})
	}
	for _, c := range []struct{ body, want string }{
		{"link:\n  - {ends: [s1, s2], loss: 1}\n", "link[0].ends: bad scenario: 2 links between s1 and s2: name a port, like [s1:1, s2]"},
		{"failures:\n  - {at: 1ms, link: [s2, s1], down}\n", "2 links between s2 and s1: name a port, like [s2:1, s1]"},
		{"link:\n  - {ends: [s1:9, s2], loss: 1}\n", "link[0].ends: bad scenario: s1 has no port 9"},
		{"link:\n  - {ends: [s1:3, s2], loss: 1}\n", "link[0].ends: bad scenario: no link between s1:3 and s2"},
		{"link:\n  - {ends: [s1:1, s2:2], loss: 1}\n", "no link between s1:1 and s2:2"},
	} {
		if _, err := load(c.body); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.body, err, c.want)
		}
	}
	sc, err := load("link:\n  - {ends: [s1:2, s2], loss: 0.5}\nfailures:\n  - {at: 1ms, link: [s2:1, s1:1], down}\n")
	if err != nil {
		t.Fatal(err)
	}
	g := sc.Graph
	l2, _ := g.PortLink(0, 2)
	l1, _ := g.PortLink(0, 1)
	if len(sc.Links) != 1 || sc.Links[0].Link != l2 || sc.Links[0].Fault.Loss != 0.5 {
		t.Errorf("link override on %+v, want link %d", sc.Links, l2)
	}
	if len(sc.Failures) != 1 || sc.Failures[0].Link != l1 {
		t.Errorf("failure %+v, want link %d", sc.Failures, l1)
	}
}
