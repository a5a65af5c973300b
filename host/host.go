package host

import (
	"errors"
	"net/netip"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

// Sentinel errors, wrapped with context; test with errors.Is.
var (
	// ErrNotAttached: an app was started on a host the engine has not
	// attached yet.
	ErrNotAttached = errors.New("host not attached")
	// ErrNoAddress: the host has no IPv4 address (DHCP not bound yet).
	ErrNoAddress = errors.New("no address")
	// ErrBadArgument: an app was started with an invalid parameter.
	ErrBadArgument = errors.New("bad argument")
	// ErrRefused: the peer answered a SYN with a reset.
	ErrRefused = errors.New("connection refused")
	// ErrReset: the peer reset an established connection.
	ErrReset = errors.New("connection reset")
	// ErrTimeout: a connection gave up after its retries.
	ErrTimeout = errors.New("connection timed out")
	// ErrPortsExhausted: no free ephemeral port (for TCP, toward that
	// peer; for UDP, every one is held by a running UDP app) or, for a
	// ping, no free ICMP identifier.
	ErrPortsExhausted = errors.New("ephemeral ports exhausted")
)

// Defaults of Config.
const (
	DefaultMTU              = 1500
	DefaultARPTimeout       = 60 * element.Second
	DefaultARPRetries       = 3
	DefaultARPRetryInterval = element.Second
	DefaultARPQueue         = 256
	DefaultARPMaxEntries    = 1 << 16
	DefaultUDPMaxFlows      = 1 << 20
	// RRPort is where every host serves request/response transactions
	// (netperf's netserver port).
	RRPort = 12865
	// DiscardPort is the default destination of bulk TCP and UDP apps
	// (the iperf port).
	DiscardPort = 5001
)

// Config describes a host.
type Config struct {
	// Name is the host's name, for logs and results.
	Name string
	// MAC is the NIC's hardware address.
	MAC [6]byte
	// IP is the static address and subnet. Ignored when DHCP is set.
	IP netip.Prefix
	// Gateway, when valid, receives traffic for destinations outside the
	// subnet; without one such traffic is dropped and counted.
	Gateway netip.Addr
	// DHCP makes the host obtain its address with a DHCP client at start.
	DHCP bool
	// DHCPARPCheck, when positive, makes the DHCP client check the
	// address a server acknowledged before taking it (RFC 2131 §2.2,
	// §4.4.1): an ARP probe for it from 0.0.0.0 (RFC 5227), then this
	// long for another host to claim it. If one does, the client sends a
	// DHCPDECLINE and starts over 10 s later. Off by default, as in
	// udhcpc (its -a option: one probe, 2 s) and ISC dhclient (whose
	// stock Linux script does no check): a check delays every lease.
	DHCPARPCheck element.Time
	// MTU of the NIC; MSS is MTU-40. Default 1500.
	MTU int
	// ARPTimeout is how long a resolved entry stays fresh. Default 60 s.
	ARPTimeout element.Time
	// ARPRetries is how many requests are sent for an address before the
	// packets waiting for it are dropped. Default 3.
	ARPRetries int
	// ARPRetryInterval is the time between requests. Default 1 s.
	ARPRetryInterval element.Time
	// ARPQueue bounds the frames waiting for one address's resolution;
	// overflow is dropped and counted. Default 256.
	ARPQueue int
	// ARPMaxEntries bounds the neighbour cache (Linux's gc_thresh3 in
	// spirit), whatever creates the entries: requests from other hosts,
	// and the host's own resolutions, which received packets drive too
	// (an echo reply, a SYN-ACK or a reset to any source in the subnet).
	// When the table is full, entries unused for twice ARPTimeout are
	// collected first; if that frees nothing, a request's sender is not
	// cached (it is still answered) and a frame that needed a new entry is
	// dropped (drop_arp_table_full), both counted as arp_table_full.
	// Without a bound, ever new addresses would grow the table without
	// end. Default 65536.
	ARPMaxEntries int
	// UDPMaxFlows bounds the UDP app flows the receiver keeps statistics
	// for (UDPFlow); datagrams of further flows are still counted by port
	// and as udp_flows_full. Without a bound, datagrams from ever new
	// source ports would grow the table without end. Default 2^20, the
	// most flows a scenario may hold.
	UDPMaxFlows int
	// TxQueue bounds the bytes TCP may have waiting in the NIC's transmit
	// queue, like Linux's TCP small queues with qdisc backpressure: a real
	// host does not lose its own segments at its NIC, it stops the socket.
	// The host tracks the backlog from the link rate the engine reports
	// (PortInfo.Rate; without one there is no limit). Default 128 KiB;
	// negative turns it off.
	TxQueue int
	// NICRate, when positive, is the NIC's rate in bit/s for that
	// backpressure, overriding PortInfo.Rate. A host behind a host agent
	// (SPAIN's driver, DumbNet's agent) is attached through an internal
	// link without a rate; the simulator reports the real NIC's rate as
	// that port's PortInfo.Rate, and an engine that does not sets this.
	NICRate int64
	// NoSink turns off the TCP sink that accepts connections on any port;
	// connections are then accepted only on ports given to Listen (and on
	// RRPort), and other SYNs get a reset.
	NoSink bool
	// TCP tunes the TCP model.
	TCP TCPConfig
}

func (c *Config) defaults() {
	if c.MTU <= 0 {
		c.MTU = DefaultMTU
	}
	if c.MTU < 576 {
		c.MTU = 576
	}
	if c.ARPTimeout <= 0 {
		c.ARPTimeout = DefaultARPTimeout
	}
	if c.ARPRetries <= 0 {
		c.ARPRetries = DefaultARPRetries
	}
	if c.ARPRetryInterval <= 0 {
		c.ARPRetryInterval = DefaultARPRetryInterval
	}
	if c.TxQueue == 0 {
		c.TxQueue = 128 << 10
	}
	if c.UDPMaxFlows <= 0 {
		c.UDPMaxFlows = DefaultUDPMaxFlows
	}
	if c.ARPMaxEntries <= 0 {
		c.ARPMaxEntries = DefaultARPMaxEntries
	}
	if c.ARPQueue <= 0 {
		c.ARPQueue = DefaultARPQueue
	}
	c.TCP.defaults()
}

// Host is a simulated end host: one NIC (port 1) and an IPv4 stack with
// ARP, ICMP echo, UDP, TCP and a DHCP client. It is an element.Element, so
// it runs under either engine; apps are started on it from inside the
// engine's context (an event or a timer), never concurrently with it.
type Host struct {
	cfg    Config
	env    element.Env
	mac    wire.MAC
	ip     netip.Addr
	prefix netip.Prefix
	linkUp bool
	ipID   uint16
	ctr    element.Counters
	hot    hotCounters

	arp arpTable

	conns     map[connKey]*TCPConn
	listeners map[uint16]func(*TCPConn)
	nextPort  uint16

	pings   map[uint16]*PingApp
	nextPID uint16

	udpPorts map[uint16]*UDPPortStats
	udpFlows map[udpFlowKey]*UDPFlowStats
	udpApps  map[uint16]*UDPApp // running UDP apps by source port

	dhcp *dhcpClient

	pool allocator // the engine's frame pool, when it has one

	// The NIC's transmit queue, as the host models it for backpressure:
	// the link rate and when the frames sent so far will have left.
	nicRate int64
	nicFree element.Time
	txWait  []*TCPConn // connections stopped by a full queue
	txTimer bool
}

// wireOverhead is what Ethernet adds to each frame on the wire: preamble
// and start delimiter, FCS, inter-frame gap.
const wireOverhead = 8 + 4 + 12

// txBacklog returns the bytes still waiting in the NIC's queue.
func (h *Host) txBacklog() int64 {
	if h.nicRate <= 0 {
		return 0
	}
	d := h.nicFree - h.env.Now()
	if d <= 0 {
		return 0
	}
	return int64(float64(d) * float64(h.nicRate) / 8 / float64(element.Second))
}

// txFull reports whether TCP must wait for the NIC queue to drain (more
// than TxQueue bytes wait, docs/host.md), and if so queues c to be pushed
// again once it is half empty.
func (h *Host) txFull(c *TCPConn) bool {
	if c.txGrace {
		c.txGrace = false
		return false
	}
	if h.cfg.TxQueue < 0 || h.nicRate <= 0 || h.txBacklog() <= int64(h.cfg.TxQueue) {
		return false
	}
	if !c.txWaiting {
		c.txWaiting = true
		h.txWait = append(h.txWait, c)
		h.ctr.Inc("tcp_tx_queue_full")
	}
	if !h.txTimer {
		h.txTimer = true
		half := element.Time(float64(h.cfg.TxQueue/2) * 8 * float64(element.Second) / float64(h.nicRate))
		h.env.After(max(h.nicFree-half-h.env.Now(), 0), h.txDrained)
	}
	return true
}

func (h *Host) txDrained() {
	h.txTimer = false
	w := h.txWait
	h.txWait = nil
	for _, c := range w {
		c.txWaiting = false
		// One segment at least, whatever the queue holds by then: the
		// first connection woken may fill it again at once, and one
		// parked behind it, a small response behind a bulk transfer,
		// would never send (a qdisc serves every socket in turn).
		c.txGrace = true
		c.push()
		c.txGrace = false
	}
}

// allocator is the optional frame-buffer pool an engine's Env may offer
// (the simulator's sim.Allocator): frames built in it are recycled after
// delivery instead of left to the garbage collector.
type allocator interface{ Alloc(n int) []byte }

// alloc returns a zeroed frame buffer of length n.
func (h *Host) alloc(n int) []byte {
	if h.pool != nil {
		b := h.pool.Alloc(n)
		clear(b)
		return b
	}
	return make([]byte, n)
}

// New returns a host configured by cfg. It does nothing until an engine
// attaches it.
func New(cfg Config) *Host {
	cfg.defaults()
	h := &Host{
		cfg:       cfg,
		mac:       wire.MAC(cfg.MAC),
		conns:     make(map[connKey]*TCPConn),
		listeners: make(map[uint16]func(*TCPConn)),
		nextPort:  ephemeralFirst,
	}
	if !cfg.DHCP && cfg.IP.Addr().Is4() {
		h.ip = cfg.IP.Addr()
		h.prefix = cfg.IP.Masked()
	}
	h.arp.init()
	return h
}

// Name returns the configured name.
func (h *Host) Name() string { return h.cfg.Name }

// MAC returns the NIC's address.
func (h *Host) MAC() [6]byte { return h.mac }

// Addr returns the host's IPv4 address, invalid while DHCP is unbound.
func (h *Host) Addr() netip.Addr { return h.ip }

// Prefix returns the address with its prefix length.
func (h *Host) Prefix() netip.Prefix {
	if !h.ip.IsValid() {
		return netip.Prefix{}
	}
	return netip.PrefixFrom(h.ip, h.prefix.Bits())
}

// hotCounters are the per-frame counters, kept as fields: a map update
// per frame per counter was a measurable share of the TCP hot path.
type hotCounters struct {
	txFrames, txBytes, rxFrames, rxBytes, rxIP, tcpTx, tcpRx uint64
}

func (c *hotCounters) each(f func(name string, v uint64)) {
	f("tx_frames", c.txFrames)
	f("tx_bytes", c.txBytes)
	f("rx_frames", c.rxFrames)
	f("rx_bytes", c.rxBytes)
	f("rx_ip", c.rxIP)
	f("tcp_tx", c.tcpTx)
	f("tcp_rx", c.tcpRx)
}

// Counters returns the host's event and drop counters
// (element.CounterReporter). Counters that never moved are absent.
func (h *Host) Counters() map[string]uint64 {
	m := h.ctr.Snapshot()
	h.hot.each(func(name string, v uint64) {
		if v != 0 {
			if m == nil {
				m = make(map[string]uint64)
			}
			m[name] = v
		}
	})
	return m
}

// Counter returns one counter's value.
func (h *Host) Counter(name string) uint64 {
	v := h.ctr.Get(name)
	h.hot.each(func(n string, x uint64) {
		if n == name {
			v = x
		}
	})
	return v
}

// Attach implements element.Element. The host announces itself (gratuitous
// ARP) or starts DHCP right after attach, from a zero-delay timer, so that
// nothing is sent from inside Attach.
func (h *Host) Attach(env element.Env, ports []element.PortInfo) {
	h.env = env
	h.pool, _ = env.(allocator)
	h.linkUp = true
	for _, p := range ports {
		if p.Port == 1 {
			h.linkUp = p.Up
			h.nicRate = p.Rate
		}
	}
	if h.cfg.NICRate > 0 {
		h.nicRate = h.cfg.NICRate
	}
	env.After(0, h.start)
}

func (h *Host) start() {
	if h.cfg.DHCP {
		h.dhcp = newDHCPClient(h)
		h.dhcp.begin()
		return
	}
	if h.ip.IsValid() {
		h.gratuitousARP()
	}
}

// SetAddr changes the host's address (a VM that moved, a renumbering) and
// announces it with a gratuitous ARP.
func (h *Host) SetAddr(p netip.Prefix) {
	if !p.Addr().Is4() {
		h.ip, h.prefix = netip.Addr{}, netip.Prefix{}
		return
	}
	changed := p.Addr() != h.ip
	h.ip, h.prefix = p.Addr(), p.Masked()
	if changed && h.env != nil && h.linkUp {
		h.gratuitousARP()
	}
}

// LinkChange implements element.Element. A link that comes back up
// re-announces the address, as Linux does on carrier up.
func (h *Host) LinkChange(p element.Port, up bool) {
	if p != 1 || h.env == nil {
		return
	}
	was := h.linkUp
	h.linkUp = up
	if up && !was && h.ip.IsValid() {
		h.gratuitousARP()
	}
}

// send transmits a complete frame on the NIC, counting what a down link
// swallows.
func (h *Host) send(f []byte) {
	if !h.linkUp {
		h.ctr.Inc("drop_link_down")
		return
	}
	h.hot.txFrames++
	h.hot.txBytes += uint64(len(f))
	if h.nicRate > 0 {
		now := h.env.Now()
		wireLen := max(len(f), 60) + wireOverhead
		h.nicFree = max(h.nicFree, now) + element.Time(int64(wireLen)*8*int64(element.Second)/h.nicRate)
	}
	h.env.Send(1, f)
}

// Receive implements element.Element.
func (h *Host) Receive(p element.Port, frame []byte) {
	if h.env == nil { // the engine broke its contract; count, do not crash
		h.ctr.Inc("drop_not_attached")
		return
	}
	if p != 1 {
		h.ctr.Inc("drop_bad_port")
		return
	}
	h.hot.rxFrames++
	h.hot.rxBytes += uint64(len(frame))
	f, err := wire.ParseFrame(frame)
	if err != nil {
		h.ctr.Inc("drop_eth_truncated")
		return
	}
	if d := f.Dst(); d != h.mac && !d.IsBroadcast() {
		h.ctr.Inc("drop_not_for_us")
		return
	}
	switch f.EtherType() {
	case wire.EtherTypeARP:
		h.receiveARP(frame)
	case wire.EtherTypeIPv4:
		h.receiveIPv4(f.Src(), f.Payload())
	case wire.EtherTypeVLAN, wire.EtherTypeQinQ:
		// A host NIC is an access port: a tag reaching it means a
		// misconfigured edge (or a SPAIN driver that did not strip it).
		h.ctr.Inc("drop_vlan_tagged")
	default:
		h.ctr.Inc("drop_ethertype")
	}
}

func (h *Host) receiveIPv4(src wire.MAC, b []byte) {
	ip, reason := parseIPv4(b)
	if reason != "" {
		h.ctr.Inc(reason)
		return
	}
	if !h.validSource(ip.src, ip.dst) {
		h.ctr.Inc("drop_ip_bad_source")
		return
	}
	dst := netip.AddrFrom4(ip.dst)
	if !h.acceptsIP(dst, &ip) {
		h.ctr.Inc("drop_ip_not_for_us")
		return
	}
	h.hot.rxIP++
	switch ip.proto {
	case protoICMP:
		h.receiveICMP(&ip)
	case protoUDP:
		h.receiveUDP(&ip)
	case protoTCP:
		h.receiveTCP(&ip)
	default:
		h.ctr.Inc("drop_ip_proto")
	}
}

// acceptsIP reports whether a packet to dst is for this host: its address,
// the limited or subnet broadcast, or (while DHCP is not bound) a DHCP
// reply to the address being offered.
func (h *Host) acceptsIP(dst netip.Addr, ip *ipv4) bool {
	if h.ip.IsValid() && dst == h.ip {
		return true
	}
	if dst == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return true
	}
	if h.ip.IsValid() && dst == broadcastOf(h.Prefix()) {
		return true
	}
	return h.dhcp != nil && !h.ip.IsValid() && ip.proto == protoUDP
}

// validSource reports whether src may be the source of a packet to dst
// this host accepts (RFC 1122 §3.2.1.3): not a broadcast (limited, or the
// subnet's), multicast, class E or loopback address. A reply to such a
// source would be broadcast or go nowhere: one forged frame would make the
// host flood the segment. 0/8 ("this network", 0.0.0.0 included) is
// legal only toward the limited broadcast, from a DHCP client before its
// lease, which cannot send otherwise (Linux drops it as a martian
// elsewhere): a SYN from 0.0.0.0 made a connection that sent its SYN-ACKs
// to the gateway.
func (h *Host) validSource(src, dst [4]byte) bool {
	switch {
	case src[0] >= 224, src[0] == 127:
		return false
	case src[0] == 0:
		return dst == [4]byte{255, 255, 255, 255}
	case h.ip.IsValid() && netip.AddrFrom4(src) == h.ip:
		// Our own address, from the wire: forged or looped back, and
		// the answer would go to ourselves, by ARP requests for our
		// own address (Linux drops it as a martian).
		return false
	case h.ip.IsValid() && netip.AddrFrom4(src) == broadcastOf(h.Prefix()):
		return false
	}
	return true
}

func broadcastOf(p netip.Prefix) netip.Addr {
	if !p.Addr().Is4() || p.Bits() >= 31 {
		return netip.Addr{}
	}
	a := p.Addr().As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v |= 1<<(32-p.Bits()) - 1
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// nextHop returns the address to resolve for dst, or false when dst is
// off-subnet and there is no gateway.
func (h *Host) nextHop(dst netip.Addr) (netip.Addr, bool) {
	if h.prefix.Contains(dst) {
		return dst, true
	}
	if h.cfg.Gateway.IsValid() {
		return h.cfg.Gateway, true
	}
	return netip.Addr{}, false
}

// output sends an IPv4 frame built by newIPFrame toward dst: it resolves
// the next hop's MAC, queueing the frame while ARP runs. A host without
// an address sends nothing (drop_no_address), as Linux finds no source
// address for the route: what apps and connections started before a
// lease expired, a NAK or SetAddr took the address away went out from
// 0.0.0.0, a martian source, through the gateway. (The DHCP client's
// broadcasts before its lease do not come here.)
func (h *Host) output(dst netip.Addr, f []byte) {
	if !h.ip.IsValid() {
		h.ctr.Inc("drop_no_address")
		return
	}
	if dst == netip.AddrFrom4([4]byte{255, 255, 255, 255}) || (h.ip.IsValid() && dst == broadcastOf(h.Prefix())) {
		copy(f[0:6], wire.Broadcast[:])
		h.send(f)
		return
	}
	nh, ok := h.nextHop(dst)
	if !ok {
		h.ctr.Inc("drop_no_route")
		return
	}
	h.resolveAndSend(nh, f)
}
