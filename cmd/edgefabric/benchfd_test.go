package main

import (
	"os"
	"strconv"
	"testing"
)

// TestBenchPeakFDOnlyAPipe: EDGEFABRIC_BENCH_PEAK_FD set by hand (or
// inherited) in a run whose descriptor of that number is something else
// made the run write its peak RSS into it, and close it: here a file.
// Only a pipe, as bench gives, is written to.
func TestBenchPeakFDOnlyAPipe(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "fd")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	t.Setenv(benchPeakEnv, strconv.Itoa(int(f.Fd())))
	reportPeakRSS()
	if _, err := f.WriteString("x"); err != nil {
		t.Fatalf("the descriptor was closed: %v", err)
	}
	if b, _ := os.ReadFile(f.Name()); string(b) != "x" {
		t.Fatalf("the file holds %q: the peak RSS was written into an unrelated descriptor", b)
	}
}
