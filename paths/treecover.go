package paths

import (
	"container/heap"
	"math/bits"
	"math/rand/v2"
	"sync"

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
// that lie in no candidate tree are then packed into those VLANs, or new
// ones, by best fit. The per-root trees and the per-path containment
// tests run on all cores.

// treeCover returns the VLAN link sets (VLAN 1 first) and false when the
// cover exceeded limit VLANs.
func treeCover(f *Fabric, ps *PathSet, base []topo.LinkID, seed, trial uint64, workers int, limit int64) (*packState, bool) {
	n := f.G.NumNodes()
	rootIdx := make([]int32, n)
	var roots []topo.NodeID
	for v := range n {
		rootIdx[v] = -1
		if f.G.Node(topo.NodeID(v)).Forwards() && f.Degree(topo.NodeID(v)) > 0 {
			rootIdx[v] = int32(len(roots))
			roots = append(roots, topo.NodeID(v))
		}
	}
	nr := len(roots)
	L := f.G.NumLinks()
	LW := (L + 63) / 64
	// inTree[ri*LW:(ri+1)*LW]: the links of root ri's BFS tree.
	inTree := make([]uint64, nr*LW)
	ParallelFor(workers, nr, func(lo, hi int) {
		dist := make([]int32, n)
		queue := make([]topo.NodeID, 0, n)
		var order []int32
		for ri := lo; ri < hi; ri++ {
			// One stream per root, not per worker's range: the trees, and
			// so the packing, must not depend on Workers.
			r := rand.New(rand.NewPCG(seed^0x7472_6565, trial<<32|uint64(ri)))
			row := inTree[ri*LW : (ri+1)*LW]
			src := roots[ri]
			for i := range dist {
				dist[i] = -1
			}
			queue = append(queue[:0], src)
			dist[src] = 0
			for h := 0; h < len(queue); h++ {
				v := queue[h]
				a, b := f.adjOff[v], f.adjOff[v+1]
				order = order[:0]
				for i := a; i < b; i++ {
					order = append(order, i)
				}
				if trial > 0 {
					// Later trials break BFS ties differently.
					r.Shuffle(len(order), func(x, y int) { order[x], order[y] = order[y], order[x] })
				}
				for _, i := range order {
					w := f.adjNbr[i]
					if dist[w] < 0 {
						dist[w] = dist[v] + 1
						queue = append(queue, w)
						l := f.adjLink[i]
						row[l/64] |= 1 << (l % 64)
					}
				}
			}
		}
	})

	st := newPackState(f, base)
	np := ps.NumPaths()
	// Which pair each path belongs to, for its source node.
	src := make([]topo.NodeID, np)
	for pi := range ps.Pairs {
		lo, hi := ps.PairPaths(pi)
		for j := lo; j < hi; j++ {
			src[j] = ps.Pairs[pi].A
		}
	}
	// Pass 1: per path, which of the trees rooted at its own nodes (the
	// first 32) hold it entirely, as a bit mask over its node positions.
	// Paths already inside VLAN 1 get mask 0 and covered set.
	masks := make([]uint32, np)
	covered := make([]bool, np)
	ParallelFor(workers, np, func(lo, hi int) {
		var nodes []topo.NodeID
		for j := lo; j < hi; j++ {
			p := ps.Path(j)
			if st.covered(p) {
				covered[j] = true
				continue
			}
			nodes = f.PathNodes(src[j], p, nodes[:0])
			var m uint32
			for i, v := range nodes[:min(len(nodes), 32)] {
				row := inTree[int(rootIdx[v])*LW:]
				ok := true
				for _, l := range p {
					if row[l/64]&(1<<(l%64)) == 0 {
						ok = false
						break
					}
				}
				if ok {
					m |= 1 << i
				}
			}
			masks[j] = m
		}
	})
	// Per-root lists of the paths it holds, as CSR, built on all cores:
	// each worker counts, then fills, the entries of its own contiguous
	// range of paths at offsets past those of the ranges before it, so
	// every list is in path order whatever the number of workers.
	count := make([]int32, nr)
	off := make([]uint32, nr+1)
	eachRoot := func(j int, nodes []topo.NodeID, fn func(ri int32)) []topo.NodeID {
		m := masks[j]
		if m == 0 {
			return nodes
		}
		nodes = f.PathNodes(src[j], ps.Path(j), nodes[:0])
		for m != 0 {
			i := bits.TrailingZeros32(m)
			m &= m - 1
			fn(rootIdx[nodes[i]])
		}
		return nodes
	}
	var nodes []topo.NodeID
	forRoots := func(j int, fn func(ri int32)) { nodes = eachRoot(j, nodes, fn) }
	nw := max(1, min(workers, np))
	chunk := (np + nw - 1) / nw
	wCount := make([]uint32, nw*nr) // worker w's entries per root
	wLoose := make([][]uint32, nw)  // paths in no candidate tree
	ParallelFor(nw, nw, func(lo, hi int) {
		for w := lo; w < hi; w++ {
			c := wCount[w*nr : (w+1)*nr]
			var buf []topo.NodeID
			for j := w * chunk; j < min((w+1)*chunk, np); j++ {
				if covered[j] {
					continue
				}
				if masks[j] == 0 {
					wLoose[w] = append(wLoose[w], uint32(j))
					continue
				}
				buf = eachRoot(j, buf, func(ri int32) { c[ri]++ })
			}
		}
	})
	var loose []uint32
	for w := range nw {
		loose = append(loose, wLoose[w]...)
	}
	wLoose = nil
	for ri := range nr {
		at := off[ri]
		for w := range nw {
			// wCount becomes worker w's first slot in root ri's list.
			c := wCount[w*nr+ri]
			wCount[w*nr+ri] = at
			at += c
		}
		off[ri+1] = at
		count[ri] = int32(at - off[ri])
	}
	list := make([]uint32, off[nr])
	ParallelFor(nw, nw, func(lo, hi int) {
		for w := lo; w < hi; w++ {
			fill := wCount[w*nr : (w+1)*nr]
			var buf []topo.NodeID
			for j := w * chunk; j < min((w+1)*chunk, np); j++ {
				if !covered[j] {
					buf = eachRoot(j, buf, func(ri int32) { list[fill[ri]] = uint32(j); fill[ri]++ })
				}
			}
		}
	})
	wCount = nil

	// Greedy set cover with a lazy max-heap.
	r := rand.New(rand.NewPCG(seed^0x636f_7665_72, trial))
	h := &coverHeap{}
	for ri := range nr {
		if count[ri] > 0 {
			heap.Push(h, coverItem{count[ri], r.Uint32(), int32(ri)})
		}
	}
	for h.Len() > 0 {
		it := heap.Pop(h).(coverItem)
		ri := int(it.root)
		if it.count != count[ri] {
			if count[ri] > 0 {
				heap.Push(h, coverItem{count[ri], it.tie, it.root})
			}
			continue
		}
		// Paths the VLANs chosen so far already hold (as unions of other
		// paths) need no new VLAN: settle them first, then re-rank.
		for _, j := range list[off[ri]:off[ri+1]] {
			if !covered[j] && st.covered(ps.Path(int(j))) {
				covered[j] = true
				forRoots(int(j), func(r int32) { count[r]-- })
			}
		}
		if count[ri] != it.count {
			if count[ri] > 0 {
				heap.Push(h, coverItem{count[ri], it.tie, it.root})
			}
			continue
		}
		vl := st.newVLAN()
		if int64(len(st.vlinks)) > limit {
			return st, false
		}
		for _, j := range list[off[ri]:off[ri+1]] {
			if covered[j] {
				continue
			}
			covered[j] = true
			p := ps.Path(int(j))
			st.nodes = f.PathNodes(src[j], p, st.nodes[:0])
			st.commit(vl, p)
			// Every tree holding this path loses one.
			forRoots(int(j), func(r int32) { count[r]-- })
		}
	}
	// Leftovers: paths no BFS tree holds, in Algorithm 2's pair order.
	for _, j := range loose {
		p := ps.Path(int(j))
		if st.covered(p) {
			continue
		}
		st.nodes = f.PathNodes(src[j], p, st.nodes[:0])
		if !st.placeBestFit(p, r) {
			vl := st.newVLAN()
			st.commit(vl, p)
			if int64(len(st.vlinks)) > limit {
				return st, false
			}
		}
	}
	return st, true
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
func (st *packState) placeBestFit(p []topo.LinkID, r *rand.Rand) bool {
	w := st.words
	nb := bits.Len(uint(len(p)))
	if cap(st.ctr) < nb*w {
		st.ctr = make([]uint64, nb*w)
	}
	sl := st.ctr[:nb*w]
	clear(sl)
	// sl[b*w+k] is bit b of the count of the subgraphs of word k.
	for _, l := range p {
		row := st.bits[int(l)*w : (int(l)+1)*w]
		for k, carry := range row {
			for b := 0; carry != 0 && b < nb; b++ {
				x := sl[b*w+k]
				sl[b*w+k] = x ^ carry
				carry &= x
			}
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
			if g[i] != 0 && st.fits(int(g[i]), p) {
				placed = int(g[i])
				break
			}
		}
	}
	if placed < 0 {
		// Every subgraph sharing a link was tested: first fit skips them.
		placed = st.firstFitUntested(p, func(vl int32) bool {
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
		return true
	}
	return false
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
