package host

import (
	"testing"

	"github.com/edgefabric/edgefabric/element"
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
