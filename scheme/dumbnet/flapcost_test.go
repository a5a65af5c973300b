package dumbnet

import (
	"slices"
	"testing"
)

// TestForgedFlapCostsNoSearch: on fattree:16 (320 switches, 2,048 switch
// links) no link's failure alone cuts a switch off, so a "port flapped"
// alarm (an "up" alarm repeating the last) has nothing to audit. Once one
// search has run for the topology's version, an alarm costs a lookup: no
// allocation, no audit, however many come. Before, every alarm searched
// the whole graph (its buffers allocated anew: 3 allocations) and only
// then found nothing cut off, so the once-a-second pacing of flap audits
// never applied to it.
func TestForgedFlapCostsNoSearch(t *testing.T) {
	a, _, want := discoveredController(t, "fattree:16", 0, Config{})
	c := a.ctrl
	l := want.Links[len(want.Links)/2]
	c.flapped(l.A, l.APort)
	if n := testing.AllocsPerRun(1000, func() { c.flapped(l.A, l.APort) }); n != 0 {
		t.Fatalf("%v allocations per flap alarm, want 0", n)
	}
	if cc := a.Counters(); cc["ctrl_flaps"] != 0 || cc["ctrl_flaps_deferred"] != 0 || len(c.stale) != 0 {
		t.Fatalf("counters %v, %d switches stale: nothing was cut off", cc, len(c.stale))
	}
}

// A flap of a link whose failure alone cuts switches off (line:4, the
// controller's host on s1) makes exactly those stale and audits them:
// s2-s3 cuts off s3 and s4, s3-s4 only s4. After a topology change the
// search runs again: with s1-s2 down, nothing past s1 is reached, and
// s3-s4 cuts nothing off from the controller.
func TestFlapCutsOffSubtree(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a, b   int // the flapped link's switches, in want.Switches
		down12 bool
		stale  []int
		audits uint64
	}{
		{"s2-s3", 1, 2, false, []int{2, 3}, 1},
		{"s3-s4", 2, 3, false, []int{3}, 1},
		{"s3-s4 with s1-s2 down", 2, 3, true, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _, want := discoveredController(t, "line:4", 0, Config{})
			c := a.ctrl
			sw := want.Switches // s1..s4 in ID order
			var l, l12 Link
			for _, k := range want.Links {
				switch {
				case k.A == sw[tc.a] && k.B == sw[tc.b]:
					l = k
				case k.A == sw[0] && k.B == sw[1]:
					l12 = k
				}
			}
			if tc.down12 {
				c.flapped(l.A, l.APort) // searched before the change
				clear(c.stale)
				c.setLink(c.g.idx[l12.A], l12.APort, false)
				clear(c.stale)
			}
			before := a.Counters()["ctrl_flaps"]
			c.flapped(l.A, l.APort)
			var got, exp []uint64
			for _, id := range sw {
				if c.stale[id] {
					got = append(got, id)
				}
			}
			for _, k := range tc.stale {
				exp = append(exp, sw[k])
			}
			if !slices.Equal(got, exp) || a.Counters()["ctrl_flaps"]-before != tc.audits {
				t.Fatalf("stale %x, %d flap audits; want %x, %d", got, a.Counters()["ctrl_flaps"]-before, exp, tc.audits)
			}
		})
	}
}
