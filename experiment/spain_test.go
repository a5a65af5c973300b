package experiment

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSpainTable3Rows(t *testing.T) {
	rep, err := SpainTable3(Options{Rows: []string{"fattree(4)", "fattree(8)", "bcube(8,2)"}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 3 {
		t.Fatalf("%d rows", len(rep.Rows))
	}
	want := map[string][3]float64{ // cov STP, cov SPAIN, VLANs
		"FatTree(4)": {37.5, 100, 4}, "FatTree(8)": {15.625, 100, 16}, "BCube(8,2)": {56.25, 100, 15},
	}
	for _, r := range rep.Rows {
		w := want[r.Name]
		if *r.Values["cov_stp"].Ours != w[0] || *r.Values["cov_spain"].Ours != w[1] || *r.Values["vlans"].Ours != w[2] {
			t.Errorf("%s: %v %v %v, want %v", r.Name, *r.Values["cov_stp"].Ours, *r.Values["cov_spain"].Ours, *r.Values["vlans"].Ours, w)
		}
		if g := *r.Values["gain_alpha"].Ours; g < 1 {
			t.Errorf("%s: SPAIN slower than STP: gain %v", r.Name, g)
		}
	}
	dir := t.TempDir()
	if err := rep.Write(dir); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".json", ".md", ".svg"} {
		b, err := os.ReadFile(filepath.Join(dir, "spain-table3"+ext))
		if err != nil || len(b) == 0 {
			t.Fatalf("%s: %v", ext, err)
		}
	}
	var back Report
	b, _ := os.ReadFile(filepath.Join(dir, "spain-table3.json"))
	if err := json.Unmarshal(b, &back); err != nil || len(back.Rows) != 3 {
		t.Fatalf("json round trip: %v", err)
	}
	if !strings.Contains(rep.Text(), "FatTree(8)") || !strings.HasPrefix(rep.SVG(), "<svg") {
		t.Fatal("renderers")
	}
}

func TestSpainTable2Small(t *testing.T) {
	rep, err := SpainTable2(Options{Rows: []string{"testbed", "bcube(3,2)"}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The parallel packer reaches the optimum on the testbed and packs
	// our BCube(3,2) path set below the paper's optimum (pruning; see
	// docs/spain-plan.md).
	want := map[string]float64{"testbed": 4, "BCube(3,2)": 5}
	for _, r := range rep.Rows {
		opt := r.Values["optimum"].Paper
		if got := *r.Values["parallel"].Ours; got != want[r.Name] || got > *opt {
			t.Errorf("%s: parallel %v, want %v (optimum %v)", r.Name, got, want[r.Name], *opt)
		}
		if s := r.Values["serial"].Ours; s == nil || *s < *opt {
			t.Errorf("%s: serial %v below the optimum %v", r.Name, s, *opt)
		}
	}
}

// The rows that run one packing trial by default (the slow ones) run
// --slow-trials; the others always run spainTrials, and the notes say so.
func TestSlowTrials(t *testing.T) {
	slow, fast := spainRow{oneTrial: true}, spainRow{}
	for _, c := range []struct{ slowTrials, wantSlow int }{{0, 1}, {1, 1}, {3, 3}} {
		opt := Options{SlowTrials: c.slowTrials}
		if got := rowTrials(slow, opt); got != c.wantSlow {
			t.Errorf("SlowTrials %d: a slow row runs %d trials, want %d", c.slowTrials, got, c.wantSlow)
		}
		if got := rowTrials(fast, opt); got != spainTrials {
			t.Errorf("SlowTrials %d: another row runs %d trials, want %d", c.slowTrials, got, spainTrials)
		}
	}
	for _, run := range []func(Options) (*Report, error){SpainTable2, SpainTable3} {
		rep, err := run(Options{Rows: []string{"testbed"}, Seed: 1, SlowTrials: 3})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(rep.Notes[0], "N = 10 trials (3 on FatTree(48), BCube(48,2) and BCube(8,4)") {
			t.Errorf("%s: first note %q does not give the trials", rep.Name, rep.Notes[0])
		}
	}
}

func TestRegistry(t *testing.T) {
	if _, err := Get("nope"); !errors.Is(err, ErrUnknownRepro) || !strings.Contains(err.Error(), "spain-table2") {
		t.Fatalf("%v", err)
	}
	if r, err := Get("spain-table3"); err != nil || r.Name != "spain-table3" {
		t.Fatal(err)
	}
}
