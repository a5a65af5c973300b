package main

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Ctrl-C stops a simulator reproduction at once, by the signal's default
// action: the signal context that stops the emulator's reproductions is
// not installed for the others, which do not read it (it swallowed the
// signal, and dumbnet-fig8 ran on for 20 s and exited 0).
func TestReproSimInterruptible(t *testing.T) {
	bin := buildBinary(t)
	cmd := exec.Command(bin, "repro", "dumbnet-fig8", "--quiet")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	t0 := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Success() {
		t.Fatalf("repro dumbnet-fig8 after SIGINT: %v, want it stopped", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("stopped %v after SIGINT", d)
	}
}
