package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/emu"
)

// TestStatusWhileConverging: a lab of the stp scheme (802.1D-1998, forward
// delay 4 s: ready 8 s after its bridges start) can be inspected while its
// tree converges: status answers, ready false with the reason, ports
// listening or learning; up returns once it is ready, and status then says
// ready. It used to say "lab X is starting: try again once its up has
// returned" for the whole convergence (30 s with the default timers).
// Then a second lab is taken down while it converges (forward delay 15 s):
// down returns within seconds and up exits 1, stopped before ready.
func TestStatusWhileConverging(t *testing.T) {
	bin, name := rootLab(t, "cvg")
	up := exec.Command(bin, "up", "ring:3", "--scheme", "stp", "-p", "forward_delay=4s", "-p", "max_age=6s", "--name", name)
	var upOut, upErr bytes.Buffer
	up.Stdout, up.Stderr = &upOut, &upErr
	start := time.Now()
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	upDone := make(chan error, 1)
	go func() { upDone <- up.Wait() }()
	var st emu.Status
	seen := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !seen; time.Sleep(100 * time.Millisecond) {
		code, out, _ := labBin(t, bin, false, "", "status", name, "--json")
		if code != 0 {
			continue // still building: no state file yet
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("status --json: %v\n%s", err, out)
		}
		seen = true
	}
	if !seen {
		t.Fatalf("status never answered while up waited (%v)", time.Since(start))
	}
	select {
	case err := <-upDone:
		t.Fatalf("up returned (%v) before status was seen converging:\n%s%s", err, upOut.String(), upErr.String())
	default:
	}
	if st.Ready || st.NotReady == "" {
		t.Errorf("status while converging: ready %v, not_ready %q", st.Ready, st.NotReady)
	}
	converging := 0
	for _, n := range st.Nodes {
		for _, p := range n.Ports {
			if strings.HasPrefix(p.STP, "listening") || strings.HasPrefix(p.STP, "learning") {
				converging++
			}
		}
	}
	if converging == 0 {
		t.Errorf("no port listening or learning while not ready: %+v", st.Nodes)
	}
	t.Logf("converging: %s (%d ports listening or learning)", st.NotReady, converging)
	if err := <-upDone; err != nil {
		t.Fatalf("up: %v\n%s%s", err, upOut.String(), upErr.String())
	}
	code, out, _ := labBin(t, bin, false, "", "status", name, "--json")
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || !st.Ready {
		t.Errorf("status after up: exit %d, %v, ready %v", code, err, st.Ready)
	}
	runBin(t, bin, 0, "down", name)

	// Down while converging.
	name2 := name + "b"
	up = exec.Command(bin, "up", "ring:3", "--scheme", "stp", "--name", name2)
	upOut.Reset()
	upErr.Reset()
	up.Stdout, up.Stderr = &upOut, &upErr
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Cleanup(name2, 10*time.Second) })
	go func() { upDone <- up.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if code, _, _ := labBin(t, bin, false, "", "status", name2, "--json"); code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("status of the second lab never answered")
		}
	}
	t0 := time.Now()
	runBin(t, bin, 0, "down", name2)
	if d := time.Since(t0); d > 15*time.Second {
		t.Errorf("down of a converging lab took %v", d)
	}
	select {
	case err := <-upDone:
		var ee *exec.ExitError
		if err == nil || !(errors.As(err, &ee) && ee.ExitCode() == 1) || !strings.Contains(upErr.String(), "stopped before it was ready") {
			t.Errorf("up of the lab taken down: %v\n%s%s", err, upOut.String(), upErr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("up still waiting 30 s after its lab was taken down")
	}
}
