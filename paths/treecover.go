package paths

import (
	"container/heap"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/edgefabric/edgefabric/topo"
)

// Tree cover: edgefabric's parallel packing heuristic (the paper's parallel
// algorithm, based on graph colouring, is only in its technical report).
//
// The known optimal packings are trees around one node: one VLAN per core
// switch in FatTree(p) ((p/2)² VLANs), one per switch in BCube(p, l). So
// the heuristic takes as candidates the shortest-path (BFS) tree rooted at
// every forwarding node, finds for each path which of the trees rooted at
// its own nodes contain it entirely (a tree around a node of the path is
// where such a path lies if anywhere; restricting to them keeps the test
// to a few bit lookups per path), and then runs greedy set cover: repeatedly take the
// tree that contains the most still-uncovered paths and make it a VLAN
// holding exactly those paths (a subset of a tree, hence loop-free). Paths
// that lie in no candidate tree are then placed in two ways, the majority
// round then best fit, and best fit alone, side by side on copies of the
// VLANs, keeping the better (placeLoose). The per-root trees, the per-path
// containment tests, and in each greedy step the tests for paths already
// covered and the gathering of the new VLAN's links run on all cores (the
// steps only read the VLANs; each step's changes are applied after it, in
// an order that does not depend on the number of workers, so neither does
// the packing); best fit places one path at a time.

// treeCover returns the VLAN link sets (VLAN 1 first) and false when the
// cover exceeded limit VLANs.
func treeCover(f *Fabric, ps *PathSet, base []topo.LinkID, seed, trial uint64, workers int, limit int64) (*packState, bool) {
	roots, rootIdx := coverRoots(f)
	roots, rootIdx = rootsOnPaths(f, ps, base, roots, rootIdx, workers)
	return treeCoverFrom(f, ps, base, roots, rootIdx, seed, trial, workers, limit)
}

// treeCoverFrom is treeCover over the roots rootsOnPaths kept, which do
// not depend on the trial: Pack finds them once for all its trials.
func treeCoverFrom(f *Fabric, ps *PathSet, base []topo.LinkID, roots []topo.NodeID, rootIdx []int32, seed, trial uint64, workers int, limit int64) (*packState, bool) {
	// Root indices take two bytes where they fit (they always do on the
	// Table 3 rows): the path-to-roots map is hundreds of megabytes.
	if len(roots) <= math.MaxUint16+1 {
		return coverWith[uint16](f, ps, base, roots, rootIdx, seed, trial, workers, limit)
	}
	return coverWith[int32](f, ps, base, roots, rootIdx, seed, trial, workers, limit)
}

// coverRoots lists the forwarding nodes with fabric links, the roots of the
// candidate trees, and maps every node to its index among them (-1 for
// none).
func coverRoots(f *Fabric) (roots []topo.NodeID, rootIdx []int32) {
	n := f.G.NumNodes()
	rootIdx = make([]int32, n)
	for v := range n {
		rootIdx[v] = -1
		if f.G.Node(topo.NodeID(v)).Forwards() && f.Degree(topo.NodeID(v)) > 0 {
			rootIdx[v] = int32(len(roots))
			roots = append(roots, topo.NodeID(v))
		}
	}
	return roots, rootIdx
}

// rootsOnPaths keeps, of roots (rootIdx their indices, coverRoots), the
// nodes that some path of ps outside base (VLAN 1) passes through, in the
// same order, and renumbers rootIdx: the tree of any other root holds no
// path to cover (paths inside VLAN 1 are covered from the start), so it is
// never taken. The roots kept keep their relative order, so the cover,
// the majority round and their random draws are unchanged. Building a
// tree per forwarding node costs nodes × links in time and memory, which
// on a fabric of many switches and few paths to cover is all of the
// packing: 10,000 switches hanging off a 4-switch ring with hosts on it
// took 1 s and 1.4 GB of allocations per trial for 12 paths, a line of
// 20,000 switches (its one path inside VLAN 1) 2.5 s, and the same line
// with three edge switches 2.4 s (every path inside VLAN 1: no tree is
// built at all now).
//
// It scans every path: an earlier version stopped once every root had
// been seen on some path, inside VLAN 1 or not, and then kept them all,
// which the three-edge line defeats. A full scan of FatTree(48)'s 63 M
// links costs about a quarter of a second on one core, so it runs on all
// of them, and Pack runs it once for all its trials.
func rootsOnPaths(f *Fabric, ps *PathSet, base []topo.LinkID, roots []topo.NodeID, rootIdx []int32, workers int) ([]topo.NodeID, []int32) {
	inBase := make([]bool, f.G.NumLinks())
	for _, l := range base {
		inBase[l] = true
	}
	onOut := make([]bool, len(roots)) // on some path outside base
	var mu sync.Mutex
	ParallelFor(workers, ps.NumPaths(), func(lo, hi int) {
		mine := make([]bool, len(roots))
		for j := lo; j < hi; j++ {
			p := ps.Path(j)
			if !slices.ContainsFunc(p, func(l topo.LinkID) bool { return !inBase[l] }) {
				continue
			}
			// Only a path's first maxPathRoots nodes can be its roots
			// (pathRoots): the ends of its first maxPathRoots-1 links.
			for _, l := range p[:min(len(p), maxPathRoots-1)] {
				a, b := f.Ends(l)
				if ri := rootIdx[a]; ri >= 0 {
					mine[ri] = true
				}
				if ri := rootIdx[b]; ri >= 0 {
					mine[ri] = true
				}
			}
		}
		mu.Lock()
		for ri, on := range mine {
			onOut[ri] = onOut[ri] || on
		}
		mu.Unlock()
	})
	var kept []topo.NodeID
	for ri, v := range roots {
		if onOut[ri] {
			rootIdx[v] = int32(len(kept))
			kept = append(kept, v)
		} else {
			rootIdx[v] = -1
		}
	}
	return kept, rootIdx
}

// rootIndex is the type of the indices of roots in the path-to-roots map.
type rootIndex interface{ ~uint16 | ~int32 }

// coverWith is treeCover with root indices of type R.
func coverWith[R rootIndex](f *Fabric, ps *PathSet, base []topo.LinkID, roots []topo.NodeID, rootIdx []int32, seed, trial uint64, workers int, limit int64) (*packState, bool) {
	nr := len(roots)
	inTree, lw := bfsTrees(f, roots, trial, workers)

	st := newPackState(f, base)
	np := ps.NumPaths()
	src := ps.Sources()
	// Per path, which of the trees rooted at its own nodes (the first 32)
	// hold it entirely, as a list of root indices (CSR over paths: path j's
	// roots are pr.roots[pr.off[j]:pr.off[j+1]]). Paths already inside
	// VLAN 1 get none and are covered.
	covered := newPathBits(np)
	// Which VLAN holds each path, as the cover and the loose ways find
	// out anyway: the plan's check then tests one VLAN per path instead of
	// searching them all (Packing.PathVLAN).
	st.hint = make([]uint16, np)
	for j := range st.hint {
		st.hint[j] = noHint
	}
	pr := pathRoots[R](f, ps, src, nil, inTree, lw, rootIdx, st, covered, workers)
	inTree = nil
	var loose []uint32 // paths in no candidate tree
	for j := range uint32(np) {
		if !covered.has(j) && pr.off[j] == pr.off[j+1] {
			loose = append(loose, j)
		}
	}
	// The transpose: per root, the paths its tree holds, in path order.
	off, list := rootLists(pr, nr, np, workers)
	pr = rootsOfPaths[R]{}
	nw := max(1, workers)

	// Greedy set cover with a lazy max-heap. A tree's count, the paths
	// it holds that are not covered yet, is counted afresh from its list
	// whenever the heap needs it (uncoveredIn), rather than kept up to
	// date by lowering the count of every tree holding each newly covered
	// path: that touched each path's root list at a random place, a cache
	// miss or two per path (a sixth of FatTree(48)'s CPU profile, though
	// the plan's wall time gained less than the machine's noise), where
	// the recount reads a list in order against a bitset that stays in
	// cache.
	// Both give every tree the same count whenever the heap looks at it,
	// hence the same packing.
	r := rand.New(rand.NewPCG(seed^0x636f_7665_72, trial))
	h := &coverHeap{}
	for ri := range nr {
		if c := int32(off[ri+1] - off[ri]); c > 0 {
			heap.Push(h, coverItem{c, r.Uint32(), int32(ri)})
		}
	}
	current := func(ri int32) int32 { return covered.uncoveredIn(list[off[ri]:off[ri+1]]) }
	settled := make([][]uint32, nw)
	newLinks := make([][]uint64, nw)
	for w := range nw {
		newLinks[w] = make([]uint64, (f.G.NumLinks()+63)/64)
	}
	for {
		it, ok := h.popCurrent(current)
		if !ok {
			break
		}
		ri := int(it.root)
		paths := list[off[ri]:off[ri+1]]
		for w := range settled {
			settled[w] = settled[w][:0]
		}
		// Paths the VLANs chosen so far already hold (as unions of other
		// paths) need no new VLAN: settle them first, then re-rank. The
		// tests only read the VLANs, so they run on all cores.
		parts(nw, len(paths), func(w, lo, hi int) {
			s := settled[w]
			seg := paths[lo:hi]
			for i, j := range seg {
				ps.prefetchPath(seg, i)
				if covered.has(j) {
					continue
				}
				if vl := st.holder(ps.Path(int(j))); vl >= 0 {
					s = append(s, j)
					st.setHint(j, vl)
				}
			}
			settled[w] = s
		})
		n := int32(0)
		for _, s := range settled {
			for _, j := range s {
				covered.set(j)
			}
			n += int32(len(s))
		}
		if n > 0 {
			if c := it.count - n; c > 0 {
				heap.Push(h, coverItem{c, it.tie, it.root})
			}
			continue
		}
		vl := st.newVLAN()
		if int64(len(st.vlinks)) > limit {
			return st, false
		}
		// The new VLAN is the union of the tree's uncovered paths: gather
		// their links on all cores, then add them in link order (the
		// VLAN's links do not depend on the number of workers).
		parts(nw, len(paths), func(w, lo, hi int) {
			nl := newLinks[w]
			seg := paths[lo:hi]
			for i, j := range seg {
				ps.prefetchPath(seg, i)
				if covered.has(j) {
					continue
				}
				covered.set(j)
				st.setHint(j, vl)
				for _, l := range ps.Path(int(j)) {
					nl[l/64] |= 1 << (l % 64)
				}
			}
		})
		for k := range newLinks[0] {
			var m uint64
			for w := range nw {
				m |= newLinks[w][k]
				newLinks[w][k] = 0
			}
			for ; m != 0; m &= m - 1 {
				l := topo.LinkID(k*64 + bits.TrailingZeros64(m))
				a, b := f.Ends(l)
				st.add(vl, l, a, b)
			}
		}
	}
	if len(loose) == 0 {
		return st, true
	}
	return placeLoose[R](st, ps, src, loose, roots, rootIdx, r, seed, trial, workers, limit)
}

// placeLoose places the loose paths (in no candidate tree) in two ways,
// each from its own copy of the state after the cover, and keeps the one
// that needs fewer VLANs, best fit alone on a tie:
//
//   - the majority round (majority.go), then best fit for what it leaves;
//   - best fit alone.
//
// Both best fits take their paths longest first (longestFirst).
//
// Neither wins everywhere (docs/spain-plan.md: the round on BCube(p,4) and
// HyperX with random ties, best fit alone on BCube with ordered ties).
// With more than one worker both run at once; a way stops as soon as it has
// more VLANs than the other finished with, since it could only end with
// more, so the choice does not depend on which finishes first.
func placeLoose[R rootIndex](st *packState, ps *PathSet, src []topo.NodeID, loose []uint32, roots []topo.NodeID, rootIdx []int32, r *rand.Rand, seed, trial uint64, workers int, limit int64) (*packState, bool) {
	var first atomic.Int64 // the VLAN count of the way that finished first
	first.Store(math.MaxInt64)
	bound := func() int64 { return min(limit, first.Load()) }
	finish := func(n int) {
		for {
			old := first.Load()
			if int64(n) >= old || first.CompareAndSwap(old, int64(n)) {
				return
			}
		}
	}
	alt := st.clone()
	nRound, nBest := -1, -1 // -1: stopped
	round := func() {
		alt.trackGiant()
		rest, ok := majorityRound[R](alt, ps, src, loose, roots, rootIdx, workers, bound)
		if ok {
			ok = alt.bestFitLoose(ps, src, rest, rand.New(rand.NewPCG(seed^0x6d61_6a6f_7269_7479, trial)), bound)
		}
		if ok {
			nRound = len(alt.vlinks)
			finish(nRound)
		}
	}
	best := func() {
		st.trackGiant()
		if st.bestFitLoose(ps, src, loose, r, bound) {
			nBest = len(st.vlinks)
			finish(nBest)
		}
	}
	switch {
	case looseWays == looseBestFitOnly:
		best()
	case looseWays == looseRoundOnly:
		round()
	case workers > 1:
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); round() }()
		best()
		wg.Wait()
	default:
		round()
		best()
	}
	st.loose, alt.loose = len(loose), len(loose)
	st.looseWay, alt.looseWay = "best fit", "majority round"
	switch {
	case nBest >= 0 && (nRound < 0 || nBest <= nRound):
		return st, true
	case nRound >= 0:
		return alt, true
	}
	return st, false
}

// looseWays selects the ways placeLoose tries: both, except in tests that
// look at one alone.
var looseWays = looseBoth

const (
	looseBoth = iota
	looseBestFitOnly
	looseRoundOnly
)

// bestFitLoose places the given paths by best fit (placeBestFit, else a
// new subgraph), longest first (longestFirst), and returns false as soon
// as the subgraphs number more than bound(). Giant tracking must be on.
func (st *packState) bestFitLoose(ps *PathSet, src []topo.NodeID, loose []uint32, r *rand.Rand, bound func() int64) bool {
	order := longestFirst(ps, loose)
	for t, j := range order {
		ps.prefetchPath(order, t)
		p := ps.Path(int(j))
		if vl := st.holder(p); vl >= 0 {
			st.setHint(j, vl)
			continue
		}
		st.nodes = st.f.PathNodes(src[j], p, st.nodes[:0])
		vl := st.placeBestFit(p, r)
		if vl < 0 {
			vl = st.newVLAN()
			st.commit(vl, p)
			if int64(len(st.vlinks)) > bound() {
				return false
			}
		}
		st.setHint(j, vl)
	}
	return true
}

// longestFirst returns the paths sel in decreasing order of length, in
// their given order among equal lengths (a stable counting sort; sel is
// not modified, since both ways of placeLoose read it at once). As in
// first-fit-decreasing bin packing, the paths with the most links to fit
// go first, while the VLANs still have room for them; the short ones fit
// into what is left (docs/spain-plan.md: BCube(3,5), trial 0, 450 -> 426
// VLANs).
func longestFirst(ps *PathSet, sel []uint32) []uint32 {
	maxLen := 0
	for _, j := range sel {
		maxLen = max(maxLen, int(ps.PathOff[j+1]-ps.PathOff[j]))
	}
	// start[l]: where the paths of length l begin in the output, the
	// longest at the front.
	start := make([]int, maxLen+2)
	for _, j := range sel {
		start[maxLen-int(ps.PathOff[j+1]-ps.PathOff[j])+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	out := make([]uint32, len(sel))
	for _, j := range sel {
		k := maxLen - int(ps.PathOff[j+1]-ps.PathOff[j])
		out[start[k]] = j
		start[k]++
	}
	return out
}

// bfsTrees returns the links of the BFS tree rooted at each root, as one
// bitset of lw words per root. Trial 0 scans every node's ports in order;
// trial t scans them in reverse order when t is odd, starting ⌊t/2⌋ ports
// further on (modulo the node's degree). Every node scans alike, so the
// trees stay as regular as the port numbering: random scan orders per
// node, tried first, gave far worse packings (docs/spain-plan.md).
func bfsTrees(f *Fabric, roots []topo.NodeID, trial uint64, workers int) (inTree []uint64, lw int) {
	n := f.G.NumNodes()
	lw = (f.G.NumLinks() + 63) / 64
	inTree = make([]uint64, len(roots)*lw)
	ParallelFor(workers, len(roots), func(lo, hi int) {
		dist := make([]int32, n)
		queue := make([]topo.NodeID, 0, n)
		var order []int32
		for ri := lo; ri < hi; ri++ {
			row := inTree[ri*lw : (ri+1)*lw]
			src := roots[ri]
			for i := range dist {
				dist[i] = -1
			}
			queue = append(queue[:0], src)
			dist[src] = 0
			for h := 0; h < len(queue); h++ {
				v := queue[h]
				a, b := f.adjOff[v], f.adjOff[v+1]
				visit := func(i int32) {
					w := f.adjNbr[i]
					if dist[w] < 0 {
						dist[w] = dist[v] + 1
						queue = append(queue, w)
						l := f.adjLink[i]
						row[l/64] |= 1 << (l % 64)
					}
				}
				if trial == 0 {
					for i := a; i < b; i++ {
						visit(i)
					}
					continue
				}
				// Later trials break BFS ties differently.
				order = order[:0]
				for i := a; i < b; i++ {
					order = append(order, i)
				}
				if trial%2 == 1 {
					slices.Reverse(order)
				}
				if len(order) > 0 {
					k := int(trial/2) % len(order)
					order = append(order[k:], order[:k]...)
				}
				for _, i := range order {
					visit(i)
				}
			}
		}
	})
	return inTree, lw
}

// rootsOfPaths is a CSR map from each path to the roots whose trees hold it.
// maxPathRoots bounds the nodes of a path, from its source, whose trees
// may hold it: a data-center path has a handful, and a long one (a line
// of thousands of switches) would otherwise be tested against, and ask
// rootsOnPaths to build, a tree at every node it passes.
const maxPathRoots = 32

type rootsOfPaths[R rootIndex] struct {
	off   []uint32 // per path, len np+1
	roots []R
}

// pathRoots finds, per path not already in a subgraph of st (those it
// sets in covered), the roots among its first maxPathRoots nodes whose trees (inTree,
// lw words per root) hold all its links. The paths are sel's, or every
// path of ps when sel is nil; the map and covered are indexed by position
// in sel (the item). Each worker lists the roots of its own contiguous
// range of items, so the lists come out in item order whatever the number
// of workers.
func pathRoots[R rootIndex](f *Fabric, ps *PathSet, src []topo.NodeID, sel []uint32, inTree []uint64, lw int, rootIdx []int32, st *packState, covered pathBits, workers int) rootsOfPaths[R] {
	np := ps.NumPaths()
	if sel != nil {
		np = len(sel)
	}
	cnt := make([]uint8, np)
	nw := max(1, min(workers, np))
	// Each worker's roots go into blocks, each twice the size of the last
	// up to a million entries, copied once into place at the end (growing
	// one slice of hundreds of megabytes by appends copied it over and
	// over).
	const block = 1 << 20
	wRoots := make([][][]R, nw)
	parts(nw, np, func(w, lo, hi int) {
		var nodes []topo.NodeID
		out := make([]R, 0, min(block, 2*(hi-lo)+64))
		for j := lo; j < hi; j++ {
			pj := j
			if sel != nil {
				pj = int(sel[j])
				ps.prefetchPath(sel[:hi], j)
			}
			p := ps.Path(pj)
			if vl := st.holder(p); vl >= 0 {
				covered.set(uint32(j))
				st.setHint(uint32(pj), vl)
				continue
			}
			nodes = f.PathNodes(src[pj], p, nodes[:0])
			for i, v := range nodes[:min(len(nodes), maxPathRoots)] {
				ri := rootIdx[v]
				if ri < 0 {
					continue
				}
				row := inTree[int(ri)*lw:]
				// The links farthest from the root first: those are where
				// another root's tree most often parts from this one, so a
				// path outside it is rejected after one or two lookups.
				a, b := 0, len(p)-1
				ok := true
				for ok && a <= b {
					k := a
					if b-i >= i-a {
						k, b = b, b-1
					} else {
						a++
					}
					l := p[k]
					ok = row[l/64]&(1<<(l%64)) != 0
				}
				if ok {
					if len(out) == cap(out) {
						wRoots[w] = append(wRoots[w], out)
						out = make([]R, 0, min(block, 2*cap(out)))
					}
					out = append(out, R(ri))
					cnt[j]++
				}
			}
		}
		wRoots[w] = append(wRoots[w], out)
	})
	pr := rootsOfPaths[R]{off: make([]uint32, np+1)}
	total := 0
	for _, bs := range wRoots {
		for _, b := range bs {
			total += len(b)
		}
	}
	if total > math.MaxUint32 {
		// Beyond 32-bit offsets (billions of links, far past any Table 3
		// row): no path gets a root, so all go to best fit, slow but
		// still a packing.
		return pr
	}
	pr.roots = make([]R, 0, total)
	for _, bs := range wRoots {
		for _, b := range bs {
			pr.roots = append(pr.roots, b...)
		}
	}
	for j := range np {
		pr.off[j+1] = pr.off[j] + uint32(cnt[j])
	}
	return pr
}

// rootLists transposes pr: per root, the uncovered paths its tree holds,
// in path order (root ri's are list[off[ri]:off[ri+1]]). Each worker
// counts, then fills, the entries of its own contiguous range of paths at
// offsets past those of the ranges before it.
func rootLists[R rootIndex](pr rootsOfPaths[R], nr, np, workers int) (off, list []uint32) {
	nw := max(1, min(workers, np))
	wCount := make([]uint32, nw*nr) // worker w's entries per root
	parts(nw, np, func(w, lo, hi int) {
		c := wCount[w*nr : (w+1)*nr]
		for _, r := range pr.roots[pr.off[lo]:pr.off[hi]] {
			c[r]++
		}
	})
	off = slotsByWorker(wCount, nw, nr)
	list = make([]uint32, off[nr])
	parts(nw, np, func(w, lo, hi int) {
		fill := wCount[w*nr : (w+1)*nr]
		for j := lo; j < hi; j++ {
			for _, r := range pr.roots[pr.off[j]:pr.off[j+1]] {
				list[fill[r]] = uint32(j)
				fill[r]++
			}
		}
	})
	return off, list
}

// slotsByWorker turns per-worker counts (wCount[w*nk+k]: the entries
// worker w has for key k) into the offsets of a CSR keyed by k, in which
// each key's entries come worker by worker, and rewrites wCount in place to
// each worker's first slot in each key's list, for the fill pass.
func slotsByWorker(wCount []uint32, nw, nk int) (off []uint32) {
	off = make([]uint32, nk+1)
	for k := range nk {
		at := off[k]
		for w := range nw {
			c := wCount[w*nk+k]
			wCount[w*nk+k] = at
			at += c
		}
		off[k+1] = at
	}
	return off
}

// parts runs fn(w, lo, hi) for the nw contiguous ranges [lo, hi) of [0, n)
// that ParallelFor would form, w numbering them, and waits.
func parts(nw, n int, fn func(w, lo, hi int)) {
	nw = max(1, min(nw, n))
	chunk := (n + nw - 1) / nw
	ParallelFor(nw, nw, func(lo, hi int) {
		for w := lo; w < hi; w++ {
			fn(w, min(w*chunk, n), min((w+1)*chunk, n))
		}
	})
}

type coverItem struct {
	count int32
	tie   uint32
	root  int32
}
type coverHeap []coverItem

func (h coverHeap) Len() int { return len(h) }
func (h coverHeap) Less(i, j int) bool {
	if h[i].count != h[j].count {
		return h[i].count > h[j].count
	}
	return h[i].tie < h[j].tie
}
func (h coverHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *coverHeap) Push(x any)   { *h = append(*h, x.(coverItem)) }

// popCurrent pops the entry with the highest current count (current
// gives a root's count now; counts only fall): an entry whose root's count
// fell since it was pushed goes back with the new count (or is dropped at
// zero), so that the heap is lazy, not kept in order at every change. It
// returns false when the heap runs empty.
func (h *coverHeap) popCurrent(current func(root int32) int32) (coverItem, bool) {
	for h.Len() > 0 {
		it := heap.Pop(h).(coverItem)
		if c := current(it.root); c != it.count {
			if c > 0 {
				heap.Push(h, coverItem{c, it.tie, it.root})
			}
			continue
		}
		return it, true
	}
	return coverItem{}, false
}

func (h *coverHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// ParallelFor splits [0, n) into contiguous ranges over workers goroutines
// and waits for them (the planner's metrics use it too).
func ParallelFor(workers, n int, fn func(lo, hi int)) {
	workers = max(1, min(workers, n))
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, n)
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); fn(lo, hi) }()
	}
	wg.Wait()
}

// placeBestFit is place(p, BestFit, r) with the same choice rule (the
// subgraphs holding most of the path's links first, ties in random order,
// then first fit) at a cost that does not grow with the number of
// subgraphs sharing a link: it counts the shared links of all subgraphs
// at once with bit-sliced counters over the links' subgraph bitsets,
// lists only the subgraphs of the count levels it tests, and draws random
// numbers only for the subgraphs it tests (place lists, shuffles and
// sorts every sharing subgraph, a thousand or more per path on BCube).
// The path (nodes st.nodes) must lie in no subgraph yet (covered). It
// returns the subgraph the path went into, or -1 when none takes it.
func (st *packState) placeBestFit(p []topo.LinkID, r *rand.Rand) int {
	w := st.words
	sl, nb := st.countShared(p)
	// excl: the subgraphs a link of the path is blocked in (isBlocked),
	// which fits would reject; they keep their places in the random
	// orders, so skipping them changes no choice.
	excl := st.exclMask()
	for _, l := range p {
		i := int(l) * w
		for k := range w {
			excl[k] |= st.blocked[i+k] &^ st.bits[i+k]
		}
	}
	if st.tracking {
		// Also the subgraphs whose anchor component holds all the path's
		// nodes, or two with one outside between them: a component is
		// connected, so the path would close a loop (the path is in no
		// subgraph yet, so each lacks one of its links there).
		for k := range w {
			var seen, gap, bad uint64
			all := ^uint64(0)
			for _, x := range st.nodes {
				g := st.giant[int(x)*w+k]
				bad |= gap & g
				gap |= seen &^ g
				seen |= g
				all &= g
			}
			excl[k] |= bad | all
		}
	}
	placed := -1
	for c := len(p); c >= 1 && placed < 0; c-- {
		st.cands = st.cands[:0]
		for k := range w {
			m := ^uint64(0)
			for b := range nb {
				if c>>b&1 != 0 {
					m &= sl[b*w+k]
				} else {
					m &^= sl[b*w+k]
				}
			}
			for m != 0 {
				st.cands = append(st.cands, int32(k*64+bits.TrailingZeros64(m)))
				m &= m - 1
			}
		}
		// Lazy Fisher-Yates over the tie group.
		g := st.cands
		for i := range g {
			j := i + r.IntN(len(g)-i)
			g[i], g[j] = g[j], g[i]
			if g[i] != 0 && excl[g[i]/64]&(1<<(g[i]%64)) == 0 && st.fits(int(g[i]), p) {
				placed = int(g[i])
				break
			}
		}
	}
	if placed < 0 {
		// Every subgraph sharing a link was tested: first fit skips them.
		placed = st.firstFitUntested(p, func(vl int32) bool {
			if excl[vl/64]&(1<<(vl%64)) != 0 {
				return true
			}
			for b := range nb {
				if sl[b*w+int(vl)/64]&(1<<(vl%64)) != 0 {
					return true
				}
			}
			return false
		}, r)
	}
	if placed >= 0 {
		st.commit(placed, p)
	}
	return placed
}

// countShared counts, for every subgraph at once, how many of links it
// holds, in nb bit-sliced counters: sl[b*st.words+k] is bit b of the
// counts of the subgraphs of word k. sl is st.ctr, valid until the next
// call.
func (st *packState) countShared(links []topo.LinkID) (sl []uint64, nb int) {
	w := st.words
	nb = bits.Len(uint(len(links)))
	if cap(st.ctr) < nb*w {
		st.ctr = make([]uint64, nb*w)
	}
	sl = st.ctr[:nb*w]
	clear(sl)
	for _, l := range links {
		row := st.bits[int(l)*w : (int(l)+1)*w]
		for k, carry := range row {
			for b := 0; carry != 0 && b < nb; b++ {
				x := sl[b*w+k]
				sl[b*w+k] = x ^ carry
				carry &= x
			}
		}
	}
	return sl, nb
}

// firstFitUntested is Algorithm 2's first fit: the subgraphs in random
// order (a lazy Fisher-Yates, undone afterwards so the permutation stays
// the identity; VLAN 1 is a spanning tree, where any link it lacks closes a
// loop, so it is skipped without changing the outcome). It does not test
// again the subgraphs best fit just found the path would close a loop in
// (tested, nil for none): fits would fail on them again. It returns the
// subgraph that takes p, or -1.
func (st *packState) firstFitUntested(p []topo.LinkID, tested func(vl int32) bool, r *rand.Rand) int {
	m := len(st.vlinks)
	for len(st.perm) < m {
		st.perm = append(st.perm, int32(len(st.perm)))
	}
	perm := st.perm[:m]
	type swap struct{ a, b int }
	var swaps [16]swap
	undo := swaps[:0]
	placed := -1
	for i := 1; i < m; i++ {
		j := i + r.IntN(m-i)
		perm[i], perm[j] = perm[j], perm[i]
		undo = append(undo, swap{i, j})
		if (tested == nil || !tested(perm[i])) && st.fits(int(perm[i]), p) {
			placed = int(perm[i])
			break
		}
	}
	for k := len(undo) - 1; k >= 0; k-- {
		perm[undo[k].a], perm[undo[k].b] = perm[undo[k].b], perm[undo[k].a]
	}
	return placed
}

// exclMask returns st.excl as a cleared bitset of one bit per subgraph,
// the scratch mask of the subgraphs a placement skips.
func (st *packState) exclMask() []uint64 {
	if cap(st.excl) < st.words {
		st.excl = make([]uint64, st.words)
	}
	m := st.excl[:st.words]
	clear(m)
	return m
}

// pathBits is a bitset over paths (or over the items of a selection of
// them): the cover's and the majority round's marks of the paths already
// covered or placed. A bit per path, not a bool, keeps the marks of
// FatTree(48)'s 15.9 M paths in 2 MB, in cache for the many lookups of the
// greedy steps. set may run while other goroutines set other bits of the
// same word, and has while others set bits; both are atomic. uncoveredIn
// reads plainly: no bit may be set while it runs.
type pathBits []uint64

func newPathBits(n int) pathBits { return make(pathBits, (n+63)/64) }

func (b pathBits) has(j uint32) bool {
	return atomic.LoadUint64(&b[j/64])&(1<<(j%64)) != 0
}

func (b pathBits) set(j uint32) { atomic.OrUint64(&b[j/64], 1<<(j%64)) }

// uncoveredIn counts the entries of list whose bit is not set.
func (b pathBits) uncoveredIn(list []uint32) int32 {
	n := int32(0)
	for _, j := range list {
		if b[j/64]&(1<<(j%64)) == 0 {
			n++
		}
	}
	return n
}
