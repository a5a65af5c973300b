package paths

import (
	"container/heap"
	"slices"

	"github.com/edgefabric/edgefabric/topo"
)

// The majority round: one of tree cover's two ways of placing its loose
// paths (placeLoose runs both and keeps the better).
//
// A loose path lies in none of the BFS trees rooted at its nodes: at some
// node it turns towards the root otherwise than the tree does. On BCube
// with random ties a fifth of the paths are loose (a path corrects its
// servers' address digits in a random order, a BFS tree in one order).
// Best fit alone puts them one at a time into whichever VLAN takes them,
// so that the VLANs fill with paths of mixed orientation and reject later
// ones; on BCube(8,4) that opened 1,212 VLANs beyond the cover's 2,033.
//
// The majority round first builds, for every root, the shortest-path tree
// whose parent at every node is the neighbour most loose paths through the
// root leave that node by towards the root (majorityTrees). Then,
// repeatedly, it takes the tree that holds the most loose paths not placed
// yet, as long as it holds at least half as many as the first tree taken
// (below that a tree holds scraps that best fit places better: measured,
// docs/spain-plan.md), and places those paths as one bundle: into the VLAN
// that shares most of their links and stays loop-free with all of them,
// else into a new VLAN. Best fit places what is left. On BCube(p,4) with
// random ties the round takes about p^(l−1)·l/4 trees (BCube(4,4), trial
// 1: 64 after the cover's 192, as many VLANs as the optimum's 256), and
// what is left are the paths whose order lost every vote they took part
// in (BCube(8,4): 4 % of the paths).

// majorityTrees returns, for every root, the links of a shortest-path tree
// rooted there, as one bitset of lw words per root (bfsTrees' layout):
// every node's parent is, among its neighbours one hop closer to the root,
// the one most of the selected paths leave it by towards the root, the
// lowest port on ties and where no path votes. Only paths that contain the
// root and run along shortest paths towards it on both sides vote: no
// shortest-path tree of that root can hold the others.
func majorityTrees(f *Fabric, ps *PathSet, src []topo.NodeID, sel []uint32, roots []topo.NodeID, rootIdx []int32, workers int) (inTree []uint64, lw int) {
	n := f.G.NumNodes()
	nr := len(roots)
	lw = (f.G.NumLinks() + 63) / 64
	inTree = make([]uint64, nr*lw)
	// Each selected path as one record, read once per root the path runs
	// through: its number of hops, its first node and, per hop, the
	// adjacency position it leaves a node by (the next node and the link
	// follow from it). The per-root lists hold the records' offsets, so
	// that a visit costs one cache miss, not one each for the path's
	// source, its offsets and its hops (a third of the round's CPU time on
	// BCube(8,4)).
	recOff := make([]uint32, len(sel)+1)
	for i, j := range sel {
		recOff[i+1] = recOff[i] + 2 + ps.PathOff[j+1] - ps.PathOff[j]
	}
	recs := make([]int32, recOff[len(sel)])
	nw := max(1, min(workers, len(sel)))
	// Per root, the selected paths through it (their records' offsets): a CSR
	// filled by each worker at offsets past those of the ranges before it,
	// so that the lists come out in sel order whatever the workers.
	wCount := make([]uint32, nw*nr)
	parts(nw, len(sel), func(w, lo, hi int) {
		c := wCount[w*nr : (w+1)*nr]
		for i := lo; i < hi; i++ {
			j := sel[i]
			v := src[j]
			if ri := rootIdx[v]; ri >= 0 {
				c[ri]++
			}
			rec := recs[recOff[i]:recOff[i+1]]
			rec[0], rec[1] = int32(len(rec)-2), int32(v)
			h := rec[2:]
			for k, l := range ps.Path(int(j)) {
				if f.linkA[l] == v {
					h[k], v = f.posA[l], f.linkB[l]
				} else {
					h[k], v = f.posB[l], f.linkA[l]
				}
				if ri := rootIdx[v]; ri >= 0 {
					c[ri]++
				}
			}
		}
	})
	off := slotsByWorker(wCount, nw, nr)
	through := make([]uint32, off[nr])
	parts(nw, len(sel), func(w, lo, hi int) {
		fill := wCount[w*nr : (w+1)*nr]
		for i := lo; i < hi; i++ {
			ro := recOff[i]
			rec := recs[ro:recOff[i+1]]
			if ri := rootIdx[rec[1]]; ri >= 0 {
				through[fill[ri]] = ro
				fill[ri]++
			}
			for _, a := range rec[2:] {
				if ri := rootIdx[f.adjNbr[a]]; ri >= 0 {
					through[fill[ri]] = ro
					fill[ri]++
				}
			}
		}
	})
	ParallelFor(workers, nr, func(lo, hi int) {
		var dist []int32
		votes := make([]int32, len(f.adjNbr))
		var nodes []topo.NodeID
		for ri := lo; ri < hi; ri++ {
			root := roots[ri]
			dist = f.BFS(root, dist)
			clear(votes)
			thr := through[off[ri]:off[ri+1]]
			for t, ro := range thr {
				if t+prefetchAhead < len(thr) {
					prefetchAddr(addrOf(recs, thr[t+prefetchAhead]))
				}
				h := recs[ro+2 : ro+2+uint32(recs[ro])]
				nodes = append(nodes[:0], topo.NodeID(recs[ro+1]))
				for _, a := range h {
					nodes = append(nodes, f.adjNbr[a])
				}
				at := 0
				for nodes[at] != root {
					at++
				}
				ok := true
				for k := 0; k < at && ok; k++ {
					ok = dist[nodes[k]] == dist[nodes[k+1]]+1
				}
				for k := at + 1; k < len(nodes) && ok; k++ {
					ok = dist[nodes[k]] == dist[nodes[k-1]]+1
				}
				if !ok {
					continue
				}
				// Before the root a node leaves by its own hop; after it,
				// by the link it was entered by, at its own end.
				for k := range at {
					votes[h[k]]++
				}
				for k := at + 1; k < len(nodes); k++ {
					l := f.adjLink[h[k-1]]
					if f.linkA[l] == nodes[k] {
						votes[f.posA[l]]++
					} else {
						votes[f.posB[l]]++
					}
				}
			}
			row := inTree[ri*lw : (ri+1)*lw]
			for v := range n {
				dv := dist[v]
				if dv <= 0 {
					continue
				}
				best := int32(-1)
				for a := f.adjOff[v]; a < f.adjOff[v+1]; a++ {
					if dist[f.adjNbr[a]] == dv-1 && (best < 0 || votes[a] > votes[best]) {
						best = a
					}
				}
				l := f.adjLink[best] // a node at distance dv > 0 has a closer neighbour
				row[l/64] |= 1 << (l % 64)
			}
		}
	})
	return inTree, lw
}

// majorityRound places loose paths (path indices, in order) as the
// majority round describes and returns those it left for best fit, in
// order, and false when the packing went over limit VLANs. Giant tracking
// must be on.
func majorityRound[R rootIndex](st *packState, ps *PathSet, src []topo.NodeID, loose []uint32, roots []topo.NodeID, rootIdx []int32, workers int, limit func() int64) ([]uint32, bool) {
	f := st.f
	nr := len(roots)
	st.linkStamp = make([]uint32, f.G.NumLinks())
	st.ovParent = make([]int32, f.G.NumNodes())
	st.ovStamp = make([]uint32, f.G.NumNodes())
	inTree, lw := majorityTrees(f, ps, src, loose, roots, rootIdx, workers)
	done := newPathBits(len(loose)) // placed, or held by a subgraph
	pr := pathRoots[R](f, ps, src, loose, inTree, lw, rootIdx, st, done, workers)
	inTree = nil
	off, list := rootLists(pr, nr, len(loose), workers)
	pr = rootsOfPaths[R]{}
	h := &coverHeap{}
	top := int32(0)
	for ri := range nr {
		c := int32(off[ri+1] - off[ri])
		top = max(top, c)
		if c > 0 {
			heap.Push(h, coverItem{c, uint32(ri), int32(ri)})
		}
	}
	// A tree's count is counted afresh when the heap needs it, as in the
	// cover (coverWith).
	current := func(ri int32) int32 { return done.uncoveredIn(list[off[ri]:off[ri+1]]) }
	var links []topo.LinkID
	var ends []topo.NodeID // per link of links, its two ends as the first path with it crosses it
	var members []uint32   // the bundle's paths, which its VLAN will hold
	for {
		it, ok := h.popCurrent(current)
		if !ok {
			break
		}
		ri := int(it.root)
		if 2*int64(it.count) < int64(top) {
			break
		}
		// The tree's paths not placed yet, and their links, each once,
		// in the order committing the paths one by one would add them
		// (and oriented alike): the bundle goes in as those links, so
		// that no path is read twice (a bundle's paths, thousands on
		// BCube(8,4), are out of cache by the time it is placed).
		links, ends, members = links[:0], ends[:0], members[:0]
		st.nextStamp()
		tl := list[off[ri]:off[ri+1]]
		for t, i := range tl {
			if k := t + 2*prefetchAhead; k < len(tl) {
				ps.prefetchOff(loose[tl[k]])
			}
			if k := t + prefetchAhead; k < len(tl) {
				ps.prefetchLinks(loose[tl[k]])
			}
			if done.has(i) {
				continue
			}
			done.set(i)
			j := loose[i]
			p := ps.Path(int(j))
			if vl := st.holder(p); vl >= 0 {
				st.setHint(j, vl)
				continue
			}
			members = append(members, j)
			st.nodes = f.PathNodes(src[j], p, st.nodes[:0])
			for k, l := range p {
				if st.linkStamp[l] != st.stamp {
					st.linkStamp[l] = st.stamp
					links = append(links, l)
					ends = append(ends, st.nodes[k], st.nodes[k+1])
				}
			}
		}
		if len(links) == 0 {
			continue
		}
		vl := st.fitBundle(links)
		if vl < 0 {
			vl = st.newVLAN()
			if int64(len(st.vlinks)) > limit() {
				return nil, false
			}
		}
		for k, l := range links {
			if !st.has(vl, l) {
				st.add(vl, l, ends[2*k], ends[2*k+1])
			}
		}
		for _, j := range members {
			st.setHint(j, vl)
		}
	}
	var rest []uint32
	for i, j := range loose {
		if !done.has(uint32(i)) {
			rest = append(rest, j)
		}
	}
	return rest, true
}

// fitBundle returns the subgraph, not 0, that shares most of links (a
// loop-free set: paths of one tree) and stays loop-free with all of them,
// the lowest-numbered on ties, or -1. Giant tracking must be on: a
// subgraph whose anchor component holds both ends of a link it lacks is
// rejected at once, as is one where such a link is blocked; the others are
// tested with their union-find.
func (st *packState) fitBundle(links []topo.LinkID) int {
	w := st.words
	sl, nb := st.countShared(links)
	rej := st.exclMask()
	rej[0] |= 1 // VLAN 1, the spanning tree, takes nothing
	for _, l := range links {
		i := int(l) * w
		a, b := st.f.Ends(l)
		ga, gb := st.giant[int(a)*w:], st.giant[int(b)*w:]
		for k := range w {
			rej[k] |= (st.blocked[i+k] | ga[k]&gb[k]) &^ st.bits[i+k]
		}
	}
	// Candidates: every subgraph not rejected, most shared links first,
	// then by number.
	st.cands = st.cands[:0]
	if cap(st.count) < len(st.vlinks) {
		st.count = make([]int32, len(st.vlinks)+64)
	}
	cnt := st.count[:len(st.vlinks)]
	for vl := range st.vlinks {
		k, bit := vl/64, uint64(1)<<(vl%64)
		if rej[k]&bit != 0 {
			continue
		}
		c := int32(0)
		for s := range nb {
			if sl[s*w+k]&bit != 0 {
				c |= 1 << s
			}
		}
		cnt[vl] = c
		st.cands = append(st.cands, int32(vl))
	}
	slices.SortStableFunc(st.cands, func(a, b int32) int { return int(cnt[b] - cnt[a]) })
	found := -1
	for _, vl := range st.cands {
		if found < 0 && st.bundleFits(int(vl), links) {
			found = int(vl)
		}
		cnt[vl] = 0 // st.count is zero between calls (place, rehome)
	}
	return found
}

// bundleFits reports whether subgraph vl stays loop-free with every link
// of links added: the union-find of vl, overlaid with the links' unions.
func (st *packState) bundleFits(vl int, links []topo.LinkID) bool {
	uf := st.uf[vl]
	st.nextStamp()
	for _, l := range links {
		if st.has(vl, l) {
			continue
		}
		a, b := st.f.Ends(l)
		ra, rb := st.ovFind(find(uf, int32(a))), st.ovFind(find(uf, int32(b)))
		if ra == rb {
			return false
		}
		st.ovParent[ra], st.ovStamp[ra] = rb, st.stamp
	}
	return true
}

// clone returns an independent copy of the subgraphs (not of the giant
// tracking, which the copy starts again when it needs it).
func (st *packState) clone() *packState {
	c := &packState{f: st.f, words: st.words}
	c.bits = append([]uint64(nil), st.bits...)
	c.blocked = append([]uint64(nil), st.blocked...)
	c.inAny = append([]bool(nil), st.inAny...)
	c.uf = make([][]int32, len(st.uf))
	for i, u := range st.uf {
		c.uf[i] = append([]int32(nil), u...)
	}
	c.vlinks = make([][]topo.LinkID, len(st.vlinks))
	for i, ls := range st.vlinks {
		c.vlinks[i] = append([]topo.LinkID(nil), ls...)
	}
	if st.hint != nil {
		c.hint = append([]uint16(nil), st.hint...)
	}
	return c
}
