package emu

import (
	"errors"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/scheme"
)

// A command started in a lab's namespace while the lab is removed (an
// exec racing a down) must not outlive the lab: in a namespace whose name
// is gone, no down finds it, and it keeps the namespace and its links
// alive. These tests put the start in the two places a race can put it.

// raceLab is a small lab whose fabric is ready at once.
func raceLab(t *testing.T) *Lab {
	return upLab(t, star(t, 1), KernelBridge, Options{Scheme: scheme.Options{Params: map[string]string{"stp": "off"}}, Log: quietLog()})
}

// startDuringRemoval starts sleep in ns from beforeNSDelete, between the
// kill of the lab's processes and the removal of its namespaces' names,
// and returns where the command will be once remove has run.
func startDuringRemoval(t *testing.T, ns string, remove func()) *exec.Cmd {
	t.Helper()
	needTool(t, "sleep")
	var cmd *exec.Cmd
	beforeNSDelete = func() {
		beforeNSDelete = nil
		c := exec.Command("sleep", "60")
		if err := StartIn(ns, c); err != nil {
			t.Errorf("start in %s before its removal: %v", ns, err)
			return
		}
		cmd = c
	}
	defer func() { beforeNSDelete = nil }()
	remove()
	if cmd == nil {
		t.Fatal("the removal never reached its namespaces")
	}
	return cmd
}

// wantKilled waits for cmd, which must have been killed.
func wantKilled(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Errorf("command ended with %v, want killed", cmd.ProcessState)
		}
	case <-time.After(waitLimit):
		cmd.Process.Kill()
		<-done
		t.Error("the command started as the lab was removed outlived it, in a namespace without a name")
	}
}

func TestDownKillsCommandStartedDuringRemoval(t *testing.T) {
	needRoot(t)
	l := raceLab(t)
	ns, _ := l.NodeNS("h1")
	cmd := startDuringRemoval(t, ns, func() {
		if err := l.Down(); err != nil {
			t.Errorf("Down: %v", err)
		}
	})
	wantKilled(t, cmd)
}

func TestCleanupKillsCommandStartedDuringRemoval(t *testing.T) {
	needRoot(t)
	l := raceLab(t)
	ns, _ := l.NodeNS("h1")
	var rep CleanupReport
	cmd := startDuringRemoval(t, ns, func() {
		var err error
		if rep, err = Cleanup(l.Name(), 10*time.Second); err != nil {
			t.Errorf("Cleanup: %v", err)
		}
	})
	wantKilled(t, cmd)
	if !slices.Contains(rep.Killed, cmd.Process.Pid) {
		t.Errorf("Cleanup reports killed %v, not the command's pid %d", rep.Killed, cmd.Process.Pid)
	}
}

// TestStartInRemovedNamespace: a command forked after the lab's removal
// into a namespace entered before it (the handle opened, the name gone
// since) is killed at once, and the start fails with ErrLabDown.
func TestStartInRemovedNamespace(t *testing.T) {
	needRoot(t)
	needTool(t, "sleep")
	l := raceLab(t)
	ns, _ := l.NodeNS("h1")
	h, err := openNS(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "60")
	errc := make(chan error, 1)
	goRetired(func() { errc <- startWithOwnSys(h, ns, cmd) })
	err = <-errc
	if !errors.Is(err, ErrLabDown) {
		if err == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		t.Fatalf("start in a namespace whose name is gone: %v, want ErrLabDown", err)
	}
	if cmd.ProcessState == nil {
		t.Error("the command was not reaped")
	}
}
