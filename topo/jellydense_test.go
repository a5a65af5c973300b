package topo

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"
)

// A dense jellyfish (R near N) is a small graph: jellyfish:500,499,498
// has 500 switches and 125,000 links. Its draw looked at every pair of
// open switches, each by a scan of a neighbour list, thousands of times
// (jellyfish:400,399,398 took 82 s, 500 some minutes, 1000 hours); it
// now takes well under a second.
func TestJellyfishDenseQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 125,000-link graph")
	}
	done := make(chan error, 1)
	go func() {
		g, err := Parse("jellyfish:500,499,498", 1)
		if err == nil && g.NumLinks() < 500*498/2-1 {
			err = fmt.Errorf("%d links", g.NumLinks())
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("jellyfish:500,499,498 not drawn in 30 s")
	}
}

// The faster draw must draw the same graphs: the links (ends and ports)
// of sparse and dense draws, over six seeds each, hashed. The digest was
// taken from the draw before it was made faster; the STP and k-paths
// tests pin results on some of these graphs.
func TestJellyfishDrawsPinned(t *testing.T) {
	h := sha256.New()
	for _, s := range []string{"jellyfish:12,5,3", "jellyfish:16,6,4", "jellyfish:10,5,3", "jellyfish:7,4,4", "jellyfish:31,7,5", "jellyfish:40,30,20", "jellyfish:60,59,57", "jellyfish:80,79,78", "jellyfish:80,79,79", "jellyfish:200,24,12", "jellyfish:200,150,100", "jellyfish:150,149,148"} {
		for seed := uint64(0); seed < 6; seed++ {
			g, err := Parse(s, seed)
			if err != nil {
				t.Fatal(err)
			}
			for i := range g.NumLinks() {
				l := g.Link(LinkID(i))
				fmt.Fprintf(h, "%d:%d-%d:%d;", l.A.Node, l.A.Port, l.B.Node, l.B.Port)
			}
			fmt.Fprintf(h, "|")
		}
	}
	if got, want := fmt.Sprintf("%x", h.Sum(nil)), "57d706cba2d54e22c7aafc1770f705be5522881c16730c9ad1ee122194a79631"; got != want {
		t.Errorf("jellyfish draws changed: digest %s, want %s", got, want)
	}
}
