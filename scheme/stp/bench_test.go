package stp

import (
	"io"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/edgefabric/edgefabric/element"
)

// benchEnv is the cheapest possible engine: a fixed clock, timers that
// never fire, and a Send that hands the buffer back to a one-slot pool
// (when pooled) so the forwarding path can run without allocating, as it
// does over sim's Allocator.
type benchEnv struct {
	now    element.Time
	sent   int
	pooled bool
	spare  []byte
}

func (e *benchEnv) Now() element.Time { return e.now }
func (e *benchEnv) Send(_ element.Port, f []byte) {
	e.sent++
	if e.pooled {
		e.spare = f
	}
}
func (e *benchEnv) After(element.Time, func()) func() { return func() {} }
func (e *benchEnv) Rand() *rand.Rand                  { return rand.New(rand.NewPCG(1, 2)) }
func (e *benchEnv) Log() *slog.Logger                 { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

type pooledEnv struct{ benchEnv }

func (e *pooledEnv) Alloc(n int) []byte {
	if cap(e.spare) >= n {
		b := e.spare[:n]
		e.spare = nil
		return b
	}
	return make([]byte, n)
}

// forwardingBridge returns a bridge whose nports ports are all forwarding,
// as after convergence.
func forwardingBridge(b testing.TB, env element.Env, nports int) *Bridge {
	br, err := New(Config{MAC: [6]byte{6, 0, 0, 0, 0, 0}})
	if err != nil {
		b.Fatal(err)
	}
	infos := make([]element.PortInfo, nports)
	for i := range infos {
		infos[i] = element.PortInfo{Port: element.Port(i + 1), Rate: 1e9, Up: true}
	}
	br.Attach(env, infos)
	for i := range br.ports {
		br.ports[i].state = Forwarding
	}
	return br
}

func frame(dst, src [6]byte, n int) []byte {
	f := make([]byte, n)
	copy(f, dst[:])
	copy(f[6:], src[:])
	f[12], f[13] = 0x08, 0x00
	return f
}

var (
	macA = [6]byte{2, 0, 0, 0, 0, 1}
	macB = [6]byte{2, 0, 0, 0, 0, 2}
)

// BenchmarkForwardKnown: a unicast frame to a learned station, the
// bridge's hot path: learn the source, look up the destination, copy the
// frame into a buffer for Send.
func BenchmarkForwardKnown(b *testing.B) {
	env := &benchEnv{}
	br := forwardingBridge(b, env, 48)
	br.Receive(2, frame(macA, macB, 1514)) // learn B on 2
	f := frame(macB, macA, 1514)
	b.SetBytes(int64(len(f)))
	b.ReportAllocs()
	for b.Loop() {
		br.Receive(1, f)
	}
}

// The same with the engine's buffer pool (sim.Allocator): no allocation.
func BenchmarkForwardKnownPooled(b *testing.B) {
	env := &pooledEnv{benchEnv{pooled: true}}
	br := forwardingBridge(b, env, 48)
	br.Receive(2, frame(macA, macB, 1514))
	f := frame(macB, macA, 1514)
	b.SetBytes(int64(len(f)))
	b.ReportAllocs()
	for b.Loop() {
		br.Receive(1, f)
	}
}

// The baseline for the two above: only the copy every Send needs.
func BenchmarkCopyBaseline(b *testing.B) {
	f := frame(macB, macA, 1514)
	b.SetBytes(int64(len(f)))
	b.ReportAllocs()
	var sink []byte
	for b.Loop() {
		sink = make([]byte, len(f))
		copy(sink, f)
	}
	_ = sink
}

// BenchmarkFlood48: a broadcast out of 47 ports.
func BenchmarkFlood48(b *testing.B) {
	env := &benchEnv{}
	br := forwardingBridge(b, env, 48)
	f := frame([6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, macA, 60)
	b.ReportAllocs()
	for b.Loop() {
		br.Receive(1, f)
	}
	b.ReportMetric(float64(env.sent)/float64(b.N), "copies/op")
}

// BenchmarkHello: a repeated configuration BPDU from the root on the root
// port of a 48-port bridge: decode, supersede check, record, timers, and
// relay on the 47 designated ports (all within their hold time after the
// first round, so the relays are deferred as the standard says).
func BenchmarkHello(b *testing.B) {
	env := &benchEnv{}
	br := forwardingBridge(b, env, 48)
	m := BPDU{Type: TypeConfig, Root: 1, Bridge: 1, Port: 0x8001, MaxAge: 20 * 256, HelloTime: 512, ForwardDelay: 15 * 256}
	f := AppendFrame(nil, [6]byte{2}, &m)
	b.ReportAllocs()
	for b.Loop() {
		br.Receive(1, f)
	}
}

// BenchmarkMACTable reports the memory one learned station costs: 100,000
// stations learned on one bridge.
func BenchmarkMACTable(b *testing.B) {
	const n = 100_000
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		env := &benchEnv{}
		br, _ := New(Config{MAC: [6]byte{6}, MaxEntries: n})
		br.Attach(env, []element.PortInfo{{Port: 1, Up: true}, {Port: 2, Up: true}})
		br.ports[0].state = Forwarding
		f := frame([6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, [6]byte{}, 60)
		for i := range n {
			f[8], f[9], f[10], f[11] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
			f[6] = 2
			br.Receive(1, f)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if br.Entries() != n {
			b.Fatalf("%d entries", br.Entries())
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/station")
		runtime.KeepAlive(br)
	}
}
