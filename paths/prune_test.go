package paths

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/edgefabric/edgefabric/topo"
)

// A case with one answer: on a 4-ring whose 802.1D tree lacks link L =
// a–b, subgraph 1 = {L} holds path [L] and subgraph 2 = {T, L} holds path
// c→a→b (T = c–a, a tree link). That path fits into subgraph 1 (a line of
// two links), so pruning moves it there and deletes subgraph 2.
func TestPruneMovesPathsAndDeletes(t *testing.T) {
	f := mustFabric(t, mustTopo(t, "ring:4"))
	tree := STP(f).Links
	L := topo.NoLink
	for l := range topo.LinkID(f.G.NumLinks()) {
		if f.IsFabric(l) && !slices.Contains(tree, l) {
			L = l
		}
	}
	a, b := f.Ends(L)
	T := topo.NoLink
	for _, l := range tree {
		if x, y := f.Ends(l); x == a || y == a {
			T = l
		}
	}
	c := f.Other(T, a)
	ps := &PathSet{K: 1,
		Pairs:   []Pair{{a, b}, {c, b}},
		PairOff: []uint32{0, 1, 2},
		PathOff: []uint32{0, 1, 3},
		Links:   []topo.LinkID{L, T, L},
	}
	st := newPackState(f, tree)
	st.nodes = []topo.NodeID{a, b}
	st.commit(st.newVLAN(), ps.Path(0))
	st.nodes = []topo.NodeID{c, a, b}
	st.commit(st.newVLAN(), ps.Path(1))

	if n := st.prune(ps); n != 1 {
		t.Fatalf("pruned %d subgraphs, want 1", n)
	}
	if len(st.vlinks) != 2 {
		t.Fatalf("%d subgraphs left, want 2 (the tree and one)", len(st.vlinks))
	}
	got := slices.Sorted(slices.Values(st.vlinks[1]))
	want := slices.Sorted(slices.Values([]topo.LinkID{L, T}))
	if !slices.Equal(got, want) {
		t.Fatalf("subgraph 1 = %v, want %v", got, want)
	}
	checkPruned(t, st, ps)
}

// Pruning a real packing keeps every path inside a loop-free subgraph,
// never adds one, is deterministic, and leaves the bitsets and union-finds
// matching the link lists (checkPruned). On FatTree(8)'s optimum (one star
// per core) it finds nothing to delete.
func TestPruneKeepsEveryPath(t *testing.T) {
	for _, c := range []struct {
		spec  string
		trial uint64
		want  int // subgraphs before and after
		after int
	}{
		{"fattree:8", 0, 16, 16},
		{"ciscodc:3,2", 0, 18, 17},
		{"hyperx:4", 0, 24, 22},
		{"bcube:3,4", 0, 108, 102},
		{"bcube:4,3", 1, 44, 43},
	} {
		f, ps := mustAlphaPaths(t, c.spec)
		var sizes []int
		var digests []string
		for range 2 {
			st, ok := treeCover(f, ps, STP(f).Links, 1, c.trial, 2, MaxVLANs)
			if !ok {
				t.Fatal("limit hit")
			}
			before := len(st.vlinks)
			n := st.prune(ps)
			if before != c.want || len(st.vlinks) != c.after || before-n != c.after {
				t.Fatalf("%s: %d subgraphs, pruned %d to %d; want %d to %d", c.spec, before, n, len(st.vlinks), c.want, c.after)
			}
			checkPruned(t, st, ps)
			sizes = append(sizes, len(st.vlinks))
			digests = append(digests, fmt.Sprint(st.vlinks))
		}
		if sizes[0] != sizes[1] || digests[0] != digests[1] {
			t.Fatalf("%s: two prunings of the same packing differ", c.spec)
		}
	}
}

// checkPruned checks a state after prune: every subgraph loop-free, every
// path held by one, the bitsets exactly the link lists, and each
// subgraph's union-find joining exactly what its links join.
func checkPruned(t *testing.T, st *packState, ps *PathSet) {
	t.Helper()
	checkLoopFree(t, st)
	for j := range ps.NumPaths() {
		if holder(st, ps.Path(j)) < 0 {
			t.Fatalf("path %d is in no subgraph after pruning", j)
		}
	}
	n := st.f.G.NumNodes()
	for vl, ls := range st.vlinks {
		for l := range topo.LinkID(st.f.G.NumLinks()) {
			if st.has(vl, l) != slices.Contains(ls, l) {
				t.Fatalf("subgraph %d: bitset and link list disagree on link %d", vl, l)
			}
		}
		parent := make([]int32, n)
		for v := range parent {
			parent[v] = int32(v)
		}
		for _, l := range ls {
			a, b := st.f.Ends(l)
			parent[find(parent, int32(a))] = find(parent, int32(b))
		}
		uf := st.uf[vl]
		for v := range int32(n) {
			for _, w := range []int32{0, v / 2, int32(n) - 1} {
				if (find(uf, v) == find(uf, w)) != (find(parent, v) == find(parent, w)) {
					t.Fatalf("subgraph %d: union-find and links disagree on nodes %d, %d", vl, v, w)
				}
			}
		}
	}
}

// Prune on a finished packing: the same deletions as on the state the
// packing came from (ciscodc:3,2 trial 0: 18 → 17), sorted VLANs, the
// spanning tree first and unchanged, every path still inside a loop-free
// VLAN.
func TestPruneOnPacking(t *testing.T) {
	f, ps := mustAlphaPaths(t, "ciscodc:3,2")
	tree := STP(f).Links
	st, _ := treeCover(f, ps, tree, 1, 0, 2, MaxVLANs)
	pk := &Packing{}
	for _, ls := range st.vlinks {
		pk.VLANs = append(pk.VLANs, slices.Sorted(slices.Values(ls)))
	}
	if n := Prune(f, ps, pk); n != 1 || pk.Pruned != 1 || len(pk.VLANs) != 17 {
		t.Fatalf("pruned %d (Pruned %d) to %d VLANs, want 1 to 17", n, pk.Pruned, len(pk.VLANs))
	}
	if !slices.Equal(pk.VLANs[0], slices.Sorted(slices.Values(tree))) {
		t.Fatal("VLAN 1 changed")
	}
	back := newPackState(f, pk.VLANs[0])
	for _, ls := range pk.VLANs[1:] {
		if !slices.IsSorted(ls) {
			t.Fatal("VLAN links not sorted")
		}
		vl := back.newVLAN()
		for _, l := range ls {
			a, b := f.Ends(l)
			back.add(vl, l, a, b)
		}
	}
	checkPruned(t, back, ps)
	if Prune(f, ps, &Packing{}) != 0 {
		t.Fatal("empty packing")
	}
}

// PackOptions.PruneEach prunes every trial and keeps the one with the
// fewest VLANs after pruning: the count is the minimum over the trials
// pruned one by one, TrialVLANs keep the counts before pruning, and the
// result does not depend on the number of workers (no trial is
// abandoned).
func TestPackPruneEach(t *testing.T) {
	f, ps := mustAlphaPaths(t, "ciscodc:3,2")
	base := STP(f).Links
	const trials, seed = 3, 5
	want := MaxVLANs + 1
	for tr := range uint64(trials) {
		st, _ := treeCover(f, ps, base, seed, tr, 1, MaxVLANs)
		st.prune(ps)
		want = min(want, len(st.vlinks))
		for _, strat := range []Strategy{FirstFit, BestFit} {
			var none atomic.Int64
			none.Store(MaxVLANs + 1)
			st := newPackState(f, base)
			st.run(ps, strat, seed, tr, &none)
			st.prune(ps)
			want = min(want, len(st.vlinks))
		}
	}
	var first *Packing
	for _, w := range []int{1, 2} {
		pk, err := Pack(f, ps, base, PackOptions{Trials: trials, Seed: seed, Parallel: true, Workers: w, PruneEach: true})
		if err != nil {
			t.Fatal(err)
		}
		verifyPacking(t, f, ps, pk)
		if len(pk.VLANs) != want || pk.TrialVLANs[pk.BestTrial]-pk.Pruned != want || slices.Contains(pk.TrialVLANs, -1) {
			t.Fatalf("%d workers: %d VLANs (trials %v, best %d, pruned %d), want %d and no trial abandoned",
				w, len(pk.VLANs), pk.TrialVLANs, pk.BestTrial, pk.Pruned, want)
		}
		if first == nil {
			first = pk
		} else if fmt.Sprint(pk.VLANs) != fmt.Sprint(first.VLANs) || pk.BestTrial != first.BestTrial {
			t.Fatal("PruneEach: 2 workers give another packing than 1")
		}
	}
}

// Pruning tries every subgraph down to subgraph 1, not only the newer
// ones. On a 4-ring a-b-c-d whose 802.1D tree lacks L = a–b: subgraph 1 =
// {L, b–c} holds path a→b, subgraph 2 = {c–d, d–a, L} holds path c→d→a→b.
// Subgraph 2 cannot go (its path would close the ring in subgraph 1), but
// subgraph 1 can: subgraph 2 holds its path too.
func TestPruneDeletesSubgraphOne(t *testing.T) {
	f := mustFabric(t, mustTopo(t, "ring:4"))
	tr := STP(f)
	L := topo.NoLink
	for l := range topo.LinkID(f.G.NumLinks()) {
		if f.IsFabric(l) && !slices.Contains(tr.Links, l) {
			L = l
		}
	}
	a, b := f.Ends(L)
	around := tr.PathBetween(b, a, nil) // b–c, c–d, d–a
	if len(around) != 3 {
		t.Fatalf("tree path b→a has %d links, want 3", len(around))
	}
	c := f.Other(around[0], b)
	d := f.Other(around[1], c)
	ps := &PathSet{K: 1,
		Pairs:   []Pair{{a, b}, {c, b}},
		PairOff: []uint32{0, 1, 2},
		PathOff: []uint32{0, 1, 4},
		Links:   []topo.LinkID{L, around[1], around[2], L},
	}
	st := newPackState(f, tr.Links)
	st.nodes = []topo.NodeID{a, b}
	one := st.newVLAN()
	st.commit(one, ps.Path(0))
	st.add(one, around[0], b, c)
	st.nodes = []topo.NodeID{c, d, a, b}
	st.commit(st.newVLAN(), ps.Path(1))

	if n := st.prune(ps); n != 1 || len(st.vlinks) != 2 {
		t.Fatalf("pruned %d, %d subgraphs left; want 1 pruned, 2 left", n, len(st.vlinks))
	}
	got := slices.Sorted(slices.Values(st.vlinks[1]))
	want := slices.Sorted(slices.Values([]topo.LinkID{around[1], around[2], L}))
	if !slices.Equal(got, want) {
		t.Fatalf("subgraph 1 = %v, want the old subgraph 2 %v", got, want)
	}
	checkPruned(t, st, ps)
}
