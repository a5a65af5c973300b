package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
)

// Boundary tests: each pins one limit exactly at the edge (the last valid
// value and the first invalid one), so that moving a comparison by one or
// dropping a check fails a test. They came out of mutation testing.

func TestAxonHeaderLimits(t *testing.T) {
	ones := func(n int) []uint8 { return bytes.Repeat([]uint8{1}, n) }
	cases := []struct {
		name string
		h    AxonHeader
		want error
	}{
		{"type 5", AxonHeader{Type: AxonProbe + 1, Fwd: []uint8{1}}, ErrUnknownType},
		{"256 reverse hops", AxonHeader{Type: AxonEthernet, Rev: ones(256)}, ErrBadLength},
		{"256 forward hops", AxonHeader{Type: AxonEthernet, Fwd: ones(256)}, ErrBadLength},
		{"wide header of 256 bytes", AxonHeader{Type: AxonEthernet, Wide: true, Fwd: ones(251)}, ErrBadLength},
	}
	for _, c := range cases {
		if b, err := c.h.AppendTo(nil); !errors.Is(err, c.want) {
			t.Errorf("%s: %d bytes, %v; want %v", c.name, len(b), err, c.want)
		}
	}
	// The last valid sizes encode and parse back.
	for _, h := range []AxonHeader{
		{Type: AxonEthernet, Wide: true, Fwd: ones(250)},
		{Type: AxonEthernet, Fwd: ones(1), Rev: ones(255)},
	} {
		b, err := h.AppendTo(nil)
		if err != nil || len(b) != h.Len() || int(b[1]) != h.Len() {
			t.Fatalf("%d+%d hops wide=%v: %d bytes, %v", len(h.Fwd), len(h.Rev), h.Wide, len(b), err)
		}
		if _, err := ParseAxon(b); err != nil {
			t.Fatalf("%d+%d hops: %v", len(h.Fwd), len(h.Rev), err)
		}
	}
}

func TestAxonForwardRefuses(t *testing.T) {
	full := mustAxon(t, AxonHeader{Type: AxonEthernet, Fwd: []uint8{2}, Rev: bytes.Repeat([]uint8{1}, 255)}, innerFrame())
	orig := bytes.Clone(full)
	if _, err := AxonForward(full, 3); !errors.Is(err, ErrBadLength) || !bytes.Equal(full, orig) {
		t.Errorf("255 reverse hops: %v, packet changed %v; want ErrBadLength, unchanged", err, !bytes.Equal(full, orig))
	}
	for _, wide := range []bool{false, true} {
		pkt := mustAxon(t, AxonHeader{Type: AxonEthernet, Wide: wide, Fwd: []uint8{2}}, innerFrame())
		if _, err := AxonForward(pkt, 0); !errors.Is(err, ErrBadHop) {
			t.Errorf("wide=%v input port 0: %v, want ErrBadHop", wide, err)
		}
	}
}

func TestAxonNextHopShort(t *testing.T) {
	pkt := mustAxon(t, AxonHeader{Type: AxonEthernet, Fwd: []uint8{2, 3}}, nil)
	for n := 0; n <= AxonFixedLen; n++ {
		if hop, ok := AxonNextHop(pkt[:n]); ok {
			t.Errorf("%d bytes: hop %d ok", n, hop)
		}
	}
	if hop, ok := AxonNextHop(pkt[:AxonFixedLen+1]); !ok || hop != 2 {
		t.Errorf("six bytes: hop %d %v, want 2 true", hop, ok)
	}
}

func TestAxonDecapShortFrame(t *testing.T) {
	f := innerFrame()
	pkt := mustAxon(t, AxonHeader{Type: AxonEthernet, Fwd: []uint8{1}}, f[:EthHeaderLen-1])
	if _, err := AxonDecap(pkt); !errors.Is(err, ErrTruncated) {
		t.Errorf("13-byte frame: %v, want ErrTruncated", err)
	}
	pkt = mustAxon(t, AxonHeader{Type: AxonEthernet, Fwd: []uint8{1}}, f[:EthHeaderLen])
	if got, err := AxonDecap(pkt); err != nil || len(got) != EthHeaderLen {
		t.Errorf("14-byte frame: %d bytes, %v", len(got), err)
	}
}

func TestAxonProbeBodyPartialRecord(t *testing.T) {
	b, err := (&AxonProbeBody{Origin: 1, Seq: 2}).AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	var p AxonProbeBody
	for n := 1; n < AxonProbeRecordLen; n++ {
		if err := p.DecodeFromBytes(append(bytes.Clone(b), bytes.Repeat([]byte{1}, n)...)); !errors.Is(err, ErrBadLength) {
			t.Errorf("%d bytes of records: %v, want ErrBadLength", n, err)
		}
		// Zeros are trailing bytes (a NIC's padding, for DecodePadded).
		if err := p.DecodeFromBytes(append(bytes.Clone(b), make([]byte, n)...)); !errors.Is(err, ErrTrailing) {
			t.Errorf("%d zero bytes after the body: %v, want ErrTrailing", n, err)
		}
	}
}

func TestOverlayVNetDecodeVLAN4096(t *testing.T) {
	b, err := (&OverlayVNet{Op: RecordAdd, VNI: 5, VLAN: 0xfff, Name: "n"}).AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	var m OverlayVNet
	if err := m.DecodeFromBytes(b); err != nil || m.VLAN != 0xfff {
		t.Fatalf("VLAN 4095: %d %v", m.VLAN, err)
	}
	binary.BigEndian.PutUint16(b[5:], 0x1000)
	if err := m.DecodeFromBytes(b); !errors.Is(err, ErrBadValue) {
		t.Errorf("VLAN 4096: %v, want ErrBadValue", err)
	}
}

func TestVXLANEncapLengthLimit(t *testing.T) {
	inner := make([]byte, 0xffff-ipv4HdrLen-udpHdrLen-VXLANLen+1)
	copy(inner, innerFrame())
	if b, err := VXLANEncap(nil, &VXLANOuter{Src: ipA, Dst: ipB, VNI: 1}, inner); !errors.Is(err, ErrBadLength) {
		t.Errorf("IPv4 total length 65536: %d bytes, %v; want ErrBadLength", len(b), err)
	}
	b, err := VXLANEncap(nil, &VXLANOuter{Src: ipA, Dst: ipB, VNI: 1}, inner[:len(inner)-1])
	if err != nil {
		t.Fatalf("IPv4 total length 65535: %v", err)
	}
	if tot := binary.BigEndian.Uint16(b[EthHeaderLen+2:]); tot != 0xffff {
		t.Errorf("IPv4 total length %d, want 65535", tot)
	}
}

// Over IPv6 the payload length leaves the 40-byte header out: the UDP
// datagram may be 65,535 bytes, 20 more than over IPv4 (the encoder used
// IPv4's limit for both), and the decoder takes the frame back.
func TestVXLANv6EncapLengthLimit(t *testing.T) {
	inner := make([]byte, 0xffff-udpHdrLen-VXLANLen+1)
	copy(inner, innerFrame())
	o := &VXLANOuter{Src: ip6A, Dst: ip6B, VNI: 1}
	if b, err := VXLANEncap(nil, o, inner); !errors.Is(err, ErrBadLength) {
		t.Errorf("IPv6 payload length 65536: %d bytes, %v; want ErrBadLength", len(b), err)
	}
	b, err := VXLANEncap(nil, o, inner[:len(inner)-1])
	if err != nil {
		t.Fatalf("IPv6 payload length 65535: %v", err)
	}
	if pl := binary.BigEndian.Uint16(b[EthHeaderLen+4:]); pl != 0xffff {
		t.Errorf("IPv6 payload length %d, want 65535", pl)
	}
	if _, got, err := VXLANDecap(b); err != nil || len(got) != len(inner)-1 {
		t.Errorf("decap: %d bytes, %v; want %d", len(got), err, len(inner)-1)
	}
}

// TestVXLANv6ChecksumNeverZero: over IPv6 a computed UDP checksum of 0
// must be sent as 0xffff (RFC 8200 §8.1), since 0 means "no checksum".
// The source port sweeps the sum through every value.
func TestVXLANv6ChecksumNeverZero(t *testing.T) {
	o := VXLANOuter{Src: ip6A, Dst: ip6B, VNI: 7}
	var b []byte
	seen := false
	for p := 0; p <= 0xffff; p++ {
		o.SrcPort = uint16(p)
		var err error
		if b, err = VXLANEncap(b[:0], &o, innerFrame()); err != nil {
			t.Fatal(err)
		}
		ck := binary.BigEndian.Uint16(b[EthHeaderLen+ipv6HdrLen+6:])
		if ck == 0 {
			t.Fatalf("source port %d: UDP checksum 0", p)
		}
		seen = seen || ck == 0xffff
	}
	if !seen {
		t.Fatal("no source port gave checksum 0xffff: the sweep did not reach the zero case")
	}
}

func TestVXLANDecapBoundaries(t *testing.T) {
	good, err := VXLANEncap(nil, &VXLANOuter{Src: ipA, Dst: ipB, VNI: 1}, innerFrame())
	if err != nil {
		t.Fatal(err)
	}
	// Three VLAN tags.
	tagged := bytes.Clone(good)
	for i := 0; i < 3; i++ {
		if tagged, err = VLANPush(tagged, EtherTypeVLAN, vtag(0, false, uint16(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := VXLANDecap(tagged); !errors.Is(err, ErrBadValue) {
		t.Errorf("three VLAN tags: %v, want ErrBadValue", err)
	}
	// Two are fine.
	two := bytes.Clone(good)
	for i := 0; i < 2; i++ {
		two, _ = VLANPush(two, EtherTypeVLAN, vtag(0, false, uint16(i+1)))
	}
	if vni, _, err := VXLANDecap(two); err != nil || vni != 1 {
		t.Errorf("two VLAN tags: VNI %d, %v", vni, err)
	}

	// IPv6 payload length one beyond the frame.
	g6, err := VXLANEncap(nil, &VXLANOuter{Src: ip6A, Dst: ip6B, VNI: 1}, innerFrame())
	if err != nil {
		t.Fatal(err)
	}
	b6 := bytes.Clone(g6)
	binary.BigEndian.PutUint16(b6[EthHeaderLen+4:], uint16(len(g6)-EthHeaderLen-ipv6HdrLen+1))
	if _, _, err := VXLANDecap(b6); !errors.Is(err, ErrBadLength) {
		t.Errorf("IPv6 payload length beyond the frame: %v, want ErrBadLength", err)
	}

	// A 13-byte inner frame, lengths consistent.
	short, err := VXLANEncap(nil, &VXLANOuter{Src: ipA, Dst: ipB, VNI: 1}, innerFrame()[:EthHeaderLen])
	if err != nil {
		t.Fatal(err)
	}
	short = short[:len(short)-1]
	ip := short[EthHeaderLen:]
	binary.BigEndian.PutUint16(ip[2:], binary.BigEndian.Uint16(ip[2:])-1)
	binary.BigEndian.PutUint16(ip[ipv4HdrLen+4:], binary.BigEndian.Uint16(ip[ipv4HdrLen+4:])-1)
	if _, in, err := VXLANDecap(short); !errors.Is(err, ErrTruncated) {
		t.Errorf("13-byte inner frame: %d bytes, %v; want ErrTruncated", len(in), err)
	}
}

func TestVLANShortFrames(t *testing.T) {
	f, err := VLANPush(innerFrame()[:EthHeaderLen], EtherTypeVLAN, vtag(1, false, 9))
	if err != nil {
		t.Fatal(err)
	}
	// 18 bytes: a tagged header with its inner EtherType.
	if _, tag, ok := VLANOf(f); !ok || tag.VID() != 9 {
		t.Fatalf("18 bytes: VLANOf %v %v", tag, ok)
	}
	cut := f[:EthHeaderLen+3]
	if _, _, ok := VLANOf(cut); ok {
		t.Error("VLANOf of 17 bytes: ok")
	}
	if _, _, out, err := VLANPop(bytes.Clone(cut)); !errors.Is(err, ErrTruncated) {
		t.Errorf("VLANPop of 17 bytes: %d bytes, %v; want ErrTruncated", len(out), err)
	}
	if out, err := VLANPush(innerFrame(), EtherTypeIPv4, 1); !errors.Is(err, ErrUnknownType) || len(out) != len(innerFrame()) {
		t.Errorf("push with TPID 0x0800: %d bytes, %v; want ErrUnknownType", len(out), err)
	}
}

func TestVLAN4096Refused(t *testing.T) {
	c := &Chirp{IP: ipA, MAC: macA, EdgeSwitch: 1}
	if _, err := AppendChirpFrame(nil, macB, 0x1000, c); !errors.Is(err, ErrBadValue) {
		t.Errorf("chirp on VLAN 4096: %v", err)
	}
	a := &ARP{Op: ARPRequest, SenderMAC: macA, SenderIP: ipA, TargetIP: ipB}
	if _, err := AppendARPFrame(nil, Broadcast, 0x1000, a); !errors.Is(err, ErrBadValue) {
		t.Errorf("ARP on VLAN 4096: %v", err)
	}
}

func dumbnetFrame(rest ...byte) []byte {
	b := append([]byte(nil), innerFrame()[:12]...)
	b = binary.BigEndian.AppendUint16(b, EtherTypeDumbNet)
	return append(b, rest...)
}

func TestDumbNetBoundaries(t *testing.T) {
	// 65 tags, no end marker: more than a path may hold.
	if _, _, _, err := ParseDumbNet(dumbnetFrame(bytes.Repeat([]byte{1}, DumbNetMaxTags+1)...)); !errors.Is(err, ErrBadLength) {
		t.Errorf("65 tags without end marker: %v, want ErrBadLength", err)
	}
	if _, _, _, err := ParseDumbNet(dumbnetFrame(bytes.Repeat([]byte{1}, DumbNetMaxTags)...)); !errors.Is(err, ErrTruncated) {
		t.Errorf("64 tags without end marker: %v, want ErrTruncated", err)
	}
	// Strip needs the end marker and a whole inner EtherType.
	if out, err := DumbNetStrip(dumbnetFrame(DumbNetEnd, 0x08)); !errors.Is(err, ErrTruncated) {
		t.Errorf("strip of 16 bytes: %d bytes, %v; want ErrTruncated", len(out), err)
	}
	if out, err := DumbNetStrip(dumbnetFrame(DumbNetEnd, 0x08, 0x00)); err != nil || len(out) != EthHeaderLen {
		t.Errorf("strip of 17 bytes: %d bytes, %v", len(out), err)
	}
	// A probe whose path length byte says 65.
	b, err := (&DumbNetProbe{Seq: 1, SrcMAC: macA}).AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] = DumbNetMaxTags + 1
	b = append(b, bytes.Repeat([]byte{1}, DumbNetMaxTags+1)...)
	var p DumbNetProbe
	if err := p.DecodeFromBytes(b); !errors.Is(err, ErrBadLength) {
		t.Errorf("probe path of 65 tags: %v, want ErrBadLength", err)
	}
	// Port status with a trailing byte.
	ps, err := (&DumbNetPortStatus{SwitchID: 1, Port: 2, State: PortUp, HopLimit: 3}).AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	long := append(bytes.Clone(ps), 0)
	if _, err := DumbNetPortStatusHop(long); !errors.Is(err, ErrBadLength) || long[12] != 3 {
		t.Errorf("port status of 18 bytes: %v, hop limit %d; want ErrBadLength, 3", err, long[12])
	}
}

func TestDecodeUDPLengthBelowHeader(t *testing.T) {
	f, err := AppendUDPFrame(nil, macB, macA, netip.AddrPortFrom(ipA, 1), netip.AddrPortFrom(ipB, 2), 0, []byte("xy"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []uint16{0, 1, 7} { // 0 is a jumbogram to gopacket
		b := bytes.Clone(f)
		binary.BigEndian.PutUint16(b[EthHeaderLen+ipv4HdrLen+4:], l)
		if _, _, _, err := DecodeUDP(b); err == nil {
			t.Errorf("UDP length %d: decoded", l)
		}
	}
}

var ip6B = netip.MustParseAddr("2001:db8::2")
