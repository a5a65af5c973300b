package stp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/edgefabric/edgefabric/element"
)

// Sentinel errors of the BPDU codec, wrapped with the field at fault: test
// with errors.Is.
var (
	// ErrTruncated: the frame ends before the field being read.
	ErrTruncated = errors.New("truncated")
	// ErrNotBPDU: the frame is not an 802.3/LLC frame to the bridge group
	// address with the spanning tree SAPs.
	ErrNotBPDU = errors.New("not a bpdu")
	// ErrBadValue: a field holds a value the protocol forbids (protocol
	// identifier other than 0, an 802.3 length that disagrees with the
	// frame).
	ErrBadValue = errors.New("bad value")
	// ErrUnknownType: a BPDU type other than configuration (0x00), RST
	// (0x02) or topology change notification (0x80). (An 802.1D-1998
	// bridge, which knows only 0x00 and 0x80, discards RST BPDUs too: it
	// counts them as drop_bpdu_unknown_type.)
	ErrUnknownType = errors.New("unknown bpdu type")
)

// GroupAddress is the bridge group address 01:80:C2:00:00:00 that BPDUs are
// sent to (802.1D-1998 §7.12.3). Frames to any of 01:80:C2:00:00:00..0F are
// link-local and never forwarded by a bridge.
var GroupAddress = [6]byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x00}

// BPDU types (802.1D-1998 §9.3; TypeRST 802.1D-2004 §9.3.3).
const (
	TypeConfig uint8 = 0x00
	TypeRST    uint8 = 0x02
	TypeTCN    uint8 = 0x80
)

// Protocol versions (802.1D-2004 §9.3.3): an RST BPDU carries 2 (an MST
// BPDU, 3 and up, is read as an RST BPDU, §9.3.4 c).
const (
	VersionSTP  uint8 = 0
	VersionRSTP uint8 = 2
)

// LLC header of every BPDU: DSAP 0x42, SSAP 0x42, UI (control 0x03).
const (
	llcSAP     = 0x42
	llcControl = 0x03
)

// Encoded sizes.
const (
	ConfigLen = 35 // configuration BPDU body
	RSTLen    = 36 // RST BPDU body: a configuration BPDU's fields and the Version 1 Length
	TCNLen    = 4  // topology change notification body
	llcLen    = 3
	ethLen    = 14 // 802.3 header: dst, src, length
	minFrame  = 60 // minimum Ethernet frame without FCS; BPDUs are padded to it
)

// Flag bits of a configuration BPDU (TC, TCA) and of an RST BPDU (all but
// TCA, 802.1D-2004 §9.3.3): the port role takes bits 2 and 3.
const (
	flagTC         = 0x01
	flagProposal   = 0x02
	flagRoleShift  = 2
	flagRoleMask   = 0x0c
	flagLearning   = 0x10
	flagForwarding = 0x20
	flagAgreement  = 0x40
	flagTCA        = 0x80
)

// BPDURole is the port role an RST BPDU conveys (802.1D-2004 §9.2.9).
type BPDURole uint8

// The encodings of the role field.
const (
	BPDURoleUnknown    BPDURole = 0
	BPDURoleAltBackup  BPDURole = 1
	BPDURoleRoot       BPDURole = 2
	BPDURoleDesignated BPDURole = 3
)

// Time256 is a protocol timer value as carried on the wire: an unsigned
// count of 1/256 s (802.1D-1998 §9.2.8), so 2 s is 512.
type Time256 uint16

// tick is one unit of Time256 in picoseconds: 10^12/256, exactly.
const tick = element.Second / 256

// Time converts t to picoseconds, exactly.
func (t Time256) Time() element.Time { return element.Time(t) * tick }

// ToTime256 converts d to wire units, rounding down, and saturates at the
// largest value the field holds (255.996 s).
func ToTime256(d element.Time) Time256 {
	if d <= 0 {
		return 0
	}
	v := d / tick
	if v > 0xffff {
		return 0xffff
	}
	return Time256(v)
}

// BridgeID is an 802.1D bridge identifier: the 16-bit priority in the top
// bits, then the bridge's 48-bit MAC address. As an integer it compares the
// way the protocol compares identifiers: the lower one wins.
type BridgeID uint64

// MakeBridgeID builds a bridge identifier from a priority and a MAC.
func MakeBridgeID(priority uint16, mac [6]byte) BridgeID {
	var b [8]byte
	binary.BigEndian.PutUint16(b[:], priority)
	copy(b[2:], mac[:])
	return BridgeID(binary.BigEndian.Uint64(b[:]))
}

// Priority returns the priority part of id.
func (id BridgeID) Priority() uint16 { return uint16(id >> 48) }

// MAC returns the address part of id.
func (id BridgeID) MAC() [6]byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(id))
	return [6]byte(b[2:])
}

// String formats id the way tshark and Linux show it: priority in hex
// digits, a dot, the MAC without separators ("8000.060000010000").
func (id BridgeID) String() string {
	return fmt.Sprintf("%04x.%012x", uint16(id>>48), uint64(id)&(1<<48-1))
}

// PortID is an 802.1D port identifier: a 4-bit priority and a 12-bit port
// number as 802.1t reassigned the field, so that switches of up to 4095
// ports get distinct identifiers. With the default priority 128 the
// identifier reads 0x8000|port, as in 802.1D-1998 for ports below 256.
type PortID uint16

// MakePortID builds a port identifier from an 8-bit priority (its top four
// bits are kept, as 802.1t specifies) and a port number below 4096.
func MakePortID(priority uint8, port element.Port) PortID {
	return PortID(uint16(priority&0xf0)<<8 | uint16(port)&0x0fff)
}

// BPDU is a decoded Bridge Protocol Data Unit: a configuration BPDU or,
// when Type is TypeTCN, a topology change notification, whose only fields
// are the protocol identifier, version and type.
//
//	 0                   1                   2                   3
//	+-------------------------------+---------------+---------------+
//	|   protocol identifier (0)     |  version (0)  |     type      |  type 0x80 (TCN) ends here
//	+---------------+---------------+---------------+---------------+
//	|     flags     |         root identifier (8): priority, MAC     |
//	+---------------+                                               +
//	|                                               +---------------+
//	|                                               | root path ... |
//	+---------------+---------------+---------------+---------------+
//	|  ... cost (4)                 |   bridge identifier (8)       |
//	+---------------+---------------+                               +
//	|                                                               |
//	+---------------+---------------+---------------+---------------+
//	|      ...      |   port identifier (2)         |  message age  |
//	+---------------+---------------+---------------+---------------+
//	|   age (2)     |        max age (2)            |  hello time   |
//	+---------------+---------------+---------------+---------------+
//	|   time (2)    |     forward delay (2)         |
//	+---------------+---------------+---------------+
//
// flags: 0x01 topology change, 0x80 topology change acknowledgment. Times
// are in 1/256 s. An RST BPDU (type 0x02, version 2, 802.1D-2004 §9.3.3)
// has the same fields plus one byte, the Version 1 Length (0), and uses
// more flags: 0x02 proposal, the port role in 0x0c, 0x10 learning, 0x20
// forwarding, 0x40 agreement (never the acknowledgment). A BPDU travels in an 802.3 frame to GroupAddress: the
// length field, then LLC DSAP 0x42, SSAP 0x42, control 0x03 (UI), then the
// BPDU, padded to the 60-byte minimum frame.
type BPDU struct {
	Type    uint8 // TypeConfig, TypeRST or TypeTCN
	Version uint8 // 0 for 802.1D-1998, 2 for RSTP; decoded as found, encoded as given
	TC, TCA bool
	// RST BPDUs only.
	Proposal, Learning, Forwarding, Agreement bool
	Role                                      BPDURole
	Root                                      BridgeID
	RootPathCost                              uint32
	Bridge                                    BridgeID
	Port                                      PortID
	MessageAge                                Time256
	MaxAge                                    Time256
	HelloTime                                 Time256
	ForwardDelay                              Time256
}

// DecodeFromBytes decodes a BPDU body (after the LLC header). Bytes after
// the BPDU are ignored: 802.1D-1998 §9.3.4 validates only the length the
// type needs, and later protocol versions append fields.
func (m *BPDU) DecodeFromBytes(b []byte) error {
	if len(b) < TCNLen {
		return fmt.Errorf("stp: bpdu: %d bytes, header needs %d: %w", len(b), TCNLen, ErrTruncated)
	}
	if pid := binary.BigEndian.Uint16(b); pid != 0 {
		return fmt.Errorf("stp: bpdu: protocol identifier %#04x: %w", pid, ErrBadValue)
	}
	*m = BPDU{Version: b[2], Type: b[3]}
	switch m.Type {
	case TypeTCN:
		return nil
	case TypeConfig:
		if len(b) < ConfigLen {
			return fmt.Errorf("stp: configuration bpdu: %d bytes, needs %d: %w", len(b), ConfigLen, ErrTruncated)
		}
		m.TC = b[4]&flagTC != 0
		m.TCA = b[4]&flagTCA != 0
	case TypeRST:
		// §9.3.4 c: type 2 is an RST BPDU from version 2 on; an MST
		// BPDU (version 3) reads as one.
		if m.Version < VersionRSTP {
			return fmt.Errorf("stp: rst bpdu: version %d, needs %d or more: %w", m.Version, VersionRSTP, ErrBadValue)
		}
		if len(b) < RSTLen {
			return fmt.Errorf("stp: rst bpdu: %d bytes, needs %d: %w", len(b), RSTLen, ErrTruncated)
		}
		f := b[4]
		m.TC = f&flagTC != 0
		m.Proposal = f&flagProposal != 0
		m.Role = BPDURole(f & flagRoleMask >> flagRoleShift)
		m.Learning = f&flagLearning != 0
		m.Forwarding = f&flagForwarding != 0
		m.Agreement = f&flagAgreement != 0
	default:
		return fmt.Errorf("stp: bpdu: type %#02x: %w", m.Type, ErrUnknownType)
	}
	m.Root = BridgeID(binary.BigEndian.Uint64(b[5:]))
	m.RootPathCost = binary.BigEndian.Uint32(b[13:])
	m.Bridge = BridgeID(binary.BigEndian.Uint64(b[17:]))
	m.Port = PortID(binary.BigEndian.Uint16(b[25:]))
	m.MessageAge = Time256(binary.BigEndian.Uint16(b[27:]))
	m.MaxAge = Time256(binary.BigEndian.Uint16(b[29:]))
	m.HelloTime = Time256(binary.BigEndian.Uint16(b[31:]))
	m.ForwardDelay = Time256(binary.BigEndian.Uint16(b[33:]))
	return nil
}

// AppendTo appends the BPDU body: 4 bytes for a TCN, 36 for an RST BPDU,
// 35 for a configuration BPDU. Any other Type encodes as a configuration
// BPDU.
func (m *BPDU) AppendTo(b []byte) []byte {
	if m.Type == TypeTCN {
		return append(b, 0, 0, m.Version, TypeTCN)
	}
	var f uint8
	if m.TC {
		f |= flagTC
	}
	typ := TypeConfig
	if m.Type == TypeRST {
		typ = TypeRST
		if m.Proposal {
			f |= flagProposal
		}
		f |= uint8(m.Role&3) << flagRoleShift
		if m.Learning {
			f |= flagLearning
		}
		if m.Forwarding {
			f |= flagForwarding
		}
		if m.Agreement {
			f |= flagAgreement
		}
	} else if m.TCA {
		f |= flagTCA
	}
	b = append(b, 0, 0, m.Version, typ, f)
	b = binary.BigEndian.AppendUint64(b, uint64(m.Root))
	b = binary.BigEndian.AppendUint32(b, m.RootPathCost)
	b = binary.BigEndian.AppendUint64(b, uint64(m.Bridge))
	b = binary.BigEndian.AppendUint16(b, uint16(m.Port))
	b = binary.BigEndian.AppendUint16(b, uint16(m.MessageAge))
	b = binary.BigEndian.AppendUint16(b, uint16(m.MaxAge))
	b = binary.BigEndian.AppendUint16(b, uint16(m.HelloTime))
	b = binary.BigEndian.AppendUint16(b, uint16(m.ForwardDelay))
	if typ == TypeRST {
		b = append(b, 0) // Version 1 Length
	}
	return b
}

// AppendFrame appends a complete BPDU frame from src: the 802.3 header to
// GroupAddress, the LLC header, the BPDU and zero padding to 60 bytes.
func AppendFrame(b []byte, src [6]byte, m *BPDU) []byte {
	start := len(b)
	b = append(b, GroupAddress[:]...)
	b = append(b, src[:]...)
	b = append(b, 0, 0) // length, filled in below
	b = append(b, llcSAP, llcSAP, llcControl)
	b = m.AppendTo(b)
	binary.BigEndian.PutUint16(b[start+12:], uint16(len(b)-start-ethLen))
	for len(b)-start < minFrame {
		b = append(b, 0)
	}
	return b
}

// IsBridgeGroup reports whether dst is one of the link-local group
// addresses 01:80:C2:00:00:00..0F that 802.1D reserves: a bridge consumes
// or discards such frames and never forwards them.
func IsBridgeGroup(dst []byte) bool {
	return len(dst) >= 6 && dst[0] == 0x01 && dst[1] == 0x80 && dst[2] == 0xc2 &&
		dst[3] == 0 && dst[4] == 0 && dst[5]&0xf0 == 0
}

// DecodeFrame decodes a BPDU frame as AppendFrame writes it: an 802.3 frame
// to GroupAddress whose LLC header carries the spanning tree SAPs. The
// 802.3 length must fit in the frame; padding after it is ignored.
func DecodeFrame(frame []byte, m *BPDU) error {
	if len(frame) < ethLen {
		return fmt.Errorf("stp: bpdu frame: %d bytes, header needs %d: %w", len(frame), ethLen, ErrTruncated)
	}
	if [6]byte(frame[:6]) != GroupAddress {
		return fmt.Errorf("stp: bpdu frame: destination %x: %w", frame[:6], ErrNotBPDU)
	}
	n := int(binary.BigEndian.Uint16(frame[12:]))
	if n >= 0x0600 {
		return fmt.Errorf("stp: bpdu frame: ethertype %#04x, bpdus use 802.3 length: %w", n, ErrNotBPDU)
	}
	body := frame[ethLen:]
	if n > len(body) {
		return fmt.Errorf("stp: bpdu frame: 802.3 length %d, frame holds %d: %w", n, len(body), ErrTruncated)
	}
	body = body[:n]
	if len(body) < llcLen {
		return fmt.Errorf("stp: bpdu frame: 802.3 length %d, llc needs %d: %w", n, llcLen, ErrTruncated)
	}
	if body[0] != llcSAP || body[1] != llcSAP || body[2] != llcControl {
		return fmt.Errorf("stp: bpdu frame: llc %x, want 42 42 03: %w", body[:3], ErrNotBPDU)
	}
	return m.DecodeFromBytes(body[llcLen:])
}
