package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// killSpec makes the test binary, acting as edgefabric, die of SIGKILL
// (as the out-of-memory killer kills) when it is to plan one of these
// specs (comma-separated).
const killSpec = "EDGEFABRIC_TEST_KILL_SPEC"

// TestBenchFailedRowFails: a row whose plan fails is reported, and bench
// exits 1, in text and JSON alike; it exited 0, as if every row had been
// measured. A row that times out is still a measurement (exit 0).
func TestBenchFailedRowFails(t *testing.T) {
	t.Setenv(asCLI, "1")
	t.Setenv(killSpec, "fattree:4")
	code, out, errOut := topoCLI("bench", "spain-plan", "--rows", "fattree(4)", "--rows", "testbed", "--json")
	var rep benchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stdout is no report: %v: %q", err, out)
	}
	want := "edgefabric: bench: 1 row failed: FatTree(4) (failed: signal: killed)\n"
	if code != 1 || errOut != want {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, errOut, want)
	}
	for _, r := range rep.Rows {
		ok := r.Status == "ok"
		if ok != (r.Name == "testbed") {
			t.Errorf("%s: status %q", r.Name, r.Status)
		}
	}
	code, out, errOut = topoCLI("bench", "spain-plan", "--rows", "fattree(4)")
	if code != 1 || !strings.Contains(out, "failed: signal: killed") || !strings.HasSuffix(errOut, want) {
		t.Errorf("text: exit %d, stdout %q, stderr %q; want 1, the row's status and %q", code, out, errOut, want)
	}
	// The baseline failing too: one line says both.
	t.Setenv(killSpec, benchBaseline+",fattree:4")
	code, _, errOut = topoCLI("bench", "spain-plan", "--rows", "fattree(4)", "--json")
	want = "edgefabric: bench: baseline fattree:16 failed: signal: killed: no ratios; 1 row failed: FatTree(4) (failed: signal: killed)\n"
	if code != 1 || errOut != want {
		t.Errorf("baseline killed: exit %d, stderr %q; want 1 and %q", code, errOut, want)
	}
}
