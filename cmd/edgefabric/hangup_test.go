package main

import (
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/emu"
)

// hangupDefault makes the test's children start with SIGHUP at its
// default, whatever the test itself inherited (a handled signal is reset
// to its default on exec; an ignored one would stay ignored).
func hangupDefault(t *testing.T) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	t.Cleanup(func() { signal.Stop(ch) })
}

// TestHangupRemovesForegroundLab: SIGHUP (the terminal of an up
// --foreground closed) and SIGQUIT (Ctrl-\) remove the lab as SIGTERM
// does. Go's default for SIGHUP is to exit at once, for SIGQUIT to dump
// the goroutines and exit 2: both left the lab's namespaces behind.
func TestHangupRemovesForegroundLab(t *testing.T) {
	bin, name := rootLab(t, "hf")
	labCleanup(t, name)
	hangupDefault(t)
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT} {
		up := startForeground(t, bin, func(out string) bool { return strings.Contains(out, "\n") },
			"up", "line:2", "--scheme", "kernel-bridge", "-p", "stp=off", "--name", name, "--foreground")
		up.cmd.Process.Signal(sig)
		if err := up.wait(t, sig.String()); err != nil {
			t.Fatalf("up --foreground after %v: %v\n%s", sig, err, up.stderr.String())
		}
		if out := up.stdout.String(); !strings.HasSuffix(out, "\nlab "+name+" down\n") {
			t.Errorf("up --foreground after %v printed\n%s", sig, out)
		}
		if labs, _ := emu.Labs(); contains(labs, name) {
			t.Fatalf("lab %s still there after %v", name, sig)
		}
	}
}

// TestHangupIgnoredUnderNohup: started with SIGHUP ignored (nohup), up
// --foreground keeps it ignored and the lab keeps running; SIGTERM still
// removes it.
func TestHangupIgnoredUnderNohup(t *testing.T) {
	bin, name := rootLab(t, "hn")
	labCleanup(t, name)
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	up := startForeground(t, nohup, func(out string) bool { return strings.Contains(out, "\n") },
		bin, "up", "line:2", "--scheme", "kernel-bridge", "-p", "stp=off", "--name", name, "--foreground")
	up.cmd.Process.Signal(syscall.SIGHUP) // nohup has exec'd edgefabric: same pid
	select {
	case err := <-up.done:
		t.Fatalf("up --foreground under nohup exited on SIGHUP: %v\n%s", err, up.stderr.String())
	case <-time.After(time.Second):
	}
	if labs, _ := emu.Labs(); !contains(labs, name) {
		t.Fatalf("lab %s gone after SIGHUP under nohup", name)
	}
	up.cmd.Process.Signal(syscall.SIGTERM)
	if err := up.wait(t, "SIGTERM"); err != nil {
		t.Fatalf("up --foreground after SIGTERM: %v\n%s", err, up.stderr.String())
	}
	if labs, _ := emu.Labs(); contains(labs, name) {
		t.Errorf("lab %s still there after SIGTERM", name)
	}
}

// TestHangupRemovesDaemonLab: a daemon sent SIGHUP removes its lab.
func TestHangupRemovesDaemonLab(t *testing.T) {
	bin, name := rootLab(t, "hd")
	labCleanup(t, name)
	hangupDefault(t)
	if out, err := exec.Command(bin, "up", "line:2", "--scheme", "kernel-bridge", "-p", "stp=off", "--name", name).CombinedOutput(); err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	st, err := emu.ReadState(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(st.Pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		labs, _ := emu.Labs()
		if !contains(labs, name) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lab %s still there 30 s after its daemon got SIGHUP", name)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBrokenPipeKeepsForegroundLab: an up --foreground whose stdout is a
// closed pipe (up --foreground | head, once head has gone) keeps its lab
// running until it is stopped, and then removes it. Go's default for a
// write to a broken stdout is to die of SIGPIPE at once, which left the
// lab's namespaces behind.
func TestBrokenPipeKeepsForegroundLab(t *testing.T) {
	bin, name := rootLab(t, "bp")
	labCleanup(t, name)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // nobody reads: the status line up prints once ready meets a broken pipe
	up := &foreground{cmd: exec.Command(bin, "up", "line:2", "--scheme", "kernel-bridge", "-p", "stp=off", "--name", name, "--foreground"), done: make(chan error, 1)}
	up.cmd.Stdout, up.cmd.Stderr = w, &up.stderr
	if err := up.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	go func() { up.done <- up.cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if st, err := emu.RemoteStatus(name); err == nil && st.Ready {
			break
		}
		select {
		case err := <-up.done:
			t.Fatalf("up --foreground exited before it was ready: %v\n%s", err, up.stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			up.cmd.Process.Kill()
			t.Fatal("lab not ready within 60 s")
		}
	}
	select {
	case err := <-up.done:
		t.Fatalf("up --foreground exited on the broken pipe: %v\n%s", err, up.stderr.String())
	case <-time.After(time.Second):
	}
	up.cmd.Process.Signal(syscall.SIGTERM)
	up.wait(t, "SIGTERM")
	if labs, _ := emu.Labs(); contains(labs, name) {
		t.Errorf("lab %s still there after SIGTERM", name)
	}
}
