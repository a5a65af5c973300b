package wire

import (
	"fmt"
)

// AxonType is the packet type in an Axon header (thesis §3.1.1). The zero
// value is invalid.
type AxonType uint8

const (
	AxonEthernet AxonType = 1 // an encapsulated Ethernet frame from a host
	AxonControl  AxonType = 2 // a control message between Axon control planes
	AxonError    AxonType = 3 // set by a data plane that could not forward the packet
	AxonProbe    AxonType = 4 // a probe: units on the path append timestamps (§3.2.2)
)

func (t AxonType) String() string {
	switch t {
	case AxonEthernet:
		return "ethernet"
	case AxonControl:
		return "control"
	case AxonError:
		return "error"
	case AxonProbe:
		return "probe"
	}
	return fmt.Sprintf("AxonType(%d)", uint8(t))
}

// Axon header constants.
const (
	AxonFixedLen = 5    // type, length, forward count, reverse count, options
	AxonWideFlag = 0x80 // in the type byte: hops are 8 bits wide
	AxonTypeMask = 0x7f

	AxonControlHop4 = 0x0f // 4-bit hop naming the control plane
	AxonControlHop8 = 0xff // 8-bit hop naming the control plane

	// Probe options (byte 4, only in probe packets): which units append a
	// timestamp record to the tail of the packet.
	AxonOptTimestampIn  = 0x01 // input units
	AxonOptTimestampOut = 0x02 // output units
	axonOptMask         = AxonOptTimestampIn | AxonOptTimestampOut
)

// AxonHeader is the parsed Axon header (thesis §3.1.1, DESIGN.md §4). It
// replaces the Ethernet header on Axon-to-Axon links.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-------------+---------------+---------------+---------------+
//	|W|    type     | header length | forward count | reverse count |
//	+-+-------------+---------------+---------------+---------------+
//	|   options     |  F1   |  F2   |  ...  |  Fn   |  R1   |  ...  |
//	+---------------+-------+-------+-------+-------+-------+-------+
//	|  ...  |  Rm   |  pad  |  payload (Ethernet frame, control message,
//	+-------+-------+-------+  probe body) ...
//
// W set: hops are 8 bits (one byte each) instead of 4. Header length counts
// every header byte. F1 is the next forward hop: the high nibble (or the
// whole byte when W is set) of the sixth byte, so a cut-through data plane
// can pick the output port after six bytes (thesis §3.1.2). R1 is the most
// recent reverse hop, the port the packet entered the last Axon on. A 4-bit
// path with an odd total number of hops ends with a zero pad nibble. Hop 0
// is never a port; 0xF (0xFF in 8-bit mode) names the control plane.
// Options is zero except in probe packets.
type AxonHeader struct {
	Type    AxonType
	Wide    bool    // 8-bit hops
	Options uint8   // probe options (AxonOpt*)
	Fwd     []uint8 // forward path, next hop first
	Rev     []uint8 // reverse path, most recent hop first
}

// axonPathLen is the number of path bytes for n hops.
func axonPathLen(wide bool, n int) int {
	if wide {
		return n
	}
	return (n + 1) / 2
}

// Len is the encoded header length in bytes.
func (h *AxonHeader) Len() int { return AxonFixedLen + axonPathLen(h.Wide, len(h.Fwd)+len(h.Rev)) }

func (h *AxonHeader) check() error {
	if h.Type < AxonEthernet || h.Type > AxonProbe {
		return fmt.Errorf("wire: axon: type %d: %w", h.Type, ErrUnknownType)
	}
	if len(h.Fwd) > 255 || len(h.Rev) > 255 {
		return fmt.Errorf("wire: axon: %d forward and %d reverse hops, at most 255 each: %w", len(h.Fwd), len(h.Rev), ErrBadLength)
	}
	if h.Len() > 255 {
		return fmt.Errorf("wire: axon: header of %d bytes, at most 255: %w", h.Len(), ErrBadLength)
	}
	if h.Options&^axonOptMask != 0 || (h.Options != 0 && h.Type != AxonProbe) {
		return fmt.Errorf("wire: axon: options %#02x on a %v packet: %w", h.Options, h.Type, ErrBadValue)
	}
	max := uint8(AxonControlHop8)
	if !h.Wide {
		max = AxonControlHop4
	}
	for i, p := range [2][]uint8{h.Fwd, h.Rev} {
		for j, v := range p {
			if v == 0 || v > max {
				return fmt.Errorf("wire: axon: %s hop %d is %d, want 1..%d: %w", [2]string{"forward", "reverse"}[i], j, v, max, ErrBadHop)
			}
		}
	}
	return nil
}

// AppendTo appends the encoded header to b.
func (h *AxonHeader) AppendTo(b []byte) ([]byte, error) {
	if err := h.check(); err != nil {
		return b, err
	}
	t := uint8(h.Type)
	if h.Wide {
		t |= AxonWideFlag
	}
	b = append(b, t, uint8(h.Len()), uint8(len(h.Fwd)), uint8(len(h.Rev)), h.Options)
	if h.Wide {
		b = append(b, h.Fwd...)
		return append(b, h.Rev...), nil
	}
	var acc uint8
	n := 0
	for _, p := range [2][]uint8{h.Fwd, h.Rev} {
		for _, v := range p {
			if n%2 == 0 {
				acc = v << 4
			} else {
				b = append(b, acc|v)
			}
			n++
		}
	}
	if n%2 == 1 {
		b = append(b, acc)
	}
	return b, nil
}

// DecodeFromBytes parses the header at the start of b into h, reusing the
// capacity of h.Fwd and h.Rev, and returns the payload (a sub-slice of b).
func (h *AxonHeader) DecodeFromBytes(b []byte) (payload []byte, err error) {
	a, err := ParseAxon(b)
	if err != nil {
		return nil, err
	}
	h.Type = a.Type()
	h.Wide = a.Wide()
	h.Options = a.Options()
	h.Fwd = h.Fwd[:0]
	h.Rev = h.Rev[:0]
	for i := range a.FwdCount() {
		h.Fwd = append(h.Fwd, a.hop(i))
	}
	for i := range a.RevCount() {
		h.Rev = append(h.Rev, a.hop(a.FwdCount()+i))
	}
	return a.Payload(), nil
}

// Axon is a validated view over an Axon packet: the header followed by its
// payload. Build it with ParseAxon; the accessors then never fail.
type Axon []byte

// ParseAxon checks the Axon header at the start of b: known type, a header
// length that matches the hop counts and fits in b, valid hops, zero
// padding, options only on probes.
func ParseAxon(b []byte) (Axon, error) {
	if len(b) < AxonFixedLen {
		return nil, fmt.Errorf("wire: axon: %d bytes, fixed header needs %d: %w", len(b), AxonFixedLen, ErrTruncated)
	}
	a := Axon(b)
	t := a.Type()
	if t < AxonEthernet || t > AxonProbe {
		return nil, fmt.Errorf("wire: axon: type %d: %w", uint8(t), ErrUnknownType)
	}
	hl := int(b[1])
	wide := a.Wide()
	nf, nr := int(b[2]), int(b[3])
	if want := AxonFixedLen + axonPathLen(wide, nf+nr); hl != want {
		return nil, fmt.Errorf("wire: axon: header length %d, %d forward and %d reverse hops need %d: %w", hl, nf, nr, want, ErrBadLength)
	}
	if hl > len(b) {
		return nil, fmt.Errorf("wire: axon: header length %d, packet has %d bytes: %w", hl, len(b), ErrTruncated)
	}
	if o := b[4]; o&^axonOptMask != 0 || (o != 0 && t != AxonProbe) {
		return nil, fmt.Errorf("wire: axon: options %#02x on a %v packet: %w", o, t, ErrBadValue)
	}
	max := uint8(AxonControlHop8)
	if !wide {
		max = AxonControlHop4
	}
	for i := range nf + nr {
		if v := a.hop(i); v == 0 || v > max {
			return nil, fmt.Errorf("wire: axon: hop %d (%s) is %d, want 1..%d: %w", i, map[bool]string{true: "forward", false: "reverse"}[i < nf], v, max, ErrBadHop)
		}
	}
	if !wide && (nf+nr)%2 == 1 && b[hl-1]&0x0f != 0 {
		return nil, fmt.Errorf("wire: axon: pad nibble is %#x, want 0: %w", b[hl-1]&0x0f, ErrBadValue)
	}
	return a, nil
}

func (a Axon) Type() AxonType  { return AxonType(a[0] & AxonTypeMask) }
func (a Axon) Wide() bool      { return a[0]&AxonWideFlag != 0 }
func (a Axon) HeaderLen() int  { return int(a[1]) }
func (a Axon) FwdCount() int   { return int(a[2]) }
func (a Axon) RevCount() int   { return int(a[3]) }
func (a Axon) Options() uint8  { return a[4] }
func (a Axon) Payload() []byte { return a[a[1]:] }

// SetType changes the packet type in place (the data plane turns a packet
// it cannot forward into AxonError, thesis §3.2.1). The wide flag is kept.
func (a Axon) SetType(t AxonType) { a[0] = a[0]&AxonWideFlag | uint8(t)&AxonTypeMask }

// FwdHop returns forward hop i (0 = next hop); i must be < FwdCount.
func (a Axon) FwdHop(i int) uint8 { return a.hop(i) }

// RevHop returns reverse hop i (0 = most recent); i must be < RevCount.
func (a Axon) RevHop(i int) uint8 { return a.hop(a.FwdCount() + i) }

// hop returns path element i, counting the forward then the reverse hops.
func (a Axon) hop(i int) uint8 {
	if a.Wide() {
		return a[AxonFixedLen+i]
	}
	v := a[AxonFixedLen+i/2]
	if i%2 == 0 {
		return v >> 4
	}
	return v & 0x0f
}

func (a Axon) setHop(i int, v uint8) {
	if a.Wide() {
		a[AxonFixedLen+i] = v
		return
	}
	p := &a[AxonFixedLen+i/2]
	if i%2 == 0 {
		*p = *p&0x0f | v<<4
	} else {
		*p = *p&0xf0 | v&0x0f
	}
}

// AxonNextHop returns the next forward hop, read from the sixth byte
// (thesis §3.1.2), without validating the rest of the header: this is what
// a cut-through data plane sees. ok is false when b is too short, the
// forward count is zero or the hop is 0.
func AxonNextHop(b []byte) (hop uint8, ok bool) {
	if len(b) < AxonFixedLen+1 || b[2] == 0 {
		return 0, false
	}
	hop = b[AxonFixedLen]
	if b[0]&AxonWideFlag == 0 {
		hop >>= 4
	}
	return hop, hop != 0
}

// AxonForward performs the header processing of thesis §3.2.1 in place:
// it removes the next forward hop, inserts inPort as the first reverse hop
// and adjusts both counts. The header length does not change. It returns
// the output port. With no forward hop left it returns ErrNoHops and leaves
// the packet untouched; the caller then sets AxonError and hands the
// packet to the control plane. 0 allocations.
func AxonForward(pkt []byte, inPort uint8) (out uint8, err error) {
	a, err := ParseAxon(pkt)
	if err != nil {
		return 0, err
	}
	nf := a.FwdCount()
	if nf == 0 {
		return 0, fmt.Errorf("wire: axon: %w", ErrNoHops)
	}
	if a.RevCount() == 255 {
		return 0, fmt.Errorf("wire: axon: reverse path full (255 hops): %w", ErrBadLength)
	}
	max := uint8(AxonControlHop8)
	if !a.Wide() {
		max = AxonControlHop4
	}
	if inPort == 0 || inPort > max {
		return 0, fmt.Errorf("wire: axon: input port %d, want 1..%d: %w", inPort, max, ErrBadHop)
	}
	out = a.hop(0)
	if a.Wide() {
		copy(a[AxonFixedLen:], a[AxonFixedLen+1:AxonFixedLen+nf])
	} else {
		// Shift forward nibbles 1..nf-1 down by one, a byte at a time
		// while both nibbles of the byte stay inside the forward path.
		p := a[AxonFixedLen:]
		j := 0
		for ; 2*j+1 <= nf-2; j++ {
			p[j] = p[j]<<4 | p[j+1]>>4
		}
		if nf >= 2 && (nf-2)%2 == 0 {
			a.setHop(nf-2, a.hop(nf-1))
		}
	}
	a.setHop(nf-1, inPort)
	a[2]--
	a[3]++
	return out, nil
}

// AxonEncap appends hdr (an encoded Axon header, e.g. from route memory)
// and the Ethernet frame to dst: what the route lookup module prepends to a
// host's frame. Under an AxonEthernet header the frame must hold at least
// an Ethernet header, as AxonDecap requires. frame may share dst's array,
// as in AxonEncap(frame[:0], hdr, frame): it is moved behind the header.
// 0 allocations when dst has room.
func AxonEncap(dst, hdr, frame []byte) ([]byte, error) {
	a, err := ParseAxon(hdr)
	if err != nil {
		return dst, err
	}
	if len(hdr) != a.HeaderLen() {
		return dst, fmt.Errorf("wire: axon: encap: %d header bytes, header length says %d: %w", len(hdr), hdr[1], ErrBadLength)
	}
	if a.Type() == AxonEthernet && len(frame) < EthHeaderLen {
		return dst, fmt.Errorf("wire: axon: encap: Ethernet frame of %d bytes, header needs %d: %w", len(frame), EthHeaderLen, ErrTruncated)
	}
	// frame may share dst's array (AxonEncap(frame[:0], hdr, frame)): move
	// it first, then write the header, from a copy in case hdr overlaps
	// where the frame lands.
	var h [255]byte
	hl := copy(h[:], hdr)
	n := len(dst)
	dst = grow(dst, hl+len(frame))
	copy(dst[n+hl:], frame)
	copy(dst[n:], h[:hl])
	return dst, nil
}

// AxonDecap strips the Axon header from an AxonEthernet packet and returns
// the Ethernet frame inside (a sub-slice of pkt), for delivery on a host
// port. Other packet types return ErrUnknownType: the data plane turns them
// into errors for the control plane (thesis §3.2.1). A NIC's zero padding
// of a short packet stays at the end of the frame, as its Ethernet padding.
func AxonDecap(pkt []byte) ([]byte, error) {
	a, err := ParseAxon(pkt)
	if err != nil {
		return nil, err
	}
	if a.Type() != AxonEthernet {
		return nil, fmt.Errorf("wire: axon: decap of a %v packet: %w", a.Type(), ErrUnknownType)
	}
	f := a.Payload()
	if len(f) < EthHeaderLen {
		return nil, fmt.Errorf("wire: axon: encapsulated frame of %d bytes: %w", len(f), ErrTruncated)
	}
	return f, nil
}

// String formats the header for logs: "ethernet fwd [2 3 5] rev [1 4]",
// with " wide" and " opts 0x03" when set.
func (h *AxonHeader) String() string {
	s := fmt.Sprintf("%v fwd %v rev %v", h.Type, h.Fwd, h.Rev)
	if h.Wide {
		s += " wide"
	}
	if h.Options != 0 {
		s += fmt.Sprintf(" opts %#02x", h.Options)
	}
	return s
}
