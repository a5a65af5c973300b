package paths

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/topo"
)

// Independent slow checks of Algorithm 1 and of α, by exhaustive search on
// small fabrics: every simple path of a pair, every cut between two nodes.

// simplePaths lists every simple fabric path from a to b as its links, or
// returns false past limit paths.
func simplePaths(f *Fabric, a, b topo.NodeID, limit int) ([][]topo.LinkID, bool) {
	var out [][]topo.LinkID
	on := map[topo.NodeID]bool{a: true}
	var stack []topo.LinkID
	var walk func(v topo.NodeID) bool
	walk = func(v topo.NodeID) bool {
		if v == b {
			out = append(out, slices.Clone(stack))
			return len(out) <= limit
		}
		nbrs, links := f.Neighbors(v)
		for i, w := range nbrs {
			if on[w] {
				continue
			}
			on[w], stack = true, append(stack, links[i])
			ok := walk(w)
			on[w], stack = false, stack[:len(stack)-1]
			if !ok {
				return false
			}
		}
		return true
	}
	return out, walk(a)
}

// checkAlgorithm1 checks ps against Algorithm 1 as the paper writes it,
// over every simple path of each pair: with every edge weighing 1 + |E| per
// chosen path of the pair that uses it, each path is a minimum-weight one
// and new; a pair with fewer than k paths stopped because a path already
// chosen was of minimum weight ("no more useful paths"). Which of several
// minimum-weight paths is taken is the tie rule's, not checked here.
// every caches each pair's simple paths between calls on one fabric.
func checkAlgorithm1(t *testing.T, name string, f *Fabric, ps *PathSet, k int, every map[Pair][][]topo.LinkID) {
	t.Helper()
	E := int64(f.NumFabricLinks)
	use := make([]int64, f.G.NumLinks())
	for pi, pr := range ps.Pairs {
		all, ok := every[pr]
		if !ok {
			if all, ok = simplePaths(f, pr.A, pr.B, 100_000); !ok {
				t.Fatalf("%s: pair %v has too many paths for the check", name, pr)
			}
			every[pr] = all
		}
		lo, hi := ps.PairPaths(pi)
		if hi-lo < 1 || hi-lo > k {
			t.Fatalf("%s: pair %v: %d paths, k=%d", name, pr, hi-lo, k)
		}
		clear(use)
		weight := func(p []topo.LinkID) int64 {
			w := int64(0)
			for _, l := range p {
				w += 1 + E*use[l]
			}
			return w
		}
		for q := 0; q <= hi-lo && q < k; q++ {
			least := int64(-1)
			for _, p := range all {
				if w := weight(p); least < 0 || w < least {
					least = w
				}
			}
			if q == hi-lo {
				stop := false
				for j := lo; j < hi; j++ {
					stop = stop || weight(ps.Path(j)) == least
				}
				if !stop {
					t.Fatalf("%s: pair %v stopped at %d paths (k=%d), but no chosen path weighs the least, %d", name, pr, q, k, least)
				}
				break
			}
			p := ps.Path(lo + q)
			if !slices.ContainsFunc(all, func(x []topo.LinkID) bool { return slices.Equal(x, p) }) {
				t.Fatalf("%s: pair %v path %d %v is no simple path from %d to %d", name, pr, q, p, pr.A, pr.B)
			}
			if w := weight(p); w != least {
				t.Fatalf("%s: pair %v path %d %v weighs %d, the least is %d", name, pr, q, p, w, least)
			}
			if chosen(ps, lo, lo+q, p) {
				t.Fatalf("%s: pair %v path %d %v repeats an earlier one", name, pr, q, p)
			}
			for _, l := range p {
				use[l]++
			}
		}
	}
}

// chosen reports whether p is one of the paths lo..hi-1 of ps.
func chosen(ps *PathSet, lo, hi int, p []topo.LinkID) bool {
	for j := lo; j < hi; j++ {
		if slices.Equal(ps.Path(j), p) {
			return true
		}
	}
	return false
}

// randomFabric is a random connected multigraph of 2 to maxN forwarding
// nodes (parallel links likely; on every third, some nodes relaying hosts
// instead of switches) with hosts on about half of them.
func randomFabric(t *testing.T, r *rand.Rand, name string, maxN int, relays bool) *Fabric {
	t.Helper()
	return build(t, name, func(b *topo.Builder) {
		n := 2 + r.IntN(maxN-1)
		var v []topo.NodeID
		for i := range n {
			if relays && r.IntN(3) == 0 {
				id := b.AddNode(fmt.Sprintf("r%d", i), topo.Host)
				b.Node(id).Relay = true
				v = append(v, id)
				continue
			}
			v = append(v, b.AddNode(fmt.Sprintf("s%d", i), topo.Switch))
		}
		for i := 1; i < n; i++ {
			b.Connect(v[r.IntN(i)], v[i])
		}
		for range r.IntN(2 * n) {
			if x, y := r.IntN(n), r.IntN(n); x != y {
				b.Connect(v[x], v[y])
			}
		}
		hosts := 0
		for i := range n {
			if r.IntN(2) == 0 || i == n-1 && hosts == 0 {
				b.Connect(v[i], b.AddNode(fmt.Sprintf("h%d", i), topo.Host))
				hosts++
			}
		}
	})
}

// Algorithm 1 against the exhaustive check on small fabrics, for k from 1
// to well past the number of distinct useful paths, under every tie rule,
// with either chunk storage: the generated topologies, and random
// multigraphs (parallel links, relaying hosts, paths detouring beyond
// MaxSlack, bottleneck links that later paths must share).
func TestAlgorithm1Exhaustive(t *testing.T) {
	defer func() { narrowMaxDegree = 256 }()
	check := func(name string, f *Fabric, ks []int, narrow int) {
		narrowMaxDegree = narrow
		every := map[Pair][][]topo.LinkID{}
		for _, k := range ks {
			for _, ties := range []Ties{TiesPair, TiesRandom, TiesOrdered, TiesNode} {
				ps, err := ComputePathSets(f, PathOptions{K: k, Seed: 3, Ties: ties, Workers: 2})
				if err != nil {
					t.Fatal(err)
				}
				checkAlgorithm1(t, fmt.Sprintf("%s k=%d %v narrow %d", name, k, ties, narrow), f, ps, k, every)
			}
		}
	}
	for i, spec := range []string{"fattree:4", "hyperx:3", "bcube:2,2", "bcube:3,2", "ciscodc:2,2", "spain-fig2", "ring:9", "line:4", "jellyfish:10,4,3"} {
		check(spec, mustFabric(t, mustTopo(t, spec)), []int{1, 2, 5, 40}, 256*(i%2))
	}
	r := rand.New(rand.NewPCG(11, 11))
	for i := range 300 {
		check(fmt.Sprintf("random %d", i), randomFabric(t, r, fmt.Sprintf("random%d", i), 9, i%3 == 0), []int{1, 2, 4, 30}, 256*(i%2))
	}
}

// minCut is the fewest fabric links whose removal separates s from t, by
// trying every set of forwarding nodes that holds s and not t.
func minCut(f *Fabric, s, t topo.NodeID) int {
	var fw []topo.NodeID
	for v := range f.G.NumNodes() {
		if f.G.Node(topo.NodeID(v)).Forwards() {
			fw = append(fw, topo.NodeID(v))
		}
	}
	best := -1
	side := make([]bool, f.G.NumNodes())
	for mask := range 1 << len(fw) {
		for i, v := range fw {
			side[v] = mask>>i&1 != 0
		}
		if !side[s] || side[t] {
			continue
		}
		c := 0
		for l := range f.G.NumLinks() {
			if a, b := f.Ends(topo.LinkID(l)); f.IsFabric(topo.LinkID(l)) && side[a] != side[b] {
				c++
			}
		}
		if best < 0 || c < best {
			best = c
		}
	}
	return best
}

// EdgeDisjoint is the minimum cut (Menger) for every pair of edge nodes,
// and Alpha its maximum, exactly, on random multigraphs whose degrees
// differ (Alpha's search stops on degree bounds).
func TestAlphaExhaustive(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 31))
	for i := range 300 {
		f := randomFabric(t, r, fmt.Sprintf("random%d", i), 9, i%3 == 0)
		want := 0
		for x, a := range f.Edges {
			for _, b := range f.Edges[x+1:] {
				c := minCut(f, a, b)
				if e := EdgeDisjoint(f, a, b); e != c {
					t.Fatalf("random %d: EdgeDisjoint(%d, %d) = %d, the minimum cut is %d", i, a, b, e, c)
				}
				want = max(want, c)
			}
		}
		if a := Alpha(f); a.Alpha != want || !a.Exact || len(f.Edges) > 1 && EdgeDisjoint(f, a.A, a.B) != want {
			t.Fatalf("random %d: %+v, want α = %d, exact, and a pair achieving it", i, a, want)
		}
	}
}

// Pack and Prune on random multigraphs (parallel links, relaying hosts, a
// single edge node, paths all inside VLAN 1), every strategy: VLAN 1 is
// the tree given, no VLAN is empty or holds a link twice or a host link,
// every VLAN is loop-free and every path lies in one (verifyPacking), tree
// cover's PathVLAN names a VLAN holding the path, TrialVLANs and Pruned
// agree, and the parallel packing does not depend on the worker count;
// the same after Prune.
func TestPackRandomMultigraphs(t *testing.T) {
	check := func(name string, f *Fabric, ps *PathSet, base []topo.LinkID, pk *Packing) {
		t.Helper()
		if len(pk.VLANs) == 0 || len(pk.VLANs) > MaxVLANs || !slices.Equal(pk.VLANs[0], slices.Sorted(slices.Values(base))) {
			t.Fatalf("%s: %d VLANs, VLAN 1 %v; want VLAN 1 the tree %v", name, len(pk.VLANs), pk.VLANs, base)
		}
		for i, ls := range pk.VLANs[1:] {
			if len(ls) == 0 || slices.ContainsFunc(ls, func(l topo.LinkID) bool { return !f.IsFabric(l) }) || len(slices.Compact(slices.Clone(ls))) != len(ls) {
				t.Fatalf("%s: VLAN %d holds %v", name, i+2, ls)
			}
		}
		verifyPacking(t, f, ps, pk)
		if pk.PathVLAN != nil {
			checkHints(t, name, ps, pk.PathVLAN, pk.VLANs)
		}
		if pk.TrialVLANs[pk.BestTrial] != len(pk.VLANs)+pk.Pruned {
			t.Fatalf("%s: best trial %d of %d VLANs, %d kept, %d pruned", name, pk.BestTrial, pk.TrialVLANs[pk.BestTrial], len(pk.VLANs), pk.Pruned)
		}
	}
	r := rand.New(rand.NewPCG(21, 21))
	for i := range 200 {
		f := randomFabric(t, r, fmt.Sprintf("random%d", i), 9, i%3 == 0)
		k := []int{1, 2, 3, 6}[i%4]
		ps, err := ComputePathSets(f, PathOptions{K: k, Seed: uint64(i), Ties: Ties(i % 4)})
		if err != nil {
			t.Fatal(err)
		}
		base := STP(f).Links
		var first [][]topo.LinkID
		for _, opt := range []PackOptions{
			{Trials: 3, Seed: 5, Parallel: true, Workers: 1},
			{Trials: 3, Seed: 5, Parallel: true, Workers: 3},
			{Trials: 3, Seed: 5, Parallel: true, Workers: 2, PruneEach: true},
			{Trials: 2, Seed: 5},
		} {
			name := fmt.Sprintf("random %d k=%d %+v", i, k, opt)
			pk, err := Pack(f, ps, base, opt)
			if err != nil {
				t.Fatal(err)
			}
			check(name, f, ps, base, pk)
			if opt.Parallel && !opt.PruneEach {
				if first == nil {
					first = slices.Clone(pk.VLANs)
				} else if !slices.EqualFunc(first, pk.VLANs, slices.Equal) {
					t.Fatalf("%s: the packing depends on the workers", name)
				}
			}
			Prune(f, ps, pk)
			check(name+", pruned", f, ps, base, pk)
		}
	}
}
