package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const ringScenario = `
topology: ring:3
scheme: stp
params: {forward_delay: 4s, max_age: 6s, hello: 1s}
duration: 20s
workloads:
  - ping: {from: h1, to: h6, count: 5, interval: 500ms, at: 9s}
  - tcp: {from: h2, to: h5, bytes: 1MB, at: 10s}
failures:
  - {at: 12s, node: s3, down}
`

func TestSimCommand(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "ring.yaml", ringScenario)
	code, out, errs := runCLI(t, "sim", p, "--json", "--pcap", filepath.Join(dir, "caps"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res struct {
		TraceHash string `json:"trace_hash"`
		Events    uint64 `json:"events"`
		Flows     []struct {
			Kind          string   `json:"kind"`
			Done          bool     `json:"done"`
			Loss          *float64 `json:"loss"`
			ThroughputBps float64  `json:"throughput_bps"`
		} `json:"flows"`
		Captures []string `json:"captures"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	if len(res.TraceHash) != 16 || res.Events == 0 || len(res.Flows) != 2 || len(res.Captures) != 6 {
		t.Fatalf("result %+v", res)
	}
	if !res.Flows[0].Done || *res.Flows[0].Loss != 0 || !res.Flows[1].Done || res.Flows[1].ThroughputBps < 1e8 {
		t.Errorf("flows %+v", res.Flows)
	}
	// Text output carries the same hash; --seed changes the run.
	code, out, _ = runCLI(t, "sim", p)
	if code != 0 || !strings.Contains(out, "trace_hash "+res.TraceHash) || !strings.Contains(out, "aggregate:") {
		t.Errorf("text output (exit %d):\n%s", code, out)
	}
	code, _, errs = runCLI(t, "sim", p, "--log", "debug")
	if code != 0 || !strings.Contains(errs, " t=") || strings.Contains(errs, "time=") {
		t.Errorf("--log debug: exit %d, no virtual-time stamps in %q", code, errs[:min(len(errs), 300)])
	}
	code, out, _ = runCLI(t, "sim", p, "--seed", "99", "--trace", "headers")
	if code != 0 || strings.Contains(out, res.TraceHash) {
		t.Errorf("--seed 99 --trace headers gave the same hash or failed (exit %d)", code)
	}
}

// The same scenario in another process gives the same trace_hash.
func TestSimDeterministicAcrossProcesses(t *testing.T) {
	if p := os.Getenv("EF_SIM_HELPER"); p != "" {
		code := run([]string{"sim", "--json", p}, os.Stdout, os.Stderr)
		os.Exit(code)
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	p := writeFile(t, dir, "ring.yaml", ringScenario)
	hash := func() string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSimDeterministicAcrossProcesses$")
		cmd.Env = append(os.Environ(), "EF_SIM_HELPER="+p)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("child: %v", err)
		}
		var res struct {
			TraceHash string `json:"trace_hash"`
		}
		if err := json.Unmarshal(out, &res); err != nil || res.TraceHash == "" {
			t.Fatalf("child output %q: %v", out, err)
		}
		return res.TraceHash
	}
	a, b := hash(), hash()
	_, out, _ := runCLI(t, "sim", p, "--json")
	if a != b || !strings.Contains(out, `"trace_hash": "`+a+`"`) {
		t.Fatalf("trace_hash differs across processes: %s %s, in-process %s", a, b, out[:min(len(out), 400)])
	}
}

func TestSimBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.yaml", ringScenario)
	// A directory where a capture file goes: refused before the run (it
	// failed after it, exit 1).
	capDir := filepath.Join(dir, "caps2")
	if err := os.MkdirAll(filepath.Join(capDir, "h1-1.pcap"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no args", []string{"sim"}, "takes 1 argument"},
		{"two args", []string{"sim", good, good}, "takes 1 argument"},
		{"missing file", []string{"sim", filepath.Join(dir, "nope.yaml")}, "no such file"},
		{"bad yaml", []string{"sim", writeFile(t, dir, "bad.yaml", "topology: [\n")}, "bad scenario"},
		{"bad field", []string{"sim", writeFile(t, dir, "f.yaml", "topology: ring:3\nscheme: stp\nduration: 1s\nworkloads:\n  - ping: {from: h1, to: h99}\n")}, "f.yaml:5: workloads[0].ping.to: bad scenario: unknown node \"h99\""},
		{"bad scheme param", []string{"sim", writeFile(t, dir, "p.yaml", "topology: ring:3\nscheme: stp\nparams: {hello: soon}\nduration: 1s\n")}, "p.yaml:3: params.hello: bad scenario: scheme stp on ring:3: stp: param hello=\"soon\""},
		{"bad trace", []string{"sim", good, "--trace", "some"}, "--trace"},
		{"bad log level", []string{"sim", good, "--log", "loud"}, "--log"},
		{"bad seed", []string{"sim", good, "--seed", "-1"}, `--seed "-1": want a whole number, 0 or more (see 'edgefabric sim --help')`},
		{"bad flag", []string{"sim", good, "--colour"}, "unknown flag"},
		{"bad pcap dir", []string{"sim", good, "--pcap", filepath.Join(good, "caps")}, "--pcap: mkdir " + good},
		{"pcap file is a directory", []string{"sim", good, "--pcap", capDir}, "--pcap " + capDir + ": h1-1.pcap is a directory: remove it or give another directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runCLI(t, c.args...)
			if code != 2 || !strings.Contains(errs, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errs, c.want)
			}
		})
	}
}

// The shipped examples parse and run.
func TestSimExamples(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.yaml")
	if len(files) == 0 {
		t.Fatal("no examples")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if testing.Short() && strings.Contains(f, "fattree") {
				t.Skip("long")
			}
			code, out, errs := runCLI(t, "sim", f)
			if code != 0 || !strings.Contains(out, "trace_hash") {
				t.Fatalf("exit %d: %s%s", code, errs, out)
			}
		})
	}
}

// Errors that used to read "FILE: bad scenario: line N: ..." or name no
// line at all (a scheme parameter) name FILE:LINE like the others, with
// exit code 2; a name listed twice is refused.
func TestSimErrorsNameFileAndLine(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ file, body, want string }{
		{"typo.yaml", "topology: ring:3\nscheme: stp\nduration: 1s\n# c\nworkload:\n  - ping: {from: h1, to: h2}\n",
			"typo.yaml:5: bad scenario: field workload not found"},
		{"fail3.yaml", "topology: ring:3\nscheme: stp\nduration: 2s\nfailures:\n  # c\n  - {at: 1s, node: s1, down, up}\n",
			"fail3.yaml:6: bad scenario: failure: state given twice"},
		{"parambad.yaml", "topology: ring:3\nscheme: stp\nparams: {hello: fast}\nduration: 1s\n",
			`parambad.yaml:3: params.hello: bad scenario: scheme stp on ring:3: stp: param hello="fast": `},
		{"dup.yaml", "topology: ring:3\nscheme: stp\nduration: 1s\nworkloads:\n  - shuffle: {hosts: [h1, h1], bytes: 1MB}\n",
			"dup.yaml:5: workloads[0].shuffle.hosts: bad scenario: h1 listed twice"},
	} {
		p := writeFile(t, dir, c.file, c.body)
		code, out, errs := runCLI(t, "sim", p)
		if code != 2 || out != "" || !strings.HasPrefix(errs, "edgefabric: "+p[:len(p)-len(c.file)]+c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", c.file, code, errs, c.want)
		}
	}
}

// --pcap with nodes named like paths: every file lands in DIR, under an
// escaped name; an ordinary name is unchanged.
func TestSimPcapNodeNames(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "evil.yaml", "nodes:\n  - {name: s1, kind: switch}\n  - {name: \"../evil\", kind: host}\n  - {name: \"a/b\", kind: host}\n  - {name: h1, kind: host}\n"+
		"links:\n  - [\"../evil\", s1]\n  - [\"a/b\", s1]\n  - [h1, s1]\n")
	p := writeFile(t, dir, "sc.yaml", "topology: evil.yaml\nscheme: stp\nduration: 100ms\n")
	caps := filepath.Join(dir, "caps")
	code, out, errs := runCLI(t, "sim", p, "--pcap", caps)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, f := range []string{"..%2Fevil-1.pcap", "a%2Fb-1.pcap", "h1-1.pcap"} {
		if _, err := os.Stat(filepath.Join(caps, f)); err != nil || !strings.Contains(out, "capture: "+filepath.Join(caps, f)+"\n") {
			t.Errorf("%s: %v\n%s", f, err, out)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Errorf("%d entries in %s, want evil.yaml, sc.yaml and caps", len(ents), dir)
	}
}

// Size fields take units, as bytes does.
func TestSimSizeUnits(t *testing.T) {
	p := writeFile(t, t.TempDir(), "sizes.yaml", "topology: line:1\nscheme: stp\nparams: {forward_delay: 4s, max_age: 6s, hello: 1s}\nduration: 12s\nworkloads:\n"+
		"  - ping: {from: h1, to: h2, size: 56B, at: 9s}\n  - udp: {from: h1, to: h2, rate: 1Mbps, size: 1KB, duration: 1s, at: 9s}\n"+
		"  - tcp_rr: {from: h1, to: h2, request: 1KB, response: 2KiB, count: 3, at: 9s}\n")
	code, out, errs := runCLI(t, "sim", p, "--json")
	var res struct {
		Flows []struct {
			Done   bool            `json:"done"`
			Detail json.RawMessage `json:"detail"`
		} `json:"flows"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Flows) != 3 {
		t.Fatalf("exit %d: %s%s", code, errs, out)
	}
	for i, f := range res.Flows {
		if !f.Done {
			t.Errorf("flow %d not done: %s", i+1, f.Detail)
		}
	}
}

// TestSimLogDumbNet: DumbNet's elements log their control-plane events,
// so that --log shows when discovery ended and how a failure was handled
// (they logged nothing: a user had to decode tags from captures).
func TestSimLogDumbNet(t *testing.T) {
	p := filepath.Join(t.TempDir(), "dn.yaml")
	os.WriteFile(p, []byte("topology: fattree:4\nscheme: dumbnet\nduration: 2s\nfailures:\n  - {at: 1.5s, link: [s11, s1], down}\n"), 0o644)
	code, _, errs := runCLI(t, "sim", p, "--log", "info")
	for _, want := range []string{
		`msg="topology discovered" node=h1 switches=20 links=32 hosts=16`,
		`msg="controller found" node=h16`,
		`msg="port state changed" node=s11 port=3 up=false t=1.5s`,
		`msg="link event" node=h16 switch=`,
		`msg="link down confirmed" node=h1`,
		`msg="topology patch sent" node=h1 version=3`, // 1 discovery, 2 the check, 3 the patch
		`msg="topology patch applied" node=h16 version=3 links=1`,
	} {
		if code != 0 || !strings.Contains(errs, want) {
			t.Errorf("exit %d, no %q in\n%s", code, want, errs)
		}
	}
	if _, _, quiet := runCLI(t, "sim", p); quiet != "" {
		t.Errorf("without --log: %q", quiet)
	}
}
