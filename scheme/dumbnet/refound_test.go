package dumbnet_test

import (
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// dropIDs drops the switches' answers to tag-0 queries that reach the
// wrapped host while drop says so.
type dropIDs struct {
	element.Element
	drop    func() bool
	dropped int
}

func (d *dropIDs) Receive(p element.Port, frame []byte) {
	if _, inner, payload, err := wire.ParseDumbNet(frame); err == nil && inner == wire.EtherTypeLocalExp &&
		len(payload) > 0 && wire.Subtype(payload[0]) == wire.SubDumbNetSwitchID && d.drop() {
		d.dropped++
		return
	}
	d.Element.Receive(p, frame)
}

// TestRescannedLinkBackUp: fattree:4's aggregation switch s11 fails after
// discovery, its four links are booked down and it is held failed; it
// comes back, its neighbours report their ports up, and every answer to
// the verification probes is lost (a loaded machine), so each link fails
// its verification and its port is rescanned. The rescans' probes are the
// verification's (out through the port to the far end's ID, and back
// through the far end's port), answered now: they find each link where it
// was. The links must be up again, patched to the hosts, and s11 back.
// Before, the graph rebuilt at each rescan's end kept the state the old
// one held for the link found again: down, for good (no switch reports a
// port again), and s11 held failed with every link of it working.
func TestRescannedLinkBackUp(t *testing.T) {
	g, err := topo.Parse("fattree:4", 1)
	if err != nil {
		t.Fatal(err)
	}
	h1, _ := g.Lookup("h1")
	s11, _ := g.Lookup("s11")
	var l *lab
	armed := false
	d := &dropIDs{drop: func() bool {
		return armed && l.f.Agent(l.f.ControllerNode()).Counters()["ctrl_link_up_unverified"] == 0
	}}
	l = newLabGraphWrap(t, g, map[string]string{"controller": "h1"}, func(n topo.NodeID, e element.Element) element.Element {
		if n == h1 {
			d.Element = e
			return d
		}
		return e
	})
	l.discover(t)
	if ok, total, bad := l.pingAll(t); ok != total {
		t.Fatalf("before: %d/%d pairs; silent: %s", ok, total, failedPairs(bad))
	}
	c := l.f.Controller()
	id := dumbnet.SwitchID(s11)
	t0 := l.s.Now()
	l.s.At(t0, func() { _ = l.s.SetNode(s11, false) })
	l.s.Run(t0 + 2*element.Second)
	if top := c.Topology(); len(top.Down) != 1 || top.Down[0] != id {
		t.Fatalf("s11 failed: down %x, want s11", top.Down)
	}
	l.s.At(l.s.Now(), func() {
		armed = true
		_ = l.s.SetNode(s11, true)
	})
	l.s.Run(l.s.Now() + 3*element.Second)
	cc := l.f.Agent(l.f.ControllerNode()).Counters()
	if d.dropped == 0 || cc["ctrl_link_up_unverified"] != 4 || cc["ctrl_rescans"] == 0 {
		t.Fatalf("%d answers lost, ctrl_link_up_unverified %d, ctrl_rescans %d: want answers lost, 4 and rescans", d.dropped, cc["ctrl_link_up_unverified"], cc["ctrl_rescans"])
	}
	want, _ := dumbnet.Expected(g)
	for _, top := range []*dumbnet.Topology{c.Topology(), c.Snapshot()} {
		if diff := top.Diff(want); len(diff) > 0 {
			t.Fatalf("topology after s11 came back: %v\ncounters %v", diff, cc)
		}
	}
	if cc["ctrl_switches_back"] != 1 {
		t.Errorf("ctrl_switches_back %d, want 1", cc["ctrl_switches_back"])
	}
	// Every host was told: its path graphs use s11 again.
	for _, h := range g.Nodes(topo.Host) {
		if n := l.f.Agent(h).Counters()["patches_applied"]; h != h1 && n != 8 {
			t.Errorf("%s applied %d patches, want 8 (4 links down, 4 up)", l.name(h), n)
		}
	}
	if ok, total, bad := l.pingAll(t); ok != total {
		t.Fatalf("after: %d/%d pairs; silent: %s", ok, total, failedPairs(bad))
	}
}
