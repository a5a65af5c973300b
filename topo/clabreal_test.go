package topo

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Containerlab files as containerlab's users write them, which a review
// of 130 real topology files (containerlab's lab-examples and tests, and
// labs of eight other repositories) found misread or refused. The inputs
// here are written for the tests, each the smallest case of one finding.

// decodeClabT loads a containerlab file or fails the test.
func decodeClabT(t *testing.T, data string) *Graph {
	t.Helper()
	g, err := Decode([]byte(data), "lab.clab.yml", LoadOptions{})
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return g
}

// portOf gives the port of node's link to peer.
func portOf(t *testing.T, g *Graph, node, peer string) Port {
	t.Helper()
	a, _ := g.Lookup(node)
	b, _ := g.Lookup(peer)
	for i, l := range g.Ports(a) {
		if l != NoLink && g.Link(l).Other(a).Node == b {
			return Port(i + 1)
		}
	}
	t.Fatalf("no link %s-%s", node, peer)
	return 0
}

// TestClabPortsNatural: an interface's last number is its port, unless two
// interfaces of a node share it or one has none in 1..65535; then that
// node's interfaces are numbered in natural order. Before, SR OS labs
// (1/1/c1/1 and 1/1/c2/1), IOS ones (Ethernet0/1, Ethernet1/1) and bridges
// with host-side names were refused ("port already connected"), and XRd's
// first data port Gi0-0-0-0 and a linux net0 were refused as if eth0.
func TestClabPortsNatural(t *testing.T) {
	g := decodeClabT(t, `name: x
topology:
  nodes: {r1: {kind: nokia_srsim}, r2: {kind: nokia_srsim}, r3: {kind: nokia_srsim}, x: {kind: cisco_xrd}}
  links:
    - endpoints: ["r1:1/1/c10/1", "r2:1/1/c1/1"]
    - endpoints: ["r1:1/1/c2/1", "r2:1/1/c2/1"]
    - endpoints: ["r1:1/1/c1/1", "r3:e1-1"]
    - endpoints: ["r3:e1-7", "x:Gi0-0-0-0"]
    - endpoints: ["x:Gi0-0-0-1", "r2:3/1/c1/1"]
`)
	for _, c := range []struct {
		node, peer string
		want       Port
	}{
		{"r1", "r3", 1}, {"r1", "r2", 0}, // r1: c1 < c2 < c10 (two links to r2: checked below)
		{"r2", "x", 3},
		{"r3", "r1", 1}, {"r3", "x", 7}, // r3's last numbers are distinct: kept
		{"x", "r3", 1}, {"x", "r2", 2}, // Gi0-0-0-0 has no port 0: natural order
	} {
		if c.want == 0 {
			continue
		}
		if p := portOf(t, g, c.node, c.peer); p != c.want {
			t.Errorf("%s towards %s: port %d, want %d", c.node, c.peer, p, c.want)
		}
	}
	r1, _ := g.Lookup("r1")
	if got := g.Ports(r1); len(got) != 3 || slices.Contains(got, NoLink) {
		t.Errorf("r1 ports %v, want 1 2 3 in use", got)
	}
	// r1's 1/1/c10/1 is its third interface in natural order, port 3, and
	// joins r2's 1/1/c1/1, port 1.
	l, _ := g.PortLink(r1, 3)
	if e := g.Link(l).Other(r1); g.Node(e.Node).Name != "r2" || e.Port != 1 {
		t.Errorf("r1:3 joins %s:%d, want r2:1", g.Node(e.Node).Name, e.Port)
	}
	// A bridge's host-side names; a linux net0.
	g = decodeClabT(t, `name: x
topology:
  nodes: {s1: {kind: nokia_srlinux}, s2: {kind: nokia_srlinux}, br: {kind: bridge}, c: {kind: linux}, d: {kind: linux}}
  links:
    - endpoints: ["s1:e1-1", "br:s1-e1-1"]
    - endpoints: ["s2:e1-1", "br:s2-e1-1"]
    - endpoints: ["c:net0", "d:net0"]
`)
	if p1, p2 := portOf(t, g, "br", "s1"), portOf(t, g, "br", "s2"); p1 != 1 || p2 != 2 {
		t.Errorf("bridge ports %d %d, want 1 2", p1, p2)
	}
	if p := portOf(t, g, "c", "d"); p != 1 {
		t.Errorf("net0: port %d, want 1", p)
	}
	// eth0 stays refused; one interface used twice is a port taken twice.
	decodeErrors(t, []struct{ file, data, want string }{
		{"l.clab.yml", "name: x\ntopology:\n  nodes: {a: {}, b: {}}\n  links:\n    - endpoints: [\"a:net0\", \"b:eth1\"]\n    - endpoints: [\"a:eth0\", \"b:eth2\"]\n", `topo: l.clab.yml:6: topology.links[1].endpoints[0]: bad port number: interface "eth0" is containerlab's management interface, not a data port`},
		{"l.clab.yml", "name: x\ntopology:\n  nodes: {a: {}, b: {}, c: {}}\n  links:\n    - endpoints: [\"a:1/1/c1/1\", \"b:eth1\"]\n    - endpoints: [\"a:1/1/c1/1\", \"c:eth1\"]\n", "topo: l.clab.yml:6: topology.links[1].endpoints[0]: port already connected: a port 1"},
		// an unknown node is named as such, before its interface is judged
		{"l.clab.yml", "name: x\ntopology:\n  nodes: {a: {}}\n  links:\n    - endpoints: [\"a:eth1\", \"macvtap:enp4s0f0\"]\n", `topo: l.clab.yml:5: topology.links[0].endpoints[1]: unknown node: "macvtap"`},
	})
}

// TestNaturalCompare: numbers compare as numbers, the order is total.
func TestNaturalCompare(t *testing.T) {
	in := []string{"e1-10", "e1-2", "1/1/c10/1", "1/1/c2/1", "eth", "e01", "e1", "Ethernet1/0", "Ethernet0/3", "a", "", "e1-2a", "99999999999999999999", "100000000000000000000"}
	slices.SortFunc(in, naturalCompare)
	want := []string{"", "1/1/c2/1", "1/1/c10/1", "99999999999999999999", "100000000000000000000", "Ethernet0/3", "Ethernet1/0", "a", "e01", "e1", "e1-2", "e1-2a", "e1-10", "eth"}
	if !slices.Equal(in, want) {
		t.Errorf("got  %q\nwant %q", in, want)
	}
	for _, a := range in {
		for _, b := range in {
			if naturalCompare(a, b) != -naturalCompare(b, a) || (naturalCompare(a, b) == 0) != (a == b) {
				t.Errorf("%q %q: not a total order", a, b)
			}
		}
	}
}

// TestClabGroupsAndDefaults: a node's kind is its own, else its group's,
// else the defaults'; labels merge defaults < kind < group < node. Before,
// groups were ignored (frr01's PCs, linux by their group, came out as
// switches) and so were the defaults' labels.
func TestClabGroupsAndDefaults(t *testing.T) {
	g := decodeClabT(t, `name: x
topology:
  defaults: {kind: nokia_srlinux, labels: {edgefabric.role: fabric}}
  kinds: {linux: {labels: {edgefabric.role: server}}}
  groups:
    pcs: {kind: linux}
    spines: {labels: {role: spine}}
  nodes:
    r1: {}
    r2: {group: spines}
    pc1: {group: pcs}
    pc2: {group: pcs, labels: {edgefabric.role: db}}
    pc3: {group: decoration-only, kind: linux}
  links:
    - endpoints: ["r1:e1-1", "pc1:eth1"]
    - endpoints: ["r1:e1-2", "pc2:eth1"]
    - endpoints: ["r1:e1-3", "r2:e1-1"]
    - endpoints: ["r2:e1-2", "pc3:eth1"]
`)
	for name, want := range map[string]struct {
		kind Kind
		role string
	}{
		"r1":  {Switch, "fabric"},
		"r2":  {Switch, "spine"}, // the group's role overrides the defaults' edgefabric.role
		"pc1": {Host, "server"},  // linux from its group, one link: a host; role from kind linux
		"pc2": {Host, "db"},
		"pc3": {Host, "server"}, // a group topology.groups does not define adds nothing
	} {
		id, ok := g.Lookup(name)
		if n := g.Node(id); !ok || n.Kind != want.kind || n.Role != want.role {
			t.Errorf("%s: %+v, want kind %v role %q", name, *n, want.kind, want.role)
		}
	}
	// edgefabric.kind in the defaults applies to every node.
	g = decodeClabT(t, "name: x\ntopology:\n  defaults: {labels: {edgefabric.kind: host}}\n  nodes: {a: {}, b: {labels: {edgefabric.kind: switch}}}\n  links: [{endpoints: [\"a:eth1\", \"b:eth1\"]}]\n")
	if a, _ := g.Lookup("a"); g.Node(a).Kind != Host {
		t.Errorf("defaults' edgefabric.kind: a is %v", g.Node(a).Kind)
	}
	decodeErrors(t, []struct{ file, data, want string }{
		{"l.clab.yml", "name: x\ntopology:\n  groups:\n    g:\n      labels: {edgefabric.node-name: a}\n  nodes: {n: {group: g}}\n", "topo: l.clab.yml:5: topology.groups.g.labels.edgefabric.node-name: bad value: names one node: put it in that node's own labels"},
		{"l.clab.yml", "name: x\ntopology:\n  groups:\n    g: {labels: {edgefabric.kind: router}}\n  nodes:\n    n: {group: g}\n", `topo: l.clab.yml:6: topology.nodes.n.labels.edgefabric.kind: bad value: "router" (want switch or host)`},
	})
}

// TestClabEnvAndTemplates: environment references are expanded as
// containerlab expands them; a Go template is refused at its line, since
// containerlab renders it with variables edgefabric does not have. Before,
// "macvlan:${PARENT:=ens3}" was split at its last colon into an unknown
// node, and a template failed as a YAML syntax error or, worse, loaded
// with its unrendered text as an interface name.
func TestClabEnvAndTemplates(t *testing.T) {
	t.Setenv("EF_TEST_NODE", "r9")
	t.Setenv("EF_TEST_EMPTY", "")
	g := decodeClabT(t, `name: x
topology:
  nodes:
    ${EF_TEST_NODE:=r1}: {kind: nokia_srlinux}
    ${EF_TEST_UNSET_A:=r2}: {kind: nokia_srlinux}
    r3${EF_TEST_EMPTY:-x}: {}
    r4${EF_TEST_EMPTY-x}: {}
  links:
    - endpoints: ["$EF_TEST_NODE:e1-1", "r2:e1-1"]
    - endpoints: ["r9:e1-2", "macvlan:${EF_TEST_UNSET_B:=ens3}"]
    - endpoints: ["r3x:e1-1", "r4:e1-1"]
`)
	for _, n := range []string{"r9", "r2", "r3x", "r4"} {
		if _, ok := g.Lookup(n); !ok {
			t.Errorf("no node %s", n)
		}
	}
	if g.NumLinks() != 2 {
		t.Errorf("%d links, want 2 (the macvlan link leaves the lab)", g.NumLinks())
	}
	// An unset variable without a default stays as written.
	if got := string(clabExpandEnv([]byte("a ${EF_TEST_UNSET_C} $EF_TEST_UNSET_C $1 $ x"))); got != "a ${EF_TEST_UNSET_C} $EF_TEST_UNSET_C $1 $ x" {
		t.Errorf("unset: %q", got)
	}
	decodeErrors(t, []struct{ file, data, want string }{
		{"l.clab.yml", "name: x\ntopology:\n  nodes:\n    a: {}\n    b: {}\n  links:\n    - endpoints: [\"a:eth1\", \"b:eth{{ if .x }}1{{ else }}2{{ end }}\"]\n", "topo: l.clab.yml:7: template: syntax error: the file is a Go template ({{ ... }}), which containerlab renders with its variables before reading it; edgefabric does not render templates: load the rendered topology"},
	})
}

// TestClabLinkTypes: veth-stitch joins two nodes of the lab (a veth on
// each side, stitched by tc) and is kept; vxlan-stitch, host, mgmt-net,
// macvlan and dummy reach outside. Before, veth-stitch links were dropped
// and the lab came out disconnected.
func TestClabLinkTypes(t *testing.T) {
	g := decodeClabT(t, `name: x
topology:
  nodes: {r1: {kind: nokia_srsim}, r2: {kind: nokia_srsim}}
  links:
    - type: veth-stitch
      endpoints: [{node: r1, interface: 1/1/c1/1}, {node: r2, interface: 1/1/c1/1}]
    - type: vxlan-stitch
      endpoint: {node: r1, interface: e1-2}
      remote: 192.0.2.1
      vni: 10
      endpoints: [{node: r1, interface: e1-2}, {node: r2, interface: e1-2}]
    - type: dummy
      endpoints: [{node: r1, interface: e1-3}, {node: r2, interface: e1-3}]
`)
	if g.NumLinks() != 1 {
		t.Errorf("%d links, want 1", g.NumLinks())
	}
}

// TestYAMLMergeKeys: a merge key brings in an anchored mapping's entries
// that the mapping does not give itself (YAML 1.1, which containerlab's
// parser applies). Before, the merge key was ignored: pc2 below lost its
// kind and came out a switch.
func TestYAMLMergeKeys(t *testing.T) {
	g := decodeClabT(t, `name: x
topology:
  nodes:
    r1: {kind: nokia_srlinux}
    pc1: &pc {kind: linux, labels: {edgefabric.role: server}}
    pc2: {<<: *pc, image: debian:12}
    pc3: {<<: [*pc, {labels: {edgefabric.role: other}}], labels: {edgefabric.role: own}}
  links: [{endpoints: ["r1:e1-1", "pc1:eth1"]}, {endpoints: ["r1:e1-2", "pc2:eth1"]}, {endpoints: ["r1:e1-3", "pc3:eth1"]}]
`)
	for name, role := range map[string]string{"pc1": "server", "pc2": "server", "pc3": "own"} {
		id, _ := g.Lookup(name)
		if n := g.Node(id); n.Kind != Host || n.Role != role {
			t.Errorf("%s: %+v, want a host with role %q", name, *n, role)
		}
	}
	// The native format merges too; in a list of merges the first wins.
	ng, err := Decode([]byte("defaults: &d {rate: 10G}\nnodes:\n  - &s {name: s1, kind: switch}\n  - {<<: [{name: s9, role: a}, *s], name: s2}\nlinks:\n  - [s1, s2]\n"), "n.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := ng.Lookup("s2")
	if n := ng.Node(s2); n.Kind != Switch || n.Role != "a" || ng.Link(0).Rate != 10*Rate1G {
		t.Errorf("native merge: %+v rate %d", *n, ng.Link(0).Rate)
	}
	decodeErrors(t, []struct{ file, data, want string }{
		{"n.yaml", "nodes:\n  - {<<: [a, b], name: s1}\n", "topo: n.yaml:2: nodes[0].<<: syntax error: a merge takes a mapping or a list of mappings, got \"a\""},
		{"n.yaml", "nodes:\n  - {<<: {name: s0}, name: s1, name: s2}\n", `topo: n.yaml:2: nodes[0].name: syntax error: key "name" given twice`},
	})
}

// TestYAMLMergeBomb: merges of lists of merges grow exponentially with
// their depth; a few lines must not cost minutes or gigabytes.
func TestYAMLMergeBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: x\nanchors:\n  a0: &a0 {x: 1, y: 2}\n")
	for i := 1; i <= 15; i++ {
		fmt.Fprintf(&b, "  a%d: &a%d {<<: [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d], k%d: 1}\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i)
	}
	b.WriteString("topology:\n  nodes:\n    s1: {<<: *a15, kind: linux}\n")
	_, err := Decode([]byte(b.String()), "bomb.clab.yml", LoadOptions{})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "merge keys bring in more than") {
		t.Errorf("got %v", err)
	}
}
