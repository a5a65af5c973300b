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

// dhcpTwoServers puts a DHCP client and two servers on a learning switch:
// good (10.0.0.1) offers and answers, rogue (10.0.0.2) offers nothing but
// answers every REQUEST, the one meant for good too, and is nearer the
// client, so its answer arrives first.
func dhcpTwoServers(t *testing.T) (n *fakeNet, h *Host, good, rogue *dhcpServer) {
	t.Helper()
	n = &fakeNet{}
	sw := n.add(&hub{}, 99)
	h = New(Config{Name: "c", MAC: [6]byte{2, 0, 0, 0, 0, 1}, DHCP: true})
	good = &dhcpServer{mac: wire.MAC{2, 0, 0, 0, 0, 0xfe}, ip: netip.MustParseAddr("10.0.0.1"), leases: map[wire.MAC]netip.Addr{}, lease: time.Hour}
	rogue = &dhcpServer{mac: wire.MAC{2, 0, 0, 0, 0, 0xfd}, ip: netip.MustParseAddr("10.0.0.2"), leases: map[wire.MAC]netip.Addr{}, lease: time.Hour,
		noOffer: true, base: 100}
	n.connect(n.add(h, 1), 1, sw, 1, gbps, us)
	n.connect(n.add(good, 2), 1, sw, 2, gbps, 100*us)
	n.connect(n.add(rogue, 3), 1, sw, 3, gbps, us)
	n.attach()
	return n, h, good, rogue
}

// TestDHCPNakFromOtherServerIgnored: a NAK that names a server other than
// the one the REQUEST selected answers no request of ours (RFC 2131 §3.1:
// the other servers take the REQUEST as a decline). The client restarted
// at every such NAK and, the rogue being nearer, never bound.
func TestDHCPNakFromOtherServerIgnored(t *testing.T) {
	n, h, good, rogue := dhcpTwoServers(t)
	rogue.nak = true
	n.run(10 * element.Second)
	if l, _ := h.DHCP(); l.State != "BOUND" || l.Server != good.ip || h.Addr() != netip.MustParseAddr("10.0.0.101") {
		t.Fatalf("lease %+v, address %v; counters %v", l, h.Addr(), h.Counters())
	}
	if h.Counter("dhcp_nak_rx") != 0 || h.Counter("drop_dhcp_wrong_server") != 1 {
		t.Fatalf("counters %v", h.Counters())
	}
	// Renewal is unicast to good: a NAK from rogue answers nothing either.
	l, _ := h.DHCP()
	h.Receive(1, rogueReply(t, h, rogue, "nak"))
	if h.Addr() != l.Addr.Addr() || h.Counter("drop_dhcp_wrong_server") != 1 {
		t.Fatalf("NAK from another server while bound: address %v, %v", h.Addr(), h.Counters())
	}
	h.dhcp.state = DHCPRenewing
	h.Receive(1, rogueReply(t, h, rogue, "nak"))
	if h.Addr() != l.Addr.Addr() || h.Counter("drop_dhcp_wrong_server") != 2 {
		t.Fatalf("NAK from another server while renewing: address %v, %v", h.Addr(), h.Counters())
	}
	// While rebinding any server may answer (RFC 2131 §4.4.5).
	h.dhcp.state = DHCPRebinding
	h.Receive(1, rogueReply(t, h, rogue, "nak"))
	if h.Addr().IsValid() || h.Counter("dhcp_nak_rx") != 1 {
		t.Fatalf("NAK while rebinding: address %v, %v", h.Addr(), h.Counters())
	}
}

// TestDHCPAckFromOtherServerIgnored: an ACK from a server the REQUEST did
// not select is no lease: the client took the address rogue handed out
// for good's offer.
func TestDHCPAckFromOtherServerIgnored(t *testing.T) {
	n, h, good, _ := dhcpTwoServers(t)
	n.run(10 * element.Second)
	if l, _ := h.DHCP(); l.State != "BOUND" || l.Server != good.ip || h.Addr() != netip.MustParseAddr("10.0.0.101") || l.Acks != 1 {
		t.Fatalf("lease %+v, address %v; counters %v", l, h.Addr(), h.Counters())
	}
	if h.Counter("drop_dhcp_wrong_server") != 1 {
		t.Fatalf("counters %v", h.Counters())
	}
}

// rogueReply is an ACK or NAK from s to h's current transaction, as a
// broadcast frame.
func rogueReply(t *testing.T, h *Host, s *dhcpServer, kind string) []byte {
	t.Helper()
	typ := dhcpv4.MessageTypeAck
	if kind == "nak" {
		typ = dhcpv4.MessageTypeNak
	}
	m, err := dhcpv4.New(dhcpv4.WithTransactionID(h.dhcp.xid), dhcpv4.WithHwAddr(h.mac[:]), dhcpv4.WithMessageType(typ),
		dhcpv4.WithYourIP(net.IPv4(10, 0, 0, 250)), dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IP(s.ip.AsSlice()))))
	if err != nil {
		t.Fatal(err)
	}
	m.OpCode = dhcpv4.OpcodeBootReply
	f, err := wire.AppendDHCPFrame(nil, wire.Broadcast, s.mac, s.ip, netip.AddrFrom4([4]byte{255, 255, 255, 255}), m)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestNoSendWithoutAddress: once the host has lost its address (SetAddr
// with none, as a lease's expiry or a NAK does), what its apps and
// connections still send is dropped as drop_no_address: it went out
// through the gateway from 0.0.0.0, which no host may use but a DHCP
// client (RFC 1122 §3.2.1.3), and which the peer drops as a bad source.
func TestNoSendWithoutAddress(t *testing.T) {
	n, a, b, ab, _ := pair(t, gbps, us, func(c *Config) { c.Gateway = ipB })
	n.run(ms)
	p := a.Ping(ipB, 5, 10*ms)
	c := a.TCPBulk(ipB, DiscardPort, 1<<30)
	n.run(n.now + 15*ms)
	if p.Result().Received == 0 || c.BytesAcked() == 0 {
		t.Fatalf("before: ping %+v, bulk acked %d", p.Result(), c.BytesAcked())
	}
	mark := len(ab.log)
	a.SetAddr(netip.Prefix{})
	n.run(n.now + 2*sec)
	for _, s := range ab.log[mark:] {
		if binary.BigEndian.Uint16(s.f[12:14]) == wire.EtherTypeIPv4 && [4]byte(s.f[ethLen+12:ethLen+16]) == [4]byte{} {
			t.Fatalf("sent from 0.0.0.0 at %v: % x", s.t, s.f[:ethLen+ipLen])
		}
	}
	if a.Counter("drop_no_address") < 3 || b.Counter("drop_ip_bad_source") != 0 {
		t.Fatalf("a %v\nb %v", a.Counters(), b.Counters())
	}
}

// TestDHCPUnusableRouterIgnored: a router option the host cannot send to
// (0.0.0.0, the limited or the subnet's broadcast, a multicast address,
// the leased address itself) installs no gateway; the first usable router
// of the list is taken. Such a router became the gateway, and off-subnet
// traffic went to ARP requests for it.
func TestDHCPUnusableRouterIgnored(t *testing.T) {
	bad := []net.IP{net.IPv4zero, net.IPv4bcast, net.IPv4(10, 0, 0, 255), net.IPv4(224, 0, 0, 1), net.IPv4(10, 0, 0, 7), net.IPv4(127, 0, 0, 1)}
	for _, r := range bad {
		n, h, s := dhcpPair(t, 0)
		s.silent = true
		n.run(ms)
		h.dhcp.state = DHCPRequesting
		h.dhcp.server = netip.MustParseAddr("10.0.0.1")
		h.dhcp.receive(dhcpAck(t, h, net.IPv4(10, 0, 0, 7), net.IPv4(10, 0, 0, 1), dhcpv4.WithNetmask(net.CIDRMask(24, 32)), dhcpv4.WithRouter(r)))
		if l, _ := h.DHCP(); l.State != "BOUND" || l.Router.IsValid() || h.cfg.Gateway.IsValid() || h.Counter("dhcp_router_ignored") != 1 {
			t.Errorf("router %v: lease %+v, gateway %v, %v", r, l, h.cfg.Gateway, h.Counters())
		}
		req := h.Counter("arp_request_tx")
		h.Ping(netip.MustParseAddr("192.0.2.1"), 1, sec)
		if h.Counter("arp_request_tx") != req || h.Counter("drop_no_route") != 1 {
			t.Errorf("router %v: off-subnet ping: %v", r, h.Counters())
		}
	}
	n, h, s := dhcpPair(t, 0)
	s.silent = true
	n.run(ms)
	h.dhcp.state = DHCPRequesting
	h.dhcp.server = netip.MustParseAddr("10.0.0.1")
	h.dhcp.receive(dhcpAck(t, h, net.IPv4(10, 0, 0, 7), net.IPv4(10, 0, 0, 1), dhcpv4.WithRouter(net.IPv4zero, net.IPv4(10, 0, 0, 253))))
	if l, _ := h.DHCP(); l.Router != netip.MustParseAddr("10.0.0.253") || h.cfg.Gateway != l.Router || h.Counter("dhcp_router_ignored") != 0 {
		t.Errorf("routers 0.0.0.0, 10.0.0.253: lease %+v, gateway %v", l, h.cfg.Gateway)
	}
}

// TestARPReconfirmUnicast: a stale entry is re-confirmed by requests
// unicast to the MAC it holds (Linux's PROBE state), not broadcast; with
// no answer it is removed, and the next packet resolves it afresh by
// broadcast.
func TestARPReconfirmUnicast(t *testing.T) {
	n, a, b, ab, ba := pair(t, gbps, us, func(c *Config) { c.ARPTimeout = 10 * sec })
	n.run(sec)
	requests := func(from int) (dst []wire.MAC) {
		for _, s := range ab.log[from:] {
			if ar, err := wire.DecodeARP(s.f); err == nil && ar.Op == wire.ARPRequest && ar.TargetIP == ipB {
				dst = append(dst, wire.MAC(s.f[0:6]))
			}
		}
		return dst
	}
	mark := len(ab.log)
	a.Ping(ipB, 1, sec)
	n.run(n.now + sec)
	if d := requests(mark); len(d) != 1 || d[0] != wire.Broadcast {
		t.Fatalf("resolution sent to %v", d)
	}
	n.run(n.now + 12*sec) // stale, not yet garbage
	mark = len(ab.log)
	a.Ping(ipB, 1, sec)
	n.run(n.now + sec)
	if d := requests(mark); len(d) != 1 || d[0] != b.mac || a.Counter("arp_refresh") != 1 {
		t.Fatalf("re-confirmation sent to %v; %v", d, a.Counters())
	}
	if e, _ := a.ARPCache(ipB); e.Expires <= n.now {
		t.Fatalf("not re-confirmed: %+v", e)
	}
	// b stops answering: three unicast requests, then the entry goes.
	ba.drop = func(f []byte) bool { return binary.BigEndian.Uint16(f[12:14]) == wire.EtherTypeARP }
	n.run(n.now + 12*sec)
	mark = len(ab.log)
	a.Ping(ipB, 1, sec)
	n.run(n.now + 5*sec)
	if d := requests(mark); len(d) != 3 || d[0] != b.mac || d[1] != b.mac || d[2] != b.mac || a.Counter("arp_failed") != 1 {
		t.Fatalf("unanswered re-confirmation sent to %v; %v", d, a.Counters())
	}
	if _, ok := a.ARPCache(ipB); ok {
		t.Fatal("entry kept")
	}
	mark = len(ab.log)
	a.Ping(ipB, 1, sec)
	n.run(n.now + 10*ms)
	if d := requests(mark); len(d) != 1 || d[0] != wire.Broadcast {
		t.Fatalf("resolution after the failure sent to %v", d)
	}
}

// TestARPProbeRoundsApart: with ARPTimeout shorter than ARPRetryInterval,
// an entry re-confirmed goes stale again before the first probe's retry
// timer runs out; that timer belongs to the earlier round and must not
// send for the new one. It did: requests went out twice as often and the
// entry was given up after 1.7 s instead of ARPRetries intervals.
func TestARPProbeRoundsApart(t *testing.T) {
	n, a, _, ab, ba := pair(t, gbps, us, func(c *Config) { c.ARPTimeout = 200 * ms })
	n.run(10 * ms)
	a.Ping(ipB, 1, sec) // resolves; its retry timer runs out 1 s later
	n.run(n.now + 100*ms)
	if e, ok := a.ARPCache(ipB); !ok || !e.Resolved {
		t.Fatal("not resolved")
	}
	ba.drop = func(f []byte) bool { return binary.BigEndian.Uint16(f[12:14]) == wire.EtherTypeARP }
	n.run(n.now + 200*ms) // stale: b no longer answers ARP
	start := n.now
	mark := len(ab.log)
	a.Ping(ipB, 1, sec)
	n.run(n.now + 5*sec)
	var at []element.Time
	for _, s := range ab.log[mark:] {
		if ar, err := wire.DecodeARP(s.f); err == nil && ar.Op == wire.ARPRequest && ar.TargetIP == ipB {
			at = append(at, s.t-start)
		}
	}
	if len(at) != 3 || at[0] != 0 || at[1] != sec || at[2] != 2*sec || a.Counter("arp_failed") != 1 {
		t.Fatalf("re-confirmation requests at %v after the packet; %v", at, a.Counters())
	}
}

// TestPingIdentifiersExhausted: with all 65536 ICMP identifiers taken by
// running pings, one more fails with ErrPortsExhausted; it took over the
// identifier of the last ping started, whose replies it then received,
// and left that ping out of the table.
func TestPingIdentifiersExhausted(t *testing.T) {
	n, a, _, _, _ := pair(t, gbps, us, nil)
	n.run(ms)
	var last *PingApp
	for i := range 65536 {
		last = a.PingWith(ipB, PingOptions{Count: 2, Interval: 10 * sec, Size: 8})
		if last.Err() != nil {
			t.Fatalf("ping %d: %v", i, last.Err())
		}
	}
	p := a.PingWith(ipB, PingOptions{Count: 2, Interval: 10 * sec, Size: 8})
	if !errors.Is(p.Err(), ErrPortsExhausted) || a.pings[last.id] != last {
		t.Fatalf("ping 65537: err %v; the last ping's identifier held by %p, want %p", p.Err(), a.pings[last.id], last)
	}
}

// TestIPOptionsChecked: an option list whose lengths do not add up is
// malformed (drop_ip_bad_option), and a source-routed packet is refused
// (drop_ip_source_route), as Linux refuses both (ip_options_compile;
// accept_source_route is off by default); both were delivered. Well-formed
// options are skipped and the packet delivered.
func TestIPOptionsChecked(t *testing.T) {
	expectIPOptions(t, []ipOptionCase{
		{[]byte{1, 1, 1, 0}, ""},                                    // no-ops, end of list
		{[]byte{0, 0x99, 0x99, 0x99}, ""},                           // nothing read past the end
		{[]byte{7, 7, 4, 0, 0, 0, 0, 0}, ""},                        // record route
		{[]byte{1, 1, 1, 7}, "drop_ip_bad_option"},                  // no length
		{[]byte{7, 1, 0, 0}, "drop_ip_bad_option"},                  // length under 2
		{[]byte{7, 9, 4, 0, 0, 0, 0, 0}, "drop_ip_bad_option"},      // longer than the header
		{[]byte{131, 7, 4, 10, 0, 0, 9, 0}, "drop_ip_source_route"}, // loose source route
		{[]byte{1, 137, 7, 8, 10, 0, 0, 9}, "drop_ip_source_route"}, // strict, route done
	})
}

// TestIPOptionsPerOption: the options Linux's ip_options_compile checks
// one by one. Record route and timestamp must leave room for the entry
// their pointer names, and come once; a timestamp past its end must not
// have a full overflow counter (a prespecified one does not count);
// router alert is 4 bytes. Each of these was delivered; security and
// router alert, and full record route and timestamp options, still are.
func TestIPOptionsPerOption(t *testing.T) {
	bad := "drop_ip_bad_option"
	expectIPOptions(t, []ipOptionCase{
		{[]byte{7, 7, 8, 1, 2, 3, 4, 0}, ""},                            // record route, full
		{[]byte{7, 7, 5, 0, 0, 0, 0, 0}, bad},                           // pointer leaves 3 bytes
		{[]byte{7, 2, 1, 0}, bad},                                       // no pointer
		{[]byte{7, 7, 3, 0, 0, 0, 0, 0}, bad},                           // pointer into the header
		{[]byte{7, 7, 4, 0, 0, 0, 0, 7, 7, 4, 0, 0, 0, 0, 0, 0}, bad},   // twice
		{[]byte{68, 8, 5, 0, 0, 0, 0, 0}, ""},                           // timestamp
		{[]byte{68, 3, 5, 0}, bad},                                      // short
		{[]byte{68, 8, 4, 0, 0, 0, 0, 0}, bad},                          // pointer under 5
		{[]byte{68, 8, 5, 1, 0, 0, 0, 0}, bad},                          // address and time: no room
		{[]byte{68, 8, 9, 0xe0, 0, 0, 0, 0}, ""},                        // full, overflow 14
		{[]byte{68, 8, 9, 0xf0, 0, 0, 0, 0}, bad},                       // full, overflow 15
		{[]byte{68, 12, 13, 0xf3, 0, 0, 0, 0, 0, 0, 0, 0}, ""},          // prespecified, full
		{[]byte{68, 8, 5, 0, 0, 0, 0, 0, 68, 8, 5, 0, 0, 0, 0, 0}, bad}, // twice
		{[]byte{148, 4, 0, 0}, ""},                                      // router alert
		{[]byte{148, 2, 1, 0}, bad},                                     // router alert, short
		{[]byte{130, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, ""},             // security
		{[]byte{131, 2, 1, 0}, bad},                                     // loose source route, no pointer
	})
}

// ipOptionCase is an IPv4 option list and the drop counter it must hit
// ("" when the datagram is delivered).
type ipOptionCase struct {
	opts []byte
	want string
}

// expectIPOptions sends host b a UDP datagram from a for each case, with
// the case's options in its IPv4 header, and checks it is delivered or
// dropped under the case's counter.
func expectIPOptions(t *testing.T, cases []ipOptionCase) {
	t.Helper()
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	withOptions := func(opts []byte) []byte {
		g := frameTo(a, b, protoUDP, []byte{0x13, 0x88, 0x23, 0x28, 0, 12, 0, 0, 1, 2, 3, 4})
		f := append(append(append([]byte(nil), g[:ethLen+ipLen]...), opts...), g[ethLen+ipLen:]...)
		ip := f[ethLen:]
		ip[0] = 0x40 | byte((ipLen+len(opts))/4)
		binary.BigEndian.PutUint16(ip[2:4], uint16(len(ip)))
		ip[10], ip[11] = 0, 0
		binary.BigEndian.PutUint16(ip[10:12], fold(checksum(0, ip[:ipLen+len(opts)])))
		return f
	}
	for _, c := range cases {
		before := b.UDPPort(9000).Packets
		cnt := b.Counters()
		b.Receive(1, withOptions(c.opts))
		if c.want == "" {
			if b.UDPPort(9000).Packets != before+1 {
				t.Errorf("options % x: not delivered; %v", c.opts, b.Counters())
			}
			continue
		}
		if b.UDPPort(9000).Packets != before || b.Counter(c.want) != cnt[c.want]+1 {
			t.Errorf("options % x: want %s; %v", c.opts, c.want, b.Counters())
		}
	}
}
