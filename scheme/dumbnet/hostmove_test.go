package dumbnet_test

import (
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// TestForgedAnswerMovesNoHost: on fattree:4 the rogue h16 answers every
// probe that reaches it in h3's name (the forger of
// TestForgedFramesDroppedAndCounted), so discovery leaves its port, s20:2,
// as one where nothing is known, and every host rescan probes it. h3's
// switch s14 fails after discovery, and its four links are booked down: s14
// is held failed. The periodic audit (every second here) then rescans, and
// the rogue's answer comes back in h3's name. It must stay an identity
// conflict: s14 still holds its links (down), so it may come back, as it
// does 3 s later, with h3 where it always was. Before, a host whose switch
// was held failed was taken for one that had moved (hosts_moved): h3 was
// placed on the rogue's port and stayed there once s14 was back (its own
// answer then conflicted), and no one reached it.
func TestForgedAnswerMovesNoHost(t *testing.T) {
	g, err := topo.Parse("fattree:4", 1)
	if err != nil {
		t.Fatal(err)
	}
	rogue, _ := g.Lookup("h16")
	victim, _ := g.Lookup("h3")
	s14, _ := g.Lookup("s14")
	vmac, vip, _ := g.HostAddr(victim)
	fg := &forger{claimMAC: wire.MAC(vmac), claimIP: vip.Addr()}
	l := newLabGraphWrap(t, g, map[string]string{"controller": "h1", "auditevery": "1s"}, func(n topo.NodeID, e element.Element) element.Element {
		if n == rogue {
			return fg
		}
		return e
	})
	delete(l.hosts, rogue)
	l.discover(t)
	ctrl := l.f.Agent(l.f.ControllerNode())
	if ctrl.Counters()["drop_identity_conflict"] != 1 {
		t.Fatalf("discovery: drop_identity_conflict %d, want 1", ctrl.Counters()["drop_identity_conflict"])
	}
	answered := fg.answered
	t0 := l.s.Now()
	l.s.At(t0, func() { _ = l.s.SetNode(s14, false) })
	l.s.Run(t0 + 3*element.Second)
	c := l.f.Controller()
	if top := c.Topology(); len(top.Down) != 1 || top.Down[0] != dumbnet.SwitchID(s14) {
		t.Fatalf("s14 failed: down %x, want s14", top.Down)
	}
	if fg.answered == answered {
		t.Fatal("the rogue was not probed while s14 was down: the test checks nothing")
	}
	l.s.At(l.s.Now(), func() { _ = l.s.SetNode(s14, true) })
	l.s.Run(l.s.Now() + 3*element.Second)
	want, _ := dumbnet.Expected(g)
	var wantH3 dumbnet.HostLoc
	for _, h := range want.Hosts {
		if h.MAC == wire.MAC(vmac) {
			wantH3 = h
		}
	}
	var got dumbnet.HostLoc
	for _, h := range c.Topology().Hosts {
		if h.MAC == wire.MAC(vmac) {
			got = h
		}
	}
	cc := ctrl.Counters()
	if got != wantH3 || cc["hosts_moved"] != 0 {
		t.Fatalf("h3 at %#x:%d, hosts_moved %d; want it at s14 (%#x:%d), none moved\ncounters %v", got.Switch, got.Port, cc["hosts_moved"], wantH3.Switch, wantH3.Port, cc)
	}
	if ok, total, bad := l.pingAll(t); ok != total {
		t.Fatalf("%d/%d pairs; silent: %s", ok, total, failedPairs(bad))
	}
}
