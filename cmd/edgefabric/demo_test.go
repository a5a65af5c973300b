package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/emu"
	"github.com/edgefabric/edgefabric/internal/testenv"
)

// TestDemoBadInput: a topology the demo cannot run on is bad input, exit 2
// with one line, before anything starts (it once exited 1).
func TestDemoBadInput(t *testing.T) {
	// Two switches, a host on each, nothing between them: the pings
	// would fail and the run stop without a report.
	disc := filepath.Join(t.TempDir(), "disc.yaml")
	if err := os.WriteFile(disc, []byte("nodes:\n  - {name: s1, kind: switch}\n  - {name: s2, kind: switch}\n  - {name: h1, kind: host}\n  - {name: h2, kind: host}\nlinks:\n  - [h1, s1]\n  - [h2, s2]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		topology, want string
	}{
		{"fattree:3", "edgefabric: topo: spec \"fattree:3\": p: bad value: must be even and at least 2, got 3\n"},
		{"bcube:2,1", "edgefabric: dumbnet: host \"h1\" relays traffic (BCube); DumbNet forwards only in switches\n"},
		{"line:1", "edgefabric: demo: line:1 has no switch-to-switch link between h1 and h2 to fail\n"},
		{disc, "edgefabric: demo: " + disc + " is not connected: some hosts cannot reach each other\n"},
		{"", "edgefabric: --topology: empty value (leave the flag out for its default; see 'edgefabric demo --help')\n"},
	}
	for _, c := range cases {
		code, out, errOut := topoCLI("demo", "--engine", "sim", "-q", "--topology", c.topology)
		if code != 2 || out != "" || errOut != c.want {
			t.Errorf("%s: exit %d, stdout %q, stderr\n got  %q\n want %q", c.topology, code, out, errOut, c.want)
		}
	}
	if code, _, errOut := topoCLI("demo", "--engine", "warp"); code != 2 || errOut != "edgefabric: --engine \"warp\": want emu or sim\n" {
		t.Errorf("--engine warp: exit %d, %q", code, errOut)
	}
}

// TestDemoFailedChecksExitOne: a demo that runs but finds the fabric
// failing a check prints its report and exits 1. On line:2 the failed link
// is the only one between the two switches, so the bulk transfer never
// recovers.
func TestDemoFailedChecksExitOne(t *testing.T) {
	for _, args := range [][]string{nil, {"--json"}} {
		code, out, errOut := topoCLI(append([]string{"demo", "--engine", "sim", "-q", "--topology", "line:2"}, args...)...)
		if code != 1 || errOut != "edgefabric: demo: the fabric did not pass every check (see the report)\n" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
		if !strings.Contains(out, "recovered: false") && !strings.Contains(out, `"recovered": false`) {
			t.Errorf("%v: the report does not show the failed recovery:\n%s", args, out)
		}
	}
}

// TestDemoLabInUse: demo --name of a lab that runs exits 2 with one line
// and leaves the lab alone; it once tore the lab down as "leftovers of an
// earlier lab", ran, and exited 0. The lab is a state directory whose
// owner is this process, as emu.Up in a test writes it.
func TestDemoLabInUse(t *testing.T) {
	if err := emu.CheckRoot(os.Geteuid()); err != nil {
		t.Skipf("skipping: %v", err)
	}
	testenv.NeedTools(t, "ping", "iperf3")
	name := fmt.Sprintf("rd%d", os.Getpid())
	fakeLab(t, name, map[string]any{"pid": os.Getpid()}, nil)
	code, out, errOut := topoCLI("demo", "-q", "--name", name, "--engine", "emu", "--topology", "leafspine:2,2,1")
	want := fmt.Sprintf("edgefabric: demo: lab %s is running (pid %d): choose another --name or run 'edgefabric down %s'\n", name, os.Getpid(), name)
	if code != 2 || out != "" || errOut != want {
		t.Errorf("exit %d, stdout %q, stderr\n got  %q\n want %q", code, out, errOut, want)
	}
	if pid, alive := emu.Owner(name); pid != os.Getpid() || !alive {
		t.Errorf("the lab lost its owner: %d, %v", pid, alive)
	}
}
