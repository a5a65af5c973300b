package paths

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
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

// Sources returns, for every path, the node it starts at: its pair's A.
func (ps *PathSet) Sources() []topo.NodeID {
	src := make([]topo.NodeID, ps.NumPaths())
	for pi, pr := range ps.Pairs {
		lo, hi := ps.PairPaths(pi)
		for j := lo; j < hi; j++ {
			src[j] = pr.A
		}
	}
	return src
}

// PairPaths returns the index range of pair i's paths.
func (ps *PathSet) PairPaths(i int) (lo, hi int) { return int(ps.PairOff[i]), int(ps.PairOff[i+1]) }

// Ties selects how Algorithm 1 chooses among paths of equal weight. The
// paper does not say; its "shortest(G, s, d, w)" is a plain shortest-path
// search, whose choice among equal-cost paths is whatever its scan order
// gives.
type Ties uint8

const (
	// TiesPair, edgefabric's default, draws one port offset per pair,
	// from the pair's stream, and every node's scan starts at that offset
	// (modulo its number of ports; then on in port order, wrapping);
	// equal A* queue entries are ordered by node number, as under
	// TiesOrdered. It is TiesOrdered with all adjacency lists rotated by
	// one random amount per search. A pair's choices are alike at every
	// node, so on BCube, whose servers' ports are its levels, a path
	// corrects its address digits in a cyclic order (BCube's own
	// multi-path construction is built of such rotations) and the packer
	// needs about the paper's p^(l−1)·l VLANs (BCube(8,4): 2,049 in one
	// trial, 2,048 in ten); different pairs start at different places, so
	// first paths spread over equal-cost routes.
	TiesPair Ties = iota
	// TiesRandom breaks every tie at random, from a stream per pair, at
	// every node anew: first paths spread over all equal-cost routes, and
	// on BCube a path corrects the address digits in a random order.
	TiesRandom
	// TiesOrdered breaks ties as a plain search that scans ports in order
	// does: the lowest-numbered port first at every node, and among equal
	// queue entries the lowest node number. Every pair then resolves the
	// same choices the same way, as in the paper's results (FatTree PS=1
	// throughput gain 1.00: all first paths through one core).
	TiesOrdered
	// TiesNode gives every node a fixed preference among its ports, drawn
	// once from the seed: its port scan starts at a random port (then
	// goes on in port order, wrapping), and equal A* queue entries are
	// ordered by a random rank per node. Every pair then resolves a tie at
	// a node the same way, as under TiesOrdered, but different nodes
	// prefer different ports: what a plain search over adjacency lists in
	// an arbitrary order does.
	TiesNode
)

// ErrBadTies: an unknown tie-breaking name.
var ErrBadTies = errors.New(`unknown tie-breaking rule (want "pair", "random", "ordered" or "node")`)

// ParseTies parses "pair", "random", "ordered" or "node"; "" is the
// default, "pair".
func ParseTies(s string) (Ties, error) {
	switch s {
	case "pair", "":
		return TiesPair, nil
	case "random":
		return TiesRandom, nil
	case "ordered":
		return TiesOrdered, nil
	case "node":
		return TiesNode, nil
	}
	return 0, fmt.Errorf("paths: ties %q: %w", s, ErrBadTies)
}

func (t Ties) String() string {
	switch t {
	case TiesRandom:
		return "random"
	case TiesOrdered:
		return "ordered"
	case TiesNode:
		return "node"
	case TiesPair:
		return "pair"
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
	// Ties selects the tie-breaking rule; TiesOrdered ignores Seed,
	// TiesNode draws each node's preference from it, TiesPair each pair's
	// offset.
	Ties Ties
	// Workers bounds the goroutines; 0 means GOMAXPROCS.
	Workers int
}

// MaxPaths bounds the path set ComputePathSets accepts, as edge-node pairs
// times k: the largest Table 3 row, BCube(8,4), has 33.5 million paths and
// plans in 4.0 GB; 50 million keeps a plan within about 6 GB.
const MaxPaths = 50_000_000

// MaxLinks bounds the links of all paths together: on fabrics with long
// paths (a line, a ring) the links, not the paths, fill the memory, n³
// on a line of n switches with hosts (line:1,500, 562 million links,
// plans in 2.8 GB; line:2,000 would need about 7 GB). A path set that
// reaches it is refused while it is being computed, after about a byte
// per link.
const MaxLinks = 1_000_000_000

// maxLinks is MaxLinks (a var: tests lower it).
var maxLinks int64 = MaxLinks

// ComputePathSets runs Algorithm 1 (spain-cots-multipath.txt §5.2) for every
// pair of edge nodes: the shortest path first, then, after adding |E| to the
// weight of every edge of each chosen path, the next weighted-shortest path,
// until k paths are chosen or the next one is already in the set ("no more
// useful paths").
//
// An edge's weight is 1 + |E|·(the chosen paths that use it), and two simple
// paths differ by fewer than |E| hops (none has more than |E|), so weighted
// cost orders paths lexicographically by (uses of their edges by the chosen
// paths, an edge two chosen paths use counting twice; hops). The
// search uses that: it first looks for a path that shares no edge, of
// minimum length, by iterative deepening on the hop bound dist(s,d),
// dist+1, ..., dist+MaxSlack (a depth-first walk that steps to a node only
// if the bound still lets it reach d); only when none exists does it run
// A* on the weights with the hop distance to d as the (consistent)
// heuristic. Both return a
// minimum-weight path, so the result is exactly Algorithm 1's; ties are
// broken as opt.Ties says.
func ComputePathSets(f *Fabric, opt PathOptions) (*PathSet, error) {
	if opt.K < 1 {
		return nil, fmt.Errorf("paths: k=%d: %w", opt.K, ErrBadK)
	}
	if opt.Ties > TiesNode {
		return nil, fmt.Errorf("paths: %v: %w", opt.Ties, ErrBadTies)
	}
	ne := len(f.Edges)
	// Refuse before searching what could not be held: every pair may get
	// k paths (the fabric's simple paths are rarely fewer).
	if est := float64(ne) * float64(ne-1) / 2 * float64(opt.K); est > MaxPaths {
		return nil, fmt.Errorf("paths: %w: %d edge nodes and k=%d give up to %.3g paths, more than the %d this planner holds (about 100 bytes each)",
			ErrTooLarge, ne, opt.K, est, MaxPaths)
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// Chunks hold each path as the port it leaves each node by, a byte
	// per hop instead of a 4-byte link ID, when every node has at most 256
	// fabric ports (all Table 3 topologies): the chunks and the final
	// Links array are alive together while the set is assembled, so this
	// cuts that peak from about twice the links to 1.25 times.
	narrow := f.maxDegree() <= narrowMaxDegree
	var pref *nodePrefs
	if opt.Ties == TiesNode {
		pref = newNodePrefs(f, opt.Seed)
	}
	// Work unit: destination index j, with pairs (i, j) for i < j. Units
	// are taken largest first so the tail is short.
	type chunk struct {
		pathCount []uint16 // per pair i<j
		pathLen   []uint16 // per path
		hops      []uint8  // per link, when narrow: port index at the node left
		links     []topo.LinkID
	}
	chunks := make([]chunk, ne)
	var next atomic.Int64
	next.Store(int64(ne - 1))
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var firstErr error
	var stop atomic.Bool // an error: the other workers stop too
	fail := func(err error) {
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
		stop.Store(true)
	}
	var totalLinks atomic.Int64
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newSearcher(f)
			s.ordered = opt.Ties == TiesOrdered
			s.rotate = opt.Ties == TiesPair
			s.pref = pref
			// Per-worker growth buffers, reused across units; each unit
			// keeps an exact-size copy, so no append slack stays alive.
			var pathLen []uint16
			var hops []uint8
			var links []topo.LinkID
			for {
				j := int(next.Add(-1) + 1)
				if j < 1 || stop.Load() {
					return
				}
				d := f.Edges[j]
				s.setTarget(d)
				c := chunk{pathCount: make([]uint16, j)}
				pathLen, hops, links = pathLen[:0], hops[:0], links[:0]
				for i := range j {
					src := f.Edges[i]
					s.rng.Seed(opt.Seed, uint64(src)<<32|uint64(d))
					if s.rotate {
						s.offset = s.rng.Uint64()
					}
					np := s.pairPaths(src, opt.K)
					if np > math.MaxUint16 {
						fail(fmt.Errorf("paths: %w: more than %d paths per pair", ErrTooLarge, math.MaxUint16))
						return
					}
					c.pathCount[i] = uint16(np)
					for q := range np {
						n := s.pathEnd(q) - s.offs[q]
						if n > math.MaxUint16 {
							fail(fmt.Errorf("paths: %w: a path of %d links, more than %d", ErrTooLarge, n, math.MaxUint16))
							return
						}
						pathLen = append(pathLen, uint16(n))
					}
					if narrow {
						hops = s.appendPorts(hops, src, s.buf)
					} else {
						links = append(links, s.buf...)
					}
				}
				nl := len(links)
				if narrow {
					nl = len(hops)
				}
				if t := totalLinks.Add(int64(nl)); t > maxLinks {
					fail(fmt.Errorf("paths: %w: %d edge nodes and k=%d give paths of more than %d links in all (%d found with %d of %d destinations to go), more than this planner holds (long paths, as on a line or ring of this size)",
						ErrTooLarge, ne, opt.K, maxLinks, t, max(next.Load(), 0), ne-1))
					return
				}
				c.pathLen = slices.Clone(pathLen)
				if narrow {
					c.hops = slices.Clone(hops)
				} else {
					c.links = slices.Clone(links)
				}
				chunks[j] = c
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	// Prefix sums give every unit its place in the final arrays, so the
	// units can be written in parallel and in place.
	type place struct{ pair, path, link int }
	at := make([]place, max(ne, 1)+1)
	for j := 1; j < ne; j++ {
		c := &chunks[j]
		nl := len(c.links)
		if narrow {
			nl = len(c.hops)
		}
		at[j+1] = place{at[j].pair + j, at[j].path + len(c.pathLen), at[j].link + nl}
	}
	last := at[max(ne, 1)]
	if last.link >= math.MaxUint32 || last.path >= math.MaxUint32 {
		return nil, fmt.Errorf("paths: %w: %d links in %d paths", ErrTooLarge, last.link, last.path)
	}
	ps := &PathSet{
		K:       opt.K,
		Pairs:   make([]Pair, last.pair),
		PairOff: make([]uint32, last.pair+1),
		PathOff: make([]uint32, last.path+1),
		Links:   make([]topo.LinkID, last.link),
	}
	var hopTab []uint64
	if narrow {
		hopTab = f.hopTable()
	}
	next.Store(int64(ne - 1))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j := int(next.Add(-1) + 1)
				if j < 1 || stop.Load() {
					return
				}
				c := &chunks[j]
				p := at[j]
				pathOff := uint32(p.link)
				pi := 0
				var lanes [4]decodeLane
				nl := 0
				for i := range j {
					src := f.Edges[i]
					ps.Pairs[p.pair+i] = Pair{src, f.Edges[j]}
					for range c.pathCount[i] {
						n := uint32(c.pathLen[pi])
						if narrow {
							h := pathOff - uint32(p.link)
							lanes[nl] = decodeLane{ps.Links[pathOff : pathOff+n], c.hops[h : h+n], f.adjOff[src]}
							if nl++; nl == len(lanes) {
								decode4(&lanes, hopTab)
								nl = 0
							}
						}
						pathOff += n
						pi++
						ps.PathOff[p.path+pi] = pathOff
					}
					ps.PairOff[p.pair+i+1] = uint32(p.path + pi)
				}
				for _, ln := range lanes[:nl] {
					portsToLinks(ln.dst, hopTab, ln.off, ln.ports)
				}
				if !narrow {
					copy(ps.Links[p.link:], c.links)
				}
				*c = chunk{} // release early: FatTree(48) holds 60M links
			}
		}()
	}
	wg.Wait()
	return ps, nil
}

// closerScan lets frame scan only the closer neighbours of a node with no
// hop to spare; a variable so that a test can check that the full scan
// finds exactly the same paths.
var closerScan = true

// narrowMaxDegree is the most fabric ports a node may have for chunks to
// store port indices in a byte; a variable so that a test can force the
// link-ID storage on small topologies.
var narrowMaxDegree = 256

// maxDegree is the largest number of fabric ports of a node.
func (f *Fabric) maxDegree() int {
	m := int32(0)
	for v := range len(f.adjOff) - 1 {
		m = max(m, f.adjOff[v+1]-f.adjOff[v])
	}
	return int(m)
}

// appendPorts appends, for the concatenated paths in links that each start
// at src, the adjacency position (port index among fabric ports) of every
// link at the node the path leaves by it.
func (s *searcher) appendPorts(dst []uint8, src topo.NodeID, links []topo.LinkID) []uint8 {
	for q := range s.offs {
		v := src
		for _, l := range links[s.offs[q]:s.pathEnd(q)] {
			if s.f.linkA[l] == v {
				dst = append(dst, uint8(s.f.posA[l]-s.f.adjOff[v]))
				v = s.f.linkB[l]
			} else {
				dst = append(dst, uint8(s.f.posB[l]-s.f.adjOff[v]))
				v = s.f.linkA[l]
			}
		}
	}
	return dst
}

// hopTable gives, per adjacency position, the link and the adjacency
// offset of the neighbor it leads to (link<<32 | offset), so that decoding
// a hop is one load that depends on the previous hop, not two.
func (f *Fabric) hopTable() []uint64 {
	t := make([]uint64, len(f.adjNbr))
	for i, w := range f.adjNbr {
		t[i] = uint64(uint32(f.adjLink[i]))<<32 | uint64(uint32(f.adjOff[w]))
	}
	return t
}

// decodeLane is one path to decode: its links, its ports, and the adjacency
// offset of its source.
type decodeLane struct {
	dst   []topo.LinkID
	ports []uint8
	off   int32
}

// decode4 decodes four paths at once (portsToLinks on each): every hop's
// table lookup waits for the previous one, so a single walk is bound by
// the cache's latency; four independent walks keep four lookups in flight.
func decode4(l *[4]decodeLane, hops []uint64) {
	m := min(len(l[0].dst), len(l[1].dst), len(l[2].dst), len(l[3].dst))
	d0, d1, d2, d3 := l[0].dst[:m], l[1].dst[:m], l[2].dst[:m], l[3].dst[:m]
	p0, p1, p2, p3 := l[0].ports[:m], l[1].ports[:m], l[2].ports[:m], l[3].ports[:m]
	o0, o1, o2, o3 := l[0].off, l[1].off, l[2].off, l[3].off
	for h := range d0 {
		e0 := hops[o0+int32(p0[h])]
		e1 := hops[o1+int32(p1[h])]
		e2 := hops[o2+int32(p2[h])]
		e3 := hops[o3+int32(p3[h])]
		d0[h], o0 = topo.LinkID(int32(e0>>32)), int32(uint32(e0))
		d1[h], o1 = topo.LinkID(int32(e1>>32)), int32(uint32(e1))
		d2[h], o2 = topo.LinkID(int32(e2>>32)), int32(uint32(e2))
		d3[h], o3 = topo.LinkID(int32(e3>>32)), int32(uint32(e3))
	}
	portsToLinks(l[0].dst[m:], hops, o0, l[0].ports[m:])
	portsToLinks(l[1].dst[m:], hops, o1, l[1].ports[m:])
	portsToLinks(l[2].dst[m:], hops, o2, l[2].ports[m:])
	portsToLinks(l[3].dst[m:], hops, o3, l[3].ports[m:])
}

// portsToLinks decodes len(dst) port indices, a walk starting at adjacency
// offset off (the source's), into links.
func portsToLinks(dst []topo.LinkID, hops []uint64, off int32, ports []uint8) {
	for h := range dst {
		e := hops[off+int32(ports[h])]
		dst[h] = topo.LinkID(int32(e >> 32))
		off = int32(uint32(e))
	}
}

// searcher holds one worker's scratch state, reused across pairs.
type searcher struct {
	f *Fabric
	// rng is used directly, not through a rand.Rand: firstPort and tie
	// reproduce rand.Rand's IntN and Uint32 draw for draw without the
	// interface call, which the depth-first walk makes at every step.
	rng *rand.PCG
	// ordered: TiesOrdered (scan ports from the first, queue ties by node).
	ordered bool
	// rotate: TiesPair; offset is the current pair's draw (every scan
	// starts at port offset mod degree; queue ties by node number).
	rotate bool
	offset uint64
	// pref: TiesNode's per-node preferences (nil under the other rules).
	pref   *nodePrefs
	dist   []int32 // hop distance to the current target
	target topo.NodeID
	use    []int32 // per link: how many chosen paths of this pair use it (only during A*)
	// adjDist[i] is dist of the neighbor at adjacency position i, or -1
	// while a chosen path of the current pair uses that link: the walk's
	// first test, read in scan order, rejects both steps that leave the
	// hop budget and used links without touching adjNbr, adjLink or use.
	adjDist []int32
	// closer lists, per node v, the adjacency positions of v's neighbours
	// one hop closer to the target (v's are closer[closeOff[v]:closeOff[v+1]],
	// in port order): where a walk with no hop to spare must step, so that
	// it scans those instead of every port (a FatTree(48) core has 48
	// ports and one of them leads closer).
	closeOff []int32
	closer   []int32
	// DFS state, stamped to avoid clearing: failed[v] is stamp<<32 | the
	// largest remaining budget with which v failed in the search of that
	// stamp. Stamps only grow (until a wrap clears everything), so one
	// comparison with stamp<<32 | budget asks "failed in this search with
	// at least this budget".
	failed []uint64
	stamp  uint32
	stack  []topo.LinkID
	frames []dfsFrame
	// A* state.
	g      []int64
	via    []topo.LinkID
	seen   []uint32
	closed []uint32
	pq     astarHeap
	// The chosen paths of the current pair: path q is
	// buf[offs[q]:pathEnd(q)].
	buf  []topo.LinkID
	offs []int
}

func newSearcher(f *Fabric) *searcher {
	n, m := f.G.NumNodes(), f.G.NumLinks()
	pcg := rand.NewPCG(0, 0)
	return &searcher{
		f: f, rng: pcg,
		use:    make([]int32, m),
		failed: make([]uint64, n), adjDist: make([]int32, len(f.adjNbr)), g: make([]int64, n), via: make([]topo.LinkID, n),
		seen: make([]uint32, n), closed: make([]uint32, n),
	}
}

func (s *searcher) setTarget(d topo.NodeID) {
	s.target = d
	f := s.f
	s.dist = f.BFS(d, s.dist)
	for i, w := range f.adjNbr {
		s.adjDist[i] = s.dist[w]
	}
	n := len(f.adjOff) - 1
	if len(s.closeOff) != n+1 {
		s.closeOff = make([]int32, n+1)
	}
	s.closer = s.closer[:0]
	for v := range n {
		s.closeOff[v] = int32(len(s.closer))
		if dv := s.dist[v]; dv > 0 {
			for i := f.adjOff[v]; i < f.adjOff[v+1]; i++ {
				if s.adjDist[i] == dv-1 {
					s.closer = append(s.closer, i)
				}
			}
		}
	}
	s.closeOff[n] = int32(len(s.closer))
}

func (s *searcher) nextStamp() uint32 {
	s.stamp++
	if s.stamp == 0 { // wrapped: clear once every 4 billion searches
		clear(s.seen)
		clear(s.failed)
		clear(s.closed)
		s.stamp = 1
	}
	return s.stamp
}

// pairPaths runs Algorithm 1 for (src, target) and returns the number of
// paths chosen; they are left in s.buf, path q at s.buf[s.offs[q]:s.pathEnd(q)],
// valid until the next call.
func (s *searcher) pairPaths(src topo.NodeID, k int) int {
	E := int64(s.f.NumFabricLinks)
	s.buf = s.buf[:0]
	offs := s.offs[:0]
	// The links of s.buf[:marked] have their adjacency entries set to -1,
	// so that the depth-first walk never steps on a link a chosen path
	// uses. The last path is never marked: no search follows it.
	marked := 0
	for len(offs) < k {
		start := len(s.buf)
		ok := s.disjointShortest(src)
		if !ok {
			s.buf = s.buf[:start]
			// A* weighs a link by how many chosen paths use it: count
			// them only here, the rare case.
			for _, l := range s.buf[:start] {
				s.use[l]++
			}
			found := s.astar(src, E)
			for _, l := range s.buf[:start] {
				s.use[l]--
			}
			if !found {
				break // unreachable: NewFabric rules this out
			}
			// A path sharing edges may repeat one already chosen: then
			// there are no more useful paths.
			p := s.buf[start:]
			dup := false
			for i := range offs {
				end := start
				if i+1 < len(offs) {
					end = offs[i+1]
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
		if len(offs) == k {
			break
		}
		adj, posA, posB := s.adjDist, s.f.posA, s.f.posB
		for _, l := range s.buf[start:] {
			adj[posA[l]], adj[posB[l]] = -1, -1
		}
		marked = len(s.buf)
	}
	// Restore the marked entries (a link marked twice is restored twice,
	// to the same value).
	adj, posA, posB, linkA, linkB, dist := s.adjDist, s.f.posA, s.f.posB, s.f.linkA, s.f.linkB, s.dist
	for _, l := range s.buf[:marked] {
		adj[posA[l]] = dist[linkB[l]]
		adj[posB[l]] = dist[linkA[l]]
	}
	s.offs = offs
	return len(offs)
}

// pathEnd is where path q of the current pair ends in s.buf.
func (s *searcher) pathEnd(q int) int {
	if q+1 < len(s.offs) {
		return s.offs[q+1]
	}
	return len(s.buf)
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

// firstPort is where the depth-first walk starts scanning node v's deg
// ports (it wraps around): a random one, the first under TiesOrdered, the
// node's own under TiesNode, the pair's offset under TiesPair.
func (s *searcher) firstPort(v topo.NodeID, deg int32) int32 {
	if s.ordered {
		return 0
	}
	if s.rotate {
		return int32(s.offset % uint64(max(deg, 1)))
	}
	if s.pref != nil {
		return s.pref.first[v]
	}
	return int32(s.intN(uint64(max(deg, 1))))
}

// intN is rand.Rand.IntN(n) on s.rng for 0 < n < 2³¹ on a 64-bit
// machine (math/rand/v2's uint64n, Lemire's multiply-shift with
// rejection), drawing exactly the same numbers so that paths do not
// change.
func (s *searcher) intN(n uint64) uint64 {
	if n&(n-1) == 0 { // power of two: mask
		return s.rng.Uint64() & (n - 1)
	}
	hi, lo := bits.Mul64(s.rng.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(s.rng.Uint64(), n)
		}
	}
	return hi
}

// tie orders A* queue entries of equal cost and depth.
func (s *searcher) tie(v topo.NodeID) uint32 {
	if s.ordered || s.rotate {
		return uint32(v)
	}
	if s.pref != nil {
		return s.pref.rank[v]
	}
	return uint32(s.rng.Uint64() >> 32) // rand.Rand.Uint32
}

// nodePrefs are TiesNode's choices, one per node, drawn once from the
// seed: the port its scan starts at and its rank among equal A* queue
// entries. Workers share them read-only.
type nodePrefs struct {
	first []int32
	rank  []uint32
}

func newNodePrefs(f *Fabric, seed uint64) *nodePrefs {
	n := f.G.NumNodes()
	r := rand.New(rand.NewPCG(seed, 0x6e6f_6465)) // "node"
	p := &nodePrefs{first: make([]int32, n), rank: make([]uint32, n)}
	for v := range n {
		if deg := f.Degree(topo.NodeID(v)); deg > 0 {
			p.first[v] = int32(r.IntN(deg))
		}
		p.rank[v] = r.Uint32()
	}
	return p
}

// dfsFrame is a node on the depth-first walk's path: idx is the next
// adjacency position to try (scanning wraps from the node's last port to
// its first), left how many ports remain untried.
type dfsFrame struct {
	v         topo.NodeID
	idx, left int32
	// tight: no hop to spare below this node, so only its closer
	// neighbours qualify; idx then scans closer[], not the adjacency.
	tight bool
}

func (s *searcher) boundedDFS(src topo.NodeID, L int32) bool {
	st := s.nextStamp()
	f := s.f
	d := s.target
	adjOff, adjNbr, adjLink := f.adjOff, f.adjNbr, f.adjLink
	adjDist, failed, closeOff, closer := s.adjDist, s.failed, s.closeOff, s.closer
	mark := uint64(st) << 32
	s.stack = s.stack[:0]
	frames := s.frames[:0]
	frames = append(frames, s.frame(src, L-1))
	for len(frames) > 0 {
		fr := &frames[len(frames)-1]
		v := fr.v
		// The positions scanned, cyclically: v's adjacency, or its
		// closer list when no hop is to spare.
		lo, hi := adjOff[v], adjOff[v+1]
		if fr.tight {
			lo, hi = closeOff[v], closeOff[v+1]
		}
		// Hops left from the next node. It is never negative here: a
		// node is entered only with dist ≤ budget, and dist is 0 only at d.
		budget := L - int32(len(frames))
		advanced := false
		// The scan position lives in locals while scanning (the frame
		// is written back before frames can grow).
		next, left := fr.idx, fr.left
		for left > 0 {
			idx := next
			left--
			next++
			if next == hi {
				next = lo
			}
			if fr.tight {
				idx = closer[idx]
			}
			// uint32: also rejects -1 (w cannot reach d, or the link is
			// used by a chosen path).
			if uint32(adjDist[idx]) > uint32(budget) {
				continue
			}
			w := adjNbr[idx]
			if failed[w] >= mark|uint64(budget) {
				continue
			}
			fr.idx, fr.left = next, left
			l := adjLink[idx]
			s.stack = append(s.stack, l)
			if w == d {
				s.buf = append(s.buf, s.stack...)
				s.frames = frames[:0]
				return true
			}
			frames = append(frames, s.frame(w, budget-1))
			advanced = true
			break
		}
		if !advanced {
			// v failed with the budget it was entered with.
			if b := mark | uint64(budget+1); failed[v] < b {
				failed[v] = b
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

// frame starts the scan of node v, entered with budget hops left below it:
// from its first port (firstPort's draw), every port in cyclic order or,
// when the budget leaves no hop to spare, only the closer neighbours, in
// the same cyclic order (the others would be rejected anyway).
func (s *searcher) frame(v topo.NodeID, budget int32) dfsFrame {
	base := s.f.adjOff[v]
	deg := s.f.adjOff[v+1] - base
	start := base + s.firstPort(v, deg)
	if budget != s.dist[v]-1 || !closerScan {
		return dfsFrame{v, start, deg, false}
	}
	lo, hi := s.closeOff[v], s.closeOff[v+1]
	i := lo
	for i < hi && s.closer[i] < start {
		i++
	}
	if i == hi {
		i = lo
	}
	return dfsFrame{v, i, hi - lo, true}
}

type astarItem struct {
	f, g int64
	tie  uint32
	v    topo.NodeID
}
type astarHeap []astarItem

func (h astarHeap) less(i, j int) bool {
	if h[i].f != h[j].f {
		return h[i].f < h[j].f
	}
	if h[i].g != h[j].g {
		return h[i].g > h[j].g // deeper first: reaches the goal sooner
	}
	return h[i].tie < h[j].tie
}

// push and pop are container/heap's Push and Pop, sift for sift, on the
// concrete type (no interface calls, no boxing): the same pop order, so
// the same paths.
func (h *astarHeap) push(it astarItem) {
	*h = append(*h, it)
	q := *h
	j := len(q) - 1
	for {
		i := (j - 1) / 2 // parent
		if i == j || !q.less(j, i) {
			break
		}
		q[i], q[j] = q[j], q[i]
		j = i
	}
}

func (h *astarHeap) pop() astarItem {
	q := *h
	n := len(q) - 1
	q[0], q[n] = q[n], q[0]
	// down(0, n)
	i := 0
	for {
		j1 := 2*i + 1
		if j1 >= n || j1 < 0 {
			break
		}
		j := j1
		if j2 := j1 + 1; j2 < n && q.less(j2, j1) {
			j = j2
		}
		if !q.less(j, i) {
			break
		}
		q[i], q[j] = q[j], q[i]
		i = j
	}
	it := q[n]
	*h = q[:n]
	return it
}

// astar appends to s.buf the minimum-weight path src→target under weights
// 1 + |E|·use(l), ties broken as s's rule says.
func (s *searcher) astar(src topo.NodeID, E int64) bool {
	st := s.nextStamp()
	f := s.f
	d := s.target
	s.pq = s.pq[:0]
	s.g[src], s.via[src], s.seen[src] = 0, topo.NoLink, st
	s.pq.push(astarItem{int64(s.dist[src]), 0, s.tie(src), src})
	for len(s.pq) > 0 {
		it := s.pq.pop()
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
		// The first of equal-cost links to a neighbour wins, so the scan
		// order chooses among parallel links: where v has some, scan from
		// the port the tie rule starts the depth-first walk's scan at
		// (elsewhere the order changes nothing, and costs no draw).
		lo, hi := f.adjOff[v], f.adjOff[v+1]
		i := lo
		if f.parallel[v] {
			i += s.firstPort(v, hi-lo)
		}
		for range hi - lo {
			w, l := f.adjNbr[i], f.adjLink[i]
			if i++; i == hi {
				i = lo
			}
			if s.closed[w] == st || s.dist[w] < 0 {
				continue
			}
			ng := it.g + 1 + E*int64(s.use[l])
			if s.seen[w] != st || ng < s.g[w] {
				s.seen[w], s.g[w], s.via[w] = st, ng, l
				s.pq.push(astarItem{ng + int64(s.dist[w]), ng, s.tie(w), w})
			}
		}
	}
	return false
}
