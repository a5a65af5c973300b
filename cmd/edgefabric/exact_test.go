package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/emu"
	"github.com/edgefabric/edgefabric/topo"
)

// table3Rows and table3QuickRows are the rows of Table 3 as the refusal
// of a --rows value that matches none lists them, without and with
// --quick; Table 2 has two more at the end.
const (
	table3Rows      = "testbed, FatTree(4), FatTree(8), FatTree(16), FatTree(48), HyperX(3), HyperX(4), HyperX(8), HyperX(16), CiscoDC(2,2), CiscoDC(3,2), CiscoDC(4,3), CiscoDC(8,8), BCube(8,2), BCube(48,2), BCube(8,4)"
	table3QuickRows = "testbed, FatTree(4), FatTree(8), FatTree(16), HyperX(3), HyperX(4), HyperX(8), CiscoDC(2,2), CiscoDC(3,2), CiscoDC(4,3), CiscoDC(8,8), BCube(8,2)"
)

// Tests from a mutation sweep of the CLI: each pins an outcome (an exit
// code, an exact message, a line of a report, a default) that a small
// change to the code left unnoticed.

// TestBadInputExact: bad input at the edges of every range, and
// errors cobra makes itself, exit 2 with exactly one line. The value at
// each range's edge is accepted: the next check (a later flag, the
// topology) is the one that refuses the run.
func TestBadInputExact(t *testing.T) {
	notSpec := "edgefabric: topo: \"nosuch:1\": bad topology spec: not a file and not a spec (known topologies: fattree, leafspine, hyperx, bcube, ciscodc, cube, torus, jellyfish, line, ring, dumbnet-fig1, dumbnet-testbed, spain-fig2, spain-testbed)\n"
	ncp0 := "edgefabric: --ncp-trials 0: must be 1 to 100000\n"
	for _, c := range []struct {
		args []string
		want string
	}{
		// cobra's own argument error, not wrapped by us
		{[]string{"completion", "bash", "x"}, "edgefabric: unknown command \"x\" for \"edgefabric completion bash\"\n"},
		{[]string{"topo", "export", "ring:3", "--format", "invalid"}, "edgefabric: --format: topo: bad value: format \"invalid\" (want yaml, json, clab, graphml or dot)\n"},
		{[]string{"plan", "spain", "line:2", "--trials", "10000", "--ncp-trials", "0"}, ncp0},
		{[]string{"plan", "spain", "line:2", "--fail-prob", "1", "--ncp-trials", "0"}, ncp0},
		{[]string{"plan", "spain", "line:2", "--fail-prob", "0", "--ncp-trials", "0"}, ncp0},
		{[]string{"plan", "spain", "line:2", "--fail-prob", "-0.001"}, "edgefabric: --fail-prob -0.001: must be a probability in [0,1]\n"},
		{[]string{"plan", "spain", "nosuch:1", "--ncp-trials", "100000"}, notSpec},
		{[]string{"plan", "spain", "nosuch:1", "--k", "α"}, notSpec},
		{[]string{"repro", "spain-table3", "--slow-trials", "10000", "--rows", "nosuchrow"}, "edgefabric: no row of spain-table3 matches --rows nosuchrow; its rows: " + table3Rows + "\n"},
		{[]string{"bench", "spain-plan", "--quick", "--rows", "fattree(48)"}, "edgefabric: no row of Table 3 matches --rows fattree(48) (--quick leaves out the slow rows); its rows: " + table3QuickRows + "\n"},
		// --quick where it would change nothing, and a row list whose
		// names have commas in them
		{[]string{"repro", "dumbnet-fig11", "--quick"}, "edgefabric: --quick: dumbnet-fig11 has no slow rows to leave out\n"},
		{[]string{"repro", "dumbnet-fig12", "--quick"}, "edgefabric: --quick: dumbnet-fig12 has no slow rows to leave out\n"},
		{[]string{"repro", "dumbnet-fig11", "--rows", "x"}, "edgefabric: no row of dumbnet-fig11 matches --rows x; its rows: notification, median host; notification, last host; patch, median host; patch, last host; outage, DumbNet; outage, 802.1D STP; failover: STP outage ÷ DumbNet outage; outage, RSTP; failover: RSTP outage ÷ DumbNet outage\n"},
	} {
		code, out, errOut := topoCLI(c.args...)
		if code != 2 || out != "" || errOut != c.want {
			t.Errorf("%v: exit %d, stdout %q, stderr\n got  %q\n want %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestTopoDefaults: --seed defaults to 1 and --format to yaml;
// "-o -" is standard output, not a file named "-".
func TestTopoDefaults(t *testing.T) {
	_, def, _ := topoCLI("topo", "export", "jellyfish:10,5,3", "--format", "json")
	_, one, _ := topoCLI("topo", "export", "jellyfish:10,5,3", "--format", "json", "--seed", "1")
	_, zero, _ := topoCLI("topo", "export", "jellyfish:10,5,3", "--format", "json", "--seed", "0")
	if def == "" || def != one || def == zero {
		t.Errorf("the default seed is not 1 (or seeds 0 and 1 draw the same graph)")
	}
	t.Chdir(t.TempDir())
	code, out, errOut := topoCLI("topo", "export", "ring:3", "-o", "-")
	_, yaml, _ := topoCLI("topo", "export", "ring:3", "--format", "yaml")
	if code != 0 || errOut != "" || out != yaml || !strings.HasPrefix(out, "# edgefabric topology, native format (docs/topology.md)\nname: ring:3\n") {
		t.Errorf("export -o - (exit %d, stderr %q):\n%s", code, errOut, out)
	}
	if _, err := os.Stat("-"); !os.IsNotExist(err) {
		t.Errorf("-o - wrote a file named -: %v", err)
	}
}

// TestTopoSummary: the human summary in every case it words
// differently: one hop, a disconnected fabric, bounds, relaying hosts.
func TestTopoSummary(t *testing.T) {
	base := topo.Summary{Name: "t", Switches: 2, Hosts: 4, FabricLinks: 1, HostLinks: 4, Diameter: 1, DiameterExact: true, DiameterUpper: 1, MaxDegree: 3, Connected: true, BisectionBps: 1e9,
		Rates: []topo.RateCount{{Bps: 10e9, Links: 1}, {Bps: 155e6, Links: 4}}, DelayMinNs: 0, DelayMaxNs: 16_090_453}
	one := "topology:     t\nswitches:     2\nhosts:        4\nfabric links: 1\nhost links:   4\ndiameter:     1 switch hop\nmax degree:   3\nbisection:    1 Gb/s (estimate, upper bound)\n" +
		"link rates:   1 x 10 Gb/s, 4 x 155 Mb/s\nlink delays:  0 ns to 16.09 ms\nconnected:    yes\n"
	split, bounds, relay := base, base, base
	split.Diameter, split.Connected = -1, false
	bounds.Diameter, bounds.DiameterUpper, bounds.DiameterExact = 5, 9, false
	relay.RelayHosts = 1
	for _, c := range []struct {
		s    topo.Summary
		want string
	}{
		{base, one},
		{split, strings.NewReplacer("1 switch hop", "infinite (the fabric is not connected)", "connected:    yes", "connected:    no").Replace(one)},
		{bounds, strings.Replace(one, "1 switch hop", "5 to 9 switch hops (bounds; --exact-diameter for the exact value)", 1)},
		{relay, strings.Replace(one, "hosts:        4\n", "hosts:        4 (1 relaying)\n", 1)},
	} {
		var b strings.Builder
		writeSummary(&b, c.s)
		if b.String() != c.want {
			t.Errorf("got\n%s\nwant\n%s", b.String(), c.want)
		}
	}
	for bps, want := range map[int64]string{0: "0 b/s", 999: "999 b/s", 1000: "1 kb/s", 1e6: "1 Mb/s", 1e9: "1 Gb/s", 25e8: "2.5 Gb/s", 1e12: "1 Tb/s", 13824e9: "13.824 Tb/s"} {
		if got := humanRate(bps); got != want {
			t.Errorf("humanRate(%d) = %q, want %q", bps, got, want)
		}
	}
}

// TestPlanSummary: the plan summary's counts (one pair, one
// trial), the default of 10 trials per packer, the line naming what --out
// wrote, and --vlans listing each link with the ports it joins.
func TestPlanSummary(t *testing.T) {
	code, out, errOut := topoCLI("plan", "spain", "line:2")
	if code != 0 || !strings.Contains(out, "\n  edge nodes        2 (1 pair), fabric links 1\n") || !strings.Contains(out, "\n  packing           parallel, 30 trials, best: trial 0 (tree-cover)\n") {
		t.Errorf("exit %d, stderr %q:\n%s", code, errOut, out)
	}
	dir := filepath.Join(t.TempDir(), "out")
	code, out, _ = topoCLI("plan", "spain", "line:2", "--serial", "--trials", "1", "--out", dir)
	if code != 0 || !strings.Contains(out, "\n  packing           serial, 1 trial, best: trial 0 (first-fit)\n") || !strings.HasSuffix(out, "\nwrote "+dir+"/{plan.json,switches.json,switches.txt,vreach.json}\n") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, out, _ = topoCLI("plan", "spain", "dumbnet-fig1", "--serial", "--trials", "1", "--vlans")
	g, _ := topo.Parse("dumbnet-fig1", 1)
	links := regexp.MustCompile(`(\w+):(\d+)-(\w+):(\d+)`).FindAllStringSubmatch(out, -1)
	if code != 0 || len(links) == 0 {
		t.Fatalf("exit %d, no VLAN links:\n%s", code, out)
	}
	for _, l := range links {
		a, _ := g.Lookup(l[1])
		if peer, ok := g.Peer(a, topo.Port(atoiT(t, l[2]))); !ok || g.Node(peer.Node).Name != l[3] || int(peer.Port) != atoiT(t, l[4]) {
			t.Errorf("--vlans lists %s, which is no link of dumbnet-fig1", l[0])
		}
	}
}

func atoiT(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReproJSONQuiet: --json prints only JSON, with no progress
// lines on stderr.
func TestReproJSONQuiet(t *testing.T) {
	code, out, errOut := topoCLI("repro", "spain-table3", "--rows", "fattree(4)", "--json")
	var v map[string]any
	if code != 0 || errOut != "" || json.Unmarshal([]byte(out), &v) != nil || v["name"] != "spain-table3" {
		t.Errorf("exit %d, stderr %q, stdout %.200q", code, errOut, out)
	}
}

// TestSimTraceHeaders: --trace headers hashes other bytes than
// the default full trace of the same run.
func TestSimTraceHeaders(t *testing.T) {
	p := writeFile(t, t.TempDir(), "ring.yaml", ringScenario)
	hash := func(args ...string) string {
		code, out, errOut := runCLI(t, append([]string{"sim", p, "--json"}, args...)...)
		var r struct {
			TraceHash string `json:"trace_hash"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.TraceHash == "" {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		return r.TraceHash
	}
	if full, headers := hash(), hash("--trace", "headers"); full == headers {
		t.Errorf("--trace headers gives the full trace's hash %s", full)
	}
}

// TestBenchText: the bench table, right-aligned, with the goal
// met at exactly 10 s and a failed row's status in the last column, and
// a child's first stderr line (or the fallback) as its failure.
func TestBenchText(t *testing.T) {
	rep := benchReport{Command: "edgefabric plan spain SPEC --trials 1", Goal: 10,
		Baseline: []benchRun{{Status: "ok", Wall: 1, PeakRSS: 100e6}, {Status: "ok", Wall: 3, PeakRSS: 300e6}},
		Rows: []benchRun{
			{Name: "FatTree(4)", Status: "ok", Wall: 10, CPU: 12.5, PeakRSS: 50e6, Paths: 56, VLANs: 4, PathsSec: 0.25, PackSec: 1.5, PruneSec: 0, Ratio: 5, RSSRatio: 0.25},
			{Name: "BCube(8,4)", Status: "timeout", Wall: 900, CPU: 1800, PeakRSS: 2e9},
		}}
	var b strings.Builder
	writeBench(&b, &rep)
	want := "SPAIN planner benchmark: edgefabric plan spain SPEC --trials 1, one process per row\n" +
		"baseline: fattree:16 plan, before and after the rows: 1.00 s and 3.00 s wall, 100 and 300 MB peak RSS\n\n" +
		"topology    paths  VLANs  wall s   CPU s  peak RSS MB  paths s  pack s  prune s  × baseline  RSS × baseline   ≤ 10 s\n" +
		"FatTree(4)     56      4   10.00   12.50           50     0.25    1.50     0.00         5.0             0.2      yes\n" +
		"BCube(8,4)                 900.0  1800.0         2000                                                        timeout\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	for _, c := range [][3]string{{"", "exit status 1", "exit status 1"}, {" \n ", "fb", "fb"}, {"panic: x\ngoroutine 1", "fb", "panic: x"}, {"\n  one line  \n", "fb", "one line"}} {
		if got := firstLine(c[0], c[1]); got != c[2] {
			t.Errorf("firstLine(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

// TestStatusText: status's table blanks a node's columns after
// its first port, marks down, STP and local ports, sorts counters and
// drops by name, lists the links that are down and ends no line in blanks.
func TestStatusText(t *testing.T) {
	st := &emu.Status{Name: "lab1", Scheme: "stp", Topology: "bcube:2,1", Uptime: "5s", Ready: true,
		Nodes: []emu.NodeStatus{
			{Name: "s1", Kind: "switch", Element: "kernel-bridge", Counters: map[string]uint64{"tc": 2, "bpdu": 7},
				Ports: []emu.PortStatus{{Port: 1, Interface: "eth1", Up: true, STP: "forwarding", RxFrames: 3, TxFrames: 4, Drops: map[string]uint64{"vlan": 1, "stp": 2}}, {Port: 2, Interface: "eth2", Local: true}}},
			{Name: "h1", Kind: "host", IP: "10.0.0.1/8", Ports: []emu.PortStatus{{Port: 1, Interface: "eth1", Up: true}, {Port: 2, Interface: "eth2", Up: true}}},
			{Name: "h2", Kind: "host", IP: "10.0.0.2/8"},
		},
		Links: []emu.LinkStatus{{A: "s1", AIf: "eth1", B: "h1", BIf: "eth1", Up: true}, {A: "s1", AIf: "eth2", B: "h2", BIf: "eth1"}},
	}
	var b strings.Builder
	printStatus(&b, st)
	want := `lab lab1: scheme stp on bcube:2,1, 3 nodes, 1/2 links up, ready, up 5s
NODE  KIND    ELEMENT        ADDRESS     PORT  IF    UP             RX  TX  DROPS
s1    switch  kernel-bridge              1     eth1  up/forwarding  3   4   stp=2 vlan=1
                                         2     eth2  down/local     0   0   -
h1    host    -              10.0.0.1/8  1     eth1  up             0   0   -
                                         2     eth2  up             0   0   -
h2    host    -              10.0.0.2/8
s1: bpdu=7 tc=2
links down: s1:eth2-h2:eth1
`
	// No line ends in blanks: tabwriter's padding before an empty last
	// cell (no drops, a node without ports) is cut.
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestBenchChildFailure: a row whose plan fails reports the
// child's first stderr line, and bench plans one trial per row by
// default (--help says so).
func TestBenchChildFailure(t *testing.T) {
	t.Setenv(asCLI, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := benchChild(context.Background(), exe, "odd", "fattree:3", []string{"--trials", "1", "--json"}, time.Minute)
	if want := `failed: edgefabric: topo: spec "fattree:3": p: bad value: must be even and at least 2, got 3`; r.Status != want || r.Name != "odd" || r.Spec != "fattree:3" || r.Paths != 0 {
		t.Errorf("got %+v\nwant status %q", r, want)
	}
	_, help, _ := topoCLI("bench", "--help")
	if !regexp.MustCompile(`\n +--trials int +packing trials per plan \(the planner's --trials\) \(default 1\)\n`).MatchString(help) {
		t.Errorf("bench --help does not give --trials a default of 1:\n%s", help)
	}
}

// TestSimSeedZero: --seed 0 given is an override like any other
// seed (the scenario's default is 1).
func TestSimSeedZero(t *testing.T) {
	p := writeFile(t, t.TempDir(), "ring.yaml", ringScenario)
	for _, c := range []struct {
		args []string
		want uint64
	}{{nil, 1}, {[]string{"--seed", "0"}, 0}, {[]string{"--seed", "5"}, 5}} {
		code, out, errOut := runCLI(t, append([]string{"sim", p, "--json"}, c.args...)...)
		var r struct {
			Seed *uint64 `json:"seed"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.Seed == nil || *r.Seed != c.want {
			t.Errorf("%v: exit %d, seed %v, want %d: %s", c.args, code, r.Seed, c.want, errOut)
		}
	}
}

// TestExportRemovesPartialFile: an export that fails half-way
// into a regular --output file (here: past the file size limit) exits 1
// and leaves no truncated topology behind.
func TestExportRemovesPartialFile(t *testing.T) {
	t.Setenv(asCLI, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "ft.yaml")
	// ulimit -f 1: writes past 1 KB fail with EFBIG (Go ignores SIGXFSZ).
	cmd := exec.Command("/bin/sh", "-c", `ulimit -f 1 && exec "$0" topo export fattree:4 -o "$1"`, exe, out)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || stderr.String() != "edgefabric: write "+out+": file too large\n" {
		t.Fatalf("exit %v, stderr %q; want 1 and file too large", err, stderr.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the partial %s was left behind: %v", out, err)
	}
}
