package host

import (
	"encoding/binary"
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/edgefabric/edgefabric/element"
)

const (
	us   = element.Microsecond
	ms   = element.Millisecond
	sec  = element.Second
	gbps = 1_000_000_000
)

var (
	ipA = netip.MustParseAddr("10.0.0.1")
	ipB = netip.MustParseAddr("10.0.0.2")
)

func ser(n int, rate int64) element.Time {
	return element.Time(int64(n) * 8 * int64(sec) / rate)
}

// The first ping pays for ARP; the others take exactly two serializations
// and two propagation delays.
func TestPingRTTExact(t *testing.T) {
	const d = 10 * us
	n, a, b, ab, _ := pair(t, gbps, d, nil)
	n.run(sec) // gratuitous ARPs at start
	if a.Counter("arp_gratuitous_tx") != 1 || b.Counter("arp_gratuitous_rx") != 1 {
		t.Fatalf("gratuitous ARP: a %v b %v", a.Counters(), b.Counters())
	}
	// The gratuitous ARP does not create entries (RFC 826 merges only).
	if _, ok := b.ARPCache(ipA); ok {
		t.Fatal("gratuitous ARP created a cache entry")
	}
	start := n.now
	p := a.Ping(ipB, 3, ms)
	n.run(start + 10*sec)
	if !p.Done() {
		t.Fatal("ping not done")
	}
	r := p.Result()
	arp := len(ab.log[len(ab.log)-3-1].f) // the request, before the three echoes
	if arp != 60 {                        // gopacket pads ARP to the Ethernet minimum
		t.Fatalf("ARP frame %d bytes, want 60", arp)
	}
	echo := ser(98, gbps) + d
	want := []element.Time{ser(60, gbps) + d + ser(60, gbps) + d + 2*echo, 2 * echo, 2 * echo}
	if r.Sent != 3 || r.Received != 3 || r.Loss != 0 || len(r.RTTs) != 3 {
		t.Fatalf("result %+v", r)
	}
	for i := range want {
		if r.RTTs[i] != want[i] {
			t.Errorf("rtt[%d] = %v, want %v", i, r.RTTs[i], want[i])
		}
	}
	if b.Counter("icmp_echo_rx") != 3 || b.Counter("arp_request_tx") != 1 /* its gratuitous one */ {
		t.Errorf("b counters %v", b.Counters())
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	}
}

// A ping to an address nobody holds: three ARP requests a second apart,
// then the queued echo requests are dropped and counted.
func TestARPUnresolved(t *testing.T) {
	n, a, _, ab, _ := pair(t, gbps, us, nil)
	n.run(sec)
	base := len(ab.log)
	ghost := netip.MustParseAddr("10.0.0.9")
	p := a.Ping(ghost, 2, 100*ms)
	n.run(20 * sec)
	r := p.Result()
	if r.Sent != 2 || r.Received != 0 || r.Loss != 1 {
		t.Fatalf("result %+v", r)
	}
	if got := a.Counter("arp_request_tx") - 1; got != 3 { // minus the gratuitous one
		t.Errorf("requests %d, want 3", got)
	}
	if a.Counter("drop_arp_unresolved") != 2 || a.Counter("arp_failed") != 1 {
		t.Errorf("counters %v", a.Counters())
	}
	// Requests at 1 s, 2 s, 3 s (the ping started at 1 s).
	var times []element.Time
	for _, s := range ab.log[base:] {
		times = append(times, s.t)
	}
	if len(times) != 3 || times[0] != sec || times[1] != 2*sec || times[2] != 3*sec {
		t.Errorf("request times %v", times)
	}
	if _, ok := a.ARPCache(ghost); ok {
		t.Error("failed entry kept")
	}
}

func TestARPQueueOverflow(t *testing.T) {
	n, a, _, _, _ := pair(t, gbps, us, func(c *Config) { c.ARPQueue = 2 })
	n.run(sec)
	ghost := netip.MustParseAddr("10.0.0.9")
	a.Ping(ghost, 5, us)
	n.run(sec + 100*us)
	if a.Counter("drop_arp_queue_full") != 3 {
		t.Fatalf("counters %v", a.Counters())
	}
	if e, _ := a.ARPCache(ghost); e.Queued != 2 || e.Resolved {
		t.Fatalf("entry %+v", e)
	}
}

// Entries age: after ARPTimeout the next packet re-confirms with a request
// while still using the old entry.
func TestARPAging(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, func(c *Config) { c.ARPTimeout = 5 * sec })
	n.run(sec)
	a.Ping(ipB, 1, sec)
	n.run(2 * sec)
	e, ok := a.ARPCache(ipB)
	if !ok || !e.Resolved || e.MAC != b.MAC() {
		t.Fatalf("entry %+v", e)
	}
	exp := e.Expires
	if exp <= sec || exp > sec+5*sec+sec {
		t.Fatalf("expires %v", exp)
	}
	reqs := a.Counter("arp_request_tx")
	a.Ping(ipB, 1, sec) // still fresh: no request
	n.run(3 * sec)
	if a.Counter("arp_request_tx") != reqs {
		t.Fatal("fresh entry re-resolved")
	}
	n.run(exp + sec)
	p := a.Ping(ipB, 1, sec)
	n.run(exp + 3*sec)
	if a.Counter("arp_request_tx") != reqs+1 || a.Counter("arp_refresh") != 1 || p.Result().Received != 1 {
		t.Fatalf("stale entry: counters %v, ping %+v", a.Counters(), p.Result())
	}
	if e2, _ := a.ARPCache(ipB); e2.Expires <= exp {
		t.Fatalf("not refreshed: %+v", e2)
	}
}

// A gratuitous ARP for a known address updates the cache (a VM that moved).
func TestGratuitousARPUpdates(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	a.Ping(ipB, 1, sec)
	n.run(2 * sec)
	// b changes its address to a.'s neighbour entry of ... a new MAC
	// cannot be set, so b moves to a new IP; a learns nothing new, but
	// b's GARP for the new address is counted on a.
	b.SetAddr(netip.MustParsePrefix("10.0.0.3/24"))
	n.run(3 * sec)
	if b.Counter("arp_gratuitous_tx") != 2 || a.Counter("arp_gratuitous_rx") != 2 {
		t.Fatalf("a %v b %v", a.Counters(), b.Counters())
	}
	// Someone claims 10.0.0.2 with another MAC: a's entry follows.
	f := garp([6]byte{2, 0, 0, 0, 0, 7}, ipB)
	a.Receive(1, f)
	if e, _ := a.ARPCache(ipB); e.MAC != [6]byte{2, 0, 0, 0, 0, 7} || a.Counter("arp_changed") != 1 {
		t.Fatalf("entry %+v counters %v", e, a.Counters())
	}
	// And a's own address claimed by another MAC is a conflict.
	a.Receive(1, garp([6]byte{2, 0, 0, 0, 0, 8}, ipA))
	if a.Counter("arp_conflict") != 1 {
		t.Fatalf("counters %v", a.Counters())
	}
}

func garp(mac [6]byte, ip netip.Addr) []byte {
	eth := &layers.Ethernet{SrcMAC: mac[:], DstMAC: []byte{255, 255, 255, 255, 255, 255}, EthernetType: layers.EthernetTypeARP}
	v := ip.As4()
	arp := &layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6, ProtAddressSize: 4,
		Operation: 1, SourceHwAddress: mac[:], SourceProtAddress: v[:], DstHwAddress: make([]byte, 6), DstProtAddress: v[:]}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, eth, arp); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// Every frame the host sends decodes in gopacket with valid checksums.
func TestFramesDecode(t *testing.T) {
	n, a, b, ab, ba := pair(t, gbps, 5*us, nil)
	n.run(sec)
	a.Ping(ipB, 2, ms)
	a.UDP(ipB, 9000, 10_000_000, 200, ms)
	a.TCPBulk(ipB, DiscardPort, 100_000)
	a.TCPRR(ipB, 10, 20, 3)
	n.run(5 * sec)
	_ = b
	kinds := map[gopacket.LayerType]int{}
	for _, w := range []*wireEnd{ab, ba} {
		for _, s := range w.log {
			p := gopacket.NewPacket(s.f, layers.LayerTypeEthernet, gopacket.Default)
			if el := p.ErrorLayer(); el != nil {
				t.Fatalf("decode error %v in % x", el.Error(), s.f)
			}
			for _, l := range p.Layers() {
				kinds[l.LayerType()]++
			}
			if ip, ok := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4); ok {
				if fold(checksum(0, s.f[ethLen:ethLen+ipLen])) != 0 {
					t.Fatalf("bad IP checksum in % x", s.f)
				}
				v, _ := parseIPv4(s.f[ethLen:])
				switch ip.Protocol {
				case layers.IPProtocolTCP:
					if l4Checksum(v.src, v.dst, protoTCP, v.l4) != 0 {
						t.Fatalf("bad TCP checksum")
					}
					// Cross-check with gopacket's own computation.
					tcp := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
					want := tcp.Checksum
					tcp.SetNetworkLayerForChecksum(ip)
					buf := gopacket.NewSerializeBuffer()
					if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{ComputeChecksums: true}, tcp, gopacket.Payload(tcp.Payload)); err != nil {
						t.Fatal(err)
					}
					if got := binary.BigEndian.Uint16(buf.Bytes()[16:18]); got != want {
						t.Fatalf("TCP checksum %04x, gopacket computes %04x", want, got)
					}
				case layers.IPProtocolUDP:
					if l4Checksum(v.src, v.dst, protoUDP, v.l4) != 0 {
						t.Fatalf("bad UDP checksum")
					}
				case layers.IPProtocolICMPv4:
					if fold(checksum(0, v.l4)) != 0 {
						t.Fatalf("bad ICMP checksum")
					}
				}
			}
		}
	}
	for _, k := range []gopacket.LayerType{layers.LayerTypeARP, layers.LayerTypeICMPv4, layers.LayerTypeUDP, layers.LayerTypeTCP} {
		if kinds[k] == 0 {
			t.Errorf("no %v frames seen: %v", k, kinds)
		}
	}
}

// TestARPTableBound: requests from ever new senders (a flood, or a
// spoofer) fill the table only up to ARPMaxEntries; past it the host
// still answers, counts arp_table_full and caches nothing more.
func TestARPTableBound(t *testing.T) {
	n, a, _, _, _ := pair(t, gbps, us, func(c *Config) { c.ARPMaxEntries = 4 })
	n.run(sec)
	before := a.Counter("arp_reply_tx")
	for i := range 10 {
		mac := [6]byte{2, 0, 0, 0, 1, byte(i)}
		f := garp(mac, netip.AddrFrom4([4]byte{10, 1, 0, byte(i + 1)}))
		// a request for a's address from 10.1.0.i+1
		copy(f[14+24:14+28], ipA.AsSlice())
		a.Receive(1, f)
	}
	if got := a.Counter("arp_reply_tx") - before; got != 10 {
		t.Errorf("%d replies to 10 requests", got)
	}
	if got := a.Counter("arp_table_full"); got != 10-4 {
		t.Errorf("arp_table_full %d, counters %v", got, a.Counters())
	}
	cached := 0
	for i := range 10 {
		if _, ok := a.ARPCache(netip.AddrFrom4([4]byte{10, 1, 0, byte(i + 1)})); ok {
			cached++
		}
	}
	if cached != 4 {
		t.Errorf("%d senders cached, want 4", cached)
	}
}

// TestARPTableFullScansOnce: a flood of new senders against a table full
// of live entries scans the table once, not once per frame (a table of
// 65,536 entries made every such frame cost a walk over all of them), and
// garbage is still collected once it can exist.
func TestARPTableFullScansOnce(t *testing.T) {
	n, a, _, _, _ := pair(t, gbps, us, func(c *Config) { c.ARPMaxEntries = 4; c.ARPTimeout = 10 * sec })
	n.run(sec)
	request := func(i int) {
		mac := [6]byte{2, 0, 0, 0, byte(i >> 8), byte(i)}
		f := garp(mac, netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}))
		copy(f[14+24:14+28], ipA.AsSlice())
		a.Receive(1, f)
	}
	i := 1
	for ; a.Counter("arp_table_full") == 0; i++ {
		request(i)
	}
	scans, full := a.arp.scans, a.Counter("arp_table_full")
	for range 1000 {
		request(i)
		i++
	}
	if got := a.arp.scans - scans; got != 0 {
		t.Errorf("%d more scans of the full table for 1000 new senders, want none", got)
	}
	if scans != 1 {
		t.Errorf("%d scans to find the table full, want 1", scans)
	}
	if got := a.Counter("arp_table_full") - full; got != 1000 {
		t.Errorf("arp_table_full +%d, want +1000", got)
	}
	// Unused for twice ARPTimeout, the entries are garbage: the next
	// sender is cached again.
	n.run(25 * sec)
	request(2000)
	if _, ok := a.ARPCache(netip.AddrFrom4([4]byte{10, 1, 2000 >> 8, 2000 & 255})); !ok {
		t.Errorf("sender not cached after the table's entries aged out; counters %v", a.Counters())
	}
	if a.Counter("arp_gc") == 0 {
		t.Errorf("no arp_gc after the entries aged out")
	}
}

// TestPingInFlightAtEnd: a result taken before the ping is done leaves
// out the requests whose timeout has not run out (a run that ends just
// after the last request reported it lost); older unanswered ones are
// lost, and a finished ping has nothing in flight.
func TestPingInFlightAtEnd(t *testing.T) {
	const d = 10 * us
	n, a, _, _, _ := pair(t, gbps, d, nil)
	n.run(sec)
	a.Ping(ipB, 1, ms) // resolve ARP first
	n.run(2 * sec)
	start := n.now
	p := a.Ping(ipB, 3, ms)
	n.run(start + 2*ms + d) // the third request is on the wire
	r := p.Result()
	if p.Done() || r.Sent != 3 || r.Received != 2 || r.InFlight != 1 || r.Loss != 0 {
		t.Fatalf("cut off after the third request: done %v, result %+v", p.Done(), r)
	}
	n.run(start + 3*sec)
	if r = p.Result(); !p.Done() || r.Received != 3 || r.InFlight != 0 || r.Loss != 0 {
		t.Fatalf("finished: done %v, result %+v", p.Done(), r)
	}

	// Nobody answers: requests older than the 1-s timeout are lost, the
	// newer ones in flight.
	ghost := netip.MustParseAddr("10.0.0.9")
	start = n.now
	p = a.PingWith(ghost, PingOptions{Count: 4, Interval: 400 * ms})
	n.run(start + 1700*ms) // requests at +0, +0.4, +0.8, +1.2 s
	if r = p.Result(); r.Sent != 4 || r.Received != 0 || r.InFlight != 2 || r.Loss != 1 {
		t.Fatalf("unanswered, cut off: result %+v", r)
	}
}

// TestARPSustainedFloodScansBounded: a steady flood of new senders (one a
// millisecond against a table of 256, entries garbage after 2 s) frees
// slots one by one as its own entries age: without a floor every frame
// walked the table again (1,030 walks in 10 s); now one per 32 refusals
// at most, and the table still takes new senders as old ones age out.
func TestARPSustainedFloodScansBounded(t *testing.T) {
	n, a, _, _, _ := pair(t, gbps, us, func(c *Config) { c.ARPMaxEntries = 256; c.ARPTimeout = sec })
	n.run(sec)
	start := n.now
	for i := range 10_000 {
		n.run(start + element.Time(i)*ms)
		mac := [6]byte{2, 0, 0, 0, byte(i >> 8), byte(i)}
		f := garp(mac, netip.AddrFrom4([4]byte{10, 2, byte(i >> 8), byte(i)}))
		copy(f[14+24:14+28], ipA.AsSlice())
		a.Receive(1, f)
	}
	// One walk per 32 refusals (256/8) or per second, whichever first.
	if a.arp.scans > 10_000/32+11 {
		t.Errorf("%d walks of the full table for 10,000 frames, want at most %d", a.arp.scans, 10_000/32+11)
	}
	if gc := a.Counter("arp_gc"); gc < 2*256 {
		t.Errorf("arp_gc %d: aged senders not collected (counters %v)", gc, a.Counters())
	}
}
