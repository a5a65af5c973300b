package main

import (
	"encoding/json"
	"runtime"
	"testing"
)

// A row's peak RSS is its own process's: Go starts a child with vfork,
// and Linux counts the high-water mark of the memory the child ran in
// before its exec (the bench's) into the child's maxrss, so every row
// smaller than the bench process was reported at the bench's own peak
// (testbed, FatTree(4) and FatTree(8) all at 15.4 MB, where GNU time
// measures 10.2, 10.3 and 12.5).
func TestBenchPeakRSSIsTheChilds(t *testing.T) {
	t.Setenv(asCLI, "1")
	// This process's high-water mark well above any of the rows'.
	const big = 400 << 20
	ballast := make([]byte, big)
	for i := 0; i < len(ballast); i += 4096 {
		ballast[i] = 1
	}
	code, out, errOut := topoCLI("bench", "spain-plan", "--rows", "testbed", "--json")
	runtime.KeepAlive(ballast)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep benchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, r := range append(rep.Baseline, rep.Rows...) {
		if r.PeakRSS <= 0 || r.PeakRSS >= big/2 {
			t.Errorf("%s: peak RSS %d bytes; want the child's own, far below this process's %d", r.Name, r.PeakRSS, big)
		}
	}
}
