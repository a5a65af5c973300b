package host

import (
	"testing"

	"github.com/edgefabric/edgefabric/wire"
)

// FuzzParse runs the in-place decoders over arbitrary bytes: no panic,
// and every view they return lies inside the input.
func FuzzParse(f *testing.F) {
	f.Add([]byte{0x45, 0, 0, 20, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2})
	f.Add(make([]byte, 60))
	f.Fuzz(func(t *testing.T, b []byte) {
		ip, r := parseIPv4(b)
		if r != "" {
			return
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

// FuzzDHCPClient feeds arbitrary DHCP replies to a client in every state it
// can reach; the transaction ID and hardware address are patched in so that
// the bytes get past the first checks. No panic, and a well-formed server
// still gets it bound afterwards.
func FuzzDHCPClient(f *testing.F) {
	f.Add([]byte{2, 1, 6, 0})
	f.Add(make([]byte, 300))
	f.Fuzz(func(t *testing.T, in []byte) {
		n, h, s := dhcpPair(t, 0)
		s.silent = true
		n.run(ms)
		p := append([]byte(nil), in...)
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
			t.Fatalf("not bound after % x: %v", in, h.Counters())
		}
		_ = wire.MAC{}
	})
}
