package dumbnet

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// expectedOf is the topology discovery must find on spec (seed 1).
func expectedOf(t testing.TB, spec string) *Topology {
	t.Helper()
	tg, err := topo.Parse(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Expected(tg)
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// graphOf builds a controller graph from the topology discovery must find
// on spec, and lists the switches with hosts.
func graphOf(t *testing.T, spec string) (*netGraph, []int32) {
	t.Helper()
	want := expectedOf(t, spec)
	g := newNetGraph()
	for _, id := range want.Switches {
		g.addSwitch(id)
	}
	for _, l := range want.Links {
		g.addLink(g.idx[l.A], l.APort, g.idx[l.B], l.BPort, true, 0)
	}
	var edges []int32
	for _, h := range want.Hosts {
		if i := g.idx[h.Switch]; !slices.Contains(edges, i) {
			edges = append(edges, i)
		}
	}
	slices.Sort(edges)
	return g, edges
}

// TestBackupAvoidsPrimarySwitches: the backup path "shares as few common
// switches or links as possible with the primary path" (DumbNet §4.3),
// so that it survives a failed switch of the primary, not only a failed
// link. On a 3x3x3 cube (connectivity 3) a backup sharing no switch but
// the ends always exists; with only the primary's links made expensive,
// 182 of 2808 backups went through a switch of their primary.
func TestBackupAvoidsPrimarySwitches(t *testing.T) {
	g, edges := graphOf(t, "cube:3,3,3")
	var sc scratch
	rng := rand.New(rand.NewPCG(3, 3))
	shared := 0
	pairs := 0
	for _, a := range edges {
		for _, b := range edges {
			if a == b {
				continue
			}
			for range 4 {
				pg := g.pathGraph(&sc, a, b, DefaultS, DefaultEps, rng)
				if pg == nil || pg.Backup == nil {
					t.Fatalf("%d->%d: no path graph or backup", a, b)
				}
				pairs++
				mid := map[int32]bool{}
				for _, h := range pg.Primary[1 : len(pg.Primary)-1] {
					mid[h.sw] = true
				}
				for _, h := range pg.Backup[1 : len(pg.Backup)-1] {
					if mid[h.sw] {
						shared++
						break
					}
				}
			}
		}
	}
	if shared != 0 {
		t.Fatalf("%d of %d backups share a switch with their primary", shared, pairs)
	}

	// Parallel links: the primary's switch A has a second pair of links
	// that a link-only penalty happily reuses; the switch-disjoint way
	// round through B and C is one hop longer.
	//   S:1-A:1, A:2-D:1, S:2-A:3, A:4-D:2, S:3-B:1, B:2-C:1, C:2-D:3
	h := newNetGraph()
	for id := range uint64(5) {
		h.addSwitch(id + 1) // S=0 A=1 D=2 B=3 C=4
	}
	h.addLink(0, 1, 1, 1, true, 0)
	h.addLink(1, 2, 2, 1, true, 0)
	h.addLink(0, 2, 1, 3, true, 0)
	h.addLink(1, 4, 2, 2, true, 0)
	h.addLink(0, 3, 3, 1, true, 0)
	h.addLink(3, 2, 4, 1, true, 0)
	h.addLink(4, 2, 2, 3, true, 0)
	pg := h.pathGraph(&sc, 0, 2, 2, 0, rng)
	got := []int32{}
	for _, x := range pg.Backup {
		got = append(got, x.sw)
	}
	if !slices.Equal(got, []int32{0, 3, 4, 2}) {
		t.Fatalf("backup %v, want S-B-C-D [0 3 4 2]", got)
	}
	// With no switch-disjoint way, the backup still avoids the primary's
	// links (the parallel pair through A).
	h.setUp(3, 2, false)
	pg = h.pathGraph(&sc, 0, 2, 2, 0, rng)
	if len(pg.Backup) != 3 || pg.Backup[1].sw != 1 || pg.Backup[0].out == pg.Primary[0].out || pg.Backup[1].out == pg.Primary[1].out {
		t.Fatalf("primary %v backup %v: want the other parallel pair through A", pg.Primary, pg.Backup)
	}
	for k, f := range pg.Links {
		if f&wire.LinkPrimary != 0 && f&wire.LinkBackup != 0 {
			t.Fatalf("link %v on both primary and backup", k)
		}
	}
}

// squareAgent is an agent (A on switch 1 port 9) with a path graph to B
// (switch 4 port 9) over a square: primary 1 -(p1/p1)- 2 -(p2/p1)- 4,
// backup 1 -(p2/p1)- 3 -(p2/p2)- 4.
func squareAgent(t *testing.T, k int) (*Agent, *fakeEnv) {
	t.Helper()
	a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, K: k})
	a.hold(macB, netip.Addr{}, nil, nil)
	links := []wire.DumbNetLink{
		{A: 1, APort: 1, B: 2, BPort: 1, Flags: wire.LinkUp | wire.LinkPrimary},
		{A: 2, APort: 2, B: 4, BPort: 1, Flags: wire.LinkUp | wire.LinkPrimary},
		{A: 1, APort: 2, B: 3, BPort: 1, Flags: wire.LinkUp | wire.LinkBackup},
		{A: 3, APort: 2, B: 4, BPort: 2, Flags: wire.LinkUp | wire.LinkBackup},
	}
	a.pathReply(&wire.DumbNetPathReply{QueryID: a.qid, Version: 1, Src: macA, Dst: macB, SrcSwitch: 1, SrcPort: 9, DstSwitch: 4, DstPort: 9, Links: links})
	if e := a.table.Lookup(macB); e == nil || len(e.Paths) == 0 {
		t.Fatalf("no entry for B: %v", a.Counters())
	}
	env.take()
	return a, env
}

// TestHostNotifyOutOfOrder: one origin's flooded notifications travel
// several routes (two per flood neighbour, and on through other hosts),
// so its second can arrive before its first. The first is news, not a
// duplicate: dropping every sequence number below the highest seen lost
// it, and the host kept sending over a failed link.
func TestHostNotifyOutOfOrder(t *testing.T) {
	a, env := squareAgent(t, 4)
	macC := wire.MAC{0x02, 0, 0, 0, 0, 0xc}
	send := func(seq uint32, sw uint64, port uint16) {
		a.Receive(1, ctrl(t, macA, macC, &wire.DumbNetHostNotify{Origin: macC, Seq: seq, SwitchID: sw, Port: port, State: wire.PortDown}))
	}
	send(2, 2, 2) // the primary's second link
	send(1, 1, 2) // the backup's first link, announced first by C
	send(1, 1, 2) // a real duplicate
	c := a.Counters()
	if c["host_notify_received"] != 2 || c["notify_duplicate"] != 1 {
		t.Fatalf("host_notify_received %d, notify_duplicate %d; want 2, 1", c["host_notify_received"], c["notify_duplicate"])
	}
	if err := a.cache.Verify([]uint8{2, 2, 9}, macB); err == nil {
		t.Fatal("the backup path over the failed link 1:2 still verifies")
	}
	if e := a.table.Lookup(macB); e != nil {
		t.Fatalf("entry %+v left though both ways to B failed", e)
	}
	if c["failover_requery"] != 1 {
		t.Fatalf("failover_requery = %d, want 1", c["failover_requery"])
	}
	env.take()
	// Far older than anything in the window: taken as seen.
	send(200, 9, 9)
	send(100, 9, 8)
	if c := a.Counters(); c["host_notify_received"] != 3 || c["notify_duplicate"] != 2 {
		t.Fatalf("host_notify_received %d, notify_duplicate %d; want 3, 2", c["host_notify_received"], c["notify_duplicate"])
	}
}

// TestFlowletGapChangesPath: after a gap a flow starts a new flowlet, for
// which "the extension will output a different path" (DumbNet §6.2). A
// uniform draw over all k paths kept the same path for one flowlet in k.
func TestFlowletGapChangesPath(t *testing.T) {
	for _, k := range []int{2, 3} {
		a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, K: k, Flowlets: true, FlowletGap: element.Millisecond})
		withPaths(a, env, threePaths)
		if e := a.table.Lookup(macB); e == nil || len(e.Paths) != k {
			t.Fatalf("k=%d: entry %+v", k, e)
		}
		data := wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, make([]byte, 40))
		first := func() uint8 { return firstTag(t, a, env, data) }
		prev := first()
		used := map[uint8]bool{prev: true}
		for i := range 60 {
			env.advance(2 * element.Millisecond)
			p := first()
			if p == prev {
				t.Fatalf("k=%d: flowlet %d kept path %d after a gap", k, i+1, p)
			}
			used[p], prev = true, p
		}
		if len(used) != k {
			t.Fatalf("k=%d: flowlets used %v", k, used)
		}
	}
}

// TestFlowKeepsPathWhileValid: the PathTable "binds a flow to a particular
// path" and flows choose a new one only "when the older path is
// invalidated" (DumbNet §5.2). A flow hash taken modulo the number of paths
// moved flows off healthy paths whenever a failure removed another one.
func TestFlowKeepsPathWhileValid(t *testing.T) {
	for _, flowlets := range []bool{false, true} {
		t.Run(fmt.Sprintf("flowlets=%v", flowlets), func(t *testing.T) { flowKeepsPath(t, flowlets) })
	}
}

// flowKeepsPath: within one flowlet (no time passes), likewise.
func flowKeepsPath(t *testing.T, flowlets bool) {
	a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, K: 3, Flowlets: flowlets})
	withPaths(a, env, threePaths) // leaving switch 1 by ports 2, 3 and 4
	if e := a.table.Lookup(macB); e == nil || len(e.Paths) != 3 {
		t.Fatalf("entry %+v, want 3 paths", e)
	}
	// 64 TCP flows, told apart by their source port.
	send := func(flow int) uint8 {
		ip := make([]byte, 40)
		ip[0], ip[9] = 0x45, 6
		copy(ip[12:16], []byte{10, 0, 0, 1})
		copy(ip[16:20], []byte{10, 0, 0, 2})
		ip[20], ip[21], ip[23] = byte(flow>>8), byte(flow), 80
		return firstTag(t, a, env, wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, ip))
	}
	before := make([]uint8, 64)
	on := map[uint8]int{}
	for f := range before {
		before[f] = send(1000 + f)
		on[before[f]]++
	}
	if on[2] == 0 || on[3]+on[4] == 0 {
		t.Fatalf("flows per first hop %v: want some on port 2 and some elsewhere", on)
	}
	// Switch 1's port 2 fails: the path via switch 2 is invalidated.
	a.Receive(1, portStatusFrame(1, 2, wire.PortDown, 4, 1))
	env.take()
	if e := a.table.Lookup(macB); e == nil || len(e.Paths) != 2 {
		t.Fatalf("entry after the failure %+v, want 2 paths", e)
	}
	for f, was := range before {
		got := send(1000 + f)
		switch {
		case got == 2:
			t.Errorf("flow %d still sent on the failed port", f)
		case was != 2 && got != was:
			t.Errorf("flow %d moved from healthy port %d to %d", f, was, got)
		}
	}
}

// TestFlowsBounded: the agent remembers at most maxFlows flows. A new
// flow past them gets no binding (counted) and takes its hash's path each
// time, while the flows remembered keep theirs: clearing the table, as
// before, moved active flows mid-flowlet (TestActiveFlowsSurviveFullFlowTable
// covers the ageing).
func TestFlowsBounded(t *testing.T) {
	a, _ := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, K: 3})
	e := &PathEntry{Paths: [][]uint8{{2, 1}, {3, 1}, {4, 1}}}
	frame := func(flow int) []byte {
		ip := make([]byte, 40)
		ip[0], ip[9] = 0x45, 17
		binary.BigEndian.PutUint32(ip[20:24], uint32(flow))
		return wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, ip)
	}
	first := a.choose(e, frame(0))
	for f := 1; f < maxFlows; f++ {
		a.choose(e, frame(f))
	}
	if len(a.flows) != maxFlows || a.Counters()["flows_unbound"] != 0 {
		t.Fatalf("%d flows, %d unbound; want %d and 0", len(a.flows), a.Counters()["flows_unbound"], maxFlows)
	}
	got, again := a.choose(e, frame(maxFlows)), a.choose(e, frame(maxFlows))
	if n := len(a.flows) + len(a.oldFlows); n != maxFlows || a.Counters()["flows_unbound"] != 2 || !bytes.Equal(got, again) {
		t.Fatalf("%d flows, %d unbound, the unbound flow took %v then %v; want %d, 2, one path", n, a.Counters()["flows_unbound"], got, again, maxFlows)
	}
	if got := a.choose(e, frame(0)); !bytes.Equal(got, first) {
		t.Fatalf("flow 0 came back on %v, want its binding %v", got, first)
	}
}

// DownVerLen reports how many switch ports the agent holds as booked down
// by a patch and not yet repaired (tests only).
func (a *Agent) DownVerLen() int { return len(a.downVer) }

// CacheLinkUp reports whether the agent's TopoCache knows the link on
// switch sw's port, and whether it holds it up (tests only).
func (a *Agent) CacheLinkUp(sw uint64, port uint16) (known, up bool) {
	i, ok := a.cache.g.idx[sw]
	if !ok {
		return false, false
	}
	pe := a.cache.g.peerOf(i, port)
	return pe.sw >= 0, pe.sw >= 0 && pe.up
}
