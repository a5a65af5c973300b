package paths

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/topo"
)

func TestParseTies(t *testing.T) {
	for s, want := range map[string]Ties{"random": TiesRandom, "": TiesPair, "ordered": TiesOrdered, "node": TiesNode, "pair": TiesPair} {
		got, err := ParseTies(s)
		if err != nil || got != want {
			t.Errorf("ParseTies(%q) = %v, %v; want %v", s, got, err, want)
		}
		if s != "" && got.String() != s {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), s)
		}
	}
	for _, s := range []string{"lowest", "Random", "ordered ", "nodes", "pairs", "Pair"} {
		if _, err := ParseTies(s); !errors.Is(err, ErrBadTies) {
			t.Errorf("ParseTies(%q): err %v, want ErrBadTies", s, err)
		}
	}
	// Pair is the default: the zero value, as Options{} leaves it.
	if (PathOptions{}).Ties != TiesPair || Ties(0).String() != "pair" {
		t.Errorf("zero Ties is %v, want pair", Ties(0))
	}
	f := fabricOf(t, "fattree:4")
	for _, bad := range []Ties{TiesNode + 1, 7} {
		if _, err := ComputePathSets(f, PathOptions{K: 1, Ties: bad}); !errors.Is(err, ErrBadTies) {
			t.Errorf("%v: err %v, want ErrBadTies", bad, err)
		}
	}
}

func fabricOf(t *testing.T, spec string) *Fabric {
	t.Helper()
	g, err := topo.Parse(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewFabric(g)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Ordered ties ignore the seed; random ones do not.
func TestOrderedTiesIgnoreSeed(t *testing.T) {
	f := fabricOf(t, "fattree:8")
	get := func(ties Ties, seed uint64) *PathSet {
		ps, err := ComputePathSets(f, PathOptions{K: 4, Seed: seed, Ties: ties, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	a, b := get(TiesOrdered, 1), get(TiesOrdered, 99)
	if !slices.Equal(a.Links, b.Links) || !slices.Equal(a.PathOff, b.PathOff) {
		t.Error("ordered path sets differ between seeds 1 and 99")
	}
	r1, r2 := get(TiesRandom, 1), get(TiesRandom, 99)
	if slices.Equal(r1.Links, r2.Links) {
		t.Error("random path sets are equal for seeds 1 and 99")
	}
}

// Under ordered ties every pair of FatTree(8) edge switches in different
// pods takes its first path through the same core switch (the first uplink
// of the first aggregation switch), which is why the paper's FatTree PS=1
// gain is 1.00; random ties spread first paths over all 16 cores.
func TestOrderedTiesFatTreeOneCore(t *testing.T) {
	f := fabricOf(t, "fattree:8")
	cores := func(ties Ties) map[topo.NodeID]int {
		ps, err := ComputePathSets(f, PathOptions{K: 1, Seed: 1, Ties: ties})
		if err != nil {
			t.Fatal(err)
		}
		used := map[topo.NodeID]int{}
		var nodes []topo.NodeID
		for i, pr := range ps.Pairs {
			lo, _ := ps.PairPaths(i)
			nodes = f.PathNodes(pr.A, ps.Path(lo), nodes[:0])
			for _, v := range nodes {
				if f.G.Node(v).Role == "core" {
					used[v]++
				}
			}
		}
		return used
	}
	if got := cores(TiesOrdered); len(got) != 1 {
		t.Errorf("ordered ties: first paths cross %d cores, want 1: %v", len(got), got)
	}
	if got := cores(TiesRandom); len(got) != 16 {
		t.Errorf("random ties: first paths cross %d cores, want all 16", len(got))
	}
}

// Under node ties a node resolves a tie the same way for every pair: in
// FatTree(8) (k = 1) each edge switch sends all its first paths to other
// pods up the same uplink, and each aggregation switch relays them up the
// same core link. The preferences still differ between nodes (edge
// switches leave by more than one uplink port) and between seeds.
func TestNodeTiesPerNodePreference(t *testing.T) {
	f := fabricOf(t, "fattree:8")
	get := func(seed uint64) *PathSet {
		ps, err := ComputePathSets(f, PathOptions{K: 1, Seed: seed, Ties: TiesNode, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	ps := get(1)
	up := map[topo.NodeID]topo.LinkID{} // first hop per node on the way up
	firsts := map[topo.LinkID]bool{}
	var nodes []topo.NodeID
	for i, pr := range ps.Pairs {
		lo, _ := ps.PairPaths(i)
		p := ps.Path(lo)
		if len(p) != 4 { // not through a core
			continue
		}
		nodes = f.PathNodes(pr.A, p, nodes[:0])
		for h, v := range nodes[:2] { // the edge switch, then its aggregation switch
			if l, ok := up[v]; ok && l != p[h] {
				t.Fatalf("node %d goes up by link %d for one pair and %d for another", v, l, p[h])
			}
			up[v] = p[h]
		}
		firsts[p[0]] = true
	}
	if len(firsts) < 2 {
		t.Errorf("every edge switch prefers the same port: %d distinct first links", len(firsts))
	}
	if slices.Equal(ps.Links, get(99).Links) {
		t.Error("node path sets are equal for seeds 1 and 99")
	}
}

// Under pair ties a pair's first path takes, at every node, the first
// port one hop closer to the destination in a scan that starts at the
// same offset everywhere (modulo the node's number of ports). On
// BCube(3,4) (servers with 4 ports, switches with 3) some offset below 12
// explains every pair's path, and the pairs use every one of the 12;
// under random ties a quarter of the pairs' paths fit no offset (their
// servers correct the address digits in an order that is no rotation).
func TestPairTiesOneOffsetPerPair(t *testing.T) {
	f := fabricOf(t, "bcube:3,4")
	unexplained := func(ties Ties) (int, int, map[int]bool) {
		ps, err := ComputePathSets(f, PathOptions{K: 1, Seed: 3, Ties: ties, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		bad := 0
		offsets := map[int]bool{}
		var nodes []topo.NodeID
		var dist []int32
		var lastB topo.NodeID = -1
		for i, pr := range ps.Pairs {
			if pr.B != lastB {
				dist, lastB = f.BFS(pr.B, dist), pr.B
			}
			lo, _ := ps.PairPaths(i)
			p := ps.Path(lo)
			nodes = f.PathNodes(pr.A, p, nodes[:0])
			fits := func(off int) bool {
				for h, v := range nodes[:len(p)] {
					nbrs, links := f.Neighbors(v)
					deg := len(nbrs)
					for j := range deg {
						q := (off + j) % deg
						if dist[nbrs[q]] == dist[v]-1 {
							if links[q] != p[h] {
								return false
							}
							break
						}
					}
				}
				return true
			}
			found := false
			for off := range 12 {
				if fits(off) {
					found = true
					offsets[off] = true
				}
			}
			if !found {
				bad++
			}
		}
		return bad, len(ps.Pairs), offsets
	}
	bad, pairs, offsets := unexplained(TiesPair)
	if bad != 0 || len(offsets) != 12 {
		t.Errorf("pair ties: %d of %d paths fit no offset, %d offsets used; want 0 and 12", bad, pairs, len(offsets))
	}
	t.Logf("pair ties: %d of %d paths fit no offset, %d offsets used", bad, pairs, len(offsets))
	if bad, pairs, _ := unexplained(TiesRandom); bad < pairs/10 {
		t.Errorf("random ties: %d of %d paths fit no offset; want a good share (orders that are no rotation)", bad, pairs)
	} else {
		t.Logf("random ties: %d of %d paths fit no offset", bad, pairs)
	}
}

// Where a node has parallel links, A* scans its ports from the port the
// tie rule starts the depth-first walk's scan at, so that the rule picks
// among equal parallel links as it does there: s1 ≡ s2 − s3 with three
// parallel links a, b, c (positions 0, 1, 2 at s1) and one link s2−s3, k
// = 2. The first path takes the link at s1's scan start q (pair: the
// pair's offset mod 3; node: s1's own start); the second shares s2−s3, so
// A* finds it, and must take the next link in the scan, q+1 mod 3, not
// always the lowest free one. Under random ties every ordered choice of
// two links occurs over 60 seeds (the lowest free port gave 3 of the 6).
func TestAStarParallelLinksFollowTheTieRule(t *testing.T) {
	var s1, s3 topo.NodeID
	f := build(t, "par3", func(b *topo.Builder) {
		s1 = b.AddNode("s1", topo.Switch)
		s2 := b.AddNode("s2", topo.Switch)
		s3 = b.AddNode("s3", topo.Switch)
		for range 3 {
			b.Connect(s1, s2)
		}
		b.Connect(s2, s3)
		b.Connect(s1, b.AddNode("h1", topo.Host))
		b.Connect(s3, b.AddNode("h3", topo.Host))
	})
	_, at := f.Neighbors(s1) // links by adjacency position at s1
	for _, ties := range []Ties{TiesPair, TiesNode, TiesRandom, TiesOrdered} {
		seen := map[[2]topo.LinkID]bool{}
		for seed := range uint64(60) {
			ps, err := ComputePathSets(f, PathOptions{K: 2, Seed: seed, Ties: ties})
			if err != nil {
				t.Fatal(err)
			}
			if ps.NumPaths() != 2 {
				t.Fatalf("%v seed %d: %d paths, want 2", ties, seed, ps.NumPaths())
			}
			got := [2]topo.LinkID{ps.Path(0)[0], ps.Path(1)[0]}
			seen[got] = true
			q := -1
			switch ties {
			case TiesOrdered:
				q = 0
			case TiesPair:
				q = int(rand.NewPCG(seed, uint64(s1)<<32|uint64(s3)).Uint64() % 3)
			case TiesNode:
				q = int(newNodePrefs(f, seed).first[s1])
			}
			if want := [2]topo.LinkID{at[max(q, 0)], at[(q+1)%3]}; q >= 0 && got != want {
				t.Fatalf("%v seed %d: first links %v, want %v (scan from position %d)", ties, seed, got, want, q)
			}
		}
		if ties == TiesRandom && len(seen) != 6 {
			t.Errorf("random ties: %d of the 6 ordered choices of two parallel links over 60 seeds: %v", len(seen), seen)
		}
	}
}
