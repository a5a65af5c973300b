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
)

// Tests from a second mutation sweep of the scenario package: each pins an
// outcome that a mutant changed without failing the earlier tests (a unit
// at its limit or rounding, an exact message and line, a default the
// runner fills in, a column of the text report).

// TestSweep2Units: exponents, rounding to the unit and the upper limits.
func TestSweep2Units(t *testing.T) {
	for s, want := range map[string]element.Time{"1e-3s": element.Millisecond, "0.6ps": 1, "0.4ps": 0, "4000000s": 4e6 * element.Second} {
		if got, err := ParseTime(s); err != nil || got != want {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for s, want := range map[string]int64{"1Tbps": 1e12, "1.6": 2, "1e15": 1e15} {
		if got, err := ParseRate(s); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for s, want := range map[string]int64{"1.6": 2, "1125899906842624": 1 << 50} {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, c := range []struct {
		f    func(string) error
		s    string
		want string
	}{
		{func(s string) error { _, err := ParseTime(s); return err }, "-0.5ps", `bad value: "-0.5ps" is negative`},
		{func(s string) error { _, err := ParseTime(s); return err }, "5000000s", `bad value: "5000000s" is too large`},
		{func(s string) error { _, err := ParseRate(s); return err }, "2e15", `bad value: "2e15" is too large`},
		{func(s string) error { _, err := ParseSize(s); return err }, "1.5e15", `bad value: "1.5e15" is too large`},
		{func(s string) error { _, err := ParseSize(s); return err }, "-0.4", `bad value: "-0.4" is negative`},
	} {
		if err := c.f(c.s); !errors.Is(err, ErrBadUnit) || err.Error() != c.want {
			t.Errorf("%q: %v, want %s", c.s, err, c.want)
		}
	}
}

// TestSweep2ParseErrors: messages with the file, the line and the field,
// for entries the earlier tables leave out; the first error is the one
// reported.
func TestSweep2ParseErrors(t *testing.T) {
	const head = "topology: line:3\nscheme: learn\nduration: 1s\n"
	exactParseErrors(t, []parseErrorCase{
		// The line of the entry: a missing node has none of its own (it
		// used to be reported at line 0).
		{"capture without node", head + "captures:\n  - {port: 1}\n", "test.yaml:5: captures[0].node: bad scenario: missing"},
		{"link without ends", head + "link:\n  - {rate: 1Gbps}\n", "test.yaml:5: link[0].ends: bad scenario: expected two node names, like [s1, s2]"},
		{"three ends", head + "link:\n  - {ends: [s1, s2, s3], rate: 1Gbps}\n", "test.yaml:5: link[0].ends: bad scenario: expected two node names, like [s1, s2]"},
		{"port without node", head + "link:\n  - {ends: [':3', s2], rate: 1Gbps}\n", `test.yaml:5: link[0].ends: bad scenario: unknown node ":3" in line:3`},
		{"workload not a mapping", head + "workloads:\n  - ping: 5\n", "test.yaml:5: bad scenario: workload ping: expected a mapping of its settings"},
		{"list for a value", "seed: [1]\n" + head, "test.yaml:1: bad scenario: expected a single value, got a list"},
		{"first error wins", "seed: x\ntopology: line:1\nscheme: learn\n", `test.yaml:1: seed: bad scenario: "x" is not a non-negative integer`},
		{"size is ping's and udp's", head + "workloads:\n  - tcp: {from: h1, to: h2, bytes: 1KB, size: 100}\n", "test.yaml:5: workloads[0].tcp.size: bad scenario: not a setting of tcp (it takes from, to, at, bytes, port)"},
		{"request 0", head + "workloads:\n  - tcp_rr: {from: h1, to: h2, request: 0}\n", `test.yaml:5: workloads[0].tcp_rr.request: bad scenario: "0" must be between 1 and 16777216 bytes`},
	})
}

// TestSweep2ParseBounds: the limits themselves load: a 64-byte and a
// 1 TiB queue, a loss of 1.
func TestSweep2ParseBounds(t *testing.T) {
	sc, err := parse(t, "topology: line:3\nscheme: learn\nduration: 1s\nlinks: {queue: 64}\nlink:\n  - {ends: [s1, s2], queue: 1024GiB, loss: 1}\n")
	if err != nil || len(sc.Links) != 2 || sc.Links[0].Queue != 64 || sc.Links[1].Queue != 1<<40 || sc.Links[1].Fault.Loss != 1 {
		t.Fatalf("%+v, %v", sc, err)
	}
}

// TestSweep2ParallelLinkHint: with parallel links listed from the other
// end, the hint still names a port of the first node given.
func TestSweep2ParallelLinkHint(t *testing.T) {
	dir := t.TempDir()
	topoYAML := "name: par\nnodes:\n  - {name: s1, kind: switch}\n  - {name: s2, kind: switch}\n  - {name: h1, kind: host}\n  - {name: h2, kind: host}\n" +
		"links:\n  - [s2:1, s1:2]\n  - [s2:2, s1:3]\n  - [s1:1, h1:1]\n  - [s2:3, h2:1]\n"
	if err := os.WriteFile(filepath.Join(dir, "par.yaml"), []byte(topoYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "sc.yaml")
	if err := os.WriteFile(p, []byte("topology: par.yaml\nscheme: learn\nduration: 1s\nlink:\n  - {ends: [s1, s2], loss: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p, Options{Registry: testRegistry()})
	if want := "2 links between s1 and s2: name a port, like [s1:2, s2]"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("%v, want %q", err, want)
	}
}

// TestSweep2SetupMerges: a link entry giving only a loss sets the fault;
// a timing entry giving only cut_through keeps an earlier entry's latency
// (the RTT of TestPingExactRTT plus 300 ns per pass through s1).
func TestSweep2SetupMerges(t *testing.T) {
	sc, err := parse(t, "topology: line:1\nscheme: learn\nduration: 1s\nlink:\n  - {ends: [h2, s1], loss: 0.25}\n")
	if err != nil {
		t.Fatal(err)
	}
	r, err := sc.Setup(RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := sc.Graph.Lookup("h2")
	l, _ := sc.Graph.PortLink(h2, 1) // s1-h2
	if c, _ := r.Sim.LinkConfig(l); c.Fault.Loss != 0.25 || c.Fault.Corrupt != 0 {
		t.Errorf("s1-h2 fault %+v, want loss 0.25", c.Fault)
	}
	_, res := sweepRun(t, `
topology: line:1
scheme: learn
duration: 1s
timing:
  - {nodes: [s1], latency: 300ns}
  - {nodes: [s1], cut_through: 0}
workloads:
  - ping: {from: h1, to: h2, count: 2, interval: 10ms, at: 10ms}
`, RunOptions{})
	d := res.Flows[0].Detail.(host.PingResult)
	want := 4*(880*element.Nanosecond+element.Microsecond) + 2*300*element.Nanosecond
	if len(d.RTTs) != 2 || d.RTTs[1] != want {
		t.Errorf("RTTs %v, want the second %v", d.RTTs, want)
	}
}

// TestSweep2WorkloadSettings: tcp_rr sizes go to the app as given; udp
// without a port sends to host.DiscardPort.
func TestSweep2WorkloadSettings(t *testing.T) {
	_, res := sweepRun(t, `
topology: line:1
scheme: learn
duration: 100ms
workloads:
  - tcp_rr: {from: h1, to: h2, count: 2, request: 100, response: 200}
  - udp: {from: h1, to: h2, rate: 1Mbps, duration: 10ms}
`, RunOptions{})
	rr := res.Flows[0].Detail.(host.RRResult)
	if rr.ReqSize != 100 || rr.RespSize != 200 || rr.Transactions != 2 {
		t.Errorf("tcp_rr %+v", rr)
	}
	u := res.Flows[1].Detail.(host.UDPResult)
	if u.DstPort != host.DiscardPort || u.Received == 0 || res.DurationS != 0.1 {
		t.Errorf("udp to port %d, received %d, duration_s %v", u.DstPort, u.Received, res.DurationS)
	}
}

// failWriter fails every capture write.
type failWriter struct{}

func (failWriter) WritePacket(element.Time, []byte) error { return errors.New("disk full") }

// TestSweep2ExecuteReportsEngineError: a capture that fails makes
// Execute fail with the engine's error, not return a result.
func TestSweep2ExecuteReportsEngineError(t *testing.T) {
	sc, err := parse(t, "topology: line:1\nscheme: learn\nduration: 10ms\nworkloads:\n  - ping: {from: h1, to: h2, count: 1}\n")
	if err != nil {
		t.Fatal(err)
	}
	r, err := sc.Setup(RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Sim.Capture(0, 1, failWriter{}); err != nil {
		t.Fatal(err)
	}
	if res, err := r.Execute(); res != nil || err == nil || err.Error() != "sim: capture: disk full" {
		t.Fatalf("Execute: %v, %v", res, err)
	}
}

// TestSweep2NotStartedNames: a flow stopped before its start still names
// its ends (a shuffle its host count, not node 0).
func TestSweep2NotStartedNames(t *testing.T) {
	sc, err := parse(t, "topology: line:2\nscheme: learn\nduration: 1s\nworkloads:\n  - ping: {from: h2, to: h1, at: 10ms}\n  - shuffle: {hosts: [h1, h2], bytes: 1KB, at: 10ms}\n")
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
	if f := res.Flows[0]; f.Src != "h2" || f.Dst != "h1" || f.Error != "not started" {
		t.Errorf("ping %+v", f)
	}
	if f := res.Flows[1]; f.Src != "2 hosts" || f.Dst != "" || f.Kind != "shuffle" || f.Error != "not started" {
		t.Errorf("shuffle %+v", f)
	}
}

// TestSweep2CaptureCabledPortsOnly: a capture of a whole node records its
// cabled ports only.
func TestSweep2CaptureCabledPortsOnly(t *testing.T) {
	dir := t.TempDir()
	topoYAML := "name: gap\nnodes:\n  - {name: s1, kind: switch}\n  - {name: h1, kind: host}\n  - {name: h2, kind: host}\n" +
		"links:\n  - [s1:1, h1:1]\n  - [s1:3, h2:1]\n"
	if err := os.WriteFile(filepath.Join(dir, "gap.yaml"), []byte(topoYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "sc.yaml")
	if err := os.WriteFile(p, []byte("topology: gap.yaml\nscheme: learn\nduration: 1ms\ncaptures:\n  - {node: s1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := Load(p, Options{Registry: testRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	pd := filepath.Join(dir, "pcap")
	res, err := sc.Run(RunOptions{PcapDir: pd})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(pd, "s1-1.pcap"), filepath.Join(pd, "s1-3.pcap")}
	if strings.Join(res.Captures, " ") != strings.Join(want, " ") {
		t.Errorf("captures %v, want %v", res.Captures, want)
	}
}

// TestSweep2WriteText: the text report's columns at their edges: no
// throughput and no RTT samples print "-", rates at exactly 1 Gb/s and
// 1 kb/s take the larger unit, and a failure line; an aggregate without
// RTT samples or packets says so instead of printing zeros.
func TestSweep2WriteText(t *testing.T) {
	loss := 0.5
	res := &Result{Scenario: "x", Topology: "line:1", Scheme: "learn", Seed: 1, DurationS: 1, Events: 7, TraceHash: "00000000000000ab",
		Flows: []Flow{
			{ID: 1, Kind: "ping", Src: "h1", Dst: "h2", Done: true, RTT: &host.Summary{}, Loss: &loss},
			{ID: 2, Kind: "tcp", Src: "h1", Dst: "h2", ThroughputBps: 1e9},
			{ID: 3, Kind: "udp", Src: "h2", Dst: "h1", ThroughputBps: 1e3, Error: "oops"},
		},
		Aggregate: Aggregate{Flows: 3, Completed: 1, Failed: 1, Unfinished: 1, ThroughputBps: 1e9 + 1e3},
		Failures:  []FailureEvent{{AtS: 0.5, What: "link s1-h2", State: "down"}},
		Drops:     map[string]uint64{"queue_full": 2, "link_down": 1},
		Captures:  []string{"h1-1.pcap"},
	}
	var b strings.Builder
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `scenario x: learn on line:1, seed 1, 1s simulated, 7 events
  id  kind     src         dst         done       throughput     rtt p50     rtt p99     loss  note
   1  ping     h1          h2          true                -           -           -    50.0%
   2  tcp      h1          h2          false      1.000 Gb/s           -           -        -
   3  udp      h2          h1          false      1.000 kb/s           -           -        -  oops
aggregate: 3 flows, 1 completed, 1 failed, 1 unfinished; throughput 1.000 Gb/s (sum over flows); no rtt samples; no ping or udp packets
at 0.5s: link s1-h2 down
engine drops: link_down=1 queue_full=2
capture: h1-1.pcap
trace_hash 00000000000000ab
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestSweep2NodeFailureAndNoLoss: a node failure is reported as "node
// NAME"; with no ping or udp packet sent, the aggregate loss is 0, not
// NaN (which --json could not encode).
func TestSweep2NodeFailureAndNoLoss(t *testing.T) {
	_, res := sweepRun(t, `
topology: line:1
scheme: learn
duration: 100ms
workloads:
  - tcp: {from: h1, to: h2, bytes: 10KB}
failures:
  - {at: 50ms, node: s1, down}
`, RunOptions{})
	if len(res.Failures) != 1 || res.Failures[0].What != "node s1" || res.Failures[0].State != "down" {
		t.Errorf("failures %+v", res.Failures)
	}
	if a := res.Aggregate; a.Sent != 0 || a.Loss != 0 {
		t.Errorf("aggregate %+v, want no packets and loss 0", a)
	}
	if _, err := json.Marshal(res); err != nil {
		t.Errorf("json: %v", err)
	}
}
