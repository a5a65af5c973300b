package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A signal while plan spain is still planning removes the --out
// directory the run made: it was left behind, empty.
func TestPlanOutSignalWhilePlanning(t *testing.T) {
	bin := buildBinary(t)
	parent := t.TempDir()
	out := filepath.Join(parent, "new", "plan")
	cmd := exec.Command(bin, "plan", "spain", "bcube:8,4", "--trials", "1", "--out", out)
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
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Success() {
		t.Fatalf("plan after SIGTERM: %v, want it stopped", err)
	}
	if _, err := os.Stat(filepath.Join(parent, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the --out directories plan made are left: %v", err)
	}
}
