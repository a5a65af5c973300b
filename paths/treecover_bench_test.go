package paths

import "testing"

// BenchmarkTreeCover measures one tree-cover trial alone, on one worker
// (the path set is built outside the timer): FatTree(32) (every path in a
// BFS tree) and BCube(5,4) (a fifth of the paths loose, placed by the
// majority round and by best fit, one after the other on one worker).
func BenchmarkTreeCover(b *testing.B) {
	for _, spec := range []string{"fattree:32", "bcube:5,4"} {
		f, ps := mustAlphaPaths(b, spec)
		base := STP(f).Links
		b.Run(spec, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				st, ok := treeCover(f, ps, base, 1, 0, 0, MaxVLANs)
				if !ok {
					b.Fatal("limit hit")
				}
				b.ReportMetric(float64(len(st.vlinks)), "vlans")
			}
		})
	}
}
