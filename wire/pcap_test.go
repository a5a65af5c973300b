package wire

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"encoding/binary"
)

// pcapReader is a minimal reader of the classic format, for the test only
// (gopacket's pcapgo would pull in golang.org/x/net); TestTshark checks the
// same files with an independent reader.
type pcapReader struct {
	b        []byte
	linkType uint32
}

type pcapRecord struct {
	ts         time.Time
	data       []byte
	origLength int
}

func newPcapReader(t *testing.T, b []byte) *pcapReader {
	t.Helper()
	if len(b) < 24 || binary.LittleEndian.Uint32(b) != 0xa1b23c4d {
		t.Fatalf("not a nanosecond pcap file: %x", b[:min(len(b), 24)])
	}
	if v1, v2, snap := binary.LittleEndian.Uint16(b[4:]), binary.LittleEndian.Uint16(b[6:]), binary.LittleEndian.Uint32(b[16:]); v1 != 2 || v2 != 4 || snap != pcapSnapLen {
		t.Fatalf("version %d.%d snaplen %d", v1, v2, snap)
	}
	return &pcapReader{b: b[24:], linkType: binary.LittleEndian.Uint32(b[20:])}
}

func (r *pcapReader) next(t *testing.T) (pcapRecord, bool) {
	t.Helper()
	if len(r.b) == 0 {
		return pcapRecord{}, false
	}
	if len(r.b) < 16 {
		t.Fatalf("record header cut: %d bytes", len(r.b))
	}
	sec, nsec := binary.LittleEndian.Uint32(r.b), binary.LittleEndian.Uint32(r.b[4:])
	incl, orig := int(binary.LittleEndian.Uint32(r.b[8:])), int(binary.LittleEndian.Uint32(r.b[12:]))
	if nsec >= 1e9 || len(r.b) < 16+incl {
		t.Fatalf("bad record: nsec %d incl %d of %d", nsec, incl, len(r.b)-16)
	}
	rec := pcapRecord{ts: time.Unix(int64(sec), int64(nsec)), data: r.b[16 : 16+incl], origLength: orig}
	r.b = r.b[16+incl:]
	return rec, true
}

// TestPcapWriter reads a capture back with gopacket's pcap reader: link
// type, nanosecond timestamps from picoseconds plus the epoch, the
// encapsulation byte of USER0 captures, snap length truncation.
func TestPcapWriter(t *testing.T) {
	epoch := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	frame := innerFrame()
	axonPkt := mustAxon(t, AxonHeader{Type: AxonEthernet, Fwd: []uint8{1}}, frame)
	big := make([]byte, pcapSnapLen+10)

	var buf bytes.Buffer
	w, err := NewPcapWriter(&buf, LinkTypeEdgefabric, epoch)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEthernet(1_500_000_123_456, frame); err != nil { // 1.5 s + 123456 ps
		t.Fatal(err)
	}
	if err := w.WriteAxon(2_000_000_000_000, axonPkt); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEthernet(3_000_000_000_000, big); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEthernet(-1, frame); !errors.Is(err, ErrBadValue) {
		t.Fatalf("negative time: %v", err)
	}

	r := newPcapReader(t, buf.Bytes())
	if r.linkType != 147 {
		t.Fatalf("link type %v", r.linkType)
	}
	want := []struct {
		ts   time.Time
		data []byte
		orig int
	}{
		{epoch.Add(1500*time.Millisecond + 123*time.Nanosecond), append([]byte{EncapEthernet}, frame...), len(frame) + 1},
		{epoch.Add(2 * time.Second), append([]byte{EncapAxon}, axonPkt...), len(axonPkt) + 1},
		{epoch.Add(3 * time.Second), append([]byte{EncapEthernet}, big[:pcapSnapLen-1]...), len(big) + 1},
	}
	for i, w := range want {
		rec, ok := r.next(t)
		if !ok {
			t.Fatalf("record %d missing", i)
		}
		if !rec.ts.Equal(w.ts) || !bytes.Equal(rec.data, w.data) || rec.origLength != w.orig {
			t.Fatalf("record %d: ts %v len %d/%d, want %v %d/%d", i, rec.ts, len(rec.data), rec.origLength, w.ts, len(w.data), w.orig)
		}
	}
	if _, ok := r.next(t); ok {
		t.Fatal("extra record")
	}

	var eb bytes.Buffer
	ew, err := NewPcapWriter(&eb, LinkTypeEthernet, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ew.WriteAxon(0, axonPkt); !errors.Is(err, ErrUnknownType) {
		t.Fatalf("Axon packet in an Ethernet capture: %v", err)
	}
	if err := ew.WriteEthernet(5_000_000, frame); err != nil {
		t.Fatal(err)
	}
	er := newPcapReader(t, eb.Bytes())
	rec, ok := er.next(t)
	if !ok || er.linkType != 1 || !bytes.Equal(rec.data, frame) || rec.ts.UnixNano() != 5000 {
		t.Fatalf("ethernet capture: link type %d, %v, ts %d", er.linkType, ok, rec.ts.UnixNano())
	}
	if _, err := NewPcapWriter(&eb, 99, time.Time{}); !errors.Is(err, ErrUnknownType) {
		t.Fatalf("link type 99: %v", err)
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return len(p), nil
}

func TestPcapWriterError(t *testing.T) {
	w, err := NewPcapWriter(&failWriter{n: 1}, LinkTypeEthernet, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEthernet(0, innerFrame()); err == nil {
		t.Fatal("write error not reported")
	}
	if err := w.WriteEthernet(0, innerFrame()); err == nil {
		t.Fatal("write error not sticky")
	}
}
