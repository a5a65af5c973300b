package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/edgefabric/edgefabric/paths"
	"github.com/edgefabric/edgefabric/scheme/dumbnet"
)

// Tests from the third mutation sweep of experiment.

// An unknown reproduction's error quotes the name and lists the known
// ones, comma-separated, in registry order.
func TestGetErrorMessage(t *testing.T) {
	_, err := Get("nope")
	if want := `unknown reproduction "nope" (known: spain-table2, spain-table3, dumbnet-fig8, dumbnet-fig9, dumbnet-fig10, dumbnet-fig11, dumbnet-fig12, dumbnet-lb)`; err == nil || err.Error() != want {
		t.Errorf("%v, want %q", err, want)
	}
}

// umask is the process's file mode creation mask (set and put back at
// once: no test of the package runs in parallel).
func umask() os.FileMode {
	m := syscall.Umask(0o022)
	syscall.Umask(m)
	return os.FileMode(m)
}

// Write creates missing directories 0755 and the files 0644 (less the
// umask): the generated docs are readable by everyone. An error making the
// directory or writing a file is returned, naming what failed.
func TestReportWriteModesAndErrors(t *testing.T) {
	mask := umask()
	r := &Report{Name: "t", Title: "T", Columns: []Column{{Key: "a", Title: "A"}}, Chart: "a",
		Rows: []Row{{Name: "r1", Values: map[string]Value{"a": {Ours: f64(2)}}}}}
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want os.FileMode
	}{
		{filepath.Dir(dir), os.ModeDir | 0o755&^mask},
		{dir, os.ModeDir | 0o755&^mask},
		{filepath.Join(dir, "t.json"), 0o644 &^ mask},
		{filepath.Join(dir, "t.md"), 0o644 &^ mask},
		{filepath.Join(dir, "t.svg"), 0o644 &^ mask},
	} {
		if fi, err := os.Stat(c.path); err != nil || fi.Mode() != c.want {
			t.Errorf("%s: %v %v, want mode %v", c.path, fi.Mode(), err, c.want)
		}
	}

	// The directory is a regular file: MkdirAll fails.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Write(file); err == nil || !strings.HasPrefix(err.Error(), "experiment: mkdir "+file+":") {
		t.Errorf("directory is a file: %v", err)
	}
	// t.md is a directory: writing it fails.
	dir = t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "t.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := r.Write(dir); err == nil || err.Error() != "experiment: "+filepath.Join(dir, "t.md")+" is a directory" {
		t.Errorf("t.md is a directory: %v", err)
	}
	// Nothing was written, not even t.json, whose turn came first, nor a
	// temporary file.
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("a failed Write left %v", ents)
	}
}

// The notes name the tie-breaking rule: each rule its own words.
func TestTiesWords(t *testing.T) {
	for ties, want := range map[paths.Ties]string{
		paths.TiesPair:    "in port order from one random offset per pair, the same way at every node",
		paths.TiesRandom:  "at random, at every node anew (--ties random; per-row explanations, written for pair ties, are left out: see docs/spain-plan.md)",
		paths.TiesOrdered: "in port order, the same way for every pair (--ties ordered; per-row explanations, written for pair ties, are left out: see docs/spain-plan.md)",
		paths.TiesNode:    "by a fixed port preference per node drawn from the seed, the same way for every pair (--ties node; per-row explanations, written for pair ties, are left out: see docs/spain-plan.md)",
	} {
		if got := tiesWords(ties); got != want {
			t.Errorf("%v: %q, want %q", ties, got, want)
		}
	}
}

// --quick skips every slow row, not only the one-trial ones: HyperX(16)
// is slow and runs the usual ten trials (--rows naming it alone leaves no
// row: an error).
func TestQuickSkipsHyperX16(t *testing.T) {
	for _, run := range []func(Options) (*Report, error){SpainTable2, SpainTable3} {
		rep, err := run(Options{Rows: []string{"hyperx(16)"}, Seed: 1, Quick: true})
		if !errors.Is(err, ErrUnknownRepro) || rep != nil {
			t.Errorf("quick: %v %+v; want no report and ErrUnknownRepro (no row left)", err, rep)
		}
	}
}

// step prefixes "demo: " and ends the line; without a Progress writer it
// is silent. recordDiscovery counts what was found, not what was
// expected, and says so in one line.
func TestDemoStepAndDiscoveryLine(t *testing.T) {
	var b strings.Builder
	o := DemoOptions{Progress: &b}
	o.step("x %d", 1)
	if got := b.String(); got != "demo: x 1\n" {
		t.Errorf("step: %q", got)
	}
	(&DemoOptions{}).step("silent")

	b.Reset()
	got := &dumbnet.Topology{Switches: []uint64{1, 2}, Links: []dumbnet.Link{{A: 1, APort: 1, B: 2, BPort: 1}}, Hosts: make([]dumbnet.HostLoc, 2)}
	want := &dumbnet.Topology{Switches: []uint64{1, 2}, Links: []dumbnet.Link{{A: 1, APort: 1, B: 2, BPort: 1}, {A: 1, APort: 2, B: 2, BPort: 2}}, Hosts: make([]dumbnet.HostLoc, 3)}
	rep := DemoReport{DiscoveryMS: 1.25, DiscoveryProbes: 7}
	o.recordDiscovery(&rep, got, want)
	if rep.DiscoveredSwitches != 2 || rep.DiscoveredLinks != 1 || rep.DiscoveredHosts != 2 || rep.DiscoveryExact {
		t.Errorf("%+v", rep)
	}
	if line := "demo: discovered 2 switches, 1 links, 2 hosts in 1.2 ms (7 probes); exact: false\n"; b.String() != line {
		t.Errorf("progress %q, want %q", b.String(), line)
	}
}

// A topology with a single host is refused for that reason, before the
// switch-to-switch check that would refuse it too.
func TestDemoOneHost(t *testing.T) {
	_, err := Demo(context.Background(), DemoOptions{Engine: "sim", Topology: "cube:1,1,1,1"})
	if want := "demo: cube:1,1,1,1 has fewer than two hosts"; err == nil || err.Error() != want {
		t.Errorf("%v, want %q", err, want)
	}
}

// firstLine is the first line of the trimmed text.
func TestFirstLine(t *testing.T) {
	if got := firstLine("\n  error: refused\nmore\n"); got != "error: refused" {
		t.Errorf("firstLine: %q", got)
	}
	if got := firstLine(""); got != "" {
		t.Errorf("firstLine of nothing: %q", got)
	}
}

// A run that stopped early says why on its report's last line and in the
// JSON's "error"; a complete run has neither.
func TestDemoReportStoppedEarly(t *testing.T) {
	r := &DemoReport{Engine: "sim", Topology: "line:2", Error: "demo: h1 has no path to h2 after the pings"}
	lines := strings.Split(strings.TrimSpace(r.Text()), "\n")
	if got, want := lines[len(lines)-1], "  stopped early  demo: h1 has no path to h2 after the pings"; got != want {
		t.Errorf("last line %q, want %q", got, want)
	}
	if b, _ := json.Marshal(r); !strings.Contains(string(b), `"error":"demo: h1 has no path to h2 after the pings"`) {
		t.Errorf("JSON: %s", b)
	}
	r.Error = ""
	if b, _ := json.Marshal(r); strings.Contains(r.Text(), "stopped early") || strings.Contains(string(b), `"error"`) {
		t.Errorf("a complete run reports an error:\n%s\n%s", r.Text(), b)
	}
}
