package dumbnet

import (
	"math/rand/v2"
	"testing"

	"github.com/edgefabric/edgefabric/wire"
)

// TestPathTableMatchesMap checks the open-addressing table against a Go
// map over random puts, deletes and lookups, across resizes and
// tombstones.
func TestPathTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	tab := NewPathTable()
	ref := map[wire.MAC]*PathEntry{}
	keys := make([]wire.MAC, 300)
	for i := range keys {
		keys[i] = wire.MAC{byte(i), byte(i >> 8), 0xff, 0xff, 0xff, 0xff}
	}
	keys[0] = wire.MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff} // the largest key
	keys[1] = wire.MAC{}                                   // the zero MAC
	for range 20000 {
		k := keys[rng.IntN(len(keys))]
		switch rng.IntN(3) {
		case 0:
			e := &PathEntry{}
			tab.Put(k, e)
			ref[k] = e
		case 1:
			tab.Delete(k)
			delete(ref, k)
		default:
			if got := tab.Lookup(k); got != ref[k] {
				t.Fatalf("Lookup(%v) = %p, want %p", k, got, ref[k])
			}
		}
		if tab.Len() != len(ref) {
			t.Fatalf("Len = %d, want %d", tab.Len(), len(ref))
		}
	}
	n := 0
	tab.All(func(d wire.MAC, e *PathEntry) bool {
		if ref[d] != e {
			t.Fatalf("All yielded %v -> %p, want %p", d, e, ref[d])
		}
		n++
		return true
	})
	if n != len(ref) {
		t.Fatalf("All yielded %d, want %d", n, len(ref))
	}
}

// TestPathGraphAlgorithm1 checks the path graph on a ring of six
// switches: primary along one side, backup along the other, and with
// s=2, ε=0 no detour beyond the primary path (a ring has no second
// shortest path over two hops); with ε=4 the whole ring.
func TestPathGraphAlgorithm1(t *testing.T) {
	g := newNetGraph()
	for i := range 6 {
		g.addSwitch(uint64(i + 1))
	}
	for i := range 6 {
		g.addLink(int32(i), 1, int32((i+1)%6), 2, true, 0)
	}
	var sc scratch
	rng := rand.New(rand.NewPCG(1, 1))
	pg := g.pathGraph(&sc, 0, 2, 2, 0, rng)
	if len(pg.Primary) != 3 || pg.Primary[1].sw != 1 {
		t.Fatalf("primary %v, want 0-1-2", pg.Primary)
	}
	if len(pg.Backup) != 5 || pg.Backup[1].sw != 5 {
		t.Fatalf("backup %v, want 0-5-4-3-2", pg.Backup)
	}
	detours := 0
	for _, f := range pg.Links {
		if f&wire.LinkDetour != 0 && f&(wire.LinkPrimary|wire.LinkBackup) == 0 {
			detours++
		}
	}
	if detours != 0 || len(pg.Links) != 6 {
		t.Fatalf("links %v", pg.Links)
	}
	if d := g.detours(&sc, pg.Primary, 2, 0); len(d) != 3 {
		t.Fatalf("D = %v, want the primary's 3 switches", d)
	}
	if d := g.detours(&sc, pg.Primary, 2, 4); len(d) != 6 {
		t.Fatalf("D with ε=4 = %v, want all 6 switches", d)
	}
	// k shortest: the two ways round the ring, shortest first.
	ks := g.kShortest(&sc, 0, 2, 3)
	if len(ks) != 2 || len(ks[0]) != 3 || len(ks[1]) != 5 {
		t.Fatalf("k shortest %v", ks)
	}
}

// TestMergeUnlinksRecabledPort: switch 1's port 3 led to switch 2's port
// 4; the cable is pulled (a notification) and moved to switch 3's port 5,
// which the host learns from a path graph of version 3. Port 2:4 then
// gets a cable of its own that fails (a notification). A second path
// graph of version 3 (computed before that failure) lists 1:3-3:5 up and
// must give a path over it. Before, the cache's 2:4 still led to 1:3
// after the merge, so the failure of 2:4 was recorded as one of 1:3 too,
// newer than version 3, and the second graph's view held the new link
// down: no path.
func TestMergeUnlinksRecabledPort(t *testing.T) {
	c := NewTopoCache()
	reply := func(dst wire.MAC, dstSw uint64, links ...wire.DumbNetLink) *wire.DumbNetPathReply {
		return &wire.DumbNetPathReply{Version: 3, Dst: dst, SrcSwitch: 1, SrcPort: 1, DstSwitch: dstSw, DstPort: 1, Links: links}
	}
	old := reply(wire.MAC{2, 0, 0, 0, 0, 2}, 2, wire.DumbNetLink{A: 1, APort: 3, B: 2, BPort: 4, Flags: wire.LinkUp | wire.LinkPrimary})
	old.Version = 1
	c.Merge(old)
	c.SetLink(1, 3, false)
	moved := wire.DumbNetLink{A: 1, APort: 3, B: 3, BPort: 5, Flags: wire.LinkUp | wire.LinkPrimary}
	c.Merge(reply(wire.MAC{2, 0, 0, 0, 0, 3}, 3, moved))
	if c.SetLink(2, 4, false) {
		t.Fatal("a failure of 2:4, whose link moved, changed a link the cache holds")
	}
	dst := wire.MAC{2, 0, 0, 0, 0, 4}
	c.Merge(reply(dst, 3, moved))
	if tags, err := c.FindPath(dst, nil); err != nil || len(tags) != 2 || tags[0] != 3 {
		t.Fatalf("path over the moved cable: %v, %v; want [3 1]", tags, err)
	}
}
