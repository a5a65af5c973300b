package wire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func portStatusBytes(t testing.TB) []byte {
	t.Helper()
	b, err := (&DumbNetPortStatus{SwitchID: 7, Port: 3, State: PortDown, HopLimit: 4, Seq: 9}).AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A 31-byte port notification leaves a physical NIC as a 60-byte frame:
// the padding is dropped, anything else after the message is refused.
func TestDecodePadded(t *testing.T) {
	msg := portStatusBytes(t)
	pad := func(n int, fill byte) []byte {
		return append(bytes.Clone(msg), bytes.Repeat([]byte{fill}, n)...)
	}
	minPad := MinFrameLen - EthHeaderLen - len(msg)
	for _, tc := range []struct {
		name     string
		body     []byte
		frameLen int
		ok       bool
	}{
		{"unpadded", msg, EthHeaderLen + len(msg), true},
		{"padded to 60", pad(minPad, 0), MinFrameLen, true},
		{"padded short frame", pad(3, 0), EthHeaderLen + len(msg) + 3, true},
		{"non-zero padding", pad(minPad, 0xAA), MinFrameLen, false},
		{"one non-zero byte", append(pad(minPad-1, 0), 1), MinFrameLen, false},
		{"zeros past the minimum", pad(minPad+1, 0), MinFrameLen + 1, false},
		{"truncated", msg[:len(msg)-1], MinFrameLen, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m DumbNetPortStatus
			body, err := DecodePadded(&m, tc.body, tc.frameLen)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok = %v", err, tc.ok)
			}
			if !tc.ok {
				return
			}
			if !bytes.Equal(body, msg) || m.SwitchID != 7 || m.Port != 3 || m.Seq != 9 {
				t.Fatalf("body %x, message %+v", body, m)
			}
			got, err := DecodeMessagePadded(tc.body, tc.frameLen)
			if err != nil || !reflect.DeepEqual(got, &m) {
				t.Fatalf("DecodeMessagePadded = %+v, %v", got, err)
			}
		})
	}
	// The strict decoders stay strict, and their error names the count.
	_, err := DecodeMessage(pad(minPad, 0))
	var te *TrailingError
	if !errors.Is(err, ErrTrailing) || !errors.As(err, &te) || te.End != len(msg) || te.Extra != minPad {
		t.Fatalf("DecodeMessage(padded) = %v, want %d trailing bytes at %d", err, minPad, len(msg))
	}
	if want := "wire: dumbnet port status: 29 bytes after the message: trailing bytes"; err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
}

// FuzzDecodePadded: what DecodeMessagePadded accepts is a message the
// strict decoder accepts, followed by zero bytes only if the frame is at
// most the minimum.
func FuzzDecodePadded(f *testing.F) {
	msg := portStatusBytes(f)
	f.Add(msg, MinFrameLen)
	f.Add(append(bytes.Clone(msg), make([]byte, 15)...), MinFrameLen)
	f.Add(append(bytes.Clone(msg), 0, 1), MinFrameLen)
	f.Add([]byte{byte(SubDumbNetSwitchID), 0, 0, 0, 0, 0, 0, 0, 1, 0, 0}, 40)
	f.Fuzz(func(t *testing.T, b []byte, frameLen int) {
		m, err := DecodeMessagePadded(b, frameLen)
		strict, serr := DecodeMessage(b)
		if serr == nil {
			if err != nil || !reflect.DeepEqual(m, strict) {
				t.Fatalf("strict decode %+v, padded decode %+v, %v", strict, m, err)
			}
			return
		}
		if err != nil {
			return
		}
		if frameLen > MinFrameLen {
			t.Fatalf("padding accepted in a %d-byte frame", frameLen)
		}
		enc, eerr := m.AppendTo(nil)
		if eerr != nil || !bytes.HasPrefix(b, enc) || len(enc) == len(b) {
			t.Fatalf("accepted %x as %x (%v)", b, enc, eerr)
		}
		for _, c := range b[len(enc):] {
			if c != 0 {
				t.Fatalf("non-zero padding accepted: %x", b)
			}
		}
	})
}

// An Axon packet is a frame on its link, so a NIC pads one shorter than
// 60 bytes with zeros too: a control packet or a probe whose body
// decodes with padding dropped, and a probe unit stamps a padded probe
// where its records end.
func TestAxonPadded(t *testing.T) {
	padTo := func(b []byte, n int, fill byte) []byte {
		return append(bytes.Clone(b), bytes.Repeat([]byte{fill}, n-len(b))...)
	}
	arp := &AxonARP{Seq: 9, RealMAC: macA, RouteMAC: macB, SrcIP: ipA, TgtIP: ipB, SrcPort: 1, TgtPort: 3}
	msg, err := arp.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctl := mustAxon(t, AxonHeader{Type: AxonControl, Fwd: []uint8{4, 15}, Rev: []uint8{2}}, msg)
	probe := mustAxon(t, AxonHeader{Type: AxonProbe, Options: AxonOptTimestampIn, Fwd: []uint8{2, 15}, Rev: []uint8{1}},
		mustProbe(t, &AxonProbeBody{Origin: 161, Seq: 3, Records: []AxonProbeRecord{{Port: 1, Dir: ProbeIn, Time: 7}}}))
	for _, tc := range []struct {
		name string
		pkt  []byte
		ok   bool
	}{
		{"control as sent", ctl, true},
		{"control padded to 60", padTo(ctl, MinFrameLen, 0), true},
		{"control padded to 61", padTo(ctl, MinFrameLen+1, 0), false},
		{"control padded with 0xaa", padTo(ctl, MinFrameLen, 0xaa), false},
		{"probe as sent", probe, true},
		{"probe padded to 60", padTo(probe, MinFrameLen, 0), true},
		{"probe padded by 3", padTo(probe, len(probe)+3, 0), true},
		{"probe padded to 61", padTo(probe, MinFrameLen+1, 0), false},
		{"probe padded with 0xaa", padTo(probe, MinFrameLen, 0xaa), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ParseAxon(tc.pkt)
			if err != nil {
				t.Fatal(err)
			}
			if a.Type() == AxonControl {
				m, err := DecodeMessagePadded(a.Payload(), len(tc.pkt))
				if (err == nil) != tc.ok || err == nil && !reflect.DeepEqual(m, arp) {
					t.Fatalf("DecodeMessagePadded = %+v, %v; want ok = %v", m, err, tc.ok)
				}
				return
			}
			var p AxonProbeBody
			body, err := DecodePadded(&p, a.Payload(), len(tc.pkt))
			if (err == nil) != tc.ok {
				t.Fatalf("DecodePadded = %v, want ok = %v", err, tc.ok)
			}
			if !tc.ok {
				if _, err := AxonProbeStamp(bytes.Clone(tc.pkt), 5, ProbeIn, 8); err == nil {
					t.Error("AxonProbeStamp stamped a probe the decoder refuses")
				}
				return
			}
			if !bytes.Equal(body, probe[a.HeaderLen():]) || p.Origin != 161 || len(p.Records) != 1 {
				t.Fatalf("body %x, probe %+v", body, p)
			}
			st, err := AxonProbeStamp(bytes.Clone(tc.pkt), 5, ProbeIn, 8)
			if err != nil {
				t.Fatal(err)
			}
			var q AxonProbeBody
			if err := q.DecodeFromBytes(Axon(st).Payload()); err != nil || len(st) != len(probe)+AxonProbeRecordLen ||
				len(q.Records) != 2 || q.Records[1] != (AxonProbeRecord{Port: 5, Dir: ProbeIn, Time: 8}) {
				t.Fatalf("stamped %x: %+v, %v", st, q, err)
			}
		})
	}
}

func mustProbe(t testing.TB, p *AxonProbeBody) []byte {
	t.Helper()
	b, err := p.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A VLAN-tagged frame may carry padding up to 60 bytes plus 4 per tag: a
// sender pads a tagged frame to 60 bytes, a bridge that tags a padded
// 60-byte frame sends 64 (68 with two tags). Past that, zeros are refused.
func TestDecodePaddedVLAN(t *testing.T) {
	chirp := &Chirp{IP: ipA, MAC: macA, EdgeSwitch: 229}
	untagged, err := AppendControlFrame(nil, Broadcast, macA, chirp)
	if err != nil {
		t.Fatal(err)
	}
	tag, _ := NewVLANTag(0, false, 1)
	oneTag, err := VLANPush(bytes.Clone(untagged), EtherTypeVLAN, tag)
	if err != nil {
		t.Fatal(err)
	}
	twoTags, err := VLANPush(bytes.Clone(oneTag), EtherTypeQinQ, tag)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		frame []byte
		to    int
		ok    bool
	}{
		{"untagged padded to 60", untagged, 60, true},
		{"untagged padded to 61", untagged, 61, false},
		{"tagged padded to 60 by its sender", oneTag, 60, true},
		{"tagged after padding to 60: 64", oneTag, 64, true},
		{"tagged padded to 65", oneTag, 65, false},
		{"two tags after padding: 68", twoTags, 68, true},
		{"two tags padded to 69", twoTags, 69, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.frame) >= tc.to {
				t.Fatalf("frame of %d bytes, not shorter than %d", len(tc.frame), tc.to)
			}
			fr := append(bytes.Clone(tc.frame), make([]byte, tc.to-len(tc.frame))...)
			_, _, off, err := Frame(fr).InnerEtherType()
			if err != nil {
				t.Fatal(err)
			}
			m, err := DecodeMessagePadded(fr[off:], UntaggedLen(fr))
			if (err == nil) != tc.ok || err == nil && !reflect.DeepEqual(m, chirp) {
				t.Fatalf("DecodeMessagePadded = %+v, %v; want ok = %v", m, err, tc.ok)
			}
			// The frame-level decoder takes the same padding.
			m, err = DecodeControlFrame(fr)
			if (err == nil) != tc.ok || err == nil && !reflect.DeepEqual(m, chirp) {
				t.Fatalf("DecodeControlFrame = %+v, %v; want ok = %v", m, err, tc.ok)
			}
		})
	}
	for _, tc := range []struct {
		frame []byte
		want  int
	}{
		{untagged, len(untagged)}, {oneTag, len(oneTag) - 4}, {twoTags, len(twoTags) - 8},
		{twoTags[:13], 13}, {twoTags[:15], 11}, {twoTags[:17], 13}, {nil, 0},
	} {
		if got := UntaggedLen(tc.frame); got != tc.want {
			t.Errorf("UntaggedLen(%x) = %d, want %d", tc.frame, got, tc.want)
		}
	}
}
