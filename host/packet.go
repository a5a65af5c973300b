package host

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/edgefabric/edgefabric/wire"
)

// The host builds and parses IPv4, ICMP, UDP and TCP in place, over fixed
// offsets, because TCP segments are the simulator's hot path: a 10 MB
// transfer is ~7000 data segments and as many ACKs, and a shuffle of 80
// hosts is millions. gopacket's serializer allocates a buffer per frame and
// its parser walks every layer; these views do neither. ARP and DHCP, which
// are rare, go through package wire (gopacket, insomniacslk/dhcp). Tests
// decode every kind of frame the host sends with gopacket and check the
// checksums, so captures decode in tshark.

// Header sizes.
const (
	ethLen  = wire.EthHeaderLen
	ipLen   = 20 // IPv4 header without options; the host never sends options
	udpLen  = 8
	icmpLen = 8
	tcpLen  = 20 // TCP header without options
)

// IP protocol numbers.
const (
	protoICMP = 1
	protoTCP  = 6
	protoUDP  = 17
)

// TCP flags.
const (
	flagFIN = 0x01
	flagSYN = 0x02
	flagRST = 0x04
	flagPSH = 0x08
	flagACK = 0x10
)

// checksum adds b to a running one's-complement sum (RFC 1071).
// It adds 32-bit big-endian words into a 64-bit accumulator, which is
// the same one's-complement sum (RFC 1071 §2(B): byte order and word size
// do not matter as long as the carries are folded back in), 8 bytes per
// step: the TCP payload checksum is the host's largest per-segment cost.
func checksum(sum uint32, b []byte) uint32 {
	acc := uint64(sum)
	for len(b) >= 8 {
		v := binary.BigEndian.Uint64(b)
		acc += v>>32 + v&0xffffffff
		b = b[8:]
	}
	if len(b) >= 4 {
		acc += uint64(binary.BigEndian.Uint32(b))
		b = b[4:]
	}
	if len(b) >= 2 {
		acc += uint64(binary.BigEndian.Uint16(b)) // low half of a word: no shift
		b = b[2:]
	}
	if len(b) == 1 {
		acc += uint64(b[0]) << 8
	}
	// Fold 64 -> 32 bits (16-bit one's complement sums are preserved by
	// folding at any 16-bit boundary).
	for acc>>32 != 0 {
		acc = acc&0xffffffff + acc>>32
	}
	return uint32(acc)
}

// fold finishes a one's-complement sum into the 16-bit checksum field.
func fold(sum uint32) uint16 {
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// pseudoSum is the IPv4 pseudo-header's contribution to a TCP or UDP
// checksum (RFC 793 §3.1, RFC 768).
func pseudoSum(src, dst [4]byte, proto uint8, length int) uint32 {
	// Go gives | and + the same precedence: every word is parenthesized.
	return (uint32(src[0])<<8 | uint32(src[1])) + (uint32(src[2])<<8 | uint32(src[3])) +
		(uint32(dst[0])<<8 | uint32(dst[1])) + (uint32(dst[2])<<8 | uint32(dst[3])) +
		uint32(proto) + uint32(length)
}

// newIPFrame allocates a frame for an IPv4 packet whose L4 part (header
// and payload) is l4 bytes long, and writes the Ethernet and IPv4 headers.
// The destination MAC is left zero: the ARP layer fills it in. The caller
// writes the L4 bytes at offset ethLen+ipLen.
func (h *Host) newIPFrame(dst [4]byte, proto uint8, l4 int) []byte {
	f := h.alloc(ethLen + ipLen + l4)
	copy(f[6:12], h.mac[:])
	binary.BigEndian.PutUint16(f[12:14], wire.EtherTypeIPv4)
	ip := f[ethLen:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:4], uint16(ipLen+l4))
	h.ipID++
	binary.BigEndian.PutUint16(ip[4:6], h.ipID)
	ip[6] = 0x40 // DF: the host never fragments, as Linux with PMTU discovery
	ip[8] = 64
	ip[9] = proto
	if h.ip.Is4() { // 0.0.0.0 otherwise, as a DHCP client before it is bound
		src := h.ip.As4()
		copy(ip[12:16], src[:])
	}
	copy(ip[16:20], dst[:])
	binary.BigEndian.PutUint16(ip[10:12], fold(checksum(0, ip[:ipLen])))
	return f
}

// ipv4 is a parsed view of a received IPv4 packet: the header fields the
// host needs and the L4 bytes, which alias the frame.
type ipv4 struct {
	src, dst [4]byte
	proto    uint8
	l4       []byte
}

// Reasons a received IPv4 packet is dropped, as counter names.
const (
	dropIPTruncated = "drop_ip_truncated"
	dropIPVersion   = "drop_ip_bad_version"
	dropIPLength    = "drop_ip_bad_length"
	dropIPChecksum  = "drop_ip_bad_checksum"
	dropIPFragment  = "drop_ip_fragment"
	dropIPOption    = "drop_ip_bad_option"
	dropIPSrcRoute  = "drop_ip_source_route"
)

// parseIPv4 checks an IPv4 header and returns the view, or the name of the
// drop counter that explains why it is unusable.
func parseIPv4(b []byte) (ipv4, string) {
	var p ipv4
	if len(b) < ipLen {
		return p, dropIPTruncated
	}
	if b[0]>>4 != 4 {
		return p, dropIPVersion
	}
	hl := int(b[0]&0x0f) * 4
	tl := int(binary.BigEndian.Uint16(b[2:4]))
	if hl < ipLen || tl < hl || tl > len(b) {
		return p, dropIPLength
	}
	if fold(checksum(0, b[:hl])) != 0 {
		return p, dropIPChecksum
	}
	if ff := binary.BigEndian.Uint16(b[6:8]); ff&0x3fff != 0 { // MF set or a fragment offset
		return p, dropIPFragment
	}
	if hl > ipLen {
		if reason := checkIPOptions(b[ipLen:hl]); reason != "" {
			return p, reason
		}
	}
	p.proto = b[9]
	copy(p.src[:], b[12:16])
	copy(p.dst[:], b[16:20])
	// Ethernet pads short frames to 60 bytes: the total length, not the
	// frame, bounds the packet.
	p.l4 = b[hl:tl:tl]
	return p, ""
}

// checkIPOptions walks the options of an IPv4 header as Linux's
// ip_options_compile does for a packet received: each option but
// end-of-list and no-op has a length of at least 2 that fits in what is
// left; record route (RFC 791) and timestamp (RFC 791) appear at most
// once, with a length and a pointer that leave room for the entry the
// pointer names (a timestamp whose pointer is past the end has not
// overflowed its counter); router alert (RFC 2113) is 4 bytes; a source
// route (loose or strict, RFC 791) is refused, as Linux refuses it
// unless accept_source_route is on (off by default). Other options
// (security, stream ID, unknown ones) are skipped by their length. A
// malformed option list and a source-routed packet were taken, and so,
// until Linux's per-option checks were added here, were a record route or
// timestamp whose pointer ran past its length, a repeated one, and a
// short router alert, which Linux drops with a parameter problem.
func checkIPOptions(o []byte) string {
	var rr, ts bool
	for len(o) > 0 {
		switch o[0] {
		case 0: // end of option list
			return ""
		case 1: // no-op
			o = o[1:]
			continue
		}
		if len(o) < 2 || o[1] < 2 || int(o[1]) > len(o) {
			return dropIPOption
		}
		opt := o[:o[1]]
		switch opt[0] {
		case 131, 137: // loose, strict source and record route
			if len(opt) < 3 || opt[2] < 4 {
				return dropIPOption
			}
			return dropIPSrcRoute
		case 7: // record route
			if rr || len(opt) < 3 || opt[2] < 4 || int(opt[2]) <= len(opt) && int(opt[2])+3 > len(opt) {
				return dropIPOption
			}
			rr = true
		case 68: // timestamp
			if ts || len(opt) < 4 || opt[2] < 5 {
				return dropIPOption
			}
			ptr, flag := int(opt[2]), opt[3]&0xf
			switch {
			case ptr <= len(opt):
				// Room for the next entry: a timestamp, or an address
				// and a timestamp (flags 1 and 3).
				if ptr+3 > len(opt) || (flag == 1 || flag == 3) && ptr+7 > len(opt) {
					return dropIPOption
				}
			case flag != 3 && opt[3]>>4 == 15: // full, its overflow counter too
				return dropIPOption
			}
			ts = true
		case 148: // router alert
			if len(opt) < 4 {
				return dropIPOption
			}
		}
		o = o[len(opt):]
	}
	return ""
}

// l4Checksum computes a TCP or UDP checksum over seg (checksum field
// included, so a valid segment sums to zero).
func l4Checksum(src, dst [4]byte, proto uint8, seg []byte) uint16 {
	return fold(checksum(pseudoSum(src, dst, proto, len(seg)), seg))
}

// tcpSeg is a parsed view of a TCP segment.
type tcpSeg struct {
	srcPort, dstPort uint16
	seq, ack         uint32
	flags            uint8
	wnd              uint16
	mss              uint16 // 0 when the option is absent
	wscale           int8   // -1 when the option is absent
	payload          []byte
}

// Reasons a TCP segment is dropped.
const (
	dropTCPTruncated = "drop_tcp_truncated"
	dropTCPOffset    = "drop_tcp_bad_offset"
	dropTCPChecksum  = "drop_tcp_bad_checksum"
	dropTCPOption    = "drop_tcp_bad_option"
)

func parseTCP(ip *ipv4) (tcpSeg, string) {
	s := tcpSeg{wscale: -1}
	b := ip.l4
	if len(b) < tcpLen {
		return s, dropTCPTruncated
	}
	off := int(b[12]>>4) * 4
	if off < tcpLen || off > len(b) {
		return s, dropTCPOffset
	}
	if l4Checksum(ip.src, ip.dst, protoTCP, b) != 0 {
		return s, dropTCPChecksum
	}
	s.srcPort = binary.BigEndian.Uint16(b[0:2])
	s.dstPort = binary.BigEndian.Uint16(b[2:4])
	s.seq = binary.BigEndian.Uint32(b[4:8])
	s.ack = binary.BigEndian.Uint32(b[8:12])
	s.flags = b[13]
	s.wnd = binary.BigEndian.Uint16(b[14:16])
	opts := b[tcpLen:off]
	for len(opts) > 0 {
		kind := opts[0]
		if kind == 0 { // end of option list
			break
		}
		if kind == 1 { // no-op
			opts = opts[1:]
			continue
		}
		if len(opts) < 2 || int(opts[1]) < 2 || int(opts[1]) > len(opts) {
			return s, dropTCPOption
		}
		o := opts[:opts[1]]
		switch kind {
		case 2:
			if len(o) != 4 {
				return s, dropTCPOption
			}
			s.mss = binary.BigEndian.Uint16(o[2:4])
		case 3:
			if len(o) != 3 {
				return s, dropTCPOption
			}
			s.wscale = int8(min(o[2], 14)) // RFC 7323 §2.3: values above 14 are taken as 14
		}
		opts = opts[len(o):]
	}
	s.payload = b[off:]
	return s, ""
}

// udpDgram is a parsed view of a UDP datagram.
type udpDgram struct {
	srcPort, dstPort uint16
	payload          []byte
}

const (
	dropUDPTruncated = "drop_udp_truncated"
	dropUDPLength    = "drop_udp_bad_length"
	dropUDPChecksum  = "drop_udp_bad_checksum"
)

func parseUDP(ip *ipv4) (udpDgram, string) {
	var d udpDgram
	b := ip.l4
	if len(b) < udpLen {
		return d, dropUDPTruncated
	}
	l := int(binary.BigEndian.Uint16(b[4:6]))
	if l < udpLen || l > len(b) {
		return d, dropUDPLength
	}
	b = b[:l]
	// A zero checksum means the sender computed none (RFC 768).
	if binary.BigEndian.Uint16(b[6:8]) != 0 && l4Checksum(ip.src, ip.dst, protoUDP, b) != 0 {
		return d, dropUDPChecksum
	}
	d.srcPort = binary.BigEndian.Uint16(b[0:2])
	d.dstPort = binary.BigEndian.Uint16(b[2:4])
	d.payload = b[udpLen:]
	return d, ""
}

// FlowKey names a TCP connection from the host's side: its own port, the
// peer's address and port. It is what a host agent (SPAIN's driver) reads
// from an outgoing frame to find the connection's congestion state.
type FlowKey struct {
	LocalPort  uint16
	Remote     netip.Addr
	RemotePort uint16
}

func (k FlowKey) String() string {
	return fmt.Sprintf(":%d->%v:%d", k.LocalPort, k.Remote, k.RemotePort)
}

// connKey is FlowKey in 8 comparable bytes, the map key of the connection
// table (netip.Addr is 24 bytes and carries a zone pointer).
type connKey struct {
	raddr        [4]byte
	lport, rport uint16
}

func (k connKey) flow() FlowKey {
	return FlowKey{LocalPort: k.lport, Remote: netip.AddrFrom4(k.raddr), RemotePort: k.rport}
}
