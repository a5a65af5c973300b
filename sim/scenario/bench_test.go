package scenario

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

func heapNow() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkMemoryPerHost reports the heap a simulated host costs: its
// share of the engine (node, ports, pipes, Env) plus its host stack and the
// STP fabric divided over the hosts, on fattree:16 (1024 hosts, 320
// switches), measured after every element is attached.
func BenchmarkMemoryPerHost(b *testing.B) {
	for _, spec := range []string{"fattree:8", "fattree:16"} {
		b.Run(spec, func(b *testing.B) {
			var per float64
			for range b.N {
				before := heapNow()
				sc, err := Parse([]byte("topology: "+spec+"\nscheme: stp\nduration: 1s\n"), "bench.yaml", Options{})
				if err != nil {
					b.Fatal(err)
				}
				r, err := sc.Setup(RunOptions{})
				if err != nil {
					b.Fatal(err)
				}
				r.Sim.Run(0)
				after := heapNow()
				per = float64(after-before) / float64(len(sc.Graph.Nodes(topo.Host)))
				runtime.KeepAlive(r)
			}
			b.ReportMetric(per, "B/host")
		})
	}
}

// BenchmarkMemoryPerFlow reports the heap each running TCP flow adds on
// fattree:8 under STP: 128 hosts each with F open bulk transfers (to hosts
// in other pods), measured 2 ms into the transfers, when windows and queues
// are full; the difference between F=4 and F=0 divided by the flows.
func BenchmarkMemoryPerFlow(b *testing.B) {
	setup := func(flows int) uint64 {
		y := "topology: fattree:8\nscheme: stp\nparams: {hello: 1s, max_age: 6s, forward_delay: 4s}\nduration: 20s\nworkloads:\n"
		for i := 1; i <= 128; i++ {
			for f := 1; f <= flows; f++ {
				y += fmt.Sprintf("  - tcp: {from: h%d, to: h%d, bytes: 100MB, port: %d, at: 9s}\n", i, (i+16*f+6)%128+1, 5000+f)
			}
		}
		sc, err := Parse([]byte(y), "bench.yaml", Options{})
		if err != nil {
			b.Fatal(err)
		}
		r, err := sc.Setup(RunOptions{})
		if err != nil {
			b.Fatal(err)
		}
		r.Sim.Run(9*element.Second + 2*element.Millisecond)
		h := heapNow()
		runtime.KeepAlive(r)
		return h
	}
	var per float64
	for range b.N {
		base := heapNow()
		h0 := setup(0) - base
		base = heapNow()
		h4 := setup(4) - base
		per = (float64(h4) - float64(h0)) / (4 * 128)
	}
	b.ReportMetric(per, "B/flow")
}

// BenchmarkScenarioSTPFatTree4 runs examples/stp-fattree4.yaml's workload
// end to end (parse, set up, 110 s of virtual time).
func BenchmarkScenarioSTPFatTree4(b *testing.B) {
	b.ReportAllocs()
	var ev uint64
	for range b.N {
		sc, err := Load("../../examples/stp-fattree4.yaml", Options{})
		if err != nil {
			b.Fatal(err)
		}
		res, err := sc.Run(RunOptions{})
		if err != nil {
			b.Fatal(err)
		}
		ev += res.Events
	}
	b.ReportMetric(float64(ev)/b.Elapsed().Seconds(), "events/s")
}
