package host

import (
	"errors"
	"net"
	"net/netip"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

const dhcpClientPort = wire.DHCPClientPort

// DHCPState is the client's RFC 2131 §4.4 state.
type DHCPState uint8

const (
	_ DHCPState = iota
	DHCPInit
	DHCPSelecting
	DHCPRequesting
	DHCPBound
	DHCPRenewing
	DHCPRebinding
)

var dhcpStateNames = [...]string{"invalid", "INIT", "SELECTING", "REQUESTING", "BOUND", "RENEWING", "REBINDING"}

func (s DHCPState) String() string {
	if int(s) < len(dhcpStateNames) {
		return dhcpStateNames[s]
	}
	return "DHCPState(?)"
}

// maxLease caps the lease a server grants: virtual time counts
// picoseconds in an int64, about 106 days in all.
const maxLease = 30 * 24 * time.Hour

// Lease describes the client's current lease.
type Lease struct {
	State   string       `json:"state"`
	Addr    netip.Prefix `json:"addr"`
	Router  netip.Addr   `json:"router"`
	Server  netip.Addr   `json:"server"`
	Bound   element.Time `json:"bound_ps"`
	Renew   element.Time `json:"renew_ps"`   // T1, absolute
	Rebind  element.Time `json:"rebind_ps"`  // T2, absolute
	Expires element.Time `json:"expires_ps"` // absolute
	Acks    int          `json:"acks"`
}

// dhcpClient runs DISCOVER/OFFER/REQUEST/ACK, renews at T1 (unicast to the
// server), rebinds at T2 (broadcast) and gives the address up when the
// lease expires. Retransmissions back off 4, 8 ... 64 s, randomised by
// +-1 s (RFC 2131 §4.1), from the engine's random source.
type dhcpClient struct {
	h      *Host
	state  DHCPState
	xid    dhcpv4.TransactionID
	tries  int
	gen    uint64 // invalidates timers of earlier states
	offer  netip.Addr
	server netip.Addr
	lease  Lease
	// ownGateway is the host's gateway from before the lease's router
	// replaced it (Config.Gateway, or none), back when the router goes.
	ownGateway netip.Addr
	// Whether the address of an ACK is being checked
	// (Config.DHCPARPCheck), and which.
	checking  bool
	checkAddr netip.Addr
}

func newDHCPClient(h *Host) *dhcpClient { return &dhcpClient{h: h, state: DHCPInit} }

// DHCP returns the DHCP client's lease, and false when DHCP is off.
func (h *Host) DHCP() (Lease, bool) {
	if h.dhcp == nil {
		return Lease{}, false
	}
	l := h.dhcp.lease
	l.State = h.dhcp.state.String()
	return l, true
}

func (d *dhcpClient) begin() {
	d.state = DHCPSelecting
	d.tries = 0
	d.checking = false
	r := d.h.env.Rand().Uint32()
	d.xid = dhcpv4.TransactionID{byte(r >> 24), byte(r >> 16), byte(r >> 8), byte(r)}
	d.discover()
}

func (d *dhcpClient) after(delay element.Time, f func()) {
	d.gen++
	g := d.gen
	d.h.env.After(delay, func() {
		if d.gen == g {
			f()
		}
	})
}

// backoff is the RFC 2131 §4.1 retransmission delay.
func (d *dhcpClient) backoff() element.Time {
	base := 4 * element.Second << min(d.tries, 4)
	d.tries++
	jitter := element.Time(d.h.env.Rand().Int64N(int64(2*element.Second))) - element.Second
	return base + jitter
}

func (d *dhcpClient) message(t dhcpv4.MessageType) *dhcpv4.DHCPv4 {
	m := &dhcpv4.DHCPv4{
		OpCode: dhcpv4.OpcodeBootRequest, HWType: iana.HWTypeEthernet, TransactionID: d.xid,
		ClientHWAddr: net.HardwareAddr(append([]byte(nil), d.h.mac[:]...)),
		ClientIPAddr: net.IPv4zero, YourIPAddr: net.IPv4zero, ServerIPAddr: net.IPv4zero, GatewayIPAddr: net.IPv4zero,
		Options: make(dhcpv4.Options),
	}
	m.UpdateOption(dhcpv4.OptMessageType(t))
	m.UpdateOption(dhcpv4.OptClientIdentifier(append([]byte{1}, d.h.mac[:]...)))
	m.UpdateOption(dhcpv4.OptParameterRequestList(dhcpv4.OptionSubnetMask, dhcpv4.OptionRouter,
		dhcpv4.OptionIPAddressLeaseTime, dhcpv4.OptionRenewTimeValue, dhcpv4.OptionRebindingTimeValue))
	if n := len(d.h.cfg.Name); n > 0 && n <= maxHostName {
		m.UpdateOption(dhcpv4.OptHostName(d.h.cfg.Name))
	}
	return m
}

// maxHostName is the longest name sent as the host-name option: a DNS
// name's 255 bytes (RFC 1035 §2.3.4). A longer node name is left out (the
// option's encoding would fail past 64 KB, and with it every message).
const maxHostName = 255

func ipOf(a netip.Addr) net.IP {
	v := a.As4()
	return net.IP(v[:])
}

// broadcast sends m from 0.0.0.0 (or our address) to 255.255.255.255,
// asking for a broadcast reply.
func (d *dhcpClient) broadcast(m *dhcpv4.DHCPv4) {
	m.SetBroadcast() // we cannot receive unicast before we are configured
	d.sendBroadcast(m)
}

// sendBroadcast sends m from 0.0.0.0 (or our address) to
// 255.255.255.255.
func (d *dhcpClient) sendBroadcast(m *dhcpv4.DHCPv4) {
	src := netip.AddrFrom4([4]byte{})
	if d.h.ip.IsValid() {
		src = d.h.ip
	}
	f, err := wire.AppendDHCPFrame(nil, wire.Broadcast, d.h.mac, src, netip.AddrFrom4([4]byte{255, 255, 255, 255}), m)
	if err != nil {
		d.h.ctr.Inc("dhcp_build_error")
		return
	}
	d.h.send(f)
}

func (d *dhcpClient) discover() {
	d.h.ctr.Inc("dhcp_discover_tx")
	d.broadcast(d.message(dhcpv4.MessageTypeDiscover))
	d.after(d.backoff(), d.discover)
}

func (d *dhcpClient) request() {
	m := d.message(dhcpv4.MessageTypeRequest)
	m.UpdateOption(dhcpv4.OptRequestedIPAddress(ipOf(d.offer)))
	m.UpdateOption(dhcpv4.OptServerIdentifier(ipOf(d.server)))
	d.h.ctr.Inc("dhcp_request_tx")
	d.broadcast(m)
	if d.tries >= 4 { // the server went quiet: start over
		d.after(d.backoff(), d.begin)
		return
	}
	d.after(d.backoff(), d.request)
}

// renew asks the server for an extension, unicast in RENEWING and
// broadcast in REBINDING, with ciaddr set (RFC 2131 §4.3.2) to the
// leased address: not the host's, which SetAddr may have changed or
// removed since (ipOf of no address panicked).
func (d *dhcpClient) renew() {
	addr := d.lease.Addr.Addr()
	m := d.message(dhcpv4.MessageTypeRequest)
	m.ClientIPAddr = ipOf(addr)
	d.h.ctr.Inc("dhcp_request_tx")
	now := d.h.env.Now()
	if d.state == DHCPRenewing {
		f, err := wire.AppendDHCPFrame(nil, wire.MAC{}, d.h.mac, addr, d.server, m)
		if err != nil {
			d.h.ctr.Inc("dhcp_build_error")
		} else {
			d.h.output(d.server, f)
		}
		// Retried either way: returning would leave RENEWING for good.
		d.retryBefore(d.lease.Rebind-now, d.rebind)
		return
	}
	d.broadcast(m)
	d.retryBefore(d.lease.Expires-now, d.expire)
}

// dhcpMinRetry is the shortest wait between renewal retries.
const dhcpMinRetry = 60 * element.Second

// retryBefore schedules the next renewal request half of the time left
// before the next phase (T2, or expiry), down to a minimum of 60 s (RFC
// 2131 §4.4.5); when that would reach the next phase, next runs then.
func (d *dhcpClient) retryBefore(left element.Time, next func()) {
	if wait := max(left/2, dhcpMinRetry); wait < left {
		d.after(wait, d.renew)
	} else {
		d.after(left, next)
	}
}

func (d *dhcpClient) rebind() {
	d.state = DHCPRebinding
	d.renew()
}

func (d *dhcpClient) expire() {
	d.h.ctr.Inc("dhcp_expired")
	d.drop()
	d.begin()
}

// drop gives the lease up (expiry, NAK): the address goes, and with it the
// gateway the lease installed.
func (d *dhcpClient) drop() {
	d.h.SetAddr(netip.Prefix{})
	d.setRouter(netip.Addr{})
	d.lease = Lease{Acks: d.lease.Acks}
}

// setRouter makes r the lease's router and the host's gateway. With no
// router (r invalid) it withdraws the gateway the previous lease
// installed, if the host still uses it, and puts back the gateway the
// host had before (its configuration's, or none); a gateway that did not
// come from the lease stays.
func (d *dhcpClient) setRouter(r netip.Addr) {
	h := d.h
	leased := d.lease.Router.IsValid() && h.cfg.Gateway == d.lease.Router
	if !leased {
		d.ownGateway = h.cfg.Gateway // not the lease's: put back when it goes
	}
	switch {
	case r.IsValid():
		h.cfg.Gateway = r
	case leased:
		h.cfg.Gateway = d.ownGateway
	}
	d.lease.Router = r
}

func (d *dhcpClient) receive(b []byte) {
	h := d.h
	m, err := dhcpv4.FromBytes(b)
	if err == nil {
		err = overloadedOptions(m, b)
	}
	if err != nil {
		h.ctr.Inc("drop_dhcp_malformed")
		return
	}
	if m.OpCode != dhcpv4.OpcodeBootReply || m.TransactionID != d.xid || len(m.ClientHWAddr) != 6 || wire.MAC(m.ClientHWAddr) != h.mac {
		h.ctr.Inc("dhcp_not_ours")
		return
	}
	yi, ok := netip.AddrFromSlice(m.YourIPAddr.To4())
	sid, sok := netip.AddrFromSlice(m.ServerIdentifier().To4())
	switch t := m.MessageType(); {
	case t == dhcpv4.MessageTypeOffer && d.state == DHCPSelecting:
		// The REQUEST names the server by its server identifier, and
		// renewals go to it unicast: an OFFER must carry one (RFC 2131
		// §4.3.1, Table 3), an address a host can send to. One of
		// 0.0.0.0 made the REQUEST name no server and the renewals go to
		// the gateway; one of 255.255.255.255 made them broadcasts.
		if !ok || !yi.IsGlobalUnicast() || !sok || !usableUnicast(sid, netip.PrefixFrom(yi, leaseBits(m))) {
			h.ctr.Inc("drop_dhcp_bad_offer")
			return
		}
		h.ctr.Inc("dhcp_offer_rx")
		d.offer, d.server = yi, sid
		d.state = DHCPRequesting
		d.tries = 0
		d.request()
	case t == dhcpv4.MessageTypeAck && (d.state == DHCPRequesting && !d.checking || d.state == DHCPRenewing || d.state == DHCPRebinding):
		if !ok || !yi.IsGlobalUnicast() {
			h.ctr.Inc("drop_dhcp_bad_ack")
			return
		}
		if d.otherServer(sid, sok) {
			h.ctr.Inc("drop_dhcp_wrong_server")
			return
		}
		h.ctr.Inc("dhcp_ack_rx")
		// Only in REBINDING can the ACK name another server (otherServer),
		// which renewals go to from then on: not one they cannot reach.
		switch {
		case sok && usableUnicast(sid, netip.PrefixFrom(yi, leaseBits(m))):
			d.server = sid
		case sok:
			h.ctr.Inc("dhcp_server_id_ignored")
		}
		if d.state == DHCPRequesting && h.cfg.DHCPARPCheck > 0 {
			d.check(m, yi)
			return
		}
		d.bind(m, yi)
	case t == dhcpv4.MessageTypeNak && (d.state == DHCPRequesting || d.state == DHCPRenewing || d.state == DHCPRebinding):
		// Only a REQUEST draws a NAK (RFC 2131 §4.3.2): in INIT a second
		// server's NAK of the same request must not push the restart
		// back by another, longer backoff.
		if d.otherServer(sid, sok) {
			h.ctr.Inc("drop_dhcp_wrong_server")
			return
		}
		h.ctr.Inc("dhcp_nak_rx")
		d.checking = false
		d.drop()
		// Start over after a pause: a server that NAKs every request
		// would otherwise meet a DISCOVER storm.
		d.state = DHCPInit
		d.tries = 0
		d.after(d.backoff(), d.begin)
	default:
		h.ctr.Inc("dhcp_unexpected")
	}
}

// dhcpDeclineWait is the pause between a DHCPDECLINE and the next
// DISCOVER: RFC 2131 §3.1 step 5's minimum of ten seconds, ISC
// dhclient's default.
const dhcpDeclineWait = 10 * element.Second

// check probes the address of an ACK in REQUESTING before binding it
// (Config.DHCPARPCheck): an RFC 5227 probe, an ARP request from 0.0.0.0,
// so that no neighbour caches the address yet. The client binds when
// nobody claimed it in time; conflict declines it. The pending request
// retransmission is cancelled, and an ACK that arrives meanwhile (one
// for a retransmission) is not taken.
func (d *dhcpClient) check(m *dhcpv4.DHCPv4, addr netip.Addr) {
	h := d.h
	d.checking = true
	d.checkAddr = addr
	h.ctr.Inc("dhcp_arp_probe_tx")
	h.sendARPFrom(wire.ARPRequest, wire.Broadcast, netip.AddrFrom4([4]byte{}), wire.MAC{}, addr)
	d.after(h.cfg.DHCPARPCheck, func() {
		d.checking = false
		d.bind(m, addr)
	})
}

// conflict reports whether ARP packet a, received while the client
// checks an address, shows another host using it, and if so declines
// the address. RFC 5227 §2.1.1: any ARP packet whose sender address is
// the address probed for, and any probe for it (sender 0.0.0.0) from
// another hardware address, which another host checking the same
// address sends.
func (d *dhcpClient) conflict(a *wire.ARP) bool {
	if !d.checking || a.SenderMAC == d.h.mac {
		return false
	}
	probe := a.SenderIP.IsUnspecified() && a.Op == wire.ARPRequest && a.TargetIP == d.checkAddr
	if a.SenderIP != d.checkAddr && !probe {
		return false
	}
	d.h.ctr.Inc("dhcp_arp_conflict")
	d.decline()
	return true
}

// decline tells the server the address it acknowledged is in use (RFC
// 2131 §4.4.1: the client MUST send a DHCPDECLINE) and starts over after
// dhcpDeclineWait. The message carries what Table 5 asks of a
// DHCPDECLINE: the requested address and the server identifier, the
// client identifier, and nothing else (no parameter request list, no
// host name); it is broadcast, without the broadcast flag (no reply
// comes).
func (d *dhcpClient) decline() {
	h := d.h
	d.checking = false
	m := &dhcpv4.DHCPv4{
		OpCode: dhcpv4.OpcodeBootRequest, HWType: iana.HWTypeEthernet, TransactionID: d.xid,
		ClientHWAddr: net.HardwareAddr(append([]byte(nil), h.mac[:]...)),
		ClientIPAddr: net.IPv4zero, YourIPAddr: net.IPv4zero, ServerIPAddr: net.IPv4zero, GatewayIPAddr: net.IPv4zero,
		Options: make(dhcpv4.Options),
	}
	m.UpdateOption(dhcpv4.OptMessageType(dhcpv4.MessageTypeDecline))
	m.UpdateOption(dhcpv4.OptClientIdentifier(append([]byte{1}, h.mac[:]...)))
	m.UpdateOption(dhcpv4.OptRequestedIPAddress(ipOf(d.checkAddr)))
	m.UpdateOption(dhcpv4.OptServerIdentifier(ipOf(d.server)))
	h.ctr.Inc("dhcp_decline_tx")
	d.sendBroadcast(m)
	d.state = DHCPInit
	d.tries = 0
	d.after(dhcpDeclineWait, d.begin)
}

// otherServer reports whether an ACK or NAK names a server other than
// the one the request went to, and so answers no request of ours. In
// REQUESTING the broadcast REQUEST named d.server, and every other server
// takes it as a decline of its offer (RFC 2131 §3.1 step 4); in RENEWING
// it was unicast to d.server. Only in REBINDING may any server answer
// (§4.4.5). A reply without a server identifier is not held against the
// server. A second server that NAKs requests meant for another (udhcpc
// and NetworkManager's n-dhcp4 ignore such NAKs) kept the client from
// ever binding, and any server could hand it an address by ACKing a
// request meant for another.
func (d *dhcpClient) otherServer(sid netip.Addr, sok bool) bool {
	return d.state != DHCPRebinding && sok && sid != d.server
}

func (d *dhcpClient) bind(m *dhcpv4.DHCPv4, addr netip.Addr) {
	h := d.h
	now := h.env.Now()
	bits := leaseBits(m)
	// The server's times are input from the wire. A lease of 2^32-1 s
	// (RFC 2131's "infinite") does not fit in int64 picoseconds, so leases
	// are capped at maxLease, which a run never reaches; a lease under a
	// second is taken as one, and T1 and T2 out of order (zero, or beyond
	// the lease) fall back to the defaults of §4.4.5, so that no answer
	// can make the client renew without pause.
	lease := min(max(m.IPAddressLeaseTime(24*time.Hour), time.Second), maxLease)
	t1 := m.IPAddressRenewalTime(lease / 2)
	t2 := m.IPAddressRebindingTime(lease * 7 / 8)
	if t1 <= 0 || t1 >= lease {
		t1 = lease / 2
	}
	if t2 <= t1 || t2 >= lease {
		t2 = lease * 7 / 8
	}
	if t2 <= t1 {
		t1, t2 = lease/2, lease*7/8
	}
	dur := func(x time.Duration) element.Time { return element.Time(x.Nanoseconds()) * element.Nanosecond }
	d.lease.Addr = netip.PrefixFrom(addr, bits)
	// The router option sets the gateway; an ACK without one withdraws
	// the gateway the previous lease installed (a gateway configured by
	// hand stays), as a DHCP client's script removes the default route.
	router := usableRouter(m.Router(), d.lease.Addr)
	if router == (netip.Addr{}) && len(m.Router()) > 0 {
		h.ctr.Inc("dhcp_router_ignored")
	}
	d.setRouter(router)
	d.lease.Server = d.server
	d.lease.Bound = now
	d.lease.Renew = now + dur(t1)
	d.lease.Rebind = now + dur(t2)
	d.lease.Expires = now + dur(lease)
	d.lease.Acks++
	if d.state == DHCPRequesting {
		h.ctr.Inc("dhcp_bound")
	} else {
		h.ctr.Inc("dhcp_renewed")
	}
	d.state = DHCPBound
	d.tries = 0
	h.SetAddr(d.lease.Addr)
	d.after(d.lease.Renew-now, func() {
		d.state = DHCPRenewing
		d.renew()
	})
}

// leaseBits returns the prefix length of m's subnet mask option, or 24
// without one (a client without a mask assumes the common /24).
func leaseBits(m *dhcpv4.DHCPv4) int {
	if mask := m.SubnetMask(); mask != nil {
		if ones, sz := mask.Size(); sz == 32 {
			return ones
		}
	}
	return 24
}

// usableRouter returns the first router of the option (RFC 2132 §3.5:
// in order of preference) that a host can send to, or the invalid address
// for none: a unicast address (not in 0/8, loopback, multicast or class
// E) that is neither the leased one nor the lease's subnet broadcast. A
// router of 0.0.0.0 (which systemd-networkd ignores), 255.255.255.255, a
// multicast address or the client's own became its gateway, and
// off-subnet traffic went to ARP requests for it that nobody could
// answer.
func usableRouter(rs []net.IP, lease netip.Prefix) netip.Addr {
	for _, r := range rs {
		if a, ok := netip.AddrFromSlice(r.To4()); ok && usableUnicast(a, lease) {
			return a
		}
	}
	return netip.Addr{}
}

// usableUnicast reports whether a host holding lease can send to a: a
// unicast IPv4 address (not in 0/8, loopback, multicast or class E, not
// 255.255.255.255) that is neither the leased address nor the lease's
// subnet broadcast.
func usableUnicast(a netip.Addr, lease netip.Prefix) bool {
	return a.Is4() && (a.IsGlobalUnicast() || a.IsLinkLocalUnicast()) && a.As4()[0] != 0 && a.As4()[0] < 240 &&
		a != lease.Addr() && a != broadcastOf(lease)
}

// BOOTP's 'sname' and 'file' fields, as offsets into the message.
const (
	bootpSname, bootpFile, bootpEnd = 44, 108, 236
)

// overloadedOptions adds to m the options a server continued in the
// 'file' and 'sname' fields, as option 52 says (1: file, 2: sname, 3:
// both). RFC 2131 §4.1: the client MUST interpret the overload option;
// RFC 3396 §6: options first, then file, then sname (instances of one
// option concatenate). insomniacslk/dhcp reads the fields as strings.
func overloadedOptions(m *dhcpv4.DHCPv4, b []byte) error {
	v := m.Options.Get(dhcpv4.OptionOptionOverload)
	if len(v) == 0 {
		return nil
	}
	if len(v) != 1 || v[0] < 1 || v[0] > 3 || len(b) < bootpEnd {
		return errBadOverload
	}
	if v[0]&1 != 0 {
		if err := m.Options.FromBytes(b[bootpFile:bootpEnd]); err != nil {
			return err
		}
	}
	if v[0]&2 != 0 {
		if err := m.Options.FromBytes(b[bootpSname:bootpFile]); err != nil {
			return err
		}
	}
	return nil
}

var errBadOverload = errors.New("dhcp: bad option overload")
