package flowsim

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
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

// Capacities or sizes so extreme that a fair share underflows to 0 or a
// completion time overflows are an error: the first once looped forever
// (a flow at rate 0 never completes), the second returned +Inf with no
// error. MaxLoad with a negative link count once panicked.
func TestOutOfRange(t *testing.T) {
	type out struct {
		res Result
		err error
	}
	run := func(net Network, flows []Flow) (Result, error) {
		ch := make(chan out, 1)
		go func() { r, err := Run(net, flows); ch <- out{r, err} }()
		select {
		case o := <-ch:
			return o.res, o.err
		case <-time.After(10 * time.Second):
			t.Fatal("Run does not return")
			return Result{}, nil
		}
	}
	// The smallest subnormal capacity shared by two flows: 5e-324/2 = 0.
	if res, err := run(Network{Cap: []float64{5e-324}}, []Flow{{Path: []int32{0}, Size: 1}, {Path: []int32{0}, Size: 1}}); !errors.Is(err, ErrRange) {
		t.Errorf("underflowing share: %+v %v", res, err)
	}
	if res, err := run(Network{Cap: []float64{1e-300}}, []Flow{{Path: []int32{0}, Size: 1e300}}); !errors.Is(err, ErrRange) {
		t.Errorf("overflowing time: %+v %v", res, err)
	}
	// Small but representable: still exact.
	if res, err := run(Network{Cap: []float64{1e-300}}, []Flow{{Path: []int32{0}, Size: 1e-290}}); err != nil || !near(res.Makespan, 1e10) {
		t.Errorf("small capacity: %+v %v", res, err)
	}
	if _, err := MaxLoad(-1, nil); !errors.Is(err, ErrBadLink) {
		t.Errorf("negative link count: %v", err)
	}
}

// refMakespan is progressive filling written the slow, obvious way: one
// flow at a time, every link's share recomputed from scratch.
func refMakespan(caps []float64, flows []Flow) float64 {
	n := len(flows)
	rem := make([]float64, n)
	done := make([]bool, n)
	active := 0
	for i, f := range flows {
		rem[i] = f.Size
		done[i] = len(f.Path) == 0
		if !done[i] {
			active++
		}
	}
	now := 0.0
	for active > 0 {
		rate := make([]float64, n)
		frozen := make([]bool, n)
		left := slices.Clone(caps)
		for {
			w := make([]float64, len(caps))
			for i, f := range flows {
				if !done[i] && !frozen[i] {
					for _, l := range f.Path {
						w[l]++
					}
				}
			}
			best, bl := math.Inf(1), int32(-1)
			for l := range caps {
				if w[l] > 0 && left[l]/w[l] < best {
					best, bl = left[l]/w[l], int32(l)
				}
			}
			if bl < 0 {
				break
			}
			for i, f := range flows {
				if !done[i] && !frozen[i] && slices.Contains(f.Path, bl) {
					frozen[i], rate[i] = true, best
					for _, l := range f.Path {
						left[l] -= best
					}
				}
			}
		}
		dt := math.Inf(1)
		for i := range flows {
			if !done[i] {
				dt = min(dt, rem[i]/rate[i])
			}
		}
		now += dt
		for i := range flows {
			if !done[i] {
				if rem[i] -= rate[i] * dt; rem[i] <= 1e-9*flows[i].Size {
					done[i] = true
					active--
				}
			}
		}
	}
	return now
}

// Unequal capacities and sizes, repeated links in a route, empty routes,
// many flows of one class: Run agrees with the reference.
func TestMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	capVals := []float64{1, 0.7, 0.1, 1.0 / 3, 2, 1e-6, 1e6}
	sizeVals := []float64{1, 0.1, 0.7, 1.0 / 3, 3, 1e-6, 1e6}
	for trial := range 3000 {
		caps := make([]float64, 1+r.IntN(10))
		for i := range caps {
			caps[i] = capVals[r.IntN(len(capVals))]
		}
		var flows []Flow
		for range r.IntN(30) {
			var p []int32
			for range r.IntN(4) {
				p = append(p, int32(r.IntN(len(caps))))
			}
			flows = append(flows, Flow{Path: p, Size: sizeVals[r.IntN(len(sizeVals))]})
		}
		res, err := Run(Network{Cap: caps}, flows)
		if err != nil {
			t.Fatal(err)
		}
		if want := refMakespan(caps, flows); math.Abs(res.Makespan-want) > 1e-6*want {
			t.Fatalf("trial %d: makespan %v, reference %v (caps %v, flows %v)", trial, res.Makespan, want, caps, flows)
		}
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

// Each boundary of input validation: a zero or infinite capacity, an
// infinite or negative size, a negative link index, and a link index equal
// to the link count (in Run and in MaxLoad) are rejected with their error.
func TestBadInputBoundaries(t *testing.T) {
	for _, c := range []struct {
		name  string
		net   Network
		flows []Flow
		want  error
	}{
		{"zero capacity", Network{Cap: []float64{0}}, nil, ErrBadCap},
		{"infinite capacity", Network{Cap: []float64{1, math.Inf(1)}}, nil, ErrBadCap},
		{"infinite size", Network{Cap: []float64{1}}, []Flow{{Path: []int32{0}, Size: math.Inf(1)}}, ErrBadSize},
		{"negative size", Network{Cap: []float64{1}}, []Flow{{Path: []int32{0}, Size: -1}}, ErrBadSize},
		{"negative link", Network{Cap: []float64{1}}, []Flow{{Path: []int32{-1}, Size: 1}}, ErrBadLink},
		{"link past end", Network{Cap: []float64{1, 1}}, []Flow{{Path: []int32{0, 2}, Size: 1}}, ErrBadLink},
	} {
		if res, err := Run(c.net, c.flows); !errors.Is(err, c.want) {
			t.Errorf("%s: %+v %v, want %v", c.name, res, err, c.want)
		}
	}
	if _, err := MaxLoad(2, [][]int32{{0}, {2}}); !errors.Is(err, ErrBadLink) {
		t.Errorf("maxload link == nl: %v", err)
	}
	if m, err := MaxLoad(0, nil); err != nil || m != 0 {
		t.Errorf("maxload no links: %d %v", m, err)
	}
}
