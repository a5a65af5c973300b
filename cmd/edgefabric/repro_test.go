package main

import (
	"strings"
	"testing"
)

func TestReproSpainRows(t *testing.T) {
	code, out, errOut := topoCLI("repro", "spain-table3", "--rows", "fattree(4)", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "FatTree(4)") || !strings.Contains(out, "37.50  37.50") {
		t.Fatalf("output:\n%s", out)
	}
}

func TestReproBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"repro", "nope"},
		{"repro"},
		{"repro", "spain-table3", "--rows", "nosuchrow"},
		{"repro", "spain-table2", "--frobnicate"},
		{"repro", "spain-table2", "--ties", "sorted"},
		{"repro", "spain-table2", "--out", "/dev/null"},
		{"repro", "spain-table2", "--slow-trials", "0"},
		{"repro", "spain-table2", "--slow-trials", "10001"},
		{"repro", "spain-table2", "--slow-trials", "ten"},
	} {
		if code, _, errOut := topoCLI(args...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}
