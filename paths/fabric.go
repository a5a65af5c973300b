package paths

import (
	"errors"
	"fmt"

	"github.com/edgefabric/edgefabric/topo"
)

// Errors of this package, wrapped with context.
var (
	// ErrNoHosts: the topology has no host, so no traffic to plan for.
	ErrNoHosts = errors.New("topology has no hosts")
	// ErrDisconnected: some edge nodes cannot reach each other over the
	// fabric.
	ErrDisconnected = errors.New("topology is disconnected")
	// ErrBadK: a path-set size below 1.
	ErrBadK = errors.New("path-set size k must be at least 1")
	// ErrTooLarge: the path set does not fit the compact 32-bit offsets.
	ErrTooLarge = errors.New("path set too large")
)

// Fabric is the forwarding part of a topology: the nodes that forward
// (switches and relaying hosts), the fabric links between them, and the
// edge nodes where traffic enters and leaves. Paths run between edge nodes
// over fabric links; host links are never part of a path.
//
// Edge nodes are switches with at least one plain host attached (the
// paper's edge switches) and relaying hosts (BCube servers, which are both
// the endpoints of traffic and forwarders, as SPAIN §8 treats BCube: α = l,
// the number of a server's NICs).
type Fabric struct {
	G *topo.Graph
	// NumFabricLinks counts links whose both ends forward: the
	// denominator of coverage, "#Links" of Table 3.
	NumFabricLinks int
	// Edges lists the edge nodes in NodeID order; EdgeIndex maps a node
	// to its position in Edges, or -1.
	Edges     []topo.NodeID
	EdgeIndex []int32
	// HostEdge maps each plain (non-relaying) host to the edge node its
	// first connected NIC is cabled to (-1 for other nodes). A relaying
	// host is its own edge node.
	HostEdge []topo.NodeID

	// CSR adjacency over fabric links only.
	adjOff  []int32
	adjNbr  []topo.NodeID
	adjLink []topo.LinkID
	// linkA, linkB are the two node ends of every link, for walking paths
	// without touching topo.Link; posA, posB are the link's adjacency
	// positions at those ends (fabric links only).
	linkA, linkB []topo.NodeID
	posA, posB   []int32
	fabric       []bool // per link
	// parallel marks the nodes with two or more fabric links to one
	// neighbour, where a search's port order decides between equal links.
	parallel []bool
}

// NewFabric derives the fabric view of g. It fails on a topology with no
// hosts and on one whose edge nodes are not all connected through the
// fabric, since no plan can serve either.
func NewFabric(g *topo.Graph) (*Fabric, error) {
	n, m := g.NumNodes(), g.NumLinks()
	f := &Fabric{
		G:         g,
		EdgeIndex: make([]int32, n),
		HostEdge:  make([]topo.NodeID, n),
		linkA:     make([]topo.NodeID, m),
		linkB:     make([]topo.NodeID, m),
		posA:      make([]int32, m),
		posB:      make([]int32, m),
		fabric:    make([]bool, m),
		adjOff:    make([]int32, n+1),
	}
	deg := make([]int32, n)
	for l := range m {
		lk := g.Link(topo.LinkID(l))
		f.linkA[l], f.linkB[l] = lk.A.Node, lk.B.Node
		if g.IsFabricLink(topo.LinkID(l)) {
			f.fabric[l] = true
			f.NumFabricLinks++
			deg[lk.A.Node]++
			deg[lk.B.Node]++
		}
	}
	for i := range n {
		f.adjOff[i+1] = f.adjOff[i] + deg[i]
	}
	f.adjNbr = make([]topo.NodeID, f.adjOff[n])
	f.adjLink = make([]topo.LinkID, f.adjOff[n])
	fill := make([]int32, n)
	copy(fill, f.adjOff[:n])
	// Walk nodes and their ports in order so that adjacency follows port
	// numbering: deterministic, and the order 802.1D tie-breaks use.
	for v := range n {
		for _, l := range g.Ports(topo.NodeID(v)) {
			if l == topo.NoLink || !f.fabric[l] {
				continue
			}
			w := f.linkA[l]
			if w == topo.NodeID(v) {
				w = f.linkB[l]
			}
			f.adjNbr[fill[v]] = w
			f.adjLink[fill[v]] = l
			if f.linkA[l] == topo.NodeID(v) {
				f.posA[l] = fill[v]
			} else {
				f.posB[l] = fill[v]
			}
			fill[v]++
		}
	}

	f.parallel = make([]bool, n)
	last := make([]int32, n) // per neighbour: 1 + the node that last listed it
	for v := range n {
		for _, w := range f.adjNbr[f.adjOff[v]:f.adjOff[v+1]] {
			if last[w] == int32(v)+1 {
				f.parallel[v] = true
			}
			last[w] = int32(v) + 1
		}
	}

	hosts := 0
	isEdge := make([]bool, n)
	for v := range n {
		f.HostEdge[v] = -1
		nd := g.Node(topo.NodeID(v))
		if nd.Kind != topo.Host {
			continue
		}
		hosts++
		if nd.Relay {
			isEdge[v] = true
			f.HostEdge[v] = topo.NodeID(v)
			continue
		}
		for _, l := range g.Ports(topo.NodeID(v)) {
			if l == topo.NoLink {
				continue
			}
			w := g.Link(l).Other(topo.NodeID(v)).Node
			if g.Node(w).Forwards() {
				isEdge[w] = true
				f.HostEdge[v] = w
				break
			}
		}
		if f.HostEdge[v] < 0 {
			return nil, fmt.Errorf("paths: host %q: %w: it is cabled to no switch", nd.Name, ErrDisconnected)
		}
	}
	if hosts == 0 {
		return nil, fmt.Errorf("paths: %q: %w", g.Name, ErrNoHosts)
	}
	for v := range n {
		f.EdgeIndex[v] = -1
		if isEdge[v] {
			f.EdgeIndex[v] = int32(len(f.Edges))
			f.Edges = append(f.Edges, topo.NodeID(v))
		}
	}
	// Every edge node must reach every other one over the fabric.
	dist := f.BFS(f.Edges[0], nil)
	for _, e := range f.Edges {
		if dist[e] < 0 {
			return nil, fmt.Errorf("paths: %q: %w: edge node %q cannot reach %q over the fabric",
				g.Name, ErrDisconnected, g.Node(f.Edges[0]).Name, g.Node(e).Name)
		}
	}
	// A forwarding node the edge nodes cannot reach carries no traffic, yet
	// would count in coverage and get a configuration no VLAN reaches: an
	// island is a mistake in the topology, not something to plan around.
	for v := range n {
		if g.Node(topo.NodeID(v)).Forwards() && dist[v] < 0 {
			return nil, fmt.Errorf("paths: %q: %w: %q is not connected to the edge nodes (e.g. %q); connect it or remove it",
				g.Name, ErrDisconnected, g.Node(topo.NodeID(v)).Name, g.Node(f.Edges[0]).Name)
		}
	}
	return f, nil
}

// Neighbors returns the fabric neighbours of v and the links to them, in
// port order. The slices are shared: do not modify them.
func (f *Fabric) Neighbors(v topo.NodeID) ([]topo.NodeID, []topo.LinkID) {
	a, b := f.adjOff[v], f.adjOff[v+1]
	return f.adjNbr[a:b], f.adjLink[a:b]
}

// Degree is v's number of fabric links.
func (f *Fabric) Degree(v topo.NodeID) int { return int(f.adjOff[v+1] - f.adjOff[v]) }

// IsFabric reports whether link l joins two forwarding nodes.
func (f *Fabric) IsFabric(l topo.LinkID) bool { return f.fabric[l] }

// Ends returns the two nodes link l joins.
func (f *Fabric) Ends(l topo.LinkID) (topo.NodeID, topo.NodeID) { return f.linkA[l], f.linkB[l] }

// Other returns the end of l that is not v.
func (f *Fabric) Other(l topo.LinkID, v topo.NodeID) topo.NodeID {
	if f.linkA[l] == v {
		return f.linkB[l]
	}
	return f.linkA[l]
}

// BFS returns the hop distance over fabric links from src to every node
// (-1 when unreachable). dist is reused when it has the right length.
func (f *Fabric) BFS(src topo.NodeID, dist []int32) []int32 {
	n := f.G.NumNodes()
	if len(dist) != n {
		dist = make([]int32, n)
	}
	for i := range dist {
		dist[i] = -1
	}
	queue := make([]topo.NodeID, 0, 64)
	dist[src] = 0
	queue = append(queue, src)
	for h := 0; h < len(queue); h++ {
		v := queue[h]
		dv := dist[v] + 1
		for _, w := range f.adjNbr[f.adjOff[v]:f.adjOff[v+1]] {
			if dist[w] < 0 {
				dist[w] = dv
				queue = append(queue, w)
			}
		}
	}
	return dist
}

// PathNodes returns the nodes a path visits, starting at src: len(links)+1
// nodes. It appends to buf.
func (f *Fabric) PathNodes(src topo.NodeID, links []topo.LinkID, buf []topo.NodeID) []topo.NodeID {
	buf = append(buf, src)
	v := src
	for _, l := range links {
		v = f.Other(l, v)
		buf = append(buf, v)
	}
	return buf
}
