package flowsim

import (
	"math"
	"testing"
)

// Tests from the third mutation sweep of flowsim.

// Each error names what is at fault: the link (its index and capacity),
// the flow (its index in the slice) and the bad size or link index, in
// Run and in MaxLoad. A fair share that underflows to 0 is reported as
// such, not as the overflowing completion time it would lead to.
func TestErrorMessages(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		name  string
		net   Network
		flows []Flow
		want  string
	}{
		{"capacity", Network{Cap: []float64{1, 0}}, nil,
			"flowsim: link 1: link capacity must be positive and finite: 0"},
		{"size", Network{Cap: []float64{1}}, []Flow{{Path: []int32{0}, Size: 1}, {Path: []int32{0}, Size: -2}},
			"flowsim: flow 1: flow size must be positive and finite: -2"},
		{"link", Network{Cap: []float64{1, 1}}, []Flow{{Path: []int32{0}, Size: 1}, {Path: []int32{1, 5}, Size: 1}},
			"flowsim: flow 1: flow path names a link outside the network: 5"},
		{"share", Network{Cap: []float64{5e-324}}, []Flow{{Path: []int32{0}, Size: 1}, {Path: []int32{0}, Size: 1}},
			"flowsim: rate or time out of floating-point range: a flow's fair share is 0"},
		{"time", Network{Cap: []float64{1e-300}}, []Flow{{Path: []int32{0}, Size: 1e300}},
			"flowsim: rate or time out of floating-point range: a completion time overflows"},
		{"infinite capacity", Network{Cap: []float64{inf}}, nil,
			"flowsim: link 0: link capacity must be positive and finite: +Inf"},
	} {
		if res, err := Run(c.net, c.flows); err == nil || err.Error() != c.want {
			t.Errorf("%s: %+v %v, want %q", c.name, res, err, c.want)
		}
	}
	if _, err := MaxLoad(3, [][]int32{{0}, {1, 7}}); err == nil || err.Error() != "flowsim: flow 1: flow path names a link outside the network: 7" {
		t.Errorf("MaxLoad: %v", err)
	}
	if _, err := MaxLoad(-2, nil); err == nil || err.Error() != "flowsim: flow path names a link outside the network: -2 links" {
		t.Errorf("MaxLoad, negative link count: %v", err)
	}
}
