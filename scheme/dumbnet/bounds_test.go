package dumbnet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// announce is the controller B's announcement of path to host A.
func announce(t testing.TB, path []uint8) []byte {
	return ctrl(t, macA, macB, &wire.DumbNetProbeReply{HostMAC: macB, Controller: macB, Path: path})
}

// TestBadAnnouncementDropped: an announcement whose path cannot reach the
// controller (empty, or with a 0 that makes a switch answer its ID) is a
// counted drop and changes nothing. An empty one used to replace the
// path of a host that knew its controller: its queries left with no tags
// and died at its switch until it relocated (found in review).
func TestBadAnnouncementDropped(t *testing.T) {
	for _, path := range [][]uint8{nil, {0}, {3, 0, 1}} {
		a, env := newTestAgent() // knows B by 3-1
		a.Receive(1, announce(t, path))
		if c := a.Counters(); c["drop_bad_control"] != 1 || c["controller_announced"] != 0 || !bytes.Equal(a.ctrlPath, []uint8{3, 1}) {
			t.Fatalf("announcement of %v: path %v, counters %v", path, a.ctrlPath, c)
		}
		// The next query still follows the path the host had.
		a.Receive(2, wire.AppendEthernet(nil, macC, macA, wire.EtherTypeIPv4, make([]byte, 40)))
		out := env.take()
		if len(out) != 1 {
			t.Fatalf("sent %d frames, want the query", len(out))
		}
		if tags, _, _, err := wire.ParseDumbNet(out[0].frame); err != nil || !bytes.Equal(tags, []uint8{3, 1}) {
			t.Fatalf("query tags %v err %v", tags, err)
		}

		// A host that knows no controller yet takes none from it.
		b := NewAgent(Config{Name: "b", MAC: macA, IP: ipA, Search: -1})
		b.Attach(newFakeEnv(), []element.PortInfo{{Port: 1, Up: true}, {Port: 2, Up: true, Local: true}})
		b.Receive(1, announce(t, path))
		if c := b.Counters(); c["drop_bad_control"] != 1 || c["controller_announced"] != 0 || b.haveCtrl {
			t.Fatalf("announcement of %v to a host without controller: %v", path, c)
		}
		b.Receive(1, announce(t, []uint8{4, 2}))
		if c := b.Counters(); c["controller_announced"] != 1 || c["controller_found"] != 1 || !bytes.Equal(b.ctrlPath, []uint8{4, 2}) {
			t.Fatalf("good announcement: path %v, counters %v", b.ctrlPath, c)
		}
	}
	// A new path for the known controller is taken, and counted.
	a, _ := newTestAgent()
	a.Receive(1, announce(t, []uint8{4, 2}))
	if c := a.Counters(); c["controller_announced"] != 1 || !bytes.Equal(a.ctrlPath, []uint8{4, 2}) {
		t.Fatalf("new path: %v, counters %v", a.ctrlPath, c)
	}
	// Longer than a frame carries, or with the end marker: the decoder
	// refuses those; routable too.
	for _, p := range [][]uint8{bytes.Repeat([]uint8{1}, wire.DumbNetMaxTags+1), {1, wire.DumbNetEnd, 2}} {
		if routable(p) {
			t.Errorf("routable(%v)", p)
		}
	}
	if !routable(bytes.Repeat([]uint8{254}, wire.DumbNetMaxTags)) {
		t.Error("a path of DumbNetMaxTags ports refused")
	}
}

// notify is a host notification from origin, naming port 1 of switch sw.
func notify(t *testing.T, origin wire.MAC, sw uint64, st wire.PortState) []byte {
	return ctrl(t, macA, origin, &wire.DumbNetHostNotify{Origin: origin, Seq: 1, SwitchID: sw, Port: 1, State: st})
}

// TestNotificationStateBounded: the tables a host keeps per switch port
// and per flooding host are bounded. Every host floods what it hears
// (§4.2) and any host can send a notification, so forged ones naming a
// new origin, switch and port each grew them without limit (200,000
// notifications, 200,000 entries in each: found in review). A full table
// starts afresh, counted, and the notification is handled as usual.
func TestNotificationStateBounded(t *testing.T) {
	a, env := newTestAgent()
	fill := func(n int, put func(i int)) {
		for i := range n {
			put(i)
		}
	}
	fill(maxOrigins-1, func(i int) { a.hostSeen[wire.MAC{0x02, 9, 0, byte(i >> 16), byte(i >> 8), byte(i)}] = &seqWindow{} })
	fill(maxPortStates-1, func(i int) {
		id := portID{uint64(1000 + i), 1}
		a.evState[id], a.downVer[id], a.swSeq[id] = wire.PortDown, 1, 1
	})
	forged := func(i int) wire.MAC { return wire.MAC{0x02, 0xba, 0xd0, 0, 0, byte(i)} }
	for i := range 3 {
		a.Receive(1, notify(t, forged(i), uint64(1<<40+i), wire.PortDown))
		env.take()
	}
	c := a.Counters()
	if c["host_notify_received"] != 3 || c["notify_flooded"] != 3 {
		t.Fatalf("forged notifications not handled as usual: %v", c)
	}
	// hostSeen filled at the first, evState and downVer at the second.
	if c["notify_state_forgotten"] != 3 || len(a.hostSeen) != 2 || len(a.evState) != 2 || len(a.downVer) != 2 {
		t.Fatalf("tables not started afresh: %d origins, %d states, %d versions; %v", len(a.hostSeen), len(a.evState), len(a.downVer), c)
	}
	// Switches' own notifications: the switch port table too.
	for i := range 2 {
		m := wire.DumbNetPortStatus{SwitchID: uint64(1<<41 + i), Port: 1, State: wire.PortUp, HopLimit: 2, Seq: 1}
		f, _ := wire.AppendControlFrame(nil, wire.Broadcast, macB, &m)
		a.Receive(1, f)
	}
	if c := a.Counters(); c["notify_state_forgotten"] != 4 || len(a.swSeq) != 1 || c["notify_received"] != 2 {
		t.Fatalf("switch port table: %d entries, %v", len(a.swSeq), c)
	}

	// The review's case, from scratch and past the origins' bound:
	// forged notifications, each from a new origin about a new switch.
	b, envB := newTestAgent()
	for i := range maxOrigins + 1000 {
		o := wire.MAC{0x02, 0xba, 0xd0, byte(i >> 16), byte(i >> 8), byte(i)}
		b.hostNotify(&wire.DumbNetHostNotify{Origin: o, Seq: 1, SwitchID: uint64(1<<40 + i), Port: 1, State: wire.PortDown}, o)
		if i%1024 == 0 {
			envB.take()
		}
	}
	if c := b.Counters(); len(b.hostSeen) != 1000 || c["notify_state_forgotten"] != 1 || c["host_notify_received"] != maxOrigins+1000 {
		t.Fatalf("%d origins kept; %v", len(b.hostSeen), c)
	}
}

// TestNotificationPortChecked: a notification naming port 0 or a port no
// one-byte tag names is malformed.
func TestNotificationPortChecked(t *testing.T) {
	for _, port := range []uint16{0, 255, 0xffff} {
		a, env := newTestAgent()
		a.Receive(1, ctrl(t, macA, macC, &wire.DumbNetHostNotify{Origin: macC, Seq: 1, SwitchID: 1, Port: port, State: wire.PortDown}))
		m := wire.DumbNetPortStatus{SwitchID: 1, Port: port, State: wire.PortDown, HopLimit: 2, Seq: 1}
		f, _ := wire.AppendControlFrame(nil, wire.Broadcast, macB, &m)
		a.Receive(1, f)
		if c := a.Counters(); c["drop_bad_control"] != 2 || len(a.evState) != 0 || len(env.take()) != 0 {
			t.Errorf("port %d: %v", port, c)
		}
	}
}

// TestControllerEarlyEventsBounded: the port changes held while the first
// discovery runs (the controller cannot tell a forged switch yet) are
// bounded; one more is dropped and counted.
func TestControllerEarlyEventsBounded(t *testing.T) {
	a, env := attachedAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true})
	c := a.ctrl
	c.linkEvent(7, 1, false)
	for i := range maxPortStates - 1 {
		c.early[portID{uint64(1000 + i), 1}] = false
	}
	a.Receive(1, notify(t, macC, 8, wire.PortDown))
	env.take()
	if n := a.Counters()["ctrl_link_events_dropped"]; n != 1 || len(c.early) != maxPortStates {
		t.Fatalf("%d held, %d dropped", len(c.early), n)
	}
	// A port already held is updated.
	c.linkEvent(7, 1, true)
	if !c.early[portID{7, 1}] || a.Counters()["ctrl_link_events_dropped"] != 1 {
		t.Fatal("held port not updated")
	}
}

// TestSwitchMPLSStackDepth: an MPLS label stack deeper than a path can be
// dies at the first switch, as a tag stack does.
func TestSwitchMPLSStackDepth(t *testing.T) {
	stack := func(labels int, bos bool) []byte {
		b := wire.AppendEthernet(nil, macB, macA, wire.EtherTypeMPLS, nil)
		for i := range labels {
			e := uint32(2)<<12 | 64
			if bos && i == labels-1 {
				e |= 1 << 8
			}
			b = binary.BigEndian.AppendUint32(b, e)
		}
		return append(b, 0x45, 0, 0, 20)
	}
	for _, c := range []struct {
		name    string
		frame   []byte
		counter string
	}{
		{"deepest path", stack(wire.DumbNetMaxTags+1, true), "forwarded"},
		{"too deep", stack(wire.DumbNetMaxTags+2, true), "drop_malformed"},
		{"no bottom", stack(wire.DumbNetMaxTags+20, false), "drop_malformed"},
		{"cut short", stack(3, false), "drop_truncated"},
	} {
		s, env := newTestSwitch(4)
		s.Receive(1, c.frame)
		sent := len(env.take())
		if c.counter != "forwarded" {
			sent++ // want none
		}
		if got := s.Counters()[c.counter]; got != 1 || sent != 1 {
			t.Errorf("%s: sent %d, counters %v", c.name, sent, s.Counters())
		}
	}
}

// TestDurationBounded: duration parameters above 1e6 s are refused (in
// picoseconds, 2563h wrapped to a negative time), and the waits built
// from the largest accepted ones do not wrap.
func TestDurationBounded(t *testing.T) {
	for _, v := range []string{"2563h", "1000001s", "300000h"} {
		if d, err := dur(v); err == nil || !strings.Contains(err.Error(), "at most 277h46m40s") {
			t.Errorf("dur(%q) = %v, %v", v, d, err)
		}
	}
	if d, err := dur("1000000s"); err != nil || d != maxDuration {
		t.Errorf("dur(1e6 s) = %v, %v", d, err)
	}
	if got := scale(1<<16, maxDuration); got != maxDuration {
		t.Errorf("scale saturated at %v", got)
	}
	if got := scale(3, element.Second); got != 3*element.Second {
		t.Errorf("scale(3, 1s) = %v", got)
	}
	// A query's backoff (QueryTimeout << tries) with the longest query
	// timeout, and with one beyond it given to NewAgent directly.
	for _, qt := range []element.Time{maxDuration, 1 << 62} {
		a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, QueryTimeout: qt})
		a.hold(macB, netip.Addr{}, nil, nil)
		q := a.byDst[macB]
		for tries := range 40 {
			q.tries = tries
			a.sendQuery(q)
			tm := env.timers[len(env.timers)-1]
			if w := tm.at - env.now; w <= 0 || w > maxDuration {
				t.Fatalf("query timeout %v, try %d: waits %v", qt, tries, w)
			}
		}
	}
}

// FuzzParams feeds New arbitrary values for every parameter: a clear
// ErrBadParam or a fabric, never a panic, and an accepted duration is
// positive and at most maxDuration.
func FuzzParams(f *testing.F) {
	for _, s := range []string{"1", "64", "-1", "2563h", "1000000s", "off", "true", " 9000 ", "1e9", "9223372036854775807ns", ""} {
		f.Add(uint8(0), s)
	}
	keys := []string{"controller", "k", "s", "eps", "hops", "suppress", "flowlets", "flowletgap", "mpls", "mtu", "maxports",
		"probetimeout", "probegap", "search", "querytimeout", "holdtime", "auditevery", "flapchanges", "flapwindow", "flaphold", "floodpt", "bogus"}
	g, err := topo.Parse("line:3", 1)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, key uint8, v string) {
		if d, err := dur(v); err == nil && (d <= 0 || d > maxDuration) {
			t.Fatalf("dur(%q) = %v", v, d)
		}
		if n, err := intIn(v, 1, 64); err == nil && (n < 1 || n > 64) {
			t.Fatalf("intIn(%q) = %d", v, n)
		}
		_, _ = boolean(v)
		k := keys[int(key)%len(keys)]
		fab, err := New(g, scheme.Options{Params: map[string]string{k: v}})
		if err != nil {
			if !errors.Is(err, ErrBadParam) || !strings.HasPrefix(err.Error(), "dumbnet: bad parameter: ") {
				t.Fatalf("%s=%q: %v", k, v, err)
			}
			return
		}
		for _, ag := range fab.agents {
			c := ag.cfg
			for _, d := range []element.Time{c.FlowletGap, c.ProbeTimeout, c.ProbeGap, c.QueryTimeout, c.HoldTime} {
				if d <= 0 || d > maxDuration {
					t.Fatalf("%s=%q: duration %v in %+v", k, v, d, c)
				}
			}
			if slices.Contains([]element.Time{c.Search, c.AuditEvery}, 0) || c.Search > maxDuration || c.AuditEvery > maxDuration {
				t.Fatalf("%s=%q: search %v, audit %v", k, v, c.Search, c.AuditEvery)
			}
		}
		for _, s := range fab.switches {
			if s.suppress <= 0 || s.suppress > maxDuration {
				t.Fatalf("%s=%q: suppress %v", k, v, s.suppress)
			}
		}
	})
}
