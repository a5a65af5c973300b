package host

import (
	"testing"
)

// Findings of a second review of the TCP model's timers (review4): each
// test failed before its fix.

// TestWindowOpeningEndsProbeCount: an ACK that opens a closed window
// answers the window probes, as a zero window's ACK does, so the probes
// left unanswered before it count no more towards MaxRetries (Linux
// clears icsk_probes_out on every ACK, tcp_ack). A window update at
// SND.UNA (the probe's byte refused) kept the count: after three
// unanswered probes, with MaxRetries 4, the data sent once the window
// opened was given up on at its second timeout instead of its fifth.
func TestWindowOpeningEndsProbeCount(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, func(c *Config) { c.TCP.MaxRetries = 4 })
	n.run(sec)
	c, srv := establish(t, n, a, b)
	a.Receive(1, zeroWindow(a, b, c, srv))
	ab.drop = func([]byte) bool { return true } // probes, then data, lost
	c.Write(10 * c.mss)
	for a.Counter("tcp_window_probe") < 3 {
		n.run(n.now + 100*ms)
	}
	n.run(n.now + 100*ms)
	open := tcpHdr(DiscardPort, c.key.lport, srv.seqOf(srv.sndNxt), srv.rseqOf(srv.rcvNxt), flagACK, nil)
	a.Receive(1, frameTo(b, a, protoTCP, open))
	n.run(n.now + 10*60*sec)
	if c.State() != StateClosed || c.Timeouts() != 4 || a.Counter("tcp_window_probe") != 3 {
		t.Fatalf("state %v (%v) after %d timeouts, want closed after 4; %v", c.State(), c.Err(), c.Timeouts(), a.Counters())
	}
}
