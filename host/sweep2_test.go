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

// Tests from a further mutation sweep of the package (sweep2), aimed at
// what the earlier sweeps left loose: the NIC backpressure and the
// counters, address and frame handling, ARP's retry bookkeeping, DHCP's
// message checks, the apps' arguments and results, and TCP's window,
// recovery and teardown bookkeeping. Each pins an outcome that a mutant
// changed without failing the earlier tests.

// --- NIC backpressure and counters ---

// TestTxQueueBoundary: TCP waits only while more than TxQueue bytes wait
// in the NIC's queue (docs/host.md); a connection is parked once however
// often it finds the queue full, and is taken again after a wake-up. At
// 8 Gb/s a byte takes exactly 1 ns, so the backlog is exact. The host
// once parked at exactly TxQueue bytes.
func TestTxQueueBoundary(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, func(c *Config) { c.NICRate = 8_000_000_000 })
	n.run(sec)
	if a.nicRate != 8_000_000_000 {
		t.Fatalf("NIC rate %d, want Config.NICRate", a.nicRate)
	}
	c := sweepConn(a, b, 40000)
	q := element.Time(a.cfg.TxQueue)
	a.nicFree = n.now + q*element.Nanosecond
	if a.txFull(c) || a.Counter("tcp_tx_queue_full") != 0 {
		t.Fatalf("backlog of exactly TxQueue (%d bytes) parked the connection", a.cfg.TxQueue)
	}
	a.nicFree += element.Nanosecond
	// Asked twice, it parks once.
	if once, twice := a.txFull(c), a.txFull(c); !once || !twice || a.Counter("tcp_tx_queue_full") != 1 || len(a.txWait) != 1 {
		t.Fatalf("one byte over: parked %d times, %d waiting", a.Counter("tcp_tx_queue_full"), len(a.txWait))
	}
	n.run(n.now + q*element.Nanosecond)
	if a.txTimer || len(a.txWait) != 0 || c.txWaiting {
		t.Fatalf("not woken: timer %v, %d waiting, parked %v", a.txTimer, len(a.txWait), c.txWaiting)
	}
	a.nicFree = n.now + 2*q*element.Nanosecond
	if !a.txFull(c) || a.Counter("tcp_tx_queue_full") != 2 || len(a.txWait) != 1 {
		t.Fatalf("full again after the wake-up: parked %d times, %d waiting", a.Counter("tcp_tx_queue_full"), len(a.txWait))
	}
}

// TestTxQueueNegativeOff: a negative TxQueue turns backpressure off,
// whatever the backlog.
func TestTxQueueNegativeOff(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, func(c *Config) { c.NICRate = gbps; c.TxQueue = -1 })
	n.run(sec)
	c := sweepConn(a, b, 40000)
	a.nicFree = n.now + sec
	if a.txFull(c) {
		t.Fatal("TxQueue -1: a 1 s backlog parked the connection")
	}
}

// TestNICBacklogShortFrame: a frame shorter than Ethernet's 60-byte
// minimum occupies the wire as a padded one, plus preamble, FCS and gap;
// the counters see the frame as sent.
func TestNICBacklogShortFrame(t *testing.T) {
	n, a, _, _, _ := pair(t, gbps, us, func(c *Config) { c.NICRate = 8_000_000_000 })
	n.run(sec)
	tx, txb := a.Counter("tx_frames"), a.Counter("tx_bytes")
	a.send(make([]byte, 42))
	if want := n.now + (60+wireOverhead)*element.Nanosecond; a.nicFree != want {
		t.Fatalf("NIC free at %v, want %v", a.nicFree, want)
	}
	if a.Counter("tx_frames") != tx+1 || a.Counter("tx_bytes") != txb+42 {
		t.Fatalf("tx_frames %d tx_bytes %d, want %d, %d", a.Counter("tx_frames"), a.Counter("tx_bytes"), tx+1, txb+42)
	}
}

// TestFrameCounters: after the two gratuitous ARPs of a start, each host
// has sent and received exactly one 60-byte frame; a host that never
// moved a counter reports none (zero counters are absent).
func TestFrameCounters(t *testing.T) {
	if m := New(Config{Name: "idle", IP: netip.MustParsePrefix("10.0.0.9/24")}).Counters(); len(m) != 0 {
		t.Fatalf("idle host: %v", m)
	}
	n, a, _, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	for _, c := range []struct {
		name string
		want uint64
	}{{"tx_frames", 1}, {"tx_bytes", 60}, {"rx_frames", 1}, {"rx_bytes", 60}} {
		if got := a.Counter(c.name); got != c.want {
			t.Errorf("%s = %d, want %d", c.name, got, c.want)
		}
	}
	if _, ok := a.Counters()["rx_ip"]; ok {
		t.Errorf("rx_ip present without an IP packet: %v", a.Counters())
	}
}

// TestPortZeroAndDownAtAttach: only port 1 is the NIC (a frame on port 0
// is counted as on a bad port); a NIC attached down swallows the
// gratuitous ARP of the start.
func TestPortZeroAndDownAtAttach(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	rx := a.Counter("arp_rx")
	a.Receive(0, garp(b.mac, ipB))
	if a.Counter("drop_bad_port") != 1 || a.Counter("arp_rx") != rx {
		t.Fatalf("frame on port 0: %v", a.Counters())
	}
	n = &fakeNet{}
	h := New(Config{Name: "h", MAC: [6]byte{2, 0, 0, 0, 0, 7}, IP: netip.MustParsePrefix("10.0.0.7/24")})
	e := n.add(h, 1)
	h.Attach(e, []element.PortInfo{{Port: 1, Up: false}})
	n.run(sec)
	if h.Counter("drop_link_down") != 1 || h.Counter("tx_frames") != 0 {
		t.Fatalf("NIC down at attach: %v", h.Counters())
	}
}

// --- addresses ---

// TestBroadcastOf: /31 and /32 have no broadcast address (RFC 3021), a
// /30's is its last address.
func TestBroadcastOf(t *testing.T) {
	for _, c := range []struct{ p, want string }{
		{"10.0.0.0/31", ""}, {"10.0.0.1/32", ""}, {"10.0.0.4/30", "10.0.0.7"}, {"10.1.0.0/16", "10.1.255.255"},
	} {
		got := broadcastOf(netip.MustParsePrefix(c.p))
		if (c.want == "" && got.IsValid()) || (c.want != "" && got != netip.MustParseAddr(c.want)) {
			t.Errorf("broadcast of %s: %v, want %q", c.p, got, c.want)
		}
	}
}

// TestSubnetBroadcastSent: a datagram to the subnet's broadcast address
// goes out at once to the broadcast MAC, without ARP, and the neighbour
// takes it.
func TestSubnetBroadcastSent(t *testing.T) {
	broadcastSent(t, netip.MustParseAddr("10.0.0.255"), "arp_request_tx", 1)
}

// broadcastSent sends a datagram to bc and checks that it leaves at once,
// one frame to the broadcast MAC, with the sender's counter at want, and
// that the neighbour takes it.
func broadcastSent(t *testing.T, bc netip.Addr, counter string, want uint64) {
	t.Helper()
	n, a, b, ab, _ := pair(t, gbps, us, nil)
	n.run(sec)
	mark := len(ab.log)
	a.finishUDP(bc, a.sendUDP(bc, 5000, 9000, nil, 10))
	if len(ab.log) != mark+1 || wire.MAC(ab.log[mark].f[0:6]) != wire.Broadcast || a.Counter(counter) != want {
		t.Fatalf("%v: %d frames, %v", bc, len(ab.log)-mark, a.Counters())
	}
	n.run(n.now + ms)
	if b.UDPPort(9000).Packets != 1 {
		t.Fatalf("%v: neighbour got %+v", bc, b.UDPPort(9000))
	}
}

// TestAnnounceOnlyOnChange: a link reported up while up, or an address
// set again, announces nothing; an address set while the link is down is
// not announced (the link's return announces it).
func TestAnnounceOnlyOnChange(t *testing.T) {
	n, a, _, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	g := a.Counter("arp_gratuitous_tx")
	a.LinkChange(1, true)
	a.SetAddr(netip.MustParsePrefix("10.0.0.1/24"))
	if a.Counter("arp_gratuitous_tx") != g {
		t.Fatalf("no change announced: %v", a.Counters())
	}
	a.LinkChange(1, false)
	a.SetAddr(netip.MustParsePrefix("10.0.0.5/24"))
	if a.Counter("arp_gratuitous_tx") != g || a.Counter("drop_link_down") != 0 {
		t.Fatalf("announced on a down link: %v", a.Counters())
	}
	a.LinkChange(1, true)
	if a.Counter("arp_gratuitous_tx") != g+1 {
		t.Fatalf("link back up: %v", a.Counters())
	}
}

// TestBoundDHCPHostOnlyItsAddress: once bound, a DHCP client takes UDP
// only for its address; the exception for replies to an offered address
// holds while it is unbound.
func TestBoundDHCPHostOnlyItsAddress(t *testing.T) {
	n, h, _ := dhcpPair(t, 0)
	n.run(ms)
	if !h.Addr().IsValid() {
		t.Fatal("not bound")
	}
	o := New(Config{Name: "o", MAC: [6]byte{2, 0, 0, 0, 0, 9}, IP: netip.MustParsePrefix("10.0.0.9/24")})
	f := o.newIPFrame([4]byte{10, 0, 0, 200}, protoUDP, 12)
	copy(f[0:6], h.mac[:])
	copy(f[ethLen+ipLen:], []byte{0, 9, 0, 9, 0, 12, 0, 0, 1, 2, 3, 4})
	fixL4(f)
	h.Receive(1, f)
	if h.Counter("drop_ip_not_for_us") != 1 || h.Counter("udp_rx") != 0 {
		t.Fatalf("datagram to another address: %v", h.Counters())
	}
}

// --- frames ---

// TestIPFragmentOffsetOnly: the last fragment of a datagram (offset set,
// MF clear) is a fragment too.
func TestIPFragmentOffsetOnly(t *testing.T) {
	_, a, b, _, _ := pair(t, gbps, us, nil)
	f := frameTo(a, b, protoUDP, []byte{0, 9, 0, 9, 0, 8, 0, 0})
	f[ethLen+6], f[ethLen+7] = 0, 1
	fixIP(f)
	if _, reason := parseIPv4(f[ethLen:]); reason != dropIPFragment {
		t.Fatalf("reason %q, want %q", reason, dropIPFragment)
	}
}

// TestIPOptionsSkipped: a header with options (IHL 6) carries its
// datagram after them; the host never sends options but takes them.
func TestIPOptionsSkipped(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	g := frameTo(a, b, protoUDP, []byte{0x13, 0x88, 0x23, 0x28, 0, 12, 0, 0, 1, 2, 3, 4})
	f := append(append(append([]byte(nil), g[:ethLen+ipLen]...), 1, 1, 1, 0), g[ethLen+ipLen:]...)
	ip := f[ethLen:]
	ip[0] = 0x46
	binary.BigEndian.PutUint16(ip[2:4], uint16(len(ip)))
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:12], fold(checksum(0, ip[:24])))
	b.Receive(1, f)
	if s := b.UDPPort(9000); s.Packets != 1 || s.Bytes != 4 {
		t.Fatalf("port 9000: %+v; %v", s, b.Counters())
	}
}

// TestIPHeaderFields: every IPv4 packet leaves with TTL 64 and DF
// (docs/host.md), and the identification counts up by one per packet.
func TestIPHeaderFields(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, us, nil)
	n.run(sec)
	a.Ping(b.Addr(), 3, ms)
	n.run(n.now + sec)
	var ids []uint16
	for _, s := range ab.log {
		if binary.BigEndian.Uint16(s.f[12:14]) != wire.EtherTypeIPv4 {
			continue
		}
		ip := s.f[ethLen:]
		if ip[8] != 64 || binary.BigEndian.Uint16(ip[6:8]) != 0x4000 {
			t.Fatalf("TTL %d, flags/offset %#x; want 64, DF", ip[8], binary.BigEndian.Uint16(ip[6:8]))
		}
		ids = append(ids, binary.BigEndian.Uint16(ip[4:6]))
	}
	if len(ids) != 3 || ids[0] != 1 || ids[1] != 2 || ids[2] != 3 {
		t.Fatalf("identifications %v, want [1 2 3]", ids)
	}
}

// TestWindowScaleOptionLength: a window scale option is 3 bytes (RFC 7323
// §2.2); one of 4 is malformed.
func TestWindowScaleOptionLength(t *testing.T) {
	_, a, b, _, _ := pair(t, gbps, us, nil)
	f := frameTo(a, b, protoTCP, tcpHdr(1000, 80, 1, 0, flagSYN, []byte{3, 4, 7, 0}))
	ip, _ := parseIPv4(f[ethLen:])
	if _, reason := parseTCP(&ip); reason != dropTCPOption {
		t.Fatalf("reason %q, want %q", reason, dropTCPOption)
	}
}

// TestUDPLengthBoundsDatagram: the UDP length, not the IP payload, bounds
// the datagram and its checksum (RFC 768); bytes after it are not data.
func TestUDPLengthBoundsDatagram(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	l4 := []byte{0x13, 0x88, 0x23, 0x28, 0, 18, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0xde, 0xad, 0xbe, 0xef}
	f := frameTo(a, b, protoUDP, l4)
	u := f[ethLen+ipLen:]
	u[6], u[7] = 0, 0
	binary.BigEndian.PutUint16(u[6:8], l4Checksum(ipA.As4(), ipB.As4(), protoUDP, u[:18]))
	b.Receive(1, f)
	if s := b.UDPPort(9000); s.Packets != 1 || s.Bytes != 10 {
		t.Fatalf("port 9000: %+v; %v", s, b.Counters())
	}
}

// --- ARP ---

// TestARPRefreshRetries: re-confirming a stale entry gets ARPRetries
// requests of its own, not what is left of the first resolution's.
func TestARPRefreshRetries(t *testing.T) {
	n, a, b, _, ba := pair(t, gbps, us, func(c *Config) { c.ARPTimeout = 10 * sec })
	n.run(sec)
	a.Ping(b.Addr(), 1, sec)
	n.run(n.now + sec)
	if e, ok := a.ARPCache(ipB); !ok || !e.Resolved {
		t.Fatal("not resolved")
	}
	ba.drop = func(f []byte) bool { return binary.BigEndian.Uint16(f[12:14]) == wire.EtherTypeARP }
	n.run(20 * sec)
	req := a.Counter("arp_request_tx")
	a.Ping(b.Addr(), 1, sec)
	n.run(n.now + 10*sec)
	if got := a.Counter("arp_request_tx") - req; got != 3 || a.Counter("arp_failed") != 1 {
		t.Fatalf("%d requests to re-confirm, %v", got, a.Counters())
	}
}

// TestARPRetryOfReplacedEntry: a retry timer of an entry no longer in the
// table does nothing: it neither counts a failure nor removes the entry
// that took its place.
func TestARPRetryOfReplacedEntry(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	k := b.Addr().As4()
	old := &arpEntry{ip: b.Addr(), probing: true, sent: a.cfg.ARPRetries}
	cur := &arpEntry{ip: b.Addr(), probing: true, sent: 1}
	a.arp.m[k] = cur
	a.arpRetry(old, old.round)
	if a.arp.m[k] != cur || a.Counter("arp_failed") != 0 {
		t.Fatalf("entry %p (want %p), %v", a.arp.m[k], cur, a.Counters())
	}
}

// TestARPRepliesUnicast: a reply goes to the requester's MAC only (RFC
// 826), for an ordinary request and for an RFC 5227 probe alike.
func TestARPRepliesUnicast(t *testing.T) {
	n, a, b, _, ba := pair(t, gbps, us, nil)
	n.run(sec)
	replies := func(from int) (dst []wire.MAC) {
		for _, s := range ba.log[from:] {
			if ar, err := wire.DecodeARP(s.f); err == nil && ar.Op == wire.ARPReply {
				dst = append(dst, wire.MAC(s.f[0:6]))
			}
		}
		return dst
	}
	mark := len(ba.log)
	a.Ping(b.Addr(), 1, sec)
	n.run(n.now + ms)
	if d := replies(mark); len(d) != 1 || d[0] != a.mac {
		t.Fatalf("reply to a request sent to %v", d)
	}
	prober := wire.MAC{2, 0, 0, 0, 0, 0x33}
	probe, err := wire.AppendARPFrame(nil, wire.Broadcast, 0, &wire.ARP{Op: wire.ARPRequest, SenderMAC: prober,
		SenderIP: netip.AddrFrom4([4]byte{}), TargetIP: b.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	mark = len(ba.log)
	b.Receive(1, probe)
	if d := replies(mark); len(d) != 1 || d[0] != prober {
		t.Fatalf("reply to a probe sent to %v", d)
	}
}

// --- DHCP ---

// dhcpAck is an ACK of yi for h's transaction from server sid, with the
// options opts (no lease time unless given).
func dhcpAck(t *testing.T, h *Host, yi net.IP, sid net.IP, opts ...dhcpv4.Modifier) []byte {
	t.Helper()
	m, err := dhcpv4.New(append([]dhcpv4.Modifier{dhcpv4.WithTransactionID(h.dhcp.xid), dhcpv4.WithHwAddr(h.mac[:]),
		dhcpv4.WithMessageType(dhcpv4.MessageTypeAck), dhcpv4.WithYourIP(yi),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(sid))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	m.OpCode = dhcpv4.OpcodeBootReply
	return m.ToBytes()
}

// TestDHCPT1AtLease: a T1 out of order (equal to the lease) falls back to
// lease/2 alone; a valid T2 from the server is kept.
func TestDHCPT1AtLease(t *testing.T) {
	n, h, s := dhcpPair(t, time.Hour)
	t1, t2 := time.Hour, 48*time.Minute
	s.t1, s.t2 = &t1, &t2
	n.run(ms)
	if l, _ := h.DHCP(); l.Renew-l.Bound != 1800*sec || l.Rebind-l.Bound != 2880*sec {
		t.Fatalf("renew after %v, rebind after %v; want 30 min, 48 min", l.Renew-l.Bound, l.Rebind-l.Bound)
	}
}

// TestDHCPStateNames: every state has its RFC 2131 name; a value past
// the last is named as unknown, not a panic.
func TestDHCPStateNames(t *testing.T) {
	if DHCPRebinding.String() != "REBINDING" || DHCPState(7).String() != "DHCPState(?)" {
		t.Fatalf("%q, %q", DHCPRebinding.String(), DHCPState(7).String())
	}
}

// TestDHCPAckDefaults: an ACK without a lease time grants a day, and its
// router becomes the gateway for off-subnet traffic.
func TestDHCPAckDefaults(t *testing.T) {
	n, h, s := dhcpPair(t, 0)
	s.silent = true
	n.run(ms)
	h.dhcp.state = DHCPRequesting
	h.dhcp.server = netip.MustParseAddr("10.0.0.1") // the offer's
	h.dhcp.receive(dhcpAck(t, h, net.IPv4(10, 0, 0, 7), net.IPv4(10, 0, 0, 1), dhcpv4.WithRouter(net.IPv4(10, 0, 0, 254))))
	l, _ := h.DHCP()
	if l.State != "BOUND" || l.Expires-l.Bound != 24*3600*sec {
		t.Fatalf("lease %+v", l)
	}
	req := h.Counter("arp_request_tx")
	h.Ping(netip.MustParseAddr("192.168.1.1"), 1, sec)
	if h.Counter("drop_no_route") != 0 || h.Counter("arp_request_tx") != req+1 {
		t.Fatalf("off-subnet ping: %v", h.Counters())
	}
	if e, ok := h.ARPCache(netip.MustParseAddr("10.0.0.254")); !ok || e.Queued != 1 {
		t.Fatalf("gateway entry %+v, %v", e, ok)
	}
}

// TestDHCPRequestNotReply: a BOOTREQUEST (another client's message, or
// our own looped back) with our transaction and hardware address is not
// a reply.
func TestDHCPRequestNotReply(t *testing.T) {
	n, h, s := dhcpPair(t, 0)
	s.silent = true
	n.run(ms)
	b := dhcpReply(t, h, h.dhcp.xid, dhcpv4.MessageTypeOffer, net.IPv4(10, 0, 0, 7))
	b[0] = byte(dhcpv4.OpcodeBootRequest)
	h.dhcp.receive(b)
	if h.Counter("dhcp_not_ours") != 1 || h.dhcp.state != DHCPSelecting {
		t.Fatalf("BOOTREQUEST taken: %v", h.Counters())
	}
}

// TestDHCPAckOnlyAfterRequest: an ACK while SELECTING answers no request
// of ours and is not bound (RFC 2131 §4.4, Figure 5).
func TestDHCPAckOnlyAfterRequest(t *testing.T) {
	n, h, s := dhcpPair(t, 0)
	s.silent = true
	n.run(ms)
	h.dhcp.receive(dhcpAck(t, h, net.IPv4(10, 0, 0, 7), net.IPv4(10, 0, 0, 1)))
	if h.Addr().IsValid() || h.Counter("dhcp_unexpected") != 1 {
		t.Fatalf("ACK in SELECTING: addr %v, %v", h.Addr(), h.Counters())
	}
}

// TestDHCPRebindOtherServer: an ACK while REBINDING from another server
// makes it the lease's server, to which the next renewal is unicast.
func TestDHCPRebindOtherServer(t *testing.T) {
	n, h, s := dhcpPair(t, 0)
	n.run(ms)
	s.silent = true
	h.dhcp.state = DHCPRebinding
	h.dhcp.receive(dhcpAck(t, h, net.IP(h.Addr().AsSlice()), net.IPv4(10, 0, 0, 9)))
	if l, _ := h.DHCP(); l.Server != netip.MustParseAddr("10.0.0.9") || l.State != "BOUND" {
		t.Fatalf("lease %+v", l)
	}
}

// TestDHCPNakWhileRenewing: a NAK of a renewal takes the address away at
// once (RFC 2131 §4.4.5: the client must stop using it).
func TestDHCPNakWhileRenewing(t *testing.T) {
	n, h, s := dhcpPair(t, 0)
	n.run(ms)
	s.silent = true
	h.dhcp.state = DHCPRenewing
	h.dhcp.receive(dhcpReply(t, h, h.dhcp.xid, dhcpv4.MessageTypeNak, net.IPv4zero))
	if h.Addr().IsValid() || h.Counter("dhcp_nak_rx") != 1 {
		t.Fatalf("after a NAK while renewing: addr %v, %v", h.Addr(), h.Counters())
	}
	if l, _ := h.DHCP(); l.Acks != 1 || l.State != "INIT" {
		t.Fatalf("lease %+v", l)
	}
}

// TestDHCPExpiryKeepsAckCount: an expired lease is forgotten but the ACKs
// it took are still counted.
func TestDHCPExpiryKeepsAckCount(t *testing.T) {
	n, h, s := dhcpPair(t, 16*time.Second)
	n.run(ms)
	l, _ := h.DHCP()
	s.silent = true
	n.run(l.Expires + ms)
	if l2, _ := h.DHCP(); l2.Acks != 1 || l2.Addr.IsValid() || l2.Expires != 0 {
		t.Fatalf("after expiry: %+v", l2)
	}
}

// TestDHCPBadOverload: an option overload is one byte of 1, 2 or 3 (RFC
// 2132 §9.3); anything else makes the message malformed.
func TestDHCPBadOverload(t *testing.T) {
	for _, v := range [][]byte{{4}, {1, 1}} {
		n, h, s := dhcpPair(t, 0)
		s.silent = true
		n.run(ms)
		h.dhcp.state = DHCPRequesting
		h.dhcp.receive(dhcpAck(t, h, net.IPv4(10, 0, 0, 7), net.IPv4(10, 0, 0, 1), dhcpv4.WithGeneric(dhcpv4.OptionOptionOverload, v)))
		if h.Addr().IsValid() || h.Counter("drop_dhcp_malformed") != 1 {
			t.Errorf("overload %v: addr %v, %v", v, h.Addr(), h.Counters())
		}
	}
}

// TestDHCPBroadcastFlag: DISCOVER and REQUEST ask for broadcast replies
// (docs/host.md: the client cannot take unicast before it has an
// address).
func TestDHCPBroadcastFlag(t *testing.T) {
	n, _, _ := dhcpPair(t, 0)
	n.run(ms)
	_, msgs := dhcpSent(t, n)
	if len(msgs) != 2 {
		t.Fatalf("%d messages", len(msgs))
	}
	for _, m := range msgs {
		if !m.IsBroadcast() {
			t.Errorf("%v without the broadcast flag", m.MessageType())
		}
	}
}

// --- ICMP ---

// echoReply is an echo reply for ping identifier id, sequence seq, as a
// frame from b to a.
func echoReply(a, b *Host, id, seq uint16) []byte {
	l4 := make([]byte, icmpLen)
	l4[0] = icmpEchoReply
	binary.BigEndian.PutUint16(l4[4:6], id)
	binary.BigEndian.PutUint16(l4[6:8], seq)
	return frameTo(b, a, protoICMP, l4)
}

// TestBroadcastPingIgnored: an echo request to the subnet broadcast is
// counted and not answered (Linux's icmp_echo_ignore_broadcasts).
func TestBroadcastPingIgnored(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	p := a.Ping(netip.MustParseAddr("10.0.0.255"), 1, sec)
	n.run(n.now + 2*sec)
	if b.Counter("icmp_echo_broadcast_ignored") != 1 || b.Counter("icmp_echo_reply_tx") != 0 || p.Result().Received != 0 {
		t.Fatalf("b %v, result %+v", b.Counters(), p.Result())
	}
}

// TestPingLimits: 65536 requests (every sequence number) and a payload
// that fills the MTU are allowed; one more of either is not.
func TestPingLimits(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	for _, c := range []struct {
		opt PingOptions
		ok  bool
	}{
		{PingOptions{Count: 65536}, true}, {PingOptions{Count: 65537}, false},
		{PingOptions{Size: 1472}, true}, {PingOptions{Size: 1473}, false},
	} {
		p := a.PingWith(b.Addr(), c.opt)
		if (p.Err() == nil) != c.ok || (!c.ok && !errors.Is(p.Err(), ErrBadArgument)) {
			t.Errorf("%+v: err %v", c.opt, p.Err())
		}
	}
}

// TestPingIdentifierInUse: a new ping skips an identifier a running one
// holds.
func TestPingIdentifierInUse(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	p1 := a.Ping(b.Addr(), 5, sec)
	a.nextPID = p1.id - 1
	p2 := a.Ping(b.Addr(), 5, sec)
	if p2.id == p1.id || a.pings[p1.id] != p1 || a.pings[p2.id] != p2 {
		t.Fatalf("identifiers %d and %d", p1.id, p2.id)
	}
}

// TestPingRepliesChecked: a reply from another address is not one of
// ours; a second reply to the same request is a duplicate, not a second
// answer; an unreachable is counted as such.
func TestPingRepliesChecked(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	p := a.Ping(b.Addr(), 2, sec)
	a.Receive(1, fromSource(echoReply(a, b, p.id, 0), 10, 0, 0, 3))
	if r := p.Result(); r.Received != 0 || a.Counter("icmp_echo_reply_unmatched") != 1 {
		t.Fatalf("reply from another host: %+v, %v", r, a.Counters())
	}
	a.Receive(1, echoReply(a, b, p.id, 0))
	a.Receive(1, echoReply(a, b, p.id, 0))
	if r := p.Result(); r.Received != 1 || r.Duplicates != 1 {
		t.Fatalf("duplicate reply: %+v", r)
	}
	un := make([]byte, icmpLen)
	un[0], un[1] = icmpUnreachable, 1
	a.Receive(1, frameTo(b, a, protoICMP, un))
	if a.Counter("icmp_unreachable_rx") != 1 || a.Counter("icmp_other_rx") != 0 {
		t.Fatalf("unreachable: %v", a.Counters())
	}
}

// TestPingDefaultTimeout: unanswered, a ping completes exactly one second
// (the default Timeout) after its last request, and leaves the table.
func TestPingDefaultTimeout(t *testing.T) {
	n, a, b, _, ba := pair(t, gbps, us, nil)
	n.run(sec)
	ba.drop = func(f []byte) bool { return f[ethLen+9] == protoICMP }
	start := n.now
	p := a.PingWith(b.Addr(), PingOptions{})
	n.run(start + sec - 1)
	if p.Done() {
		t.Fatal("done before the timeout")
	}
	n.run(start + sec)
	if !p.Done() || len(a.pings) != 0 {
		t.Fatalf("done %v, %d pings held", p.Done(), len(a.pings))
	}
}

// --- UDP ---

// TestUDPDelayMax: a flow's maximum one-way delay is its largest, not its
// latest.
func TestUDPDelayMax(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	send := func(seq uint64, at element.Time) {
		p := make([]byte, udpHdrLen)
		binary.BigEndian.PutUint32(p[0:4], udpMagic)
		binary.BigEndian.PutUint64(p[4:12], seq)
		binary.BigEndian.PutUint64(p[12:20], uint64(at))
		a.finishUDP(ipB, a.sendUDP(ipB, 5000, 9000, p, len(p)))
	}
	send(0, n.now-sec)
	send(1, n.now)
	n.run(n.now + sec)
	fs, ok := b.UDPFlow(ipA, 5000, 9000)
	if !ok || fs.Packets != 2 || fs.DelayMax < sec || fs.DelayMax > fs.DelaySum {
		t.Fatalf("flow %+v", fs)
	}
}

// TestUDPArguments: port 0 is refused; ephemeral ports wrap from 65535 to
// 49152.
func TestUDPArguments(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	if u := a.UDP(b.Addr(), 0, 1000, 100, sec); !errors.Is(u.Err(), ErrBadArgument) || !u.Done() {
		t.Fatalf("port 0: %v", u.Err())
	}
	a.nextPort = 65534
	if p, q := a.ephemeralPort(), a.ephemeralPort(); p != 65535 || q != 49152 {
		t.Fatalf("ports %d, %d; want 65535, 49152", p, q)
	}
}

// TestUDPResultWith: the mean one-way delay is exact (serialization plus
// propagation, ARP resolved before); a receiver that counted more than was
// sent (a duplicate) shows no loss.
func TestUDPResultWith(t *testing.T) {
	const d = 10 * us
	n, a, b, ab, _ := pair(t, gbps, d, nil)
	n.run(sec)
	a.Ping(b.Addr(), 1, ms)
	n.run(2 * sec)
	u := a.UDP(b.Addr(), 9000, 8_000_000, 100, 10*ms) // one per 100 us
	n.run(3 * sec)
	r := u.ResultWith(b)
	if want := float64(ser(ethLen+ipLen+udpLen+100, gbps)+d) / float64(us); r.Sent != 100 || r.Received != 100 || r.MeanDelayUs != want {
		t.Fatalf("result %+v, want mean delay %v us", r, want)
	}
	b.Receive(1, ab.log[len(ab.log)-1].f)
	if r := u.ResultWith(b); r.Received != 101 || *r.Lost != 0 || *r.Loss != 0 {
		t.Fatalf("with a duplicate: %+v", r)
	}
}

// --- statistics and completion ---

// TestPercentileNearestRank: the sample at rank ceil(p*n), for p down to
// the smallest positive.
func TestPercentileNearestRank(t *testing.T) {
	var s []element.Time
	for i := 1; i <= 10; i++ {
		s = append(s, element.Time(i))
	}
	for _, c := range []struct {
		p    float64
		want element.Time
	}{{1e-12, 1}, {0.05, 1}, {0.5, 5}, {0.55, 6}, {0.9, 9}, {1, 10}} {
		if got := Percentile(s, c.p); got != c.want {
			t.Errorf("p%v = %d, want %d", c.p, got, c.want)
		}
	}
	var h []element.Time
	for i := 100; i >= 1; i-- {
		h = append(h, element.Time(i)*us)
	}
	if got := Summarize(h); got != (Summary{Count: 100, MinUs: 1, MeanUs: 50.5, P50Us: 50, P90Us: 90, P99Us: 99, MaxUs: 100}) {
		t.Errorf("summary %+v", got)
	}
}

// TestRateAndDone: a rate over no time is zero, not infinite; OnDone on a
// completed app runs at once.
func TestRateAndDone(t *testing.T) {
	if bps(100, 0) != 0 || bps(1, sec) != 8 {
		t.Fatalf("bps %v, %v", bps(100, 0), bps(1, sec))
	}
	var d done
	d.fire()
	ran := false
	d.OnDone(func() { ran = true })
	if !ran {
		t.Fatal("OnDone after completion did not run")
	}
}

// --- shuffle ---

// TestShuffleThreadsAndDefaults: a host keeps exactly Threads transfers
// running; the defaults are the paper's (500 MB, 10 threads) and the
// discard port; a shuffle of no hosts is done at once.
func TestShuffleThreadsAndDefaults(t *testing.T) {
	n, hs := star(t, 4, gbps, us)
	n.run(sec)
	var peers []netip.Addr
	for _, h := range hs {
		peers = append(peers, h.Addr())
	}
	hs[0].ShuffleTo(peers, ShuffleOptions{Bytes: 1000, Threads: 2})
	if hs[0].NumConns() != 2 {
		t.Fatalf("%d transfers running, want 2", hs[0].NumConns())
	}
	var o ShuffleOptions
	o.defaults()
	if o != (ShuffleOptions{Bytes: 500_000_000, Threads: 10, Port: DiscardPort}) {
		t.Fatalf("defaults %+v", o)
	}
	if s := StartShuffle(nil, ShuffleOptions{}); !s.Done() || s.Result().Hosts != 0 {
		t.Fatal("empty shuffle not done")
	}
}

// TestShuffleResultMeans: a host that could not take part (no address)
// is in the per-host list but not in the means; the total time runs to
// the latest host's end, whatever the order of the hosts.
func TestShuffleResultMeans(t *testing.T) {
	n, hs := star(t, 3, gbps, us)
	n.run(sec)
	hs[2].SetAddr(netip.Prefix{})
	s := StartShuffle(hs, ShuffleOptions{Bytes: 20_000, Threads: 1})
	n.run(n.now + 10*sec)
	r := s.Result()
	p := r.PerHost
	if !s.Done() || len(p) != 3 || p[2].Error == "" || p[0].GoodputBps <= 0 || p[1].GoodputBps <= 0 {
		t.Fatalf("result %+v", r)
	}
	if r.MeanGoodputBps != (p[0].GoodputBps+p[1].GoodputBps)/2 || r.MeanCompletionUs != (p[0].CompletionUs+p[1].CompletionUs)/2 {
		t.Fatalf("means %v, %v over %+v", r.MeanGoodputBps, r.MeanCompletionUs, p)
	}
	late, early := &ShuffleApp{h: hs[0], end: 10 * us}, &ShuffleApp{h: hs[1], end: 5 * us}
	late.fire()
	early.fire()
	if r := (&Shuffle{apps: []*ShuffleApp{late, early}}).Result(); r.TotalTimeUs != 10 {
		t.Fatalf("total %v us, want 10", r.TotalTimeUs)
	}
}

// TestShuffleCountsFailuresAndLosses: a refused transfer counts as failed
// with no bytes; a repaired loss counts one retransmission and no
// timeout.
func TestShuffleCountsFailuresAndLosses(t *testing.T) {
	n, a, _, _, _ := pair(t, gbps, 10*us, func(c *Config) { c.NoSink = true })
	n.run(sec)
	s := a.ShuffleTo([]netip.Addr{ipB}, ShuffleOptions{Bytes: 10_000, Threads: 1})
	n.run(n.now + sec)
	if r := s.Result(); !s.Done() || r.Failed != 1 || r.Bytes != 0 {
		t.Fatalf("refused: %+v", r)
	}
	n, a, _, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	k := 0
	ab.drop = func(f []byte) bool {
		if isData(f) {
			k++
			return k == 2
		}
		return false
	}
	s = a.ShuffleTo([]netip.Addr{ipB}, ShuffleOptions{Bytes: 30_000, Threads: 1})
	n.run(n.now + sec)
	if r := s.Result(); !s.Done() || r.Retransmits != 1 || r.Timeouts != 0 || r.Bytes != 30_000 {
		t.Fatalf("one loss: %+v", r)
	}
}

// --- TCP apps ---

// TestTCPAppArguments: a negative size, and a response size past the
// limit, are refused; an unfinished transfer has no completion time.
func TestTCPAppArguments(t *testing.T) {
	n, a, _, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	if c := a.TCPBulk(ipB, DiscardPort, -1); !errors.Is(c.Err(), ErrBadArgument) {
		t.Errorf("bulk of -1 bytes: %v", c.Err())
	}
	if rr := a.TCPRR(ipB, 10, rrMaxSize+1, 1); !errors.Is(rr.Err(), ErrBadArgument) || !rr.Done() {
		t.Errorf("response past the limit: %v", rr.Err())
	}
	c := a.TCPBulk(ipB, DiscardPort, 1000)
	if r := c.Result(); r.Completed != 0 || r.CompletionUs != 0 || r.GoodputBps != 0 {
		t.Errorf("unfinished transfer: %+v", r)
	}
}

// rrClient opens a raw connection to b's RR server that collects what
// comes back.
func rrClient(t *testing.T, a *Host) (c *TCPConn, got *int) {
	t.Helper()
	c, err := a.Connect(ipB, RRPort)
	if err != nil {
		t.Fatal(err)
	}
	got = new(int)
	c.OnData(func(_ *TCPConn, b []byte) { *got += len(b) })
	return c, got
}

// TestRRPreamble: the server reads a preamble split over segments whole,
// and refuses a response size past the limit.
func TestRRPreamble(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	var pre [8]byte
	binary.BigEndian.PutUint32(pre[0:4], 10)
	binary.BigEndian.PutUint32(pre[4:8], 64)
	c, got := rrClient(t, a)
	c.OnEstablished(func(c *TCPConn) { c.WriteBytes(pre[:7]) })
	n.run(n.now + ms)
	c.WriteBytes(pre[7:])
	n.run(n.now + ms)
	c.Write(10)
	n.run(n.now + ms)
	if *got != 64 || b.Counter("rr_served") != 1 || b.Counter("rr_bad_preamble") != 0 {
		t.Fatalf("split preamble: %d bytes back, %v", *got, b.Counters())
	}
	binary.BigEndian.PutUint32(pre[4:8], rrMaxSize+1)
	c, _ = rrClient(t, a)
	c.OnEstablished(func(c *TCPConn) { c.WriteBytes(pre[:]) })
	n.run(n.now + ms)
	if b.Counter("rr_bad_preamble") != 1 || !errors.Is(c.Err(), ErrReset) {
		t.Fatalf("response past the limit: %v, %v", c.Err(), b.Counters())
	}
}

// TestRRRate: transactions per second run from the first request to the
// last response: back to back, that is the count over the sum of the
// RTTs.
func TestRRRate(t *testing.T) {
	n, a, _, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	rr := a.TCPRR(ipB, 10, 10, 5)
	n.run(n.now + sec)
	r := rr.Result()
	var sum element.Time
	for _, x := range r.RTTs {
		sum += x
	}
	if r.Transactions != 5 || r.PerSecond != 5/sum.Seconds() {
		t.Fatalf("%d transactions, %v per second, want %v", r.Transactions, r.PerSecond, 5/sum.Seconds())
	}
}

// --- TCP ---

// TestConfigBounds: an MTU under 576 is raised to it (MSS 536); MaxRTO
// below MinRTO is raised to it; the receive window is capped at 1 GiB,
// the most window scaling carries (RFC 7323 §2.3).
func TestConfigBounds(t *testing.T) {
	_, a, b, _, _ := pair(t, gbps, us, func(c *Config) { c.MTU = 500 })
	if a.cfg.MTU != 576 || a.newConn(connKey{b.Addr().As4(), 40000, 80}).mss != 536 {
		t.Fatalf("MTU %d", a.cfg.MTU)
	}
	c := TCPConfig{MinRTO: 2 * sec, MaxRTO: sec, RecvWindow: 1 << 31}
	c.defaults()
	if c.MaxRTO != 2*sec || c.RecvWindow != 1<<30 {
		t.Fatalf("MaxRTO %v, RecvWindow %d", c.MaxRTO, c.RecvWindow)
	}
}

// TestSegmentInfoOnlyIPv4: a frame of another EtherType is not read as a
// segment, whatever its bytes.
func TestSegmentInfoOnlyIPv4(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, _ := establish(t, n, a, b)
	mark := len(ab.log)
	c.Write(100)
	f := append([]byte(nil), ab.log[mark].f...)
	if _, _, ok := a.SegmentInfo(f); !ok {
		t.Fatal("own segment not recognised")
	}
	binary.BigEndian.PutUint16(f[12:14], 0x86dd)
	if _, _, ok := a.SegmentInfo(f); ok {
		t.Fatal("an IPv6-typed frame read as a segment")
	}
}

// TestConnectSkipsPortInUse: the next ephemeral port, when a connection
// to the same peer and port holds it, is skipped, not refused.
func TestConnectSkipsPortInUse(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, _ := establish(t, n, a, b)
	a.nextPort = c.key.lport - 1
	c2, err := a.Connect(ipB, DiscardPort)
	if err != nil || c2.key.lport != c.key.lport+1 {
		t.Fatalf("err %v, port %d; want %d", err, c2.key.lport, c.key.lport+1)
	}
}

// TestWriteAfterClose: data written after Close is refused and counted,
// not sent after the FIN.
func TestWriteAfterClose(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, _ := establish(t, n, a, b)
	c.Write(100)
	c.Close()
	c.Write(100)
	c.WriteBytes([]byte{1})
	if c.sndEnd != 100 || a.Counter("tcp_write_after_close") != 2 {
		t.Fatalf("stream end %d, %v", c.sndEnd, a.Counters())
	}
}

// TestCloseTwiceNoop: a second Close does nothing: in particular it does
// not push data out of a connection parked on a full NIC queue before the
// queue's wake-up.
func TestCloseTwiceNoop(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, func(c *Config) { c.NICRate = 8_000_000_000 })
	n.run(sec)
	c := sweepConn(a, b, 40000)
	q := element.Time(a.cfg.TxQueue)
	a.nicFree = n.now + 2*q*element.Nanosecond
	c.Write(c.mss)
	c.Close()
	n.run(n.now + q*element.Nanosecond + q/2*element.Nanosecond - 1) // backlog under TxQueue, before the wake-up
	c.Close()
	if c.sndNxt != 0 || c.segsOut != 0 || !c.txWaiting {
		t.Fatalf("SND.NXT %d, %d segments out, parked %v", c.sndNxt, c.segsOut, c.txWaiting)
	}
}

// TestSynAckAdvertisesOwnMSS: the MSS option says what this host can
// take (MTU - 40), not the smaller MSS the peer offered (RFC 9293
// §3.7.1); the connection itself uses the smaller.
func TestSynAckAdvertisesOwnMSS(t *testing.T) {
	n, a, b, _, ba := pair(t, gbps, 10*us, nil)
	n.run(sec)
	mark := len(ba.log)
	b.Receive(1, frameTo(a, b, protoTCP, tcpHdr(40000, DiscardPort, 1000, 0, flagSYN, []byte{2, 4, 2, 0x18})))
	srv := b.Conn(FlowKey{LocalPort: DiscardPort, Remote: ipA, RemotePort: 40000})
	n.run(n.now + ms) // a resets it: no connection of a's
	var synack []byte
	for _, s := range ba.log[mark:] {
		if s.f[12] == 0x08 && s.f[13] == 0 && s.f[ethLen+9] == protoTCP && tcpFlags(s.f) == flagSYN|flagACK {
			synack = s.f
		}
	}
	if srv == nil || synack == nil || srv.MSS() != 536 || srv.Result().MaxCwnd != 10*536 {
		t.Fatalf("conn %v, SYN-ACK %v", srv, synack != nil)
	}
	if o := synack[ethLen+ipLen+tcpLen:]; o[0] != 2 || binary.BigEndian.Uint16(o[2:4]) != 1460 {
		t.Fatalf("SYN-ACK options % x", o[:8])
	}
}

// TestRTOStartedOnce: the retransmission timer runs from the oldest
// unacknowledged segment; sending more does not push it back (RFC 6298
// §5.1).
func TestRTOStartedOnce(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c := sweepConn(a, b, 40000)
	c.Write(c.mss)
	at := c.rtoAt
	n.run(n.now + ms)
	c.Write(c.mss)
	if at == 0 || c.rtoAt != at || c.sndNxt != 2*c.mss {
		t.Fatalf("deadline %v then %v; SND.NXT %d", at, c.rtoAt, c.sndNxt)
	}
}

// TestFastRetransmitWithoutFIN: a fast retransmit of the stream's last
// segment, before the app closed, carries no FIN and leaves the state.
func TestFastRetransmitWithoutFIN(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c := sweepConn(a, b, 40000)
	inFlight(c, c.mss)
	for range 3 {
		c.dupAck()
	}
	if c.FastRetransmits() != 1 || c.State() != StateEstablished {
		t.Fatalf("%d fast retransmits, %v", c.FastRetransmits(), c.State())
	}
}

// TestSYNRetransmitCounted: a SYN sent again counts as a retransmission
// and its timeout as a timeout.
func TestSYNRetransmitCounted(t *testing.T) {
	n, a, _, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	lost := false
	ab.drop = func(f []byte) bool {
		if !lost && f[ethLen+9] == protoTCP {
			lost = true
			return true
		}
		return false
	}
	c, _ := a.Connect(ipB, DiscardPort)
	n.run(n.now + 2*sec)
	if c.State() != StateEstablished || c.Retransmits() != 1 || c.Timeouts() != 1 {
		t.Fatalf("%v, %d retransmits, %d timeouts", c.State(), c.Retransmits(), c.Timeouts())
	}
}

// TestFirstProbePushes: the first window probe sends the stream's next
// byte as data; when that is the last byte written, with PSH.
func TestFirstProbePushes(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	a.Receive(1, zeroWindow(a, b, c, srv))
	mark := len(ab.log)
	c.Write(1)
	n.run(n.now + sec)
	for _, s := range ab.log[mark:] {
		if isData(s.f) {
			if tcpFlags(s.f) != flagACK|flagPSH {
				t.Fatalf("probe flags %#x", tcpFlags(s.f))
			}
			return
		}
	}
	t.Fatal("no probe")
}

// TestTimerWithNothingOutstanding: a retransmission timer that finds
// nothing unacknowledged (the window reopened while the NIC queue held
// the connection back) is no timeout: the window stays.
func TestTimerWithNothingOutstanding(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c := sweepConn(a, b, 40000)
	cwnd, ssthresh := c.cwnd, c.ssthresh
	c.onRTO()
	if c.Timeouts() != 0 || c.cwnd != cwnd || c.ssthresh != ssthresh {
		t.Fatalf("%d timeouts, cwnd %d ssthresh %d", c.Timeouts(), c.cwnd, c.ssthresh)
	}
}

// TestSynFinRefused: a SYN with FIN opens nothing; it is answered with a
// reset acknowledging both.
func TestSynFinRefused(t *testing.T) {
	n, a, b, _, ba := pair(t, gbps, 10*us, nil)
	n.run(sec)
	mark := len(ba.log)
	b.Receive(1, frameTo(a, b, protoTCP, tcpHdr(40000, DiscardPort, 1000, 0, flagSYN|flagFIN, nil)))
	n.run(n.now + ms)
	var rst []byte
	for _, s := range ba.log[mark:] {
		if s.f[12] == 0x08 && s.f[13] == 0 && s.f[ethLen+9] == protoTCP {
			rst = s.f
		}
	}
	if b.NumConns() != 0 || rst == nil || tcpFlags(rst) != flagRST|flagACK || tcpAck(rst) != 1002 {
		t.Fatalf("%d conns, %v", b.NumConns(), b.Counters())
	}
}

// TestWindowUpdateAfterHandshake: SND.WL1 is the sequence number of the
// segment that completed the handshake (RFC 9293 §3.10.7.3, §3.10.7.4):
// for the active side the SYN-ACK's, so a segment at that sequence number
// updates the window; for the passive side the ACK's, so an older one does
// not.
func TestWindowUpdateAfterHandshake(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	ab.drop = func(f []byte) bool { return f[ethLen+9] == protoTCP }
	c, _ := a.Connect(ipB, DiscardPort)
	a.Receive(1, frameTo(b, a, protoTCP, tcpHdr(DiscardPort, c.key.lport, 5000, c.iss+1, flagSYN|flagACK, []byte{2, 4, 5, 0xb4, 1, 3, 3, 0})))
	seg := tcpHdr(DiscardPort, c.key.lport, 5000, c.iss+1, flagACK, nil)
	binary.BigEndian.PutUint16(seg[14:16], 1000)
	a.Receive(1, frameTo(b, a, protoTCP, seg))
	if c.State() != StateEstablished || c.sndWnd != 1000 {
		t.Fatalf("active side: %v, window %d; want 1000", c.State(), c.sndWnd)
	}

	b.Receive(1, frameTo(a, b, protoTCP, tcpHdr(40000, DiscardPort, 1000, 0, flagSYN, []byte{2, 4, 5, 0xb4, 1, 3, 3, 0})))
	srv := b.Conn(FlowKey{LocalPort: DiscardPort, Remote: ipA, RemotePort: 40000})
	ack := func(seq uint32, wnd uint16) {
		s := tcpHdr(40000, DiscardPort, seq, srv.iss+1, flagACK, nil)
		binary.BigEndian.PutUint16(s[14:16], wnd)
		b.Receive(1, frameTo(a, b, protoTCP, s))
	}
	ack(1001, 100)
	if srv.State() != StateEstablished || srv.sndWnd != 100 || srv.maxSndWnd != 65535 {
		t.Fatalf("passive side: %v, window %d, max %d; want 100, 65535 (the SYN's)", srv.State(), srv.sndWnd, srv.maxSndWnd)
	}
	ack(1000, 0)
	if srv.sndWnd != 100 {
		t.Fatalf("a segment older than the handshake's ACK set the window to %d", srv.sndWnd)
	}
}

// TestMaxSndWndNeverShrinks: MAX.SND.WND is the largest window ever
// offered (RFC 5961 §5.2): after the window closes, an ACK behind SND.UNA
// but within the largest window is still acceptable, and its data taken.
func TestMaxSndWndNeverShrinks(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	c.Write(3000)
	n.run(n.now + ms)
	a.Receive(1, zeroWindow(a, b, c, srv))
	if c.sndWnd != 0 || c.sndUna != 3000 {
		t.Fatalf("window %d, SND.UNA %d", c.sndWnd, c.sndUna)
	}
	oldAckTakesData(t, a, b, c, srv, 1000)
}

// oldAckTakesData hands a 100-byte segment from srv whose ACK lies behind
// bytes below SND.UNA, and checks that c takes the data and does not
// count the ACK as too old.
func oldAckTakesData(t *testing.T, a, b *Host, c, srv *TCPConn, behind uint32) {
	t.Helper()
	s := append(tcpHdr(DiscardPort, c.key.lport, srv.seqOf(srv.sndNxt), c.seqOf(c.sndUna)-behind, flagACK, nil), make([]byte, 100)...)
	a.Receive(1, frameTo(b, a, protoTCP, s))
	if c.BytesReceived() != 100 || a.Counter("tcp_ack_too_old") != 0 {
		t.Fatalf("ACK %d behind: received %d, %v", behind, c.BytesReceived(), a.Counters())
	}
}

// TestNewAckArithmetic pins more of the window arithmetic: a sender with
// one segment of room to spare is not cwnd-limited (RFC 7661); a full ACK
// leaving nothing in flight sets cwnd to min(ssthresh, 2 SMSS) (RFC 6582
// §3.2 step 3: max(FlightSize, SMSS) + SMSS); a new ACK or the end of a
// recovery starts the duplicate count over; every recovery resets the
// timer on its first partial ACK; the largest cwnd is kept for the result;
// acknowledged payload is released.
func TestNewAckArithmetic(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	port := uint16(40000)
	conn := func() *TCPConn { port++; return sweepConn(a, b, port) }
	mss := conn().mss

	c := conn()
	inFlight(c, 9*mss)
	c.newAck(mss)
	if c.cwnd != 10*mss {
		t.Errorf("9 of 10 segments in flight: cwnd grew to %d", c.cwnd)
	}

	c = conn()
	c.cwnd, c.ssthresh = 8*mss, 5*mss
	inFlight(c, 10*mss)
	c.inRecovery, c.recover = true, 10*mss-1
	c.newAck(10 * mss)
	if c.cwnd != 2*mss {
		t.Errorf("full ACK, nothing in flight: cwnd %d, want %d", c.cwnd, 2*mss)
	}

	c = conn()
	inFlight(c, 20*mss)
	c.dupAck()
	c.dupAck()
	c.newAck(mss)
	c.dupAck()
	if c.FastRetransmits() != 0 {
		t.Errorf("two duplicates, a new ACK, one duplicate: fast retransmit")
	}
	c.dupAck()
	c.dupAck()
	if c.FastRetransmits() != 1 {
		t.Errorf("three duplicates after the new ACK: %d fast retransmits", c.FastRetransmits())
	}
	c.dupAck()
	c.dupAck()
	c.newAck(20 * mss) // full
	c.sndNxt, c.sndMax, c.sndEnd = 30*mss, 30*mss, 30*mss
	for range 3 {
		c.dupAck()
	}
	if c.FastRetransmits() != 2 {
		t.Errorf("three duplicates after a recovery: %d fast retransmits", c.FastRetransmits())
	}

	c = conn()
	c.partialSeen = true // left by an earlier recovery
	inFlight(c, 20*mss)
	for range 3 {
		c.dupAck()
	}
	c.rtoAt = 0
	c.newAck(mss)
	if c.rtoAt != n.now+c.rto {
		t.Errorf("first partial ACK of a second recovery: deadline %v, want %v", c.rtoAt, n.now+c.rto)
	}

	c = conn()
	inFlight(c, 10*mss)
	c.newAck(5 * mss)
	c.onRTO()
	if r := c.Result(); r.Cwnd != mss || r.MaxCwnd != 12*mss {
		t.Errorf("cwnd %d, max %d; want %d, %d", r.Cwnd, r.MaxCwnd, mss, 12*mss)
	}
}

// TestAckedPayloadReleased: once the peer acknowledges the bytes an app
// wrote, the sender holds none of them.
func TestAckedPayloadReleased(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	c.WriteBytes(make([]byte, 3000))
	n.run(n.now + ms)
	if c.BytesAcked() != 3000 || srv.BytesReceived() != 3000 || len(c.chunks) != 0 {
		t.Fatalf("acked %d, %d chunks held", c.BytesAcked(), len(c.chunks))
	}
}

// TestCompletionAtLastDataByte: completion is when the last data byte is
// acknowledged; the FIN's acknowledgment later does not move it.
func TestCompletionAtLastDataByte(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, _ := establish(t, n, a, b)
	c.Write(1000)
	n.run(n.now + ms)
	done := c.Result().Completed
	c.Close()
	n.run(n.now + ms)
	if done == 0 || c.State() != StateTimeWait || c.Result().Completed != done {
		t.Fatalf("completed %d, then %d (%v)", done, c.Result().Completed, c.State())
	}
}

// TestOverlapTrimmed: a segment starting one byte below RCV.NXT delivers
// only its new bytes.
func TestOverlapTrimmed(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	base := c.seqOf(c.sndNxt)
	send := func(off uint32, size int) {
		seg := append(tcpHdr(c.key.lport, DiscardPort, base+off, c.rseqOf(c.rcvNxt), flagACK, nil), make([]byte, size)...)
		b.Receive(1, frameTo(a, b, protoTCP, seg))
	}
	send(0, 100)
	send(99, 101)
	if srv.BytesReceived() != 200 || srv.rcvNxt != 200 {
		t.Fatalf("received %d, RCV.NXT %d; want 200", srv.BytesReceived(), srv.rcvNxt)
	}
}

// TestDelayedACKTimerRestarts: a lone segment's ACK waits the full
// timeout from its own arrival, as Linux's does (its pending ACK timer is
// cleared by every ACK sent, tcp_event_ack_sent, and the next delayed ACK
// starts a new one): a segment arriving 1 ms after an immediate ACK of two
// was acknowledged when the first segment's timer ran out, 38 ms after it,
// not 40. A segment after the timer fired starts it again.
func TestDelayedACKTimerRestarts(t *testing.T) {
	n, a, b, _, ba := pair(t, gbps, 10*us, func(c *Config) { c.TCP.DelayedACK = true })
	n.run(sec)
	c, _ := establish(t, n, a, b)
	base := c.seqOf(c.sndNxt)
	t0 := n.now + ms
	mark := len(ba.log)
	for i, at := range []element.Time{0, ms, 2 * ms, 50 * ms} {
		seg := append(tcpHdr(c.key.lport, DiscardPort, base+uint32(100*i), c.rseqOf(c.rcvNxt), flagACK, nil), make([]byte, 100)...)
		f := frameTo(a, b, protoTCP, seg)
		n.at(t0+at, func() { b.Receive(1, f) })
	}
	n.run(t0 + sec)
	var at []element.Time
	for _, s := range ba.log[mark:] {
		at = append(at, s.t-t0)
	}
	if len(at) != 3 || at[0] != ms || at[1] != 42*ms || at[2] != 90*ms {
		t.Fatalf("ACKs at %v after the first segment; want 1ms, 42ms, 90ms", at)
	}
	if b.Counter("tcp_delayed_ack") != 2 {
		t.Fatalf("%v", b.Counters())
	}
}

// TestOutOfOrderAllowanceReleased: bytes held out of order stop counting
// against the allowance once delivered, so holes filled one after another
// never exhaust it.
func TestOutOfOrderAllowanceReleased(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, func(c *Config) { c.TCP.RecvWindow = 2048 })
	n.run(sec)
	c, srv := establish(t, n, a, b)
	base := c.seqOf(c.sndNxt)
	send := func(off uint32) {
		seg := append(tcpHdr(c.key.lport, DiscardPort, base+off, c.rseqOf(c.rcvNxt), flagACK, nil), make([]byte, 1000)...)
		b.Receive(1, frameTo(a, b, protoTCP, seg))
	}
	for i := range uint32(5) {
		send(2000*i + 1000)
		send(2000 * i)
	}
	if srv.BytesReceived() != 10_000 || srv.oooBytes != 0 || b.Counter("drop_tcp_ooo_full") != 0 {
		t.Fatalf("received %d, %d bytes held, %v", srv.BytesReceived(), srv.oooBytes, b.Counters())
	}
}

// TestSimultaneousClose: a FIN arriving in FIN-WAIT-1 before the ACK of
// ours leads to CLOSING, then TIME-WAIT when that ACK comes (RFC 9293
// §3.6).
func TestSimultaneousClose(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, srv := establish(t, n, a, b)
	ab.drop = func([]byte) bool { return true }
	c.Close()
	if c.State() != StateFinWait1 {
		t.Fatalf("after Close: %v", c.State())
	}
	seq := srv.seqOf(srv.sndNxt)
	a.Receive(1, frameTo(b, a, protoTCP, tcpHdr(DiscardPort, c.key.lport, seq, c.iss+1, flagFIN|flagACK, nil)))
	if c.State() != StateClosing {
		t.Fatalf("FIN in FIN-WAIT-1: %v", c.State())
	}
	a.Receive(1, frameTo(b, a, protoTCP, tcpHdr(DiscardPort, c.key.lport, seq+1, c.iss+2, flagACK, nil)))
	if c.State() != StateTimeWait {
		t.Fatalf("ACK in CLOSING: %v", c.State())
	}
}

// TestResetBehindRcvNxtIgnored: a reset one byte below RCV.NXT is outside
// the window (RFC 5961 §3.2): ignored, not challenged.
func TestResetBehindRcvNxtIgnored(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, 10*us, nil)
	n.run(sec)
	c, _ := establish(t, n, a, b)
	a.Receive(1, frameTo(b, a, protoTCP, tcpHdr(DiscardPort, c.key.lport, c.rseqOf(c.rcvNxt)-1, 0, flagRST, nil)))
	if c.State() != StateEstablished || a.Counter("tcp_rst_out_of_window") != 1 || a.Counter("tcp_challenge_ack") != 0 {
		t.Fatalf("%v, %v", c.State(), a.Counters())
	}
}
