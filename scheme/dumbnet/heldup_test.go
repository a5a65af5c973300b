package dumbnet_test

import (
	"maps"
	"testing"

	"github.com/edgefabric/edgefabric/element"
)

// TestUpReportOfHeldLinkVerified: on recableLab, s1:3-s3:3 fails, is
// booked down, and comes back 2 s later, verified up at once. 10 ms after
// it came back, inside the switches' 1-s alarm window, s1:3's cable moves
// to the dark host h5: s1 reports the port's new state, up, when its window
// ends, for a link the controller holds up. That report is checked like
// any link coming up: the verification fails (the cable leads to h5), the
// port is rescanned, h5 is found on it and the link dropped. Before, a
// report agreeing with the graph was taken as news of nothing, and the
// link stayed up with h5 never found.
func TestUpReportOfHeldLinkVerified(t *testing.T) {
	l, p, pl := recableLab(t)
	h5back := darkH5(l)
	l.discover(t)
	t1 := failAndRepair(l, pl, 1, 2)
	recable(l, p, pl, t1+10*element.Millisecond, 5*element.Millisecond, [2]element.Port{1, 4})
	l.s.Run(t1 + 4*element.Second)
	h5back()
	wantView(t, l, "h5@s1:3", "s2:3-s4:3 up")
}

// TestHeldUpUnverifiedDuringRescan: on recableLab, the panel's four
// switch ports fail, are booked down, and come back 2 s later, verified
// up; 10 ms after, inside the switches' 1-s alarm window, the two panel
// cables are swapped (s1:3 to s4:3, s2:3 to s3:3). Every port reports
// "up" when its window ends, for links the controller holds up, and both
// verifications fail; an unrelated rescan (s4:5 lit, leading nowhere) is
// running then, so the failed ports wait for its end. Before, the ports
// waiting were rescanned only if their link was down, as a failed
// verification of a link coming back leaves it, and a held-up link's is
// not: the rescans were skipped, and the controller kept both old links
// up, leading elsewhere, for good.
func TestHeldUpUnverifiedDuringRescan(t *testing.T) {
	l, p, pl := recableLab(t)
	darkH5(l)
	l.discover(t)
	t1 := failAndRepair(l, pl, 1, 2, 3, 5)
	recable(l, p, pl, t1+10*element.Millisecond, 5*element.Millisecond, [2]element.Port{1, 3}, [2]element.Port{5, 2})
	// The verifications' last tries end 1.15 s after t1.
	l.s.At(t1+1130*element.Millisecond, func() { _ = l.s.SetLink(pl[6], true) })
	l.s.Run(t1 + 4*element.Second)
	cc := l.f.Agent(l.f.ControllerNode()).Counters()
	if cc["ctrl_link_up_unverified"] != 2 || cc["ctrl_rescans_waiting"] == 0 {
		t.Fatalf("counters %v: the test no longer has both verifications fail during a rescan", cc)
	}
	wantView(t, l, "s1:3-s4:3 up", "s2:3-s3:3 up")
}

// TestHeldUpLostVerificationKeepsLink: on recableLab, s1:3-s3:3 fails, is
// booked down and comes back 2 s later, verified; its cable flaps 10 ms
// after, inside the alarm window, so s1 reports "up" again at the window's
// end for a link the controller holds up. The panel drops every frame from
// just before that report until well after the verification and the
// rescan its failure starts: no probe of either is answered. The link,
// which works, stays up (as before "up" reports for links held up were
// verified): a rescan that finds nothing at the port leaves it as it was.
func TestHeldUpLostVerificationKeepsLink(t *testing.T) {
	l, p, pl := recableLab(t)
	darkH5(l)
	l.discover(t)
	t1 := failAndRepair(l, pl, 1)
	l.s.At(t1+10*element.Millisecond, func() { _ = l.s.SetLink(pl[1], false) })
	l.s.At(t1+15*element.Millisecond, func() { _ = l.s.SetLink(pl[1], true) })
	var saved map[element.Port]element.Port
	l.s.At(t1+900*element.Millisecond, func() { saved = maps.Clone(p.mate); clear(p.mate) })
	l.s.At(t1+1500*element.Millisecond, func() { maps.Copy(p.mate, saved) })
	l.s.Run(t1 + 4*element.Second)
	cc := l.f.Agent(l.f.ControllerNode()).Counters()
	if cc["ctrl_link_up_unverified"] != 1 || cc["ctrl_rescans"] != 1 {
		t.Fatalf("counters %v: the test no longer has the verification fail and the port rescanned", cc)
	}
	wantView(t, l, "s1:3-s3:3 up", "s2:3-s4:3 up")
}
