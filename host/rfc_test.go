package host

import (
	"encoding/binary"
	"testing"
)

func tcpAck(f []byte) uint32 { return binary.BigEndian.Uint32(f[ethLen+ipLen+8:]) }

// TestZeroWindowPersists: a receiver that keeps its window closed for
// minutes but answers every probe must not make the sender give up (RFC
// 1122 §4.2.2.17: "MUST NOT close the connection merely because the
// peer's receive window is zero for a long time"); the sender keeps
// probing, backing off to MaxRTO, without counting timeouts or taking
// the zero-window answers for duplicate ACKs, and resumes when the window
// opens. It once sent a single probe, then timed out 15 times in silence
// and aborted.
func TestZeroWindowPersists(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	zeroAck := zeroWindow(a, b, c, srv)
	a.Receive(1, zeroAck)
	// b's window stays closed: a's segments never reach it, and each is
	// answered with the same zero-window ACK.
	probes := 0
	ab.drop = func(f []byte) bool {
		if f[ethLen+9] != protoTCP {
			return false
		}
		if tcpFlags(f)&flagRST != 0 {
			return true
		}
		probes++
		n.at(n.now+20*us, func() { a.Receive(1, zeroAck) })
		return true
	}
	c.Write(10_000)
	n.run(n.now + 30*60*sec)
	if c.Err() != nil || c.State() != StateEstablished {
		t.Fatalf("gave up on a zero window: %v in %v", c.Err(), c.State())
	}
	if probes < 30 || a.Counter("tcp_window_probe") != uint64(probes) {
		t.Fatalf("%d segments sent, %d probes counted: %v", probes, a.Counter("tcp_window_probe"), a.Counters())
	}
	if c.Timeouts() != 0 || c.FastRetransmits() != 0 || c.RTO() != a.cfg.TCP.MaxRTO {
		t.Fatalf("timeouts %d fast retransmits %d rto %v", c.Timeouts(), c.FastRetransmits(), c.RTO())
	}
	// The window opens: the next probe reaches b, whose ACK reopens it.
	ab.drop = nil
	n.run(n.now + 2*60*sec)
	if c.BytesAcked() != 10_000 || srv.BytesReceived() != 10_000 {
		t.Fatalf("acked %d received %d", c.BytesAcked(), srv.BytesReceived())
	}
}

// TestStaleWindowIgnored: the peer's window is taken only from its newest
// segment (RFC 9293 §3.10.7.4: SND.WL1 < SEG.SEQ, or SND.WL1 = SEG.SEQ and
// SND.WL2 =< SEG.ACK). A data segment that advertised a zero window and
// arrives after the later window update must not close the window again:
// the sender once stalled until its persist timer fired.
func TestStaleWindowIgnored(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	seq, ack := srv.seqOf(srv.sndNxt), srv.rseqOf(srv.rcvNxt)
	// b sent 100 bytes with a zero window, then (its app having read
	// them) a window update; they arrive in the opposite order.
	update := tcpHdr(DiscardPort, c.key.lport, seq+100, ack, flagACK, nil)
	old := append(tcpHdr(DiscardPort, c.key.lport, seq, ack, flagACK|flagPSH, nil), make([]byte, 100)...)
	old[14], old[15] = 0, 0
	a.Receive(1, frameTo(b, a, protoTCP, update))
	a.Receive(1, frameTo(b, a, protoTCP, old))
	if c.BytesReceived() != 100 || c.sndWnd != 65535<<c.sndWS {
		t.Fatalf("received %d, window %d", c.BytesReceived(), c.sndWnd)
	}
	mark := len(ab.log)
	c.Write(1000)
	if len(ab.log) == mark || !isData(ab.log[len(ab.log)-1].f) {
		t.Fatal("the sender stalled on a stale zero window")
	}
}

// TestRetransmittedFINAcked: a peer's FIN that comes again after we
// acknowledged it (our ACK was lost) lies below RCV.NXT, and an
// unacceptable segment is answered with an ACK in every synchronized
// state (RFC 9293 §3.10.7.4), not only in TIME-WAIT: here the server in
// LAST-ACK, whose own FIN does not get through, answers the client's
// retransmitted FIN at once. It once counted it as data after the FIN and
// stayed silent.
func TestRetransmittedFINAcked(t *testing.T) {
	n, a, b, _, ba := pair(t, gbps, 10*us, nil)
	n.run(sec)
	var srv *TCPConn
	b.Listen(7000, func(c *TCPConn) { srv = c })
	c := a.TCPBulk(ipB, 7000, 1000)
	// From LAST-ACK on, everything b sends is lost but the ACKs are
	// recorded on the wire's log.
	ba.drop = func(f []byte) bool { return srv != nil && srv.state == StateLastAck }
	n.run(sec + 10*ms)
	if srv.State() != StateLastAck || c.State() != StateFinWait1 {
		t.Fatalf("server %v client %v", srv.State(), c.State())
	}
	mark := len(ba.log)
	n.run(sec + 300*ms) // the client's FIN times out and comes again
	if c.Timeouts() != 1 {
		t.Fatalf("client timeouts %d", c.Timeouts())
	}
	acks := 0
	for _, s := range ba.log[mark:] {
		if tcpFlags(s.f) == flagACK && tcpAck(s.f) == srv.rseqOf(srv.rcvNxt) {
			acks++
		}
	}
	if acks != 1 {
		t.Fatalf("%d ACKs of the retransmitted FIN; counters %v", acks, b.Counters())
	}
}

// TestTimeWaitRestarts: a retransmitted FIN in TIME-WAIT is acknowledged
// and restarts the TIME-WAIT timer (RFC 9293 §3.10.7.4, TIME-WAIT: "restart
// the 2 MSL timeout"), so that the connection still answers should that
// ACK be lost too.
func TestTimeWaitRestarts(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	c.Close()
	n.run(n.now + ms)
	if c.State() != StateTimeWait || srv.State() != StateClosed {
		t.Fatalf("client %v server %v", c.State(), srv.State())
	}
	ab.drop = func([]byte) bool { return true } // b would reset the ACK
	entered := n.now
	n.run(entered + 900*ms)
	fin := tcpHdr(DiscardPort, c.key.lport, c.rseqOf(c.rcvNxt-1), c.seqOf(c.sndNxt), flagACK|flagFIN, nil)
	a.Receive(1, frameTo(b, a, protoTCP, fin))
	n.run(entered + 1500*ms)
	if c.State() != StateTimeWait {
		t.Fatalf("client %v 600 ms after a FIN in TIME-WAIT: %v", c.State(), a.Counters())
	}
	n.run(entered + 2*sec)
	if c.State() != StateClosed || a.NumConns() != 0 || c.Err() != nil {
		t.Fatalf("client %v, %d conns, err %v", c.State(), a.NumConns(), c.Err())
	}
}

// TestResetInTimeWait: an exact reset ends TIME-WAIT (RFC 9293
// §3.10.7.4: "enter the CLOSED state, delete the TCB"), but the
// connection had completed: no error, no abort. It once reported
// "connection reset" on a transfer that had finished.
func TestResetInTimeWait(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, _ := establish(t, n, a, b)
	c.Close()
	n.run(n.now + ms)
	if c.State() != StateTimeWait || !c.Done() {
		t.Fatalf("client %v", c.State())
	}
	a.Receive(1, frameTo(b, a, protoTCP, tcpHdr(DiscardPort, c.key.lport, c.rseqOf(c.rcvNxt), 0, flagRST, nil)))
	if c.State() != StateClosed || a.NumConns() != 0 || c.Err() != nil || a.Counter("tcp_abort") != 0 {
		t.Fatalf("client %v, %d conns, err %v, %v", c.State(), a.NumConns(), c.Err(), a.Counters())
	}
}

// TestOutOfOrderTinySegmentsBounded: out-of-order segments are charged at
// least oooMinCharge bytes each against the reassembly allowance, as
// Linux charges an skb's true size: a peer sending one-byte segments
// with gaps cannot make the receiver hold a million tiny buffers (and
// shift a million-entry queue for every insertion) within a 1 MiB
// allowance. Full-size segments are charged their length.
func TestOutOfOrderTinySegmentsBounded(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	const k = 10_000
	base := c.seqOf(c.sndNxt)
	for i := range k {
		seg := append(tcpHdr(c.key.lport, DiscardPort, base+uint32(2+2*i), c.rseqOf(c.rcvNxt), flagACK, nil), 0)
		b.Receive(1, frameTo(a, b, protoTCP, seg))
	}
	limit := b.cfg.TCP.RecvWindow / oooMinCharge
	if len(srv.ooo) != limit || b.Counter("drop_tcp_ooo_full") != k-uint64(limit) {
		t.Fatalf("%d segments held (limit %d), counters %v", len(srv.ooo), limit, b.Counters())
	}
	if srv.State() != StateEstablished {
		t.Fatalf("server %v", srv.State())
	}
}

// TestTooOldAckDropped: a segment whose acknowledgment lies before
// SND.UNA - MAX.SND.WND cannot come from the peer (RFC 5961 §5.2, the
// blind data injection defence): it is dropped and draws a challenge
// ACK, and its data is not delivered. It once was taken as "an old ACK"
// with new data.
func TestTooOldAckDropped(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	seg := func(ack uint32) []byte {
		s := append(tcpHdr(DiscardPort, c.key.lport, srv.seqOf(srv.sndNxt), ack, flagACK, nil), make([]byte, 100)...)
		return frameTo(b, a, protoTCP, s)
	}
	a.Receive(1, seg(c.seqOf(c.sndUna)-1<<30))
	if c.BytesReceived() != 0 || a.Counter("tcp_challenge_ack") != 1 || c.State() != StateEstablished {
		t.Fatalf("received %d, counters %v", c.BytesReceived(), a.Counters())
	}
	// Within MAX.SND.WND behind SND.UNA it is an old ACK: data accepted.
	a.Receive(1, seg(c.seqOf(c.sndUna)-1000))
	if c.BytesReceived() != 100 {
		t.Fatalf("received %d, counters %v", c.BytesReceived(), a.Counters())
	}
}

// TestKarnSynAckResent: a SYN-ACK sent again because the peer's SYN came
// again is a retransmission, and the ACK that completes the handshake is
// ambiguous: no RTT sample (Karn's algorithm, RFC 6298 §3). It once
// timed the handshake from the first SYN-ACK: a 1 s "RTT" on a 20 us path.
func TestKarnSynAckResent(t *testing.T) {
	n, a, b, _, ba := pair(t, gbps, 10*us, nil)
	b.cfg.TCP.InitialRTO = 3 * sec // b's own timer stays out of the way
	n.run(sec)
	first := true
	ba.drop = func(f []byte) bool {
		if f[ethLen+9] == protoTCP && tcpFlags(f) == flagSYN|flagACK && first {
			first = false
			return true
		}
		return false
	}
	c, err := a.Connect(ipB, DiscardPort)
	if err != nil {
		t.Fatal(err)
	}
	n.run(n.now + 1100*ms)
	srv := b.Conn(FlowKey{LocalPort: DiscardPort, Remote: ipA, RemotePort: c.key.lport})
	if c.State() != StateEstablished || srv == nil || srv.State() != StateEstablished {
		t.Fatalf("not established: %v", b.Counters())
	}
	if b.Counter("tcp_syn_retransmitted_by_peer") != 1 || srv.SRTT() != 0 || srv.RTO() != 3*sec {
		t.Fatalf("srtt %v rto %v after a resent SYN-ACK; %v", srv.SRTT(), srv.RTO(), b.Counters())
	}
}
