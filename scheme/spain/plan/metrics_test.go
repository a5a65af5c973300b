package plan

import (
	"math/rand/v2"
	"testing"
)

// TestNCPStreamsApartFromPairs: NCP trial t must not draw the numbers
// Algorithm 1 draws for the pair (0, t) (paths seeds pair (src, d) with
// (seed, src<<32|d)), or on a topology whose node 0 is an edge node the
// failure sets would follow the pairs' tie-break offsets.
func TestNCPStreamsApartFromPairs(t *testing.T) {
	for seed := uint64(0); seed < 4; seed++ {
		for tr := range 200 {
			pair := rand.New(rand.NewPCG(seed, uint64(0)<<32|uint64(tr)))
			if a, b := ncpRand(seed, tr).Uint64(), pair.Uint64(); a == b {
				t.Fatalf("seed %d: NCP trial %d draws %#x first, as the pair (0, %d) does", seed, tr, a, tr)
			}
		}
	}
}
