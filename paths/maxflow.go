package paths

import (
	"slices"

	"github.com/edgefabric/edgefabric/topo"
)

// EdgeDisjoint returns the maximum number of edge-disjoint fabric paths
// between s and t (the s-t edge connectivity), by unit-capacity augmenting
// paths on the undirected fabric.
func EdgeDisjoint(f *Fabric, s, t topo.NodeID) int {
	if s == t {
		return 0
	}
	fl := newFlow(f)
	return fl.run(s, t)
}

type flowState struct {
	f *Fabric
	// flow[l] is the flow on link l from its A end to its B end: -1, 0, 1.
	flow  []int8
	via   []topo.LinkID
	seen  []uint32
	stamp uint32
	queue []topo.NodeID
}

func newFlow(f *Fabric) *flowState {
	n := f.G.NumNodes()
	return &flowState{f: f, flow: make([]int8, f.G.NumLinks()), via: make([]topo.LinkID, n), seen: make([]uint32, n)}
}

func (fs *flowState) run(s, t topo.NodeID) int {
	clear(fs.flow)
	f := fs.f
	total := 0
	for {
		fs.stamp++
		st := fs.stamp
		fs.queue = append(fs.queue[:0], s)
		fs.seen[s] = st
		found := false
		for h := 0; h < len(fs.queue) && !found; h++ {
			v := fs.queue[h]
			for i := f.adjOff[v]; i < f.adjOff[v+1]; i++ {
				w, l := f.adjNbr[i], f.adjLink[i]
				if fs.seen[w] == st {
					continue
				}
				// Residual capacity v→w on an undirected unit link is
				// 1 minus the flow v→w.
				dir := int8(1)
				if f.linkA[l] != v {
					dir = -1
				}
				if fs.flow[l]*dir >= 1 {
					continue
				}
				fs.seen[w], fs.via[w] = st, l
				if w == t {
					found = true
					break
				}
				fs.queue = append(fs.queue, w)
			}
		}
		if !found {
			return total
		}
		for w := t; w != s; {
			l := fs.via[w]
			v := f.Other(l, w)
			if f.linkA[l] == v {
				fs.flow[l]++
			} else {
				fs.flow[l]--
			}
			w = v
		}
		total++
	}
}

// AlphaResult reports the maximum edge-disjoint path count between edge
// nodes.
type AlphaResult struct {
	Alpha int
	// A, B is a pair achieving it.
	A, B topo.NodeID
	// Exact is false when the search stopped at MaxAlphaEvals max-flow
	// computations before it could rule out a larger value.
	Exact bool
	Evals int
}

// MaxAlphaEvals bounds the max-flow computations Alpha runs. Regular
// fabrics need one: the first pair already meets the degree bound.
const MaxAlphaEvals = 4096

// Alpha computes α, the maximum over pairs of edge nodes of the number of
// edge-disjoint paths between them (SPAIN Table 3's PS = α). Edge
// connectivity between two nodes is at most the smaller of their fabric
// degrees, so pairs are tried in decreasing order of that bound and the
// search stops as soon as no untried pair can beat the best found.
func Alpha(f *Fabric) AlphaResult {
	es := slices.Clone(f.Edges)
	slices.SortStableFunc(es, func(a, b topo.NodeID) int { return f.Degree(b) - f.Degree(a) })
	res := AlphaResult{Alpha: 0, A: -1, B: -1, Exact: true}
	if len(es) < 2 {
		return res
	}
	fs := newFlow(f)
	for i := 0; i < len(es); i++ {
		if f.Degree(es[i]) <= res.Alpha || i+1 < len(es) && f.Degree(es[i+1]) <= res.Alpha {
			break
		}
		for j := i + 1; j < len(es); j++ {
			if f.Degree(es[j]) <= res.Alpha {
				break
			}
			if res.Evals >= MaxAlphaEvals {
				res.Exact = false
				return res
			}
			res.Evals++
			if a := fs.run(es[i], es[j]); a > res.Alpha {
				res.Alpha, res.A, res.B = a, es[i], es[j]
			}
		}
	}
	return res
}
