package topo

import (
	"errors"
	"testing"
)

// TestClabLinkToUndefinedKey: a containerlab link names nodes by their
// keys, and one to a key that topology.nodes does not define is an
// unknown node, as containerlab says, even when another node's
// edgefabric.node-name label is that word. The loader looked the word up
// among the model's names and cabled the link to that other node.
func TestClabLinkToUndefinedKey(t *testing.T) {
	data := "name: x\ntopology:\n  nodes:\n    q: {kind: linux, labels: {edgefabric.node-name: z}}\n    b: {kind: linux}\n  links:\n    - endpoints: [\"z:eth1\", \"b:eth1\"]\n"
	g, err := Decode([]byte(data), "lab.clab.yml", LoadOptions{})
	want := `topo: lab.clab.yml:7: topology.links[0].endpoints[0]: unknown node: "z"`
	if err == nil || err.Error() != want || !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("got %v (graph %v)\nwant %s", err, g != nil, want)
	}
	// by its key, the node is found and keeps its own name
	ok := "name: x\ntopology:\n  nodes:\n    q: {kind: linux, labels: {edgefabric.node-name: z}}\n    b: {kind: linux}\n  links:\n    - endpoints: [\"q:eth1\", \"b:eth1\"]\n"
	g, err = Decode([]byte(ok), "lab.clab.yml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if id, found := g.Lookup("z"); !found || g.Degree(id) != 1 {
		t.Fatalf("node z: found %v", found)
	}
}
