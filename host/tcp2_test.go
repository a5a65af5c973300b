package host

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/edgefabric/edgefabric/element"
)

func tcpFlags(f []byte) uint8 { return f[ethLen+ipLen+13] }

// Two losses in one window: one fast retransmit, the second hole repaired
// from the partial ACK (RFC 6582 §3.2 step 4), no timeout.
func TestNewRenoPartialAck(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 20*us, nil)
	n.run(sec)
	k := 0
	ab.drop = func(f []byte) bool {
		if !isData(f) {
			return false
		}
		k++
		return k == 40 || k == 44
	}
	var got int64
	b.Listen(7000, func(c *TCPConn) { c.OnData(func(_ *TCPConn, p []byte) { got += int64(len(p)) }) })
	c := a.TCPBulk(ipB, 7000, 2_000_000)
	n.run(5 * sec)
	if c.Err() != nil || got != 2_000_000 {
		t.Fatalf("err %v got %d", c.Err(), got)
	}
	if c.FastRetransmits() != 1 || c.Retransmits() != 2 || c.Timeouts() != 0 {
		t.Fatalf("fast %d rxmt %d timeouts %d", c.FastRetransmits(), c.Retransmits(), c.Timeouts())
	}
}

// With delayed ACKs a lone segment is acknowledged exactly DelayedACKTimeout
// after it arrived; full segments in a stream get one ACK per two.
func TestDelayedACK(t *testing.T) {
	const d = 10 * us
	n, a, b, ab, ba := pair(t, gbps, d, func(c *Config) { c.TCP.DelayedACK = true })
	n.run(sec)
	c, err := a.Connect(ipB, DiscardPort)
	if err != nil {
		t.Fatal(err)
	}
	n.run(sec + ms)
	if c.State() != StateEstablished {
		t.Fatalf("state %v", c.State())
	}
	start := n.now
	mark := len(ba.log)
	c.Write(100)
	n.run(start + 100*ms)
	arrive := start + ser(154, gbps) + d
	acks := ba.log[mark:]
	if len(acks) != 1 || acks[0].t != arrive+40*ms || b.Counter("tcp_delayed_ack") != 1 {
		t.Fatalf("acks %d at %v, want one at %v; %v", len(acks), acks[0].t, arrive+40*ms, b.Counters())
	}
	// A stream of full segments: one ACK per two segments.
	mark, dmark := len(ba.log), len(ab.log)
	c.Write(100 * 1460)
	n.run(n.now + 100*ms)
	data := 0
	for _, s := range ab.log[dmark:] {
		if isData(s.f) {
			data++
		}
	}
	if got := len(ba.log) - mark; data != 100 || got != 50 {
		t.Fatalf("%d data segments, %d ACKs; want 100 and 50", data, got)
	}
}

// The active closer lingers in TIME-WAIT and re-acknowledges a
// retransmitted FIN when its last ACK was lost.
func TestTimeWait(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	var srv *TCPConn
	b.Listen(7000, func(c *TCPConn) { srv = c })
	c := a.TCPBulk(ipB, 7000, 1000)
	// Lose a's ACK of b's FIN, the first time.
	lost := false
	ab.drop = func(f []byte) bool {
		if !lost && srv != nil && srv.state == StateLastAck && !isData(f) && tcpFlags(f) == flagACK {
			lost = true
			return true
		}
		return false
	}
	n.run(sec + 10*ms)
	if c.State() != StateTimeWait || !c.Done() || c.Err() != nil {
		t.Fatalf("client %v done %v err %v", c.State(), c.Done(), c.Err())
	}
	if !lost || srv.State() != StateLastAck {
		t.Fatalf("lost %v server %v", lost, srv.State())
	}
	n.run(sec + 500*ms) // the server's FIN times out and comes again
	if srv.State() != StateClosed || srv.Err() != nil || srv.Timeouts() != 1 {
		t.Fatalf("server %v err %v timeouts %d", srv.State(), srv.Err(), srv.Timeouts())
	}
	n.run(3 * sec)
	if c.State() != StateClosed || a.NumConns() != 0 || b.NumConns() != 0 {
		t.Fatalf("client %v, conns %d/%d", c.State(), a.NumConns(), b.NumConns())
	}
}

// Resets: an exactly in-sequence one aborts, one elsewhere in the window
// draws a challenge ACK, one outside is ignored (RFC 5961 §3.2).
func TestReset(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	rst := func(seq uint32) []byte {
		return frameTo(b, a, protoTCP, tcpHdr(DiscardPort, c.key.lport, seq, 0, flagRST, nil))
	}
	a.Receive(1, rst(srv.seqOf(srv.sndNxt)+1000))
	if c.State() != StateEstablished || a.Counter("tcp_rst_challenged") != 1 || a.Counter("tcp_challenge_ack") != 1 {
		t.Fatalf("in window: state %v counters %v", c.State(), a.Counters())
	}
	a.Receive(1, rst(srv.seqOf(srv.sndNxt)+uint32(a.cfg.TCP.RecvWindow)+1000))
	if c.State() != StateEstablished || a.Counter("tcp_rst_out_of_window") != 1 || a.Counter("tcp_challenge_ack") != 1 {
		t.Fatalf("out of window: state %v counters %v", c.State(), a.Counters())
	}
	a.Receive(1, rst(srv.seqOf(srv.sndNxt)))
	if c.State() != StateClosed || !errors.Is(c.Err(), ErrReset) || !c.Done() {
		t.Fatalf("state %v err %v", c.State(), c.Err())
	}
	// A SYN on an established connection draws a challenge ACK.
	c2, _ := a.Connect(ipB, DiscardPort)
	n.run(n.now + ms)
	a.Receive(1, frameTo(b, a, protoTCP, tcpHdr(DiscardPort, c2.key.lport, 12345, 0, flagSYN, nil)))
	if a.Counter("tcp_challenge_ack") != 2 || c2.State() != StateEstablished {
		t.Fatalf("counters %v", a.Counters())
	}
	c2.Abort()
	c2.Write(10)
	c2.WriteBytes([]byte{1})
	if a.Counter("tcp_write_after_close") != 2 {
		t.Fatalf("writes after close not counted: %v", a.Counters())
	}
	n.run(n.now + ms)
	if b.Conn(FlowKey{LocalPort: DiscardPort, Remote: ipA, RemotePort: c2.key.lport}) != nil || !errors.Is(c2.Err(), ErrReset) {
		t.Fatalf("abort: b has %d conns, err %v, counters %v", b.NumConns(), c2.Err(), b.Counters())
	}
}

// The handshake negotiates MSS and window scaling; the 1 MiB window is
// what the sender sees.
func TestHandshakeOptions(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, func(c *Config) { c.MTU = 9000 })
	n.run(sec)
	c, _ := a.Connect(ipB, DiscardPort)
	n.run(sec + ms)
	// The SYN-ACK's window is never scaled (RFC 7323 §2.2): the client
	// sees 65535 until the first ACK carries a scaled one.
	if c.sndWnd != 65535 {
		t.Fatalf("window after handshake %d", c.sndWnd)
	}
	c.Write(1000)
	n.run(sec + 2*ms)
	srv := b.Conn(FlowKey{LocalPort: DiscardPort, Remote: ipA, RemotePort: c.key.lport})
	if c.MSS() != 8960 || srv.MSS() != 8960 || c.rcvWS != 5 || c.sndWS != 5 || c.sndWnd != 1<<20 || srv.sndWnd != 1<<20 {
		t.Fatalf("mss %d/%d ws %d/%d wnd %d/%d", c.MSS(), srv.MSS(), c.rcvWS, c.sndWS, c.sndWnd, srv.sndWnd)
	}
	if c.Cwnd() != 10*8960 {
		t.Fatalf("initial cwnd %d", c.Cwnd())
	}
	// A peer offering neither option: MSS 536, no scaling.
	n2 := &fakeNet{}
	h := New(Config{Name: "x", MAC: [6]byte{2, 0, 0, 0, 0, 1}, IP: netip.PrefixFrom(ipA, 24)})
	h2 := New(Config{Name: "y", MAC: [6]byte{2, 0, 0, 0, 0, 2}, IP: netip.PrefixFrom(ipB, 24)})
	e1, e2 := n2.add(h, 1), n2.add(h2, 2)
	ab2, _ := n2.connect(e1, 1, e2, 1, gbps, us)
	// Strip the options from the client's SYN on the wire.
	ab2.drop = func(f []byte) bool {
		if len(f) > ethLen+ipLen+tcpLen && f[ethLen+9] == protoTCP && tcpFlags(f) == flagSYN {
			f[ethLen+ipLen+12] = tcpLen / 4 << 4
			for i := ethLen + ipLen + tcpLen; i < len(f); i++ {
				f[i] = 1 // no-ops
			}
			fixL4(f)
		}
		return false
	}
	n2.attach()
	n2.run(sec)
	c3, _ := h.Connect(ipB, DiscardPort)
	n2.run(sec + ms)
	srv3 := h2.Conn(FlowKey{LocalPort: DiscardPort, Remote: ipA, RemotePort: c3.key.lport})
	if srv3 == nil || srv3.MSS() != 536 || srv3.sndWS != 0 || srv3.rcvWS != 0 {
		t.Fatalf("server conn %+v", srv3)
	}
	if c3.State() != StateEstablished || c3.sndWS != 0 || c3.rcvWS != 0 {
		t.Fatalf("client: state %v ws %d/%d", c3.State(), c3.sndWS, c3.rcvWS)
	}
}

// Link down: frames are dropped and counted; link up: a gratuitous ARP.
func TestLinkChange(t *testing.T) {
	n, a, _, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	a.LinkChange(1, false)
	p := a.Ping(ipB, 1, ms)
	n.run(3 * sec)
	if a.Counter("drop_link_down") == 0 || p.Result().Received != 0 {
		t.Fatalf("counters %v", a.Counters())
	}
	a.LinkChange(1, true)
	if a.Counter("arp_gratuitous_tx") != 2 {
		t.Fatalf("counters %v", a.Counters())
	}
	a.LinkChange(2, false) // not a port of a host: ignored
}

// Constant-rate UDP: the exact number of datagrams, loss as the receiver
// saw it.
func TestUDPConstantRate(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, us, nil)
	n.run(sec)
	k := 0
	ab.drop = func(f []byte) bool {
		if f[ethLen+9] == protoUDP {
			k++
			return k%10 == 0
		}
		return false
	}
	u := a.UDP(ipB, 9000, 80_000_000, 1000, 10*ms) // one per 100 us
	n.run(2 * sec)
	r := u.ResultWith(b)
	if !u.Done() || r.Sent != 100 || r.Received != 90 || *r.Lost != 10 || *r.Loss != 0.1 {
		t.Fatalf("result %+v", r)
	}
	if r.End-r.Start != 99*100*us {
		t.Fatalf("span %v", r.End-r.Start)
	}
	fs, _ := b.UDPFlow(ipA, u.srcPort, 9000)
	if fs.Lost() != 10 && fs.MaxSeq != 98 { // the last one (seq 99) was dropped
		t.Fatalf("flow %+v", fs)
	}
	if bad := a.UDP(ipB, 9000, 0, 1000, ms); bad.Err() == nil || !bad.Done() {
		t.Fatal("zero rate accepted")
	}
	if bad := a.UDP(ipB, 9000, 1000, 2000, ms); !errors.Is(bad.Err(), ErrBadArgument) {
		t.Fatal("oversize datagram accepted")
	}
}

// A lost echo reply: the ping completes after its timeout with the loss
// counted.
func TestPingLoss(t *testing.T) {
	n, a, _, _, ba := pair(t, gbps, us, nil)
	n.run(sec)
	a.Ping(ipB, 1, ms)
	n.run(2 * sec)
	k := 0
	ba.drop = func(f []byte) bool {
		if f[ethLen+9] == protoICMP {
			k++
			return k == 2
		}
		return false
	}
	p := a.PingWith(ipB, PingOptions{Count: 4, Interval: 10 * ms, Timeout: 500 * ms})
	n.run(2*sec + 30*ms + 100*us)
	if p.Done() {
		t.Fatal("done before the timeout")
	}
	n.run(3 * sec)
	r := p.Result()
	if !p.Done() || r.Sent != 4 || r.Received != 3 || r.Loss != 0.25 {
		t.Fatalf("result %+v", r)
	}
	_ = element.Time(0)
}

// A peer that closes its window: the sender stops, probes with one byte
// when the persist timer fires, and resumes when the window reopens.
func TestZeroWindowProbe(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, _ := a.Connect(ipB, DiscardPort)
	n.run(sec + ms)
	srv := b.Conn(FlowKey{LocalPort: DiscardPort, Remote: ipA, RemotePort: c.key.lport})
	// b "advertises" a zero window, acknowledging everything so far.
	a.Receive(1, zeroWindow(a, b, c, srv))
	if c.sndWnd != 0 {
		t.Fatalf("window %d", c.sndWnd)
	}
	mark := len(ab.log)
	c.Write(10_000)
	n.run(n.now + 100*ms)
	if len(ab.log) != mark {
		t.Fatalf("sent %d frames into a zero window", len(ab.log)-mark)
	}
	// The persist timer (RTO) fires and probes with one byte; b's real
	// ACK reopens the window and the rest follows.
	n.run(n.now + 2*sec)
	if a.Counter("tcp_window_probe") != 1 || c.BytesAcked() != 10_000 || srv.BytesReceived() != 10_000 {
		t.Fatalf("probe %d acked %d received %d", a.Counter("tcp_window_probe"), c.BytesAcked(), srv.BytesReceived())
	}
}

// Sequence numbers wrap: both ends start within 5 MB of 2^32 and a 10 MB
// transfer with a loss crosses the wrap on both sides.
func TestSequenceWrap(t *testing.T) {
	near := func(stream uint64) uint64 {
		for s := uint64(1); ; s++ {
			if v := rand.New(rand.NewPCG(s, stream)).Uint32(); v > math.MaxUint32-5_000_000 {
				return s
			}
		}
	}
	sa, sb := near(0), near(1)
	n, a, b, ab, _ := pairSeeded(t, sa, sb, gbps, 20*us, nil)
	n.run(sec)
	k := 0
	ab.drop = func(f []byte) bool {
		if isData(f) {
			k++
			return k == 3000
		}
		return false
	}
	var got int64
	var srv *TCPConn
	b.Listen(7000, func(c *TCPConn) {
		srv = c
		c.OnData(func(_ *TCPConn, p []byte) { got += int64(len(p)) })
	})
	c := a.TCPBulk(ipB, 7000, 10_000_000)
	if c.iss < math.MaxUint32-5_000_000 {
		t.Fatalf("iss %d not near the wrap", c.iss)
	}
	n.run(10 * sec)
	if c.Err() != nil || got != 10_000_000 || c.BytesAcked() != 10_000_000 || c.FastRetransmits() != 1 || c.Timeouts() != 0 {
		t.Fatalf("err %v got %d acked %d fast %d timeouts %d", c.Err(), got, c.BytesAcked(), c.FastRetransmits(), c.Timeouts())
	}
	if srv.iss < math.MaxUint32-5_000_000 {
		t.Fatalf("server iss %d", srv.iss)
	}
}

// Off-subnet traffic goes to the gateway's MAC; without a gateway it is
// dropped and counted.
func TestGatewayAndNoRoute(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, us, func(c *Config) {
		if c.Name == "a" {
			c.Gateway = netip.MustParseAddr("10.0.0.2")
		}
	})
	n.run(sec)
	far := netip.MustParseAddr("192.168.7.7")
	a.Ping(far, 1, ms)
	n.run(2 * sec)
	last := ab.log[len(ab.log)-1].f
	if [6]byte(last[0:6]) != b.MAC() || [4]byte(last[ethLen+16:ethLen+20]) != far.As4() {
		t.Fatalf("echo to % x", last[:ethLen+20])
	}
	if b.Counter("drop_ip_not_for_us") != 1 { // b is no router
		t.Fatalf("b %v", b.Counters())
	}
	b.Ping(far, 1, ms)
	n.run(3 * sec)
	if b.Counter("drop_no_route") != 1 {
		t.Fatalf("b %v", b.Counters())
	}
}

// TestResetWithHoleChallenged: the receiver waits on a lost segment when
// the sender aborts, so the sender's reset lands inside the window but not
// at RCV.NXT. The challenge ACK it draws reaches a sender without the
// connection, whose reset is then exact: the receiver closes too (it once
// stayed ESTABLISHED for good).
func TestResetWithHoleChallenged(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	var lost uint32
	var data int
	ab.drop = func(f []byte) bool {
		ip := f[ethLen:]
		if ip[9] != protoTCP {
			return false
		}
		tcp := ip[int(ip[0]&0xf)*4:]
		payload := int(binary.BigEndian.Uint16(ip[2:4])) - int(ip[0]&0xf)*4 - int(tcp[12]>>4)*4
		if payload == 0 {
			return false
		}
		seq := binary.BigEndian.Uint32(tcp[4:8])
		if data++; data == 2 {
			lost = seq
		}
		return data >= 2 && seq == lost
	}
	c := a.TCPBulk(ipB, DiscardPort, 1<<20)
	n.run(n.now + 20*ms)
	srv := b.Conn(FlowKey{LocalPort: DiscardPort, Remote: ipA, RemotePort: c.key.lport})
	if srv == nil || srv.State() != StateEstablished {
		t.Fatal("not established")
	}
	c.Abort()
	n.run(n.now + 20*ms)
	if b.NumConns() != 0 || b.Counter("tcp_rst_challenged") != 1 {
		t.Fatalf("receiver: %d conns, counters %v", b.NumConns(), b.Counters())
	}
}

// TestBlindResetInSynRcvd: a reset with a guessed sequence number does not
// close a half-open connection; the exact one does (RFC 5961 §3.2 applies
// in every state but SYN-SENT).
func TestBlindResetInSynRcvd(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	const irs, port = 5000, 40000
	b.Receive(1, frameTo(a, b, protoTCP, tcpHdr(port, DiscardPort, irs, 0, flagSYN, nil)))
	key := FlowKey{LocalPort: DiscardPort, Remote: ipA, RemotePort: port}
	if c := b.Conn(key); c == nil || c.State() != StateSynRcvd {
		t.Fatal("no half-open connection")
	}
	b.Receive(1, frameTo(a, b, protoTCP, tcpHdr(port, DiscardPort, irs+1+123456789, 0, flagRST, nil)))
	if c := b.Conn(key); c == nil || b.Counter("tcp_rst_out_of_window") != 1 {
		t.Fatalf("a blind reset closed the half-open connection: %v", b.Counters())
	}
	b.Receive(1, frameTo(a, b, protoTCP, tcpHdr(port, DiscardPort, irs+1, 0, flagRST, nil)))
	if b.Conn(key) != nil || b.Counter("tcp_reset_in_syn_rcvd") != 1 {
		t.Fatalf("the exact reset did not close it: %v", b.Counters())
	}
}

// TestDataBeyondWindowCounted: data starting past the receive window, and
// out-of-order data past what the reassembly queue may hold, are dropped
// and counted (RecvWindow 4000 here: three overlapping 1400-byte segments
// ahead of RCV.NXT fill it).
func TestDataBeyondWindowCounted(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, func(c *Config) { c.TCP.RecvWindow = 4000 })
	n.run(sec)
	c, srv := establish(t, n, a, b)
	data := func(off uint32) []byte {
		seg := append(tcpHdr(c.key.lport, DiscardPort, c.seqOf(c.sndNxt)+off, c.rseqOf(c.rcvNxt), flagACK, nil), make([]byte, 1400)...)
		return frameTo(a, b, protoTCP, seg)
	}
	b.Receive(1, data(5000))
	if b.Counter("drop_tcp_out_of_window") != 1 {
		t.Fatalf("past the window: %v", b.Counters())
	}
	for off := uint32(1); off <= 3; off++ {
		b.Receive(1, data(off))
	}
	if b.Counter("drop_tcp_ooo_full") != 1 || b.Counter("tcp_rx_out_of_order") != 3 {
		t.Fatalf("reassembly queue: %v", b.Counters())
	}
	if srv.State() != StateEstablished {
		t.Fatalf("server %v", srv.State())
	}
}

// establish connects a to b's discard port and returns both ends.
// zeroWindow is srv's ACK of everything it has received on c's connection
// with a zero window, as a frame for c's host a.
func zeroWindow(a, b *Host, c, srv *TCPConn) []byte {
	zero := tcpHdr(DiscardPort, c.key.lport, srv.seqOf(srv.sndNxt), srv.rseqOf(srv.rcvNxt), flagACK, nil)
	zero[14], zero[15] = 0, 0
	return frameTo(b, a, protoTCP, zero)
}

func establish(t *testing.T, n *fakeNet, a, b *Host) (c, srv *TCPConn) {
	t.Helper()
	c, _ = a.Connect(ipB, DiscardPort)
	n.run(n.now + ms)
	srv = b.Conn(FlowKey{LocalPort: DiscardPort, Remote: ipA, RemotePort: c.key.lport})
	if srv == nil || c.State() != StateEstablished {
		t.Fatal("not established")
	}
	return c, srv
}

// A datagram stamped at time 0 (a UDP workload starting with the run) is
// in the delay statistics like any other: the mean divides their sum by
// every packet, and it was left out of the sum.
func TestUDPDelayStampedAtZero(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	p := make([]byte, udpHdrLen)
	binary.BigEndian.PutUint32(p[0:4], udpMagic) // seq 0, sent at 0
	a.finishUDP(ipB, a.sendUDP(ipB, 5000, 9000, p, len(p)))
	n.run(2 * sec)
	fs, ok := b.UDPFlow(ipA, 5000, 9000)
	if !ok || fs.Packets != 1 || fs.DelaySum < sec || fs.DelayMax != fs.DelaySum {
		t.Fatalf("flow %+v (%v): the datagram sent at 0 is not in the delay sum", fs, ok)
	}
}
