package paths

import (
	"container/heap"

	"github.com/edgefabric/edgefabric/topo"
)

// Bridge priorities used to elect the root. Switches keep the 802.1D
// default; relaying hosts (BCube servers) are configured with the worst
// settable priority, as an operator would, so that a switch is elected
// root whenever there is one.
const (
	SwitchPriority = 32768
	RelayPriority  = 61440
)

// PathCost is the recommended port path cost of 802.1D-1998 Table 8-5 for
// a link of rate bits/s, the one the spanning-tree baseline (scheme/stp)
// uses, so that VLAN 1 is the tree its bridges converge to: 100 for
// 10 Mb/s, 19 for 100 Mb/s, 4 for 1 Gb/s, 2 for 10 Gb/s; rates between take
// the cost of the next slower entry, rates of 100 Gb/s and above cost 1
// (the lowest value the 10 Gb/s range allows), and an unknown rate (0) is
// taken as 1 Gb/s, the default link rate of edgefabric topologies.
func PathCost(rate int64) int64 {
	switch {
	case rate <= 0:
		return 4
	case rate >= 100_000_000_000:
		return 1
	case rate >= 10_000_000_000:
		return 2
	case rate >= 1_000_000_000:
		return 4
	case rate >= 100_000_000:
		return 19
	case rate >= 16_000_000:
		return 62
	case rate >= 10_000_000:
		return 100
	}
	return 250
}

// Tree is a spanning tree over the fabric.
type Tree struct {
	Root topo.NodeID
	// Parent and ParentLink give each node's root port: the neighbour and
	// link towards the root (-1 / NoLink for the root and for nodes that
	// do not forward).
	Parent     []topo.NodeID
	ParentLink []topo.LinkID
	Depth      []int32
	// Links are all the tree's links, each the parent link of its child, in
	// the order the children settled (root path cost, then NodeID).
	Links []topo.LinkID
	// Used are the tree links that lie on the tree path between some pair
	// of edge nodes: the tree with every branch that leads to no edge node
	// pruned. Only these carry host-to-host traffic.
	Used []topo.LinkID
}

func bridgeID(f *Fabric, v topo.NodeID) uint64 {
	p := uint64(SwitchPriority)
	if f.G.Node(v).Kind != topo.Switch {
		p = RelayPriority
	}
	mac := topo.BridgeMAC(v)
	var m uint64
	for _, b := range mac {
		m = m<<8 | uint64(b)
	}
	return p<<48 | m
}

type stpItem struct {
	v    topo.NodeID
	cost int64
}
type stpHeap []stpItem

func (h stpHeap) Len() int { return len(h) }
func (h stpHeap) Less(i, j int) bool {
	if h[i].cost != h[j].cost {
		return h[i].cost < h[j].cost
	}
	return h[i].v < h[j].v
}
func (h stpHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *stpHeap) Push(x any)   { *h = append(*h, x.(stpItem)) }
func (h *stpHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// STP computes the spanning tree IEEE 802.1D converges to on the fabric:
// the root is the bridge with the lowest bridge ID (priority, then bridge
// MAC, which the address plan orders by NodeID); every other bridge's root
// port is the one with the lowest root path cost (PathCost: the
// 802.1D-1998 costs of the STP baseline), ties broken by the lowest
// designated bridge ID, then the
// lowest designated port ID (equal priorities, so the sender's port
// number), then the lowest own port number.
func STP(f *Fabric) *Tree {
	g := f.G
	n := g.NumNodes()
	t := &Tree{
		Root:       -1,
		Parent:     make([]topo.NodeID, n),
		ParentLink: make([]topo.LinkID, n),
		Depth:      make([]int32, n),
	}
	var rootID uint64
	for v := range n {
		t.Parent[v], t.ParentLink[v], t.Depth[v] = -1, topo.NoLink, -1
		if !g.Node(topo.NodeID(v)).Forwards() {
			continue
		}
		if id := bridgeID(f, topo.NodeID(v)); t.Root < 0 || id < rootID {
			t.Root, rootID = topo.NodeID(v), id
		}
	}
	if t.Root < 0 {
		return t
	}
	const inf = int64(1) << 62
	cost := make([]int64, n)
	for i := range cost {
		cost[i] = inf
	}
	cost[t.Root] = 0
	h := &stpHeap{{t.Root, 0}}
	done := make([]bool, n)
	var order []topo.NodeID
	for h.Len() > 0 {
		it := heap.Pop(h).(stpItem)
		if done[it.v] || it.cost != cost[it.v] {
			continue
		}
		done[it.v] = true
		order = append(order, it.v)
		nbrs, links := f.Neighbors(it.v)
		for i, w := range nbrs {
			c := it.cost + PathCost(g.Link(links[i]).Rate)
			if c < cost[w] {
				cost[w] = c
				heap.Push(h, stpItem{w, c})
			}
		}
	}
	// Root port selection with the full 802.1D priority vector.
	portOf := func(v topo.NodeID, l topo.LinkID) topo.Port {
		lk := g.Link(l)
		if lk.A.Node == v && (lk.B.Node != v) {
			return lk.A.Port
		}
		return lk.B.Port
	}
	for _, v := range order {
		if v == t.Root {
			t.Depth[v] = 0
			continue
		}
		bestU, bestL := topo.NodeID(-1), topo.NoLink
		var bestKey [3]uint64
		nbrs, links := f.Neighbors(v)
		for i, u := range nbrs {
			if !done[u] || cost[u]+PathCost(g.Link(links[i]).Rate) != cost[v] {
				continue
			}
			key := [3]uint64{bridgeID(f, u), uint64(portOf(u, links[i])), uint64(portOf(v, links[i]))}
			if bestU < 0 || key[0] < bestKey[0] || key[0] == bestKey[0] && (key[1] < bestKey[1] || key[1] == bestKey[1] && key[2] < bestKey[2]) {
				bestU, bestL, bestKey = u, links[i], key
			}
		}
		t.Parent[v], t.ParentLink[v] = bestU, bestL
	}
	// Depths in settle order are not parent-first when costs differ from
	// hop counts, so resolve them by walking up.
	var walk func(v topo.NodeID) int32
	walk = func(v topo.NodeID) int32 {
		if t.Depth[v] >= 0 {
			return t.Depth[v]
		}
		t.Depth[v] = walk(t.Parent[v]) + 1
		return t.Depth[v]
	}
	for _, v := range order {
		walk(v)
		if v != t.Root {
			t.Links = append(t.Links, t.ParentLink[v])
		}
	}
	t.prune(f, order)
	return t
}

// prune keeps the links whose subtree holds an edge node and whose
// complement holds one too: exactly the links on tree paths between edge
// nodes.
func (t *Tree) prune(f *Fabric, order []topo.NodeID) {
	n := f.G.NumNodes()
	below := make([]int32, n)
	total := int32(0)
	for _, e := range f.Edges {
		if t.Depth[e] >= 0 {
			below[e] = 1
			total++
		}
	}
	// Children before parents: reverse of a parent-first order.
	byDepth := append([]topo.NodeID(nil), order...)
	sortByDepthDesc(byDepth, t.Depth)
	for _, v := range byDepth {
		if v != t.Root {
			below[t.Parent[v]] += below[v]
		}
	}
	for _, v := range order {
		if v != t.Root && below[v] > 0 && below[v] < total {
			t.Used = append(t.Used, t.ParentLink[v])
		}
	}
}

func sortByDepthDesc(vs []topo.NodeID, depth []int32) {
	// Counting sort by depth: depths are small.
	maxD := int32(0)
	for _, v := range vs {
		maxD = max(maxD, depth[v])
	}
	buckets := make([][]topo.NodeID, maxD+1)
	for _, v := range vs {
		buckets[depth[v]] = append(buckets[depth[v]], v)
	}
	vs = vs[:0]
	for d := maxD; d >= 0; d-- {
		vs = append(vs, buckets[d]...)
	}
}

// PathBetween appends the links of the tree path from a to b to buf, in
// order from a. Both must be in the tree.
func (t *Tree) PathBetween(a, b topo.NodeID, buf []topo.LinkID) []topo.LinkID {
	start := len(buf)
	var tail []topo.LinkID
	for a != b {
		if t.Depth[a] >= t.Depth[b] {
			buf = append(buf, t.ParentLink[a])
			a = t.Parent[a]
		} else {
			tail = append(tail, t.ParentLink[b])
			b = t.Parent[b]
		}
	}
	_ = start
	for i := len(tail) - 1; i >= 0; i-- {
		buf = append(buf, tail[i])
	}
	return buf
}
