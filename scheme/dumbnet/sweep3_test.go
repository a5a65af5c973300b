package dumbnet

// Tests from a third mutation sweep of the package (after exact_test.go
// and sweep2_test.go), over switch.go, topology.go, pathgraph.go,
// graph.go, cache.go, agent.go, controller.go, discovery.go and
// scheme.go: each pins an outcome that a mutant changed without failing
// the earlier tests (a counter at its first increment, a limit at its
// exact edge, a canonical order, an algorithm's exact result on a case
// the other tests did not reach).

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// One frame forwarded is counted: the counter appears from its first
// frame on, not only once it has grown.
func TestSwitchCountersFromFirst(t *testing.T) {
	s, env := newTestSwitch(4)
	s.Receive(1, tagged(t, []uint8{3}, wire.EtherTypeIPv4, nil))
	s.Receive(1, tagged(t, []uint8{9}, wire.EtherTypeIPv4, nil))
	env.take()
	if c := s.Counters(); c["forwarded"] != 1 || c["drop_bad_port"] != 1 || len(c) != 2 {
		t.Fatalf("counters %v, want forwarded 1 and drop_bad_port 1", c)
	}
}

// A switch has exactly the ports it was attached with: a tag one above
// the highest names no port (not a port that is down), and a link change
// there is counted, not announced.
func TestSwitchPortJustAboveLast(t *testing.T) {
	s, env := newTestSwitch(4)
	s.Receive(1, tagged(t, []uint8{5}, wire.EtherTypeIPv4, nil))
	s.LinkChange(5, true)
	if out := env.take(); len(out) != 0 || s.Counters()["drop_bad_port"] != 2 || s.Counters()["drop_port_down"] != 0 {
		t.Fatalf("port 5 of 4: sent %d, counters %v", len(out), s.Counters())
	}
}

// The echo is cut at exactly maxEcho bytes: a payload one byte longer
// loses that byte.
func TestSwitchEchoCutAtLimit(t *testing.T) {
	s, env := newTestSwitch(4)
	payload := make([]byte, maxEcho+1)
	for i := range payload {
		payload[i] = byte(i)
	}
	s.Receive(1, tagged(t, []uint8{0, 2}, wire.EtherTypeLocalExp, payload))
	out := env.take()
	if len(out) != 1 {
		t.Fatalf("sent %d frames, want the ID reply", len(out))
	}
	_, _, body, _ := wire.ParseDumbNet(out[0].frame)
	var m wire.DumbNetSwitchID
	if err := m.DecodeFromBytes(body); err != nil || !bytes.Equal(m.Echo, payload[:maxEcho]) {
		t.Fatalf("echo of %d bytes (%v), want %d", len(m.Echo), err, maxEcho)
	}
}

// Topology lists are in one order whatever order they were built in:
// links by (A, port, B, port), so that two links recorded on one port (a
// recabled port) are ordered too; hosts by MAC, ascending.
func TestTopologySortOrder(t *testing.T) {
	top := &Topology{
		Links: []Link{{A: 1, APort: 1, B: 3, BPort: 1}, {A: 1, APort: 1, B: 2, BPort: 1}},
		Hosts: []HostLoc{{MAC: macC}, {MAC: macA}, {MAC: macB}},
	}
	top.sort()
	if top.Links[0].B != 2 || top.Links[1].B != 3 {
		t.Fatalf("links %+v, want B 2 before B 3", top.Links)
	}
	if top.Hosts[0].MAC != macA || top.Hosts[1].MAC != macB || top.Hosts[2].MAC != macC {
		t.Fatalf("hosts %+v, want ascending MACs", top.Hosts)
	}
}

// Diff names what is extra (found, not wanted) and what is missing.
func TestDiffLines(t *testing.T) {
	got := &Topology{Switches: []uint64{1, 2}}
	want := &Topology{Switches: []uint64{1, 3}}
	if d := got.Diff(want); !slices.Equal(d, []string{"extra switch 0x2", "missing switch 0x3"}) {
		t.Fatalf("diff %q", d)
	}
}

// Algorithm 1 with s = 1 still has windows: with ε = 1 a triangle's third
// switch is within s + ε = 2 of a one-hop window's ends.
func TestDetoursStepOne(t *testing.T) {
	tri := newNetGraph()
	for i := range 3 {
		tri.addSwitch(uint64(i + 1))
	}
	tri.addLink(0, 1, 1, 1, true, 0)
	tri.addLink(0, 2, 2, 1, true, 0)
	tri.addLink(1, 2, 2, 2, true, 0)
	var sc scratch
	if d := tri.detourSet(&sc, []hop{{0, 1}, {1, 0}}, 1, 1); !d[2] {
		t.Fatalf("D = %v, want the triangle's third switch", d)
	}
	if d := tri.detourSet(&sc, []hop{{0, 1}, {1, 0}}, 1, 0); d[2] {
		t.Fatalf("D = %v with ε = 0, want the primary only", d)
	}
}

// A cable between two ports of one switch: both ports lead somewhere
// (used lists both), and its key names the lower port first.
func TestSelfLoopPortsAndKey(t *testing.T) {
	g := newNetGraph()
	a := g.addSwitch(1)
	g.addLink(a, 4, a, 2, true, 0)
	if u := slices.Sorted(slices.Values(g.used[a])); !slices.Equal(u, []uint16{2, 4}) || g.nlink != 1 {
		t.Fatalf("used %v, %d links; want ports 2 and 4, one link", g.used[a], g.nlink)
	}
	if k := keyOf(a, 4, a, 2); k != (linkKey{a: a, ap: 2, b: a, bp: 4}) {
		t.Fatalf("key %+v, want port 2 first", k)
	}
}

// simplePathLens lists the hop counts of every loop-free route from src
// to dst, parallel links counted apart, sorted.
func simplePathLens(g *netGraph, src, dst int32) []int {
	var lens []int
	on := map[int32]bool{src: true}
	var walk func(u int32, n int)
	walk = func(u int32, n int) {
		if u == dst {
			lens = append(lens, n)
			return
		}
		for _, p := range g.used[u] {
			pe := g.ports[u][p]
			if !pe.up || on[pe.sw] {
				continue
			}
			on[pe.sw] = true
			walk(pe.sw, n+1)
			on[pe.sw] = false
		}
	}
	walk(src, 0)
	slices.Sort(lens)
	return lens
}

// kShortest is exact (Yen): on random small multigraphs it returns as
// many distinct loop-free routes as exist, up to k, and their lengths are
// the k smallest.
func TestKShortestExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	var sc scratch
	for trial := range 300 {
		g := newNetGraph()
		n := 4 + rng.IntN(4)
		for i := range n {
			g.addSwitch(uint64(i + 1))
		}
		next := make([]uint16, n)
		for range n + rng.IntN(2*n) {
			a, b := int32(rng.IntN(n)), int32(rng.IntN(n))
			if a == b {
				continue
			}
			next[a]++
			next[b]++
			g.addLink(a, next[a], b, next[b], true, 0)
		}
		const k = 6
		all := simplePathLens(g, 0, int32(n-1))
		rs := g.kShortest(&sc, 0, int32(n-1), k)
		want := all[:min(k, len(all))]
		var got []int
		for i, r := range rs {
			got = append(got, len(r)-1)
			seen := map[int32]bool{}
			for _, h := range r {
				if seen[h.sw] {
					t.Fatalf("trial %d: route %v has a loop", trial, r)
				}
				seen[h.sw] = true
			}
			for _, o := range rs[:i] {
				if sameRoot(o, r) {
					t.Fatalf("trial %d: route %v twice", trial, r)
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: route lengths %v, want %v", trial, got, want)
		}
	}
}

// The heap behind the backup path's Dijkstra pops in ascending order,
// whichever child of the root the last element would have to beat.
func TestMinHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for trial := range 100 {
		h := &minHeap{}
		var want []int64
		for i := range 1 + rng.IntN(40) {
			d := int64(rng.IntN(50))
			h.push(int32(i), d)
			want = append(want, d)
		}
		slices.Sort(want)
		var got []int64
		for h.len() > 0 {
			_, d := h.pop()
			got = append(got, d)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: popped %v, want %v", trial, got, want)
		}
	}
}

// Merging a path graph again (every reply repeats the links near the
// host) adds no link: each port is listed once however often its link
// is recorded.
func TestMergeAgainAddsNothing(t *testing.T) {
	c := NewTopoCache()
	for v := range uint64(3) {
		// Named from its far end: the host's switch (index 0) is B.
		c.Merge(&wire.DumbNetPathReply{Version: v + 1, Src: macA, Dst: macB, SrcSwitch: 1, SrcPort: 1, DstSwitch: 2, DstPort: 5,
			Links: []wire.DumbNetLink{{A: 2, APort: 4, B: 1, BPort: 3, Flags: wire.LinkUp | wire.LinkPrimary}}})
	}
	if c.g.nlink != 1 || len(c.g.used[0]) != 1 || len(c.g.used[1]) != 1 {
		t.Fatalf("%d links, ports used %v; want one link", c.g.nlink, c.g.used)
	}
}

// The verifier's bound is exact: with the destination on the host's own
// switch, a path bouncing between two switches can have an odd length;
// DumbNetMaxTags-1 tags pass, DumbNetMaxTags+1 do not.
func TestVerifyOddTagBound(t *testing.T) {
	c := NewTopoCache()
	c.Merge(&wire.DumbNetPathReply{Version: 1, Src: macA, Dst: macB, SrcSwitch: 1, SrcPort: 1, DstSwitch: 1, DstPort: 6,
		Links: []wire.DumbNetLink{{A: 1, APort: 3, B: 2, BPort: 4, Flags: wire.LinkUp | wire.LinkPrimary}}})
	loop := func(n int) []uint8 {
		var tags []uint8
		for range n {
			tags = append(tags, 3, 4)
		}
		return append(tags, 6)
	}
	if err := c.Verify(loop(wire.DumbNetMaxTags/2-1), macB); err != nil {
		t.Fatalf("%d tags: %v", wire.DumbNetMaxTags-1, err)
	}
	if err := c.Verify(loop(wire.DumbNetMaxTags/2), macB); err == nil {
		t.Fatalf("%d tags verified", wire.DumbNetMaxTags+1)
	}
}

// The PathTable's counts stay true under churn: n live keys, tomb
// tombstones, and never more than half the slots taken by both (else a
// lookup for an absent key could find no empty slot to stop at).
func TestPathTableChurnCounts(t *testing.T) {
	tb := NewPathTable()
	mac := func(i int) wire.MAC { return wire.MAC{2, 0, 0, 0, byte(i >> 8), byte(i)} }
	e := &PathEntry{}
	check := func(step int) {
		t.Helper()
		n, tomb := 0, 0
		for _, k := range tb.keys {
			switch k {
			case 0:
			case tombstone:
				tomb++
			default:
				n++
			}
		}
		if n != tb.n || tomb != tb.tomb || 2*(n+tomb) > len(tb.keys) {
			t.Fatalf("step %d: %d keys, %d tombstones in %d slots; counted %d, %d", step, n, tomb, len(tb.keys), tb.n, tb.tomb)
		}
	}
	for i := range 2000 {
		tb.Put(mac(i), e)
		check(i)
		if i%3 != 0 {
			tb.Delete(mac(i - 1))
			check(i)
		}
		if i%5 == 0 {
			tb.Put(mac(i-1), e) // into a tombstone, or over a live key
			check(i)
		}
	}
	if tb.Lookup(mac(5000)) != nil {
		t.Fatal("found a key never put")
	}
}

// The search's jitter is drawn from [0, Search/2]: with the shortest
// Search, 1 ps, there is no room for jitter and the search starts at
// exactly 1 ps.
func TestAgentShortestSearch(t *testing.T) {
	a, env := noCtrlAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: 1})
	env.advance(1)
	if a.Counters()["search_started"] != 1 || a.search == nil {
		t.Fatalf("counters %v at 1 ps, want the search started", a.Counters())
	}
}

// 67 bytes left after the tags is below the 68 IPv4 guarantees: no ICMP
// announcing it, a drop.
func TestAgentFragNeededBelowMinimum(t *testing.T) {
	a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, MTU: 71})
	a.hold(macB, netip.Addr{}, nil, nil)
	reply(a, 1) // one tag: 4 bytes, 67 left
	env.take()
	a.Receive(2, ipv4(100, true))
	if out := env.take(); len(out) != 0 || a.Counters()["drop_too_big"] != 1 {
		t.Fatalf("sent %d frames, counters %v; want a drop", len(out), a.Counters())
	}
}

// When the stack asks again, the query is sent at once and its backoff
// starts over: the next retry is one QueryTimeout later, not two.
func TestAgentARPRearmRestartsBackoff(t *testing.T) {
	const qt = element.Millisecond
	a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, QueryTimeout: qt})
	req := wire.ARP{Op: wire.ARPRequest, SenderMAC: macA, SenderIP: ipA, TargetIP: ipB}
	f, _ := wire.AppendARPFrame(nil, wire.Broadcast, 0, &req)
	a.Receive(2, f)
	env.advance(qt + 2*qt + qt/2) // retries at 1 and 3 ms
	a.Receive(2, f)
	if n := a.Counters()["path_queries"]; n != 4 {
		t.Fatalf("path_queries %d, want 4 (first, two retries, re-armed)", n)
	}
	env.advance(qt)
	if n := a.Counters()["path_queries"]; n != 5 {
		t.Fatalf("path_queries %d one timeout after the re-arm, want 5", n)
	}
}

// The retry interval doubles 16 times, then stays: with 1 ps first, the
// 16th retry leaves at 2^16-1 ps, the 17th 2^16 ps after it.
func TestAgentQueryBackoffCap(t *testing.T) {
	a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, QueryTimeout: 1, QueryRetries: 20})
	a.hold(macB, netip.Addr{}, nil, nil)
	env.advance(1<<16 - 1 + 1<<16 - 1)
	if n := a.Counters()["path_queries"]; n != 17 {
		t.Fatalf("path_queries %d, want 17 (first and 16 retries)", n)
	}
	env.advance(1)
	if n := a.Counters()["path_queries"]; n != 18 {
		t.Fatalf("path_queries %d, want 18", n)
	}
}

// A control frame with tags left and no message at all is not at its
// end (it must not be read as a probe).
func TestAgentEmptyControlWithTags(t *testing.T) {
	a, env := newTestAgent()
	a.Receive(1, tagged(t, []uint8{3}, wire.EtherTypeLocalExp, nil))
	if out := env.take(); len(out) != 0 || a.Counters()["drop_not_at_end"] != 1 {
		t.Fatalf("sent %d, counters %v", len(out), a.Counters())
	}
}

// A control message to a multicast address other than broadcast is not
// for this host.
func TestAgentControlToMulticast(t *testing.T) {
	a, _ := newTestAgent()
	a.Receive(1, ctrl(t, wire.MAC{0x01, 0, 0x5e, 0, 0, 1}, macB, &wire.DumbNetHostNotify{Origin: macB, Seq: 1, SwitchID: 9, Port: 1, State: wire.PortDown}))
	if c := a.Counters(); c["drop_not_for_us"] != 1 || c["host_notify_received"] != 0 {
		t.Fatalf("counters %v, want the multicast message dropped", c)
	}
}

// A host with two NICs uses the lowest; the other one going down does
// not stop it.
func TestAgentOtherNICDown(t *testing.T) {
	a := NewAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1})
	env := newFakeEnv()
	a.Attach(env, []element.PortInfo{{Port: 3, Up: true}, {Port: 1, Up: true}, {Port: 2, Up: true, Local: true}})
	a.setController(macB, []uint8{3, 1})
	a.hold(macB, netip.Addr{}, nil, nil)
	reply(a, 1)
	env.take()
	a.LinkChange(3, false)
	a.Receive(2, wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, make([]byte, 40)))
	if out := env.take(); len(out) != 1 || out[0].port != 1 {
		t.Fatalf("sent %v, want the frame on NIC 1", out)
	}
}

// An origin's window moves by exactly the sequence numbers skipped:
// after 1 and 3, 2 is news and 1 is not.
func TestHostNotifyWindowShift(t *testing.T) {
	a, _ := newTestAgent()
	for i, seq := range []uint32{1, 3, 2, 1} {
		a.Receive(1, ctrl(t, macA, macC, &wire.DumbNetHostNotify{Origin: macC, Seq: seq, SwitchID: 9, Port: uint16(seq), State: wire.PortDown}))
		if c := a.Counters(); c["host_notify_received"] != uint64(min(i+1, 3)) || c["notify_duplicate"] != uint64(i/3) {
			t.Fatalf("after seq %d: counters %v", seq, c)
		}
	}
}

// The checksum's carries are folded until none is left: ffff + ffff +
// 0001 = 1ffff folds to 10000, which folds again to 0001.
func TestInetChecksumDoubleCarry(t *testing.T) {
	if got := inetChecksum([]byte{0xff, 0xff, 0xff, 0xff, 0x00, 0x01}); got != 0xfffe {
		t.Fatalf("checksum %#04x, want 0xfffe", got)
	}
}

// graphController is the controller's agent (host macA on the first
// switch's port 9) with a graph set by hand, as TestNeighborListBound
// builds one: switches 1..n (indices 0..n-1), links as {a, ap, b, bp} by
// index, and the other hosts on the switches of hosts (by index), port 9.
func graphController(t *testing.T, n int, links [][4]int, hosts map[wire.MAC]int32) *Controller {
	t.Helper()
	a, env := attachedAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true})
	c := a.ctrl
	c.disc.stop()
	env.advance(element.Second)
	env.take()
	c.g = newNetGraph()
	for i := range n {
		c.g.addSwitch(uint64(i + 1))
	}
	for _, l := range links {
		c.g.addLink(int32(l[0]), uint16(l[1]), int32(l[2]), uint16(l[3]), true, 0)
	}
	c.hosts[macA] = &hostRec{loc: HostLoc{MAC: macA, Switch: 1, Port: 9}, at: attach{sw: 0, port: 9}}
	for mac, sw := range hosts {
		c.hosts[mac] = &hostRec{loc: HostLoc{MAC: mac, Switch: uint64(sw + 1), Port: 9}, at: attach{sw: sw, port: 9}}
	}
	c.root = attach{sw: 0, port: 9}
	c.version, c.ready = 1, true
	return c
}

// A flood neighbour's second route shares no link with its first, in
// either direction: here the only other way from S to T would cross the
// first route's link A-B backwards (S-C-B-A-D-T), so there is none.
//
//	S=0 -1/1- A=1 -2/1- B=2 -2/1- T=3
//	S=0 -2/1- C=4 -2/3- B=2
//	A=1 -3/1- D=5 -2/2- T=3
func TestNeighborAltSharesNoLink(t *testing.T) {
	c := graphController(t, 6, [][4]int{{0, 1, 1, 1}, {1, 2, 2, 1}, {2, 2, 3, 1}, {0, 2, 4, 1}, {4, 2, 2, 3}, {1, 3, 5, 1}, {5, 2, 3, 2}},
		map[wire.MAC]int32{macB: 3})
	c.sendNeighbors()
	nbs := c.hosts[macA].nbrs.Neighbors
	if len(nbs) != 1 || nbs[0].MAC != macB || !slices.Equal(nbs[0].Path, []uint8{1, 2, 2, 9}) || nbs[0].Alt != nil {
		t.Fatalf("S's neighbours %+v, want B by 1-2-2-9 and no second route", nbs)
	}
}

// A flood neighbour whose route is longer than a frame's tag stack is
// left out: here T is 65 switch hops from S, 66 tags.
func TestNeighborTooFarLeftOut(t *testing.T) {
	var links [][4]int
	for i := range 65 {
		links = append(links, [4]int{i, 2, i + 1, 1})
	}
	c := graphController(t, 66, links, map[wire.MAC]int32{macB: 65})
	c.sendNeighbors()
	if nbs := c.hosts[macA].nbrs.Neighbors; len(nbs) != 0 {
		t.Fatalf("S's neighbours %+v, want none", nbs)
	}
}

// A neighbouring switch is represented by its first host (lowest MAC).
func TestNeighborFirstHostOfSwitch(t *testing.T) {
	a, _, want := discoveredController(t, "fattree:4", 0, Config{})
	first := map[uint64]wire.MAC{}
	at := map[wire.MAC]uint64{}
	for _, h := range want.Hosts { // sorted by MAC
		at[h.MAC] = h.Switch
		if _, ok := first[h.Switch]; !ok {
			first[h.Switch] = h.MAC
		}
	}
	for _, h := range want.Hosts {
		for _, nb := range a.ctrl.hosts[h.MAC].nbrs.Neighbors {
			if at[nb.MAC] != h.Switch && nb.MAC != first[at[nb.MAC]] {
				t.Fatalf("host %v lists %v, not the first host of its switch, %v", h.MAC, nb.MAC, first[at[nb.MAC]])
			}
		}
	}
}

// A rescan for missed hosts probes up to port 254 when MaxPorts allows.
func TestHostRescanUpTo254(t *testing.T) {
	a, _, _ := discoveredController(t, "line:3", 0, Config{MaxPorts: 254})
	c := a.ctrl
	c.rescanHosts()
	if len(c.disc.jobs) == 0 {
		t.Fatal("no rescan job")
	}
	for _, j := range c.disc.jobs[c.disc.jhead:] {
		if j.ports[len(j.ports)-1] != 254 {
			t.Fatalf("rescan of switch %d stops at port %d", j.sw, j.ports[len(j.ports)-1])
		}
	}
}

// A patch names the link by both its ends' real ports.
func TestPatchNamesBothPorts(t *testing.T) {
	a, env, want := discoveredController(t, "fattree:4", 0, Config{})
	var l Link
	for _, l = range want.Links {
		if l.APort != l.BPort {
			break
		}
	}
	if l.APort == l.BPort {
		t.Fatal("no link with two different port numbers")
	}
	i, p := ctrlLink(a.ctrl, l)
	a.ctrl.setLink(i, p, false)
	for _, o := range env.take() {
		_, _, payload, err := wire.ParseDumbNet(o.frame)
		if err != nil {
			t.Fatal(err)
		}
		if m, err := wire.DecodeMessage(payload); err == nil {
			if pt, ok := m.(*wire.DumbNetTopoPatch); ok {
				if len(pt.Links) != 1 || pt.Links[0] != (wire.DumbNetLink{A: l.A, APort: l.APort, B: l.B, BPort: l.BPort}) {
					t.Fatalf("patch %+v, want %+v down", pt.Links, l)
				}
				return
			}
		}
	}
	t.Fatal("no patch sent")
}

// The prober's own IP is held from the first switch's answer on: a host
// claiming it is a conflict.
func TestProberIPHeld(t *testing.T) {
	a, _ := attachedAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true, MaxPorts: 4})
	d := a.ctrl.disc
	a.Receive(1, probeEcho(t, a, 1, 7))
	d.addHost(d.sws[0], 3, wire.DumbNetProbeReply{HostMAC: macB, HostIP: ipA})
	if a.Counters()["drop_identity_conflict"] != 1 || len(d.hosts) != 1 {
		t.Fatalf("hosts %v, counters %v; want the claim on %v refused", d.hosts, a.Counters(), ipA)
	}
}

// Only host probes of the ended round measure a late answer's round
// trip: an answer carrying the sequence number of an expired root probe
// stretches nothing.
func TestLateAnswerOnlyForHostProbes(t *testing.T) {
	a, env := attachedAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true, MaxPorts: 4})
	c := a.ctrl
	env.advance(c.disc.timeout + element.Millisecond) // the round ends: no switch answered
	if a.Counters()["discovery_no_switch"] != 1 {
		t.Fatalf("counters %v, want the round ended without a switch", a.Counters())
	}
	c.unmatchedHostReply(&wire.DumbNetProbeReply{Seq: 1, HostMAC: macB, Path: []uint8{1}})
	if c.disc.maxRTT != 0 || c.disc.wait() != c.disc.timeout {
		t.Fatalf("maxRTT %v after an answer to a root probe's number, want 0", c.disc.maxRTT)
	}
}

// Only the last ended round's host probes count as late: an answer to a
// host probe of the round before stretches nothing.
func TestLateAnswerOnlyForLastRound(t *testing.T) {
	a, env, _ := discoveredController(t, "fattree:4", 0, Config{MaxPorts: 6})
	c := a.ctrl
	stranger := wire.MAC{0x02, 0xee, 0, 0, 0, 1}
	c.rescanHosts()
	first := c.disc.seq + 1 // the rescan's first host probe
	env.advance(element.Second)
	if c.disc.running || len(c.disc.expired) == 0 {
		t.Fatalf("first rescan: running %v, %d expired", c.disc.running, len(c.disc.expired))
	}
	c.rescanHosts()
	env.advance(element.Second)
	if _, ok := c.disc.expired[first]; ok || c.disc.running {
		t.Fatalf("second rescan: probe %d of the first still expired (running %v)", first, c.disc.running)
	}
	c.unmatchedHostReply(&wire.DumbNetProbeReply{Seq: first, HostMAC: stranger, Path: []uint8{1}})
	if c.disc.maxRTT != 0 {
		t.Fatalf("maxRTT %v from a probe two rounds old", c.disc.maxRTT)
	}
}

// A placed host's port is known: a rescan for missed hosts skips it.
func TestAddHostMarksPortKnown(t *testing.T) {
	a, _ := noCtrlAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1})
	d := newDiscovery(a, false)
	s := d.addSwitch(1, nil, []uint8{1})
	d.addHost(s, 2, wire.DumbNetProbeReply{HostMAC: macB, HostIP: ipB})
	if !s.known[2] || a.Counters()["hosts_found"] != 1 {
		t.Fatalf("known %v, counters %v", s.known, a.Counters())
	}
}

// A link found from both its ends is one link found.
func TestLinkFoundOnce(t *testing.T) {
	a, _ := noCtrlAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1})
	d := newDiscovery(a, false)
	s1 := d.addSwitch(1, nil, []uint8{1})
	s2 := d.addSwitch(2, []uint8{3}, []uint8{4, 1})
	d.addLink(s1, 3, s2, 4)
	d.addLink(s2, 4, s1, 3)
	if len(d.links) != 1 || a.Counters()["links_found"] != 1 {
		t.Fatalf("links %v, counters %v; want one", d.links, a.Counters())
	}
}

// A search stopped by finding the controller sends none of the probes it
// had queued.
func TestSearchStopDropsQueue(t *testing.T) {
	a, env := noCtrlAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: 1, MaxPorts: 8})
	env.advance(1)
	if a.search == nil || len(env.take()) != 1 {
		t.Fatalf("search %v: want it started with one probe out", a.search)
	}
	search := a.search
	a.setController(macB, []uint8{3, 1})
	env.advance(element.Millisecond)
	if out := env.take(); len(out) != 0 || search.probes.Load() != 1 || a.search != nil {
		t.Fatalf("after the stop: sent %d frames, %d probes, search kept %v", len(out), search.probes.Load(), a.search != nil)
	}
}

// Probes leave exactly one ProbeGap apart.
func TestProbePacingExact(t *testing.T) {
	a, env := attachedAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true, MaxPorts: 8, ProbeGap: 10 * element.Microsecond})
	env.advance(30 * element.Microsecond)
	if n := a.ctrl.Probes(); n != 4 {
		t.Fatalf("%d probes by 30us, want 4 (at 0, 10, 20, 30us)", n)
	}
}

// Each bounded parameter is refused one past its highest value (the
// highest is accepted: TestNewParamsReachElements), and mtu one below
// 576.
func TestNewParamsOnePastEdge(t *testing.T) {
	g, err := topo.Parse("fattree:4", 1)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"eps": "17", "mtu": "575", "k": "65", "s": "17", "hops": "256", "maxports": "255"} {
		if _, err := New(g, scheme.Options{Params: map[string]string{k: v}}); !errors.Is(err, ErrBadParam) {
			t.Errorf("%s=%s: %v, want ErrBadParam", k, v, err)
		}
	}
}

// The port that brought the root answer home is the prober's own: the
// first switch's scan leaves it out.
func TestRootScanSkipsProberPort(t *testing.T) {
	a, _ := attachedAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true, MaxPorts: 4})
	d := a.ctrl.disc
	a.Receive(1, probeEcho(t, a, 2, 7))
	if len(d.jobs) != 1 || !slices.Equal(d.jobs[0].ports, []uint16{1, 3, 4}) || !d.sws[0].known[2] {
		t.Fatalf("jobs %+v, known %v; want ports 1, 3, 4 scanned", d.jobs, d.sws[0].known)
	}
}
