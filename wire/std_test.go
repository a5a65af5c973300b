package wire

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
)

// TestStdDecodersRefuseTruncated: a frame shorter than its IPv4 total
// length (or UDP length) says is an error, not a silently shorter payload
// (gopacket only flags it); so is a UDP length below the header's 8 bytes,
// which gopacket reads as an IPv6 jumbogram.
func TestStdDecodersRefuseTruncated(t *testing.T) {
	src, dst := netip.AddrPortFrom(ipA, 68), netip.AddrPortFrom(ipB, 67)
	udp, err := AppendUDPFrame(nil, macB, macA, src, dst, 64, make([]byte, 300))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, p, err := DecodeUDP(udp); err != nil || len(p) != 300 {
		t.Fatalf("whole frame: %d bytes, %v", len(p), err)
	}
	if _, _, p, err := DecodeUDP(udp[:52]); !errors.Is(err, ErrBadLength) {
		t.Errorf("UDP cut to 52 bytes: payload %d bytes, err %v", len(p), err)
	}
	zero := append([]byte(nil), udp...)
	binary.BigEndian.PutUint16(zero[EthHeaderLen+20+4:], 0)
	if _, _, p, err := DecodeUDP(zero); !errors.Is(err, ErrBadLength) {
		t.Errorf("UDP length 0: payload %d bytes, err %v", len(p), err)
	}
	if _, err := DecodeDHCP(udp[:100]); !errors.Is(err, ErrBadLength) {
		t.Errorf("DHCP frame cut: %v", err)
	}
	tcp, err := AppendTCPFrame(nil, macB, macA, ipA, ipB, 64, &TCPSegment{SrcPort: 1, DstPort: 2, Flags: TCPAck, Payload: make([]byte, 1000)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, s, err := DecodeTCP(tcp[:61]); !errors.Is(err, ErrBadLength) {
		t.Errorf("TCP cut to 61 bytes: payload %d bytes, err %v", len(s.Payload), err)
	}
	icmp, err := AppendICMPEchoFrame(nil, macB, macA, ipA, ipB, 64, &ICMPEcho{ID: 1, Seq: 1, Data: make([]byte, 56)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, e, err := DecodeICMPEcho(icmp[:45]); !errors.Is(err, ErrBadLength) {
		t.Errorf("ICMP echo cut to 45 bytes: data %d bytes, err %v", len(e.Data), err)
	}
}

// TestAxonProbeBodyAppendLeavesBOnError: encoders leave b as it was on
// error (docs/wire.md); the probe body once appended origin, seq and the
// records before the bad one.
func TestAxonProbeBodyAppendLeavesBOnError(t *testing.T) {
	p := AxonProbeBody{Origin: 7, Seq: 1, Records: []AxonProbeRecord{{Port: 1, Dir: ProbeIn}, {Port: 2, Dir: 0}}}
	b := []byte{0xaa}
	got, err := p.AppendTo(b)
	if !errors.Is(err, ErrBadValue) || len(got) != 1 || got[0] != 0xaa {
		t.Fatalf("AppendTo: % x, %v; want aa and ErrBadValue", got, err)
	}
}

// TestAppendARPFrameRefusesBadVLAN: a VID above 4095 does not fit the
// 12-bit field; it was masked into another VLAN (4097 became VLAN 1)
// instead of refused, as AppendChirpFrame and VLAN records refuse it.
func TestAppendARPFrameRefusesBadVLAN(t *testing.T) {
	a := &ARP{Op: ARPRequest, SenderMAC: macA, SenderIP: ipA, TargetIP: ipB}
	b := []byte{0xaa}
	got, err := AppendARPFrame(b, Broadcast, 4097, a)
	if !errors.Is(err, ErrBadValue) || len(got) != 1 {
		t.Fatalf("VLAN 4097: %d bytes, %v; want b unchanged and ErrBadValue", len(got), err)
	}
	if f, err := AppendARPFrame(nil, Broadcast, 4095, a); err != nil {
		t.Fatalf("VLAN 4095: %v", err)
	} else if _, tag, ok := VLANOf(f); !ok || tag.VID() != 4095 {
		t.Fatalf("VLAN 4095 written as %v %v", tag.VID(), ok)
	}
}
