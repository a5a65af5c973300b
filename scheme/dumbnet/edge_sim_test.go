package dumbnet_test

import (
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/host"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// TestLinkBackDuringCheckVerified: a core link fails and comes back
// before the controller's check of the failure ends. The "up" reports
// withdraw the check; the controller never booked the link down, but the
// cable may have moved while it was dark, so the reports draw a
// verification as any link coming up does (both ends' reports, one
// check): its two probes and the down check's three are the only ones
// sent after discovery. The link passes, and nothing is booked.
func TestLinkBackDuringCheckVerified(t *testing.T) {
	l := newLab(t, "fattree:4", map[string]string{"suppress": "10ms"})
	l.discover(t)
	c := l.f.Controller()
	probes := c.Probes()
	core := coreLink(t, l)
	now := l.s.Now()
	l.s.At(now+element.Millisecond, func() { _ = l.s.SetLink(core, false) })
	l.s.At(now+20*element.Millisecond, func() { _ = l.s.SetLink(core, true) })
	l.s.Run(now + element.Second)
	cc := l.f.Agent(l.f.ControllerNode()).Counters()
	if cc["ctrl_link_down_withdrawn"] != 1 {
		t.Fatalf("ctrl_link_down_withdrawn = %d, want 1: the test no longer covers a withdrawn check", cc["ctrl_link_down_withdrawn"])
	}
	if n := c.Probes() - probes; n != 5 {
		t.Fatalf("%d probes after discovery, want 5 (the down check's three, the verification's two)", n)
	}
	if cc["ctrl_link_up_unverified"] != 0 || cc["ctrl_link_up_retried"] != 0 {
		t.Fatalf("the verification of a working link failed: counters %v", cc)
	}
	// No change is booked, but the hosts, which routed around the link
	// on the notification, are told it works (version 3, after the
	// check's 2): no switch would say so again.
	if v := c.Version(); v != 3 {
		t.Fatalf("topology version %d, want 3 (discovery, the check, one patch saying the link is up)", v)
	}
	for _, h := range l.g.Nodes(topo.Host) {
		if n := l.f.Agent(h).Counters()["patches_applied"]; h != l.f.ControllerNode() && n != 1 {
			t.Errorf("%s applied %d patches, want 1", l.name(h), n)
		}
	}
}

// TestHostRescansRateLimited: h7's answers to every PM are lost, so the
// controller never places it, while h7 (which found the controller by its
// own search) keeps asking for a path to h1. Each unknown query and PM
// asks for a rescan for missed hosts; at most one starts per second.
func TestHostRescansRateLimited(t *testing.T) {
	g, err := topo.Parse("fattree:4", 1)
	if err != nil {
		t.Fatal(err)
	}
	l := newLabGraphWrap(t, g, map[string]string{"search": "500ms"}, func(n topo.NodeID, e element.Element) element.Element {
		if g.Node(n).Name == "h7" {
			return &lossy{Element: e, sub: wire.SubDumbNetProbe, on: true, until: 100 * element.Second}
		}
		return e
	})
	l.discover(t)
	h7, _ := g.Lookup("h7")
	h1, _ := g.Lookup("h1")
	_, ip, _ := g.HostAddr(h1)
	start := l.s.Now()
	l.s.At(start, func() {
		l.hosts[h7].PingWith(ip.Addr(), host.PingOptions{Count: 1, Timeout: 5 * element.Second})
	})
	ctrl := l.f.Agent(l.f.ControllerNode())
	var at []element.Time
	for n := uint64(0); l.s.Now() < start+3500*element.Millisecond; {
		l.s.Run(l.s.Now() + element.Millisecond)
		if m := ctrl.Counters()["ctrl_host_rescans"]; m != n {
			at = append(at, l.s.Now())
			n = m
		}
	}
	cc := ctrl.Counters()
	t.Logf("start %v rescans at %v", start, at)
	if cc["ctrl_query_unknown_src"] < 10 || len(at) < 2 {
		t.Fatalf("rescans at %v for %d unknown queries: too few to test the limit", at, cc["ctrl_query_unknown_src"])
	}
	for i := 1; i < len(at); i++ {
		if at[i]-at[i-1] < element.Second {
			t.Fatalf("rescans at %v: two less than a second apart", at)
		}
	}
	if n := cc["ctrl_host_rescans"]; n != uint64(len(at)) || n != 3 {
		t.Fatalf("ctrl_host_rescans = %d (at %v), want 3", n, at)
	}
}

// TestLinkUpUnverifiedAfterThreeTries: every answer to the verification
// probes of a repaired core link is lost. The controller sends linkCheckTries
// (3) probes, one probe wait apart, then gives up: two retries, one
// "unverified", and the link stays down in its topology.
func TestLinkUpUnverifiedAfterThreeTries(t *testing.T) {
	l := repairWithLostVerification(t, 10*element.Second, element.Second)
	c := l.f.Agent(l.f.ControllerNode()).Counters()
	if c["ctrl_link_down_confirmed"] != 1 {
		t.Fatalf("ctrl_link_down_confirmed = %d, want 1", c["ctrl_link_down_confirmed"])
	}
	if c["ctrl_link_up_retried"] != 2 || c["ctrl_link_up_unverified"] != 1 {
		t.Fatalf("verification: retried %d, unverified %d; want 2, 1", c["ctrl_link_up_retried"], c["ctrl_link_up_unverified"])
	}
	down := 0
	for _, lk := range l.f.Controller().Topology().Links {
		if !lk.Up {
			down++
		}
	}
	if down != 1 {
		t.Fatalf("%d links down at the controller, want the unverified one", down)
	}
}
