package stp

import (
	"errors"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// Corner cases of the protocol and the MAC table that the broader tests
// pass through without pinning down.

var rootMAC = [6]byte{2, 0, 0, 0, 0, 9}

// A root's max age that differs from the bridge's own re-arms the message
// age timer, which must keep the age the information arrived with: the
// relay carries it, plus the time held, plus the increment.
func TestRelayAgeAfterRootMaxAge(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(sec / 2)
	m2 := n.mark("h2")
	sup := superior(5 * 256)
	sup.MaxAge = 24 * 256 // not the bridge's 20 s
	n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	n.runUntil(sec + us) // the hold timer of the initial BPDU ends at 1 s
	got := n.bpdus("h2", m2)
	held := sec - (sec/2 + us)
	want := ToTime256(5*sec + held + sec)
	if len(got) != 1 || got[0].MessageAge != want || got[0].MaxAge != 24*256 {
		t.Fatalf("relay %+v, want message age %d and max age %d", got, want, 24*256)
	}
}

// Information that would reach the neighbour exactly as old as max age is
// dead on arrival (the receiver drops it): it is not relayed at all.
func TestRelayWithheldAtMaxAge(t *testing.T) {
	for _, c := range []struct {
		age   Time256
		relay bool
	}{
		{18 * 256, true},  // relayed at 19 s
		{19 * 256, false}, // would be relayed at 20 s = max age
	} {
		n := newFakeNet(t, star(t, 2), nil)
		n.runUntil(3*sec + sec/2) // no hold timer running on port 2
		s1 := n.bridge("s1")
		m2 := n.mark("h2")
		tx := s1.Counters()["bpdu_tx_config"]
		sup := superior(c.age)
		n.inject("h1", AppendFrame(nil, rootMAC, &sup))
		n.run(10 * us)
		if st := s1.Status(); st.RootPort != 1 || st.Root != sup.Root {
			t.Fatalf("age %d: not accepted: %+v", c.age, st)
		}
		got := n.bpdus("h2", m2)
		sent := s1.Counters()["bpdu_tx_config"] - tx
		if c.relay {
			if len(got) != 1 || got[0].MessageAge != c.age+256 || sent != 1 {
				t.Fatalf("age %d: relay %+v (%d sent), want one of age %d", c.age, got, sent, c.age+256)
			}
		} else if len(got) != 0 || sent != 0 {
			t.Fatalf("age %d: relayed information as old as max age: %+v (%d sent)", c.age, got, sent)
		}
	}
}

// An unacknowledged TCN is repeated every hello time, for as long as it
// stays unacknowledged.
func TestTCNRepeatedUntilAcknowledged(t *testing.T) {
	n := newFakeNet(t, star(t, 3), nil)
	n.runUntil(sec / 2)
	sup := superior(0)
	n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	n.runUntil(2 * sec)
	m1 := n.mark("h1")
	n.inject("h2", AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 2}, &BPDU{Type: TypeTCN}))
	n.run(10 * us)
	// Keep the root's information alive, without acknowledging.
	for at := 4 * sec; at <= 10*sec; at += 2 * sec {
		n.runUntil(at)
		n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	}
	n.runUntil(10*sec + sec/2)
	tcns := 0
	for _, m := range n.bpdus("h1", m1) {
		if m.Type == TypeTCN {
			tcns++
		}
	}
	// At 2 s, then at 4, 6, 8 and 10 s.
	if tcns != 5 {
		t.Fatalf("%d TCNs by 10.5 s, want 5", tcns)
	}
}

// keepRoot injects the root's hello on h1 and, when other is set, a
// BPDU from another bridge on h2, every 2 s up to end.
func keepRoot(n *fakeNet, other *BPDU, end element.Time) {
	sup := superior(0)
	for at := sec / 2; at <= end; at += 2 * sec {
		n.runUntil(at)
		n.inject("h1", AppendFrame(nil, rootMAC, &sup))
		if other != nil {
			n.inject("h2", AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 8}, other))
		}
	}
}

// A bridge that is designated for no LAN (root port plus a blocked port)
// raises no topology change when its root port starts forwarding
// (§8.7.5): nobody's stations moved behind it.
func TestRootPortForwardingWithoutDesignatedPort(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	// Another bridge, better than s1, at the same cost from the root is
	// designated for h2's LAN.
	other := superior(256)
	other.RootPathCost = 4
	other.Bridge = MakeBridgeID(0x2000, [6]byte{2, 0, 0, 0, 0, 8})
	m1 := n.mark("h1")
	keepRoot(n, &other, 36*sec)
	s1 := n.bridge("s1")
	if s, r := s1.PortState(1); s != Forwarding || r != RoleRoot {
		t.Fatalf("port 1 %v/%v", s, r)
	}
	if s, r := s1.PortState(2); s != Blocking || r != RoleBlocked {
		t.Fatalf("port 2 %v/%v", s, r)
	}
	for _, m := range n.bpdus("h1", m1) {
		if m.Type == TypeTCN {
			t.Fatalf("TCN sent: %+v", m)
		}
	}
	if c := s1.Counters()["topology_change_detected"]; c != 0 {
		t.Fatalf("topology_change_detected = %d", c)
	}
}

// Two ports hearing the same designated port (a shared LAN) tie on
// everything but their own port identifiers: the lower one is the root
// port.
func TestRootPortTieOnOwnPortID(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	sup := superior(0)
	n.runUntil(sec / 2)
	n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	n.inject("h2", AppendFrame(nil, rootMAC, &sup))
	n.run(10 * us)
	st := n.bridge("s1").Status()
	if st.RootPort != 1 || st.Ports[1].Role != RoleBlocked {
		t.Fatalf("root port %d, port 2 %v; want 1, blocked", st.RootPort, st.Ports[1].Role)
	}
}

// Two ports of one bridge on the same LAN (a looped cable, a hub): port
// 2 hears port 1's BPDUs. It blocks as a backup port, must not take the
// bridge's own information for a root path, and the repeated hellos of
// port 1 keep it blocked (§8.6.2.2's last clause) instead of letting its
// information age out every max age.
func TestOwnBPDUsLoopedBack(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	s1 := n.bridge("s1")
	own := BPDU{Type: TypeConfig, Root: s1.ID(), Bridge: s1.ID(), Port: MakePortID(0x80, 1),
		MaxAge: 20 * 256, HelloTime: 2 * 256, ForwardDelay: 15 * 256}
	for at := sec / 2; at <= 60*sec; at += 2 * sec {
		n.runUntil(at)
		n.inject("h2", AppendFrame(nil, topo.PortMAC(0, 1), &own))
		n.run(10 * us)
		st := s1.Status()
		if !st.IsRoot() || st.RootPort != 0 || st.RootPathCost != 0 {
			t.Fatalf("at %v: took its own information for a root path: %+v", at, st)
		}
		if s, r := s1.PortState(2); s != Blocking || r != RoleBlocked {
			t.Fatalf("at %v: port 2 %v/%v, want blocked", at, s, r)
		}
	}
	if c := s1.Counters()["message_age_expired"]; c != 0 {
		t.Fatalf("message_age_expired = %d: the repeated hellos did not refresh port 2", c)
	}
}

// CheckTree refuses a fabric whose bridges all follow a root outside it
// (a rogue bridge behind a host port): none of them is the root.
func TestCheckTreeNoRoot(t *testing.T) {
	n := newFakeNet(t, lineGraph(t, 2), nil)
	sup := superior(0)
	for at := sec / 2; at <= 40*sec; at += 2 * sec {
		n.runUntil(at)
		n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	}
	for _, b := range []string{"s1", "s2"} {
		if st := n.bridge(b).Status(); st.Root != sup.Root {
			t.Fatalf("%s: root %v", b, st.Root)
		}
	}
	err := n.fab.CheckTree()
	if !errors.Is(err, ErrNotTree) || !strings.Contains(err.Error(), "0 bridges") {
		t.Fatalf("CheckTree: %v", err)
	}
}

// CheckTree finds a forwarding loop where every bridge agrees on the root.
func TestCheckTreeLoop(t *testing.T) {
	n := newFakeNet(t, ring3(t), nil)
	n.runUntil(40 * sec)
	if err := n.fab.CheckTree(); err != nil {
		t.Fatal(err)
	}
	// s3:2 is the blocked port (TestRing3Converges); force it open.
	n.bridge("s3").ports[1].state = Forwarding
	err := n.fab.CheckTree()
	if !errors.Is(err, ErrNotTree) || !strings.Contains(err.Error(), "loop") {
		t.Fatalf("CheckTree with s3:2 forwarding: %v", err)
	}
}

// A host with a NIC on each of two switches relays nothing: Path finds no
// way between the switches' other hosts through it.
func TestPathNotThroughHost(t *testing.T) {
	b := topo.NewBuilder("dual-homed")
	s1 := b.AddNode("s1", topo.Switch)
	s2 := b.AddNode("s2", topo.Switch)
	h1 := b.AddNode("h1", topo.Host)
	h2 := b.AddNode("h2", topo.Host)
	hm := b.AddNode("hm", topo.Host)
	r, d := topo.DefaultRate, topo.DefaultDelay
	b.ConnectPorts(topo.End{Node: s1, Port: 1}, topo.End{Node: h1, Port: 1}, r, d)
	b.ConnectPorts(topo.End{Node: s2, Port: 1}, topo.End{Node: h2, Port: 1}, r, d)
	b.ConnectPorts(topo.End{Node: s1, Port: 2}, topo.End{Node: hm, Port: 1}, r, d)
	b.ConnectPorts(topo.End{Node: s2, Port: 2}, topo.End{Node: hm, Port: 2}, r, d)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	n := newFakeNet(t, g, nil)
	n.runUntil(40 * sec)
	if p, err := n.fab.Path(h1, hm); err != nil || len(p) != 2 {
		t.Fatalf("h1-hm: %v %v", p, err)
	}
	if p, err := n.fab.Path(h1, h2); !errors.Is(err, ErrNotTree) {
		t.Fatalf("h1-h2 through a host: %v %v", p, err)
	}
}

// A host with a NIC on each of two linked switches closes no loop: it
// relays nothing, so CheckTree accepts the tree; and it does not join the
// switches when their link stops forwarding. A host cabled to it alone
// (h2) is outside the tree.
func TestCheckTreeDualHomedHost(t *testing.T) {
	b := topo.NewBuilder("dual-homed")
	s1 := b.AddNode("s1", topo.Switch)
	s2 := b.AddNode("s2", topo.Switch)
	h1 := b.AddNode("h1", topo.Host)
	h2 := b.AddNode("h2", topo.Host)
	r, d := topo.DefaultRate, topo.DefaultDelay
	b.ConnectPorts(topo.End{Node: s1, Port: 1}, topo.End{Node: s2, Port: 1}, r, d)
	b.ConnectPorts(topo.End{Node: h1, Port: 3}, topo.End{Node: h2, Port: 1}, r, d)
	b.ConnectPorts(topo.End{Node: s1, Port: 2}, topo.End{Node: h1, Port: 1}, r, d)
	b.ConnectPorts(topo.End{Node: s2, Port: 2}, topo.End{Node: h1, Port: 2}, r, d)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	n := newFakeNet(t, g, nil)
	n.runUntil(100 * sec)
	if got := len(n.fab.ActiveLinks()); got != 4 {
		t.Fatalf("%d active links, want 4", got)
	}
	if err := n.fab.CheckTree(); err != nil {
		t.Fatal(err)
	}
	n.bridge("s2").ports[0].state = Blocking // s2's root port
	err = n.fab.CheckTree()
	if !errors.Is(err, ErrNotTree) || !strings.Contains(err.Error(), "cut off") {
		t.Fatalf("CheckTree with s2:1 blocked: %v", err)
	}
}

// A frame that reaches the bridge exactly one aging time after its
// destination was last seen still finds it (an entry ages only once it
// is older than the aging time, as Lookup reports); a picosecond later
// the frame floods.
func TestForwardAtExactAgingTime(t *testing.T) {
	n := newFakeNet(t, star(t, 3), map[string]string{"aging": "60s"})
	n.runUntil(66 * sec)
	s1 := n.bridge("s1")
	h2 := n.hostMAC("h2")
	n.sendFrom("h2", n.hostMAC("h1"), "learn")
	n.run(10 * us)
	e, ok := s1.fdb.get(h2)
	if !ok {
		t.Fatal("h2 not learned")
	}
	delay := topo.DefaultDelay
	n.runUntil(e.seen + 60*sec - delay)
	n.sendFrom("h1", h2, "edge") // arrives at seen + 60 s
	n.run(10 * us)
	if n.received("h2", "edge") != 1 || n.received("h3", "edge") != 0 {
		t.Fatalf("at the aging time: h2 %d, h3 %d; want forwarded to h2 alone", n.received("h2", "edge"), n.received("h3", "edge"))
	}
	if c := s1.Counters()["aged_out"]; c != 0 {
		t.Fatalf("aged_out = %d", c)
	}
}

// The last port named in PortRate takes its rate too.
func TestPortRateLastPort(t *testing.T) {
	b, err := New(Config{MAC: [6]byte{2, 0, 0, 0, 0, 1}, PortRate: []int64{10_000_000, 100_000_000}})
	if err != nil {
		t.Fatal(err)
	}
	b.Attach(&benchEnv{}, []element.PortInfo{{Port: 1, Up: true}, {Port: 2, Up: true}, {Port: 3, Up: true}})
	st := b.Status()
	for i, want := range []uint32{100, 19, 4} {
		if got := st.Ports[i].PathCost; got != want {
			t.Errorf("port %d: cost %d, want %d", i+1, got, want)
		}
	}
}

// MaxEntries may be as large as MaxMaxEntries, not larger.
func TestMaxEntriesBound(t *testing.T) {
	if _, err := New(Config{MaxEntries: MaxMaxEntries}); err != nil {
		t.Fatalf("MaxMaxEntries refused: %v", err)
	}
	if _, err := New(Config{MaxEntries: MaxMaxEntries + 1}); !errors.Is(err, ErrConfig) {
		t.Fatalf("MaxMaxEntries+1: %v", err)
	}
}

// A port's path cost through the Go API has the path_cost parameter's
// range, 1..MaxPathCost (802.1D-2004 Table 17-3): 0 made a port's far side
// as close to the root as its near one.
func TestPathCostBound(t *testing.T) {
	for _, c := range []struct {
		cost uint32
		ok   bool
	}{{1, true}, {MaxPathCost, true}, {0, false}, {MaxPathCost + 1, false}} {
		_, err := New(Config{PathCost: map[element.Port]uint32{1: 4, 3: c.cost}})
		if c.ok != (err == nil) || (!c.ok && (!errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "port 3 path cost"))) {
			t.Errorf("path cost %d: %v", c.cost, err)
		}
	}
}
