package dumbnet

import (
	"math/rand/v2"
	"slices"

	"github.com/edgefabric/edgefabric/wire"
)

// netGraph is the switch graph that both the controller (the whole
// fabric) and a host's TopoCache (the union of its path graphs) keep.
// Switches are indexed densely in the order they were added; ports[i][p]
// is what port p of switch i leads to, so that following a tag is one
// slice index (the path verifier's and the path finder's inner loop).
type netGraph struct {
	ids   []uint64
	idx   map[uint64]int32
	ports [][]peer
	// used lists, per switch, the ports that lead somewhere, so that
	// searches skip the empty ports of a sparse (cached) graph.
	used  [][]uint16
	nlink int
}

// peer is the far end of a switch port.
type peer struct {
	sw    int32 // -1: nothing known on this port
	port  uint16
	up    bool
	flags wire.LinkFlags
}

// hop is one switch of a route and the port it sends the frame out of.
type hop struct {
	sw  int32
	out uint16
}

func newNetGraph() *netGraph { return &netGraph{idx: make(map[uint64]int32)} }

func (g *netGraph) numSwitches() int { return len(g.ids) }

// addSwitch returns the index of switch id, adding it if new.
func (g *netGraph) addSwitch(id uint64) int32 {
	if i, ok := g.idx[id]; ok {
		return i
	}
	i := int32(len(g.ids))
	g.ids = append(g.ids, id)
	g.idx[id] = i
	g.ports = append(g.ports, nil)
	g.used = append(g.used, nil)
	return i
}

func (g *netGraph) grow(i int32, p uint16) {
	for len(g.ports[i]) <= int(p) {
		g.ports[i] = append(g.ports[i], peer{sw: -1})
	}
}

// peerOf returns what port p of switch i leads to.
func (g *netGraph) peerOf(i int32, p uint16) peer {
	if int(p) >= len(g.ports[i]) {
		return peer{sw: -1}
	}
	return g.ports[i][p]
}

// addLink records a link between port ap of a and port bp of b, replacing
// whatever either port was known to lead to: a link that either port held
// to another port (its cable moved) is forgotten at both ends, so that the
// port it led to leads nowhere now.
func (g *netGraph) addLink(a int32, ap uint16, b int32, bp uint16, up bool, flags wire.LinkFlags) {
	g.grow(a, ap)
	g.grow(b, bp)
	g.unlinkOther(a, ap, b, bp)
	g.unlinkOther(b, bp, a, ap)
	if g.ports[a][ap].sw < 0 {
		g.nlink++
		g.used[a] = append(g.used[a], ap)
	}
	if g.ports[b][bp].sw < 0 && (a != b || ap != bp) {
		g.used[b] = append(g.used[b], bp)
	}
	g.ports[a][ap] = peer{sw: b, port: bp, up: up, flags: flags}
	g.ports[b][bp] = peer{sw: a, port: ap, up: up, flags: flags}
}

// unlinkOther forgets the link on port p of switch i if it leads anywhere
// but port q of switch j.
func (g *netGraph) unlinkOther(i int32, p uint16, j int32, q uint16) {
	if pe := g.ports[i][p]; pe.sw >= 0 && (pe.sw != j || pe.port != q) {
		g.removeLink(i, p)
	}
}

// removeLink forgets the link on port p of switch i, at both ends.
func (g *netGraph) removeLink(i int32, p uint16) {
	pe := g.peerOf(i, p)
	if pe.sw < 0 {
		return
	}
	g.unuse(i, p)
	if pe.sw != i || pe.port != p {
		g.unuse(pe.sw, pe.port)
	}
	g.nlink--
}

// unuse marks port p of switch i as leading nowhere.
func (g *netGraph) unuse(i int32, p uint16) {
	g.ports[i][p] = peer{sw: -1}
	if k := slices.Index(g.used[i], p); k >= 0 {
		g.used[i] = slices.Delete(g.used[i], k, k+1)
	}
}

// setUp changes the state of the link on port p of switch i (both ends)
// and reports whether it knew that link and its state changed.
func (g *netGraph) setUp(i int32, p uint16, up bool) bool {
	pe := g.peerOf(i, p)
	if pe.sw < 0 || pe.up == up {
		return false
	}
	g.ports[i][p].up = up
	g.ports[pe.sw][pe.port].up = up
	return true
}

// scratch holds the buffers of the graph searches so that a search does
// not allocate once they have grown to the graph's size.
type scratch struct {
	dist  []int32
	prev  []hop
	queue []int32
}

func (sc *scratch) size(n int) {
	if len(sc.dist) < n {
		sc.dist = make([]int32, n)
		sc.prev = make([]hop, n)
		sc.queue = make([]int32, 0, n)
	}
}

// bfs fills sc.dist with hop counts from src over up links (-1:
// unreachable). banned, when set, excludes switches and edges.
func (g *netGraph) bfs(sc *scratch, src int32, ban *bans) {
	n := len(g.ids)
	sc.size(n)
	dist := sc.dist[:n]
	for i := range dist {
		dist[i] = -1
	}
	dist[src] = 0
	q := append(sc.queue[:0], src)
	for h := 0; h < len(q); h++ {
		u := q[h]
		ports := g.ports[u]
		for _, p := range g.used[u] {
			pe := ports[p]
			if !pe.up || dist[pe.sw] >= 0 {
				continue
			}
			if ban != nil && ban.blocked(u, p, pe.sw) {
				continue
			}
			dist[pe.sw] = dist[u] + 1
			sc.prev[pe.sw] = hop{sw: u, out: p}
			q = append(q, pe.sw)
		}
	}
	sc.queue = q
}

// bfsTo is bfs over up links that stops once dst is reached; it returns
// dst's distance (-1: unreachable) with sc.prev filled along the way.
func (g *netGraph) bfsTo(sc *scratch, src, dst int32) int32 {
	n := len(g.ids)
	sc.size(n)
	dist := sc.dist[:n]
	for i := range dist {
		dist[i] = -1
	}
	dist[src] = 0
	q := append(sc.queue[:0], src)
	for h := 0; h < len(q) && dist[dst] < 0; h++ {
		u := q[h]
		ports := g.ports[u]
		for _, p := range g.used[u] {
			pe := ports[p]
			if !pe.up || dist[pe.sw] >= 0 {
				continue
			}
			dist[pe.sw] = dist[u] + 1
			sc.prev[pe.sw] = hop{sw: u, out: p}
			q = append(q, pe.sw)
		}
	}
	sc.queue = q
	return dist[dst]
}

// shortest returns a shortest route of switches from src to dst (the last
// hop's out port left 0 for the caller to fill), or nil. With rng set it
// picks uniformly among equal-cost choices (DumbNet §4.3: the primary path
// "randomizes the choice for equal cost links").
func (g *netGraph) shortest(sc *scratch, src, dst int32, rng *rand.Rand, ban *bans) []hop {
	if rng == nil {
		g.bfs(sc, src, ban)
		if sc.dist[dst] < 0 {
			return nil
		}
		r := make([]hop, sc.dist[dst]+1)
		r[len(r)-1] = hop{sw: dst}
		for i, v := len(r)-2, dst; i >= 0; i-- {
			r[i] = sc.prev[v]
			v = sc.prev[v].sw
		}
		return r
	}
	// Distances to dst, then a random descent from src.
	g.bfs(sc, dst, ban)
	if sc.dist[src] < 0 {
		return nil
	}
	r := make([]hop, 0, sc.dist[src]+1)
	u := src
	for u != dst {
		var pick uint16
		seen := 0
		for _, p := range g.used[u] {
			pe := g.ports[u][p]
			if !pe.up || sc.dist[pe.sw] != sc.dist[u]-1 {
				continue
			}
			if ban != nil && ban.blocked(u, p, pe.sw) {
				continue
			}
			seen++
			if rng.IntN(seen) == 0 {
				pick = p
			}
		}
		r = append(r, hop{sw: u, out: pick})
		u = g.ports[u][pick].sw
	}
	return append(r, hop{sw: dst})
}

// weighted is Dijkstra with a cost per link: 1, plus penalty for the links
// in heavy and penalty for entering a switch in heavySw. The backup path
// is computed this way (DumbNet §4.3: "increase the cost for all links on
// the primary path and run the shortest path algorithm again. The
// increased cost makes it unlikely to reuse links and switches in the
// primary path").
func (g *netGraph) weighted(src, dst int32, heavy map[linkKey]bool, heavySw map[int32]bool, penalty int64) []hop {
	n := len(g.ids)
	// 64-bit costs: a hop may cost 2·|V|+1, and a route many hops, which
	// overflowed 32 bits past about 32,000 switches.
	dist := make([]int64, n)
	prev := make([]hop, n)
	done := make([]bool, n)
	for i := range dist {
		dist[i] = -1
	}
	dist[src] = 0
	h := &minHeap{}
	h.push(src, 0)
	for h.len() > 0 {
		u, d := h.pop()
		if done[u] || d != dist[u] {
			continue
		}
		done[u] = true
		if u == dst {
			break
		}
		for _, p := range g.used[u] {
			pe := g.ports[u][p]
			if !pe.up {
				continue
			}
			w := int64(1)
			if heavy[keyOf(u, p, pe.sw, pe.port)] {
				w += penalty
			}
			if heavySw[pe.sw] {
				w += penalty
			}
			if nd := d + w; dist[pe.sw] < 0 || nd < dist[pe.sw] {
				dist[pe.sw] = nd
				prev[pe.sw] = hop{sw: u, out: p}
				h.push(pe.sw, nd)
			}
		}
	}
	if dist[dst] < 0 {
		return nil
	}
	var r []hop
	for v := dst; v != src; v = prev[v].sw {
		r = append(r, prev[v])
	}
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return append(r, hop{sw: dst})
}

// linkKey names a link by its two ends, the lower (switch, port) first.
type linkKey struct {
	a, b   int32
	ap, bp uint16
}

func keyOf(a int32, ap uint16, b int32, bp uint16) linkKey {
	if b < a || (a == b && bp < ap) {
		a, ap, b, bp = b, bp, a, ap
	}
	return linkKey{a: a, ap: ap, b: b, bp: bp}
}

// routeLinks lists the links a route crosses.
func (g *netGraph) routeLinks(r []hop) []linkKey {
	ks := make([]linkKey, 0, len(r))
	for _, h := range r[:len(r)-1] {
		pe := g.ports[h.sw][h.out]
		ks = append(ks, keyOf(h.sw, h.out, pe.sw, pe.port))
	}
	return ks
}

// bans excludes switches and switch ports from a search (Yen's algorithm).
type bans struct {
	sw    map[int32]bool
	ports map[uint32]bool
}

func portKey(sw int32, p uint16) uint32 { return uint32(sw)<<16 | uint32(p) }

func (b *bans) blocked(u int32, p uint16, v int32) bool {
	return b.sw[v] || b.ports[portKey(u, p)]
}

// kShortest returns up to k loop-free routes from src to dst in order of
// length (Yen's algorithm over hop counts; parallel links count as
// distinct routes).
func (g *netGraph) kShortest(sc *scratch, src, dst int32, k int) [][]hop {
	first := g.shortest(sc, src, dst, nil, nil)
	if first == nil || k <= 0 {
		return nil
	}
	A := [][]hop{first}
	var B [][]hop
	for len(A) < k {
		last := A[len(A)-1]
		for i := 0; i < len(last)-1; i++ {
			spur := last[i].sw
			root := last[:i]
			b := &bans{sw: map[int32]bool{}, ports: map[uint32]bool{}}
			for _, a := range A {
				if len(a) > i && sameRoot(a[:i], root) && a[i].sw == spur {
					b.ports[portKey(spur, a[i].out)] = true
				}
			}
			for _, h := range root {
				b.sw[h.sw] = true
			}
			tail := g.shortest(sc, spur, dst, nil, b)
			if tail == nil {
				continue
			}
			cand := make([]hop, 0, len(root)+len(tail))
			cand = append(append(cand, root...), tail...)
			if !containsRoute(A, cand) && !containsRoute(B, cand) {
				B = append(B, cand)
			}
		}
		if len(B) == 0 {
			break
		}
		best := 0
		for i := range B {
			if len(B[i]) < len(B[best]) {
				best = i
			}
		}
		A = append(A, B[best])
		B = append(B[:best], B[best+1:]...)
	}
	return A
}

func sameRoot(a, b []hop) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func containsRoute(set [][]hop, r []hop) bool {
	for _, s := range set {
		if sameRoot(s, r) {
			return true
		}
	}
	return false
}

// minHeap is a binary heap of (switch, distance) for Dijkstra.
type minHeap struct {
	n []int32
	d []int64
}

func (h *minHeap) len() int { return len(h.n) }

func (h *minHeap) push(n int32, d int64) {
	h.n = append(h.n, n)
	h.d = append(h.d, d)
	for i := len(h.n) - 1; i > 0; {
		p := (i - 1) / 2
		if h.d[p] <= h.d[i] {
			break
		}
		h.n[p], h.n[i] = h.n[i], h.n[p]
		h.d[p], h.d[i] = h.d[i], h.d[p]
		i = p
	}
}

func (h *minHeap) pop() (int32, int64) {
	n, d := h.n[0], h.d[0]
	last := len(h.n) - 1
	h.n[0], h.d[0] = h.n[last], h.d[last]
	h.n, h.d = h.n[:last], h.d[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h.n) && h.d[l] < h.d[m] {
			m = l
		}
		if r < len(h.n) && h.d[r] < h.d[m] {
			m = r
		}
		if m == i {
			break
		}
		h.n[m], h.n[i] = h.n[i], h.n[m]
		h.d[m], h.d[i] = h.d[i], h.d[m]
		i = m
	}
	return n, d
}
