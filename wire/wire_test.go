package wire

import (
	"bytes"
	"errors"
	"net/netip"
	"reflect"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

func mustAxon(t testing.TB, h AxonHeader, payload []byte) []byte {
	t.Helper()
	b, err := h.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, payload...)
}

// TestAxonWalk follows a packet across three Axons and checks the header
// after every hop: forward path consumed from the front, reverse path
// built from the input ports, most recent first, length unchanged.
func TestAxonWalk(t *testing.T) {
	for _, wide := range []bool{false, true} {
		fwd := []uint8{2, 3, 5, 0xf}
		ctlHop := uint8(AxonControlHop4)
		if wide {
			fwd = []uint8{20, 3, 200, AxonControlHop8}
			ctlHop = AxonControlHop8
		}
		in := []uint8{1, 4, 7}
		pkt := mustAxon(t, AxonHeader{Type: AxonControl, Wide: wide, Fwd: fwd}, []byte("payload"))
		hlen := int(pkt[1])
		for i, p := range in {
			if hop, ok := AxonNextHop(pkt); !ok || hop != fwd[i] {
				t.Fatalf("wide=%v hop %d: next hop from the sixth byte %d %v, want %d", wide, i, hop, ok, fwd[i])
			}
			out, err := AxonForward(pkt, p)
			if err != nil {
				t.Fatalf("wide=%v hop %d: %v", wide, i, err)
			}
			if out != fwd[i] {
				t.Fatalf("wide=%v hop %d: out %d, want %d", wide, i, out, fwd[i])
			}
			var h AxonHeader
			payload, err := h.DecodeFromBytes(pkt)
			if err != nil {
				t.Fatalf("wide=%v hop %d: re-parse: %v", wide, i, err)
			}
			wantRev := make([]uint8, 0)
			for j := i; j >= 0; j-- {
				wantRev = append(wantRev, in[j])
			}
			if !bytes.Equal(h.Fwd, fwd[i+1:]) || !bytes.Equal(h.Rev, wantRev) {
				t.Fatalf("wide=%v hop %d: fwd %v rev %v, want %v %v", wide, i, h.Fwd, h.Rev, fwd[i+1:], wantRev)
			}
			if int(pkt[1]) != hlen || string(payload) != "payload" {
				t.Fatalf("wide=%v hop %d: header length %d (was %d), payload %q", wide, i, pkt[1], hlen, payload)
			}
		}
		if hop, _ := AxonNextHop(pkt); hop != ctlHop {
			t.Fatalf("wide=%v: last hop %d, want the control plane", wide, hop)
		}
		if _, err := AxonForward(pkt, ctlHop); err != nil {
			t.Fatal(err)
		}
		if _, err := AxonForward(pkt, 1); !errors.Is(err, ErrNoHops) {
			t.Fatalf("wide=%v: forward with no hops: %v, want ErrNoHops", wide, err)
		}
		Axon(pkt).SetType(AxonError)
		a, err := ParseAxon(pkt)
		if err != nil || a.Type() != AxonError || a.Wide() != wide {
			t.Fatalf("SetType: %v %v wide=%v", err, a.Type(), a.Wide())
		}
	}
}

func TestAxonEncapDecap(t *testing.T) {
	frame := innerFrame()
	hdr := mustAxon(t, AxonHeader{Type: AxonEthernet, Fwd: []uint8{1, 2, 3}}, nil)
	pkt, err := AxonEncap(make([]byte, 0, 256), hdr, frame)
	if err != nil {
		t.Fatal(err)
	}
	got, err := AxonDecap(pkt)
	if err != nil || !bytes.Equal(got, frame) {
		t.Fatalf("decap: %v %x", err, got)
	}
	ctl := mustAxon(t, AxonHeader{Type: AxonControl, Fwd: []uint8{1}}, frame)
	if _, err := AxonDecap(ctl); !errors.Is(err, ErrUnknownType) {
		t.Fatalf("decap of control: %v", err)
	}
	if _, err := AxonEncap(nil, append(hdr, 0), frame); !errors.Is(err, ErrBadLength) {
		t.Fatalf("encap with a header longer than its length field: %v", err)
	}
}

func TestAxonProbeStamp(t *testing.T) {
	body, _ := (&AxonProbeBody{Origin: 1, Seq: 2}).AppendTo(nil)
	pkt := mustAxon(t, AxonHeader{Type: AxonProbe, Options: AxonOptTimestampOut, Fwd: []uint8{2}}, body)
	pkt, err := AxonProbeStamp(pkt, 3, ProbeIn, 10) // option not set: no record
	if err != nil {
		t.Fatal(err)
	}
	pkt, err = AxonProbeStamp(pkt, 2, ProbeOut, 1234)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := ParseAxon(pkt)
	var p AxonProbeBody
	if err := p.DecodeFromBytes(a.Payload()); err != nil {
		t.Fatal(err)
	}
	want := []AxonProbeRecord{{Port: 2, Dir: ProbeOut, Time: 1234}}
	if !reflect.DeepEqual(p.Records, want) {
		t.Fatalf("records %+v, want %+v", p.Records, want)
	}
	data := mustAxon(t, AxonHeader{Type: AxonEthernet, Fwd: []uint8{2}}, innerFrame())
	if out, err := AxonProbeStamp(data, 2, ProbeOut, 1); err != nil || len(out) != len(data) {
		t.Fatalf("non-probe packet stamped: %v", err)
	}
}

func TestAxonMalformed(t *testing.T) {
	good := mustAxon(t, AxonHeader{Type: AxonEthernet, Fwd: []uint8{2, 3, 5}, Rev: []uint8{1, 4}}, nil) // 01 08 03 02 00 23 51 40
	mod := func(i int, v byte) []byte { b := bytes.Clone(good); b[i] = v; return b }
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"four bytes", good[:4], ErrTruncated},
		{"type 0", mod(0, 0), ErrUnknownType},
		{"type 9", mod(0, 9), ErrUnknownType},
		{"length disagrees with counts", mod(1, 9), ErrBadLength},
		{"hop count beyond the header", mod(2, 9), ErrBadLength},
		{"header longer than packet", good[:7], ErrTruncated},
		{"options on a data packet", mod(4, 1), ErrBadValue},
		{"hop 0", mod(5, 0x03), ErrBadHop},
		{"pad nibble set", mod(7, 0x41), ErrBadValue},
	}
	for _, c := range cases {
		if _, err := ParseAxon(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if _, err := AxonForward(bytes.Clone(c.b), 1); err == nil {
			t.Errorf("%s: AxonForward accepted it", c.name)
		}
	}
	if _, err := AxonForward(bytes.Clone(good), 16); !errors.Is(err, ErrBadHop) {
		t.Errorf("input port 16 in 4-bit mode: %v", err)
	}
	if _, err := (&AxonHeader{Type: AxonEthernet, Fwd: []uint8{16}}).AppendTo(nil); !errors.Is(err, ErrBadHop) {
		t.Errorf("encode hop 16 in 4-bit mode: %v", err)
	}
}

// TestDumbNetWalk sends a frame along 2-3-5 and checks each switch's pop,
// then the host's strip: the frame that comes out is the one that went in.
func TestDumbNetWalk(t *testing.T) {
	orig := innerFrame()
	frame := append(make([]byte, 0, 256), orig...)
	frame, err := DumbNetPush(frame, []uint8{2, 3, 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []uint8{2, 3, 5} {
		if _, err := DumbNetStrip(bytes.Clone(frame)); !errors.Is(err, ErrNotAtEnd) {
			t.Fatalf("strip with tags left: %v", err)
		}
		tag, out, err := DumbNetPop(frame)
		if err != nil || tag != want {
			t.Fatalf("pop: %d %v, want %d", tag, err, want)
		}
		frame = out
	}
	if _, _, err := DumbNetPop(frame); !errors.Is(err, ErrNoHops) {
		t.Fatalf("pop at the end marker: %v", err)
	}
	plain, err := DumbNetStrip(frame)
	if err != nil || !bytes.Equal(plain, orig) {
		t.Fatalf("strip: %v\n got %x\nwant %x", err, plain, orig)
	}
}

func TestDumbNetSwitchIDQuery(t *testing.T) {
	probe := &DumbNetProbe{Seq: 1, SrcMAC: macA, Path: []uint8{0, 9}}
	f, _ := AppendControlFrame(nil, macB, macA, probe)
	f, _ = DumbNetPush(f, probe.Path)
	tag, f, err := DumbNetPop(f)
	if err != nil || tag != DumbNetQuery {
		t.Fatalf("pop: %d %v, want the query tag 0", tag, err)
	}
	tags, inner, payload, err := ParseDumbNet(f)
	if err != nil || !bytes.Equal(tags, []uint8{9}) || inner != EtherTypeLocalExp {
		t.Fatalf("rest of path %v inner %#x: %v", tags, inner, err)
	}
	m, err := DecodeMessage(payload)
	if err != nil || !reflect.DeepEqual(m, probe) {
		t.Fatalf("payload %+v %v", m, err)
	}
}

func TestDumbNetMalformed(t *testing.T) {
	f, _ := DumbNetPush(innerFrame(), []uint8{2, 3})
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"short", f[:10], ErrTruncated},
		{"not dumbnet", innerFrame(), ErrUnknownType},
		{"no end marker", f[:16], ErrTruncated},
		{"no inner type", f[:18], ErrTruncated},
		{"no end in 65 tags", append(bytes.Clone(f[:14]), bytes.Repeat([]byte{1}, 70)...), ErrBadLength},
	}
	for _, c := range cases {
		if _, _, _, err := ParseDumbNet(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := DumbNetPush(innerFrame(), []uint8{1, 0xff}); !errors.Is(err, ErrBadHop) {
		t.Errorf("push of the end marker: %v", err)
	}
}

func TestDumbNetMPLSWalk(t *testing.T) {
	orig := innerFrame()
	f, err := DumbNetMPLSPush(bytes.Clone(orig), []uint8{2, 3, 5})
	if err != nil {
		t.Fatal(err)
	}
	// gopacket sees the same label stack.
	p := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.DecodeOptions{SkipDecodeRecovery: true})
	var labels []uint32
	for _, l := range p.Layers() {
		if m, ok := l.(*layers.MPLS); ok {
			labels = append(labels, m.Label)
		}
	}
	if !reflect.DeepEqual(labels, []uint32{2, 3, 5, 255}) || p.Layer(layers.LayerTypeUDP) == nil {
		t.Fatalf("gopacket sees labels %v, UDP %v", labels, p.Layer(layers.LayerTypeUDP) != nil)
	}
	for _, want := range []uint32{2, 3, 5} {
		port, out, err := DumbNetMPLSPop(f)
		if err != nil || port != want {
			t.Fatalf("pop %d %v, want %d", port, err, want)
		}
		f = out
	}
	if _, _, err := DumbNetMPLSPop(f); !errors.Is(err, ErrNoHops) {
		t.Fatalf("pop of the end label: %v", err)
	}
	plain, err := DumbNetMPLSStrip(f)
	if err != nil || !bytes.Equal(plain, orig) {
		t.Fatalf("strip: %v", err)
	}
	arp, _ := AppendARPFrame(nil, Broadcast, 0, &ARP{Op: ARPRequest, SenderMAC: macA, SenderIP: ipA, TargetIP: ipB})
	if _, err := DumbNetMPLSPush(arp, []uint8{1}); !errors.Is(err, ErrUnknownType) {
		t.Fatalf("MPLS push of ARP: %v", err)
	}
}

func TestVLANPushPop(t *testing.T) {
	orig := innerFrame()
	f := append(make([]byte, 0, 128), orig...)
	f, _ = VLANPush(f, EtherTypeVLAN, vtag(5, true, 100))
	f, _ = VLANPush(f, EtherTypeQinQ, vtag(0, false, 4000))
	p := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.DecodeOptions{SkipDecodeRecovery: true})
	var vids []uint16
	for _, l := range p.Layers() {
		if d, ok := l.(*layers.Dot1Q); ok {
			vids = append(vids, d.VLANIdentifier)
		}
	}
	if !reflect.DeepEqual(vids, []uint16{4000, 100}) {
		t.Fatalf("gopacket sees VIDs %v", vids)
	}
	tpid, tag, f, err := VLANPop(f)
	if err != nil || tpid != EtherTypeQinQ || tag.VID() != 4000 {
		t.Fatalf("pop S-tag: %#x %d %v", tpid, tag.VID(), err)
	}
	if err := VLANSet(f, vtag(5, true, 101)); err != nil {
		t.Fatal(err)
	}
	tpid, tag, f, err = VLANPop(f)
	if err != nil || tpid != EtherTypeVLAN || tag.VID() != 101 || tag.PCP() != 5 || !tag.DEI() {
		t.Fatalf("pop C-tag: %#x %v %v", tpid, tag, err)
	}
	if !bytes.Equal(f, orig) {
		t.Fatal("frame changed by push+pop")
	}
	if _, _, _, err := VLANPop(f); !errors.Is(err, ErrUnknownType) {
		t.Fatalf("pop of an untagged frame: %v", err)
	}
}

// TestVXLANAgainstGopacket checks the hand-written encapsulation byte for
// byte against gopacket's serializer, and the decapsulation against
// gopacket's decoder.
func TestVXLANAgainstGopacket(t *testing.T) {
	inner := innerFrame()
	for _, v6 := range []bool{false, true} {
		o := &VXLANOuter{SrcMAC: macA, DstMAC: macB, Src: netip.MustParseAddr("192.0.2.1"), Dst: netip.MustParseAddr("192.0.2.2"), SrcPort: 50001, VNI: 5000}
		if v6 {
			o.Src, o.Dst = ip6A, netip.MustParseAddr("2001:db8::2")
		}
		got, err := VXLANEncap(nil, o, inner)
		if err != nil {
			t.Fatal(err)
		}
		eth := &layers.Ethernet{SrcMAC: hw(macA), DstMAC: hw(macB), EthernetType: layers.EthernetTypeIPv4}
		udp := &layers.UDP{SrcPort: 50001, DstPort: VXLANPort}
		var ip gopacket.SerializableLayer
		if v6 {
			eth.EthernetType = layers.EthernetTypeIPv6
			ip6 := &layers.IPv6{Version: 6, NextHeader: layers.IPProtocolUDP, HopLimit: 64, SrcIP: o.Src.AsSlice(), DstIP: o.Dst.AsSlice()}
			udp.SetNetworkLayerForChecksum(ip6)
			ip = ip6
		} else {
			ip4 := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Flags: layers.IPv4DontFragment, Protocol: layers.IPProtocolUDP, SrcIP: o.Src.AsSlice(), DstIP: o.Dst.AsSlice()}
			udp.SetNetworkLayerForChecksum(ip4)
			ip = ip4
		}
		want, err := SerializeLayers(nil, eth, ip, udp, &layers.VXLAN{ValidIDFlag: true, VNI: 5000}, gopacket.Payload(inner))
		if err != nil {
			t.Fatal(err)
		}
		if !v6 {
			// Over IPv4 the UDP checksum stays 0, as the Linux vxlan device sends it.
			want[EthHeaderLen+ipv4HdrLen+6], want[EthHeaderLen+ipv4HdrLen+7] = 0, 0
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("v6=%v encap differs from gopacket:\n got %x\nwant %x", v6, got, want)
		}
		p := gopacket.NewPacket(got, layers.LayerTypeEthernet, gopacket.DecodeOptions{SkipDecodeRecovery: true})
		vx, ok := p.Layer(layers.LayerTypeVXLAN).(*layers.VXLAN)
		if !ok || vx.VNI != 5000 || !bytes.Equal(vx.Payload, inner) {
			t.Fatalf("gopacket decode: %v", p)
		}
		vni, in, err := VXLANDecap(got)
		if err != nil || vni != 5000 || !bytes.Equal(in, inner) {
			t.Fatalf("decap: %d %v", vni, err)
		}
	}
}

func TestVXLANMalformed(t *testing.T) {
	good, _ := VXLANEncap(nil, &VXLANOuter{Src: ipA, Dst: ipB, VNI: 1}, innerFrame())
	mod := func(i int, v byte) []byte { b := bytes.Clone(good); b[i] = v; return b }
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"short", good[:20], ErrTruncated},
		{"ihl 4", mod(14, 0x44), ErrBadLength},
		{"total length beyond frame", mod(16, 0xff), ErrBadLength},
		{"fragment", mod(20, 0x20), ErrBadValue},
		{"tcp", mod(23, 6), ErrUnknownType},
		{"port 4790", mod(37, 0xb6), ErrUnknownType},
		{"udp length short", mod(39, 4), ErrBadLength},
		{"I flag clear", mod(42, 0), ErrBadValue},
	}
	for _, c := range cases {
		if _, _, err := VXLANDecap(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := VXLANEncap(nil, &VXLANOuter{Src: ipA, Dst: ip6A}, innerFrame()); !errors.Is(err, ErrBadValue) {
		t.Errorf("mixed families: %v", err)
	}
	if _, err := VXLANEncap(nil, &VXLANOuter{Src: ipA, Dst: ipB, VNI: 1 << 24}, innerFrame()); !errors.Is(err, ErrBadValue) {
		t.Errorf("VNI 2^24: %v", err)
	}
}

// TestMessagesTruncated cuts every golden control message at every length:
// each prefix must fail with an error, never panic; one extra byte must
// give ErrTrailing (except the switch ID reply, whose echo runs to the end).
func TestMessagesTruncated(t *testing.T) {
	for _, c := range goldenCases() {
		b, _ := c.build()
		var m []byte
		if c.encap == EncapAxon {
			a, err := ParseAxon(b)
			if err != nil || a.Type() != AxonControl {
				continue
			}
			m = a.Payload()
		} else if f, _ := ParseFrame(b); f.EtherType() == EtherTypeDumbNet {
			_, inner, p, _ := ParseDumbNet(b)
			if inner != EtherTypeLocalExp {
				continue
			}
			m = p
		} else if et, _, off, _ := f.InnerEtherType(); et == EtherTypeLocalExp {
			m = b[off:]
		} else {
			continue
		}
		minLen := len(m)
		if Subtype(m[0]) == SubDumbNetSwitchID {
			minLen = 9
		}
		for n := 0; n < minLen; n++ {
			if _, err := DecodeMessage(m[:n]); err == nil {
				t.Errorf("%s: %d of %d bytes decoded without error", c.name, n, len(m))
			}
		}
		if Subtype(m[0]) != SubDumbNetSwitchID {
			if _, err := DecodeMessage(append(bytes.Clone(m), 0)); !errors.Is(err, ErrTrailing) {
				t.Errorf("%s: trailing byte: %v", c.name, err)
			}
		}
	}
	if _, err := DecodeMessage([]byte{0x7f}); !errors.Is(err, ErrUnknownType) {
		t.Errorf("unknown subtype: %v", err)
	}
}

func TestMessageValidation(t *testing.T) {
	bad := []Message{
		&DumbNetPortStatus{State: 0},
		&DumbNetHostNotify{State: 3},
		&DumbNetProbe{Path: []uint8{1, 0xff}},
		&DumbNetTopoPatch{Links: []DumbNetLink{{Flags: 0x80}}},
		&AxonEtherProbe{Phase: 0},
		&OverlayVPort{Op: RecordAdd, VNI: 1 << 24},
		&OverlayVNet{Op: 3},
		&BackplaneNextHop{Kind: NextHopIngress, Prefix: netip.MustParsePrefix("10.0.0.1/8")},
		&BackplaneNextHop{Kind: NextHopEgress, VLAN: 4096},
	}
	for _, m := range bad {
		if b, err := m.AppendTo([]byte{0xaa}); err == nil || !bytes.Equal(b, []byte{0xaa}) {
			t.Errorf("%T %+v: encoded (%v, %x)", m, m, err, b)
		}
	}
	if _, err := AppendChirpFrame(nil, Broadcast, 1, &Chirp{WantReply: true}); !errors.Is(err, ErrBadValue) {
		t.Errorf("broadcast chirp with want_reply: %v", err)
	}
}

func TestDumbNetPortStatusHop(t *testing.T) {
	m := &DumbNetPortStatus{SwitchID: 1, Port: 2, State: PortDown, HopLimit: 2}
	b, _ := m.AppendTo(nil)
	for i, want := range []bool{true, false, false} {
		fwd, err := DumbNetPortStatusHop(b)
		if err != nil || fwd != want {
			t.Fatalf("step %d: forward %v %v, want %v", i, fwd, err, want)
		}
	}
	var got DumbNetPortStatus
	if err := got.DecodeFromBytes(b); err != nil || got.HopLimit != 0 {
		t.Fatalf("after hops: %+v %v", got, err)
	}
}

func TestStandardHelpers(t *testing.T) {
	a := ARP{Op: ARPReply, SenderMAC: macA, SenderIP: ipA, TargetMAC: macB, TargetIP: ipB}
	f, err := AppendARPFrame(nil, macB, 7, &a)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := DecodeARP(f); err != nil || got != a {
		t.Fatalf("ARP over VLAN 7: %+v %v", got, err)
	}
	if _, err := DecodeARP(innerFrame()); !errors.Is(err, ErrUnknownType) {
		t.Fatalf("ARP from a UDP frame: %v", err)
	}
	if _, err := DecodeARP(f[:20]); err == nil {
		t.Fatal("truncated ARP decoded")
	}
	if _, err := DecodeDHCP(innerFrame()); !errors.Is(err, ErrUnknownType) {
		t.Fatalf("DHCP from port 5001: %v", err)
	}
	if _, err := DecodeLLDP(innerFrame()); err == nil {
		t.Fatal("LLDP from a UDP frame")
	}
}

func TestHeaderStrings(t *testing.T) {
	a := &AxonHeader{Type: AxonProbe, Wide: true, Options: 3, Fwd: []uint8{2, 3}, Rev: []uint8{1}}
	if got, want := a.String(), "probe fwd [2 3] rev [1] wide opts 0x03"; got != want {
		t.Errorf("AxonHeader.String() = %q, want %q", got, want)
	}
	d := &DumbNetHeader{Tags: []uint8{2, 3, 5}, InnerType: EtherTypeIPv4}
	if got, want := d.String(), "2-3-5-∅ 0x0800"; got != want {
		t.Errorf("DumbNetHeader.String() = %q, want %q", got, want)
	}
}

// TestAxonProbeStampBadBody: a probe unit must not stamp a body that the
// probe decoder rejects (records not a whole number of 10-byte records):
// the stamped packet would still be undecodable, and the stamp misplaced.
func TestAxonProbeStampBadBody(t *testing.T) {
	body, _ := (&AxonProbeBody{Origin: 1, Seq: 2}).AppendTo(nil)
	pkt := mustAxon(t, AxonHeader{Type: AxonProbe, Options: AxonOptTimestampIn, Fwd: []uint8{2}}, append(body, 1, 2, 3))
	out, err := AxonProbeStamp(pkt, 3, ProbeIn, 10)
	if !errors.Is(err, ErrBadLength) || len(out) != len(pkt) {
		t.Fatalf("stamp of a body with 3 stray bytes: %d bytes (was %d), %v; want ErrBadLength", len(out), len(pkt), err)
	}
}

// TestDumbNetPortStatusHopValidates: a switch re-broadcasts only a
// notification the hosts can decode; the hop helper checks what
// DecodeMessage checks about the state, and names a wrong subtype as such.
func TestDumbNetPortStatusHopValidates(t *testing.T) {
	good, _ := (&DumbNetPortStatus{SwitchID: 1, Port: 2, State: PortUp, HopLimit: 3}).AppendTo(nil)
	badState := bytes.Clone(good)
	badState[11] = 7
	if fwd, err := DumbNetPortStatusHop(badState); !errors.Is(err, ErrBadValue) || fwd || badState[12] != 3 {
		t.Errorf("state 7: forward %v, hop limit %d, %v; want ErrBadValue and the message untouched", fwd, badState[12], err)
	}
	other := bytes.Clone(good)
	other[0] = byte(SubDumbNetHostNotify)
	if _, err := DumbNetPortStatusHop(other); !errors.Is(err, ErrUnknownType) {
		t.Errorf("subtype 0x24: %v, want ErrUnknownType", err)
	}
	if _, err := DumbNetPortStatusHop(good[:16]); !errors.Is(err, ErrBadLength) {
		t.Errorf("16 bytes: %v, want ErrBadLength", err)
	}
}

// TestOverlayVNetNameUTF8: the name is UTF-8 (docs/wire.md); bytes that
// are not were accepted both ways, and shown by Wireshark as U+FFFD, so
// the capture and the decoded record disagreed.
func TestOverlayVNetNameUTF8(t *testing.T) {
	m := &OverlayVNet{Op: RecordAdd, VNI: 5000, VLAN: 20, Name: "\x9ecme"}
	if b, err := m.AppendTo([]byte{0xaa}); !errors.Is(err, ErrBadValue) || len(b) != 1 {
		t.Errorf("encode of a non-UTF-8 name: %x, %v; want ErrBadValue and b unchanged", b, err)
	}
	good, err := (&OverlayVNet{Op: RecordAdd, VNI: 5000, VLAN: 20, Name: "ačme"}).AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeMessage(good); err != nil {
		t.Fatalf("UTF-8 name: %v", err)
	}
	bad := bytes.Clone(good)
	bad[len(bad)-4] = 0x9e // the first byte of "č" becomes a lone continuation byte
	if _, err := DecodeMessage(bad); !errors.Is(err, ErrBadValue) {
		t.Errorf("decode of a non-UTF-8 name: %v, want ErrBadValue", err)
	}
}
