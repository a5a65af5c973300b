package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A signal while plan spain is still planning removes the --out
// directory the run made: it was left behind, empty. SIGTERM kills plan
// as uncaught would; SIGQUIT exits 131 without Go's dump of every
// goroutine, which it printed (and exited 2) before dieOf served it.
func TestPlanOutSignalWhilePlanning(t *testing.T) {
	bin := buildBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGQUIT} {
		parent := t.TempDir()
		out := filepath.Join(parent, "new", "plan")
		cmd := exec.Command(bin, "plan", "spain", "bcube:8,4", "--trials", "1", "--out", out)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, err := os.Stat(out); err == nil {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatal("plan made no --out directory")
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond) // planning
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Success() {
			t.Fatalf("plan after %v: %v, want it stopped", sig, err)
		}
		ws := ee.Sys().(syscall.WaitStatus)
		switch {
		case sig == syscall.SIGQUIT && ee.ExitCode() != 131:
			t.Errorf("plan after SIGQUIT: %v, want exit status 131", err)
		case sig != syscall.SIGQUIT && (!ws.Signaled() || ws.Signal() != sig):
			t.Errorf("plan after %v: %v, want death by it", sig, err)
		}
		if strings.Contains(stderr.String(), "goroutine ") {
			t.Errorf("plan after %v dumped its goroutines:\n%.300s", sig, stderr.String())
		}
		if _, err := os.Stat(filepath.Join(parent, "new")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("after %v the --out directories plan made are left: %v", sig, err)
		}
	}
}
