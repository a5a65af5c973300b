package host

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/edgefabric/edgefabric/element"
)

// frameTo builds a valid IPv4 frame from a to b carrying l4 (checksums
// fixed for TCP, UDP and ICMP), so a test can break one thing at a time.
func frameTo(a, b *Host, proto uint8, l4 []byte) []byte {
	f := a.newIPFrame(b.Addr().As4(), proto, len(l4))
	copy(f[0:6], b.mac[:])
	copy(f[ethLen+ipLen:], l4)
	fixL4(f)
	return f
}

func fixL4(f []byte) {
	ip := f[ethLen:]
	hl := int(ip[0]&0xf) * 4
	if hl < ipLen || len(ip) < hl {
		return
	}
	l4 := ip[hl:]
	var src, dst [4]byte
	copy(src[:], ip[12:16])
	copy(dst[:], ip[16:20])
	switch ip[9] {
	case protoTCP:
		if len(l4) >= tcpLen {
			l4[16], l4[17] = 0, 0
			binary.BigEndian.PutUint16(l4[16:18], l4Checksum(src, dst, protoTCP, l4))
		}
	case protoUDP:
		if len(l4) >= udpLen {
			l4[6], l4[7] = 0, 0
			binary.BigEndian.PutUint16(l4[6:8], l4Checksum(src, dst, protoUDP, l4))
		}
	case protoICMP:
		if len(l4) >= icmpLen {
			l4[2], l4[3] = 0, 0
			binary.BigEndian.PutUint16(l4[2:4], fold(checksum(0, l4)))
		}
	}
}

func fixIP(f []byte) {
	ip := f[ethLen:]
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:12], fold(checksum(0, ip[:ipLen])))
}

func tcpHdr(sport, dport uint16, seq, ack uint32, flags uint8, opts []byte) []byte {
	t := make([]byte, tcpLen+len(opts))
	binary.BigEndian.PutUint16(t[0:2], sport)
	binary.BigEndian.PutUint16(t[2:4], dport)
	binary.BigEndian.PutUint32(t[4:8], seq)
	binary.BigEndian.PutUint32(t[8:12], ack)
	t[12] = byte((tcpLen + len(opts)) / 4 << 4)
	t[13] = flags
	binary.BigEndian.PutUint16(t[14:16], 65535)
	copy(t[tcpLen:], opts)
	return t
}

// fromSource rewrites a frame's IPv4 source and fixes its checksums.
func fromSource(f []byte, a, b, c, d byte) []byte {
	copy(f[ethLen+12:], []byte{a, b, c, d})
	fixIP(f)
	fixL4(f)
	return f
}

// Every kind of bad frame is dropped and counted under its own name.
func TestMalformedFramesCounted(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	udp := func(l []byte) []byte { return frameTo(a, b, protoUDP, l) }
	okUDP := []byte{0, 9, 0, 9, 0, 12, 0, 0, 1, 2, 3, 4}
	cases := []struct {
		name string
		port element.Port
		f    func() []byte
		want string
	}{
		{"bad port", 2, func() []byte { return udp(okUDP) }, "drop_bad_port"},
		{"runt", 1, func() []byte { return []byte{1, 2, 3} }, "drop_eth_truncated"},
		{"other MAC", 1, func() []byte { f := udp(okUDP); f[5] = 0x77; return f }, "drop_not_for_us"},
		{"vlan", 1, func() []byte { f := udp(okUDP); f[12], f[13] = 0x81, 0; return f }, "drop_vlan_tagged"},
		{"ethertype", 1, func() []byte { f := udp(okUDP); f[12], f[13] = 0x88, 0xb5; return f }, "drop_ethertype"},
		{"ip truncated", 1, func() []byte { return udp(okUDP)[:ethLen+10] }, "drop_ip_truncated"},
		{"ip version", 1, func() []byte { f := udp(okUDP); f[ethLen] = 0x65; return f }, "drop_ip_bad_version"},
		{"ip ihl", 1, func() []byte { f := udp(okUDP); f[ethLen] = 0x44; fixIP(f); return f }, "drop_ip_bad_length"},
		{"ip total length", 1, func() []byte { f := udp(okUDP); f[ethLen+2] = 0xff; fixIP(f); return f }, "drop_ip_bad_length"},
		{"ip checksum", 1, func() []byte { f := udp(okUDP); f[ethLen+10] ^= 0xff; return f }, "drop_ip_bad_checksum"},
		{"fragment", 1, func() []byte { f := udp(okUDP); f[ethLen+6] = 0x20; fixIP(f); return f }, "drop_ip_fragment"},
		{"not our IP", 1, func() []byte { f := udp(okUDP); f[ethLen+19] = 77; fixIP(f); return f }, "drop_ip_not_for_us"},
		// Sources a reply could not go back to (RFC 1122 §3.2.1.3): the
		// echo would be broadcast, a SYN would open a connection to all.
		{"source limited broadcast", 1, func() []byte {
			return fromSource(frameTo(a, b, protoICMP, []byte{8, 0, 0, 0, 0, 1, 0, 1}), 255, 255, 255, 255)
		}, "drop_ip_bad_source"},
		{"source subnet broadcast", 1, func() []byte {
			return fromSource(frameTo(a, b, protoTCP, tcpHdr(1000, 80, 1, 0, flagSYN, nil)), 10, 0, 0, 255)
		}, "drop_ip_bad_source"},
		{"source multicast", 1, func() []byte { return fromSource(udp(okUDP), 224, 0, 0, 1) }, "drop_ip_bad_source"},
		{"source loopback", 1, func() []byte { return fromSource(udp(okUDP), 127, 0, 0, 1) }, "drop_ip_bad_source"},
		{"proto", 1, func() []byte { return frameTo(a, b, 47, []byte{1, 2, 3, 4}) }, "drop_ip_proto"},
		{"icmp short", 1, func() []byte { return frameTo(a, b, protoICMP, []byte{8, 0, 0}) }, "drop_icmp_truncated"},
		{"icmp checksum", 1, func() []byte {
			f := frameTo(a, b, protoICMP, []byte{8, 0, 0, 0, 0, 1, 0, 1})
			f[len(f)-1] ^= 1
			return f
		}, "drop_icmp_bad_checksum"},
		{"icmp code", 1, func() []byte { return frameTo(a, b, protoICMP, []byte{8, 5, 0, 0, 0, 1, 0, 1}) }, "drop_icmp_bad_code"},
		{"unmatched echo reply", 1, func() []byte { return frameTo(a, b, protoICMP, []byte{0, 0, 0, 0, 0, 99, 0, 1}) }, "icmp_echo_reply_unmatched"},
		{"udp short", 1, func() []byte { return udp([]byte{0, 9, 0, 9}) }, "drop_udp_truncated"},
		{"udp length", 1, func() []byte { l := append([]byte(nil), okUDP...); l[5] = 99; return udp(l) }, "drop_udp_bad_length"},
		{"udp checksum", 1, func() []byte { f := udp(okUDP); f[len(f)-1] ^= 1; return f }, "drop_udp_bad_checksum"},
		{"tcp short", 1, func() []byte { return frameTo(a, b, protoTCP, make([]byte, 10)) }, "drop_tcp_truncated"},
		{"tcp offset", 1, func() []byte {
			h := tcpHdr(1000, 80, 1, 0, flagSYN, nil)
			h[12] = 15 << 4
			return frameTo(a, b, protoTCP, h)
		}, "drop_tcp_bad_offset"},
		{"tcp checksum", 1, func() []byte {
			f := frameTo(a, b, protoTCP, tcpHdr(1000, 80, 1, 0, flagSYN, nil))
			f[len(f)-1] ^= 1
			return f
		}, "drop_tcp_bad_checksum"},
		{"tcp option length", 1, func() []byte { return frameTo(a, b, protoTCP, tcpHdr(1000, 80, 1, 0, flagSYN, []byte{2, 9, 0, 0})) }, "drop_tcp_bad_option"},
		{"tcp mss length", 1, func() []byte { return frameTo(a, b, protoTCP, tcpHdr(1000, 80, 1, 0, flagSYN, []byte{2, 3, 0, 1})) }, "drop_tcp_bad_option"},
		{"tcp port zero", 1, func() []byte { return frameTo(a, b, protoTCP, tcpHdr(0, 80, 1, 0, flagSYN, nil)) }, "drop_tcp_port_zero"},
		{"tcp broadcast", 1, func() []byte {
			f := frameTo(a, b, protoTCP, tcpHdr(1000, 80, 1, 0, flagSYN, nil))
			copy(f[ethLen+16:], []byte{10, 0, 0, 255})
			fixIP(f)
			fixL4(f)
			return f
		}, "drop_tcp_not_unicast"},
		{"tcp no conn", 1, func() []byte { return frameTo(a, b, protoTCP, tcpHdr(1000, 80, 1, 5, flagACK, nil)) }, "tcp_no_conn"},
		{"tcp rst no conn", 1, func() []byte { return frameTo(a, b, protoTCP, tcpHdr(1000, 80, 1, 5, flagRST, nil)) }, "tcp_rst_unmatched"},
		{"arp short", 1, func() []byte {
			f := udp(okUDP)[:ethLen+10]
			f[12], f[13] = 0x08, 0x06
			return f
		}, "drop_arp_malformed"},
		{"arp bad op", 1, func() []byte {
			f := garp([6]byte{2, 0, 0, 0, 0, 9}, netip.MustParseAddr("10.0.0.9"))
			f[ethLen+7] = 9
			return f
		}, "drop_arp_invalid"},
	}
	for _, c := range cases {
		before := b.Counter(c.want)
		b.Receive(c.port, c.f())
		if got := b.Counter(c.want); got != before+1 {
			t.Errorf("%s: counter %s = %d, want %d; counters %v", c.name, c.want, got, before+1, b.Counters())
		}
	}
}

// Calls before Attach are counted, not fatal.
func TestBeforeAttach(t *testing.T) {
	h := New(Config{Name: "x", IP: netip.MustParsePrefix("10.0.0.1/24")})
	h.Receive(1, make([]byte, 60))
	h.LinkChange(1, true)
	if h.Counter("drop_not_attached") != 1 {
		t.Fatalf("counters %v", h.Counters())
	}
	if c := h.TCPBulk(ipB, 80, 10); !c.Done() || c.Err() == nil {
		t.Fatal("bulk before attach")
	}
	if a := h.ShuffleTo(nil, ShuffleOptions{}); !a.Done() || a.Result().Error == "" {
		t.Fatal("shuffle before attach")
	}
}

// pseudoSum agrees with a byte-by-byte sum for addresses with every bit
// pattern (Go gives | and + one precedence; this once bit).
func TestPseudoSum(t *testing.T) {
	for _, c := range [][2][4]byte{{{255, 255, 255, 255}, {0, 0, 0, 0}}, {{10, 1, 2, 3}, {192, 168, 255, 1}}, {{0xff, 0x01, 0x80, 0x7f}, {0x12, 0x34, 0x56, 0x78}}} {
		b := append(append(append([]byte{}, c[0][:]...), c[1][:]...), 0, 17, 0x05, 0xdc)
		if got, want := fold(pseudoSum(c[0], c[1], 17, 1500)), fold(checksum(0, b)); got != want {
			t.Errorf("%v: %04x, want %04x", c, got, want)
		}
	}
}

// FuzzReceive feeds arbitrary frames to a host with a live connection. Mode
// byte 0: the raw frame (its destination MAC forced to the host's, so it
// gets past the filter); 1: an IPv4 packet from the peer with the given
// protocol and L4 bytes, checksums fixed, so that the TCP, UDP and ICMP
// logic is reached; 2: like 1, aimed at the live connection's ports.
// Nothing may panic, and the stack must still work afterwards.
func FuzzReceive(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3})
	f.Add(append([]byte{1, protoTCP}, tcpHdr(1000, 80, 1, 0, flagSYN, []byte{2, 4, 5, 0xb4, 1, 3, 3, 7})...))
	f.Add(append([]byte{2, protoTCP}, tcpHdr(0, 0, 1, 1, flagACK, nil)...))
	f.Add(append([]byte{2, protoTCP}, append(tcpHdr(0, 0, 1, 1, flagACK|flagFIN, nil), 1, 2, 3)...))
	f.Add([]byte{1, protoUDP, 0, 9, 0, 9, 0, 8, 0, 0})
	f.Add([]byte{1, protoICMP, 8, 0, 0, 0, 0, 1, 0, 1})
	f.Fuzz(func(t *testing.T, in []byte) {
		n, a, b, _, _ := pair(t, gbps, us, nil)
		n.run(sec)
		c := a.TCPBulk(ipB, DiscardPort, 100_000)
		n.run(sec + 100*us)
		if len(in) < 2 {
			return
		}
		var fr []byte
		switch in[0] % 3 {
		case 0:
			fr = append([]byte(nil), in[1:]...)
			if len(fr) >= 6 {
				copy(fr, b.mac[:])
			}
		default:
			l4 := append([]byte(nil), in[2:]...)
			if in[0]%3 == 2 && len(l4) >= 4 {
				binary.BigEndian.PutUint16(l4[0:2], c.key.lport)
				binary.BigEndian.PutUint16(l4[2:4], c.key.rport)
				if len(l4) >= 12 {
					// Keep sequence numbers near the live window.
					k := b.Conn(FlowKey{LocalPort: c.key.rport, Remote: ipA, RemotePort: c.key.lport})
					if k != nil {
						binary.BigEndian.PutUint32(l4[4:8], k.rseqOf(k.rcvNxt)+binary.BigEndian.Uint32(l4[4:8])%4096)
						binary.BigEndian.PutUint32(l4[8:12], k.seqOf(k.sndUna)+binary.BigEndian.Uint32(l4[8:12])%4096)
					}
				}
			}
			fr = frameTo(a, b, in[1], l4)
		}
		b.Receive(1, fr)
		a.Receive(1, fr)
		n.run(30 * sec)
		// The stack still answers.
		p := a.Ping(ipB, 1, ms)
		n.run(32 * sec)
		if p.Result().Received != 1 {
			t.Fatalf("host dead after input % x: %v", in, b.Counters())
		}
	})
}

// checksum agrees with the plain RFC 1071 16-bit loop for every length and
// alignment.
func TestChecksumMatchesReference(t *testing.T) {
	ref := func(b []byte) uint16 {
		var s uint32
		for i := 0; i+1 < len(b); i += 2 {
			s += uint32(b[i])<<8 | uint32(b[i+1])
		}
		if len(b)%2 == 1 {
			s += uint32(b[len(b)-1]) << 8
		}
		for s>>16 != 0 {
			s = s&0xffff + s>>16
		}
		return ^uint16(s)
	}
	b := make([]byte, 1600)
	for i := range b {
		b[i] = byte(i*131 + i>>3)
	}
	for i := range b[:40] {
		b[i] = 0xff
	}
	for n := 0; n <= len(b); n++ {
		for off := 0; off < 3 && off <= n; off++ {
			if got, want := fold(checksum(0, b[off:n])), ref(b[off:n]); got != want {
				t.Fatalf("len %d off %d: %04x, want %04x", n-off, off, got, want)
			}
		}
	}
}

// TestUDPFlowTableBound: app datagrams from ever new source ports are
// tracked per flow only up to UDPMaxFlows; the rest are counted by port
// and as udp_flows_full.
func TestUDPFlowTableBound(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, func(c *Config) { c.UDPMaxFlows = 3 })
	n.run(sec)
	for sport := range uint16(10) {
		l4 := make([]byte, udpLen+udpHdrLen)
		binary.BigEndian.PutUint16(l4[0:2], 1000+sport)
		binary.BigEndian.PutUint16(l4[2:4], 5001)
		binary.BigEndian.PutUint16(l4[4:6], uint16(len(l4)))
		binary.BigEndian.PutUint32(l4[udpLen:], udpMagic)
		binary.BigEndian.PutUint64(l4[udpLen+4:], 1)
		b.Receive(1, frameTo(a, b, protoUDP, l4))
	}
	if got := b.Counter("udp_flows_full"); got != 7 {
		t.Errorf("udp_flows_full %d, counters %v", got, b.Counters())
	}
	if ps := b.UDPPort(5001); ps.Packets != 10 {
		t.Errorf("port counted %d datagrams, want 10", ps.Packets)
	}
	if _, ok := b.UDPFlow(a.Addr(), 1003, 5001); ok {
		t.Error("a fourth flow was tracked")
	}
	if _, ok := b.UDPFlow(a.Addr(), 1002, 5001); !ok {
		t.Error("the third flow was not tracked")
	}
}

// TestTCPConnTableBound: SYNs from ever new source ports open
// connections only up to TCP.MaxConns; the rest are dropped and counted,
// without a reset.
func TestTCPConnTableBound(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, func(c *Config) { c.TCP.MaxConns = 3 })
	n.run(sec)
	rst := b.Counter("tcp_rst_tx")
	for sport := range uint16(10) {
		b.Receive(1, frameTo(a, b, protoTCP, tcpHdr(2000+sport, 5001, 1, 0, flagSYN, nil)))
	}
	if b.Counter("tcp_accept") != 3 || b.Counter("drop_tcp_syn_table_full") != 7 || b.Counter("tcp_rst_tx") != rst {
		t.Errorf("counters %v", b.Counters())
	}
}
