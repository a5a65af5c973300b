package wire

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/insomniacslk/dhcp/dhcpv4"
)

// Standard headers go through gopacket (Ethernet, 802.1Q/QinQ, ARP, IPv4,
// UDP, LLDP, MPLS, VXLAN) and insomniacslk/dhcp (DHCPv4). These helpers are
// for control paths (a host's ARP and DHCP, an Axon's control plane, LLDP
// in the emulator); per-frame forwarding uses the in-place operations of
// this package. Decoders run gopacket with panics not recovered, so a bug
// surfaces in the fuzz targets instead of being hidden.

// SerializeLayers appends the layers to b, fixing lengths and checksums.
func SerializeLayers(b []byte, ls ...gopacket.SerializableLayer) ([]byte, error) {
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		return b, fmt.Errorf("wire: serialize: %w", err)
	}
	return append(b, buf.Bytes()...), nil
}

func hw(m MAC) net.HardwareAddr { return net.HardwareAddr(m[:]) }

// checkIPv4Len refuses an IPv4 payload (transport header plus data) that
// the 16-bit total length cannot count: gopacket's FixLengths would wrap
// the length fields silently.
func checkIPv4Len(what string, n int) error {
	if n > 0xffff-ipv4HdrLen {
		return fmt.Errorf("wire: %s: IPv4 payload of %d bytes, at most %d: %w", what, n, 0xffff-ipv4HdrLen, ErrBadLength)
	}
	return nil
}

func ip4(field string, a netip.Addr) (net.IP, error) {
	if !a.Is4() {
		return nil, fmt.Errorf("%s %v is not IPv4: %w", field, a, ErrBadValue)
	}
	v := a.As4()
	return net.IP(v[:]), nil
}

// ARP operations.
const (
	ARPRequest uint16 = 1
	ARPReply   uint16 = 2
)

// ARP is an Ethernet/IPv4 ARP packet (RFC 826).
type ARP struct {
	Op        uint16
	SenderMAC MAC
	SenderIP  netip.Addr
	TargetMAC MAC
	TargetIP  netip.Addr
}

// AppendARPFrame appends an Ethernet frame from a.SenderMAC to dst
// carrying a, on VLAN vid if vid is not 0.
func AppendARPFrame(b []byte, dst MAC, vid uint16, a *ARP) ([]byte, error) {
	if vid > 0xfff {
		return b, fmt.Errorf("wire: arp: VLAN %d above 4095: %w", vid, ErrBadValue)
	}
	sip, err := ip4("sender", a.SenderIP)
	if err != nil {
		return b, fmt.Errorf("wire: arp: %w", err)
	}
	tip, err := ip4("target", a.TargetIP)
	if err != nil {
		return b, fmt.Errorf("wire: arp: %w", err)
	}
	eth := &layers.Ethernet{SrcMAC: hw(a.SenderMAC), DstMAC: hw(dst), EthernetType: layers.EthernetTypeARP}
	arp := &layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6, ProtAddressSize: 4,
		Operation: a.Op, SourceHwAddress: hw(a.SenderMAC), SourceProtAddress: sip, DstHwAddress: hw(a.TargetMAC), DstProtAddress: tip}
	if vid == 0 {
		return SerializeLayers(b, eth, arp)
	}
	eth.EthernetType = layers.EthernetTypeDot1Q
	return SerializeLayers(b, eth, &layers.Dot1Q{VLANIdentifier: vid, Type: layers.EthernetTypeARP}, arp)
}

// stdParser decodes Ethernet, up to two VLAN tags, and one of the
// standard payloads; it reports which layers it saw.
type stdParser struct {
	eth   layers.Ethernet
	vlan  layers.Dot1Q
	arp   layers.ARP
	ip4   layers.IPv4
	udp   layers.UDP
	tcp   layers.TCP
	icmp  layers.ICMPv4
	p     *gopacket.DecodingLayerParser
	found []gopacket.LayerType
}

// stdParsers recycles parsers: building one allocates every layer, which
// cost more than the decode itself.
var stdParsers = sync.Pool{New: func() any { return buildStdParser() }}

// newStdParser takes a parser from the pool; release it with put once
// nothing refers to its layers (payload slices point into the frame, not
// into the parser, and may be kept).
func newStdParser() *stdParser { return stdParsers.Get().(*stdParser) }

func (s *stdParser) put() { stdParsers.Put(s) }

func buildStdParser() *stdParser {
	s := &stdParser{}
	s.p = gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &s.eth, &s.vlan, &s.arp, &s.ip4, &s.udp, &s.tcp, &s.icmp)
	s.p.IgnorePanic = true
	s.p.IgnoreUnsupported = true
	return s
}

func (s *stdParser) decode(what string, frame []byte, want gopacket.LayerType) error {
	err := s.p.DecodeLayers(frame, &s.found)
	// gopacket decodes a frame shorter than its headers' lengths say and
	// only flags it: the payload would come back silently cut.
	if s.p.Truncated {
		return fmt.Errorf("wire: %s: frame of %d bytes shorter than its headers say: %w", what, len(frame), ErrBadLength)
	}
	for _, l := range s.found {
		if l == want {
			return nil
		}
	}
	if err != nil {
		var unsup gopacket.UnsupportedLayerType
		if !errors.As(err, &unsup) {
			return fmt.Errorf("wire: %s: %v: %w", what, err, ErrBadLength)
		}
	}
	return fmt.Errorf("wire: %s: no %v layer in the frame: %w", what, want, ErrUnknownType)
}

// DecodeARP decodes an Ethernet/IPv4 ARP frame (VLAN tags allowed).
func DecodeARP(frame []byte) (ARP, error) {
	s := newStdParser()
	defer s.put()
	if err := s.decode("arp", frame, layers.LayerTypeARP); err != nil {
		return ARP{}, err
	}
	a := &s.arp
	if a.AddrType != layers.LinkTypeEthernet || a.Protocol != layers.EthernetTypeIPv4 || a.HwAddressSize != 6 || a.ProtAddressSize != 4 {
		return ARP{}, fmt.Errorf("wire: arp: hardware %v/%d, protocol %v/%d, want Ethernet/6 and IPv4/4: %w",
			a.AddrType, a.HwAddressSize, a.Protocol, a.ProtAddressSize, ErrUnknownType)
	}
	return ARP{
		Op:        a.Operation,
		SenderMAC: MAC(a.SourceHwAddress),
		SenderIP:  netip.AddrFrom4([4]byte(a.SourceProtAddress)),
		TargetMAC: MAC(a.DstHwAddress),
		TargetIP:  netip.AddrFrom4([4]byte(a.DstProtAddress)),
	}, nil
}

// AppendUDPFrame appends an Ethernet/IPv4/UDP frame.
func AppendUDPFrame(b []byte, dstMAC, srcMAC MAC, src, dst netip.AddrPort, ttl uint8, payload []byte) ([]byte, error) {
	sip, err := ip4("source", src.Addr())
	if err != nil {
		return b, fmt.Errorf("wire: udp: %w", err)
	}
	dip, err := ip4("destination", dst.Addr())
	if err != nil {
		return b, fmt.Errorf("wire: udp: %w", err)
	}
	if err := checkIPv4Len("udp", udpHdrLen+len(payload)); err != nil {
		return b, err
	}
	if ttl == 0 {
		ttl = defaultTTL
	}
	eth := &layers.Ethernet{SrcMAC: hw(srcMAC), DstMAC: hw(dstMAC), EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: ttl, Protocol: layers.IPProtocolUDP, SrcIP: sip, DstIP: dip}
	udp := &layers.UDP{SrcPort: layers.UDPPort(src.Port()), DstPort: layers.UDPPort(dst.Port())}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		return b, fmt.Errorf("wire: udp: %w", err)
	}
	return SerializeLayers(b, eth, ip, udp, gopacket.Payload(payload))
}

// DecodeUDP decodes an Ethernet/IPv4/UDP frame and returns the addresses
// and the payload (a sub-slice of frame). Checksums are not verified (frames
// relayed from a veth with checksum offload carry unfinished ones).
func DecodeUDP(frame []byte) (src, dst netip.AddrPort, payload []byte, err error) {
	s := newStdParser()
	defer s.put()
	if err := s.decode("udp", frame, layers.LayerTypeUDP); err != nil {
		return src, dst, nil, err
	}
	// gopacket reads length 0 as an IPv6 jumbogram; over IPv4 the length
	// counts the 8-byte header at least (RFC 768).
	if s.udp.Length < 8 {
		return src, dst, nil, fmt.Errorf("wire: udp: length %d, less than the header: %w", s.udp.Length, ErrBadLength)
	}
	sa, _ := netip.AddrFromSlice(s.ip4.SrcIP)
	da, _ := netip.AddrFromSlice(s.ip4.DstIP)
	return netip.AddrPortFrom(sa, uint16(s.udp.SrcPort)), netip.AddrPortFrom(da, uint16(s.udp.DstPort)), s.udp.Payload, nil
}

// ipv4Layers returns the Ethernet and IPv4 layers of a frame from src to dst.
func ipv4Layers(what string, dstMAC, srcMAC MAC, src, dst netip.Addr, ttl uint8, proto layers.IPProtocol) (*layers.Ethernet, *layers.IPv4, error) {
	sip, err := ip4("source", src)
	if err != nil {
		return nil, nil, fmt.Errorf("wire: %s: %w", what, err)
	}
	dip, err := ip4("destination", dst)
	if err != nil {
		return nil, nil, fmt.Errorf("wire: %s: %w", what, err)
	}
	if ttl == 0 {
		ttl = defaultTTL
	}
	eth := &layers.Ethernet{SrcMAC: hw(srcMAC), DstMAC: hw(dstMAC), EthernetType: layers.EthernetTypeIPv4}
	return eth, &layers.IPv4{Version: 4, IHL: 5, TTL: ttl, Protocol: proto, SrcIP: sip, DstIP: dip}, nil
}

func (s *stdParser) ipAddrs() (src, dst netip.Addr) {
	src, _ = netip.AddrFromSlice(s.ip4.SrcIP)
	dst, _ = netip.AddrFromSlice(s.ip4.DstIP)
	return src.Unmap(), dst.Unmap()
}

// ICMPEcho is an ICMPv4 echo request (ping) or reply.
type ICMPEcho struct {
	Reply   bool
	ID, Seq uint16
	Data    []byte
}

// AppendICMPEchoFrame appends an Ethernet/IPv4/ICMP echo frame.
func AppendICMPEchoFrame(b []byte, dstMAC, srcMAC MAC, src, dst netip.Addr, ttl uint8, e *ICMPEcho) ([]byte, error) {
	eth, ip, err := ipv4Layers("icmp", dstMAC, srcMAC, src, dst, ttl, layers.IPProtocolICMPv4)
	if err != nil {
		return b, err
	}
	if err := checkIPv4Len("icmp", 8+len(e.Data)); err != nil {
		return b, err
	}
	typ := uint8(layers.ICMPv4TypeEchoRequest)
	if e.Reply {
		typ = layers.ICMPv4TypeEchoReply
	}
	icmp := &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(typ, 0), Id: e.ID, Seq: e.Seq}
	return SerializeLayers(b, eth, ip, icmp, gopacket.Payload(e.Data))
}

// DecodeICMPEcho decodes an Ethernet/IPv4/ICMP echo request or reply. The
// data is a sub-slice of frame. Checksums are not verified.
func DecodeICMPEcho(frame []byte) (src, dst netip.Addr, e ICMPEcho, err error) {
	s := newStdParser()
	defer s.put()
	if err := s.decode("icmp", frame, layers.LayerTypeICMPv4); err != nil {
		return src, dst, e, err
	}
	switch s.icmp.TypeCode.Type() {
	case layers.ICMPv4TypeEchoRequest:
	case layers.ICMPv4TypeEchoReply:
		e.Reply = true
	default:
		return src, dst, e, fmt.Errorf("wire: icmp: type %d is not an echo: %w", s.icmp.TypeCode.Type(), ErrUnknownType)
	}
	if c := s.icmp.TypeCode.Code(); c != 0 {
		return src, dst, e, fmt.Errorf("wire: icmp: echo with code %d: %w", c, ErrBadValue)
	}
	src, dst = s.ipAddrs()
	e.ID, e.Seq, e.Data = s.icmp.Id, s.icmp.Seq, s.icmp.Payload
	return src, dst, e, nil
}

// TCPFlags are the TCP header flags edgefabric uses.
type TCPFlags uint8

const (
	TCPFin TCPFlags = 0x01
	TCPSyn TCPFlags = 0x02
	TCPRst TCPFlags = 0x04
	TCPPsh TCPFlags = 0x08
	TCPAck TCPFlags = 0x10
	TCPUrg TCPFlags = 0x20

	tcpFlagsMask = TCPFin | TCPSyn | TCPRst | TCPPsh | TCPAck | TCPUrg
)

// TCPSegment is a TCP header without options, and its payload.
type TCPSegment struct {
	SrcPort, DstPort uint16
	Seq, Ack         uint32
	Flags            TCPFlags
	Window           uint16
	Payload          []byte
}

// AppendTCPFrame appends an Ethernet/IPv4/TCP frame with valid checksums.
// Flags other than the six TCPFlags constants are refused.
func AppendTCPFrame(b []byte, dstMAC, srcMAC MAC, src, dst netip.Addr, ttl uint8, s *TCPSegment) ([]byte, error) {
	eth, ip, err := ipv4Layers("tcp", dstMAC, srcMAC, src, dst, ttl, layers.IPProtocolTCP)
	if err != nil {
		return b, err
	}
	if err := checkIPv4Len("tcp", 20+len(s.Payload)); err != nil {
		return b, err
	}
	f := s.Flags
	if f&^tcpFlagsMask != 0 {
		return b, fmt.Errorf("wire: tcp: flags %#02x outside FIN..URG: %w", f, ErrBadValue)
	}
	tcp := &layers.TCP{SrcPort: layers.TCPPort(s.SrcPort), DstPort: layers.TCPPort(s.DstPort), Seq: s.Seq, Ack: s.Ack,
		FIN: f&TCPFin != 0, SYN: f&TCPSyn != 0, RST: f&TCPRst != 0, PSH: f&TCPPsh != 0, ACK: f&TCPAck != 0, URG: f&TCPUrg != 0,
		Window: s.Window}
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		return b, fmt.Errorf("wire: tcp: %w", err)
	}
	return SerializeLayers(b, eth, ip, tcp, gopacket.Payload(s.Payload))
}

// DecodeTCP decodes an Ethernet/IPv4/TCP frame; options are skipped, the
// payload is a sub-slice of frame. Checksums are not verified.
func DecodeTCP(frame []byte) (src, dst netip.Addr, s TCPSegment, err error) {
	p := newStdParser()
	defer p.put()
	if err := p.decode("tcp", frame, layers.LayerTypeTCP); err != nil {
		return src, dst, s, err
	}
	t := &p.tcp
	var f TCPFlags
	for _, x := range []struct {
		on bool
		f  TCPFlags
	}{{t.FIN, TCPFin}, {t.SYN, TCPSyn}, {t.RST, TCPRst}, {t.PSH, TCPPsh}, {t.ACK, TCPAck}, {t.URG, TCPUrg}} {
		if x.on {
			f |= x.f
		}
	}
	src, dst = p.ipAddrs()
	return src, dst, TCPSegment{SrcPort: uint16(t.SrcPort), DstPort: uint16(t.DstPort), Seq: t.Seq, Ack: t.Ack,
		Flags: f, Window: t.Window, Payload: t.Payload}, nil
}

// DHCP ports.
const (
	DHCPServerPort = 67
	DHCPClientPort = 68
)

// AppendDHCPFrame appends an Ethernet/IPv4/UDP frame carrying m, from the
// client port to the server port for a BOOTREQUEST and the other way for a
// BOOTREPLY. A client without an address uses 0.0.0.0 and broadcasts.
func AppendDHCPFrame(b []byte, dstMAC, srcMAC MAC, src, dst netip.Addr, m *dhcpv4.DHCPv4) ([]byte, error) {
	sp, dp := uint16(DHCPClientPort), uint16(DHCPServerPort)
	if m.OpCode == dhcpv4.OpcodeBootReply {
		sp, dp = dp, sp
	}
	return AppendUDPFrame(b, dstMAC, srcMAC, netip.AddrPortFrom(src, sp), netip.AddrPortFrom(dst, dp), 0, m.ToBytes())
}

// DecodeDHCP decodes a DHCPv4 message from an Ethernet/IPv4/UDP frame to or
// from port 67 or 68.
func DecodeDHCP(frame []byte) (*dhcpv4.DHCPv4, error) {
	src, dst, payload, err := DecodeUDP(frame)
	if err != nil {
		return nil, fmt.Errorf("wire: dhcp: %w", err)
	}
	isDHCP := func(p uint16) bool { return p == DHCPServerPort || p == DHCPClientPort }
	if !isDHCP(src.Port()) || !isDHCP(dst.Port()) {
		return nil, fmt.Errorf("wire: dhcp: UDP ports %d->%d: %w", src.Port(), dst.Port(), ErrUnknownType)
	}
	m, err := dhcpv4.FromBytes(payload)
	if err != nil {
		return nil, fmt.Errorf("wire: dhcp: %v: %w", err, ErrBadLength)
	}
	return m, nil
}

// LLDPMulticast is the nearest-bridge LLDP destination.
var LLDPMulticast = MAC{0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e}

// LLDP is the part of an LLDP data unit edgefabric uses for link
// discovery in the emulator: chassis ID as a MAC, port ID as an interface
// name, TTL, and the system name.
type LLDP struct {
	Chassis MAC
	PortID  string
	TTL     uint16
	SysName string
}

// AppendLLDPFrame appends an LLDP frame from src to the nearest-bridge
// multicast address.
func AppendLLDPFrame(b []byte, src MAC, l *LLDP) ([]byte, error) {
	if len(l.PortID) == 0 || len(l.PortID) > 255 || len(l.SysName) > 255 {
		return b, fmt.Errorf("wire: lldp: port ID of %d bytes or system name of %d: %w", len(l.PortID), len(l.SysName), ErrBadLength)
	}
	eth := &layers.Ethernet{SrcMAC: hw(src), DstMAC: hw(LLDPMulticast), EthernetType: layers.EthernetTypeLinkLayerDiscovery}
	d := &layers.LinkLayerDiscovery{
		ChassisID: layers.LLDPChassisID{Subtype: layers.LLDPChassisIDSubTypeMACAddr, ID: append([]byte(nil), l.Chassis[:]...)},
		PortID:    layers.LLDPPortID{Subtype: layers.LLDPPortIDSubtypeIfaceName, ID: []byte(l.PortID)},
		TTL:       l.TTL,
	}
	if l.SysName != "" {
		d.Values = append(d.Values, layers.LinkLayerDiscoveryValue{Type: layers.LLDPTLVSysName, Length: uint16(len(l.SysName)), Value: []byte(l.SysName)})
	}
	return SerializeLayers(b, eth, d)
}

// DecodeLLDP decodes an LLDP frame written by AppendLLDPFrame (or any LLDP
// frame with a MAC chassis ID).
func DecodeLLDP(frame []byte) (LLDP, error) {
	// LinkLayerDiscovery is not a gopacket.DecodingLayer: use the packet
	// decoder, with its panic recovery off.
	p := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.DecodeOptions{NoCopy: true, SkipDecodeRecovery: true})
	l0, ok := p.Layer(layers.LayerTypeLinkLayerDiscovery).(*layers.LinkLayerDiscovery)
	if !ok {
		if e := p.ErrorLayer(); e != nil {
			return LLDP{}, fmt.Errorf("wire: lldp: %v: %w", e.Error(), ErrBadLength)
		}
		return LLDP{}, fmt.Errorf("wire: lldp: no LLDP layer in the frame: %w", ErrUnknownType)
	}
	d := l0
	if d.ChassisID.Subtype != layers.LLDPChassisIDSubTypeMACAddr || len(d.ChassisID.ID) != 6 {
		return LLDP{}, fmt.Errorf("wire: lldp: chassis ID subtype %v of %d bytes, want a MAC: %w", d.ChassisID.Subtype, len(d.ChassisID.ID), ErrUnknownType)
	}
	l := LLDP{Chassis: MAC(d.ChassisID.ID), PortID: string(d.PortID.ID), TTL: d.TTL}
	for _, v := range d.Values {
		if v.Type == layers.LLDPTLVSysName {
			l.SysName = string(v.Value)
		}
	}
	return l, nil
}
