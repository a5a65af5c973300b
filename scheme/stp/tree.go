package stp

import (
	"errors"
	"fmt"

	"github.com/edgefabric/edgefabric/topo"
)

// ErrNotTree is wrapped by CheckTree's errors.
var ErrNotTree = errors.New("forwarding links do not form one spanning tree")

// endForwards reports whether the link end e relays frames: a plain host's
// NIC always does, a bridge port only in the Forwarding state.
func (f *Fabric) endForwards(e topo.End) bool {
	b := f.Bridge(e.Node)
	if b == nil {
		return true
	}
	s, _ := b.PortState(e.Port)
	return s == Forwarding
}

// ActiveLinks returns the links that carry frames in both directions now:
// both ends forwarding. In a converged fabric they are the spanning tree
// plus every host's link.
func (f *Fabric) ActiveLinks() []topo.LinkID {
	var out []topo.LinkID
	for l := topo.LinkID(0); int(l) < f.g.NumLinks(); l++ {
		lk := f.g.Link(l)
		if f.endForwards(lk.A) && f.endForwards(lk.B) {
			out = append(out, l)
		}
	}
	return out
}

// CheckTree verifies that the fabric has converged to one spanning tree:
// every bridge names the same root, which is the one bridge that believes
// it is the root, and the active links (ActiveLinks) form a tree that
// reaches every bridge and every host cabled to one, so that between any
// two hosts' NICs there is exactly one forwarding path. A plain host
// relays nothing, so only its first active link to a bridge joins it to
// the tree: a dual-homed host's second NIC closes no loop, and a cable
// between two hosts joins nothing. Other nodes are ignored.
func (f *Fabric) CheckTree() error {
	g := f.g
	var root BridgeID
	roots := 0
	first := true
	for n := topo.NodeID(0); int(n) < g.NumNodes(); n++ {
		b := f.bridges[n]
		if b == nil {
			continue
		}
		if first {
			root, first = b.desRoot, false
		} else if b.desRoot != root {
			return fmt.Errorf("stp: %s names root %v, another bridge names %v: %w", g.Node(n).Name, b.desRoot, root, ErrNotTree)
		}
		if b.rootBridge() {
			roots++
		}
	}
	if !first && roots != 1 {
		return fmt.Errorf("stp: %d bridges believe they are root %v: %w", roots, root, ErrNotTree)
	}

	// Union-find over the active links: a link joining two nodes already
	// connected closes a cycle. No frame crosses a plain host from one
	// link to another, so a host joins by one link only.
	joined := make([]bool, g.NumNodes()) // plain hosts in the tree
	parent := make([]topo.NodeID, g.NumNodes())
	for i := range parent {
		parent[i] = topo.NodeID(i)
	}
	find := func(x topo.NodeID) topo.NodeID {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for l := topo.LinkID(0); int(l) < g.NumLinks(); l++ {
		lk := g.Link(l)
		if !f.endForwards(lk.A) || !f.endForwards(lk.B) {
			continue
		}
		h := lk.A.Node // the host end, if there is one
		if f.bridges[h] != nil {
			h = lk.B.Node
		}
		if f.bridges[h] == nil {
			if joined[h] || f.bridges[lk.Other(h).Node] == nil {
				continue
			}
			joined[h] = true
		}
		ra, rb := find(lk.A.Node), find(lk.B.Node)
		if ra == rb {
			return fmt.Errorf("stp: link %s closes a forwarding loop: %w", f.linkName(l), ErrNotTree)
		}
		parent[ra] = rb
	}
	var comp topo.NodeID = -1
	for n := topo.NodeID(0); int(n) < g.NumNodes(); n++ {
		if !f.cabledToBridge(n) {
			continue
		}
		r := find(n)
		if comp < 0 {
			comp = r
		} else if r != comp {
			return fmt.Errorf("stp: %s is cut off from %s by blocked or failed ports: %w", g.Node(n).Name, g.Node(comp).Name, ErrNotTree)
		}
	}
	return nil
}

// cabledToBridge reports whether node n is a bridge with links or a host
// with a link to a bridge: the nodes the tree must reach.
func (f *Fabric) cabledToBridge(n topo.NodeID) bool {
	for _, l := range f.g.Ports(n) {
		if l != topo.NoLink && (f.bridges[n] != nil || f.bridges[f.g.Link(l).Other(n).Node] != nil) {
			return true
		}
	}
	return false
}

func (f *Fabric) linkName(l topo.LinkID) string {
	lk := f.g.Link(l)
	return fmt.Sprintf("%s:%d-%s:%d", f.g.Node(lk.A.Node).Name, lk.A.Port, f.g.Node(lk.B.Node).Name, lk.B.Port)
}

// NodeStatus is one bridge's status under its node's name, for reports.
type NodeStatus struct {
	Node string `json:"node"`
	Status
}

// Statuses returns every bridge's status in node order.
func (f *Fabric) Statuses() []NodeStatus {
	var out []NodeStatus
	for n, b := range f.bridges {
		if b != nil {
			out = append(out, NodeStatus{Node: f.g.Node(topo.NodeID(n)).Name, Status: b.Status()})
		}
	}
	return out
}

// Path returns the links a frame from node a to node b crosses over the
// active links (ActiveLinks), in order: in a converged fabric, the one
// path the spanning tree offers. It fails when no active path joins them.
func (f *Fabric) Path(a, b topo.NodeID) ([]topo.LinkID, error) {
	g := f.g
	if a < 0 || b < 0 || int(a) >= g.NumNodes() || int(b) >= g.NumNodes() {
		return nil, fmt.Errorf("stp: path %d-%d: %w", a, b, topo.ErrUnknownNode)
	}
	// Breadth-first search; via[n] is the link that reached n.
	via := make([]topo.LinkID, g.NumNodes())
	for i := range via {
		via[i] = topo.NoLink
	}
	seen := make([]bool, g.NumNodes())
	seen[a] = true
	queue := []topo.NodeID{a}
	for len(queue) > 0 && !seen[b] {
		n := queue[0]
		queue = queue[1:]
		if n != a && f.bridges[n] == nil {
			continue // a plain host relays nothing
		}
		for _, l := range g.Ports(n) {
			if l == topo.NoLink {
				continue
			}
			lk := g.Link(l)
			if !f.endForwards(lk.A) || !f.endForwards(lk.B) {
				continue
			}
			m := lk.Other(n).Node
			if !seen[m] {
				seen[m], via[m] = true, l
				queue = append(queue, m)
			}
		}
	}
	if !seen[b] {
		return nil, fmt.Errorf("stp: no forwarding path from %s to %s: %w", g.Node(a).Name, g.Node(b).Name, ErrNotTree)
	}
	var path []topo.LinkID
	for n := b; n != a; {
		l := via[n]
		path = append(path, l)
		n = g.Link(l).Other(n).Node
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path, nil
}
