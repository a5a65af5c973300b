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

// TestWindowOpeningStartsRTO: data that leaves when a closed window opens,
// nothing being in flight, starts the retransmission timer afresh (RFC
// 6298 §5.1; Linux clears the probe timer, tcp_ack_probe, and arms the RTO
// as the data leaves). The timer kept the persist deadline: a window
// update 150 ms into a 200 ms persist wait sent the data and timed it out
// 50 ms later, a spurious timeout that cut cwnd to one segment.
func TestWindowOpeningStartsRTO(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	a.Receive(1, zeroWindow(a, b, c, srv))
	ab.drop = func([]byte) bool { return true } // no ACK comes back
	rto := c.RTO()
	c.Write(10 * c.mss)
	n.run(n.now + 150*ms)
	open := tcpHdr(DiscardPort, c.key.lport, srv.seqOf(srv.sndNxt), srv.rseqOf(srv.rcvNxt), flagACK, nil)
	a.Receive(1, frameTo(b, a, protoTCP, open))
	sent := n.now
	if c.sndNxt != 10*c.mss {
		t.Fatalf("SND.NXT %d after the window opened", c.sndNxt)
	}
	n.run(sent + rto - 1)
	if c.Timeouts() != 0 || c.Retransmits() != 0 {
		t.Fatalf("%d timeouts, %d retransmits before the RTO of the data sent", c.Timeouts(), c.Retransmits())
	}
	n.run(sent + rto)
	if c.Timeouts() != 1 {
		t.Fatalf("%d timeouts at the RTO of the data sent, want 1", c.Timeouts())
	}
}

// TestProbeBackoffEndsWithWindow: the persist timer's backoff is the
// probes' own; once the window opens, data is timed by the RTO it had
// before (Linux backs off its probe timer, icsk_backoff, without
// doubling icsk_rto, and tcp_ack_probe clears the backoff when the window
// opens). The probes doubled the RTO itself: after a window closed for 10
// s, the first segment lost once it opened waited 6.4 s, not 200 ms.
func TestProbeBackoffEndsWithWindow(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	zeroAck := zeroWindow(a, b, c, srv)
	a.Receive(1, zeroAck)
	ab.drop = func(f []byte) bool {
		if f[ethLen+9] == protoTCP {
			n.at(n.now+20*us, func() { a.Receive(1, zeroAck) }) // refused
		}
		return true
	}
	rto := c.RTO()
	c.Write(10 * c.mss)
	n.run(n.now + 10*sec)
	if a.Counter("tcp_window_probe") < 5 {
		t.Fatalf("%d probes", a.Counter("tcp_window_probe"))
	}
	ab.drop = func([]byte) bool { return true } // the data is lost
	open := tcpHdr(DiscardPort, c.key.lport, srv.seqOf(srv.sndNxt), srv.rseqOf(srv.rcvNxt), flagACK, nil)
	a.Receive(1, frameTo(b, a, protoTCP, open))
	sent := n.now
	n.run(sent + rto)
	if c.Timeouts() != 1 {
		t.Fatalf("%d timeouts %v after the window opened (RTO %v), want 1", c.Timeouts(), rto, c.RTO())
	}
}
