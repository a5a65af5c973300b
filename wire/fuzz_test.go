package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"reflect"
	"testing"
)

// Fuzz targets: one per decoder. Each checks that no input panics or reads
// past the buffer (the race detector and bounds checks would catch it),
// that decode(encode(x)) == x, and, for the canonical formats (every
// edgefabric header and message), that encode(decode(b)) == b. The golden
// vectors seed every target. Run one for 60 s with, e.g.,
//
//	go test ./wire -run '^$' -fuzz '^FuzzAxon$' -fuzztime 60s

// seed adds the golden bytes, and the parts extract takes from them.
func seed(f *testing.F, extract func(g golden, b []byte) []byte) {
	for _, g := range loadGoldens(f) {
		b := g.bytes(f)
		if extract != nil {
			b = extract(g, b)
		}
		if b != nil {
			f.Add(b)
		}
	}
}

func axonOnly(g golden, b []byte) []byte {
	if g.Encap != "axon" {
		return nil
	}
	return b
}

func ethOnly(g golden, b []byte) []byte {
	if g.Encap != "ethernet" {
		return nil
	}
	return b
}

// messageOf returns the control message inside a golden frame, if any.
func messageOf(g golden, b []byte) []byte {
	if g.Encap == "axon" {
		a, err := ParseAxon(b)
		if err != nil || a.Type() != AxonControl {
			return nil
		}
		return a.Payload()
	}
	f, err := ParseFrame(b)
	if err != nil {
		return nil
	}
	if f.EtherType() == EtherTypeDumbNet {
		_, inner, p, err := ParseDumbNet(b)
		if err != nil || inner != EtherTypeLocalExp {
			return nil
		}
		return p
	}
	if et, _, off, err := f.InnerEtherType(); err == nil && et == EtherTypeLocalExp {
		return b[off:]
	}
	return nil
}

func FuzzAxon(f *testing.F) {
	seed(f, axonOnly)
	// Short golden packets padded to 60 bytes, as a NIC sends them.
	seed(f, func(g golden, b []byte) []byte {
		if g.Encap != "axon" || len(b) >= MinFrameLen {
			return nil
		}
		return append(b, make([]byte, MinFrameLen-len(b))...)
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		hop, hopOK := AxonNextHop(b)
		a, err := ParseAxon(b)
		if err != nil {
			_, ferr := AxonForward(bytes.Clone(b), 1)
			if ferr == nil {
				t.Fatal("AxonForward accepted a header ParseAxon rejects")
			}
			return
		}
		var h AxonHeader
		payload, err := h.DecodeFromBytes(b)
		if err != nil {
			t.Fatalf("ParseAxon accepts, DecodeFromBytes rejects: %v", err)
		}
		enc, err := h.AppendTo(nil)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if !bytes.Equal(enc, b[:a.HeaderLen()]) || !bytes.Equal(payload, a.Payload()) {
			t.Fatalf("encode(decode(b)) != b:\n got %x\nwant %x", enc, b[:a.HeaderLen()])
		}
		var h2 AxonHeader
		if _, err := h2.DecodeFromBytes(enc); err != nil || !reflect.DeepEqual(normAxon(h), normAxon(h2)) {
			t.Fatalf("decode(encode(x)) != x: %+v %+v %v", h, h2, err)
		}
		if hopOK != (len(h.Fwd) > 0) || (hopOK && hop != h.Fwd[0]) {
			t.Fatalf("AxonNextHop %d %v, header says %v", hop, hopOK, h.Fwd)
		}
		c := bytes.Clone(b)
		out, err := AxonForward(c, 1)
		if err == nil {
			var h3 AxonHeader
			if _, err := h3.DecodeFromBytes(c); err != nil {
				t.Fatalf("forwarded header no longer parses: %v", err)
			}
			if out != h.Fwd[0] || !bytes.Equal(h3.Fwd, h.Fwd[1:]) || h3.Rev[0] != 1 || !bytes.Equal(h3.Rev[1:], h.Rev) {
				t.Fatalf("forward: %+v -> %+v (out %d)", h, h3, out)
			}
		}
		// Decap takes exactly the Ethernet packets that carry a whole
		// Ethernet header, and encap of what it returns gives b back.
		fr, derr := AxonDecap(b)
		if (derr == nil) != (h.Type == AxonEthernet && len(payload) >= EthHeaderLen) {
			t.Fatalf("decap of a %v packet with %d payload bytes: %v", h.Type, len(payload), derr)
		}
		if derr == nil {
			if !bytes.Equal(fr, payload) {
				t.Fatalf("decap: %x, payload %x", fr, payload)
			}
			back, err := AxonEncap(nil, b[:a.HeaderLen()], fr)
			if err != nil || !bytes.Equal(back, b) {
				t.Fatalf("encap(decap(b)) != b: %x %v", back, err)
			}
		}
		if st, err := AxonProbeStamp(bytes.Clone(b), 1, ProbeIn, 1); err == nil && !bytes.Equal(st, b) {
			// A record is only ever appended on a record boundary: after
			// b, or in place of the zero padding of a packet of at most
			// 60 bytes.
			kept := len(st) - AxonProbeRecordLen
			n := kept - a.HeaderLen() - axonProbeFixed
			if n < 0 || n%AxonProbeRecordLen != 0 || kept > len(b) || !bytes.Equal(st[:kept], b[:kept]) ||
				kept < len(b) && (len(b) > MinFrameLen || !allZero(b[kept:])) {
				t.Fatalf("stamp: %d bytes from %d, records part %d", len(st), len(b), n)
			}
		}
		if h.Type == AxonProbe {
			// The padded decoder takes what the strict one takes, and
			// besides only zeros after the records of a short packet.
			var p, strict AxonProbeBody
			body, err := DecodePadded(&p, payload, len(b))
			serr := strict.DecodeFromBytes(payload)
			switch {
			case serr == nil && (err != nil || len(body) != len(payload) || !reflect.DeepEqual(p, strict)):
				t.Fatalf("strict decode %+v, padded decode %+v, %v", strict, p, err)
			case serr != nil && err == nil:
				enc, eerr := p.AppendTo(nil)
				if eerr != nil || len(b) > MinFrameLen || !bytes.Equal(enc, body) || !bytes.HasPrefix(payload, enc) || !allZero(payload[len(enc):]) {
					t.Fatalf("padded decode accepted %x as %x (%v)", payload, enc, eerr)
				}
			}
		}
	})
}

func normAxon(h AxonHeader) AxonHeader {
	if len(h.Fwd) == 0 {
		h.Fwd = nil
	}
	if len(h.Rev) == 0 {
		h.Rev = nil
	}
	return h
}

// FuzzAxonHeaderEncode checks decode(encode(x)) == x for arbitrary headers.
func FuzzAxonHeaderEncode(f *testing.F) {
	f.Add(uint8(1), false, uint8(0), []byte{2, 3, 5}, []byte{1, 4})
	f.Add(uint8(4), true, uint8(3), []byte{200}, []byte{})
	f.Fuzz(func(t *testing.T, typ uint8, wide bool, opts uint8, fwd, rev []byte) {
		h := AxonHeader{Type: AxonType(typ), Wide: wide, Options: opts, Fwd: fwd, Rev: rev}
		b, err := h.AppendTo(nil)
		if err != nil {
			return
		}
		var g AxonHeader
		rest, err := g.DecodeFromBytes(b)
		if err != nil || len(rest) != 0 || !reflect.DeepEqual(normAxon(h), normAxon(g)) {
			t.Fatalf("decode(encode(%+v)) = %+v, %v", h, g, err)
		}
	})
}

func FuzzAxonProbeBody(f *testing.F) {
	seed(f, func(g golden, b []byte) []byte {
		if a, err := ParseAxon(b); g.Encap == "axon" && err == nil && a.Type() == AxonProbe {
			return a.Payload()
		}
		return nil
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		var p AxonProbeBody
		if err := p.DecodeFromBytes(b); err != nil {
			return
		}
		enc, err := p.AppendTo(nil)
		if err != nil || !bytes.Equal(enc, b) {
			t.Fatalf("encode(decode(b)) != b: %x %v", enc, err)
		}
		var q AxonProbeBody
		if err := q.DecodeFromBytes(enc); err != nil || !reflect.DeepEqual(p, q) {
			t.Fatalf("decode(encode(x)) != x")
		}
	})
}

func FuzzDumbNet(f *testing.F) {
	seed(f, ethOnly)
	f.Fuzz(func(t *testing.T, b []byte) {
		tags, inner, payload, err := ParseDumbNet(b)
		_, _, perr := DumbNetPop(bytes.Clone(b))
		_, serr := DumbNetStrip(bytes.Clone(b))
		if err != nil {
			return
		}
		var h DumbNetHeader
		if _, err := h.DecodeFromBytes(b); err != nil || !bytes.Equal(h.Tags, tags) || h.InnerType != inner {
			t.Fatalf("DecodeFromBytes disagrees with ParseDumbNet: %v", err)
		}
		enc, err := h.AppendTo(bytes.Clone(b[:EthHeaderLen]))
		if err != nil || !bytes.Equal(append(enc, payload...), b) {
			t.Fatalf("encode(decode(b)) != b: %v", err)
		}
		if (perr == nil) != (len(tags) > 0) || (serr == nil) != (len(tags) == 0) {
			t.Fatalf("pop %v / strip %v with %d tags", perr, serr, len(tags))
		}
		if len(tags) > 0 {
			tag, out, _ := DumbNetPop(bytes.Clone(b))
			t2, i2, p2, err := ParseDumbNet(out)
			if err != nil || tag != tags[0] || !bytes.Equal(t2, tags[1:]) || i2 != inner || !bytes.Equal(p2, payload) {
				t.Fatalf("pop: tag %d rest %v %v", tag, t2, err)
			}
		} else {
			out, _ := DumbNetStrip(bytes.Clone(b))
			back, err := DumbNetPush(out, nil)
			if err != nil || !bytes.Equal(back, b) {
				t.Fatalf("push(strip(b)) != b: %v", err)
			}
		}
	})
}

func FuzzDumbNetMPLS(f *testing.F) {
	seed(f, ethOnly)
	f.Fuzz(func(t *testing.T, b []byte) {
		if port, out, err := DumbNetMPLSPop(bytes.Clone(b)); err == nil {
			// One label less; the Ethernet header moves up untouched.
			if len(out) != len(b)-MPLSLabelLen || port != binary.BigEndian.Uint32(b[14:])>>12 ||
				!bytes.Equal(out[:EthHeaderLen], b[:EthHeaderLen]) || !bytes.Equal(out[EthHeaderLen:], b[EthHeaderLen+MPLSLabelLen:]) {
				t.Fatalf("pop: port %d, %x from %x", port, out, b)
			}
		}
		out, err := DumbNetMPLSStrip(bytes.Clone(b))
		if err != nil {
			return
		}
		fr, _ := ParseFrame(out)
		if et := fr.EtherType(); et != EtherTypeIPv4 && et != EtherTypeIPv6 {
			t.Fatalf("strip left EtherType %#04x", et)
		}
		if !bytes.Equal(out[:12], b[:12]) || !bytes.Equal(out[EthHeaderLen:], b[EthHeaderLen+MPLSLabelLen:]) {
			t.Fatalf("strip: %x from %x", out, b)
		}
		back, err := DumbNetMPLSPush(bytes.Clone(out), nil)
		if err != nil || len(back) != len(b) {
			t.Fatalf("push(strip(b)): %v", err)
		}
		// The end label as DumbNet writes it (TC 0, TTL 255) comes back
		// bit for bit.
		if binary.BigEndian.Uint32(b[14:]) == mplsEntry(DumbNetEnd, true) && !bytes.Equal(back, b) {
			t.Fatalf("push(strip(b)) != b:\n got %x\nwant %x", back, b)
		}
		// A path taken from the input: push, pop every hop, strip.
		var path []uint8
		for _, v := range b[len(b)-len(b)%8:] {
			if v != DumbNetEnd {
				path = append(path, v)
			}
		}
		pkt, err := DumbNetMPLSPush(bytes.Clone(out), path)
		if err != nil {
			t.Fatalf("push %v: %v", path, err)
		}
		for i, want := range path {
			var port uint32
			if port, pkt, err = DumbNetMPLSPop(pkt); err != nil || port != uint32(want) {
				t.Fatalf("pop %d of %v: port %d, %v", i, path, port, err)
			}
		}
		if _, _, err := DumbNetMPLSPop(bytes.Clone(pkt)); !errors.Is(err, ErrNoHops) {
			t.Fatalf("pop past the path %v: %v", path, err)
		}
		if got, err := DumbNetMPLSStrip(pkt); err != nil || !bytes.Equal(got, out) {
			t.Fatalf("strip(pop*(push(%v))): %x %v, want %x", path, got, err, out)
		}
	})
}

func FuzzVLAN(f *testing.F) {
	seed(f, ethOnly)
	f.Fuzz(func(t *testing.T, b []byte) {
		tpid, tag, out, err := VLANPop(bytes.Clone(b))
		otpid, otag, ok := VLANOf(b)
		if ok != (err == nil) || (ok && (otpid != tpid || otag != tag)) {
			t.Fatalf("VLANOf %#x %v %v, VLANPop %#x %v %v", otpid, otag, ok, tpid, tag, err)
		}
		if err != nil {
			return
		}
		back, err := VLANPush(out, tpid, tag)
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("push(pop(b)) != b: %v", err)
		}
	})
}

func FuzzVXLANDecap(f *testing.F) {
	seed(f, ethOnly)
	f.Fuzz(func(t *testing.T, b []byte) {
		vni, inner, err := VXLANDecap(b)
		if err != nil {
			return
		}
		enc, err := VXLANEncap(nil, &VXLANOuter{Src: ipA, Dst: ipB, VNI: vni}, inner)
		if err != nil {
			t.Fatalf("re-encap: %v", err)
		}
		v2, i2, err := VXLANDecap(enc)
		if err != nil || v2 != vni || !bytes.Equal(i2, inner) {
			t.Fatalf("decap(encap(x)) != x: %v", err)
		}
	})
}

func FuzzVXLANEncap(f *testing.F) {
	f.Add(uint32(5000), uint16(50000), false, innerFrame())
	f.Add(uint32(1), uint16(1), true, innerFrame())
	f.Fuzz(func(t *testing.T, vni uint32, sport uint16, v6 bool, inner []byte) {
		o := &VXLANOuter{Src: ipA, Dst: ipB, VNI: vni, SrcPort: sport}
		if v6 {
			o.Src, o.Dst = ip6A, netip.MustParseAddr("2001:db8::2")
		}
		enc, err := VXLANEncap(nil, o, inner)
		if err != nil {
			return
		}
		v, in, err := VXLANDecap(enc)
		if err != nil || v != vni || !bytes.Equal(in, inner) {
			t.Fatalf("decap(encap(%d, %x)) = %d, %x, %v", vni, inner, v, in, err)
		}
	})
}

// fuzzMessage fuzzes the decoder of one message kind: the fuzzer's bytes
// follow the subtype byte.
func fuzzMessage(f *testing.F, subs ...Subtype) {
	seed(f, func(g golden, b []byte) []byte {
		m := messageOf(g, b)
		if len(m) == 0 || !bytes.Contains(subsBytes(subs), m[:1]) {
			return nil
		}
		return m[1:]
	})
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, s := range subs {
			b := append([]byte{byte(s)}, body...)
			m, err := DecodeMessage(b)
			if err != nil {
				continue
			}
			if m.Subtype() != s {
				t.Fatalf("subtype %v decoded as %v", s, m.Subtype())
			}
			enc, err := m.AppendTo(nil)
			if err != nil || !bytes.Equal(enc, b) {
				t.Fatalf("encode(decode(b)) != b:\n got %x\nwant %x (%v)", enc, b, err)
			}
			m2, err := DecodeMessage(enc)
			if err != nil || !reflect.DeepEqual(m, m2) {
				t.Fatalf("decode(encode(x)) != x: %+v %+v %v", m, m2, err)
			}
		}
	})
}

func subsBytes(s []Subtype) []byte {
	b := make([]byte, len(s))
	for i, v := range s {
		b[i] = byte(v)
	}
	return b
}

func FuzzChirp(f *testing.F)             { fuzzMessage(f, SubChirp) }
func FuzzAxonHello(f *testing.F)         { fuzzMessage(f, SubAxonHello) }
func FuzzAxonARP(f *testing.F)           { fuzzMessage(f, SubAxonARPRequest, SubAxonARPReply) }
func FuzzAxonEtherProbe(f *testing.F)    { fuzzMessage(f, SubAxonEtherProbe) }
func FuzzDumbNetProbe(f *testing.F)      { fuzzMessage(f, SubDumbNetProbe) }
func FuzzDumbNetProbeReply(f *testing.F) { fuzzMessage(f, SubDumbNetProbeReply) }
func FuzzDumbNetSwitchID(f *testing.F)   { fuzzMessage(f, SubDumbNetSwitchID) }
func FuzzDumbNetPortStatus(f *testing.F) { fuzzMessage(f, SubDumbNetPortStatus) }
func FuzzDumbNetHostNotify(f *testing.F) { fuzzMessage(f, SubDumbNetHostNotify) }
func FuzzDumbNetTopoPatch(f *testing.F)  { fuzzMessage(f, SubDumbNetTopoPatch) }
func FuzzDumbNetPathQuery(f *testing.F)  { fuzzMessage(f, SubDumbNetPathQuery) }
func FuzzDumbNetPathReply(f *testing.F)  { fuzzMessage(f, SubDumbNetPathReply) }
func FuzzDumbNetNeighbors(f *testing.F)  { fuzzMessage(f, SubDumbNetNeighbors) }
func FuzzOverlayVPort(f *testing.F)      { fuzzMessage(f, SubOverlayVPort) }
func FuzzOverlayVNet(f *testing.F)       { fuzzMessage(f, SubOverlayVNet) }
func FuzzBackplaneNextHop(f *testing.F)  { fuzzMessage(f, SubBackplaneNextHop) }

// FuzzDumbNetPortStatusHop checks the switch's in-place hop decrement
// against the decoder: it accepts exactly the port-status messages
// DecodeMessage accepts, changes only the hop limit, and leaves rejected
// input untouched.
func FuzzDumbNetPortStatusHop(f *testing.F) {
	seed(f, func(g golden, b []byte) []byte {
		if m := messageOf(g, b); len(m) > 0 && Subtype(m[0]) == SubDumbNetPortStatus {
			return m
		}
		return nil
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, derr := DecodeMessage(b)
		ps, isPS := m.(*DumbNetPortStatus)
		c := bytes.Clone(b)
		fwd, err := DumbNetPortStatusHop(c)
		if (err == nil) != (derr == nil && isPS) {
			t.Fatalf("hop error %v, decode error %v (%T)", err, derr, m)
		}
		if err != nil {
			if !bytes.Equal(c, b) {
				t.Fatalf("rejected message changed: %x -> %x", b, c)
			}
			return
		}
		want := *ps
		if want.HopLimit > 0 {
			want.HopLimit--
		}
		var got DumbNetPortStatus
		if err := got.DecodeFromBytes(c); err != nil || got != want || fwd != (want.HopLimit > 0) {
			t.Fatalf("after the hop: %+v (forward %v), want %+v: %v", got, fwd, want, err)
		}
	})
}

// FuzzControlFrame covers the frame-level entry point (Ethernet, tags,
// EtherType, subtype dispatch).
// It also checks UntaggedLen, and that a message decoded with the padding
// a frame of its tags may carry (DecodeMessagePadded(payload,
// UntaggedLen(b))) is the strict decode, or else a message followed by
// zeros in a frame of at most 60 bytes plus 4 per tag.
func FuzzControlFrame(f *testing.F) {
	seed(f, ethOnly)
	// Short golden frames padded to 60 bytes plus 4 per VLAN tag.
	seed(f, func(g golden, b []byte) []byte {
		if n := MinFrameLen + len(b) - UntaggedLen(b); g.Encap == "ethernet" && len(b) < n {
			return append(b, make([]byte, n-len(b))...)
		}
		return nil
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, tags, off, ierr := Frame(b).InnerEtherType()
		ul := UntaggedLen(b)
		if ul != len(b)-4*tags || ul < 0 {
			t.Fatalf("UntaggedLen %d of %d bytes with %d tags", ul, len(b), tags)
		}
		if ierr == nil && len(b) >= EthHeaderLen && off <= len(b) {
			strict, serr := DecodeMessage(b[off:])
			pm, perr := DecodeMessagePadded(b[off:], ul)
			switch {
			case serr == nil && (perr != nil || !reflect.DeepEqual(pm, strict)):
				t.Fatalf("strict decode %+v, padded decode %+v, %v", strict, pm, perr)
			case serr != nil && perr == nil:
				enc, eerr := pm.AppendTo(nil)
				if eerr != nil || ul > MinFrameLen || len(b) > MinFrameLen+4*tags || !bytes.HasPrefix(b[off:], enc) || !allZero(b[off+len(enc):]) {
					t.Fatalf("padded decode accepted %x as %x (%v)", b, enc, eerr)
				}
			}
		}
		m, err := DecodeControlFrame(b)
		if err != nil {
			return
		}
		// Exact, or the message and then a NIC's zero padding.
		enc, err := m.AppendTo(bytes.Clone(b[:off]))
		if err != nil || !bytes.HasPrefix(b, enc) || len(b) > len(enc) && (UntaggedLen(b) > MinFrameLen || !allZero(b[len(enc):])) {
			t.Fatalf("encode(decode(b)) = %x, not b = %x or b less padding: %v", enc, b, err)
		}
	})
}

func FuzzARP(f *testing.F) {
	seed(f, ethOnly)
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := DecodeARP(b)
		if err != nil {
			return
		}
		enc, err := AppendARPFrame(nil, macB, 0, &a)
		if err != nil {
			t.Fatalf("re-encode %+v: %v", a, err)
		}
		if a2, err := DecodeARP(enc); err != nil || a2 != a {
			t.Fatalf("decode(encode(x)) != x: %+v %+v %v", a, a2, err)
		}
	})
}

func FuzzUDP(f *testing.F) {
	seed(f, ethOnly)
	f.Fuzz(func(t *testing.T, b []byte) {
		src, dst, payload, err := DecodeUDP(b)
		if err != nil || !src.Addr().Is4() || !dst.Addr().Is4() {
			return
		}
		enc, err := AppendUDPFrame(nil, macB, macA, src, dst, 64, payload)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		s2, d2, p2, err := DecodeUDP(enc)
		if err != nil || s2 != src || d2 != dst || !bytes.Equal(p2, payload) {
			t.Fatalf("decode(encode(x)) != x: %v", err)
		}
	})
}

func FuzzDHCP(f *testing.F) {
	seed(f, ethOnly)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeDHCP(b)
		if err != nil {
			return
		}
		enc, err := AppendDHCPFrame(nil, Broadcast, macA, ipA, ipB, m)
		if err != nil {
			return // e.g. a source address that is not IPv4 cannot be re-sent
		}
		m2, err := DecodeDHCP(enc)
		if err != nil {
			t.Fatalf("decode(encode(x)): %v", err)
		}
		if !bytes.Equal(m2.ToBytes(), m.ToBytes()) {
			t.Fatalf("decode(encode(x)) != x")
		}
	})
}

func FuzzLLDP(f *testing.F) {
	seed(f, ethOnly)
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := DecodeLLDP(b)
		if err != nil {
			return
		}
		enc, err := AppendLLDPFrame(nil, macA, &l)
		if err != nil {
			return // e.g. an empty port ID, which we never send
		}
		if l2, err := DecodeLLDP(enc); err != nil || l2 != l {
			t.Fatalf("decode(encode(x)) != x: %+v %+v %v", l, l2, err)
		}
	})
}

func FuzzICMPEcho(f *testing.F) {
	seed(f, ethOnly)
	f.Fuzz(func(t *testing.T, b []byte) {
		src, dst, e, err := DecodeICMPEcho(b)
		if err != nil || !src.Is4() || !dst.Is4() {
			return
		}
		enc, err := AppendICMPEchoFrame(nil, macB, macA, src, dst, 64, &e)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		s2, d2, e2, err := DecodeICMPEcho(enc)
		if err != nil || s2 != src || d2 != dst || !reflect.DeepEqual(normEcho(e2), normEcho(e)) {
			t.Fatalf("decode(encode(x)) != x: %+v %+v %v", e, e2, err)
		}
	})
}

func normEcho(e ICMPEcho) ICMPEcho {
	if len(e.Data) == 0 {
		e.Data = nil
	}
	return e
}

func FuzzTCP(f *testing.F) {
	seed(f, ethOnly)
	f.Fuzz(func(t *testing.T, b []byte) {
		src, dst, s, err := DecodeTCP(b)
		if err != nil || !src.Is4() || !dst.Is4() {
			return
		}
		enc, err := AppendTCPFrame(nil, macB, macA, src, dst, 64, &s)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		s2, d2, seg, err := DecodeTCP(enc)
		if len(seg.Payload) == 0 {
			seg.Payload = nil
		}
		if len(s.Payload) == 0 {
			s.Payload = nil
		}
		if err != nil || s2 != src || d2 != dst || !reflect.DeepEqual(seg, s) {
			t.Fatalf("decode(encode(x)) != x: %+v %+v %v", s, seg, err)
		}
	})
}
