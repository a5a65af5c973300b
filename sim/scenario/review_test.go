package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/host"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/topo"
)

// Tests for the defects of a user review: capture file names built from
// node names, duplicate hosts in a list, errors that did not name
// FILE:LINE, size fields without units, zeros printed for empty results.

// evilTopology has hosts whose names are paths ("/" and ".." are allowed
// in node names), one that looks like an escaped name, and a UTF-8 one.
const evilTopology = `nodes:
  - {name: s1, kind: switch}
  - {name: "../evil", kind: host}
  - {name: "a/b", kind: host}
  - {name: "a%2Fb", kind: host}
  - {name: "Zürich", kind: host}
  - {name: h1, kind: host}
links:
  - ["../evil", s1]
  - ["a/b", s1]
  - ["a%2Fb", s1]
  - ["Zürich", s1]
  - [h1, s1]
`

// TestPcapNamesStayInDir: a node named "../evil" used to make --pcap write
// DIR/../evil-1.pcap, and one named "a/b" made the run fail ("open
// DIR/a/b-1.pcap: no such file or directory"). Every capture is now a
// file directly in DIR, ordinary names unchanged, no two alike.
func TestPcapNamesStayInDir(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "evil.yaml"), []byte(evilTopology), 0o644); err != nil {
		t.Fatal(err)
	}
	scPath := filepath.Join(root, "sc.yaml")
	y := "topology: evil.yaml\nscheme: learn\nduration: 10ms\nworkloads:\n  - ping: {from: \"../evil\", to: \"a/b\"}\n"
	if err := os.WriteFile(scPath, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := Load(scPath, Options{Registry: testRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "caps")
	res, err := sc.Run(RunOptions{PcapDir: dir})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	want := []string{"..%2Fevil-1.pcap", "a%2Fb-1.pcap", "a%252Fb-1.pcap", "Z%C3%BCrich-1.pcap", "h1-1.pcap"}
	var got []string
	for _, c := range res.Captures {
		if filepath.Dir(c) != dir {
			t.Errorf("capture %s is not in %s", c, dir)
		}
		got = append(got, filepath.Base(c))
	}
	if !slices.Equal(got, want) {
		t.Errorf("captures %q, want %q", got, want)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != len(want) {
		t.Errorf("%d files in %s, want %d", len(ents), dir, len(want))
	}
	ents, _ = os.ReadDir(root)
	for _, e := range ents {
		if e.Name() != "evil.yaml" && e.Name() != "sc.yaml" && e.Name() != "caps" {
			t.Errorf("%s written outside the capture directory", e.Name())
		}
	}
	// The ping crossed, so the escaped files are real captures.
	if st, err := os.Stat(filepath.Join(dir, "a%2Fb-1.pcap")); err != nil || st.Size() <= 24 {
		t.Errorf("a%%2Fb-1.pcap: %v, %v; want frames after the header", st, err)
	}
}

// TestPcapNameLong: a name too long for a file name keeps its first 180
// escaped bytes, never cut inside an escape, and ends in %n<id>.
func TestPcapNameLong(t *testing.T) {
	for _, c := range []struct {
		name, want string
	}{
		{"h1", "h1"},
		{".", "."},
		{"..", ".."},
		{"a b:c", "a%20b%3Ac"},
		{strings.Repeat("x", 200), strings.Repeat("x", 200)},
		{strings.Repeat("x", 201), strings.Repeat("x", 180) + "%n7"},
		// 60 escapes are 180 bytes: the 61st would pass.
		{strings.Repeat("/", 70), strings.Repeat("%2F", 60) + "%n7"},
		{strings.Repeat("x", 178) + "/" + strings.Repeat("y", 30), strings.Repeat("x", 178) + "%n7"},
	} {
		if got := pcapNodeName(c.name, 7); got != c.want {
			t.Errorf("pcapNodeName(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	g, err := topo.Resolve("line:1", 1)
	if err != nil {
		t.Fatal(err)
	}
	h1, _ := g.Lookup("h1")
	if got := PcapName(g, h1, 1); got != "h1-1.pcap" {
		t.Errorf("PcapName(h1, 1) = %q", got)
	}
}

// TestHostListedTwice: a host named twice in one list used to be taken
// twice (a two-host shuffle of h1 alone, two identical pings); it is
// refused where the second one is.
func TestHostListedTwice(t *testing.T) {
	const head = "topology: line:3\nscheme: learn\nduration: 1s\n"
	exactParseErrors(t, []parseErrorCase{
		{"shuffle", head + "workloads:\n  - shuffle: {hosts: [h1, h1], bytes: 1MB}\n", "test.yaml:5: workloads[0].shuffle.hosts: bad scenario: h1 listed twice"},
		{"ping from", head + "workloads:\n  - ping: {from: [h1, h1], to: h2}\n", "test.yaml:5: workloads[0].ping.from: bad scenario: h1 listed twice"},
		{"udp to", head + "workloads:\n  - udp: {from: h1, to: [h2, h3, h2], rate: 1Mbps}\n", "test.yaml:5: workloads[0].udp.to: bad scenario: h2 listed twice"},
		{"block style", head + "workloads:\n  - tcp_rr:\n      to: h1\n      from:\n        - h2\n        - h3\n        - h2\n", "test.yaml:10: workloads[0].tcp_rr.from: bad scenario: h2 listed twice"},
		{"through an alias", head + "workloads:\n  - ping: {from: [&a h2, h3], to: h1}\n  - ping: {from: [*a, h2], to: h1}\n", "test.yaml:6: workloads[1].ping.from: bad scenario: h2 listed twice"},
	})
	// The same host in from and to is not a duplicate: pairs with itself
	// are skipped.
	sc, err := parse(t, head+"workloads:\n  - ping: {from: [h1, h2], to: [h1, h2]}\n")
	if err != nil || len(sc.Workloads) != 2 {
		t.Errorf("from and to sharing hosts: %v", err)
	}
}

// TestRawErrorsNameFileAndLine: errors of the raw layer and of yaml read
// FILE:LINE: bad scenario: MESSAGE like every other, not "FILE: bad
// scenario: line N: MESSAGE".
func TestRawErrorsNameFileAndLine(t *testing.T) {
	const head = "topology: ring:3\nscheme: learn\nduration: 2s\n"
	exactParseErrors(t, []parseErrorCase{
		{"unknown top-level field", head + "# a comment\nworkload:\n  - ping: {from: h1, to: h2}\n", "test.yaml:5: bad scenario: field workload not found"},
		{"state given twice", head + "failures:\n  # c\n  - {at: 1s, node: s1, down, up}\n", "test.yaml:6: bad scenario: failure: state given twice"},
		{"unknown link setting", head + "links: {colour: 1}\n", "test.yaml:4: bad scenario: field colour not found"},
		{"first of two yaml errors", head + "links: {colour: 1}\ntiming: 5\n", "test.yaml:4: bad scenario: field colour not found"},
		{"syntax", head + "workloads: [\n", "test.yaml:4: bad scenario: did not find expected node content"},
	})
	_, err := parse(t, head+"workload: []\n")
	if !errors.Is(err, ErrScenario) {
		t.Errorf("%v does not wrap ErrScenario", err)
	}
}

// paramRegistry has a scheme that takes parameters: hello, a
// duration, checked first; abad, always refused; and a and b, which it
// refuses together.
func paramRegistry() *scheme.Registry {
	r := testRegistry()
	if err := r.Register(scheme.Scheme{Name: "params", New: func(g *topo.Graph, o scheme.Options) (scheme.Fabric, error) {
		if v, ok := o.Params["hello"]; ok {
			if _, err := ParseTime(v); err != nil {
				return nil, fmt.Errorf("params: param hello=%q: want a duration", v)
			}
		}
		if v := o.Params["abad"]; v != "" {
			return nil, fmt.Errorf("params: param abad=%q: refused", v)
		}
		if o.Params["fd"] != "" && o.Params["max"] == "" {
			return nil, fmt.Errorf("params: fd without max")
		}
		if o.Params["a"] != "" && o.Params["b"] != "" {
			return nil, fmt.Errorf("params: a and b together")
		}
		return &learnFabric{g}, nil
	}}); err != nil {
		panic(err)
	}
	return r
}

// TestSchemeParamErrors: a scheme's refusal of a parameter used to name
// no line ("FILE: scheme S on T: bad scenario: ..."); it names the
// parameter's line and params.NAME, or the first parameter's line for a
// fault of several together.
func TestSchemeParamErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"topology: ring:3\nscheme: params\nparams: {hello: fast}\nduration: 1s\n",
			`test.yaml:3: params.hello: bad scenario: scheme params on ring:3: params: param hello="fast": want a duration`},
		{"topology: ring:3\nscheme: params\nduration: 1s\nparams:\n  a: x\n  hello: 1s\n  zz: 3\n  bad: 1\n  hello2: 2\n",
			""},
		{"topology: ring:3\nscheme: params\nduration: 1s\nparams:\n  zz: 1\n  hello: soon\n",
			`test.yaml:6: params.hello: bad scenario: scheme params on ring:3: params: param hello="soon": want a duration`},
		// Both refused: the message is abad's own, the one named, not
		// hello's, which the scheme finds first with both.
		{"topology: ring:3\nscheme: params\nduration: 1s\nparams:\n  hello: soon\n  abad: 1\n",
			`test.yaml:6: params.abad: bad scenario: scheme params on ring:3: params: param abad="1": refused`},
		{"topology: ring:3\nscheme: params\nduration: 1s\nparams:\n  b: 2\n  a: 1\n",
			"test.yaml:5: params: bad scenario: scheme params on ring:3: params: a and b together"},
		// fd is refused alone but fine with max; hello is the fault (as
		// stp's {hello: 0s, max_age: 6s, forward_delay: 4s}, which blamed
		// forward_delay, refused alone with the default max age).
		{"topology: ring:3\nscheme: params\nduration: 1s\nparams:\n  fd: 1\n  max: 1\n  hello: soon\n",
			`test.yaml:7: params.hello: bad scenario: scheme params on ring:3: params: param hello="soon": want a duration`},
		{"topology: ring:3\nscheme: params\nduration: 1s\nparams:\n  fd: 1\n",
			`test.yaml:5: params.fd: bad scenario: scheme params on ring:3: params: fd without max`},
	} {
		sc, err := Parse([]byte(c.yaml), "test.yaml", Options{Registry: paramRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		_, err = sc.Setup(RunOptions{})
		if c.want == "" {
			if err != nil {
				t.Errorf("%q: %v", c.yaml, err)
			}
			continue
		}
		if err == nil || err.Error() != c.want || !errors.Is(err, ErrScenario) {
			t.Errorf("error %v\nwant %s", err, c.want)
		}
	}
}

// TestSizeFieldsTakeUnits: size, request and response take what bytes
// takes (docs/sim.md lists sizes with units); they used to be refused
// with "is not an integer". Their ranges are kept.
func TestSizeFieldsTakeUnits(t *testing.T) {
	sc, err := parse(t, "topology: line:1\nscheme: learn\nduration: 1s\nworkloads:\n"+
		"  - ping: {from: h1, to: h2, size: 56B}\n"+
		"  - udp: {from: h1, to: h2, rate: 1Mbps, size: 1KB}\n"+
		"  - tcp_rr: {from: h1, to: h2, request: 1KB, response: 2KiB}\n"+
		"  - ping: {from: h1, to: h2, size: 1000}\n")
	if err != nil {
		t.Fatal(err)
	}
	w := sc.Workloads
	if w[0].Size != 56 || w[1].Size != 1000 || w[2].Request != 1000 || w[2].Response != 2048 || w[3].Size != 1000 {
		t.Errorf("sizes %d %d %d/%d %d", w[0].Size, w[1].Size, w[2].Request, w[2].Response, w[3].Size)
	}
	const head = "topology: line:1\nscheme: learn\nduration: 1s\n"
	exactParseErrors(t, []parseErrorCase{
		{"ping size past the MTU", head + "workloads:\n  - ping: {from: h1, to: h2, size: 1.5KB}\n", `test.yaml:5: workloads[0].ping.size: bad scenario: "1.5KB" must be between 1 and 1472 bytes`},
		{"udp size unit", head + "workloads:\n  - udp: {from: h1, to: h2, rate: 1Mbps, size: 1PB}\n", `test.yaml:5: workloads[0].udp.size: bad scenario: bad value: "1PB": unknown size unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)`},
		{"response past 16 MiB", head + "workloads:\n  - tcp_rr: {from: h1, to: h2, response: 17MiB}\n", `test.yaml:5: workloads[0].tcp_rr.response: bad scenario: "17MiB" must be between 1 and 16777216 bytes`},
		{"request negative", head + "workloads:\n  - tcp_rr: {from: h1, to: h2, request: -1KB}\n", `test.yaml:5: workloads[0].tcp_rr.request: bad scenario: bad value: "-1KB" is negative`},
	})
	// Every unit ParseTime takes is in its message.
	if v, err := ParseTime("2min"); err != nil || v != 120*element.Second {
		t.Errorf("ParseTime(2min) = %v, %v", v, err)
	}
	if _, err := ParseTime("1h"); err == nil || err.Error() != `bad value: "1h": unknown time unit "h" (s, ms, us, µs, ns, ps, m, min)` {
		t.Errorf("ParseTime(1h): %v", err)
	}
}

// TestEmptyResults: a ping whose every probe is lost is completed (its
// loss says how it went), a TCP flow still trying to connect at the end
// is unfinished, neither failed; the JSON has every documented flow
// field, zero or not, and the text says there is nothing rather than
// print zeros.
func TestEmptyResults(t *testing.T) {
	_, res := sweepRun(t, `
topology: line:1
scheme: learn
duration: 2s
workloads:
  - ping: {from: h1, to: h2, count: 2, interval: 100ms, at: 1ms}
  - tcp: {from: h1, to: h2, bytes: 1KB, at: 1ms}
failures:
  - {at: 0s, link: [h1, s1], down}
`, RunOptions{})
	ping, tcp := res.Flows[0], res.Flows[1]
	if !ping.Done || ping.Error != "" || *ping.Loss != 1 || tcp.Done || tcp.Error != "" {
		t.Fatalf("ping %+v, tcp %+v", ping, tcp)
	}
	if a := res.Aggregate; a.Flows != 2 || a.Completed != 1 || a.Failed != 0 || a.Unfinished != 1 {
		t.Errorf("aggregate %+v, want 1 completed, 0 failed, 1 unfinished", a)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Flows     []map[string]json.RawMessage `json:"flows"`
		Aggregate map[string]json.RawMessage   `json:"aggregate"`
		Top       map[string]json.RawMessage
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &out.Top); err != nil {
		t.Fatal(err)
	}
	for i, want := range []map[string]string{
		{"dst": `"h2"`, "throughput_bps": "0", "sent": "2", "received": "0", "loss": "1", "error": `""`},
		{"dst": `"h2"`, "throughput_bps": "0", "sent": "0", "received": "0", "loss": "null", "rtt": "null", "error": `""`},
	} {
		for _, k := range []string{"id", "kind", "src", "dst", "start_s", "done", "throughput_bps", "sent", "received", "loss", "rtt", "error", "detail"} {
			if _, ok := out.Flows[i][k]; !ok {
				t.Errorf("flow %d: no %s in the JSON", i+1, k)
			}
		}
		for k, v := range want {
			if got := string(out.Flows[i][k]); got != v {
				t.Errorf("flow %d: %s = %s, want %s", i+1, k, got, v)
			}
		}
	}
	if string(out.Aggregate["unfinished"]) != "1" {
		t.Errorf("aggregate %s", b)
	}
	for k, v := range map[string]string{"ports_with_drops": "[]", "captures": "[]", "element_counters": "", "failures": "", "port_states": "[]"} {
		got, ok := out.Top[k]
		if !ok || v != "" && string(got) != v {
			t.Errorf("%s = %s (present %v), want %s", k, got, ok, v)
		}
	}
	var text strings.Builder
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if want := "aggregate: 2 flows, 1 completed, 0 failed, 1 unfinished; throughput 0 b/s (sum over flows); no rtt samples; loss 100.00% (2/2)\n"; !strings.Contains(text.String(), want) {
		t.Errorf("text:\n%s\nwant the line %s", text.String(), want)
	}
	// Only pings: no data flow to sum.
	_, res = sweepRun(t, "topology: line:1\nscheme: learn\nduration: 1s\nworkloads:\n  - tcp_rr: {from: h1, to: h2, count: 2}\n", RunOptions{})
	text.Reset()
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "aggregate: 1 flows, 1 completed, 0 failed, 0 unfinished; no data flow; rtt p50 ") ||
		!strings.Contains(text.String(), " (2 samples); no ping or udp packets\n") {
		t.Errorf("text:\n%s", text.String())
	}
}

// TestSmallFlowBesideBulk: a tcp_rr whose server also sends a bulk TCP
// flow completes: its responses wait behind the NIC backlog, as pings do.
// It used to stall after 5 transactions: the bulk connection, woken first
// when the queue drained, filled it again before the small one's turn,
// every time (host.txDrained).
func TestSmallFlowBesideBulk(t *testing.T) {
	res := run(t, `
topology: line:1
scheme: learn
duration: 1s
workloads:
  - tcp: {from: h2, to: h1, bytes: 1GB}
  - tcp_rr: {from: h1, to: h2, count: 100}
`, RunOptions{})
	rr := res.Flows[1].Detail.(host.RRResult)
	if !res.Flows[1].Done || rr.Transactions != 100 {
		t.Fatalf("tcp_rr beside a bulk flow: done %v, %d of 100 transactions", res.Flows[1].Done, rr.Transactions)
	}
	// A response parks while the backlog is over 128 KiB, until it is
	// down to half, then goes in behind what the bulk flow, woken first,
	// adds: at most half the queue to drain, then a full one and a
	// segment, 1.5 x 128 KiB at 1 Gb/s = 1.57 ms.
	if max := rr.RTT.MaxUs; max > 1.7e3 {
		t.Errorf("rtt max %v us", max)
	}
}

// TestNoDuplicateAckAfterResponse: a request answered at once carries
// the ACK of the request in its response; no pure ACK follows it (one
// did, a duplicate, after every request and every response: the sender
// counted them as duplicate ACKs).
func TestNoDuplicateAckAfterResponse(t *testing.T) {
	res := run(t, `
topology: line:1
scheme: learn
duration: 1s
workloads:
  - tcp_rr: {from: h1, to: h2, count: 50, request: 100, response: 2000}
`, RunOptions{})
	if rr := res.Flows[0].Detail.(host.RRResult); rr.Transactions != 50 {
		t.Fatalf("%d of 50 transactions", rr.Transactions)
	}
	for _, h := range []string{"h1", "h2"} {
		if n := res.Elements[h]["tcp_dupack_rx"]; n != 0 {
			t.Errorf("%s received %d duplicate ACKs", h, n)
		}
	}
}

// TestEmptyValuesRefused: a value left empty (null) is refused at its own
// line and field. yaml skips our decoders for nulls: "duration: ~" was
// reported as missing at line 1, "params: {hello: ~}" without a line, and
// a null list entry ("- " or [~]) was dropped and the run went on.
// Top-level sections left empty mean none, and a failure's bare down or up
// is a null on purpose: both still pass.
func TestEmptyValuesRefused(t *testing.T) {
	const head = "topology: ring:3\nscheme: learn\nduration: 1s\n"
	exactParseErrors(t, []parseErrorCase{
		{"duration", "topology: ring:3\nscheme: learn\nduration: ~\n", "test.yaml:3: duration: bad scenario: no value"},
		{"param", "topology: ring:3\nscheme: learn\nparams: {hello: ~}\nduration: 1s\n", "test.yaml:3: params.hello: bad scenario: no value"},
		{"null workload", head + "workloads: [~]\n", `test.yaml:4: workloads[0]: bad scenario: empty entry (remove the "-", or give the entry)`},
		{"empty workload", head + "workloads:\n  - ping: {from: h1, to: h2}\n  -\n", `test.yaml:6: workloads[1]: bad scenario: empty entry (remove the "-", or give the entry)`},
		{"null failure", head + "failures:\n  - ~\n", `test.yaml:5: failures[0]: bad scenario: empty entry (remove the "-", or give the entry)`},
		{"null timing", head + "timing: [~]\n", `test.yaml:4: timing[0]: bad scenario: empty entry (remove the "-", or give the entry)`},
		{"null capture", head + "captures: [~]\n", `test.yaml:4: captures[0]: bad scenario: empty entry (remove the "-", or give the entry)`},
		{"null link", head + "link: [~]\n", `test.yaml:4: link[0]: bad scenario: empty entry (remove the "-", or give the entry)`},
		{"null workload field", head + "workloads:\n  - ping:\n      from: h1\n      to:\n", "test.yaml:7: workloads[0].ping.to: bad scenario: no value"},
		{"null name in a list", head + "workloads:\n  - ping: {from: [h1, ~], to: h2}\n", `test.yaml:5: workloads[0].ping.from[1]: bad scenario: empty entry (remove the "-", or give the entry)`},
		{"null links field", head + "links: {rate: ~}\n", "test.yaml:4: links.rate: bad scenario: no value"},
		{"null down elsewhere", head + "workloads:\n  - ping: {from: h1, to: h2, down}\n", `test.yaml:5: bad scenario: unknown field "down"`},
	})
	sc, err := parse(t, head+"params:\nlinks:\nlink:\ntiming:\nworkloads:\ncaptures:\nfailures:\n  - {at: 100ms, link: [s1, s2], down}\n  - at: 200ms\n    link: [s1, s2]\n    up:\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Failures) != 2 {
		t.Errorf("%d failures, want 2", len(sc.Failures))
	}
}

// TestOverridesSayWhat: a link override that sets nothing is refused, as
// a timing entry that sets nothing is, and a timing entry naming a node
// twice as a workload's host list is; both were accepted.
func TestOverridesSayWhat(t *testing.T) {
	const head = "topology: ring:3\nscheme: learn\nduration: 1s\n"
	exactParseErrors(t, []parseErrorCase{
		{"empty link override", head + "link:\n  - {ends: [s1, s2]}\n", "test.yaml:5: link[0]: bad scenario: say what to set: rate, delay, queue, loss or corrupt"},
		{"timing node twice", head + "timing:\n  - nodes: [s1, s2, s1]\n    latency: 1us\n", "test.yaml:5: timing[0].nodes: bad scenario: s1 listed twice"},
	})
	if _, err := parse(t, head+"link:\n  - {ends: [s1, s2], delay: 5us}\ntiming:\n  - {nodes: [all], latency: 1us}\n"); err != nil {
		t.Fatal(err)
	}
}

// TestTerabyteSizes: the queue limit the error names, 1 TiB, can be
// written as it is named (it had to be 1024GiB), and one past is refused.
func TestTerabyteSizes(t *testing.T) {
	for s, want := range map[string]int64{"1TiB": 1 << 40, "2TB": 2e12, "0.5t": 5e11} {
		if v, err := ParseSize(s); err != nil || v != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, v, err, want)
		}
	}
	const head = "topology: ring:3\nscheme: learn\nduration: 1s\n"
	if _, err := parse(t, head+"links: {queue: 1TiB}\n"); err != nil {
		t.Error(err)
	}
	exactParseErrors(t, []parseErrorCase{
		{"queue past 1 TiB", head + "links: {queue: 1.1TB}\n", `test.yaml:4: links.queue: bad scenario: "1.1TB" must be between 64 bytes and 1 TiB`},
	})
}

// TestUDPDetailKeys: a UDP flow that received nothing still has every key
// of its detail, mean_delay_us included (it was left out).
func TestUDPDetailKeys(t *testing.T) {
	res := run(t, "topology: line:2\nscheme: learn\nduration: 1s\nfailures:\n  - {at: 0s, node: s2, down}\nworkloads:\n  - udp: {from: h1, to: h3, rate: 1Mbps, duration: 100ms}\n", RunOptions{})
	b, err := json.Marshal(res.Flows[0].Detail)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"mean_delay_us":0`) || !strings.Contains(string(b), `"received":0`) {
		t.Errorf("detail %s", b)
	}
}

// TestUDPInFlightAtEnd: a udp flow running to the end of the run on a
// lossless network loses nothing; the datagrams on the wire at the end are
// in flight. They were counted as lost (10 of 42,460 in the review's stp
// run over 100 us links).
func TestUDPInFlightAtEnd(t *testing.T) {
	res := run(t, "topology: line:2\nscheme: learn\nduration: 20ms\nlinks: {delay: 100us}\nworkloads:\n  - udp: {from: h1, to: h2, rate: 500Mbps, at: 10ms}\n", RunOptions{})
	f := res.Flows[0]
	if f.Loss == nil || *f.Loss != 0 || f.InFlight == 0 || f.Received+f.InFlight != f.Sent || res.Aggregate.Loss != 0 || res.Aggregate.InFlight != f.InFlight {
		t.Fatalf("flow sent %d received %d in flight %d loss %v; aggregate %+v", f.Sent, f.Received, f.InFlight, f.Loss, res.Aggregate)
	}
	var text strings.Builder
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("loss 0.00%% (0/%d), %d in flight\n", f.Sent-f.InFlight, f.InFlight); !strings.Contains(text.String(), want) {
		t.Errorf("text %s\nwant %q", text.String(), want)
	}
}

// TestPingInFlightAtEnd: a ping whose last request is on the wire when the
// run ends loses nothing; that request is in flight. It counted as lost
// (33 % for three requests, the run ending 3 us after the last).
func TestPingInFlightAtEnd(t *testing.T) {
	res := run(t, "topology: line:2\nscheme: learn\nduration: 23ms\nlinks: {delay: 100us}\nworkloads:\n  - ping: {from: h1, to: h2, count: 3, interval: 10ms, at: 2997us}\n", RunOptions{})
	f := res.Flows[0]
	if f.Done || f.Sent != 3 || f.Received != 2 || f.InFlight != 1 || f.Loss == nil || *f.Loss != 0 || res.Aggregate.Loss != 0 || res.Aggregate.InFlight != 1 {
		t.Fatalf("flow done %v sent %d received %d in flight %d loss %v; aggregate %+v", f.Done, f.Sent, f.Received, f.InFlight, f.Loss, res.Aggregate)
	}
	var text strings.Builder
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if want := "loss 0.00% (0/2), 1 in flight\n"; !strings.Contains(text.String(), want) {
		t.Errorf("text %s\nwant %q", text.String(), want)
	}
}

// TestUDPSmallPayloadLossNull: payloads under 20 bytes carry no sequence
// number: the flow's loss is null and stays out of the aggregate, beside a
// ping that lost nothing. It was 100 %.
func TestUDPSmallPayloadLossNull(t *testing.T) {
	res := run(t, "topology: line:2\nscheme: learn\nduration: 20ms\nworkloads:\n  - udp: {from: h1, to: h2, rate: 1Mbps, size: 10, duration: 5ms}\n  - ping: {from: h1, to: h2}\n", RunOptions{})
	if f := res.Flows[0]; f.Loss != nil || f.Sent == 0 || res.Aggregate.Sent != 1 || res.Aggregate.Loss != 0 {
		t.Fatalf("flow %+v, aggregate %+v", f, res.Aggregate)
	}
	b, err := json.Marshal(res.Flows[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"loss":null`) {
		t.Errorf("json %s", b)
	}
}

// TestUDPToPort68: a udp workload to port 68 of a host without a DHCP
// client is delivered like any other; it was taken for DHCP and lost.
func TestUDPToPort68(t *testing.T) {
	res := run(t, "topology: line:2\nscheme: learn\nduration: 20ms\nworkloads:\n  - udp: {from: h1, to: h2, rate: 1Mbps, size: 100, port: 68, duration: 5ms}\n", RunOptions{})
	if f := res.Flows[0]; f.Loss == nil || *f.Loss != 0 || f.Received != f.Sent || f.Sent == 0 {
		t.Fatalf("flow %+v", f)
	}
}

// TestSizeRefusesBits: a size unit ending in a lowercase b is bits, as in
// rates: `bytes: 10Mb` and `queue: 512Kb` were read as megabytes and
// kilobytes. Rates refuse the opposite mix-up (GB/s).
func TestSizeRefusesBits(t *testing.T) {
	for _, s := range []string{"10Mb", "512Kb", "1b", "2kb", "1Gb", "1Tb", "64Kib", "8Mbit", "8Mbits"} {
		if _, err := ParseSize(s); !errors.Is(err, ErrBadUnit) || !strings.Contains(err.Error(), "sizes are in bytes") {
			t.Errorf("ParseSize(%q): %v", s, err)
		}
	}
	const head = "topology: line:2\nscheme: learn\nduration: 1s\n"
	exactParseErrors(t, []parseErrorCase{
		{"tcp bytes in bits", head + "workloads:\n  - tcp: {from: h1, to: h2, bytes: 10Mb}\n", `test.yaml:5: workloads[0].tcp.bytes: bad scenario: bad value: "10Mb": sizes are in bytes (B, KB, MB, KiB, MiB); "Mb" reads as bits`},
		{"queue in bits", head + "links: {queue: 512Kb}\n", `test.yaml:4: links.queue: bad scenario: bad value: "512Kb": sizes are in bytes (B, KB, MB, KiB, MiB); "Kb" reads as bits`},
	})
}
