package paths

import (
	"math/bits"
	"slices"

	"github.com/edgefabric/edgefabric/topo"
)

// Prune deletes whole VLANs of a packing of ps (pk.VLANs[0] being VLAN 1,
// the spanning tree) whose paths all fit into the other VLANs, as prune
// describes, and updates pk: its VLANs (each sorted) and Pruned. It
// returns the number deleted.
func Prune(f *Fabric, ps *PathSet, pk *Packing) int {
	if len(pk.VLANs) == 0 {
		return 0
	}
	st := newPackState(f, pk.VLANs[0])
	for _, ls := range pk.VLANs[1:] {
		vl := st.newVLAN()
		for _, l := range ls {
			a, b := f.Ends(l)
			st.add(vl, l, a, b)
		}
	}
	n := st.prune(ps)
	pk.VLANs = pk.VLANs[:0]
	for _, ls := range st.vlinks {
		ls = slices.Clone(ls)
		slices.Sort(ls)
		pk.VLANs = append(pk.VLANs, ls)
	}
	pk.Pruned += n
	if n > 0 {
		pk.PathVLAN = nil // VLANs deleted and renumbered, paths moved
	}
	return n
}

// prune tries to delete whole subgraphs of a finished packing. Newest
// first (the last subgraphs were opened for paths nothing else would
// take), it moves every path that only subgraph vl
// holds into another subgraph: the one holding most of the path's links
// that it still fits in loop-free, lowest index on ties (the same fits
// test as placement). When all of them move, vl is deleted; otherwise the
// attempt is undone. Every path therefore stays inside a loop-free
// subgraph, and the count can only fall. One pass: a second deleted
// nothing more on any fabric we tried. Subgraph 0 (VLAN 1, the
// spanning tree, where any link it lacks closes a loop) is never deleted
// nor tried as a new home. prune returns the number deleted; the survivors
// keep their order. It is deterministic and serial.
//
// Afterwards the state holds the subgraphs only: the anchor components
// are dropped and the blocked sets cleared (an undone attempt may have
// recorded blocks that no longer hold), so no path may be placed after
// it.
func (st *packState) prune(ps *PathSet) int {
	f := st.f
	np := ps.NumPaths()
	m := len(st.vlinks)
	st.tracking = false
	st.giant, st.anchor, st.members = nil, nil, nil
	defer func() { clear(st.blocked) }()
	if m <= 2 {
		return 0
	}
	src := ps.Sources()
	// Every path is listed under one live subgraph that holds it, so the
	// paths only vl holds are among listed[vl].
	listed := make([][]uint32, m)
	for j := range np {
		if u := st.holderExcept(ps.Path(j), -1); u >= 0 {
			listed[u] = append(listed[u], uint32(j))
		}
	}
	removed := make([]bool, m)
	var j journal
	type move struct {
		path uint32
		to   int32
	}
	var moves []move
	deleted := 0
	for vl := m - 1; vl >= 1; vl-- {
		j.reset()
		moves = moves[:0]
		ok := true
		for _, pj := range listed[vl] {
			p := ps.Path(int(pj))
			u := st.holderExcept(p, vl)
			if u < 0 {
				st.nodes = f.PathNodes(src[pj], p, st.nodes[:0])
				if u = st.rehome(p, vl, removed, &j); u < 0 {
					ok = false
					break
				}
			}
			moves = append(moves, move{pj, int32(u)})
		}
		if !ok {
			st.undo(&j)
			continue
		}
		for _, mv := range moves {
			listed[mv.to] = append(listed[mv.to], mv.path)
		}
		listed[vl] = nil
		w := st.words
		for _, l := range st.vlinks[vl] {
			st.bits[int(l)*w+vl/64] &^= 1 << (vl % 64)
		}
		st.vlinks[vl] = nil
		removed[vl] = true
		deleted++
	}
	if deleted == 0 {
		return 0
	}
	// Compact: rebuild the bitsets over the surviving subgraphs.
	var vlinks [][]topo.LinkID
	var uf [][]int32
	for vl := range m {
		if !removed[vl] {
			vlinks = append(vlinks, st.vlinks[vl])
			uf = append(uf, st.uf[vl])
		}
	}
	nw := (len(vlinks) + 63) / 64
	st.words = nw
	st.bits = make([]uint64, f.G.NumLinks()*nw)
	st.blocked = make([]uint64, f.G.NumLinks()*nw)
	for vl, ls := range vlinks {
		for _, l := range ls {
			st.bits[int(l)*nw+vl/64] |= 1 << (vl % 64)
		}
	}
	st.vlinks, st.uf = vlinks, uf
	return deleted
}

// holderExcept returns the lowest-indexed subgraph other than skip that
// holds every link of p, or -1.
func (st *packState) holderExcept(p []topo.LinkID, skip int) int {
	w := st.words
	for k := range w {
		acc := ^uint64(0)
		if skip >= 0 && skip/64 == k {
			acc &^= 1 << (skip % 64)
		}
		for _, l := range p {
			acc &= st.bits[int(l)*w+k]
			if acc == 0 {
				break
			}
		}
		if acc != 0 {
			return k*64 + bits.TrailingZeros64(acc)
		}
	}
	return -1
}

// rehome adds p (nodes st.nodes) to the live subgraph other than skip
// and 0 that holds most of its links and stays loop-free with it (lowest
// index on ties), recording the change in j; it returns that subgraph or
// -1.
func (st *packState) rehome(p []topo.LinkID, skip int, removed []bool, j *journal) int {
	m := len(st.vlinks)
	if len(st.count) < m {
		st.count = make([]int32, m+64) // zero between calls
	}
	cnt := st.count
	// The subgraphs sharing a link, by index, then most shared first
	// (stable): only those are sorted; the rest follow by index.
	st.cands = st.cands[:0]
	w := st.words
	for _, l := range p {
		for k, x := range st.bits[int(l)*w : (int(l)+1)*w] {
			for ; x != 0; x &= x - 1 {
				vl := k*64 + bits.TrailingZeros64(x)
				if cnt[vl] == 0 {
					st.cands = append(st.cands, int32(vl))
				}
				cnt[vl]++
			}
		}
	}
	slices.Sort(st.cands)
	st.sortByCount(cnt, len(p))
	placed := -1
	for _, vl := range st.cands {
		if vl != 0 && int(vl) != skip && st.fits(int(vl), p) {
			placed = int(vl)
			break
		}
	}
	for vl := 1; placed < 0 && vl < m; vl++ {
		if cnt[vl] == 0 && vl != skip && !removed[vl] && st.fits(vl, p) {
			placed = vl
		}
	}
	for _, vl := range st.cands {
		cnt[vl] = 0
	}
	if placed >= 0 {
		j.save(st, placed)
		st.commit(placed, p)
	}
	return placed
}

// journal records what an attempt of prune changed, to undo it.
type journal struct {
	uf    map[int][]int32 // subgraph → its union-find before the attempt
	links map[int]int     // subgraph → its link count before the attempt
}

func (j *journal) reset() {
	if j.uf == nil {
		j.uf, j.links = map[int][]int32{}, map[int]int{}
	}
	clear(j.uf)
	clear(j.links)
}

func (j *journal) save(st *packState, vl int) {
	if _, ok := j.uf[vl]; !ok {
		j.uf[vl] = slices.Clone(st.uf[vl])
		j.links[vl] = len(st.vlinks[vl])
	}
}

func (st *packState) undo(j *journal) {
	w := st.words
	for vl, n := range j.links {
		for _, l := range st.vlinks[vl][n:] {
			st.bits[int(l)*w+vl/64] &^= 1 << (vl % 64)
		}
		st.vlinks[vl] = st.vlinks[vl][:n]
		st.uf[vl] = j.uf[vl]
	}
}
