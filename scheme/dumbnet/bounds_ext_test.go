package dumbnet_test

import (
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// TestForgedUnknownSwitchNotFlooded: on line:3 (the controller h1, the
// rogue h2 on s1), notifications naming switches the fabric does not have.
// One that reaches the controller during discovery is held, then counted
// as unknown when discovery did not find the switch. Once the view is
// complete, the controller's host drops them (no host routes over a
// switch its controller does not know) instead of flooding them on and
// keeping state for them. Other hosts cannot tell and relay them, as
// §4.2's flood needs (TestStage1FloodReachesEveryHost). A real change
// the controller has no use for, a host's cable going down, is counted
// too.
func TestForgedUnknownSwitchNotFlooded(t *testing.T) {
	g, err := topo.Parse("line:3", 1)
	if err != nil {
		t.Fatal(err)
	}
	rogue, _ := g.Lookup("h2")
	var inj *injector
	l := newLabGraphWrap(t, g, nil, func(n topo.NodeID, e element.Element) element.Element {
		if n == rogue {
			inj = &injector{Element: e}
			return inj
		}
		return e
	})
	ctrl := l.f.ControllerNode()
	cmac, _, _ := g.HostAddr(ctrl)
	fmac, _, _ := g.HostAddr(rogue)
	forge := func(i int, sw uint64) {
		n := &wire.DumbNetHostNotify{Origin: wire.MAC{0x02, 0xba, 0xd0, 0, 0, byte(i)}, Seq: 1, SwitchID: sw, Port: 1, State: wire.PortDown}
		inj.env.Send(1, ctrlFrame(t, wire.MAC(cmac), wire.MAC(fmac), hostTags(t, g, rogue, ctrl), n))
	}
	l.s.At(10*element.Microsecond, func() { forge(0, 0xdead00) })
	l.discover(t)
	ca := l.f.Agent(ctrl)
	c := ca.Counters()
	if c["ctrl_link_events_held"] != 1 || c["ctrl_link_events_unknown"] != 1 {
		t.Fatalf("forged report during discovery: %v", c)
	}
	before := ca.Counters()
	now := l.s.Now()
	for i := 1; i <= 3; i++ {
		l.s.At(now+element.Time(i)*element.Microsecond, func() { forge(i, 0xdead00+uint64(i)) })
	}
	l.s.Run(now + element.Millisecond)
	c = ca.Counters()
	if c["drop_unknown_switch"] != 3 || c["notify_flooded"] != before["notify_flooded"] || c["host_notify_received"] != before["host_notify_received"] {
		t.Fatalf("forged reports after discovery: %v", c)
	}

	// The same from a sender the controller does not know: dropped as
	// forged, it is no hint of a host discovery missed (it cost a host
	// rescan, and three more tries).
	before = ca.Counters()
	now = l.s.Now()
	l.s.At(now+element.Microsecond, func() {
		n := &wire.DumbNetHostNotify{Origin: wire.MAC{0x02, 0xba, 0xd0, 0, 0, 7}, Seq: 1, SwitchID: 0xdead07, Port: 1, State: wire.PortDown}
		inj.env.Send(1, ctrlFrame(t, wire.MAC(cmac), wire.MAC{0x02, 0xba, 0xd0, 0, 0, 0x77}, hostTags(t, g, rogue, ctrl), n))
	})
	l.s.Run(now + 5*element.Second)
	c = ca.Counters()
	if c["drop_unknown_switch"] != 4 || c["ctrl_host_rescans"] != before["ctrl_host_rescans"] || c["ctrl_host_rescans_deferred"] != before["ctrl_host_rescans_deferred"] {
		t.Fatalf("forged report from an unknown sender: %v", c)
	}

	// h3's cable goes down: its switch reports a port with no switch link.
	h3, _ := g.Lookup("h3")
	lk, _ := g.PortLink(h3, 1)
	now = l.s.Now()
	l.s.At(now+element.Microsecond, func() { _ = l.s.SetLink(lk, false) })
	l.s.Run(now + element.Millisecond)
	if c := ca.Counters(); c["ctrl_link_events_no_link"] != 1 || c["drop_unknown_switch"] != 4 {
		t.Fatalf("host cable down: %v", c)
	}
}
