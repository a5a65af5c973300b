package host

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

// Tests that pin behaviour a mutation sweep found no test held.

// TestARPRefreshAtExpiry: an entry is stale from its expiry time on; the
// packet sent then re-confirms it.
func TestARPRefreshAtExpiry(t *testing.T) {
	n, a, b, _, _ := pair(t, 1_000_000_000, element.Microsecond, nil)
	n.run(element.Millisecond)
	bip := b.Addr()
	a.arp.m[bip.As4()] = &arpEntry{ip: bip, mac: b.mac, resolved: true, expires: n.now}
	a.resolveAndSend(bip, a.newIPFrame(bip.As4(), protoUDP, udpLen))
	if got := a.Counter("arp_refresh"); got != 1 {
		t.Fatalf("arp_refresh = %d at the expiry time, want 1", got)
	}
}

// TestIPTotalLengthBelowHeader: a total length shorter than the header is
// a bad length, not a negative payload.
func TestIPTotalLengthBelowHeader(t *testing.T) {
	_, a, b, _, _ := pair(t, 1_000_000_000, element.Microsecond, nil)
	f := frameTo(a, b, protoUDP, []byte{0, 9, 0, 9, 0, 8, 0, 0})
	f[ethLen+2], f[ethLen+3] = 0, 10 // total length 10 < header 20
	fixIP(f)
	if _, reason := parseIPv4(f[ethLen:]); reason != dropIPLength {
		t.Fatalf("reason %q, want %q", reason, dropIPLength)
	}
}

// TestWindowScaleCapped: a window scale above 14 is taken as 14 (RFC 7323
// §2.3), and our own shift never exceeds 14 for the largest window.
func TestWindowScaleCapped(t *testing.T) {
	_, a, b, _, _ := pair(t, 1_000_000_000, element.Microsecond, func(c *Config) { c.TCP.RecvWindow = 1 << 30 })
	f := frameTo(a, b, protoTCP, tcpHdr(1000, 80, 1, 0, flagSYN, []byte{3, 3, 20, 0}))
	ip, reason := parseIPv4(f[ethLen:])
	if reason != "" {
		t.Fatal(reason)
	}
	s, reason := parseTCP(&ip)
	if reason != "" || s.wscale != 14 {
		t.Fatalf("wscale %d (%q), want 14", s.wscale, reason)
	}
	c := a.newConn(connKey{b.Addr().As4(), 40000, 80})
	if c.rcvWS != 14 || c.window() != 65535 {
		t.Errorf("1 GiB window: shift %d, field %d; want 14, 65535", c.rcvWS, c.window())
	}
}

// TestPeerMSSFloor: a peer's tiny MSS is raised to 64 bytes.
func TestPeerMSSFloor(t *testing.T) {
	_, a, b, _, _ := pair(t, 1_000_000_000, element.Microsecond, nil)
	c := a.newConn(connKey{b.Addr().As4(), 40000, 80})
	c.synOptions(&tcpSeg{mss: 10, wscale: -1, wnd: 65535})
	if c.mss != 64 || c.cwnd != 10*64 {
		t.Fatalf("mss %d cwnd %d, want 64, 640", c.mss, c.cwnd)
	}
}

// TestRTOGranularity: with a zero-ish variance the RTO exceeds the SRTT
// by the clock granularity G (RFC 6298 §2).
func TestRTOGranularity(t *testing.T) {
	_, a, b, _, _ := pair(t, 1_000_000_000, element.Microsecond, func(c *Config) { c.TCP.MinRTO = 1 })
	c := a.newConn(connKey{b.Addr().As4(), 40000, 80})
	c.rttSample(2)
	if c.rto != 2+rttGranularity {
		t.Fatalf("rto %v, want srtt + G = %v", c.rto, 2+rttGranularity)
	}
}

// TestSynAckAfterBackoffResetsRTO: a handshake completed after SYN
// timeouts takes no sample and brings the RTO back from its backoff.
func TestSynAckAfterBackoffResetsRTO(t *testing.T) {
	_, a, b, _, _ := pair(t, 1_000_000_000, element.Microsecond, nil)
	c := a.newConn(connKey{b.Addr().As4(), 40000, 80})
	c.state = StateSynSent
	c.backoff, c.rto = 2, 4*element.Second
	c.synAcked()
	if c.rto != element.Second || c.backoff != 0 || c.srtt != 0 {
		t.Fatalf("rto %v backoff %d srtt %v, want 1s, 0, 0", c.rto, c.backoff, c.srtt)
	}
}

// TestRTOSsthresh: a timeout sets ssthresh to half the flight, at least
// two segments (RFC 5681 eq. 4), once per loss: a second timeout of the
// same loss keeps it.
func TestRTOSsthresh(t *testing.T) {
	_, a, b, _, _ := pair(t, 1_000_000_000, element.Microsecond, nil)
	c := a.newConn(connKey{b.Addr().As4(), 40000, 80})
	c.state = StateEstablished
	mss := c.mss
	c.sndUna, c.sndNxt, c.sndMax, c.sndEnd, c.sndWnd = 0, mss, mss, mss, 1<<20
	c.onRTO()
	if c.ssthresh != 2*mss || c.cwnd != mss {
		t.Fatalf("after one segment timed out: ssthresh %d cwnd %d, want %d, %d", c.ssthresh, c.cwnd, 2*mss, mss)
	}
	c.sndMax, c.sndEnd = 20*mss, 20*mss
	c.onRTO()
	if c.ssthresh != 2*mss {
		t.Fatalf("second timeout of the same loss: ssthresh %d, want it kept at %d", c.ssthresh, 2*mss)
	}
}

// TestPingReplyForUnsentRequest: a reply whose sequence number is the next
// request's, not sent yet, is unmatched.
func TestPingReplyForUnsentRequest(t *testing.T) {
	n, a, b, _, _ := pair(t, 1_000_000_000, element.Microsecond, nil)
	p := a.Ping(b.Addr(), 3, element.Second)
	n.run(100 * element.Millisecond)
	if len(p.sentAt) != 1 {
		t.Fatalf("%d requests sent, want 1", len(p.sentAt))
	}
	before := a.Counter("icmp_echo_reply_unmatched")
	p.reply(b.Addr(), 1)
	if a.Counter("icmp_echo_reply_unmatched") != before+1 {
		t.Fatal("reply to an unsent request was not counted unmatched")
	}
}

// TestNewAckWindowBoundaries: congestion avoidance grows cwnd by one
// segment once a full window is acked (RFC 3465), and a partial ACK of
// exactly one segment adds one back while deflating (RFC 6582 §3.2 step 4).
func TestNewAckWindowBoundaries(t *testing.T) {
	_, a, b, _, _ := pair(t, 1_000_000_000, element.Microsecond, nil)
	c := a.newConn(connKey{b.Addr().As4(), 40000, 80})
	c.state = StateEstablished
	mss := c.mss
	c.cwnd, c.ssthresh, c.sndWnd = 10*mss, 10*mss, 1<<20
	c.sndUna, c.sndNxt, c.sndMax, c.sndEnd = 0, 10*mss, 10*mss, 10*mss
	c.newAck(10 * mss)
	if c.cwnd != 11*mss || c.caAcc != 0 {
		t.Fatalf("a full window acked in CA: cwnd %d caAcc %d, want %d, 0", c.cwnd, c.caAcc, 11*mss)
	}

	c = a.newConn(connKey{b.Addr().As4(), 40001, 80})
	c.state = StateEstablished
	c.cwnd, c.ssthresh, c.sndWnd = 10*mss, 5*mss, 1<<20
	c.sndUna, c.sndNxt, c.sndMax, c.sndEnd = 0, 20*mss, 20*mss, 20*mss
	c.inRecovery, c.recover = true, 20*mss-1
	c.newAck(mss)
	if !c.inRecovery || c.cwnd != 10*mss {
		t.Fatalf("partial ACK of one segment: recovery %v cwnd %d, want true, %d", c.inRecovery, c.cwnd, 10*mss)
	}
}

// TestARPMulticastSenderDropped: an ARP packet whose sender hardware
// address is multicast is invalid (RFC 1812 §3.3.2 forbids believing
// one): it is dropped, its binding not learned, its request not answered.
func TestARPMulticastSenderDropped(t *testing.T) {
	n, a, _, ab, _ := pair(t, gbps, us, nil)
	n.run(sec)
	ip := netip.MustParseAddr("10.0.0.9")
	f, err := wire.AppendARPFrame(nil, wire.Broadcast, 0, &wire.ARP{Op: wire.ARPRequest,
		SenderMAC: wire.MAC{1, 0, 0x5e, 0, 0, 9}, SenderIP: ip, TargetIP: ipA})
	if err != nil {
		t.Fatal(err)
	}
	mark := len(ab.log)
	a.Receive(1, f)
	if a.Counter("drop_arp_invalid") != 1 || a.arp.m[ip.As4()] != nil || len(ab.log) != mark {
		t.Fatalf("multicast sender taken: entry %v, %d frames sent, %v", a.arp.m[ip.As4()], len(ab.log)-mark, a.Counters())
	}
}

// TestPSHOnLastSegment: the segment that empties the send queue carries
// PSH; the full segments before it do not.
func TestPSHOnLastSegment(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, _ := establish(t, n, a, b)
	mark := len(ab.log)
	c.Write(2*c.mss + 100)
	var flags []uint8
	for _, s := range ab.log[mark:] {
		if isData(s.f) {
			flags = append(flags, tcpFlags(s.f)&flagPSH)
		}
	}
	if len(flags) != 3 || flags[0] != 0 || flags[1] != 0 || flags[2] != flagPSH {
		t.Fatalf("PSH bits of the data segments: %v, want [0 0 %d]", flags, flagPSH)
	}
}

// TestSynRetriesExact: a SYN is retransmitted SynRetries times, and the
// connection gives up at the timeout after the last one.
func TestSynRetriesExact(t *testing.T) {
	n, a, _, ab, _ := pair(t, gbps, 10*us, func(c *Config) { c.TCP.SynRetries = 2 })
	n.run(sec)
	ab.drop = func(f []byte) bool { return f[12] == 0x08 && f[13] == 0 && f[ethLen+9] == protoTCP }
	c, err := a.Connect(ipB, DiscardPort)
	if err != nil {
		t.Fatal(err)
	}
	n.run(n.now + 60*sec)
	syns := 0
	for _, s := range ab.log {
		if s.f[12] == 0x08 && s.f[13] == 0 && s.f[ethLen+9] == protoTCP && tcpFlags(s.f)&flagSYN != 0 {
			syns++
		}
	}
	if syns != 3 || c.Timeouts() != 2 || !errors.Is(c.Err(), ErrTimeout) {
		t.Fatalf("%d SYNs, %d timeouts, err %v; want 3, 2, timeout", syns, c.Timeouts(), c.Err())
	}
}

// TestPersistGivesUpAfterMaxRetries: with a zero window and no answer to
// its probes, the sender sends exactly MaxRetries probes, then gives up
// (docs/host.md: "only after MaxRetries unanswered probes").
func TestPersistGivesUpAfterMaxRetries(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, func(c *Config) { c.TCP.MaxRetries = 3 })
	n.run(sec)
	c, srv := establish(t, n, a, b)
	a.Receive(1, zeroWindow(a, b, c, srv))
	ab.drop = func([]byte) bool { return true }
	c.Write(10_000)
	n.run(n.now + 10*60*sec)
	if got := a.Counter("tcp_window_probe"); got != 3 || !errors.Is(c.Err(), ErrTimeout) {
		t.Fatalf("%d probes, err %v; want 3, timeout", got, c.Err())
	}
}

// TestSynRcvdOtherSynIgnored: in SYN-RECEIVED only the peer's original
// SYN (SEG.SEQ = IRS) means our SYN-ACK was lost and draws it again; a SYN
// with another sequence number draws nothing.
func TestSynRcvdOtherSynIgnored(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	syn := func(seq uint32) []byte {
		return frameTo(a, b, protoTCP, tcpHdr(40000, DiscardPort, seq, 0, flagSYN, []byte{2, 4, 5, 0xb4, 1, 3, 3, 5}))
	}
	b.Receive(1, syn(1000))
	srv := b.Conn(FlowKey{LocalPort: DiscardPort, Remote: ipA, RemotePort: 40000})
	if srv == nil || srv.State() != StateSynRcvd || srv.segsOut != 1 {
		t.Fatalf("no SYN-RECEIVED connection: %v", b.Counters())
	}
	b.Receive(1, syn(5000))
	if srv.segsOut != 1 || b.Counter("tcp_syn_retransmitted_by_peer") != 0 || srv.State() != StateSynRcvd {
		t.Fatalf("a SYN with another ISN drew %d segments: %v", srv.segsOut-1, b.Counters())
	}
	b.Receive(1, syn(1000))
	if srv.segsOut != 2 || b.Counter("tcp_syn_retransmitted_by_peer") != 1 {
		t.Fatalf("the original SYN again drew %d segments: %v", srv.segsOut-1, b.Counters())
	}
}

// TestWindowUpdateSameSeqAndAck: a pure window update (same SEG.SEQ and
// SEG.ACK as the segment that set the window) is taken: SND.WL2 =< SEG.ACK
// (RFC 9293 §3.10.7.4). A zero window would otherwise stay closed until
// the persist timer.
func TestWindowUpdateSameSeqAndAck(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	ack := tcpHdr(DiscardPort, c.key.lport, srv.seqOf(srv.sndNxt), srv.rseqOf(srv.rcvNxt), flagACK, nil)
	ack[14], ack[15] = 0, 0
	a.Receive(1, frameTo(b, a, protoTCP, ack))
	if c.sndWnd != 0 {
		t.Fatalf("window %d after a zero-window ACK", c.sndWnd)
	}
	ack[14], ack[15] = 0x10, 0
	a.Receive(1, frameTo(b, a, protoTCP, ack))
	if c.sndWnd != 0x1000<<c.sndWS {
		t.Fatalf("window %d after the update, want %d", c.sndWnd, 0x1000<<c.sndWS)
	}
	mark := len(ab.log)
	c.Write(1000)
	if len(ab.log) == mark || !isData(ab.log[len(ab.log)-1].f) {
		t.Fatal("the sender stalled on a window that was reopened")
	}
}

// TestWindowChangeNotDupAck: an ACK that does not advance SND.UNA but
// changes the window is a window update, not a duplicate ACK (RFC 5681
// §2 (e)): three of them do not trigger a fast retransmit.
func TestWindowChangeNotDupAck(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	c.Write(10 * c.mss) // in flight, not delivered: the net does not run
	for _, w := range []byte{0xf0, 0xe0, 0xd0} {
		ack := tcpHdr(DiscardPort, c.key.lport, srv.seqOf(srv.sndNxt), c.seqOf(c.sndUna), flagACK, nil)
		ack[14], ack[15] = w, 0
		a.Receive(1, frameTo(b, a, protoTCP, ack))
	}
	if a.Counter("tcp_dupack_rx") != 0 || c.FastRetransmits() != 0 || c.InRecovery() {
		t.Fatalf("window updates counted as duplicate ACKs: %v", a.Counters())
	}
}

// TestPartialAckTimerResetOnce: NewReno's impatient variant (RFC 6582
// §3.2 step 4) resets the retransmission timer on the first
// partial ACK only; later ones leave it, so that a long recovery falls
// back to a timeout.
func TestPartialAckTimerResetOnce(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c := a.newConn(connKey{b.Addr().As4(), 40000, 80})
	c.state = StateEstablished
	mss := c.mss
	c.cwnd, c.ssthresh, c.sndWnd = 10*mss, 5*mss, 1<<20
	c.sndUna, c.sndNxt, c.sndMax, c.sndEnd = 0, 20*mss, 20*mss, 20*mss
	c.inRecovery, c.recover, c.rto = true, 20*mss-1, 10*sec
	c.newAck(mss)
	first := c.rtoAt
	if first != n.now+10*sec {
		t.Fatalf("first partial ACK: deadline %v, want %v", first, n.now+10*sec)
	}
	n.run(n.now + ms)
	c.newAck(2 * mss)
	if !c.inRecovery || c.rtoAt != first {
		t.Fatalf("second partial ACK: recovery %v, deadline %v, want it kept at %v", c.inRecovery, c.rtoAt, first)
	}
}

// TestResetAtWindowEdge: a reset whose sequence number is RCV.NXT +
// RCV.WND lies outside the window (RFC 5961 §3.2) and is ignored without
// a challenge ACK; one a byte inside is challenged.
func TestResetAtWindowEdge(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, _ := establish(t, n, a, b)
	wnd := uint32(int(c.window()) << c.rcvWS)
	rst := func(seq uint32) []byte {
		return frameTo(b, a, protoTCP, tcpHdr(DiscardPort, c.key.lport, seq, 0, flagRST, nil))
	}
	a.Receive(1, rst(c.rseqOf(c.rcvNxt)+wnd))
	if a.Counter("tcp_rst_out_of_window") != 1 || a.Counter("tcp_challenge_ack") != 0 {
		t.Fatalf("reset at the window edge: %v", a.Counters())
	}
	a.Receive(1, rst(c.rseqOf(c.rcvNxt)+wnd-1))
	if a.Counter("tcp_rst_challenged") != 1 || c.State() != StateEstablished {
		t.Fatalf("reset at the last byte of the window: %v", a.Counters())
	}
}

// TestOutOfOrderLongerSegmentKept: a segment at the offset of a held
// out-of-order segment but longer than it is kept: its extra bytes are
// delivered once the hole fills.
func TestOutOfOrderLongerSegmentKept(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	base := c.seqOf(c.sndNxt)
	send := func(off uint32, size int) {
		seg := append(tcpHdr(c.key.lport, DiscardPort, base+off, c.rseqOf(c.rcvNxt), flagACK, nil), make([]byte, size)...)
		b.Receive(1, frameTo(a, b, protoTCP, seg))
	}
	send(1000, 100)
	send(1000, 200)
	send(1000, 50) // shorter: already held
	send(0, 1000)
	if srv.BytesReceived() != 1200 || len(srv.ooo) != 0 {
		t.Fatalf("received %d, %d segments still held; %v", srv.BytesReceived(), len(srv.ooo), b.Counters())
	}
}

// TestOutOfOrderChargeCheckedAtMinimum: the allowance check charges a
// small segment oooMinCharge, as the accounting does: the bytes held
// never exceed RecvWindow, whatever sizes came before.
func TestOutOfOrderChargeCheckedAtMinimum(t *testing.T) {
	_, a, b, _, _ := pair(t, gbps, 10*us, nil)
	c := a.newConn(connKey{b.Addr().As4(), 40000, 80})
	c.state = StateEstablished
	c.storeOOO(10_000, make([]byte, 1000))
	for i := range 3000 {
		c.storeOOO(int64(20_000+2*i), []byte{0})
	}
	w := a.cfg.TCP.RecvWindow
	if c.oooBytes > w || len(c.ooo) != 1+(w-1000)/oooMinCharge {
		t.Fatalf("%d bytes charged in %d segments; allowance %d", c.oooBytes, len(c.ooo), w)
	}
}

// TestDHCPRequestTries: a REQUEST that draws no answer is sent five times
// in all (after 0, 4, 8, 16 and 32 s, +-1 s); the client then starts over
// with a DISCOVER after the next backoff.
func TestDHCPRequestTries(t *testing.T) {
	n, h, s := dhcpPair(t, 0)
	s.silent = true
	n.run(ms)
	h.dhcp.receive(dhcpReply(t, h, h.dhcp.xid, dhcpv4.MessageTypeOffer, net.IPv4(10, 0, 0, 7)))
	n.run(ms + 135*sec)
	if st, _ := h.DHCP(); h.Counter("dhcp_request_tx") != 5 || st.State != "SELECTING" {
		t.Fatalf("%d requests, state %v; want 5, SELECTING", h.Counter("dhcp_request_tx"), st.State)
	}
}

// TestDHCPRenewRetryFloor: in RENEWING the client retries half of the
// time left to T2, down to a minimum of 60 s (RFC 2131 §4.4.5): with a
// 1000 s lease (T1 500 s, T2 875 s) renewals leave at T1, +187.5 s,
// +281.25 s and +341.25 s (46.9 s, under the floor, became 60 s); the
// next would reach T2, where the client rebinds. The floor was 1 s: five
// more renewals crowded the last seconds before T2.
func TestDHCPRenewRetryFloor(t *testing.T) {
	n, h, s := dhcpPair(t, 1000*time.Second)
	n.run(ms)
	l, _ := h.DHCP()
	if l.State != "BOUND" || l.Renew-l.Bound != 500*sec || l.Rebind-l.Bound != 875*sec {
		t.Fatalf("lease %+v", l)
	}
	s.silent = true
	for _, c := range []struct {
		at   element.Time
		want uint64 // requests, the first one's (binding) included
	}{{l.Renew - ms, 1}, {l.Renew, 2}, {l.Renew + 187500*ms, 3}, {l.Renew + 281250*ms, 4}, {l.Renew + 341250*ms - ms, 4}, {l.Renew + 341250*ms, 5}, {l.Rebind - ms, 5}} {
		n.run(c.at)
		if got := h.Counter("dhcp_request_tx"); got != c.want {
			t.Fatalf("%d requests at T1%+v, want %d", got, c.at-l.Renew, c.want)
		}
	}
	if st, _ := h.DHCP(); st.State != "RENEWING" {
		t.Fatalf("state %v before T2", st.State)
	}
}

// TestDHCPEqualT1T2: a server's T2 equal to its T1 is out of order: T2
// falls back to its default (7/8 of the lease), and the server's T1,
// valid, is kept.
func TestDHCPEqualT1T2(t *testing.T) {
	n, h, s := dhcpPair(t, time.Hour)
	t1 := 20 * time.Minute
	s.t1, s.t2 = &t1, &t1
	n.run(10 * sec)
	l, _ := h.DHCP()
	if l.State != "BOUND" || l.Renew-l.Bound != 1200*sec || l.Rebind-l.Bound != 3150*sec {
		t.Fatalf("lease %+v: T1 %v T2 %v, want 1200 s, 3150 s", l, l.Renew-l.Bound, l.Rebind-l.Bound)
	}
}

// TestUDPDuplicateNotOutOfOrder: a datagram repeating the highest
// sequence number seen is a duplicate, not out of order; one below it is.
func TestUDPDuplicateNotOutOfOrder(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	for _, seq := range []uint64{0, 1, 1, 0} {
		p := make([]byte, udpHdrLen)
		binary.BigEndian.PutUint32(p[0:4], udpMagic)
		binary.BigEndian.PutUint64(p[4:12], seq)
		binary.BigEndian.PutUint64(p[12:20], uint64(n.now))
		a.finishUDP(ipB, a.sendUDP(ipB, 5000, 9000, p, len(p)))
		n.run(n.now + ms)
	}
	fs, ok := b.UDPFlow(ipA, 5000, 9000)
	if !ok || fs.Packets != 4 || fs.MaxSeq != 1 || fs.OutOfOrder != 1 {
		t.Fatalf("flow %+v (%v): want 4 packets, 1 out of order", fs, ok)
	}
}

// TestDataAtWindowEdgeDropped: a segment is acceptable when it starts
// inside the receive window, RCV.NXT <= SEG.SEQ < RCV.NXT+RCV.WND (RFC
// 9293 §3.10.7.4). Data or a FIN starting exactly at the edge is outside
// it: dropped and counted, with an ACK, not held (it once was, and a bare
// FIN there recorded the peer's FIN beyond the window). One byte inside
// the edge is held.
func TestDataAtWindowEdgeDropped(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	base := c.seqOf(c.sndNxt)
	w := uint32(b.cfg.TCP.RecvWindow)
	send := func(off uint32, flags uint8, size int) {
		seg := append(tcpHdr(c.key.lport, DiscardPort, base+off, c.rseqOf(c.rcvNxt), flags, nil), make([]byte, size)...)
		b.Receive(1, frameTo(a, b, protoTCP, seg))
	}
	before := b.Counters()["drop_tcp_out_of_window"]
	send(w, flagACK, 100)
	send(w, flagACK|flagFIN, 0)
	if got := b.Counters()["drop_tcp_out_of_window"] - before; got != 2 || len(srv.ooo) != 0 {
		t.Fatalf("at the edge: %d dropped, %d held; want 2, 0", got, len(srv.ooo))
	}
	send(w-1, flagACK, 1)
	if len(srv.ooo) != 1 {
		t.Fatalf("one byte inside the edge: %d held, want 1", len(srv.ooo))
	}
}
