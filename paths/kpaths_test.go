package paths

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/edgefabric/edgefabric/topo"
)

// hashPathSet is an FNV-64a digest of every array of ps, so that a test can
// pin a whole path set in one number.
func hashPathSet(ps *PathSet) uint64 {
	h := fnv.New64a()
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	put(uint64(ps.K))
	put(uint64(len(ps.Pairs)))
	for _, p := range ps.Pairs {
		put(uint64(p.A)<<32 | uint64(uint32(p.B)))
	}
	put(uint64(len(ps.PairOff)))
	for _, o := range ps.PairOff {
		put(uint64(o))
	}
	put(uint64(len(ps.PathOff)))
	for _, o := range ps.PathOff {
		put(uint64(o))
	}
	put(uint64(len(ps.Links)))
	for _, l := range ps.Links {
		put(uint64(uint32(l)))
	}
	return h.Sum64()
}

var printPins = flag.Bool("print-pins", false, "print the digests TestPathSetsPinned expects instead of checking them")

// pinCases cover the disjoint-path DFS (k within the edge-disjoint count)
// and the A* fallback with its "path repeats" stop (k above it), under both
// tie rules.
var pinCases = []struct {
	spec string
	k    int
}{
	{"fattree:8", 4},
	{"fattree:8", 7},
	{"hyperx:4", 3},
	{"hyperx:4", 9},
	{"ciscodc:2,2", 2},
	{"ciscodc:2,2", 6},
	{"bcube:4,3", 3},
	{"bcube:4,3", 6},
	{"spain-testbed", 2},
	{"spain-testbed", 5},
}

// pins are the digests of the path sets the code computed before the
// searcher was optimized (commit 3e61f9a), seed 7: optimizations must
// not change a single path. Keyed by "spec k ties".
var pins = map[string]uint64{
	"fattree:8 4 random":      0xaeee264333dba34d,
	"fattree:8 4 ordered":     0xc8ae1a86ddae392d,
	"fattree:8 7 random":      0x82b45456dbdac50,
	"fattree:8 7 ordered":     0x3315784262f394d0,
	"hyperx:4 3 random":       0x3d97a2e157c5fd2,
	"hyperx:4 3 ordered":      0x3e7b4682be195938,
	"hyperx:4 9 random":       0x3370feb87cc6b38c,
	"hyperx:4 9 ordered":      0x6a899abaf58b1d0c,
	"ciscodc:2,2 2 random":    0x371f2042ac25cdd,
	"ciscodc:2,2 2 ordered":   0x9ac6f0b1a21a77fd,
	"ciscodc:2,2 6 random":    0xc287c6a7ec27c23,
	"ciscodc:2,2 6 ordered":   0xad066a6cb049a39,
	"bcube:4,3 3 random":      0xe8f06f22fc7443ac,
	"bcube:4,3 3 ordered":     0x1e56ea7cece77de8,
	"bcube:4,3 6 random":      0x2ac938c46c34e72c,
	"bcube:4,3 6 ordered":     0x7ad062ebc4350a0a,
	"spain-testbed 2 random":  0x17c2855a74a31172,
	"spain-testbed 2 ordered": 0x96b5cc2bb924f452,
	"spain-testbed 5 random":  0x56270f2f77c564f6,
	"spain-testbed 5 ordered": 0xba5436ba8515dfb6,
	// Made by the code that introduced TiesNode (the testbed has no tie
	// its rule resolves otherwise than random ties do).
	"fattree:8 4 node":     0x89cce665bd1c9e2d,
	"fattree:8 7 node":     0xb7b60aced8d9f3d0,
	"hyperx:4 3 node":      0x77f8bb03c3935386,
	"hyperx:4 9 node":      0x390059e09490860c,
	"ciscodc:2,2 2 node":   0xa6a17638c0efe25d,
	"ciscodc:2,2 6 node":   0xac7de357e69708ce,
	"bcube:4,3 3 node":     0x6148c054b3cf26c6,
	"bcube:4,3 6 node":     0x6426b17d21282409,
	"spain-testbed 2 node": 0x17c2855a74a31172,
	"spain-testbed 5 node": 0x56270f2f77c564f6,
	// Made by the code that introduced TiesPair (its offset is one more
	// draw from the pair's stream, so the testbed differs from random).
	"fattree:8 4 pair":     0x75e98ef1357f842d,
	"fattree:8 7 pair":     0x65191a8e0706f470,
	"hyperx:4 3 pair":      0x789c64a39f5a3c86,
	"hyperx:4 9 pair":      0x90d949199395994c,
	"ciscodc:2,2 2 pair":   0xfb6098d951fe4495,
	"ciscodc:2,2 6 pair":   0x39fea0b9769cf1ff,
	"bcube:4,3 3 pair":     0x2b24e72cb1602368,
	"bcube:4,3 6 pair":     0x680d798e47f686ea,
	"spain-testbed 2 pair": 0xb69f5d6890ef0c30,
	"spain-testbed 5 pair": 0x78a37ace554a46b6,
}

// TestPathSetsPinned: ComputePathSets returns exactly the path sets it
// returned before, for every tie rule and any number of workers.
func TestPathSetsPinned(t *testing.T) {
	for _, c := range pinCases {
		f := fabricOf(t, c.spec)
		for _, ties := range []Ties{TiesRandom, TiesOrdered, TiesNode, TiesPair} {
			key := fmt.Sprintf("%s %d %v", c.spec, c.k, ties)
			var first *PathSet
			for _, w := range []int{1, 2, 5} {
				ps, err := ComputePathSets(f, PathOptions{K: c.k, Seed: 7, Ties: ties, Workers: w})
				if err != nil {
					t.Fatalf("%s: %v", key, err)
				}
				checkPinnedPathSet(t, f, ps, key)
				if first == nil {
					first = ps
					got := hashPathSet(ps)
					if *printPins {
						fmt.Printf("\t%q: %#x,\n", key, got)
					} else if want, ok := pins[key]; !ok || got != want {
						t.Errorf("%s: digest %#x, want %#x", key, got, want)
					}
					continue
				}
				if !slices.Equal(ps.Pairs, first.Pairs) || !slices.Equal(ps.PairOff, first.PairOff) ||
					!slices.Equal(ps.PathOff, first.PathOff) || !slices.Equal(ps.Links, first.Links) {
					t.Errorf("%s: Workers %d gives a different path set than Workers 1", key, w)
				}
			}
		}
	}
}

// The chunk storage for nodes with more than 256 ports (link IDs instead
// of port bytes) gives the same path sets.
func TestPathSetsWideChunks(t *testing.T) {
	defer func(v int) { narrowMaxDegree = v }(narrowMaxDegree)
	for _, c := range pinCases[:6] {
		f := fabricOf(t, c.spec)
		for _, ties := range []Ties{TiesRandom, TiesOrdered, TiesNode, TiesPair} {
			key := fmt.Sprintf("%s %d %v", c.spec, c.k, ties)
			narrowMaxDegree = 0
			ps, err := ComputePathSets(f, PathOptions{K: c.k, Seed: 7, Ties: ties, Workers: 2})
			narrowMaxDegree = 256
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			if got := hashPathSet(ps); got != pins[key] {
				t.Errorf("%s with link-ID chunks: digest %#x, want %#x", key, got, pins[key])
			}
		}
	}
}

// checkPinnedPathSet checks the structure a digest cannot explain when it fails:
// offsets monotone and in range, every path a walk from A to B, at most K
// paths per pair.
func checkPinnedPathSet(t *testing.T, f *Fabric, ps *PathSet, key string) {
	t.Helper()
	ne := len(f.Edges)
	if len(ps.Pairs) != ne*(ne-1)/2 || len(ps.PairOff) != len(ps.Pairs)+1 {
		t.Fatalf("%s: %d pairs, %d pair offsets for %d edges", key, len(ps.Pairs), len(ps.PairOff), ne)
	}
	if int(ps.PathOff[len(ps.PathOff)-1]) != len(ps.Links) || int(ps.PairOff[len(ps.Pairs)]) != ps.NumPaths() {
		t.Fatalf("%s: offsets do not end at the array lengths", key)
	}
	for i, pr := range ps.Pairs {
		lo, hi := ps.PairPaths(i)
		if hi <= lo || hi-lo > ps.K {
			t.Fatalf("%s: pair %v has %d paths, k=%d", key, pr, hi-lo, ps.K)
		}
		for j := lo; j < hi; j++ {
			v := pr.A
			for _, l := range ps.Path(j) {
				v = f.Other(l, v)
			}
			if v != pr.B {
				t.Fatalf("%s: path %d of pair %v ends at %d", key, j, pr, v)
			}
		}
	}
}

// BenchmarkPathSetsLarge measures Algorithm 1 on the two largest Table 3
// path sets (tens of millions of paths, seconds each). Go runs benchmarks
// only when -bench selects them, so it does not slow the test suite:
//
//	go test ./paths -run '^$' -bench PathSetsLarge -benchtime 1x -cpuprofile /tmp/ps.prof
func BenchmarkPathSetsLarge(b *testing.B) {
	for _, spec := range []string{"fattree:48", "bcube:8,4"} {
		f := mustFabric(b, mustTopo(b, spec))
		k := Alpha(f).Alpha
		b.Run(spec, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ps, err := ComputePathSets(f, PathOptions{K: k, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(ps.NumPaths()), "paths")
			}
		})
	}
}

// Scanning only the closer neighbours of a node with no hop to spare finds
// exactly the paths the full scan of every port finds, on irregular
// fabrics too (random regular graphs, parallel links, uneven degrees,
// relaying servers), for every tie rule and k within and above the
// edge-disjoint count (the A* fallback in between).
func TestCloserScanSamePaths(t *testing.T) {
	defer func(v bool) { closerScan = v }(closerScan)
	specs := []string{"jellyfish:12,6,3", "jellyfish:20,8,4", "jellyfish:16,5,3", "bcube:3,3", "ciscodc:3,2", "hyperx:3", "leafspine:2,4,3"}
	for _, spec := range specs {
		g := mustTopo(t, spec)
		// Parallel links: double every third fabric link.
		b := topo.NewBuilder(spec + "+parallel")
		for v := range g.NumNodes() {
			nd := g.Node(topo.NodeID(v))
			b.Node(b.AddNode(nd.Name, nd.Kind)).Relay = nd.Relay
		}
		for l := range g.NumLinks() {
			lk := g.Link(topo.LinkID(l))
			b.Connect(lk.A.Node, lk.B.Node)
			if l%3 == 0 && g.IsFabricLink(topo.LinkID(l)) {
				b.Connect(lk.A.Node, lk.B.Node)
			}
		}
		g2, err := b.Graph()
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		for _, gg := range []*topo.Graph{g, g2} {
			f := mustFabric(t, gg)
			alpha := Alpha(f).Alpha
			for _, ties := range []Ties{TiesRandom, TiesOrdered, TiesNode, TiesPair} {
				for _, k := range []int{1, alpha, alpha + 3} {
					opt := PathOptions{K: k, Seed: 11, Ties: ties, Workers: 2}
					closerScan = false
					full, err := ComputePathSets(f, opt)
					closerScan = true
					if err != nil {
						t.Fatalf("%s: %v", gg.Name, err)
					}
					fast, err := ComputePathSets(f, opt)
					if err != nil {
						t.Fatalf("%s: %v", gg.Name, err)
					}
					if hashPathSet(full) != hashPathSet(fast) {
						t.Errorf("%s k=%d %v: the closer scan finds other paths than the full scan", gg.Name, k, ties)
					}
				}
			}
		}
	}
}

// TestPathTooLong: path lengths are stored in 16 bits; a longer path is
// refused (ErrTooLarge), not cut short (it once came back 463 links long
// on a line of 66,000 switches).
func TestPathTooLong(t *testing.T) {
	b := topo.NewBuilder("long-line")
	const n = math.MaxUint16 + 2 // switches: n-1 links between the ends
	prev := b.AddNode("s0", topo.Switch)
	b.Connect(prev, b.AddNode("h0", topo.Host))
	for i := 1; i < n; i++ {
		s := b.AddNode("s"+strconv.Itoa(i), topo.Switch)
		b.Connect(prev, s)
		prev = s
	}
	b.Connect(prev, b.AddNode("h1", topo.Host))
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewFabric(g)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ComputePathSets(f, PathOptions{K: 1, Seed: 1}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a path of %d links: %v, want ErrTooLarge", n-1, err)
	}
}
