package flowsim

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestMaxMinClassic(t *testing.T) {
	// Links 0 (cap 1) and 1 (cap 2). Flow A crosses both, B only 0, C and
	// D only 1. Max-min: link 0 gives A and B 0.5 each; link 1 then has
	// 1.5 left for C and D: 0.75 each. Sizes 1: A and B end at 2, C and D
	// at 4/3, so the makespan is 2 over two completion times.
	res, err := Run(Network{Cap: []float64{1, 2}}, []Flow{
		{Path: []int32{0, 1}, Size: 1}, {Path: []int32{0}, Size: 1},
		{Path: []int32{1}, Size: 1}, {Path: []int32{1}, Size: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	// After C, D finish at 4/3, A and B have 1/3 left at rate 0.5: 2.
	if !near(res.Makespan, 2) || res.Events != 2 || res.Classes != 3 {
		t.Fatalf("%+v", res)
	}
}

func TestRatesRiseWhenFlowsFinish(t *testing.T) {
	// One link, a flow of size 1 and one of size 3: both at 0.5 until
	// t=2, then the big one alone at 1 for its last 2 units: t=4.
	res, err := Run(Network{Cap: []float64{1}}, []Flow{{Path: []int32{0}, Size: 1}, {Path: []int32{0}, Size: 3}})
	if err != nil || !near(res.Makespan, 4) || res.Events != 2 {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestEqualFlowsMakespanIsMaxLoad(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		nl := 3 + r.IntN(10)
		caps := make([]float64, nl)
		for i := range caps {
			caps[i] = 1
		}
		var flows []Flow
		var ps [][]int32
		for range 1 + r.IntN(60) {
			var p []int32
			for l := range nl {
				if r.IntN(3) == 0 {
					p = append(p, int32(l))
				}
			}
			if len(p) == 0 {
				p = []int32{int32(r.IntN(nl))}
			}
			flows = append(flows, Flow{Path: p, Size: 1})
			ps = append(ps, p)
		}
		res, err := Run(Network{Cap: caps}, flows)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := MaxLoad(nl, ps)
		if !near(res.Makespan, float64(m)) {
			t.Fatalf("trial %d: makespan %v, max load %d", trial, res.Makespan, m)
		}
	}
}

func TestBadInput(t *testing.T) {
	if _, err := Run(Network{Cap: []float64{1}}, []Flow{{Path: []int32{1}, Size: 1}}); !errors.Is(err, ErrBadLink) {
		t.Errorf("bad link: %v", err)
	}
	if _, err := Run(Network{Cap: []float64{1}}, []Flow{{Path: []int32{0}, Size: 0}}); !errors.Is(err, ErrBadSize) {
		t.Errorf("bad size: %v", err)
	}
	if _, err := Run(Network{Cap: []float64{math.NaN()}}, nil); !errors.Is(err, ErrBadCap) {
		t.Errorf("bad cap: %v", err)
	}
	if _, err := MaxLoad(1, [][]int32{{-1}}); !errors.Is(err, ErrBadLink) {
		t.Errorf("maxload bad link: %v", err)
	}
	res, err := Run(Network{Cap: []float64{1}}, []Flow{{Size: 1}})
	if err != nil || res.Makespan != 0 {
		t.Errorf("empty path: %+v %v", res, err)
	}
}

func BenchmarkRun(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	nl := 200
	caps := make([]float64, nl)
	for i := range caps {
		caps[i] = 1
	}
	var flows []Flow
	for range 5000 {
		flows = append(flows, Flow{Path: []int32{int32(r.IntN(nl)), int32(r.IntN(nl)), int32(r.IntN(nl))}, Size: 1})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(Network{Cap: caps}, flows); err != nil {
			b.Fatal(err)
		}
	}
}
