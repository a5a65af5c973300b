package stp

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// Tests from the third mutation sweep of the package: each pins one
// behaviour that a mutant of the production code changed without the
// earlier tests (including sweep2_test.go's) noticing.

var bcast = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// A port identifier keeps the low 12 bits of the port number (802.1t):
// the number cannot spill into the priority bits.
func TestPortIDMasksPortNumber(t *testing.T) {
	if p := MakePortID(0x80, 0x1abc); p != 0x8abc {
		t.Fatalf("port id %#x, want 0x8abc", p)
	}
}

// The 802.3 length AppendFrame writes counts the LLC header and the BPDU
// of the frame it appends, whatever the buffer held before it.
func TestAppendFrameLengthAfterPrefix(t *testing.T) {
	for _, c := range []struct {
		m    BPDU
		want uint16
	}{
		{superior(0), llcLen + ConfigLen},
		{BPDU{Type: TypeTCN}, llcLen + TCNLen},
	} {
		prefix := []byte{0xaa, 0xbb, 0xcc, 0xdd, 0xee}
		f := AppendFrame(append([]byte(nil), prefix...), [6]byte{2}, &c.m)
		if string(f[:len(prefix)]) != string(prefix) {
			t.Fatalf("type %#x: prefix overwritten: %x", c.m.Type, f[:len(prefix)])
		}
		if got := binary.BigEndian.Uint16(f[len(prefix)+12:]); got != c.want {
			t.Fatalf("type %#x: 802.3 length %d, want %d", c.m.Type, got, c.want)
		}
	}
}

// Only 01:80:C2:00:00:00..0F are the reserved link-local group: an
// address that differs from the block in its fourth or fifth byte is an
// ordinary group address.
func TestBridgeGroupIsExactlyTheBlock(t *testing.T) {
	for _, c := range []struct {
		dst  [6]byte
		want bool
	}{
		{[6]byte{0x01, 0x80, 0xc2, 0, 0, 0x0e}, true},
		{[6]byte{0x01, 0x80, 0xc2, 0x01, 0, 0}, false},
		{[6]byte{0x01, 0x80, 0xc2, 0, 0x01, 0}, false},
		{[6]byte{0x01, 0x80, 0xc2, 0, 0, 0x10}, false},
	} {
		if got := IsBridgeGroup(c.dst[:]); got != c.want {
			t.Errorf("IsBridgeGroup(%x) = %v, want %v", c.dst, got, c.want)
		}
	}
}

// Freed MAC table slots are reused, each by one station: after two
// entries are flushed, two new stations take their two slots and the
// table neither grows nor mixes them up.
func TestFreedSlotsReusedOnce(t *testing.T) {
	f := fdb{max: 8}
	c, d, e := [6]byte{2, 0, 0, 0, 0, 3}, [6]byte{2, 0, 0, 0, 0, 4}, [6]byte{2, 0, 0, 0, 0, 5}
	f.learn(macA, 1, 0, sec)
	f.learn(macB, 2, 0, sec)
	f.learn(c, 3, 0, sec)
	if f.flushPort(1) != 1 || f.flushPort(2) != 1 {
		t.Fatal("flush")
	}
	if f.learn(d, 1, 0, sec) != learnNew || f.learn(e, 2, 0, sec) != learnNew {
		t.Fatal("new stations not learned as new")
	}
	for mac, want := range map[[6]byte]element.Port{c: 3, d: 1, e: 2} {
		if p, ok, _ := f.lookup(mac, 0, sec); !ok || p != want {
			t.Errorf("%x at port %d %v, want %d", mac, p, ok, want)
		}
	}
	if f.len() != 3 || len(f.ents) != 3 {
		t.Fatalf("%d entries in %d slots, want 3 in 3", f.len(), len(f.ents))
	}
}

// A station's every frame refreshes its entry (§7.8): it ages from the
// last frame, not the first.
func TestRefreshRestartsAging(t *testing.T) {
	env := &benchEnv{}
	b := forwardingBridge(t, env, 2)
	b.Receive(1, frame(bcast, macA, 60))
	env.now = 200 * sec
	b.Receive(1, frame(bcast, macA, 60))
	env.now = 450 * sec
	if p, ok := b.Lookup(macA); !ok || p != 1 {
		t.Fatalf("entry refreshed at 200 s gone at 450 s: %d %v", p, ok)
	}
}

// capEnv is a benchEnv that keeps what the bridge sends.
type capEnv struct {
	benchEnv
	frames [][]byte
}

func (e *capEnv) Send(p element.Port, f []byte) {
	e.benchEnv.Send(p, f)
	e.frames = append(e.frames, f)
}

// A negative MAC table size is a configuration error, not an empty table.
func TestNegativeMaxEntriesRefused(t *testing.T) {
	if _, err := New(Config{MaxEntries: -1}); !errors.Is(err, ErrConfig) {
		t.Fatalf("max entries -1: %v", err)
	}
}

// A port sends its BPDUs from the MAC its PortInfo gives.
func TestBPDUSourceIsPortInfoMAC(t *testing.T) {
	b, err := New(Config{MAC: [6]byte{2, 0, 0, 0, 0xaa, 0xbb}})
	if err != nil {
		t.Fatal(err)
	}
	env := &capEnv{}
	mac := [6]byte{2, 0x77, 0, 0, 0, 0x77}
	b.Attach(env, []element.PortInfo{{Port: 1, Up: true, MAC: mac}})
	if len(env.frames) != 1 || [6]byte(env.frames[0][6:12]) != mac {
		t.Fatalf("BPDUs %x, want one from %x", env.frames, mac)
	}
}

// A port's path cost comes from the rate its PortInfo gives (Table 8-5);
// Config.PortRate stands in only for a PortInfo without one.
func TestPathCostFromPortInfoRate(t *testing.T) {
	b, err := New(Config{PortRate: []int64{10e6, 10e6}})
	if err != nil {
		t.Fatal(err)
	}
	b.Attach(&benchEnv{}, []element.PortInfo{{Port: 1, Up: true, Rate: 10e9}, {Port: 2, Up: true}})
	st := b.Status()
	if st.Ports[0].PathCost != 2 || st.Ports[1].PathCost != 100 {
		t.Fatalf("path costs %d and %d, want 2 (PortInfo's 10 Gb/s) and 100 (PortRate's 10 Mb/s)",
			st.Ports[0].PathCost, st.Ports[1].PathCost)
	}
}

// A local port takes no part in the tree, so the 12-bit port identifier
// limit does not apply to it: port 4096 of the host stack forwards.
func TestLocalPortBeyondMaxPort(t *testing.T) {
	b, _ := attached(t, element.PortInfo{Port: MaxPort + 1, Up: true, Local: true})
	if s, r := b.PortState(MaxPort + 1); s != Forwarding || r != RoleLocal || b.Counters()["port_out_of_range"] != 0 {
		t.Fatalf("local port 4096: %v/%v, counters %v", s, r, b.Counters())
	}
}

// Port number 0 in the engine's list is counted and skipped, not a panic.
func TestPortZeroAtAttach(t *testing.T) {
	b, _ := attached(t, element.PortInfo{Port: 0, Up: true}, element.PortInfo{Port: 1, Up: true})
	if c := b.Counters()["port_invalid"]; c != 1 || len(b.Status().Ports) != 1 {
		t.Fatalf("port_invalid = %d, %d ports", c, len(b.Status().Ports))
	}
}

// Without the tree the bridge is its own root and every port is its
// LAN's designated port, with the bridge's own information.
func TestNoSTPStatusIsOwnRoot(t *testing.T) {
	b, err := New(Config{MAC: [6]byte{2, 0, 0, 0, 0, 1}, NoSTP: true})
	if err != nil {
		t.Fatal(err)
	}
	b.Attach(&benchEnv{}, []element.PortInfo{{Port: 1, Up: true}})
	st := b.Status()
	p := st.Ports[0]
	if !st.IsRoot() || st.Root != b.ID() || p.Role != RoleDesignated || p.DesignatedRoot != b.ID() || p.DesignatedBridge != b.ID() {
		t.Fatalf("status %+v", st)
	}
}

// A port whose link is down at attach holds the bridge's own designated
// information (§8.8.1 initialises every port as designated), and a
// local port holds none, even after a BPDU made the bridge recompute
// its ports (§8.6.9 leaves the local port out).
func TestDesignatedInfoOfDownAndLocalPorts(t *testing.T) {
	b, _ := attached(t, element.PortInfo{Port: 1, Up: true}, element.PortInfo{Port: 2},
		element.PortInfo{Port: 3, Up: true, Local: true})
	down := PortStatus{Port: 2, ID: 0x8002, Role: RoleDisabled, State: Disabled, PathCost: 4,
		DesignatedRoot: b.ID(), DesignatedBridge: b.ID(), DesignatedPort: 0x8002}
	if got := b.Status().Ports[1]; got != down {
		t.Fatalf("down port at attach: %+v, want %+v", got, down)
	}
	sup := superior(0)
	b.Receive(1, AppendFrame(nil, rootMAC, &sup))
	local := PortStatus{Port: 3, ID: 0x8003, Role: RoleLocal, State: Forwarding, PathCost: 4}
	if got := b.Status().Ports[2]; got != local {
		t.Fatalf("local port: %+v, want %+v", got, local)
	}
}

// A link failure disables a port of a bridge without the tree, and of a
// local port, and its stations are forgotten.
func TestLinkDownDisablesNoSTPAndLocalPorts(t *testing.T) {
	n := newFakeNet(t, star(t, 2), map[string]string{"stp": "off"})
	n.run(us)
	n.sendFrom("h1", n.hostMAC("h2"), "x")
	n.run(10 * us)
	s1 := n.bridge("s1")
	n.setLink("s1", "h1", false)
	if s, _ := s1.PortState(1); s != Disabled {
		t.Fatalf("stp=off port after link down: %v", s)
	}
	if _, ok := s1.Lookup(n.hostMAC("h1")); ok || s1.Counters()["flushed"] != 1 {
		t.Fatalf("entry kept: %v", s1.Counters())
	}
	b, _ := attached(t, element.PortInfo{Port: 1, Up: true, Local: true})
	b.LinkChange(1, false)
	if s, r := b.PortState(1); s != Disabled || r != RoleLocal {
		t.Fatalf("local port after link down: %v/%v", s, r)
	}
}

// A station learned on a port that is still learning is not forwarded
// to (§8.4.3: learning ports do not relay): the frame floods, and with no
// other forwarding port it is dropped.
func TestNoForwardingToLearningPort(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(31 * sec)
	n.setLink("s1", "h2", false)
	n.setLink("s1", "h2", true) // listening until 46 s, learning until 61 s
	n.runUntil(47 * sec)
	s1 := n.bridge("s1")
	n.sendFrom("h2", n.hostMAC("h1"), "learn")
	n.run(10 * us)
	if p, ok := s1.Lookup(n.hostMAC("h2")); !ok || p != 2 {
		t.Fatalf("h2 not learned on learning port 2: %d %v", p, ok)
	}
	n.sendFrom("h1", n.hostMAC("h2"), "x")
	n.run(10 * us)
	if c := s1.Counters(); n.received("h2", "x") != 0 || c["forwarded"] != 0 || c["drop_no_egress"] != 1 {
		t.Fatalf("h2 got %d, counters %v", n.received("h2", "x"), c)
	}
}

// A frame for a station on its own input port is filtered: nothing goes
// out, not even back where it came from.
func TestFilteredFrameNotSentBack(t *testing.T) {
	env := &benchEnv{}
	b := forwardingBridge(t, env, 2)
	b.Receive(1, frame(bcast, macB, 60))
	sent := env.sent
	b.Receive(1, frame(macB, macA, 60))
	if c := b.Counters(); env.sent != sent || c["filtered_same_port"] != 1 || c["forwarded"] != 0 {
		t.Fatalf("%d frames sent, counters %v", env.sent-sent, c)
	}
}

// Copies of forwarded frames come from the engine's buffer pool when it
// has one (sim.Allocator), so that the engine can recycle them.
func TestCopiesFromEnginePool(t *testing.T) {
	env := &pooledEnv{benchEnv{pooled: true}}
	b := forwardingBridge(t, env, 2)
	b.Receive(1, frame(bcast, macA, 60))
	first := &env.spare[0]
	b.Receive(2, frame(macA, macB, 60))
	if env.spare == nil || &env.spare[0] != first {
		t.Fatal("forwarded copy not taken from the engine's pool")
	}
}

// During a topology change the periodic sweep ages entries at the
// forward delay (§8.3.5), before the change ends.
func TestSweepDuringTopologyChange(t *testing.T) {
	n := newFakeNet(t, star(t, 2), map[string]string{"aging": "20s"})
	n.runUntil(70 * sec)
	n.inject("h2", AppendFrame(nil, [6]byte{2}, &BPDU{Type: TypeTCN})) // TC until 105 s
	n.runUntil(71 * sec)
	n.sendFrom("h1", n.hostMAC("h2"), "x") // learned at 71 s + 1 µs: sweep at 91 s + 1 µs
	n.runUntil(92 * sec)
	s1 := n.bridge("s1")
	if st := s1.Status(); !st.TopologyChange || s1.Entries() != 0 || s1.Counters()["aged_out"] != 1 {
		t.Fatalf("TC %v, %d entries, counters %v", st.TopologyChange, s1.Entries(), s1.Counters())
	}
}

// A root demoted while its topology change is unacknowledged repeats its
// TCN every hello time (§8.7.1 starts the TCN timer) until acknowledged.
func TestDemotedRootRepeatsTCN(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(40 * sec) // TC of the ports' forwarding at 30 s, until 65 s
	m1 := n.mark("h1")
	feed(n, "h1", superior(0), 40*sec, 48*sec)
	n.runUntil(49 * sec)
	if got := tcnsSince(n, "h1", m1); got != 5 { // 40, 42, 44, 46, 48 s
		t.Fatalf("%d TCNs by 49 s, want 5", got)
	}
}

// The root path cost through the root port saturates at the 32-bit
// field's largest value (addCost) rather than wrap to a cheap one.
func TestRootPathCostSaturates(t *testing.T) {
	b, _ := attached(t, element.PortInfo{Port: 1, Up: true}, element.PortInfo{Port: 2, Up: true})
	sup := superior(0)
	sup.RootPathCost = math.MaxUint32 - 1
	b.Receive(1, AppendFrame(nil, rootMAC, &sup))
	if st := b.Status(); st.RootPort != 1 || st.RootPathCost != math.MaxUint32 {
		t.Fatalf("root port %d, cost %d; want 1, %d", st.RootPort, st.RootPathCost, uint32(math.MaxUint32))
	}
}

// An acknowledgment held by the hold timer is forgotten when the port
// becomes blocked (§8.6.11 clears the TCA flag): the port's first BPDU
// when it is designated again carries no stale acknowledgment.
func TestPendingAckDroppedOnBlockedPort(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(sec / 2)
	m2 := n.mark("h2")
	n.inject("h2", AppendFrame(nil, [6]byte{2}, &BPDU{Type: TypeTCN})) // ack held until 1 s
	n.runUntil(sec/2 + sec/10)
	sup := superior(0)
	n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	alt := superior(0) // as close to the root as s1, from a better bridge
	alt.RootPathCost = 4
	alt.Bridge = MakeBridgeID(0x2000, [6]byte{2, 0, 0, 0, 0, 8})
	n.inject("h2", AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 8}, &alt))
	n.run(10 * us)
	if _, r := n.bridge("s1").PortState(2); r != RoleBlocked {
		t.Fatalf("port 2 %v", r)
	}
	// alt ages out at 20.6 s: port 2 is designated again and carries
	// the root's BPDU of 21 s.
	feed(n, "h1", sup, sec, 21*sec)
	n.runUntil(22 * sec)
	got := configsSince(n, "h2", m2)
	if len(got) != 1 || got[0].TCA {
		t.Fatalf("BPDUs on port 2: %+v", got)
	}
}

// When the root ends a topology change, entries unused for longer than
// the root's forward delay (the value in force, §8.6.3) are gone.
func TestTopologyChangeEndSweepsAtRootForwardDelay(t *testing.T) {
	n := newFakeNet(t, star(t, 3), nil)
	sup := superior(0)
	sup.ForwardDelay, sup.TC = 4*256, true
	feed(n, "h1", sup, sec/2, 19*sec) // ports 2 and 3 forward from 8 s
	n.runUntil(9 * sec)
	n.sendFrom("h2", n.hostMAC("h3"), "learn")
	n.run(10 * us)
	s1 := n.bridge("s1")
	if s1.Entries() != 1 {
		t.Fatalf("%d entries", s1.Entries())
	}
	sup.TC = false
	feed(n, "h1", sup, 20*sec+sec/2, 20*sec+sec/2) // 11.5 s after learning
	n.run(10 * us)
	if st := s1.Status(); st.TopologyChange || s1.Entries() != 0 || s1.Counters()["aged_out"] != 1 {
		t.Fatalf("TC %v, %d entries, counters %v", st.TopologyChange, s1.Entries(), s1.Counters())
	}
}

// A port learns for the root's forward delay too (§8.7.5 restarts the
// timer with the value in force), not the bridge's own.
func TestLearningUsesRootForwardDelay(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	sup := superior(0)
	sup.ForwardDelay = 4 * 256
	feed(n, "h1", sup, sec/2, 24*sec)
	n.runUntil(26*sec + sec/2)
	n.setLink("s1", "h2", false)
	n.setLink("s1", "h2", true) // at 26.5 s
	s1 := n.bridge("s1")
	n.runUntil(34*sec + sec/2 - 1)
	if s, _ := s1.PortState(2); s != Learning {
		t.Fatalf("port 2 %v before twice the root's forward delay", s)
	}
	n.runUntil(34*sec + sec/2)
	if s, _ := s1.PortState(2); s != Forwarding {
		t.Fatalf("port 2 %v after twice the root's forward delay", s)
	}
}

// A failed port holds the bridge's own designated information (§8.8.3
// makes it designated), not what its LAN last said, even while the
// bridge keeps the same root through another port.
func TestDisabledRootPortHoldsOwnInfo(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	n.runUntil(sec / 2)
	sup := superior(0)
	n.inject("h1", AppendFrame(nil, rootMAC, &sup))
	alt := superior(0)
	alt.RootPathCost = 4
	alt.Bridge = MakeBridgeID(0x2000, [6]byte{2, 0, 0, 0, 0, 8})
	n.inject("h2", AppendFrame(nil, [6]byte{2, 0, 0, 0, 0, 8}, &alt))
	n.run(10 * us)
	n.setLink("s1", "h1", false)
	s1 := n.bridge("s1")
	st := s1.Status()
	want := PortStatus{Port: 1, ID: 0x8001, Role: RoleDisabled, State: Disabled, PathCost: 4,
		DesignatedRoot: sup.Root, DesignatedCost: 8, DesignatedBridge: s1.ID(), DesignatedPort: 0x8001}
	if st.RootPort != 2 || st.RootPathCost != 8 || st.Ports[0] != want {
		t.Fatalf("root port %d cost %d, port 1 %+v; want 2, 8, %+v", st.RootPort, st.RootPathCost, st.Ports[0], want)
	}
}

// A forwarding root port whose failure makes the bridge root is one
// topology change, counted once.
func TestRootPortFailureOneTopologyChange(t *testing.T) {
	n := newFakeNet(t, star(t, 2), nil)
	feed(n, "h1", superior(0), sec/2, 40*sec)
	n.runUntil(41 * sec)
	s1 := n.bridge("s1")
	if s, r := s1.PortState(1); s != Forwarding || r != RoleRoot {
		t.Fatalf("port 1 %v/%v", s, r)
	}
	before := s1.Counters()["topology_change_detected"]
	n.setLink("s1", "h1", false)
	if got := s1.Counters()["topology_change_detected"] - before; got != 1 || !s1.Status().IsRoot() {
		t.Fatalf("%d topology changes counted, root %v", got, s1.Status().IsRoot())
	}
}

// A non-root bridge reports the root's hello time, the one in force.
func TestStatusHelloTimeIsRoots(t *testing.T) {
	b, _ := attached(t, element.PortInfo{Port: 1, Up: true})
	sup := superior(0)
	sup.HelloTime = 256
	b.Receive(1, AppendFrame(nil, rootMAC, &sup))
	if st := b.Status(); st.HelloTime != sec {
		t.Fatalf("hello time %v, want the root's 1s", st.HelloTime)
	}
}

// Names of values past the enumerations are numbered, not a panic.
func TestStateAndRoleNamesOutOfRange(t *testing.T) {
	if s := State(7).String(); s != "state(7)" {
		t.Errorf("State(7) = %q", s)
	}
	if s := Role(8).String(); s != "role(8)" {
		t.Errorf("Role(8) = %q", s)
	}
}

// IsRoot compares the root with the bridge: a status that names another
// root is not the root's, whatever its root port says.
func TestStatusIsRootComparesIDs(t *testing.T) {
	if (Status{Bridge: 1, Root: 2}).IsRoot() {
		t.Error("status naming another root is root")
	}
	if !(Status{Bridge: 1, Root: 1, RootPort: 3}).IsRoot() {
		t.Error("status naming itself is not root")
	}
}

// A per-node priority of 0 is a real priority 0, not the default.
func TestNodePriorityZero(t *testing.T) {
	g := ring3(t)
	f, err := NewFabric(g, map[string]string{"priority.s2": "0"})
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := g.Lookup("s2")
	if p := f.Bridge(s2).ID().Priority(); p != 0 {
		t.Fatalf("s2 priority %d, want 0", p)
	}
}

// Fabric.Bridge and Element answer nil for node ids outside the
// topology, negative ones included.
func TestFabricBridgeOutOfRange(t *testing.T) {
	g := ring3(t)
	f, err := NewFabric(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []topo.NodeID{-1, topo.NodeID(g.NumNodes())} {
		if f.Bridge(n) != nil || f.Element(n) != nil {
			t.Errorf("node %d has a bridge", n)
		}
	}
}

// A switch of 4095 ports, the most an 802.1t port identifier numbers,
// gets a bridge; one of 4096 is refused.
func TestFabricPortCountLimit(t *testing.T) {
	for _, c := range []struct {
		ports int
		ok    bool
	}{{int(MaxPort), true}, {int(MaxPort) + 1, false}} {
		b := topo.NewBuilder("big")
		s := b.AddNode("s1", topo.Switch)
		b.Connect(s, b.AddNode("h1", topo.Host))
		b.Node(s).Ports = c.ports
		g, err := b.Graph()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewFabric(g, nil); (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrConfig)) {
			t.Errorf("%d ports: %v", c.ports, err)
		}
	}
}

// A path cost may be set on a node's last port, and several ports of one
// node each keep their own.
func TestPathCostParamsPerPort(t *testing.T) {
	n := newFakeNet(t, ring3(t), map[string]string{"path_cost.s1:3": "100", "path_cost.s1:1": "7"})
	st := n.bridge("s1").Status()
	if st.Ports[0].PathCost != 7 || st.Ports[1].PathCost != 4 || st.Ports[2].PathCost != 100 {
		t.Fatalf("s1 path costs %d %d %d, want 7 4 100", st.Ports[0].PathCost, st.Ports[1].PathCost, st.Ports[2].PathCost)
	}
}

// Durations above 10^6 s are refused (their picoseconds would approach
// int64's limit); 10^6 s itself is accepted.
func TestDurationParamUpperBound(t *testing.T) {
	if _, err := NewFabric(ring3(t), map[string]string{"aging": "1000000"}); err != nil {
		t.Fatalf("aging 10^6 s: %v", err)
	}
	if _, err := NewFabric(ring3(t), map[string]string{"aging": "1000001"}); !errors.Is(err, ErrParam) {
		t.Fatalf("aging 10^6+1 s: %v", err)
	}
}

// A duration in seconds converts to the nearest picosecond: 2.01 is
// 2.01 s exactly, though 2.01 × 10^12 in floating point falls short.
func TestDurationParamRounds(t *testing.T) {
	if d, err := parseDuration("2.01"); err != nil || d != 2010*element.Millisecond {
		t.Fatalf("2.01: %v %v", d, err)
	}
}

// CheckTree ignores nodes without links: an unplugged host is not cut off.
func TestCheckTreeIgnoresIsolatedNode(t *testing.T) {
	b := topo.NewBuilder("star+isolated")
	s := b.AddNode("s1", topo.Switch)
	b.Connect(s, b.AddNode("h1", topo.Host))
	b.AddNode("h2", topo.Host)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	n := newFakeNet(t, g, nil)
	n.runUntil(31 * sec)
	if err := n.fab.CheckTree(); err != nil {
		t.Fatal(err)
	}
}

// Path refuses node ids outside the topology, negative ones included.
func TestPathUnknownNodes(t *testing.T) {
	f, err := NewFabric(ring3(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]topo.NodeID{{-1, 0}, {0, -1}, {0, 6}} {
		if _, err := f.Path(c[0], c[1]); !errors.Is(err, topo.ErrUnknownNode) {
			t.Errorf("Path(%d, %d): %v", c[0], c[1], err)
		}
	}
}

// CheckTree fails while the bridges disagree on the root, even when one
// of them believes it is root and the forwarding links form a tree: the
// moment a better root's BPDU has reached s2 but not yet s1.
func TestCheckTreeRootsDisagree(t *testing.T) {
	n := newFakeNet(t, lineGraph(t, 2), nil)
	n.runUntil(40 * sec)
	if err := n.fab.CheckTree(); err != nil {
		t.Fatal(err)
	}
	sup := superior(0)
	n.inject("h2", AppendFrame(nil, rootMAC, &sup))
	n.run(topo.DefaultDelay)
	if n.bridge("s2").Status().Root != sup.Root || !n.bridge("s1").Status().IsRoot() {
		t.Fatal("the new root's BPDU did not reach s2 alone")
	}
	err := n.fab.CheckTree()
	if !errors.Is(err, ErrNotTree) || !strings.Contains(err.Error(), "names root") {
		t.Fatalf("CheckTree: %v", err)
	}
}

// ActiveLinks are the links forwarding at both ends: ring:3's link to the
// blocked port s3:2 is not one.
func TestActiveLinksBothEnds(t *testing.T) {
	n := newFakeNet(t, ring3(t), nil)
	n.runUntil(40 * sec)
	if got, want := n.fab.ActiveLinks(), []topo.LinkID{0, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("active links %v, want %v", got, want)
	}
}

// edge_ports=false is the classic standard's behaviour: host ports
// listen like any other.
func TestEdgePortsFalse(t *testing.T) {
	n := newFakeNet(t, star(t, 2), map[string]string{"edge_ports": "false"})
	n.runUntil(sec)
	if s, _ := n.bridge("s1").PortState(1); s != Listening {
		t.Fatalf("host port %v with edge_ports=false", s)
	}
}
