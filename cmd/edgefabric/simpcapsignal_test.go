package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// longCapture runs for minutes unless stopped (a 1 Gb/s stream for 990
// simulated seconds), capturing h1's NIC alone, which the stream does not
// cross once the switches have learnt: its capture stays small.
const longCapture = `
topology: ring:3
scheme: stp
params: {forward_delay: 4s, max_age: 6s, hello: 1s}
duration: 1000s
captures:
  - {node: h1}
workloads:
  - udp: {from: h3, to: h6, rate: 1Gbps, size: 1472, duration: 990s, at: 9s}
`

// TestSimPcapSignal: a stop signal during sim --pcap removes the capture
// it was writing (a stop left it cut mid-record, or empty: the writer's
// buffer is never flushed) and the directories --pcap made, keeps the
// other files of a directory that was there and an earlier run's capture
// of another name, and dies of the signal.
func TestSimPcapSignal(t *testing.T) {
	t.Setenv(asCLI, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sc := writeFile(t, t.TempDir(), "long.yaml", longCapture)
	for _, c := range []struct {
		name string
		sig  syscall.Signal
		made bool // --pcap names directories that do not exist
	}{
		{"new directory", syscall.SIGTERM, true},
		{"existing directory", syscall.SIGINT, false},
	} {
		parent := t.TempDir()
		caps := filepath.Join(parent, "new", "caps")
		var want []string
		if !c.made {
			caps = parent
			writeFile(t, parent, "notes.txt", "mine\n")
			writeFile(t, parent, "h2-1.pcap", "an earlier run's\n")
			// An earlier run's h1-1.pcap: this run truncates it.
			writeFile(t, parent, "h1-1.pcap", "an earlier run's\n")
			want = []string{"h2-1.pcap", "notes.txt"}
		}
		cmd := exec.Command(exe, "sim", sc, "--pcap", caps)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		// The run has opened its capture (created, or truncated).
		cap1 := filepath.Join(caps, "h1-1.pcap")
		for {
			if fi, err := os.Stat(cap1); err == nil && fi.Size() == 0 {
				break
			}
			select {
			case err := <-exited:
				t.Fatalf("%s: sim ended (%v) before it opened %s", c.name, err, cap1)
			case <-time.After(10 * time.Millisecond):
			}
		}
		cmd.Process.Signal(c.sig)
		err := <-exited
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%s: %v after %v, want it killed", c.name, err, c.sig)
		}
		if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != c.sig {
			t.Errorf("%s: exit status %v, want death by %v", c.name, ws, c.sig)
		}
		if c.made {
			if _, err := os.Stat(filepath.Join(parent, "new")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: the --pcap directories sim made are left: %v", c.name, err)
			}
			continue
		}
		if got := dirNames(t, parent); !slices.Equal(got, want) {
			t.Errorf("%s: left in --pcap %s: %q, want %q", c.name, caps, got, want)
		}
	}
}
