package topo

import (
	"errors"
	"testing"
)

// TestBCubeTooManyPorts: a BCube switch has p ports, so p above MaxPorts
// is refused naming p and why, as every other generator names the
// argument that gives a node too many ports (hyperx's T, leafspine's L),
// not as "topology too large: bcube:65536,1" (65,537 nodes and 65,536
// links are far below the limits).
func TestBCubeTooManyPorts(t *testing.T) {
	_, err := Parse("bcube:65536,1", 1)
	want := `topo: spec "bcube:65536,1": p: bad value: a switch would have more than 65535 ports (p)`
	if err == nil || err.Error() != want || !errors.Is(err, ErrBadValue) {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// TestResolveNamedWithArgs: "spain-fig2:1" has the shape of a spec (a
// known name, then arguments), so Resolve parses it and says that
// spain-fig2 takes no arguments, as Parse does, instead of "not a file
// and not a spec".
func TestResolveNamedWithArgs(t *testing.T) {
	if !IsSpec("spain-fig2:1") {
		t.Error(`IsSpec("spain-fig2:1") = false`)
	}
	_, err := Resolve("spain-fig2:1", 1)
	want := `topo: spec "spain-fig2:1": bad topology spec: spain-fig2 takes no arguments`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}
