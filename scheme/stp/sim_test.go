package stp_test

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/host"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/scheme/all"
	"github.com/edgefabric/edgefabric/scheme/stp"
	"github.com/edgefabric/edgefabric/sim"
	"github.com/edgefabric/edgefabric/topo"
)

// Integration tests: the stp scheme, taken from the registry like the CLI
// takes it, on topologies from the topo generators, in the simulator, with
// the real host stack on every host.

const sec = element.Second

type lab struct {
	t     testing.TB
	g     *topo.Graph
	s     *sim.Sim
	fab   *stp.Fabric
	hosts map[topo.NodeID]*host.Host
	down  map[topo.LinkID]bool // failed links, which the oracle leaves out
}

func newLab(t testing.TB, spec string, params map[string]string) *lab {
	t.Helper()
	g, err := topo.Parse(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	sch, err := all.Registry().Get("stp")
	if err != nil {
		t.Fatal(err)
	}
	f, err := sch.New(g, scheme.Options{Seed: 1, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(g, sim.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	l := &lab{t: t, g: g, s: s, fab: f.(*stp.Fabric), hosts: map[topo.NodeID]*host.Host{}, down: map[topo.LinkID]bool{}}
	for n := topo.NodeID(0); int(n) < g.NumNodes(); n++ {
		e := f.Element(n)
		if g.Node(n).Kind != topo.Host {
			if e == nil {
				t.Fatalf("no bridge on %s", g.Node(n).Name)
			}
			if err := s.Place(n, e); err != nil {
				t.Fatal(err)
			}
			continue
		}
		mac, ip, err := g.HostAddr(n)
		if err != nil {
			t.Fatal(err)
		}
		h := host.New(host.Config{Name: g.Node(n).Name, MAC: mac, IP: ip})
		l.hosts[n] = h
		if err := s.PlaceHost(n, e, h); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

func (l *lab) id(name string) topo.NodeID {
	n, ok := l.g.Lookup(name)
	if !ok {
		l.t.Fatalf("no node %q", name)
	}
	return n
}

func (l *lab) bridge(name string) *stp.Bridge { return l.fab.Bridge(l.id(name)) }

func (l *lab) ip(n topo.NodeID) netip.Addr {
	_, p, _ := l.g.HostAddr(n)
	return p.Addr()
}

func (l *lab) link(a, b string) topo.LinkID {
	ia, ib := l.id(a), l.id(b)
	for _, lk := range l.g.Ports(ia) {
		if lk != topo.NoLink && l.g.Link(lk).Other(ia).Node == ib {
			return lk
		}
	}
	l.t.Fatalf("no link %s-%s", a, b)
	return topo.NoLink
}

// expectedRoles computes the converged tree from global knowledge, as an
// oracle independent of the distributed protocol: root path costs by
// shortest paths from the lowest bridge ID, each bridge's root port as the
// lowest (cost through it, neighbour ID, neighbour port ID, own port ID),
// and on every bridge-to-bridge link the designated end as the lower
// (root path cost, bridge ID, port ID). Host-facing ports are designated.
func expectedRoles(g *topo.Graph, fab *stp.Fabric, down map[topo.LinkID]bool) map[topo.End]stp.Role {
	var root topo.NodeID = -1
	var bridges []topo.NodeID
	for n := topo.NodeID(0); int(n) < g.NumNodes(); n++ {
		if b := fab.Bridge(n); b != nil {
			bridges = append(bridges, n)
			if root < 0 || b.ID() < fab.Bridge(root).ID() {
				root = n
			}
		}
	}
	const inf = ^uint64(0)
	cost := make([]uint64, g.NumNodes())
	for i := range cost {
		cost[i] = inf
	}
	cost[root] = 0
	// Bellman-Ford is plenty for test-sized graphs.
	for changed := true; changed; {
		changed = false
		for _, n := range bridges {
			for _, lk := range g.Ports(n) {
				if lk == topo.NoLink || down[lk] {
					continue
				}
				peer := g.Link(lk).Other(n)
				if fab.Bridge(peer.Node) == nil || cost[peer.Node] == inf {
					continue
				}
				c := cost[peer.Node] + uint64(stp.PathCostForRate(g.Link(lk).Rate))
				if c < cost[n] {
					cost[n], changed = c, true
				}
			}
		}
	}
	pid := func(e topo.End) stp.PortID { return stp.MakePortID(stp.DefaultPortPriority, e.Port) }
	roles := map[topo.End]stp.Role{}
	for _, n := range bridges {
		var best topo.End
		var bestKey [4]uint64
		for i, lk := range g.Ports(n) {
			if lk == topo.NoLink {
				continue
			}
			me := topo.End{Node: n, Port: element.Port(i + 1)}
			if down[lk] {
				roles[me] = stp.RoleDisabled
				continue
			}
			peer := g.Link(lk).Other(n)
			if fab.Bridge(peer.Node) == nil {
				roles[me] = stp.RoleDesignated
				continue
			}
			// Designated end of this link.
			mine := [3]uint64{cost[n], uint64(fab.Bridge(n).ID()), uint64(pid(me))}
			theirs := [3]uint64{cost[peer.Node], uint64(fab.Bridge(peer.Node).ID()), uint64(pid(peer))}
			if less3(mine, theirs) {
				roles[me] = stp.RoleDesignated
				continue
			}
			roles[me] = stp.RoleBlocked
			if n == root {
				continue
			}
			key := [4]uint64{cost[peer.Node] + uint64(stp.PathCostForRate(g.Link(lk).Rate)), uint64(fab.Bridge(peer.Node).ID()), uint64(pid(peer)), uint64(pid(me))}
			if best.Port == 0 || less4(key, bestKey) {
				best, bestKey = me, key
			}
		}
		if n != root {
			roles[best] = stp.RoleRoot
		}
	}
	return roles
}

func less3(a, b [3]uint64) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func less4(a, b [4]uint64) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// checkConverged asserts the exact converged state: every port's role as
// the oracle says, root and designated ports forwarding, the rest
// blocking, and the forwarding links one spanning tree over all nodes.
func (l *lab) checkConverged() (blocked []string) {
	l.t.Helper()
	want := expectedRoles(l.g, l.fab, l.down)
	for n := topo.NodeID(0); int(n) < l.g.NumNodes(); n++ {
		b := l.fab.Bridge(n)
		if b == nil {
			continue
		}
		for _, ps := range b.Status().Ports {
			e := topo.End{Node: n, Port: ps.Port}
			if _, ok := l.g.PortLink(n, ps.Port); !ok {
				continue
			}
			// RSTP names the blocked roles apart and has one
			// state for what 802.1D-1998 calls blocking.
			if ps.Role == stp.RoleAlternate || ps.Role == stp.RoleBackup {
				ps.Role = stp.RoleBlocked
			}
			if ps.State == stp.Discarding {
				ps.State = stp.Blocking
			}
			wantState := stp.Forwarding
			if want[e] == stp.RoleDisabled {
				wantState = stp.Disabled
			}
			if want[e] == stp.RoleBlocked {
				wantState = stp.Blocking
				blocked = append(blocked, fmt.Sprintf("%s:%d", l.g.Node(n).Name, ps.Port))
			}
			if ps.Role != want[e] || ps.State != wantState {
				l.t.Errorf("%s:%d is %v/%v, want %v/%v", l.g.Node(n).Name, ps.Port, ps.Role, ps.State, want[e], wantState)
			}
		}
	}
	if err := l.fab.CheckTree(); err != nil {
		l.t.Error(err)
	}
	return blocked
}

// pingAll starts, at time at, one ping from every host to every other,
// each source 20 ms after the previous so that ARP broadcasts do not all
// meet in one queue.
func (l *lab) pingAll(at element.Time) *[]*host.PingApp {
	apps := &[]*host.PingApp{}
	var hs []topo.NodeID
	for n := topo.NodeID(0); int(n) < l.g.NumNodes(); n++ {
		if l.hosts[n] != nil {
			hs = append(hs, n)
		}
	}
	for i, src := range hs {
		l.s.At(at+element.Time(i)*20*element.Millisecond, func() {
			for _, dst := range hs {
				if dst != src {
					*apps = append(*apps, l.hosts[src].Ping(l.ip(dst), 1, sec))
				}
			}
		})
	}
	return apps
}

func TestSimConvergence(t *testing.T) {
	for _, c := range []struct {
		spec    string
		blocked []string // exact, in node order
	}{
		// s1 is root; s3's port toward s2 blocks (s2's ID is lower).
		{"ring:3", []string{"s3:3"}},
		// TS is root; the cross-connects block at the higher-ID end.
		{"spain-testbed", []string{"S2:30", "S3:31", "S3:32"}},
		// Cores s1..s4, aggregation s5..s12, edges s13..s20; root s1.
		// 32 switch links, 20 switches: 13 links blocked. Core s2
		// hangs off s5, s3 and s4 off s6; s6, s8, s10, s12 reach the
		// root through their pod's first edge switch.
		// Relaying servers run bridges with a local port for their own
		// stack. Level-0 switch s1 (h1..h4) is root; s5..s8 hang off
		// h1..h4; s2, s3, s4 keep only their first server's link.
		{"bcube:4,2", []string{"s2:2", "s2:3", "s2:4", "s3:2", "s3:3", "s3:4", "s4:2", "s4:3", "s4:4"}},
		// More shapes, checked against the oracle only.
		{"leafspine:2,5,5", nil},
		{"hyperx:3,2", nil},
		{"jellyfish:16,6,4", nil},
		{"torus:3,3,2,2", nil},
		{"fattree:4", []string{"s2:2", "s2:3", "s2:4", "s3:2", "s3:3", "s3:4", "s4:2", "s4:3", "s4:4", "s6:2", "s8:2", "s10:2", "s12:2"}},
	} {
		t.Run(c.spec, func(t *testing.T) {
			l := newLab(t, c.spec, nil)
			// Nothing forwards before 2 × forward delay.
			l.s.Run(30*sec - 1)
			for n := topo.NodeID(0); int(n) < l.g.NumNodes(); n++ {
				if b := l.fab.Bridge(n); b != nil {
					for _, ps := range b.Status().Ports {
						if ps.State == stp.Forwarding && ps.Role != stp.RoleLocal {
							t.Fatalf("%s:%d forwarding before 30 s", l.g.Node(n).Name, ps.Port)
						}
					}
				}
			}
			l.s.Run(30 * sec)
			blocked := l.checkConverged()
			if c.blocked != nil && strings.Join(blocked, " ") != strings.Join(c.blocked, " ") {
				t.Errorf("blocked ports %v, want %v", blocked, c.blocked)
			}
			switchLinks := 0
			for lk := topo.LinkID(0); int(lk) < l.g.NumLinks(); lk++ {
				if l.g.IsFabricLink(lk) {
					switchLinks++
				}
			}
			bridges := 0
			for n := topo.NodeID(0); int(n) < l.g.NumNodes(); n++ {
				if l.fab.Bridge(n) != nil {
					bridges++
				}
			}
			if want := switchLinks - (bridges - 1); len(blocked) != want {
				t.Errorf("%d blocked ports, want %d (fabric links - bridges + 1)", len(blocked), want)
			}
			// Stable: the same tree minutes later.
			l.s.Run(200 * sec)
			if b2 := l.checkConverged(); strings.Join(b2, " ") != strings.Join(blocked, " ") {
				t.Errorf("tree changed: %v then %v", blocked, b2)
			}

			// All-pairs ping over the tree.
			apps := l.pingAll(201 * sec)
			l.s.Run(210 * sec)
			nh := len(l.hosts)
			if len(*apps) != nh*(nh-1) {
				t.Fatalf("%d pings started, want %d", len(*apps), nh*(nh-1))
			}
			for _, a := range *apps {
				if r := a.Result(); r.Received != 1 || r.Error != "" {
					t.Errorf("ping %s -> %s: %+v", r.Src, r.Dst, r)
				}
			}
			// Every frame a bridge dropped is counted, and none was
			// dropped for a reason other than a blocked port or
			// the lack of another port (a flood arriving at a leaf).
			for n := topo.NodeID(0); int(n) < l.g.NumNodes(); n++ {
				if b := l.fab.Bridge(n); b != nil {
					for k, v := range b.Counters() {
						if strings.HasPrefix(k, "drop_") && k != "drop_port_blocked" && k != "drop_port_learning" && k != "drop_no_egress" && v > 0 {
							t.Errorf("%s: %s = %d", l.g.Node(n).Name, k, v)
						}
					}
				}
			}
		})
	}
}

// treeAt polls CheckTree every step from the current time and returns the
// first time the tree is whole again, or -1 past limit.
func (l *lab) treeAt(limit, step element.Time) element.Time {
	for l.s.Now() <= limit {
		if l.fab.CheckTree() == nil {
			return l.s.Now()
		}
		l.s.Run(l.s.Now() + step)
	}
	return -1
}

// failAt takes the link between a and b down at time at.
func (l *lab) failAt(at element.Time, a, b string) {
	lk := l.link(a, b)
	l.s.At(at, func() {
		l.down[lk] = true
		if err := l.s.SetLink(lk, false); err != nil {
			l.t.Error(err)
		}
	})
}

func (l *lab) ping(src, dst string, at element.Time, count int) **host.PingApp {
	var app *host.PingApp
	l.s.At(at, func() { app = l.hosts[l.id(src)].Ping(l.ip(l.id(dst)), count, sec) })
	return &app
}

// Failing s3's root port on ring:3 (link s1:4-s3:4): s3's port toward s2,
// blocked until then, is the way to the root. It listens and learns for
// 2 × forward delay and forwards at exactly failure + 30 s. Pings from h1
// (on s1) to h5 (on s3), one a second at x.25 s, are lost from the first
// one after the failure to the last one before the port forwards.
func TestSimFailRootPort(t *testing.T) {
	l := newLab(t, "ring:3", nil)
	app := l.ping("h1", "h5", 40*sec+sec/4, 80) // 40.25 .. 119.25 s
	fail := 70*sec + sec/2
	l.failAt(fail, "s1", "s3")
	l.s.Run(fail)
	if err := l.fab.CheckTree(); err == nil {
		t.Fatal("tree whole right after the failure")
	}
	s3 := l.bridge("s3")
	if st := s3.Status(); st.RootPort != 3 || st.RootPathCost != 8 {
		t.Fatalf("s3 after failure: root port %d cost %d", st.RootPort, st.RootPathCost)
	}
	l.s.Run(fail + 30*sec - 1)
	if s, _ := s3.PortState(3); s != stp.Learning {
		t.Fatalf("s3:3 %v before failure + 2 × forward delay", s)
	}
	l.s.Run(fail + 30*sec)
	if s, r := s3.PortState(3); s != stp.Forwarding || r != stp.RoleRoot {
		t.Fatalf("s3:3 %v/%v at failure + 2 × forward delay", s, r)
	}
	if err := l.fab.CheckTree(); err != nil {
		t.Fatal(err)
	}
	l.s.Run(125 * sec)
	// 31 replies before the failure (40.25 .. 70.25), none for the 30
	// pings of 71.25 .. 100.25, then 19 (101.25 .. 119.25).
	if r := (*app).Result(); r.Sent != 80 || r.Received != 31+19 {
		t.Fatalf("ping h1 -> h5: sent %d received %d, want 80 and 50", r.Sent, r.Received)
	}
}

// Failing s2's root port on ring:3 (link s1:3-s2:3): s2 believes itself
// root, and s3 ignores its inferior claims until the information s3:3 got
// from s2 ages out: max age less the message age it carried (1 s) after
// s1's last hello reached s3 (70 s plus two hops). Then s3:3 turns
// designated and forwards 2 × forward delay later, within max age +
// 2 × forward delay of the failure.
func TestSimFailMaxAge(t *testing.T) {
	l := newLab(t, "ring:3", nil)
	app := l.ping("h3", "h1", 40*sec+sec/4, 90) // 40.25 .. 129.25 s
	fail := 70*sec + sec/2
	l.failAt(fail, "s1", "s2")
	l.s.Run(fail)
	if !l.bridge("s2").Status().IsRoot() {
		t.Fatal("s2 did not claim root")
	}
	s3 := l.bridge("s3")
	// The hello left s1 at 70 s and crossed two 1 Gb/s hops of 1 µs:
	// a 60-byte BPDU's last bit is in after (60 + 4 FCS + 8 preamble)
	// × 8 ns on the wire plus the propagation delay.
	hop := 72*8*element.Nanosecond + element.Microsecond
	expire := 70*sec + 2*hop + 19*sec
	l.s.Run(expire - 1)
	if s, r := s3.PortState(3); s != stp.Blocking || r != stp.RoleBlocked {
		t.Fatalf("s3:3 %v/%v before its information aged", s, r)
	}
	l.s.Run(expire)
	if s, r := s3.PortState(3); s != stp.Listening || r != stp.RoleDesignated {
		t.Fatalf("s3:3 %v/%v when its information aged", s, r)
	}
	at := l.treeAt(fail+60*sec, 10*element.Millisecond)
	if want := expire + 30*sec; at < want || at > want+10*element.Millisecond {
		t.Fatalf("tree whole at %v, want at %v (polled every 10 ms)", at, want)
	}
	if bound := fail + stp.DefaultMaxAge + 2*stp.DefaultForwardDelay; at > bound {
		t.Fatalf("reconverged at %v, beyond max_age + 2 × forward_delay = %v", at, bound)
	}
	if st := l.bridge("s2").Status(); st.RootPort != 4 || st.RootPathCost != 8 {
		t.Fatalf("s2: root port %d cost %d", st.RootPort, st.RootPathCost)
	}
	l.s.Run(135 * sec)
	// 31 replies before the failure (40.25 .. 70.25); the pings of
	// 71.25 .. 118.25 are lost; 119.25 .. 129.25 get through.
	if r := (*app).Result(); r.Sent != 90 || r.Received != 31+11 {
		t.Fatalf("ping h3 -> h1: sent %d received %d, want 90 and 42", r.Sent, r.Received)
	}
}

// On fattree:4, failing edge switch s13's root port (to aggregation s5):
// s13's other uplink was designated, so s13 claims root until the
// information on s6's root port ages out; the tree is whole again within
// max age + 2 × forward delay, and h1 (on s13) reaches h16 again.
func TestSimFailFatTree(t *testing.T) {
	l := newLab(t, "fattree:4", nil)
	app := l.ping("h1", "h16", 40*sec+sec/4, 100) // 40.25 .. 139.25 s
	fail := 70*sec + sec/2
	l.failAt(fail, "s13", "s5")
	l.s.Run(fail)
	if !l.bridge("s13").Status().IsRoot() {
		t.Fatal("s13 did not claim root")
	}
	// s6's root port (to s13) holds s1's information relayed by s5 and
	// s13, message age 2 s, last received just after 70 s: it expires
	// at 88 s, s6's blocked port toward s14 becomes its root port and
	// forwards 30 s later.
	at := l.treeAt(fail+60*sec, 10*element.Millisecond)
	if at < 118*sec || at > 118*sec+10*element.Millisecond {
		t.Fatalf("tree whole at %v, want 118 s (polled every 10 ms)", at)
	}
	if at > fail+stp.DefaultMaxAge+2*stp.DefaultForwardDelay {
		t.Fatalf("tree whole at %v, beyond max_age + 2 × forward_delay of %v", at, fail)
	}
	if st := l.bridge("s6").Status(); st.RootPort != 2 {
		t.Fatalf("s6 root port %d, want 2", st.RootPort)
	}
	l.checkConverged()
	l.s.Run(145 * sec)
	// 31 replies before the failure (40.25 .. 70.25) and 22 after the
	// tree is whole (118.25 .. 139.25). In between h1's ARP entry for h16
	// expired (60 s); h1 retries ARP three times a second apart with
	// pings queued behind, then drops them: the round begun at 116.25 s
	// is answered at 118.25 s and releases the pings of 116.25 and
	// 117.25 s too.
	if r := (*app).Result(); r.Sent != 100 || r.Received != 31+2+22 {
		t.Fatalf("ping h1 -> h16: sent %d received %d, want 100 and 55", r.Sent, r.Received)
	}
	if c := l.hosts[l.id("h1")].Counters(); c["arp_failed"] == 0 {
		t.Fatalf("h1 counters %v: no failed ARP round during the outage", c)
	}
}

// BenchmarkSimConverge: STP on fattree:8 (80 bridges, 128 hosts) from
// power-on through convergence and the topology change that follows, 70 s
// of virtual time: the control plane's cost in the simulator.
func BenchmarkSimConverge(b *testing.B) {
	var events uint64
	for b.Loop() {
		l := newLab(b, "fattree:8", nil)
		l.s.Run(70 * sec)
		if err := l.fab.CheckTree(); err != nil {
			b.Fatal(err)
		}
		events = l.s.Events()
	}
	b.ReportMetric(float64(events), "events/op")
}

// BenchmarkSimPingAll: all-pairs ping (16,256 pings, with ARP) over the
// converged tree of fattree:8: the data plane's cost in the simulator.
func BenchmarkSimPingAll(b *testing.B) {
	var events uint64
	for b.Loop() {
		b.StopTimer()
		l := newLab(b, "fattree:8", nil)
		l.s.Run(70 * sec)
		e0 := l.s.Events()
		apps := l.pingAll(71 * sec)
		b.StartTimer()
		l.s.Run(76 * sec)
		events = l.s.Events() - e0
		for _, a := range *apps {
			if a.Result().Received != 1 {
				b.Fatalf("ping lost: %+v", a.Result())
			}
		}
	}
	b.ReportMetric(float64(events), "events/op")
}

// The root bridge s1 of ring:3 fails. s2 and s3 lose their root ports. s2,
// whose port to s3 is designated, claims root at once; s3 keeps s1's
// information on its blocked port toward s2 (root s1 through s2, message
// age 1 s from s1's hello of 70 s), makes that port its root port, which
// starts listening, and ignores s2's inferior claim until the information
// ages out at 89 s; then s3 claims root itself, hears s2's better claim in
// reply (held until 89.5 s by s2's hold timer), and s2 is the root. The port's listening and learning were not
// restarted by that: it forwards 30 s after the failure.
func TestSimRootFailure(t *testing.T) {
	l := newLab(t, "ring:3", nil)
	fail := 70*sec + sec/2
	l.s.At(fail, func() {
		if err := l.s.SetNode(l.id("s1"), false); err != nil {
			t.Error(err)
		}
	})
	app := l.ping("h3", "h5", 40*sec+sec/4, 90) // 40.25 .. 129.25 s
	l.s.Run(fail)
	s2, s3 := l.bridge("s2"), l.bridge("s3")
	if !s2.Status().IsRoot() {
		t.Fatal("s2 did not claim root")
	}
	if st := s3.Status(); st.Root != l.bridge("s1").ID() || st.RootPort != 3 {
		t.Fatalf("s3 right after the failure: %+v", st)
	}
	hop := 72*8*element.Nanosecond + element.Microsecond
	expire := 70*sec + 2*hop + 19*sec
	l.s.Run(expire - 1)
	if st := s3.Status(); st.Root != l.bridge("s1").ID() {
		t.Fatalf("s3 forgot s1 before its information aged: %+v", st)
	}
	// s3 claims root at once; s2's reply waits for the hold timer of
	// its hello at 88.5 s (it is root since 70.5 s, hellos every 2 s).
	l.s.Run(89*sec + sec/2)
	if st := s3.Status(); !st.IsRoot() {
		t.Fatalf("s3 did not claim root when the information aged: %+v", st)
	}
	l.s.Run(89*sec + sec/2 + hop)
	if st := s3.Status(); st.Root != s2.ID() || st.RootPort != 3 {
		t.Fatalf("s3 did not take s2 as root: %+v", st)
	}
	var whole element.Time = -1
	for l.s.Now() < fail+60*sec {
		l.s.Run(l.s.Now() + 10*element.Millisecond)
		st3 := s3.Status()
		if s, _ := s3.PortState(3); s == stp.Forwarding && st3.Root == s2.ID() && st3.RootPort == 3 && s2.Status().IsRoot() {
			whole = l.s.Now()
			break
		}
	}
	if whole < fail+30*sec || whole > fail+30*sec+10*element.Millisecond {
		t.Fatalf("s2-s3 tree whole at %v, want %v (polled every 10 ms)", whole, fail+30*sec)
	}
	l.s.Run(135 * sec)
	r := (*app).Result()
	// 31 answered before (40.25 .. 70.25), none while s3:3 is not
	// forwarding, all 29 of 101.25 .. 129.25.
	if r.Sent != 90 || r.Received != 31+29 {
		t.Fatalf("ping h3 -> h5: sent %d answered %d, want 90 and 60", r.Sent, r.Received)
	}
}

// Two runs of the same scenario are identical: same trace hash, same
// bridge states, same counters.
func TestSimDeterministic(t *testing.T) {
	run := func() (uint64, string) {
		l := newLab(t, "fattree:4", nil)
		l.failAt(70*sec+sec/2, "s13", "s5")
		l.pingAll(40 * sec)
		l.s.Run(130 * sec)
		var sb strings.Builder
		for n := topo.NodeID(0); int(n) < l.g.NumNodes(); n++ {
			if b := l.fab.Bridge(n); b != nil {
				fmt.Fprintf(&sb, "%+v %v\n", b.Status(), b.Counters())
			}
		}
		return l.s.TraceHash(), sb.String()
	}
	h1, s1 := run()
	h2, s2 := run()
	if h1 != h2 || s1 != s2 {
		t.Fatalf("runs differ: trace %x vs %x, states equal %v", h1, h2, s1 == s2)
	}
}

// Larger fabrics, checked against the oracle after 200 s: fattree:16 (320
// bridges, 1,024 hosts), a random jellyfish:200,24,12, and 3-D meshes. In
// each, blocked ports = switch links − switches + 1.
// cube:6,6,6 has a bridge diameter of 15, beyond what the default timers
// carry (the message age reaches max age on the way): it never settles
// with them, and does with max age 40 s and forward delay 21 s.
func TestSimScale(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, c := range []struct {
		spec    string
		params  map[string]string
		blocked int // -1: does not converge
	}{
		{"fattree:16", nil, 1729},
		{"jellyfish:200,24,12", nil, 1001},
		{"cube:5,5,5,1", nil, 176},
		{"cube:6,6,6,1", nil, -1},
		{"cube:6,6,6,1", map[string]string{"max_age": "40s", "forward_delay": "21s"}, 325},
	} {
		name := c.spec
		if c.params != nil {
			name += "/max_age=40s"
		}
		t.Run(name, func(t *testing.T) {
			l := newLab(t, c.spec, c.params)
			l.s.Run(200 * sec)
			if c.blocked < 0 {
				if err := l.fab.CheckTree(); err == nil {
					t.Fatal("converged beyond the timers' diameter")
				}
				return
			}
			if b := l.checkConverged(); len(b) != c.blocked {
				t.Fatalf("%d blocked ports, want %d", len(b), c.blocked)
			}
		})
	}
}
