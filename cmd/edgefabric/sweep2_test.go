package main

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/edgefabric/edgefabric/scheme/spain/plan"
	"github.com/edgefabric/edgefabric/sim"
	"github.com/edgefabric/edgefabric/sim/scenario"
	"github.com/edgefabric/edgefabric/topo"
)

// Tests from a second mutation sweep of the non-lab commands (plan,
// repro, bench, sim, demo, topo): each pins an outcome that a small change
// to the code left unnoticed.

// TestSweep2BadInputExact: bad input that earlier tests did not reach
// exits 2 with one exact line: a flag without its value (pflag's error is
// not one of the cobra messages run recognizes by text), an --out
// directory that cannot take files, one past each range's upper edge,
// and several --rows named in the message as given.
func TestSweep2BadInputExact(t *testing.T) {
	// Should bench ever run a row here, it runs the test binary as the
	// CLI, not the tests again.
	t.Setenv(asCLI, "1")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "spain", "line:2", "--k"}, "edgefabric: flag needs an argument: --k (see 'edgefabric plan spain --help')\n"},
		{[]string{"bench", "spain-plan", "--timeout"}, "edgefabric: flag needs an argument: --timeout (see 'edgefabric bench --help')\n"},
		{[]string{"plan", "spain", "nosuch:1", "--trials", "10001"}, "edgefabric: --trials 10001: must be 1 to 10000\n"},
		{[]string{"plan", "spain", "nosuch:1", "--ncp-trials", "100001"}, "edgefabric: --ncp-trials 100001: must be 1 to 100000\n"},
		{[]string{"plan", "spain", "nosuch:1", "--fail-prob", "NaN"}, "edgefabric: --fail-prob NaN: must be a probability in [0,1]\n"},
		{[]string{"bench", "spain-plan", "--trials", "10000", "--rows", "nosuchrow"}, "edgefabric: no row of Table 3 matches --rows nosuchrow; its rows: " + table3Rows + "\n"},
		{[]string{"repro", "spain-table3", "--rows", "nosuch1", "--rows", "nosuch2"}, "edgefabric: no row of spain-table3 matches --rows nosuch1,nosuch2; its rows: " + table3Rows + "\n"},
		// One value matching no row is refused even when another matches:
		// it used to drop its row without a word.
		{[]string{"repro", "spain-table3", "--rows", "fattree(4)", "--rows", "fattre(8)"}, "edgefabric: no row of spain-table3 matches --rows fattre(8); its rows: " + table3Rows + "\n"},
		{[]string{"bench", "spain-plan", "--rows", "nosuch", "--rows", "fattree(4)", "--quick"}, "edgefabric: no row of Table 3 matches --rows nosuch; its rows: " + table3QuickRows + "\n"},
		{[]string{"repro", "spain-table2", "--quick", "--rows", "fattree(4)", "--rows", "bcube(8,4)"}, "edgefabric: no row of spain-table2 matches --rows bcube(8,4) (--quick leaves out the slow rows); its rows: " + table3QuickRows + ", BCube(2,3), BCube(3,2)\n"},
		{[]string{"demo", "-q", "--topology", "fattree:3"}, "edgefabric: topo: spec \"fattree:3\": p: bad value: must be even and at least 2, got 3\n"},
		{[]string{"topo", "export", "fattree:3", "--format", "dot"}, "edgefabric: topo: spec \"fattree:3\": p: bad value: must be even and at least 2, got 3\n"},
	} {
		code, out, errOut := topoCLI(c.args...)
		if code != 2 || out != "" || errOut != c.want {
			t.Errorf("%q: exit %d, stdout %q, stderr\n got  %q\n want %q", c.args, code, out, errOut, c.want)
		}
	}
	// /proc takes no files, for root neither.
	code, out, errOut := topoCLI("plan", "spain", "line:2", "--out", "/proc")
	if code != 2 || out != "" || !strings.HasPrefix(errOut, "edgefabric: --out: /proc is not writable: ") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("--out /proc: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestSweep2PlanSummary: the whole summary on a plan whose k (--k 2) is
// not alpha, whose STP coverage and NCP differ from SPAIN's, and where
// giving only --ncp-trials or only --fail-prob computes the same NCP with
// the other's default (f = 0.04, 10 sets, the seed's failures).
func TestSweep2PlanSummary(t *testing.T) {
	want := `SPAIN plan for spain-testbed
  edge nodes        3 (3 pairs), fabric links 6
  k                 2 (fixed; alpha = 3)
  paths             6 (ties pair)
  VLANs             3 (VLAN 1 = 802.1D tree rooted at TS); at most 3 on one switch (S1)
  packing           parallel, 3 trials, best: trial 0 (tree-cover)
  coverage          SPAIN 100.00 %, STP 50.00 %
  NCP               SPAIN 0.00 %, STP 0.00 % (f = 0.04, 10 failure sets)
`
	for _, extra := range []string{"--ncp-trials=10", "--fail-prob=0.04"} {
		code, out, errOut := topoCLI("plan", "spain", "spain-testbed", "--trials", "1", "--k", "2", extra)
		if code != 0 || errOut != "" || out != want {
			t.Errorf("%s: exit %d, stderr %q, got\n%s\nwant\n%s", extra, code, errOut, out, want)
		}
	}
	// --json carries the NCP too.
	code, out, _ := topoCLI("plan", "spain", "spain-testbed", "--trials", "1", "--ncp-trials", "3", "--json")
	var p struct {
		NCP *struct {
			Trials   int     `json:"trials"`
			FailProb float64 `json:"fail_prob"`
		} `json:"ncp"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &p) != nil || p.NCP == nil || p.NCP.Trials != 3 || p.NCP.FailProb != 0.04 {
		t.Errorf("--json --ncp-trials 3: exit %d, ncp %+v:\n%.300s", code, p.NCP, out)
	}
	// One edge switch: no pair, "0 pairs".
	code, out, _ = topoCLI("plan", "spain", "line:1", "--trials", "1")
	if code != 0 || !strings.Contains(out, "\n  edge nodes        1 (0 pairs), fabric links 0\n") {
		t.Errorf("line:1: exit %d:\n%s", code, out)
	}
}

// TestSweep2PlanSeed: without --seed the plan is the library's with seed 1
// (a relative check, default against --seed 1, would pass with any
// consistent shift of the seed).
func TestSweep2PlanSeed(t *testing.T) {
	g, err := topo.ResolveWith("fattree:4", 1, topo.LoadOptions{ZooHosts: topo.DefaultZooHosts})
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compute(g, plan.Options{Trials: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	writePlanSummary(&want, p, nil, true)
	code, out, errOut := topoCLI("plan", "spain", "fattree:4", "--trials", "1", "--vlans")
	if code != 0 || out != want.String() {
		t.Errorf("exit %d, stderr %q, got\n%s\nwant\n%s", code, errOut, out, want.String())
	}
}

// TestSweep2ReproOutputs: progress goes to stderr (one line per row),
// nowhere with --quiet; the report on stdout ends in a newline; --json
// names the seed, ties and slow trials it ran with; --out writes the
// three files.
func TestSweep2ReproOutputs(t *testing.T) {
	code, loud, errOut := topoCLI("repro", "spain-table3", "--rows", "fattree(4)")
	if code != 0 || !regexp.MustCompile(`^FatTree\(4\): 4 VLANs, coverage 100\.00% \(\d+\.\ds\)\n$`).MatchString(errOut) {
		t.Errorf("exit %d, progress %q", code, errOut)
	}
	code, quiet, errOut := topoCLI("repro", "spain-table3", "--rows", "fattree(4)", "--quiet")
	if code != 0 || errOut != "" || quiet != loud || !strings.HasSuffix(quiet, "\n") || !strings.Contains(quiet, "FatTree(4)") {
		t.Errorf("--quiet: exit %d, stderr %q, stdout\n%s\nwithout --quiet\n%s", code, errOut, quiet, loud)
	}
	var rep struct {
		Command string   `json:"command"`
		Notes   []string `json:"notes"`
	}
	for _, c := range []struct {
		args               []string
		command, note, end string
	}{
		{nil, "edgefabric repro spain-table3 --rows 'fattree(4)'", "broken in port order from one random offset per pair", "(1 on FatTree(48)"},
		{[]string{"--ties", "ordered", "--seed", "3", "--slow-trials", "2"}, "edgefabric repro spain-table3 --rows 'fattree(4)' --ties ordered --slow-trials 2 --seed 3", "broken in port order", "(2 on FatTree(48)"},
	} {
		code, out, _ := topoCLI(append([]string{"repro", "spain-table3", "--rows", "fattree(4)", "--json"}, c.args...)...)
		seed := "seed 1."
		if c.args != nil {
			seed = "seed 3."
		}
		if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Command != c.command || len(rep.Notes) == 0 ||
			!strings.Contains(rep.Notes[0], c.note) || !strings.Contains(rep.Notes[0], c.end) || !strings.HasSuffix(rep.Notes[0], seed) {
			t.Errorf("%v: exit %d, command %q, notes %q", c.args, code, rep.Command, rep.Notes)
		}
	}
	dir := t.TempDir()
	if code, _, errOut := topoCLI("repro", "spain-table3", "--rows", "fattree(4)", "--quiet", "--out", dir); code != 0 {
		t.Fatalf("--out: exit %d: %s", code, errOut)
	}
	for _, f := range []string{"spain-table3.json", "spain-table3.md", "spain-table3.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("--out wrote no %s: %v", f, err)
		}
	}
}

// TestSweep2Bench: bench's JSON under its documented names (the earlier
// test decoded into benchRun itself, which hides a renamed tag), the
// ratios exactly over the mean of the two baselines, progress on stderr in
// text mode only, and a slow row that is measured, not skipped, without
// --quick.
func TestSweep2Bench(t *testing.T) {
	t.Setenv(asCLI, "1")
	code, out, errOut := topoCLI("bench", "spain-plan", "--rows", "fattree(4)", "--trials", "2", "--json")
	var rep map[string]json.RawMessage
	if code != 0 || errOut != "" || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("exit %d, stderr %q:\n%s", code, errOut, out)
	}
	var keys []string
	for k := range rep {
		keys = append(keys, k)
	}
	if len(keys) != 7 || string(rep["name"]) != `"spain-plan"` || string(rep["command"]) != `"edgefabric plan spain SPEC --trials 2 --ties pair --seed 1 --json"` ||
		string(rep["trials"]) != "2" || string(rep["ties"]) != `"pair"` || string(rep["goal_seconds"]) != "10" {
		t.Errorf("report %s", out)
	}
	var base, rows []map[string]any
	json.Unmarshal(rep["baseline"], &base)
	json.Unmarshal(rep["rows"], &rows)
	if len(base) != 2 || len(rows) != 1 {
		t.Fatalf("baseline %d, rows %d", len(base), len(rows))
	}
	r := rows[0]
	for _, k := range []string{"name", "spec", "status", "wall_seconds", "cpu_seconds", "peak_rss_bytes", "num_paths", "num_vlans", "paths_seconds", "pack_seconds", "x_baseline", "rss_x_baseline"} {
		if _, ok := r[k]; !ok {
			t.Errorf("row has no %q: %v", k, r)
		}
	}
	f := func(m map[string]any, k string) float64 { v, _ := m[k].(float64); return v }
	mean := (f(base[0], "wall_seconds") + f(base[1], "wall_seconds")) / 2
	meanRSS := (f(base[0], "peak_rss_bytes") + f(base[1], "peak_rss_bytes")) / 2
	if x := f(r, "wall_seconds") / mean; math.Abs(f(r, "x_baseline")-x) > 1e-9*x {
		t.Errorf("x_baseline %v, want %v", r["x_baseline"], x)
	}
	if x := f(r, "peak_rss_bytes") / meanRSS; math.Abs(f(r, "rss_x_baseline")-x) > 1e-9*x {
		t.Errorf("rss_x_baseline %v, want %v", r["rss_x_baseline"], x)
	}
	code, out, errOut = topoCLI("bench", "spain-plan", "--rows", "fattree(4)")
	if code != 0 || !regexp.MustCompile(`^baseline FatTree\(16\): ok, \d+\.\d s\nFatTree\(4\): ok, \d+\.\d s\nbaseline FatTree\(16\): ok, \d+\.\d s\n$`).MatchString(errOut) ||
		!strings.HasPrefix(out, "SPAIN planner benchmark: edgefabric plan spain SPEC --trials 1 --ties pair --seed 1 --json, one process per row\n") {
		t.Errorf("text: exit %d, stderr %q, stdout\n%s", code, errOut, out)
	}
	// FatTree(48) is slow, not out of reach: without --quick it is run
	// (here it times out, and so does the baseline: the row is reported,
	// without ratios, and the command fails).
	code, out, errOut = topoCLI("bench", "spain-plan", "--rows", "fattree(48)", "--timeout", "1ms", "--json")
	var slow struct {
		Baseline []struct{ Status string } `json:"baseline"`
		Rows     []struct {
			Name, Status string
			Ratio        float64 `json:"x_baseline"`
		} `json:"rows"`
	}
	if code != 1 || json.Unmarshal([]byte(out), &slow) != nil || len(slow.Baseline) != 2 || slow.Baseline[0].Status != "timeout" ||
		len(slow.Rows) != 1 || slow.Rows[0].Name != "FatTree(48)" || slow.Rows[0].Status != "timeout" || slow.Rows[0].Ratio != 0 ||
		errOut != "edgefabric: bench: baseline fattree:16 timeout: no ratios\n" {
		t.Errorf("fattree(48): exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if err := readPlanSummary(strings.NewReader(`{"num_paths":1,"num_vlans":1}`), &benchRun{}); err == nil {
		t.Errorf("a plan without seconds was read")
	}
}

// TestSweep2Demo: --json prints JSON whether or not progress is shown (on
// stderr), and the text report ends in a newline.
func TestSweep2Demo(t *testing.T) {
	code, out, errOut := topoCLI("demo", "--engine", "sim", "--topology", "line:2", "--json")
	var rep struct {
		Engine   string `json:"engine"`
		Topology string `json:"topology"`
	}
	if code != 1 || json.Unmarshal([]byte(out), &rep) != nil || rep.Engine != "sim" || rep.Topology != "line:2" ||
		!strings.HasPrefix(errOut, "demo: simulating DumbNet on line:2: 2 switches, 4 hosts\n") ||
		!strings.HasSuffix(errOut, "\nedgefabric: demo: the fabric did not pass every check (see the report)\n") {
		t.Errorf("exit %d, stderr %q, stdout\n%.300s", code, errOut, out)
	}
	code, out, _ = topoCLI("demo", "--engine", "sim", "--topology", "line:2", "-q")
	if code != 1 || !strings.HasPrefix(out, "DumbNet demo on line:2 (sim)\n") || !strings.HasSuffix(out, ", recovered: false\n") {
		t.Errorf("text: exit %d:\n%s", code, out)
	}
}

// TestSweep2Sim: the default trace is the library's full trace and
// --trace headers its headers-only trace (two different hashes alone do
// not tell which is which); no element logs by default; a text report
// that cannot be written exits 1.
func TestSweep2Sim(t *testing.T) {
	p := writeFile(t, t.TempDir(), "ring.yaml", ringScenario)
	lib := func(tm sim.TraceMode) string {
		sc, err := scenario.Load(p, scenario.Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := sc.Run(scenario.RunOptions{Trace: tm})
		if err != nil {
			t.Fatal(err)
		}
		return res.TraceHash
	}
	for _, c := range []struct {
		args []string
		tm   sim.TraceMode
	}{{nil, sim.TraceFull}, {[]string{"--trace", "headers"}, sim.TraceHeaders}} {
		code, out, errOut := runCLI(t, append([]string{"sim", p}, c.args...)...)
		if want := "trace_hash " + lib(c.tm) + "\n"; code != 0 || errOut != "" || !strings.HasSuffix(out, want) {
			t.Errorf("%v: exit %d, stderr %q, want the report to end in %q:\n%s", c.args, code, errOut, want, out)
		}
	}
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	defer full.Close()
	var errb strings.Builder
	if code := run([]string{"sim", p}, full, &errb); code != 1 || !strings.Contains(errb.String(), "no space left on device") {
		t.Errorf("sim > /dev/full: exit %d, stderr %q; want 1", code, errb.String())
	}
}

// TestSweep2Topo: --hosts-per-switch 0 is allowed and the default adds
// one host per switch of a bare GraphML file; the summary says "0 switch
// hops" for one switch and "no" for a fabric whose hosts are connected
// but whose switches are not all.
func TestSweep2Topo(t *testing.T) {
	zoo := writeFile(t, t.TempDir(), "zoo.graphml", `<graphml><graph><node id="a"/><node id="b"/><edge source="a" target="b"/></graph></graphml>`)
	for _, c := range []struct {
		args  []string
		hosts string
	}{{nil, `"hosts": 2,`}, {[]string{"--hosts-per-switch", "0"}, `"hosts": 0,`}} {
		code, out, errOut := topoCLI(append([]string{"topo", "show", zoo, "--json"}, c.args...)...)
		if code != 0 || !strings.Contains(out, c.hosts) {
			t.Errorf("%v: exit %d, stderr %q:\n%s", c.args, code, errOut, out)
		}
	}
	base := topo.Summary{Name: "t", Switches: 1, Hosts: 2, HostLinks: 2, Diameter: 0, DiameterExact: true, MaxDegree: 2, Connected: true, BisectionBps: 1e9}
	island := base
	island.Switches, island.Diameter, island.Connected = 2, 0, false
	for _, c := range []struct {
		s    topo.Summary
		want string
	}{
		{base, "diameter:     0 switch hops\nmax degree:   2\nbisection:    1 Gb/s (estimate, upper bound)\nlink rates:   no links\nlink delays:  0 ns\nconnected:    yes\n"},
		{island, "diameter:     0 switch hops\nmax degree:   2\nbisection:    1 Gb/s (estimate, upper bound)\nlink rates:   no links\nlink delays:  0 ns\nconnected:    no\n"},
	} {
		var b strings.Builder
		writeSummary(&b, c.s)
		if !strings.HasSuffix(b.String(), c.want) {
			t.Errorf("got\n%s\nwant it to end in\n%s", b.String(), c.want)
		}
	}
}

// TestSweep2HelpDefaults: the defaults --help states are the ones the
// commands use (and the other tests rely on).
func TestSweep2HelpDefaults(t *testing.T) {
	for _, c := range []struct {
		args  []string
		lines []string
	}{
		{[]string{"plan", "spain"}, []string{
			"      --fail-prob float        link-failure probability for NCP (computed when this or --ncp-trials is given) (default 0.04)\n",
			"      --ncp-trials int         random failure sets NCP averages over (default 10)\n",
			"      --trials int             randomized trials per packer (Algorithm 2's N; 3N in all by default); the best is kept (default 10)\n",
		}},
		{[]string{"repro"}, []string{
			"      --seed uint          seed: SPAIN tables: tie-breaking, packing, failures and flows; dumbnet-fig11: DumbNet's random choices (the stream's path, hence the link that fails); dumbnet-fig12: the switch pairs; dumbnet-fig9, -fig10, -lb: the fabrics' own; refused for dumbnet-fig8, which no random number decides (default 1)\n",
			"which run one by default (the other rows run 10); BCube(8,4) takes about 40 s per trial and needs 2,049 VLANs in one, 2,048 (the paper's figure) in ten (default 1)\n",
		}},
		{[]string{"bench"}, []string{
			"      --seed uint          the planner's seed (default 1)\n",
			"      --timeout duration   kill a row after this long and report it as a timeout (default 15m0s)\n",
		}},
		{[]string{"demo"}, []string{
			"      --name string       emulator lab name: 1-16 characters of a-z, 0-9 and _, the first a letter or digit (no -) (default \"demo\")\n",
			"      --seed uint         seed for the scheme and the simulator (default 1)\n",
			"      --topology string   topology spec or file (default \"fattree:4\")\n",
		}},
		{[]string{"sim"}, []string{
			"      --log string     element logs on stderr, stamped with virtual time: off, error, warn, info or debug (default \"off\")\n",
		}},
		{[]string{"topo", "show"}, []string{
			"      --exact-diameter         compute the exact diameter however long it takes\n",
			"(Topology Zoo); refused elsewhere (default 1)\n",
		}},
	} {
		code, out, _ := topoCLI(append(c.args, "--help")...)
		for _, l := range c.lines {
			if code != 0 || !strings.Contains(out, l) {
				t.Errorf("%v --help (exit %d) lacks %q:\n%s", c.args, code, l, out)
			}
		}
	}
}

// einvalWriter is a standard output that refuses every write with EINVAL
// (an eventfd does so for anything but 8 bytes).
type einvalWriter struct{}

func (einvalWriter) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EINVAL}
}

// TestSweep2RuntimeErrorNotUsage: a failure while running exits 1 even
// when its message contains one of cobra's usage phrases: EINVAL reads
// "invalid argument", and a report that could not be written once exited
// 2, as if the arguments were wrong.
func TestSweep2RuntimeErrorNotUsage(t *testing.T) {
	for _, args := range [][]string{{"topo", "show", "ring:3"}, {"topo", "show", "ring:3", "--json"}, {"topo", "list"}} {
		var errb strings.Builder
		code := run(args, einvalWriter{}, &errb)
		if code != 1 || !strings.HasSuffix(errb.String(), "write /dev/stdout: invalid argument\n") {
			t.Errorf("%v: exit %d, stderr %q; want 1", args, code, errb.String())
		}
	}
	for msg, want := range map[string]bool{
		`unknown command "x" for "edgefabric completion bash"`: true,
		`accepts 1 arg(s), received 2`:                         true,
		`requires at least 1 arg(s), only received 0`:          true,
		`invalid argument "x" for "edgefabric"`:                true,
		`unknown flag: --x`:                                    true,
		`unknown shorthand flag: 'x' in -x`:                    true,
		`invalid argument`:                                     false,
		`write /dev/stdout: invalid argument`:                  false,
		`emu: setns: invalid argument`:                         false,
		`exec: "ip": unknown command`:                          false,
	} {
		if got := isCobraUsageError(errors.New(msg)); got != want {
			t.Errorf("isCobraUsageError(%q) = %v, want %v", msg, got, want)
		}
	}
}

// onceFullWriter fails its first write (a full disk for a moment) and
// takes the rest.
type onceFullWriter struct {
	calls int
	got   strings.Builder
}

func (w *onceFullWriter) Write(p []byte) (int, error) {
	if w.calls++; w.calls == 1 {
		return 0, syscall.ENOSPC
	}
	return w.got.Write(p)
}

// TestSweep2OutputStopsAtFirstError: after a write to stdout failed,
// nothing more is written (a report with a hole in it is worse than
// none), and the failure is the first error.
func TestSweep2OutputStopsAtFirstError(t *testing.T) {
	var w onceFullWriter
	var errb strings.Builder
	code := run([]string{"topo", "show", "ring:3"}, &w, &errb)
	if code != 1 || w.got.String() != "" || errb.String() != "edgefabric: writing the output: no space left on device\n" {
		t.Errorf("exit %d, written after the error %q, stderr %q", code, w.got.String(), errb.String())
	}
}

// A fabric with one edge switch has no pair to route: the summary says why
// alpha is 0 (it read "k 1 (alpha; alpha = 0)", as if k contradicted it).
func TestSweep2PlanNoPairs(t *testing.T) {
	code, out, errOut := topoCLI("plan", "spain", "line:1")
	if note := "edgefabric: note: line:1 has 1 edge node with hosts: no pair to plan paths for, VLAN 1 is the whole plan\n"; errOut != note {
		t.Errorf("stderr %q, want %q", errOut, note)
	}
	if code != 0 || !strings.Contains(out, "\n  edge nodes        1 (0 pairs), fabric links 0\n  k                 1 (alpha; alpha = 0: no pair of edge nodes)\n") {
		t.Fatalf("exit %d, stderr %q, stdout\n%s", code, errOut, out)
	}
	// Nor does it name a best of 30 packing trials over no path.
	if !strings.Contains(out, "\n  packing           nothing to pack (no path): VLAN 1 only\n") {
		t.Errorf("stdout\n%s", out)
	}
}
