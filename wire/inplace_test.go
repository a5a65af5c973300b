package wire

import (
	"bytes"
	"net/netip"
	"testing"
)

// The lengthening operations "work like append: pass a slice with spare
// capacity (headroom is not needed, the payload is moved)" (doc.go). For
// VXLANEncap and AxonEncap that means encapsulating a frame in its own
// buffer: VXLANEncap(frame[:0], o, frame). The headers were written over
// the start of the frame before it was copied behind them, so the result
// depended on the capacity: correct when it was short (a new array), a
// corrupt inner frame without an error when the frame had room.
func TestEncapInPlace(t *testing.T) {
	inner := AppendEthernet(nil, macB, macA, EtherTypeIPv4, bytes.Repeat([]byte{0xab, 0xcd, 0xef}, 20))
	inPlace := func(f func(dst, frame []byte) ([]byte, error)) ([]byte, []byte) {
		want, err := f(nil, bytes.Clone(inner))
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, len(inner), len(inner)+128)
		copy(buf, inner)
		got, err := f(buf[:0], buf)
		if err != nil {
			t.Fatal(err)
		}
		if &got[0] != &buf[0] {
			t.Fatal("the buffer had room, the result is not in it")
		}
		return got, want
	}
	for _, o := range []*VXLANOuter{
		{SrcMAC: macA, DstMAC: macB, Src: ipA, Dst: ipB, SrcPort: 50000, VNI: 5001},
		{SrcMAC: macA, DstMAC: macB, Src: ip6A, Dst: netip.MustParseAddr("2001:db8::2"), SrcPort: 50000, VNI: 5001},
	} {
		got, want := inPlace(func(dst, frame []byte) ([]byte, error) { return VXLANEncap(dst, o, frame) })
		if !bytes.Equal(got, want) {
			t.Errorf("VXLANEncap over %v in place:\n got %x\nwant %x", o.Src, got, want)
		}
		if _, in, err := VXLANDecap(got); err != nil || !bytes.Equal(in, inner) {
			t.Errorf("VXLANEncap over %v in place: decap %x, %v", o.Src, in, err)
		}
	}
	hdr, err := (&AxonHeader{Type: AxonEthernet, Fwd: []uint8{3, 1, 4}, Rev: []uint8{2}}).AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	got, want := inPlace(func(dst, frame []byte) ([]byte, error) { return AxonEncap(dst, hdr, frame) })
	if !bytes.Equal(got, want) {
		t.Errorf("AxonEncap in place:\n got %x\nwant %x", got, want)
	}
	if f, err := AxonDecap(got); err != nil || !bytes.Equal(f, inner) {
		t.Errorf("AxonEncap in place: decap %x, %v", f, err)
	}
}
