package dumbnet_test

import (
	"slices"
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
	h5, _ := l.g.Lookup("h5")
	h5host := l.hosts[h5]
	delete(l.hosts, h5) // dark: pingAll leaves it out
	l.discover(t)
	t0 := l.s.Now()
	l.s.At(t0, func() {
		_ = l.s.SetLink(pl[1], false)
		_ = l.s.SetLink(pl[2], false)
	})
	t1 := t0 + 2*element.Second
	l.s.At(t1, func() {
		_ = l.s.SetLink(pl[1], true)
		_ = l.s.SetLink(pl[2], true)
	})
	recable(l, p, pl, t1+10*element.Millisecond, 5*element.Millisecond, [2]element.Port{1, 4})
	l.s.Run(t1 + 4*element.Second)
	cc := l.f.Agent(l.f.ControllerNode()).Counters()
	want := append(slices.Clone(lineLinks), "h5@s1:3", "s2:3-s4:3 up")
	slices.Sort(want)
	if got := viewOf(l, l.f.Controller().Topology()); !slices.Equal(got, want) {
		t.Fatalf("view %v, want %v\ncounters %v", got, want, cc)
	}
	l.hosts[h5] = h5host
	if ok, total, bad := l.pingAll(t); ok != total {
		t.Fatalf("%d/%d pairs; silent: %s", ok, total, failedPairs(bad))
	}
}
