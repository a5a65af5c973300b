package paths

import (
	"errors"
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/topo"
)

func TestParseTies(t *testing.T) {
	for s, want := range map[string]Ties{"random": TiesRandom, "": TiesRandom, "ordered": TiesOrdered, "node": TiesNode} {
		got, err := ParseTies(s)
		if err != nil || got != want {
			t.Errorf("ParseTies(%q) = %v, %v; want %v", s, got, err, want)
		}
		if s != "" && got.String() != s {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), s)
		}
	}
	for _, s := range []string{"lowest", "Random", "ordered ", "nodes"} {
		if _, err := ParseTies(s); !errors.Is(err, ErrBadTies) {
			t.Errorf("ParseTies(%q): err %v, want ErrBadTies", s, err)
		}
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
