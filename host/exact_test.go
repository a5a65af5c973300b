package host

import (
	"encoding/binary"
	"errors"
	"math"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

// Tests that pin behaviour a second mutation sweep found no test held.

// sweepConn is an ESTABLISHED connection of a's, never handshaken, for
// white-box tests of the sender's arithmetic: nothing sent, an open
// window.
func sweepConn(a, b *Host, port uint16) *TCPConn {
	c := a.newConn(connKey{b.Addr().As4(), port, 80})
	c.state = StateEstablished
	c.sndUna, c.sndWnd, c.maxSndWnd = 0, 1<<20, 1<<20
	return c
}

// inFlight gives c n bytes written and sent, none acknowledged.
func inFlight(c *TCPConn, n int64) { c.sndNxt, c.sndMax, c.sndEnd = n, n, n }

// TestAckAtMaxSndWndEdge: an ACK exactly MAX.SND.WND behind SND.UNA is
// still acceptable, (SND.UNA - MAX.SND.WND) =< SEG.ACK (RFC 5961 §5.2);
// one byte further back is dropped with a challenge ACK.
func TestAckAtMaxSndWndEdge(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	seg := func(ack uint32, off uint32) []byte {
		s := append(tcpHdr(DiscardPort, c.key.lport, srv.seqOf(srv.sndNxt)+off, ack, flagACK, nil), make([]byte, 100)...)
		return frameTo(b, a, protoTCP, s)
	}
	edge := c.seqOf(c.sndUna) - uint32(c.maxSndWnd)
	a.Receive(1, seg(edge-1, 0))
	if c.BytesReceived() != 0 || a.Counter("tcp_ack_too_old") != 1 {
		t.Fatalf("one byte past the edge: received %d, %v", c.BytesReceived(), a.Counters())
	}
	a.Receive(1, seg(edge, 0))
	if c.BytesReceived() != 100 || a.Counter("tcp_ack_too_old") != 1 {
		t.Fatalf("at the edge: received %d, %v", c.BytesReceived(), a.Counters())
	}
}

// TestNotDuplicateAcks: an ACK that does not advance SND.UNA is a
// duplicate only if data is outstanding, it carries no data and neither
// SYN nor FIN, and the window is unchanged (RFC 5681 §2 (a)-(e)).
func TestNotDuplicateAcks(t *testing.T) {
	for _, tc := range []struct {
		name        string
		outstanding bool
		size        int
		flags       uint8
	}{
		{"nothing outstanding", false, 0, flagACK},
		{"carrying data", true, 100, flagACK | flagPSH},
		{"carrying a FIN", true, 0, flagACK | flagFIN},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, a, b, _, _ := pair(t, gbps, 10*us, nil)
			n.run(sec)
			c, srv := establish(t, n, a, b)
			if tc.outstanding {
				c.Write(10 * c.mss) // in flight, not delivered: the net does not run
			}
			wnd := uint16(c.sndWnd >> c.sndWS)
			for i := range 3 {
				seq := srv.seqOf(srv.sndNxt) + uint32(i*tc.size)
				s := append(tcpHdr(DiscardPort, c.key.lport, seq, c.seqOf(c.sndUna), tc.flags, nil), make([]byte, tc.size)...)
				binary.BigEndian.PutUint16(s[14:16], wnd)
				a.Receive(1, frameTo(b, a, protoTCP, s))
			}
			if a.Counter("tcp_dupack_rx") != 0 || c.FastRetransmits() != 0 || c.InRecovery() {
				t.Fatalf("counted as duplicate ACKs: %v", a.Counters())
			}
		})
	}
}

// TestTimeoutsResetByProgress: MaxRetries bounds consecutive timeouts
// only; a new ACK starts the count over, so two loss episodes of two
// timeouts each do not kill a connection with MaxRetries 2.
func TestTimeoutsResetByProgress(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, func(c *Config) { c.TCP.MaxRetries = 2 })
	n.run(sec)
	c, srv := establish(t, n, a, b)
	data := 0
	ab.drop = func(f []byte) bool {
		if !isData(f) {
			return false
		}
		data++
		return data%3 != 0 // each write: two transmissions lost, the third through
	}
	c.Write(1000)
	n.run(n.now + 5*sec)
	c.Write(1000)
	n.run(n.now + 5*sec)
	if c.Err() != nil || c.Timeouts() != 4 || srv.BytesReceived() != 2000 {
		t.Fatalf("err %v, %d timeouts, %d received; want nil, 4, 2000", c.Err(), c.Timeouts(), srv.BytesReceived())
	}
}

// TestSpuriousTimeoutNoResend: after a timeout sent the sender back to
// SND.UNA, an ACK for everything sent before (the segments were late, not
// lost) moves SND.NXT up with SND.UNA: acknowledged data is not sent again.
func TestSpuriousTimeoutNoResend(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c := sweepConn(a, b, 40000)
	mss := c.mss
	inFlight(c, 10*mss)
	c.onRTO()
	if c.Retransmits() != 1 || c.sndNxt != mss {
		t.Fatalf("after the timeout: %d retransmits, SND.NXT %d", c.Retransmits(), c.sndNxt)
	}
	c.newAck(10 * mss)
	c.push()
	if c.Retransmits() != 1 || c.sndNxt != 10*mss {
		t.Fatalf("after the late ACK: %d retransmits, SND.NXT %d; want 1, %d", c.Retransmits(), c.sndNxt, 10*mss)
	}
}

// TestCongestionArithmetic pins the window arithmetic at its boundaries:
// RFC 3465 slow start (L = 2 SMSS) and byte counting in congestion
// avoidance, RFC 6582 full and partial acknowledgments, RFC 5681 eq. 4's
// floor on a fast retransmit, RFC 6582 §3.2 step 1 after a timeout, and
// the retransmission timer turned off once all is acknowledged (RFC 6298
// §5.2).
func TestCongestionArithmetic(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	port := uint16(40000)
	conn := func() *TCPConn { port++; return sweepConn(a, b, port) }
	mss := conn().mss

	c := conn() // slow start: one ACK of 5 segments grows cwnd by 2
	inFlight(c, 10*mss)
	c.newAck(5 * mss)
	if c.cwnd != 12*mss {
		t.Errorf("slow start, 5 segments acked at once: cwnd %d, want %d", c.cwnd, 12*mss)
	}
	c.newAck(10 * mss)
	if c.rtoAt != 0 {
		t.Errorf("all acknowledged: retransmission deadline %v, want off", c.rtoAt)
	}

	c = conn() // congestion avoidance: the excess carries over
	c.cwnd, c.ssthresh = 10*mss, 10*mss
	inFlight(c, 20*mss)
	c.newAck(15 * mss)
	if c.cwnd != 11*mss || c.caAcc != 5*mss {
		t.Errorf("CA, 15 segments acked: cwnd %d caAcc %d, want %d, %d", c.cwnd, c.caAcc, 11*mss, 5*mss)
	}

	c = conn() // an ACK of all but the last byte of recover is partial
	c.cwnd, c.ssthresh = 10*mss, 5*mss
	inFlight(c, 20*mss)
	c.inRecovery, c.recover = true, 20*mss-1
	c.newAck(20*mss - 1)
	if !c.inRecovery {
		t.Errorf("ACK of recover's byte still missing ended recovery")
	}

	c = conn() // full ACK with more sent since: cwnd = min(ssthresh, flight + mss)
	c.cwnd, c.ssthresh = 8*mss, 5*mss
	inFlight(c, 20*mss)
	c.inRecovery, c.recover = true, 10*mss-1
	c.newAck(10 * mss)
	if c.inRecovery || c.cwnd != 5*mss {
		t.Errorf("full ACK: recovery %v cwnd %d, want false, %d", c.inRecovery, c.cwnd, 5*mss)
	}

	c = conn() // a large partial ACK deflates to one segment, no lower
	c.cwnd, c.ssthresh = 4*mss, 5*mss
	inFlight(c, 20*mss)
	c.inRecovery, c.recover = true, 20*mss-1
	c.newAck(10 * mss)
	if c.cwnd != mss {
		t.Errorf("partial ACK of 10 segments with cwnd 4: cwnd %d, want %d", c.cwnd, mss)
	}

	c = conn() // fast retransmit with 3 segments out: ssthresh floor 2 SMSS
	inFlight(c, 3*mss)
	for range 3 {
		c.dupAck()
	}
	if c.FastRetransmits() != 1 || c.ssthresh != 2*mss || c.cwnd != 5*mss {
		t.Errorf("fast retransmit: %d, ssthresh %d cwnd %d; want 1, %d, %d", c.FastRetransmits(), c.ssthresh, c.cwnd, 2*mss, 5*mss)
	}

	c = conn() // SND.UNA at recover does not cover it: no fast retransmit
	inFlight(c, 10*mss)
	c.sndUna, c.recover = 5*mss, 5*mss
	for range 3 {
		c.dupAck()
	}
	if c.FastRetransmits() != 0 {
		t.Errorf("three duplicates at SND.UNA = recover: fast retransmit")
	}

	c = conn() // after a timeout, duplicates of the go-back-N do not trigger one
	inFlight(c, 10*mss)
	c.caAcc = 3 * mss
	c.onRTO()
	if c.caAcc != 0 {
		t.Errorf("caAcc %d after a timeout, want 0", c.caAcc)
	}
	for range 3 {
		c.dupAck()
	}
	if c.FastRetransmits() != 0 {
		t.Errorf("three duplicates after a timeout: fast retransmit")
	}
}

// TestRTTEstimator pins RFC 6298 §2: RTTVAR = R/2 on the first sample,
// then beta = 1/4 and alpha = 1/8; the RTO is capped at MaxRTO; a sample
// ends the backoff, so the next timeout is a new loss (RFC 5681 eq. 4
// halves ssthresh again).
func TestRTTEstimator(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, func(c *Config) { c.TCP.MinRTO = 1 })
	n.run(sec)
	c := sweepConn(a, b, 40000)
	c.rttSample(100 * us)
	c.rttSample(200 * us)
	if c.srtt != 112500*element.Nanosecond || c.rttvar != 62500*element.Nanosecond || c.rto != 362500*element.Nanosecond {
		t.Errorf("srtt %v rttvar %v rto %v; want 112.5, 62.5, 362.5 us", c.srtt, c.rttvar, c.rto)
	}
	c = sweepConn(a, b, 40001)
	c.rttSample(100 * sec)
	if c.rto != a.cfg.TCP.MaxRTO {
		t.Errorf("rto %v for a 100 s sample, want MaxRTO %v", c.rto, a.cfg.TCP.MaxRTO)
	}
	c = sweepConn(a, b, 40002)
	mss := c.mss
	c.backoff, c.ssthresh = 2, 100*mss
	c.rttSample(100 * us)
	inFlight(c, 10*mss)
	c.onRTO()
	if c.ssthresh != 5*mss {
		t.Errorf("timeout after a fresh sample: ssthresh %d, want %d", c.ssthresh, 5*mss)
	}
}

// TestResetOneByteAhead: only a reset exactly at RCV.NXT is obeyed (RFC
// 5961 §3.2); one a byte ahead is challenged.
func TestResetOneByteAhead(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, _ := establish(t, n, a, b)
	a.Receive(1, frameTo(b, a, protoTCP, tcpHdr(DiscardPort, c.key.lport, c.rseqOf(c.rcvNxt)+1, 0, flagRST, nil)))
	if c.State() != StateEstablished || a.Counter("tcp_rst_challenged") != 1 {
		t.Fatalf("reset at RCV.NXT+1: %v, %v", c.State(), a.Counters())
	}
}

// TestDelayedACKImmediateCases: with delayed ACKs on, a duplicate segment
// (one ending exactly at RCV.NXT) and a segment that fills a hole are
// acknowledged at once (RFC 9293 §3.10.7.4; RFC 5681 §4.2: "an ACK
// SHOULD be generated immediately when a segment fills in ... a gap").
func TestDelayedACKImmediateCases(t *testing.T) {
	n, a, b, _, ba := pair(t, gbps, 10*us, func(c *Config) { c.TCP.DelayedACK = true })
	n.run(sec)
	c, srv := establish(t, n, a, b)
	base := c.seqOf(c.sndNxt)
	send := func(off uint32, size int) int {
		mark := len(ba.log)
		seg := append(tcpHdr(c.key.lport, DiscardPort, base+off, c.rseqOf(c.rcvNxt), flagACK, nil), make([]byte, size)...)
		b.Receive(1, frameTo(a, b, protoTCP, seg))
		return len(ba.log) - mark
	}
	send(0, 100)
	if got := send(100, 100); got != 1 || srv.unacked != 0 {
		t.Fatalf("second segment: %d ACKs", got)
	}
	if got := send(100, 100); got != 1 || b.Counter("tcp_rx_duplicate") != 1 {
		t.Fatalf("duplicate ending at RCV.NXT: %d ACKs, %v", got, b.Counters())
	}
	if got := send(300, 100); got != 1 {
		t.Fatalf("out of order: %d ACKs", got)
	}
	if got := send(200, 100); got != 1 || tcpAck(ba.log[len(ba.log)-1].f) != base+400 {
		t.Fatalf("hole filled: %d ACKs", got)
	}
}

// TestTimeWaitRestartsOnFINOnly: TIME-WAIT restarts on a retransmitted FIN
// (RFC 9293 §3.10.7.4, "eighth, check the FIN bit"); an old data segment
// is acknowledged but does not extend the wait.
func TestTimeWaitRestartsOnFINOnly(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, _ := establish(t, n, a, b)
	c.Close()
	n.run(n.now + ms)
	if c.State() != StateTimeWait {
		t.Fatalf("client %v", c.State())
	}
	ab.drop = func([]byte) bool { return true }
	entered := n.now
	n.run(entered + 900*ms)
	old := append(tcpHdr(DiscardPort, c.key.lport, c.rseqOf(c.rcvNxt-1)-1, c.seqOf(c.sndNxt), flagACK, nil), 0)
	mark := len(ab.log)
	a.Receive(1, frameTo(b, a, protoTCP, old))
	if len(ab.log) != mark+1 {
		t.Fatalf("old segment in TIME-WAIT: %d ACKs", len(ab.log)-mark)
	}
	n.run(entered + a.cfg.TCP.TimeWait)
	if c.State() != StateClosed {
		t.Fatalf("client %v at the end of TIME-WAIT", c.State())
	}
}

// TestOutOfOrderDuplicateHeldOnce: the same out-of-order segment twice is
// held once, charged once.
func TestOutOfOrderDuplicateHeldOnce(t *testing.T) {
	_, a, b, _, _ := pair(t, gbps, 10*us, nil)
	c := sweepConn(a, b, 40000)
	c.storeOOO(1000, make([]byte, 100))
	c.storeOOO(1000, make([]byte, 100))
	if len(c.ooo) != 1 || c.oooBytes != oooMinCharge {
		t.Fatalf("%d segments, %d bytes charged; want 1, %d", len(c.ooo), c.oooBytes, oooMinCharge)
	}
}

// TestSynSentResets: in SYN-SENT a reset without ACK is dropped, one
// whose ACK is not our SYN's draws no reset of ours and is dropped, one
// acknowledging our SYN refuses the connection (RFC 9293 §3.10.7.3).
func TestSynSentResets(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	ab.drop = func(f []byte) bool { return f[ethLen+9] == protoTCP }
	c, err := a.Connect(ipB, DiscardPort)
	if err != nil {
		t.Fatal(err)
	}
	rst := func(flags uint8, ack uint32) {
		a.Receive(1, frameTo(b, a, protoTCP, tcpHdr(DiscardPort, c.key.lport, 5000, ack, flags, nil)))
	}
	rst(flagRST, 0)
	rst(flagRST|flagACK, c.iss+2)
	if c.State() != StateSynSent || c.Err() != nil || a.Counter("tcp_rst_tx") != 0 {
		t.Fatalf("unacceptable resets: %v, %v, %v", c.State(), c.Err(), a.Counters())
	}
	rst(flagRST|flagACK, c.iss+1)
	if !errors.Is(c.Err(), ErrRefused) {
		t.Fatalf("acceptable reset: %v, %v", c.State(), c.Err())
	}
}

// TestSynRcvdHandshakeAck: in SYN-RECEIVED an ACK of anything but our SYN
// draws a reset and leaves the state (RFC 9293 §3.10.7.4); the right one
// establishes, its window scaled by the peer's shift, and sets SND.WL1 to
// its sequence number, so that a window update with the same SEG.SEQ is
// taken.
func TestSynRcvdHandshakeAck(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	b.Receive(1, frameTo(a, b, protoTCP, tcpHdr(40000, DiscardPort, 1000, 0, flagSYN, []byte{2, 4, 5, 0xb4, 1, 3, 3, 5})))
	srv := b.Conn(FlowKey{LocalPort: DiscardPort, Remote: ipA, RemotePort: 40000})
	if srv == nil {
		t.Fatal("no connection")
	}
	ack := func(ack uint32, wnd uint16) {
		s := tcpHdr(40000, DiscardPort, 1001, ack, flagACK, nil)
		binary.BigEndian.PutUint16(s[14:16], wnd)
		b.Receive(1, frameTo(a, b, protoTCP, s))
	}
	ack(srv.iss+2, 1000)
	if srv.State() != StateSynRcvd || b.Counter("tcp_rst_tx") != 1 {
		t.Fatalf("bad handshake ACK: %v, %v", srv.State(), b.Counters())
	}
	ack(srv.iss+1, 1000)
	if srv.State() != StateEstablished || srv.sndWnd != 1000<<5 {
		t.Fatalf("handshake ACK: %v, window %d; want %d", srv.State(), srv.sndWnd, 1000<<5)
	}
	ack(srv.iss+1, 0)
	if srv.sndWnd != 0 {
		t.Fatalf("window update with the handshake's SEG.SEQ ignored: window %d", srv.sndWnd)
	}
}

// TestSynOnEstablishedChallenged: a SYN on a synchronized connection
// draws one challenge ACK (RFC 5961 §4.2), at RCV.NXT.
func TestSynOnEstablishedChallenged(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, _ := establish(t, n, a, b)
	mark := len(ab.log)
	a.Receive(1, frameTo(b, a, protoTCP, tcpHdr(DiscardPort, c.key.lport, 777, 0, flagSYN, nil)))
	if len(ab.log) != mark+1 || tcpFlags(ab.log[mark].f) != flagACK || tcpAck(ab.log[mark].f) != c.rseqOf(c.rcvNxt) {
		t.Fatalf("%d segments after a SYN; %v", len(ab.log)-mark, a.Counters())
	}
}

// TestPersistArmedOnlyWithNothingInFlight: a window that closes with
// data in flight leaves the retransmission deadline where it was; every
// segment received must not push it back.
func TestPersistArmedOnlyWithNothingInFlight(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c := sweepConn(a, b, 40000)
	inFlight(c, 5*c.mss)
	c.sndEnd, c.sndWnd = 10*c.mss, 0
	c.setRTO(n.now + c.rto)
	at := c.rtoAt
	n.run(n.now + ms)
	c.push()
	if c.rtoAt != at {
		t.Fatalf("deadline moved from %v to %v", at, c.rtoAt)
	}
}

// TestFINUnderZeroWindow: a FIN goes out under a zero window (it needs no
// room), as a bare FIN without PSH; lost, it is retransmitted on timeout,
// not probed for with a data byte past the end of the stream.
func TestFINUnderZeroWindow(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	a.Receive(1, zeroWindow(a, b, c, srv))
	ab.drop = func([]byte) bool { return true }
	mark := len(ab.log)
	c.Close()
	n.run(n.now + 300*ms)
	var segs []uint8
	for _, s := range ab.log[mark:] {
		if len(s.f) != ethLen+ipLen+tcpLen {
			t.Fatalf("a segment with payload: %d bytes", len(s.f))
		}
		segs = append(segs, tcpFlags(s.f))
	}
	if len(segs) != 2 || segs[0] != flagFIN|flagACK || segs[1] != flagFIN|flagACK || c.Timeouts() != 1 || a.Counter("tcp_window_probe") != 0 {
		t.Fatalf("segments %v, %d timeouts, %v", segs, c.Timeouts(), a.Counters())
	}
}

// TestProbesAreNotRetransmissions: window probes, the first and those
// after it, count as tcp_window_probe only (docs/host.md), not as
// retransmissions, which SegmentInfo would report to a host agent.
func TestProbesAreNotRetransmissions(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	a.Receive(1, zeroWindow(a, b, c, srv))
	ab.drop = func([]byte) bool { return true }
	c.Write(10_000)
	n.run(n.now + 10*sec)
	if a.Counter("tcp_window_probe") < 3 || c.Retransmits() != 0 || a.Counter("tcp_retransmit") != 0 {
		t.Fatalf("%d probes, %d retransmits", a.Counter("tcp_window_probe"), c.Retransmits())
	}
}

// TestPersistKarn: a segment in flight when the window closed, probed for
// by the persist timer, gives no RTT sample when acknowledged: its time
// includes the wait (Karn's algorithm, RFC 6298 §3).
func TestPersistKarn(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	srtt := c.SRTT()
	ab.drop = func([]byte) bool { return true }
	c.Write(10 * c.mss)
	zero := tcpHdr(DiscardPort, c.key.lport, srv.seqOf(srv.sndNxt), c.seqOf(c.sndUna), flagACK, nil)
	zero[14], zero[15] = 0, 0
	a.Receive(1, frameTo(b, a, protoTCP, zero))
	n.run(n.now + 500*ms)
	if a.Counter("tcp_window_probe") == 0 {
		t.Fatalf("no probe: %v", a.Counters())
	}
	all := tcpHdr(DiscardPort, c.key.lport, srv.seqOf(srv.sndNxt), c.seqOf(10*c.mss), flagACK, nil)
	a.Receive(1, frameTo(b, a, protoTCP, all))
	if c.BytesAcked() != 10*c.mss || c.SRTT() != srtt {
		t.Fatalf("acked %d, srtt %v, want %v", c.BytesAcked(), c.SRTT(), srtt)
	}
}

// TestResetsWithoutConnection: a SYN-ACK for no connection is answered
// with a reset at its ACK (RFC 9293 §3.10.7.2, LISTEN: any ACK is bad),
// not accepted; a FIN without ACK is answered with <ACK=SEG.SEQ+SEG.LEN>,
// the FIN counted (§3.10.7.1).
func TestResetsWithoutConnection(t *testing.T) {
	n, a, b, _, ba := pair(t, gbps, 10*us, nil)
	n.run(sec)
	var rsts [][]byte
	recv := func(seg []byte) {
		mark := len(ba.log)
		b.Receive(1, frameTo(a, b, protoTCP, seg))
		n.run(n.now + ms) // b resolves a first
		for _, s := range ba.log[mark:] {
			if s.f[12] == 0x08 && s.f[13] == 0 && s.f[ethLen+9] == protoTCP {
				rsts = append(rsts, s.f)
			}
		}
	}
	recv(tcpHdr(40000, DiscardPort, 1000, 5555, flagSYN|flagACK, nil))
	if b.NumConns() != 0 || len(rsts) != 1 || tcpFlags(rsts[0]) != flagRST || tcpSeq(rsts[0]) != 5555 {
		t.Fatalf("SYN-ACK to a listener: %d conns, %v", b.NumConns(), b.Counters())
	}
	recv(append(tcpHdr(40001, DiscardPort, 1000, 0, flagFIN, nil), make([]byte, 10)...))
	if len(rsts) != 2 || tcpFlags(rsts[1]) != flagRST|flagACK || tcpAck(rsts[1]) != 1011 {
		t.Fatalf("FIN without connection: %v", b.Counters())
	}
}

// TestWindowShiftAndMSSBounds: the window shift is the least that makes
// the window fit 16 bits (a window of exactly 65535 needs none), and the
// MSS is the smaller of ours and the peer's (RFC 9293 §3.7.1).
func TestWindowShiftAndMSSBounds(t *testing.T) {
	for _, tc := range []struct{ wnd, shift int }{{65535, 0}, {65536, 1}} {
		_, a, b, _, _ := pair(t, gbps, us, func(c *Config) { c.TCP.RecvWindow = tc.wnd })
		if c := a.newConn(connKey{b.Addr().As4(), 40000, 80}); int(c.rcvWS) != tc.shift {
			t.Errorf("window %d: shift %d, want %d", tc.wnd, c.rcvWS, tc.shift)
		}
	}
	_, a, b, _, _ := pair(t, gbps, us, nil)
	c := a.newConn(connKey{b.Addr().As4(), 40000, 80})
	c.synOptions(&tcpSeg{mss: 9000, wscale: -1, wnd: 65535})
	if c.mss != 1460 {
		t.Errorf("peer MSS 9000 at MTU 1500: mss %d, want 1460", c.mss)
	}
}

// TestReceiverNoCompletion: completion is the acknowledgment of the last
// data byte; a connection that sent none (the sink) has no completion
// time and no goodput.
func TestReceiverNoCompletion(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	var srv *TCPConn
	b.Listen(7000, func(c *TCPConn) { srv = c })
	c := a.TCPBulk(ipB, 7000, 10_000)
	n.run(n.now + sec)
	if !c.Done() || c.Result().Completed == 0 || srv == nil || srv.State() != StateClosed {
		t.Fatalf("transfer not complete: %v", a.Counters())
	}
	if r := srv.Result(); r.Completed != 0 || r.GoodputBps != 0 {
		t.Fatalf("the sink: completed %d goodput %v", r.Completed, r.GoodputBps)
	}
}

// TestSegmentInfoSequenceZero: the retransmission record holds the last
// 16 sequence numbers; its unused slots are not sequence number 0. An
// outgoing segment at sequence number 0 of a connection that resent one
// segment was once reported as a retransmission.
func TestSegmentInfoSequenceZero(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, _ := establish(t, n, a, b)
	c.rxmt, c.rxmtI, c.retransmits = &[16]uint32{12345}, 1, 1
	c.iss = ^uint32(c.sndNxt) // the next segment is at sequence number 0
	c.sendAck()
	f := ab.log[len(ab.log)-1].f
	if tcpSeq(f) != 0 {
		t.Fatalf("seq %d", tcpSeq(f))
	}
	if _, rxmt, ok := a.SegmentInfo(f); !ok || rxmt {
		t.Fatalf("segment at sequence number 0: rxmt %v ok %v", rxmt, ok)
	}
}

// dhcpSent returns the DHCP messages host h (node 0 of n) sent, with
// their times.
func dhcpSent(t *testing.T, n *fakeNet) (at []element.Time, ms []*dhcpv4.DHCPv4) {
	t.Helper()
	for _, s := range n.nodes[0].ports[1].log {
		f := s.f
		if binary.BigEndian.Uint16(f[12:14]) != wire.EtherTypeIPv4 || f[ethLen+9] != protoUDP ||
			binary.BigEndian.Uint16(f[ethLen+ipLen+2:]) != wire.DHCPServerPort {
			continue
		}
		m, err := wire.DecodeDHCP(f)
		if err != nil {
			t.Fatal(err)
		}
		at, ms = append(at, s.t), append(ms, m)
	}
	return at, ms
}

// TestDHCPDiscoverBackoff: DISCOVERs unanswered are retransmitted after 4,
// 8, 16, 32, 64, 64 s, each randomised by -1 to +1 s (RFC 2131 §4.1).
func TestDHCPDiscoverBackoff(t *testing.T) {
	n, _, s := dhcpPair(t, 0)
	s.silent = true
	n.run(300 * sec)
	at, _ := dhcpSent(t, n)
	if len(at) < 7 {
		t.Fatalf("%d DISCOVERs in 300 s", len(at))
	}
	for i := 1; i < 7; i++ {
		base := 4 * sec << min(i-1, 4)
		if d := at[i] - at[i-1]; d < base-sec || d >= base+sec {
			t.Errorf("retransmission %d after %v, want %v +- 1 s", i, d, base)
		}
	}
}

// TestDHCPNakRestartsAfterFirstBackoff: after a NAK the client starts
// over after the first backoff (4 +- 1 s), not one grown by the requests
// before it.
func TestDHCPNakRestartsAfterFirstBackoff(t *testing.T) {
	n, h, s := dhcpPair(t, 0)
	s.nak = true
	n.run(5 * sec)
	if h.Counter("dhcp_nak_rx") < 1 || h.Counter("dhcp_discover_tx") != 2 {
		t.Fatalf("%d DISCOVERs within 5 s of a NAK; %v", h.Counter("dhcp_discover_tx"), h.Counters())
	}
}

// TestDHCPRepliesChecked: an OFFER for another client hardware address is
// not ours; an OFFER without a server identifier (which RFC 2131 Table 3
// makes a MUST) is a bad offer.
func TestDHCPRepliesChecked(t *testing.T) {
	n, h, s := dhcpPair(t, 0)
	s.silent = true
	n.run(ms)
	b := dhcpReply(t, h, h.dhcp.xid, dhcpv4.MessageTypeOffer, net.IPv4(10, 0, 0, 7))
	b[28+5] ^= 1 // chaddr
	h.dhcp.receive(b)
	if h.Counter("dhcp_not_ours") != 1 || h.dhcp.state != DHCPSelecting {
		t.Fatalf("offer for another MAC: %v", h.Counters())
	}
	m, err := dhcpv4.New(dhcpv4.WithTransactionID(h.dhcp.xid), dhcpv4.WithHwAddr(h.mac[:]),
		dhcpv4.WithMessageType(dhcpv4.MessageTypeOffer), dhcpv4.WithYourIP(net.IPv4(10, 0, 0, 7)))
	if err != nil {
		t.Fatal(err)
	}
	m.OpCode = dhcpv4.OpcodeBootReply
	h.dhcp.receive(m.ToBytes())
	if h.Counter("drop_dhcp_bad_offer") != 1 || h.dhcp.state != DHCPSelecting {
		t.Fatalf("offer without server identifier: %v", h.Counters())
	}
}

// TestDHCPLeaseTimeBounds: T1 or T2 equal to the lease is out of order
// and falls back to its default (lease/2, 7/8 lease, RFC 2131 §4.4.5); a
// zero lease is taken as one second; a non-contiguous mask as /24.
func TestDHCPLeaseTimeBounds(t *testing.T) {
	n, h, s := dhcpPair(t, time.Hour)
	hour := time.Hour
	s.t1 = &hour
	n.run(ms)
	if l, _ := h.DHCP(); l.Renew-l.Bound != 1800*sec {
		t.Errorf("T1 = lease: renewal after %v, want 30 min", l.Renew-l.Bound)
	}
	n, h, s = dhcpPair(t, time.Hour)
	s.t2 = &hour
	n.run(ms)
	if l, _ := h.DHCP(); l.Rebind-l.Bound != 3150*sec {
		t.Errorf("T2 = lease: rebinding after %v, want 52.5 min", l.Rebind-l.Bound)
	}
	n, h, s = dhcpPair(t, time.Hour)
	zero := uint32(0)
	s.leaseSecs = &zero
	n.run(ms)
	if l, _ := h.DHCP(); l.Expires-l.Bound != sec {
		t.Errorf("zero lease: %v, want 1 s", l.Expires-l.Bound)
	}
	n, h, s = dhcpPair(t, time.Hour)
	s.silent = true
	n.run(ms)
	h.dhcp.state = DHCPRequesting
	m, err := dhcpv4.New(dhcpv4.WithTransactionID(h.dhcp.xid), dhcpv4.WithHwAddr(h.mac[:]),
		dhcpv4.WithMessageType(dhcpv4.MessageTypeAck), dhcpv4.WithYourIP(net.IPv4(10, 0, 0, 7)),
		dhcpv4.WithNetmask(net.IPMask{255, 0, 255, 0}))
	if err != nil {
		t.Fatal(err)
	}
	m.OpCode = dhcpv4.OpcodeBootReply
	h.dhcp.receive(m.ToBytes())
	if h.Prefix() != netip.MustParsePrefix("10.0.0.7/24") {
		t.Errorf("mask 255.0.255.0: prefix %v, want 10.0.0.7/24", h.Prefix())
	}
}

// TestDHCPOverloadOrder: an option continued in both 'file' and 'sname'
// concatenates in that order (RFC 3396 §6: options, file, sname): the
// first router is the one in 'file'.
func TestDHCPOverloadOrder(t *testing.T) {
	n, h, s := dhcpPair(t, 0)
	s.silent = true
	n.run(ms)
	h.dhcp.state = DHCPRequesting
	m, err := dhcpv4.New(dhcpv4.WithTransactionID(h.dhcp.xid), dhcpv4.WithHwAddr(h.mac[:]),
		dhcpv4.WithMessageType(dhcpv4.MessageTypeAck), dhcpv4.WithYourIP(net.IPv4(10, 0, 0, 7)),
		dhcpv4.WithGeneric(dhcpv4.OptionOptionOverload, []byte{3}))
	if err != nil {
		t.Fatal(err)
	}
	m.OpCode = dhcpv4.OpcodeBootReply
	b := m.ToBytes()
	copy(b[108:], []byte{3, 4, 10, 0, 0, 254, 255}) // file
	copy(b[44:], []byte{3, 4, 10, 0, 0, 253, 255})  // sname
	h.dhcp.receive(b)
	if l, _ := h.DHCP(); l.Router != netip.MustParseAddr("10.0.0.254") {
		t.Fatalf("router %v, want 10.0.0.254; %v", l.Router, h.Counters())
	}
}

// TestDHCPRenewalCarriesCiaddr: a renewal REQUEST carries the address in
// ciaddr (RFC 2131 §4.3.2, RENEWING), and the lease expires exactly at
// its end when nobody answers.
func TestDHCPRenewalCarriesCiaddr(t *testing.T) {
	n, h, s := dhcpPair(t, 16*time.Second)
	n.run(ms)
	l, _ := h.DHCP()
	addr := h.Addr()
	s.silent = true
	n.run(l.Renew + ms)
	at, msgs := dhcpSent(t, n)
	last := len(msgs) - 1
	if at[last] < l.Renew || !msgs[last].ClientIPAddr.Equal(net.IP(addr.AsSlice())) { // after ARP for the server
		t.Fatalf("renewal at %v with ciaddr %v; want from %v, %v", at[last], msgs[last].ClientIPAddr, l.Renew, addr)
	}
	n.run(l.Expires - 1)
	if h.Addr() != addr {
		t.Fatalf("address gone before the lease's end")
	}
	n.run(l.Expires)
	if h.Addr().IsValid() {
		t.Fatalf("address kept at the lease's end")
	}
}

// TestARPStaleProbedOnce: packets to a stale entry re-confirm it with one
// round of requests, not one per packet; a reply makes it fresh for
// exactly ARPTimeout.
func TestARPStaleProbedOnce(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(ms)
	bip := b.Addr()
	e := &arpEntry{ip: bip, mac: b.mac, resolved: true, expires: n.now}
	a.arp.m[bip.As4()] = e
	req := a.Counter("arp_request_tx")
	for range 3 {
		a.resolveAndSend(bip, a.newIPFrame(bip.As4(), protoUDP, udpLen))
	}
	if a.Counter("arp_refresh") != 1 || a.Counter("arp_request_tx") != req+1 {
		t.Fatalf("three packets to a stale entry: %v", a.Counters())
	}
	n.run(n.now + ms)
	if got, _ := a.ARPCache(bip); got.Expires != e.expires || e.expires <= n.now-ms || e.expires > n.now+a.cfg.ARPTimeout {
		t.Fatalf("entry %+v", got)
	}
	a.arpLearn(e, b.mac)
	if e.expires != n.now+a.cfg.ARPTimeout {
		t.Fatalf("learned at %v: expires %v, want %v", n.now, e.expires, n.now+a.cfg.ARPTimeout)
	}
}

// TestARPPacketsNotTaken: a zero sender hardware address is invalid; our
// own gratuitous ARP coming back (a hub floods it) is no conflict; an
// address probe answered by a reply is not answered again.
func TestARPPacketsNotTaken(t *testing.T) {
	n, a, _, ab, _ := pair(t, gbps, us, nil)
	n.run(sec)
	arp := func(op uint16, smac wire.MAC, sip netip.Addr) {
		f, err := wire.AppendARPFrame(nil, wire.Broadcast, 0, &wire.ARP{Op: op, SenderMAC: smac, SenderIP: sip, TargetIP: ipA})
		if err != nil {
			t.Fatal(err)
		}
		a.Receive(1, f)
	}
	arp(wire.ARPRequest, wire.MAC{}, netip.MustParseAddr("10.0.0.9"))
	if a.Counter("drop_arp_invalid") != 1 {
		t.Fatalf("zero sender MAC: %v", a.Counters())
	}
	arp(wire.ARPRequest, a.mac, ipA)
	if a.Counter("arp_conflict") != 0 {
		t.Fatalf("our own announcement: %v", a.Counters())
	}
	mark := len(ab.log)
	arp(wire.ARPReply, wire.MAC{2, 0, 0, 0, 0, 9}, netip.AddrFrom4([4]byte{}))
	if len(ab.log) != mark {
		t.Fatalf("a reply with sender 0.0.0.0 was answered")
	}
}

// TestUDPFlowAccounting: a flow record with no packets has lost none; a
// datagram without the app's magic is counted on its port only; a
// 20-byte payload carries the app header; the goodput is the bytes over
// the first-to-last span plus one interval; the largest payload is MTU -
// 28 bytes.
func TestUDPFlowAccounting(t *testing.T) {
	if l := (&UDPFlowStats{}).Lost(); l != 0 {
		t.Errorf("empty flow lost %d", l)
	}
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	a.finishUDP(ipB, a.sendUDP(ipB, 5000, 9000, make([]byte, 40), 0))
	n.run(n.now + ms)
	if _, ok := b.UDPFlow(ipA, 5000, 9000); ok || b.UDPPort(9000).Packets != 1 {
		t.Errorf("datagram without magic taken as a flow")
	}
	u := a.UDP(ipB, 9001, 1_600_000, udpHdrLen, 10*ms)
	n.run(n.now + sec)
	r := u.ResultWith(b)
	if r.Sent != 100 || r.Received != 100 || math.Abs(r.GoodputBps-1.6e6) > 1e-3 {
		t.Errorf("20-byte datagrams: %+v", r)
	}
	if u := a.UDP(ipB, 9002, gbps, a.cfg.MTU-ipLen-udpLen, ms); u.Err() != nil {
		t.Errorf("largest payload: %v", u.Err())
	}
}

// TestUDPChecksumZeroSentAsOnes: a computed checksum of zero goes out as
// 0xffff (RFC 768), and is accepted.
func TestUDPChecksumZeroSentAsOnes(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, us, nil)
	n.run(sec)
	p := make([]byte, 2)
	f := a.sendUDP(ipB, 5000, 9000, p, 0)
	c0 := l4Checksum(ipA.As4(), ipB.As4(), protoUDP, f[ethLen+ipLen:])
	binary.BigEndian.PutUint16(f[ethLen+ipLen+udpLen:], c0) // the sum now folds to zero
	a.finishUDP(ipB, f)
	n.run(n.now + ms)
	got := ab.log[len(ab.log)-1].f
	if binary.BigEndian.Uint16(got[ethLen+ipLen+6:]) != 0xffff || b.UDPPort(9000).Packets != 1 {
		t.Fatalf("checksum %#x, %v", binary.BigEndian.Uint16(got[ethLen+ipLen+6:]), b.Counters())
	}
}

// TestParseEdgeCases: a UDP checksum of zero means none (RFC 768); TCP
// options stop at end-of-list; an MSS option of the wrong length and an
// option of length 0 are bad; Ethernet padding is not payload.
func TestParseEdgeCases(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	u := frameTo(a, b, protoUDP, []byte{0x13, 0x88, 0x23, 0x28, 0, 10, 0, 0, 1, 2})
	u[ethLen+ipLen+6], u[ethLen+ipLen+7] = 0, 0
	b.Receive(1, u)
	if b.UDPPort(9000).Packets != 1 {
		t.Errorf("UDP without checksum dropped: %v", b.Counters())
	}
	parse := func(f []byte) (tcpSeg, string) {
		ip, reason := parseIPv4(f[ethLen:])
		if reason != "" {
			t.Fatal(reason)
		}
		return parseTCP(&ip)
	}
	if s, reason := parse(frameTo(a, b, protoTCP, tcpHdr(1, 2, 0, 0, flagSYN, []byte{0, 2, 4, 5, 0xb4, 0, 0, 0}))); reason != "" || s.mss != 0 {
		t.Errorf("MSS after end-of-list: mss %d (%q), want 0", s.mss, reason)
	}
	for _, opts := range [][]byte{{2, 5, 5, 0xb4, 0, 0, 0, 0}, {8, 0, 0, 0}} {
		if _, reason := parse(frameTo(a, b, protoTCP, tcpHdr(1, 2, 0, 0, flagSYN, opts))); reason != dropTCPOption {
			t.Errorf("options %v: %q, want %q", opts, reason, dropTCPOption)
		}
	}
	f := append(frameTo(a, b, protoTCP, tcpHdr(1, 2, 0, 0, flagACK, nil)), make([]byte, 6)...)
	if s, reason := parse(f); reason != "" || len(s.payload) != 0 {
		t.Errorf("padded segment: payload %d (%q)", len(s.payload), reason)
	}
}

// TestDHCPRebindRetryFloor: in REBINDING the client retries half of the
// time left to expiry, down to a minimum of 60 s (RFC 2131 §4.4.5): with
// a 1000 s lease, broadcasts leave at T2 (875 s), +62.5 s and +122.5 s
// (31.25 s, under the floor, became 60 s), then the lease expires. The
// floor was 1 s.
func TestDHCPRebindRetryFloor(t *testing.T) {
	n, h, s := dhcpPair(t, 1000*time.Second)
	n.run(ms)
	l, _ := h.DHCP()
	s.silent = true
	n.run(l.Rebind - ms)
	base := h.Counter("dhcp_request_tx")
	for _, c := range []struct {
		at   element.Time
		want uint64 // requests since T2
	}{{l.Rebind, 1}, {l.Rebind + 62500*ms, 2}, {l.Rebind + 122500*ms - ms, 2}, {l.Rebind + 122500*ms, 3}, {l.Expires - ms, 3}} {
		n.run(c.at)
		if got := h.Counter("dhcp_request_tx") - base; got != c.want {
			t.Fatalf("%d requests at T2%+v, want %d", got, c.at-l.Rebind, c.want)
		}
	}
	n.run(l.Expires)
	if h.Counter("dhcp_expired") != 1 {
		t.Fatalf("not expired: %v", h.Counters())
	}
}
