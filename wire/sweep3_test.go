package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// Tests from a third mutation sweep of the package: each pins an outcome
// that a mutant changed without failing the earlier tests (a field's edge,
// a reserved bit, a sentinel, a view's exact bytes, a decoded value that
// must not alias its input, a struct reused across decodes).

// TestSweep3SentinelsDistinct: every sentinel is its own error, so a
// switch handed a host's frame (ErrNoHops) and a host handed a frame with
// tags left (ErrNotAtEnd) count different drops.
func TestSweep3SentinelsDistinct(t *testing.T) {
	all := []error{ErrTruncated, ErrBadLength, ErrUnknownType, ErrBadHop, ErrNoHops, ErrNotAtEnd, ErrBadValue, ErrTrailing}
	for i, a := range all {
		for j, b := range all {
			if i != j && errors.Is(a, b) {
				t.Errorf("errors.Is(%v, %v)", a, b)
			}
		}
	}
	if _, _, err := DumbNetPop(dumbnetFrame(DumbNetEnd, 0x08, 0x00)); !errors.Is(err, ErrNoHops) || errors.Is(err, ErrNotAtEnd) {
		t.Errorf("pop at the end marker: %v, want ErrNoHops only", err)
	}
	if _, err := DumbNetStrip(dumbnetFrame(3, DumbNetEnd, 0x08, 0x00)); !errors.Is(err, ErrNotAtEnd) || errors.Is(err, ErrNoHops) {
		t.Errorf("strip with a tag left: %v, want ErrNotAtEnd only", err)
	}
}

// TestSweep3MessagePrefixesTruncated: every strict prefix of every message
// is ErrTruncated, in a buffer with no spare capacity (a read past len that
// stays within cap would otherwise go unseen), including messages that end
// in an IPv4 address.
func TestSweep3MessagePrefixesTruncated(t *testing.T) {
	var msgs [][]byte
	for _, g := range loadGoldens(t) {
		if m := messageOf(g, g.bytes(t)); m != nil {
			msgs = append(msgs, m)
		}
	}
	msgs = append(msgs,
		encode(t, &DumbNetPathQuery{QueryID: 1, Src: macA, Dst: macB, DstIP: ipA}),
		encode(t, &OverlayVPort{Op: RecordAdd, Switch: 1, MAC: macA, VNI: 5, Port: 1, IP: ipA}),
		encode(t, &AxonARP{Seq: 1, SrcIP: ipA, TgtIP: ip6A}),
	)
	for _, m := range msgs {
		minLen := len(m)
		if Subtype(m[0]) == SubDumbNetSwitchID {
			minLen = 9
		}
		for n := range minLen {
			b := make([]byte, n)
			copy(b, m)
			if _, err := DecodeMessage(b); !errors.Is(err, ErrTruncated) {
				t.Errorf("%v cut to %d of %d bytes: %v, want ErrTruncated", Subtype(m[0]), n, len(m), err)
			}
		}
	}
}

// TestSweep3MappedAddressKept: an IPv4-mapped IPv6 address travels as the
// 16-byte address it is and comes back as one; it is not folded to IPv4
// either way.
func TestSweep3MappedAddressKept(t *testing.T) {
	c := &Chirp{IP: netip.AddrFrom16(ipA.As16()), MAC: macA, EdgeSwitch: 1}
	b := encode(t, c)
	if b[2] != 16 || len(b) != 2+17+6+8 {
		t.Fatalf("mapped address encoded with length byte %d, %d bytes", b[2], len(b))
	}
	got, err := DecodeMessage(b)
	if err != nil || !reflect.DeepEqual(got, c) || !got.(*Chirp).IP.Is4In6() {
		t.Errorf("mapped address decoded as %+v, %v", got, err)
	}
}

// TestSweep3MACBits: the group bit is bit 0 of the first byte, the
// locally administered bit is bit 1.
func TestSweep3MACBits(t *testing.T) {
	for _, c := range []struct {
		m                      MAC
		local, multi, broadcst bool
	}{
		{macA, true, false, false},
		{MAC{0x01, 0x00, 0x5e, 0, 0, 1}, false, true, false},
		{MAC{0x03, 0, 0, 0, 0, 1}, true, true, false},
		{MAC{0x00, 0x1b, 0x21, 0, 0, 1}, false, false, false},
		{Broadcast, true, true, true},
	} {
		if c.m.IsLocal() != c.local || c.m.IsMulticast() != c.multi || c.m.IsBroadcast() != c.broadcst {
			t.Errorf("%v: local %v multicast %v broadcast %v", c.m, c.m.IsLocal(), c.m.IsMulticast(), c.m.IsBroadcast())
		}
	}
}

// TestSweep3FrameView: a bare 14-byte header is a frame with an empty
// payload; the accessors and setters touch their own bytes only.
func TestSweep3FrameView(t *testing.T) {
	f, err := ParseFrame(innerFrame()[:EthHeaderLen])
	if err != nil || len(f.Payload()) != 0 {
		t.Fatalf("14-byte frame: %v, payload %d bytes", err, len(f.Payload()))
	}
	orig := innerFrame()
	g := Frame(bytes.Clone(orig))
	if !bytes.Equal(g.Payload(), orig[EthHeaderLen:]) {
		t.Errorf("payload %x, want %x", g.Payload(), orig[EthHeaderLen:])
	}
	g.SetSrc(macC)
	if g.Src() != macC || g.Dst() != macB {
		t.Errorf("after SetSrc: dst %v src %v", g.Dst(), g.Src())
	}
	g.SetDst(Broadcast)
	g.SetEtherType(EtherTypeLocalExp)
	want := AppendEthernet(nil, Broadcast, macC, EtherTypeLocalExp, orig[EthHeaderLen:])
	if !bytes.Equal(g, want) {
		t.Errorf("after the setters: %x, want %x", []byte(g), want)
	}
}

// TestSweep3VLAN: the DEI bit is bit 12 whatever the priority; a push
// needs a whole Ethernet header and an 802.1Q/802.1ad TPID; VLANSet
// refuses an untagged frame of any length and leaves it alone.
func TestSweep3VLAN(t *testing.T) {
	if !vtag(4, true, 1).DEI() || vtag(1, false, 1).DEI() || vtag(7, false, 0xfff).DEI() {
		t.Error("DEI read from the wrong bit")
	}
	for _, n := range []int{12, 13} {
		in := innerFrame()[:n]
		if out, err := VLANPush(bytes.Clone(in), EtherTypeVLAN, 1); !errors.Is(err, ErrTruncated) || len(out) != n {
			t.Errorf("push onto %d bytes: %d bytes, %v; want ErrTruncated", n, len(out), err)
		}
	}
	if out, err := VLANPush(innerFrame(), EtherTypeMPLS, 1); !errors.Is(err, ErrUnknownType) || !bytes.Equal(out, innerFrame()) {
		t.Errorf("push with TPID 0x8847: %v", err)
	}
	f := innerFrame()
	if err := VLANSet(f, vtag(0, false, 5)); !errors.Is(err, ErrUnknownType) || !bytes.Equal(f, innerFrame()) {
		t.Errorf("VLANSet on an untagged frame: %v", err)
	}
}

// TestSweep3SubtypeString: names for known kinds, hex for the others.
func TestSweep3SubtypeString(t *testing.T) {
	if s := Subtype(0x99).String(); s != "Subtype(0x99)" {
		t.Errorf("Subtype(0x99).String() = %q", s)
	}
	if s := SubBackplaneNextHop.String(); s != "backplane-nexthop" {
		t.Errorf("SubBackplaneNextHop.String() = %q", s)
	}
}

// TestSweep3AxonHeaderEncodeRefuses: the encoder refuses an undefined
// option bit on a probe and hop 0 on either path, leaving b alone.
func TestSweep3AxonHeaderEncodeRefuses(t *testing.T) {
	for _, c := range []struct {
		h    AxonHeader
		want error
	}{
		{AxonHeader{Type: AxonProbe, Options: 0x04, Fwd: []uint8{1}}, ErrBadValue},
		{AxonHeader{Type: AxonProbe, Options: 0x80 | AxonOptTimestampIn, Fwd: []uint8{1}}, ErrBadValue},
		{AxonHeader{Type: AxonEthernet, Fwd: []uint8{1, 0}}, ErrBadHop},
		{AxonHeader{Type: AxonEthernet, Fwd: []uint8{1}, Rev: []uint8{0}}, ErrBadHop},
		{AxonHeader{Type: AxonEthernet, Wide: true, Fwd: []uint8{0}}, ErrBadHop},
	} {
		if b, err := c.h.AppendTo([]byte{0xaa}); !errors.Is(err, c.want) || !bytes.Equal(b, []byte{0xaa}) {
			t.Errorf("%v: %v, %x; want %v and b unchanged", &c.h, err, b, c.want)
		}
	}
}

// TestSweep3AxonHeaderDecodeReuse: decoding into a header that held a
// longer packet gives exactly the new header, in the same backing arrays.
func TestSweep3AxonHeaderDecodeReuse(t *testing.T) {
	frame := innerFrame()
	long := mustAxon(t, AxonHeader{Type: AxonEthernet, Fwd: []uint8{1, 2, 3}, Rev: []uint8{4, 5}}, frame)
	short := mustAxon(t, AxonHeader{Type: AxonProbe, Options: AxonOptTimestampOut, Fwd: []uint8{6}}, frame)
	h := AxonHeader{Fwd: make([]uint8, 0, 8), Rev: make([]uint8, 0, 8)}
	fwd, rev := h.Fwd[:1], h.Rev[:1]
	if _, err := h.DecodeFromBytes(long); err != nil {
		t.Fatal(err)
	}
	p, err := h.DecodeFromBytes(short)
	if err != nil || h.Type != AxonProbe || h.Options != AxonOptTimestampOut || !bytes.Equal(h.Fwd, []uint8{6}) || len(h.Rev) != 0 || !bytes.Equal(p, frame) {
		t.Fatalf("decoded over a longer header: %v, %v", &h, err)
	}
	if _, err := h.DecodeFromBytes(long); err != nil || &h.Fwd[0] != &fwd[0] || &h.Rev[0] != &rev[0] {
		t.Errorf("capacity of Fwd and Rev not reused (%v)", err)
	}
}

// TestSweep3AxonEdges: a bare header with no hops and no payload is a
// valid packet; the type is all seven bits; reverse hops are found with no
// forward hop left; hop 0 in the sixth byte is no next hop; only an
// Ethernet packet decapsulates.
func TestSweep3AxonEdges(t *testing.T) {
	if a, err := ParseAxon([]byte{byte(AxonError), AxonFixedLen, 0, 0, 0}); err != nil || len(a.Payload()) != 0 {
		t.Errorf("bare 5-byte header: %v", err)
	}
	pkt := mustAxon(t, AxonHeader{Type: AxonEthernet, Fwd: []uint8{2}}, innerFrame())
	for _, ty := range []byte{0x41, AxonWideFlag | 0x41, 0x44} {
		if _, err := ParseAxon(patched(pkt, 0, ty)); !errors.Is(err, ErrUnknownType) {
			t.Errorf("type byte %#x: %v, want ErrUnknownType", ty, err)
		}
	}
	for _, wide := range []bool{false, true} {
		b := mustAxon(t, AxonHeader{Type: AxonError, Wide: wide, Rev: []uint8{3, 7, 9}}, innerFrame())
		a, err := ParseAxon(b)
		if err != nil || a.RevHop(0) != 3 || a.RevHop(1) != 7 || a.RevHop(2) != 9 {
			t.Errorf("wide %v: reverse hops with no forward hop: %v", wide, err)
		}
	}
	for _, ty := range []byte{byte(AxonEthernet), AxonWideFlag | byte(AxonEthernet)} {
		if hop, ok := AxonNextHop([]byte{ty, 6, 1, 0, 0, 0x00}); ok {
			t.Errorf("type byte %#x: next hop 0 reported as %d, ok", ty, hop)
		}
	}
	for _, ty := range []AxonType{AxonControl, AxonError, AxonProbe} {
		b := mustAxon(t, AxonHeader{Type: ty, Fwd: []uint8{2}}, innerFrame())
		if f, err := AxonDecap(b); !errors.Is(err, ErrUnknownType) {
			t.Errorf("decap of a %v packet: %d bytes, %v; want ErrUnknownType", ty, len(f), err)
		}
	}
}

// TestSweep3AxonForwardHeaderOnly: forwarding a packet that is all
// header (no reverse hop yet, no payload) in a buffer with no spare
// capacity stays inside the header.
func TestSweep3AxonForwardHeaderOnly(t *testing.T) {
	for _, wide := range []bool{false, true} {
		h := AxonHeader{Type: AxonControl, Wide: wide, Fwd: []uint8{3, 4}}
		b := mustAxon(t, h, nil)
		pkt := make([]byte, len(b))
		copy(pkt, b)
		out, err := AxonForward(pkt, 9)
		var got AxonHeader
		if _, derr := got.DecodeFromBytes(pkt); err != nil || derr != nil || out != 3 || !bytes.Equal(got.Fwd, []uint8{4}) || !bytes.Equal(got.Rev, []uint8{9}) {
			t.Errorf("wide %v: out %d, %v, header %v (%v)", wide, out, err, &got, derr)
		}
	}
}

// TestSweep3FlagBits: every flag bit the hello and the chirp do not
// define is refused, one at a time.
func TestSweep3FlagBits(t *testing.T) {
	hello := encode(t, &AxonHello{AxonID: 1, Port: 2})
	chirp := encode(t, &Chirp{IP: ipA, MAC: macA, EdgeSwitch: 1})
	for bit := 0; bit < 8; bit++ {
		f := byte(1) << bit
		if f&^(axonHelloReply|axonHelloWide) != 0 {
			if _, err := DecodeMessage(patched(hello, len(hello)-1, f)); !errors.Is(err, ErrBadValue) {
				t.Errorf("hello flags %#02x: %v, want ErrBadValue", f, err)
			}
		}
		if f != chirpWantReply {
			if _, err := DecodeMessage(patched(chirp, 1, f)); !errors.Is(err, ErrBadValue) {
				t.Errorf("chirp flags %#02x: %v, want ErrBadValue", f, err)
			}
		}
	}
}

// TestSweep3DumbNetEdges: an end marker after 65 tags is still too long;
// a pop needs a tag byte; a strip refuses any tag left, 0 included; the
// header's String writes tags in decimal.
func TestSweep3DumbNetEdges(t *testing.T) {
	long := dumbnetFrame(append(bytes.Repeat([]byte{1}, DumbNetMaxTags+1), DumbNetEnd, 0x08, 0x00)...)
	if tags, _, _, err := ParseDumbNet(long); !errors.Is(err, ErrBadLength) {
		t.Errorf("65 tags then the end marker: %d tags, %v; want ErrBadLength", len(tags), err)
	}
	if _, out, err := DumbNetPop(dumbnetFrame()); !errors.Is(err, ErrTruncated) || len(out) != EthHeaderLen {
		t.Errorf("pop of a bare 14-byte header: %v, want ErrTruncated", err)
	}
	if out, err := DumbNetStrip(dumbnetFrame(DumbNetQuery, DumbNetEnd, 0x08, 0x00)); !errors.Is(err, ErrNotAtEnd) {
		t.Errorf("strip with tag 0 left: %d bytes, %v; want ErrNotAtEnd", len(out), err)
	}
	h := DumbNetHeader{Tags: []uint8{12, 0, 254}, InnerType: EtherTypeLocalExp}
	if s := h.String(); s != "12-0-254-∅ 0x88b5" {
		t.Errorf("String() = %q", s)
	}
}

// mplsFrame pushes path onto frame and overwrites label entry i with e.
func mplsFrame(t *testing.T, frame []byte, path []uint8, i int, e uint32) []byte {
	t.Helper()
	b, err := DumbNetMPLSPush(bytes.Clone(frame), path)
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(b[EthHeaderLen+MPLSLabelLen*i:], e)
	return b
}

// TestSweep3MPLSEdges: the bottom-of-stack bit, not the label, stops a
// pop; labels keep their 20 bits; the end label is 255 exactly; IPv6
// round trips and other IP versions are refused; a strip needs the IP
// version byte.
func TestSweep3MPLSEdges(t *testing.T) {
	v4 := innerFrame()
	if port, out, err := DumbNetMPLSPop(mplsFrame(t, v4, nil, 0, mplsEntry(5, true))); !errors.Is(err, ErrNoHops) || port != 5 || len(out) != len(v4)+MPLSLabelLen {
		t.Errorf("bottom label 5: port %d, %v; want ErrNoHops", port, err)
	}
	if port, _, err := DumbNetMPLSPop(mplsFrame(t, v4, []uint8{1}, 0, mplsEntry(0x12345, false))); err != nil || port != 0x12345 {
		t.Errorf("label 0x12345: port %#x, %v", port, err)
	}
	if _, err := DumbNetMPLSStrip(mplsFrame(t, v4, nil, 0, mplsEntry(0x1ff, true))); !errors.Is(err, ErrNotAtEnd) {
		t.Errorf("bottom label 0x1ff: %v, want ErrNotAtEnd", err)
	}
	v6 := AppendEthernet(nil, macB, macA, EtherTypeIPv6, append([]byte{0x60}, make([]byte, ipv6HdrLen-1)...))
	f, err := DumbNetMPLSPush(bytes.Clone(v6), []uint8{4})
	if err != nil {
		t.Fatal(err)
	}
	if _, f, err = DumbNetMPLSPop(f); err != nil {
		t.Fatal(err)
	}
	if out, err := DumbNetMPLSStrip(f); err != nil || !bytes.Equal(out, v6) {
		t.Errorf("IPv6 round trip: %x, %v", out, err)
	}
	v5 := mplsFrame(t, v4, nil, 0, mplsEntry(DumbNetEnd, true))
	v5[EthHeaderLen+MPLSLabelLen] = 0x55
	if _, err := DumbNetMPLSStrip(v5); !errors.Is(err, ErrUnknownType) {
		t.Errorf("IP version 5: %v, want ErrUnknownType", err)
	}
	bare := mplsFrame(t, v4, nil, 0, mplsEntry(DumbNetEnd, true))[:EthHeaderLen+MPLSLabelLen]
	if out, err := DumbNetMPLSStrip(bare); !errors.Is(err, ErrTruncated) || len(out) != len(bare) {
		t.Errorf("strip of 18 bytes: %v, want ErrTruncated", err)
	}
}

// TestSweep3DecodeDoesNotAlias: decoded tags and echoes are copies; an
// element may keep them after the frame's buffer is reused.
func TestSweep3DecodeDoesNotAlias(t *testing.T) {
	b := encode(t, &DumbNetSwitchID{SwitchID: 1, Echo: []byte{1, 2, 3}})
	var id DumbNetSwitchID
	if err := id.DecodeFromBytes(b); err != nil {
		t.Fatal(err)
	}
	b[9] = 0xee
	if !bytes.Equal(id.Echo, []byte{1, 2, 3}) {
		t.Errorf("echo follows the input buffer: %x", id.Echo)
	}
	f, err := DumbNetPush(innerFrame(), []uint8{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	var h DumbNetHeader
	if _, err := h.DecodeFromBytes(f); err != nil {
		t.Fatal(err)
	}
	f[EthHeaderLen] = 9
	if !bytes.Equal(h.Tags, []uint8{1, 2}) {
		t.Errorf("tags follow the input buffer: %v", h.Tags)
	}
}

// TestSweep3PortStatusHopZeroLimit: a bad state is refused even when the
// hop limit is already 0.
func TestSweep3PortStatusHopZeroLimit(t *testing.T) {
	ps := encode(t, &DumbNetPortStatus{SwitchID: 1, Port: 2, State: PortDown})
	ps[11] = 0
	if fwd, err := DumbNetPortStatusHop(ps); !errors.Is(err, ErrBadValue) || fwd {
		t.Errorf("state 0, hop limit 0: forward %v, %v; want ErrBadValue", fwd, err)
	}
}

// TestSweep3EmptyLinksNil: a patch or a path graph without links decodes
// with nil Links, as it was encoded.
func TestSweep3EmptyLinksNil(t *testing.T) {
	for _, m := range []Message{&DumbNetTopoPatch{Version: 3}, &DumbNetPathReply{QueryID: 2, Src: macA}} {
		got, err := DecodeMessage(encode(t, m))
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Errorf("%T without links: %+v, %v", m, got, err)
		}
	}
}

// TestSweep3BackplaneEdges: host routes (/32, /128) are valid ingress
// prefixes; an egress entry decodes into a struct that held an ingress
// one.
func TestSweep3BackplaneEdges(t *testing.T) {
	for _, p := range []string{"10.0.0.1/32", "2001:db8::1/128", "0.0.0.0/0"} {
		m := &BackplaneNextHop{Kind: NextHopIngress, Prefix: netip.MustParsePrefix(p), VLAN: 7, MAC: macA}
		got, err := DecodeMessage(encode(t, m))
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Errorf("ingress %s: %+v, %v", p, got, err)
		}
	}
	var m BackplaneNextHop
	if err := m.DecodeFromBytes(encode(t, &BackplaneNextHop{Kind: NextHopIngress, Prefix: netip.MustParsePrefix("10.1.0.0/16"), VLAN: 1, MAC: macA})); err != nil {
		t.Fatal(err)
	}
	egress := BackplaneNextHop{Kind: NextHopEgress, VLAN: 2, MAC: macB, Port: 3}
	if err := m.DecodeFromBytes(encode(t, &egress)); err != nil || m != egress {
		t.Errorf("egress over ingress: %+v, %v", m, err)
	}
}

// flakyWriter fails its second Write only.
type flakyWriter struct {
	calls int
	buf   bytes.Buffer
}

func (w *flakyWriter) Write(p []byte) (int, error) {
	w.calls++
	if w.calls == 2 {
		return 0, errors.New("disk full")
	}
	return w.buf.Write(p)
}

// TestSweep3Pcap: the file header byte by byte (nanosecond magic, version
// 2.4, snap length 262144); a frame above the snap length is cut to it in
// an Ethernet capture; after a failed write the writer stays failed even
// if the underlying writer recovers, so no record is written half.
func TestSweep3Pcap(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewPcapWriter(&buf, LinkTypeEthernet, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	wantHdr := []byte{0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 0, 0}
	if !bytes.Equal(buf.Bytes(), wantHdr) {
		t.Fatalf("file header %x, want %x", buf.Bytes(), wantHdr)
	}
	big := bytes.Repeat([]byte{0xab}, 300000)
	if err := w.WriteEthernet(0, big); err != nil {
		t.Fatal(err)
	}
	rec := buf.Bytes()[len(wantHdr):]
	if incl, orig := binary.LittleEndian.Uint32(rec[8:]), binary.LittleEndian.Uint32(rec[12:]); incl != 262144 || orig != 300000 || len(rec) != 16+262144 {
		t.Errorf("record of 300000 bytes: incl %d orig %d, %d bytes written", incl, orig, len(rec))
	}

	fw := &flakyWriter{}
	w, err = NewPcapWriter(fw, LinkTypeEthernet, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	err1 := w.WriteEthernet(0, innerFrame())
	err2 := w.WriteEthernet(0, innerFrame())
	if err1 == nil || err2 != err1 || fw.buf.Len() != 24 {
		t.Errorf("after a failed write: %v then %v, %d bytes in the file; want the same error and the header only", err1, err2, fw.buf.Len())
	}
}

// vxlanV4 and vxlanV6 are valid VXLAN frames around innerFrame, VNI 7.
func vxlanV4(t *testing.T) []byte {
	t.Helper()
	b, err := VXLANEncap(nil, &VXLANOuter{SrcMAC: macA, DstMAC: macB, Src: ipA, Dst: ipB, SrcPort: 50000, VNI: 7}, innerFrame())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func vxlanV6(t *testing.T) []byte {
	t.Helper()
	b, err := VXLANEncap(nil, &VXLANOuter{SrcMAC: macA, DstMAC: macB, Src: ip6A, Dst: ip6B, SrcPort: 50000, VNI: 7}, innerFrame())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSweep3VXLANEncapShortInner: the inner frame needs a whole Ethernet
// header.
func TestSweep3VXLANEncapShortInner(t *testing.T) {
	if b, err := VXLANEncap([]byte{0xaa}, &VXLANOuter{Src: ipA, Dst: ipB, VNI: 1}, innerFrame()[:EthHeaderLen-1]); !errors.Is(err, ErrTruncated) || !bytes.Equal(b, []byte{0xaa}) {
		t.Errorf("13-byte inner frame: %v, %d bytes", err, len(b))
	}
}

// TestSweep3VXLANDecapHeaderChecks: outer header values the decapsulator
// refuses, one field at a time (RFC 7348: the I flag, port 4789; no
// fragments, no IPv6 extension headers as docs/wire.md says).
func TestSweep3VXLANDecapHeaderChecks(t *testing.T) {
	v4, v6 := vxlanV4(t), vxlanV6(t)
	ip4, udp4 := EthHeaderLen, EthHeaderLen+ipv4HdrLen
	ip6, udp6 := EthHeaderLen, EthHeaderLen+ipv6HdrLen
	// IPv6 with 4 bytes of Ethernet padding and a UDP length reaching
	// into it.
	padded6 := append(bytes.Clone(v6), 0, 0, 0, 0)
	binary.BigEndian.PutUint16(padded6[udp6+4:], binary.BigEndian.Uint16(v6[udp6+4:])+1)
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"IP version 5", patched(v4, ip4, 0x55), ErrBadValue},
		{"IPv4 total length 19, below the header", patched(v4, ip4+2, 0, 19), ErrBadLength},
		{"fragment offset 4096*8", patched(v4, ip4+6, 0x50, 0x00), ErrBadValue},
		{"more fragments", patched(v4, ip4+6, 0x60, 0x00), ErrBadValue},
		{"IP protocol 0", patched(v4, ip4+9, 0), ErrUnknownType},
		{"IPv6 next header 0 (hop-by-hop)", patched(v6, ip6+6, 0), ErrUnknownType},
		{"IPv6 UDP length past the payload", padded6, ErrBadLength},
		{"UDP port 8472", patched(v4, udp4+2, 0x21, 0x18), ErrUnknownType},
		{"UDP length 15", patched(v4, udp4+4, 0, 15), ErrBadLength},
		{"flags 0xf7, no I", patched(v4, udp4+udpHdrLen, 0xf7), ErrBadValue},
	}
	for _, c := range cases {
		if vni, in, err := VXLANDecap(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s: vni %d, %d inner bytes, %v; want %v", c.name, vni, len(in), err, c.want)
		}
	}
	// The reserved bits around the I flag are ignored on receipt.
	if vni, in, err := VXLANDecap(patched(v4, udp4+udpHdrLen, 0xff, 0xff, 0xff, 0xff, 0, 0, 7, 0xff)); err != nil || vni != 7 || !bytes.Equal(in, innerFrame()) {
		t.Errorf("reserved bits set: vni %d, %v", vni, err)
	}
}

// TestSweep3TCPFlags: each flag round trips alone, URG included.
func TestSweep3TCPFlags(t *testing.T) {
	for _, f := range []TCPFlags{TCPFin, TCPSyn, TCPRst, TCPPsh, TCPAck, TCPUrg, TCPFin | TCPSyn | TCPRst | TCPPsh | TCPAck | TCPUrg} {
		b, err := AppendTCPFrame(nil, macB, macA, ipA, ipB, 0, &TCPSegment{SrcPort: 1, DstPort: 2, Flags: f, Window: 100})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, s, err := DecodeTCP(b); err != nil || s.Flags != f {
			t.Errorf("flags %#02x decoded as %#02x, %v", f, s.Flags, err)
		}
	}
}

// TestSweep3LLDPChassisSubtype: a 6-byte chassis ID that is not a MAC
// (here a locally assigned one) is refused.
func TestSweep3LLDPChassisSubtype(t *testing.T) {
	f, err := SerializeLayers(nil,
		&layers.Ethernet{SrcMAC: hw(macA), DstMAC: hw(LLDPMulticast), EthernetType: layers.EthernetTypeLinkLayerDiscovery},
		&layers.LinkLayerDiscovery{
			ChassisID: layers.LLDPChassisID{Subtype: layers.LLDPChassisIDSubTypeLocal, ID: []byte("sw0001")},
			PortID:    layers.LLDPPortID{Subtype: layers.LLDPPortIDSubtypeIfaceName, ID: []byte("p1")},
			TTL:       120,
		})
	if err != nil {
		t.Fatal(err)
	}
	if l, err := DecodeLLDP(f); !errors.Is(err, ErrUnknownType) {
		t.Errorf("chassis ID subtype local: %+v, %v; want ErrUnknownType", l, err)
	}
}
