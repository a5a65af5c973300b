package plan

import (
	"os"
	"testing"

	"github.com/edgefabric/edgefabric/topo"
)

// BenchmarkPlan measures the whole plan (paths, packing with one trial,
// verification) for the Table 3 topologies. The large rows run only with
// EDGEFABRIC_BENCH_LARGE=1: FatTree(48) and BCube(8,4) need GBs.
//
//	go test ./scheme/spain/plan -run '^$' -bench Plan -benchtime 1x -benchmem
func BenchmarkPlan(b *testing.B) {
	specs := []string{"spain-testbed", "fattree:4", "fattree:8", "fattree:16", "hyperx:3", "hyperx:4", "hyperx:8",
		"ciscodc:2,2", "ciscodc:3,2", "ciscodc:4,3", "ciscodc:8,8", "bcube:8,2"}
	if os.Getenv("EDGEFABRIC_BENCH_LARGE") != "" {
		specs = append(specs, "hyperx:16", "bcube:48,2", "fattree:48", "bcube:8,4")
	}
	for _, spec := range specs {
		g, err := topo.Parse(spec, 1)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(spec, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := Compute(g, Options{Trials: 1, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(p.NumVLANs), "vlans")
			}
		})
	}
}
