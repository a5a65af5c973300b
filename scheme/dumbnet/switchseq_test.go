package dumbnet

import (
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

// The review finding "a flooded host notification carries no switch
// sequence number": C's flooded copy of a failure alarm, delayed past the
// switch's next alarm for the port (the repair, 1.5 s later, after the
// 1-s suppression window), failed the repaired link again at every host
// it reached, until the controller refuted it. The copy now carries the
// switch's alarm number, and a host drops one that is not newer than the
// last alarm it took for the port (notify_stale).
func TestDelayedFloodCopyAfterRepairDropped(t *testing.T) {
	a, env := squareAgent(t, 4)
	primary := []uint8{1, 2, 9} // over switch 2's port 2
	a.Receive(1, portStatusFrame(2, 2, wire.PortDown, 4, 7))
	if err := a.cache.Verify(primary, macB); err == nil {
		t.Fatal("the failure did not take the primary down")
	}
	late := ctrl(t, macA, macC, &wire.DumbNetHostNotify{Origin: macC, Seq: 1, SwitchID: 2, Port: 2, State: wire.PortDown, SwitchSeq: 7})
	env.advance(1500 * element.Millisecond)
	a.Receive(1, portStatusFrame(2, 2, wire.PortUp, 4, 8))
	a.topoPatch(&wire.DumbNetTopoPatch{Version: 2, Links: []wire.DumbNetLink{{A: 2, APort: 2, B: 4, BPort: 1, Flags: wire.LinkUp}}})
	if err := a.cache.Verify(primary, macB); err != nil {
		t.Fatalf("after the repair: %v", err)
	}
	env.take()
	before := a.Counters()
	env.advance(500 * element.Millisecond)
	a.Receive(1, late)
	c := a.Counters()
	if err := a.cache.Verify(primary, macB); err != nil {
		t.Errorf("the delayed copy failed the repaired link again: %v", err)
	}
	if a.evState[portID{2, 2}] != wire.PortUp {
		t.Errorf("port state %v, want up", a.evState[portID{2, 2}])
	}
	if out := env.take(); len(out) != 0 {
		t.Errorf("the delayed copy was flooded on: %d frames", len(out))
	}
	if c["notify_stale"] != 1 || c["failovers"] != before["failovers"] || c["host_notify_received"] != before["host_notify_received"] {
		t.Errorf("notify_stale %d (want 1), failovers %d -> %d, host_notify_received %d -> %d",
			c["notify_stale"], before["failovers"], c["failovers"], before["host_notify_received"], c["host_notify_received"])
	}
}

// A host beyond the switches' hop limit hears of a port through the
// flood only: it orders the copies of several origins by the switch's
// numbers, so the failure's copy arriving after the repair's is dropped,
// and a copy of an alarm it already took is a duplicate.
func TestFloodCopiesOrderedBySwitchSeq(t *testing.T) {
	a, env := squareAgent(t, 4)
	macE := wire.MAC{0x02, 0, 0, 0, 0, 0xe}
	notify := func(origin wire.MAC, st wire.PortState, swSeq uint32) {
		a.Receive(1, ctrl(t, macA, origin, &wire.DumbNetHostNotify{Origin: origin, Seq: 1, SwitchID: 2, Port: 2, State: st, SwitchSeq: swSeq}))
	}
	notify(macC, wire.PortDown, 41)
	notify(macD, wire.PortUp, 42)
	env.take()
	notify(macE, wire.PortDown, 41) // the failure's copy, late
	if c := a.Counters(); c["notify_stale"] != 1 || c["host_notify_received"] != 2 || a.evState[portID{2, 2}] != wire.PortUp {
		t.Fatalf("counters %v, state %v: want the late copy dropped as stale", c, a.evState[portID{2, 2}])
	}
	notify(macE, wire.PortUp, 42) // the repair again, from another origin
	if c := a.Counters(); c["notify_duplicate"] != 1 || c["host_notify_received"] != 2 {
		t.Fatalf("counters %v: want the repeated alarm dropped as a duplicate", c)
	}
	if out := env.take(); len(out) != 0 {
		t.Fatalf("%d frames flooded for old alarms", len(out))
	}
	// The switch's own broadcast of an alarm the flood brought first is
	// a duplicate too; its next alarm is news.
	a.Receive(1, portStatusFrame(2, 2, wire.PortUp, 4, 42))
	a.Receive(1, portStatusFrame(2, 2, wire.PortDown, 4, 43))
	if c := a.Counters(); c["notify_duplicate"] != 2 || c["notify_received"] != 1 || a.evState[portID{2, 2}] != wire.PortDown {
		t.Fatalf("counters %v, state %v", c, a.evState[portID{2, 2}])
	}
}

// The numbers wrap as the switch's do: after 2^32-1 comes 1 (a switch
// skips 0), which is newer; 2^32-2 after it is stale.
func TestFloodSwitchSeqWraps(t *testing.T) {
	a, _ := newTestAgent()
	notify := func(origin wire.MAC, st wire.PortState, swSeq uint32) {
		a.Receive(1, ctrl(t, macA, origin, &wire.DumbNetHostNotify{Origin: origin, Seq: 1, SwitchID: 1, Port: 1, State: st, SwitchSeq: swSeq}))
	}
	notify(macC, wire.PortDown, ^uint32(0))
	notify(macD, wire.PortUp, 1)
	notify(macB, wire.PortDown, ^uint32(0)-1)
	if c := a.Counters(); c["host_notify_received"] != 2 || c["notify_stale"] != 1 || a.evState[portID{1, 1}] != wire.PortUp {
		t.Fatalf("counters %v, state %v", a.Counters(), a.evState[portID{1, 1}])
	}
}

// A notification without the switch's number (0: a sender that does not
// fill it in) is deduplicated by its origin's sequence only, as before the
// number was carried.
func TestFloodWithoutSwitchSeq(t *testing.T) {
	a, _ := newTestAgent()
	a.Receive(1, portStatusFrame(1, 1, wire.PortDown, 4, 5))
	a.Receive(1, portStatusFrame(1, 1, wire.PortUp, 4, 6))
	a.Receive(1, ctrl(t, macA, macC, &wire.DumbNetHostNotify{Origin: macC, Seq: 1, SwitchID: 1, Port: 1, State: wire.PortDown}))
	if c := a.Counters(); c["host_notify_received"] != 1 || c["notify_stale"] != 0 || a.evState[portID{1, 1}] != wire.PortDown {
		t.Fatalf("counters %v, state %v", c, a.evState[portID{1, 1}])
	}
}

// A host floods the switch's alarm number with the news.
func TestFloodCarriesSwitchSeq(t *testing.T) {
	a, env := squareAgent(t, 4)
	a.Receive(1, portStatusFrame(2, 2, wire.PortDown, 4, 77))
	out := env.take()
	if len(out) == 0 {
		t.Fatal("nothing flooded")
	}
	for _, s := range out {
		_, _, payload, err := wire.ParseDumbNet(s.frame)
		if err != nil {
			t.Fatal(err)
		}
		var m wire.DumbNetHostNotify
		if err := m.DecodeFromBytes(payload); err != nil || m.SwitchSeq != 77 || m.Origin != macA {
			t.Fatalf("flooded %+v, %v; want switch seq 77 from A", m, err)
		}
	}
}

// The controller's host takes a new alarm that repeats "up" for a flap
// (the link went down and back inside the switch's window) whether the
// switch's broadcast or another host's flooded copy brings it first: a
// copy that comes first makes the broadcast a duplicate.
func TestFlapHeardThroughFlood(t *testing.T) {
	a, env, want := discoveredController(t, "line:3", 0, Config{})
	h := want.Hosts[0]
	var l Link
	for _, k := range want.Links {
		if k.A == h.Switch || k.B == h.Switch {
			l = k
			break
		}
	}
	sw, port := l.A, l.APort
	other := want.Hosts[1].MAC
	a.Receive(1, portStatusFrame(sw, port, wire.PortUp, 4, 1))
	env.advance(element.Second)
	env.take()
	a.Receive(1, ctrl(t, a.mac, other, &wire.DumbNetHostNotify{Origin: other, Seq: 1, SwitchID: sw, Port: port, State: wire.PortUp, SwitchSeq: 2}))
	a.Receive(1, portStatusFrame(sw, port, wire.PortUp, 4, 2))
	if c := a.Counters(); c["ctrl_flaps"] != 1 || c["notify_duplicate"] != 1 {
		t.Fatalf("ctrl_flaps %d, notify_duplicate %d: want the flooded copy taken for the flap, the broadcast for a duplicate", c["ctrl_flaps"], c["notify_duplicate"])
	}
}

// A switch's alarm numbers wrap past 0, which a host's flooded copy uses
// for "number unknown": after 2^32-1 comes 1.
func TestSwitchAlarmSeqSkipsZero(t *testing.T) {
	s, env := newTestSwitch(3)
	s.seq = ^uint32(0) - 1
	seqs := func() []uint32 {
		var got []uint32
		for _, o := range env.take() {
			f, _ := wire.ParseFrame(o.frame)
			var m wire.DumbNetPortStatus
			if err := m.DecodeFromBytes(f.Payload()); err != nil {
				t.Fatal(err)
			}
			got = append(got, m.Seq)
		}
		return got
	}
	s.LinkChange(1, false) // alarm 2^32-1, on ports 2 and 3
	s.LinkChange(2, false) // the next, on port 3
	got := seqs()
	if len(got) != 3 || got[0] != ^uint32(0) || got[1] != ^uint32(0) || got[2] != 1 {
		t.Fatalf("alarm numbers %v, want [4294967295 4294967295 1]", got)
	}
}
