package paths

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/edgefabric/edgefabric/topo"
)

// tailFabric is a line of n switches ending in a 4-switch ring, hosts on
// the line's first switch and on three switches of the ring: 4 edge
// switches whose paths cross the whole line (found in review: 20,000
// switches took 5 minutes to pack, a tree built at every node of every
// path and a quadratic loop test per placement).
func tailFabric(t *testing.T, n int) *Fabric {
	t.Helper()
	b := topo.NewBuilder("tail")
	sw := make([]topo.NodeID, n)
	for i := range sw {
		sw[i] = b.AddNode(fmt.Sprintf("s%d", i), topo.Switch)
		if i > 0 {
			b.Connect(sw[i-1], sw[i])
		}
	}
	b.Connect(sw[n-1], sw[n-4])
	for i, at := range []topo.NodeID{sw[0], sw[n-1], sw[n-2], sw[n-3]} {
		b.Connect(at, b.AddNode(fmt.Sprintf("h%d", i), topo.Host))
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return mustFabric(t, g)
}

// rootsOnPaths keeps only the nodes among a path's first maxPathRoots,
// the only ones pathRoots tests: a tree at any other node of a long path
// is never taken.
func TestRootsOnPathsFirstNodesOnly(t *testing.T) {
	f := tailFabric(t, 2000)
	ps, err := ComputePathSets(f, PathOptions{K: 3, Seed: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	base := STP(f).Links
	roots, rootIdx := coverRoots(f)
	kept, _ := rootsOnPaths(f, ps, base, roots, rootIdx, 2)
	inBase := map[topo.LinkID]bool{}
	for _, l := range base {
		inBase[l] = true
	}
	want := map[topo.NodeID]bool{}
	src := ps.Sources()
	for j := range ps.NumPaths() {
		p := ps.Path(j)
		out := false
		for _, l := range p {
			out = out || !inBase[l]
		}
		if !out {
			continue
		}
		nodes := f.PathNodes(src[j], p, nil)
		for _, v := range nodes[:min(len(nodes), maxPathRoots)] {
			want[v] = true
		}
	}
	got := map[topo.NodeID]bool{}
	for _, v := range kept {
		got[v] = true
	}
	if len(got) != len(want) || len(want) == 0 || len(want) > 4*maxPathRoots {
		t.Fatalf("kept %d roots, want the %d among the paths' first %d nodes", len(got), len(want), maxPathRoots)
	}
	for v := range want {
		if !got[v] {
			t.Fatalf("root %d, on a path's first nodes, not kept", v)
		}
	}
	// And the plan's packing still holds every path in a loop-free VLAN.
	pk, err := Pack(f, ps, base, PackOptions{Trials: 2, Seed: 1, Parallel: true, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tail of 2,000: %d roots kept, %d VLANs", len(kept), len(pk.VLANs))
}

// fitsLong answers as fits' flat overlay does, and blocks the same
// links, on random long paths against random loop-free subgraphs.
func TestFitsLongMatchesFlat(t *testing.T) {
	f := tailFabric(t, 300)
	r := rand.New(rand.NewPCG(5, 6))
	ps, err := ComputePathSets(f, PathOptions{K: 3, Seed: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	src := ps.Sources()
	var long []int
	for j := range ps.NumPaths() {
		if len(ps.Path(j)) > fitsFlatMax {
			long = append(long, j)
		}
	}
	if len(long) == 0 {
		t.Fatal("no long path")
	}
	defer func(v int) { fitsFlatLimit = v }(fitsFlatLimit)
	agree, yes := 0, 0
	for trial := range 200 {
		a, b := newPackState(f, nil), newPackState(f, nil)
		// A random loop-free subgraph: random links, each kept if it
		// closes no loop.
		for range 1 + r.IntN(f.G.NumLinks()) {
			l := topo.LinkID(r.IntN(f.G.NumLinks()))
			x, y := f.Ends(l)
			if a.has(0, l) || find(a.uf[0], int32(x)) == find(a.uf[0], int32(y)) {
				continue
			}
			a.add(0, l, x, y)
			b.add(0, l, x, y)
		}
		j := long[r.IntN(len(long))]
		p := ps.Path(j)
		a.nodes = f.PathNodes(src[j], p, a.nodes[:0])
		b.nodes = f.PathNodes(src[j], p, b.nodes[:0])
		got := a.fitsLong(0, p)
		// The flat list, forced.
		fitsFlatLimit = 1 << 30
		want := b.fits(0, p)
		fitsFlatLimit = fitsFlatMax
		if got != want {
			t.Fatalf("trial %d: fitsLong %v, flat fits %v", trial, got, want)
		}
		for l := range f.G.NumLinks() {
			if a.blocked[l] != b.blocked[l] {
				t.Fatalf("trial %d: link %d blocked %b by fitsLong, %b by fits", trial, l, a.blocked[l], b.blocked[l])
			}
		}
		agree++
		if got {
			yes++
		}
	}
	if yes == 0 || yes == agree {
		t.Errorf("%d of %d paths fit: want both answers among the cases", yes, agree)
	}
}

// After the stamp wraps, fitsLong answers as before: marks left under an
// old stamp must not be taken for the new one's (found in review: a stamp
// of 0 matched every node never marked, so a path that fits did not).
func TestFitsLongStampWrap(t *testing.T) {
	f := tailFabric(t, 300)
	ps, err := ComputePathSets(f, PathOptions{K: 3, Seed: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	src := ps.Sources()
	for j := range ps.NumPaths() {
		p := ps.Path(j)
		if len(p) <= fitsFlatMax {
			continue
		}
		st := newPackState(f, nil)
		st.nodes = f.PathNodes(src[j], p, st.nodes[:0])
		want := st.fitsLong(0, p)
		for _, s := range []uint32{math.MaxUint32, math.MaxUint32 - 1} {
			st.stamp = s
			for range 3 {
				if got := st.fitsLong(0, p); got != want {
					t.Fatalf("path %d, stamp from %d: fitsLong %v, want %v", j, s, got, want)
				}
			}
		}
		if !want {
			t.Fatalf("path %d does not fit an empty subgraph", j)
		}
		return
	}
	t.Fatal("no long path")
}
