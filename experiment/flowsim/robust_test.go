package flowsim

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// runBounded runs Run and fails the test if it does not return.
func runBounded(t *testing.T, net Network, flows []Flow) (Result, error) {
	t.Helper()
	type out struct {
		res Result
		err error
	}
	ch := make(chan out, 1)
	go func() { r, err := Run(net, flows); ch <- out{r, err} }()
	select {
	case o := <-ch:
		return o.res, o.err
	case <-time.After(10 * time.Second):
		t.Fatalf("Run does not return: caps %v, flows %v", net.Cap, flows)
		return Result{}, nil
	}
}

// A completion step that underflows to 0 once ended nothing: the time
// stood still, no remainder shrank, and Run looped forever. Link 0 (capacity
// 1e200) is crossed twice by a flow of size 1e300 and twice by one of size
// 1e-310: each gets 2.5e199, and the small one's step, 4e-510, is 0 in
// float64. It ends at time 0; the big one then has 5e199 and ends at 2e100.
func TestUnderflowingStepEnds(t *testing.T) {
	res, err := runBounded(t, Network{Cap: []float64{1e200}}, []Flow{
		{Path: []int32{0, 0}, Size: 1e300}, {Path: []int32{0, 0}, Size: 1e-310},
	})
	if err != nil || res.Events != 2 || !near(res.Makespan, 2e100) {
		t.Errorf("%+v %v, want 2 events and makespan 2e100", res, err)
	}
}

// Capacities and sizes across the whole float64 range, subnormals
// included: Run always returns, with either an error or a finite,
// non-negative makespan reached in at most one event per class.
func TestExtremeValuesTerminate(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	vals := []float64{5e-324, 1e-320, 1e-310, 1e-300, 1e-200, 1e-20, 0.1, 1.0 / 3, 0.7, 1, 3, 1e20, 1e200, 1e300, math.MaxFloat64}
	for trial := range 20000 {
		caps := make([]float64, 1+r.IntN(5))
		for i := range caps {
			caps[i] = vals[r.IntN(len(vals))]
		}
		var flows []Flow
		for range 1 + r.IntN(8) {
			p := make([]int32, r.IntN(3))
			for i := range p {
				p[i] = int32(r.IntN(len(caps)))
			}
			flows = append(flows, Flow{Path: p, Size: vals[r.IntN(len(vals))]})
		}
		res, err := runBounded(t, Network{Cap: caps}, flows)
		if err == nil && (!(res.Makespan >= 0) || math.IsInf(res.Makespan, 0) || res.Events > res.Classes) {
			t.Fatalf("trial %d: %+v (caps %v, flows %v)", trial, res, caps, flows)
		}
	}
}
