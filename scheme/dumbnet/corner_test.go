package dumbnet

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

// A forged query with an oversized payload gets an ID reply whose echo is
// cut to maxEcho bytes, so that the reply cannot outgrow an MTU.
func TestSwitchEchoBounded(t *testing.T) {
	s, env := newTestSwitch(4)
	payload := bytes.Repeat([]byte{0xab}, 3*maxEcho)
	for i := range payload {
		payload[i] = byte(i)
	}
	s.Receive(1, tagged(t, []uint8{0, 2, 1}, wire.EtherTypeLocalExp, payload))
	out := env.take()
	if len(out) != 1 || out[0].port != 2 {
		t.Fatalf("sent %v, want the ID reply on port 2", out)
	}
	_, _, body, err := wire.ParseDumbNet(out[0].frame)
	if err != nil {
		t.Fatal(err)
	}
	var m wire.DumbNetSwitchID
	if err := m.DecodeFromBytes(body); err != nil || m.SwitchID != 0x42 || !bytes.Equal(m.Echo, payload[:maxEcho]) {
		t.Fatalf("reply echo of %d bytes (err %v), want the first %d of the query's", len(m.Echo), err, maxEcho)
	}
}

// A port reported down twice, outside the suppression window, is
// announced once: the second report has nothing new to say.
func TestSwitchRepeatedStateNotAnnounced(t *testing.T) {
	s, env := newTestSwitch(4)
	s.LinkChange(2, false)
	if out := env.take(); len(out) != 3 {
		t.Fatalf("first report sent %d frames, want 3", len(out))
	}
	env.advance(2 * element.Second)
	s.LinkChange(2, false)
	env.advance(2 * element.Second)
	if out := env.take(); len(out) != 0 || s.Counters()["notify_sent"] != 1 {
		t.Fatalf("repeated state announced: %d frames, counters %v", len(out), s.Counters())
	}
}

// detours on a line p0..p4 with three extra switches: A joins p0 and p2
// (a second 2-hop path of window [p0,p2]), B joins p1 and p3 (of window
// [p1,p3], which only the step of s/2 = 1 visits), T joins p0 and p1
// (3 hops from p0 to p2 through it: not within s + ε = 2).
func TestDetoursAlgorithm1Windows(t *testing.T) {
	g := newNetGraph()
	for i := range 8 {
		g.addSwitch(uint64(i + 1))
	}
	const pA, pB, pT = 5, 6, 7
	for i := range 4 {
		g.addLink(int32(i), 1, int32(i+1), 2, true, 0)
	}
	g.addLink(0, 3, pA, 1, true, 0)
	g.addLink(2, 3, pA, 2, true, 0)
	g.addLink(1, 4, pB, 1, true, 0)
	g.addLink(3, 4, pB, 2, true, 0)
	g.addLink(0, 5, pT, 1, true, 0)
	g.addLink(1, 5, pT, 2, true, 0)
	primary := []hop{{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 0}}
	var sc scratch
	d := g.detours(&sc, primary, 2, 0)
	slices.Sort(d)
	if want := []int32{0, 1, 2, 3, 4, pA, pB}; !slices.Equal(d, want) {
		t.Fatalf("D = %v, want %v", d, want)
	}
	// The path graph's detour links join two switches of D, all of them.
	rng := rand.New(rand.NewPCG(1, 1))
	for range 20 {
		pg := g.pathGraph(&sc, 0, 4, 2, 0, rng)
		in := map[int32]bool{}
		for _, v := range g.detours(&sc, pg.Primary, 2, 0) {
			in[v] = true
		}
		if in[pT] {
			t.Fatalf("T in D for primary %v", pg.Primary)
		}
		for k, f := range pg.Links {
			if f&wire.LinkDetour != 0 && (!in[k.a] || !in[k.b]) {
				t.Fatalf("detour link %v leaves D (primary %v)", k, pg.Primary)
			}
		}
		for u := range in {
			for _, p := range g.used[u] {
				pe := g.ports[u][p]
				if in[pe.sw] && pg.Links[keyOf(u, p, pe.sw, pe.port)]&wire.LinkDetour == 0 {
					t.Fatalf("link %d:%d-%d:%d inside D not a detour", u, p, pe.sw, pe.port)
				}
			}
		}
	}
}

func twoSwitchReply(version uint64, up bool) *wire.DumbNetPathReply {
	f := wire.LinkPrimary
	if up {
		f |= wire.LinkUp
	}
	return &wire.DumbNetPathReply{Version: version, Src: macA, Dst: macB, SrcSwitch: 1, SrcPort: 1, DstSwitch: 2, DstPort: 5,
		Links: []wire.DumbNetLink{{A: 1, APort: 3, B: 2, BPort: 4, Flags: f}}}
}

// The path verifier checks the last tag too: it must name the port the
// destination is on.
func TestVerifyLastTag(t *testing.T) {
	c := NewTopoCache()
	c.Merge(twoSwitchReply(1, true))
	if err := c.Verify([]uint8{3, 5}, macB); err != nil {
		t.Fatalf("good path: %v", err)
	}
	if err := c.Verify([]uint8{3, 6}, macB); !errors.Is(err, ErrBadPath) {
		t.Fatalf("path ending on the wrong port: %v", err)
	}
}

// A link a notification failed stays down when a reply of the same
// version lists it up (computed before the failure); a newer one revives
// it.
func TestMergeKeepsFailedLinkDown(t *testing.T) {
	c := NewTopoCache()
	c.Merge(twoSwitchReply(5, true))
	if !c.SetLink(1, 3, false) {
		t.Fatal("SetLink: link unknown")
	}
	c.Merge(twoSwitchReply(5, true))
	if tags, err := c.FindPath(macB, nil); !errors.Is(err, ErrNoPath) {
		t.Fatalf("same version revived the failed link: %v %v", tags, err)
	}
	c.Merge(twoSwitchReply(6, true))
	if tags, err := c.FindPath(macB, nil); err != nil || !slices.Equal(tags, []uint8{3, 5}) {
		t.Fatalf("newer version: %v %v", tags, err)
	}
}

// When a failure breaks every cached path, the backup path takes over.
func TestFailoverFallsBackOnBackup(t *testing.T) {
	k := Link{A: 1, APort: 3, B: 2, BPort: 4}
	k2 := Link{A: 1, APort: 7, B: 3, BPort: 1}
	e := &PathEntry{Paths: [][]uint8{{3, 5}}, routes: []routeRec{{links: []Link{k}}},
		Backup: []uint8{7, 2, 5}, backup: routeRec{links: []Link{k2}}}
	changed, ok := e.failover(k)
	if !changed || !ok || len(e.Paths) != 1 || !slices.Equal(e.Paths[0], []uint8{7, 2, 5}) {
		t.Fatalf("changed %v ok %v paths %v", changed, ok, e.Paths)
	}
	// The backup crossing the failed link too leaves nothing.
	changed, ok = e.failover(k2)
	if !changed || ok || len(e.Paths) != 0 || e.Backup != nil {
		t.Fatalf("changed %v ok %v paths %v backup %v", changed, ok, e.Paths, e.Backup)
	}
}

// The sequence window remembers the last 64 numbers: one exactly 64
// behind the highest is too old to tell and taken as seen; 63 behind is
// still news once.
func TestSeqWindowEdge(t *testing.T) {
	w := &seqWindow{top: 99}
	if !w.add(100) {
		t.Fatal("100 not new")
	}
	if w.add(100 - 64) {
		t.Fatal("seq 64 behind taken as new")
	}
	if !w.add(100-63) || w.add(100-63) {
		t.Fatal("seq 63 behind: want new once")
	}
}

// A link failed at version 3 (a notification: down since version 4) whose
// repair patch got lost, while a later patch about another link took the
// cache to version 9: a path graph of version 9 that lists the link up was
// computed after the repair, and revives it. It used to stay down until
// the controller's version passed 9, which in a quiet fabric is never.
func TestMergeRevivesAfterLostUpPatch(t *testing.T) {
	c := NewTopoCache()
	c.Merge(twoSwitchReply(3, true))
	if !c.SetLink(1, 3, false) {
		t.Fatal("SetLink: link unknown")
	}
	c.version = 9 // a patch about another link
	c.Merge(twoSwitchReply(3, true))
	if _, err := c.FindPath(macB, nil); !errors.Is(err, ErrNoPath) {
		t.Fatalf("a graph as old as the failure revived the link: %v", err)
	}
	c.Merge(twoSwitchReply(9, true))
	if tags, err := c.FindPath(macB, nil); err != nil || !slices.Equal(tags, []uint8{3, 5}) {
		t.Fatalf("a graph of the cache's own version did not revive the link: %v %v", tags, err)
	}
}
