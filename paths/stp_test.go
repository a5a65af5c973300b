package paths

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/topo"
)

// PathCost is 802.1D-1998 Table 8-5 with the documented boundaries: a
// rate takes the cost of the next slower entry, 100 Gb/s and above cost 1,
// and an unknown rate counts as 1 Gb/s.
func TestPathCostTable(t *testing.T) {
	for _, c := range []struct {
		rate int64
		want int64
	}{
		{-1, 4}, {0, 4}, // unknown: 1 Gb/s
		{400_000_000_000, 1}, {100_000_000_000, 1},
		{99_999_999_999, 2}, {10_000_000_000, 2},
		{9_999_999_999, 4}, {1_000_000_000, 4},
		{999_999_999, 19}, {100_000_000, 19},
		{99_999_999, 62}, {16_000_000, 62},
		{15_999_999, 100}, {10_000_000, 100},
		{9_999_999, 250}, {1, 250},
	} {
		if got := PathCost(c.rate); got != c.want {
			t.Errorf("PathCost(%d) = %d, want %d", c.rate, got, c.want)
		}
	}
}

// Two equal-cost links between the root and s2, cabled crosswise: root
// port 1 to s2 port 2, root port 2 to s2 port 1. 802.1D's priority vector
// compares the designated port ID (the root's port) before the bridge's
// own port, so s2's root port is its port 2, the one facing root port 1.
func TestSTPDesignatedPortBeforeOwnPort(t *testing.T) {
	b := topo.NewBuilder("crossed")
	s1, s2 := b.AddNode("s1", topo.Switch), b.AddNode("s2", topo.Switch)
	viaRootPort1 := b.ConnectPorts(topo.End{Node: s1, Port: 1}, topo.End{Node: s2, Port: 2}, 1e9, 0)
	b.ConnectPorts(topo.End{Node: s1, Port: 2}, topo.End{Node: s2, Port: 1}, 1e9, 0)
	b.ConnectPorts(topo.End{Node: s1, Port: 3}, topo.End{Node: b.AddNode("h1", topo.Host), Port: 1}, 1e9, 0)
	b.ConnectPorts(topo.End{Node: s2, Port: 3}, topo.End{Node: b.AddNode("h2", topo.Host), Port: 1}, 1e9, 0)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	tr := STP(mustFabric(t, g))
	if tr.Root != s1 || tr.Parent[s2] != s1 || tr.ParentLink[s2] != viaRootPort1 {
		t.Fatalf("root %d, s2's parent %d via link %d; want s1 via link %d (root port 1)", tr.Root, tr.Parent[s2], tr.ParentLink[s2], viaRootPort1)
	}
}

// Tree.Used keeps only the links between edge nodes: not the link from
// the root (which has no host) down to the one subtree holding every edge
// node, nor a branch to a switch without hosts.
func TestSTPUsedDropsBranchesWithoutEdgePairs(t *testing.T) {
	// s1 (root, lowest ID) - s2 - s3, and s2 - s4; hosts on s2 and s3.
	b := topo.NewBuilder("branches")
	s1, s2, s3, s4 := b.AddNode("s1", topo.Switch), b.AddNode("s2", topo.Switch), b.AddNode("s3", topo.Switch), b.AddNode("s4", topo.Switch)
	b.Connect(s1, s2)
	l23 := b.Connect(s2, s3)
	b.Connect(s2, s4)
	b.Connect(s2, b.AddNode("h1", topo.Host))
	b.Connect(s3, b.AddNode("h2", topo.Host))
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	tr := STP(mustFabric(t, g))
	if tr.Root != s1 || len(tr.Links) != 3 {
		t.Fatalf("root %d, %d tree links; want s1, 3", tr.Root, len(tr.Links))
	}
	if !slices.Equal(tr.Used, []topo.LinkID{l23}) {
		t.Errorf("used %v, want only s2-s3 (%d)", tr.Used, l23)
	}
}

// A host cabled to two switches belongs to the one on its first connected
// NIC; the other switch, with no host of its own, is no edge node.
func TestHostEdgeIsFirstNIC(t *testing.T) {
	b := topo.NewBuilder("dual-homed")
	s1, s2 := b.AddNode("s1", topo.Switch), b.AddNode("s2", topo.Switch)
	b.Connect(s1, s2)
	h1, h2 := b.AddNode("h1", topo.Host), b.AddNode("h2", topo.Host)
	b.ConnectPorts(topo.End{Node: h1, Port: 2}, topo.End{Node: s2, Port: 2}, 1e9, 0)
	b.ConnectPorts(topo.End{Node: h1, Port: 1}, topo.End{Node: s1, Port: 2}, 1e9, 0)
	b.Connect(s1, h2)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	f := mustFabric(t, g)
	if f.HostEdge[h1] != s1 || f.HostEdge[h2] != s1 || !slices.Equal(f.Edges, []topo.NodeID{s1}) || f.EdgeIndex[s2] != -1 {
		t.Errorf("host edges %v, edge nodes %v; want h1, h2 on s1, the only edge node", f.HostEdge, f.Edges)
	}
}

// Two edge nodes with no fabric link between them are reported as such,
// naming both, before the island check (which names a switch cut off from
// the edge nodes).
func TestDisconnectedEdgesNamed(t *testing.T) {
	b := topo.NewBuilder("split")
	s1, s2 := b.AddNode("s1", topo.Switch), b.AddNode("s2", topo.Switch)
	b.Connect(s1, b.AddNode("h1", topo.Host))
	b.Connect(s2, b.AddNode("h2", topo.Host))
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewFabric(g)
	if !errors.Is(err, ErrDisconnected) || !strings.Contains(err.Error(), `edge node "s1" cannot reach "s2"`) {
		t.Errorf("got %v, want ErrDisconnected naming edge nodes s1 and s2", err)
	}
}
