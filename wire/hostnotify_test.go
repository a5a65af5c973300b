package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"
)

// TestDumbNetHostNotifySwitchSeq: a host notification carries the
// switch's alarm number after the state, so that hosts can order a
// flooded copy against the switch's own broadcasts (docs/wire.md). The
// message is 26 bytes; the 22-byte form without the number is refused.
func TestDumbNetHostNotifySwitchSeq(t *testing.T) {
	m := DumbNetHostNotify{Origin: macA, Seq: 4, SwitchID: 0x5302, Port: 3, State: PortDown, SwitchSeq: 0xfffffffe}
	b, err := m.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := hex.DecodeString("24" + "02000000000a" + "00000004" + "0000000000005302" + "0003" + "02" + "fffffffe")
	if !bytes.Equal(b, want) {
		t.Fatalf("encoded %x, want %x", b, want)
	}
	if len(b) != 26 {
		t.Fatalf("%d bytes, want 26", len(b))
	}
	var got DumbNetHostNotify
	if err := got.DecodeFromBytes(b); err != nil || got != m {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, m)
	}
	for n := 22; n < 26; n++ {
		if err := got.DecodeFromBytes(b[:n]); !errors.Is(err, ErrTruncated) {
			t.Errorf("%d bytes: %v, want ErrTruncated", n, err)
		}
	}
	if _, err := DecodeMessage(append(bytes.Clone(b), 0)); !errors.Is(err, ErrTrailing) {
		t.Errorf("27 bytes: %v, want ErrTrailing", err)
	}
	// In a frame padded to 60 bytes, as a physical NIC sends it.
	f, err := AppendControlFrame(nil, macB, macA, &m)
	if err != nil {
		t.Fatal(err)
	}
	padded := append(bytes.Clone(f), make([]byte, MinFrameLen-len(f))...)
	var pm DumbNetHostNotify
	if _, err := DecodePadded(&pm, padded[EthHeaderLen:], len(padded)); err != nil || pm != m {
		t.Fatalf("padded: %+v, %v", pm, err)
	}
}

// BenchmarkDumbNetHostNotify: a notification is decoded for every copy
// the flood delivers.
func BenchmarkDumbNetHostNotify(b *testing.B) {
	m := DumbNetHostNotify{Origin: macA, Seq: 4, SwitchID: 0x5302, Port: 3, State: PortDown, SwitchSeq: 12}
	buf, _ := m.AppendTo(nil)
	b.ReportAllocs()
	var d DumbNetHostNotify
	for b.Loop() {
		if err := d.DecodeFromBytes(buf); err != nil {
			b.Fatal(err)
		}
	}
}
