package wire

import (
	"encoding/binary"
	"fmt"
)

// DumbNet tag values (DumbNet §3.2, §4.1).
const (
	DumbNetEnd   = 0xFF // end-of-path marker, the paper's ∅
	DumbNetQuery = 0x00 // asks the switch for its ID
	// DumbNetMaxTags bounds a path; a data-center path is far shorter.
	DumbNetMaxTags = 64
)

// DumbNetHeader is the DumbNet tag stack (DumbNet §5.1, DESIGN.md §4): the
// Ethernet header is kept with EtherType 0x9800, followed by one byte per
// hop (the output port on that switch), the end marker 0xFF, and then the
// EtherType of the payload.
//
//	+--------------+--------------+--------+------+------+-----+------+------------+---------
//	|  dst MAC (6) |  src MAC (6) | 0x9800 | tag1 | tag2 | ... | 0xFF | inner type | payload
//	+--------------+--------------+--------+------+------+-----+------+------------+---------
//
// Each switch pops the first tag and forwards the frame to that port; tag 0
// makes the switch answer with its ID (DumbNetSwitchID) along the rest of
// the path. The destination host checks that only the end marker remains,
// strips it and restores the inner EtherType (an edgefabric assumption:
// the paper leaves an IP packet after ∅ and so cannot carry ARP, IPv6 or
// probe payloads; two bytes name the payload instead, see docs/wire.md).
type DumbNetHeader struct {
	Tags      []uint8 // hops still to take, next first; 0 = switch ID query
	InnerType uint16  // EtherType of the payload
}

func checkTags(tags []uint8) error {
	if len(tags) > DumbNetMaxTags {
		return fmt.Errorf("wire: dumbnet: path of %d tags, at most %d: %w", len(tags), DumbNetMaxTags, ErrBadLength)
	}
	for i, t := range tags {
		if t == DumbNetEnd {
			return fmt.Errorf("wire: dumbnet: tag %d is the end marker 0xff: %w", i, ErrBadHop)
		}
	}
	return nil
}

// AppendTo appends the tag stack (tags, end marker, inner EtherType), not
// the Ethernet header.
func (h *DumbNetHeader) AppendTo(b []byte) ([]byte, error) {
	if err := checkTags(h.Tags); err != nil {
		return b, err
	}
	b = append(b, h.Tags...)
	b = append(b, DumbNetEnd)
	return binary.BigEndian.AppendUint16(b, h.InnerType), nil
}

// DecodeFromBytes parses a whole DumbNet frame (Ethernet header first),
// reusing h.Tags, and returns the payload after the inner EtherType.
func (h *DumbNetHeader) DecodeFromBytes(frame []byte) (payload []byte, err error) {
	tags, inner, payload, err := ParseDumbNet(frame)
	if err != nil {
		return nil, err
	}
	h.Tags = append(h.Tags[:0], tags...)
	h.InnerType = inner
	return payload, nil
}

// ParseDumbNet checks a DumbNet frame and returns views of its tags
// (without the end marker), the inner EtherType and the payload. No
// allocation.
func ParseDumbNet(frame []byte) (tags []byte, inner uint16, payload []byte, err error) {
	f, err := ParseFrame(frame)
	if err != nil {
		return nil, 0, nil, err
	}
	if et := f.EtherType(); et != EtherTypeDumbNet {
		return nil, 0, nil, fmt.Errorf("wire: dumbnet: EtherType %#04x, want 0x9800: %w", et, ErrUnknownType)
	}
	rest := frame[EthHeaderLen:]
	lim := min(len(rest), DumbNetMaxTags+1)
	for i := range lim {
		if rest[i] == DumbNetEnd {
			if len(rest) < i+3 {
				return nil, 0, nil, fmt.Errorf("wire: dumbnet: inner EtherType missing after end marker: %w", ErrTruncated)
			}
			return rest[:i:i], binary.BigEndian.Uint16(rest[i+1:]), rest[i+3:], nil
		}
	}
	if len(rest) > DumbNetMaxTags {
		return nil, 0, nil, fmt.Errorf("wire: dumbnet: no end marker in the first %d tags: %w", DumbNetMaxTags+1, ErrBadLength)
	}
	return nil, 0, nil, fmt.Errorf("wire: dumbnet: %d tags and no end marker: %w", len(rest), ErrTruncated)
}

// DumbNetPush turns an Ethernet frame into a DumbNet frame that follows
// path: the host agent's send path (DumbNet §5.2). The frame grows by
// len(path)+3 bytes in place: 0 allocations when cap(frame) allows, else
// one. Use the returned slice.
func DumbNetPush(frame []byte, path []uint8) ([]byte, error) {
	f, err := ParseFrame(frame)
	if err != nil {
		return frame, err
	}
	if err := checkTags(path); err != nil {
		return frame, err
	}
	inner := f.EtherType()
	n := len(path) + 3
	frame = insertAt(frame, 12, n)
	binary.BigEndian.PutUint16(frame[12:], EtherTypeDumbNet)
	copy(frame[14:], path)
	frame[14+len(path)] = DumbNetEnd
	binary.BigEndian.PutUint16(frame[15+len(path):], inner)
	return frame, nil
}

// DumbNetPop is the switch's whole data plane (DumbNet §3.2): it removes
// the first tag and returns it with the shortened frame, which shares
// frame's memory (the Ethernet header moves one byte up). The end marker
// is not popped: ErrNoHops tells a switch it was handed a frame meant for a
// host. Tag 0 (switch ID query) is returned like any tag. 0 allocations.
func DumbNetPop(frame []byte) (tag uint8, out []byte, err error) {
	if len(frame) < EthHeaderLen+1 {
		return 0, frame, fmt.Errorf("wire: dumbnet: %d bytes, need %d: %w", len(frame), EthHeaderLen+1, ErrTruncated)
	}
	if et := binary.BigEndian.Uint16(frame[12:]); et != EtherTypeDumbNet {
		return 0, frame, fmt.Errorf("wire: dumbnet: EtherType %#04x, want 0x9800: %w", et, ErrUnknownType)
	}
	tag = frame[EthHeaderLen]
	if tag == DumbNetEnd {
		return tag, frame, fmt.Errorf("wire: dumbnet: at end marker: %w", ErrNoHops)
	}
	copy(frame[1:EthHeaderLen+1], frame[:EthHeaderLen])
	return tag, frame[1:], nil
}

// DumbNetStrip is the receiving host's check (DumbNet §5.1): only the end
// marker may remain. It removes the marker, restores the inner EtherType
// and returns the plain Ethernet frame, sharing frame's memory. A frame
// with tags left returns ErrNotAtEnd (the paper's agent drops it).
// 0 allocations.
func DumbNetStrip(frame []byte) ([]byte, error) {
	if len(frame) < EthHeaderLen+3 {
		return frame, fmt.Errorf("wire: dumbnet: %d bytes, need %d: %w", len(frame), EthHeaderLen+3, ErrTruncated)
	}
	if et := binary.BigEndian.Uint16(frame[12:]); et != EtherTypeDumbNet {
		return frame, fmt.Errorf("wire: dumbnet: EtherType %#04x, want 0x9800: %w", et, ErrUnknownType)
	}
	if t := frame[EthHeaderLen]; t != DumbNetEnd {
		return frame, fmt.Errorf("wire: dumbnet: tag %d before the end marker: %w", t, ErrNotAtEnd)
	}
	// dst, src move 3 bytes up; the inner EtherType is already in place.
	copy(frame[3:15], frame[0:12])
	return frame[3:], nil
}

// DumbNet MPLS option (DumbNet §5.3, DESIGN.md §4): the same path as an
// MPLS label stack under EtherType 0x8847, one label per hop with
// label = output port, TC 0, TTL 255, then an end label 0xFF with the
// bottom-of-stack bit. Commodity MPLS switches pop a label and forward to
// the port it names. MPLS has no next-protocol field, so the payload must be
// IPv4 or IPv6: the host restores the EtherType from the IP version nibble,
// as MPLS receivers do. Control messages use the native 0x9800 encoding.
// Hand-written because layers.MPLS is not a gopacket DecodingLayer: a pop
// through gopacket.NewPacket plus SerializeLayers measured 630-860 ns and 5
// allocations, DumbNetMPLSPop 13-24 ns and none (BenchmarkGopacket/MPLSPop).
const (
	mplsTTL      = 255
	MPLSLabelLen = 4
)

func mplsEntry(label uint32, bos bool) uint32 {
	v := label<<12 | mplsTTL
	if bos {
		v |= 1 << 8
	}
	return v
}

// DumbNetMPLSPush turns an IPv4 or IPv6 Ethernet frame into a DumbNet MPLS
// frame following path. The IP version nibble must match the EtherType,
// since it is all the receiver has to restore it. 0 allocations when
// cap(frame) allows.
func DumbNetMPLSPush(frame []byte, path []uint8) ([]byte, error) {
	f, err := ParseFrame(frame)
	if err != nil {
		return frame, err
	}
	et := f.EtherType()
	if et != EtherTypeIPv4 && et != EtherTypeIPv6 {
		return frame, fmt.Errorf("wire: dumbnet mpls: payload EtherType %#04x, MPLS carries only IPv4/IPv6: %w", et, ErrUnknownType)
	}
	// The receiving host restores the EtherType from the version nibble
	// (DumbNetMPLSStrip): a payload without one, or with the other
	// version, would come out under another EtherType or not at all.
	if len(frame) == EthHeaderLen {
		return frame, fmt.Errorf("wire: dumbnet mpls: no IP header after EtherType %#04x: %w", et, ErrTruncated)
	}
	if v := frame[EthHeaderLen] >> 4; (v == 4) != (et == EtherTypeIPv4) || (v == 6) != (et == EtherTypeIPv6) {
		return frame, fmt.Errorf("wire: dumbnet mpls: IP version %d under EtherType %#04x: %w", v, et, ErrBadValue)
	}
	if err := checkTags(path); err != nil {
		return frame, err
	}
	n := (len(path) + 1) * MPLSLabelLen
	frame = insertAt(frame, 14, n)
	binary.BigEndian.PutUint16(frame[12:], EtherTypeMPLS)
	for i, t := range path {
		binary.BigEndian.PutUint32(frame[14+4*i:], mplsEntry(uint32(t), false))
	}
	binary.BigEndian.PutUint32(frame[14+4*len(path):], mplsEntry(DumbNetEnd, true))
	return frame, nil
}

// DumbNetMPLSPop pops the top label like DumbNetPop and returns its label
// (the output port). The end label is not popped (ErrNoHops).
// 0 allocations.
func DumbNetMPLSPop(frame []byte) (port uint32, out []byte, err error) {
	if len(frame) < EthHeaderLen+MPLSLabelLen {
		return 0, frame, fmt.Errorf("wire: dumbnet mpls: %d bytes, need %d: %w", len(frame), EthHeaderLen+MPLSLabelLen, ErrTruncated)
	}
	if et := binary.BigEndian.Uint16(frame[12:]); et != EtherTypeMPLS {
		return 0, frame, fmt.Errorf("wire: dumbnet mpls: EtherType %#04x, want 0x8847: %w", et, ErrUnknownType)
	}
	e := binary.BigEndian.Uint32(frame[14:])
	label := e >> 12
	if e&(1<<8) != 0 {
		return label, frame, fmt.Errorf("wire: dumbnet mpls: bottom of stack reached (label %d): %w", label, ErrNoHops)
	}
	copy(frame[4:EthHeaderLen+4], frame[:EthHeaderLen])
	return label, frame[4:], nil
}

// DumbNetMPLSStrip removes the end label at the destination host and
// restores the IPv4/IPv6 EtherType. 0 allocations.
func DumbNetMPLSStrip(frame []byte) ([]byte, error) {
	if len(frame) < EthHeaderLen+MPLSLabelLen+1 {
		return frame, fmt.Errorf("wire: dumbnet mpls: %d bytes, need %d: %w", len(frame), EthHeaderLen+MPLSLabelLen+1, ErrTruncated)
	}
	if et := binary.BigEndian.Uint16(frame[12:]); et != EtherTypeMPLS {
		return frame, fmt.Errorf("wire: dumbnet mpls: EtherType %#04x, want 0x8847: %w", et, ErrUnknownType)
	}
	e := binary.BigEndian.Uint32(frame[14:])
	if e>>12 != DumbNetEnd || e&(1<<8) == 0 {
		return frame, fmt.Errorf("wire: dumbnet mpls: label %d before the end label: %w", e>>12, ErrNotAtEnd)
	}
	var et uint16
	switch frame[18] >> 4 {
	case 4:
		et = EtherTypeIPv4
	case 6:
		et = EtherTypeIPv6
	default:
		return frame, fmt.Errorf("wire: dumbnet mpls: payload IP version %d: %w", frame[18]>>4, ErrUnknownType)
	}
	copy(frame[4:16], frame[0:12])
	binary.BigEndian.PutUint16(frame[16:], et)
	return frame[4:], nil
}

// String formats the tag stack for logs as the paper writes paths:
// "2-3-5-∅ 0x0800".
func (h *DumbNetHeader) String() string {
	var b []byte
	for _, t := range h.Tags {
		b = fmt.Appendf(b, "%d-", t)
	}
	return fmt.Sprintf("%s∅ %#04x", b, h.InnerType)
}
