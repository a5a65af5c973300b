package host

import (
	"net/netip"
	"runtime"
	"testing"

	"github.com/edgefabric/edgefabric/element"
)

// BenchmarkBulk10MB moves 10 MB over one 10 Gb/s wire of the fake engine
// and reports simulated segments per second of real time. Baseline: the
// same wire carrying the same number of pre-built frames between two
// elements that do nothing (the fake engine's own cost).
func BenchmarkBulk10MB(b *testing.B) {
	b.Run("host", func(b *testing.B) {
		b.ReportAllocs()
		var segs uint64
		for b.Loop() {
			n, a, _, _, _ := pair(b, 10*gbps, 5*us, nil)
			n.run(sec)
			c := a.TCPBulk(ipB, DiscardPort, 10_000_000)
			n.run(10 * sec)
			if !c.Done() {
				b.Fatal("not done")
			}
			segs += c.segsOut + c.segsIn
		}
		b.ReportMetric(float64(segs)/b.Elapsed().Seconds(), "segments/s")
	})
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		var segs uint64
		for b.Loop() {
			n := &fakeNet{}
			x, y := &nop{}, &nop{}
			ex, ey := n.add(x, 1), n.add(y, 2)
			n.connect(ex, 1, ey, 1, 10*gbps, 5*us)
			n.attach()
			f := make([]byte, 1514)
			for range 6850 * 2 {
				ex.Send(1, f)
			}
			n.run(10 * sec)
			segs += 6850 * 2
		}
		b.ReportMetric(float64(segs)/b.Elapsed().Seconds(), "segments/s")
	})
}

type nop struct{}

func (nop) Attach(element.Env, []element.PortInfo) {}
func (nop) Receive(element.Port, []byte)           {}
func (nop) LinkChange(element.Port, bool)          {}

func heapBytes() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkMemoryPerHost reports the heap held by one attached, idle host
// (after its gratuitous ARP), against the baseline of the engine's node.
func BenchmarkMemoryPerHost(b *testing.B) {
	const k = 2000
	for b.Loop() {
		n := &fakeNet{}
		base := heapBytes()
		for i := range k {
			n.add(&nop{}, uint64(i))
		}
		nodeOnly := heapBytes() - base
		n2 := &fakeNet{}
		base = heapBytes()
		hs := make([]*Host, k)
		for i := range k {
			hs[i] = New(Config{Name: "h", MAC: [6]byte{2, 0, 0, 0, byte(i >> 8), byte(i)}, IP: netip.MustParsePrefix("10.0.0.1/8")})
			n2.add(hs[i], uint64(i))
		}
		n2.attach()
		n2.run(sec)
		withHost := heapBytes() - base
		b.ReportMetric(float64(withHost)/k, "B/host")
		b.ReportMetric(float64(nodeOnly)/k, "B/baseline-node")
		runtime.KeepAlive(hs)
		runtime.KeepAlive(n)
	}
}

// BenchmarkMemoryPerFlow reports the heap held per established, idle TCP
// connection (both ends: the client's and the sink's), against the
// baseline of two hosts without flows.
func BenchmarkMemoryPerFlow(b *testing.B) {
	const k = 5000
	for b.Loop() {
		n, a, _, _, _ := pair(b, 10*gbps, us, func(c *Config) { c.TCP.TimeWait = sec })
		a.Ping(ipB, 1, ms) // resolve ARP first: the SYNs would overflow its queue
		n.run(sec)
		base := heapBytes()
		conns := make([]*TCPConn, 0, k)
		for range k {
			c, err := a.Connect(ipB, DiscardPort)
			if err != nil {
				b.Fatal(err)
			}
			conns = append(conns, c)
		}
		n.run(2 * sec)
		for _, c := range conns {
			if c.State() != StateEstablished {
				b.Fatalf("state %v", c.State())
			}
		}
		per := float64(heapBytes()-base) / k
		b.ReportMetric(per, "B/flow")
		runtime.KeepAlive(conns)
	}
}

// refChecksum is the plain 16-bit RFC 1071 loop: the baseline the
// word-at-a-time checksum is measured against.
func refChecksum(b []byte) uint16 {
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

func BenchmarkChecksum1480(b *testing.B) {
	buf := make([]byte, 1480)
	for i := range buf {
		buf[i] = byte(i)
	}
	b.Run("words", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		for b.Loop() {
			_ = fold(checksum(0, buf))
		}
	})
	b.Run("baseline", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		for b.Loop() {
			_ = refChecksum(buf)
		}
	})
}

// BenchmarkParseSegment parses a full-size TCP frame (IPv4 and TCP
// checksums verified, options walked): the host's receive-side cost before
// the state machine.
func BenchmarkParseSegment(b *testing.B) {
	n, a, bb, _, _ := pair(b, gbps, us, nil)
	n.run(sec)
	f := frameTo(a, bb, protoTCP, append(tcpHdr(1000, 80, 1, 1, flagACK, nil), make([]byte, 1460)...))
	b.ReportAllocs()
	b.SetBytes(int64(len(f)))
	for b.Loop() {
		ip, r := parseIPv4(f[ethLen:])
		if r != "" {
			b.Fatal(r)
		}
		if _, r := parseTCP(&ip); r != "" {
			b.Fatal(r)
		}
	}
}
