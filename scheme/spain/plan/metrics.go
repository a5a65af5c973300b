package plan

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"

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
// averaged over trials random failure sets (trial t draws from seed and t).
//
// Under STP a pair is connected when its tree path survives: the tree is
// taken as converged before the failures (the instant after a failure,
// before 802.1D re-converges, which is what the paper's figures reflect).
// Under SPAIN a pair is connected when one of its k planned paths survives
// or its VLAN 1 path does: those are the VLANs its hosts would pick
// (Algorithm 3). Host links do not fail: they would cut both schemes alike.
func (p *Plan) NCP(failProb float64, trials int, seed uint64) (NCP, error) {
	if failProb < 0 || failProb > 1 {
		return NCP{}, fmt.Errorf("plan: fail probability %v: %w: must be in [0,1]", failProb, ErrBadOption)
	}
	if trials < 1 {
		return NCP{}, fmt.Errorf("plan: %d NCP trials: %w: must be at least 1", trials, ErrBadOption)
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
	for t := range trials {
		r := rand.New(rand.NewPCG(seed, uint64(t)))
		for l := range failed {
			failed[l] = f.IsFabric(topo.LinkID(l)) && r.Float64() < failProb
		}
		// Components of the surviving tree.
		for v := range comp {
			comp[v] = int32(v)
		}
		var find func(v int32) int32
		find = func(v int32) int32 {
			for comp[v] != v {
				comp[v] = comp[comp[v]]
				v = comp[v]
			}
			return v
		}
		for _, l := range p.Tree.Links {
			if !failed[l] {
				a, b := f.Ends(l)
				ra, rb := find(int32(a)), find(int32(b))
				if ra != rb {
					comp[ra] = rb
				}
			}
		}
		// Resolve every node to its root: read-only below, from several
		// goroutines (path halving alone leaves some nodes one step away).
		for v := range comp {
			root[v] = find(int32(v))
		}
		var mu sync.Mutex
		var stpDown, spainDown int
		var wg sync.WaitGroup
		chunk := (len(pairs) + workers - 1) / workers
		for w := range workers {
			lo, hi := w*chunk, min((w+1)*chunk, len(pairs))
			if lo >= hi {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sd, pd := 0, 0
				for i := lo; i < hi; i++ {
					pr := pairs[i]
					if root[pr.A] == root[pr.B] {
						continue // the tree path survives: both schemes connected
					}
					sd++
					up := false
					plo, phi := p.PS.PairPaths(i)
					for j := plo; j < phi && !up; j++ {
						up = true
						for _, l := range p.PS.Path(j) {
							if failed[l] {
								up = false
								break
							}
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
			}()
		}
		wg.Wait()
		if len(pairs) > 0 {
			res.STP += float64(stpDown) / float64(len(pairs))
			res.SPAIN += float64(spainDown) / float64(len(pairs))
		}
	}
	res.STP /= float64(trials)
	res.SPAIN /= float64(trials)
	return res, nil
}
