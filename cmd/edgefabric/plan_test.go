package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/paths"
	"github.com/edgefabric/edgefabric/scheme/spain/plan"
	"github.com/edgefabric/edgefabric/topo"
)

func TestPlanSpainFatTree8(t *testing.T) {
	code, out, errOut := topoCLI("plan", "spain", "fattree:8", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var p struct {
		NumVLANs    int     `json:"num_vlans"`
		Coverage    float64 `json:"coverage"`
		STPCoverage float64 `json:"stp_coverage"`
		VLANs       []struct {
			ID    int         `json:"id"`
			Links [][2]string `json:"links"`
		} `json:"vlans"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if p.NumVLANs != 16 || p.Coverage != 1 || p.STPCoverage != 0.15625 {
		t.Fatalf("num_vlans %d coverage %v stp_coverage %v, want 16, 1, 0.15625", p.NumVLANs, p.Coverage, p.STPCoverage)
	}
	if len(p.VLANs) != 16 || p.VLANs[0].ID != 1 || len(p.VLANs[0].Links) != 79 {
		t.Fatalf("VLAN 1 should be the 79-link spanning tree of 80 switches, got %d VLANs, first %+v", len(p.VLANs), p.VLANs[0].ID)
	}
}

// --no-prune keeps the best trial as tree cover left it (the optimum 16
// on BCube(8,2)); by default one VLAN is pruned, and both the summary and
// the JSON say so.
func TestPlanSpainPrune(t *testing.T) {
	for _, c := range []struct {
		args          []string
		vlans, pruned int
	}{
		{nil, 15, 1},
		{[]string{"--no-prune"}, 16, 0},
		{[]string{"--serial", "--trials", "2"}, -1, 0},
	} {
		code, out, errOut := topoCLI(append([]string{"plan", "spain", "bcube:8,2", "--json"}, c.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		var p struct {
			NumVLANs int `json:"num_vlans"`
			Packing  struct {
				Pruned *int `json:"pruned"`
			} `json:"packing"`
		}
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatal(err)
		}
		if p.Packing.Pruned == nil || *p.Packing.Pruned != c.pruned || c.vlans > 0 && p.NumVLANs != c.vlans {
			t.Errorf("%v: num_vlans %d, pruned %v; want %d, %d", c.args, p.NumVLANs, p.Packing.Pruned, c.vlans, c.pruned)
		}
	}
	code, out, _ := topoCLI("plan", "spain", "bcube:8,2")
	if code != 0 || !strings.Contains(out, "pruned 16 -> 15 VLANs") {
		t.Fatalf("summary:\n%s", out)
	}
}

func TestPlanSpainOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new")
	code, out, errOut := topoCLI("plan", "spain", "spain-testbed", "--out", dir, "--ncp-trials", "5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "VLANs             4") || !strings.Contains(out, "NCP") {
		t.Fatalf("summary:\n%s", out)
	}
	for _, f := range []string{"plan.json", "switches.json", "switches.txt", "vreach.json"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	// plan.json carries what --json prints, NCP included; every file parses.
	var pj struct {
		NCP *struct {
			Trials int `json:"trials"`
		} `json:"ncp"`
	}
	js, _ := os.ReadFile(filepath.Join(dir, "plan.json"))
	if err := json.Unmarshal(js, &pj); err != nil || pj.NCP == nil || pj.NCP.Trials != 5 {
		t.Fatalf("plan.json: %v, ncp %+v", err, pj.NCP)
	}
	for _, f := range []string{"switches.json", "vreach.json"} {
		var v map[string]any
		if js, _ := os.ReadFile(filepath.Join(dir, f)); json.Unmarshal(js, &v) != nil || len(v) != 2 {
			t.Fatalf("%s does not parse: %s", f, js)
		}
	}
	txt, _ := os.ReadFile(filepath.Join(dir, "switches.txt"))
	if !strings.Contains(string(txt), "port 1   host   -> h1:1           untagged 1    tagged 2-4") {
		t.Fatalf("switches.txt:\n%s", txt)
	}
}

func TestPlanSpainFlagCase(t *testing.T) {
	code, out, errOut := topoCLI("plan", "spain", "fattree:4", "--k", "ALPHA", "--ties", "Ordered")
	if code != 0 || !strings.Contains(out, "(alpha; alpha = 2)") || !strings.Contains(out, "ties ordered") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
}

func TestPlanSpainBadInput(t *testing.T) {
	dir := t.TempDir()
	hostless := filepath.Join(dir, "hostless.yaml")
	split := filepath.Join(dir, "split.yaml")
	os.WriteFile(hostless, []byte("nodes:\n  - {name: s1, kind: switch}\n  - {name: s2, kind: switch}\nlinks:\n  - [s1, s2]\n"), 0o644)
	island := filepath.Join(dir, "island.yaml")
	os.WriteFile(island, []byte("nodes:\n  - {name: s1}\n  - {name: s2}\n  - {name: s3}\n  - {name: h1, kind: host}\nlinks:\n  - [s1, h1]\n  - [s2, s3]\n"), 0o644)
	notDir := filepath.Join(dir, "file")
	os.WriteFile(notDir, nil, 0o644)
	os.WriteFile(split, []byte("nodes:\n  - {name: s1, kind: switch}\n  - {name: s2, kind: switch}\n  - {name: h1, kind: host}\n  - {name: h2, kind: host}\nlinks:\n  - [s1, h1]\n  - [s2, h2]\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "spain", "fattree:4", "--k", "0"}, "at least 1"},
		{[]string{"plan", "spain", "fattree:4", "--k", "x"}, "alpha"},
		{[]string{"plan", "spain", "fattree:4", "--trials", "0"}, "trials"},
		{[]string{"plan", "spain", "fattree:4", "--fail-prob", "2"}, "fail-prob"},
		{[]string{"plan", "spain", "fattree:4", "--bogus"}, "unknown flag"},
		{[]string{"plan", "spain", "fattree:4", "--ties", "lowest"}, `want "pair", "random", "ordered" or "node"`},
		{[]string{"plan", "spain"}, "argument"},
		{[]string{"plan", "spain", "nosuch:3"}, "not a spec"},
		{[]string{"plan", "spain", hostless}, "no hosts (SPAIN plans paths between switches with hosts: in a containerlab file, label host nodes edgefabric.kind: host"},
		{[]string{"plan", "spain", split}, "disconnected"},
		{[]string{"plan", "spain", island}, `"s2" is not connected`},
		{[]string{"plan", "spain", "fattree:4", "--fail-prob", "nan"}, "fail-prob"},
		{[]string{"plan", "spain", "fattree:4", "--ncp-trials", "0"}, "ncp-trials"},
		{[]string{"plan", "spain", "fattree:4", "--k", ""}, "--k: empty value"},
		{[]string{"plan", "spain", "fattree:4", "--k", "99999999999999999999"}, "far more paths"},
		{[]string{"plan", "spain", "fattree:4", "--ties", ""}, "--ties: empty value"},
		{[]string{"plan", "spain", "fattree:4", "--trials", "100000000"}, "1 to 10000"},
		{[]string{"plan", "spain", "fattree:100"}, "path set too large"},
		{[]string{"plan", "spain", "fattree:4", "--out", notDir}, "--out"},
		{[]string{"plan", "spain", "fattree:4", "--out", filepath.Join(notDir, "sub")}, "--out"},
	} {
		code, _, errOut := topoCLI(c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

// Tree cover's loose paths and the way that placed them are reported:
// BCube(4,4), seed 1, random ties, one trial, unpruned: 23,774 paths in
// no BFS tree, the majority round's 255 VLANs (best fit alone: 277); under
// the default pair ties best fit alone wins, 249 VLANs for 22,548 loose
// paths. A FatTree has none, and the JSON then has no loose_way.
func TestPlanSpainLoosePaths(t *testing.T) {
	code, out, errOut := topoCLI("plan", "spain", "bcube:4,4", "--ties", "random", "--trials", "1", "--no-prune", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var p struct {
		NumVLANs int `json:"num_vlans"`
		Packing  struct {
			LoosePaths int     `json:"loose_paths"`
			LooseWay   *string `json:"loose_way"`
		} `json:"packing"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	way := "(none)"
	if p.Packing.LooseWay != nil {
		way = *p.Packing.LooseWay
	}
	if p.NumVLANs != 255 || p.Packing.LoosePaths != 23774 || way != "majority round" {
		t.Fatalf("num_vlans %d, loose_paths %d, loose_way %s; want 255, 23774, majority round", p.NumVLANs, p.Packing.LoosePaths, way)
	}
	code, out, _ = topoCLI("plan", "spain", "bcube:4,4", "--ties", "random", "--trials", "1", "--no-prune")
	if code != 0 || !strings.Contains(out, "loose paths       23774 (in no BFS tree of tree cover), placed by majority round") {
		t.Fatalf("summary:\n%s", out)
	}
	code, out, _ = topoCLI("plan", "spain", "bcube:4,4", "--trials", "1", "--no-prune")
	if code != 0 || !strings.Contains(out, "  VLANs             249 ") || !strings.Contains(out, "loose paths       22548 (in no BFS tree of tree cover), placed by best fit") {
		t.Fatalf("default ties, summary:\n%s", out)
	}
	code, out, _ = topoCLI("plan", "spain", "fattree:8", "--json")
	if code != 0 || !strings.Contains(out, `"loose_paths": 0`) || strings.Contains(out, "loose_way") {
		t.Fatalf("fattree:8 has no loose path:\n%.600s", out)
	}
}

// On BCube the bridge in the most VLANs is often a relaying server, and
// the summary says so rather than calling it a switch (found in review).
func TestPlanSummaryRelayingServer(t *testing.T) {
	code, out, errOut := topoCLI("plan", "spain", "bcube:3,2")
	if code != 0 || errOut != "" || !strings.Contains(out, "; at most 6 on one relaying server (h1)\n") {
		t.Errorf("exit %d, stderr %q, stdout\n%s", code, errOut, out)
	}
	code, out, _ = topoCLI("plan", "spain", "fattree:4")
	if code != 0 || !strings.Contains(out, "; at most 4 on one switch (s14)\n") {
		t.Errorf("fattree:4: exit %d, stdout\n%s", code, out)
	}
}

// A directory where --out's files go is refused before planning (exit 2),
// and the files there are left alone.
func TestPlanOutTargetIsDirectory(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := topoCLI("plan", "spain", "fattree:4", "--out", dir); code != 0 {
		t.Fatalf("first plan: exit %d: %s", code, errOut)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "plan.json"))
	sw := filepath.Join(dir, "switches.json")
	if err := os.Remove(sw); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(sw, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := topoCLI("plan", "spain", "spain-testbed", "--out", dir)
	want := "edgefabric: --out " + dir + ": switches.json is a directory: remove it or give another directory\n"
	if code != 2 || out != "" || errOut != want {
		t.Errorf("exit %d, stdout %q, stderr\n got  %q\n want %q", code, out, errOut, want)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "plan.json")); string(after) != string(before) {
		t.Error("plan.json changed by a refused run")
	}
}

// A link at an --out file to a file in a directory where nothing can be
// created (here /proc) is refused before planning, with the link's target
// named (found in review: it was refused after planning, naming a hidden
// temporary file); a dangling link is followed, as topo export -o and
// os.Create follow it: its target is created, the link kept (the link
// was replaced by the file).
func TestPlanOutLinks(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/proc/version", filepath.Join(dir, "plan.json")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := topoCLI("plan", "spain", "fattree:4", "--out", dir)
	want := "edgefabric: --out " + dir + ": plan.json links to /proc/version, in a directory where no file can be created ("
	if code != 2 || out != "" || !strings.HasPrefix(errOut, want) || !strings.HasSuffix(errOut, "): remove it or give another directory\n") {
		t.Errorf("link into /proc: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if err := os.Remove(filepath.Join(dir, "plan.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("missing.json", filepath.Join(dir, "plan.json")); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := topoCLI("plan", "spain", "fattree:4", "--out", dir); code != 0 {
		t.Fatalf("dangling link: exit %d: %s", code, errOut)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "plan.json")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("dangling link: plan.json is %v (%v), want the link kept", fi.Mode(), err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "missing.json")); err != nil || !json.Valid(b) {
		t.Errorf("dangling link: its target holds %.40q (%v), want the plan", b, err)
	}
}

// Ctrl-C while plan --out writes (a paths.json can take minutes) stops
// the write and leaves no temporary file behind: exit 1 and the directory
// as it was, or, if the write ended first, exit 0 and whole files.
func TestPlanOutInterrupted(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "plan", "spain", "fattree:32", "--trials", "1", "--out", dir, "--paths")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ents, _ := os.ReadDir(dir)
		if slices.ContainsFunc(ents, func(e os.DirEntry) bool { return strings.HasSuffix(e.Name(), ".tmp") }) || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	switch {
	case code == 1 && stderr.String() == "edgefabric: plan: interrupted while writing into "+dir+": its files are as they were\n":
		if len(names) != 0 {
			t.Errorf("interrupted: left %v", names)
		}
	case code == 0:
		t.Logf("the write ended before the signal: %v", names)
		if len(names) != len(plan.OutFiles(true)) {
			t.Errorf("finished: %v", names)
		}
	default:
		t.Errorf("exit %d (%v), stderr %q, left %v", code, err, stderr.String(), names)
	}
}

// TestPlanSummaryAlphaLowerBound: when the search for α stops at its cap
// of max-flows, the summary says α is a lower bound (only the JSON's
// alpha_exact said so). 100 edge switches, each with 10 parallel links to
// an aggregation switch of its own that has one uplink to the core: 4,950
// pairs of degree 10, α = 10 only between e98 and e99, whose aggregation
// switches have 10 links between them, a pair the capped search never
// reaches.
func TestPlanSummaryAlphaLowerBound(t *testing.T) {
	b := topo.NewBuilder("capped")
	core := b.AddNode("c", topo.Switch)
	aggs := make([]topo.NodeID, 100)
	for i := range 100 {
		e := b.AddNode(fmt.Sprintf("e%d", i), topo.Switch)
		b.Connect(e, b.AddNode(fmt.Sprintf("h%d", i), topo.Host))
		aggs[i] = b.AddNode(fmt.Sprintf("a%d", i), topo.Switch)
		for range 10 {
			b.Connect(e, aggs[i])
		}
		b.Connect(aggs[i], core)
	}
	for range 10 {
		b.Connect(aggs[98], aggs[99])
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compute(g, plan.Options{Trials: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p.AlphaExact {
		t.Fatalf("alpha %d exact: the test needs a fabric where the search stops at its cap", p.Alpha)
	}
	var sb strings.Builder
	writePlanSummary(&sb, p, nil, false)
	want := fmt.Sprintf("  k                 %d (alpha; alpha >= %d: the search for alpha stopped at its cap of %d max-flows, a lower bound)\n", p.K, p.Alpha, paths.MaxAlphaEvals)
	if !strings.Contains(sb.String(), want) {
		t.Errorf("summary:\n%s\nwant the line\n%s", sb.String(), want)
	}
}

// readDir reads every regular file in dir, by name.
func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, name := range dirNames(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	return files
}

// TestPlanOutWriteFailureNamesFile: a plan --out whose write fails (past
// the file size limit, as on a full disk) exits 1 naming the file it was
// writing, as the user knows it (DIR/plan.json), and leaves the earlier
// plan's files as they were, with no temporary file beside them. The
// error named the hidden temporary file (DIR/.plan.json.PID-RANDOM.tmp),
// which no longer exists.
func TestPlanOutWriteFailureNamesFile(t *testing.T) {
	dir := t.TempDir()
	if code, _, e := topoCLI("plan", "spain", "ring:3", "--out", dir); code != 0 {
		t.Fatalf("first plan: exit %d: %s", code, e)
	}
	before := readDir(t, dir)
	code, out, errOut := runLimited(t, "4", "plan", "spain", "fattree:4", "--trials", "1", "--out", dir)
	named := slices.ContainsFunc(plan.OutFiles(false), func(f string) bool {
		return errOut == "edgefabric: plan: write "+filepath.Join(dir, f)+": file too large\n"
	})
	if code != 1 || out != "" || !named {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1 and 'plan: write %s/FILE: file too large'", code, out, errOut, dir)
	}
	if after := readDir(t, dir); len(after) != len(before) {
		t.Errorf("left in the directory: %q, want the earlier plan's %d files alone", dirNames(t, dir), len(before))
	} else {
		for name, data := range before {
			if after[name] != data {
				t.Errorf("%s changed by a write that failed", name)
			}
		}
	}
}

// TestPlanOutTrailingSlash: plan --out DIR/ names the files it wrote and
// the stale paths.json it removed as DIR/plan.json, not DIR//plan.json;
// --out . names them ./plan.json.
func TestPlanOutTrailingSlash(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := topoCLI("plan", "spain", "ring:3", "--out", dir+"/", "--paths")
	if want := "\nwrote " + dir + "/{plan.json,switches.json,switches.txt,vreach.json,paths.json}\n"; code != 0 || !strings.HasSuffix(out, want) {
		t.Fatalf("exit %d, stderr %q, stdout ends\n got  %q\n want %q", code, errOut, out[max(0, len(out)-len(want)):], want)
	}
	code, out, errOut = topoCLI("plan", "spain", "ring:3", "--out", dir+"//")
	if want := "edgefabric: removed " + dir + "/paths.json, an earlier plan's (this run was not given --paths)\n"; code != 0 || errOut != want {
		t.Errorf("exit %d, stderr\n got  %q\n want %q", code, errOut, want)
	}
	if want := "\nwrote " + dir + "/{plan.json,switches.json,switches.txt,vreach.json}\n"; !strings.HasSuffix(out, want) {
		t.Errorf("stdout ends %q, want %q", out[max(0, len(out)-len(want)):], want)
	}
	// The directory as given: "." stays.
	t.Chdir(dir)
	_, out, _ = topoCLI("plan", "spain", "ring:3", "--out", ".")
	if want := "\nwrote ./{plan.json,switches.json,switches.txt,vreach.json}\n"; !strings.HasSuffix(out, want) {
		t.Errorf("--out .: stdout ends %q, want %q", out[max(0, len(out)-len(want)):], want)
	}
}
