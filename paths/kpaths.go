package paths

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/edgefabric/edgefabric/topo"
)

// Pair is an unordered pair of edge nodes, A before B in Fabric.Edges
// order. Links are full duplex and VLANs undirected, so one path set serves
// both directions.
type Pair struct{ A, B topo.NodeID }

// PathSet holds up to k paths for every pair of edge nodes, compactly.
// Pair i's paths are PathOff[PairOff[i]:PairOff[i+1]] indices; path j's
// links are Links[PathOff[j]:PathOff[j+1]], in order from Pairs[i].A.
type PathSet struct {
	K       int
	Pairs   []Pair
	PairOff []uint32
	PathOff []uint32
	Links   []topo.LinkID
}

// NumPaths is the number of paths in the set.
func (ps *PathSet) NumPaths() int { return len(ps.PathOff) - 1 }

// Path returns the links of path j.
func (ps *PathSet) Path(j int) []topo.LinkID { return ps.Links[ps.PathOff[j]:ps.PathOff[j+1]] }

// PairPaths returns the index range of pair i's paths.
func (ps *PathSet) PairPaths(i int) (lo, hi int) { return int(ps.PairOff[i]), int(ps.PairOff[i+1]) }

// Ties selects how Algorithm 1 chooses among paths of equal weight. The
// paper does not say; its "shortest(G, s, d, w)" is a plain shortest-path
// search, whose choice among equal-cost paths is whatever its scan order
// gives.
type Ties uint8

const (
	// TiesRandom breaks every tie at random, from a stream per pair: first
	// paths spread over all equal-cost routes (edgefabric's default).
	TiesRandom Ties = iota
	// TiesOrdered breaks ties as a plain search that scans ports in order
	// does: the lowest-numbered port first at every node, and among equal
	// queue entries the lowest node number. Every pair then resolves the
	// same choices the same way, as in the paper's results (FatTree PS=1
	// throughput gain 1.00: all first paths through one core).
	TiesOrdered
)

// ErrBadTies: an unknown tie-breaking name.
var ErrBadTies = errors.New(`unknown tie-breaking rule (want "random" or "ordered")`)

// ParseTies parses "random" or "ordered".
func ParseTies(s string) (Ties, error) {
	switch s {
	case "random", "":
		return TiesRandom, nil
	case "ordered":
		return TiesOrdered, nil
	}
	return 0, fmt.Errorf("paths: ties %q: %w", s, ErrBadTies)
}

func (t Ties) String() string {
	switch t {
	case TiesRandom:
		return "random"
	case TiesOrdered:
		return "ordered"
	}
	return fmt.Sprintf("ties(%d)", uint8(t))
}

// PathOptions configures ComputePathSets.
type PathOptions struct {
	// K is the desired number of paths per pair (Algorithm 1's k).
	K int
	// Seed drives tie-breaking among equal-cost paths. Each pair has its
	// own stream derived from the seed and the pair, so results do not
	// depend on Workers.
	Seed uint64
	// Ties selects the tie-breaking rule; TiesOrdered ignores Seed.
	Ties Ties
	// Workers bounds the goroutines; 0 means GOMAXPROCS.
	Workers int
}

// ComputePathSets runs Algorithm 1 (spain-cots-multipath.txt §5.2) for every
// pair of edge nodes: the shortest path first, then, after adding |E| to the
// weight of every edge of each chosen path, the next weighted-shortest path,
// until k paths are chosen or the next one is already in the set ("no more
// useful paths").
//
// Because |E| exceeds the length of any simple path, weighted cost orders
// paths lexicographically by (edges shared with chosen paths, hops). The
// search uses that: it first looks for a path of hop length dist(s,d) that
// shares no edge, by a depth-first walk that only steps to nodes one hop
// closer to d (cheap, and what succeeds whenever a link-disjoint shortest
// path is left); only when none exists does it run A* on the weights with
// the hop distance to d as the (consistent) heuristic. Both return a
// minimum-weight path, so the result is exactly Algorithm 1's; ties are
// broken as opt.Ties says.
func ComputePathSets(f *Fabric, opt PathOptions) (*PathSet, error) {
	if opt.K < 1 {
		return nil, fmt.Errorf("paths: k=%d: %w", opt.K, ErrBadK)
	}
	if opt.Ties > TiesOrdered {
		return nil, fmt.Errorf("paths: %v: %w", opt.Ties, ErrBadTies)
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ne := len(f.Edges)
	// Work unit: destination index j, with pairs (i, j) for i < j. Units
	// are taken largest first so the tail is short.
	type chunk struct {
		pathCount []uint16 // per pair i<j
		pathLen   []uint16 // per path
		links     []topo.LinkID
	}
	chunks := make([]chunk, ne)
	var next atomic.Int64
	next.Store(int64(ne - 1))
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var firstErr error
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newSearcher(f)
			s.ordered = opt.Ties == TiesOrdered
			for {
				j := int(next.Add(-1) + 1)
				if j < 1 {
					return
				}
				d := f.Edges[j]
				s.setTarget(d)
				c := chunk{pathCount: make([]uint16, j)}
				for i := range j {
					src := f.Edges[i]
					s.rng.Seed(opt.Seed, uint64(src)<<32|uint64(d))
					paths := s.pairPaths(src, opt.K)
					if len(paths) > math.MaxUint16 {
						errMu.Lock()
						firstErr = fmt.Errorf("paths: %w: more than %d paths per pair", ErrTooLarge, math.MaxUint16)
						errMu.Unlock()
						return
					}
					c.pathCount[i] = uint16(len(paths))
					for _, p := range paths {
						c.pathLen = append(c.pathLen, uint16(len(p)))
						c.links = append(c.links, p...)
					}
				}
				chunks[j] = c
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	total, npaths := 0, 0
	for j := range chunks {
		total += len(chunks[j].links)
		npaths += len(chunks[j].pathLen)
	}
	if total >= math.MaxUint32 || npaths >= math.MaxUint32 {
		return nil, fmt.Errorf("paths: %w: %d links in %d paths", ErrTooLarge, total, npaths)
	}
	ps := &PathSet{
		K:       opt.K,
		Pairs:   make([]Pair, 0, ne*(ne-1)/2),
		PairOff: make([]uint32, 1, ne*(ne-1)/2+1),
		PathOff: make([]uint32, 1, npaths+1),
		Links:   make([]topo.LinkID, 0, total),
	}
	for j := 1; j < ne; j++ {
		c := &chunks[j]
		pi := 0
		for i := range j {
			ps.Pairs = append(ps.Pairs, Pair{f.Edges[i], f.Edges[j]})
			for range c.pathCount[i] {
				ps.PathOff = append(ps.PathOff, ps.PathOff[len(ps.PathOff)-1]+uint32(c.pathLen[pi]))
				pi++
			}
			ps.PairOff = append(ps.PairOff, uint32(len(ps.PathOff)-1))
		}
		ps.Links = append(ps.Links, c.links...)
		chunks[j] = chunk{} // release early: FatTree(48) holds 60M links
	}
	return ps, nil
}

// searcher holds one worker's scratch state, reused across pairs.
type searcher struct {
	f   *Fabric
	rng *rand.PCG
	r   *rand.Rand
	// ordered: TiesOrdered (scan ports from the first, queue ties by node).
	ordered bool
	dist    []int32 // hop distance to the current target
	target  topo.NodeID
	use     []int32 // per link: how many chosen paths of this pair use it
	used    []topo.LinkID
	// DFS state, stamped to avoid clearing: failed[v] is the largest
	// remaining budget with which v failed (valid when seen[v] == stamp).
	failed []int32
	stamp  uint32
	stack  []topo.LinkID
	frames []struct {
		v          topo.NodeID
		off, tried int32
	}
	// A* state.
	g      []int64
	via    []topo.LinkID
	seen   []uint32
	closed []uint32
	pq     astarHeap
	paths  [][]topo.LinkID
	buf    []topo.LinkID
}

func newSearcher(f *Fabric) *searcher {
	n, m := f.G.NumNodes(), f.G.NumLinks()
	pcg := rand.NewPCG(0, 0)
	return &searcher{
		f: f, rng: pcg, r: rand.New(pcg),
		use:    make([]int32, m),
		failed: make([]int32, n), g: make([]int64, n), via: make([]topo.LinkID, n),
		seen: make([]uint32, n), closed: make([]uint32, n),
	}
}

func (s *searcher) setTarget(d topo.NodeID) {
	s.target = d
	s.dist = s.f.BFS(d, s.dist)
}

func (s *searcher) nextStamp() uint32 {
	s.stamp++
	if s.stamp == 0 { // wrapped: clear once every 4 billion searches
		clear(s.seen)
		clear(s.closed)
		s.stamp = 1
	}
	return s.stamp
}

// pairPaths runs Algorithm 1 for (src, target). The returned slices alias
// the searcher's buffer and are valid until the next call.
func (s *searcher) pairPaths(src topo.NodeID, k int) [][]topo.LinkID {
	E := int64(s.f.NumFabricLinks)
	s.paths = s.paths[:0]
	s.buf = s.buf[:0]
	var offs []int
	for len(offs) < k {
		start := len(s.buf)
		ok := s.disjointShortest(src)
		if !ok {
			s.buf = s.buf[:start]
			if !s.astar(src, E) {
				break // unreachable: NewFabric rules this out
			}
			// A path sharing edges may repeat one already chosen: then
			// there are no more useful paths.
			p := s.buf[start:]
			dup := false
			for i := range offs {
				end := len(s.buf)
				if i+1 < len(offs) {
					end = offs[i+1]
				} else {
					end = start
				}
				if slices.Equal(s.buf[offs[i]:end], p) {
					dup = true
					break
				}
			}
			if dup {
				s.buf = s.buf[:start]
				break
			}
		}
		offs = append(offs, start)
		for _, l := range s.buf[start:] {
			if s.use[l] == 0 {
				s.used = append(s.used, l)
			}
			s.use[l]++
		}
	}
	for _, l := range s.used {
		s.use[l] = 0
	}
	s.used = s.used[:0]
	for i, o := range offs {
		end := len(s.buf)
		if i+1 < len(offs) {
			end = offs[i+1]
		}
		s.paths = append(s.paths, s.buf[o:end])
	}
	return s.paths
}

// MaxSlack bounds the detour, in hops beyond the shortest distance, for
// which the search looks for an edge-disjoint path by bounded depth-first
// search before it falls back to A*.
const MaxSlack = 4

// disjointShortest appends to s.buf the shortest path src→target that uses
// no link a chosen path uses, if one exists within MaxSlack hops of the
// shortest distance. It is iterative deepening on the hop bound L: a walk
// may only step to a node w when depth+1+dist(w) ≤ L, so the walk found in
// the first bound that has one is of minimum length, and therefore simple
// (a walk with a cycle would leave a shorter one, found at a smaller L).
// A node that failed with some remaining budget fails with any smaller one,
// which bounds the work per bound to one visit per node and budget.
func (s *searcher) disjointShortest(src topo.NodeID) bool {
	d := s.target
	if src == d {
		return true
	}
	base := s.dist[src]
	for L := base; L <= base+MaxSlack; L++ {
		if s.boundedDFS(src, L) {
			return true
		}
	}
	return false
}

// firstPort is where the depth-first walk starts scanning a node's deg
// ports (it wraps around): a random one, or the first under TiesOrdered.
func (s *searcher) firstPort(deg int32) int32 {
	if s.ordered {
		return 0
	}
	return int32(s.r.IntN(max(int(deg), 1)))
}

// tie orders A* queue entries of equal cost and depth.
func (s *searcher) tie(v topo.NodeID) uint32 {
	if s.ordered {
		return uint32(v)
	}
	return s.r.Uint32()
}

func (s *searcher) boundedDFS(src topo.NodeID, L int32) bool {
	st := s.nextStamp()
	f := s.f
	d := s.target
	s.stack = s.stack[:0]
	type frame struct {
		v          topo.NodeID
		off, tried int32
	}
	frames := s.frames[:0]
	deg := f.adjOff[src+1] - f.adjOff[src]
	frames = append(frames, frame{src, s.firstPort(deg), 0})
	for len(frames) > 0 {
		fr := &frames[len(frames)-1]
		v := fr.v
		base := f.adjOff[v]
		deg = f.adjOff[v+1] - base
		depth := int32(len(frames)) // hops taken after stepping on
		budget := L - depth         // hops left from the next node
		advanced := false
		for fr.tried < deg {
			idx := base + (fr.off+fr.tried)%deg
			fr.tried++
			w := f.adjNbr[idx]
			l := f.adjLink[idx]
			if s.use[l] != 0 || s.dist[w] < 0 || s.dist[w] > budget {
				continue
			}
			if s.seen[w] == st && s.failed[w] >= budget {
				continue
			}
			s.stack = append(s.stack, l)
			if w == d {
				s.buf = append(s.buf, s.stack...)
				s.frames = frames[:0]
				return true
			}
			wd := f.adjOff[w+1] - f.adjOff[w]
			frames = append(frames, frame{w, s.firstPort(wd), 0})
			advanced = true
			break
		}
		if !advanced {
			// v failed with the budget it was entered with.
			b := L - int32(len(frames)-1)
			if s.seen[v] != st || s.failed[v] < b {
				s.seen[v], s.failed[v] = st, b
			}
			frames = frames[:len(frames)-1]
			if len(s.stack) > 0 {
				s.stack = s.stack[:len(s.stack)-1]
			}
		}
	}
	s.frames = frames[:0]
	return false
}

type astarItem struct {
	f, g int64
	tie  uint32
	v    topo.NodeID
}
type astarHeap []astarItem

func (h astarHeap) Len() int { return len(h) }
func (h astarHeap) Less(i, j int) bool {
	if h[i].f != h[j].f {
		return h[i].f < h[j].f
	}
	if h[i].g != h[j].g {
		return h[i].g > h[j].g // deeper first: reaches the goal sooner
	}
	return h[i].tie < h[j].tie
}
func (h astarHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *astarHeap) Push(x any)   { *h = append(*h, x.(astarItem)) }
func (h *astarHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// astar appends to s.buf the minimum-weight path src→target under weights
// 1 + |E|·use(l), with random tie-breaking.
func (s *searcher) astar(src topo.NodeID, E int64) bool {
	st := s.nextStamp()
	f := s.f
	d := s.target
	s.pq = s.pq[:0]
	s.g[src], s.via[src], s.seen[src] = 0, topo.NoLink, st
	heap.Push(&s.pq, astarItem{int64(s.dist[src]), 0, s.tie(src), src})
	for s.pq.Len() > 0 {
		it := heap.Pop(&s.pq).(astarItem)
		v := it.v
		if s.closed[v] == st || it.g != s.g[v] {
			continue
		}
		s.closed[v] = st
		if v == d {
			start := len(s.buf)
			for w := d; w != src; {
				l := s.via[w]
				s.buf = append(s.buf, l)
				w = f.Other(l, w)
			}
			slices.Reverse(s.buf[start:])
			return true
		}
		for i := f.adjOff[v]; i < f.adjOff[v+1]; i++ {
			w, l := f.adjNbr[i], f.adjLink[i]
			if s.closed[w] == st || s.dist[w] < 0 {
				continue
			}
			ng := it.g + 1 + E*int64(s.use[l])
			if s.seen[w] != st || ng < s.g[w] {
				s.seen[w], s.g[w], s.via[w] = st, ng, l
				heap.Push(&s.pq, astarItem{ng + int64(s.dist[w]), ng, s.tie(w), w})
			}
		}
	}
	return false
}
