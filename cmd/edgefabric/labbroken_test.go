package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/emu"
)

// brokenMsg is the error exec and status give for a broken lab.
func brokenMsg(name string, pid int, gone string) string {
	return fmt.Sprintf("edgefabric: lab %s is broken: %s while process %d still runs it (removed outside edgefabric?): run 'edgefabric down %s' to remove the rest\n", name, gone, pid, name)
}

// TestLabBrokenFake: exec refuses a lab whose owner runs but whose
// namespaces are gone (here never made: a state directory this test
// writes, owned by this process) as broken, exit 1; it failed with
// "namespace ...: no such file or directory". Its status is what its
// owner's is (no daemon answers here: the process runs it without one).
func TestLabBrokenFake(t *testing.T) {
	if err := emu.CheckRoot(os.Geteuid()); err != nil {
		t.Skipf("skipping: %v", err)
	}
	name := fmt.Sprintf("rbk%d", os.Getpid()%1000000)
	st := emu.State{Name: name, Scheme: "stp", Topology: "line:1", Pid: os.Getpid(), PidStart: 1, Prefix: emu.Prefix(name)}
	for _, n := range []string{"s1", "h1", "h2"} {
		st.Nodes = append(st.Nodes, emu.StateNode{Name: n, Kind: "host", Namespace: emu.Prefix(name) + n})
	}
	fakeLab(t, name, map[string]any{"pid": os.Getpid()}, st)
	want := brokenMsg(name, os.Getpid(), "the namespaces of all its 3 nodes are gone")
	if code, out, errOut := topoCLI("exec", name, "h1", "--", "true"); code != 1 || out != "" || errOut != want {
		t.Errorf("exec: exit %d, stdout %q, stderr\n got  %q\n want %q", code, out, errOut, want)
	}
	code, out, _ := topoCLI("status")
	line := fmt.Sprintf("%s\trunning in process %d, no daemon", name, os.Getpid())
	if code != 0 || !slices.Contains(strings.Split(out, "\n"), line) {
		t.Errorf("status: exit %d, no line %q in\n%s", code, line, out)
	}
}

// TestLabBrokenReal: on a real lab, exec and status judge it by its
// daemon, not by owner.json alone (with that file gone exec called the
// running lab crashed), and a namespace removed under the running lab
// makes it broken for exec and status (status said ready, exec failed
// with "no such file or directory"); down still removes it all.
func TestLabBrokenReal(t *testing.T) {
	bin, name := rootLab(t, "lb")
	labCleanup(t, name)
	ef := func(wantCode int, args ...string) (string, string) {
		t.Helper()
		code, out, errOut := labBin(t, bin, false, "", args...)
		if code != wantCode {
			t.Errorf("edgefabric %v: exit %d, want %d\n%s%s", args, code, wantCode, out, errOut)
		}
		return out, errOut
	}
	if code, out, errOut := labBin(t, bin, false, "", "up", "line:1", "--scheme", "kernel-bridge", "-p", "stp=off", "--name", name); code != 0 {
		t.Fatalf("up: exit %d\n%s%s", code, out, errOut)
	}
	st, err := emu.ReadState(name)
	if err != nil {
		t.Fatal(err)
	}

	// The owner record gone, the daemon runs: the lab runs.
	if err := os.Remove(filepath.Join(emu.LabDir(name), "owner.json")); err != nil {
		t.Fatal(err)
	}
	if out, errOut := ef(0, "exec", name, "h1", "--", "echo", "in"); out != "in\n" || errOut != "" {
		t.Errorf("exec without owner.json: stdout %q, stderr %q", out, errOut)
	}
	if out, _ := ef(0, "status"); !slices.Contains(strings.Split(out, "\n"), fmt.Sprintf("%s\trunning (pid %d)", name, st.Pid)) {
		t.Errorf("status without owner.json: %s not running (pid %d) in\n%s", name, st.Pid, out)
	}

	// h1's namespace removed under the running lab.
	ns := emu.Prefix(name) + "h1"
	if out, err := exec.Command("ip", "netns", "delete", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns delete %s: %v\n%s", ns, err, out)
	}
	want := brokenMsg(name, st.Pid, "the namespace of node h1 ("+ns+") is gone")
	if out, errOut := ef(1, "exec", name, "h2", "--", "echo", "in"); out != "" || errOut != want {
		t.Errorf("exec in a broken lab: stdout %q, stderr\n got  %q\n want %q", out, errOut, want)
	}
	// status prints what the daemon says, then that the lab is broken.
	if out, errOut := ef(1, "status", name); !strings.HasPrefix(out, "lab "+name+": scheme kernel-bridge") || errOut != want {
		t.Errorf("status of a broken lab: stdout %q, stderr\n got  %q\n want %q", out, errOut, want)
	}
	out, errOut := ef(1, "status", name, "--json")
	var s emu.Status
	if err := json.Unmarshal([]byte(out), &s); err != nil || s.Name != name || errOut != want {
		t.Errorf("status --json of a broken lab: %v, stdout %q, stderr\n got  %q\n want %q", err, out, errOut, want)
	}
	line := fmt.Sprintf("%s\tbroken (process %d): the namespace of node h1 (%s) is gone: run 'edgefabric down %s'", name, st.Pid, ns, name)
	if out, _ := ef(0, "status"); !slices.Contains(strings.Split(out, "\n"), line) {
		t.Errorf("status: no line %q in\n%s", line, out)
	}
	out, _ = ef(0, "status", "--json")
	var list []labEntry
	entry := labEntry{Name: name, State: "broken", Pid: st.Pid, Gone: []string{"h1"}}
	if err := json.Unmarshal([]byte(out), &list); err != nil || !slices.ContainsFunc(list, func(e labEntry) bool { return reflect.DeepEqual(e, entry) }) {
		t.Errorf("status --json: %v, no entry %+v in\n%s", err, entry, out)
	}
	ef(0, "down", name)
}
