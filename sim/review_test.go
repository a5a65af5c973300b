package sim

import (
	"testing"
)

// TestNilTimerSlotFreed: a timer or action armed with a nil func does
// nothing when its time comes, and its slot goes back to the free list
// as any other's does. It stayed taken for good: an element arming
// After(d, nil) every period leaked a slot each time, until the engine
// refused timers past a billion.
func TestNilTimerSlotFreed(t *testing.T) {
	s, a, _ := twoHosts(t)
	n := 0
	var arm func()
	arm = func() {
		if n++; n > 1000 {
			return
		}
		a.env.After(us, nil)
		s.At(s.Now()+us, nil)
		a.env.After(us, arm)
	}
	s.At(0, arm)
	s.RunAll()
	if len(s.timers) > 4 {
		t.Fatalf("%d timer slots after 1000 rounds of nil timers (%d free), want at most 4", len(s.timers), len(s.freeTimer))
	}
}
