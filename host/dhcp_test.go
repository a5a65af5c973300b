package host

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

// dhcpServer is a tiny DHCP server element: one pool address per client
// MAC, OFFER for DISCOVER, ACK (or NAK when told to) for REQUEST. It
// answers ARP for its own address so renewals can be unicast.
type dhcpServer struct {
	env    element.Env
	mac    wire.MAC
	ip     netip.Addr
	next   byte
	leases map[wire.MAC]netip.Addr
	lease  time.Duration
	nak    bool
	got    []dhcpv4.MessageType
	unicst int // requests received unicast
	silent bool
	// leaseSecs, when set, is sent as the lease time as is (0xffffffff is
	// "infinite"); t1 and t2, when set, as the renewal (T1) and
	// rebinding (T2) times.
	leaseSecs *uint32
	t1, t2    *time.Duration
	noRouter  bool // answers without the router option
	// noOffer makes the server ignore DISCOVERs (it still answers
	// every REQUEST, meant for it or not: a misconfigured server); base,
	// when set, is the last byte of its first pool address less one.
	noOffer bool
	base    byte
	// hostNames are the host-name options of the messages received.
	hostNames []string
}

func (s *dhcpServer) Attach(env element.Env, _ []element.PortInfo) { s.env = env }
func (s *dhcpServer) LinkChange(element.Port, bool)                {}
func (s *dhcpServer) Receive(_ element.Port, f []byte) {
	fr, err := wire.ParseFrame(f)
	if err != nil {
		return
	}
	if fr.EtherType() == wire.EtherTypeARP {
		a, err := wire.DecodeARP(f)
		if err == nil && a.Op == wire.ARPRequest && a.TargetIP == s.ip {
			out, _ := wire.AppendARPFrame(nil, a.SenderMAC, 0, &wire.ARP{Op: wire.ARPReply, SenderMAC: s.mac, SenderIP: s.ip, TargetMAC: a.SenderMAC, TargetIP: a.SenderIP})
			s.env.Send(1, out)
		}
		return
	}
	m, err := wire.DecodeDHCP(f)
	if err != nil || m.OpCode != dhcpv4.OpcodeBootRequest || s.silent {
		return
	}
	s.got = append(s.got, m.MessageType())
	s.hostNames = append(s.hostNames, m.HostName())
	if fr.Dst() == s.mac {
		s.unicst++
	}
	cm := wire.MAC(m.ClientHWAddr)
	addr, ok := s.leases[cm]
	if !ok {
		s.next++
		addr = netip.AddrFrom4([4]byte{10, 0, 0, 100 + s.base + s.next})
		s.leases[cm] = addr
	}
	var t dhcpv4.MessageType
	switch m.MessageType() {
	case dhcpv4.MessageTypeDiscover:
		if s.noOffer {
			return
		}
		t = dhcpv4.MessageTypeOffer
	case dhcpv4.MessageTypeRequest:
		t = dhcpv4.MessageTypeAck
		if s.nak {
			t = dhcpv4.MessageTypeNak
		}
	default:
		return
	}
	leaseSecs := uint32(s.lease / time.Second)
	if s.leaseSecs != nil {
		leaseSecs = *s.leaseSecs
	}
	extra := dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IP(s.ip.AsSlice())))
	if s.t1 != nil {
		extra = dhcpv4.WithOption(dhcpv4.OptRenewTimeValue(*s.t1))
	}
	extra2 := dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IP(s.ip.AsSlice())))
	if s.t2 != nil {
		extra2 = dhcpv4.WithOption(dhcpv4.OptRebindingTimeValue(*s.t2))
	}
	router := dhcpv4.WithOption(dhcpv4.OptRouter(net.IP{10, 0, 0, 254}))
	if s.noRouter {
		router = dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IP(s.ip.AsSlice())))
	}
	r, _ := dhcpv4.NewReplyFromRequest(m,
		dhcpv4.WithMessageType(t),
		extra,
		extra2,
		dhcpv4.WithYourIP(net.IP(addr.AsSlice())),
		dhcpv4.WithServerIP(net.IP(s.ip.AsSlice())),
		dhcpv4.WithNetmask(net.CIDRMask(24, 32)),
		dhcpv4.WithLeaseTime(leaseSecs),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IP(s.ip.AsSlice()))),
		router,
	)
	out, err := wire.AppendDHCPFrame(nil, cm, s.mac, s.ip, netip.AddrFrom4([4]byte{255, 255, 255, 255}), r)
	if err == nil {
		s.env.Send(1, out)
	}
}

func dhcpPair(t testing.TB, lease time.Duration) (*fakeNet, *Host, *dhcpServer) {
	if lease == 0 {
		lease = time.Hour
	}
	n := &fakeNet{}
	h := New(Config{Name: "c", MAC: [6]byte{2, 0, 0, 0, 0, 1}, DHCP: true})
	s := &dhcpServer{mac: wire.MAC{2, 0, 0, 0, 0, 0xfe}, ip: netip.MustParseAddr("10.0.0.1"), leases: map[wire.MAC]netip.Addr{}, lease: lease}
	eh, es := n.add(h, 1), n.add(s, 2)
	n.connect(eh, 1, es, 1, gbps, 10*us)
	n.attach()
	return n, h, s
}

func TestDHCPBindAndRenew(t *testing.T) {
	n, h, s := dhcpPair(t, 10*time.Second)
	if h.Addr().IsValid() {
		t.Fatal("address before DHCP")
	}
	n.run(ms)
	want := netip.MustParsePrefix("10.0.0.101/24")
	if h.Prefix() != want {
		t.Fatalf("prefix %v, want %v; counters %v", h.Prefix(), want, h.Counters())
	}
	l, ok := h.DHCP()
	if !ok || l.State != "BOUND" || l.Router != netip.MustParseAddr("10.0.0.254") || l.Server != s.ip || l.Acks != 1 {
		t.Fatalf("lease %+v", l)
	}
	// T1 = lease/2, T2 = 7/8 lease, from the bind time.
	if l.Renew-l.Bound != 5*sec || l.Rebind-l.Bound != 8750*ms || l.Expires-l.Bound != 10*sec {
		t.Fatalf("lease times %+v", l)
	}
	if h.Counter("arp_gratuitous_tx") != 1 {
		t.Fatalf("no gratuitous ARP on bind: %v", h.Counters())
	}
	if len(s.got) != 2 || s.got[0] != dhcpv4.MessageTypeDiscover || s.got[1] != dhcpv4.MessageTypeRequest {
		t.Fatalf("server saw %v", s.got)
	}
	// Renewal at T1, unicast to the server; the lease runs on.
	n.run(l.Renew + ms)
	l2, _ := h.DHCP()
	if l2.Acks != 2 || l2.State != "BOUND" || s.unicst != 1 || h.Counter("dhcp_renewed") != 1 || l2.Expires != l.Renew+10*sec+(l2.Bound-l.Renew) {
		t.Fatalf("after renew: lease %+v, unicast %d, counters %v", l2, s.unicst, h.Counters())
	}
	if h.Counter("arp_gratuitous_tx") != 1 {
		t.Fatal("renewal re-announced an unchanged address")
	}
}

// A server that stops answering: renew, rebind, expire, start over.
func TestDHCPExpiry(t *testing.T) {
	n, h, s := dhcpPair(t, 16*time.Second)
	n.run(ms)
	l, _ := h.DHCP()
	s.silent = true
	n.run(l.Expires + ms)
	if h.Addr().IsValid() || h.Counter("dhcp_expired") != 1 {
		t.Fatalf("addr %v counters %v", h.Addr(), h.Counters())
	}
	if st, _ := h.DHCP(); st.State != "SELECTING" {
		t.Fatalf("state %v", st.State)
	}
	s.silent = false
	n.run(l.Expires + 20*sec)
	if !h.Addr().IsValid() {
		t.Fatalf("not rebound: %v", h.Counters())
	}
}

func TestDHCPNak(t *testing.T) {
	n, h, s := dhcpPair(t, 10*time.Second)
	s.nak = true
	n.run(ms)
	if h.Addr().IsValid() || h.Counter("dhcp_nak_rx") != 1 {
		t.Fatalf("addr %v counters %v", h.Addr(), h.Counters())
	}
	// A second server's NAK of the same request, now in INIT, means
	// nothing (RFC 2131 §4.3.2): no second backoff.
	nak, err := dhcpv4.New(dhcpv4.WithTransactionID(h.dhcp.xid), dhcpv4.WithHwAddr(h.mac[:]), dhcpv4.WithMessageType(dhcpv4.MessageTypeNak))
	if err != nil {
		t.Fatal(err)
	}
	nak.OpCode = dhcpv4.OpcodeBootReply
	h.dhcp.receive(nak.ToBytes())
	if h.Counter("dhcp_nak_rx") != 1 || h.Counter("dhcp_unexpected") != 1 {
		t.Fatalf("a NAK in INIT was taken: %v", h.Counters())
	}
	s.nak = false
	n.run(10 * sec)
	if !h.Addr().IsValid() {
		t.Fatalf("no address after NAK and retry: %v", h.Counters())
	}
}

// Apps on an unbound host fail with ErrNoAddress instead of sending.
func TestAppsWithoutAddress(t *testing.T) {
	n := &fakeNet{}
	h := New(Config{Name: "c", MAC: [6]byte{2, 0, 0, 0, 0, 1}, DHCP: true})
	n.add(h, 1)
	p := h.Ping(ipB, 1, sec)
	if !p.Done() || p.Err() == nil {
		t.Fatal("ping before attach did not fail")
	}
	n.attach()
	for _, err := range []error{h.Ping(ipB, 1, sec).Err(), h.UDP(ipB, 9, 1000, 10, sec).Err(), h.TCPBulk(ipB, 9, 10).Err(), h.TCPRR(ipB, 1, 1, 1).Err()} {
		if err == nil {
			t.Fatal("app started without an address")
		}
	}
}

// TestDHCPInfiniteLease: a lease of 0xffffffff seconds (RFC 2131's
// "infinite") is longer than virtual time can count in picoseconds; it must
// not wrap into the past and renew at once, over and over.
func TestDHCPInfiniteLease(t *testing.T) {
	n, h, s := dhcpPair(t, 0)
	inf := uint32(0xffffffff)
	s.leaseSecs = &inf
	n.run(10 * sec)
	l, _ := h.DHCP()
	if l.State != "BOUND" || l.Acks != 1 || len(s.got) != 2 {
		t.Fatalf("lease %+v, server saw %v", l, s.got)
	}
	if !(l.Bound < l.Renew && l.Renew < l.Rebind && l.Rebind < l.Expires) {
		t.Fatalf("lease times out of order: %+v", l)
	}
}

// TestDHCPBadRenewalTime: a server whose T1 is zero (or beyond the lease)
// gets the RFC 2131 defaults instead: a T1 of zero used to make the client
// renew as fast as the server answered, forever.
func TestDHCPBadRenewalTime(t *testing.T) {
	for _, t1 := range []time.Duration{0, 2 * time.Hour} {
		n, h, s := dhcpPair(t, time.Hour)
		s.t1 = &t1
		n.run(10 * sec)
		l, _ := h.DHCP()
		if l.State != "BOUND" || len(s.got) != 2 || l.Renew-l.Bound != 1800*sec {
			t.Errorf("T1 %v: lease %+v, server saw %d messages", t1, l, len(s.got))
		}
	}
}

// TestDHCPBadRepliesCounted: every reply the client cannot use is dropped
// under its own counter, and a datagram reaching a host without an address
// is counted, not delivered.
func TestDHCPBadRepliesCounted(t *testing.T) {
	n, h, s := dhcpPair(t, 0)
	s.silent = true
	n.run(ms)
	reply := func(xid dhcpv4.TransactionID, typ dhcpv4.MessageType, yi net.IP) []byte {
		return dhcpReply(t, h, xid, typ, yi)
	}
	xid := h.dhcp.xid
	other := xid
	other[3]++
	cases := []struct {
		name  string
		state DHCPState
		b     []byte
		want  string
	}{
		{"not DHCP", DHCPSelecting, []byte{2, 1, 6}, "drop_dhcp_malformed"},
		{"other transaction", DHCPSelecting, reply(other, dhcpv4.MessageTypeOffer, net.IPv4(10, 0, 0, 7)), "dhcp_not_ours"},
		{"offer of 0.0.0.0", DHCPSelecting, reply(xid, dhcpv4.MessageTypeOffer, net.IPv4zero), "drop_dhcp_bad_offer"},
		{"ack of a multicast address", DHCPRequesting, reply(xid, dhcpv4.MessageTypeAck, net.IPv4(224, 0, 0, 1)), "drop_dhcp_bad_ack"},
	}
	for _, c := range cases {
		h.dhcp.state = c.state
		before := h.Counter(c.want)
		h.dhcp.receive(c.b)
		if h.Counter(c.want) != before+1 || h.Addr().IsValid() {
			t.Errorf("%s: %s = %d, want %d; addr %v", c.name, c.want, h.Counter(c.want), before+1, h.Addr())
		}
	}
	// A UDP datagram to port 9 while unbound.
	o := New(Config{Name: "o", MAC: [6]byte{2, 0, 0, 0, 0, 9}, IP: netip.MustParsePrefix("10.0.0.9/24")})
	n.add(o, 3)
	n.attach()
	f := o.newIPFrame([4]byte{10, 0, 0, 101}, protoUDP, 12)
	copy(f[0:6], h.mac[:])
	copy(f[ethLen+ipLen:], []byte{0, 9, 0, 9, 0, 12, 0, 0, 1, 2, 3, 4})
	fixL4(f)
	h.Receive(1, f)
	if h.Counter("drop_no_address") != 1 || h.Counter("udp_rx") != 0 {
		t.Fatalf("datagram to an unbound host: %v", h.Counters())
	}
}

// dhcpReply is a server's reply of type typ to host h's transaction xid,
// offering or acknowledging yi, from the server 10.0.0.1.
func dhcpReply(t testing.TB, h *Host, xid dhcpv4.TransactionID, typ dhcpv4.MessageType, yi net.IP) []byte {
	t.Helper()
	m, err := dhcpv4.New(dhcpv4.WithTransactionID(xid), dhcpv4.WithHwAddr(h.mac[:]), dhcpv4.WithMessageType(typ),
		dhcpv4.WithYourIP(yi), dhcpv4.WithServerIP(net.IPv4(10, 0, 0, 1)), dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IPv4(10, 0, 0, 1))))
	if err != nil {
		t.Fatal(err)
	}
	m.OpCode = dhcpv4.OpcodeBootReply
	return m.ToBytes()
}

// TestDHCPOptionOverload: a server short of room in the options field
// continues them in 'file' and 'sname' and says so with option 52 (RFC
// 2131 §4.1, which the client MUST interpret; RFC 3396 §6 gives the order:
// options, file, sname). Here the message type is in 'file' and the lease
// time in 'sname'; the client once saw a message without a type.
func TestDHCPOptionOverload(t *testing.T) {
	n, h, s := dhcpPair(t, 0)
	s.silent = true
	n.run(ms)
	xid := h.dhcp.xid
	h.dhcp.state = DHCPRequesting
	h.dhcp.server = netip.MustParseAddr("10.0.0.1")
	m, err := dhcpv4.New(dhcpv4.WithTransactionID(xid), dhcpv4.WithHwAddr(h.mac[:]),
		dhcpv4.WithYourIP(net.IPv4(10, 0, 0, 7)), dhcpv4.WithServerIP(net.IPv4(10, 0, 0, 1)),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IPv4(10, 0, 0, 1))),
		dhcpv4.WithGeneric(dhcpv4.OptionOptionOverload, []byte{3}))
	if err != nil {
		t.Fatal(err)
	}
	m.OpCode = dhcpv4.OpcodeBootReply
	m.Options.Del(dhcpv4.OptionDHCPMessageType)
	b := m.ToBytes()
	copy(b[108:], []byte{53, 1, byte(dhcpv4.MessageTypeAck), 255}) // file
	copy(b[44:], []byte{0, 51, 4, 0, 0, 0x0e, 0x10, 255})          // sname: pad, lease 3600 s
	h.dhcp.receive(b)
	l, _ := h.DHCP()
	if h.Addr() != netip.MustParseAddr("10.0.0.7") || l.Expires-l.Bound != 3600*sec {
		t.Fatalf("addr %v lease %v, counters %v", h.Addr(), l.Expires-l.Bound, h.Counters())
	}
}

// TestDHCPGatewayFollowsLease: the gateway a lease installed goes with the
// lease (expiry, NAK) and with a renewal whose ACK has no router option;
// it stayed, so the host kept sending off-subnet traffic to a router it no
// longer had a lease for. A gateway configured by hand is not the lease's
// to withdraw.
func TestDHCPGatewayFollowsLease(t *testing.T) {
	gw := netip.MustParseAddr("10.0.0.254")
	off := netip.MustParseAddr("192.0.2.1")
	hop := func(h *Host) netip.Addr { a, _ := h.nextHop(off); return a }

	n, h, s := dhcpPair(t, 16*time.Second)
	n.run(ms)
	if hop(h) != gw {
		t.Fatalf("bound: next hop %v, want the router %v", hop(h), gw)
	}
	l, _ := h.DHCP()
	s.silent = true
	n.run(l.Expires + ms)
	if h.cfg.Gateway.IsValid() {
		t.Fatalf("expired lease left gateway %v", h.cfg.Gateway)
	}

	n, h, s = dhcpPair(t, 10*time.Second)
	n.run(ms)
	l, _ = h.DHCP()
	s.noRouter = true
	n.run(l.Renew + ms)
	if l2, _ := h.DHCP(); l2.Acks != 2 || l2.Router.IsValid() || h.cfg.Gateway.IsValid() {
		t.Fatalf("renewal without router: lease %+v, gateway %v", l2, h.cfg.Gateway)
	}
	s.noRouter = false
	n.run(l.Renew + 6*sec)
	if hop(h) != gw {
		t.Fatalf("renewal with router: next hop %v", hop(h))
	}
	s.nak = true
	l, _ = h.DHCP()
	n.run(l.Renew + ms)
	if h.Counter("dhcp_nak_rx") != 1 || h.cfg.Gateway.IsValid() {
		t.Fatalf("NAK left gateway %v; counters %v", h.cfg.Gateway, h.Counters())
	}

	// A gateway of the host's own configuration outlives the lease (the
	// server gives none here).
	n, h, s = dhcpPair(t, 16*time.Second)
	own := netip.MustParseAddr("10.0.0.9")
	h.cfg.Gateway = own
	s.noRouter = true
	n.run(ms)
	l, _ = h.DHCP()
	s.silent = true
	n.run(l.Expires + ms)
	if h.Counter("dhcp_expired") != 1 || h.cfg.Gateway != own {
		t.Fatalf("configured gateway %v after expiry, want %v", h.cfg.Gateway, own)
	}
}

// TestDHCPConfiguredGatewayOutlivesLease: a host configured with a gateway
// that also runs DHCP uses the lease's router while the lease gives one;
// when it goes (expiry, a renewal without the router option), the
// configured gateway is back. Withdrawing the lease's router left the host
// with no gateway at all, also when the server handed out the very gateway
// it was configured with, which it had kept before.
func TestDHCPConfiguredGatewayOutlivesLease(t *testing.T) {
	router := netip.MustParseAddr("10.0.0.254") // what the server gives
	for _, own := range []netip.Addr{router, netip.MustParseAddr("10.0.0.9")} {
		n, h, s := dhcpPair(t, 16*time.Second)
		h.cfg.Gateway = own
		n.run(ms)
		if h.cfg.Gateway != router {
			t.Fatalf("configured %v: bound with gateway %v, want the lease's %v", own, h.cfg.Gateway, router)
		}
		l, _ := h.DHCP()
		s.silent = true
		n.run(l.Expires + ms)
		if h.Counter("dhcp_expired") != 1 || h.cfg.Gateway != own {
			t.Fatalf("configured %v: gateway %v after expiry", own, h.cfg.Gateway)
		}

		n, h, s = dhcpPair(t, 10*time.Second)
		h.cfg.Gateway = own
		n.run(ms)
		l, _ = h.DHCP()
		s.noRouter = true
		n.run(l.Renew + ms)
		if l2, _ := h.DHCP(); l2.Acks != 2 || h.cfg.Gateway != own {
			t.Fatalf("configured %v: gateway %v after a renewal without router (acks %d)", own, h.cfg.Gateway, l2.Acks)
		}
	}
}

// TestDHCPLongNameOmitted: a node name too long for a host name (RFC 1035:
// 255 bytes; the option, RFC 2132 §3.14, carries one) is left out of the
// client's messages rather than failing them: a 70,000-byte name made
// every message fail to build, so the host never got a lease. A name that
// fits is sent.
func TestDHCPLongNameOmitted(t *testing.T) {
	for _, tc := range []struct {
		n    int
		sent bool
	}{{255, true}, {256, false}, {70000, false}} {
		n, h, s := dhcpPair(t, 10*time.Second)
		h.cfg.Name = strings.Repeat("h", tc.n)
		n.run(ms)
		if !h.Addr().IsValid() || h.Counter("dhcp_build_error") != 0 || len(s.hostNames) != 2 {
			t.Fatalf("name of %d bytes: address %v, server saw %d messages, counters %v", tc.n, h.Addr(), len(s.hostNames), h.Counters())
		}
		for _, got := range s.hostNames {
			if want := map[bool]string{true: h.cfg.Name, false: ""}[tc.sent]; got != want {
				t.Fatalf("name of %d bytes: host-name option of %d bytes, want %d", tc.n, len(got), len(want))
			}
		}
	}
}

// TestDHCPRenewAfterSetAddr: an address taken away by SetAddr while the
// lease runs does not end the lease. The renewal at T1 names the leased
// address as ciaddr; the host has no address to send it from
// (drop_no_address), so the client rebinds at T2 by broadcast, and the
// ACK puts the leased address back. renew took ciaddr from the host's
// address, and panicked (As4 of the zero address).
func TestDHCPRenewAfterSetAddr(t *testing.T) {
	n, h, s := dhcpPair(t, 10*time.Second)
	n.run(ms)
	l, _ := h.DHCP()
	h.SetAddr(netip.Prefix{})
	n.run(l.Renew + ms)
	if h.Counter("drop_no_address") != 1 || h.Prefix().IsValid() {
		t.Fatalf("at T1: prefix %v, counters %v", h.Prefix(), h.Counters())
	}
	n.run(l.Rebind + ms)
	l2, _ := h.DHCP()
	if l2.State != "BOUND" || h.Prefix() != l.Addr || h.Counter("dhcp_renewed") != 1 || len(s.got) != 3 {
		t.Fatalf("after T2: lease %+v, prefix %v, server saw %v, counters %v", l2, h.Prefix(), s.got, h.Counters())
	}
}
