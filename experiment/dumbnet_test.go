package experiment

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
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
		{"testbed", 28487, 3, 64, 0.43},
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
	// Center, 27 → 64 switches: time 1.29 → 2.92 s, probes 108,863 →
	// 257,023.
	if n := len(r.Notes); n != 4 {
		t.Fatalf("notes: %q", r.Notes)
	}
	slope := func(y0, y1 float64) float64 { return math.Log(y1/y0) / math.Log(64.0/27) }
	want := fmt.Sprintf("cubes (controller at the center): discovery time grows as N^%.2f and probes as N^%.2f over 2 sizes",
		slope(value(t, r, "8(a) cube 3³, center", "time", false), value(t, r, "8(a) cube 4³, center", "time", false)), slope(108863, 257023))
	if !strings.Contains(r.Notes[0], want) {
		t.Errorf("note %q, want it to say %q", r.Notes[0], want)
	}
}

// TestFitSlope: the exponent of an exact power law, and of a noisy one.
func TestFitSlope(t *testing.T) {
	xs, ys, zs := []float64{}, []float64{}, []float64{}
	for _, x := range []float64{2, 3, 5, 8, 13} {
		xs = append(xs, math.Log(x))
		ys = append(ys, math.Log(7*x*x))
		zs = append(zs, -0.5*math.Log(x)+1)
	}
	if got := fitSlope(xs, ys); math.Abs(got-2) > 1e-12 {
		t.Errorf("slope of 7x² = %v", got)
	}
	if got := fitSlope(xs, zs); math.Abs(got+0.5) > 1e-12 {
		t.Errorf("slope of x^-0.5 = %v", got)
	}
	if got := fitSlope([]float64{0, 1, 2, 3}, []float64{0, 1.1, 1.9, 3}); math.Abs(got-0.98) > 1e-12 {
		t.Errorf("least-squares slope %v, want 0.98", got)
	}
}

// TestDumbNetFig11 pins the failure run on the testbed topology: every
// host notified within microseconds and patched one probe timeout later
// (and two probe gaps: the controller's down check sends three probes
// together and waits for the last to leave);
// averaged over 80 failure times across a sending interval, a datagram
// sent is lost for 5 µs under DumbNet and 4 µs under RSTP (a single
// failure at a sending instant read one 80-µs interval for both); 802.1D
// out for max age plus two forward delays.
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
	// Notifications within microseconds, the patch one 50-ms probe
	// timeout and the pacing of the down check's three probes (20 µs more
	// than with one probe: 50.0160608) after the failure; medians and
	// maxima over the hosts, exact. 24 hosts are patched (the controller's
	// own patches itself): the median is the mean of the 12th and 13th,
	// not the 13th.
	for i, want := range []float64{0.0031728, 0.0042304, 50.0360608, 50.0368336} {
		if got := ms(i); math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: %v ms, want %v", names[i], got, want)
		}
	}
	if got := ms(4); math.Abs(got-0.005) > 1e-12 {
		t.Errorf("DumbNet outage %v ms, want 0.005", got)
	}
	if got := ms(5); got != 48980 {
		t.Errorf("802.1D outage %v ms, want 48980", got)
	}
	if got := value(t, r, names[6], "x", false); math.Abs(got-48980/0.005) > 1e-3 {
		t.Errorf("ratio %v", got)
	}
	// RSTP: the leaf's alternate port takes over the instant it sees the
	// failure; DumbNet's sender waits for the notification.
	if got := ms(7); math.Abs(got-0.004) > 1e-12 {
		t.Errorf("RSTP outage %v ms, want 0.004", got)
	}
	if got := value(t, r, names[8], "x", false); math.Abs(got-0.8) > 1e-9 {
		t.Errorf("RSTP ratio %v, want 0.8", got)
	}
	if got := value(t, r, names[8], "x", true); got != 4.7 {
		t.Errorf("paper's RSTP ratio %v, want 4.7", got)
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
	// A one-hop primary is all last window: ε = 1 adds every neighbour of
	// its ends, ε = 2 nothing more (the sums are odd), ε = 3 more again.
	// A long one is mostly full windows, where ε = 2 adds most.
	e := func(row string, k int) float64 { return value(t, r, row, "eps"+string(rune('0'+k)), false) }
	if e1, e2, e3 := e("1 hop", 1), e("1 hop", 2), e("1 hop", 3); e1 != 10.75 || e2 != e1 || e3 <= e2 {
		t.Errorf("1 hop: ε=1..3 give %v, %v, %v switches; want 10.75, the same, more", e1, e2, e3)
	}
	if e0, e1, e2 := e("27 hops", 0), e("27 hops", 1), e("27 hops", 2); e1-e0 > 4 || e2 < 2*e0 {
		t.Errorf("27 hops: ε=0..2 give %v, %v, %v switches", e0, e1, e2)
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

// TestDumbNetFig12Pinned: every cell of the seed-1 run and the notes
// (whose shares of graphs exceeding one controller reply are computed)
// are those of docs/repro/dumbnet-fig12.json, exactly. The checks above
// hold for many wrong programs (a reply limit doubled, a primary drawn
// anew for each ε); these figures are what docs/dumbnet.md quotes.
func TestDumbNetFig12Pinned(t *testing.T) {
	data, err := os.ReadFile("../docs/repro/dumbnet-fig12.json")
	if err != nil {
		t.Fatal(err)
	}
	var want Report
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	r, err := DumbNetFig12(Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != len(want.Rows) {
		t.Fatalf("%d rows, docs/repro has %d", len(r.Rows), len(want.Rows))
	}
	for i, row := range r.Rows {
		w := want.Rows[i]
		if row.Name != w.Name || len(row.Values) != len(w.Values) {
			t.Fatalf("row %d: %s with %d values, docs/repro: %s with %d", i, row.Name, len(row.Values), w.Name, len(w.Values))
		}
		for k, v := range row.Values {
			if wv := w.Values[k]; v.Ours == nil || wv.Ours == nil || *v.Ours != *wv.Ours {
				t.Errorf("%s %s: %v, docs/repro has %v", row.Name, k, deref(v.Ours), deref(wv.Ours))
			}
		}
	}
	if !slices.Equal(r.Notes, want.Notes) {
		t.Errorf("notes:\n%q\ndocs/repro:\n%q", r.Notes, want.Notes)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
