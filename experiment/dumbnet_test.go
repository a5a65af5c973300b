package experiment

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// value returns row name's figure in column key of r, ours or the paper's.
func value(t *testing.T, r *Report, name, key string, paper bool) float64 {
	t.Helper()
	for _, row := range r.Rows {
		if row.Name != name {
			continue
		}
		v := row.Values[key]
		p := v.Ours
		if paper {
			p = v.Paper
		}
		if p == nil {
			t.Fatalf("%s: %s has no %s", r.Name, name, key)
		}
		return *p
	}
	t.Fatalf("%s: no row %q", r.Name, name)
	return 0
}

// TestDumbNetFig8: the simulator is deterministic, so a discovery's probes,
// rounds and simulated time are exact; every run's topology is checked
// against the real one inside discover.
func TestDumbNetFig8(t *testing.T) {
	r, err := DumbNetFig8(Options{Seed: 1, Rows: []string{"FatTree(4)", "cube 3³", "cube 4³", "testbed"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, row := range r.Rows {
		names = append(names, row.Name)
	}
	if want := []string{"8(a) FatTree(4), leaf", "8(a) cube 3³, center", "8(a) cube 4³, center", "8(a) cube 3³, corner", "8(a) cube 4³, corner", "testbed"}; !slices.Equal(names, want) {
		t.Fatalf("rows %q, want %q", names, want)
	}
	for _, c := range []struct {
		row            string
		probes, rounds float64
		ports          float64
		seconds        float64
	}{
		{"8(a) FatTree(4), leaf", 81177, 5, 64, 1.06},
		{"8(a) cube 3³, center", 108863, 4, 64, 1.29},
		{"8(a) cube 3³, corner", 108863, 7, 64, 1.44},
		{"8(a) cube 4³, center", 257023, 7, 64, 2.92},
		{"8(a) cube 4³, corner", 257023, 10, 64, 3.07},
		{"testbed", 329, 3, 7, 0.15},
	} {
		if got := value(t, r, c.row, "probes", false); got != c.probes {
			t.Errorf("%s: %v probes, want %v", c.row, got, c.probes)
		}
		if got := value(t, r, c.row, "rounds", false); got != c.rounds {
			t.Errorf("%s: %v rounds, want %v", c.row, got, c.rounds)
		}
		if got := value(t, r, c.row, "ports", false); got != c.ports {
			t.Errorf("%s: %v ports, want %v", c.row, got, c.ports)
		}
		if got := value(t, r, c.row, "time", false); math.Abs(got-c.seconds) > 0.005 {
			t.Errorf("%s: discovery %v s, want %v", c.row, got, c.seconds)
		}
	}
	// The pacing sets the time: probes × 10 µs + rounds × 50 ms, within a
	// round's last replies.
	for _, row := range r.Rows {
		est := value(t, r, row.Name, "probes", false)*10e-6 + value(t, r, row.Name, "rounds", false)*0.05
		if got := value(t, r, row.Name, "time", false); math.Abs(got-est) > 0.02*est+0.01 {
			t.Errorf("%s: %v s, pacing gives %v", row.Name, got, est)
		}
	}
	if p := value(t, r, "testbed", "time", true); p != 5 {
		t.Errorf("testbed: paper %v", p)
	}
	// Two cube sizes at each place give a slope; one fat tree does not.
	if n := len(r.Notes); n != 4 || !strings.Contains(r.Notes[0], "cubes (controller at the center): discovery time grows as N^") {
		t.Errorf("notes: %q", r.Notes)
	}
}

// TestDumbNetFig11 pins the failure run on the testbed topology: one
// datagram lost under DumbNet, every host notified within microseconds and
// patched one probe timeout later, 802.1D out for max age plus two forward
// delays.
func TestDumbNetFig11(t *testing.T) {
	r, err := DumbNetFig11(Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	names := dumbnetFig11RowNames(false)
	if len(r.Rows) != len(names) {
		t.Fatalf("%d rows, want %d", len(r.Rows), len(names))
	}
	ms := func(i int) float64 { return value(t, r, names[i], "ms", false) }
	if n, last := ms(0), ms(1); !(0 < n && n <= last && last < 0.01) {
		t.Errorf("notification median %v ms, last %v ms: want microseconds", n, last)
	}
	if p, last := ms(2), ms(3); !(50 <= p && p <= last && last < 50.1) {
		t.Errorf("patch median %v ms, last %v ms: want one 50-ms probe timeout after the failure", p, last)
	}
	if got := ms(4); got != 0.08 {
		t.Errorf("DumbNet outage %v ms, want one datagram (0.08)", got)
	}
	if got := ms(5); got != 48980 {
		t.Errorf("802.1D outage %v ms, want 48980", got)
	}
	if got := value(t, r, names[6], "x", false); got != 48980/0.08 {
		t.Errorf("ratio %v", got)
	}
	if got := value(t, r, names[6], "x", true); got != 4.7 {
		t.Errorf("paper ratio %v", got)
	}
	only, err := DumbNetFig11(Options{Seed: 1, Rows: []string{"outage, DumbNet"}})
	if err != nil || len(only.Rows) != 1 || only.Rows[0].Name != "outage, DumbNet" {
		t.Fatalf("--rows: %v %+v", err, only)
	}
}

// TestDumbNetFig12: a one-hop primary on a cube gets, with ε = 0, no
// detour (x next to both ends would close a triangle, which a cube has
// not) and a three-hop backup around a square: four switches, exactly. A
// larger ε only adds switches, and the primary and backup do not depend
// on it.
func TestDumbNetFig12(t *testing.T) {
	r, err := DumbNetFig12(Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 27 {
		t.Fatalf("%d rows, want 27 (1 to 27 hops)", len(r.Rows))
	}
	if got := value(t, r, "1 hop", "eps0", false); got != 4 {
		t.Errorf("1 hop, ε=0: %v switches, want 4", got)
	}
	if got := value(t, r, "1 hop", "backup", false); got != 3 {
		t.Errorf("1 hop: backup %v hops, want 3", got)
	}
	// Corner to corner: every path is shortest, so the backup is too.
	if got := value(t, r, "27 hops", "backup", false); got != 27 {
		t.Errorf("27 hops: backup %v hops, want 27", got)
	}
	for _, row := range r.Rows {
		prev := 0.0
		for e := range 4 {
			v := *row.Values["eps"+string(rune('0'+e))].Ours
			if v < prev {
				t.Errorf("%s: ε=%d has %v switches, fewer than ε=%d's %v", row.Name, e, v, e-1, prev)
			}
			prev = v
		}
	}
	// Seeded: the same figures again.
	again, err := DumbNetFig12(Options{Seed: 1, Rows: []string{"13 hops"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"eps0", "eps3"} {
		a, b := value(t, r, "13 hops", k, false), value(t, again, "13 hops", k, false)
		if a != b {
			t.Errorf("13 hops %s: %v, then %v", k, a, b)
		}
	}
}
