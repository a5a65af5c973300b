package paths

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/topo"
)

// halfPacked returns a BCube(3,4) path set and a state that holds the
// first half of its paths (first fit), the situation of tree cover's loose
// paths: many subgraphs, most sharing links with a new path.
func halfPacked(t testing.TB, seed uint64) (*Fabric, *PathSet, []topo.NodeID, *packState) {
	t.Helper()
	f, ps := mustAlphaPaths(t, "bcube:3,4")
	src := ps.Sources()
	st := newPackState(f, STP(f).Links)
	r := rand.New(rand.NewPCG(seed, 1))
	for j := range ps.NumPaths() / 2 {
		p := ps.Path(j)
		if st.covered(p) {
			continue
		}
		st.nodes = f.PathNodes(src[j], p, st.nodes[:0])
		if !st.place(p, FirstFit, r) {
			st.commit(st.newVLAN(), p)
		}
	}
	return f, ps, src, st
}

// holder returns the one subgraph that holds every link of p, or -1.
func holder(st *packState, p []topo.LinkID) int {
	found := -1
	for vl := range st.vlinks {
		if !slices.ContainsFunc(p, func(l topo.LinkID) bool { return !st.has(vl, l) }) {
			found = vl
		}
	}
	return found
}

// placeBestFit must put each path into a subgraph it fits in that holds
// the most of its links, or, when no subgraph sharing a link fits, into
// some subgraph it fits in, or report that none fits: checked against a
// direct count and fits test over every subgraph before each placement.
func TestPlaceBestFitTakesMostShared(t *testing.T) {
	f, ps, src, st := halfPacked(t, 3)
	r := rand.New(rand.NewPCG(5, 5))
	var shared, first, none int
	var n []int
	var fit []bool
	for j := ps.NumPaths() / 2; j < ps.NumPaths(); j++ {
		p := ps.Path(j)
		if st.covered(p) {
			continue
		}
		st.nodes = f.PathNodes(src[j], p, st.nodes[:0])
		n, fit = n[:0], fit[:0]
		best, anyFit := 0, false
		for vl := range st.vlinks {
			c := 0
			for _, l := range p {
				if st.has(vl, l) {
					c++
				}
			}
			ok := vl > 0 && st.fits(vl, p)
			n, fit = append(n, c), append(fit, ok)
			if ok {
				anyFit = true
				best = max(best, c)
			}
		}
		ok := st.placeBestFit(p, r) >= 0
		if ok != anyFit {
			t.Fatalf("path %d: placed %v, but some subgraph fits: %v", j, ok, anyFit)
		}
		if !ok {
			none++
			st.commit(st.newVLAN(), p)
			continue
		}
		vl := holder(st, p)
		switch {
		case vl <= 0 || !fit[vl]:
			t.Fatalf("path %d: put into subgraph %d, which it does not fit", j, vl)
		case n[vl] != best:
			t.Fatalf("path %d: subgraph %d shares %d links, but one it fits shares %d", j, vl, n[vl], best)
		case best > 0:
			shared++
		default:
			first++
		}
	}
	// Make sure all three outcomes occurred, or the test proves little.
	if shared == 0 || first == 0 || none == 0 {
		t.Fatalf("%d best fit, %d first fit, %d new subgraphs: want each", shared, first, none)
	}
	checkLoopFree(t, st)
}

// firstFitUntested must choose exactly what place's first fit chooses
// from the same random stream when the skipped subgraphs are ones the
// path does not fit.
func TestFirstFitUntestedMatchesFirstFit(t *testing.T) {
	f, ps, src, a := halfPacked(t, 4)
	_, _, _, b := halfPacked(t, 4)
	ra, rb := rand.New(rand.NewPCG(9, 9)), rand.New(rand.NewPCG(9, 9))
	mark := rand.New(rand.NewPCG(1, 2))
	skipped := 0
	twinLaterPaths(f, ps, src, a, b, func(j int, p []topo.LinkID) {
		// Mark about half the subgraphs the path does not fit in.
		cnt := make([]int32, len(b.vlinks))
		for vl := 1; vl < len(b.vlinks); vl++ {
			if mark.IntN(2) == 0 && !b.fits(vl, p) {
				cnt[vl] = 1
				skipped++
			}
		}
		okA := a.place(p, FirstFit, ra)
		vl := b.firstFitUntested(p, func(vl int32) bool { return cnt[vl] != 0 }, rb)
		if okA != (vl >= 0) || okA && holder(a, p) != vl {
			t.Fatalf("path %d: first fit put it in %d, firstFitUntested in %d", j, holder(a, p), vl)
		}
		if vl >= 0 {
			b.commit(vl, p)
		} else {
			a.commit(a.newVLAN(), p)
			b.commit(b.newVLAN(), p)
		}
	})
	if skipped == 0 {
		t.Fatal("no subgraph was skipped")
	}
}

// checkLoopFree rebuilds each subgraph's forest from its links.
func checkLoopFree(t *testing.T, st *packState) {
	t.Helper()
	for vl, ls := range st.vlinks {
		parent := make([]int32, st.f.G.NumNodes())
		for v := range parent {
			parent[v] = int32(v)
		}
		for _, l := range ls {
			a, b := st.f.Ends(l)
			ra, rb := find(parent, int32(a)), find(parent, int32(b))
			if ra == rb {
				t.Fatalf("subgraph %d has a loop through link %d", vl, l)
			}
			parent[ra] = rb
		}
	}
}

// The BFS trees of trials after the first shuffle ties; the packing must
// still depend only on the seed and trial, not on the number of workers.
func TestTreeCoverIndependentOfWorkers(t *testing.T) {
	for _, spec := range []string{"bcube:3,3", "hyperx:4"} {
		f, ps := mustAlphaPaths(t, spec)
		base := STP(f).Links
		for trial := range uint64(3) {
			want, ok := treeCover(f, ps, base, 7, trial, 1, MaxVLANs)
			if !ok {
				t.Fatal("limit hit")
			}
			for _, w := range []int{2, 3, 8} {
				got, _ := treeCover(f, ps, base, 7, trial, w, MaxVLANs)
				if len(got.vlinks) != len(want.vlinks) {
					t.Fatalf("%s trial %d: %d workers give %d VLANs, 1 gives %d", spec, trial, w, len(got.vlinks), len(want.vlinks))
				}
				for vl := range want.vlinks {
					if !slices.Equal(got.vlinks[vl], want.vlinks[vl]) {
						t.Fatalf("%s trial %d: %d workers change VLAN %d", spec, trial, w, vl)
					}
				}
			}
		}
	}
}

// The tree-cover packing is pinned: FNV digests of every VLAN's sorted
// links for two trials and 1 to 3 workers. The digests of best fit alone
// for the loose paths (bestFit) were made by the serial implementation
// before the greedy step ran on all cores (trial 1's made again when
// later trials' BFS trees went from random to rotated port orders): that
// way is unchanged since, except that its paths now go longest first
// (longestFirst), which made bcube:3,4's and ciscodc:3,2's again (where
// paths differ in length; on hyperx:4 none of them changed). Those of the
// whole packer (both) were made when the majority round joined it; they
// differ where the round needs fewer VLANs (hyperx:4; with longest first,
// best fit ties or wins on bcube:3,4 and ciscodc:3,2, which keep its
// packing). A speed-up must not change a single VLAN.
func TestTreeCoverPinned(t *testing.T) {
	defer func() { looseWays = looseBoth }()
	type pin struct{ both, bestFit [2]string }
	want := map[string]pin{
		"fattree:8":   {both: [2]string{"4ec33343569e16e3", "976a694f5db544a1"}},
		"fattree:16":  {both: [2]string{"cc22b5f045a73dd7", "3834a640b7f2b3b1"}},
		"bcube:3,4":   {[2]string{"c162b0ec7417fc91", "4a282e26f3f6bdc8"}, [2]string{"c162b0ec7417fc91", "4a282e26f3f6bdc8"}},
		"bcube:4,3":   {both: [2]string{"dbfff81b3f7930e0", "f9b340e0a073c2a"}},
		"hyperx:4":    {[2]string{"81e4016395929031", "92b068b5fbd8afdc"}, [2]string{"c0ffdf84a6f1dd07", "92b068b5fbd8afdc"}},
		"ciscodc:3,2": {[2]string{"53391146dd180432", "a8707c0ac764a9bf"}, [2]string{"53391146dd180432", "a8707c0ac764a9bf"}},
	}
	for spec, pins := range want {
		f, ps := mustAlphaPaths(t, spec)
		base := STP(f).Links
		roots, rootIdx := coverRoots(f)
		for _, way := range []int{looseBoth, looseBestFitOnly} {
			digests := pins.both
			if way == looseBestFitOnly {
				if pins.bestFit[0] == "" {
					continue // no loose path wins by the round: the same digests
				}
				digests = pins.bestFit
			}
			looseWays = way
			for trial, d := range digests {
				for _, w := range []int{1, 2, 3} {
					// Three workers run the four-byte root indices of
					// topologies with more than 65,536 roots.
					st, ok := treeCover(f, ps, base, 7, uint64(trial), w, MaxVLANs)
					if w == 3 {
						st, ok = coverWith[int32](f, ps, base, roots, rootIdx, 7, uint64(trial), w, MaxVLANs)
					}
					if !ok {
						t.Fatalf("%s: limit hit", spec)
					}
					if got := packingDigest(st); got != d {
						t.Errorf("%s trial %d, %d workers, way %d: %d VLANs, digest %s, want %s", spec, trial, w, way, len(st.vlinks), got, d)
					}
					checkHints(t, fmt.Sprintf("%s trial %d, %d workers, way %d", spec, trial, w, way), ps, st.hint, st.vlinks)
				}
			}
		}
	}
}

// checkHints: tree cover names, for every path, a subgraph that holds it
// (packState.hint, Packing.PathVLAN), which the plan's check tests first.
// A hint it left out would only cost that check a search; checked here so
// that the speed-up is not lost unnoticed.
func checkHints(t *testing.T, what string, ps *PathSet, hint []uint16, vlans [][]topo.LinkID) {
	t.Helper()
	if len(hint) != ps.NumPaths() {
		t.Fatalf("%s: %d hints for %d paths", what, len(hint), ps.NumPaths())
	}
	in := make([]map[topo.LinkID]bool, len(vlans))
	for i, ls := range vlans {
		in[i] = map[topo.LinkID]bool{}
		for _, l := range ls {
			in[i][l] = true
		}
	}
	for j := range ps.NumPaths() {
		vl := int(hint[j])
		if vl >= len(vlans) {
			t.Fatalf("%s: path %d: hint %d, %d subgraphs", what, j, vl, len(vlans))
		}
		for _, l := range ps.Path(j) {
			if !in[vl][l] {
				t.Fatalf("%s: path %d: hint %d lacks link %d", what, j, vl, l)
			}
		}
	}
}

// packingDigest is an FNV digest of every subgraph's sorted links.
func packingDigest(st *packState) string {
	h := fnv.New64a()
	for _, ls := range st.vlinks {
		ls = slices.Clone(ls)
		slices.Sort(ls)
		fmt.Fprint(h, ls, ";")
	}
	return fmt.Sprintf("%x", h.Sum64())
}

// Trial t's BFS trees scan every node's ports reversed when t is odd,
// starting ⌊t/2⌋ ports on: checked against a plain BFS over that order.
func TestBFSTreesRotatePortOrder(t *testing.T) {
	f := mustFabric(t, mustTopo(t, "hyperx:4"))
	roots, _ := coverRoots(f)
	for trial := range uint64(6) {
		got, lw := bfsTrees(f, roots, trial, 2)
		for ri, root := range roots {
			want := make([]uint64, lw)
			seen := map[topo.NodeID]bool{root: true}
			queue := []topo.NodeID{root}
			for len(queue) > 0 {
				v := queue[0]
				queue = queue[1:]
				var ports []int32
				for i := f.adjOff[v]; i < f.adjOff[v+1]; i++ {
					ports = append(ports, i)
				}
				if trial%2 == 1 {
					slices.Reverse(ports)
				}
				k := int(trial/2) % len(ports)
				for _, i := range append(ports[k:], ports[:k]...) {
					if w := f.adjNbr[i]; !seen[w] {
						seen[w] = true
						queue = append(queue, w)
						l := f.adjLink[i]
						want[l/64] |= 1 << (l % 64)
					}
				}
			}
			if !slices.Equal(got[ri*lw:(ri+1)*lw], want) {
				t.Fatalf("trial %d root %d: tree differs from the rotated-order BFS", trial, root)
			}
		}
	}
}

// Rotated port orders in later trials are why ten tree-cover trials pack
// HyperX(8)'s path set into 106 VLANs with best fit alone for the loose
// paths (random scan orders per node gave 163-168 over seeds 1-4; the
// paper's serial heuristic 290), and 104 with the majority round.
func TestTreeCoverTrialsHyperX8(t *testing.T) {
	f, ps := mustAlphaPaths(t, "hyperx:8")
	defer func() { looseWays = looseBoth }()
	for way, want := range map[int]int{looseBestFitOnly: 106, looseBoth: 104} {
		looseWays = way
		best := MaxVLANs + 1
		for trial := range uint64(10) {
			st, ok := treeCover(f, ps, STP(f).Links, 1, trial, 2, MaxVLANs)
			if ok {
				best = min(best, len(st.vlinks))
			}
		}
		if best != want {
			t.Fatalf("way %d: best of 10 tree-cover trials: %d VLANs, want %d", way, best, want)
		}
	}
}

// With the anchor components tracked, best fit skips more subgraphs
// without a loop test; every skipped one must be one the path does not
// fit, so each choice is the same as without tracking. The tracked sets
// are then checked against the union-finds.
func TestGiantTrackingChangesNoChoice(t *testing.T) {
	f, ps, src, a := halfPacked(t, 6)
	_, _, _, b := halfPacked(t, 6)
	b.trackGiant()
	ra, rb := rand.New(rand.NewPCG(2, 3)), rand.New(rand.NewPCG(2, 3))
	placed := 0
	twinLaterPaths(f, ps, src, a, b, func(j int, p []topo.LinkID) {
		okA, okB := a.placeBestFit(p, ra) >= 0, b.placeBestFit(p, rb) >= 0
		if okA != okB || okA && holder(a, p) != holder(b, p) {
			t.Fatalf("path %d: placed in %d untracked, %d tracked", j, holder(a, p), holder(b, p))
		}
		if !okA {
			a.commit(a.newVLAN(), p)
			b.commit(b.newVLAN(), p)
		}
		placed++
	})
	if placed == 0 {
		t.Fatal("no path placed")
	}
	for vl := range b.vlinks {
		uf := b.uf[vl]
		for x := range f.G.NumNodes() {
			want := b.anchor[vl] >= 0 && find(uf, int32(x)) == find(uf, b.anchor[vl])
			got := b.giant[x*b.words+vl/64]&(1<<(vl%64)) != 0
			if got != want {
				t.Fatalf("subgraph %d node %d: tracked %v, union-find says %v", vl, x, got, want)
			}
		}
	}
	checkLoopFree(t, b)
}

// twinLaterPaths calls fn for each path of the second half of ps that a
// does not cover yet, with the path's nodes set in both twin states.
func twinLaterPaths(f *Fabric, ps *PathSet, src []topo.NodeID, a, b *packState, fn func(j int, p []topo.LinkID)) {
	for j := ps.NumPaths() / 2; j < ps.NumPaths(); j++ {
		p := ps.Path(j)
		if a.covered(p) {
			continue
		}
		a.nodes = f.PathNodes(src[j], p, a.nodes[:0])
		b.nodes = f.PathNodes(src[j], p, b.nodes[:0])
		fn(j, p)
	}
}

// A tree is built only for roots that some path outside VLAN 1 passes
// through. On a fabric with a long tail of switches no path enters (a
// 4-switch ring with hosts, 10,000 switches hanging off it) tree cover
// built 10,004 BFS trees of 10,004 nodes for 12 paths (1 s and 1.4 GB of
// allocations per trial), and as many on a line of 10,000 switches whose
// one path lies in VLAN 1. The packing must be the one over every root.
func TestTreeCoverSkipsRootsOnNoPath(t *testing.T) {
	const tail = 10_000
	for _, ring := range []int{4, 1} {
		b := topo.NewBuilder("ring-tail")
		var sw []topo.NodeID
		for i := range ring {
			sw = append(sw, b.AddNode(fmt.Sprintf("s%d", i+1), topo.Switch))
		}
		for i := range sw {
			if ring > 1 {
				b.Connect(sw[i], sw[(i+1)%len(sw)])
			}
			b.Connect(sw[i], b.AddNode(fmt.Sprintf("h%d", i+1), topo.Host))
		}
		prev := sw[0]
		for i := range tail {
			s := b.AddNode(fmt.Sprintf("t%d", i+1), topo.Switch)
			b.Connect(prev, s)
			prev = s
		}
		if ring == 1 { // a line with hosts at both ends
			b.Connect(prev, b.AddNode("h2", topo.Host))
		}
		g, err := b.Graph()
		if err != nil {
			t.Fatal(err)
		}
		f := mustFabric(t, g)
		ps, err := ComputePathSets(f, PathOptions{K: 2, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		base := STP(f).Links
		roots, rootIdx := coverRoots(f)
		want, ok := coverWith[uint16](f, ps, base, roots, rootIdx, 1, 0, 1, MaxVLANs)
		if !ok {
			t.Fatal("limit hit")
		}
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		got, ok := treeCover(f, ps, base, 1, 0, 1, MaxVLANs)
		runtime.ReadMemStats(&m1)
		if !ok || packingDigest(got) != packingDigest(want) {
			t.Fatalf("ring %d: packing over the roots on paths (%d VLANs) differs from the one over every root (%d)", ring, len(got.vlinks), len(want.vlinks))
		}
		trees := uint64(len(roots)) * uint64((g.NumLinks()+63)/64) * 8
		if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > trees/4 {
			t.Fatalf("ring %d: tree cover allocated %d bytes for %d paths; the trees of every root alone take %d", ring, alloc, ps.NumPaths(), trees)
		}
	}
}

// Parallel links: a BFS tree holds only one of the links between two
// nodes, so the paths over the others lie in no candidate tree. Three
// parallel links give three one-link paths (k = α = 3); a tree claiming two
// of them would make a VLAN with a loop.
func TestTreeCoverParallelLinks(t *testing.T) {
	b := topo.NewBuilder("parallel")
	s1, s2 := b.AddNode("s1", topo.Switch), b.AddNode("s2", topo.Switch)
	for range 3 {
		b.Connect(s1, s2)
	}
	b.Connect(s1, b.AddNode("h1", topo.Host))
	b.Connect(s2, b.AddNode("h2", topo.Host))
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	f := mustFabric(t, g)
	ps, err := ComputePathSets(f, PathOptions{K: Alpha(f).Alpha, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ps.NumPaths() != 3 {
		t.Fatalf("%d paths, want 3", ps.NumPaths())
	}
	for trial := range uint64(2) {
		st, ok := treeCover(f, ps, STP(f).Links, 1, trial, 2, MaxVLANs)
		if !ok {
			t.Fatal("limit hit")
		}
		checkLoopFree(t, st)
		if len(st.vlinks) != 3 {
			t.Errorf("trial %d: %d subgraphs, want 3 (one per parallel link)", trial, len(st.vlinks))
		}
		for j := range ps.NumPaths() {
			if holder(st, ps.Path(j)) < 0 {
				t.Errorf("trial %d: path %d in no subgraph", trial, j)
			}
		}
	}
}

// longestFirst orders by decreasing length, keeps the given order among
// equal lengths, and leaves its argument alone (both ways of placeLoose
// read it at once).
func TestLongestFirst(t *testing.T) {
	ps := &PathSet{PathOff: []uint32{0, 2, 3, 7, 9, 10, 14}} // lengths 2 1 4 2 1 4
	ps.Links = make([]topo.LinkID, 14)
	sel := []uint32{5, 0, 1, 2, 3, 4}
	got := longestFirst(ps, sel)
	if want := []uint32{5, 2, 0, 3, 1, 4}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if !slices.Equal(sel, []uint32{5, 0, 1, 2, 3, 4}) {
		t.Fatalf("argument changed: %v", sel)
	}
	if got := longestFirst(ps, nil); len(got) != 0 {
		t.Fatalf("empty: %v", got)
	}
}
