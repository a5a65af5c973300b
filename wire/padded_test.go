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
