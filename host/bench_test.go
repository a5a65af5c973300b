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
