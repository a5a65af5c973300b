package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/emu"
)

// nsCount counts the namespaces of lab name.
func nsCount(name string) int {
	out, _ := exec.Command("ip", "netns", "list").Output()
	return strings.Count(string(out), emu.Prefix(name))
}

// TestDownStopsBuildingOwner: down of a lab whose up --foreground is still
// waiting for it (here: 30 s for STP) stops that process, which removes
// what it built and says it was interrupted, instead of tearing the lab
// down under it and leaving it running: it went on for its whole timeout,
// then removed by name whatever lab had taken the name since. The lab
// answers its control socket once built (status while STP converges), so
// down asks it to stop as it asks a running lab.
func TestDownStopsBuildingOwner(t *testing.T) {
	bin, name := rootLab(t, "bo")
	labCleanup(t, name)
	up := startForeground(t, bin, func(string) bool { return nsCount(name) > 0 },
		"up", "ring:3", "--scheme", "stp", "--name", name, "--foreground", "--timeout", "50s")
	time.Sleep(200 * time.Millisecond) // well inside STP's 30 s
	code, out, errOut := labBin(t, bin, false, "", "down", name)
	want := fmt.Sprintf("lab %s: process %d, which ran it, stopped\n", name, up.cmd.Process.Pid)
	if code != 0 || !strings.HasPrefix(out, want) || !strings.HasSuffix(out, "lab "+name+" removed\n") || errOut != "" {
		t.Errorf("down: exit %d, stderr %q, stdout\n%s\nwant it to begin %q", code, errOut, out, want)
	}
	select {
	case <-up.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("up --foreground still running 10 s after down")
	}
	if !strings.Contains(up.stderr.String(), "interrupted") {
		t.Errorf("up --foreground stderr %q: want it to say it was interrupted", up.stderr.String())
	}
	if n := nsCount(name); n != 0 {
		t.Errorf("%d namespaces of %s left", n, name)
	}
}

// TestDownRacingUp: a down started right beside an up either finds no lab
// (exit 2) and leaves the lab up builds whole, or stops it: never does it
// report the lab removed while the lab comes up anyway, without its state
// directory (it did, about one time in six, when it tore down the lab of
// an up still spawning its daemon).
func TestDownRacingUp(t *testing.T) {
	bin, name := rootLab(t, "dr")
	labCleanup(t, name)
	for i := range 6 {
		var wg sync.WaitGroup
		var upCode int
		var upOut, upErr string
		wg.Add(1)
		go func() {
			defer wg.Done()
			upCode, upOut, upErr = labBin(t, bin, false, "", "up", "line:1", "--scheme", "kernel-bridge", "-p", "stp=off", "--name", name)
		}()
		time.Sleep(time.Duration(i) * 8 * time.Millisecond)
		downCode, downOut, downErr := labBin(t, bin, false, "", "down", name)
		wg.Wait()
		t.Logf("round %d: up exit %d, down exit %d: %s", i, upCode, downCode, strings.TrimSpace(downOut+downErr))
		labs, _ := emu.Labs()
		up := contains(labs, name)
		switch {
		case up && downCode == 0:
			t.Errorf("round %d: down said\n%s%sbut the lab is up (up: exit %d %s%s)", i, downOut, downErr, upCode, upOut, upErr)
		case up:
			st, err := emu.RemoteStatus(name)
			if err != nil || !st.Ready {
				t.Errorf("round %d: lab up after a down that found none, but status: %v", i, err)
			}
		case nsCount(name) != 0:
			t.Errorf("round %d: no lab, but %d namespaces", i, nsCount(name))
		}
		if up {
			if code, out, errOut := labBin(t, bin, false, "", "down", name); code != 0 {
				t.Fatalf("round %d: down: exit %d %s%s", i, code, out, errOut)
			}
		}
	}
}

// TestCommandOwnedLab: a lab an edgefabric command runs without a daemon
// (a demo; an up --foreground still starting) is told as such by status
// and exec, not with the Go call that works from its own process; down
// stops that process with SIGTERM. The command is a sleep this test
// starts, with the owner record such a command writes.
func TestCommandOwnedLab(t *testing.T) {
	if err := emu.CheckRoot(os.Geteuid()); err != nil {
		t.Skipf("skipping: %v", err)
	}
	name := fmt.Sprintf("co%d", os.Getpid())
	cmd := startChild(t, "sleep", "600")
	pid := cmd.Process.Pid
	fakeLab(t, name, map[string]any{"pid": pid, "stops_on_term": true}, nil)
	for verb, args := range map[string][]string{"status": {"status", name}, "exec": {"exec", name, "h1", "--", "true"}} {
		code, out, errOut := topoCLI(args...)
		want := fmt.Sprintf("edgefabric: lab %s is run by edgefabric process %d without a daemon (a demo, or an up --foreground still starting): %s works on it once an up --foreground is ready; a demo's lab is its own ('edgefabric down %s' stops it)\n", name, pid, verb, name)
		if code != 1 || out != "" || errOut != want {
			t.Errorf("%s: exit %d, stdout %q, stderr\n got  %q\n want %q", verb, code, out, errOut, want)
		}
	}
	bin := buildBinary(t)
	code, out, errOut := labBin(t, bin, false, "", "down", name)
	want := fmt.Sprintf("lab %s: process %d, still building it, stopped\nlab %s removed\n", name, pid, name)
	if code != 0 || out != want || errOut != "" {
		t.Errorf("down: exit %d, stderr %q, stdout\n got  %q\n want %q", code, errOut, out, want)
	}
}

// TestUpTimeoutNotReady: an up whose --timeout ends before the fabric is
// ready (STP forwards after 30 s) says the fabric was not ready, with the
// hint to wait longer, and removes what it built. It said "stopped
// before it was ready: interrupted (by a signal, or by edgefabric down)",
// since the control socket's server, stopped on the way out, ended the
// wait the way a down request does (found in review).
func TestUpTimeoutNotReady(t *testing.T) {
	bin, name := rootLab(t, "ut")
	labCleanup(t, name)
	for _, fg := range []bool{false, true} {
		args := []string{"up", "ring:3", "--scheme", "stp", "--name", name, "--timeout", "3s"}
		if fg {
			args = append(args, "--foreground")
		}
		code, out, errOut := labBin(t, bin, false, "", args...)
		if code != 1 || !strings.Contains(errOut, "fabric not ready after 3s") || !strings.Contains(errOut, "give --timeout above that") ||
			strings.Contains(errOut, "interrupted") {
			t.Errorf("foreground %v: exit %d, stdout %q, stderr %q; want exit 1 and the not-ready error with its hint", fg, code, out, errOut)
		}
		if n := nsCount(name); n != 0 {
			t.Errorf("foreground %v: %d namespaces of %s left", fg, n, name)
		}
	}
}
