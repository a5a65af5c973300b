package paths

import (
	"errors"
	"testing"
)

// FuzzParseTies: --ties takes exactly pair (or nothing), random, ordered
// and node, each naming itself back; anything else is ErrBadTies.
func FuzzParseTies(f *testing.F) {
	for _, s := range []string{"", "random", "ordered", "node", "pair", "Random", "nodes", "pairs", "ordered\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ties, err := ParseTies(s)
		switch s {
		case "", "random", "ordered", "node", "pair":
			want := s
			if s == "" {
				want = "pair"
			}
			if err != nil || ties.String() != want {
				t.Fatalf("%q: %v, %v", s, ties, err)
			}
		default:
			if !errors.Is(err, ErrBadTies) {
				t.Fatalf("%q accepted as %v (%v)", s, ties, err)
			}
		}
	})
}
