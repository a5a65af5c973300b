package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/emu"
)

// Tests from a second mutation sweep of the lab commands (up, exec, link,
// status, down, demo): each pins an outcome that a small change to those
// commands left unnoticed (an exit code, an exact message, which check
// comes first, what exec hands the command it runs).

// TestLabSweepArgsBeforeLab: exec refuses a "--" before LAB, link an
// empty state and names a wrong one as given, and demo takes --engine emu
// or no --engine: its --name is refused, not the engine.
func TestLabSweepArgsBeforeLab(t *testing.T) {
	badName := "edgefabric: --name: emu: bad lab name \"Bad-Name\": use 1-16 characters of a-z, 0-9 and _ (no '-'), starting with a letter or digit\n"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"exec", "--", "nosuchlab_t", "h1", "true"}, "edgefabric: exec: put \"--\" right after LAB and NODE (usage: edgefabric exec LAB NODE -- CMD [ARGS...] [flags])\n"},
		{[]string{"demo", "--engine", "emu", "-q", "--name", "Bad-Name"}, badName},
		{[]string{"demo", "-q", "--name", "Bad-Name"}, badName},
		{[]string{"link", "nosuchlab_t", "s1", "s2", ""}, "edgefabric: link state \"\": want down or up\n"},
		{[]string{"link", "nosuchlab_t", "s1", "s2", "Sideways"}, "edgefabric: link state \"Sideways\": want down or up\n"},
	} {
		if code, out, errOut := topoCLI(c.args...); code != 2 || out != "" || errOut != c.want {
			t.Errorf("%v: exit %d, stdout %q, stderr\n got  %q\n want %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestLabSweepStatusOneLab: status LAB on a lab without a daemon says
// why, exactly: one run in-process (exit 1), a crash's leftovers (exit 1),
// a daemon still starting or not answering (exit 1, not "without a
// daemon"), no such lab (exit 2, naming the labs, "none" when there are
// none, as link does). The labs are state directories this test writes.
func TestLabSweepStatusOneLab(t *testing.T) {
	if err := emu.CheckRoot(os.Geteuid()); err != nil {
		t.Skipf("skipping: %v", err)
	}
	id := os.Getpid() % 1000000
	inproc, crashed, starting, mute, none := fmt.Sprintf("wi%d", id), fmt.Sprintf("wc%d", id), fmt.Sprintf("ws%d", id), fmt.Sprintf("wn%d", id), fmt.Sprintf("wz%d", id)

	// No labs at all: "(labs: none)". Only when no other lab exists on
	// this machine before and after.
	if labs, _ := emu.Labs(); len(labs) == 0 {
		_, _, st := topoCLI("status", none)
		_, _, li := topoCLI("link", none, "s1", "s2", "down")
		want := "edgefabric: no lab \"" + none + "\" (labs: none)\n"
		if labs, _ := emu.Labs(); len(labs) == 0 && (st != want || li != want) {
			t.Errorf("no labs: status said %q, link %q; want %q", st, li, want)
		}
	}

	fakeLab(t, inproc, map[string]any{"pid": os.Getpid()}, nil)
	fakeLab(t, crashed, nil, nil)
	sleeper := startChild(t, "sleep", "600")
	fakeLab(t, starting, map[string]any{"pid": sleeper.Process.Pid, "daemon": true}, nil)
	muteSleeper := startChild(t, "sleep", "600")
	fakeLab(t, mute, map[string]any{"pid": muteSleeper.Process.Pid, "daemon": true},
		emu.State{Name: mute, Scheme: "stp", Topology: "line:2", Pid: muteSleeper.Process.Pid, PidStart: pidStart(t, muteSleeper.Process.Pid), Prefix: emu.Prefix(mute)})
	for _, c := range []struct {
		name  string
		code  int
		want  string
		entry labEntry // what --json prints
	}{
		{inproc, 1, fmt.Sprintf("edgefabric: lab %s runs in process %d without a daemon: status works from that process only (emu.Lab.Status), or, for an up --foreground, once it is ready\n", inproc, os.Getpid()), labEntry{Name: inproc, State: "in-process", Pid: os.Getpid()}},
		{crashed, 1, "edgefabric: lab " + crashed + " has no live daemon (crashed?): run 'edgefabric down " + crashed + "' to remove its leftovers\n", labEntry{Name: crashed, State: "crashed", Pid: 0}},
		{starting, 1, fmt.Sprintf("edgefabric: lab %s is starting (daemon pid %d): try again once its up has returned\n", starting, sleeper.Process.Pid), labEntry{Name: starting, State: "starting", Pid: sleeper.Process.Pid}},
		{mute, 1, fmt.Sprintf("edgefabric: lab %s: daemon %d does not answer: run 'edgefabric down %s'\n", mute, muteSleeper.Process.Pid, mute), labEntry{Name: mute, State: "not answering", Pid: muteSleeper.Process.Pid}},
	} {
		if code, out, errOut := topoCLI("status", c.name); code != c.code || out != "" || errOut != c.want {
			t.Errorf("status %s: exit %d, stdout %q, stderr\n got  %q\n want %q", c.name, code, out, errOut, c.want)
		}
		// --json: the lab's entry, as the lab list gives it, on stdout
		// (it printed nothing).
		code, out, errOut := topoCLI("status", c.name, "--json")
		var e labEntry
		if jerr := json.Unmarshal([]byte(out), &e); code != c.code || jerr != nil || !reflect.DeepEqual(e, c.entry) || errOut != c.want {
			t.Errorf("status %s --json: exit %d, stdout %q (%v), stderr %q; want %+v", c.name, code, out, jerr, errOut, c.entry)
		}
	}
	code, out, errOut := topoCLI("status", none)
	labs, _ := emu.Labs()
	if want := "edgefabric: no lab \"" + none + "\" (labs: "; code != 2 || out != "" || !strings.HasPrefix(errOut, want) ||
		!strings.Contains(errOut, crashed) || strings.Count(errOut, "\n") != 1 || !slices.Contains(labs, crashed) {
		t.Errorf("status %s: exit %d, stdout %q, stderr %q; want exit 2, %q... naming %s", none, code, out, errOut, want, crashed)
	}
}

// TestLabSweepUpTimeout: any negative --timeout is refused, the smallest
// too.
func TestLabSweepUpTimeout(t *testing.T) {
	_, _, err := upOptions("line:2", upFlags{scheme: emu.KernelBridge, name: "t1", seed: 1, timeout: -1})
	if err == nil || err.Error() != "--timeout -1ns: must be positive" {
		t.Errorf("up --timeout -1ns: %v", err)
	}
}

// TestLabSweepExecBadState: exec on a lab whose state file is not its
// own (it names another lab) is a failure (exit 1), not bad input, and
// runs nothing.
func TestLabSweepExecBadState(t *testing.T) {
	if err := emu.CheckRoot(os.Geteuid()); err != nil {
		t.Skipf("skipping: %v", err)
	}
	name := fmt.Sprintf("wb%d", os.Getpid())
	fakeLab(t, name, nil, emu.State{Name: "other", Scheme: "stp", Topology: "line:2", Pid: os.Getpid(), PidStart: 1, Prefix: emu.Prefix("other"),
		Nodes: []emu.StateNode{{Name: "h1", Kind: "host", Namespace: emu.Prefix("other") + "h1"}}})
	want := "edgefabric: emu: bad state file: " + filepath.Join(emu.LabDir(name), "state.json") + " names lab \"other\"\n"
	if code, out, errOut := topoCLI("exec", name, "h1", "--", "true"); code != 1 || out != "" || errOut != want {
		t.Errorf("exec on a lab with another's state: exit %d, stdout %q, stderr\n got  %q\n want %q", code, out, errOut, want)
	}
}

// TestLabSweepDemoJSONWriteError: a demo report that cannot be written
// is the failure reported, before the fabric's failed checks.
func TestLabSweepDemoJSONWriteError(t *testing.T) {
	var errb strings.Builder
	code := run([]string{"demo", "--engine", "sim", "-q", "--topology", "line:2", "--json"}, einvalWriter{}, &errb)
	if want := "edgefabric: write /dev/stdout: invalid argument\n"; code != 1 || errb.String() != want {
		t.Errorf("demo --json to a failing stdout: exit %d, stderr %q; want 1, %q", code, errb.String(), want)
	}
}

// TestLabSweepDown: down gives a daemon that ignores SIGTERM --timeout,
// not its default 20 s, before SIGKILL; a crash's single leftover
// namespace is named.
func TestLabSweepDown(t *testing.T) {
	if err := emu.CheckRoot(os.Geteuid()); err != nil {
		t.Skipf("skipping: %v", err)
	}
	name := fmt.Sprintf("wt%d", os.Getpid())
	ignoresTERM := startChild(t, "sh", "-c", `trap "" TERM; exec sleep 600`)
	fakeLab(t, name, map[string]any{"pid": ignoresTERM.Process.Pid, "daemon": true}, nil)
	// Until sh has set the trap and exec'd sleep (same pid).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", ignoresTERM.Process.Pid)); string(comm) == "sleep\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sh did not exec sleep within 10 s")
		}
	}
	start := time.Now()
	code, out, errOut := topoCLI("down", name, "--timeout", "200ms")
	want := "lab " + name + ": daemon did not answer and was killed\nlab " + name + " removed\n"
	if took := time.Since(start); code != 0 || out != want || errOut != "" || took > 10*time.Second {
		t.Errorf("down --timeout 200ms: exit %d after %v, stderr %q, stdout\n got  %q\n want %q", code, took.Round(time.Millisecond), errOut, out, want)
	}

	dead := fmt.Sprintf("wd%d", os.Getpid())
	fakeLab(t, dead, nil, emu.State{Name: dead, Scheme: "stp", Topology: "line:2", Pid: os.Getpid(), PidStart: 1, Prefix: emu.Prefix(dead)})
	ns := emu.Prefix(dead) + "n1"
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v\n%s", ns, err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "delete", ns).Run() })
	want = "lab " + dead + ": the daemon had crashed\nlab " + dead + ": removed 1 leftover namespaces: " + ns + "\nlab " + dead + " removed\n"
	if code, out, errOut := topoCLI("down", dead); code != 0 || out != want || errOut != "" {
		t.Errorf("down of a crash with one namespace: exit %d, stderr %q, stdout\n got  %q\n want %q", code, errOut, out, want)
	}
}

// TestLabSweepRealLab: on a real lab, the lab list's exact line, a
// command that cannot be found (exit 1, named with the lab and node),
// exec handing the command this process's stdout itself (a file, not a
// pipe), and down listing every process it killed. status without a lab
// needs root too.
func TestLabSweepRealLab(t *testing.T) {
	bin, name := rootLab(t, "lw")
	labCleanup(t, name)
	os.Chmod(filepath.Dir(bin), 0o755) // t.TempDir and its parent are private
	os.Chmod(filepath.Dir(filepath.Dir(bin)), 0o755)
	needsRoot := "edgefabric: emu: the emulator needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN): run as root (effective uid 65534)\n"
	for _, args := range [][]string{{"status"}, {"status", "--json"}} {
		if code, out, errOut := labBin(t, bin, true, "", args...); code != 1 || out != "" || errOut != needsRoot {
			t.Errorf("%v as nobody: exit %d, stdout %q, stderr\n got  %q\n want %q", args, code, out, errOut, needsRoot)
		}
	}

	if code, out, errOut := labBin(t, bin, false, "", "up", "line:1", "--scheme", "kernel-bridge", "-p", "stp=off", "--name", name); code != 0 {
		t.Fatalf("up: exit %d\n%s%s", code, out, errOut)
	}
	st, err := emu.ReadState(name)
	if err != nil {
		t.Fatal(err)
	}
	if code, out, _ := labBin(t, bin, false, "", "status"); code != 0 || !slices.Contains(strings.Split(out, "\n"), fmt.Sprintf("%s\trunning (pid %d)", name, st.Pid)) {
		t.Errorf("status: exit %d, no line \"%s\\trunning (pid %d)\" in\n%s", code, name, st.Pid, out)
	}

	want := "edgefabric: exec nosuchcmd_t in " + name + "/h1: exec: \"nosuchcmd_t\": executable file not found in $PATH\n"
	if code, out, errOut := labBin(t, bin, false, "", "exec", name, "h1", "--", "nosuchcmd_t"); code != 127 || out != "" || errOut != want {
		t.Errorf("exec of a missing command: exit %d, stdout %q, stderr\n got  %q\n want %q", code, out, errOut, want)
	}

	// Two nodes without a link between them, named in the order given.
	want = "edgefabric: lab " + name + ": no link between the nodes \"h2\" and \"h1\"\n"
	if code, out, errOut := labBin(t, bin, false, "", "link", name, "h2", "h1", "down"); code != 2 || out != "" || errOut != want {
		t.Errorf("link h2 h1 down: exit %d, stdout %q, stderr\n got  %q\n want %q", code, out, errOut, want)
	}

	// The command writes to the file that is exec's stdout, itself.
	outFile := filepath.Join(t.TempDir(), "out")
	f, err := os.Create(outFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "exec", name, "h1", "--", "readlink", "/proc/self/fd/1")
	cmd.Stdout = f
	err = cmd.Run()
	f.Close()
	if got, _ := os.ReadFile(outFile); err != nil || string(got) != outFile+"\n" {
		t.Errorf("exec readlink /proc/self/fd/1: %v, wrote %q; want %q", err, got, outFile+"\n")
	}

	// Two commands left running in the lab: down kills and names both.
	for _, node := range []string{"h1", "h2"} {
		if code, out, errOut := labBin(t, bin, false, "", "exec", name, node, "--", "sh", "-c", "setsid sleep 600 >/dev/null 2>&1 &"); code != 0 {
			t.Fatalf("exec %s: exit %d\n%s%s", node, code, out, errOut)
		}
	}
	code, out, errOut := labBin(t, bin, false, "", "down", name)
	re := regexp.MustCompile(`^lab ` + name + `: daemon stopped\nlab ` + name + `: killed 2 processes still running in its namespaces \(pids [1-9][0-9]* [1-9][0-9]*\)\nlab ` + name + ` removed\n$`)
	if code != 0 || errOut != "" || !re.MatchString(out) {
		t.Errorf("down: exit %d, stderr %q, stdout\n%s", code, errOut, out)
	}
}
