package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/emu"
)

// TestUpForegroundServeFailure: a lab process whose control socket
// cannot be served (here its state file cannot be written: a directory
// stands where it writes it) fails with that error. Serve's failure ends
// the wait for the fabric, and up said the lab was "interrupted (by a
// signal, or by edgefabric down)", hiding the cause. The process runs as
// a daemon (its up, this test, has claimed the name), so that the test
// can put the obstacle in the lab's state directory first.
func TestUpForegroundServeFailure(t *testing.T) {
	bin, name := rootLab(t, "sf")
	labCleanup(t, name)
	if err := emu.ClaimName(name); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(emu.LabDir(name), "state.json.tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// STP on: the fabric is not ready for 2 x 2 s, long after Serve failed.
	cmd := exec.CommandContext(ctx, bin, "up", "line:1", "--scheme", "kernel-bridge", "-p", "forward_delay=2", "--name", name, "--foreground")
	cmd.Env = append(os.Environ(), emu.ReadyFDEnv+"=none") // a daemon, with no pipe to report on
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatal("up --foreground still running after a minute")
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(errOut.String(), "state.json.tmp: is a directory") || strings.Contains(errOut.String(), "interrupted") {
		t.Errorf("up --foreground, state file unwritable: %v, stdout %q, stderr %q; want exit 1 naming the state file's error", err, out.String(), errOut.String())
	}
	if left, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(left), emu.Prefix(name)) {
		t.Errorf("namespaces left:\n%s", left)
	}
}
