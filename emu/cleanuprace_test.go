package emu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/scheme"
)

// startSleeper starts a process that is not ours to kill, and ends it
// when the test ends.
func startSleeper(t *testing.T) (pid int, start uint64) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	start, err := procStart(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid, start
}

// leftoverNS creates namespace ns as a lab would leave it, with nothing
// holding it open.
func leftoverNS(t *testing.T, ns string) {
	t.Helper()
	h, err := createNS(ns, false)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
}

func writeOwnerFile(t *testing.T, name string, o owner) {
	t.Helper()
	if err := os.MkdirAll(LabDir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(o)
	if err := os.WriteFile(ownerPath(name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCleanupLeavesRecreatedLab: a down that finds, once the lab it was
// asked to remove has stopped, that a new up claimed the name meanwhile
// (two downs at once, an up between them) leaves the new lab alone.
func TestCleanupLeavesRecreatedLab(t *testing.T) {
	needRoot(t)
	name := labName()
	cleanupLab(t, name)
	// a crashed lab: a leftover namespace, no owner
	leftoverNS(t, Prefix(name)+"x")
	pid, start := startSleeper(t)
	cleanupBeforeSweep = func() { writeOwnerFile(t, name, owner{Pid: pid, PidStart: start, Daemon: true}) }
	defer func() { cleanupBeforeSweep = nil }()
	rep, err := Cleanup(name, 2*time.Second)
	cleanupBeforeSweep = nil
	if err != nil || rep.RecreatedBy != pid {
		t.Fatalf("Cleanup: %+v, %v; want the new lab (pid %d) reported and left", rep, err, pid)
	}
	if left, _ := listNS(Prefix(name)); !slices.Contains(left, Prefix(name)+"x") {
		t.Fatalf("the new lab's namespace was removed: %v", left)
	}
	if _, err := os.Stat(ownerPath(name)); err != nil || !alive(pid, start) {
		t.Fatalf("the new lab's owner record or process is gone: %v, alive %v", err, alive(pid, start))
	}
	// Once that lab's owner is gone, down removes it.
	syscallKill(t, pid, start)
	if rep, err := Cleanup(name, 2*time.Second); err != nil || rep.RecreatedBy != 0 || len(rep.Leftovers) != 1 {
		t.Fatalf("second Cleanup: %+v, %v", rep, err)
	}
}

// TestCleanupForgedOwner: an owner record without a start time cannot be
// told from another process with its pid, so down signals nothing.
func TestCleanupForgedOwner(t *testing.T) {
	needRoot(t)
	name := labName()
	cleanupLab(t, name)
	pid, start := startSleeper(t)
	writeOwnerFile(t, name, owner{Pid: pid, PidStart: 0, Daemon: true})
	rep, err := Cleanup(name, time.Second)
	if err != nil || rep.Daemon != "none" || !alive(pid, start) {
		t.Fatalf("Cleanup: %+v, %v; the unrelated process alive: %v", rep, err, alive(pid, start))
	}
	if _, err := os.Stat(LabDir(name)); !os.IsNotExist(err) {
		t.Fatalf("state directory left: %v", err)
	}
}

func syscallKill(t *testing.T, pid int, start uint64) {
	t.Helper()
	p, _ := os.FindProcess(pid)
	p.Kill()
	if !waitGone(pid, start, 5*time.Second) { // a zombie is gone
		t.Fatalf("pid %d still there", pid)
	}
}

// running reports whether pid runs, whatever process it is.
func running(pid int) bool {
	s, err := procStart(pid)
	return err == nil && alive(pid, s)
}

// TestUpWithoutPing: a lab that cannot check that its hosts reach each
// other (no ping) is not reported ready: Up fails, says why and what to
// do, and leaves nothing behind.
func TestUpWithoutPing(t *testing.T) {
	needRoot(t)
	name := labName()
	cleanupLab(t, name)
	t.Setenv("PATH", t.TempDir())
	var fabrics []*testFabric
	l, err := Up(context.Background(), star(t, 2), "learn", Options{Name: name, WaitReach: true, Registry: testRegistry(t, &fabrics)})
	if err == nil {
		l.Down()
		t.Fatal("Up succeeded without ping")
	}
	if !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "ping is not installed") || !strings.Contains(err.Error(), "--no-wait-reach") {
		t.Fatalf("Up: %v", err)
	}
	if left, _ := listNS(Prefix(name)); len(left) != 0 {
		t.Fatalf("namespaces left: %v", left)
	}
}

// TestDownLeavesTakenName: a lab whose name another live process has
// claimed since (down removed this lab under it, and a new up took the
// name) removes nothing by name when it goes down: the namespaces and the
// state directory are the new lab's. Down once deleted them and orphaned
// the new lab's daemon.
func TestDownLeavesTakenName(t *testing.T) {
	needRoot(t)
	name := labName()
	cleanupLab(t, name)
	l, err := Up(context.Background(), star(nil, 2), KernelBridge, Options{Name: name, Scheme: scheme.Options{Params: map[string]string{"stp": "off"}}})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := listNS(Prefix(name))
	pid, start := startSleeper(t)
	writeOwnerFile(t, name, owner{Pid: pid, PidStart: start, Daemon: true})
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	after, _ := listNS(Prefix(name))
	if len(before) == 0 || !slices.Equal(before, after) {
		t.Errorf("namespaces before down %v, after %v: want them left to the name's new owner", before, after)
	}
	if o, ok := readOwner(name); !ok || o.Pid != pid {
		t.Errorf("owner record %+v, %v: want the new owner's, left alone", o, ok)
	}
	// Without the new owner, down removes by name as always.
	writeOwnerFile(t, name, owner{Pid: os.Getpid(), PidStart: ownStart()})
	l2 := &Lab{name: name, log: l.log}
	for _, ns := range after {
		h, err := openNS(ns)
		if err != nil {
			t.Fatal(err)
		}
		l2.nodes = append(l2.nodes, &labNode{ns: ns, h: h})
	}
	if err := l2.Down(); err != nil {
		t.Fatal(err)
	}
	if left, _ := listNS(Prefix(name)); len(left) != 0 {
		t.Errorf("own lab's down left %v", left)
	}
	if _, err := os.Stat(LabDir(name)); !os.IsNotExist(err) {
		t.Errorf("own lab's down left its state directory: %v", err)
	}
}

// TestCleanupOfNothingIsNoLab: a down that finds nothing of the lab is no
// such lab, even when an up claims the name before its sweep: it once
// reported that new lab "left alone" and exited 0.
func TestCleanupOfNothingIsNoLab(t *testing.T) {
	needRoot(t)
	name := labName()
	cleanupLab(t, name)
	pid, start := startSleeper(t)
	cleanupBeforeSweep = func() { writeOwnerFile(t, name, owner{Pid: pid, PidStart: start, Daemon: true}) }
	defer func() { cleanupBeforeSweep = nil }()
	rep, err := Cleanup(name, time.Second)
	if !errors.Is(err, ErrNoLab) || rep.RecreatedBy != 0 {
		t.Errorf("Cleanup of nothing: %+v, %v; want ErrNoLab", rep, err)
	}
}

// TestCleanupOnlyOwnLab: SpawnDaemon's cleanup after its own daemon (only
// its pids) leaves a lab a newer owner holds by then: a stale up client,
// stopped and continued, once removed the newer lab of its name.
func TestCleanupOnlyOwnLab(t *testing.T) {
	needRoot(t)
	name := labName()
	cleanupLab(t, name)
	leftoverNS(t, Prefix(name)+"x")
	pid, start := startSleeper(t)
	writeOwnerFile(t, name, owner{Pid: pid, PidStart: start, Daemon: true})
	rep, err := cleanup(name, time.Second, false, os.Getpid(), 1)
	if err != nil || rep.RecreatedBy != pid {
		t.Errorf("cleanup of another owner's lab: %+v, %v; want it left to pid %d", rep, err, pid)
	}
	if left, _ := listNS(Prefix(name)); len(left) != 1 {
		t.Errorf("namespaces %v: want the newer lab's left", left)
	}
}

// TestCleanupStopsBuilderFirst: down sends SIGTERM to an edgefabric
// command building its lab before it kills the commands in the lab's
// namespaces: killing the demo's iperf3 first made the demo fail on its
// own, and down then found no lab to report. The builder here is a shell
// that, on SIGTERM, records whether the process in the lab's namespace
// still ran.
func TestCleanupStopsBuilderFirst(t *testing.T) {
	needRoot(t)
	name := labName()
	cleanupLab(t, name)
	ns := Prefix(name) + "h1"
	leftoverNS(t, ns)
	inLab := exec.Command("ip", "netns", "exec", ns, "sleep", "60")
	if err := inLab.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inLab.Process.Kill(); inLab.Wait() })
	seen := t.TempDir() + "/seen"
	builder := exec.Command("sh", "-c", `trap 'if kill -0 `+fmt.Sprint(inLab.Process.Pid)+` 2>/dev/null; then echo alive > `+seen+`; else echo dead > `+seen+`; fi; exit 0' TERM; while :; do sleep 0.05; done`)
	if err := builder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { builder.Process.Kill() })
	go builder.Wait()                  // reaped, so that it is gone once it exits
	time.Sleep(100 * time.Millisecond) // the trap is set
	start, _ := procStart(builder.Process.Pid)
	writeOwnerFile(t, name, owner{Pid: builder.Process.Pid, PidStart: start, StopsOnTerm: true})
	rep, err := Cleanup(name, 5*time.Second)
	if err != nil || rep.Daemon != "stopped" {
		t.Fatalf("Cleanup: %+v, %v; want the builder stopped", rep, err)
	}
	if data, _ := os.ReadFile(seen); string(data) != "alive\n" {
		t.Errorf("the builder saw the process in its namespace %q at SIGTERM; want alive (stopped first)", data)
	}
}

// TestUpRefusesNameClaimedByOther: a name another live process has
// claimed (its up is starting a daemon: a state directory and an owner
// record, no namespace yet) is refused by Up, which touches nothing of
// it. Up looked only for namespaces: it built a second lab under the
// name, overwrote the owner record, and its Down removed the other lab's
// state directory.
func TestUpRefusesNameClaimedByOther(t *testing.T) {
	needRoot(t)
	name := labName()
	cleanupLab(t, name)
	pid, start := startSleeper(t)
	writeOwnerFile(t, name, owner{Pid: pid, PidStart: start, Daemon: true, StopsOnTerm: true})
	l, err := Up(context.Background(), star(nil, 2), KernelBridge, Options{Name: name, Scheme: scheme.Options{Params: map[string]string{"stp": "off"}}})
	if err == nil {
		l.Down()
		t.Fatal("Up built a lab under a name another live process has claimed")
	}
	if !errors.Is(err, ErrLabExists) {
		t.Errorf("Up: %v, want ErrLabExists", err)
	}
	if o, ok := readOwner(name); !ok || o.Pid != pid {
		t.Errorf("owner record %+v, %v: want the claimant's, untouched", o, ok)
	}
	if left, _ := listNS(Prefix(name)); len(left) != 0 {
		t.Errorf("namespaces made under another's claim: %v", left)
	}
	// A claim of this process's own (ClaimName, then Up: up --foreground,
	// the demo) is this lab's.
	writeOwnerFile(t, name, owner{Pid: os.Getpid(), PidStart: ownStart()})
	l, err = Up(context.Background(), star(nil, 2), KernelBridge, Options{Name: name, Scheme: scheme.Options{Params: map[string]string{"stp": "off"}}})
	if err != nil {
		t.Fatalf("Up under its own claim: %v", err)
	}
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
}
