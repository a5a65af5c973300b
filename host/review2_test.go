package host

import (
	"testing"
)

// Findings of a further review (review2): each test failed before its fix.

// TestAckBeyondWindowIgnored: a segment whose sequence number lies past
// the receive window (RFC 9293 §3.10.7.4: not acceptable; Linux's
// tcp_sequence drops it before tcp_ack) is answered with an ACK and
// dropped, its ACK field and window unread. The host once took its window
// and made it SND.WL1: one forged or corrupted zero-window ACK far ahead
// stalled a bulk transfer for good, every later window update of the real
// peer looking older than it.
func TestAckBeyondWindowIgnored(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	ahead := srv.seqOf(srv.sndNxt) + 1<<30
	f := tcpHdr(DiscardPort, c.key.lport, ahead, c.seqOf(c.sndUna), flagACK, nil)
	f[14], f[15] = 0, 0 // a zero window
	mark := len(ab.log)
	a.Receive(1, frameTo(b, a, protoTCP, f))
	if c.sndWnd == 0 || a.Counter("drop_tcp_out_of_window") != 1 {
		t.Fatalf("window %d after a segment 2^30 ahead; counters %v", c.sndWnd, a.Counters())
	}
	if len(ab.log) != mark+1 || tcpFlags(ab.log[mark].f) != flagACK || tcpAck(ab.log[mark].f) != c.rseqOf(c.rcvNxt) {
		t.Fatalf("the unacceptable segment was not answered with one ACK at RCV.NXT (%d frames)", len(ab.log)-mark)
	}
	// The transfer runs at full speed, undisturbed.
	c.Write(10_000_000)
	c.Close()
	n.run(n.now + sec)
	if c.BytesAcked() != 10_000_000 || c.Timeouts() != 0 || a.Counter("tcp_window_probe") != 0 {
		t.Fatalf("acked %d, timeouts %d, probes %d", c.BytesAcked(), c.Timeouts(), a.Counter("tcp_window_probe"))
	}
}
