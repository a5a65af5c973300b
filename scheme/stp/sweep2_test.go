package stp

import (
	"errors"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// Tests from the second mutation sweep of the package: each pins one
// behaviour that a mutant of the production code changed without any
// earlier test noticing.

// feed injects m from station name every 2 s from from to to, as a
// neighbour's hellos would arrive.
func feed(n *fakeNet, name string, m BPDU, from, to element.Time) {
	for at := from; at <= to; at += 2 * sec {
		n.runUntil(at)
		n.inject(name, AppendFrame(nil, rootMAC, &m))
	}
}

// tcnsSince counts the TCNs station name received since mark.
func tcnsSince(n *fakeNet, name string, mark int) int {
	c := 0
	for _, m := range n.bpdus(name, mark) {
		if m.Type == TypeTCN {
			c++
		}
	}
	return c
}

// configsSince returns the configuration BPDUs station name received
// since mark.
func configsSince(n *fakeNet, name string, mark int) []BPDU {
	var out []BPDU
	for _, m := range n.bpdus(name, mark) {
		if m.Type == TypeConfig {
			out = append(out, m)
		}
	}
	return out
}

// pending lists the times of the engine's live timers and deliveries.
func pending(n *fakeNet) []element.Time {
	var out []element.Time
	for _, e := range n.q {
		if !e.dead {
			out = append(out, e.at)
		}
	}
	slices.Sort(out)
	return out
}

// attached returns a bridge attached to a benchEnv (timers never fire)
// with the given ports.
func attached(t *testing.T, infos ...element.PortInfo) (*Bridge, *benchEnv) {
	t.Helper()
	b, err := New(Config{MAC: [6]byte{2, 0, 0, 0, 0xaa, 0xbb}})
	if err != nil {
		t.Fatal(err)
	}
	env := &benchEnv{}
	b.Attach(env, infos)
	return b, env
}

// lateEnv is an engine that ignores cancellations: a stopped or re-armed
// timer's old callback is still delivered at its time, which the timer
// contract (bindTimer) says must be harmless.
type lateEnv struct {
	benchEnv
	timers []lateTimer
}

type lateTimer struct {
	at element.Time
	f  func()
}

func (e *lateEnv) After(d element.Time, f func()) func() {
	e.timers = append(e.timers, lateTimer{e.now + d, f})
	return func() {}
}

// runUntil delivers every callback due by t, in time order.
func (e *lateEnv) runUntil(t element.Time) {
	for {
		i := -1
		for j, x := range e.timers {
			if x.at <= t && (i < 0 || x.at < e.timers[i].at) {
				i = j
			}
		}
		if i < 0 {
			e.now = t
			return
		}
		x := e.timers[i]
		e.timers = slices.Delete(e.timers, i, i+1)
		e.now = x.at
		x.f()
	}
}

// The BPDU's 16-bit timer fields carry 1/256 s up to 0xffff/256 s, both
// ends included (§9.2.8): a timer of exactly either is accepted.
func TestTimerFieldLimitsInclusive(t *testing.T) {
	if _, err := New(Config{HelloTime: tick}); err != nil {
		t.Fatalf("hello 1/256 s: %v", err)
	}
	if _, err := New(Config{ForwardDelay: 0xffff * tick}); err != nil {
		t.Fatalf("forward delay 0xffff/256 s: %v", err)
	}
	if _, err := New(Config{ForwardDelay: 0xffff*tick + 1}); !errors.Is(err, ErrConfig) {
		t.Fatalf("forward delay past the field: %v", err)
	}
}

// A port whose PortInfo has no MAC sends from the bridge address with the
// port number, high byte then low byte, in the last two bytes (as
// topo.PortMAC).
func TestDefaultPortMAC(t *testing.T) {
	b, _ := attached(t, element.PortInfo{Port: 0x0102, Up: true})
	if got, want := b.ports[0x0101].mac, [6]byte{2, 0, 0, 0, 1, 2}; got != want {
		t.Fatalf("port 0x102 sends from %x, want %x", got, want)
	}
}

// A relaying host's local port takes no part in the tree: it forwards
// while its link is up (and only then), sends no BPDU, and drops those
// it receives.
func TestLocalPortOutOfTheTree(t *testing.T) {
	b, env := attached(t, element.PortInfo{Port: 1, Up: true},
		element.PortInfo{Port: 2, Up: true, Local: true}, element.PortInfo{Port: 3, Local: true})
	if s, r := b.PortState(2); s != Forwarding || r != RoleLocal {
		t.Fatalf("local port up: %v/%v", s, r)
	}
	if s, r := b.PortState(3); s != Disabled || r != RoleLocal {
		t.Fatalf("local port down: %v/%v", s, r)
	}
	if env.sent != 1 {
		t.Fatalf("%d BPDUs at attach, want 1 (port 1's)", env.sent)
	}
	sup := superior(0)
	b.Receive(2, AppendFrame(nil, rootMAC, &sup))
	if !b.Status().IsRoot() || b.Counters()["drop_bpdu_local_port"] != 1 {
		t.Fatalf("BPDU from the local port used: %+v %v", b.Status(), b.Counters())
	}
}

// Port 4095 is the last an 802.1t port identifier numbers: it runs the
// protocol. Port 4096 stays disabled, whatever its link does.
func TestPortNumberLimit(t *testing.T) {
	b, _ := attached(t, element.PortInfo{Port: MaxPort, Up: true}, element.PortInfo{Port: MaxPort + 1, Up: true})
	if s, r := b.PortState(MaxPort); s != Listening || r != RoleDesignated {
		t.Fatalf("port 4095: %v/%v", s, r)
	}
	if s, _ := b.PortState(MaxPort + 1); s != Disabled || b.Counters()["port_out_of_range"] != 1 {
		t.Fatalf("port 4096: %v, counters %v", s, b.Counters())
	}
	b.LinkChange(MaxPort+1, false)
	b.LinkChange(MaxPort+1, true)
	if s, _ := b.PortState(MaxPort + 1); s != Disabled {
		t.Fatalf("port 4096 after link up: %v", s)
	}
}

// A port whose link is down at attach starts disabled (§8.8.1 initialises
// only enabled ports) and is enabled when its link comes up (§8.8.2).
func TestPortDownAtAttach(t *testing.T) {
	b, _ := attached(t, element.PortInfo{Port: 1, Up: true}, element.PortInfo{Port: 2})
	if s, r := b.PortState(2); s != Disabled || r != RoleDisabled {
		t.Fatalf("port 2 at attach: %v/%v", s, r)
	}
	b.LinkChange(2, true)
	if s, r := b.PortState(2); s != Listening || r != RoleDesignated {
		t.Fatalf("port 2 after link up: %v/%v", s, r)
	}
}

// A link-up report for a port that is already up changes nothing: no
// restart of listening and learning (§8.8.2 enables disabled ports only),
// no state transition counted, with the tree on or off.
func TestLinkUpOnEnabledPortChangesNothing(t *testing.T) {
	for _, params := range []map[string]string{nil, {"stp": "off"}} {
		n := newFakeNet(t, star(t, 2), params)
		n.runUntil(31 * sec)
		s1 := n.bridge("s1")
		states, counters := portStates(n), s1.Counters()
		s1.LinkChange(1, true)
		if got := portStates(n); got != states {
			t.Fatalf("%v: states %s, want %s", params, got, states)
		}
		if got := s1.Counters(); !maps.Equal(got, counters) {
			t.Fatalf("%v: counters %v, want %v", params, got, counters)
		}
	}
}

// Without the tree a port forwards as soon as its link is back up.
func TestNoSTPLinkUpForwardsAtOnce(t *testing.T) {
	n := newFakeNet(t, star(t, 2), map[string]string{"stp": "off"})
	n.run(us)
	n.setLink("s1", "h1", false)
	n.setLink("s1", "h1", true)
	if s, _ := n.bridge("s1").PortState(1); s != Forwarding {
		t.Fatalf("port 1 %v after link up", s)
	}
}

// A frame of exactly an Ethernet header (14 bytes) is not a runt: it is
// relayed like any other.
func TestHeaderOnlyFrameRelayed(t *testing.T) {
	n := newFakeNet(t, star(t, 3), nil)
	n.runUntil(31 * sec)
	h1 := n.hostMAC("h1")
	f := append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, h1[:]...)
	f = append(f, 0x88, 0xb5)
	n.inject("h1", f)
	n.run(10 * us)
	if c := n.bridge("s1").Counters(); c["flooded"] != 1 || c["drop_runt"] != 0 {
		t.Fatalf("counters %v", c)
	}
	for _, h := range []string{"h2", "h3"} {
		got := 0
		for _, r := range n.node(h).st.rx {
			if len(r) == ethLen {
				got++
			}
		}
		if got != 1 {
			t.Errorf("%s got %d copies", h, got)
		}
	}
}

// Frames to 01:80:C2:00:00:01..0F are link-local (§7.12.6): counted and
// never relayed, up to 0F.
func TestLinkLocalNeverRelayed(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(31 * sec)
	m2 := n.mark("h2")
	h1 := n.hostMAC("h1")
	for _, last := range []byte{0x01, 0x08, 0x0f} {
		f := append([]byte{0x01, 0x80, 0xc2, 0, 0, last}, h1[:]...)
		f = append(f, 0x88, 0x09)
		n.inject("h1", append(f, make([]byte, 46)...))
	}
	n.run(10 * us)
	if c := n.bridge("s1").Counters()["drop_link_local"]; c != 3 {
		t.Fatalf("drop_link_local = %d", c)
	}
	if got := len(n.node("h2").st.rx[m2:]) - len(n.bpdus("h2", m2)); got != 0 {
		t.Fatalf("h2 got %d link-local frames", got)
	}
}

// A listening port discards frames and learns nothing (§8.4.2): only
// learning and forwarding ports learn.
func TestListeningPortDiscards(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(5 * sec)
	n.sendFrom("h1", [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "early")
	n.run(10 * us)
	s1 := n.bridge("s1")
	if c := s1.Counters(); c["drop_port_blocked"] != 1 || c["learned"] != 0 {
		t.Fatalf("counters %v", c)
	}
	if _, ok := s1.Lookup(n.hostMAC("h1")); ok || n.received("h2", "early") != 0 {
		t.Fatal("listening port learned or relayed")
	}
}

// A data frame on a disabled port (an engine race) counts as
// drop_port_disabled, not as blocked.
func TestDataFrameOnDisabledPort(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(31 * sec)
	n.setLink("s1", "h1", false)
	s1 := n.bridge("s1")
	h1 := n.hostMAC("h1")
	f := append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, h1[:]...)
	s1.Receive(1, append(f, make([]byte, 48)...))
	if c := s1.Counters(); c["drop_port_disabled"] != 1 || c["drop_port_blocked"] != 0 {
		t.Fatalf("counters %v", c)
	}
}

// While TC is set a lookup ages entries after the forward delay (§8.3.5):
// a frame to a station last seen exactly forward delay ago is forwarded,
// a picosecond later it floods and the entry's end is counted.
func TestTopologyChangeAgesLookups(t *testing.T) {
	n := newFakeNet(t, star(t, 3), nil)
	n.runUntil(70 * sec)
	s1 := n.bridge("s1")
	h2 := n.hostMAC("h2")
	n.sendFrom("h2", n.hostMAC("h3"), "learn")
	n.run(10 * us)
	n.runUntil(71 * sec)
	n.inject("h3", AppendFrame(nil, [6]byte{2}, &BPDU{Type: TypeTCN})) // TC until 106 s
	n.run(10 * us)
	e, _ := s1.fdb.get(h2)
	delay := topo.DefaultDelay
	n.runUntil(e.seen + 15*sec - delay)
	n.sendFrom("h1", h2, "at")
	n.runUntil(e.seen + 15*sec + 1 - delay)
	n.sendFrom("h1", h2, "past")
	n.run(10 * us)
	if n.received("h2", "at") != 1 || n.received("h3", "at") != 0 {
		t.Fatal("frame at the forward delay not forwarded to h2 alone")
	}
	if n.received("h2", "past") != 1 || n.received("h3", "past") != 1 {
		t.Fatal("frame past the forward delay not flooded")
	}
	if c := s1.Counters()["aged_out"]; c != 1 {
		t.Fatalf("aged_out = %d", c)
	}
}

// Flooding counts one flood and one copy per forwarding port; with no
// other forwarding port (the fabric ports of an edge bridge still
// listening) the frame is a counted drop, and listening ports get no
// copy.
func TestFloodCounters(t *testing.T) {
	bcast := [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	for _, k := range []int{2, 3} {
		n := newFakeNet(t, star(t, k), nil)
		n.runUntil(31 * sec)
		n.sendFrom("h1", bcast, "b")
		n.run(10 * us)
		c := n.bridge("s1").Counters()
		if c["flooded"] != 1 || c["flood_copies"] != uint64(k-1) || c["drop_no_egress"] != 0 {
			t.Fatalf("star:%d: counters %v", k, c)
		}
	}
	n := newFakeNet(t, ring3(t), map[string]string{"edge_ports": "true"})
	n.runUntil(sec)
	n.sendFrom("h1", bcast, "b")
	n.run(10 * us)
	if c := n.bridge("s1").Counters(); c["drop_no_egress"] != 1 || c["flooded"] != 0 {
		t.Fatalf("edge port, fabric listening: counters %v", c)
	}
}

// The short aging of a topology change is the forward delay in force,
// the root's (§8.3.5, §8.6.3), not the bridge's own.
func TestTopologyChangeAgingIsRootForwardDelay(t *testing.T) {
	n := newFakeNet(t, star(t, 3), nil)
	sup := superior(0)
	sup.ForwardDelay, sup.TC = 4*256, true
	feed(n, "h1", sup, sec/2, 20*sec)
	s1 := n.bridge("s1")
	h2 := n.hostMAC("h2")
	n.sendFrom("h2", n.hostMAC("h3"), "learn")
	n.run(10 * us)
	e, ok := s1.fdb.get(h2)
	if !ok {
		t.Fatal("h2 not learned")
	}
	n.runUntil(e.seen + 4*sec)
	if _, ok := s1.Lookup(h2); !ok {
		t.Fatal("aged before the root's forward delay")
	}
	n.runUntil(e.seen + 4*sec + 1)
	if _, ok := s1.Lookup(h2); ok {
		t.Fatal("not aged after the root's forward delay")
	}
}

// One sweep timer per non-empty table, due one aging time after it was
// armed (even during a topology change), and none once the table is
// empty: an idle bridge keeps only its hello timer.
func TestSweepTimerOnlyWhileTableHoldsEntries(t *testing.T) {
	n := newFakeNet(t, star(t, 3), map[string]string{"aging": "10s"})
	n.runUntil(70*sec + sec/2)
	n.inject("h3", AppendFrame(nil, [6]byte{2}, &BPDU{Type: TypeTCN})) // TC until 105.5 s + 1 µs
	n.runUntil(73*sec + sec/2)
	tcEnd := 70*sec + sec/2 + us + 35*sec
	if got, want := pending(n), []element.Time{74 * sec, tcEnd}; !slices.Equal(got, want) {
		t.Fatalf("before learning: timers at %v, want %v", got, want)
	}
	for _, h := range []string{"h1", "h2", "h3"} {
		n.sendFrom(h, n.hostMAC("h1"), "x")
	}
	n.run(10 * us)
	learned := 73*sec + sec/2 + us
	if got, want := pending(n), []element.Time{74 * sec, learned + 10*sec, tcEnd}; !slices.Equal(got, want) {
		t.Fatalf("after learning: timers at %v, want %v", got, want)
	}
	n.runUntil(95*sec + sec/2)
	if got, want := pending(n), []element.Time{96 * sec, tcEnd}; !slices.Equal(got, want) || n.bridge("s1").Entries() != 0 {
		t.Fatalf("table emptied: timers at %v, want %v; %d entries", got, want, n.bridge("s1").Entries())
	}
}

// A port that leaves learning for disabled loses its entries and raises a
// topology change (§8.6.13 counts learning as well as forwarding).
func TestLeavingLearningFlushesAndSignals(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(20 * sec)
	s1 := n.bridge("s1")
	n.sendFrom("h1", n.hostMAC("h2"), "x")
	n.run(10 * us)
	if _, ok := s1.Lookup(n.hostMAC("h1")); !ok {
		t.Fatal("h1 not learned while learning")
	}
	n.setLink("s1", "h1", false)
	c := s1.Counters()
	if _, ok := s1.Lookup(n.hostMAC("h1")); ok || c["flushed"] != 1 {
		t.Fatalf("entry kept: counters %v", c)
	}
	if c["topology_change_detected"] != 1 || !s1.Status().TopologyChange {
		t.Fatalf("no topology change: %v %+v", c, s1.Status())
	}
}

// A forwarding port that becomes blocked loses its entries: its stations
// are reached, if at all, through another port.
func TestBlockedPortLosesEntries(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(31 * sec)
	s1 := n.bridge("s1")
	n.sendFrom("h2", n.hostMAC("h1"), "x")
	n.run(10 * us)
	sup := superior(0)
	n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	n.inject("h2", AppendFrame(nil, rootMAC, &sup))
	n.run(10 * us)
	if s, r := s1.PortState(2); s != Blocking || r != RoleBlocked {
		t.Fatalf("port 2 %v/%v", s, r)
	}
	if _, ok := s1.Lookup(n.hostMAC("h2")); ok || s1.Counters()["flushed"] != 1 {
		t.Fatalf("entry of the blocked port kept: %v", s1.Counters())
	}
}

// A BPDU on an edge port makes it an ordinary port: it goes through
// listening and learning, and its move to forwarding then raises a
// topology change like any port's.
func TestEdgePortLosesEdgeStatus(t *testing.T) {
	n := newFakeNet(t, star(t, 2), map[string]string{"edge_ports": "true"})
	n.runUntil(5 * sec)
	s1 := n.bridge("s1")
	if s, _ := s1.PortState(1); s != Forwarding {
		t.Fatalf("edge port %v", s)
	}
	inf := superior(0)
	inf.Root = MakeBridgeID(0xf000, [6]byte{2})
	inf.Bridge = inf.Root
	n.inject("h1", AppendFrame(nil, [6]byte{2}, &inf))
	n.run(10 * us)
	if s, r := s1.PortState(1); s != Listening || r != RoleDesignated || s1.Counters()["edge_lost"] != 1 {
		t.Fatalf("after a BPDU: %v/%v, counters %v", s, r, s1.Counters())
	}
	n.runUntil(5*sec + us + 30*sec - 1)
	if s, _ := s1.PortState(1); s != Learning || s1.Counters()["topology_change_detected"] != 0 {
		t.Fatalf("before 2 × forward delay: %v, counters %v", s, s1.Counters())
	}
	n.runUntil(5*sec + us + 30*sec)
	if s, _ := s1.PortState(1); s != Forwarding || s1.Counters()["topology_change_detected"] != 1 {
		t.Fatalf("after 2 × forward delay: %v, counters %v", s, s1.Counters())
	}
}

// A root that is still signalling a topology change of its own and hears
// a better root passes the change on (§8.7.1) and keeps it detected until
// acknowledged: its own TC timer no longer runs, and a further change
// sends no extra TCN (§8.6.14).
func TestDemotedRootKeepsTCNUntilAcknowledged(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(40 * sec) // TC of the ports' forwarding at 30 s, until 65 s
	m1 := n.mark("h1")
	feed(n, "h1", superior(0), 40*sec, 66*sec)
	s1 := n.bridge("s1")
	if tcnsSince(n, "h1", m1) == 0 {
		t.Fatal("no TCN toward the new root")
	}
	n.runUntil(66*sec + sec/2)
	if !s1.Status().TopologyChangeDetected {
		t.Fatal("topology change forgotten without acknowledgment")
	}
	m1 = n.mark("h1")
	n.setLink("s1", "h2", false)
	n.run(10 * us)
	if got := tcnsSince(n, "h1", m1); got != 0 {
		t.Fatalf("%d TCNs for a change while one is unacknowledged", got)
	}
}

// A relay carries the root's hello time and forward delay (§8.6.1: the
// values in force, recorded from the root port, §8.6.3).
func TestRelayCarriesRootTimers(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(sec / 2)
	m2 := n.mark("h2")
	sup := superior(0)
	sup.HelloTime, sup.ForwardDelay = 256, 10*256
	n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	n.runUntil(sec + us)
	got := n.bpdus("h2", m2)
	if len(got) != 1 || got[0].HelloTime != 256 || got[0].ForwardDelay != 10*256 || got[0].MaxAge != 20*256 {
		t.Fatalf("relay %+v", got)
	}
}

// A topology change acknowledgment is sent once (§8.6.1 clears the flag
// with the BPDU that carries it): the next hello has no TCA.
func TestAcknowledgmentSentOnce(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(71*sec + sec/2)
	m1 := n.mark("h1")
	n.inject("h1", AppendFrame(nil, [6]byte{2}, &BPDU{Type: TypeTCN}))
	n.runUntil(75 * sec)
	got := n.bpdus("h1", m1)
	if len(got) != 3 || !got[0].TCA || got[1].TCA || got[2].TCA {
		t.Fatalf("BPDUs after a TCN: %+v", got)
	}
}

// A bridge relays information up to the root's max age, not its own: with
// the root at 24 s, an age of 19 s is relayed as 20 s.
func TestRelayUpToRootMaxAge(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(3*sec + sec/2)
	m2 := n.mark("h2")
	sup := superior(19 * 256)
	sup.MaxAge = 24 * 256
	n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	n.run(10 * us)
	got := n.bpdus("h2", m2)
	if len(got) != 1 || got[0].MessageAge != 20*256 || got[0].MaxAge != 24*256 {
		t.Fatalf("relay %+v", got)
	}
}

// Information from the port's designated bridge through another of its
// ports supersedes what the port holds (§8.6.2.2 d: a bridge other than
// this one), even with a higher port identifier.
func TestSupersedesSameBridgeOtherPort(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(3*sec + sec/2)
	sup := superior(0)
	n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	sup.Port = 0x8002
	n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	n.run(10 * us)
	if got := n.bridge("s1").Status().Ports[0].DesignatedPort; got != 0x8002 {
		t.Fatalf("designated port %v, want 0x8002", got)
	}
}

// The bridge's own BPDU from a higher-numbered port, looped back to a
// lower one, is inferior there (§8.6.2.2 d, this bridge): the port stays
// designated and answers (§8.6.5).
func TestOwnHigherPortBPDUAnswered(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(3*sec + sec/2)
	s1 := n.bridge("s1")
	m1 := n.mark("h1")
	own := BPDU{Type: TypeConfig, Root: s1.ID(), Bridge: s1.ID(), Port: MakePortID(0x80, 2),
		MaxAge: 20 * 256, HelloTime: 2 * 256, ForwardDelay: 15 * 256}
	n.inject("h1", AppendFrame(nil, topo.PortMAC(0, 2), &own))
	n.run(10 * us)
	got := n.bpdus("h1", m1)
	if len(got) != 1 || got[0].Port != 0x8001 {
		t.Fatalf("answer %+v", got)
	}
	if _, r := s1.PortState(1); r != RoleDesignated {
		t.Fatalf("port 1 %v", r)
	}
}

// Information on a port ages against the max age in force (the root's,
// recorded from the root port), not the max age the BPDU that brought it
// carried.
func TestBlockedPortAgesAtMaxAgeInForce(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	sup := superior(0)
	n.runUntil(sec / 2)
	n.inject("h1", AppendFrame(nil, rootMAC, &sup)) // max age 20 s in force
	n.runUntil(sec)
	alt := superior(0)
	alt.RootPathCost, alt.MaxAge = 4, 30*256
	alt.Bridge = MakeBridgeID(0x2000, [6]byte{2, 0, 0, 0, 0, 8})
	n.inject("h2", AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 8}, &alt))
	feed(n, "h1", sup, 2*sec+sec/2, 20*sec+sec/2)
	s1 := n.bridge("s1")
	expire := sec + us + 20*sec
	n.runUntil(expire - 1)
	if _, r := s1.PortState(2); r != RoleBlocked {
		t.Fatalf("port 2 %v before max age", r)
	}
	n.runUntil(expire)
	if _, r := s1.PortState(2); r != RoleDesignated || s1.Counters()["message_age_expired"] != 1 {
		t.Fatalf("port 2 %v at max age, counters %v", r, s1.Counters())
	}
}

// A reply or acknowledgment held by the hold timer is forgotten when the
// port becomes the root port (§8.6.11 clears config_pending and the TCA
// flag): no configuration BPDU goes out on the root port, and the port's first BPDU when
// it is designated again carries no stale acknowledgment.
func TestPendingReplyDroppedOnRootPort(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(sec / 2)
	m2 := n.mark("h2")
	n.inject("h2", AppendFrame(nil, [6]byte{2}, &BPDU{Type: TypeTCN})) // ack held until 1 s
	n.runUntil(sec/2 + sec/10)
	sup := superior(0)
	n.inject("h2", AppendFrame(nil, rootMAC, &sup))
	n.runUntil(2 * sec)
	if got := configsSince(n, "h2", m2); len(got) != 0 {
		t.Fatalf("sent on the root port: %+v", got)
	}
	// The root's information ages out at 20.6 s: port 2 is designated
	// again and s1, root again, speaks on it.
	n.runUntil(21 * sec)
	got := configsSince(n, "h2", m2)
	if len(got) != 1 || got[0].TCA {
		t.Fatalf("after the root port's information aged: %+v", got)
	}
}

// A port that becomes designated stops its message age timer (§8.6.11):
// the information it held no longer matters and must not expire.
func TestDesignatedPortStopsMessageAge(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(sec / 2)
	far := superior(0)
	far.RootPathCost = 8
	far.Bridge = MakeBridgeID(0x2000, [6]byte{2, 0, 0, 0, 0, 8})
	n.inject("h2", AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 8}, &far))
	n.run(10 * us)
	if st := n.bridge("s1").Status(); st.RootPort != 2 {
		t.Fatalf("root port %d", st.RootPort)
	}
	feed(n, "h1", superior(0), sec/2+sec/10, 30*sec)
	s1 := n.bridge("s1")
	if st := s1.Status(); st.RootPort != 1 || st.Ports[1].Role != RoleDesignated || s1.Counters()["message_age_expired"] != 0 {
		t.Fatalf("%+v %v", st, s1.Counters())
	}
}

// A port that starts listening after the root's BPDU listens for the
// root's forward delay (§8.6.12 with the value in force).
func TestListeningUsesRootForwardDelay(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	sup := superior(0)
	sup.ForwardDelay = 4 * 256
	feed(n, "h1", sup, sec/2, 18*sec)
	n.runUntil(19 * sec)
	n.setLink("s1", "h2", false)
	n.setLink("s1", "h2", true)
	s1 := n.bridge("s1")
	n.runUntil(23*sec - 1)
	if s, _ := s1.PortState(2); s != Listening {
		t.Fatalf("port 2 %v", s)
	}
	n.runUntil(23 * sec)
	if s, _ := s1.PortState(2); s != Learning {
		t.Fatalf("port 2 %v after the root's forward delay", s)
	}
}

// When the root's forward delay changes, a running forward delay timer
// keeps its value: one already past the new limit expires at once, and a
// timer started after an earlier change counts from its own start.
func TestForwardDelayChangesMidway(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(5 * sec)
	sup := superior(0)
	sup.ForwardDelay = 4 * 256 // port 2 has listened 5 s
	n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	n.run(us)
	s1 := n.bridge("s1")
	if s, _ := s1.PortState(2); s != Learning {
		t.Fatalf("port 2 %v after a forward delay shorter than its listening", s)
	}
	n.runUntil(7 * sec)
	sup.ForwardDelay = 6 * 256 // learning since 5 s + 1 µs: forwards at 11 s + 1 µs
	n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	n.runUntil(11*sec + us - 1)
	if s, _ := s1.PortState(2); s != Learning {
		t.Fatalf("port 2 %v before 6 s of learning", s)
	}
	n.runUntil(11*sec + us)
	if s, _ := s1.PortState(2); s != Forwarding {
		t.Fatalf("port 2 %v after 6 s of learning", s)
	}
}

// A bridge that becomes root again uses its own timers (§8.7.4 with
// §8.6.3's values taken from the bridge), in its status and its BPDUs.
func TestNewRootUsesOwnTimers(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(sec / 2)
	sup := superior(0)
	sup.MaxAge, sup.HelloTime, sup.ForwardDelay = 6*256, 256, 4*256
	n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	n.runUntil(6*sec + sec/2 + us)
	s1 := n.bridge("s1")
	m2 := n.mark("h2")
	n.run(us)
	st := s1.Status()
	if !st.IsRoot() || st.MaxAge != 20*sec || st.HelloTime != 2*sec || st.ForwardDelay != 15*sec {
		t.Fatalf("status %+v", st)
	}
	got := n.bpdus("h2", m2)
	if len(got) != 1 || got[0].MaxAge != 20*256 || got[0].HelloTime != 2*256 || got[0].ForwardDelay != 15*256 {
		t.Fatalf("BPDUs %+v", got)
	}
}

// Becoming root stops the TCN timer (§8.7.4): a bridge that later has a
// root port again sends no TCN for a change that ended meanwhile.
func TestBecomingRootStopsTCNTimer(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(sec / 2)
	sup := superior(0)
	n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	n.runUntil(2 * sec)
	n.inject("h2", AppendFrame(nil, [6]byte{2}, &BPDU{Type: TypeTCN})) // unacknowledged
	n.runUntil(70 * sec)                                               // root since 20.5 s, TC over at 65 s
	s1 := n.bridge("s1")
	if st := s1.Status(); !st.IsRoot() || st.TopologyChangeDetected {
		t.Fatalf("status %+v", st)
	}
	m1 := n.mark("h1")
	feed(n, "h1", sup, 70*sec, 80*sec)
	if got := tcnsSince(n, "h1", m1); got != 0 {
		t.Fatalf("%d TCNs", got)
	}
}

// A disabled port is designated (§8.8.3), so a bridge whose only port
// besides the root port is disabled is designated for some port: its
// root port's move to forwarding raises a topology change (§8.7.5, the
// standard's designated_for_some_port). A bridge with the root port alone
// raises none.
func TestDisabledPortIsDesignated(t *testing.T) {
	for _, c := range []struct {
		k    int
		tcns uint64 // topology changes detected
	}{{2, 1}, {1, 0}} {
		n := newFakeNet(t, star(t, c.k), nil)
		if c.k == 2 {
			n.setLink("s1", "h2", false)
		}
		m1 := n.mark("h1")
		feed(n, "h1", superior(0), sec/2, 40*sec)
		s1 := n.bridge("s1")
		if s, r := s1.PortState(1); s != Forwarding || r != RoleRoot {
			t.Fatalf("star(%d): port 1 %v/%v", c.k, s, r)
		}
		if got := s1.Counters()["topology_change_detected"]; (tcnsSince(n, "h1", m1) > 0) != (c.tcns > 0) || got != c.tcns {
			t.Fatalf("star(%d): TCNs %d, counters %v", c.k, tcnsSince(n, "h1", m1), s1.Counters())
		}
	}
}

// An edge port's link failure raises no topology change.
func TestEdgePortDownNoTopologyChange(t *testing.T) {
	n := newFakeNet(t, star(t, 2), map[string]string{"edge_ports": "true"})
	n.runUntil(70 * sec)
	n.setLink("s1", "h1", false)
	s1 := n.bridge("s1")
	if s1.Status().TopologyChange || s1.Counters()["topology_change_detected"] != 0 {
		t.Fatalf("%+v %v", s1.Status(), s1.Counters())
	}
}

// A failed root port's information is gone with it (§8.8.3 stops its
// message age timer): it does not expire later.
func TestDisabledRootPortStopsMessageAge(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(sec / 2)
	sup := superior(0)
	n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	n.runUntil(5 * sec)
	n.setLink("s1", "h1", false)
	n.runUntil(40 * sec)
	if c := n.bridge("s1").Counters()["message_age_expired"]; c != 0 {
		t.Fatalf("message_age_expired = %d", c)
	}
}

// A MAC table slot freed by aging is free: a sweep does not free it again
// and a flush of its old port does not count it.
func TestFreedEntriesStayFreed(t *testing.T) {
	n := newFakeNet(t, star(t, 3), map[string]string{"aging": "10s"})
	n.runUntil(70 * sec)
	s1 := n.bridge("s1")
	n.sendFrom("h1", n.hostMAC("h3"), "a") // sweeps at 80 s and 90 s (+1 µs)
	n.runUntil(85 * sec)
	n.sendFrom("h2", n.hostMAC("h1"), "b") // h1's entry aged: deleted by the lookup
	n.runUntil(91 * sec)
	if c := s1.Counters(); c["aged_out"] != 1 || s1.Entries() != 1 {
		t.Fatalf("after the sweep: %d entries, counters %v", s1.Entries(), c)
	}
	n.setLink("s1", "h1", false)
	if c := s1.Counters(); c["flushed"] != 0 {
		t.Fatalf("flushed = %d", c["flushed"])
	}
}

// An entry learned at time 0 is flushed like any other.
func TestFlushEntryLearnedAtTimeZero(t *testing.T) {
	env := &benchEnv{}
	b := forwardingBridge(t, env, 2)
	b.Receive(1, frame(macB, macA, 60))
	b.LinkChange(1, false)
	if _, ok := b.Lookup(macA); ok || b.Counters()["flushed"] != 1 {
		t.Fatalf("entry of time 0 not flushed: %v", b.Counters())
	}
}

// A BPDU frame without padding (802.3 length = all that follows) decodes;
// an 802.3 length of just the LLC header with the wrong LLC is not a
// BPDU.
func TestDecodeFrameLengthEdges(t *testing.T) {
	full := AppendFrame(nil, [6]byte{2}, &BPDU{Type: TypeTCN})
	exact := full[:ethLen+llcLen+TCNLen]
	var m BPDU
	if err := DecodeFrame(exact, &m); err != nil || m.Type != TypeTCN {
		t.Fatalf("unpadded TCN: %v %+v", err, m)
	}
	bad := append([]byte(nil), full...)
	bad[13], bad[14] = llcLen, 0xaa
	if err := DecodeFrame(bad, &m); !errors.Is(err, ErrNotBPDU) {
		t.Fatalf("3-byte body with a foreign LLC: %v", err)
	}
}

// AppendFrame pads the frame it appends, not the buffer: after a prefix
// the frame is still 60 bytes.
func TestAppendFrameAfterPrefix(t *testing.T) {
	b := AppendFrame(make([]byte, 10), [6]byte{2}, &BPDU{Type: TypeTCN})
	if len(b) != 10+minFrame {
		t.Fatalf("%d bytes, want %d", len(b), 10+minFrame)
	}
}

// relayGraph is a switch s1 with a relaying host r1 (a BCube server).
func relayGraph(t *testing.T) *topo.Graph {
	t.Helper()
	b := topo.NewBuilder("relay")
	s := b.AddNode("s1", topo.Switch)
	h := b.AddNode("r1", topo.Host)
	b.Node(h).Relay = true
	b.Connect(s, h)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A port facing a relaying host faces a bridge: edge_ports leaves it an
// ordinary port.
func TestRelayHostPortNotEdge(t *testing.T) {
	n := newFakeNet(t, relayGraph(t), map[string]string{"edge_ports": "true"})
	n.runUntil(sec)
	s1 := n.bridge("s1")
	if s, _ := s1.PortState(1); s != Listening || s1.Counters()["edge_lost"] != 0 || s1.Counters()["port_state_forwarding"] != 0 {
		t.Fatalf("s1's port to the relaying host %v, counters %v", s, s1.Counters())
	}
}

// An explicit priority applies to relaying hosts too (docs/stp.md §1).
func TestExplicitPriorityAppliesToRelayHosts(t *testing.T) {
	g := relayGraph(t)
	f, err := NewFabric(g, map[string]string{"priority": "4096"})
	if err != nil {
		t.Fatal(err)
	}
	r1, _ := g.Lookup("r1")
	if p := f.Bridge(r1).ID().Priority(); p != 4096 {
		t.Fatalf("relaying host priority %d", p)
	}
}

// A zero duration is refused, not taken as "use the default".
func TestZeroDurationParamRefused(t *testing.T) {
	if _, err := NewFabric(ring3(t), map[string]string{"hello": "0"}); !errors.Is(err, ErrParam) {
		t.Fatalf("hello=0: %v", err)
	}
}

// Adding a zero cost (possible through Config.PathCost) is no overflow.
func TestAddCostZero(t *testing.T) {
	if got := addCost(7, 0); got != 7 {
		t.Fatalf("7+0 = %d", got)
	}
	if got := addCost(math.MaxUint32, 0); got != math.MaxUint32 {
		t.Fatalf("max+0 = %d", got)
	}
}

// Information a root bridge holds on a blocked port (its own, looped
// back) that ages out raises no topology change: the bridge did not
// become root (§8.7.4 acts only on a bridge that just became root).
func TestOwnInfoExpiryWhileRoot(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(sec / 2)
	s1 := n.bridge("s1")
	own := BPDU{Type: TypeConfig, Root: s1.ID(), Bridge: s1.ID(), Port: MakePortID(0x80, 1),
		MaxAge: 20 * 256, HelloTime: 2 * 256, ForwardDelay: 15 * 256}
	n.inject("h2", AppendFrame(nil, topo.PortMAC(0, 1), &own))
	n.run(10 * us)
	if _, r := s1.PortState(2); r != RoleBlocked {
		t.Fatalf("port 2 %v", r)
	}
	n.runUntil(21 * sec)
	if _, r := s1.PortState(2); r != RoleDesignated || s1.Counters()["message_age_expired"] != 1 {
		t.Fatalf("port 2 %v, counters %v", r, s1.Counters())
	}
	if s1.Status().TopologyChange || s1.Counters()["topology_change_detected"] != 0 {
		t.Fatalf("topology change: %+v %v", s1.Status(), s1.Counters())
	}
}

// A root that loses a port stays root and keeps its hello rhythm: no
// extra configuration BPDU at the failure.
func TestRootLinkDownKeepsHelloRhythm(t *testing.T) {
	n := newFakeNet(t, star(t, 3), nil)
	n.runUntil(70*sec + sec/2)
	m2 := n.mark("h2")
	n.setLink("s1", "h1", false)
	n.runUntil(72*sec - 1)
	if got := n.bpdus("h2", m2); len(got) != 0 {
		t.Fatalf("BPDUs before the next hello: %+v", got)
	}
	n.runUntil(72*sec + us)
	if got := n.bpdus("h2", m2); len(got) != 1 || !got[0].TC {
		t.Fatalf("hello at 72 s: %+v", got)
	}
}

// When the root's topology change timer ends, the change is no longer
// detected (§8.7.7): a root demoted afterwards sends no TCN.
func TestRootTCOverThenDemoted(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(70 * sec) // TC of 30 s over at 65 s
	s1 := n.bridge("s1")
	if s1.Status().TopologyChangeDetected {
		t.Fatal("topology change still detected after the TC timer")
	}
	m1 := n.mark("h1")
	sup := superior(0)
	n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	n.run(10 * us)
	if got := tcnsSince(n, "h1", m1); got != 0 {
		t.Fatalf("%d TCNs", got)
	}
}

// The TCN timer runs on the bridge's own hello time (§8.7.6), not the
// root's.
func TestTCNRepeatsAtOwnHelloTime(t *testing.T) {
	n := newFakeNet(t, star(t, 3), nil)
	sup := superior(0)
	sup.HelloTime = 256
	m1 := n.mark("h1")
	feed(n, "h1", sup, sec/2, sec/2)
	n.runUntil(2 * sec)
	n.inject("h2", AppendFrame(nil, [6]byte{2}, &BPDU{Type: TypeTCN}))
	feed(n, "h1", sup, 2*sec+sec/2, 10*sec+sec/2)
	n.runUntil(11*sec + sec/2)
	if got := tcnsSince(n, "h1", m1); got != 5 { // 2, 4, 6, 8, 10 s
		t.Fatalf("%d TCNs by 11.5 s, want 5", got)
	}
}

// Outside a topology change a non-root bridge keeps entries for the aging
// time: the root's BPDUs without TC do not shorten it.
func TestRootHelloKeepsEntries(t *testing.T) {
	n := newFakeNet(t, star(t, 3), nil)
	feed(n, "h1", superior(0), sec/2, 40*sec)
	n.sendFrom("h2", n.hostMAC("h3"), "learn")
	feed(n, "h1", superior(0), 42*sec, 60*sec)
	n.sendFrom("h3", n.hostMAC("h2"), "x")
	n.run(10 * us)
	if n.received("h2", "x") != 1 || n.received("h1", "x") != 0 {
		t.Fatal("entry lost 20 s after learning, outside a topology change")
	}
}

// Timer callbacks an engine delivers after the timer was stopped or
// re-armed do nothing: neither a stopped message age timer nor a
// refreshed one's old deadline expires the information.
func TestLateTimerCallbacksHarmless(t *testing.T) {
	env := &lateEnv{}
	b, err := New(Config{MAC: [6]byte{2, 0, 0, 0, 0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	b.Attach(env, []element.PortInfo{{Port: 1, Up: true}, {Port: 2, Up: true}})
	sup := superior(0)
	for _, at := range []element.Time{sec / 2, 2*sec + sec/2} { // deadlines 20.5 s, then 22.5 s
		env.runUntil(at)
		b.Receive(1, AppendFrame(nil, rootMAC, &sup))
	}
	env.runUntil(21 * sec)
	if c := b.Counters()["message_age_expired"]; c != 0 {
		t.Fatalf("re-armed timer's old deadline expired it: %d", c)
	}
	b.LinkChange(1, false) // stops the timer due at 22.5 s
	env.runUntil(30 * sec)
	if c := b.Counters()["message_age_expired"]; c != 0 {
		t.Fatalf("stopped timer expired: %d", c)
	}
}

// Two ports on two LANs to the same designated bridge (parallel links)
// tie on root, cost and bridge: the one whose designated port identifier
// is lower is the root port (§8.6.8), before the ports' own identifiers.
func TestRootPortTieOnDesignatedPort(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(sec / 2)
	sup := superior(0)
	sup.Port = 0x8002
	n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	sup.Port = 0x8001
	n.inject("h2", AppendFrame(nil, rootMAC, &sup))
	n.run(10 * us)
	st := n.bridge("s1").Status()
	if st.RootPort != 2 || st.Ports[0].Role != RoleBlocked {
		t.Fatalf("root port %d, port 1 %v; want 2, blocked", st.RootPort, st.Ports[0].Role)
	}
}

// A learning port that becomes blocked raises a topology change
// (§8.6.13: learning or forwarding), as its stations were learned.
func TestLearningPortBlockedSignalsChange(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(20 * sec)
	m1 := n.mark("h1")
	sup := superior(0)
	n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	n.inject("h2", AppendFrame(nil, rootMAC, &sup))
	n.run(10 * us)
	s1 := n.bridge("s1")
	if s, r := s1.PortState(2); s != Blocking || r != RoleBlocked {
		t.Fatalf("port 2 %v/%v", s, r)
	}
	if tcnsSince(n, "h1", m1) != 1 || s1.Counters()["topology_change_detected"] != 1 {
		t.Fatalf("no topology change: %v", s1.Counters())
	}
}
