package dumbnet

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

var (
	macC = wire.MAC{0x02, 0, 0, 0, 0, 0xc}
	macD = wire.MAC{0x02, 0, 0, 0, 0, 0xd}
)

func portStatusFrame(sw uint64, port uint16, st wire.PortState, hops uint8, seq uint32) []byte {
	m := wire.DumbNetPortStatus{SwitchID: sw, Port: port, State: st, HopLimit: hops, Seq: seq}
	f, _ := wire.AppendControlFrame(nil, wire.Broadcast, macB, &m)
	return f
}

// A port reported down again by its switch (a new sequence number, the
// same state) is news to nobody: it is neither flooded nor failed over
// again, and does not count as a new stage-1 notification.
func TestAgentRepeatedPortStateNotReflooded(t *testing.T) {
	a, env := squareAgent(t, 4)
	env.advance(element.Millisecond)
	a.Receive(1, portStatusFrame(1, 2, wire.PortDown, 4, 1))
	if out := env.take(); len(out) != 1 {
		t.Fatalf("first report flooded %d frames, want 1 (to the controller)", len(out))
	}
	first, _ := a.Notified()
	c := a.Counters()
	env.advance(element.Millisecond)
	a.Receive(1, portStatusFrame(1, 2, wire.PortDown, 4, 2))
	if out := env.take(); len(out) != 0 {
		t.Fatalf("repeated state flooded %d frames", len(out))
	}
	c2 := a.Counters()
	if c2["notify_received"] != 2 || c2["notify_flooded"] != c["notify_flooded"] || c2["failovers"] != c["failovers"] {
		t.Fatalf("before %v, after %v: want the second report received and nothing else", c, c2)
	}
	if at, _ := a.Notified(); at != first {
		t.Fatalf("stage-1 time moved from %v to %v on a repeat", first, at)
	}
}

// A failure that leaves an entry K paths (here it cut only the backup
// path) keeps the entry as it is: it is not recomputed from the cache
// (which a patch has meanwhile moved to version 2).
func TestAgentEntryWithKPathsNotRefilled(t *testing.T) {
	a, _ := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, K: 2})
	a.hold(macC, netip.Addr{}, nil, nil)
	// Two 2-hop paths from switch 1 to 4 (via 2 and via 5), and a 3-hop
	// backup via 3 and 6.
	links := []wire.DumbNetLink{
		{A: 1, APort: 1, B: 2, BPort: 1, Flags: wire.LinkUp | wire.LinkPrimary},
		{A: 2, APort: 2, B: 4, BPort: 1, Flags: wire.LinkUp | wire.LinkPrimary},
		{A: 1, APort: 3, B: 5, BPort: 1, Flags: wire.LinkUp | wire.LinkDetour},
		{A: 5, APort: 2, B: 4, BPort: 3, Flags: wire.LinkUp | wire.LinkDetour},
		{A: 1, APort: 2, B: 3, BPort: 1, Flags: wire.LinkUp | wire.LinkBackup},
		{A: 3, APort: 2, B: 6, BPort: 1, Flags: wire.LinkUp | wire.LinkBackup},
		{A: 6, APort: 2, B: 4, BPort: 2, Flags: wire.LinkUp | wire.LinkBackup},
	}
	a.pathReply(&wire.DumbNetPathReply{QueryID: a.qid, Version: 1, Src: macA, Dst: macC, SrcSwitch: 1, SrcPort: 9, DstSwitch: 4, DstPort: 9, Links: links})
	e := a.table.Lookup(macC)
	if e == nil || len(e.Paths) != 2 || !bytes.Equal(e.Backup, []uint8{2, 2, 2, 9}) {
		t.Fatalf("entry %+v", e)
	}
	paths := [][]uint8{e.Paths[0], e.Paths[1]}
	a.topoPatch(&wire.DumbNetTopoPatch{Version: 2, Links: []wire.DumbNetLink{{A: 3, APort: 2, B: 6, BPort: 1}}})
	if a.Counters()["failovers"] != 1 {
		t.Fatalf("failovers = %d, want 1", a.Counters()["failovers"])
	}
	got := a.table.Lookup(macC)
	if got != e || got.Version != 1 || got.Backup != nil || len(got.Paths) != 2 ||
		!bytes.Equal(got.Paths[0], paths[0]) || !bytes.Equal(got.Paths[1], paths[1]) {
		t.Fatalf("entry %+v (same %v), want the version-1 entry kept without its backup", got, got == e)
	}
}

// The cache started over (version_reset) and holds only the answering
// destination's graph; another destination's entry keeps working until
// its new answer. A failure that cuts one of its paths cannot be refilled
// from the cache, but the entry keeps the path left: only an entry with
// no path left is dropped and asked for again.
func TestAgentEntryKeepsPathLeftWhenRefillFails(t *testing.T) {
	a, _ := newTestAgent()
	a.hold(macC, netip.Addr{}, nil, nil)
	square := []wire.DumbNetLink{
		{A: 1, APort: 1, B: 2, BPort: 1, Flags: wire.LinkUp | wire.LinkPrimary},
		{A: 2, APort: 2, B: 4, BPort: 1, Flags: wire.LinkUp | wire.LinkPrimary},
		{A: 1, APort: 2, B: 3, BPort: 1, Flags: wire.LinkUp | wire.LinkBackup},
		{A: 3, APort: 2, B: 4, BPort: 2, Flags: wire.LinkUp | wire.LinkBackup},
	}
	a.pathReply(&wire.DumbNetPathReply{QueryID: a.byDst[macC].id, Version: 5, Src: macA, Dst: macC, SrcSwitch: 1, SrcPort: 9, DstSwitch: 4, DstPort: 9, Links: square})
	if e := a.table.Lookup(macC); e == nil || len(e.Paths) != 2 {
		t.Fatalf("entry for C %+v", e)
	}
	a.hold(macD, netip.Addr{}, nil, nil)
	a.pathReply(&wire.DumbNetPathReply{QueryID: a.byDst[macD].id, Version: 3, Src: macA, Dst: macD, SrcSwitch: 1, SrcPort: 9, DstSwitch: 2, DstPort: 9,
		Links: []wire.DumbNetLink{{A: 1, APort: 1, B: 2, BPort: 1, Flags: wire.LinkUp | wire.LinkPrimary}}})
	if a.Counters()["version_reset"] != 1 || a.byDst[macC] == nil {
		t.Fatalf("no version reset: %v", a.Counters())
	}
	a.Receive(1, portStatusFrame(1, 1, wire.PortDown, 4, 1))
	e := a.table.Lookup(macC)
	if e == nil || len(e.Paths) != 1 || !bytes.Equal(e.Paths[0], []uint8{2, 2, 9}) {
		t.Fatalf("entry for C %+v, want its path via switch 3 kept", e)
	}
	if a.table.Lookup(macD) != nil || a.Counters()["failover_requery"] != 1 {
		t.Fatalf("D's entry %+v, failover_requery %d; want D dropped and asked for, once", a.table.Lookup(macD), a.Counters()["failover_requery"])
	}
}

// A patch no newer than the TopoCache (here: as old as the path reply it
// holds) is stale.
func TestAgentPatchOfEqualVersionStale(t *testing.T) {
	a, _ := squareAgent(t, 4)
	a.topoPatch(&wire.DumbNetTopoPatch{Version: 1, Links: []wire.DumbNetLink{{A: 1, APort: 1, B: 2, BPort: 1}}})
	c := a.Counters()
	if c["patch_stale"] != 1 || c["patches_applied"] != 0 {
		t.Fatalf("counters %v, want patch_stale 1, patches_applied 0", c)
	}
	if err := a.cache.Verify([]uint8{1, 2, 9}, macB); err != nil {
		t.Fatalf("the stale patch failed the link: %v", err)
	}
	a.topoPatch(&wire.DumbNetTopoPatch{Version: 2, Links: []wire.DumbNetLink{{A: 1, APort: 1, B: 2, BPort: 1}}})
	if err := a.cache.Verify([]uint8{1, 2, 9}, macB); err == nil || a.Counters()["patches_applied"] != 1 {
		t.Fatalf("a newer patch not applied: %v", a.Counters())
	}
}

// An unanswered path query is sent once and retried QueryRetries times,
// the waits doubling; then what waited for it is dropped.
func TestAgentQueryRetriedExactly(t *testing.T) {
	a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, QueryTimeout: element.Millisecond, QueryRetries: 3})
	a.Receive(2, wire.AppendEthernet(nil, macC, macA, wire.EtherTypeIPv4, make([]byte, 40)))
	if out := env.take(); len(out) != 1 {
		t.Fatalf("sent %d frames, want the first query", len(out))
	}
	var at []element.Time
	for range 40 {
		env.advance(element.Millisecond)
		for range env.take() {
			at = append(at, env.now)
		}
	}
	c := a.Counters()
	if c["path_queries"] != 4 || c["drop_no_path"] != 1 || a.byDst[macC] != nil {
		t.Fatalf("counters %v, want 4 queries and the frame dropped", c)
	}
	// Retries after 1, 2 and 4 ms; the last one's 8 ms wait ends it.
	want := []element.Time{1, 3, 7}
	if len(at) != len(want) {
		t.Fatalf("retries at %v, want %v ms", at, want)
	}
	for i := range want {
		if at[i] != want[i]*element.Millisecond {
			t.Fatalf("retries at %v, want %v ms", at, want)
		}
	}
}

// A switch's notification arrives with at most the hop limit left; one
// with more is forged.
func TestAgentNotificationHopLimit(t *testing.T) {
	a, _ := newTestAgent()
	for _, hops := range []uint8{DefaultHopLimit + 1, 255} {
		a.Receive(1, portStatusFrame(1, 1, wire.PortDown, hops, uint32(hops)))
	}
	if c := a.Counters(); c["drop_hop_limit"] != 2 || c["notify_received"] != 0 {
		t.Fatalf("counters %v, want both forged notifications dropped", c)
	}
	a.Receive(1, portStatusFrame(1, 1, wire.PortDown, DefaultHopLimit, 1))
	if c := a.Counters(); c["drop_hop_limit"] != 2 || c["notify_received"] != 1 {
		t.Fatalf("counters %v, want the notification at the hop limit taken", c)
	}
}

// A path graph of exactly MaxReplyLinks links goes out whole; one link
// more and the detours are cut, never the primary or backup links.
func TestControllerReplyLinksBound(t *testing.T) {
	a := NewAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true, MaxReplyLinks: 3})
	c := a.ctrl
	c.g = newNetGraph()
	for id := range uint64(5) {
		c.g.addSwitch(id + 1)
	}
	pg := &PathGraph{Links: map[linkKey]wire.LinkFlags{
		keyOf(0, 1, 1, 1): wire.LinkUp | wire.LinkDetour,
		keyOf(0, 2, 2, 1): wire.LinkUp | wire.LinkPrimary,
		keyOf(0, 3, 3, 1): wire.LinkUp | wire.LinkBackup,
	}}
	if ls := c.linksOf(pg); len(ls) != 3 || a.Counters()["ctrl_pathgraph_truncated"] != 0 {
		t.Fatalf("3 links with MaxReplyLinks 3: got %v, counters %v", ls, a.Counters())
	}
	pg.Links[keyOf(0, 4, 4, 1)] = wire.LinkUp | wire.LinkDetour
	ls := c.linksOf(pg)
	if len(ls) != 3 || a.Counters()["ctrl_pathgraph_truncated"] != 1 {
		t.Fatalf("4 links: got %v, counters %v", ls, a.Counters())
	}
	if ls[0].Flags&wire.LinkPrimary == 0 || ls[1].Flags&wire.LinkBackup == 0 {
		t.Fatalf("truncation lost a primary or backup link: %v", ls)
	}
}

// Discovery takes a switch's answer only if it echoes one of this
// prober's own PMs: another host's PM with the same sequence number and
// path is not ours.
func TestDiscoveryEchoOfOtherProber(t *testing.T) {
	a, _ := attachedAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true})
	d := a.ctrl.disc
	path := d.pathOf(d.pending[1])
	echo := func(src wire.MAC) []byte {
		b, _ := (&wire.DumbNetProbe{Seq: 1, SrcMAC: src, Path: path}).AppendTo(nil)
		return b
	}
	a.Receive(1, ctrl(t, macA, macB, &wire.DumbNetSwitchID{SwitchID: 7, Echo: echo(macB)}))
	if c := a.Counters(); c["drop_bad_echo"] != 1 || len(d.sws) != 0 {
		t.Fatalf("counters %v, %d switches: want the foreign echo dropped", c, len(d.sws))
	}
	a.Receive(1, ctrl(t, macA, macB, &wire.DumbNetSwitchID{SwitchID: 7, Echo: echo(macA)}))
	if len(d.sws) != 1 || d.sws[0].id != 7 {
		t.Fatalf("own echo not taken: %d switches", len(d.sws))
	}
}

// A host answer naming a multicast (or zero) MAC places no host.
func TestDiscoveryRejectsMulticastHostMAC(t *testing.T) {
	a := NewAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1})
	a.Attach(newFakeEnv(), []element.PortInfo{{Port: 1, Up: true}, {Port: 2, Up: true, Local: true}})
	d := newDiscovery(a, false)
	s := d.addSwitch(1, nil, []uint8{1})
	d.addHost(s, 2, wire.DumbNetProbeReply{HostMAC: wire.MAC{0x03, 0, 0, 0, 0, 1}, HostIP: ipB})
	d.addHost(s, 3, wire.DumbNetProbeReply{HostMAC: wire.Broadcast})
	d.addHost(s, 4, wire.DumbNetProbeReply{})
	if len(d.hosts) != 0 || s.known[2] || s.known[3] || s.known[4] || a.Counters()["drop_identity_conflict"] != 3 {
		t.Fatalf("hosts %v, counters %v: want none placed", d.hosts, a.Counters())
	}
	d.addHost(s, 2, wire.DumbNetProbeReply{HostMAC: macB, HostIP: ipB})
	if len(d.hosts) != 1 || a.Counters()["hosts_found"] != 1 {
		t.Fatalf("a unicast host not placed: %v", d.hosts)
	}
}

// TestWeightedLongRoute: the backup search's costs are 64-bit. On a line
// of 40,000 switches whose every link and switch belongs to the primary,
// each hop costs 2·|V|+1 = 80,001 and the only route 3.2e9 in all, past
// the 32 bits it was once summed in (the route came back wrong or nil).
func TestWeightedLongRoute(t *testing.T) {
	const n = 40_000
	g := newNetGraph()
	for i := range n {
		g.addSwitch(uint64(i + 1))
	}
	heavy := make(map[linkKey]bool, n)
	heavySw := make(map[int32]bool, n)
	for i := range int32(n - 1) {
		g.addLink(i, 2, i+1, 1, true, 0)
		heavy[keyOf(i, 2, i+1, 1)] = true
		if i > 0 {
			heavySw[i] = true
		}
	}
	r := g.weighted(0, n-1, heavy, heavySw, n)
	if len(r) != n || r[len(r)-1].sw != n-1 {
		t.Fatalf("route of %d hops, want %d ending at switch %d", len(r), n, n-1)
	}
	for i, h := range r[:n-1] {
		if h.sw != int32(i) || h.out != 2 {
			t.Fatalf("hop %d: %+v", i, h)
		}
	}
}
