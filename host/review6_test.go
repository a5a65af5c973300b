package host

import (
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
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
