package topo

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
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

// TestGeneratorsRefuseHugeHosts: a host count near math.MaxInt, called
// directly (Parse caps arguments at the node limit), wrapped the port
// check around (t+2(k-1), s+h, h+3, h+6 went negative) and the size
// estimate too (1+h), so HyperX(2, MaxInt), LeafSpine(1, 1, MaxInt),
// CiscoDCHosts(1, 1, MaxInt) and Cube(1, 1, 1, MaxInt) went on to attach
// 2⁶³ hosts, a loop that did not end. Each now refuses it at once.
func TestGeneratorsRefuseHugeHosts(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func() (*Graph, error)
		field string
	}{
		{"HyperX(2,MaxInt)", func() (*Graph, error) { return HyperX(2, math.MaxInt) }, "T"},
		{"LeafSpine(1,1,MaxInt)", func() (*Graph, error) { return LeafSpine(1, 1, math.MaxInt) }, "H"},
		{"CiscoDCHosts(1,1,MaxInt)", func() (*Graph, error) { return CiscoDCHosts(1, 1, math.MaxInt) }, "H"},
		{"Cube(1,1,1,MaxInt)", func() (*Graph, error) { return Cube(1, 1, 1, math.MaxInt) }, "H"},
		{"Torus(1,1,1,MaxInt-3)", func() (*Graph, error) { return Torus(1, 1, 1, math.MaxInt-3) }, "H"},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := c.build()
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrBadValue) || !strings.HasPrefix(err.Error(), c.field+":") {
				t.Errorf("%s: %v; want a bad value of %s", c.name, err, c.field)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no answer in 5 s", c.name)
		}
	}
}
