package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOutDirNotLeftOnBadInput: --out and --pcap directories are made
// before the work starts, so that a bad one is refused at once; a run
// then refused for its input (a bad topology, no matching row, a scheme
// that cannot run on the topology) removes the directories it made, and
// only those.
func TestOutDirNotLeftOnBadInput(t *testing.T) {
	dir := t.TempDir()
	relay := filepath.Join(dir, "relay.yaml")
	os.WriteFile(relay, []byte("name: relay\ntopology: bcube:2,1\nscheme: dumbnet\nduration: 1s\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "spain", "nosuch:1", "--out"}, "not a spec"},
		{[]string{"plan", "spain", "ring:3", "--hosts-per-switch", "-1", "--out"}, "--hosts-per-switch"},
		{[]string{"repro", "spain-table3", "--rows", "nosuchrow", "--out"}, "no row of spain-table3"},
		{[]string{"sim", relay, "--pcap"}, "relays traffic"},
	} {
		made := filepath.Join(dir, "made")
		code, out, errOut := topoCLI(append(c.args, filepath.Join(made, "a", "b"))...)
		if code != 2 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, out, errOut, c.want)
		}
		if _, err := os.Stat(made); !os.IsNotExist(err) {
			t.Errorf("%v: left %s behind (%v)", c.args, made, err)
			os.RemoveAll(made)
		}
	}
	// A directory that was there stays, with what it held.
	keep := filepath.Join(dir, "keep")
	os.MkdirAll(filepath.Join(keep, "sub"), 0o755)
	if code, _, _ := topoCLI("plan", "spain", "nosuch:1", "--out", filepath.Join(keep, "sub")); code != 2 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(keep, "sub")); err != nil {
		t.Errorf("an existing --out directory was removed: %v", err)
	}
}

// TestBadInputBeforeAnything: flags that are wrong whatever the lab, and
// a demo lab name the emulator would refuse, exit 2 before anything is
// looked up, needs root or runs (down --timeout 0 once went ahead and
// killed the daemon at once; demo --name Bad-Name failed as root only
// inside the emulator, with exit 1).
func TestBadInputBeforeAnything(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"down", "nosuchlab_t", "--timeout", "0s"}, "edgefabric: --timeout 0s: must be positive\n"},
		{[]string{"down", "nosuchlab_t", "--timeout", "-5s"}, "edgefabric: --timeout -5s: must be positive\n"},
		{[]string{"demo", "--engine", "sim", "-q", "--name", "Bad-Name"}, "edgefabric: --name: emu: bad lab name \"Bad-Name\": use 1-16 characters of a-z, 0-9 and _ (no '-'), starting with a letter or digit\n"},
		{[]string{"demo", "--engine", "sim", "-q", "--name", ""}, "edgefabric: --name: empty value"},
		{[]string{"exec", "nosuchlab_t", "h1", "--", ""}, "edgefabric: exec: the command is an empty string (usage: edgefabric exec LAB NODE -- CMD [ARGS...] [flags])\n"},
	} {
		code, out, errOut := topoCLI(c.args...)
		if code != 2 || out != "" || !strings.HasPrefix(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr\n got  %q\n want %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestDaemonWaitLimit: up waits twice the daemon's --timeout and a
// minute; a huge --timeout once overflowed into a negative wait, so that
// up gave up on the daemon it had just started.
func TestDaemonWaitLimit(t *testing.T) {
	for _, c := range []struct{ timeout, want time.Duration }{
		{0, 10 * time.Minute},
		{30 * time.Second, 2 * time.Minute},
		{2562047 * time.Hour, time.Duration(1<<63 - 1)},
		{time.Duration(1<<63 - 1), time.Duration(1<<63 - 1)},
	} {
		if got := daemonWaitLimit(c.timeout); got != c.want {
			t.Errorf("daemonWaitLimit(%v) = %v, want %v", c.timeout, got, c.want)
		}
	}
}

// TestHelpExamples: every verb's --help ends in examples, the root's
// and the groups' (plan, topo) too (the topo verbs have their own test), and the exec usage names a NODE, as its examples
// (a switch) and docs/emulator.md do.
func TestHelpExamples(t *testing.T) {
	for _, verb := range [][]string{{}, {"plan"}, {"topo"}, {"demo"}, {"sim"}, {"plan", "spain"}, {"repro"}, {"bench"}, {"up"}, {"down"}, {"exec"}, {"link"}, {"status"}} {
		code, out, _ := topoCLI(append(verb, "--help")...)
		if code != 0 || !strings.Contains(out, "Examples:\n  ") || !strings.Contains(out, strings.TrimSpace("edgefabric "+strings.Join(verb, " "))+" ") {
			t.Errorf("%v --help (exit %d) has no examples:\n%s", verb, code, out)
		}
	}
	if _, out, _ := topoCLI("exec", "--help"); !strings.Contains(out, "edgefabric exec LAB NODE -- CMD [ARGS...]") {
		t.Errorf("exec --help:\n%s", out)
	}
}

// TestPlanHelpExamplesRun: the examples in plan spain's help run as
// written from the repository root (one named a file that does not
// exist).
func TestPlanHelpExamplesRun(t *testing.T) {
	_, help, _ := topoCLI("plan", "spain", "--help")
	_, ex, ok := strings.Cut(help, "Examples:\n")
	if !ok {
		t.Fatal("no examples")
	}
	ex, _, _ = strings.Cut(ex, "\n\n")
	wd, _ := os.Getwd()
	if err := os.Chdir(filepath.Join(wd, "..", "..")); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	for _, line := range strings.Split(ex, "\n") {
		line, _, _ = strings.Cut(line, "#")
		args := strings.Fields(line)
		if len(args) < 2 || args[0] != "edgefabric" {
			t.Fatalf("example %q", line)
		}
		args = args[1:]
		for i := range args {
			if i > 0 && args[i-1] == "--out" {
				args[i] = t.TempDir()
			}
		}
		if code, _, errOut := topoCLI(args...); code != 0 {
			t.Errorf("%q: exit %d: %s", line, code, errOut)
		}
	}
}

// TestOutputWriteError: a report that cannot be written (a full disk) is
// a failure, exit 1, for the human-readable reports too: they print with
// unchecked fmt.Fprint* and once exited 0.
func TestOutputWriteError(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	defer full.Close()
	for _, args := range [][]string{
		{"topo", "show", "fattree:4"},
		{"topo", "show", "fattree:4", "--json"},
		{"topo", "list"},
		{"topo", "export", "ring:3"},
		{"plan", "spain", "line:2", "--trials", "1"},
		{"topo", "--help"},
	} {
		var errb strings.Builder
		code := run(args, full, &errb)
		if code != 1 || !strings.Contains(errb.String(), "no space left on device") {
			t.Errorf("%v > /dev/full: exit %d, stderr %q; want 1", args, code, errb.String())
		}
	}
}

// TestTopoExportKeepsSpecialFiles: export removes a half-written --output
// file, but never a device (-o /dev/full as root deleted /dev/full).
func TestTopoExportKeepsSpecialFiles(t *testing.T) {
	dev := filepath.Join(t.TempDir(), "full")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o600, 1<<8|7); err != nil { // /dev/full: 1, 7
		t.Skipf("skipping: mknod needs root: %v", err)
	}
	code, _, errOut := topoCLI("topo", "export", "fattree:4", "-o", dev)
	if code != 1 || !strings.Contains(errOut, "no space left on device") {
		t.Errorf("exit %d, stderr %q; want 1", code, errOut)
	}
	if fi, err := os.Lstat(dev); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("-o %s: the device is gone: %v", dev, err)
	}
}
