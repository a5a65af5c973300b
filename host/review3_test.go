package host

import (
	"testing"

	"github.com/edgefabric/edgefabric/element"
)

// Findings of a review of the TCP model's timers against RFC 6298, RFC
// 1122 and Linux (review3): each test failed before its fix.

// firstDataAt returns when the first segment with payload in log[mark:]
// was sent, or -1.
func firstDataAt(log []sent, mark int) element.Time {
	for _, s := range log[mark:] {
		if isData(s.f) {
			return s.t
		}
	}
	return -1
}

// TestPersistNotPostponedByWrites: the persist timer, armed when data
// waits behind a zero window with nothing in flight, runs from when it was
// armed; later writes (or any segment received) do not start it over, as
// Linux arms its probe timer only when none is pending
// (tcp_check_probe_timer). Every push moved the deadline, so an app
// writing more often than the RTO never probed, and a lost window update
// stalled the connection for as long as the app kept writing.
func TestPersistNotPostponedByWrites(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	a.Receive(1, zeroWindow(a, b, c, srv))
	ab.drop = func([]byte) bool { return true }
	mark := len(ab.log)
	t0 := n.now
	rto := c.RTO()
	c.Write(1000)
	for i := element.Time(1); i < 10; i++ {
		n.at(t0+i*100*ms, func() { c.Write(1000) })
	}
	n.run(t0 + sec)
	if at := firstDataAt(ab.log, mark); at != t0+rto || a.Counter("tcp_window_probe") == 0 {
		t.Fatalf("first probe at %v after the first write, want %v (the RTO); %v", at-t0, rto, a.Counters())
	}
}
