package wire

import (
	"fmt"
	"net/netip"
)

// Chirp is SPAIN's chirp (SPAIN §6): the triple <IP, MAC, edge-switch ID>
// and a want_reply flag. A host sends it unicast to a peer (on the VLAN
// being tested, want_reply set to ask for a chirp back) or broadcasts it on
// the default VLAN after a reboot or a migration (want_reply never set).
// It travels in an Ethernet frame with EtherType 0x88B5, usually 802.1Q
// tagged; use AppendChirpFrame to build one.
//
//	+----------+-------+--------------+--------------+-------------------------------+
//	| sub 0x01 | flags |  IP (1+n)    |   MAC (6)    |      edge switch id (8)       |
//	+----------+-------+--------------+--------------+-------------------------------+
//
// flags: 0x01 want_reply.
type Chirp struct {
	IP         netip.Addr
	MAC        MAC
	EdgeSwitch uint64
	WantReply  bool
}

const chirpWantReply = 0x01

func (m *Chirp) Subtype() Subtype { return SubChirp }

func (m *Chirp) AppendTo(b []byte) ([]byte, error) {
	if err := checkAddrs("spain chirp", m.IP); err != nil {
		return b, err
	}
	var f uint8
	if m.WantReply {
		f = chirpWantReply
	}
	b = append(b, byte(SubChirp), f)
	b = appendAddr(b, m.IP)
	b = append(b, m.MAC[:]...)
	return appendU64(b, m.EdgeSwitch), nil
}

func (m *Chirp) DecodeFromBytes(b []byte) error {
	r, _ := startMsg(b, "spain chirp", SubChirp)
	f := r.u8("flags")
	if f&^chirpWantReply != 0 {
		r.fail("flags %#02x: %w", f, ErrBadValue)
	}
	m.WantReply = f&chirpWantReply != 0
	m.IP = r.addr("ip")
	m.MAC = r.mac("mac")
	m.EdgeSwitch = r.u64("edge switch")
	return r.end()
}

// AppendChirpFrame appends a chirp frame from m.MAC to dst on VLAN vid
// (vid 0: untagged). A broadcast chirp must not set WantReply (SPAIN §6).
func AppendChirpFrame(b []byte, dst MAC, vid uint16, m *Chirp) ([]byte, error) {
	if dst.IsMulticast() && m.WantReply {
		return b, fmt.Errorf("wire: spain chirp: broadcast chirp with want_reply: %w", ErrBadValue)
	}
	if vid > 0xfff {
		return b, fmt.Errorf("wire: spain chirp: VLAN %d: %w", vid, ErrBadValue)
	}
	n := len(b)
	b = append(b, dst[:]...)
	b = append(b, m.MAC[:]...)
	if vid != 0 {
		b = appendU16(b, EtherTypeVLAN)
		b = appendU16(b, vid)
	}
	b = appendU16(b, EtherTypeLocalExp)
	b, err := m.AppendTo(b)
	if err != nil {
		return b[:n], err
	}
	return b, nil
}
