package plan

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/edgefabric/edgefabric/paths"
	"github.com/edgefabric/edgefabric/topo"
)

// NCP is Table 3's no-connectivity-pairs metric.
type NCP struct {
	FailProb float64 `json:"fail_prob"`
	Trials   int     `json:"trials"`
	// STP and SPAIN are the mean fractions of edge-node pairs left
	// without a working path, in [0, 1].
	STP   float64 `json:"stp"`
	SPAIN float64 `json:"spain"`
}

// NCP estimates the share of edge-node pairs without connectivity when
// every fabric link fails independently with probability failProb,
// averaged over trials random failure sets (trial t draws from ncpRand(seed, t)).
//
// Under STP a pair is connected when its tree path survives: the tree is
// taken as converged before the failures (the instant after a failure,
// before 802.1D re-converges, which is what the paper's figures reflect).
// Under SPAIN a pair is connected when some VLAN still joins its two edge
// nodes over surviving links: Algorithm 3's candidates are every VLAN of
// V_reach(es) the source can use, and probing (a unicast chirp on each)
// finds the ones that still work, so any VLAN connecting the pair counts,
// not only those its own k paths were packed into (VLAN 1 included). Host
// links do not fail: they would cut both schemes alike.
func (p *Plan) NCP(failProb float64, trials int, seed uint64) (NCP, error) {
	if !(failProb >= 0 && failProb <= 1) { // NaN too
		return NCP{}, fmt.Errorf("plan: fail probability %v: %w: must be in [0,1]", failProb, ErrBadOption)
	}
	if trials < 1 || trials > MaxNCPTrials {
		return NCP{}, fmt.Errorf("plan: %d NCP trials: %w: must be 1 to %d", trials, ErrBadOption, MaxNCPTrials)
	}
	f := p.F
	g := f.G
	res := NCP{FailProb: failProb, Trials: trials}
	n := g.NumNodes()
	failed := make([]bool, g.NumLinks())
	comp := make([]int32, n)
	root := make([]int32, n)
	pairs := p.PS.Pairs
	workers := runtime.GOMAXPROCS(0)
	vlans := p.Pack.VLANs
	nv, ne := len(vlans), len(f.Edges)
	// lab[e*nv+v]: edge node e's component in VLAN v's surviving links
	// (a node ID; equal labels mean connected), one row per edge node so
	// that a pair's test scans two contiguous rows.
	lab := make([]int32, ne*nv)
	for t := range trials {
		r := ncpRand(seed, t)
		for l := range failed {
			failed[l] = f.IsFabric(topo.LinkID(l)) && r.Float64() < failProb
		}
		// Components of the surviving tree.
		for v := range comp {
			comp[v] = int32(v)
		}
		for _, l := range p.Tree.Links {
			if !failed[l] {
				a, b := f.Ends(l)
				union(comp, int32(a), int32(b))
			}
		}
		// Resolve every node to its root: read-only below, from several
		// goroutines (path halving alone leaves some nodes one step away).
		for v := range comp {
			root[v] = find(comp, int32(v))
		}
		// Every VLAN's surviving components, VLANs spread over the cores.
		paths.ParallelFor(workers, nv, func(lo, hi int) {
			uf := make([]int32, n)
			for v := range uf {
				uf[v] = int32(v)
			}
			for vi := lo; vi < hi; vi++ {
				for _, l := range vlans[vi] {
					if !failed[l] {
						a, b := f.Ends(l)
						union(uf, int32(a), int32(b))
					}
				}
				for ei, e := range f.Edges {
					lab[ei*nv+vi] = find(uf, int32(e))
				}
				// Reset only what this VLAN touched.
				for _, l := range vlans[vi] {
					a, b := f.Ends(l)
					uf[a], uf[b] = int32(a), int32(b)
				}
			}
		})
		var mu sync.Mutex
		var stpDown, spainDown int
		paths.ParallelFor(workers, len(pairs), func(lo, hi int) {
			sd, pd := 0, 0
			for i := lo; i < hi; i++ {
				pr := pairs[i]
				if root[pr.A] == root[pr.B] {
					continue // the tree path survives: both schemes connected
				}
				sd++
				a := lab[int(f.EdgeIndex[pr.A])*nv:][:nv]
				b := lab[int(f.EdgeIndex[pr.B])*nv:][:nv]
				up := false
				for v := range a {
					if a[v] == b[v] {
						up = true
						break
					}
				}
				if !up {
					pd++
				}
			}
			mu.Lock()
			stpDown += sd
			spainDown += pd
			mu.Unlock()
		})
		if len(pairs) > 0 {
			res.STP += float64(stpDown) / float64(len(pairs))
			res.SPAIN += float64(spainDown) / float64(len(pairs))
		}
	}
	res.STP /= float64(trials)
	res.SPAIN /= float64(trials)
	return res, nil
}

// find returns v's root in the union-find forest uf, halving paths.
func find(uf []int32, v int32) int32 {
	for uf[v] != v {
		uf[v] = uf[uf[v]]
		v = uf[v]
	}
	return v
}

func union(uf []int32, a, b int32) {
	ra, rb := find(uf, a), find(uf, b)
	if ra != rb {
		uf[ra] = rb
	}
}

// ncpRand is the random stream of NCP trial t. The seed is mixed with a
// constant of its own ("ncp"), as the packer's and the throughput's are:
// Algorithm 1 gives the pair (src, d) the stream (seed, src<<32|d), which
// for src = 0 (an edge node with ID 0, as HyperX's s1) would otherwise be
// trial d's, tying a pair's tie-break offset to whether a link fails.
func ncpRand(seed uint64, t int) *rand.Rand {
	return rand.New(rand.NewPCG(seed^0x6e_6370, uint64(t)))
}
