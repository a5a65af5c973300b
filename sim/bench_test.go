package sim

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"syscall"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// fatTree builds a k-ary fat tree (k pods of k/2 edge and k/2 aggregation
// switches, (k/2)^2 cores, k/2 hosts per edge switch) with topo.Builder, so
// the engine's benchmarks do not depend on the generators' package.
func fatTree(tb testing.TB, k int) *topo.Graph {
	tb.Helper()
	b := topo.NewBuilder(fmt.Sprintf("fattree:%d", k))
	h := k / 2
	core := make([]topo.NodeID, h*h)
	for i := range core {
		core[i] = b.AddNode(fmt.Sprintf("c%d", i+1), topo.Switch)
	}
	host := 0
	for p := range k {
		aggs := make([]topo.NodeID, h)
		for a := range h {
			aggs[a] = b.AddNode(fmt.Sprintf("a%d_%d", p, a), topo.Switch)
			for c := range h {
				b.Connect(aggs[a], core[a*h+c])
			}
		}
		for e := range h {
			es := b.AddNode(fmt.Sprintf("e%d_%d", p, e), topo.Switch)
			for a := range h {
				b.Connect(es, aggs[a])
			}
			for range h {
				host++
				b.Connect(b.AddNode(fmt.Sprintf("h%d", host), topo.Host), es)
			}
		}
	}
	g, err := b.Graph()
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// routes computes, for every node and destination host index, the output
// port on a shortest path, spreading equal-cost choices by destination
// (ECMP by destination hash).
func routes(g *topo.Graph) [][]element.Port {
	hosts := g.Nodes(topo.Host)
	tab := make([][]element.Port, g.NumNodes())
	for i := range tab {
		tab[i] = make([]element.Port, len(hosts)+1)
	}
	dist := make([]int, g.NumNodes())
	for hi, h := range hosts {
		for i := range dist {
			dist[i] = -1
		}
		dist[h] = 0
		q := []topo.NodeID{h}
		for len(q) > 0 {
			n := q[0]
			q = q[1:]
			for _, l := range g.Ports(n) {
				if l == topo.NoLink {
					continue
				}
				m := g.Link(l).Other(n).Node
				if dist[m] < 0 {
					dist[m] = dist[n] + 1
					if g.Node(m).Kind == topo.Switch {
						q = append(q, m)
					}
				}
			}
		}
		for n := range g.NumNodes() {
			var cand []element.Port
			for p, l := range g.Ports(topo.NodeID(n)) {
				if l != topo.NoLink && dist[n] > 0 && dist[g.Link(l).Other(topo.NodeID(n)).Node] == dist[n]-1 {
					cand = append(cand, element.Port(p+1))
				}
			}
			if len(cand) > 0 {
				tab[n][hi+1] = cand[splitmix(uint64(hi)<<20|uint64(n))%uint64(len(cand))]
			}
		}
	}
	return tab
}

// staticFwd forwards by destination MAC (the address plan's host index in
// bytes 2..5) through a precomputed table: the forwarding hot path with the
// least element work, so the benchmark measures the engine.
type staticFwd struct {
	env   element.Env
	alloc Allocator
	tab   []element.Port
	pool  bool
}

func (f *staticFwd) Attach(env element.Env, _ []element.PortInfo) {
	f.env = env
	if a, ok := env.(Allocator); ok && f.pool {
		f.alloc = a
	}
}
func (f *staticFwd) Receive(p element.Port, frame []byte) {
	if len(frame) < 14 {
		return
	}
	k := int(binary.BigEndian.Uint32(frame[2:6]))
	if k <= 0 || k >= len(f.tab) || f.tab[k] == 0 {
		return
	}
	var out []byte
	if f.alloc != nil {
		out = f.alloc.Alloc(len(frame))
		copy(out, frame)
	} else {
		out = append([]byte(nil), frame...)
	}
	f.env.Send(f.tab[k], out)
}
func (f *staticFwd) LinkChange(element.Port, bool) {}

// blaster sends size-byte frames to one destination at its line rate.
type blaster struct {
	env   element.Env
	alloc Allocator
	dst   [6]byte
	size  int
	gap   element.Time
	sent  int
	recv  int
}

func (b *blaster) Attach(env element.Env, ports []element.PortInfo) {
	b.env = env
	b.alloc, _ = env.(Allocator)
	b.gap = element.Time(int64(b.size+24) * 8 * int64(element.Second) / ports[0].Rate)
	env.After(element.Time(env.Rand().IntN(int(b.gap))), b.tick)
}
func (b *blaster) tick() {
	f := b.alloc.Alloc(b.size)
	copy(f, b.dst[:])
	b.env.Send(1, f)
	b.sent++
	b.env.After(b.gap, b.tick)
}
func (b *blaster) Receive(element.Port, []byte)  { b.recv++ }
func (b *blaster) LinkChange(element.Port, bool) {}

// saturated builds fattree:k with every host blasting 1514-byte frames at
// line rate to a host in another pod (a permutation), switches forwarding
// statically.
func saturated(tb testing.TB, k int, pool bool, trace TraceMode, queue ...int) *Sim {
	g := fatTree(tb, k)
	tab := routes(g)
	o := Options{Seed: 1, Trace: trace}
	if len(queue) > 0 {
		o.QueueBytes = queue[0]
	}
	s := mustNew(tb, g, o)
	hosts := g.Nodes(topo.Host)
	for i, h := range hosts {
		d := (i + len(hosts)/2 + 1) % len(hosts)
		must(tb, s.Place(h, &blaster{dst: topo.HostMAC(d + 1), size: 1514}))
	}
	for _, n := range g.Nodes(topo.Switch) {
		must(tb, s.Place(n, &staticFwd{tab: tab[n], pool: pool}))
	}
	return s
}

func TestSaturatedFatTreeDelivers(t *testing.T) {
	s := saturated(t, 4, true, TraceFull)
	s.Run(element.Millisecond)
	// Conservation: every frame a host sent was received by a host,
	// dropped and counted somewhere, or is still in a pipe.
	var sent, rx, drops, inPipes uint64
	for _, h := range s.g.Nodes(topo.Host) {
		sent += uint64(s.Element(h).(*blaster).sent)
		st, _ := s.PortStats(h, 1)
		rx += st.RxFrames
	}
	for n := range s.g.NumNodes() {
		for p := 1; p <= s.g.Node(topo.NodeID(n)).Ports; p++ {
			st, _ := s.PortStats(topo.NodeID(n), element.Port(p))
			drops += st.TotalDrops()
		}
	}
	for i := range s.pipes {
		inPipes += uint64(len(s.pipes[i].fl) - s.pipes[i].dh)
	}
	if sent != rx+drops+inPipes {
		t.Fatalf("sent %d != received %d + dropped %d + in pipes %d", sent, rx, drops, inPipes)
	}
	// 16 hosts at line rate for 1 ms: about 81 frames each.
	if sent < 16*80 || rx < sent/2 {
		t.Fatalf("sent %d, received %d in 1 ms", sent, rx)
	}
}

func benchSaturated(b *testing.B, pool bool, trace TraceMode, queue ...int) {
	s := saturated(b, 8, pool, trace, queue...)
	s.Run(element.Millisecond) // warm up: queues fill, pools fill
	b.ReportAllocs()
	b.ResetTimer()
	start := s.Events()
	t := s.Now()
	cpu0 := cpuTime()
	for range b.N {
		t += 100 * element.Microsecond
		s.Run(t)
	}
	ev := s.Events() - start
	b.ReportMetric(float64(ev)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(ev), "ns/event")
	// CPU time of the process (this benchmark is single-threaded; the GC
	// adds a little): robust against other load on a shared machine,
	// unlike wall time.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(ev), "cpu-ns/event")
}

// BenchmarkSaturatedFatTree8 measures the engine on fattree:8 (80 switches,
// 128 hosts) with every host sending at 1 Gb/s line rate: one op is 100 us
// of virtual time.
func BenchmarkSaturatedFatTree8(b *testing.B) {
	b.Run("pool/trace=full", func(b *testing.B) { benchSaturated(b, true, TraceFull) })
	b.Run("pool/trace=headers", func(b *testing.B) { benchSaturated(b, true, TraceHeaders) })
	b.Run("pool/trace=off", func(b *testing.B) { benchSaturated(b, true, TraceOff) })
	b.Run("alloc/trace=full", func(b *testing.B) { benchSaturated(b, false, TraceFull) })
	// Shallow queues: fewer frames in flight, so the frames the engine and
	// elements touch stay in cache; the default 512 KiB queues of a
	// saturated fabric hold tens of megabytes of frames.
	b.Run("pool/trace=full/queue=32KiB", func(b *testing.B) { benchSaturated(b, true, TraceFull, 32<<10) })
	b.Run("pool/trace=off/queue=32KiB", func(b *testing.B) { benchSaturated(b, true, TraceOff, 32<<10) })
}

// BenchmarkHeap is one pop and one push on a 1024-event heap (about a
// saturated fattree:8's pending events); BenchmarkHeapReplace does the same
// with replaceTop. The engine's event list is the calendar (see
// BenchmarkCalendar); the heap holds only its events beyond the horizon.
func BenchmarkHeap(b *testing.B) {
	var h eventHeap
	for i := range 1024 {
		h.push(event{t: element.Time(i) * 12 * element.Nanosecond, seq: uint64(i)})
	}
	b.ReportAllocs()
	b.ResetTimer()
	seq := uint64(1024)
	for range b.N {
		e := h.pop()
		seq++
		e.t += 12304 * element.Nanosecond
		e.seq = seq
		h.push(e)
	}
}

// cpuTime returns the process's user+system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func BenchmarkHeapReplace(b *testing.B) {
	var h eventHeap
	for i := range 1024 {
		h.push(event{t: element.Time(i) * 12 * element.Nanosecond, seq: uint64(i)})
	}
	b.ReportAllocs()
	b.ResetTimer()
	seq := uint64(1024)
	for range b.N {
		e := *h.peek()
		seq++
		e.t += 12304 * element.Nanosecond
		e.seq = seq
		h.replaceTop(e)
	}
}

// BenchmarkEngineMemory reports the engine's own heap per node and per link
// direction (nodes, ports, pipes, Envs; elements excluded: they are the
// tiny hub of the determinism test) on fattree:16 (1344 nodes, 3072 links).
func BenchmarkEngineMemory(b *testing.B) {
	g := fatTree(b, 16)
	var perNode float64
	for range b.N {
		before := heapNow()
		s := mustNew(b, g, Options{})
		for n := range g.NumNodes() {
			must(b, s.Place(topo.NodeID(n), &hub{}))
		}
		s.Run(0)
		perNode = float64(heapNow()-before) / float64(g.NumNodes())
		runtime.KeepAlive(s)
	}
	b.ReportMetric(perNode, "B/node")
}

func heapNow() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkCalendar is BenchmarkHeapReplace on the engine's event list:
// 1024 pending events spread over ~12 us (a saturated fabric's frame
// times), each replaced by its successor one frame time later.
func BenchmarkCalendar(b *testing.B) {
	var c calendar
	for i := range 1024 {
		c.push(event{t: element.Time(i) * 12 * element.Nanosecond, seq: uint64(i)})
	}
	b.ReportAllocs()
	b.ResetTimer()
	seq := uint64(1024)
	for range b.N {
		e := *c.peek()
		seq++
		e.t += 12304 * element.Nanosecond
		e.seq = seq
		c.replaceTop(e)
	}
}
