package flowsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// maxMinViolation verifies that the rates fill gave the classes not done form
// the max-min fair allocation, by its characterisation rather than by
// progressive filling again: the allocation is feasible (no link carries
// more than its capacity, a flow counted once per occurrence of the link
// in its path), and every flow has a bottleneck, a link on its path that
// is saturated and on which no flow has a higher rate. (If some allocation
// gave a flow more, its bottleneck, already full, would have to give some
// other flow there less, one that had no more than it: the allocation is
// max-min fair, and it is unique.)
func maxMinViolation(s *state) error {
	const tol = 1e-9
	load := make([]float64, len(s.caps))
	top := make([]float64, len(s.caps)) // the highest rate on each link
	for _, c := range s.classes {
		if c.done {
			continue
		}
		if !(c.rate > 0) || math.IsInf(c.rate, 0) {
			return fmt.Errorf("class %v: rate %v", c.path, c.rate)
		}
		for _, l := range c.path {
			load[l] += c.count * c.rate
			top[l] = max(top[l], c.rate)
		}
	}
	for l, cp := range s.caps {
		if load[l] > cp*(1+tol) {
			return fmt.Errorf("link %d carries %v, capacity %v", l, load[l], cp)
		}
	}
	for _, c := range s.classes {
		if c.done {
			continue
		}
		ok := false
		for _, l := range c.path {
			if load[l] >= s.caps[l]*(1-tol) && c.rate >= top[l]*(1-tol) {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("class %v (×%v) at rate %v has no bottleneck: caps %v, loads %v", c.path, c.count, c.rate, s.caps, load)
		}
	}
	return nil
}

// fill's rates are max-min fair on random instances: unequal capacities,
// repeated links in a path, classes of many flows, links no flow crosses,
// and classes already done (which must not count).
func TestFillIsMaxMinFair(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	capVals := []float64{1, 0.7, 0.1, 1.0 / 3, 2, 1e-6, 1e6, 3}
	for trial := range 5000 {
		caps := make([]float64, 1+r.IntN(12))
		for i := range caps {
			if trial%2 == 0 {
				caps[i] = 1 // the reproduction's unit capacities: many ties
			} else {
				caps[i] = capVals[r.IntN(len(capVals))]
			}
		}
		var flows []Flow
		for range 1 + r.IntN(40) {
			p := make([]int32, 1+r.IntN(4))
			for i := range p {
				p[i] = int32(r.IntN(len(caps)))
			}
			// Repeats of a flow make classes of several flows.
			for range 1 + r.IntN(3) {
				flows = append(flows, Flow{Path: p, Size: 1})
			}
		}
		s, err := newState(Network{Cap: caps}, flows)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range s.classes {
			c.done = r.IntN(5) == 0
		}
		s.fill()
		if err := maxMinViolation(s); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		// Again, with a different set done: fill starts afresh.
		for _, c := range s.classes {
			c.done = r.IntN(3) == 0
		}
		s.fill()
		if err := maxMinViolation(s); err != nil {
			t.Fatalf("trial %d, second fill: %v", trial, err)
		}
	}
}

// The checker is not vacuous: a feasible allocation that is not max-min
// fair fails it. One unit link, two flows: (0.5, 0.5) is fair, (0.4, 0.6)
// saturates the link but leaves the first flow below the second on its
// only link, and (0.4, 0.4) saturates nothing.
func TestCheckMaxMinCatches(t *testing.T) {
	for _, c := range []struct {
		rates []float64
		fair  bool
	}{{[]float64{0.5, 0.5}, true}, {[]float64{0.4, 0.6}, false}, {[]float64{0.4, 0.4}, false}} {
		s, err := newState(Network{Cap: []float64{1}}, []Flow{{Path: []int32{0}, Size: 1}, {Path: []int32{0}, Size: 2}})
		if err != nil {
			t.Fatal(err)
		}
		for i, rt := range c.rates {
			s.classes[i].rate = rt
		}
		if err := maxMinViolation(s); (err == nil) != c.fair {
			t.Errorf("rates %v: checker says %v, want fair %v", c.rates, err, c.fair)
		}
	}
}
