package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"github.com/insomniacslk/dhcp/dhcpv4"
)

// Exact tests from the second mutation sweep: each pins one check that a
// mutant could weaken without any other test noticing (a reserved bit, an
// edge of a range, the zero value of an enum, the exact sentinel, b left
// unchanged on error, a reused struct cleared).

// encode appends m to nil and fails the test on error.
func encode(t *testing.T, m Message) []byte {
	t.Helper()
	b, err := m.AppendTo(nil)
	if err != nil {
		t.Fatalf("%T: %v", m, err)
	}
	return b
}

// patched returns a copy of b with b[off] set to v.
func patched(b []byte, off int, v ...byte) []byte {
	c := bytes.Clone(b)
	copy(c[off:], v)
	return c
}

// TestExactMessageDecodeRejects: one field of a valid message set to a
// value the format forbids; DecodeMessage must return exactly that
// sentinel.
func TestExactMessageDecodeRejects(t *testing.T) {
	probe := encode(t, &DumbNetProbe{Seq: 1, SrcMAC: macA, Path: []uint8{1}}) // path length at 12, tag at 13
	ps := encode(t, &DumbNetPortStatus{SwitchID: 1, Port: 2, State: PortUp, HopLimit: 5})
	topo := encode(t, &DumbNetTopoPatch{Version: 1, Links: []DumbNetLink{{A: 1, APort: 1, B: 2, BPort: 2, Flags: LinkUp}}})
	reply := encode(t, &DumbNetPathReply{QueryID: 1, Links: []DumbNetLink{{A: 1, B: 2, Flags: LinkPrimary}}})
	hello := encode(t, &AxonHello{AxonID: 1, Port: 2, Reply: true})
	ep := encode(t, &AxonEtherProbe{AxonID: 1, Phase: EtherProbeLearn})
	vport := encode(t, &OverlayVPort{Op: RecordAdd, Switch: 1, MAC: macA, VNI: 5, Port: 1, IP: ipA})
	chirp := encode(t, &Chirp{IP: ipA, MAC: macA, EdgeSwitch: 1})
	query := encode(t, &DumbNetPathQuery{QueryID: 1, Src: macA, Dst: macB, DstIP: ip6A}) // address length at 17
	egress := encode(t, &BackplaneNextHop{Kind: NextHopEgress, VLAN: 1, MAC: macA, Port: 3})
	ingress := encode(t, &BackplaneNextHop{Kind: NextHopIngress, Prefix: netip.MustParsePrefix("10.1.0.0/16"), VLAN: 1, MAC: macA})
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"probe path starting with the end marker", patched(probe, 13, DumbNetEnd), ErrBadHop},
		{"port status state 0", patched(ps, 11, 0), ErrBadValue},
		{"port status state 3", patched(ps, 11, 3), ErrBadValue},
		{"topo patch link flags 0x80", patched(topo, len(topo)-1, 0x80), ErrBadValue},
		{"topo patch link flags 0x10", patched(topo, len(topo)-1, 0x10), ErrBadValue},
		{"path reply link flags 0x81", patched(reply, len(reply)-1, 0x81), ErrBadValue},
		{"axon hello flags 0x04", patched(hello, len(hello)-1, 0x04), ErrBadValue},
		{"axon hello flags 0x80", patched(hello, len(hello)-1, 0x80), ErrBadValue},
		{"ether probe phase 0", patched(ep, 17, 0), ErrBadValue},
		{"ether probe phase 3", patched(ep, 17, 3), ErrBadValue},
		{"vport op 0", patched(vport, 1, 0), ErrBadValue},
		{"vport op 3", patched(vport, 1, 3), ErrBadValue},
		{"chirp flags 0x02", patched(chirp, 1, 0x02), ErrBadValue},
		{"chirp flags 0x80", patched(chirp, 1, 0x81), ErrBadValue},
		{"address length 15", patched(query, 17, 15), ErrBadValue},
		{"address length 5", patched(query, 17, 5)[:18+5], ErrBadValue},
		{"egress without address, prefix bits 1", patched(egress, 3, 1), ErrBadValue},
		{"ingress with port 1", patched(ingress, len(ingress)-2, 0, 1), ErrBadValue},
		{"egress with a prefix", patched(ingress, 1, byte(NextHopEgress)), ErrBadValue},
		{"egress with an address and 33 prefix bits", patched(ingress, 1, byte(NextHopEgress), 4, 10, 1, 0, 0, 33), ErrBadValue},
		{"ingress with 33 prefix bits", patched(ingress, 7, 33), ErrBadValue},
	}
	for _, c := range cases {
		m, err := DecodeMessage(c.b)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v (%+v), want %v", c.name, err, m, c.want)
		}
	}
}

// TestExactEncodeRefuses: an encoder given a value that does not fit
// returns the sentinel and leaves b exactly as it was.
func TestExactEncodeRefuses(t *testing.T) {
	link := DumbNetLink{A: 1, B: 2, Flags: LinkUp}
	neighbours := func(n int) []DumbNetNeighbor {
		ns := make([]DumbNetNeighbor, n)
		for i := range ns {
			ns[i] = DumbNetNeighbor{MAC: macA, Path: []uint8{1}}
		}
		return ns
	}
	cases := []struct {
		m    Message
		want error
	}{
		{&DumbNetTopoPatch{Links: []DumbNetLink{{Flags: 0x10}}}, ErrBadValue},
		{&DumbNetPathReply{Links: []DumbNetLink{link, {Flags: LinkUp | 0x40}}}, ErrBadValue},
		{&DumbNetTopoPatch{Links: make([]DumbNetLink, 0x10000)}, ErrBadLength},
		{&DumbNetNeighbors{Neighbors: neighbours(DumbNetMaxNeighbors + 1)}, ErrBadLength},
		{&DumbNetNeighbors{Neighbors: []DumbNetNeighbor{{Path: []uint8{1}}, {Path: []uint8{2}, Alt: []uint8{DumbNetEnd}}}}, ErrBadHop},
		{&DumbNetProbeReply{Seq: 1, HostIP: ipA, Path: []uint8{1, DumbNetEnd}}, ErrBadHop},
		{&DumbNetProbeReply{Path: bytes.Repeat([]uint8{1}, DumbNetMaxTags+1)}, ErrBadLength},
		{&OverlayVNet{Op: RecordAdd, VNI: MaxVNI + 1}, ErrBadValue},
		{&OverlayVNet{Op: RecordAdd, VLAN: 0x1000}, ErrBadValue},
		{&OverlayVNet{Op: RecordAdd, Name: strings.Repeat("n", 256)}, ErrBadLength},
		{&BackplaneNextHop{Kind: NextHopIngress, Prefix: netip.MustParsePrefix("10.0.0.0/8"), Port: 1}, ErrBadValue},
		{&BackplaneNextHop{Kind: NextHopEgress, Prefix: netip.MustParsePrefix("10.0.0.0/8")}, ErrBadValue},
	}
	for _, c := range cases {
		b, err := c.m.AppendTo([]byte{0xaa})
		if !errors.Is(err, c.want) || !bytes.Equal(b, []byte{0xaa}) {
			t.Errorf("%T: %v, b %d bytes; want %v and b unchanged", c.m, err, len(b), c.want)
		}
	}
	// AppendControlFrame drops the Ethernet header it wrote when the
	// message refuses.
	if b, err := AppendControlFrame([]byte{0xaa}, macB, macA, &DumbNetPortStatus{}); !errors.Is(err, ErrBadValue) || !bytes.Equal(b, []byte{0xaa}) {
		t.Errorf("control frame of a bad message: %v, %x", err, b)
	}
	// A multicast (not only the broadcast) chirp must not ask for a reply.
	mc := MAC{0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}
	if b, err := AppendChirpFrame([]byte{0xaa}, mc, 0, &Chirp{MAC: macA, WantReply: true}); !errors.Is(err, ErrBadValue) || !bytes.Equal(b, []byte{0xaa}) {
		t.Errorf("multicast chirp with want_reply: %v, %x", err, b)
	}
	// The axon header: options only on probes.
	if b, err := (&AxonHeader{Type: AxonEthernet, Options: AxonOptTimestampIn, Fwd: []uint8{1}}).AppendTo([]byte{0xaa}); !errors.Is(err, ErrBadValue) || !bytes.Equal(b, []byte{0xaa}) {
		t.Errorf("options on an ethernet header: %v, %x", err, b)
	}
}

// TestExactEncodeLimitsFit: the largest values that fit encode exactly and
// round trip.
func TestExactEncodeLimitsFit(t *testing.T) {
	ns := make([]DumbNetNeighbor, DumbNetMaxNeighbors)
	for i := range ns {
		ns[i] = DumbNetNeighbor{MAC: MAC{0x02, 0, 0, 0, 0, byte(i)}, Path: []uint8{uint8(i%200 + 1)}}
	}
	vnet := &OverlayVNet{Op: RecordDelete, VNI: MaxVNI, VLAN: 0xfff, Name: strings.Repeat("é", 127) + "x"}
	for _, m := range []Message{
		&DumbNetNeighbors{Version: 9, Neighbors: ns},
		vnet,
		&DumbNetTopoPatch{Version: 1, Links: make([]DumbNetLink, 0xffff)},
	} {
		b := encode(t, m)
		got, err := DecodeMessage(b)
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Errorf("%T: round trip %v", m, err)
		}
	}
	if b := encode(t, &DumbNetNeighbors{Neighbors: ns}); b[9] != DumbNetMaxNeighbors {
		t.Errorf("neighbour count byte %d, want 255", b[9])
	}
	if b := encode(t, vnet); len(b) != 8+255 || b[7] != 255 || !bytes.Equal(b[2:5], []byte{0xff, 0xff, 0xff}) {
		t.Errorf("vnet of a 255-byte name: %x", b[:8])
	}
}

// TestExactDecodeReusesStruct: decoding into a struct that held an earlier
// message gives exactly the new message, nothing left over.
func TestExactDecodeReusesStruct(t *testing.T) {
	nb := &DumbNetNeighbors{Version: 1, Neighbors: []DumbNetNeighbor{{MAC: macA, Path: []uint8{1, 2}, Alt: []uint8{3}}}}
	b := encode(t, nb)
	var got DumbNetNeighbors
	for range 2 {
		if err := got.DecodeFromBytes(b); err != nil || !reflect.DeepEqual(&got, nb) {
			t.Fatalf("neighbours decoded again: %+v %v", got, err)
		}
	}
	id := DumbNetSwitchID{SwitchID: 7, Echo: []byte{1, 2, 3}}
	if err := id.DecodeFromBytes(encode(t, &DumbNetSwitchID{SwitchID: 8})); err != nil || !reflect.DeepEqual(id, DumbNetSwitchID{SwitchID: 8}) {
		t.Errorf("switch id without echo over one with: %+v %v", id, err)
	}
	body := AxonProbeBody{Origin: 1, Seq: 2, Records: []AxonProbeRecord{{Port: 3, Dir: ProbeIn, Time: 4}}}
	bb, err := body.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	var pb AxonProbeBody
	for range 2 {
		if err := pb.DecodeFromBytes(bb); err != nil || !reflect.DeepEqual(pb, body) {
			t.Fatalf("probe body decoded again: %+v %v", pb, err)
		}
	}
	bad := append(bytes.Clone(bb), 5, 0, 0, 0, 0, 0, 0, 0, 0, 1) // a record with direction 0
	if err := pb.DecodeFromBytes(bad); !errors.Is(err, ErrBadValue) {
		t.Errorf("record direction 0: %v", err)
	}
	if err := pb.DecodeFromBytes(patched(bad, len(bad)-9, 3)); !errors.Is(err, ErrBadValue) {
		t.Errorf("record direction 3: %v", err)
	}
}

// TestExactPortStatusHopSentinels: a one-byte message with another
// subtype is an unknown type, not a bad length.
func TestExactPortStatusHopSentinels(t *testing.T) {
	if _, err := DumbNetPortStatusHop([]byte{byte(SubDumbNetSwitchID)}); !errors.Is(err, ErrUnknownType) {
		t.Errorf("one byte of subtype 0x22: %v, want ErrUnknownType", err)
	}
	if _, err := DumbNetPortStatusHop(nil); !errors.Is(err, ErrBadLength) {
		t.Errorf("empty: %v, want ErrBadLength", err)
	}
}

// TestExactDumbNetPathLimits: a path of exactly 64 tags is valid on the
// wire and through the push; 65 is refused by every encoder.
func TestExactDumbNetPathLimits(t *testing.T) {
	p64 := bytes.Repeat([]uint8{3}, DumbNetMaxTags)
	p65 := bytes.Repeat([]uint8{3}, DumbNetMaxTags+1)
	f, err := DumbNetPush(innerFrame(), p64)
	if err != nil {
		t.Fatal(err)
	}
	tags, inner, payload, err := ParseDumbNet(f)
	if err != nil || !bytes.Equal(tags, p64) || inner != EtherTypeIPv4 || !bytes.Equal(payload, innerFrame()[EthHeaderLen:]) {
		t.Fatalf("64 tags: %d tags, %#x, %v", len(tags), inner, err)
	}
	orig := innerFrame()
	if out, err := DumbNetPush(bytes.Clone(orig), p65); !errors.Is(err, ErrBadLength) || !bytes.Equal(out, orig) {
		t.Errorf("push of 65 tags: %v", err)
	}
	if b, err := (&DumbNetHeader{Tags: p65}).AppendTo([]byte{0xaa}); !errors.Is(err, ErrBadLength) || !bytes.Equal(b, []byte{0xaa}) {
		t.Errorf("header of 65 tags: %v", err)
	}
	if out, err := DumbNetMPLSPush(bytes.Clone(orig), p65); !errors.Is(err, ErrBadLength) || !bytes.Equal(out, orig) {
		t.Errorf("mpls push of 65 tags: %v", err)
	}
	if out, err := DumbNetMPLSPush(bytes.Clone(orig), []uint8{1, DumbNetEnd}); !errors.Is(err, ErrBadHop) || !bytes.Equal(out, orig) {
		t.Errorf("mpls push of a path holding 0xff: %v", err)
	}
}

// TestExactMPLSStripNeedsEndLabel: the host strips only the end label
// 0xFF with the bottom-of-stack bit; either one alone is not at the end.
func TestExactMPLSStripNeedsEndLabel(t *testing.T) {
	mk := func(label uint32, bos bool) []byte {
		b := append([]byte(nil), innerFrame()[:12]...)
		b = binary.BigEndian.AppendUint16(b, EtherTypeMPLS)
		b = binary.BigEndian.AppendUint32(b, mplsEntry(label, bos))
		return append(b, innerFrame()[EthHeaderLen:]...)
	}
	if out, err := DumbNetMPLSStrip(mk(DumbNetEnd, true)); err != nil || !bytes.Equal(out, innerFrame()) {
		t.Fatalf("end label: %v", err)
	}
	for _, c := range []struct {
		label uint32
		bos   bool
	}{{5, true}, {DumbNetEnd, false}, {0xFE, true}} {
		if _, err := DumbNetMPLSStrip(mk(c.label, c.bos)); !errors.Is(err, ErrNotAtEnd) {
			t.Errorf("label %d bos %v: %v, want ErrNotAtEnd", c.label, c.bos, err)
		}
	}
}

// TestExactAxonParseRejects: header fields ParseAxon must refuse.
func TestExactAxonParseRejects(t *testing.T) {
	probe := mustAxon(t, AxonHeader{Type: AxonProbe, Options: AxonOptTimestampIn, Fwd: []uint8{2}}, make([]byte, axonProbeFixed))
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"type 0", patched(probe, 0, 0), ErrUnknownType},
		{"type 5", patched(probe, 0, 5), ErrUnknownType},
		{"wide type 5", patched(probe, 0, AxonWideFlag|5), ErrUnknownType},
		{"options 0x04", patched(probe, 4, 0x04), ErrBadValue},
		{"options 0x80", patched(probe, 4, 0x81), ErrBadValue},
		{"pad nibble 8", patched(probe, 5, 0x28), ErrBadValue},
		{"pad nibble 1", patched(probe, 5, 0x21), ErrBadValue},
	}
	for _, c := range cases {
		if _, err := ParseAxon(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// SetType keeps the wide flag as it was, whatever the argument.
	a := Axon(bytes.Clone(probe))
	a.SetType(AxonType(AxonWideFlag | uint8(AxonError)))
	if a[0] != byte(AxonError) {
		t.Errorf("SetType(0x83) on a narrow packet: type byte %#x, want 0x03", a[0])
	}
}

// TestExactAxonProbeStamp: the probe unit's refusals.
func TestExactAxonProbeStamp(t *testing.T) {
	h := AxonHeader{Type: AxonProbe, Options: AxonOptTimestampIn | AxonOptTimestampOut, Fwd: []uint8{2}}
	short := mustAxon(t, h, make([]byte, axonProbeFixed-1))
	if out, err := AxonProbeStamp(short, 1, ProbeIn, 5); !errors.Is(err, ErrTruncated) || len(out) != len(short) {
		t.Errorf("body of 11 bytes: %v, want ErrTruncated", err)
	}
	pkt := mustAxon(t, h, make([]byte, axonProbeFixed))
	for _, dir := range []ProbeDir{0, 3} {
		if out, err := AxonProbeStamp(pkt, 1, dir, 5); !errors.Is(err, ErrBadValue) || len(out) != len(pkt) {
			t.Errorf("direction %d: %d bytes, %v; want ErrBadValue", dir, len(out), err)
		}
	}
}

// TestExactVXLANDecapRejects: outer header fields VXLANDecap must refuse.
func TestExactVXLANDecapRejects(t *testing.T) {
	inner := innerFrame()
	v4, err := VXLANEncap(nil, &VXLANOuter{SrcMAC: macA, DstMAC: macB, Src: ipA, Dst: ipB, SrcPort: 50000, VNI: 7}, inner)
	if err != nil {
		t.Fatal(err)
	}
	v6, err := VXLANEncap(nil, &VXLANOuter{SrcMAC: macA, DstMAC: macB, Src: ip6A, Dst: ip6B, SrcPort: 50000, VNI: 7}, inner)
	if err != nil {
		t.Fatal(err)
	}
	// Ethernet padding after the IPv4 packet, and a UDP length one byte
	// beyond the IP packet: reaching into the padding would be silent.
	padded := append(bytes.Clone(v4), 0, 0, 0, 0)
	off := EthHeaderLen + ipv4HdrLen + 4 // the UDP length field
	binary.BigEndian.PutUint16(padded[off:], uint16(udpHdrLen+VXLANLen+len(inner)+1))
	if vni, in, err := VXLANDecap(append(bytes.Clone(v4), 0, 0, 0, 0)); err != nil || vni != 7 || !bytes.Equal(in, inner) {
		t.Fatalf("padded frame: %d %v", vni, err)
	}
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"IPv4 EtherType, version 6", patched(v4, EthHeaderLen, 0x65), ErrBadValue},
		{"IPv6 EtherType, version 4", patched(v6, EthHeaderLen, 0x40), ErrBadValue}, // was reported as a bad payload length
		{"UDP length past the IP packet", padded, ErrBadLength},
	}
	for _, c := range cases {
		if vni, in, err := VXLANDecap(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s: vni %d, %d inner bytes, %v; want %v", c.name, vni, len(in), err, c.want)
		}
	}
}

// TestExactControlFrameEtherType: a message after another EtherType is
// not a control frame.
func TestExactControlFrameEtherType(t *testing.T) {
	f, err := AppendControlFrame(nil, macB, macA, &AxonHello{AxonID: 1})
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint16(f[12:], EtherTypeIPv4)
	if m, err := DecodeControlFrame(f); !errors.Is(err, ErrUnknownType) {
		t.Errorf("EtherType 0x0800: %v %v, want ErrUnknownType", m, err)
	}
}

// TestExactNewVLANTag: the fields land in their bits; a VID past its 12
// bits or a priority past its 3 is refused (masked, VLAN 0x1001 went out
// as 1).
func TestExactNewVLANTag(t *testing.T) {
	if tag, err := NewVLANTag(5, true, 0x0abc); err != nil || tag != 0xbabc || tag.PCP() != 5 || !tag.DEI() || tag.VID() != 0xabc {
		t.Errorf("NewVLANTag(5, true, 0xabc) = %#04x, %v", uint16(tag), err)
	}
	if tag, err := NewVLANTag(7, false, 0xfff); err != nil || tag != 0xefff {
		t.Errorf("NewVLANTag(7, false, 0xfff) = %#04x, %v", uint16(tag), err)
	}
	for _, c := range []struct {
		pcp uint8
		vid uint16
	}{{0, 0x1001}, {0, 0x1000}, {8, 1}, {255, 0xffff}} {
		if tag, err := NewVLANTag(c.pcp, false, c.vid); !errors.Is(err, ErrBadValue) || tag != 0 {
			t.Errorf("NewVLANTag(%d, false, %#x) = %#04x, %v; want ErrBadValue", c.pcp, c.vid, uint16(tag), err)
		}
	}
}

// TestExactStdRejects: the standard decoders' and encoders' own checks on
// top of gopacket.
func TestExactStdRejects(t *testing.T) {
	icmp, err := AppendICMPEchoFrame(nil, macB, macA, ipA, ipB, 64, &ICMPEcho{ID: 1, Seq: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := DecodeICMPEcho(patched(icmp, EthHeaderLen+ipv4HdrLen+1, 1)); !errors.Is(err, ErrBadValue) {
		t.Errorf("echo with code 1: %v, want ErrBadValue", err)
	}
	// An ARP with 8-byte hardware addresses is not Ethernet ARP.
	arp8, err := SerializeLayers(nil,
		&layers.Ethernet{SrcMAC: hw(macA), DstMAC: hw(Broadcast), EthernetType: layers.EthernetTypeARP},
		&layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 8, ProtAddressSize: 4,
			Operation: ARPRequest, SourceHwAddress: make([]byte, 8), SourceProtAddress: []byte{10, 0, 0, 1},
			DstHwAddress: make([]byte, 8), DstProtAddress: []byte{10, 0, 0, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if a, err := DecodeARP(arp8); !errors.Is(err, ErrUnknownType) {
		t.Errorf("ARP with 8-byte hardware addresses: %+v %v, want ErrUnknownType", a, err)
	}
	// DHCP needs 67 or 68 at both ends.
	d, err := dhcpv4.New(dhcpv4.WithHwAddr(macA[:]))
	if err != nil {
		t.Fatal(err)
	}
	for _, ports := range [][2]uint16{{DHCPServerPort, 1234}, {1234, DHCPClientPort}} {
		f, err := AppendUDPFrame(nil, macB, macA, netip.AddrPortFrom(ipA, ports[0]), netip.AddrPortFrom(ipB, ports[1]), 0, d.ToBytes())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeDHCP(f); !errors.Is(err, ErrUnknownType) {
			t.Errorf("DHCP from port %d to %d: %v, want ErrUnknownType", ports[0], ports[1], err)
		}
	}
	// LLDP: a port ID of 1..255 bytes, a system name of at most 255.
	for _, l := range []LLDP{{Chassis: macA, TTL: 1}, {Chassis: macA, PortID: "p", SysName: strings.Repeat("s", 256)}} {
		if b, err := AppendLLDPFrame([]byte{0xaa}, macA, &l); !errors.Is(err, ErrBadLength) || !bytes.Equal(b, []byte{0xaa}) {
			t.Errorf("LLDP port ID %d bytes, name %d: %v", len(l.PortID), len(l.SysName), err)
		}
	}
	l := LLDP{Chassis: macA, PortID: strings.Repeat("p", 255), TTL: 120, SysName: strings.Repeat("s", 255)}
	f, err := AppendLLDPFrame(nil, macA, &l)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := DecodeLLDP(f); err != nil || got != l {
		t.Errorf("LLDP of 255-byte fields: %v", err)
	}
}

// TestExactVXLANShortUDP: an IPv4 total length that leaves less than a
// UDP and a VXLAN header is truncated, whatever is left (never a panic).
func TestExactVXLANShortUDP(t *testing.T) {
	good, err := VXLANEncap(nil, &VXLANOuter{Src: ipA, Dst: ipB, VNI: 1}, innerFrame())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 4, 6, udpHdrLen, udpHdrLen + VXLANLen - 1} {
		b := bytes.Clone(good)
		ip := b[EthHeaderLen:]
		binary.BigEndian.PutUint16(ip[2:], uint16(ipv4HdrLen+n))
		binary.BigEndian.PutUint16(ip[10:], 0)
		binary.BigEndian.PutUint16(ip[10:], ^fold(sum(0, ip[:ipv4HdrLen])))
		if _, _, err := VXLANDecap(b); !errors.Is(err, ErrTruncated) {
			t.Errorf("%d bytes of UDP: %v, want ErrTruncated", n, err)
		}
	}
}

// TestExactIPv4MappedRefused: an IPv4-mapped IPv6 address is neither an
// IPv4 address for the IPv4 encoders nor an IPv6 one for the VXLAN outer
// header.
func TestExactIPv4MappedRefused(t *testing.T) {
	m1, m2 := netip.AddrFrom16(ipA.As16()), netip.AddrFrom16(ipB.As16())
	if b, err := VXLANEncap([]byte{0xaa}, &VXLANOuter{Src: m1, Dst: m2, VNI: 1}, innerFrame()); !errors.Is(err, ErrBadValue) || !bytes.Equal(b, []byte{0xaa}) {
		t.Errorf("VXLAN over %v: %v, %d bytes", m1, err, len(b))
	}
	if b, err := AppendUDPFrame([]byte{0xaa}, macB, macA, netip.AddrPortFrom(m1, 1), netip.AddrPortFrom(ipB, 2), 0, nil); !errors.Is(err, ErrBadValue) || !bytes.Equal(b, []byte{0xaa}) {
		t.Errorf("UDP from %v: %v, %d bytes", m1, err, len(b))
	}
	if b, err := AppendARPFrame([]byte{0xaa}, Broadcast, 0, &ARP{Op: ARPRequest, SenderMAC: macA, SenderIP: ipA, TargetIP: m2}); !errors.Is(err, ErrBadValue) || !bytes.Equal(b, []byte{0xaa}) {
		t.Errorf("ARP for %v: %v, %d bytes", m2, err, len(b))
	}
}

// TestExactMPLSPopShort: a frame that ends inside the top label is
// truncated.
func TestExactMPLSPopShort(t *testing.T) {
	b := append([]byte(nil), innerFrame()[:12]...)
	b = binary.BigEndian.AppendUint16(b, EtherTypeMPLS)
	b = append(b, 0, 0x01, 0x0f) // three of the label's four bytes
	if _, out, err := DumbNetMPLSPop(b); !errors.Is(err, ErrTruncated) || len(out) != len(b) {
		t.Errorf("17 bytes: %v, want ErrTruncated", err)
	}
}

// TestExactPushExactCapacity: a push into a buffer with exactly the room
// it needs does not allocate ("0 allocations when cap(frame) allows").
func TestExactPushExactCapacity(t *testing.T) {
	src := innerFrame()
	path := []uint8{1, 2, 3}
	buf := make([]byte, len(src), len(src)+len(path)+3)
	var out []byte
	n := testing.AllocsPerRun(50, func() {
		buf = buf[:len(src)]
		copy(buf, src)
		var err error
		if out, err = DumbNetPush(buf, path); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 || &out[0] != &buf[0] {
		t.Errorf("DumbNetPush into exact capacity: %v allocations, same buffer %v", n, &out[0] == &buf[0])
	}
}

// vtag is NewVLANTag for tests, whose values always fit.
func vtag(pcp uint8, dei bool, vid uint16) VLANTag {
	t, err := NewVLANTag(pcp, dei, vid)
	if err != nil {
		panic(err)
	}
	return t
}
