package topo

import (
	"testing"
)

// TestRoundTripTrailingColon: a topology name, node name, role or port
// name ending in ':' reads back from every format. WriteYAML wrote
// them plain ("name: t:"), which YAML reads as a mapping key, so a
// graph named "t:" (a GraphML Network, a containerlab name) exported to
// YAML did not load again.
func TestRoundTripTrailingColon(t *testing.T) {
	b := NewBuilder("t:")
	x := b.AddNode("x:", Switch)
	b.Node(x).Role = "r:"
	y := b.AddNode("y::", Host)
	b.Connect(x, y)
	b.NamePort(End{x, 1}, "e:")
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{FormatYAML, FormatJSON, FormatClab, FormatGraphML} {
		back := roundTrip(t, g, f)
		if d := diffGraph(g, back); d != "" {
			t.Errorf("%v: %s", f, d)
		}
		if d := diffPortNames(g, back); d != "" {
			t.Errorf("%v: %s", f, d)
		}
		if back.Name != g.Name {
			t.Errorf("%v: name %q, want %q", f, back.Name, g.Name)
		}
	}
	for _, s := range []string{"t:", "a::", ":"} {
		if q := yamlString(s); q == s {
			t.Errorf("yamlString(%q) = %q, plain", s, q)
		}
	}
}
