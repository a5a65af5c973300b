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
