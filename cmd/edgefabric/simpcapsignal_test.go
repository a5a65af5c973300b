package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// longCapture runs for minutes unless stopped (a 1 Gb/s stream for 990
// simulated seconds, from 9 s, once the tree has converged), capturing
// the stream's source, h3: its capture grows by a 64 KB buffer at a
// time, each flush cut wherever the buffer ended, usually mid-record.
const longCapture = `
topology: ring:3
scheme: stp
params: {forward_delay: 4s, max_age: 6s, hello: 1s}
duration: 1000s
captures:
  - {node: h3}
workloads:
  - udp: {from: h3, to: h6, rate: 1Gbps, size: 1472, duration: 990s, at: 9s}
`

// simDeafEnv makes the test binary, acting as edgefabric, run sim deaf
// to the first stop signal (simDeaf), with the grace the variable holds
// (simStopGrace): a run that does not stop.
const simDeafEnv = "EDGEFABRIC_TEST_SIM_DEAF"

func init() {
	if os.Getenv(asCLI) != "1" || os.Getenv(simDeafEnv) == "" {
		return
	}
	d, err := time.ParseDuration(os.Getenv(simDeafEnv))
	if err != nil {
		panic(err)
	}
	simDeaf, simStopGrace = true, d
}

// checkPcap reads a capture sim left: a nanosecond Ethernet pcap whose
// every record is whole (a header cut short, or a record longer than
// what is left, fails), with tshark too when it is installed. It
// returns the number of records.
func checkPcap(t *testing.T, path string) int {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if len(raw) < 24 || le.Uint32(raw) != 0xa1b23c4d || le.Uint32(raw[20:]) != 1 {
		t.Fatalf("%s: not a nanosecond Ethernet pcap: % x", path, raw[:min(len(raw), 24)])
	}
	n := 0
	for off := 24; off < len(raw); n++ {
		if off+16 > len(raw) {
			t.Fatalf("%s: record %d: header cut at %d of %d bytes", path, n+1, off, len(raw))
		}
		l := int(le.Uint32(raw[off+8:]))
		if off+16+l > len(raw) || l != int(le.Uint32(raw[off+12:])) || l < 14 {
			t.Fatalf("%s: record %d at %d: %d bytes, %d left", path, n+1, off, l, len(raw)-off-16)
		}
		off += 16 + l
	}
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Logf("no tshark: %s checked by the Go reader alone", path)
		return n
	}
	var stderr bytes.Buffer
	cmd := exec.Command(tshark, "-n", "-r", path, "-T", "fields", "-e", "frame.number")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || strings.Contains(stderr.String(), "cut short") {
		t.Fatalf("tshark -r %s: %v\n%s", path, err, stderr.String())
	}
	if got := strings.Count(string(out), "\n"); got != n {
		t.Errorf("%s: tshark reads %d frames, the Go reader %d", path, got, n)
	}
	return n
}

// simChild is sim run as a child process on longCapture.
type simChild struct {
	cmd      *exec.Cmd
	stdout   bytes.Buffer
	stderr   strings.Builder // whole once exited has its value
	stopping chan struct{}   // closed when sim says it is stopping the run
	exited   chan error
}

func startSim(t *testing.T, env []string, args ...string) *simChild {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := &simChild{stopping: make(chan struct{}), exited: make(chan error, 1)}
	c.cmd = exec.Command(exe, append([]string{"sim"}, args...)...)
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stdout = &c.stdout
	errPipe, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(errPipe)
		said := false
		for sc.Scan() {
			c.stderr.WriteString(sc.Text() + "\n")
			if c.stderr.Len() < 4096 {
				t.Logf("sim stderr: %s", sc.Text())
			}
			if !said && strings.Contains(sc.Text(), "stopping the run at the next event") {
				said = true
				close(c.stopping)
			}
		}
		io.Copy(io.Discard, errPipe)
	}()
	go func() {
		<-scanned // Wait closes the pipe: read it all first
		c.exited <- c.cmd.Wait()
	}()
	t.Cleanup(func() {
		c.cmd.Process.Kill() // a test that failed early left it running
		<-scanned
	})
	return c
}

// waitFlushed waits until the run's capture has been opened and its
// buffer written out at least once (the stream is running), or fails
// when sim ends first.
func (c *simChild) waitFlushed(t *testing.T, path string) {
	t.Helper()
	for {
		if fi, err := os.Stat(path); err == nil && fi.Size() > 24 {
			return
		}
		select {
		case err := <-c.exited:
			t.Fatalf("sim ended (%v) before it wrote %s", err, path)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestSimPcapSignal: a stop signal during sim --pcap stops the run at the
// next event: the captures are flushed and closed, whole pcaps that
// tshark reads; the report, text or JSON, says the run was interrupted
// and when; other files of the directory are left alone, and sim exits
// with 128 + the signal. A stop used to remove the captures and print
// nothing: the writers belonged to the simulator's loop, which read no
// signal, and Sim.Stop could not be called from another goroutine.
func TestSimPcapSignal(t *testing.T) {
	t.Setenv(asCLI, "1")
	sc := writeFile(t, t.TempDir(), "long.yaml", longCapture)
	for _, c := range []struct {
		name string
		sig  syscall.Signal
		made bool // --pcap names directories that do not exist
		json bool
	}{
		{"new directory", syscall.SIGTERM, true, false},
		{"existing directory, json", syscall.SIGINT, false, true},
	} {
		parent := t.TempDir()
		caps := filepath.Join(parent, "new", "caps")
		want := []string{"h3-1.pcap"}
		if !c.made {
			caps = parent
			writeFile(t, parent, "notes.txt", "mine\n")
			writeFile(t, parent, "h2-1.pcap", "an earlier run's\n")
			// An earlier run's h3-1.pcap: this run truncates it.
			writeFile(t, parent, "h3-1.pcap", "an earlier run's\n")
			want = []string{"h2-1.pcap", "h3-1.pcap", "notes.txt"}
		}
		args := []string{sc, "--pcap", caps}
		if c.json {
			args = append(args, "--json")
		}
		ch := startSim(t, nil, args...)
		cap3 := filepath.Join(caps, "h3-1.pcap")
		ch.waitFlushed(t, cap3)
		ch.cmd.Process.Signal(c.sig)
		err := <-ch.exited
		// It dies of the signal after printing, so that a shell loop
		// running it stops too.
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%s: sim ended with %v after %v, want death by it", c.name, err, c.sig)
		}
		if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != c.sig {
			t.Fatalf("%s: sim ended with %v after %v, want death by it", c.name, err, c.sig)
		}
		if got := dirNames(t, caps); !slices.Equal(got, want) {
			t.Errorf("%s: left in --pcap %s: %q, want %q", c.name, caps, got, want)
		}
		if !c.made {
			if b, _ := os.ReadFile(filepath.Join(parent, "h2-1.pcap")); string(b) != "an earlier run's\n" {
				t.Errorf("%s: another capture's file changed: %q", c.name, b)
			}
		}
		if n := checkPcap(t, cap3); n == 0 {
			t.Errorf("%s: %s holds no frame", c.name, cap3)
		}
		out := ch.stdout.String()
		if c.json {
			var res struct {
				Interrupted bool     `json:"interrupted"`
				SimulatedS  float64  `json:"simulated_s"`
				DurationS   float64  `json:"duration_s"`
				Captures    []string `json:"captures"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%s: %v\n%s", c.name, err, out)
			}
			if !res.Interrupted || res.SimulatedS < 9 || res.SimulatedS >= res.DurationS || !slices.Equal(res.Captures, []string{cap3}) {
				t.Errorf("%s: interrupted %v at %gs of %gs, captures %q; want interrupted after 9s, %s",
					c.name, res.Interrupted, res.SimulatedS, res.DurationS, res.Captures, cap3)
			}
		} else if !strings.Contains(out, "\ninterrupted at simulated time ") || !strings.Contains(out, "s of 1000s simulated") ||
			!strings.Contains(out, "capture: "+cap3+"\n") || !strings.Contains(out, "\ntrace_hash ") {
			t.Errorf("%s: report does not say it was interrupted:\n%s", c.name, out)
		}
	}
}

// TestSimPcapSignalAbort: a second signal, or a run that has not stopped
// within simStopGrace of the first (one deaf to it: simDeaf), ends sim at
// once as a stop did before the run could be stopped: the captures it
// was writing, cut mid-record, are removed, and the directories --pcap
// made; the other files of a directory that was there and an earlier
// run's capture of another name are kept; sim dies of the signal.
func TestSimPcapSignalAbort(t *testing.T) {
	t.Setenv(asCLI, "1")
	sc := writeFile(t, t.TempDir(), "long.yaml", longCapture)
	for _, c := range []struct {
		name   string
		first  syscall.Signal
		second syscall.Signal // 0: none, the grace runs out
		made   bool
	}{
		{"second signal, new directory", syscall.SIGINT, syscall.SIGTERM, true},
		{"grace over, existing directory", syscall.SIGTERM, 0, false},
	} {
		parent := t.TempDir()
		caps := filepath.Join(parent, "new", "caps")
		var want []string
		if !c.made {
			caps = parent
			writeFile(t, parent, "notes.txt", "mine\n")
			writeFile(t, parent, "h2-1.pcap", "an earlier run's\n")
			writeFile(t, parent, "h3-1.pcap", "an earlier run's\n")
			want = []string{"h2-1.pcap", "notes.txt"}
		}
		grace := "1h"
		if c.second == 0 {
			grace = "100ms"
		}
		ch := startSim(t, []string{simDeafEnv + "=" + grace}, sc, "--pcap", caps)
		ch.waitFlushed(t, filepath.Join(caps, "h3-1.pcap"))
		ch.cmd.Process.Signal(c.first)
		dies := c.first
		if c.second != 0 {
			select {
			case <-ch.stopping:
			case err := <-ch.exited:
				t.Fatalf("%s: sim ended (%v) before it said it was stopping", c.name, err)
			}
			ch.cmd.Process.Signal(c.second)
			dies = c.second
		}
		err := <-ch.exited
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%s: %v, want sim killed", c.name, err)
		}
		if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != dies {
			t.Errorf("%s: exit status %v, want death by %v", c.name, ws, dies)
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

// TestSimSignalAbortQuit: a SIGQUIT that ends sim at once (after a first
// signal, or as the first, once the grace is over) removes what the run
// was writing and exits 131, as the SIGQUIT of an interrupted run does:
// dieOf handed it back to Go, whose own SIGQUIT printed every goroutine's
// stack (hundreds of lines on stderr) and exited 2.
func TestSimSignalAbortQuit(t *testing.T) {
	t.Setenv(asCLI, "1")
	sc := writeFile(t, t.TempDir(), "long.yaml", longCapture)
	for _, c := range []struct {
		name  string
		first syscall.Signal
		grace string
	}{
		{"SIGINT then SIGQUIT", syscall.SIGINT, "1h"},
		{"SIGQUIT, grace over", syscall.SIGQUIT, "100ms"},
	} {
		parent := t.TempDir()
		caps := filepath.Join(parent, "new", "caps")
		ch := startSim(t, []string{simDeafEnv + "=" + c.grace}, sc, "--pcap", caps)
		ch.waitFlushed(t, filepath.Join(caps, "h3-1.pcap"))
		ch.cmd.Process.Signal(c.first)
		if c.first != syscall.SIGQUIT {
			select {
			case <-ch.stopping:
			case err := <-ch.exited:
				t.Fatalf("%s: sim ended (%v) before it said it was stopping", c.name, err)
			}
			ch.cmd.Process.Signal(syscall.SIGQUIT)
		}
		err := <-ch.exited
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 131 || strings.Contains(ch.stderr.String(), "goroutine ") {
			t.Errorf("%s: sim ended with %v, want exit 131 and no goroutine dump; stderr:\n%.600s", c.name, err, ch.stderr.String())
		}
		if _, err := os.Stat(filepath.Join(parent, "new")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the --pcap directories sim made are left: %v", c.name, err)
		}
	}
}
