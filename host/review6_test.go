package host

import (
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

// TestUDPSourcePortInUse: a UDP app's source port is one no running UDP
// app holds. The counter, shared with TCP, wraps after 16,384 ports and
// handed out the port of a flow still running; the receiver, which keys
// flows by source address and ports, then merged the two. With all ports
// held, a new app fails with ErrPortsExhausted; a port is free again
// once its app is done.
func TestUDPSourcePortInUse(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	long := a.UDP(b.Addr(), 9000, 8000, 100, 100*sec) // one datagram every 100 ms
	a.nextPort = long.srcPort - 1                     // the counter has come round
	other := a.UDP(b.Addr(), 9000, 8000, 100, 100*sec)
	if other.Err() != nil || other.srcPort == long.srcPort {
		t.Fatalf("second flow: port %d (the first's is %d), err %v", other.srcPort, long.srcPort, other.Err())
	}
	n.run(n.now + 1050*ms)
	r1, r2 := long.ResultWith(b), other.ResultWith(b)
	if r1.Sent != 11 || r1.Received != 11 || r2.Received != 11 || *r1.Lost != 0 {
		t.Fatalf("flows as the receiver saw them: %+v, %+v", r1, r2)
	}

	// Every port held: the next app fails, and starts nothing.
	apps := []*UDPApp{long, other}
	for range ephemeralPorts - 2 {
		u := a.UDP(b.Addr(), 9000, 1000, 100, 100*sec)
		if u.Err() != nil {
			t.Fatalf("app %d: %v", len(apps), u.Err())
		}
		apps = append(apps, u)
	}
	tx := a.Counter("udp_tx")
	u := a.UDP(b.Addr(), 9000, 1000, 100, 100*sec)
	if !errors.Is(u.Err(), ErrPortsExhausted) || !u.Done() || a.Counter("udp_tx") != tx {
		t.Fatalf("app with every port held: err %v, done %v, sent %d", u.Err(), u.Done(), a.Counter("udp_tx")-tx)
	}
	// A short one ends; its port is the only one free.
	short := apps[100]
	short.until = n.now + ms // end it at its next datagram
	n.run(n.now + sec)
	if !short.Done() {
		t.Fatal("short app still running")
	}
	if u := a.UDP(b.Addr(), 9000, 1000, 100, 100*sec); u.Err() != nil || u.srcPort != short.srcPort {
		t.Fatalf("after one app ended: port %d (freed %d), err %v", u.srcPort, short.srcPort, u.Err())
	}
}

// dhcpMsg is a reply of type typ to h's current transaction, for yi,
// naming server sid (none when nil).
func dhcpMsg(t *testing.T, h *Host, typ dhcpv4.MessageType, yi, sid net.IP, opts ...dhcpv4.Modifier) []byte {
	t.Helper()
	mods := []dhcpv4.Modifier{dhcpv4.WithTransactionID(h.dhcp.xid), dhcpv4.WithHwAddr(h.mac[:]),
		dhcpv4.WithMessageType(typ), dhcpv4.WithYourIP(yi), dhcpv4.WithNetmask(net.CIDRMask(24, 32))}
	if sid != nil {
		mods = append(mods, dhcpv4.WithOption(dhcpv4.OptServerIdentifier(sid)))
	}
	m, err := dhcpv4.New(append(mods, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	m.OpCode = dhcpv4.OpcodeBootReply
	return m.ToBytes()
}

// TestDHCPOfferServerIDChecked: an OFFER's server identifier is the
// server the REQUEST names and renewals are unicast to; one the client
// cannot send to (0.0.0.0, a broadcast, multicast or loopback address,
// the offered address itself) makes the offer unusable
// (drop_dhcp_bad_offer), as a missing one does. They were taken: the
// REQUEST named 0.0.0.0, and renewals went to it through the gateway, or
// were broadcast. An ACK in REBINDING (where any server may answer) that
// names such a server keeps the lease's (dhcp_server_id_ignored).
func TestDHCPOfferServerIDChecked(t *testing.T) {
	yi := net.IPv4(10, 0, 0, 7)
	for _, sid := range []net.IP{nil, net.IPv4zero, net.IPv4bcast, net.IPv4(10, 0, 0, 255), net.IPv4(224, 0, 0, 1),
		net.IPv4(127, 0, 0, 1), net.IPv4(0, 1, 2, 3), net.IPv4(240, 0, 0, 1), yi} {
		n, h, s := dhcpPair(t, 0)
		s.silent = true
		n.run(ms)
		h.dhcp.receive(dhcpMsg(t, h, dhcpv4.MessageTypeOffer, yi, sid))
		if h.dhcp.state != DHCPSelecting || h.Counter("drop_dhcp_bad_offer") != 1 || h.Counter("dhcp_request_tx") != 0 {
			t.Errorf("offer naming server %v taken: state %v, %v", sid, h.dhcp.state, h.Counters())
		}
	}
	n, h, s := dhcpPair(t, 0)
	s.silent = true
	n.run(ms)
	h.dhcp.receive(dhcpMsg(t, h, dhcpv4.MessageTypeOffer, yi, net.IPv4(192, 0, 2, 1))) // a server behind a relay
	if h.dhcp.state != DHCPRequesting || h.dhcp.server != netip.MustParseAddr("192.0.2.1") {
		t.Fatalf("offer from 192.0.2.1: state %v, server %v; %v", h.dhcp.state, h.dhcp.server, h.Counters())
	}

	n, h, s = dhcpPair(t, 0)
	n.run(ms)
	s.silent = true
	h.dhcp.rebind()
	h.dhcp.receive(dhcpMsg(t, h, dhcpv4.MessageTypeAck, net.IPv4(10, 0, 0, 101), net.IPv4zero))
	if l, _ := h.DHCP(); l.State != "BOUND" || l.Acks != 2 || l.Server != s.ip || h.Counter("dhcp_server_id_ignored") != 1 {
		t.Fatalf("rebinding ACK naming 0.0.0.0: lease %+v; %v", l, h.Counters())
	}
}

// dhcpCheckNet puts a DHCP client that checks its addresses for check
// (Config.DHCPARPCheck), the test's server and, when squat, a host that
// already holds the address the server hands out (10.0.0.101) on a
// learning switch. cw logs what the client sends.
func dhcpCheckNet(t *testing.T, check element.Time, squat bool) (n *fakeNet, h *Host, s *dhcpServer, sq *Host, cw *wireEnd) {
	t.Helper()
	n = &fakeNet{}
	sw := n.add(&hub{}, 99)
	h = New(Config{Name: "c", MAC: [6]byte{2, 0, 0, 0, 0, 1}, DHCP: true, DHCPARPCheck: check})
	s = &dhcpServer{mac: wire.MAC{2, 0, 0, 0, 0, 0xfe}, ip: netip.MustParseAddr("10.0.0.1"), leases: map[wire.MAC]netip.Addr{}, lease: time.Hour}
	cw, _ = n.connect(n.add(h, 1), 1, sw, 1, gbps, us)
	n.connect(n.add(s, 2), 1, sw, 2, gbps, us)
	if squat {
		sq = New(Config{Name: "sq", MAC: [6]byte{2, 0, 0, 0, 0, 9}, IP: netip.MustParsePrefix("10.0.0.101/24")})
		n.connect(n.add(sq, 3), 1, sw, 3, gbps, us)
	}
	n.attach()
	return n, h, s, sq, cw
}

// sentARP returns the ARP packets in log from index from, with the times
// they were sent.
func sentARP(log []sent, from int) (at []element.Time, arps []wire.ARP) {
	for _, x := range log[from:] {
		if a, err := wire.DecodeARP(x.f); err == nil {
			at, arps = append(at, x.t), append(arps, a)
		}
	}
	return at, arps
}

// TestDHCPARPCheck: with Config.DHCPARPCheck the client probes the
// address of an ACK (RFC 2131 §2.2, §4.4.1; RFC 5227: an ARP request
// from 0.0.0.0, which leaves neighbours' caches alone) and binds when
// nobody answered within the check time; it never checked, and took an
// address another host held. A host that holds it answers the probe: the
// client sends a DHCPDECLINE (requested address and server identifier,
// no parameter request list or host name, broadcast from 0.0.0.0), takes
// no address, and starts over exactly 10 s later (RFC 2131 §3.1).
func TestDHCPARPCheck(t *testing.T) {
	const check = 2 * sec
	offered := netip.MustParseAddr("10.0.0.101")
	n, h, _, _, cw := dhcpCheckNet(t, check, false)
	n.run(ms)
	at, arps := sentARP(cw.log, 0)
	if len(arps) != 1 || arps[0].Op != wire.ARPRequest || !arps[0].SenderIP.IsUnspecified() || arps[0].TargetIP != offered ||
		h.Addr().IsValid() || h.Counter("dhcp_arp_probe_tx") != 1 {
		t.Fatalf("probe: %+v; address %v, %v", arps, h.Addr(), h.Counters())
	}
	n.run(at[0] + check + ms)
	if l, _ := h.DHCP(); h.Addr() != offered || l.Bound != at[0]+check || h.Counter("dhcp_request_tx") != 1 || h.Counter("dhcp_decline_tx") != 0 {
		t.Fatalf("after the check: address %v, lease %+v; %v", h.Addr(), l, h.Counters())
	}

	n, h, s, sq, cw := dhcpCheckNet(t, check, true)
	n.run(ms + check)
	var decl *dhcpv4.DHCPv4
	var declAt element.Time
	for _, x := range cw.log {
		if m, err := wire.DecodeDHCP(x.f); err == nil && m.MessageType() == dhcpv4.MessageTypeDecline {
			decl, declAt = m, x.t
			if src, dst := netip.AddrFrom4([4]byte(x.f[ethLen+12:ethLen+16])), netip.AddrFrom4([4]byte(x.f[ethLen+16:ethLen+20])); src != netip.AddrFrom4([4]byte{}) || dst != netip.AddrFrom4([4]byte{255, 255, 255, 255}) || wire.MAC(x.f[0:6]) != wire.Broadcast {
				t.Errorf("DECLINE from %v to %v, MAC %v", src, dst, wire.MAC(x.f[0:6]))
			}
		}
	}
	if decl == nil || h.Addr().IsValid() || h.Counter("dhcp_arp_conflict") != 1 || h.Counter("dhcp_decline_tx") != 1 || sq.Counter("arp_conflict") != 0 {
		t.Fatalf("address held by another host: address %v, %v (squatter %v)", h.Addr(), h.Counters(), sq.Counters())
	}
	if !decl.RequestedIPAddress().Equal(net.IP(offered.AsSlice())) || !decl.ServerIdentifier().Equal(net.IP(s.ip.AsSlice())) ||
		decl.Options.Has(dhcpv4.OptionParameterRequestList) || decl.Options.Has(dhcpv4.OptionHostName) || decl.IsBroadcast() ||
		!decl.ClientIPAddr.Equal(net.IPv4zero) || s.got[len(s.got)-1] != dhcpv4.MessageTypeDecline {
		t.Fatalf("DECLINE %v; server saw %v", decl.Summary(), s.got)
	}
	// The server hands out another address from now on.
	s.leases[wire.MAC(h.mac)] = netip.MustParseAddr("10.0.0.102")
	mark := len(cw.log)
	n.run(declAt + 10*sec + 10*ms)
	var disc []element.Time
	for _, x := range cw.log[mark:] {
		if m, err := wire.DecodeDHCP(x.f); err == nil && m.MessageType() == dhcpv4.MessageTypeDiscover {
			disc = append(disc, x.t)
		}
	}
	if len(disc) != 1 || disc[0] != declAt+10*sec {
		t.Fatalf("DISCOVERs at %v after a DECLINE at %v", disc, declAt)
	}
	n.run(n.now + check)
	if h.Addr() != netip.MustParseAddr("10.0.0.102") || h.Counter("dhcp_bound") != 1 {
		t.Fatalf("after the restart: address %v, %v", h.Addr(), h.Counters())
	}
}

// TestDHCPARPCheckConflicts: what counts as another host using the
// address during the check (RFC 5227 §2.1.1): any ARP packet from it,
// and another host's probe for it. ARP about other addresses, and the
// client's own frames, do not; nor does a NAK's restart leave a check
// behind.
func TestDHCPARPCheckConflicts(t *testing.T) {
	offered := netip.MustParseAddr("10.0.0.101")
	zero := netip.AddrFrom4([4]byte{})
	other := wire.MAC{2, 0, 0, 0, 0, 7}
	for _, c := range []struct {
		name     string
		op       uint16
		mac      wire.MAC
		sip, tip netip.Addr
		conflict bool
	}{
		{"reply from the address", wire.ARPReply, other, offered, zero, true},
		{"gratuitous ARP for it", wire.ARPRequest, other, offered, offered, true},
		{"request from it", wire.ARPRequest, other, offered, netip.MustParseAddr("10.0.0.1"), true},
		{"another host's probe for it", wire.ARPRequest, other, zero, offered, true},
		{"our own probe, looped back", wire.ARPRequest, wire.MAC{2, 0, 0, 0, 0, 1}, zero, offered, false},
		{"a probe for another address", wire.ARPRequest, other, zero, netip.MustParseAddr("10.0.0.55"), false},
		{"a request about another address", wire.ARPRequest, other, netip.MustParseAddr("10.0.0.55"), netip.MustParseAddr("10.0.0.1"), false},
	} {
		n, h, _, _, _ := dhcpCheckNet(t, sec, false)
		n.run(ms)
		f, err := wire.AppendARPFrame(nil, wire.Broadcast, 0, &wire.ARP{Op: c.op, SenderMAC: c.mac, SenderIP: c.sip, TargetIP: c.tip})
		if err != nil {
			t.Fatal(err)
		}
		copy(f[6:12], c.mac[:])
		h.Receive(1, f)
		n.run(n.now + sec)
		if got := h.Counter("dhcp_decline_tx") == 1; got != c.conflict || h.Addr().IsValid() == c.conflict {
			t.Errorf("%s: declined %v, address %v; %v", c.name, got, h.Addr(), h.Counters())
		}
	}

	n, h, s, _, _ := dhcpCheckNet(t, sec, false)
	n.run(ms)
	s.silent = true
	h.Receive(1, rogueReply(t, h, s, "nak"))
	n.run(n.now + 2*sec)
	if h.Addr().IsValid() || h.Counter("dhcp_nak_rx") != 1 || h.dhcp.checking {
		t.Fatalf("NAK during the check: address %v, checking %v, %v", h.Addr(), h.dhcp.checking, h.Counters())
	}
}

// TestDHCPRestartNewXID: every DISCOVER after a restart (a NAK, REQUESTs
// nobody answered, expiry, a DECLINE) has a transaction ID of its own,
// and a reply to the earlier one is not ours; renewals keep the lease's
// (RFC 2131 Table 5; udhcpc, ISC dhclient and systemd-networkd do the
// same, docs/host.md).
func TestDHCPRestartNewXID(t *testing.T) {
	// Each way to a restart, from SELECTING with a silent server; each
	// leaves the server silent, so that the client is in SELECTING after.
	restarts := map[string]func(n *fakeNet, h *Host, s *dhcpServer){
		"NAK": func(n *fakeNet, h *Host, s *dhcpServer) {
			s.silent, s.nak = false, true
			h.dhcp.discover()
			n.run(n.now + ms)
			s.silent = true
			n.run(n.now + 6*sec)
		},
		"REQUESTs unanswered": func(n *fakeNet, h *Host, s *dhcpServer) {
			h.dhcp.receive(dhcpMsg(t, h, dhcpv4.MessageTypeOffer, net.IPv4(10, 0, 0, 101), net.IPv4(10, 0, 0, 1)))
			n.run(n.now + 200*sec)
		},
		"expiry": func(n *fakeNet, h *Host, s *dhcpServer) {
			s.silent = false
			h.dhcp.discover()
			n.run(n.now + ms)
			s.silent = true
			l, _ := h.DHCP()
			n.run(l.Expires + ms)
		},
	}
	for name, restart := range restarts {
		n, h, s := dhcpPair(t, 16*time.Second)
		s.silent = true
		n.run(ms)
		old := h.dhcp.xid
		restart(n, h, s)
		if h.dhcp.state != DHCPSelecting || h.dhcp.xid == old || h.Counter("dhcp_discover_tx") < 2 {
			t.Errorf("%s: state %v, xid %v (was %v); %v", name, h.dhcp.state, h.dhcp.xid, old, h.Counters())
			continue
		}
		cur := h.dhcp.xid
		h.dhcp.xid = old
		stale := dhcpMsg(t, h, dhcpv4.MessageTypeOffer, net.IPv4(10, 0, 0, 101), net.IPv4(10, 0, 0, 1))
		h.dhcp.xid = cur
		before := h.Counter("dhcp_not_ours")
		h.dhcp.receive(stale)
		if h.Counter("dhcp_not_ours") != before+1 || h.dhcp.state != DHCPSelecting {
			t.Errorf("%s: an offer to the earlier xid was taken: %v", name, h.Counters())
		}
	}

	n, h, _, _, _ := dhcpCheckNet(t, sec, true) // declined: the address is held
	n.run(ms)
	old := h.dhcp.xid
	n.run(n.now + 10*sec)
	if h.Counter("dhcp_decline_tx") == 0 || h.Counter("dhcp_discover_tx") != 2 || h.dhcp.xid == old {
		t.Errorf("after a DECLINE: xid %v (was %v); %v", h.dhcp.xid, old, h.Counters())
	}

	// Renewals keep the lease's xid.
	n, h, s := dhcpPair(t, 10*time.Second)
	n.run(ms)
	xid := h.dhcp.xid
	l, _ := h.DHCP()
	n.run(l.Renew + ms)
	if l2, _ := h.DHCP(); l2.Acks != 2 || h.dhcp.xid != xid || s.unicst != 1 {
		t.Errorf("renewal: xid %v (lease's %v), acks %d", h.dhcp.xid, xid, l2.Acks)
	}
}

// TestDHCPAckOtherAddressTaken: an ACK in REQUESTING for an address
// other than the one requested binds the ACK's address, as udhcpc, ISC
// dhclient and systemd-networkd do (docs/host.md).
func TestDHCPAckOtherAddressTaken(t *testing.T) {
	n, h, s := dhcpPair(t, 0)
	s.silent = true
	n.run(ms)
	h.dhcp.receive(dhcpMsg(t, h, dhcpv4.MessageTypeOffer, net.IPv4(10, 0, 0, 101), net.IPv4(10, 0, 0, 1)))
	h.dhcp.receive(dhcpMsg(t, h, dhcpv4.MessageTypeAck, net.IPv4(10, 0, 0, 102), net.IPv4(10, 0, 0, 1)))
	if l, _ := h.DHCP(); l.State != "BOUND" || h.Addr() != netip.MustParseAddr("10.0.0.102") {
		t.Fatalf("lease %+v; %v", l, h.Counters())
	}
}
