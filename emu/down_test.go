package emu

import (
	"os/exec"
	"testing"
	"time"
)

// Down kills what was started in the lab's namespaces: a daemon stopped by
// SIGTERM (or a foreground lab by Ctrl-C) once left an exec'd iperf3 -s -D
// running in a namespace nothing else kept alive, which no later down
// could find.
func TestDownKillsLabProcesses(t *testing.T) {
	needRoot(t)
	var fabrics []*testFabric
	l := upLab(t, star(t, 2), "learn", Options{Registry: testRegistry(t, &fabrics)})
	cmd := exec.Command("sleep", "300")
	if err := l.Start("h1", cmd); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() // without the fix, it would outlive the test
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatalf("pid %d, started in h1, still runs after Down", cmd.Process.Pid)
	}
}

// TestDownKillsProcessesInUnlinkedNamespace: a command started in h1
// keeps running in h1's namespace after that namespace's name was removed
// behind the lab's back (ip netns delete): Down must still find it (the
// lab holds a handle to every namespace it made) and kill it, or it runs
// on for ever in a namespace no down can find any more.
func TestDownKillsProcessesInUnlinkedNamespace(t *testing.T) {
	needRoot(t)
	var fabrics []*testFabric
	l := upLab(t, star(t, 2), "learn", Options{Registry: testRegistry(t, &fabrics)})
	cmd := exec.Command("sleep", "300")
	if err := l.Start("h1", cmd); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() // without the fix, it would outlive the test
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ns, _ := l.NodeNS("h1")
	if out, err := exec.Command("ip", "netns", "delete", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns delete %s: %v\n%s", ns, err, out)
	}
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(waitLimit):
		t.Fatalf("pid %d, started in h1, still runs after Down", cmd.Process.Pid)
	}
}
