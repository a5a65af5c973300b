package topo

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// containerlab refuses a node whose container name, clab-<lab>-<node>,
// does not match this (containerlab's nodes/default_node.go, as Docker).
var clabContainerRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9-._]+$`)

// TestClabNodeNames: a Topology Zoo graph names nodes after cities ("New
// York"), which containerlab refuses as node names. The export gives such a
// node a key containerlab takes, unique, never one of its special
// endpoints, and keeps the name in edgefabric.node-name, so the round trip
// is exact. Before, the export wrote "New York" as the key and containerlab
// would not deploy the lab.
func TestClabNodeNames(t *testing.T) {
	b := NewBuilder("zoo")
	names := []string{"New York", "New-York", "host", "a:b", "naïve", "__", "s1.core", "x_y", "Chicago", "New York#3", "mgmt-net", "macvlan-2", "macvlan"}
	var ids []NodeID
	for _, n := range names {
		ids = append(ids, b.AddNode(n, Switch))
	}
	h := b.AddNode("h1", Host)
	for i := 1; i < len(ids); i++ {
		b.Connect(ids[i-1], ids[i])
	}
	b.Connect(h, ids[0])
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	keys := clabNodeNames(g)
	want := []string{"New-York-2", "New-York", "host-2", "a-b", "na-ve", "__", "s1.core", "x_y", "Chicago", "New-York-3", "mgmt-net-2", "macvlan-2", "macvlan-3", "h1"}
	if strings.Join(keys, " ") != strings.Join(want, " ") {
		t.Errorf("keys\n got  %q\n want %q", keys, want)
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if !clabContainerRE.MatchString("clab-zoo-"+k) || clabSpecial[k] || seen[k] {
			t.Errorf("key %q: refused by containerlab, special or repeated", k)
		}
		seen[k] = true
	}
	var buf bytes.Buffer
	if err := WriteClab(&buf, g); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, line := range []string{
		"    New-York-2:\n      kind: linux\n      labels: {edgefabric.kind: switch, edgefabric.node-name: \"New York\"}\n",
		"    New-York:\n      kind: linux\n      labels: {edgefabric.kind: switch}\n",
		"    - endpoints: [New-York-2:eth1, New-York:eth1]\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("want %q in\n%s", line, out)
		}
	}
	back, err := Decode(buf.Bytes(), "zoo.clab.yml", LoadOptions{})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if d := diffGraph(g, back); d != "" {
		t.Errorf("round trip: %s\n%s", d, out)
	}
	// A name containerlab takes is its own key and gets no label.
	g2, _ := Parse("fattree:4", 1)
	buf.Reset()
	WriteClab(&buf, g2)
	if strings.Contains(buf.String(), "node-name") {
		t.Errorf("fattree:4 export renamed a node:\n%s", buf.String())
	}
}

// TestClabNodeNameLabel: edgefabric.node-name names one node: in a kind's
// or the defaults' labels it is an error (every node would get the name);
// on a node it must be a name no other node has, and not empty.
func TestClabNodeNameLabel(t *testing.T) {
	decodeErrors(t, []struct{ file, data, want string }{
		{"l.clab.yml", "name: x\ntopology:\n  kinds:\n    linux:\n      labels: {edgefabric.node-name: a}\n  nodes: {n: {kind: linux}}\n", "topo: l.clab.yml:5: topology.kinds.linux.labels.edgefabric.node-name: bad value: names one node: put it in that node's own labels"},
		{"l.clab.yml", "name: x\ntopology:\n  defaults:\n    labels:\n      edgefabric.node-name: a\n  nodes: {n: {}}\n", "topo: l.clab.yml:5: topology.defaults.labels.edgefabric.node-name: bad value: names one node: put it in that node's own labels"},
		{"l.clab.yml", "name: x\ntopology:\n  nodes:\n    a: {}\n    b:\n      labels: {edgefabric.node-name: a}\n", `topo: l.clab.yml:6: topology.nodes.b.labels.edgefabric.node-name: duplicate node name: "a"`},
		{"l.clab.yml", "name: x\ntopology:\n  nodes:\n    a:\n      labels: {edgefabric.node-name: \"\"}\n", "topo: l.clab.yml:5: topology.nodes.a.labels.edgefabric.node-name: bad value: empty node name"},
	})
	// Links name nodes by key; the model uses the label.
	g, err := Decode([]byte("name: x\ntopology:\n  nodes:\n    New-York: {labels: {edgefabric.node-name: \"New York\", edgefabric.kind: switch}}\n    h1: {kind: linux}\n  links:\n    - endpoints: [\"h1:eth1\", \"New-York:eth3\"]\n"), "l.clab.yml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ny, ok := g.Lookup("New York")
	if !ok || g.Node(ny).Kind != Switch || g.NumLinks() != 1 {
		t.Fatalf("New York: %v %+v, %d links", ok, g.Node(ny), g.NumLinks())
	}
	if _, ok := g.Lookup("New-York"); ok {
		t.Errorf("the key is a node name too")
	}
	h1, _ := g.Lookup("h1")
	if l, ok := g.PortLink(ny, 3); !ok || g.Link(l).Other(ny).Node != h1 {
		t.Errorf("the link does not join New York:3 and h1")
	}
}
