package flowsim

import "testing"

// Tests from the second mutation sweep of flowsim.

// Flows are grouped into classes by path and size: the key must not
// confuse the path 1,2 with the path 12 (13 links), nor sizes that agree
// in their first digits. Links 1, 2 and 12 have capacity 1; a flow on
// 1,2 and one on 12 each run alone at rate 1 and end at 1. Two flows on
// link 0 of sizes 1 and 1.00001 share it at 0.5 until t = 2, then the
// larger one finishes its last 0.00001 alone: t = 2.00001, two events.
func TestClassKeyDistinguishes(t *testing.T) {
	caps := make([]float64, 13)
	for i := range caps {
		caps[i] = 1
	}
	res, err := Run(Network{Cap: caps}, []Flow{{Path: []int32{1, 2}, Size: 1}, {Path: []int32{12}, Size: 1}})
	if err != nil || res.Classes != 2 || res.Events != 1 || !near(res.Makespan, 1) {
		t.Errorf("paths 1,2 and 12: %+v %v, want 2 classes ending together at 1", res, err)
	}
	res, err = Run(Network{Cap: []float64{1}}, []Flow{{Path: []int32{0}, Size: 1}, {Path: []int32{0}, Size: 1.00001}})
	if err != nil || res.Classes != 2 || res.Events != 2 || !near(res.Makespan, 2.00001) {
		t.Errorf("sizes 1 and 1.00001: %+v %v, want 2 classes, 2 events, makespan 2.00001", res, err)
	}
}

// Classes that finish together must end in one event even when the
// rounding of earlier events leaves one a remainder many times smaller
// than the last step: the tolerance is relative to the time elapsed, not
// to the last step. Link 1's flow (size 1 − 1e-8) ends first; link 0's
// (size 1, rate 1) and link 2's (size 0.7 at capacity 0.7) both end at 1,
// the second with a rounding remainder of about 1e-16 left after the
// first event.
func TestFinishTogetherAfterShortStep(t *testing.T) {
	res, err := Run(Network{Cap: []float64{1, 1, 0.7}}, []Flow{
		{Path: []int32{0}, Size: 1}, {Path: []int32{1}, Size: 1 - 1e-8}, {Path: []int32{2}, Size: 0.7},
	})
	if err != nil || res.Events != 2 || !near(res.Makespan, 1) {
		t.Errorf("%+v %v, want 2 events and makespan 1", res, err)
	}
}
