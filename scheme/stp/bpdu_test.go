package stp

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/edgefabric/edgefabric/wire"
)

// Golden frames, written out by hand from 802.1D-1998 clause 9 and checked
// by gopacket and tshark below: s2's port 1 (06:00:00:01:00:01) relaying
// root s1's information with the topology change flag, and a TCN.
var (
	goldenConfigHex = "0180c2000000" + "060000010001" + "0026" + "424203" +
		"0000" + "00" + "00" + "01" + // protocol 0, version 0, type config, flags TC
		"8000060000000000" + "00000004" + "8000060000010000" + "8001" + // root, cost 4, bridge, port 0x8001
		"0100" + "1400" + "0200" + "0f00" + // message age 1 s, max age 20 s, hello 2 s, forward delay 15 s
		"0000000000000000" // padding to 60 bytes
	goldenTCNHex = "0180c2000000" + "060000020002" + "0007" + "424203" + "00000080" +
		strings.Repeat("00", 39)

	goldenConfig = BPDU{
		Type: TypeConfig, TC: true,
		Root:         MakeBridgeID(0x8000, [6]byte{6, 0, 0, 0, 0, 0}),
		RootPathCost: 4,
		Bridge:       MakeBridgeID(0x8000, [6]byte{6, 0, 0, 1, 0, 0}),
		Port:         0x8001,
		MessageAge:   256, MaxAge: 20 * 256, HelloTime: 2 * 256, ForwardDelay: 15 * 256,
	}
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGoldenConfig(t *testing.T) {
	want := unhex(t, goldenConfigHex)
	if len(want) != 60 {
		t.Fatalf("golden is %d bytes", len(want))
	}
	got := AppendFrame(nil, [6]byte{6, 0, 0, 1, 0, 1}, &goldenConfig)
	if !bytes.Equal(got, want) {
		t.Fatalf("encode:\n got %x\nwant %x", got, want)
	}
	var m BPDU
	if err := DecodeFrame(want, &m); err != nil {
		t.Fatal(err)
	}
	if m != goldenConfig {
		t.Fatalf("decode: %+v", m)
	}
	if m.MaxAge.Time() != DefaultMaxAge || ToTime256(DefaultForwardDelay) != m.ForwardDelay {
		t.Fatal("timer conversion")
	}
}

func TestGoldenTCN(t *testing.T) {
	want := unhex(t, goldenTCNHex)
	got := AppendFrame(nil, [6]byte{6, 0, 0, 2, 0, 2}, &BPDU{Type: TypeTCN})
	if !bytes.Equal(got, want) {
		t.Fatalf("encode:\n got %x\nwant %x", got, want)
	}
	var m BPDU
	if err := DecodeFrame(want, &m); err != nil || m != (BPDU{Type: TypeTCN}) {
		t.Fatalf("decode: %+v %v", m, err)
	}
}

// gopacket, an independent decoder, reads our frames the same way (it has
// no TCN support, so only the configuration BPDU is compared).
func TestGopacketAgrees(t *testing.T) {
	frame := unhex(t, goldenConfigHex)
	pkt := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.Default)
	if el := pkt.ErrorLayer(); el != nil {
		t.Fatal(el.Error())
	}
	llc, _ := pkt.Layer(layers.LayerTypeLLC).(*layers.LLC)
	s, _ := pkt.Layer(layers.LayerTypeSTP).(*layers.STP)
	if llc == nil || s == nil {
		t.Fatalf("gopacket layers: %v", pkt.Layers())
	}
	if llc.DSAP != 0x42 || llc.SSAP != 0x42 || llc.Control != 3 {
		t.Fatalf("llc %+v", llc)
	}
	if !s.TC || s.TCA || s.Type != 0 || s.Cost != 4 || s.PortID != 0x8001 ||
		s.MessageAge != 256 || s.MaxAge != 20*256 || s.HelloTime != 512 || s.FDelay != 15*256 ||
		s.RouteID.Priority != 0x8000 || s.RouteID.HwAddr.String() != "06:00:00:00:00:00" ||
		s.BridgeID.HwAddr.String() != "06:00:00:01:00:00" {
		t.Fatalf("gopacket reads %+v", s)
	}
}

func TestDecodeErrors(t *testing.T) {
	cfg := unhex(t, goldenConfigHex)
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), cfg...)) }
	for _, c := range []struct {
		name  string
		frame []byte
		want  error
	}{
		{"empty", nil, ErrTruncated},
		{"short header", cfg[:13], ErrTruncated},
		{"other destination", mod(func(b []byte) []byte { b[5] = 1; return b }), ErrNotBPDU},
		{"ethertype", mod(func(b []byte) []byte { b[12], b[13] = 0x08, 0x00; return b }), ErrNotBPDU},
		// 0x0600 is the first EtherType value: never an 802.3 length.
		{"ethertype 0x0600", mod(func(b []byte) []byte { b[12], b[13] = 0x06, 0x00; return b }), ErrNotBPDU},
		{"length past frame", mod(func(b []byte) []byte { b[13] = 47; return b }), ErrTruncated},
		{"length below llc", mod(func(b []byte) []byte { b[13] = 2; return b }), ErrTruncated},
		{"llc sap", mod(func(b []byte) []byte { b[14] = 0xaa; return b }), ErrNotBPDU},
		{"llc control", mod(func(b []byte) []byte { b[16] = 0x13; return b }), ErrNotBPDU},
		{"length cuts bpdu", mod(func(b []byte) []byte { b[13] = 3 + 3; return b }), ErrTruncated},
		{"length cuts config", mod(func(b []byte) []byte { b[13] = 3 + 34; return b }), ErrTruncated},
		{"protocol id", mod(func(b []byte) []byte { b[18] = 1; return b }), ErrBadValue},
		{"rst bpdu cut", mod(func(b []byte) []byte { b[19] = 2; b[20] = 2; return b }), ErrTruncated},
		{"rst bpdu version 0", mod(func(b []byte) []byte { b[13] = 3 + 36; b[20] = 2; return append(b, 0) }), ErrBadValue},
		{"type 3", mod(func(b []byte) []byte { b[19] = 2; b[20] = 3; return b }), ErrUnknownType},
		{"frame cut", cfg[:30], ErrTruncated},
	} {
		var m BPDU
		err := DecodeFrame(c.frame, &m)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "stp: ") {
			t.Errorf("%s: error %q lacks context", c.name, err)
		}
	}
	// A later protocol version's configuration BPDU is read as one, and
	// bytes beyond the 35 are ignored (§9.3.4).
	long := mod(func(b []byte) []byte { b[13] = 3 + 36; b[19] = 1; return b }) // version 1, 36 bytes
	var m BPDU
	if err := DecodeFrame(long, &m); err != nil || m.Version != 1 || m.RootPathCost != 4 {
		t.Fatalf("longer config bpdu: %v", err)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, m := range []BPDU{
		goldenConfig,
		{Type: TypeTCN},
		{Type: TypeConfig, TCA: true, Root: 1, Bridge: ^BridgeID(0), RootPathCost: ^uint32(0), Port: 0xffff, MessageAge: 0xffff, MaxAge: 1, HelloTime: 2, ForwardDelay: 3},
	} {
		f := AppendFrame([]byte{0xaa}, [6]byte{2, 0, 0, 0, 0, 1}, &m)
		var got BPDU
		if err := DecodeFrame(f[1:], &got); err != nil || got != m {
			t.Errorf("round trip %+v: got %+v %v", m, got, err)
		}
	}
}

func TestIDs(t *testing.T) {
	id := MakeBridgeID(0x1234, [6]byte{1, 2, 3, 4, 5, 6})
	if id.Priority() != 0x1234 || id.MAC() != [6]byte{1, 2, 3, 4, 5, 6} || id.String() != "1234.010203040506" {
		t.Fatalf("bridge id %v", id)
	}
	if MakeBridgeID(0x8000, [6]byte{0xff}) > MakeBridgeID(0x9000, [6]byte{}) {
		t.Fatal("priority does not dominate the MAC")
	}
	if p := MakePortID(0x80, 3); p != 0x8003 {
		t.Fatalf("port id %#x", p)
	}
	if p := MakePortID(0x8f, 0x0abc); p != 0x8abc {
		t.Fatalf("port id %#x", p)
	}
	if ToTime256(-1) != 0 || ToTime256(300*sec) != 0xffff || ToTime256(sec/256*3+1) != 3 {
		t.Fatal("ToTime256")
	}
}

// TestTshark checks that tshark's own STP dissector reads our frames. It
// skips without tshark (scripts/deps installs it) unless CI is set.
func TestTshark(t *testing.T) {
	bin, err := exec.LookPath("tshark")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tshark not found and CI is set")
		}
		t.Skip("tshark not found")
	}
	pcap := filepath.Join(t.TempDir(), "stp.pcap")
	f, err := os.Create(pcap)
	if err != nil {
		t.Fatal(err)
	}
	w, err := wire.NewPcapWriter(f, wire.LinkTypeEthernet, time.Unix(1_700_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range []string{goldenConfigHex, goldenTCNHex} {
		if err := w.WriteEthernet(int64(i)*1_000_000_000, unhex(t, h)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fields := []string{"stp.protocol", "stp.type", "stp.flags.tc", "stp.flags.tcack", "stp.root.prio", "stp.root.hw",
		"stp.root.cost", "stp.bridge.hw", "stp.port", "stp.msg_age", "stp.max_age", "stp.hello", "stp.forward"}
	args := []string{"-n", "-r", pcap, "-T", "fields", "-E", "separator=|"}
	for _, fl := range fields {
		args = append(args, "-e", fl)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "WIRESHARK_CONFIG_DIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v\n%s", cmd, err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := []string{
		"0x0000|0x00|1|0|32768|06:00:00:00:00:00|4|06:00:00:01:00:00|0x8001|1|20|2|15",
		"0x0000|0x80|||||||||||",
	}
	if len(lines) != len(want) {
		t.Fatalf("tshark printed %d lines:\n%s", len(lines), out)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("frame %d: tshark shows\n %s\nwant\n %s", i+1, lines[i], want[i])
		}
	}
}

func FuzzDecodeFrame(f *testing.F) {
	f.Add(unhex(f, goldenConfigHex))
	f.Add(unhex(f, goldenTCNHex))
	f.Add([]byte{})
	f.Add(unhex(f, goldenConfigHex)[:20])
	f.Add(AppendFrame(nil, [6]byte{2}, &BPDU{Type: TypeRST, Version: VersionRSTP, Role: BPDURoleRoot, Agreement: true, Learning: true,
		Forwarding: true, TC: true, Root: 1, Bridge: 2, Port: 0x8003, MaxAge: 20 * 256, HelloTime: 512, ForwardDelay: 15 * 256}))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m BPDU
		if err := DecodeFrame(b, &m); err != nil {
			return
		}
		// Whatever decodes re-encodes to a frame that decodes the same.
		out := AppendFrame(nil, [6]byte(b[6:12]), &m)
		var m2 BPDU
		if err := DecodeFrame(out, &m2); err != nil || m2 != m {
			t.Fatalf("re-encode of %+v: %+v %v", m, m2, err)
		}
	})
}

func BenchmarkDecodeFrame(b *testing.B) {
	frame := unhex(b, goldenConfigHex)
	b.ReportAllocs()
	var m BPDU
	for b.Loop() {
		if err := DecodeFrame(frame, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// The baseline: gopacket's DecodingLayerParser over Ethernet, LLC and STP.
func BenchmarkDecodeFrameGopacket(b *testing.B) {
	frame := unhex(b, goldenConfigHex)
	var eth layers.Ethernet
	var llc layers.LLC
	var s layers.STP
	p := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &llc, &s)
	p.IgnoreUnsupported = true
	decoded := make([]gopacket.LayerType, 0, 4)
	b.ReportAllocs()
	for b.Loop() {
		if err := p.DecodeLayers(frame, &decoded); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendFrame(b *testing.B) {
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendFrame(buf[:0], [6]byte{6, 0, 0, 1, 0, 1}, &goldenConfig)
	}
}
