package dumbnet

// Tests from the second mutation sweep of the package: each pins an
// outcome that a mutant of agent.go, cache.go, controller.go,
// discovery.go, graph.go or pathgraph.go changed without any other test
// noticing.

import (
	"bytes"
	"net/netip"
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

// pmFrame is a PM from src with path and the tags left when it reached
// this host.
func pmFrame(src wire.MAC, seq uint32, path, tags []uint8) []byte {
	pm := wire.DumbNetProbe{Seq: seq, SrcMAC: src, SrcIP: ipB, Path: path}
	payload, _ := pm.AppendTo(nil)
	f := wire.AppendEthernet(nil, wire.Broadcast, src, wire.EtherTypeDumbNet, append(slices.Clone(tags), 0xff, 0x88, 0xb5))
	return append(f, payload...)
}

// noCtrlAgent is an agent attached to a fakeEnv that does not know the
// controller yet.
func noCtrlAgent(cfg Config) (*Agent, *fakeEnv) {
	a := NewAgent(cfg)
	env := newFakeEnv()
	a.Attach(env, []element.PortInfo{{Port: 1, Up: true}, {Port: 2, Up: true, Local: true}})
	return a, env
}

// frameTo is a DumbNet frame sent: its destination MAC and tags.
type frameTo struct {
	dst  wire.MAC
	tags []uint8
}

// framesTo decodes the frames sent.
func framesTo(t *testing.T, out []sent) []frameTo {
	t.Helper()
	var fs []frameTo
	for _, o := range out {
		tags, _, _, err := wire.ParseDumbNet(o.frame)
		if err != nil {
			t.Fatalf("sent a frame that is no DumbNet frame: %v", err)
		}
		fs = append(fs, frameTo{wire.Frame(o.frame).Dst(), slices.Clone(tags)})
	}
	return fs
}

// A flowlet ends only after more than FlowletGap of silence: a packet
// exactly FlowletGap after the last one stays on its path, one a
// nanosecond later starts a new flowlet on the other path.
func TestFlowletGapBoundary(t *testing.T) {
	a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, K: 2, Flowlets: true, FlowletGap: element.Millisecond})
	withPaths(a, env, twoPaths)
	data := wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, make([]byte, 40))
	first := func() uint8 { return firstTag(t, a, env, data) }
	p := first()
	env.advance(element.Millisecond)
	if q := first(); q != p || a.Counters()["flowlet_switches"] != 0 {
		t.Fatalf("a gap of exactly FlowletGap moved the flow from %d to %d", p, q)
	}
	env.advance(element.Millisecond + 1)
	if q := first(); q == p || a.Counters()["flowlet_switches"] != 1 {
		t.Fatalf("a gap past FlowletGap kept the flow on %d (flowlet_switches %d)", q, a.Counters()["flowlet_switches"])
	}
}

// At most QueueLen frames and QueueLen ARP requests wait for a path
// query; the rest are dropped and counted, and the ones held are all
// released by the answer.
func TestHoldQueueBound(t *testing.T) {
	a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, QueueLen: 2})
	data := wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, make([]byte, 40))
	for range 3 {
		a.hold(macB, netip.Addr{}, data, nil)
	}
	if c := a.Counters(); c["drop_queue_full"] != 1 || len(a.byDst[macB].frames) != 2 {
		t.Fatalf("3 frames held with QueueLen 2: drop_queue_full %d, held %d", c["drop_queue_full"], len(a.byDst[macB].frames))
	}
	req := wire.ARP{Op: wire.ARPRequest, SenderMAC: macA, SenderIP: ipA, TargetIP: ipB}
	for range 3 {
		a.hold(wire.MAC{}, ipB, nil, &req)
	}
	if c := a.Counters(); c["drop_queue_full"] != 2 || len(a.byIP[ipB].arps) != 2 {
		t.Fatalf("3 ARPs held with QueueLen 2: drop_queue_full %d, held %d", c["drop_queue_full"], len(a.byIP[ipB].arps))
	}
	env.take()
	reply(a, a.byDst[macB].id)
	a.pathReply(&wire.DumbNetPathReply{QueryID: a.byIP[ipB].id, Version: 1, Src: macA, Dst: macB, SrcSwitch: 0x10, SrcPort: 1, DstSwitch: 0x10, DstPort: 2})
	var nic, stack int
	for _, o := range env.take() {
		if o.port == 1 {
			nic++
		} else {
			stack++
		}
	}
	if nic != 2 || stack != 2 {
		t.Fatalf("released %d frames and %d ARP replies, want 2 and 2", nic, stack)
	}
}

// A query made before the host knows the controller waits for it without
// using up its retries: found 100 timeouts later, the controller gets the
// query at once and the frame goes out with its answer.
func TestQueryWaitsForController(t *testing.T) {
	a, env := noCtrlAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, QueryTimeout: element.Millisecond, QueryRetries: 2})
	a.Receive(2, wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, make([]byte, 40)))
	env.advance(100 * element.Millisecond)
	if out := env.take(); len(out) != 0 || a.byDst[macB] == nil || a.Counters()["drop_no_path"] != 0 {
		t.Fatalf("without a controller: sent %d frames, counters %v; want the query kept", len(out), a.Counters())
	}
	a.setController(macB, []uint8{3, 1})
	fs := framesTo(t, env.take())
	if len(fs) != 1 || fs[0].dst != macB || !bytes.Equal(fs[0].tags, []uint8{3, 1}) || a.Counters()["path_queries"] != 1 {
		t.Fatalf("on finding the controller sent %v, want the query along 3-1", fs)
	}
	reply(a, a.byDst[macB].id)
	if out := env.take(); len(out) != 1 || a.Counters()["tx_data"] != 1 {
		t.Fatalf("after the answer sent %d frames, want the held one", len(out))
	}
}

// Forged PMs get no answer: one whose tags left are its whole path (no
// switch popped any: not from the fabric), and one from a multicast
// source.
func TestProbeForgedShapesDropped(t *testing.T) {
	a, env := newTestAgent()
	a.Receive(1, pmFrame(macB, 5, []uint8{1, 4, 2}, []uint8{1, 4, 2}))
	if c := a.Counters(); c["drop_probe_inconsistent"] != 1 || c["probe_replies"] != 0 {
		t.Fatalf("PM with its whole path left: %v", c)
	}
	a.Receive(1, pmFrame(wire.MAC{0x03, 0, 0, 0, 0, 1}, 5, []uint8{1, 4, 2}, []uint8{2}))
	if c := a.Counters(); c["drop_bad_control"] != 1 || c["probe_replies"] != 0 {
		t.Fatalf("PM from a multicast MAC: %v", c)
	}
	if out := env.take(); len(out) != 0 || len(a.learned) != 0 {
		t.Fatalf("sent %d frames, learned %v", len(out), a.learned)
	}
}

// The return paths learnt from other hosts' PMs are bounded: past
// maxLearned probers a new one is answered but not remembered, and one
// already known still has its path updated.
func TestLearnedPathsBounded(t *testing.T) {
	a, _ := newTestAgent()
	mac := func(i int) wire.MAC { return wire.MAC{0x02, 0x10, 0, 0, byte(i >> 8), byte(i)} }
	for i := range maxLearned + 1 {
		a.Receive(1, pmFrame(mac(i), 1, []uint8{1, 2}, []uint8{2}))
	}
	if len(a.learned) != maxLearned || a.learned[mac(maxLearned)] != nil || a.Counters()["probe_replies"] != maxLearned+1 {
		t.Fatalf("learned %d paths (last prober's %v), %d replies; want %d, none, %d", len(a.learned), a.learned[mac(maxLearned)], a.Counters()["probe_replies"], maxLearned, maxLearned+1)
	}
	a.Receive(1, pmFrame(mac(7), 2, []uint8{1, 3}, []uint8{3}))
	if !bytes.Equal(a.learned[mac(7)], []uint8{3}) {
		t.Fatalf("known prober's path %v, want updated to [3]", a.learned[mac(7)])
	}
}

// The controller's announcement must come from the controller it names,
// and carry a path: anything else locates no controller.
func TestAnnouncementChecked(t *testing.T) {
	a, env := noCtrlAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1})
	a.Receive(1, ctrl(t, macA, macC, &wire.DumbNetProbeReply{HostMAC: macB, Controller: macB, Path: []uint8{1}}))
	if _, ok := a.ControllerMAC(); ok || a.Counters()["drop_unmatched_reply"] != 1 {
		t.Fatalf("announcement for B from C taken: %v", a.Counters())
	}
	a.Receive(1, ctrl(t, macA, macB, &wire.DumbNetProbeReply{HostMAC: macB, Controller: macB}))
	if _, ok := a.ControllerMAC(); ok {
		t.Fatal("announcement without a path taken")
	}
	// A search answer naming the zero MAC as host and controller.
	a.learnController(&wire.DumbNetProbeReply{}, []uint8{1})
	if _, ok := a.ControllerMAC(); ok {
		t.Fatal("the zero MAC taken as the controller")
	}
	a.Receive(1, ctrl(t, macA, macB, &wire.DumbNetProbeReply{HostMAC: macB, Controller: macB, Path: []uint8{4, 1}}))
	if m, ok := a.ControllerMAC(); !ok || m != macB || !bytes.Equal(a.ctrlPath, []uint8{4, 1}) {
		t.Fatalf("real announcement: controller %v %v path %v", m, ok, a.ctrlPath)
	}
	if out := env.take(); len(out) != 0 {
		t.Fatalf("sent %d frames", len(out))
	}
}

// A host that does not know the controller yet takes no reply, patch or
// neighbour list, not even from the zero MAC (which its unset controller
// address would otherwise match).
func TestControlFromZeroMACBeforeController(t *testing.T) {
	a, _ := noCtrlAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1})
	var zero wire.MAC
	a.Receive(1, ctrl(t, macA, zero, &wire.DumbNetTopoPatch{Version: 9, Links: []wire.DumbNetLink{{A: 1, APort: 1, B: 2, BPort: 1}}}))
	a.Receive(1, ctrl(t, macA, zero, &wire.DumbNetPathReply{QueryID: 1, Version: 9, Src: macA, Dst: macB}))
	a.Receive(1, ctrl(t, macA, zero, &wire.DumbNetNeighbors{Version: 9, Neighbors: []wire.DumbNetNeighbor{{MAC: macC, Path: []uint8{1}}}}))
	c := a.Counters()
	if c["drop_forged_patch"] != 1 || c["drop_forged_reply"] != 1 || c["drop_forged_neighbors"] != 1 || c["patches_applied"] != 0 || a.cache.version != 0 || a.neighbors != nil {
		t.Fatalf("counters %v, cache version %d, neighbours %v", c, a.cache.version, a.neighbors)
	}
}

// A host that finds no controller searches again after Search, then
// after twice as long each time, up to 30 s.
func TestSearchBackoff(t *testing.T) {
	a, env := noCtrlAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: 200 * element.Millisecond})
	env.advance(300 * element.Millisecond) // Search plus at most half of it in jitter
	want := []element.Time{200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000}
	for i, w := range want {
		w *= element.Millisecond
		if a.search == nil {
			t.Fatalf("search %d not running", i)
		}
		a.search.finish() // the whole fabric probed, no controller
		if a.searchBackoff != w || a.search != nil {
			t.Fatalf("exhausted search %d: backoff %v, want %v", i+1, a.searchBackoff, w)
		}
		env.advance(w - 1)
		if a.search != nil {
			t.Fatalf("search %d restarted before its %v backoff", i+2, w)
		}
		env.advance(1)
	}
	if c := a.Counters(); c["search_started"] != uint64(len(want)+1) || c["search_exhausted"] != uint64(len(want)) {
		t.Fatalf("counters %v", c)
	}
}

// A path reply is taken only for the query it answers: its destination
// (when the query named one) and its source must match.
func TestPathReplyMustMatchQuery(t *testing.T) {
	a, _ := newTestAgent()
	a.hold(macB, netip.Addr{}, nil, nil)
	id := a.byDst[macB].id
	bad := []*wire.DumbNetPathReply{
		{QueryID: id, Version: 1, Src: macA, Dst: macC, SrcSwitch: 0x10, SrcPort: 1, DstSwitch: 0x10, DstPort: 2},
		{QueryID: id, Version: 1, Src: macC, Dst: macB, SrcSwitch: 0x10, SrcPort: 1, DstSwitch: 0x10, DstPort: 2},
	}
	for i, r := range bad {
		a.pathReply(r)
		if a.Counters()["drop_unmatched_reply"] != uint64(i+1) || a.byDst[macB] == nil || a.table.Len() != 0 {
			t.Fatalf("reply %+v taken: %v", r, a.Counters())
		}
	}
	reply(a, id)
	if a.table.Lookup(macB) == nil || a.byDst[macB] != nil {
		t.Fatal("the matching reply not taken")
	}
}

// A reply of the same version as the flood neighbours the query left
// with is no sign of forgery: the list stays. A list of the version held
// (the controller's resend) is taken, not counted stale.
func TestNeighborsKeptOnEqualVersion(t *testing.T) {
	a, _ := newTestAgent()
	list := &wire.DumbNetNeighbors{Version: 1, Neighbors: []wire.DumbNetNeighbor{{MAC: macC, Path: []uint8{4}}}}
	a.setNeighbors(list)
	a.hold(macB, netip.Addr{}, nil, nil)
	reply(a, a.byDst[macB].id) // version 1
	if c := a.Counters(); c["neighbors_reset"] != 0 || len(a.neighbors) != 1 {
		t.Fatalf("neighbours %v after a reply of their version: %v", a.neighbors, c)
	}
	a.setNeighbors(list)
	if c := a.Counters(); c["neighbors_stale"] != 0 || len(a.neighbors) != 1 {
		t.Fatalf("resent list: %v", c)
	}
}

// After a version reset the host asks again for every other destination
// in its PathTable, not for the one whose answer it just took.
func TestVersionResetRequeriesOthersOnly(t *testing.T) {
	a, _ := newTestAgent()
	for _, dst := range []wire.MAC{macB, macC, macD} {
		a.hold(dst, netip.Addr{}, nil, nil)
		a.pathReply(&wire.DumbNetPathReply{QueryID: a.byDst[dst].id, Version: 5, Src: macA, Dst: dst, SrcSwitch: 0x10, SrcPort: 1, DstSwitch: 0x10, DstPort: 2})
	}
	a.hold(macB, netip.Addr{}, nil, nil)
	queries := a.Counters()["path_queries"]
	reply(a, a.byDst[macB].id) // version 1 < 5
	if c := a.Counters(); c["version_reset"] != 1 || c["path_queries"] != queries+2 {
		t.Fatalf("counters %v, want one reset and 2 queries", c)
	}
	if a.byDst[macB] != nil || a.byDst[macC] == nil || a.byDst[macD] == nil || a.table.Lookup(macB) == nil {
		t.Fatalf("outstanding B %v C %v D %v", a.byDst[macB], a.byDst[macC], a.byDst[macD])
	}
}

// A switch's notification sequence numbers wrap: 0 after 2^32-1 is new,
// 2^32-2 after it is old.
func TestPortStatusSeqWraps(t *testing.T) {
	a, _ := newTestAgent()
	a.Receive(1, portStatusFrame(1, 1, wire.PortDown, 4, ^uint32(0)))
	a.Receive(1, portStatusFrame(1, 1, wire.PortUp, 4, 0))
	if c := a.Counters(); c["notify_received"] != 2 || c["notify_duplicate"] != 0 || a.evState[portID{1, 1}] != wire.PortUp {
		t.Fatalf("after the wrap: %v", c)
	}
	a.Receive(1, portStatusFrame(1, 1, wire.PortDown, 4, ^uint32(0)-1))
	if c := a.Counters(); c["notify_received"] != 2 || c["notify_duplicate"] != 1 || a.evState[portID{1, 1}] != wire.PortUp {
		t.Fatalf("an old sequence number taken: %v", c)
	}
}

// The flood goes to each flood neighbour along both its routes, once,
// and never back to the host it came from or to its origin; the
// controller, a neighbour here, gets no third copy.
func TestFloodTargetsExact(t *testing.T) {
	a, env := newTestAgent()
	a.setNeighbors(&wire.DumbNetNeighbors{Version: 1, Neighbors: []wire.DumbNetNeighbor{
		{MAC: macB, Path: []uint8{5}, Alt: []uint8{6, 7}},
		{MAC: macC, Path: []uint8{8}},
		{MAC: macD, Path: []uint8{9}},
	}})
	a.Receive(1, ctrl(t, macA, macC, &wire.DumbNetHostNotify{Origin: macD, Seq: 1, SwitchID: 9, Port: 1, State: wire.PortDown}))
	fs := framesTo(t, env.take())
	want := []frameTo{{macB, []uint8{5}}, {macB, []uint8{6, 7}}}
	if len(fs) != len(want) {
		t.Fatalf("flooded %v, want %v", fs, want)
	}
	for i := range want {
		if fs[i].dst != want[i].dst || !bytes.Equal(fs[i].tags, want[i].tags) {
			t.Fatalf("flooded %v, want %v", fs, want)
		}
	}
}

// The flood reaches the controller along the PathTable's path when there
// is one (failed over already), not along the announced path, which may
// cross the failed link.
func TestFloodToControllerUsesTablePath(t *testing.T) {
	a, env := squareAgent(t, 1) // B is the controller, announced along 3-1
	a.Receive(1, portStatusFrame(2, 2, wire.PortDown, 4, 1))
	fs := framesTo(t, env.take())
	if len(fs) != 1 || fs[0].dst != macB || !bytes.Equal(fs[0].tags, []uint8{2, 2, 9}) {
		t.Fatalf("flooded %v, want one frame to B along the backup 2-2-9", fs)
	}
}

// A patch bringing a link up recomputes the entries (K = 1: the entry
// left its backup for the primary again) and forgets the host's down
// notification for the link, so that the next failure of it, whoever
// reports it, fails over again.
func TestPatchUpRecomputesAndRearms(t *testing.T) {
	a, _ := squareAgent(t, 1)
	a.Receive(1, portStatusFrame(2, 2, wire.PortDown, 4, 1))
	if e := a.table.Lookup(macB); e == nil || !bytes.Equal(e.Paths[0], []uint8{2, 2, 9}) {
		t.Fatalf("after the failure %+v", e)
	}
	a.topoPatch(&wire.DumbNetTopoPatch{Version: 2, Links: []wire.DumbNetLink{{A: 2, APort: 2, B: 4, BPort: 1, Flags: wire.LinkUp}}})
	if e := a.table.Lookup(macB); e == nil || len(e.Paths) != 1 || !bytes.Equal(e.Paths[0], []uint8{1, 2, 9}) {
		t.Fatalf("after the repair patch %+v, want the primary 1-2-9", e)
	}
	a.Receive(1, ctrl(t, macA, macC, &wire.DumbNetHostNotify{Origin: macC, Seq: 1, SwitchID: 2, Port: 2, State: wire.PortDown}))
	if e := a.table.Lookup(macB); e == nil || !bytes.Equal(e.Paths[0], []uint8{2, 2, 9}) || a.Counters()["failovers"] != 2 {
		t.Fatalf("second failure: entry %+v, failovers %d; want the backup, 2", e, a.Counters()["failovers"])
	}
}

// The MAC an ARP query resolved is remembered: the next request for the
// address is answered at once, without a query.
func TestARPAnsweredFromLearntAddress(t *testing.T) {
	a, env := newTestAgent()
	req := wire.ARP{Op: wire.ARPRequest, SenderMAC: macA, SenderIP: ipA, TargetIP: ipB}
	f, _ := wire.AppendARPFrame(nil, wire.Broadcast, 0, &req)
	a.Receive(2, f)
	reply(a, a.byIP[ipB].id)
	env.take()
	a.Receive(2, f)
	out := env.take()
	if len(out) != 1 || out[0].port != 2 || a.Counters()["path_queries"] != 1 || a.Counters()["arp_answered"] != 2 {
		t.Fatalf("second ARP: sent %v, counters %v; want an answer and no query", out, a.Counters())
	}
}

// discoveredController is the controller's agent, in a fakeEnv, whose
// discovery found exactly the topology spec describes, with the
// controller on the host at index ctrlHost of Expected's host list:
// discovery's records are filled in as the probes would have, and its
// end (the controller's graph, announcements, flood neighbours) runs for
// real. The frames that sends are taken.
func discoveredController(t testing.TB, spec string, ctrlHost int, cfg Config) (*Agent, *fakeEnv, *Topology) {
	t.Helper()
	want := expectedOf(t, spec)
	h := want.Hosts[ctrlHost]
	cfg.Name, cfg.MAC, cfg.IP, cfg.Controller, cfg.Search = "c", h.MAC, h.IP, true, -1
	a, env := attachedAgent(cfg)
	d := a.ctrl.disc
	d.stop()
	env.advance(element.Millisecond) // the root probes leave; the pacer stops
	d.addSwitch(h.Switch, nil, []uint8{uint8(h.Port)})
	for _, id := range want.Switches {
		if id != h.Switch {
			d.addSwitch(id, nil, nil)
		}
	}
	for _, l := range want.Links {
		d.links[l] = true
		d.sws[d.byID[l.A]].known[l.APort] = true
		d.sws[d.byID[l.B]].known[l.BPort] = true
	}
	for _, hl := range want.Hosts {
		d.hosts[hl.MAC] = hl
		d.byIP[netipKey(hl.IP.As16())] = hl.MAC
		d.sws[d.byID[hl.Switch]].known[hl.Port] = true
	}
	d.finish()
	if !a.ctrl.ready || a.ctrl.Topology().Diff(want) != nil {
		t.Fatalf("controller not set up: ready %v, diff %v", a.ctrl.ready, a.ctrl.Topology().Diff(want))
	}
	env.take()
	return a, env, want
}

// ctrlLink is the controller's graph index and port of one end of l.
func ctrlLink(c *Controller, l Link) (int32, uint16) { return c.g.idx[l.A], l.APort }

// After a change the controller announces itself again only to the hosts
// whose path to it changed, and gives every host a flood-neighbour list
// of the new version.
func TestReannounceOnlyChangedPaths(t *testing.T) {
	a, _, want := discoveredController(t, "fattree:4", 0, Config{})
	c := a.ctrl
	before := map[wire.MAC][]uint8{}
	for m, h := range c.hosts {
		before[m] = h.ann
	}
	// The tree link above the aggregation switch on the way to the
	// farthest host: a core link.
	far := want.Hosts[len(want.Hosts)-1]
	agg := c.tree[c.g.idx[far.Switch]].sw
	up := c.tree[agg]
	lists := a.Counters()["ctrl_neighbor_lists"]
	c.setLink(up.sw, up.out, false)
	changed := 0
	for m, h := range c.hosts {
		if !slices.Equal(before[m], h.ann) {
			changed++
		}
		if h.nbrs == nil || h.nbrs.Version != c.version {
			t.Fatalf("host %v holds neighbour list %+v, want version %d", m, h.nbrs, c.version)
		}
	}
	cc := a.Counters()
	if changed == 0 || changed >= len(c.hosts)-1 || cc["ctrl_reannounced"] != uint64(changed) {
		t.Fatalf("ctrl_reannounced %d, %d of %d hosts' paths changed", cc["ctrl_reannounced"], changed, len(c.hosts))
	}
	if cc["ctrl_neighbor_lists"] != lists+uint64(len(c.hosts)) {
		t.Fatalf("ctrl_neighbor_lists %d, want %d more", cc["ctrl_neighbor_lists"], len(c.hosts))
	}
}

// A down check sends its linkCheckTries probes at once and books the link
// one probe wait after the last of them leaves; the probes queued ahead
// delay that. Three reports at once: the first link's probes go at 0 (the
// pacer was idle), gap and 2·gap, and it is booked at 3·gap+wait (the
// bound assumes the pacer had just sent); the second's, queued behind two,
// leave by 5·gap, booked at 5·gap+wait; the third's by 8·gap, booked at
// 8·gap+wait. Sent one try after another, the first link was booked three
// waits in; with one probe each, at gap+wait, 2·gap+wait and 3·gap+wait.
func TestCheckDownWaitsForProbesAhead(t *testing.T) {
	a, env, want := discoveredController(t, "fattree:4", 0, Config{})
	c := a.ctrl
	t0 := env.now
	for _, l := range want.Links[:3] {
		c.linkEvent(l.A, l.APort, false)
	}
	out := func() (n int) {
		for _, rec := range c.disc.pending {
			if rec.kind == kindLinkDown {
				n++
			}
		}
		return n
	}
	if n := out(); n != 3*linkCheckTries {
		t.Fatalf("%d link-down probes out, want %d", n, 3*linkCheckTries)
	}
	gap, wait := c.disc.gap, c.disc.wait()
	for i, at := range []element.Time{3*gap + wait, 5*gap + wait, 8*gap + wait} {
		env.advance(t0 + at - 1 - env.now)
		if n := a.Counters()["ctrl_link_down_confirmed"]; n != uint64(i) {
			t.Fatalf("%d links booked down just before %v, want %d", n, at, i)
		}
		env.advance(1)
		if n := a.Counters()["ctrl_link_down_confirmed"]; n != uint64(i+1) {
			t.Fatalf("%d links booked down at %v, want %d", n, at, i+1)
		}
		if n := out(); n != (2-i)*linkCheckTries {
			t.Fatalf("%d link-down probes out after %d links booked, want %d", n, i+1, (2-i)*linkCheckTries)
		}
	}
}

// Reports that a link is back from both its ends draw one verification
// (its two probes: back to the reporting switch, and the far end's ID); a
// report and its withdrawal leave no probe record behind.
func TestLinkChecksDeduplicated(t *testing.T) {
	a, env, want := discoveredController(t, "fattree:4", 0, Config{})
	c := a.ctrl
	l := want.Links[0]
	i, p := ctrlLink(c, l)
	c.setLink(i, p, false)
	probes := c.Probes()
	c.linkEvent(l.A, l.APort, true)
	c.linkEvent(l.B, l.BPort, true)
	env.advance(10 * c.disc.gap) // the pacer sends what was queued
	if n := c.Probes() - probes; n != 2 || len(c.upChecks) != 1 {
		t.Fatalf("%d probes, %d checks for one link reported up twice, want 2, 1", n, len(c.upChecks))
	}
	l2 := want.Links[1]
	c.linkEvent(l2.B, l2.BPort, false)
	c.linkEvent(l2.A, l2.APort, true)
	if a.Counters()["ctrl_link_down_withdrawn"] != 1 {
		t.Fatalf("counters %v, want the down check withdrawn", a.Counters())
	}
	for seq, rec := range c.disc.pending {
		if rec.kind == kindLinkDown {
			t.Fatalf("withdrawn check's probe %d still pending", seq)
		}
	}
}

// A link cabled between two ports of one switch has one key from either
// end, so that reports from both meet in one check.
func TestLinkKeySelfLoop(t *testing.T) {
	a := NewAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true})
	c := a.ctrl
	c.g = newNetGraph()
	c.g.addSwitch(7)
	c.g.addLink(0, 2, 0, 5, true, 0)
	if k1, k2 := c.linkKey(0, 2), c.linkKey(0, 5); k1 != k2 || k1 != (portID{7, 2}) {
		t.Fatalf("keys %v and %v, want both {7 2}", k1, k2)
	}
}

// A link reported down on a switch the controller can no longer reach
// (no way to send the check) is booked down at once.
func TestCheckDownUnreachableBookedAtOnce(t *testing.T) {
	a, _, want := discoveredController(t, "line:4", 0, Config{})
	c := a.ctrl
	root := want.Hosts[0].Switch
	var cut, far Link
	for _, l := range want.Links {
		if l.A == root || l.B == root {
			cut = l
		} else {
			far = l
		}
	}
	// far must not be adjacent to the root (line:4 has two such links).
	if far.A == root || far.B == root || cut == (Link{}) {
		t.Fatalf("links %v", want.Links)
	}
	i, p := ctrlLink(c, cut)
	c.setLink(i, p, false)
	v := c.version
	j, q := ctrlLink(c, far)
	c.linkEvent(far.A, far.APort, false)
	if c.version != v+1 || c.g.peerOf(j, q).up {
		t.Fatalf("version %d (was %d), link up %v: want it booked down at once", c.version, v, c.g.peerOf(j, q).up)
	}
}

// Flood-neighbour lists name no host the controller cannot reach.
func TestNeighborsSkipUnreachableSwitches(t *testing.T) {
	a, _, want := discoveredController(t, "line:3", 0, Config{})
	c := a.ctrl
	root := want.Hosts[0].Switch
	var cut Link
	for _, l := range want.Links {
		if l.A != root && l.B != root {
			cut = l
		}
	}
	i, p := ctrlLink(c, cut)
	c.setLink(i, p, false)
	c.refreshTree()
	for m, h := range c.hosts {
		if c.treeDist[h.at.sw] < 0 {
			continue
		}
		for _, nb := range h.nbrs.Neighbors {
			if c.treeDist[c.hosts[nb.MAC].at.sw] < 0 {
				t.Fatalf("host %v has unreachable neighbour %v in %+v", m, nb.MAC, h.nbrs)
			}
		}
	}
}

// At most maxDeferred queries wait for discovery to end.
func TestDeferredQueriesBounded(t *testing.T) {
	a, _ := attachedAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true})
	for i := range maxDeferred + 1 {
		a.ctrl.query(&wire.DumbNetPathQuery{QueryID: uint32(i + 1), Src: macB, Dst: macC})
	}
	if len(a.ctrl.deferred) != maxDeferred || a.Counters()["ctrl_query_dropped"] != 1 {
		t.Fatalf("%d deferred, ctrl_query_dropped %d; want %d, 1", len(a.ctrl.deferred), a.Counters()["ctrl_query_dropped"], maxDeferred)
	}
}

// A rescan for missed hosts sends one host probe to every port where
// discovery found nothing, and nothing else; rescans start at most once
// per max(1 s, 10 probe timeouts), one exactly that long after the last
// allowed; a rescan's end keeps the links booked down down, and the
// first discovery's end time.
func TestHostRescan(t *testing.T) {
	a, env, want := discoveredController(t, "fattree:4", 0, Config{MaxPorts: 6, ProbeTimeout: 200 * element.Millisecond})
	c := a.ctrl
	doneAt := c.DoneAt()
	l := want.Links[0]
	i, p := ctrlLink(c, l)
	c.setLink(i, p, false)
	probes := c.Probes()
	stranger := wire.MAC{0x02, 0xee, 0, 0, 0, 1}
	start := env.now
	c.heardFrom(stranger)
	env.advance(element.Second)
	// fattree:4's 20 switches use 4 ports each: ports 5 and 6 are empty.
	if n := c.Probes() - probes; n != 40 || a.Counters()["ctrl_host_rescans"] != 1 {
		t.Fatalf("rescan sent %d probes (ctrl_host_rescans %d), want 40 host probes", n, a.Counters()["ctrl_host_rescans"])
	}
	if c.disc.running || c.Topology().Links[0].Up || c.g.peerOf(c.g.idx[l.A], l.APort).up {
		t.Fatalf("after the rescan: running %v, link %v up %v", c.disc.running, l, c.Topology().Links[0].Up)
	}
	if c.DoneAt() != doneAt {
		t.Fatalf("DoneAt moved from %v to %v", doneAt, c.DoneAt())
	}
	env.advance(start + 2*element.Second - 1 - env.now)
	c.heardFrom(stranger)
	if n := a.Counters()["ctrl_host_rescans"]; n != 1 {
		t.Fatalf("a rescan 2 s - 1 ns after the last: ctrl_host_rescans %d", n)
	}
	env.advance(1)
	c.heardFrom(stranger)
	if n := a.Counters()["ctrl_host_rescans"]; n != 2 {
		t.Fatalf("a rescan 2 s after the last: ctrl_host_rescans %d", n)
	}
}

// probeEcho is a switch's answer to the controller's pending probe seq,
// naming switch id.
func probeEcho(t *testing.T, a *Agent, seq uint32, id uint64) []byte {
	t.Helper()
	rec, ok := a.ctrl.disc.pending[seq]
	if !ok {
		t.Fatalf("probe %d not pending", seq)
	}
	echo, _ := (&wire.DumbNetProbe{Seq: seq, SrcMAC: a.mac, Path: slices.Clone(a.ctrl.disc.pathOf(rec))}).AppendTo(nil)
	return ctrl(t, a.mac, macB, &wire.DumbNetSwitchID{SwitchID: id, Echo: echo})
}

// A link check is settled only by the switch it must reach: an answer
// naming another switch neither verifies a link reported up (its probe
// back to the reporting switch answered by the far end, its probe of the
// far end by the reporting switch) nor refutes one reported down.
func TestLinkCheckAnswerFromWrongSwitch(t *testing.T) {
	a, env, want := discoveredController(t, "fattree:4", 0, Config{})
	c := a.ctrl
	l := want.Links[0]
	i, p := ctrlLink(c, l)
	c.setLink(i, p, false)
	v := c.version
	c.linkEvent(l.A, l.APort, true)
	a.Receive(1, probeEcho(t, a, c.disc.seq-1, l.B))
	a.Receive(1, probeEcho(t, a, c.disc.seq, l.A))
	if c.version != v || c.g.peerOf(i, p).up {
		t.Fatal("a link reported up verified by the wrong switches' answers")
	}
	env.advance(2*c.disc.gap + c.disc.wait())
	if a.Counters()["ctrl_link_up_retried"] != 1 {
		t.Fatalf("counters %v, want the verification retried", a.Counters())
	}
	a.Receive(1, probeEcho(t, a, c.disc.seq-1, l.A))
	if c.version != v || c.g.peerOf(i, p).up {
		t.Fatal("the link verified without its far end's ID")
	}
	a.Receive(1, probeEcho(t, a, c.disc.seq, l.B))
	if c.version != v+1 || !c.g.peerOf(i, p).up {
		t.Fatal("the right answers did not verify the link")
	}
	l2 := want.Links[1]
	ahead := len(c.disc.queue) - c.disc.qhead // the retry's second probe, still queued
	c.linkEvent(l2.A, l2.APort, false)
	for s := range uint32(linkCheckTries) {
		a.Receive(1, probeEcho(t, a, c.disc.seq-s, l2.B))
	}
	env.advance(scale(ahead+linkCheckTries, c.disc.gap) + c.disc.wait())
	if cc := a.Counters(); cc["ctrl_link_down_refuted"] != 0 || cc["ctrl_link_down_confirmed"] != 1 {
		t.Fatalf("counters %v: want the wrong switch's answer ignored and the link booked down", cc)
	}
}

// A verification answered after a rescan round ended (the round does not
// own it) still verifies the link, at the first try.
func TestLinkCheckOutlivesRescanRound(t *testing.T) {
	a, env, want := discoveredController(t, "fattree:4", 0, Config{MaxPorts: 6})
	c := a.ctrl
	l := want.Links[0]
	i, p := ctrlLink(c, l)
	c.setLink(i, p, false)
	c.heardFrom(wire.MAC{0x02, 0xee, 0, 0, 0, 1})
	env.advance(element.Millisecond) // the rescan's 40 probes are out
	c.linkEvent(l.A, l.APort, true)
	seq := c.disc.seq
	back, id := probeEcho(t, a, seq-1, l.A), probeEcho(t, a, seq, l.B)
	env.advance(c.disc.wait() + 3*c.disc.gap/2) // the second probe left a gap after the first
	if c.disc.running || c.disc.rounds.Load() != 1 {
		t.Fatalf("the rescan round has not ended (running %v)", c.disc.running)
	}
	a.Receive(1, back)
	a.Receive(1, id)
	if !c.Topology().Links[0].Up || a.Counters()["ctrl_link_up_retried"] != 0 {
		t.Fatalf("link up %v, counters %v: want it verified by the first answer", c.Topology().Links[0].Up, a.Counters())
	}
}

// With no switch answering, discovery starts over 100 probe timeouts
// after its round ended.
func TestDiscoveryRetryWithoutSwitch(t *testing.T) {
	a, env := attachedAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true, MaxPorts: 4})
	c := a.ctrl
	env.advance(60 * element.Millisecond)
	if c.Probes() != 4 || a.Counters()["discovery_no_switch"] != 1 {
		t.Fatalf("probes %d, counters %v", c.Probes(), a.Counters())
	}
	env.advance(5*element.Second - 10*element.Millisecond) // the round ended at 50.03ms
	if c.Probes() != 4 {
		t.Fatalf("started over after %v: %d probes", env.now, c.Probes())
	}
	env.advance(element.Millisecond)
	if c.Probes() != 8 {
		t.Fatalf("not started over by %v: %d probes", env.now, c.Probes())
	}
}

// A round ends once nothing was sent or answered for max(probe timeout,
// 3 × the slowest answer's round trip).
func TestRoundStretchedByAnswers(t *testing.T) {
	a, env := attachedAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true, MaxPorts: 4})
	d := a.ctrl.disc
	env.advance(40 * element.Millisecond)
	d.answered(probeRec{sent: 0}) // a 40 ms round trip, answered now
	if d.wait() != 120*element.Millisecond {
		t.Fatalf("wait %v, want 120ms", d.wait())
	}
	env.advance(119 * element.Millisecond)
	if d.rounds.Load() != 0 {
		t.Fatalf("round ended at %v, before 40ms + 120ms", env.now)
	}
	env.advance(2 * element.Millisecond)
	if d.rounds.Load() != 1 {
		t.Fatalf("round not ended at %v", env.now)
	}
}

// However slow an answer (one to a host probe long after its round, which
// any host can send under a made-up MAC), the waits it stretches stay
// within maxStretch probe timeouts: a 10 s round trip made every round,
// link check and audit wait 30 s before booking a failure.
func TestStretchCapped(t *testing.T) {
	a, env := attachedAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true, MaxPorts: 4})
	d := a.ctrl.disc
	env.advance(10 * element.Second)
	d.expired[7] = env.now - 10*element.Second
	d.late(7) // a round trip of 10 s
	if d.maxRTT != 10*element.Second {
		t.Fatalf("slowest round trip %v, want 10s", d.maxRTT)
	}
	if d.wait() != 20*d.timeout || d.timeout != 50*element.Millisecond {
		t.Fatalf("wait %v after a 10 s answer, want 20 probe timeouts (1s)", d.wait())
	}
}

// Sequence number 0 is the controller's announcement: probes skip it
// when the counter wraps.
func TestProbeSeqSkipsZero(t *testing.T) {
	a, _ := noCtrlAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1})
	d := newDiscovery(a, true)
	d.seq = ^uint32(0)
	if _, ok := d.build(probeRec{kind: kindRoot, p: 1}); !ok {
		t.Fatal("probe not built")
	}
	if _, zero := d.pending[0]; zero || d.seq != 1 {
		t.Fatalf("seq %d, pending %v: want 0 skipped", d.seq, d.pending)
	}
}

// The first switch is the one whose answer came first; a second root
// answer is counted and ignored, and an echo whose path is not its
// probe's is no answer.
func TestRootAnswers(t *testing.T) {
	a, _ := attachedAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true, MaxPorts: 4})
	d := a.ctrl.disc
	wrong, _ := (&wire.DumbNetProbe{Seq: 1, SrcMAC: macA, Path: slices.Clone(d.pathOf(d.pending[2]))}).AppendTo(nil)
	a.Receive(1, ctrl(t, macA, macB, &wire.DumbNetSwitchID{SwitchID: 6, Echo: wrong}))
	if len(d.sws) != 0 || a.Counters()["drop_unmatched_reply"] != 1 {
		t.Fatalf("echo of another probe's path taken: %d switches", len(d.sws))
	}
	a.Receive(1, probeEcho(t, a, 1, 7))
	a.Receive(1, probeEcho(t, a, 2, 8))
	if len(d.sws) != 1 || d.sws[0].id != 7 || a.Counters()["root_duplicate"] != 1 || d.hosts[macA].Port != 1 {
		t.Fatalf("switches %d, counters %v", len(d.sws), a.Counters())
	}
}

// Parallel links to one neighbour pair up in port order on both sides,
// whatever order the bounces were recorded in.
func TestParallelLinksPairedInPortOrder(t *testing.T) {
	a, _ := noCtrlAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1})
	for range 30 {
		d := newDiscovery(a, false)
		s := d.addSwitch(1, nil, []uint8{1})
		s.verified = map[uint16]map[uint16]uint64{2: {5: 9, 4: 9}, 3: {4: 9, 5: 9}}
		d.resolve(0)
		want := map[Link]bool{
			{A: 1, APort: 2, B: 9, BPort: 4, Up: true}: true,
			{A: 1, APort: 3, B: 9, BPort: 5, Up: true}: true,
		}
		if !s.known[2] || !s.known[3] || !d.sws[d.byID[9]].known[4] || !d.sws[d.byID[9]].known[5] {
			t.Fatalf("ports of the links not known: %v, %v", s.known, d.sws[d.byID[9]].known)
		}
		if len(d.links) != 2 || !d.links[normLink(Link{A: 1, APort: 2, B: 9, BPort: 4, Up: true})] || !d.links[normLink(Link{A: 1, APort: 3, B: 9, BPort: 5, Up: true})] {
			t.Fatalf("links %v, want %v", d.links, want)
		}
	}
}

// A host answer claiming a MAC placed on another port of the same switch,
// or an IP another MAC holds, places nothing.
func TestHostIdentityConflicts(t *testing.T) {
	a, _ := noCtrlAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1})
	d := newDiscovery(a, false)
	s := d.addSwitch(1, nil, []uint8{1})
	d.addHost(s, 2, wire.DumbNetProbeReply{HostMAC: macB, HostIP: ipB})
	d.addHost(s, 3, wire.DumbNetProbeReply{HostMAC: macB, HostIP: ipB})
	d.addHost(s, 4, wire.DumbNetProbeReply{HostMAC: macC, HostIP: ipB})
	if a.Counters()["drop_identity_conflict"] != 2 || len(d.hosts) != 1 || d.hosts[macB].Port != 2 || s.known[3] || s.known[4] {
		t.Fatalf("hosts %v, counters %v", d.hosts, a.Counters())
	}
}

// The primary path is drawn at random among the shortest ones.
func TestPrimaryRandomAmongEqual(t *testing.T) {
	g := newNetGraph()
	for id := range uint64(4) {
		g.addSwitch(id + 1)
	}
	g.addLink(0, 1, 1, 1, true, 0)
	g.addLink(1, 2, 3, 1, true, 0)
	g.addLink(0, 2, 2, 1, true, 0)
	g.addLink(2, 2, 3, 2, true, 0)
	var sc scratch
	rng := newFakeEnv().rng
	seen := map[int32]int{}
	for range 64 {
		seen[g.shortest(&sc, 0, 3, rng, nil)[1].sw]++
	}
	if len(seen) != 2 {
		t.Fatalf("middle switches drawn %v, want both", seen)
	}
}

// setUp reports a change only: the same state again is none.
func TestSetUpReportsChangeOnly(t *testing.T) {
	c := NewTopoCache()
	c.Merge(twoSwitchReply(1, true))
	if c.SetLink(1, 3, true) || !c.SetLink(1, 3, false) || c.SetLink(2, 4, false) || !c.SetLink(2, 4, true) {
		t.Fatal("SetLink reported a change that was none, or missed one")
	}
	if keyOf(0, 5, 0, 3) != keyOf(0, 3, 0, 5) {
		t.Fatal("a link between two ports of one switch has two keys")
	}
}

// Algorithm 1's last windows end at the destination: a detour around the
// primary's last two hops is found; and a one-hop primary has a window
// too (a triangle's third switch is a detour).
func TestDetoursReachDestination(t *testing.T) {
	g := newNetGraph()
	for i := range 6 {
		g.addSwitch(uint64(i + 1))
	}
	for i := range 4 {
		g.addLink(int32(i), 1, int32(i+1), 2, true, 0)
	}
	g.addLink(2, 3, 5, 1, true, 0)
	g.addLink(4, 3, 5, 2, true, 0)
	var sc scratch
	primary := []hop{{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 0}}
	if d := g.detourSet(&sc, primary, 2, 0); !d[5] {
		t.Fatalf("D = %v, want switch 5 (p2-x-p4)", d)
	}
	tri := newNetGraph()
	for i := range 3 {
		tri.addSwitch(uint64(i + 1))
	}
	tri.addLink(0, 1, 1, 1, true, 0)
	tri.addLink(0, 2, 2, 1, true, 0)
	tri.addLink(1, 2, 2, 2, true, 0)
	if d := tri.detourSet(&sc, []hop{{0, 1}, {1, 0}}, 2, 0); !d[2] {
		t.Fatalf("D = %v, want the triangle's third switch", d)
	}
}

// The TopoCache's version never goes back: a reply older than a patch
// already applied leaves it, so a later reply still older than the patch
// does not revive the link the patch failed.
func TestCacheVersionNeverDecreases(t *testing.T) {
	c := NewTopoCache()
	c.Merge(twoSwitchReply(3, true))
	c.version = 5 // the patch that fails it (applied as topoPatch does: version first)
	c.SetLink(1, 3, false)
	c.Merge(twoSwitchReply(3, true))
	c.Merge(twoSwitchReply(4, true))
	if _, err := c.FindPath(macB, nil); err == nil || c.version != 5 {
		t.Fatalf("version %d, path err %v: want 5 and the link still down", c.version, err)
	}
}

// The path verifier takes at most DumbNetMaxTags tags, even where the
// cache's links would loop that far.
func TestVerifyTagBound(t *testing.T) {
	c := NewTopoCache()
	c.Merge(twoSwitchReply(1, true))
	loop := func(n int) []uint8 { // 3,4 repeated: switch 1 to 2 and back
		var tags []uint8
		for range n {
			tags = append(tags, 3, 4)
		}
		return append(tags, 3, 5)
	}
	if err := c.Verify(loop(wire.DumbNetMaxTags/2-1), macB); err != nil {
		t.Fatalf("%d tags: %v", wire.DumbNetMaxTags, err)
	}
	if err := c.Verify(loop(wire.DumbNetMaxTags/2), macB); err == nil {
		t.Fatalf("%d tags verified", wire.DumbNetMaxTags+2)
	}
}

// A round does not end while the pacer still has probes to send, however
// long the gap between them.
func TestRoundWaitsForPacer(t *testing.T) {
	a, env := attachedAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true, MaxPorts: 4,
		ProbeGap: 100 * element.Millisecond, ProbeTimeout: 50 * element.Millisecond})
	env.advance(340 * element.Millisecond)
	if d := a.ctrl.disc; d.rounds.Load() != 0 || d.probes.Load() != 4 {
		t.Fatalf("at %v: %d rounds, %d probes; want the round still open after the 4th probe at 300ms", env.now, d.rounds.Load(), d.probes.Load())
	}
	env.advance(120 * element.Millisecond) // the pacer finds nothing at 400ms
	if a.ctrl.disc.rounds.Load() != 1 {
		t.Fatalf("round not ended at %v", env.now)
	}
}

// A failure that leaves an entry one of its paths keeps that path: the
// backup takes over only when none is left (DumbNet §5.2).
func TestFailoverKeepsLastPathOverBackup(t *testing.T) {
	k := Link{A: 1, APort: 3, B: 2, BPort: 4}
	other := Link{A: 1, APort: 5, B: 3, BPort: 1}
	e := &PathEntry{Paths: [][]uint8{{3, 5}, {5, 2, 5}}, routes: []routeRec{{links: []Link{k}}, {links: []Link{other}}},
		Backup: []uint8{7, 2, 5}, backup: routeRec{links: []Link{{A: 1, APort: 7, B: 4, BPort: 1}}}}
	changed, ok := e.failover(k)
	if !changed || !ok || len(e.Paths) != 1 || !slices.Equal(e.Paths[0], []uint8{5, 2, 5}) || !slices.Equal(e.Backup, []uint8{7, 2, 5}) {
		t.Fatalf("changed %v ok %v paths %v backup %v; want the path left kept", changed, ok, e.Paths, e.Backup)
	}
}

// An MPLS-encoded data frame is delivered only to the host it is for.
func TestMPLSFrameForOtherHostDropped(t *testing.T) {
	a, env := newTestAgent()
	frame := func(dst wire.MAC) []byte {
		ip := make([]byte, 40)
		ip[0] = 0x45
		f, err := wire.DumbNetMPLSPush(wire.AppendEthernet(nil, dst, macB, wire.EtherTypeIPv4, ip), []uint8{2})
		if err != nil {
			t.Fatal(err)
		}
		if _, f, err = wire.DumbNetMPLSPop(f); err != nil { // the switch's hop
			t.Fatal(err)
		}
		return f
	}
	a.Receive(1, frame(macC))
	if c := a.Counters(); c["drop_not_for_us"] != 1 || c["rx_data"] != 0 || len(env.take()) != 0 {
		t.Fatalf("MPLS frame for C: %v", c)
	}
	a.Receive(1, frame(macA))
	if out := env.take(); len(out) != 1 || out[0].port != 2 || a.Counters()["rx_data"] != 1 {
		t.Fatalf("MPLS frame for A: sent %v, counters %v", out, a.Counters())
	}
}
