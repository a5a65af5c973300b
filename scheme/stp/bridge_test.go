package stp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

const (
	sec = element.Second
	us  = element.Microsecond
)

// portStates renders every bridge's ports as "s1:1=designated/forwarding
// ..." in node order, for compact exact comparisons.
func portStates(n *fakeNet) string {
	var sb strings.Builder
	for id := topo.NodeID(0); int(id) < n.g.NumNodes(); id++ {
		b := n.fab.Bridge(id)
		if b == nil {
			continue
		}
		st := b.Status()
		for _, p := range st.Ports {
			fmt.Fprintf(&sb, "%s:%d=%v/%v ", n.g.Node(id).Name, p.Port, p.Role, p.State)
		}
	}
	return strings.TrimSpace(sb.String())
}

func TestRing3Converges(t *testing.T) {
	n := newFakeNet(t, ring3(t), nil)

	// Everything starts listening as designated; by 1 s + 1 µs the hold
	// timers let s2 tell s3 about root s1 and s3:2 blocks.
	n.runUntil(1*sec + 2*us)
	want := "s1:1=designated/listening s1:2=designated/listening s1:3=designated/listening " +
		"s2:1=designated/listening s2:2=root/listening s2:3=designated/listening " +
		"s3:1=root/listening s3:2=blocked/blocking s3:3=designated/listening"
	if got := portStates(n); got != want {
		t.Fatalf("at 1s:\n got %s\nwant %s", got, want)
	}
	// Listening lasts one forward delay, learning another: no port
	// forwards a frame before 30 s.
	n.runUntil(15*sec - 1)
	if got := portStates(n); got != want {
		t.Fatalf("just before 15s:\n got %s\nwant %s", got, want)
	}
	n.runUntil(15 * sec)
	if got := portStates(n); got != strings.ReplaceAll(want, "listening", "learning") {
		t.Fatalf("at 15s: %s", got)
	}
	n.runUntil(30*sec - 1)
	if strings.Contains(portStates(n), "forwarding") {
		t.Fatalf("forwarding before 30s: %s", portStates(n))
	}
	n.runUntil(30 * sec)
	want = strings.ReplaceAll(want, "listening", "forwarding")
	if got := portStates(n); got != want {
		t.Fatalf("at 30s:\n got %s\nwant %s", got, want)
	}
	if err := n.fab.CheckTree(); err != nil {
		t.Fatal(err)
	}

	s1, s2, s3 := n.bridge("s1"), n.bridge("s2"), n.bridge("s3")
	for _, c := range []struct {
		b        *Bridge
		rootPort element.Port
		cost     uint32
	}{{s1, 0, 0}, {s2, 2, 4}, {s3, 1, 4}} {
		st := c.b.Status()
		if st.Root != s1.ID() || st.RootPort != c.rootPort || st.RootPathCost != c.cost {
			t.Errorf("%v: root %v port %d cost %d, want %v %d %d", st.Bridge, st.Root, st.RootPort, st.RootPathCost, s1.ID(), c.rootPort, c.cost)
		}
	}
	if got := s1.ID().String(); got != "8000.060000000000" {
		t.Errorf("s1 bridge ID %s", got)
	}
	// The ports turning forwarding raised a topology change, which the
	// root signals for max age + forward delay: s3's TCN reaches s1 at
	// 30 s + 1 µs and s1's acknowledgment carries the flag back.
	n.runUntil(30*sec + 2*us)
	if !s1.Status().TopologyChange || !s3.Status().TopologyChange {
		t.Error("no topology change after ports went forwarding")
	}
	n.runUntil(30*sec + 35*sec + 2*sec)
	if s1.Status().TopologyChange || s2.Status().TopologyChange {
		t.Error("topology change still signalled 37 s later")
	}
	if err := n.fab.CheckTree(); err != nil {
		t.Fatal(err)
	}
}

func TestRing3DataPlane(t *testing.T) {
	n := newFakeNet(t, ring3(t), nil)
	n.runUntil(31 * sec)

	// A broadcast reaches every other host exactly once and never
	// comes back: the tree has no loop.
	n.sendFrom("h1", [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "bcast")
	n.run(sec)
	for _, h := range []string{"h2", "h3"} {
		if got := n.received(h, "bcast"); got != 1 {
			t.Errorf("%s got %d copies of the broadcast, want 1", h, got)
		}
	}
	if got := n.received("h1", "bcast"); got != 0 {
		t.Errorf("broadcast came back to its sender %d times", got)
	}
	// h1 is learned everywhere now: a unicast reply goes only to h1,
	// along the tree (h3 -> s3 -> s1 -> h1).
	n.sendFrom("h3", n.hostMAC("h1"), "reply")
	n.run(sec)
	if n.received("h1", "reply") != 1 || n.received("h2", "reply") != 0 {
		t.Errorf("unicast to a learned station: h1 %d h2 %d, want 1 0", n.received("h1", "reply"), n.received("h2", "reply"))
	}
	if c := n.bridge("s3").Counters(); c["forwarded"] != 1 {
		t.Errorf("s3 counters %v", c)
	}
	// s3:2 is blocked: the broadcast that s2 flooded to it was dropped
	// and counted.
	if c := n.bridge("s3").Counters(); c["drop_port_blocked"] != 1 {
		t.Errorf("s3 drop_port_blocked = %d, want 1 (%v)", c["drop_port_blocked"], c)
	}
	// h2 to h3 (unknown at s2? no: h3 was learned from its reply at s1
	// only): the frame floods at s2 and reaches h3 through s1.
	n.sendFrom("h2", n.hostMAC("h3"), "to-h3")
	n.run(sec)
	if n.received("h3", "to-h3") != 1 || n.received("h1", "to-h3") != 0 {
		t.Errorf("h2->h3: h3 %d h1 %d", n.received("h3", "to-h3"), n.received("h1", "to-h3"))
	}
}

func TestNoForwardingBeforeConvergence(t *testing.T) {
	n := newFakeNet(t, ring3(t), nil)
	n.runUntil(20 * sec) // learning
	n.sendFrom("h1", [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "early")
	n.run(sec)
	if n.received("h2", "early")+n.received("h3", "early") != 0 {
		t.Fatal("a learning port forwarded")
	}
	s1 := n.bridge("s1")
	if c := s1.Counters(); c["drop_port_learning"] != 1 || c["learned"] != 1 {
		t.Fatalf("s1 counters %v", c)
	}
	if p, ok := s1.Lookup(n.hostMAC("h1")); !ok || p != 3 {
		t.Fatalf("h1 not learned on s1:3 while learning: %d %v", p, ok)
	}
}

// Failing s3's root port: s3's blocked port is its only way to the root
// now. It listens and learns for 2 × forward delay, then forwards.
func TestRing3FailRootPort(t *testing.T) {
	n := newFakeNet(t, ring3(t), nil)
	n.runUntil(70 * sec) // converged, topology change over
	fail := 70*sec + sec/2
	n.runUntil(fail)
	n.setLink("s1", "s3", false)
	s3 := n.bridge("s3")
	st := s3.Status()
	if st.RootPort != 2 || st.RootPathCost != 8 || st.Ports[1].State != Listening {
		t.Fatalf("s3 after failure: root port %d cost %d port 2 %v", st.RootPort, st.RootPathCost, st.Ports[1].State)
	}
	n.runUntil(fail + 30*sec - 1)
	if s, _ := s3.PortState(2); s != Learning {
		t.Fatalf("s3:2 %v just before 2×forward delay", s)
	}
	n.runUntil(fail + 30*sec)
	if s, _ := s3.PortState(2); s != Forwarding {
		t.Fatalf("s3:2 %v at 2×forward delay", s)
	}
	if err := n.fab.CheckTree(); err != nil {
		t.Fatal(err)
	}
	// Stations learn their new places.
	n.sendFrom("h1", n.hostMAC("h3"), "after")
	n.run(sec)
	if n.received("h3", "after") != 1 {
		t.Fatal("h1 -> h3 lost after reconvergence")
	}
}

// Failing s2's root port: s2 believes itself root, s3 ignores its inferior
// claim until the information on s3:2 ages out (max age less the message
// age it arrived with), then s3:2 becomes designated and goes through
// listening and learning. Total: max age − 1 s + 2 × forward delay after
// the last hello, within max age + 2 × forward delay of the failure.
func TestRing3FailMaxAge(t *testing.T) {
	n := newFakeNet(t, ring3(t), nil)
	fail := 70*sec + sec/2
	n.runUntil(fail)
	n.setLink("s1", "s2", false)
	s2, s3 := n.bridge("s2"), n.bridge("s3")
	if !s2.Status().IsRoot() {
		t.Fatal("s2 did not claim root after losing its root port")
	}
	// s1's last hello before the failure left s1 at 70 s, reached s2
	// 1 µs later and s3:2 (relayed, message age 1 s) 1 µs after that:
	// its information expires 19 s later.
	expire := 70*sec + 2*us + 19*sec
	n.runUntil(expire - 1)
	if s, r := s3.PortState(2); s != Blocking || r != RoleBlocked {
		t.Fatalf("s3:2 %v/%v before its information aged", s, r)
	}
	// What status reports show: every port's state/role, the failed one
	// disabled.
	if got := s3.PortStateNames(); got[2] != "blocking/blocked" || len(got) != len(s3.ports) {
		t.Errorf("s3 PortStateNames %v", got)
	}
	if got := s2.PortStateNames(); got[2] != "disabled/disabled" || got[1] != "forwarding/designated" {
		t.Errorf("s2 PortStateNames %v, want its failed port 2 disabled/disabled", got)
	}
	n.runUntil(expire)
	if s, r := s3.PortState(2); s != Listening || r != RoleDesignated {
		t.Fatalf("s3:2 %v/%v after its information aged", s, r)
	}
	// §8.7.4 sends nothing when s3:2 becomes designated; s3 speaks on
	// it when s1's next hello (90 s) arrives on its root port and is
	// relayed, and s2 hears it 2 µs after 90 s.
	n.runUntil(90*sec + 2*us - 1)
	if !s2.Status().IsRoot() {
		t.Fatal("s2 heard of s1 before s1's next hello was relayed")
	}
	n.runUntil(90*sec + 2*us)
	if st := s2.Status(); st.RootPort != 1 || st.RootPathCost != 8 || st.Root != n.bridge("s1").ID() {
		t.Fatalf("s2 did not find the root through s3: %+v", st)
	}
	n.runUntil(expire + 30*sec - 1)
	if s, _ := s3.PortState(2); s != Learning {
		t.Fatalf("s3:2 %v", s)
	}
	n.runUntil(expire + 30*sec)
	if s, _ := s3.PortState(2); s != Forwarding {
		t.Fatalf("s3:2 %v", s)
	}
	if bound := fail + DefaultMaxAge + 2*DefaultForwardDelay; expire+30*sec > bound {
		t.Fatalf("reconverged at %v, beyond max_age + 2×forward_delay (%v)", expire+30*sec, bound)
	}
	if err := n.fab.CheckTree(); err != nil {
		t.Fatal(err)
	}
	if c := s3.Counters(); c["message_age_expired"] != 1 {
		t.Errorf("s3 message_age_expired %d", c["message_age_expired"])
	}
}

// Repairing a link brings its ports back through listening and learning,
// and the tree returns to the original one.
func TestRepair(t *testing.T) {
	n := newFakeNet(t, ring3(t), nil)
	n.runUntil(40 * sec)
	orig := portStates(n)
	n.setLink("s1", "s3", false)
	n.run(60 * sec)
	n.setLink("s1", "s3", true)
	n.run(31 * sec)
	if got := portStates(n); got != orig {
		t.Fatalf("after repair:\n got %s\nwant %s", got, orig)
	}
	if err := n.fab.CheckTree(); err != nil {
		t.Fatal(err)
	}
}

// A path cost moves the blocked port: with s3's direct link to the root
// costing 100, s3 reaches s1 through s2 (cost 8) and blocks its own port
// toward s1 instead.
func TestPathCostParam(t *testing.T) {
	n := newFakeNet(t, ring3(t), map[string]string{"path_cost.s3:1": "100"})
	n.runUntil(31 * sec)
	st := n.bridge("s3").Status()
	if st.RootPort != 2 || st.RootPathCost != 8 || st.Ports[0].Role != RoleBlocked || st.Ports[0].PathCost != 100 {
		t.Fatalf("s3: %+v", st)
	}
	if err := n.fab.CheckTree(); err != nil {
		t.Fatal(err)
	}
}

func TestPriorityChoosesRoot(t *testing.T) {
	n := newFakeNet(t, ring3(t), map[string]string{"priority.s3": "4096"})
	n.runUntil(31 * sec)
	s3 := n.bridge("s3")
	if !s3.Status().IsRoot() || s3.ID().Priority() != 4096 {
		t.Fatalf("s3 not root: %+v", s3.Status())
	}
	// s1 and s2 are both one hop from s3; on their shared link s1 has the
	// lower ID and is designated, so s2's port toward s1 blocks.
	if s, r := n.bridge("s2").PortState(2); s != Blocking || r != RoleBlocked {
		t.Fatalf("s2:2 %v/%v", s, r)
	}
	if err := n.fab.CheckTree(); err != nil {
		t.Fatal(err)
	}
}

// Line of 8 bridges: the message age grows by 1 s per hop, and the
// farthest bridge still hears the root.
func TestMessageAgePerHop(t *testing.T) {
	n := newFakeNet(t, lineGraph(t, 8), nil)
	n.runUntil(31 * sec)
	if err := n.fab.CheckTree(); err != nil {
		t.Fatal(err)
	}
	// Read the age after s1's hello at 50 s has crossed the line (1 µs
	// per hop). Not earlier: in the topology change at 30 s bridges
	// acknowledge TCNs between hellos, with information aged by the time
	// since the last hello, and their hold timers then delay the next
	// relays by up to 1 s a hop; ages reach 13 s at s8 by 36 s and take
	// until 45 s to settle back (a transient the standard allows while
	// ages stay below max age).
	n.runUntil(50*sec + 8*us)
	for i := 2; i <= 8; i++ {
		b := n.bridge(fmt.Sprintf("s%d", i))
		st := b.Status()
		if st.RootPort != 1 || st.RootPathCost != uint32(4*(i-1)) {
			t.Fatalf("s%d root port %d cost %d", i, st.RootPort, st.RootPathCost)
		}
	}
	// What s8 records on its root port is s7's relay: s1 at age 0, plus
	// 1 s per relaying bridge s2..s7.
	p := &n.bridge("s8").ports[0]
	if p.msgAge.base != 6*sec {
		t.Fatalf("s8 root port message age %v, want 6s", p.msgAge.base)
	}
}

func TestEdgePorts(t *testing.T) {
	n := newFakeNet(t, ring3(t), map[string]string{"edge_ports": "true"})
	n.runUntil(sec)
	if s, _ := n.bridge("s1").PortState(3); s != Forwarding {
		t.Fatalf("edge port s1:3 %v at 1s", s)
	}
	if s, _ := n.bridge("s1").PortState(1); s != Listening {
		t.Fatalf("fabric port s1:1 %v at 1s", s)
	}
	n.runUntil(31 * sec)
	if err := n.fab.CheckTree(); err != nil {
		t.Fatal(err)
	}
}

func TestParams(t *testing.T) {
	g := ring3(t)
	for _, c := range []struct {
		params map[string]string
		want   string
	}{
		{map[string]string{"hello": "1s", "max_age": "6", "forward_delay": "4s", "priority": "0", "aging": "10s", "max_entries": "10", "edge_ports": "false"}, ""},
		{map[string]string{"hello": "500ms", "max_age": "3s", "forward_delay": "2.5s"}, ""},
		{map[string]string{"bogus": "1"}, "unknown param"},
		{map[string]string{"hello": "fast"}, "want a duration"},
		{map[string]string{"hello": "-2s"}, "positive"},
		{map[string]string{"max_age": "40s"}, "forward_delay"},
		{map[string]string{"max_age": "4s"}, "max_age"},
		{map[string]string{"forward_delay": "300s", "max_age": "300s"}, "255.99s"},
		{map[string]string{"priority": "70000"}, "0..65535"},
		{map[string]string{"priority.s9": "1"}, "no node"},
		{map[string]string{"priority.h1": "1"}, "is a host"},
		{map[string]string{"max_entries": "0"}, "1..16777216"},
		{map[string]string{"max_entries": "3000000000"}, "1..16777216"},
		{map[string]string{"edge_ports": "maybe"}, "true or false"},
		{map[string]string{"stp": "maybe"}, "on or off"},
		{map[string]string{"path_cost.s1": "5"}, "path_cost.<node>:<port>"},
		{map[string]string{"path_cost.s9:1": "5"}, "no node"},
		{map[string]string{"path_cost.h1:1": "5"}, "is a host"},
		{map[string]string{"path_cost.s1:9": "5"}, "ports 1..3"},
		{map[string]string{"path_cost.s1:x": "5"}, "ports 1..3"},
		{map[string]string{"path_cost.s1:1": "0"}, "1..200000000"},
		{map[string]string{"path_cost.s1:1": "300000000"}, "1..200000000"},
	} {
		_, err := NewFabric(g, c.params)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.params, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrParam)):
			t.Errorf("%v: error %v, want one containing %q wrapping ErrParam", c.params, err, c.want)
		}
	}
	f, err := NewFabric(g, map[string]string{"priority": "0", "priority.s2": "0x1000", "priority.s3": "010"})
	if err != nil {
		t.Fatal(err)
	}
	if p := f.Bridge(0).ID().Priority(); p != 0 {
		t.Errorf("priority 0 became %d", p)
	}
	if p := f.Bridge(1).ID().Priority(); p != 0x1000 {
		t.Errorf("priority.s2 = %d", p)
	}
	if p := f.Bridge(2).ID().Priority(); p != 10 {
		t.Errorf("priority.s3=010 gave %d, want 10", p)
	}
}

func TestFabricElements(t *testing.T) {
	g := ring3(t)
	f, err := NewFabric(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	for id := topo.NodeID(0); int(id) < g.NumNodes(); id++ {
		el := f.Element(id)
		if g.Node(id).Forwards() != (el != nil) {
			t.Errorf("%s: element %v", g.Node(id).Name, el)
		}
	}
	if f.Element(-1) != nil || f.Element(99) != nil || f.Bridge(99) != nil {
		t.Error("out of range node got an element")
	}
	// A relaying host runs a bridge too.
	b := topo.NewBuilder("relay")
	s := b.AddNode("s1", topo.Switch)
	h := b.AddNode("h1", topo.Host)
	b.Node(h).Relay = true
	b.Connect(s, h)
	g2, _ := b.Graph()
	f2, err := NewFabric(g2, nil)
	if err != nil || f2.Element(h) == nil {
		t.Fatalf("relay host: %v %v", f2, err)
	}
	// Port numbers beyond 12 bits cannot be identified.
	b = topo.NewBuilder("wide")
	s = b.AddNode("s1", topo.Switch)
	b.Node(s).Ports = 5000
	g3, _ := b.Graph()
	if _, err := NewFabric(g3, nil); !errors.Is(err, ErrConfig) {
		t.Fatalf("5000-port switch: %v", err)
	}
}

func TestPathCostForRate(t *testing.T) {
	for _, c := range []struct {
		rate int64
		want uint32
	}{{0, 4}, {4_000_000, 250}, {10_000_000, 100}, {16_000_000, 62}, {100_000_000, 19},
		{1_000_000_000, 4}, {2_500_000_000, 4}, {10_000_000_000, 2}, {40_000_000_000, 2}, {100_000_000_000, 1}} {
		if got := PathCostForRate(c.rate); got != c.want {
			t.Errorf("PathCostForRate(%d) = %d, want %d", c.rate, got, c.want)
		}
	}
}

func TestStatusesJSON(t *testing.T) {
	n := newFakeNet(t, ring3(t), nil)
	n.runUntil(31 * sec)
	st := n.fab.Statuses()
	if len(st) != 3 || st[2].Node != "s3" {
		t.Fatalf("statuses %+v", st)
	}
	b, err := json.Marshal(st[2])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"node":"s3"`, `"root":"8000.060000000000"`, `"root_port":1`, `"role":"blocked","state":"blocking"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
}

// The default timers (max age 20 s, 1 s message age increment) are made
// for a bridge diameter of 7. Deeper lines still settle up to 12 bridges
// (at 12 some information ages out once during the topology change after
// power-on, when acknowledgments and hold timers inflate message ages); at
// 16 the ages never settle and the far end keeps claiming root. A larger
// max age (with forward delay raised to keep 2 × (fd − 1 s) ≥ max age)
// restores convergence.
func TestDiameter(t *testing.T) {
	for _, c := range []struct {
		k       int
		params  map[string]string
		ok      bool
		expired int
	}{
		{7, nil, true, 0},
		{10, nil, true, 0},
		{12, nil, true, 16},
		{16, nil, false, -1},
		{16, map[string]string{"max_age": "40s", "forward_delay": "21s"}, true, 0},
		{24, map[string]string{"max_age": "60s", "forward_delay": "31s"}, true, 0},
	} {
		n := newFakeNet(t, lineGraph(t, c.k), c.params)
		n.runUntil(600 * sec)
		exp := 0
		for i := 1; i <= c.k; i++ {
			exp += int(n.bridge(fmt.Sprintf("s%d", i)).Counters()["message_age_expired"])
		}
		err := n.fab.CheckTree()
		if (err == nil) != c.ok || (c.expired >= 0 && exp != c.expired) {
			t.Errorf("line:%d %v: tree %v, %d message age expiries; want whole=%v, %d", c.k, c.params, err, exp, c.ok, c.expired)
		}
	}
}

func TestPath(t *testing.T) {
	n := newFakeNet(t, ring3(t), nil)
	h1, _ := n.g.Lookup("h1")
	h3, _ := n.g.Lookup("h3")
	if _, err := n.fab.Path(h1, h3); !errors.Is(err, ErrNotTree) {
		t.Fatalf("path before convergence: %v", err)
	}
	n.runUntil(31 * sec)
	// h3 -> h1 goes s3 -> s1 directly, not through s2 (s3:2 is blocked).
	p, err := n.fab.Path(h3, h1)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range p {
		names = append(names, n.fab.linkName(l))
	}
	if got := strings.Join(names, " "); got != "s3:3-h3:1 s3:1-s1:2 s1:3-h1:1" {
		t.Fatalf("path %s", got)
	}
	if _, err := n.fab.Path(h1, 99); err == nil {
		t.Fatal("path to a missing node")
	}
	if p, err := n.fab.Path(h1, h1); err != nil || len(p) != 0 {
		t.Fatalf("path to itself: %v %v", p, err)
	}
}

// Without the spanning tree a tree topology works at once, and a loop
// makes a broadcast storm: ring:3 has two copies of one broadcast
// circling forever, one each way, and every host sees them again and
// again.
func TestNoSTP(t *testing.T) {
	n := newFakeNet(t, lineGraph(t, 3), map[string]string{"stp": "off"})
	n.run(us)
	n.sendFrom("h1", n.hostMAC("h3"), "line")
	n.run(10 * us)
	if n.received("h3", "line") != 1 || n.received("h2", "line") != 1 {
		t.Fatal("line without STP: not flooded once")
	}
	if st, r := n.bridge("s2").PortState(1); st != Forwarding || r != RoleDesignated {
		t.Fatalf("s2:1 %v/%v", st, r)
	}
	n.run(10 * sec)
	if c := n.bridge("s1").Counters(); c["bpdu_tx_config"] != 0 {
		t.Fatalf("BPDUs sent with stp=off: %v", c)
	}

	r := newFakeNet(t, ring3(t), map[string]string{"stp": "off"})
	r.run(us)
	r.sendFrom("h1", [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "storm")
	// Each link takes 1 µs. The frame leaves h1 at 1 µs and s1 floods
	// it both ways at 2 µs; one copy passes s2 at 3, 6, 9 ... µs, the
	// other at 4, 7, 10 ... µs, and h2 gets each 1 µs later: by 1001 µs,
	// 333 + 333 copies.
	r.run(element.Millisecond)
	if got := r.received("h2", "storm"); got != 666 {
		t.Fatalf("h2 got %d copies of one broadcast, want 666", got)
	}
	if c := r.bridge("s1").Counters(); c["moved"] == 0 {
		t.Fatalf("h1's address did not flap: %v", c)
	}
	// A BPDU from elsewhere is counted and dropped.
	r.inject("h1", AppendFrame(nil, [6]byte{2}, &BPDU{Type: TypeTCN}))
	r.run(us)
	if r.bridge("s1").Counters()["drop_bpdu_stp_off"] != 1 {
		t.Fatal("BPDU not counted with stp=off")
	}
}
