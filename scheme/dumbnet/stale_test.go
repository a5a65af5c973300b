package dumbnet_test

import (
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// TestStaleVerificationAnswerAfterRecable: on recableLab, s1:3-s3:3 fails
// and is booked down; 2 s later it comes back, and from then on the
// switches' answers take 70 ms to reach the controller (probe wait 50
// ms). 10 ms after it came back, inside the switches' 1-s alarm window,
// s1:3's cable moves to the dark host h5 (up 5 ms later): the answers to
// the verification's first try crossed the old cable before it moved and
// come after that try's wait. They say nothing of the cable there now:
// the controller must find h5 on s1:3 and drop the link, and every pair
// must answer, h5 included.
func TestStaleVerificationAnswerAfterRecable(t *testing.T) {
	var slow []*slowIDs // every host's; only the controller's gets answers
	l, p, pl := recableLabWrap(t, func(n topo.NodeID, e element.Element) element.Element {
		s := &slowIDs{Element: e, delay: 70 * element.Millisecond}
		slow = append(slow, s)
		return s
	})
	h5back := darkH5(l)
	l.discover(t)
	t1 := l.s.Now() + 2*element.Second
	l.s.At(t1, func() { // slow from the repair on, before it
		for _, s := range slow {
			s.from = t1
		}
	})
	failAndRepair(l, pl, 1, 2)
	recable(l, p, pl, t1+10*element.Millisecond, 5*element.Millisecond, [2]element.Port{1, 4})
	l.s.Run(t1 + 4*element.Second)
	h5back()
	wantView(t, l, "h5@s1:3", "s2:3-s4:3 up")
}

// TestStaleAuditAnswerAfterRecable: on recableLab, s1:3-s3:3 fails and is
// booked down; then the controller's own link is down for a second, and
// the link comes back meanwhile (its alarms lost to the controller). From
// the controller's return the switches' answers take 70 ms to reach it
// (probe wait 50 ms), and its audit probes every link; 10 ms after the
// return, inside the switches' alarm window, s1:3's cable moves to the
// dark host h5. The answer to the audit's first probe of s1:3-s3:3
// crossed the old cable before it moved: it says nothing of the cable
// there now, and the controller must find h5 on s1:3 and drop the link.
func TestStaleAuditAnswerAfterRecable(t *testing.T) {
	var slow []*slowIDs
	l, p, pl := recableLabWrap(t, func(n topo.NodeID, e element.Element) element.Element {
		s := &slowIDs{Element: e, delay: 70 * element.Millisecond}
		slow = append(slow, s)
		return s
	})
	h5, _ := l.g.Lookup("h5")
	h5host := l.hosts[h5]
	delete(l.hosts, h5)
	l.discover(t)
	own := hostLink(t, l, "h1")
	t0 := l.s.Now()
	l.s.At(t0, func() {
		_ = l.s.SetLink(pl[1], false)
		_ = l.s.SetLink(pl[2], false)
	})
	t1 := t0 + 2*element.Second
	l.s.At(t1, func() { _ = l.s.SetLink(own, false) })
	t2 := t1 + element.Second
	l.s.At(t2-5*element.Millisecond, func() {
		_ = l.s.SetLink(pl[1], true)
		_ = l.s.SetLink(pl[2], true)
	})
	l.s.At(t2, func() {
		for _, s := range slow {
			s.from = t2
		}
		_ = l.s.SetLink(own, true)
	})
	recable(l, p, pl, t2+10*element.Millisecond, 5*element.Millisecond, [2]element.Port{1, 4})
	l.s.Run(t2 + 4*element.Second)
	cc := l.f.Agent(l.f.ControllerNode()).Counters()
	want := append(slices.Clone(lineLinks), "h5@s1:3", "s2:3-s4:3 up")
	slices.Sort(want)
	if got := viewOf(l, l.f.Controller().Topology()); !slices.Equal(got, want) || cc["ctrl_audits"] != 1 {
		t.Fatalf("view %v, want %v; ctrl_audits %d, want 1\ncounters %v", got, want, cc["ctrl_audits"], cc)
	}
	l.hosts[h5] = h5host
	if ok, total, bad := l.pingAll(t); ok != total {
		t.Fatalf("%d/%d pairs; silent: %s", ok, total, failedPairs(bad))
	}
}
