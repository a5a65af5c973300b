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
