package sim

import (
	"testing"

	"github.com/edgefabric/edgefabric/element"
)

func TestLinkFailure(t *testing.T) {
	g := line(t, 1, 1_000_000_000, 10*us)
	s := mustNew(t, g, Options{})
	h1, h2 := &rec{}, &rec{}
	sw := &rec{fwd: map[element.Port]element.Port{1: 2, 2: 1}}
	must(t, s.Place(0, h1))
	must(t, s.Place(1, sw))
	must(t, s.Place(2, h2))
	s.At(0, func() {
		for i := range 3 {
			h1.env.Send(1, frameOf(1514, byte(i)))
		}
	})
	// Frame 0 reaches s1 at 12.208+10 = 22.208 us, so failing h1-s1 at
	// 20 us loses all three frames on h1's port: one propagating, two
	// queued.
	s.At(20*us, func() { must(t, s.SetLink(0, false)) })
	s.At(30*us, func() { h1.env.Send(1, frameOf(60, 9)) })
	s.At(40*us, func() { must(t, s.SetLink(0, true)) })
	s.At(50*us, func() { h1.env.Send(1, frameOf(60, 10)) })
	s.RunAll()
	st, _ := s.PortStats(0, 1)
	if st.DropCount(DropLinkDown) != 4 {
		t.Errorf("h1 port: %+v, want 4 link_down (3 in flight, 1 sent while down)", st)
	}
	if len(h2.got) != 1 || h2.got[0].frame[0] != 10 {
		t.Fatalf("h2 got %d frames", len(h2.got))
	}
	// 60 bytes + 4 + 8 = 72 bytes = 576 ns, twice, plus 2 x 10 us.
	if want := 50*us + 2*(576*ns+10*us); h2.got[0].t != want {
		t.Errorf("after repair: arrival %v, want %v", h2.got[0].t, want)
	}
	wantH1 := []linkEv{{20 * us, 1, false}, {40 * us, 1, true}}
	wantSw := []linkEv{{20 * us, 1, false}, {40 * us, 1, true}}
	if !eqLinks(h1.links, wantH1) || !eqLinks(sw.links, wantSw) || len(h2.links) != 0 {
		t.Errorf("link changes h1 %v s1 %v h2 %v", h1.links, sw.links, h2.links)
	}
	if s.LinkUp(0) != true || s.LinkUp(9) {
		t.Error("LinkUp")
	}
}

func TestNodeFailure(t *testing.T) {
	g := line(t, 1, 1_000_000_000, us)
	s := mustNew(t, g, Options{})
	h1, h2 := &rec{}, &rec{}
	sw := &rec{fwd: map[element.Port]element.Port{1: 2, 2: 1}}
	must(t, s.Place(0, h1))
	must(t, s.Place(1, sw))
	must(t, s.Place(2, h2))
	ticks := 0
	s.At(0, func() {
		var tick func()
		tick = func() { ticks++; sw.env.After(10*us, tick) }
		sw.env.After(10*us, tick)
	})
	s.At(5*us, func() { must(t, s.SetNode(1, false)) })
	s.At(6*us, func() {
		h1.env.Send(1, frameOf(60, 1)) // link down at h1
		sw.env.Send(2, frameOf(60, 2)) // the failed node cannot send
	})
	s.At(50*us, func() { must(t, s.SetNode(1, true)) })
	s.At(60*us, func() { h1.env.Send(1, frameOf(60, 3)) })
	s.Run(100 * us)
	if ticks != 10 {
		t.Errorf("failed node's timers fired %d times, want 10 (it keeps running, isolated)", ticks)
	}
	if len(h2.got) != 1 || h2.got[0].frame[0] != 3 {
		t.Fatalf("h2 got %v", h2.got)
	}
	if st, _ := s.PortStats(0, 1); st.DropCount(DropLinkDown) != 1 {
		t.Errorf("h1: %+v", st)
	}
	if st, _ := s.PortStats(1, 2); st.DropCount(DropNodeDown) != 1 {
		t.Errorf("s1 port 2: %+v", st)
	}
	want := []linkEv{{5 * us, 1, false}, {50 * us, 1, true}}
	if !eqLinks(h1.links, want) || !eqLinks(h2.links, want) {
		t.Errorf("neighbours' link changes: h1 %v h2 %v", h1.links, h2.links)
	}
	if len(sw.links) != 4 {
		t.Errorf("failed node's own link changes: %v", sw.links)
	}
	// Repairing a link whose end node is down keeps it down.
	s.At(110*us, func() {
		must(t, s.SetNode(2, false))
		must(t, s.SetLink(1, true))
	})
	s.Run(120 * us)
	if s.LinkUp(1) {
		t.Error("link to a failed node came up")
	}
}

func eqLinks(a, b []linkEv) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCutThroughInputCut: a cut-through switch forwards a frame from its
// first bytes; when the link it arrives on fails before the frame's tail
// is in, what the switch sent is truncated: it ends in a bad FCS, so the
// next store-and-forward node drops it (bad_fcs), and a cut-through one
// that already passed it on truncates its own copy in turn. It was
// delivered whole, unseen by any counter. A frame whose tail was in
// before the failure, and one sent after the repair, are unaffected.
func TestCutThroughInputCut(t *testing.T) {
	for _, c := range []struct {
		name     string
		switches int
		fail     element.Time
		bad      bool
	}{
		// 1514 bytes at 1 Gb/s: the tail is in at 12.208 us.
		{"one hop, cut mid-frame", 1, 5 * us, true},
		// s2 got s1's copy at ~112 ns and forwarded it before the cut.
		{"two hops, cut mid-frame", 2, 5 * us, true},
		{"two hops, cut after the tail", 2, 12209 * ns, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := line(t, c.switches, 1_000_000_000, 0)
			s := mustNew(t, g, Options{})
			h1, h2 := &rec{}, &rec{}
			must(t, s.Place(0, h1))
			sws := make([]*ctRec, c.switches)
			for i := range sws {
				sws[i] = &ctRec{rec{fwd: map[element.Port]element.Port{1: 2}, ct: 6}}
				must(t, s.Place(nodeID(i+1), sws[i]))
			}
			h2n := nodeID(c.switches + 1)
			must(t, s.Place(h2n, h2))
			s.At(0, func() { h1.env.Send(1, frameOf(1514, 1)) })
			s.At(c.fail, func() { must(t, s.SetLink(0, false)) })
			s.At(20*us, func() { must(t, s.SetLink(0, true)) })
			s.At(30*us, func() { h1.env.Send(1, frameOf(1514, 2)) })
			s.RunAll()
			for i, sw := range sws {
				if len(sw.got) != 2 || sw.sends != 2 {
					t.Errorf("s%d got %d frames, forwarded %d; want 2, 2", i+1, len(sw.got), sw.sends)
				}
			}
			st, _ := s.PortStats(h2n, 1)
			wantGot, wantBad := 2, uint64(0)
			if c.bad {
				wantGot, wantBad = 1, 1
			}
			if len(h2.got) != wantGot || h2.got[len(h2.got)-1].frame[0] != 2 || st.DropCount(DropBadFCS) != wantBad {
				t.Errorf("h2 got %d frames (last %v), bad_fcs %d; want %d frames, the last 2, bad_fcs %d",
					len(h2.got), h2.got[len(h2.got)-1].frame[0], st.DropCount(DropBadFCS), wantGot, wantBad)
			}
			if st, _ := s.PortStats(0, 1); st.TotalDrops() != 0 || st.TxFrames != 2 {
				t.Errorf("h1 %+v: both frames started before the failure, none was queued", st)
			}
		})
	}
}
