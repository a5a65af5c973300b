package stp_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme/stp"
	"github.com/edgefabric/edgefabric/topo"
)

var rstpParams = map[string]string{"protocol": "rstp"}

// ready reports whether every bridge says its tree has settled.
func (l *lab) ready() bool {
	for n := topo.NodeID(0); int(n) < l.g.NumNodes(); n++ {
		if b := l.fab.Bridge(n); b != nil && !b.Ready() {
			return false
		}
	}
	return true
}

// checkDrops fails on any drop but the expected ones of a tree: blocked
// (discarding) ports, learning ports and floods with nowhere to go.
func (l *lab) checkDrops() {
	l.t.Helper()
	for n := topo.NodeID(0); int(n) < l.g.NumNodes(); n++ {
		if b := l.fab.Bridge(n); b != nil {
			for k, v := range b.Counters() {
				if (strings.HasPrefix(k, "drop_") && k != "drop_port_blocked" && k != "drop_port_learning" && k != "drop_no_egress" || k == "rstp_rounds_exceeded") && v > 0 {
					l.t.Errorf("%s: %s = %d", l.g.Node(n).Name, k, v)
				}
			}
		}
	}
}

// RSTP builds the same tree as 802.1D-1998 (the same priority vectors
// decide), with alternate ports where 802.1D blocks, in seconds instead
// of 30 s: bridge ports agree at once, host ports turn edge after the
// migrate time (3 s) or after a re-proposal (4 s).
func TestRSTPConvergence(t *testing.T) {
	for _, c := range []struct {
		spec    string
		readyAt element.Time // every bridge Ready, polled each 10 ms
	}{
		{"ring:3", 3 * sec},
		{"spain-testbed", 3 * sec},
		{"bcube:4,2", 1010 * element.Millisecond}, // relaying servers: no edge ports
		{"leafspine:2,5,5", 3 * sec},
		{"hyperx:3,2", 3 * sec},
		{"jellyfish:16,6,4", 4 * sec},
		{"torus:3,3,2,2", 3 * sec},
		{"fattree:4", 3 * sec},
	} {
		t.Run(c.spec, func(t *testing.T) {
			l := newLab(t, c.spec, rstpParams)
			at := element.Time(-1)
			for now := element.Time(0); now <= 10*sec; now += 10 * element.Millisecond {
				l.s.Run(now)
				if l.ready() {
					at = now
					break
				}
			}
			if at != c.readyAt {
				t.Errorf("ready at %v, want %v", at, c.readyAt)
			}
			l.s.Run(10 * sec)
			blocked := l.checkConverged()
			// Stable: the same tree minutes later.
			l.s.Run(200 * sec)
			if b2 := l.checkConverged(); strings.Join(b2, " ") != strings.Join(blocked, " ") {
				t.Errorf("tree changed: %v then %v", blocked, b2)
			}
			apps := l.pingAll(201 * sec)
			l.s.Run(210 * sec)
			for _, a := range *apps {
				if r := a.Result(); r.Received != 1 || r.Error != "" {
					t.Errorf("ping %s -> %s: %+v", r.Src, r.Dst, r)
				}
			}
			l.checkDrops()
			for n := topo.NodeID(0); int(n) < l.g.NumNodes(); n++ {
				if b := l.fab.Bridge(n); b != nil {
					st := b.Status()
					if st.Protocol != "rstp" {
						t.Fatalf("%s runs %q", l.g.Node(n).Name, st.Protocol)
					}
					if c := b.Counters(); c["bpdu_tx_config"] != 0 || c["bpdu_tx_tcn"] != 0 || c["bpdu_rx_config"] != 0 {
						t.Errorf("%s: 802.1D-1998 BPDUs in an RSTP fabric: %v", l.g.Node(n).Name, c)
					}
				}
			}
		})
	}
}

// The same tree with the classic protocol, for contrast: 802.1D-1998
// needs 30 s (listening and learning) where RSTP needs 3.
func TestRSTPSameTreeAsSTP(t *testing.T) {
	for _, spec := range []string{"fattree:4", "jellyfish:16,6,4"} {
		a, b := newLab(t, spec, nil), newLab(t, spec, rstpParams)
		a.s.Run(40 * sec)
		b.s.Run(40 * sec)
		if x, y := strings.Join(a.checkConverged(), " "), strings.Join(b.checkConverged(), " "); x != y {
			t.Errorf("%s: 802.1D blocks %s, RSTP %s", spec, x, y)
		}
	}
}

// Failing s3's root port on ring:3: its alternate port toward s2 becomes
// the root port and forwards in the same instant (802.1D-1998: 30 s, see
// TestSimFailRootPort). A ping a second from h1 to h5 loses nothing.
func TestRSTPFailRootPort(t *testing.T) {
	l := newLab(t, "ring:3", rstpParams)
	l.s.Run(10 * sec)
	s3 := l.bridge("s3")
	if s, r := s3.PortState(3); s != stp.Discarding || r != stp.RoleAlternate {
		t.Fatalf("s3:3 %v/%v before the failure, want discarding/alternate", s, r)
	}
	app := l.ping("h1", "h5", 10*sec+sec/4, 30) // 10.25 .. 39.25 s
	fail := 20*sec + sec/2
	l.failAt(fail, "s1", "s3")
	l.s.Run(fail)
	if s, r := s3.PortState(3); s != stp.Forwarding || r != stp.RoleRoot {
		t.Fatalf("s3:3 %v/%v at the failure, want forwarding/root", s, r)
	}
	if err := l.fab.CheckTree(); err != nil {
		t.Fatal(err)
	}
	if st := s3.Status(); st.RootPort != 3 || st.RootPathCost != 8 || !st.TopologyChange {
		t.Fatalf("s3: root port %d cost %d topology change %v", st.RootPort, st.RootPathCost, st.TopologyChange)
	}
	l.s.Run(45 * sec)
	if r := (*app).Result(); r.Sent != 30 || r.Received != 30 {
		t.Fatalf("ping h1 -> h5: sent %d received %d, want 30 and 30", r.Sent, r.Received)
	}
	if c := s3.Counters(); c["topology_changes"] == 0 {
		t.Errorf("s3 raised no topology change: %v", c)
	}
	l.checkDrops()
}

// Failing s2's root port on ring:3, where s2 has no alternate: s2 claims
// to be root, s3 takes that as news from the port that was designated
// for their link (§17.6: superior, as it comes from the same port),
// becomes designated for it and proposes; s2 agrees, and the tree is
// whole within a millisecond instead of 802.1D's max age + 30 s
// (TestSimFailMaxAge).
func TestRSTPFailNoAlternate(t *testing.T) {
	l := newLab(t, "ring:3", rstpParams)
	app := l.ping("h3", "h1", 10*sec+sec/4, 30)
	fail := 20*sec + sec/2
	l.failAt(fail, "s1", "s2")
	l.s.Run(fail)
	if err := l.fab.CheckTree(); err == nil {
		t.Fatal("tree whole right at the failure")
	}
	at := l.treeAt(fail+sec, 100*element.Microsecond)
	if at < 0 || at > fail+element.Millisecond {
		t.Fatalf("tree whole at %v, want within 1 ms of %v", at, fail)
	}
	if st := l.bridge("s2").Status(); st.RootPort != 4 || st.RootPathCost != 8 || st.IsRoot() {
		t.Fatalf("s2: root port %d cost %d", st.RootPort, st.RootPathCost)
	}
	l.s.Run(45 * sec)
	if r := (*app).Result(); r.Received != 30 {
		t.Fatalf("ping h3 -> h1: sent %d received %d, want 30", r.Sent, r.Received)
	}
	l.checkDrops()
}

// On fattree:4, failing edge switch s13's root port and then a core
// link: the tree is whole within a millisecond each time and h1 (on s13)
// keeps reaching h16 without loss.
func TestRSTPFailFatTree(t *testing.T) {
	l := newLab(t, "fattree:4", rstpParams)
	app := l.ping("h1", "h16", 10*sec+sec/4, 40)
	for _, f := range []struct {
		at   element.Time
		a, b string
	}{{20*sec + sec/2, "s13", "s5"}, {30*sec + sec/2, "s1", "s5"}} {
		l.failAt(f.at, f.a, f.b)
		l.s.Run(f.at)
		at := l.treeAt(f.at+sec, 100*element.Microsecond)
		if at < 0 || at > f.at+element.Millisecond {
			t.Fatalf("%s-%s: tree whole at %v, want within 1 ms of %v", f.a, f.b, at, f.at)
		}
		l.checkConverged()
	}
	l.s.Run(55 * sec)
	if r := (*app).Result(); r.Received != 40 {
		t.Fatalf("ping h1 -> h16: sent %d received %d, want 40", r.Sent, r.Received)
	}
	l.checkDrops()
}

// A link that comes back: the tree returns to its first shape, again
// without the 30 s of 802.1D.
func TestRSTPLinkComesBack(t *testing.T) {
	l := newLab(t, "ring:3", rstpParams)
	l.s.Run(10 * sec)
	before := l.checkConverged()
	lk := l.link("s1", "s3")
	l.s.At(20*sec, func() { _ = l.s.SetLink(lk, false) })
	l.s.At(30*sec, func() { _ = l.s.SetLink(lk, true) })
	l.s.Run(30*sec + 10*element.Millisecond)
	if after := l.checkConverged(); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Fatalf("blocked %v after the link came back, %v before", after, before)
	}
}

// One bridge speaks 802.1D-1998 (protocol.s2=stp): its RSTP neighbours
// hear its configuration BPDUs and fall back to them on those ports
// (Port Protocol Migration), so the tree is the same and whole, at
// 802.1D's pace on s2's ports.
func TestRSTPWithSTPNeighbour(t *testing.T) {
	l := newLab(t, "ring:3", map[string]string{"protocol": "rstp", "protocol.s2": "stp"})
	l.s.Run(40 * sec)
	if got := strings.Join(l.checkConverged(), " "); got != "s3:3" {
		t.Fatalf("blocked %q, want s3:3", got)
	}
	if p := l.bridge("s2").Status().Protocol; p != "stp" {
		t.Fatalf("s2 runs %q", p)
	}
	for _, name := range []string{"s1", "s3"} {
		c := l.bridge(name).Counters()
		if c["rstp_port_to_stp"] != 1 || c["bpdu_tx_config"] == 0 {
			t.Errorf("%s: %v, want one port speaking 802.1D-1998", name, c)
		}
	}
	if c := l.bridge("s2").Counters(); c["drop_bpdu_unknown_type"] == 0 {
		t.Errorf("s2 heard no RST BPDU: %v", c)
	}
	apps := l.pingAll(41 * sec)
	l.s.Run(45 * sec)
	for _, a := range *apps {
		if r := a.Result(); r.Received != 1 {
			t.Errorf("ping %s -> %s: %+v", r.Src, r.Dst, r)
		}
	}
}

func TestRSTPParams(t *testing.T) {
	g, err := topo.Parse("ring:3", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		params map[string]string
		want   string
	}{
		{map[string]string{"protocol": "mstp"}, `param protocol="mstp"`},
		{map[string]string{"protocol.s9": "rstp"}, `no node "s9"`},
		{map[string]string{"protocol.h1": "rstp"}, `is a host`},
		{map[string]string{"protocol": "rstp", "hello": "1.5s"}, "rstp counts whole seconds"},
		{map[string]string{"protocol.s1": "rstp", "forward_delay": "15500ms"}, "(protocol.s1)"},
		{map[string]string{"protocol": "rstp", "stp": "off"}, "spanning tree off"},
	} {
		_, err := stp.NewFabric(g, c.params)
		if err == nil || !errors.Is(err, stp.ErrParam) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an ErrParam saying %q", c.params, err, c.want)
		}
	}
	f, err := stp.NewFabric(g, rstpParams)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.SettleTime(), 3*stp.DefaultHelloTime+2*stp.DefaultForwardDelay; got != want {
		t.Errorf("settle %v, want %v", got, want)
	}
}

// survivors checks the fabric without node dead: loop reports whether the
// links forwarding at both ends between live bridges close a cycle; whole
// whether, besides, the live bridges all name the best live bridge as
// root, are Ready, and are joined by those links.
func (l *lab) survivors(dead topo.NodeID) (loop, whole bool) {
	g := l.g
	parent := make([]topo.NodeID, g.NumNodes())
	for i := range parent {
		parent[i] = topo.NodeID(i)
	}
	find := func(x topo.NodeID) topo.NodeID {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	fwd := func(e topo.End) bool {
		s, _ := l.fab.Bridge(e.Node).PortState(e.Port)
		return s == stp.Forwarding
	}
	live := func(n topo.NodeID) bool { return n != dead && l.fab.Bridge(n) != nil }
	for lk := topo.LinkID(0); int(lk) < g.NumLinks(); lk++ {
		k := g.Link(lk)
		if !live(k.A.Node) || !live(k.B.Node) || !fwd(k.A) || !fwd(k.B) {
			continue
		}
		if ra, rb := find(k.A.Node), find(k.B.Node); ra != rb {
			parent[ra] = rb
		} else {
			loop = true
		}
	}
	var best stp.BridgeID = ^stp.BridgeID(0)
	for n := topo.NodeID(0); int(n) < g.NumNodes(); n++ {
		if live(n) {
			best = min(best, l.fab.Bridge(n).ID())
		}
	}
	whole = !loop
	comp := topo.NodeID(-1)
	for n := topo.NodeID(0); int(n) < g.NumNodes(); n++ {
		if !live(n) {
			continue
		}
		if b := l.fab.Bridge(n); b.Status().Root != best || !b.Ready() {
			whole = false
		}
		if comp < 0 {
			comp = find(n)
		} else if find(n) != comp {
			whole = false
		}
	}
	return loop, whole
}

// rootFailure fails bridge root at time fail and samples the survivors
// every step until end: when they became whole for good (-1 if they are
// not at end), how many samples had a forwarding loop, and the last
// sample at which a live bridge still named the dead one as root.
func (l *lab) rootFailure(root string, fail, end, step element.Time) (settled element.Time, loops int, stale element.Time) {
	dead := l.id(root)
	deadID := l.bridge(root).ID()
	l.s.At(fail, func() {
		if err := l.s.SetNode(dead, false); err != nil {
			l.t.Error(err)
		}
	})
	settled, stale = -1, -1
	for at := fail; at <= end; at += step {
		l.s.Run(at)
		loop, whole := l.survivors(dead)
		if loop {
			loops++
		}
		switch {
		case !whole:
			settled = -1
		case settled < 0:
			settled = at
		}
		for n := topo.NodeID(0); int(n) < l.g.NumNodes(); n++ {
			if b := l.fab.Bridge(n); b != nil && n != dead && b.Status().Root == deadID {
				stale = at
			}
		}
	}
	return settled, loops, stale
}

// The root bridge of a meshed fabric (cube:3,3,3) fails. RSTP's alternate
// ports do not help: the dead root's information keeps circulating
// through the mesh's cycles (RSTP's count to infinity; mstpd runs the same
// machines). Each relay adds one second of message age but restarts the
// receiver's three-hello timer, so the information lives until some
// twenty relays have aged it to max age, 33.5 s here, and the tree settles after
// 36.5 s: sooner than 802.1D-1998 (48.5 s, max age then listening and
// learning), far later than RSTP's link failures. No sample shows a
// forwarding loop: an RST BPDU whose message age reached max age is taken
// in and aged at once (§17.21.23). When such BPDUs were dropped, as aged
// configuration BPDUs are, ports held the stale information up to three
// hellos longer, and this run had loops for 5 s (500 samples of 10 ms)
// and settled 1 s later.
func TestRSTPRootFailureMesh(t *testing.T) {
	const ms = element.Millisecond
	fail := 70*sec + sec/2
	for _, c := range []struct {
		params         map[string]string
		settled, stale element.Time // after the failure, sampled every 10 ms
	}{
		{rstpParams, 36*sec + 510*ms, 33*sec + 500*ms},
		{nil, 48*sec + 510*ms, 18*sec + 500*ms},
	} {
		l := newLab(t, "cube:3,3,3", c.params)
		settled, loops, stale := l.rootFailure("s1", fail, fail+60*sec, 10*ms)
		if settled-fail != c.settled || loops != 0 || stale-fail != c.stale {
			t.Errorf("%v: settled at failure + %v, %d loop samples, s1 named root until failure + %v; want + %v, 0, + %v",
				c.params, settled-fail, loops, stale-fail, c.settled, c.stale)
		}
	}
}
