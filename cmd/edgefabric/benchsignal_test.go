package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	var kids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at its end.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			kids = append(kids, n)
		}
	}
	return kids
}

// SIGTERM (or Ctrl-C) during a bench stops the row it is measuring and
// removes the row's plan file: the child plan ran on alone for up to
// --timeout, and its temporary file stayed in $TMPDIR.
func TestBenchSignalStopsChild(t *testing.T) {
	bin := buildBinary(t)
	tmp := t.TempDir()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := exec.Command(bin, "bench", "spain-plan", "--rows", "fattree(4)", "--trials", "5000", "--json")
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var kids []int
		for deadline := time.Now().Add(10 * time.Second); len(kids) == 0 && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
			kids = childrenOf(cmd.Process.Pid)
		}
		if len(kids) == 0 {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("bench started no child")
		}
		time.Sleep(300 * time.Millisecond)
		cmd.Process.Signal(sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("%v: bench still running 10 s after the signal", sig)
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "interrupted") {
			t.Errorf("%v: %v, stdout %q, stderr %q; want exit 1, nothing on stdout, and 'interrupted'", sig, err, stdout.String(), stderr.String())
		}
		for _, k := range kids {
			gone := false
			for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(k))); err != nil {
					gone = true
					break
				}
			}
			if !gone {
				syscall.Kill(k, syscall.SIGKILL)
				t.Errorf("%v: the row's process %d outlived bench", sig, k)
			}
		}
		if left, _ := filepath.Glob(filepath.Join(tmp, "edgefabric-bench-*")); len(left) > 0 {
			t.Errorf("%v: left behind %v", sig, left)
			for _, f := range left {
				os.Remove(f)
			}
		}
	}
}
