package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Findings of a new user's review of plan spain (and the flag errors every
// command shares), each pinned.

// TestFlagErrorsArePlain: a number or duration flag that does not parse
// says what it wants, not what Go's parser said (strconv.ParseUint:
// parsing "abc": invalid syntax); exit 2.
func TestFlagErrorsArePlain(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "spain", "fattree:4", "--seed", "abc"}, `edgefabric: --seed "abc": want a whole number, 0 or more (see 'edgefabric plan spain --help')` + "\n"},
		{[]string{"plan", "spain", "fattree:4", "--trials", "1e2"}, `edgefabric: --trials "1e2": want a whole number (see 'edgefabric plan spain --help')` + "\n"},
		{[]string{"plan", "spain", "fattree:4", "--fail-prob", "often"}, `edgefabric: --fail-prob "often": want a number (see 'edgefabric plan spain --help')` + "\n"},
		{[]string{"plan", "spain", "fattree:4", "--seed", "99999999999999999999"}, `edgefabric: --seed "99999999999999999999": out of range (see 'edgefabric plan spain --help')` + "\n"},
		{[]string{"repro", "spain-table3", "--slow-trials", ""}, `edgefabric: --slow-trials "": want a whole number (see 'edgefabric repro --help')` + "\n"},
		{[]string{"down", "x", "--timeout", "5"}, `edgefabric: --timeout "5": want a duration such as 30s, 500ms or 2m (see 'edgefabric down --help')` + "\n"},
		{[]string{"down", "x", "--timeout", "99999999999h"}, `edgefabric: --timeout "99999999999h": out of range (see 'edgefabric down --help')` + "\n"},
		{[]string{"down", "x", "--timeout", "1.5.5s"}, `edgefabric: --timeout "1.5.5s": want a duration such as 30s, 500ms or 2m (see 'edgefabric down --help')` + "\n"},
		{[]string{"plan", "spain", "fattree:4", "--k", "-99999999999999999999"}, "edgefabric: --k -99999999999999999999: path-set size k must be at least 1\n"},
	} {
		code, out, errOut := topoCLI(c.args...)
		if code != 2 || out != "" || errOut != c.want {
			t.Errorf("%q: exit %d, stdout %q, stderr\n got  %q\n want %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestPlanReviewRefusals: --no-prune beside --serial would change
// nothing (refused like --paths without --out); a spec without hosts is
// told to give it hosts, not advice about lab files.
func TestPlanReviewRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "spain", "fattree:4", "--serial", "--no-prune"}, "edgefabric: --no-prune: --serial never prunes (it is Algorithm 2 as published): give one of the two\n"},
		{[]string{"plan", "spain", "fattree:4", "--skip-vlans", "1-3"}, "edgefabric: --skip-vlans 1: only IDs 2 to 4094 can be skipped (VLAN 1 is the default tree; 802.1Q reserves 0 and 4095)\n"},
		{[]string{"plan", "spain", "fattree:4", "--skip-vlans", "2..5"}, "edgefabric: --skip-vlans \"2..5\": want IDs and ranges such as 1002-1005,4000\n"},
		{[]string{"plan", "spain", "fattree:4", "--skip-vlans", "2,,3"}, "edgefabric: --skip-vlans \"2,,3\": an empty item between commas\n"},
		{[]string{"plan", "spain", "fattree:4", "--skip-vlans", "2,"}, "edgefabric: --skip-vlans \"2,\": an empty item between commas\n"},
		{[]string{"plan", "spain", "fattree:4", "--skip-vlans", " "}, "edgefabric: --skip-vlans \" \": empty: want IDs and ranges such as 1002-1005,4000\n"},
		{[]string{"plan", "spain", "fattree:4", "--skip-vlans", "2-4092", "--trials", "1"}, "edgefabric: plan: fattree:4: fabric cannot be covered within the 4094 usable VLAN IDs: the plan needs 4 VLANs, and skipping 4091 IDs leaves 3; skip fewer, lower --k or split the fabric into several SPAIN domains\n"},
		{[]string{"plan", "spain", "hyperx:3,0"}, "edgefabric: plan: paths: \"hyperx:3,0\": topology has no hosts (SPAIN plans paths between switches with hosts: give the spec hosts per switch, see 'edgefabric topo list')\n"},
	} {
		code, out, errOut := topoCLI(c.args...)
		if code != 2 || out != "" || errOut != c.want {
			t.Errorf("%q: exit %d, stdout %q, stderr\n got  %q\n want %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestPlanNoPairsNote: a plan with no pair of edge nodes is not an error,
// but stderr says that nothing was planned; for a containerlab file whose
// dual-homed servers became switches, it says how to mark them.
func TestPlanNoPairsNote(t *testing.T) {
	dir := t.TempDir()
	clab := filepath.Join(dir, "dh.clab.yml")
	os.WriteFile(clab, []byte(`name: dh
topology:
  nodes:
    tor1: {kind: ceos}
    tor2: {kind: ceos}
    srv1: {kind: linux}
    srv2: {kind: linux}
  links:
    - endpoints: ["tor1:eth1", "tor2:eth1"]
    - endpoints: ["tor1:eth2", "srv1:eth1"]
    - endpoints: ["tor2:eth2", "srv1:eth2"]
    - endpoints: ["tor1:eth3", "srv2:eth1"]
`), 0o644)
	code, out, errOut := topoCLI("plan", "spain", clab, "--json")
	want := "edgefabric: note: dh has 1 edge node with hosts: no pair to plan paths for, VLAN 1 is the whole plan; in a containerlab file a linux node cabled more than once is a switch: label dual-homed servers edgefabric.kind: host\n"
	if code != 0 || errOut != want || !strings.Contains(out, `"pairs": 0`) {
		t.Errorf("exit %d, stderr\n got  %q\n want %q\nstdout %.200s", code, errOut, want, out)
	}
	if code, _, errOut := topoCLI("plan", "spain", "fattree:4", "--trials", "1"); code != 0 || errOut != "" {
		t.Errorf("fattree:4: exit %d, stderr %q; want no note", code, errOut)
	}
}

// TestPlanSkipVLANsSummary: the summary names the IDs used and skipped,
// and the most VLANs one switch holds.
func TestPlanSkipVLANsSummary(t *testing.T) {
	code, out, errOut := topoCLI("plan", "spain", "fattree:4", "--trials", "1", "--skip-vlans", "2,4")
	if code != 0 || errOut != "" || !strings.Contains(out, "\n  VLAN IDs          1,3,5-6 (skipping 2,4)\n") || !strings.Contains(out, "; at most 4 on one switch (") {
		t.Errorf("exit %d, stderr %q, stdout\n%s", code, errOut, out)
	}
}
