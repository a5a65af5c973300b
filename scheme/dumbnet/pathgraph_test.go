package dumbnet_test

import (
	"math/rand/v2"
	"testing"

	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/topo"
)

// TestPathGraphSizer on a ring of four switches, where every figure can be
// counted by hand: two switches apart, the primary and the backup take
// the two halves of the ring and the detour window holds the other middle
// switch; next to each other, the backup goes the long way round and only
// ε = 1 lets the window (bound s + ε = 3) take the two far switches.
func TestPathGraphSizer(t *testing.T) {
	g, err := topo.Parse("ring:4", 1)
	if err != nil {
		t.Fatal(err)
	}
	want, err := dumbnet.Expected(g)
	if err != nil {
		t.Fatal(err)
	}
	p := dumbnet.NewPathGraphSizer(want)
	id := func(name string) uint64 {
		n, ok := g.Lookup(name)
		if !ok {
			t.Fatalf("no %s", name)
		}
		return dumbnet.SwitchID(n)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		a, b string
		eps  int
		want dumbnet.PathGraphSize
	}{
		{"s1", "s3", 0, dumbnet.PathGraphSize{PrimaryHops: 2, BackupHops: 2, Switches: 4, Detours: 1, Links: 4}},
		{"s1", "s2", 0, dumbnet.PathGraphSize{PrimaryHops: 1, BackupHops: 3, Switches: 4, Detours: 0, Links: 4}},
		{"s1", "s2", 1, dumbnet.PathGraphSize{PrimaryHops: 1, BackupHops: 3, Switches: 4, Detours: 2, Links: 4}},
	} {
		got, err := p.Size(id(c.a), id(c.b), 2, c.eps, rng)
		if err != nil || got != c.want {
			t.Errorf("%s-%s ε=%d: %+v, %v; want %+v", c.a, c.b, c.eps, got, err, c.want)
		}
	}
	for _, bad := range []struct {
		a, b   uint64
		s, eps int
	}{
		{id("s1"), 999, 2, 0},
		{id("s1"), id("s2"), 0, 0},
		{id("s1"), id("s2"), 2, -1},
	} {
		if _, err := p.Size(bad.a, bad.b, bad.s, bad.eps, rng); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	// A switch the down links cut off has no path graph.
	for i := range want.Links {
		want.Links[i].Up = false
	}
	if _, err := dumbnet.NewPathGraphSizer(want).Size(id("s1"), id("s2"), 2, 0, rng); err == nil {
		t.Error("path graph across down links")
	}
}
