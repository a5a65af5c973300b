package topo

import (
	"cmp"
	"container/heap"
	"maps"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/edgefabric/edgefabric/element"
)

// Summary is what `edgefabric topo show` reports. The JSON keys are part of
// the CLI's contract.
type Summary struct {
	Name        string `json:"name"`
	Switches    int    `json:"switches"`
	Hosts       int    `json:"hosts"`
	RelayHosts  int    `json:"relay_hosts"`
	FabricLinks int    `json:"fabric_links"`
	HostLinks   int    `json:"host_links"`
	// Diameter is the longest shortest path, in links, between two
	// forwarding nodes over fabric links: switch hops (a relaying host
	// counts as a hop, so BCube(p,l) has 2l). -1 when the forwarding nodes
	// are not all connected.
	Diameter int `json:"diameter"`
	// DiameterExact is false when the graph was too large for the exact
	// computation within the budget: Diameter is then a lower bound and
	// DiameterUpper an upper bound.
	DiameterExact bool `json:"diameter_exact"`
	DiameterUpper int  `json:"diameter_upper"`
	// MaxDegree is the largest number of connected ports of any node.
	MaxDegree int  `json:"max_degree"`
	Connected bool `json:"connected"`
	// BisectionBps estimates the bisection bandwidth in bits per second,
	// one direction: the capacity of the links cut by the best balanced
	// split of the hosts a greedy graph-growing partitioner finds. Any
	// balanced split bounds the true minimum from above, so this is an
	// upper bound, exact on the regular topologies the tests check.
	// Beyond what an int64 holds it is math.MaxInt64.
	BisectionBps int64 `json:"bisection_bps"`
	// Rates counts the links of each rate, fastest first (a file that
	// gives no rate leaves its links at the default: this shows it).
	Rates []RateCount `json:"rates"`
	// DelayMin and DelayMax are the shortest and longest link delays, ns
	// (0 and 0 without links).
	DelayMinNs int64 `json:"delay_min_ns"`
	DelayMaxNs int64 `json:"delay_max_ns"`
}

// RateCount is how many links have one rate.
type RateCount struct {
	Bps   int64 `json:"bps"`
	Links int   `json:"links"`
}

// StatsOptions tune Stats.
type StatsOptions struct {
	// DiameterBudget bounds the exact diameter computation, in node and
	// adjacency visits of the bit-parallel all-sources BFS (64 sources per
	// pass). Beyond it Stats reports bounds. 0 means DefaultDiameterBudget;
	// negative means unlimited.
	DiameterBudget int64
	// Workers is the number of goroutines for the diameter; 0 means
	// GOMAXPROCS.
	Workers int
}

// DefaultDiameterBudget keeps `topo show` to a few seconds: fattree:48
// needs about 3×10⁷ visits, a 100,000-switch jellyfish about 10¹⁰.
const DefaultDiameterBudget int64 = 4_000_000_000

// boundsPassBudget bounds, in the same units, the one bit-parallel pass
// that sharpens the diameter's lower bound when the exact computation is
// over its budget (about half a second).
var boundsPassBudget int64 = 500_000_000 // a var for tests

// onBoundsPass, when set (by tests), is called when that pass runs.
var onBoundsPass func()

// Stats summarizes g with default options.
func Stats(g *Graph) Summary { return StatsWith(g, StatsOptions{}) }

// StatsWith summarizes g.
func StatsWith(g *Graph, o StatsOptions) Summary {
	s := Summary{Name: g.Name}
	for i := range g.nodes {
		n := &g.nodes[i]
		if n.Kind == Switch {
			s.Switches++
		} else {
			s.Hosts++
			if n.Relay {
				s.RelayHosts++
			}
		}
		s.MaxDegree = max(s.MaxDegree, g.Degree(NodeID(i)))
	}
	rates := map[int64]int{}
	for l := range g.links {
		if g.IsFabricLink(LinkID(l)) {
			s.FabricLinks++
		} else {
			s.HostLinks++
		}
		lk := &g.links[l]
		rates[lk.Rate]++
		d := int64(lk.Delay / element.Nanosecond)
		if l == 0 || d < s.DelayMinNs {
			s.DelayMinNs = d
		}
		s.DelayMaxNs = max(s.DelayMaxNs, d)
	}
	s.Rates = []RateCount{}
	for _, r := range slices.Sorted(maps.Keys(rates)) {
		s.Rates = append([]RateCount{{r, rates[r]}}, s.Rates...)
	}
	s.Connected = g.Connected()
	s.Diameter, s.DiameterUpper, s.DiameterExact = g.diameter(o)
	s.BisectionBps = g.Bisection()
	return s
}

// csr is a compact adjacency over a subset of nodes, renumbered densely.
type csr struct {
	off  []int32
	adj  []int32
	node []NodeID // dense index -> NodeID
}

// fabric builds the adjacency of the forwarding nodes over fabric links.
func (g *Graph) fabric() *csr {
	idx := make([]int32, len(g.nodes))
	c := &csr{}
	for i := range g.nodes {
		idx[i] = -1
		if g.nodes[i].Forwards() {
			idx[i] = int32(len(c.node))
			c.node = append(c.node, NodeID(i))
		}
	}
	c.off = make([]int32, len(c.node)+1)
	for _, n := range c.node {
		d := 0
		for _, l := range g.Ports(n) {
			if l != NoLink && g.IsFabricLink(l) {
				d++
			}
		}
		c.off[idx[n]+1] = int32(d)
	}
	for i := 1; i < len(c.off); i++ {
		c.off[i] += c.off[i-1]
	}
	c.adj = make([]int32, c.off[len(c.node)])
	fill := make([]int32, len(c.node))
	copy(fill, c.off)
	for _, n := range c.node {
		for _, l := range g.Ports(n) {
			if l != NoLink && g.IsFabricLink(l) {
				o := g.links[l].Other(n).Node
				if g.links[l].A.Node == g.links[l].B.Node { // cannot happen: Builder rejects
					continue
				}
				c.adj[fill[idx[n]]] = idx[o]
				fill[idx[n]]++
			}
		}
	}
	return c
}

// Connected reports whether every node can reach every other.
func (g *Graph) Connected() bool {
	if len(g.nodes) == 0 {
		return true
	}
	seen := make([]bool, len(g.nodes))
	queue := []NodeID{0}
	seen[0] = true
	count := 1
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, l := range g.Ports(n) {
			if l == NoLink {
				continue
			}
			o := g.links[l].Other(n).Node
			if !seen[o] {
				seen[o] = true
				count++
				queue = append(queue, o)
			}
		}
	}
	return count == len(g.nodes)
}

// bfs returns the distances from src (-1 unreachable), the eccentricity
// and a farthest node.
func (c *csr) bfs(src int32, dist []int32) (ecc int, far int32) {
	for i := range dist {
		dist[i] = -1
	}
	queue := make([]int32, 0, len(dist))
	queue = append(queue, src)
	dist[src] = 0
	far = src
	for h := 0; h < len(queue); h++ {
		u := queue[h]
		for _, v := range c.adj[c.off[u]:c.off[u+1]] {
			if dist[v] < 0 {
				dist[v] = dist[u] + 1
				queue = append(queue, v)
				if int(dist[v]) > ecc {
					ecc, far = int(dist[v]), v
				}
			}
		}
	}
	return ecc, far
}

// multiBFS runs BFS from up to 64 sources at once, one bit each (a
// bit-parallel BFS), and returns the largest eccentricity among them, or
// -1 when some node is unreachable from them. Work is O(levels·(n+adj)).
func (c *csr) multiBFS(src []int32, seen, front, next []uint64) int {
	for i := range seen {
		seen[i], front[i] = 0, 0
	}
	for i, s := range src {
		seen[s] |= 1 << i
		front[s] |= 1 << i
	}
	all := uint64(1)<<len(src) - 1
	if len(src) == 64 {
		all = ^uint64(0)
	}
	ecc := 0
	for {
		var any uint64
		for v := range seen {
			var nv uint64
			for _, u := range c.adj[c.off[v]:c.off[v+1]] {
				nv |= front[u]
			}
			nv &^= seen[v]
			next[v] = nv
			any |= nv
		}
		if any == 0 {
			break
		}
		ecc++
		for v := range seen {
			seen[v] |= next[v]
		}
		front, next = next, front
	}
	for _, m := range seen {
		if m != all {
			return -1
		}
	}
	return ecc
}

// diameter computes the diameter of the forwarding graph: exactly, by
// bit-parallel BFS from every node, when that fits the budget; otherwise
// bounds from a few sweeps (lower: the largest eccentricity seen, which a
// double sweep makes tight on trees and near-tight in practice; upper:
// twice the smallest eccentricity seen).
func (g *Graph) diameter(o StatsOptions) (d, upper int, exact bool) {
	c := g.fabric()
	n := len(c.node)
	if n <= 1 {
		return 0, 0, true
	}
	dist := make([]int32, n)
	ecc0, far := c.bfs(0, dist)
	for _, x := range dist {
		if x < 0 {
			return -1, -1, true
		}
	}
	eccA, _ := c.bfs(far, dist)
	budget := o.DiameterBudget
	if budget == 0 {
		budget = DefaultDiameterBudget
	}
	batches := int64((n + 63) / 64)
	work := batches * int64(n+len(c.adj)) * int64(eccA+2)
	if budget > 0 && work > budget {
		// Bounds: 64 sources at the periphery seen from far, plus the
		// sweeps so far.
		lo, hi := max(ecc0, eccA), 2*min(ecc0, eccA)
		var src []int32
		maxd := int32(0)
		for _, x := range dist {
			maxd = max(maxd, x)
		}
		for v := int32(0); int(v) < n && len(src) < 64; v++ {
			if dist[v] == maxd || dist[v] == maxd-1 {
				src = append(src, v)
			}
		}
		// One more bit-parallel pass costs a sweep per level, like a
		// batch of the exact computation: on a long ring or line
		// (ring:100000: 50,000 levels of 300,000 nodes and links, 23 s)
		// that alone is too much, and the sweeps' bounds must do.
		if one := int64(n+len(c.adj)) * int64(eccA+2); one <= boundsPassBudget {
			if onBoundsPass != nil {
				onBoundsPass()
			}
			seen, front, next := make([]uint64, n), make([]uint64, n), make([]uint64, n)
			lo = max(lo, c.multiBFS(src, seen, front, next))
		}
		return lo, max(hi, lo), false
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, int(batches))
	results := make([]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seen, front, next := make([]uint64, n), make([]uint64, n), make([]uint64, n)
			src := make([]int32, 0, 64)
			for b := w; b < int(batches); b += workers {
				src = src[:0]
				for v := b * 64; v < n && v < b*64+64; v++ {
					src = append(src, int32(v))
				}
				results[w] = max(results[w], c.multiBFS(src, seen, front, next))
			}
		}()
	}
	wg.Wait()
	for _, r := range results {
		d = max(d, r)
	}
	return d, d, true
}

// Bisection estimates the bisection bandwidth: the smallest capacity, in
// b/s one way, of the links cut by a split of the hosts into two halves
// (⌊H/2⌋ and ⌈H/2⌉), as found by greedy graph growing (the initial
// partitioner of METIS) from several seeds: start from a seed node, keep
// adding the frontier node whose move cuts the least capacity until side A
// holds half the hosts, then add any further switch whose move still
// lowers the cut; then a local refinement (see refine). Seeds: the first
// host, the two ends of a double sweep from it and, on graphs of up to a
// million nodes and links, five hosts spread over the host list. One more
// start is the split that cuts nothing but the cheapest half of the hosts'
// own links (see hostsOnly). 0 when there are fewer than 2 hosts.
func (g *Graph) Bisection() int64 {
	hosts := g.Nodes(Host)
	if len(hosts) < 2 {
		return 0
	}
	seeds := []NodeID{hosts[0]}
	// a double sweep over the whole graph gives two peripheral nodes
	if far := g.farthest(hosts[0]); far >= 0 {
		seeds = append(seeds, far)
		if far2 := g.farthest(far); far2 >= 0 {
			seeds = append(seeds, far2)
		}
	}
	// Spread seeds cost a growth each; graphs of over a million nodes and
	// links keep to the sweep ends.
	if len(g.nodes)+len(g.links) <= 1_000_000 {
		for i := 1; i <= 5; i++ {
			seeds = append(seeds, hosts[i*(len(hosts)-1)/5])
		}
	}
	best := int64(-1)
	gr := newGrower(g)
	seen := map[NodeID]bool{}
	for _, s := range seeds {
		if seen[s] {
			continue
		}
		seen[s] = true
		// For an odd host count, growing either half gives different
		// partitions: try both.
		for _, target := range []int{len(hosts) / 2, (len(hosts) + 1) / 2} {
			if c := gr.grow(s, target); best < 0 || c < best {
				best = c
			}
			if len(hosts)%2 == 0 {
				break
			}
		}
	}
	for _, target := range []int{len(hosts) / 2, (len(hosts) + 1) / 2} {
		if c := gr.hostsOnly(hosts, target); c < best {
			best = c
		}
		if len(hosts)%2 == 0 {
			break
		}
	}
	// best is in units of gr.unit b/s; above what an int64 holds (9.2
	// Eb/s), the most it holds
	if best > math.MaxInt64/gr.unit {
		return math.MaxInt64
	}
	return best * gr.unit
}

func (g *Graph) farthest(src NodeID) NodeID {
	dist := make([]int32, len(g.nodes))
	for i := range dist {
		dist[i] = -1
	}
	dist[src] = 0
	queue := []NodeID{src}
	far := src
	for h := 0; h < len(queue); h++ {
		n := queue[h]
		for _, l := range g.Ports(n) {
			if l == NoLink {
				continue
			}
			o := g.links[l].Other(n).Node
			if dist[o] < 0 {
				dist[o] = dist[n] + 1
				queue = append(queue, o)
				far = o
			}
		}
	}
	return far
}

// grower is the greedy graph-growing partitioner's reusable state.
type grower struct {
	g    *Graph
	inA  []bool
	gain []int64 // capacity to A minus capacity to B
	seq  []int32 // order of first discovery, for stable ties
	pq   gainHeap
	// capa is each link's capacity in units of unit b/s (linkCapacities):
	// every cut, gain and sum of them the grower computes is in units.
	capa []int64
	unit int64
}

func newGrower(g *Graph) *grower {
	n := len(g.nodes)
	gr := &grower{g: g, inA: make([]bool, n), gain: make([]int64, n), seq: make([]int32, n)}
	gr.capa, gr.unit = linkCapacities(g)
	return gr
}

// maxCapUnits bounds the sum of all link capacities in units: a cut or a
// node's gain is at most that, and the sums the partitioner forms of a
// few of them (a swap's gain) stay far below 2⁶³.
const maxCapUnits = 1 << 60

// linkCapacities gives every link's capacity in units of unit b/s: the
// greatest common divisor of the rates (1 Gb/s for most graphs), so that
// the capacities are exact and small. In b/s, 9,224 links of 1 Pb/s (a
// fattree:48 cut at 1000T) overflowed an int64 and the bisection came
// out negative. Should the rates have no large common divisor and sum to
// more than maxCapUnits units all the same, the unit grows to bring them
// under it and each capacity is rounded up, so that a cut stays an upper
// bound.
func linkCapacities(g *Graph) (capa []int64, unit int64) {
	for i := range g.links {
		unit = gcd(unit, g.links[i].Rate)
	}
	if unit <= 0 {
		return make([]int64, len(g.links)), 1
	}
	total := 0.0
	for i := range g.links {
		total += float64(g.links[i].Rate / unit)
	}
	if total > maxCapUnits {
		unit *= int64(math.Ceil(total / maxCapUnits))
	}
	capa = make([]int64, len(g.links))
	for i := range g.links {
		// rounded up without adding unit-1 first, which overflows for
		// a rate within unit of math.MaxInt64 (the Builder takes any)
		r := g.links[i].Rate
		capa[i] = r / unit
		if r%unit != 0 {
			capa[i]++
		}
	}
	return capa, unit
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

type gainItem struct {
	gain int64
	seq  int32
	node NodeID
}

type gainHeap []gainItem

func (h gainHeap) Len() int { return len(h) }
func (h gainHeap) Less(i, j int) bool {
	if h[i].gain != h[j].gain {
		return h[i].gain > h[j].gain
	}
	return h[i].seq < h[j].seq
}
func (h gainHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *gainHeap) Push(x any)   { *h = append(*h, x.(gainItem)) }
func (h *gainHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// grow grows side A from seed until it holds target hosts and returns the
// cut capacity.
func (gr *grower) grow(seed NodeID, target int) int64 {
	g := gr.g
	for i := range g.nodes {
		gr.inA[i] = false
		gr.seq[i] = -1
		var c int64
		for _, l := range g.Ports(NodeID(i)) {
			if l != NoLink {
				c += gr.capa[l]
			}
		}
		gr.gain[i] = -c
	}
	gr.pq = gr.pq[:0]
	var cut int64
	hostsA := 0
	next := int32(0)
	add := func(v NodeID) {
		gr.inA[v] = true
		cut -= gr.gain[v]
		if g.nodes[v].Kind == Host {
			hostsA++
		}
		for _, l := range g.Ports(v) {
			if l == NoLink {
				continue
			}
			u := g.links[l].Other(v).Node
			if gr.inA[u] {
				continue
			}
			gr.gain[u] += 2 * gr.capa[l]
			if gr.seq[u] < 0 {
				gr.seq[u] = next
				next++
			}
			heap.Push(&gr.pq, gainItem{gr.gain[u], gr.seq[u], u})
		}
	}
	add(seed)
	cursor := 0 // next node to restart from in a disconnected graph
	for hostsA < target {
		if gr.pq.Len() == 0 {
			for cursor < len(g.nodes) && gr.inA[cursor] {
				cursor++
			}
			if cursor == len(g.nodes) {
				break
			}
			add(NodeID(cursor))
			continue
		}
		it := heap.Pop(&gr.pq).(gainItem)
		if gr.inA[it.node] || it.gain != gr.gain[it.node] {
			continue // stale entry
		}
		add(it.node)
	}
	// Phase 2: switches whose move still lowers the cut.
	for gr.pq.Len() > 0 {
		it := heap.Pop(&gr.pq).(gainItem)
		if gr.inA[it.node] || it.gain != gr.gain[it.node] {
			continue
		}
		if it.gain <= 0 {
			break
		}
		if g.nodes[it.node].Kind == Host {
			continue // moving a host would unbalance the halves
		}
		add(it.node)
	}
	return gr.improve(cut)
}

// improve runs the local refinement and the Kernighan–Lin passes on the
// current partition, whose cut is cut, and returns the improved cut.
func (gr *grower) improve(cut int64) int64 {
	cut = gr.refine(cut)
	for pass := 0; pass < 8; pass++ {
		gain := gr.klPass()
		if gain <= 0 {
			break
		}
		cut = gr.refine(cut - gain)
	}
	return cut
}

// hostsOnly starts from the split that puts in A nothing but the target
// hosts whose links carry the least capacity, so that the cut is their
// own links, and improves it. Growing from a seed never finds this split
// (it takes a host's switch as soon as that is cheaper locally), yet it is
// the minimum whenever the host links are thinner than any fabric cut:
// one host per switch (ciscodc:1,2,1: 2 host links, not 4 uplinks), or
// slow servers under a fast core.
func (gr *grower) hostsOnly(hosts []NodeID, target int) int64 {
	g := gr.g
	type hostCap struct {
		c int64
		h NodeID
	}
	order := make([]hostCap, len(hosts))
	for i, h := range hosts {
		order[i].h = h
		for _, l := range g.Ports(h) {
			if l != NoLink {
				order[i].c += gr.capa[l]
			}
		}
	}
	slices.SortStableFunc(order, func(a, b hostCap) int { return cmp.Compare(a.c, b.c) })
	clear(gr.inA)
	for _, hc := range order[:target] {
		gr.inA[hc.h] = true
	}
	var cut int64
	for i := range g.links {
		if gr.inA[g.links[i].A.Node] != gr.inA[g.links[i].B.Node] {
			cut += gr.capa[i]
		}
	}
	return gr.improve(cut)
}

// klMaxClusters bounds the Kernighan–Lin pass, whose steps cost
// O(clusters²).
const klMaxClusters = 100

// klPass runs one Kernighan–Lin pass over clusters, a switch with the
// hosts that hang off it alone: it swaps clusters of equal host count
// between the sides (so the halves stay balanced), best pair first,
// accepting losing swaps on the way, and keeps the best prefix of the
// sequence. This escapes the local minima of single moves (a HyperX split
// along a row needs several swaps whose first ones lose). It returns the
// capacity the kept swaps removed from the cut (0: no change).
func (gr *grower) klPass() int64 {
	g := gr.g
	var heads []NodeID
	member := make(map[NodeID][]NodeID)
	for i := range g.nodes {
		if g.nodes[i].Kind == Host {
			continue
		}
		heads = append(heads, NodeID(i))
	}
	if len(heads) < 2 || len(heads) > klMaxClusters {
		return 0
	}
	for _, s := range heads {
		ms := []NodeID{s}
		for _, l := range g.Ports(s) {
			if l == NoLink {
				continue
			}
			h := g.links[l].Other(s).Node
			if g.nodes[h].Kind == Host && !g.nodes[h].Relay && g.Degree(h) == 1 {
				ms = append(ms, h)
			}
		}
		member[s] = ms
	}
	whole := func(s NodeID) bool {
		for _, m := range member[s] {
			if gr.inA[m] != gr.inA[s] {
				return false
			}
		}
		return true
	}
	inCluster := make(map[NodeID]NodeID)
	for _, s := range heads {
		for _, m := range member[s] {
			inCluster[m] = s
		}
	}
	// gain of moving cluster s whole; between-cluster capacity
	gain := func(s NodeID) int64 {
		var c int64
		for _, m := range member[s] {
			for _, l := range g.Ports(m) {
				if l == NoLink {
					continue
				}
				o := g.links[l].Other(m).Node
				if c, ok := inCluster[o]; ok && c == s {
					continue // a link inside the cluster
				}
				if gr.inA[o] != gr.inA[m] {
					c += gr.capa[l]
				} else {
					c -= gr.capa[l]
				}
			}
		}
		return c
	}
	flip := func(s NodeID) {
		for _, m := range member[s] {
			gr.inA[m] = !gr.inA[m]
		}
	}
	locked := make(map[NodeID]bool)
	var swaps [][2]NodeID
	var cum, best int64
	bestK := 0
	for {
		var ba, bb NodeID = -1, -1
		var bg int64
		gains := make(map[NodeID]int64, len(heads))
		for _, s := range heads {
			if !locked[s] && whole(s) {
				gains[s] = gain(s)
			}
		}
		for a, ga := range gains {
			if !gr.inA[a] {
				continue
			}
			for b, gb := range gains {
				if gr.inA[b] || len(member[a]) != len(member[b]) {
					continue
				}
				gsum := ga + gb - 2*gr.between(a, b)
				if ba < 0 || gsum > bg || gsum == bg && (a < ba || a == ba && b < bb) {
					ba, bb, bg = a, b, gsum
				}
			}
		}
		if ba < 0 {
			break
		}
		flip(ba)
		flip(bb)
		locked[ba], locked[bb] = true, true
		swaps = append(swaps, [2]NodeID{ba, bb})
		cum += bg
		if cum > best {
			best, bestK = cum, len(swaps)
		}
	}
	for i := len(swaps) - 1; i >= bestK; i-- {
		flip(swaps[i][0])
		flip(swaps[i][1])
	}
	return best
}

// moveGain is the cut capacity saved by moving v to the other side.
func (gr *grower) moveGain(v NodeID) int64 {
	var gain int64
	for _, l := range gr.g.Ports(v) {
		if l == NoLink {
			continue
		}
		if gr.inA[gr.g.links[l].Other(v).Node] != gr.inA[v] {
			gain += gr.capa[l]
		} else {
			gain -= gr.capa[l]
		}
	}
	return gain
}

// between is the capacity of the links joining a and b.
func (gr *grower) between(a, b NodeID) int64 {
	var c int64
	for _, l := range gr.g.Ports(a) {
		if l != NoLink && gr.g.links[l].Other(a).Node == b {
			c += gr.capa[l]
		}
	}
	return c
}

// refine improves a partition locally (a simplified Kernighan–Lin pass):
// it moves any switch whose move lowers the cut (switches carry no balance
// weight) and swaps a host of A with a host of B when that lowers it,
// until neither helps. Each step strictly lowers the cut, so it ends.
func (gr *grower) refine(cut int64) int64 {
	g := gr.g
	for round := 0; round < 64; round++ {
		improved := false
		for i := range g.nodes {
			if g.nodes[i].Kind != Host {
				if gain := gr.moveGain(NodeID(i)); gain > 0 {
					gr.inA[i] = !gr.inA[i]
					cut -= gain
					improved = true
				}
			}
		}
		var candA, candB []NodeID
		for i := range g.nodes {
			if g.nodes[i].Kind == Host && gr.moveGain(NodeID(i)) > 0 {
				if gr.inA[i] {
					candA = append(candA, NodeID(i))
				} else {
					candB = append(candB, NodeID(i))
				}
			}
		}
		for len(candA) > 0 && len(candB) > 0 {
			a, b := candA[len(candA)-1], candB[len(candB)-1]
			candA, candB = candA[:len(candA)-1], candB[:len(candB)-1]
			ga, gb := gr.moveGain(a), gr.moveGain(b)
			if gain := ga + gb - 2*gr.between(a, b); gain > 0 {
				gr.inA[a], gr.inA[b] = false, true
				cut -= gain
				improved = true
			}
		}
		if !improved {
			break
		}
	}
	return cut
}

// Distances returns the hop count from src to every node (-1 when
// unreachable) along paths a frame can take: it may start or end at any
// node but only pass through nodes that forward (switches and relaying
// hosts).
func (g *Graph) Distances(src NodeID) []int32 {
	dist := make([]int32, len(g.nodes))
	for i := range dist {
		dist[i] = -1
	}
	if src < 0 || int(src) >= len(g.nodes) {
		return dist
	}
	dist[src] = 0
	queue := []NodeID{src}
	for h := 0; h < len(queue); h++ {
		n := queue[h]
		if n != src && !g.nodes[n].Forwards() {
			continue // frames end here
		}
		for _, l := range g.Ports(n) {
			if l == NoLink {
				continue
			}
			o := g.links[l].Other(n).Node
			if dist[o] < 0 {
				dist[o] = dist[n] + 1
				queue = append(queue, o)
			}
		}
	}
	return dist
}
