package topo

import (
	"errors"
	"testing"
)

// TestGeneratorsRefuseNegativeHosts: the generator functions are public
// (Parse refuses negative arguments before calling them; direct callers
// must get the same protection). A negative host count was taken as
// given: HyperX(3, -5) and LeafSpine(2, 2, -3) numbered ports from below
// 1, which wrapped to 65,532 and up as 16-bit port numbers, and
// CiscoDCHosts, Cube and Torus built graphs named "cube:2,2,2,-3".
func TestGeneratorsRefuseNegativeHosts(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func() (*Graph, error)
		field string
	}{
		{"HyperX(3,-5)", func() (*Graph, error) { return HyperX(3, -5) }, "T"},
		{"HyperX(3,-1)", func() (*Graph, error) { return HyperX(3, -1) }, "T"},
		{"LeafSpine(2,2,-3)", func() (*Graph, error) { return LeafSpine(2, 2, -3) }, "H"},
		{"CiscoDCHosts(1,1,-4)", func() (*Graph, error) { return CiscoDCHosts(1, 1, -4) }, "H"},
		{"Cube(2,2,2,-3)", func() (*Graph, error) { return Cube(2, 2, 2, -3) }, "H"},
		{"Torus(3,3,3,-1)", func() (*Graph, error) { return Torus(3, 3, 3, -1) }, "H"},
	} {
		g, err := c.build()
		if err == nil {
			t.Errorf("%s: accepted (%d nodes, %d links)", c.name, g.NumNodes(), g.NumLinks())
			continue
		}
		if !errors.Is(err, ErrBadValue) || err.Error()[:len(c.field)+1] != c.field+":" {
			t.Errorf("%s: %v; want a bad value of %s", c.name, err, c.field)
		}
	}
	// zero hosts stays a valid choice
	for _, build := range []func() (*Graph, error){
		func() (*Graph, error) { return HyperX(3, 0) },
		func() (*Graph, error) { return LeafSpine(2, 2, 0) },
		func() (*Graph, error) { return CiscoDCHosts(1, 1, 0) },
		func() (*Graph, error) { return Cube(2, 2, 2, 0) },
	} {
		if _, err := build(); err != nil {
			t.Error(err)
		}
	}
}
