package topo

import (
	"runtime"
	"testing"
)

// allocBytes returns the bytes f allocates.
func allocBytes(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestLineRingPresized: line:n and ring:n reserve their nodes and links
// up front, as every other generator does. They grew the node table and
// the name index as they went: line:100000 allocated 222 MB where
// cube:100000,1,1,2, the same graph, allocates 66 MB, and `topo show
// line:1333333` (4 million nodes) peaked at 1.8 GB.
func TestLineRingPresized(t *testing.T) {
	const n = 100000
	for _, c := range []struct{ spec, same string }{
		{"line:100000", "cube:100000,1,1,2"},
		{"ring:100000", "torus:100000,1,1,2"},
	} {
		var g, same *Graph
		got := allocBytes(func() { g, _ = Parse(c.spec, 1) })
		want := allocBytes(func() { same, _ = Parse(c.same, 1) })
		if g == nil || same == nil {
			t.Fatalf("%s or %s did not build", c.spec, c.same)
		}
		if d := diffGraph(g, same); d != "" {
			t.Fatalf("%s and %s differ: %s", c.spec, c.same, d)
		}
		if got > want+want/4 {
			t.Errorf("%s allocates %d bytes, %s (the same graph) %d", c.spec, got, c.same, want)
		}
	}
}
