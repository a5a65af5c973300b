package host

import (
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/edgefabric/edgefabric/element"
)

// isData reports whether f is a TCP segment with payload.
func isData(f []byte) bool {
	if len(f) < ethLen+ipLen+tcpLen || f[ethLen+9] != protoTCP {
		return false
	}
	t := f[ethLen+ipLen:]
	return len(t) > int(t[12]>>4)*4
}

func tcpSeq(f []byte) uint32 { return binary.BigEndian.Uint32(f[ethLen+ipLen+4:]) }

// One flow over a 1 Gb/s link with a 100 us RTT reaches 90 % of the line
// rate in goodput over 10 MB, in virtual time.
func TestTCPLineRate(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 50*us, nil)
	n.run(sec)
	const size = 10_000_000
	c := a.TCPBulk(ipB, DiscardPort, size)
	n.run(10 * sec)
	if !c.Done() || c.Err() != nil {
		t.Fatalf("conn done=%v err=%v state %v", c.Done(), c.Err(), c.State())
	}
	r := c.Result()
	if r.BytesAcked != size || r.Retransmits != 0 || r.Timeouts != 0 {
		t.Fatalf("result %+v", r)
	}
	if r.GoodputBps < 0.9*gbps {
		t.Fatalf("goodput %.1f Mb/s, want >= 900", r.GoodputBps/1e6)
	}
	// The sink received every byte, in order.
	if b.Counter("tcp_accept") != 1 || b.NumConns() != 0 {
		t.Fatalf("sink: %v, %d conns", b.Counters(), b.NumConns())
	}
	t.Logf("goodput %.1f Mb/s, completion %.0f us, max cwnd %d, srtt %.1f us", r.GoodputBps/1e6, r.CompletionUs, r.MaxCwnd, r.SRTTUs)
	if _, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	}
}

// A single lost data segment is repaired by exactly one fast retransmit,
// with no timeout, and NewReno leaves recovery with cwnd = ssthresh.
func TestNewRenoSingleLoss(t *testing.T) {
	for _, delack := range []bool{false, true} {
		n, a, b, ab, _ := pair(t, gbps, 20*us, func(c *Config) { c.TCP.DelayedACK = delack })
		n.run(sec)
		k := 0
		ab.drop = func(f []byte) bool {
			if !isData(f) {
				return false
			}
			k++
			return k == 40
		}
		const size = 2_000_000
		var got int64
		b.Listen(7000, func(c *TCPConn) { c.OnData(func(_ *TCPConn, p []byte) { got += int64(len(p)) }) })
		c := a.TCPBulk(ipB, 7000, size)
		var ssAtRecovery int64
		var seen bool
		n.run(sec + 200*us)
		for !c.Done() && n.now < 5*sec {
			n.run(n.now + 10*us)
			if c.InRecovery() && !seen {
				seen, ssAtRecovery = true, c.Ssthresh()
			}
		}
		if c.Err() != nil || got != size {
			t.Fatalf("delack %v: err %v, delivered %d", delack, c.Err(), got)
		}
		if c.FastRetransmits() != 1 || c.Retransmits() != 1 || c.Timeouts() != 0 {
			t.Fatalf("delack %v: fast %d, rxmt %d, timeouts %d", delack, c.FastRetransmits(), c.Retransmits(), c.Timeouts())
		}
		if !seen || ssAtRecovery < 2*c.MSS() {
			t.Fatalf("delack %v: recovery not observed (ssthresh %d)", delack, ssAtRecovery)
		}
		if b.Counter("tcp_rx_out_of_order") == 0 {
			t.Fatalf("no out-of-order segments at the receiver: %v", b.Counters())
		}
	}
}

// With the path cut, the same segment is retransmitted at RTO, then 2, 4,
// 8 RTO later (RFC 6298 §5.5), and cwnd drops to one segment.
func TestRTOBackoff(t *testing.T) {
	n, a, _, ab, _ := pair(t, gbps, 20*us, nil)
	n.run(sec)
	c := a.TCPBulk(a.Addr().Next(), DiscardPort, 10_000_000) // to b: 10.0.0.2
	n.run(sec + ms)                                          // handshake and some data
	if c.State() != StateEstablished || c.BytesAcked() == 0 {
		t.Fatalf("state %v acked %d", c.State(), c.BytesAcked())
	}
	ab.drop = func([]byte) bool { return true }
	cut := len(ab.log)
	// Run until everything in flight was sent once, then cut.
	rto := c.RTO()
	if rto != 200*ms {
		t.Fatalf("rto %v, want the 200 ms floor", rto)
	}
	n.run(sec + ms + 4*sec)
	// Retransmissions are the data segments whose sequence number went
	// out before.
	var rx []sent
	seen := map[uint32]bool{}
	for _, s := range ab.log {
		if isData(s.f) {
			if seen[tcpSeq(s.f)] {
				rx = append(rx, s)
			}
			seen[tcpSeq(s.f)] = true
		}
	}
	_ = cut
	if len(rx) < 4 {
		t.Fatalf("%d retransmissions; timeouts %d, %d frames after cut, state %v, una %d max %d", len(rx), c.Timeouts(), len(ab.log)-cut, c.State(), c.sndUna, c.sndMax)
	}
	for i := 1; i < 4; i++ {
		if tcpSeq(rx[i].f) != tcpSeq(rx[0].f) {
			t.Fatalf("retransmission %d is of another segment", i)
		}
		if d := rx[i].t - rx[i-1].t; d != rto<<i {
			t.Errorf("gap %d = %v, want %v", i, d, rto<<i)
		}
	}
	if c.Timeouts() < 4 || c.Cwnd() != c.MSS() || c.FastRetransmits() != 0 {
		t.Errorf("timeouts %d cwnd %d fast %d", c.Timeouts(), c.Cwnd(), c.FastRetransmits())
	}
	// The link comes back: the transfer completes.
	ab.drop = nil
	n.run(30 * sec)
	if !c.Done() || c.Err() != nil || c.BytesAcked() != 10_000_000 {
		t.Fatalf("after repair: done %v err %v acked %d", c.Done(), c.Err(), c.BytesAcked())
	}
}

// A connection gives up after MaxRetries timeouts and reports it.
func TestTCPGivesUp(t *testing.T) {
	n, a, _, ab, _ := pair(t, gbps, 20*us, func(c *Config) { c.TCP.MaxRetries = 3 })
	n.run(sec)
	c := a.TCPBulk(ipB, DiscardPort, 1_000_000)
	n.run(sec + ms)
	ab.drop = func([]byte) bool { return true }
	n.run(100 * sec)
	if !c.Done() || c.Err() == nil || c.Timeouts() != 3 {
		t.Fatalf("done %v err %v timeouts %d", c.Done(), c.Err(), c.Timeouts())
	}
	if a.NumConns() != 0 {
		t.Fatal("connection kept")
	}
}

// A SYN to a closed port (sink off) is refused with a reset.
func TestTCPRefused(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, func(c *Config) { c.NoSink = true })
	n.run(sec)
	c := a.TCPBulk(ipB, 4444, 1000)
	n.run(2 * sec)
	if !c.Done() || c.Err() == nil || b.Counter("tcp_rst_tx") != 1 {
		t.Fatalf("err %v, b %v", c.Err(), b.Counters())
	}
}

// A lost SYN is retransmitted after the initial RTO (1 s).
func TestSYNRetransmit(t *testing.T) {
	n, a, _, ab, _ := pair(t, gbps, us, nil)
	n.run(sec)
	first := true
	ab.drop = func(f []byte) bool {
		if len(f) > ethLen+ipLen+13 && f[ethLen+9] == protoTCP && f[ethLen+ipLen+13]&flagSYN != 0 && first {
			first = false
			return true
		}
		return false
	}
	c := a.TCPBulk(ipB, DiscardPort, 10_000)
	n.run(10 * sec)
	r := c.Result()
	if c.Err() != nil || r.Timeouts != 1 || r.Established < 2*int64(sec) || r.Established > 2*int64(sec)+int64(ms) {
		t.Fatalf("result %+v", r)
	}
}

// Request/response: after the first transaction (which carries the
// preamble) every round trip is exactly two 64-byte frames' serialization
// and propagation.
func TestTCPRRExact(t *testing.T) {
	const d = 10 * us
	n, a, _, _, _ := pair(t, gbps, d, nil)
	n.run(sec)
	a.Ping(ipB, 1, ms) // resolve ARP both ways first
	n.run(2 * sec)
	rr := a.TCPRR(ipB, 10, 10, 5)
	n.run(3 * sec)
	if !rr.Done() || rr.Err() != nil {
		t.Fatalf("done %v err %v", rr.Done(), rr.Err())
	}
	r := rr.Result()
	if r.Transactions != 5 {
		t.Fatalf("result %+v", r)
	}
	frame := ser(64, gbps) + d
	if r.RTTs[0] != ser(62, gbps)+frame+frame {
		t.Errorf("first rtt %v, want %v", r.RTTs[0], ser(62, gbps)+2*frame)
	}
	for i := 1; i < 5; i++ {
		if r.RTTs[i] != 2*frame {
			t.Errorf("rtt[%d] = %v, want %v", i, r.RTTs[i], 2*frame)
		}
	}
	if r.RTT.P50Us != float64(2*frame)/float64(us) {
		t.Errorf("p50 %v", r.RTT.P50Us)
	}
}

// Large responses span several segments; the app sees the whole response.
func TestTCPRRLarge(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, func(c *Config) { c.TCP.DelayedACK = true })
	n.run(sec)
	rr := a.TCPRR(ipB, 100, 50_000, 20)
	n.run(5 * sec)
	if r := rr.Result(); r.Transactions != 20 || rr.Err() != nil || b.Counter("rr_served") != 20 {
		t.Fatalf("result %+v err %v b %v", r, rr.Err(), b.Counters())
	}
}

// The SPAIN hook: a host agent reads, from each outgoing frame as it
// leaves, the flow's cwnd and whether the frame is a retransmission.
func TestSegmentInfo(t *testing.T) {
	n, a, _, ab, _ := pair(t, gbps, 20*us, nil)
	n.run(sec)
	k := 0
	var rxSeen []TCPInfo
	var plain int
	ab.drop = func(f []byte) bool {
		info, isRx, ok := a.SegmentInfo(f) // called as the frame leaves the host
		if !isData(f) {
			return false
		}
		if !ok {
			t.Fatal("data segment of a live flow not found")
		}
		if isRx {
			rxSeen = append(rxSeen, info)
		} else {
			plain++
		}
		k++
		return k == 20
	}
	c := a.TCPBulk(ipB, DiscardPort, 500_000)
	n.run(3 * sec)
	if c.FastRetransmits() != 1 {
		t.Fatalf("fast retransmits %d", c.FastRetransmits())
	}
	// Exactly the fast retransmission is marked; at that moment the flow
	// is in recovery with cwnd = ssthresh + 3 MSS.
	if len(rxSeen) != 1 || plain == 0 {
		t.Fatalf("retransmissions seen %d, plain %d", len(rxSeen), plain)
	}
	if r := rxSeen[0]; !r.InRecovery || r.Cwnd != r.Ssthresh+3*r.MSS || r.Retransmits != 1 {
		t.Fatalf("at the retransmission: %+v", r)
	}
	ab.drop = nil
	// Live check, on a fresh connection.
	c2 := a.TCPBulk(ipB, DiscardPort, 100_000)
	n.run(n.now + 50*us)
	f := ab.log[len(ab.log)-1].f
	info, isRx, ok := a.SegmentInfo(f)
	if !ok || isRx || info.Cwnd != c2.Cwnd() || info.Flow != c2.Flow() {
		t.Fatalf("info %+v rx %v ok %v", info, isRx, ok)
	}
	type stack interface {
		CongestionOf(frame []byte) (cwnd, mss int64, rxmt, ok bool)
	}
	var st element.Element = a
	cw, mss, isRx2, ok2 := st.(stack).CongestionOf(f)
	if !ok2 || isRx2 || cw != c2.Cwnd() || mss != 1460 {
		t.Fatalf("CongestionOf: %d %d %v %v", cw, mss, isRx2, ok2)
	}
	if _, _, ok := a.SegmentInfo([]byte{1, 2, 3}); ok {
		t.Fatal("garbage accepted")
	}
}

// Two runs with the same seeds give identical results, bit for bit.
func TestDeterministic(t *testing.T) {
	run := func() string {
		n, hs := star(t, 4, gbps, 5*us)
		n.run(sec)
		s := StartShuffle(hs, ShuffleOptions{Bytes: 200_000, Threads: 2})
		n.run(20 * sec)
		if !s.Done() {
			t.Fatal("shuffle not done")
		}
		b, _ := json.Marshal(s.Result())
		return string(b)
	}
	if a, b := run(), run(); a != b {
		t.Fatalf("runs differ:\n%s\n%s", a, b)
	}
}

// The shuffle: every host sends Bytes to every other; all transfers
// complete and the sinks received N*(N-1)*Bytes.
func TestShuffle(t *testing.T) {
	n, hs := star(t, 5, gbps, 5*us)
	n.run(sec)
	const per = 300_000
	s := StartShuffle(hs, ShuffleOptions{Bytes: per, Threads: 3})
	n.run(60 * sec)
	r := s.Result()
	if !s.Done() || r.Failed != 0 || len(r.PerHost) != 5 {
		t.Fatalf("result %+v", r)
	}
	var total int64
	for _, h := range r.PerHost {
		if h.Completed != 4 || h.Bytes != 4*per || h.GoodputBps <= 0 {
			t.Fatalf("host %+v", h)
		}
		total += h.Bytes
	}
	if total != 5*4*per {
		t.Fatalf("total %d", total)
	}
	// Each host's NIC is 1 Gb/s: no host can beat it.
	if r.MeanGoodputBps > gbps || r.AggregateGoodput > 5*gbps || r.TotalTimeUs <= 0 {
		t.Fatalf("rates %+v", r)
	}
	t.Logf("mean goodput %.0f Mb/s, aggregate %.0f Mb/s, total %.0f us", r.MeanGoodputBps/1e6, r.AggregateGoodput/1e6, r.TotalTimeUs)
	_ = element.Time(0)
}
