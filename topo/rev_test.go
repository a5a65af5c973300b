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

// TestGraphMLDataTwice: an element that gives one of edgefabric's
// attributes twice with two values (a switch that is also a host, a link
// of 1G and 10G) is ambiguous; the native format refuses a key given
// twice, and so does GraphML now, at the second data element's line.
// Before, the last value won silently.
func TestGraphMLDataTwice(t *testing.T) {
	const head = `<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="kind" for="node" attr.name="ef.kind" attr.type="string"/>
  <key id="kind2" for="node" attr.name="ef.kind" attr.type="string"/>
  <key id="rate" for="edge" attr.name="ef.rate" attr.type="string"/>
  <graph id="G" edgedefault="undirected">
`
	for body, want := range map[string]string{
		`<node id="a"><data key="kind">switch</data>
<data key="kind">host</data></node>
`: `topo: t.graphml:8: node "a" ef.kind: syntax error: given twice ("switch", then "host")`,
		`<node id="a"><data key="kind">switch</data>
<data key="kind2">host</data></node>
`: `topo: t.graphml:8: node "a" ef.kind: syntax error: given twice ("switch", then "host")`,
		`<node id="a"><data key="kind">switch</data></node><node id="b"><data key="kind">host</data></node>
<edge source="a" target="b"><data key="rate">1G</data>
<data key="rate">10G</data></edge>
`: `topo: t.graphml:9: edge[0].ef.rate: syntax error: given twice ("1G", then "10G")`,
	} {
		_, err := Decode([]byte(head+body+"</graph></graphml>\n"), "t.graphml", LoadOptions{})
		if err == nil || err.Error() != want {
			t.Errorf("got  %v\nwant %s", err, want)
		}
	}
	// the same value twice is only redundant
	g, err := Decode([]byte(head+`<node id="a"><data key="kind">switch</data><data key="kind">switch</data></node></graph></graphml>`), "t.graphml", LoadOptions{})
	if err != nil || g.Node(0).Kind != Switch {
		t.Errorf("same value twice: %v", err)
	}
}
