package stp

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// star builds one switch s1 with k hosts h1..hk on ports 1..k. The hosts
// are stations the tests use to inject frames, BPDUs included, and to
// watch what the bridge sends.
func star(t testing.TB, k int) *topo.Graph {
	t.Helper()
	b := topo.NewBuilder("star")
	s := b.AddNode("s1", topo.Switch)
	for i := 1; i <= k; i++ {
		h := b.AddNode("h"+string(rune('0'+i)), topo.Host)
		b.ConnectPorts(topo.End{Node: s, Port: element.Port(i)}, topo.End{Node: h, Port: 1}, topo.DefaultRate, topo.DefaultDelay)
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// inject makes station name send raw frame bytes to the bridge.
func (n *fakeNet) inject(name string, frame []byte) {
	n.node(name).Send(1, append([]byte(nil), frame...))
}

// bpdus decodes the BPDUs station name received since mark.
func (n *fakeNet) bpdus(name string, mark int) []BPDU {
	var out []BPDU
	for _, f := range n.node(name).st.rx[mark:] {
		var m BPDU
		if DecodeFrame(f, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func (n *fakeNet) mark(name string) int { return len(n.node(name).st.rx) }

// superior is a configuration BPDU from a bridge with priority 0x1000,
// which beats every default bridge.
func superior(age Time256) BPDU {
	return BPDU{
		Type: TypeConfig, Root: MakeBridgeID(0x1000, [6]byte{2, 0, 0, 0, 0, 9}),
		RootPathCost: 0, Bridge: MakeBridgeID(0x1000, [6]byte{2, 0, 0, 0, 0, 9}), Port: 0x8001,
		MessageAge: age, MaxAge: 20 * 256, HelloTime: 2 * 256, ForwardDelay: 15 * 256,
	}
}

func TestInitialBPDUs(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(us)
	s1 := n.bridge("s1")
	for i, h := range []string{"h1", "h2"} {
		p := element.Port(i + 1)
		got := n.bpdus(h, 0)
		want := BPDU{Type: TypeConfig, Root: s1.ID(), Bridge: s1.ID(), Port: MakePortID(0x80, p),
			MaxAge: 20 * 256, HelloTime: 2 * 256, ForwardDelay: 15 * 256}
		if len(got) != 1 || got[0] != want {
			t.Fatalf("%s got %+v, want one %+v", h, got, want)
		}
		// Sent from the port's own address.
		if f := n.node(h).st.rx[0]; [6]byte(f[6:12]) != topo.PortMAC(0, p) {
			t.Fatalf("%s: source %x", h, f[6:12])
		}
	}
	// A hello every 2 s.
	n.runUntil(10*sec + us)
	if got := len(n.bpdus("h1", 0)); got != 6 {
		t.Fatalf("%d BPDUs by 10 s, want 6", got)
	}
}

func TestSuperiorBPDUMakesRootPort(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(sec / 2)
	m2 := n.mark("h2")
	sup := superior(3 * 256) // three hops from the root already
	n.inject("h1", AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 9}, &sup))
	n.run(10 * us)
	s1 := n.bridge("s1")
	st := s1.Status()
	if st.Root != sup.Root || st.RootPort != 1 || st.RootPathCost != 4 || st.IsRoot() {
		t.Fatalf("status %+v", st)
	}
	// The relay on h2's port waits for the hold timer (the initial BPDU
	// went out at 0 s), then carries the root's information one hop
	// older: its age plus the time held plus the 1 s increment.
	if got := n.bpdus("h2", m2); len(got) != 0 {
		t.Fatalf("relayed inside the hold time: %+v", got)
	}
	n.runUntil(sec + us)
	got := n.bpdus("h2", m2)
	if len(got) != 1 {
		t.Fatalf("relays %+v", got)
	}
	r := got[0]
	held := sec - (sec/2 + us) // received at 0.5 s + 1 µs, sent at 1 s
	wantAge := ToTime256(3*sec + held + sec)
	if r.Root != sup.Root || r.RootPathCost != 4 || r.Bridge != s1.ID() || r.Port != 0x8002 || r.MessageAge != wantAge {
		t.Fatalf("relay %+v, want age %d", r, wantAge)
	}
	if c := s1.Counters(); c["bpdu_rx_config"] != 1 {
		t.Fatalf("counters %v", c)
	}
	// Nothing more: the root's information ages out 17 s after it
	// arrived, and the bridge takes over as root again.
	n.runUntil(sec/2 + us + 17*sec - 1)
	if s1.Status().IsRoot() {
		t.Fatal("root information expired early")
	}
	n.runUntil(sec/2 + us + 17*sec)
	if !s1.Status().IsRoot() {
		t.Fatal("root information did not expire")
	}
	if c := s1.Counters(); c["message_age_expired"] != 1 {
		t.Fatalf("counters %v", c)
	}
}

func TestZeroTimersDropped(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(sec / 2)
	for i := range 3 {
		sup := superior(0)
		switch i {
		case 0:
			sup.MaxAge = 0
		case 1:
			sup.HelloTime = 0
		case 2:
			sup.ForwardDelay = 0
		}
		n.inject("h1", AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 9}, &sup))
	}
	n.run(10 * us)
	s1 := n.bridge("s1")
	if !s1.Status().IsRoot() || s1.Counters()["drop_bpdu_bad_timers"] != 3 {
		t.Fatalf("BPDUs with zero timers accepted: %+v %v", s1.Status(), s1.Counters())
	}
}

// Received timers outside 802.1D-1998 Table 8-3's ranges are dropped: a
// forged forward delay of 1/256 s would otherwise open every port at once.
// A fabric set to faster or slower timers accepts its own.
func TestTimerRanges(t *testing.T) {
	n := newFakeNet(t, star(t, 3), nil)
	n.runUntil(sec / 2)
	s1 := n.bridge("s1")
	forged := superior(0)
	forged.ForwardDelay = 1
	n.inject("h1", AppendFrame(nil, rootMAC, &forged))
	n.run(100 * element.Millisecond)
	if s, _ := s1.PortState(2); s == Forwarding || !s1.Status().IsRoot() || s1.Counters()["drop_bpdu_bad_timers"] != 1 {
		t.Fatalf("forward delay 1/256 s accepted: s1:2 %v, %v", s, s1.Counters())
	}
	const ms = element.Millisecond
	for i, c := range []struct {
		hello, maxAge, fwd element.Time
		ok                 bool
	}{
		{1 * sec, 6 * sec, 4 * sec, true},
		{10 * sec, 40 * sec, 30 * sec, true},
		{sec - 4*ms, 20 * sec, 15 * sec, false},
		{10*sec + 4*ms, 20 * sec, 15 * sec, false},
		{2 * sec, 6*sec - 4*ms, 15 * sec, false},
		{2 * sec, 40*sec + 4*ms, 15 * sec, false},
		{2 * sec, 20 * sec, 4*sec - 4*ms, false},
		{2 * sec, 20 * sec, 30*sec + 4*ms, false},
	} {
		m := superior(0)
		m.HelloTime, m.MaxAge, m.ForwardDelay = ToTime256(c.hello), ToTime256(c.maxAge), ToTime256(c.fwd)
		before := s1.Counters()
		n.inject("h1", AppendFrame(nil, rootMAC, &m))
		n.run(10 * us)
		after := s1.Counters()
		rx, bad := after["bpdu_rx_config"]-before["bpdu_rx_config"], after["drop_bpdu_bad_timers"]-before["drop_bpdu_bad_timers"]
		if c.ok && (rx != 1 || bad != 0) || !c.ok && (rx != 0 || bad != 1) {
			t.Errorf("case %d %+v: received %d, bad timers %d", i, c, rx, bad)
		}
	}
	// Timers the fabric was set to are accepted, outside the ranges.
	n = newFakeNet(t, star(t, 2), map[string]string{"hello": "500ms", "max_age": "3s", "forward_delay": "2.5s"})
	n.runUntil(sec / 2)
	m := superior(0)
	m.HelloTime, m.MaxAge, m.ForwardDelay = 128, 3*256, 640
	n.inject("h1", AppendFrame(nil, rootMAC, &m))
	m.ForwardDelay = 639
	n.inject("h1", AppendFrame(nil, rootMAC, &m))
	n.run(10 * us)
	if c := n.bridge("s1").Counters(); c["bpdu_rx_config"] != 1 || c["drop_bpdu_bad_timers"] != 1 {
		t.Fatalf("fast timers: %v", c)
	}
}

func TestAgedBPDUDropped(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(sec / 2)
	sup := superior(20 * 256)
	n.inject("h1", AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 9}, &sup))
	n.run(10 * us)
	s1 := n.bridge("s1")
	if !s1.Status().IsRoot() || s1.Counters()["drop_bpdu_aged"] != 1 {
		t.Fatalf("aged BPDU accepted: %+v %v", s1.Status(), s1.Counters())
	}
}

func TestTCNHandling(t *testing.T) {
	n := newFakeNet(t, star(t, 3), nil)
	n.runUntil(sec / 2)
	// h1 plays the root: s1's root port is 1.
	sup := superior(0)
	n.inject("h1", AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 9}, &sup))
	n.runUntil(2 * sec)
	m1, m2 := n.mark("h1"), n.mark("h2")
	// A TCN on designated port 2: acknowledged there (after the hold
	// timer) and passed up to the root as a TCN.
	n.inject("h2", AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 2}, &BPDU{Type: TypeTCN}))
	n.run(10 * us)
	up := n.bpdus("h1", m1)
	if len(up) != 1 || up[0].Type != TypeTCN {
		t.Fatalf("toward the root: %+v", up)
	}
	ack := n.bpdus("h2", m2)
	if len(ack) != 1 || !ack[0].TCA || ack[0].Root != sup.Root {
		t.Fatalf("acknowledgment: %+v", ack)
	}
	s1 := n.bridge("s1")
	if !s1.Status().TopologyChangeDetected {
		t.Fatal("topology change not detected")
	}
	// Unacknowledged, the TCN is repeated every hello time.
	n.run(2 * sec)
	if up := n.bpdus("h1", m1); len(up) != 2 {
		t.Fatalf("TCN not repeated: %+v", up)
	}
	// The root acknowledges, and sets TC: the repetitions stop and the
	// MAC table ages at forward delay.
	ackd := sup
	ackd.TCA, ackd.TC = true, true
	n.inject("h1", AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 9}, &ackd))
	n.run(10 * us)
	m1 = n.mark("h1")
	n.run(10 * sec)
	for _, m := range n.bpdus("h1", m1) {
		if m.Type == TypeTCN {
			t.Fatal("TCN repeated after acknowledgment")
		}
	}
	st := s1.Status()
	if st.TopologyChangeDetected || !st.TopologyChange || s1.agingTime() != 15*sec {
		t.Fatalf("after ack: %+v aging %v", st, s1.agingTime())
	}
	// A TCN on the root port is not ours to handle.
	m1 = n.mark("h1")
	n.inject("h1", AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 9}, &BPDU{Type: TypeTCN}))
	n.run(10 * us)
	if len(n.bpdus("h1", m1)) != 0 || s1.Status().TopologyChangeDetected {
		t.Fatal("acted on a TCN received on the root port")
	}
}

// On the root bridge a TCN sets topology change for max age + forward
// delay.
func TestRootTopologyChangeTimer(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	// The ports' own move to forwarding at 30 s was a topology change
	// too; it is over at 65 s.
	n.runUntil(65 * sec)
	s1 := n.bridge("s1")
	if s1.Status().TopologyChange {
		t.Fatal("topology change of 30 s still on")
	}
	n.inject("h1", AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 2}, &BPDU{Type: TypeTCN}))
	n.run(us)
	if !s1.Status().TopologyChange {
		t.Fatal("root ignored TCN")
	}
	n.runUntil(65*sec + us + 35*sec - 1)
	if !s1.Status().TopologyChange {
		t.Fatal("topology change ended early")
	}
	n.runUntil(65*sec + us + 35*sec)
	if s1.Status().TopologyChange {
		t.Fatal("topology change did not end after max age + forward delay")
	}
}

func TestHoldTimer(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(sec / 2)
	m := n.mark("h1")
	// An inferior BPDU on a designated port asks for a reply; inside the
	// hold time the reply waits for the timer.
	inf := BPDU{Type: TypeConfig, Root: MakeBridgeID(0xf000, [6]byte{2}), Bridge: MakeBridgeID(0xf000, [6]byte{2}),
		Port: 0x8001, MaxAge: 20 * 256, HelloTime: 512, ForwardDelay: 15 * 256}
	for range 3 {
		n.inject("h1", AppendFrame(nil, [6]byte{2}, &inf))
	}
	n.run(10 * us)
	if got := len(n.bpdus("h1", m)); got != 0 {
		t.Fatalf("%d replies inside the hold time", got)
	}
	n.runUntil(sec + us)
	if got := len(n.bpdus("h1", m)); got != 1 {
		t.Fatalf("%d replies at hold expiry, want 1", got)
	}
	// Outside the hold time (the hello of 2 s holds until 3 s) a reply
	// goes at once.
	n.runUntil(3*sec + sec/2)
	m = n.mark("h1")
	n.inject("h1", AppendFrame(nil, [6]byte{2}, &inf))
	n.run(10 * us)
	if got := len(n.bpdus("h1", m)); got != 1 {
		t.Fatalf("%d immediate replies, want 1", got)
	}
}

func TestBadFramesCounted(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(31 * sec)
	s1 := n.bridge("s1")
	good := AppendFrame(nil, [6]byte{2}, &BPDU{Type: TypeTCN})
	// A well-formed RST BPDU: an 802.1D-1998 bridge knows no type 2.
	rst := AppendFrame(nil, [6]byte{2}, &BPDU{Type: TypeRST, Version: VersionRSTP, Root: 1, MaxAge: 20 * 256, HelloTime: 512, ForwardDelay: 15 * 256})
	badLLC := append([]byte(nil), good...)
	badLLC[14] = 0xaa
	pause := []byte{0x01, 0x80, 0xc2, 0, 0, 1, 2, 0, 0, 0, 0, 1, 0x88, 0x08, 0, 1}
	mcastSrc := []byte{0x02, 0, 0, 0, 0, 2, 0x01, 0, 0x5e, 0, 0, 1, 0x08, 0x00, 0}
	for _, f := range [][]byte{rst, badLLC, good[:16], pause, mcastSrc, {1, 2, 3}} {
		n.inject("h1", f)
	}
	n.run(10 * us)
	c := s1.Counters()
	for k, v := range map[string]uint64{"drop_bpdu_unknown_type": 1, "drop_bpdu_malformed": 2, "drop_link_local": 1, "drop_bad_source": 1, "drop_runt": 1} {
		if c[k] != v {
			t.Errorf("%s = %d, want %d (%v)", k, c[k], v, c)
		}
	}
	// Nothing was relayed.
	for _, f := range n.node("h2").st.rx {
		if !IsBridgeGroup(f) {
			t.Fatalf("h2 got %x", f)
		}
	}
	// Frames for a port the bridge does not have.
	s1.Receive(0, good)
	s1.Receive(99, good)
	if s1.Counters()["drop_port_invalid"] != 2 {
		t.Error("invalid port not counted")
	}
}

func TestLearningAndAging(t *testing.T) {
	n := newFakeNet(t, star(t, 3), map[string]string{"aging": "60s", "max_entries": "2"})
	n.runUntil(66 * sec) // after the topology change of 30 s to 65 s
	s1 := n.bridge("s1")
	h1, h2 := n.hostMAC("h1"), n.hostMAC("h2")

	n.sendFrom("h1", h2, "a") // unknown: flooded
	n.run(10 * us)
	if n.received("h2", "a") != 1 || n.received("h3", "a") != 1 {
		t.Fatal("unknown unicast not flooded")
	}
	n.sendFrom("h2", h1, "b") // h1 known: forwarded to port 1 only
	n.run(10 * us)
	if n.received("h1", "b") != 1 || n.received("h3", "b") != 0 {
		t.Fatal("known unicast not forwarded to its port alone")
	}
	// The table holds two entries: h3 is not learned, and counted.
	n.sendFrom("h3", h1, "c")
	n.run(10 * us)
	c := s1.Counters()
	if c["learned"] != 2 || c["learn_table_full"] != 1 || c["flooded"] != 1 || c["forwarded"] != 2 {
		t.Fatalf("counters %v", c)
	}
	// A station heard on another port has moved.
	f := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	f = append(f, h1[:]...)
	f = append(f, 0x88, 0xb5, 'm')
	for len(f) < 60 {
		f = append(f, 0)
	}
	n.inject("h2", f)
	n.run(10 * us)
	if p, ok := s1.Lookup(h1); !ok || p != 2 || s1.Counters()["moved"] != 1 {
		t.Fatalf("h1 at %d %v after moving", p, ok)
	}
	// A frame for a station on its own input port is filtered.
	n.sendFrom("h2", h1, "same")
	n.run(10 * us)
	if s1.Counters()["filtered_same_port"] != 1 || n.received("h1", "same")+n.received("h3", "same") != 0 {
		t.Fatal("frame to the input port's station not filtered")
	}
	// Entries age out after the aging time: the next frame floods.
	e, _ := s1.fdb.get(h2)
	seen := e.seen
	n.runUntil(seen + 60*sec)
	if _, ok := s1.Lookup(h2); !ok {
		t.Fatal("aged at exactly the aging time")
	}
	n.runUntil(seen + 60*sec + 1)
	if _, ok := s1.Lookup(h2); ok {
		t.Fatal("not aged after the aging time")
	}
	// The sweep frees the memory of entries nobody looks up.
	n.run(120 * sec)
	if s1.Entries() != 0 || s1.Counters()["aged_out"] == 0 {
		t.Fatalf("entries %d after sweeps, counters %v", s1.Entries(), s1.Counters())
	}
}

func TestLinkDownFlushesAndSignals(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(70 * sec)
	s1 := n.bridge("s1")
	n.sendFrom("h1", n.hostMAC("h2"), "x")
	n.run(10 * us)
	if _, ok := s1.Lookup(n.hostMAC("h1")); !ok {
		t.Fatal("h1 not learned")
	}
	n.setLink("s1", "h1", false)
	if _, ok := s1.Lookup(n.hostMAC("h1")); ok {
		t.Fatal("entry of a failed port kept")
	}
	if c := s1.Counters()["flushed"]; c != 1 {
		t.Fatalf("flushed = %d, want 1 (h1's entry)", c)
	}
	st := s1.Status()
	if st.Ports[0].State != Disabled || st.Ports[0].Role != RoleDisabled || !st.TopologyChange {
		t.Fatalf("after link down: %+v", st)
	}
	// Frames arriving on a disabled port (an engine race) are counted.
	s1.Receive(1, append([]byte(nil), n.node("h2").st.rx[0]...))
	if c := s1.Counters()["drop_port_disabled"]; c != 1 {
		t.Fatalf("BPDU on a disabled port: drop_port_disabled = %d", c)
	}
	n.setLink("s1", "h1", true)
	if s, r := s1.PortState(1); s != Listening || r != RoleDesignated {
		t.Fatalf("after link up: %v/%v", s, r)
	}
	if s, r := s1.PortState(9); s != StateInvalid || r != RoleInvalid {
		t.Fatal("PortState of a missing port")
	}
}

func TestConfigValidate(t *testing.T) {
	if _, err := New(Config{HelloTime: -1}); err == nil {
		t.Fatal("negative hello accepted")
	}
	// A hello of 3 ms goes on the wire as 0 (1/256 s units): every BPDU
	// would be dropped and every bridge would forward on every port.
	fast := Config{HelloTime: 3 * element.Millisecond, MaxAge: 2100 * element.Millisecond, ForwardDelay: 2100 * element.Millisecond}
	if _, err := New(fast); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "1/256 s") {
		t.Fatalf("hello 3ms: %v", err)
	}
	fast.HelloTime = 4 * element.Millisecond // 1/256 s and more encode as at least 1
	if _, err := New(fast); err != nil {
		t.Fatalf("hello 4ms: %v", err)
	}
	b, err := New(Config{MAC: [6]byte{2, 0, 0, 0, 0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if b.ID() != MakeBridgeID(DefaultPriority, [6]byte{2, 0, 0, 0, 0, 1}) {
		t.Fatal("default priority")
	}
	if _, ok := b.Lookup([6]byte{}); ok {
		t.Fatal("unattached bridge found an entry")
	}
}

// outcomes sums the counters that record what became of a received frame:
// every Receive ends in exactly one of them.
func outcomes(c map[string]uint64) uint64 {
	var n uint64
	for k, v := range c {
		switch {
		case k == "forwarded", k == "flooded", k == "filtered_same_port",
			k == "bpdu_rx_config", k == "bpdu_rx_tcn", k == "bpdu_rx_rst", len(k) > 5 && k[:5] == "drop_":
			n += v
		}
	}
	return n
}

// FuzzReceive feeds arbitrary frames to a bridge on arbitrary ports, in
// every port state the first bytes select: no panic, and every frame is
// accounted for by exactly one outcome counter.
func FuzzReceive(f *testing.F) {
	f.Add(uint8(1), uint8(40), unhex(f, goldenConfigHex))
	f.Add(uint8(2), uint8(40), unhex(f, goldenTCNHex))
	f.Add(uint8(3), uint8(5), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 8, 0})
	f.Add(uint8(0), uint8(0), []byte{})
	f.Add(uint8(1), uint8(0x81), unhex(f, goldenConfigHex))
	rst := AppendFrame(nil, [6]byte{2}, &BPDU{Type: TypeRST, Version: VersionRSTP, Role: BPDURoleDesignated, Proposal: true,
		Root: 1, Bridge: 1, Port: 0x8001, MaxAge: 20 * 256, HelloTime: 512, ForwardDelay: 15 * 256})
	f.Add(uint8(0x81), uint8(2), rst)
	f.Add(uint8(0x82), uint8(2), unhex(f, goldenConfigHex))
	f.Fuzz(func(t *testing.T, port, at uint8, frame []byte) {
		var params map[string]string
		switch {
		case at&0x80 != 0: // the high bit picks a bridge without the tree
			params = map[string]string{"stp": "off"}
		case port&0x80 != 0: // the port's, an RSTP bridge
			params = map[string]string{"protocol": "rstp"}
		}
		n := newFakeNet(t, star(t, 3), params)
		n.runUntil(element.Time(at&0x7f) * sec) // 0..127 s: every state
		s1 := n.bridge("s1")
		before := outcomes(s1.Counters())
		s1.Receive(element.Port(port%6), frame)
		if got := outcomes(s1.Counters()) - before; got != 1 {
			t.Fatalf("frame %x on port %d at %ds: %d outcomes counted (%v)", frame, port%6, at, got, s1.Counters())
		}
		n.run(40 * sec)
	})
}

// An entry that outlives the forward delay during a topology change is
// gone when the change ends, even if nothing looked it up meanwhile.
func TestShortAgingWithoutLookup(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(70 * sec)
	s1 := n.bridge("s1")
	n.sendFrom("h1", n.hostMAC("h2"), "x")
	n.run(us)
	n.runUntil(71 * sec)
	n.inject("h2", AppendFrame(nil, [6]byte{2}, &BPDU{Type: TypeTCN})) // TC from 71 s to 106 s
	n.run(us)
	n.runUntil(106*sec + 2*us)
	if s1.Status().TopologyChange {
		t.Fatal("topology change still on")
	}
	if s1.Entries() != 0 {
		t.Fatalf("%d entries left after a topology change longer than forward delay", s1.Entries())
	}
}

// TestAddCostSaturates: root path costs add up to at most the 32-bit
// field's largest value; a wrapped sum would look cheap (line:24 at
// cost 200,000,000 per port once broke the tree).
func TestAddCostSaturates(t *testing.T) {
	if got := addCost(1, 2); got != 3 {
		t.Fatalf("1+2 = %d", got)
	}
	if got := addCost(math.MaxUint32-1, 200_000_000); got != math.MaxUint32 {
		t.Fatalf("saturating sum %d", got)
	}
}

// The root's timers rule the tree (§8.6.3): the message age and forward
// delay timers run against the max age and forward delay in force, which
// a root port's BPDU may have just changed, as the standard's timers are
// checked against the bridge's current values at every tick. A root that
// raised max age for a deep tree must be accepted by a bridge whose own
// max age is lower than the age the information arrives with.
func TestRootTimersRuleRunningTimers(t *testing.T) {
	for _, c := range []struct {
		name             string
		age, maxAge, fwd Time256
		expire           element.Time // after arrival
		learning         element.Time // of designated port 2, from 0 s
	}{
		// Max age 40 s, information 20 s old: 20 s left, not 20-20 = 0;
		// forward delay 18 s, not 15.
		{"larger", 20 * 256, 40 * 256, 18 * 256, 20 * sec, 18 * sec},
		// Max age 6 s: the information lives 6 s, not the bridge's own 20.
		{"smaller", 0, 6 * 256, 4 * 256, 6 * sec, 4 * sec},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := newFakeNet(t, star(t, 2), nil)
			n.runUntil(sec / 2)
			sup := superior(c.age)
			sup.MaxAge, sup.HelloTime, sup.ForwardDelay = c.maxAge, 256, c.fwd
			n.inject("h1", AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 9}, &sup))
			arrival := sec/2 + us
			n.runUntil(arrival)
			s1 := n.bridge("s1")
			if st := s1.Status(); st.IsRoot() || st.RootPort != 1 || st.MaxAge != c.maxAge.Time() || st.ForwardDelay != c.fwd.Time() {
				t.Fatalf("after the root's BPDU: %+v", st)
			}
			// Port 2 has listened since 0 s: it learns once the root's
			// forward delay has passed.
			n.runUntil(c.learning - 1)
			if s, _ := s1.PortState(2); s != Listening {
				t.Fatalf("port 2 %v before the root's forward delay", s)
			}
			n.runUntil(c.learning)
			if s, _ := s1.PortState(2); s != Learning {
				t.Fatalf("port 2 %v after the root's forward delay", s)
			}
			n.runUntil(arrival + c.expire - 1)
			if s1.Status().IsRoot() || s1.Counters()["message_age_expired"] != 0 {
				t.Fatalf("root information expired early: %+v %v", s1.Status(), s1.Counters())
			}
			n.runUntil(arrival + c.expire)
			if !s1.Status().IsRoot() || s1.Counters()["message_age_expired"] != 1 {
				t.Fatalf("root information did not expire at max age: %+v %v", s1.Status(), s1.Counters())
			}
		})
	}
}

// A full MAC table makes room for a new station by dropping entries that
// have aged, whether or not anything looked them up: under the
// standard's continuous aging they are gone, and a dead station must not
// keep a live one out (nor flood its frames as learn_table_full).
func TestFullTableReclaimsAgedEntries(t *testing.T) {
	for _, c := range []struct {
		name string
		tc   bool         // during a topology change: aging is forward delay
		gap  element.Time // between h1's frame and h2's
	}{
		{"aging time", false, 61 * sec},
		{"topology change", true, 16 * sec},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := newFakeNet(t, star(t, 3), map[string]string{"aging": "60s", "max_entries": "1"})
			n.runUntil(70 * sec) // after the topology change of 30 s to 65 s
			s1 := n.bridge("s1")
			if c.tc {
				n.inject("h3", AppendFrame(nil, [6]byte{2}, &BPDU{Type: TypeTCN}))
				n.run(us)
				if !s1.Status().TopologyChange {
					t.Fatal("no topology change")
				}
			}
			n.sendFrom("h1", n.hostMAC("h3"), "a")
			n.run(us)
			n.run(c.gap)
			n.sendFrom("h2", n.hostMAC("h3"), "b")
			n.run(10 * us)
			if p, ok := s1.Lookup(n.hostMAC("h2")); !ok || p != 2 {
				t.Fatalf("h2 not learned in place of aged h1: %d %v, counters %v", p, ok, s1.Counters())
			}
			if c := s1.Counters(); c["learn_table_full"] != 0 || c["learned"] != 2 || c["aged_out"] != 1 {
				t.Fatalf("counters %v", c)
			}
		})
	}
}

// FuzzReceiveSequence feeds a bridge a sequence of frames, each on a port
// and after a gap the input chooses (records of port, gap in 1/4 s,
// length, frame), so that forged BPDUs can build on each other: a
// superior root, then an inferior one, then a TCN, across timer expiries.
// Every frame is accounted for by exactly one outcome, and the bridge's
// view stays consistent: it is root exactly when it has no root port.
func FuzzReceiveSequence(f *testing.F) {
	rec := func(port, gap byte, frame []byte) []byte {
		return append([]byte{port, gap, byte(len(frame))}, frame...)
	}
	sup := superior(0)
	inf := superior(0)
	inf.Root = MakeBridgeID(0xf000, [6]byte{2, 0, 0, 0, 0, 8})
	inf.Bridge = inf.Root
	raised := superior(19 * 256)
	raised.MaxAge = 40 * 256
	var seed []byte
	seed = append(seed, rec(1, 0, AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 9}, &sup))...)
	seed = append(seed, rec(2, 8, AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 8}, &inf))...)
	seed = append(seed, rec(3, 80, AppendFrame(nil, [6]byte{2}, &BPDU{Type: TypeTCN}))...)
	seed = append(seed, rec(1, 90, AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 9}, &raised))...)
	f.Add(seed)
	f.Add(rec(0, 255, []byte{1, 2, 3}))
	// The high bit of the first byte picks an RSTP bridge.
	rstSup := sup
	rstSup.Type, rstSup.Version, rstSup.Role, rstSup.Proposal = TypeRST, VersionRSTP, BPDURoleDesignated, true
	rstAgree := sup
	rstAgree.Type, rstAgree.Version, rstAgree.Role, rstAgree.Agreement = TypeRST, VersionRSTP, BPDURoleRoot, true
	f.Add(append(append(rec(0x81, 0, AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 9}, &rstSup)),
		rec(2, 4, AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 8}, &rstAgree))...),
		rec(1, 40, AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 8}, &inf))...))
	f.Fuzz(func(t *testing.T, in []byte) {
		var params map[string]string
		if len(in) > 0 && in[0]&0x80 != 0 {
			params = map[string]string{"protocol": "rstp"}
		}
		n := newFakeNet(t, star(t, 3), params)
		n.runUntil(sec)
		s1 := n.bridge("s1")
		for frames := 0; len(in) >= 3 && frames < 16; frames++ {
			port, gap, ln := element.Port(in[0]%6), element.Time(in[1])*sec/4, int(in[2])
			in = in[3:]
			ln = min(ln, len(in))
			frame := append([]byte(nil), in[:ln]...)
			in = in[ln:]
			n.run(gap)
			before := outcomes(s1.Counters())
			s1.Receive(port, frame)
			if got := outcomes(s1.Counters()) - before; got != 1 {
				t.Fatalf("frame %x on port %d: %d outcomes counted (%v)", frame, port, got, s1.Counters())
			}
			if st := s1.Status(); st.IsRoot() != (st.RootPort == 0) {
				t.Fatalf("root %v with root port %d", st.IsRoot(), st.RootPort)
			}
		}
		n.run(60 * sec)
		if st := s1.Status(); st.IsRoot() != (st.RootPort == 0) {
			t.Fatalf("after the timers: root %v with root port %d", st.IsRoot(), st.RootPort)
		}
	})
}

// Ready (emu.Readier) is false while any port listens or learns, true
// once every port forwards or blocks, and false again while a repaired
// link's port goes through listening and learning.
func TestReady(t *testing.T) {
	n := newFakeNet(t, ring3(t), nil)
	n.runUntil(us)
	bridges := []string{"s1", "s2", "s3"}
	allReady := func() bool {
		for _, s := range bridges {
			if !n.bridge(s).Ready() {
				return false
			}
		}
		return true
	}
	for _, at := range []element.Time{us, 15 * sec, 30*sec - us} {
		n.runUntil(at)
		if allReady() {
			t.Fatalf("ready at %v, before two forward delays", at)
		}
	}
	n.runUntil(30*sec + us)
	if !allReady() {
		t.Fatal("not ready after two forward delays")
	}
	blocked := 0
	for _, s := range bridges {
		for _, p := range n.bridge(s).Status().Ports {
			if p.State == Blocking {
				blocked++
			}
		}
	}
	if blocked != 1 {
		t.Fatalf("%d blocking ports, want the ring's one", blocked)
	}
	// s1-s2 fails at 31 s: its ports are disabled, and s3's blocked port
	// keeps s2's stale information until max age (20 s) runs out, still
	// settled; then it listens and learns (not ready) for two forward
	// delays and forwards (ready again).
	n.runUntil(31 * sec)
	n.setLink("s1", "s2", false)
	for _, c := range []struct {
		at    element.Time
		ready bool
	}{{31*sec + element.Millisecond, true}, {53 * sec, false}, {70 * sec, false}, {95 * sec, true}} {
		n.runUntil(c.at)
		if allReady() != c.ready {
			t.Fatalf("at %v: ready %v, want %v", c.at, !c.ready, c.ready)
		}
	}
}
