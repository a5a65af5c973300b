package host

import (
	"bytes"
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/insomniacslk/dhcp/dhcpv4"
)

// FuzzParse runs the in-place decoders over arbitrary bytes: no panic;
// a header parseIPv4 accepts decodes alike with gopacket (addresses,
// protocol, the payload the total length bounds), and every view lies
// inside the input.
func FuzzParse(f *testing.F) {
	f.Add([]byte{0x45, 0, 0, 20, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2})
	f.Add(make([]byte, 60))
	f.Fuzz(func(t *testing.T, b []byte) {
		ip, r := parseIPv4(b)
		if r != "" {
			return
		}
		var ref layers.IPv4
		if err := ref.DecodeFromBytes(b, gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("accepted % x, which gopacket refuses: %v", b, err)
		}
		if [4]byte(ref.SrcIP.To4()) != ip.src || [4]byte(ref.DstIP.To4()) != ip.dst || uint8(ref.Protocol) != ip.proto || !bytes.Equal(ref.Payload, ip.l4) {
			t.Fatalf("% x: ours %v>%v proto %d l4 %d bytes; gopacket %v>%v proto %d payload %d bytes",
				b, ip.src, ip.dst, ip.proto, len(ip.l4), ref.SrcIP, ref.DstIP, ref.Protocol, len(ref.Payload))
		}
		if len(ip.l4) > len(b) {
			t.Fatalf("l4 %d bytes from %d", len(ip.l4), len(b))
		}
		if s, r := parseTCP(&ip); r == "" && len(s.payload) > len(ip.l4)-tcpLen {
			t.Fatalf("tcp payload %d of %d", len(s.payload), len(ip.l4))
		}
		if d, r := parseUDP(&ip); r == "" && len(d.payload) > len(ip.l4)-udpLen {
			t.Fatalf("udp payload %d of %d", len(d.payload), len(ip.l4))
		}
	})
}

// FuzzDHCPClient feeds arbitrary DHCP replies to a client in every state
// where it takes replies (the first byte picks SELECTING, REQUESTING,
// BOUND, RENEWING or REBINDING, modulo 5; the last three after a real
// lease; from 128 on, the client checks its addresses by ARP,
// Config.DHCPARPCheck); the transaction ID and hardware address are
// patched in so that the bytes get past the first checks. No panic, and a
// well-formed server still gets it bound afterwards.
func FuzzDHCPClient(f *testing.F) {
	f.Add([]byte{0, 2, 1, 6, 0})
	f.Add(append([]byte{3}, make([]byte, 300)...))
	f.Add(append([]byte{4}, make([]byte, 300)...))
	// 131 % 5: REQUESTING, checking; an ACK, which starts the check.
	ack, err := dhcpv4.New(dhcpv4.WithMessageType(dhcpv4.MessageTypeAck), dhcpv4.WithYourIP(net.IPv4(10, 0, 0, 101)),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IPv4(10, 0, 0, 1))))
	if err != nil {
		f.Fatal(err)
	}
	ack.OpCode = dhcpv4.OpcodeBootReply
	f.Add(append([]byte{131}, ack.ToBytes()...))
	states := []DHCPState{DHCPSelecting, DHCPRequesting, DHCPBound, DHCPRenewing, DHCPRebinding}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		st := states[int(in[0])%len(states)]
		n, h, s := dhcpPair(t, 0)
		if in[0] >= 128 {
			h.cfg.DHCPARPCheck = sec // read at the ACK, after attach
		}
		bound := st != DHCPSelecting && st != DHCPRequesting
		s.silent = !bound
		n.run(ms + h.cfg.DHCPARPCheck)
		s.silent = true
		// Each state reached the way the client reaches it, timers and all.
		switch st {
		case DHCPRequesting:
			h.dhcp.receive(dhcpReply(t, h, h.dhcp.xid, dhcpv4.MessageTypeOffer, net.IPv4(10, 0, 0, 101)))
		case DHCPRenewing:
			h.dhcp.state = DHCPRenewing // what the T1 timer does
			h.dhcp.renew()
		case DHCPRebinding:
			h.dhcp.rebind()
		}
		if h.dhcp.state != st || bound != h.Addr().IsValid() {
			t.Fatalf("could not reach %v (in %v, address %v)", st, h.dhcp.state, h.Addr())
		}
		p := append([]byte(nil), in[1:]...)
		if len(p) >= 8 {
			copy(p[4:8], h.dhcp.xid[:])
		}
		if len(p) >= 34 {
			copy(p[28:34], h.mac[:])
		}
		h.dhcp.receive(p)
		n.run(2 * ms)
		h.dhcp.receive(p) // again, in whatever state the first left it
		s.silent = false
		n.run(200 * sec)
		if !h.Addr().IsValid() {
			t.Fatalf("not bound after state %v, % x: %v", st, in[1:], h.Counters())
		}
	})
}
