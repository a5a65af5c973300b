package wire

import (
	"encoding/binary"
	"fmt"
)

// MAC is an Ethernet address, held by value.
type MAC [6]byte

// Broadcast is ff:ff:ff:ff:ff:ff.
var Broadcast = MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

func (m MAC) String() string {
	const hex = "0123456789abcdef"
	var s [17]byte
	for i, c := range m {
		if i > 0 {
			s[3*i-1] = ':'
		}
		s[3*i] = hex[c>>4]
		s[3*i+1] = hex[c&0xf]
	}
	return string(s[:])
}

// IsBroadcast reports whether m is ff:ff:ff:ff:ff:ff.
func (m MAC) IsBroadcast() bool { return m == Broadcast }

// IsMulticast reports whether the group bit is set (broadcast included).
func (m MAC) IsMulticast() bool { return m[0]&1 == 1 }

// IsLocal reports whether the locally administered bit is set (Axon
// masqueraded MACs set it, thesis §3.2.1).
func (m MAC) IsLocal() bool { return m[0]&2 == 2 }

// EtherTypes used by edgefabric.
const (
	EtherTypeIPv4     uint16 = 0x0800
	EtherTypeARP      uint16 = 0x0806
	EtherTypeVLAN     uint16 = 0x8100 // IEEE 802.1Q C-tag
	EtherTypeQinQ     uint16 = 0x88A8 // IEEE 802.1ad S-tag
	EtherTypeIPv6     uint16 = 0x86DD
	EtherTypeMPLS     uint16 = 0x8847
	EtherTypeLLDP     uint16 = 0x88CC
	EtherTypeLocalExp uint16 = 0x88B5 // IEEE local experimental 1: edgefabric control messages
	EtherTypeDumbNet  uint16 = 0x9800 // DumbNet tag stack (DumbNet §5.1)
)

// EthHeaderLen is the size of an untagged Ethernet II header.
const EthHeaderLen = 14

// Frame is a view over an Ethernet II frame (no preamble, no FCS). Build
// one with ParseFrame, which checks the length, so that the accessors
// never fail. Setters write into the caller's buffer.
//
//	+-------------------------------+-------------------------------+-----------+---------
//	|       destination (6)         |          source (6)           | type (2)  | payload
//	+-------------------------------+-------------------------------+-----------+---------
type Frame []byte

// ParseFrame checks that b holds at least an Ethernet header.
func ParseFrame(b []byte) (Frame, error) {
	if len(b) < EthHeaderLen {
		return nil, fmt.Errorf("wire: ethernet: %d bytes, header needs %d: %w", len(b), EthHeaderLen, ErrTruncated)
	}
	return Frame(b), nil
}

func (f Frame) Dst() MAC              { return MAC(f[0:6]) }
func (f Frame) Src() MAC              { return MAC(f[6:12]) }
func (f Frame) EtherType() uint16     { return binary.BigEndian.Uint16(f[12:14]) }
func (f Frame) Payload() []byte       { return f[EthHeaderLen:] }
func (f Frame) SetDst(m MAC)          { copy(f[0:6], m[:]) }
func (f Frame) SetSrc(m MAC)          { copy(f[6:12], m[:]) }
func (f Frame) SetEtherType(t uint16) { binary.BigEndian.PutUint16(f[12:14], t) }

// InnerEtherType skips any 802.1Q/802.1ad tags and returns the EtherType
// of the payload, the number of tags skipped and the payload offset.
func (f Frame) InnerEtherType() (etype uint16, tags int, off int, err error) {
	off = 12
	for {
		if len(f) < off+2 {
			return 0, tags, off, fmt.Errorf("wire: ethernet: tag %d cut short: %w", tags, ErrTruncated)
		}
		etype = binary.BigEndian.Uint16(f[off:])
		if etype != EtherTypeVLAN && etype != EtherTypeQinQ {
			return etype, tags, off + 2, nil
		}
		tags++
		off += 4
	}
}

// AppendEthernet appends an Ethernet II header and payload to b.
func AppendEthernet(b []byte, dst, src MAC, etype uint16, payload []byte) []byte {
	b = append(b, dst[:]...)
	b = append(b, src[:]...)
	b = binary.BigEndian.AppendUint16(b, etype)
	return append(b, payload...)
}

// grow extends b by n bytes, reusing its capacity when it can (no
// allocation then). The new bytes are not zeroed.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b[:len(b)+n]
	}
	nb := make([]byte, len(b)+n, 2*len(b)+n)
	copy(nb, b)
	return nb
}

// insertAt opens a gap of n bytes at offset off of b, shifting the tail
// right, and returns the grown slice. 0 allocations when cap(b) allows.
func insertAt(b []byte, off, n int) []byte {
	l := len(b)
	b = grow(b, n)
	copy(b[off+n:], b[off:l])
	return b
}
