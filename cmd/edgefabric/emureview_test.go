package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/emu"
)

// Tests from a review of the lab verbs: each fails without its fix.

// TestReviewNotRunningSameEverywhere: exec, link and status say the same
// of a lab that exists but is not running (still starting, run in a
// process without a daemon, a bare leftover state directory), and exit 1;
// exec once called such a lab unknown (exit 2), link blamed the daemon.
// No such lab stays exit 2. The labs are state directories this test
// writes, the daemon a process it starts.
func TestReviewNotRunningSameEverywhere(t *testing.T) {
	if err := emu.CheckRoot(os.Geteuid()); err != nil {
		t.Skipf("skipping: %v", err)
	}
	id := os.Getpid() % 1000000
	starting, inproc, bare, none := fmt.Sprintf("rcs%d", id), fmt.Sprintf("rci%d", id), fmt.Sprintf("rcb%d", id), fmt.Sprintf("rcz%d", id)
	sleeper := startChild(t, "sleep", "600")
	fakeLab(t, starting, map[string]any{"pid": sleeper.Process.Pid, "daemon": true}, nil)
	fakeLab(t, inproc, map[string]any{"pid": os.Getpid()}, nil)
	fakeLab(t, bare, nil, nil)
	inprocMsg := func(verb, api string) string {
		return fmt.Sprintf("edgefabric: lab %s runs in process %d without a daemon: %s works from that process only (%s), or, for an up --foreground, once it is ready\n", inproc, os.Getpid(), verb, api)
	}
	for _, c := range []struct {
		name             string
		exec, link, stat string
	}{
		{starting, "", "", fmt.Sprintf("edgefabric: lab %s is starting (daemon pid %d): try again once its up has returned\n", starting, sleeper.Process.Pid)},
		{bare, "", "", "edgefabric: lab " + bare + " has no live daemon (crashed?): run 'edgefabric down " + bare + "' to remove its leftovers\n"},
		{inproc, inprocMsg("exec", "emu.Lab.Exec"), inprocMsg("link", "emu.Lab.SetLink"), inprocMsg("status", "emu.Lab.Status")},
	} {
		if c.exec == "" {
			c.exec, c.link = c.stat, c.stat
		}
		for _, v := range []struct {
			args []string
			want string
		}{
			{[]string{"exec", c.name, "h1", "--", "true"}, c.exec},
			{[]string{"link", c.name, "s1", "h1", "down"}, c.link},
			{[]string{"status", c.name}, c.stat},
		} {
			if code, out, errOut := topoCLI(v.args...); code != 1 || out != "" || errOut != v.want {
				t.Errorf("%v: exit %d, stdout %q, stderr\n got  %q\n want %q", v.args, code, out, errOut, v.want)
			}
		}
	}
	for _, args := range [][]string{
		{"exec", none, "h1", "--", "true"},
		{"link", none, "s1", "h1", "down"},
		{"status", none},
	} {
		if code, out, errOut := topoCLI(args...); code != 2 || out != "" || !strings.HasPrefix(errOut, "edgefabric: no lab \""+none+"\" (labs: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2, no lab", args, code, out, errOut)
		}
	}
}

// TestReviewUnknownNode: exec and link name an unknown node alike, with
// the lab's nodes when they are few and how to list them otherwise (exec
// said lab x, link lab "x", neither listed anything). The labs are state
// files of crashed daemons: link finds the node unknown before it asks a
// daemon. A node whose namespace is gone is a failure (exit 1), not a
// command not found (127).
func TestReviewUnknownNode(t *testing.T) {
	if err := emu.CheckRoot(os.Geteuid()); err != nil {
		t.Skipf("skipping: %v", err)
	}
	id := os.Getpid() % 1000000
	small, big := fmt.Sprintf("rcu%d", id), fmt.Sprintf("rcv%d", id)
	state := func(name string, nodes ...string) emu.State {
		st := emu.State{Name: name, Scheme: "stp", Topology: "x", Pid: os.Getpid(), PidStart: 1, Prefix: emu.Prefix(name)}
		for _, n := range nodes {
			st.Nodes = append(st.Nodes, emu.StateNode{Name: n, Kind: "host", Namespace: emu.Prefix(name) + n})
		}
		return st
	}
	var many []string
	for i := range 13 {
		many = append(many, fmt.Sprintf("h%d", i+1))
	}
	// small has a live owner (this process), so that exec gets as far
	// as the namespace; in a crashed lab it refuses before.
	fakeLab(t, small, map[string]any{"pid": os.Getpid()}, state(small, "s1", "h1", "h2"))
	fakeLab(t, big, nil, state(big, many...))
	for _, c := range []struct {
		lab, want string
	}{
		{small, "edgefabric: lab " + small + ": unknown node \"h9\" (nodes: s1, h1, h2)\n"},
		{big, "edgefabric: lab " + big + ": unknown node \"h99\" ('edgefabric status " + big + "' lists its nodes)\n"},
	} {
		node := "h9"
		if c.lab == big {
			node = "h99"
		}
		for _, args := range [][]string{
			{"exec", c.lab, node, "--", "true"},
			{"link", c.lab, "h1", node, "down"},
			{"link", c.lab, node, "h1", "down"},
		} {
			if code, out, errOut := topoCLI(args...); code != 2 || out != "" || errOut != c.want {
				t.Errorf("%v: exit %d, stdout %q, stderr\n got  %q\n want %q", args, code, out, errOut, c.want)
			}
		}
	}
	// Its namespaces were never made: a broken lab, which exec refuses
	// before it tries to enter one.
	code, out, errOut := topoCLI("exec", small, "h1", "--", "true")
	if want := fmt.Sprintf("edgefabric: lab %s is broken: the namespaces of all its 3 nodes are gone while process %d still runs it (removed outside edgefabric?): run 'edgefabric down %s' to remove the rest\n", small, os.Getpid(), small); code != 1 || out != "" || errOut != want {
		t.Errorf("exec in a namespace that is gone: exit %d, stdout %q, stderr\n got  %q\n want %q", code, out, errOut, want)
	}
}

// TestReviewTexts: no doubled "edgefabric: edgefabric", up's --name
// gives the whole rule for a lab name, link's help says what STP does
// after a repair.
func TestReviewTexts(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"exec", "lab", "h1"}, "edgefabric: exec needs a lab, a node and a command (usage: edgefabric exec LAB NODE -- CMD [ARGS...] [flags])\n"},
		{[]string{"status", "a", "b"}, "edgefabric: status takes at most one lab (usage: edgefabric status [LAB] [flags])\n"},
	} {
		if code, out, errOut := topoCLI(c.args...); code != 2 || out != "" || errOut != c.want {
			t.Errorf("%v: exit %d, stdout %q, stderr\n got  %q\n want %q", c.args, code, out, errOut, c.want)
		}
	}
	if u := newUpCmd().Flags().Lookup("name").Usage; !strings.Contains(u, "1-16") || !strings.Contains(u, "the first a letter or digit") {
		t.Errorf("up --name: %q lacks the rule for the first character", u)
	}
	if l := newLinkCmd().Long; strings.Contains(l, "passes traffic again") || !strings.Contains(l, "two\nforward delays (30 s by default)") {
		t.Errorf("link --help does not say that STP holds a repaired link for two forward delays:\n%s", l)
	}
}

// statusKeys checks that doc is one JSON document of the status (as
// status --json prints it) with pid, not the state file.
func statusKeys(t *testing.T, what, doc string, pid int) {
	t.Helper()
	var m map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(doc))
	if err := dec.Decode(&m); err != nil || dec.More() {
		t.Fatalf("%s: not one JSON document: %v\n%s", what, err, doc)
	}
	for _, k := range []string{"name", "scheme", "topology", "pid", "started", "uptime", "ready", "nodes", "links"} {
		if _, ok := m[k]; !ok {
			t.Errorf("%s: no %q in\n%s", what, k, doc)
		}
	}
	for _, k := range []string{"pid_start", "prefix"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s: %q, of the state file, in\n%s", what, k, doc)
		}
	}
	var st emu.Status
	if err := json.Unmarshal([]byte(doc), &st); err != nil || st.Pid != pid || !st.Ready || len(st.Links) == 0 || !st.Links[0].Up {
		t.Errorf("%s: %v: pid %d (want %d), ready %v, links %+v", what, err, st.Pid, pid, st.Ready, st.Links)
	}
}

// TestReviewLab: on a real lab, up --json prints the status document
// with a daemon and in the foreground alike (it printed the state file
// with a daemon, a status without pid in the foreground); exec passes
// SIGTERM, SIGINT (not from a terminal) and SIGHUP on to its command and
// exits as it does (it died and left the command running in the lab);
// exec and link name an unknown node alike.
func TestReviewLab(t *testing.T) {
	bin, name := rootLab(t, "rcx")
	labCleanup(t, name)
	out, errOut := runBin(t, bin, 0, "up", "line:1", "--scheme", "kernel-bridge", "-p", "stp=off", "--name", name, "--json")
	st, err := emu.ReadState(name)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	statusKeys(t, "up --json", out, st.Pid)

	for _, c := range []struct {
		sig    syscall.Signal
		script string
		code   int
	}{
		{syscall.SIGTERM, "echo $$; exec sleep 77", 128 + int(syscall.SIGTERM)},
		{syscall.SIGINT, "echo $$; exec sleep 77", 128 + int(syscall.SIGINT)},
		{syscall.SIGHUP, "echo $$; exec sleep 77", 128 + int(syscall.SIGHUP)},
		// A command that handles the signal ends as it chooses.
		{syscall.SIGTERM, `trap 'kill $!; exit 3' TERM; echo $$; sleep 77 & wait`, 3},
		// exec killed outright takes its command with it (the command
		// used to run on in the lab until down).
		{syscall.SIGKILL, "echo $$; exec sleep 77", -int(syscall.SIGKILL)},
	} {
		if signal.Ignored(c.sig) {
			// Inherited ignored (nohup, a background job of a shell
			// without job control): exec and its command keep it
			// ignored, as documented, so there is nothing to pass on.
			t.Logf("%v is ignored in this process and so in exec: case skipped", c.sig)
			continue
		}
		code, pid := execSignalled(t, bin, name, c.sig, c.script)
		if code != c.code {
			t.Errorf("exec -- sh -c %q, %v: exit %d, want %d", c.script, c.sig, code, c.code)
		}
		if stillRuns(pid) {
			t.Errorf("exec -- sh -c %q, %v: its command (pid %d) still runs", c.script, c.sig, pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}

	want := "edgefabric: lab " + name + ": unknown node \"h9\" (nodes: "
	for _, args := range [][]string{{"exec", name, "h9", "--", "true"}, {"link", name, "s1", "h9", "down"}} {
		code, out, errOut := labBin(t, bin, false, "", args...)
		if code != 2 || out != "" || !strings.HasPrefix(errOut, want) || !strings.Contains(errOut, "h1") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2, %q...", args, code, out, errOut, want)
		}
	}
	runBin(t, bin, 0, "down", name)

	up := startForeground(t, bin, jsonPrinted, "up", "line:1", "--scheme", "kernel-bridge", "-p", "stp=off", "--name", name, "--foreground", "--json")
	up.cmd.Process.Signal(syscall.SIGTERM)
	if err := up.wait(t, "SIGTERM"); err != nil {
		t.Fatalf("up --foreground after SIGTERM: %v\n%s", err, up.stderr.String())
	}
	statusKeys(t, "up --foreground --json", up.stdout.String(), up.cmd.Process.Pid)
}

// runBin runs the binary (bounded by a minute) and fails the test unless
// it exits with code.
func runBin(t *testing.T, bin string, code int, args ...string) (stdout, stderr string) {
	t.Helper()
	got, out, errOut := labBin(t, bin, false, "", args...)
	if got != code {
		t.Fatalf("edgefabric %v: exit %d, want %d\n%s%s", args, got, code, out, errOut)
	}
	return out, errOut
}

// execSignalled runs "edgefabric exec LAB h1 -- sh -c script" in a session
// of its own (no terminal: a SIGINT is not Ctrl-C), waits for the script
// to print its pid, sends exec sig and returns exec's exit code and the
// script's pid. Each wait is bounded.
func execSignalled(t *testing.T, bin, lab string, sig syscall.Signal, script string) (code, pid int) {
	t.Helper()
	cmd := exec.Command(bin, "exec", lab, "h1", "--", "sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		pid, err = strconv.Atoi(strings.TrimSpace(line))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("exec -- sh -c %q: no pid printed: %v", script, err)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("exec -- sh -c %q: no pid within 30 s", script)
	}
	go func() { done <- cmd.Wait() }()
	cmd.Process.Signal(sig)
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("exec -- sh -c %q: still running 30 s after %v", script, sig)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return 0, pid
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -int(ws.Signal()), pid // exec itself killed: no exit code
	}
	return ee.ExitCode(), pid
}

// stillRuns reports whether pid is a live process (not a zombie).
func stillRuns(pid int) bool {
	for range 20 { // a signalled command may take a moment to go
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		if i := strings.LastIndexByte(string(data), ')'); i > 0 && i+2 < len(data) && (data[i+2] == 'Z' || data[i+2] == 'X') {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}
