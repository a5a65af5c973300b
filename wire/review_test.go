package wire

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"
	"time"
)

// Review tests: each pins a defect found in the adversarial review of
// 2026-11-26 (an encoder that wrapped or dropped what it could not
// represent, or an error that named the wrong field).

// TestStdEncodersRefuseOversize: IPv4's total length is 16 bits, and
// gopacket's FixLengths wraps it (and UDP's length) silently: a 70,000-byte
// UDP payload went out as a frame whose headers claimed 4,464 bytes.
func TestStdEncodersRefuseOversize(t *testing.T) {
	src, dst := netip.AddrPortFrom(ipA, 1), netip.AddrPortFrom(ipB, 2)
	// The largest payloads fit and decode back whole.
	b, err := AppendUDPFrame(nil, macB, macA, src, dst, 0, make([]byte, 0xffff-ipv4HdrLen-udpHdrLen))
	if err != nil {
		t.Fatalf("UDP payload of 65507 bytes: %v", err)
	}
	if _, _, p, err := DecodeUDP(b); err != nil || len(p) != 0xffff-ipv4HdrLen-udpHdrLen {
		t.Fatalf("UDP payload of 65507 bytes decoded as %d bytes, %v", len(p), err)
	}
	if b, err := AppendTCPFrame(nil, macB, macA, ipA, ipB, 0, &TCPSegment{Payload: make([]byte, 0xffff-ipv4HdrLen-20)}); err != nil {
		t.Fatalf("TCP payload of 65495 bytes: %v", err)
	} else if _, _, s, err := DecodeTCP(b); err != nil || len(s.Payload) != 0xffff-ipv4HdrLen-20 {
		t.Fatalf("TCP payload of 65495 bytes decoded as %d bytes, %v", len(s.Payload), err)
	}
	if _, err := AppendICMPEchoFrame(nil, macB, macA, ipA, ipB, 0, &ICMPEcho{Data: make([]byte, 0xffff-ipv4HdrLen-8)}); err != nil {
		t.Fatalf("echo data of 65507 bytes: %v", err)
	}
	// One byte more does not fit and leaves b as it was.
	for name, f := range map[string]func([]byte) ([]byte, error){
		"udp": func(b []byte) ([]byte, error) {
			return AppendUDPFrame(b, macB, macA, src, dst, 0, make([]byte, 0xffff-ipv4HdrLen-udpHdrLen+1))
		},
		"udp 70000": func(b []byte) ([]byte, error) {
			return AppendUDPFrame(b, macB, macA, src, dst, 0, make([]byte, 70000))
		},
		"tcp": func(b []byte) ([]byte, error) {
			return AppendTCPFrame(b, macB, macA, ipA, ipB, 0, &TCPSegment{Payload: make([]byte, 0xffff-ipv4HdrLen-20+1)})
		},
		"icmp": func(b []byte) ([]byte, error) {
			return AppendICMPEchoFrame(b, macB, macA, ipA, ipB, 0, &ICMPEcho{Data: make([]byte, 0xffff-ipv4HdrLen-8+1)})
		},
	} {
		if b, err := f([]byte{0xaa}); !errors.Is(err, ErrBadLength) || !bytes.Equal(b, []byte{0xaa}) {
			t.Errorf("%s one byte too long: %d bytes, %v; want ErrBadLength and b unchanged", name, len(b), err)
		}
	}
}

// TestTCPFlagsRefused: ECE (0x40) and CWR (0x80) are not TCPFlags the
// encoder writes; they were dropped silently.
func TestTCPFlagsRefused(t *testing.T) {
	for _, f := range []TCPFlags{0x40, 0x80, TCPAck | 0x40} {
		if b, err := AppendTCPFrame([]byte{0xaa}, macB, macA, ipA, ipB, 0, &TCPSegment{Flags: f}); !errors.Is(err, ErrBadValue) || !bytes.Equal(b, []byte{0xaa}) {
			t.Errorf("flags %#02x: %d bytes, %v; want ErrBadValue", f, len(b), err)
		}
	}
}

// TestDumbNetMPLSPushNeedsIPVersion: MPLS carries no EtherType, so the
// receiving host restores it from the IP version nibble. A frame whose
// nibble disagrees with its EtherType (or that has no payload byte to read)
// came out of push, pop and strip with a different EtherType, or could not
// be stripped at all; push refuses it.
func TestDumbNetMPLSPushNeedsIPVersion(t *testing.T) {
	v6in4 := innerFrame()
	v6in4[EthHeaderLen] = 0x60
	v4in6 := innerFrame()
	Frame(v4in6).SetEtherType(EtherTypeIPv6)
	empty := AppendEthernet(nil, macA, macB, EtherTypeIPv4, nil)
	for name, fr := range map[string][]byte{"IPv6 in 0x0800": v6in4, "IPv4 in 0x86dd": v4in6, "no payload": empty} {
		orig := bytes.Clone(fr)
		out, err := DumbNetMPLSPush(fr, []uint8{1, 2})
		if err == nil {
			t.Errorf("%s: pushed", name)
			continue
		}
		if !bytes.Equal(out, orig) {
			t.Errorf("%s: frame changed on error", name)
		}
	}
	// A consistent frame still goes through push, pops and strip unchanged.
	fr := innerFrame()
	pkt, err := DumbNetMPLSPush(bytes.Clone(fr), []uint8{1, 2})
	for range 2 {
		if err == nil {
			_, pkt, err = DumbNetMPLSPop(pkt)
		}
	}
	if err == nil {
		pkt, err = DumbNetMPLSStrip(pkt)
	}
	if err != nil || !bytes.Equal(pkt, fr) {
		t.Errorf("push, pop, pop, strip: %x, %v; want %x", pkt, err, fr)
	}
}

// TestPcapTimestampRange: classic pcap holds unsigned 32-bit seconds since
// 1970. An epoch before 1970 wrapped into a timestamp near 2106, with a
// nanosecond field above 1e9 when the time was not a whole second.
func TestPcapTimestampRange(t *testing.T) {
	var buf bytes.Buffer
	if _, err := NewPcapWriter(&buf, LinkTypeEthernet, time.Date(1969, 12, 31, 23, 59, 59, 5, time.UTC)); !errors.Is(err, ErrBadValue) || buf.Len() != 0 {
		t.Errorf("epoch before 1970: %v, %d bytes written; want ErrBadValue and nothing", err, buf.Len())
	}
	if _, err := NewPcapWriter(&buf, LinkTypeEthernet, time.Unix(1<<32, 0)); !errors.Is(err, ErrBadValue) {
		t.Errorf("epoch in 2106: %v, want ErrBadValue", err)
	}
	// The last second pcap can hold is written; the next is refused.
	w, err := NewPcapWriter(&buf, LinkTypeEthernet, time.Unix(1<<32-2, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEthernet(1_999_999_999_999, innerFrame()); err != nil {
		t.Errorf("second 2^32-1: %v", err)
	}
	n := buf.Len()
	if err := w.WriteEthernet(2_000_000_000_000, innerFrame()); !errors.Is(err, ErrBadValue) || buf.Len() != n {
		t.Errorf("second 2^32: %v, %d bytes written; want ErrBadValue and nothing", err, buf.Len()-n)
	}
	// A refused timestamp does not break the writer.
	if err := w.WriteEthernet(0, innerFrame()); err != nil {
		t.Errorf("after a refused timestamp: %v", err)
	}
}

// TestAxonEncapShortFrame: AxonDecap refuses an Ethernet packet whose frame
// is shorter than an Ethernet header, so AxonEncap must not build one.
func TestAxonEncapShortFrame(t *testing.T) {
	hdr, err := (&AxonHeader{Type: AxonEthernet, Fwd: []uint8{1}}).AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := AxonEncap([]byte{0xaa}, hdr, innerFrame()[:EthHeaderLen-1]); !errors.Is(err, ErrTruncated) || !bytes.Equal(b, []byte{0xaa}) {
		t.Errorf("13-byte frame: %d bytes, %v; want ErrTruncated", len(b), err)
	}
	b, err := AxonEncap(nil, hdr, innerFrame()[:EthHeaderLen])
	if err != nil {
		t.Fatalf("14-byte frame: %v", err)
	}
	if _, err := AxonDecap(b); err != nil {
		t.Errorf("decap of encap: %v", err)
	}
	// A control packet carries a message, not a frame: any length.
	ctl, err := (&AxonHeader{Type: AxonControl, Fwd: []uint8{0xf}}).AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AxonEncap(nil, ctl, []byte{byte(SubAxonHello)}); err != nil {
		t.Errorf("control packet: %v", err)
	}
}

// TestMessagesRefuseZone: the length-prefixed address carries no zone;
// "fe80::1%eth0" was written as fe80::1 and decoded as another address.
// Every message with an address refuses it and leaves b unchanged.
func TestMessagesRefuseZone(t *testing.T) {
	z := netip.MustParseAddr("fe80::1%eth0")
	for _, m := range []Message{
		&Chirp{IP: z, MAC: macA},
		&AxonARP{SrcIP: z, TgtIP: ipB},
		&AxonARP{Reply: true, SrcIP: ipA, TgtIP: z},
		&DumbNetProbe{SrcIP: z},
		&DumbNetProbeReply{HostIP: z},
		&DumbNetPathQuery{DstIP: z},
		&OverlayVPort{Op: RecordAdd, IP: z},
	} {
		if b, err := m.AppendTo([]byte{0xaa}); !errors.Is(err, ErrBadValue) || !bytes.Equal(b, []byte{0xaa}) {
			t.Errorf("%T with %v: %x, %v; want ErrBadValue and b unchanged", m, z, b, err)
		}
		// Without the zone the same message encodes.
		switch v := m.(type) {
		case *Chirp:
			v.IP = z.WithZone("")
		case *AxonARP:
			v.SrcIP, v.TgtIP = v.SrcIP.WithZone(""), v.TgtIP.WithZone("")
		case *DumbNetProbe:
			v.SrcIP = z.WithZone("")
		case *DumbNetProbeReply:
			v.HostIP = z.WithZone("")
		case *DumbNetPathQuery:
			v.DstIP = z.WithZone("")
		case *OverlayVPort:
			v.IP = z.WithZone("")
		}
		if _, err := m.AppendTo(nil); err != nil {
			t.Errorf("%T without the zone: %v", m, err)
		}
	}
}
