package topo

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
)

var update = flag.Bool("update", false, "rewrite golden files")

// sameGraph compares nodes (name, kind, role, relay, ports) and links
// (both ends, rate, delay) in order; names of graphs may differ.
func sameGraph(a, b *Graph) bool { return diffGraph(a, b) == "" }

func diffGraph(a, b *Graph) string {
	if a.NumNodes() != b.NumNodes() || a.NumLinks() != b.NumLinks() {
		return fmt.Sprintf("%d nodes %d links vs %d nodes %d links", a.NumNodes(), a.NumLinks(), b.NumNodes(), b.NumLinks())
	}
	for i := range a.NumNodes() {
		if *a.Node(NodeID(i)) != *b.Node(NodeID(i)) {
			return fmt.Sprintf("node %d: %+v vs %+v", i, *a.Node(NodeID(i)), *b.Node(NodeID(i)))
		}
	}
	for i := range a.NumLinks() {
		if *a.Link(LinkID(i)) != *b.Link(LinkID(i)) {
			return fmt.Sprintf("link %d: %+v vs %+v", i, *a.Link(LinkID(i)), *b.Link(LinkID(i)))
		}
	}
	return ""
}

// diffPortNames checks that b, read back from a written in a format that
// keeps names (containerlab, GraphML), names a's named ports alike. (A
// graph without names written to containerlab comes back with eth1, ...)
func diffPortNames(a, b *Graph) string {
	for n := range a.NumNodes() {
		for p := 1; p <= a.Node(NodeID(n)).Ports; p++ {
			if x, y := a.PortName(NodeID(n), Port(p)), b.PortName(NodeID(n), Port(p)); x != "" && x != y {
				return fmt.Sprintf("node %q port %d: name %q vs %q", a.Node(NodeID(n)).Name, p, x, y)
			}
		}
	}
	return ""
}

func roundTrip(t *testing.T, g *Graph, f Format) *Graph {
	t.Helper()
	var buf bytes.Buffer
	if err := Export(&buf, g, f); err != nil {
		t.Fatal(err)
	}
	back, err := Decode(buf.Bytes(), "rt."+f.String(), LoadOptions{Format: f})
	if err != nil {
		t.Fatalf("%v: reading back: %v\n%s", f, err, buf.String())
	}
	return back
}

func TestRoundTrip(t *testing.T) {
	ex, err := Load("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	graphs := []*Graph{ex}
	for _, spec := range []string{"fattree:4", "bcube:2,3", "dumbnet-fig1", "spain-testbed", "jellyfish:10,6,3", "torus:3,3,2,1"} {
		g, err := Parse(spec, 3)
		if err != nil {
			t.Fatal(err)
		}
		graphs = append(graphs, g)
	}
	// awkward names and attributes survive every format
	b := NewBuilder(`odd "names" & <chars>`)
	x := b.AddNode("sw 1:a", Switch)
	b.Node(x).Role = "true"
	y := b.AddNode("1.5", Host)
	z := b.AddNode("<h&2>", Host)
	b.Node(z).Relay = true
	b.ConnectPorts(End{x, 3}, End{y, 1}, 2_500_000_000, 1500*element.Nanosecond)
	b.ConnectPorts(End{x, 1}, End{z, 2}, 100, 7*element.Picosecond)
	b.Node(y).Ports = 4
	// names that containerlab's (and the loader's) $VAR expansion and
	// template check would see in the file's text
	d := b.AddNode("s${HOME}", Switch)
	b.Node(d).Role = "{{ .Role }}"
	b.ConnectPorts(End{x, 2}, End{d, 1}, DefaultRate, DefaultDelay)
	b.ConnectPorts(End{d, 2}, End{y, 2}, DefaultRate, DefaultDelay)
	// interface names, kept by the formats that have them
	b.NamePort(End{d, 1}, "Ethernet1/1")
	b.NamePort(End{d, 2}, "e$x{{2}}")
	odd, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	graphs = append(graphs, odd)
	for _, g := range graphs {
		for _, f := range []Format{FormatYAML, FormatJSON, FormatClab, FormatGraphML} {
			t.Run(g.Name+"/"+f.String(), func(t *testing.T) {
				back := roundTrip(t, g, f)
				if d := diffGraph(g, back); d != "" {
					t.Fatal(d)
				}
				if f == FormatClab || f == FormatGraphML {
					if d := diffPortNames(g, back); d != "" {
						t.Fatal(d)
					}
				}
				if f != FormatClab && back.Name != g.Name {
					t.Errorf("name %q, want %q", back.Name, g.Name)
				}
			})
		}
	}
}

// TestGolden pins every export of dumbnet-fig1 and the example file.
func TestGolden(t *testing.T) {
	ex, err := Load("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fig, _ := Parse("dumbnet-fig1", 0)
	exts := map[Format]string{FormatYAML: ".yaml", FormatJSON: ".json", FormatClab: ".clab.yml", FormatGraphML: ".graphml", FormatDOT: ".dot"}
	for _, g := range []*Graph{fig, ex} {
		for f, ext := range exts {
			var buf bytes.Buffer
			if err := Export(&buf, g, f); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", g.Name+ext)
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("%s differs from the golden file:\n%s", path, buf.String())
			}
			if f != FormatDOT {
				back, err := Load(path) // detection by name and contents
				if err != nil {
					t.Fatal(err)
				}
				if d := diffGraph(g, back); d != "" {
					t.Errorf("%s: %s", path, d)
				}
			}
		}
	}
}

func TestLoadExample(t *testing.T) {
	g, err := Load("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s1, _ := g.Lookup("s1")
	r1, _ := g.Lookup("r1")
	if g.Node(s1).Ports != 8 || g.Degree(s1) != 3 || !g.Node(r1).Relay || g.Node(s1).Role != "leaf" {
		t.Errorf("nodes: %+v %+v", *g.Node(s1), *g.Node(r1))
	}
	if got := peer(t, g, "s1", 3); got != "r1:1" {
		t.Errorf("s1:3 -> %s", got)
	}
	if got := peer(t, g, "s2", 3); got != "r1:2" {
		t.Errorf("s2:3 -> %s", got)
	}
	l, _ := g.PortLink(s1, 3)
	if g.Link(l).Rate != Rate10G || g.Link(l).Delay != 5*element.Microsecond {
		t.Errorf("link: %+v", *g.Link(l))
	}
	l, _ = g.PortLink(s1, 1)
	h2, _ := g.Lookup("h2")
	l2, _ := g.PortLink(h2, 1)
	if g.Link(l).Rate != Rate10G || g.Link(l2).Rate != Rate1G {
		t.Error("defaults and overrides")
	}
	if s := Stats(g); s.FabricLinks != 3 || s.HostLinks != 2 || s.RelayHosts != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestLoadClab(t *testing.T) {
	const lab = `name: srl-lab
mgmt: {network: fixedips}
topology:
  defaults: {kind: srl}
  kinds:
    srl: {image: ghcr.io/nokia/srlinux, labels: {edgefabric.role: leaf}}
  nodes:
    spine1: {kind: srl, labels: {role: spine}}
    leaf1: {}
    leaf2:
    client1: {kind: linux, image: alpine}
    client2: {kind: linux, labels: {role: host}}
    router: {kind: linux}
  links:
    - endpoints: ["spine1:e1-1", "leaf1:e1-49"]
    - endpoints: ["spine1:e1-2", "leaf2:e1-49"]
      vars: {rate: 100G, delay: 2us}
    - type: veth
      endpoints:
        - {node: leaf1, interface: ethernet-1/1}
        - {node: client1, interface: eth1}
    - endpoints: ["leaf2:e1-1", "client2:eth1"]
    - endpoints: ["leaf2:e1-2", "router:eth1"]
    - endpoints: ["leaf1:e1-2", "router:eth2"]
    - endpoints: ["client1:eth9", "host:client1-out"]
    - type: mgmt-net
      endpoint: {node: leaf1, interface: mgmt0}
`
	g, err := Decode([]byte(lab), "lab.clab.yml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Name != "srl-lab" || g.NumNodes() != 6 || g.NumLinks() != 6 {
		t.Fatalf("%s: %d nodes %d links", g.Name, g.NumNodes(), g.NumLinks())
	}
	kinds := map[string]Kind{"spine1": Switch, "leaf1": Switch, "leaf2": Switch, "client1": Host, "client2": Host, "router": Switch}
	roles := map[string]string{"spine1": "spine", "leaf1": "leaf", "leaf2": "leaf"}
	for name, k := range kinds {
		id, _ := g.Lookup(name)
		if g.Node(id).Kind != k || g.Node(id).Role != roles[name] {
			t.Errorf("%s: %v %q", name, g.Node(id).Kind, g.Node(id).Role)
		}
	}
	if got := peer(t, g, "leaf1", 49); got != "spine1:1" {
		t.Errorf("leaf1:49 -> %s", got)
	}
	if got := peer(t, g, "leaf1", 1); got != "client1:1" {
		t.Errorf("leaf1:1 -> %s", got)
	}
	id, _ := g.Lookup("spine1")
	l, _ := g.PortLink(id, 2)
	if g.Link(l).Rate != 100*Rate1G || g.Link(l).Delay != 2*element.Microsecond {
		t.Errorf("vars: %+v", *g.Link(l))
	}
}

const zoo = `<?xml version="1.0" encoding="utf-8"?><graphml xmlns="http://graphml.graphdrawing.org/xmlns" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">
  <key attr.name="Network" attr.type="string" for="graph" id="d3" />
  <key attr.name="Longitude" attr.type="double" for="node" id="d32" />
  <key attr.name="Latitude" attr.type="double" for="node" id="d29" />
  <key attr.name="label" attr.type="string" for="node" id="d33" />
  <key attr.name="LinkSpeedRaw" attr.type="double" for="edge" id="d36" />
  <graph edgedefault="undirected">
    <data key="d3">Tiny</data>
    <node id="0">
      <data key="d32">2.35</data>
      <data key="d29">48.85</data>
      <data key="d33">Paris</data>
    </node>
    <node id="1">
      <data key="d32">-0.12</data>
      <data key="d29">51.5</data>
      <data key="d33">London</data>
    </node>
    <node id="2">
      <data key="d33">Paris</data>
    </node>
    <node id="3" />
    <edge source="0" target="1">
      <data key="d36">10000000000.0</data>
    </edge>
    <edge source="1" target="2" />
    <edge source="2" target="0" />
    <edge source="2" target="0" />
    <edge source="3" target="1" />
  </graph>
</graphml>
`

func TestLoadZoo(t *testing.T) {
	g, err := Decode([]byte(zoo), "Tiny.graphml", LoadOptions{ZooHosts: 2})
	if err != nil {
		t.Fatal(err)
	}
	if g.Name != "Tiny" {
		t.Errorf("name %q", g.Name)
	}
	want := []string{"Paris", "London", "Paris#2", "3"}
	for i, w := range want {
		if g.Node(NodeID(i)).Name != w || g.Node(NodeID(i)).Kind != Switch {
			t.Errorf("node %d: %+v, want %s", i, *g.Node(NodeID(i)), w)
		}
	}
	s := Stats(g)
	if s.Switches != 4 || s.Hosts != 8 || s.FabricLinks != 5 || s.HostLinks != 8 {
		t.Errorf("stats %+v", s)
	}
	// ports in edge order, then the hosts
	if got := peer(t, g, "Paris", 1); got != "London:1" {
		t.Errorf("Paris:1 -> %s", got)
	}
	if got := peer(t, g, "Paris", 3); got != "Paris#2:3" {
		t.Errorf("Paris:3 -> %s (parallel edges)", got)
	}
	if got := peer(t, g, "Paris", 4); got != "h1:1" {
		t.Errorf("Paris:4 -> %s", got)
	}
	l, _ := g.PortLink(0, 1)
	// Paris–London is about 344 km: 1.72 ms at 2e8 m/s.
	if d := g.Link(l).Delay; d < 1700*element.Microsecond || d > 1740*element.Microsecond || g.Link(l).Rate != Rate10G {
		t.Errorf("Paris–London: %v %d", d, g.Link(l).Rate)
	}
	l, _ = g.PortLink(0, 2)
	if g.Link(l).Delay != DefaultDelay || g.Link(l).Rate != DefaultRate {
		t.Error("defaults without coordinates")
	}
}

// TestLoadErrors checks that every broken file gets one line naming the
// file, the line and the field.
func TestLoadErrors(t *testing.T) {
	cases := []struct{ file, data, want string }{
		{"a.yaml", "nodes:\n  - {name: s1}\n  - {name: s1}\n", "topo: a.yaml:3: nodes[1].name: duplicate node name: \"s1\""},
		{"a.yaml", "nodes:\n  - {name: s1}\nlinks:\n  - [s1:1, s9:1]\n", "topo: a.yaml:4: links[0].b: unknown node: \"s9\""},
		{"a.yaml", "nodes:\n  - {name: s1, kind: router}\n", "topo: a.yaml:2: nodes[0].kind: bad value: \"router\" (want switch or host)"},
		{"a.yaml", "nodes:\n  - {name: s1, colour: red}\n", "topo: a.yaml:2: nodes[0].colour: syntax error: unknown key (want name, kind, role, relay, ports, port_names)"},
		{"a.yaml", "nodes:\n  - {name: s1}\n  - {name: s2}\nlinks:\n  - [s1:1, s2:1]\n  - [s1:1, s2:2]\n", "topo: a.yaml:6: links[1].a: port already connected: s1 port 1"},
		{"a.yaml", "nodes:\n  - {name: s1}\n  - {name: s2}\nlinks:\n  - {a: s1, b: s2, rate: fast}\n", "topo: a.yaml:5: links[0].rate: bad value: rate \"fast\": want bits per second like 1G, 10Gbps or 100M"},
		{"a.yaml", "nodes:\n  - {name: s1}\n  - {name: s2}\nlinks:\n  - {a: s1, b: s2, delay: 3 parsecs}\n", "topo: a.yaml:5: links[0].delay: bad value: delay \"3 parsecs\": want a number and a unit, ps, ns, us, ms or s, such as 1us, 500ns or 2ms (at most 3600s)"},
		{"a.yaml", "nodes:\n  - {name: s1}\nlinks:\n  - [s1:0, s1:2]\n", "topo: a.yaml:4: links[0].a: bad port number: endpoint \"s1:0\": port must be 1..65535"},
		{"a.yaml", "nodes:\n  - {name: s1}\nlinks:\n  - [s1:1, s1:1]\n", "topo: a.yaml:4: links[0].b: link joins a node to itself: s1:1"},
		{"a.yaml", "nodes:\n  - {name: s1}\nlinks:\n  - [s1:1, s1:2]\n", "topo: a.yaml:4: links[0].b: link joins a node to itself: s1:2"},
		{"a.yaml", "nodes:\n  - {name: s1}\nlinks:\n  - [s1, s1]\n", "topo: a.yaml:4: links[0].b: link joins a node to itself: s1"},
		{"lab.clab.yml", "name: x\ntopology:\n  nodes:\n    a: {}\n  links:\n    - endpoints: [\"a:eth1\", \"a:eth2\"]\n", "topo: lab.clab.yml:6: topology.links[0].endpoints[1]: link joins a node to itself: a:2"},
		{"z.graphml", "<graphml><graph>\n<node id=\"a\"/>\n<edge source=\"a\" target=\"a\" sourceport=\"1\" targetport=\"2\"/></graph></graphml>", "topo: z.graphml:3: edge[0].target: link joins a node to itself: a:2"},
		{"a.yaml", "nodes:\n  - {name: s1, ports: 2}\n  - {name: s2}\nlinks:\n  - [s1:3, s2:1]\n", "topo: a.yaml:2: nodes[0].ports: bad port number: declares 2 ports but a link uses port 3"},
		{"a.yaml", "nodes: [\n", "topo: a.yaml:1: syntax: syntax error: did not find expected node content"},
		{"a.yaml", "", "topo: a.yaml:1: document: syntax error: empty file"},
		{"a.yaml", "links: []\n", "topo: a.yaml:1: nodes: syntax error: missing"},
		{"a.yaml", "nodes:\n  - {name: s1}\n  - {name: s2}\nlinks:\n  - [s1, s2, s1]\n", "topo: a.yaml:5: links[0]: syntax error: a link joins 2 endpoints, got 3"},
		{"a.yaml", "name: x\nname: y\nnodes: []\n", "topo: a.yaml:2: name: syntax error: key \"name\" given twice"},
		{"a.json", "{\"nodes\": [{\"name\": \"s1\", \"relay\": \"maybe\"}]}", "topo: a.json:1: nodes[0].relay: bad value: \"maybe\" is not true or false"},
		{"a.json", "{\"nodes\": [{\"name\": \"s1\"}],\n \"links\": 5}", "topo: a.json:2: links: syntax error: want a list, got \"5\""},
		{"lab.clab.yml", "name: x\ntopology:\n  nodes:\n    a: {}\n    b: {}\n  links:\n    - endpoints: [\"a:eth1\", \"c:eth1\"]\n", "topo: lab.clab.yml:7: topology.links[0].endpoints[1]: unknown node: \"c\""},
		{"lab.clab.yml", "name: x\ntopology:\n  nodes:\n    a: {}\n    b: {}\n  links:\n    - endpoints: [\"a:eth0\", \"b:eth1\"]\n", "topo: lab.clab.yml:7: topology.links[0].endpoints[0]: bad port number: interface \"eth0\" is containerlab's management interface, not a data port"},
		{"lab.clab.yml", "name: x\ntopology:\n  nodes:\n    a: {}\n  links:\n    - endpoints: [\"a:eth1\"]\n", "topo: lab.clab.yml:6: topology.links[0].endpoints: syntax error: a veth link joins 2 endpoints, got 1"},
		{"lab.clab.yml", "name: x\ntopology:\n  nodes:\n    a: {labels: {edgefabric.kind: router}}\n", "topo: lab.clab.yml:4: topology.nodes.a.labels.edgefabric.kind: bad value: \"router\" (want switch or host)"},
		{"lab.clab.yml", "name: x\ntopology:\n  links: []\n", "topo: lab.clab.yml:3: topology.nodes: syntax error: missing"},
		{"z.graphml", "<graphml><graph><node id=\"a\"/><edge source=\"a\" target=\"b\"/></graph></graphml>", "topo: z.graphml:1: edge[0].target: unknown node: \"b\""},
		{"z.graphml", "<graphml><graph>\n<node id=\"a\"/>\n<node id=\"a\"/></graph></graphml>", "topo: z.graphml:3: node.id: duplicate node name: \"a\""},
		{"z.graphml", "<graphml><graph>\n<node id=\"a\">\n</graph></graphml>", "topo: z.graphml:3: xml: syntax error: element <node> closed by </graph>"},
		{"z.graphml", "<graphml><key id=\"k\" for=\"node\" attr.name=\"ef.kind\"/><key id=\"p\" for=\"node\" attr.name=\"ef.ports\"/><graph>\n<node id=\"a\"><data key=\"k\">switch</data></node>\n<node id=\"b\"><data key=\"k\">switch</data><data key=\"p\">1</data></node>\n<edge source=\"a\" target=\"b\" targetport=\"2\"/></graph></graphml>", "topo: z.graphml:3: node \"b\" ef.ports: bad port number: declares 1 ports but a link uses port 2"},
		{"z.graphml", "<html></html>", "topo: z.graphml:1: graphml: syntax error: no <graphml> document with a <graph>"},
	}
	for _, c := range cases {
		_, err := Decode([]byte(c.data), c.file, LoadOptions{ZooHosts: 1})
		if err == nil {
			t.Errorf("%s %q: no error", c.file, c.data)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("%s %q:\n got  %s\n want %s", c.file, c.data, err, c.want)
		}
		var pe *posError
		if !errors.As(err, &pe) || strings.ContainsAny(err.Error(), "\n\r") {
			t.Errorf("not a one-line position error: %v", err)
		}
	}
}

func TestUnits(t *testing.T) {
	for s, want := range map[string]int64{"1G": 1e9, "10Gbps": 1e10, "100M": 1e8, "2.5G": 2.5e9, "40Gb/s": 4e10, "1000": 1000, "1t": 1e12, " 25 G ": 25e9, "10GBit/s": 1e10, "10Gbit/s": 1e10} {
		if got, err := ParseRate(s); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %d, %v", s, got, err)
		}
	}
	// Bytes per second (a capital B) are refused, not read as bits.
	for _, s := range []string{"", "G", "fast", "-1G", "0", "1e30", "NaN", "Inf", "1GB/s", "10GBps", "100MB"} {
		if _, err := ParseRate(s); !errors.Is(err, ErrBadValue) {
			t.Errorf("ParseRate(%q): %v", s, err)
		}
	}
	for s, want := range map[string]element.Time{"1us": element.Microsecond, "500ns": 500 * element.Nanosecond, "2.5ms": 2500 * element.Microsecond, "100ps": 100, "0": 0, "1s": element.Second, "3µs": 3 * element.Microsecond} {
		if got, err := ParseDelay(s); err != nil || got != want {
			t.Errorf("ParseDelay(%q) = %d, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "1", "us", "-1us", "2h", "1.2.3us", "4000s"} {
		if _, err := ParseDelay(s); !errors.Is(err, ErrBadValue) {
			t.Errorf("ParseDelay(%q): %v", s, err)
		}
	}
	for _, r := range []int64{1, 999, 1000, 1500, 1e9, 25e8, 1e10, 4e11, 1e12, 123456789} {
		if got, err := ParseRate(FormatRate(r)); err != nil || got != r {
			t.Errorf("rate %d -> %q -> %d", r, FormatRate(r), got)
		}
	}
	for _, d := range []element.Time{0, 1, 999, 1000, 1500 * element.Nanosecond, element.Second, 7 * element.Millisecond} {
		if got, err := ParseDelay(FormatDelay(d)); err != nil || got != d {
			t.Errorf("delay %d -> %q -> %d", d, FormatDelay(d), got)
		}
	}
}

func TestFormats(t *testing.T) {
	for _, n := range []string{"yaml", "JSON", "clab", "graphml", "dot"} {
		if _, err := ParseFormat(n); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseFormat("gml"); !errors.Is(err, ErrBadValue) {
		t.Error("gml accepted")
	}
	if err := Export(&bytes.Buffer{}, &Graph{}, FormatInvalid); err == nil {
		t.Error("export of an invalid format")
	}
	for file, want := range map[string]Format{"x.graphml": FormatGraphML, "x.json": FormatJSON, "x.yml": FormatYAML, "x.clab.yml": FormatClab, "x": FormatYAML} {
		data := "nodes: []\n"
		if want == FormatClab {
			data = "name: x\ntopology:\n  nodes: {}\n"
		}
		if got := DetectFormat(file, []byte(data)); got != want {
			t.Errorf("%s: %v, want %v", file, got, want)
		}
	}
	if DetectFormat("x", []byte("  <graphml>")) != FormatGraphML || DetectFormat("x", []byte("{}")) != FormatJSON {
		t.Error("sniffing")
	}
}

// TestExamples loads every file in examples/topologies.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../examples/topologies/*")
	if err != nil || len(files) < 5 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, f := range files {
		g, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		checkWellFormed(t, g)
	}
	// The exported seeds' figures stay what the generators build.
	for file, spec := range map[string]string{"spain-testbed.yaml": "spain-testbed", "dumbnet-fig1.yaml": "dumbnet-fig1", "dumbnet-fig1.clab.yml": "dumbnet-fig1", "fattree4.json": "fattree:4"} {
		a, err := Load("../examples/topologies/" + file)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Parse(spec, 1)
		if d := diffGraph(a, b); d != "" {
			t.Errorf("%s: %s", file, d)
		}
	}
}

func TestZooHostLimits(t *testing.T) {
	for hosts, want := range map[int]string{
		70000:   "topo: z.graphml: hosts: bad port number: 70000 hosts per switch exceed 65535 ports",
		3000000: "topo: z.graphml: hosts: bad port number: 3000000 hosts per switch exceed 65535 ports",
		2000000: "topo: z.graphml: hosts: bad port number: 2000000 hosts per switch exceed 65535 ports",
	} {
		_, err := Decode([]byte(zoo), "z.graphml", LoadOptions{ZooHosts: hosts})
		if err == nil || err.Error() != want {
			t.Errorf("%d: %v", hosts, err)
		}
	}
	if _, err := Decode([]byte(zoo), "z.graphml", LoadOptions{ZooHosts: -1}); !errors.Is(err, ErrBadValue) {
		t.Errorf("negative: %v", err)
	}
}

// TestLoadErrorDeterministic: with several nodes declaring fewer ports
// than their links use, the error names the first of them every time
// (the check used to walk a map).
func TestLoadErrorDeterministic(t *testing.T) {
	var b strings.Builder
	b.WriteString("nodes:\n")
	for i := range 20 {
		fmt.Fprintf(&b, "  - {name: s%d, ports: 1}\n", i)
	}
	b.WriteString("links:\n")
	for i := range 20 {
		fmt.Fprintf(&b, "  - [s%d:2, s%d:3]\n", i, (i+1)%20)
	}
	first := ""
	for range 20 {
		_, err := Decode([]byte(b.String()), "ports.yaml", LoadOptions{Format: FormatYAML})
		if err == nil {
			t.Fatal("loaded")
		}
		if first == "" {
			first = err.Error()
			if !strings.Contains(first, ":2: nodes[0].ports") {
				t.Fatalf("error names another node than s0: %v", err)
			}
		}
		if err.Error() != first {
			t.Fatalf("errors differ:\n%s\n%s", first, err)
		}
	}
}

// TestClabKindPrecedence: the edgefabric.kind label decides whether a
// node is a host or a switch, before a role label (docs/topology.md §5):
// a switch labelled role: host stays a switch, and a bad edgefabric.kind
// is an error even when role says host.
func TestClabKindPrecedence(t *testing.T) {
	const lab = `name: x
topology:
  kinds:
    linux: {labels: {role: host}}
  nodes:
    a: {kind: linux, labels: {edgefabric.kind: switch, role: host}}
    b: {kind: linux, labels: {edgefabric.kind: host, role: switch}}
    c: {kind: linux, labels: {edgefabric.kind: switch}}
    d: {kind: linux, labels: {role: host}}
  links:
    - endpoints: ["a:eth1", "b:eth1"]
    - endpoints: ["a:eth2", "c:eth1"]
    - endpoints: ["c:eth2", "d:eth1"]
`
	g, err := Decode([]byte(lab), "lab.clab.yml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]Kind{"a": Switch, "b": Host, "c": Switch, "d": Host} {
		id, _ := g.Lookup(name)
		if got := g.Node(id).Kind; got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	bad := "name: x\ntopology:\n  nodes:\n    a: {labels: {edgefabric.kind: router, role: host}}\n"
	_, err = Decode([]byte(bad), "lab.clab.yml", LoadOptions{})
	if want := `topo: lab.clab.yml:4: topology.nodes.a.labels.edgefabric.kind: bad value: "router" (want switch or host)`; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestRoundTripEdgeText: names with spaces at their ends and roles with
// spaces survive every format (the native reader trimmed endpoints, so
// " a :1" named "a "; GraphML trimmed ef.role); names and roles with
// control characters, which XML cannot hold, are refused up front.
func TestRoundTripEdgeText(t *testing.T) {
	b := NewBuilder("edges")
	a := b.AddNode(" a ", Switch)
	b.Node(a).Role = " core "
	h := b.AddNode("h 1", Host)
	b.Node(h).Role = "  "
	b.Connect(a, h)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{FormatYAML, FormatJSON, FormatClab, FormatGraphML} {
		if d := diffGraph(g, roundTrip(t, g, f)); d != "" {
			t.Errorf("%v: %s", f, d)
		}
	}
	bb := NewBuilder("x")
	bb.AddNode("c\x01", Host)
	if _, err := bb.Graph(); !errors.Is(err, ErrBadValue) {
		t.Errorf("control character in a name: %v", err)
	}
	bb = NewBuilder("x")
	bb.Node(bb.AddNode("c", Host)).Role = "r\x7f"
	if _, err := bb.Graph(); !errors.Is(err, ErrBadValue) {
		t.Errorf("control character in a role: %v", err)
	}
	for data, want := range map[string]string{
		"nodes:\n  - {name: \"c\\x01\"}\n":            `topo: a.yaml:2: nodes[0].name: node "c\x01": name: bad value: control character or invalid UTF-8`,
		"nodes:\n  - {name: c, role: \"r\\u0085\"}\n": `topo: a.yaml:2: nodes[0].role: bad value: "r\u0085": control character or invalid UTF-8`,
	} {
		_, err := Decode([]byte(data), "a.yaml", LoadOptions{})
		if err == nil || err.Error() != want {
			t.Errorf("%q:\n got  %v\n want %s", data, err, want)
		}
	}
}

// TestGraphMLDeclaresOnlyUsedPorts: GraphML declares a node's cabled and
// named ports, not every one it has (ef.ports gives the count): a switch
// of 65,535 ports with one cable used to be written as 65,535 <port>
// elements (1.3 MB; 200 of them 260 MB). It still loads back whole.
func TestGraphMLDeclaresOnlyUsedPorts(t *testing.T) {
	b := NewBuilder("wide")
	x := b.AddNode("s1", Switch)
	y := b.AddNode("h1", Host)
	b.ConnectPorts(End{x, 7}, End{y, 1}, DefaultRate, DefaultDelay)
	b.Node(x).Ports = MaxPorts
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteGraphML(&out, g); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "<port "); n != 2 || out.Len() > 2000 {
		t.Fatalf("%d <port> elements, %d bytes; want 2 (the cabled ports), under 2 kB", n, out.Len())
	}
	if d := diffGraph(g, roundTrip(t, g, FormatGraphML)); d != "" {
		t.Fatal(d)
	}
}
