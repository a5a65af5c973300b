package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/scheme/spain/plan"
	"github.com/edgefabric/edgefabric/topo"
)

// Tests from a third mutation sweep of the non-lab commands (topo, plan,
// repro, bench, sim and the shared helpers in root.go): each pins an
// outcome that a small change to the code left unnoticed by the earlier
// tests (cli_test.go, exact_test.go, sweep2_test.go and the per-verb files).

// TestSweep3BadInputExact: messages the earlier tests matched only in
// part, exactly; the cheap flags are checked before the topology is
// read; a fabric past 4094 VLANs is refused as bad input (two switches
// joined by 4095 parallel links, k = 4095: every path needs its own VLAN).
func TestSweep3BadInputExact(t *testing.T) {
	par := map[string]any{
		"nodes": []map[string]string{{"name": "s1"}, {"name": "s2"}, {"name": "h1", "kind": "host"}, {"name": "h2", "kind": "host"}},
	}
	links := [][2]string{{"s1", "h1"}, {"s2", "h2"}}
	for range 4095 {
		links = append(links, [2]string{"s1", "s2"})
	}
	par["links"] = links
	js, err := json.Marshal(par)
	if err != nil {
		t.Fatal(err)
	}
	parFile := writeFile(t, t.TempDir(), "par.json", string(js))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "spain", "nosuch:1", "--k", "x"}, "edgefabric: --k \"x\": want a number of paths or \"alpha\"\n"},
		{[]string{"plan", "spain", "nosuch:1", "--k", "0"}, "edgefabric: --k 0: path-set size k must be at least 1\n"},
		{[]string{"plan", "spain", "nosuch:1", "--k", "-3"}, "edgefabric: --k -3: path-set size k must be at least 1\n"},
		// --ties is read before --k.
		{[]string{"plan", "spain", "nosuch:1", "--k", "x", "--ties", "sorted"}, "edgefabric: --ties \"sorted\": want \"pair\", \"random\", \"ordered\" or \"node\"\n"},
		{[]string{"topo", "export", "nosuch:1", "--format", "gml"}, "edgefabric: --format: topo: bad value: format \"gml\" (want yaml, json, clab, graphml or dot)\n"},
		{[]string{"topo", "list", "fattree:4"}, "edgefabric: topo list takes no arguments, got 1 (usage: edgefabric topo list [flags])\n"},
		{[]string{"sim", "nosuch.yaml", "--log", "loud", "--trace", "headers"}, "edgefabric: --log \"loud\": want off, error, warn, info or debug\n"},
		// The nearest of cobra's suggestions: "demo" (one edit), not
		// "repro" (two); "sim" and "plan", not "link", which cobra lists
		// first.
		{[]string{"remo"}, "edgefabric: unknown command \"remo\" for \"edgefabric\"; did you mean \"demo\"? (see 'edgefabric --help')\n"},
		{[]string{"sin"}, "edgefabric: unknown command \"sin\" for \"edgefabric\"; did you mean \"sim\"? (see 'edgefabric --help')\n"},
		{[]string{"plin"}, "edgefabric: unknown command \"plin\" for \"edgefabric\"; did you mean \"plan\"? (see 'edgefabric --help')\n"},
		// The path limit says what to do, as the VLAN limit does.
		{[]string{"plan", "spain", "fattree:48", "--k", "100"}, "edgefabric: plan: paths: path set too large: 1152 edge nodes and k=100 give up to 6.63e+07 paths, more than the 50000000 this planner holds (about 100 bytes each); lower --k or split the fabric into several SPAIN domains\n"},
		// --vlans was ignored with --json.
		{[]string{"plan", "spain", "ring:3", "--json", "--vlans"}, "edgefabric: --vlans lists the VLANs in the text summary, and --json always has them: give one of the two\n"},
		{[]string{"plan", "spain", "ring:3", "--paths"}, "edgefabric: --paths writes paths.json into the --out directory: give --out DIR too\n"},
		{[]string{"plan", "spain", parFile, "--k", "4095", "--serial", "--trials", "1"}, "edgefabric: plan: par: fabric cannot be covered within the 4094 usable VLAN IDs: every packing trial needed more than 4094 VLANs for 4095 paths of 1 edge-node pair; lower --k or split the fabric into several SPAIN domains\n"},
	} {
		code, out, errOut := topoCLI(c.args...)
		if code != 2 || out != "" || errOut != c.want {
			t.Errorf("%q: exit %d, stdout %q, stderr\n got  %q\n want %q", c.args, code, out, errOut, c.want)
		}
	}
	// A failure while running that quotes a child's usage error is no
	// usage error of ours.
	if isCobraUsageError(errors.New("bench: baseline fattree:16 failed: edgefabric: unknown flag: --x")) {
		t.Errorf("a runtime error quoting \"unknown flag: \" counts as a usage error")
	}
}

// TestSweep3HelpTopic: "help CMD" prints what "CMD --help" prints, the
// help flag included.
func TestSweep3HelpTopic(t *testing.T) {
	code, viaHelp, errOut := topoCLI("help", "topo", "show")
	_, viaFlag, _ := topoCLI("topo", "show", "--help")
	if code != 0 || errOut != "" || viaHelp != viaFlag || !strings.Contains(viaHelp, "\n  -h, --help ") {
		t.Errorf("help topo show (exit %d, stderr %q):\n%s\ntopo show --help:\n%s", code, errOut, viaHelp, viaFlag)
	}
}

// TestSweep3OutDirNotWritable: an --out directory that was made but takes
// no file (here: the probe's name is past PATH_MAX, which stops root too)
// is refused with exit 2, and the directories made for it are removed.
func TestSweep3OutDirNotWritable(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "made")
	for len(dir) < 4000 {
		dir = filepath.Join(dir, strings.Repeat("d", 200))
	}
	dir = filepath.Join(dir, strings.Repeat("e", 4080-len(dir)))
	code, out, errOut := topoCLI("plan", "spain", "line:2", "--out", dir)
	if code != 2 || out != "" || !strings.HasPrefix(errOut, "edgefabric: --out: "+dir+" is not writable: ") || !strings.HasSuffix(errOut, ": file name too long\n") {
		t.Errorf("exit %d, stdout %q, stderr %.100q...%q", code, out, errOut, errOut[max(0, len(errOut)-60):])
	}
	if _, err := os.Stat(filepath.Join(base, "made")); !os.IsNotExist(err) {
		t.Errorf("the directories made for --out were left behind: %v", err)
	}
}

// TestSweep3PlanOutAndJSON: --out with --json writes the files and prints
// the JSON, which plan.json repeats byte for byte; the directories --out
// makes are 0755 (less the umask) and hold the four files alone (no probe
// file left).
func TestSweep3PlanOutAndJSON(t *testing.T) {
	mask := syscall.Umask(0o022)
	syscall.Umask(mask)
	base := t.TempDir()
	dir := filepath.Join(base, "a", "b")
	code, out, errOut := topoCLI("plan", "spain", "spain-testbed", "--trials", "1", "--json", "--out", dir)
	if code != 0 || errOut != "" || !json.Valid([]byte(out)) {
		t.Fatalf("exit %d, stderr %q:\n%.300s", code, errOut, out)
	}
	if pj, err := os.ReadFile(filepath.Join(dir, "plan.json")); err != nil || string(pj) != out {
		t.Errorf("plan.json (%v) is not what --json printed", err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "plan.json switches.json switches.txt vreach.json" {
		t.Errorf("--out holds %q", names)
	}
	for _, d := range []string{filepath.Join(base, "a"), dir} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o755&^os.FileMode(mask) {
			t.Errorf("%s: mode %v (%v), want %v", d, fi.Mode().Perm(), err, 0o755&^os.FileMode(mask))
		}
	}
}

// TestSweep3PlanSeedNCP: --seed drives the plan and the NCP failures
// alike (both checked against the library with that seed, which draws
// another plan than seed 1), and the NCP line gives f to three digits.
func TestSweep3PlanSeedNCP(t *testing.T) {
	summary := func(seed uint64) string {
		g, err := topo.ResolveWith("fattree:4", seed, topo.LoadOptions{ZooHosts: topo.DefaultZooHosts})
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Compute(g, plan.Options{Trials: 1, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		n, err := p.NCP(0.125, 3, seed)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		writePlanSummary(&b, p, &n, true)
		return b.String()
	}
	want := summary(7)
	if want == summary(1) {
		t.Fatal("seeds 1 and 7 give the same plan: pick another seed")
	}
	code, out, errOut := topoCLI("plan", "spain", "fattree:4", "--trials", "1", "--vlans", "--seed", "7", "--fail-prob", "0.125", "--ncp-trials", "3")
	if code != 0 || errOut != "" || out != want || !strings.Contains(out, " (f = 0.125, 3 failure sets)\n") {
		t.Errorf("exit %d, stderr %q, got\n%s\nwant\n%s", code, errOut, out, want)
	}
}

// TestSweep3TopoBounds: past the diameter budget show gives bounds (a
// ring of 5,600 switches: 2,800 to 5,600 hops), not the exact value.
func TestSweep3TopoBounds(t *testing.T) {
	code, out, errOut := topoCLI("topo", "show", "ring:5600")
	if code != 0 || errOut != "" || !strings.Contains(out, "\ndiameter:     2800 to 5600 switch hops (bounds; --exact-diameter for the exact value)\n") {
		t.Errorf("exit %d, stderr %q:\n%s", code, errOut, out)
	}
}

// TestSweep3SimLogLevel: --log keeps the records below its level out
// (the ring scenario logs at debug only).
func TestSweep3SimLogLevel(t *testing.T) {
	p := writeFile(t, t.TempDir(), "ring.yaml", ringScenario)
	code, _, errOut := runCLI(t, "sim", p, "--log", "info")
	if code != 0 || errOut != "" {
		t.Errorf("--log info: exit %d, stderr %.300q", code, errOut)
	}
}

// TestSweep3Bench: --quick keeps the rows that are not slow; peak RSS is
// the kernel's kilobytes in bytes (a multiple of 1024, and a Go process
// peaks above a megabyte); the plans' JSON files in the temporary
// directory are removed.
func TestSweep3Bench(t *testing.T) {
	t.Setenv(asCLI, "1")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	code, out, errOut := topoCLI("bench", "spain-plan", "--quick", "--rows", "fattree(4)", "--json")
	var rep benchReport
	if code != 0 || errOut != "" || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Rows) != 1 || rep.Rows[0].Name != "FatTree(4)" || rep.Rows[0].Status != "ok" {
		t.Fatalf("exit %d, stderr %q:\n%s", code, errOut, out)
	}
	for _, r := range append(rep.Baseline, rep.Rows...) {
		if r.PeakRSS%1024 != 0 || r.PeakRSS < 1<<20 {
			t.Errorf("%s: peak RSS %d bytes is no count of kilobytes", r.Name, r.PeakRSS)
		}
	}
	if ents, err := os.ReadDir(tmp); err != nil || len(ents) != 0 {
		t.Errorf("bench left %d files in $TMPDIR (%v)", len(ents), err)
	}
}

// TestSweep3BenchFailedRowNoRatio: a row that failed has no ratio to the
// baseline (its wall time and memory say nothing about the planner). The
// row fails for want of memory: with 100 MB of data segment (writable
// private mappings, so thread stacks too: 1 MB each, two Ps) the
// baseline plans in about 20 MB and FatTree(48) runs out at once. Should
// the limit stop the baseline too (another runtime, -race) or not the
// row, there is nothing to check.
func TestSweep3BenchFailedRowNoRatio(t *testing.T) {
	t.Setenv(asCLI, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", `export GOMAXPROCS=2 && ulimit -s 1024 && ulimit -d 100000 && exec "$0" bench spain-plan --rows 'fattree(48)' --json`, exe)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var rep benchReport
	if err != nil || json.Unmarshal(out, &rep) != nil || len(rep.Rows) != 1 {
		t.Skipf("skipping: the memory limit stops the bench itself: %v: %.200s", err, stderr.String())
	}
	r := rep.Rows[0]
	if r.Status == "ok" {
		t.Skip("skipping: FatTree(48) planned within the memory limit")
	}
	if !strings.HasPrefix(r.Status, "failed: ") || r.Ratio != 0 || r.RSSRatio != 0 || r.Paths != 0 || r.VLANs != 0 {
		t.Errorf("failed row %+v: want no ratios and no counts", r)
	}
}

// TestSweep3BenchCPU: a row's CPU time is user plus system time of the
// whole child tree. The child here is a script standing in for the
// planner: it spends mostly system time (dd copying byte by byte), then
// prints its children's user and system milliseconds, as times(1) gives
// them, where a plan has num_paths and num_vlans.
func TestSweep3BenchCPU(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	script := writeFile(t, dir, "fakeplan", `#!/bin/sh
dd if=/dev/zero of=/dev/null bs=1 count=200000 2>/dev/null
times > "$TMPDIR/times"
tail -n 1 "$TMPDIR/times" | awk '{ split($1, u, "m"); split($2, s, "m"); printf "{\"num_paths\": %d, \"num_vlans\": %d, \"seconds\": {}}\n", (u[1]*60+u[2])*1000, (s[1]*60+s[2])*1000 }'
`)
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	r := benchChild(context.Background(), script, "fake", "x", nil, time.Minute)
	if r.Status != "ok" {
		t.Fatalf("the stand-in planner: %+v", r)
	}
	if r.VLANs == 0 {
		t.Skipf("skipping: dd took no measurable system time (%+v)", r)
	}
	if user, sys := r.Paths, r.VLANs; r.CPU*1000 < float64(user+sys) {
		t.Errorf("CPU %v s, less than the %d ms user and %d ms system time of the child's own children", r.CPU, user, sys)
	}
}

// editDistance is Levenshtein's: insertions, deletions and substitutions
// cost one each.
func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "sim", 3}, {"sim", "", 3}, {"sin", "sim", 1}, {"sin", "link", 2},
		{"plin", "plan", 1}, {"plin", "link", 2}, {"kitten", "sitting", 3}, {"shwo", "show", 2},
	} {
		if d := editDistance(c.a, c.b); d != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, d, c.want)
		}
	}
}
