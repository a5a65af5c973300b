package wire

import (
	"errors"
	"fmt"
	"math"
)

// Subtype is the first byte of every edgefabric control message, the one
// registry of message kinds. A message travels either as the payload of an
// Ethernet frame with EtherType 0x88B5 (IEEE local experimental), as the
// payload of a DumbNet frame whose inner EtherType is 0x88B5, or as the
// payload of an AxonControl packet. The zero value is invalid. Values are
// grouped by scheme; new kinds take the next free value in their group and
// must be added to the Lua dissector (contrib/wireshark/edgefabric.lua) and
// to docs/wire.md.
type Subtype uint8

const (
	SubChirp Subtype = 0x01 // SPAIN chirp (SPAIN §6)

	SubAxonHello      Subtype = 0x10 // Axon bootstrap hello: Axon port or host port (thesis §3.1.3)
	SubAxonARPRequest Subtype = 0x11 // Axon-ARP request (thesis §3.2.3)
	SubAxonARPReply   Subtype = 0x12 // Axon-ARP reply (thesis §3.2.3)
	SubAxonEtherProbe Subtype = 0x13 // Axon ether probe across an external Ethernet (§3.2.2)

	SubDumbNetProbe      Subtype = 0x20 // probing message, PM (DumbNet §4.1)
	SubDumbNetProbeReply Subtype = 0x21 // a host's answer to a PM (§4.1)
	SubDumbNetSwitchID   Subtype = 0x22 // a switch's answer to tag 0 (§4.1)
	SubDumbNetPortStatus Subtype = 0x23 // switch port up/down notification (§4.2 stage 1)
	SubDumbNetHostNotify Subtype = 0x24 // host-to-host notification flood (§4.2 stage 1)
	SubDumbNetTopoPatch  Subtype = 0x25 // controller topology patch (§4.2 stage 2)
	SubDumbNetPathQuery  Subtype = 0x26 // host asks the controller for a path graph (§4.3)
	SubDumbNetPathReply  Subtype = 0x27 // the path graph (§4.3)
	SubDumbNetNeighbors  Subtype = 0x28 // a host's flood neighbours (§4.2 stage 1)

	SubOverlayVPort Subtype = 0x30 // fabric-wide vport record (overlay §5.2)
	SubOverlayVNet  Subtype = 0x31 // virtual network definition (overlay §5)

	SubBackplaneNextHop Subtype = 0x40 // next-hop record of the VLAN backplane (§II)
)

var subtypeNames = map[Subtype]string{
	SubChirp:             "spain-chirp",
	SubAxonHello:         "axon-hello",
	SubAxonARPRequest:    "axon-arp-request",
	SubAxonARPReply:      "axon-arp-reply",
	SubAxonEtherProbe:    "axon-ether-probe",
	SubDumbNetProbe:      "dumbnet-probe",
	SubDumbNetProbeReply: "dumbnet-probe-reply",
	SubDumbNetSwitchID:   "dumbnet-switch-id",
	SubDumbNetPortStatus: "dumbnet-port-status",
	SubDumbNetHostNotify: "dumbnet-host-notify",
	SubDumbNetTopoPatch:  "dumbnet-topo-patch",
	SubDumbNetPathQuery:  "dumbnet-path-query",
	SubDumbNetPathReply:  "dumbnet-path-reply",
	SubDumbNetNeighbors:  "dumbnet-neighbors",
	SubOverlayVPort:      "overlay-vport",
	SubOverlayVNet:       "overlay-vnet",
	SubBackplaneNextHop:  "backplane-nexthop",
}

func (s Subtype) String() string {
	if n, ok := subtypeNames[s]; ok {
		return n
	}
	return fmt.Sprintf("Subtype(%#02x)", uint8(s))
}

// Message is an edgefabric control message. AppendTo writes the subtype
// byte and the body; DecodeMessage reads them back.
type Message interface {
	Subtype() Subtype
	AppendTo(b []byte) ([]byte, error)
}

// Decoder is a message that decodes itself; every Message in this package
// is one through its pointer.
type Decoder interface {
	DecodeFromBytes([]byte) error
}

// newMessage returns an empty message of kind s.
func newMessage(s Subtype) (interface {
	Message
	Decoder
}, bool) {
	switch s {
	case SubChirp:
		return new(Chirp), true
	case SubAxonHello:
		return new(AxonHello), true
	case SubAxonARPRequest, SubAxonARPReply:
		return new(AxonARP), true
	case SubAxonEtherProbe:
		return new(AxonEtherProbe), true
	case SubDumbNetProbe:
		return new(DumbNetProbe), true
	case SubDumbNetProbeReply:
		return new(DumbNetProbeReply), true
	case SubDumbNetSwitchID:
		return new(DumbNetSwitchID), true
	case SubDumbNetPortStatus:
		return new(DumbNetPortStatus), true
	case SubDumbNetHostNotify:
		return new(DumbNetHostNotify), true
	case SubDumbNetTopoPatch:
		return new(DumbNetTopoPatch), true
	case SubDumbNetPathQuery:
		return new(DumbNetPathQuery), true
	case SubDumbNetPathReply:
		return new(DumbNetPathReply), true
	case SubDumbNetNeighbors:
		return new(DumbNetNeighbors), true
	case SubOverlayVPort:
		return new(OverlayVPort), true
	case SubOverlayVNet:
		return new(OverlayVNet), true
	case SubBackplaneNextHop:
		return new(BackplaneNextHop), true
	}
	return nil, false
}

// DecodeMessage decodes a control message (subtype byte first) of any
// registered kind. The result is a pointer (*Chirp, *AxonARP, ...).
func DecodeMessage(b []byte) (Message, error) {
	return DecodeMessagePadded(b, math.MaxInt) // no frame: no padding
}

// DecodeMessagePadded is DecodeMessage for a message that ends an Ethernet
// frame of frameLen bytes not counting its VLAN tags (UntaggedLen), or an
// Axon packet of frameLen bytes: the padding DecodePadded accepts is
// dropped.
func DecodeMessagePadded(b []byte, frameLen int) (Message, error) {
	if len(b) < 1 {
		return nil, fmt.Errorf("wire: message: empty: %w", ErrTruncated)
	}
	m, ok := newMessage(Subtype(b[0]))
	if !ok {
		return nil, fmt.Errorf("wire: message: subtype %#02x: %w", b[0], ErrUnknownType)
	}
	if _, err := DecodePadded(m, b, frameLen); err != nil {
		return nil, err
	}
	return m, nil
}

// startMsg begins decoding a message body: it checks the subtype byte.
func startMsg(b []byte, what string, want ...Subtype) (reader, Subtype) {
	r := reader{b: b, what: what}
	s := Subtype(r.u8("subtype"))
	if r.err != nil {
		return r, s
	}
	for _, w := range want {
		if s == w {
			return r, s
		}
	}
	r.fail("subtype %v, want %v: %w", s, want[0], ErrUnknownType)
	return r, s
}

// AppendControlFrame appends an Ethernet frame carrying m with EtherType
// 0x88B5 to b.
func AppendControlFrame(b []byte, dst, src MAC, m Message) ([]byte, error) {
	n := len(b)
	b = AppendEthernet(b, dst, src, EtherTypeLocalExp, nil)
	b, err := m.AppendTo(b)
	if err != nil {
		return b[:n], err
	}
	return b, nil
}

// DecodeControlFrame decodes an Ethernet frame with EtherType 0x88B5
// (after any 802.1Q tags) and returns the message it carries. A NIC's
// zero padding after the message is dropped (DecodeMessagePadded).
func DecodeControlFrame(frame []byte) (Message, error) {
	f, err := ParseFrame(frame)
	if err != nil {
		return nil, err
	}
	et, _, off, err := f.InnerEtherType()
	if err != nil {
		return nil, err
	}
	if et != EtherTypeLocalExp {
		return nil, fmt.Errorf("wire: control frame: EtherType %#04x, want 0x88b5: %w", et, ErrUnknownType)
	}
	return DecodeMessagePadded(frame[off:], UntaggedLen(frame))
}

// MinFrameLen is Ethernet's minimum frame, FCS excluded: a NIC pads a
// shorter frame with zero bytes up to it before sending.
const MinFrameLen = 60

// UntaggedLen returns the length of an Ethernet frame not counting its
// 802.1Q and 802.1ad tags (4 bytes each): the length DecodePadded compares
// with MinFrameLen. Padding fills the MAC client data (what follows the
// tags and the EtherType) up to 46 bytes, whatever the tags: a sender pads
// a tagged frame to 60 bytes (42 bytes of data after one tag), and a
// bridge that tags a padded 60-byte frame sends 64 bytes without padding
// it again (802.1Q; two tags, 68), so a frame with k tags may carry
// padding up to 60 + 4k bytes, and no further.
func UntaggedLen(frame []byte) int {
	_, tags, _, _ := Frame(frame).InnerEtherType()
	return len(frame) - 4*tags
}

// DecodePadded decodes m from body, the part of an Ethernet frame that
// carries it, to the frame's end; frameLen is the frame's length less its
// VLAN tags (UntaggedLen(frame); len(frame) for an untagged frame or an
// Axon packet). Decoders refuse bytes after a message; here, when frameLen
// is no more than MinFrameLen, zero bytes after the message are taken for
// a NIC's padding and dropped. A longer frame, or a non-zero byte after
// the message, is still refused with ErrTrailing. It returns body cut to
// the message, for callers that rewrite it in place.
func DecodePadded(m Decoder, body []byte, frameLen int) ([]byte, error) {
	err := m.DecodeFromBytes(body)
	var te *TrailingError
	if err == nil || frameLen > MinFrameLen || !errors.As(err, &te) || te.End > len(body) {
		return body, err
	}
	for _, c := range body[te.End:] {
		if c != 0 {
			return body, err
		}
	}
	body = body[:te.End:te.End]
	return body, m.DecodeFromBytes(body)
}
