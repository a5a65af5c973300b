package dumbnet_test

import (
	"testing"

	"github.com/edgefabric/edgefabric/element"
)

// TestHeldFramesStayFresh: h1 sends 100 datagrams a second to h16 while
// h16's leaf (s20) is cut off for 5 s. h1's query for new paths goes
// unanswered, so its datagrams wait in the hold queue (64 at most) until
// the repair. They used to be the first 64 of the outage, delivered 5 s
// late; like the kernel's neighbour queue, the queue now drops its oldest
// frame to take a new one, and a frame held longer than holdtime (3 s by
// default) is dropped: what arrives after the repair is at most the
// 640 ms before it.
func TestHeldFramesStayFresh(t *testing.T) {
	for _, tc := range []struct {
		name          string
		rate          int64 // bits/s of 200-byte datagrams
		maxDelay      element.Time
		full, expired bool // drop_queue_full, drop_held_expired expected
	}{
		// 100 a second: the queue fills in 640 ms, and what arrives after
		// the repair is the 64 sent last.
		{"100pps", 100 * 8 * 200, 700 * element.Millisecond, true, false},
		// 2 a second: 10 wait, the ones older than 3 s are dropped.
		{"2pps", 2 * 8 * 200, 3 * element.Second, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) { heldFramesRun(t, tc.rate, tc.maxDelay, tc.full, tc.expired) })
	}
}

func heldFramesRun(t *testing.T, rate int64, maxDelay element.Time, full, expired bool) {
	l := newLab(t, "fattree:4", map[string]string{"controller": "h9"})
	l.discover(t)
	h1, _ := l.g.Lookup("h1")
	h16, _ := l.g.Lookup("h16")
	_, sip, _ := l.g.HostAddr(h1)
	_, dip, _ := l.g.HostAddr(h16)
	up1, up2 := fabricLink(t, l, "s20", "s11"), fabricLink(t, l, "s20", "s12")
	start := l.s.Now()
	u := l.hosts[h1]
	var res func() (sent, port uint64)
	l.s.At(start, func() {
		a := u.UDP(dip.Addr(), 7000, rate, 200, 8*element.Second)
		res = func() (uint64, uint64) { r := a.Result(); return r.Sent, uint64(r.SrcPort) }
	})
	l.s.At(start+element.Second, func() { _ = l.s.SetLink(up1, false); _ = l.s.SetLink(up2, false) })
	l.s.At(start+6*element.Second, func() { _ = l.s.SetLink(up2, true) })
	l.s.Run(start + 9*element.Second)
	sent, port := res()
	fl, ok := l.hosts[h16].UDPFlow(sip.Addr(), uint16(port), 7000)
	if !ok {
		t.Fatal("nothing received")
	}
	c := l.f.Agent(h1).Counters()
	t.Logf("sent %d, received %d, max delay %v, drop_queue_full %d, drop_held_expired %d", sent, fl.Packets, fl.DelayMax, c["drop_queue_full"], c["drop_held_expired"])
	if fl.DelayMax > maxDelay {
		t.Fatalf("a datagram arrived %v after it was sent, want at most %v", fl.DelayMax, maxDelay)
	}
	if (c["drop_queue_full"] > 0) != full || (c["drop_held_expired"] > 0) != expired {
		t.Fatalf("drop_queue_full %d, drop_held_expired %d: want some %v, %v", c["drop_queue_full"], c["drop_held_expired"], full, expired)
	}
}
