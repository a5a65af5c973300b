package flowsim

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

// bruteMakespan is progressive filling in exact rational arithmetic, flow
// by flow (no classes, no heap, no tolerance): the makespan of integer
// sizes on integer capacities.
func bruteMakespan(caps []int64, flows []Flow, sizes []int64) *big.Rat {
	n := len(flows)
	rem := make([]*big.Rat, n)
	done := make([]bool, n)
	active := 0
	for i := range flows {
		rem[i] = big.NewRat(sizes[i], 1)
		done[i] = len(flows[i].Path) == 0
		if !done[i] {
			active++
		}
	}
	now := new(big.Rat)
	for active > 0 {
		rate := make([]*big.Rat, n)
		left := make([]*big.Rat, len(caps))
		for l := range caps {
			left[l] = big.NewRat(caps[l], 1)
		}
		frozen := make([]bool, n)
		for {
			w := make([]int64, len(caps))
			for i, f := range flows {
				if !done[i] && !frozen[i] {
					for _, l := range f.Path {
						w[l]++
					}
				}
			}
			var best *big.Rat
			bl := -1
			for l := range caps {
				if w[l] > 0 {
					s := new(big.Rat).Quo(left[l], big.NewRat(w[l], 1))
					if best == nil || s.Cmp(best) < 0 {
						best, bl = s, l
					}
				}
			}
			if bl < 0 {
				break
			}
			for i, f := range flows {
				if done[i] || frozen[i] {
					continue
				}
				on := false
				for _, l := range f.Path {
					if int(l) == bl {
						on = true
					}
				}
				if on {
					frozen[i] = true
					rate[i] = best
					for _, l := range f.Path {
						left[l] = new(big.Rat).Sub(left[l], best)
					}
				}
			}
		}
		var dt *big.Rat
		for i := range flows {
			if !done[i] {
				d := new(big.Rat).Quo(rem[i], rate[i])
				if dt == nil || d.Cmp(dt) < 0 {
					dt = d
				}
			}
		}
		now.Add(now, dt)
		for i := range flows {
			if !done[i] {
				rem[i] = new(big.Rat).Sub(rem[i], new(big.Rat).Mul(rate[i], dt))
				if rem[i].Sign() <= 0 {
					done[i] = true
					active--
				}
			}
		}
	}
	return now
}

// Run agrees with exact arithmetic on random small instances full of ties
// (integer capacities 1-4, sizes 1-5, repeated links, empty paths), where
// classes finish together and a tolerance could merge or split events.
func TestMatchesExactArithmetic(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 4000 {
		caps := make([]int64, 1+r.IntN(6))
		fc := make([]float64, len(caps))
		for i := range caps {
			caps[i] = 1 + int64(r.IntN(4))
			fc[i] = float64(caps[i])
		}
		var flows []Flow
		var sizes []int64
		for range r.IntN(12) {
			var p []int32
			for range r.IntN(4) {
				p = append(p, int32(r.IntN(len(caps))))
			}
			s := 1 + int64(r.IntN(5))
			flows = append(flows, Flow{Path: p, Size: float64(s)})
			sizes = append(sizes, s)
		}
		res, err := Run(Network{Cap: fc}, flows)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := bruteMakespan(caps, flows, sizes).Float64()
		if d := res.Makespan - want; d > 1e-9*want || d < -1e-9*want {
			t.Fatalf("trial %d: %v want %v caps %v flows %v", trial, res.Makespan, want, caps, flows)
		}
	}
}
