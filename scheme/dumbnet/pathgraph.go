package dumbnet

import (
	"fmt"
	"math/rand/v2"

	"github.com/edgefabric/edgefabric/wire"
)

// Path graph defaults (DumbNet §4.3, §7.3: the paper's evaluation fixes
// s = 2 and varies ε from 0 to 3). ε = 0 keeps, for every two-hop window
// of the primary path, the switches on other shortest paths between its
// ends: on a fat tree, every core of the group for the core hop, which is
// the detour a failed core link needs, while the path graph stays within
// one reply frame. On bipartite fabrics (fat trees, cubes) ε = 1 adds
// nothing in a full window, only in the last one, which Algorithm 1
// truncates to one hop: every neighbour of that hop's ends; ε = 2 already
// spans whole pods of a 64-port fat tree.
const (
	DefaultS   = 2
	DefaultEps = 0
)

// PathGraph is what the controller returns for a (source switch,
// destination switch) query (DumbNet §4.3): a primary path, local detours
// around it, and a backup path, as one subgraph. Links are given by switch
// index in the controller's graph.
type PathGraph struct {
	Primary []hop
	Backup  []hop
	// Links of the subgraph with their role flags (LinkPrimary,
	// LinkBackup, LinkDetour, and LinkUp for links that work).
	Links map[linkKey]wire.LinkFlags
}

// pathGraph computes the path graph from src to dst on g: the primary
// path is a random shortest path; the backup path is the cheapest path
// once every primary link and every intermediate switch of the primary
// costs len(g) more ("unlikely to reuse links and switches in the primary
// path, unless it is unavoidable"); the local detours are Algorithm 1's
// "s-steps, ε-good" vertex sets, whose induced links join the subgraph.
func (g *netGraph) pathGraph(sc *scratch, src, dst int32, s, eps int, rng *rand.Rand) *PathGraph {
	pg, _ := g.pathGraphDetours(sc, src, dst, s, eps, rng)
	return pg
}

// pathGraphDetours is pathGraph that also returns Algorithm 1's vertex
// set D (primary included), for measuring the graph.
func (g *netGraph) pathGraphDetours(sc *scratch, src, dst int32, s, eps int, rng *rand.Rand) (*PathGraph, map[int32]bool) {
	pg := &PathGraph{Links: make(map[linkKey]wire.LinkFlags)}
	pg.Primary = g.shortest(sc, src, dst, rng, nil)
	if pg.Primary == nil {
		return nil, nil
	}
	heavy := make(map[linkKey]bool)
	for _, k := range g.routeLinks(pg.Primary) {
		heavy[k] = true
		pg.Links[k] |= wire.LinkPrimary | wire.LinkUp
	}
	// The backup "shares as few common switches or links as possible"
	// with the primary: entering one of the primary's intermediate
	// switches costs as much as taking one of its links, so that the
	// backup survives a failed switch of the primary too, where a
	// switch-disjoint way exists.
	heavySw := make(map[int32]bool, len(pg.Primary))
	for _, h := range pg.Primary[1 : len(pg.Primary)-1] {
		heavySw[h.sw] = true
	}
	pg.Backup = g.weighted(src, dst, heavy, heavySw, int64(len(g.ids)))
	if pg.Backup != nil {
		for _, k := range g.routeLinks(pg.Backup) {
			pg.Links[k] |= wire.LinkBackup | wire.LinkUp
		}
	}
	inD := g.detourSet(sc, pg.Primary, s, eps)
	for u := range inD {
		for _, p := range g.used[u] {
			pe := g.ports[u][p]
			if !pe.up || !inD[pe.sw] {
				continue
			}
			k := keyOf(u, p, pe.sw, pe.port)
			pg.Links[k] |= wire.LinkDetour | wire.LinkUp
		}
	}
	return pg, inD
}

// detours is Algorithm 1 (DumbNet §4.3) returning the vertex set D as a
// list: for windows [p_i, p_{i+s}] of the primary path, stepping by s/2,
// every x with dist(a,x) + dist(x,b) <= s + ε.
func (g *netGraph) detours(sc *scratch, primary []hop, s, eps int) []int32 {
	set := g.detourSet(sc, primary, s, eps)
	out := make([]int32, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	return out
}

func (g *netGraph) detourSet(sc *scratch, primary []hop, s, eps int) map[int32]bool {
	D := make(map[int32]bool)
	for _, h := range primary {
		D[h.sw] = true
	}
	l := len(primary)
	if s < 1 || l < 2 {
		return D
	}
	n := len(g.ids)
	da := make([]int32, n)
	step := max(1, s/2) // s/2 rounds to 0 for s = 1: step at least one
	for i := 0; i < l-1; i += step {
		a := primary[i].sw
		b := primary[min(i+s, l-1)].sw
		g.bfs(sc, a, nil)
		copy(da, sc.dist[:n])
		g.bfs(sc, b, nil)
		for x := range n {
			if da[x] >= 0 && sc.dist[x] >= 0 && int(da[x]+sc.dist[x]) <= s+eps {
				D[int32(x)] = true
			}
		}
	}
	return D
}

// PathGraphSize is how large one path graph is (DumbNet §7.3, Fig. 12: the
// storage a host spends on it).
type PathGraphSize struct {
	// PrimaryHops and BackupHops count the links of the two paths
	// (BackupHops 0: no backup path exists).
	PrimaryHops, BackupHops int
	// Switches counts every switch of the path graph (primary, detours and
	// backup); Detours those of Algorithm 1's set D off the primary path.
	Switches, Detours int
	// Links counts the switch-to-switch links the reply would carry.
	Links int
}

// PathGraphSizer computes path graphs on a known topology as the
// controller does for a path query, to measure them without running a
// fabric. It measures the whole graph: the controller's reply carries at
// most Config.MaxReplyLinks of its links and cuts detours beyond.
type PathGraphSizer struct {
	g  *netGraph
	sc scratch
}

// NewPathGraphSizer prepares t (switches and links; down links are left
// out of every path, as in the controller).
func NewPathGraphSizer(t *Topology) *PathGraphSizer {
	g := newNetGraph()
	for _, id := range t.Switches {
		g.addSwitch(id)
	}
	for _, l := range t.Links {
		g.addLink(g.idx[l.A], l.APort, g.idx[l.B], l.BPort, l.Up, 0)
	}
	return &PathGraphSizer{g: g}
}

// Size computes the path graph from switch a to switch b with Algorithm
// 1's window s and slack eps; rng picks the primary among equal-cost
// shortest paths, as the controller does.
func (p *PathGraphSizer) Size(a, b uint64, s, eps int, rng *rand.Rand) (PathGraphSize, error) {
	ia, oka := p.g.idx[a]
	ib, okb := p.g.idx[b]
	if !oka || !okb {
		return PathGraphSize{}, fmt.Errorf("dumbnet: switch %#x or %#x is not in the topology", a, b)
	}
	if s < 1 || eps < 0 {
		return PathGraphSize{}, fmt.Errorf("dumbnet: s=%d, eps=%d: want s >= 1 and eps >= 0", s, eps)
	}
	pg, d := p.g.pathGraphDetours(&p.sc, ia, ib, s, eps, rng)
	if pg == nil {
		return PathGraphSize{}, fmt.Errorf("dumbnet: no path from %#x to %#x", a, b)
	}
	sw := map[int32]bool{}
	for _, h := range pg.Primary {
		sw[h.sw] = true
	}
	onPrimary := len(sw)
	for k := range pg.Links {
		sw[k.a], sw[k.b] = true, true
	}
	sz := PathGraphSize{PrimaryHops: len(pg.Primary) - 1, Switches: len(sw), Detours: len(d) - onPrimary, Links: len(pg.Links)}
	if pg.Backup != nil {
		sz.BackupHops = len(pg.Backup) - 1
	}
	return sz, nil
}
