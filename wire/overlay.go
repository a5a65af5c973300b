package wire

import (
	"fmt"
	"net/netip"
	"unicode/utf8"
)

// VNI bounds: a VXLAN network identifier has 24 bits.
const MaxVNI = 1<<24 - 1

// RecordOp says whether an overlay record is added (or updated) or
// deleted. Zero is invalid.
type RecordOp uint8

const (
	RecordAdd    RecordOp = 1 // create or update
	RecordDelete RecordOp = 2
)

// OverlayVPort is a row of the overlay's fabric-wide vport table (overlay
// paper §5.2-5.3: switch, MAC, VXLAN, port, ip), propagated by the switch
// that learnt the endpoint to every other switch of the fabric. The
// tunnel-id column is local and never propagated.
//
//	+----------+-----+-------------------------------+--------------+-----------+-----------+-------------+
//	| sub 0x30 | op  |        switch id (8)          |   MAC (6)    |  VNI (3)  | port (2)  |  IP (1+n)   |
//	+----------+-----+-------------------------------+--------------+-----------+-----------+-------------+
type OverlayVPort struct {
	Op     RecordOp
	Switch uint64 // owner switch
	MAC    MAC
	VNI    uint32 // 24 bits
	Port   uint16 // owner switch's port to the endpoint
	IP     netip.Addr
}

func (m *OverlayVPort) Subtype() Subtype { return SubOverlayVPort }

func (m *OverlayVPort) AppendTo(b []byte) ([]byte, error) {
	if m.Op != RecordAdd && m.Op != RecordDelete {
		return b, fmt.Errorf("wire: overlay vport: op %d: %w", m.Op, ErrBadValue)
	}
	if m.VNI > MaxVNI {
		return b, fmt.Errorf("wire: overlay vport: VNI %d above 2^24-1: %w", m.VNI, ErrBadValue)
	}
	if err := checkAddrs("overlay vport", m.IP); err != nil {
		return b, err
	}
	b = append(b, byte(SubOverlayVPort), byte(m.Op))
	b = appendU64(b, m.Switch)
	b = append(b, m.MAC[:]...)
	b = append(b, byte(m.VNI>>16), byte(m.VNI>>8), byte(m.VNI))
	b = appendU16(b, m.Port)
	return appendAddr(b, m.IP), nil
}

func (m *OverlayVPort) DecodeFromBytes(b []byte) error {
	r, _ := startMsg(b, "overlay vport", SubOverlayVPort)
	m.Op = RecordOp(r.u8("op"))
	if r.err == nil && m.Op != RecordAdd && m.Op != RecordDelete {
		r.fail("op %d: %w", m.Op, ErrBadValue)
	}
	m.Switch = r.u64("switch id")
	m.MAC = r.mac("mac")
	v := r.bytes(3, "vni")
	if v != nil {
		m.VNI = uint32(v[0])<<16 | uint32(v[1])<<8 | uint32(v[2])
	}
	m.Port = r.u16("port")
	m.IP = r.addr("ip")
	return r.end()
}

// OverlayVNet defines a virtual network (overlay paper §5: the
// administrator supplies a name and a VNI; the fabric synchronises it to
// every switch), with the VLAN it maps to on the sending switch.
//
//	+----------+-----+-----------+-----------+-----+----------------
//	| sub 0x31 | op  |  VNI (3)  | VLAN (2)  | len | name (UTF-8)
//	+----------+-----+-----------+-----------+-----+----------------
type OverlayVNet struct {
	Op   RecordOp
	VNI  uint32
	VLAN uint16
	Name string
}

func (m *OverlayVNet) Subtype() Subtype { return SubOverlayVNet }

func (m *OverlayVNet) AppendTo(b []byte) ([]byte, error) {
	switch {
	case m.Op != RecordAdd && m.Op != RecordDelete:
		return b, fmt.Errorf("wire: overlay vnet: op %d: %w", m.Op, ErrBadValue)
	case m.VNI > MaxVNI:
		return b, fmt.Errorf("wire: overlay vnet: VNI %d above 2^24-1: %w", m.VNI, ErrBadValue)
	case m.VLAN > 0xfff:
		return b, fmt.Errorf("wire: overlay vnet: VLAN %d above 4095: %w", m.VLAN, ErrBadValue)
	case len(m.Name) > 255:
		return b, fmt.Errorf("wire: overlay vnet: name of %d bytes, at most 255: %w", len(m.Name), ErrBadLength)
	case !utf8.ValidString(m.Name):
		return b, fmt.Errorf("wire: overlay vnet: name %q is not UTF-8: %w", m.Name, ErrBadValue)
	}
	b = append(b, byte(SubOverlayVNet), byte(m.Op))
	b = append(b, byte(m.VNI>>16), byte(m.VNI>>8), byte(m.VNI))
	b = appendU16(b, m.VLAN)
	b = append(b, byte(len(m.Name)))
	return append(b, m.Name...), nil
}

func (m *OverlayVNet) DecodeFromBytes(b []byte) error {
	r, _ := startMsg(b, "overlay vnet", SubOverlayVNet)
	m.Op = RecordOp(r.u8("op"))
	if r.err == nil && m.Op != RecordAdd && m.Op != RecordDelete {
		r.fail("op %d: %w", m.Op, ErrBadValue)
	}
	v := r.bytes(3, "vni")
	if v != nil {
		m.VNI = uint32(v[0])<<16 | uint32(v[1])<<8 | uint32(v[2])
	}
	m.VLAN = r.u16("vlan")
	if r.err == nil && m.VLAN > 0xfff {
		r.fail("VLAN %d above 4095: %w", m.VLAN, ErrBadValue)
	}
	n := int(r.u8("name length"))
	name := r.bytes(n, "name")
	if r.err == nil && !utf8.Valid(name) {
		r.fail("name %q is not UTF-8: %w", name, ErrBadValue)
	}
	m.Name = string(name)
	return r.end()
}

// NextHopKind says which forwarding table a BackplaneNextHop belongs to.
// Zero is invalid.
type NextHopKind uint8

const (
	NextHopIngress NextHopKind = 1 // LPM entry of an ingress FE: prefix -> VLAN + internal MAC
	NextHopEgress  NextHopKind = 2 // VLAN-indexed entry of an egress FE: VLAN -> port + next-hop MAC
)

// BackplaneNextHop is a forwarding-table entry of the VLAN backplane
// (backplane paper §II), as the control element installs it in a
// forwarding element. Ingress: a longest-prefix-match entry whose next hop
// is a VLAN label (naming the next-hop router, or the internal control
// VLAN) and the MAC of the FE (or CE) behind it. Egress: indexed by the
// VLAN; gives the output port and the next-hop router's MAC. On the
// backplane itself the next hop is simply the 802.1Q VID of the frame.
//
//	+----------+------+------------------+--------+-----------+--------------+-----------+
//	| sub 0x40 | kind |  prefix (1+n)    | bits   | VLAN (2)  |   MAC (6)    | port (2)  |
//	+----------+------+------------------+--------+-----------+--------------+-----------+
//
// Egress entries carry no prefix (length 0, bits 0).
type BackplaneNextHop struct {
	Kind   NextHopKind
	Prefix netip.Prefix // ingress only; must be masked
	VLAN   uint16
	MAC    MAC
	Port   uint16 // egress only; 0 on ingress entries
}

func (m *BackplaneNextHop) Subtype() Subtype { return SubBackplaneNextHop }

func (m *BackplaneNextHop) check() error {
	switch {
	case m.Kind != NextHopIngress && m.Kind != NextHopEgress:
		return fmt.Errorf("kind %d: %w", m.Kind, ErrBadValue)
	case m.VLAN > 0xfff:
		return fmt.Errorf("VLAN %d above 4095: %w", m.VLAN, ErrBadValue)
	case m.Kind == NextHopIngress && !m.Prefix.IsValid():
		return fmt.Errorf("ingress entry without a prefix: %w", ErrBadValue)
	case m.Kind == NextHopIngress && m.Prefix != m.Prefix.Masked():
		return fmt.Errorf("prefix %v has host bits set: %w", m.Prefix, ErrBadValue)
	case m.Kind == NextHopIngress && m.Port != 0:
		return fmt.Errorf("ingress entry with port %d: %w", m.Port, ErrBadValue)
	case m.Kind == NextHopEgress && m.Prefix.IsValid():
		return fmt.Errorf("egress entry with prefix %v: %w", m.Prefix, ErrBadValue)
	}
	return nil
}

func (m *BackplaneNextHop) AppendTo(b []byte) ([]byte, error) {
	if err := m.check(); err != nil {
		return b, fmt.Errorf("wire: backplane next hop: %w", err)
	}
	b = append(b, byte(SubBackplaneNextHop), byte(m.Kind))
	if m.Prefix.IsValid() {
		b = appendAddr(b, m.Prefix.Addr())
		b = append(b, byte(m.Prefix.Bits()))
	} else {
		b = append(b, 0, 0)
	}
	b = appendU16(b, m.VLAN)
	b = append(b, m.MAC[:]...)
	return appendU16(b, m.Port), nil
}

func (m *BackplaneNextHop) DecodeFromBytes(b []byte) error {
	r, _ := startMsg(b, "backplane next hop", SubBackplaneNextHop)
	m.Kind = NextHopKind(r.u8("kind"))
	a := r.addr("prefix")
	bits := int(r.u8("prefix bits"))
	m.VLAN = r.u16("vlan")
	m.MAC = r.mac("mac")
	m.Port = r.u16("port")
	if err := r.end(); err != nil {
		return err
	}
	m.Prefix = netip.Prefix{}
	if a.IsValid() {
		if bits > a.BitLen() {
			return fmt.Errorf("wire: backplane next hop: prefix length %d for a %d-bit address: %w", bits, a.BitLen(), ErrBadValue)
		}
		m.Prefix = netip.PrefixFrom(a, bits)
	} else if bits != 0 {
		return fmt.Errorf("wire: backplane next hop: prefix length %d without an address: %w", bits, ErrBadValue)
	}
	if err := m.check(); err != nil {
		return fmt.Errorf("wire: backplane next hop: %w", err)
	}
	return nil
}
