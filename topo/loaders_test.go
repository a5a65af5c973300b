package topo

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
)

// Tests from a mutation sweep of the loaders, the spec parser, the units
// and the address plan: each pins an outcome that a small change to the
// code (a dropped check, a flipped comparison, a changed default) left
// unnoticed.

// decodeErrors checks that every input is refused with exactly the error
// given (one line, file, line and field).
func decodeErrors(t *testing.T, cases []struct{ file, data, want string }) {
	t.Helper()
	for _, c := range cases {
		_, err := Decode([]byte(c.data), c.file, LoadOptions{ZooHosts: 1})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s %q:\n got  %v\n want %s", c.file, c.data, err, c.want)
		}
	}
}

// TestNativeErrors: malformed links, unknown rate/delay keys,
// empty endpoints and bad port counts in the native format are refused
// with the field at fault. A link list of one endpoint once panicked
// (index out of range) when the length check was loosened; a negative or
// too large "ports" was reported at nodes[i].name.
func TestNativeErrors(t *testing.T) {
	two := "nodes:\n  - {name: s1}\n  - {name: s2}\nlinks:\n"
	decodeErrors(t, []struct{ file, data, want string }{
		{"a.yaml", two + "  - [s1]\n", "topo: a.yaml:5: links[0]: syntax error: a link joins 2 endpoints, got 1"},
		{"a.yaml", two + "  - []\n", "topo: a.yaml:5: links[0]: syntax error: a link joins 2 endpoints, got 0"},
		{"a.yaml", two + "  - {a: s1}\n", "topo: a.yaml:5: links[0].b: syntax error: missing endpoint"},
		{"a.yaml", two + "  - {b: s2}\n", "topo: a.yaml:5: links[0].a: syntax error: missing endpoint"},
		{"a.yaml", two + "  - {a: s1, b: s2, colour: red}\n", "topo: a.yaml:5: links[0].colour: syntax error: unknown key (want rate, delay)"},
		{"a.yaml", "defaults: {speed: 10G}\nnodes:\n  - {name: s1}\n", "topo: a.yaml:1: defaults.speed: syntax error: unknown key (want rate, delay)"},
		{"a.yaml", two + "  - ['', s2]\n", "topo: a.yaml:5: links[0].a: bad value: empty endpoint"},
		{"a.yaml", "nodes:\n  - {name: s1, ports: x}\n", "topo: a.yaml:2: nodes[0].ports: bad value: \"x\" is not an integer"},
		{"a.yaml", "nodes:\n  - {name: s1, ports: -1}\n", "topo: a.yaml:2: nodes[0].ports: bad port number: ports must be 0..65535, got -1"},
		{"a.yaml", "nodes:\n  - {name: s1,\n     ports: 65536}\n", "topo: a.yaml:3: nodes[0].ports: bad port number: ports must be 0..65535, got 65536"},
		{"lab.clab.yml", "name: x\ntopology:\n  nodes:\n    a: {labels: {edgefabric.ports: \"-1\"}}\n", "topo: lab.clab.yml:4: topology.nodes.a.labels.edgefabric.ports: bad port number: ports must be 0..65535, got -1"},
		{"z.graphml", "<graphml><key id=\"k\" for=\"node\" attr.name=\"ef.kind\"/><key id=\"p\" for=\"node\" attr.name=\"ef.ports\"/><graph>\n<node id=\"a\"><data key=\"k\">switch</data><data key=\"p\">-1</data></node></graph></graphml>", "topo: z.graphml:2: node \"a\" ef.ports: bad port number: ports must be 0..65535, got -1"},
	})
}

// TestNativeNullAndAliases: "key:" with nothing after it is an
// empty mapping or list, and YAML aliases are followed.
func TestNativeNullAndAliases(t *testing.T) {
	g, err := Decode([]byte("defaults:\nnodes:\n  - {name: s1}\n  - {name: s2}\nlinks:\n  - [s1, s2]\n"), "a.yaml", LoadOptions{})
	if err != nil || g.NumLinks() != 1 || g.Link(0).Rate != DefaultRate || g.Link(0).Delay != DefaultDelay {
		t.Fatalf("empty defaults: %v", err)
	}
	g, err = Decode([]byte("nodes:\n  - {name: s1}\nlinks:\n"), "a.yaml", LoadOptions{})
	if err != nil || g.NumNodes() != 1 || g.NumLinks() != 0 {
		t.Fatalf("empty links: %v", err)
	}
	g, err = Decode([]byte("nodes:\n  - {name: s1}\n  - {name: s2}\nlinks:\n  - {a: s1:1, b: s2:1, rate: &fast 10G}\n  - {a: s1:2, b: s2:2, rate: *fast}\n"), "a.yaml", LoadOptions{})
	if err != nil || g.NumLinks() != 2 || g.Link(1).Rate != 10*Rate1G {
		t.Fatalf("alias: %v", err)
	}
}

// TestNoFreePort: a node whose 65535 ports are all taken has no
// next free port; the port number must not wrap to 0 (it once indexed
// the port table at -1).
func TestNoFreePort(t *testing.T) {
	var b strings.Builder
	b.WriteString("nodes:\n  - {name: s1}\n  - {name: s2}\n  - {name: s3}\nlinks:\n")
	for i := 1; i <= MaxPorts; i++ {
		fmt.Fprintf(&b, "  - [s1:%d, s2:%d]\n", i, i)
	}
	b.WriteString("  - [s1, s3]\n")
	_, err := Decode([]byte(b.String()), "a.yaml", LoadOptions{})
	if want := `topo: a.yaml:65541: links[65535].a: bad port number: "s1" has no free port`; err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// TestYAMLString: the writers quote every name YAML would read
// as something other than that string (a boolean, a number, null), so
// that other YAML tools (containerlab) read the same names.
func TestYAMLString(t *testing.T) {
	for s, want := range map[string]string{
		"s1": "s1", "leaf-1.a": "leaf-1.a", "true": `"true"`, "Off": `"Off"`, "null": `"null"`, "~": `"~"`,
		"1.5": `"1.5"`, "42": `"42"`, "1e3": `"1e3"`, "a b": `"a b"`, "": `""`, "x: y": `"x: y"`,
	} {
		if got := yamlString(s); got != want {
			t.Errorf("yamlString(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestFormatDetection: "invalid" is no format; .xml files and a
// byte-order mark before the first character are detected.
func TestFormatDetection(t *testing.T) {
	if f, err := ParseFormat("invalid"); err == nil || err.Error() != `topo: bad value: format "invalid" (want yaml, json, clab, graphml or dot)` {
		t.Errorf("ParseFormat(invalid) = %v, %v", f, err)
	}
	for _, c := range []struct {
		file, data string
		want       Format
	}{
		{"x.xml", "nodes: []\n", FormatGraphML},
		{"x.XML", "", FormatGraphML},
		{"x", "\ufeff<graphml/>", FormatGraphML},
		{"x", "\ufeff {\"nodes\": []}", FormatJSON},
		{"x.yaml", "# lab\ntopology:\n  nodes: {}\n", FormatClab},
		{"x.yaml", "nodes: []\n# topology: in a comment\n", FormatYAML},
	} {
		if got := DetectFormat(c.file, []byte(c.data)); got != c.want {
			t.Errorf("DetectFormat(%q, %q) = %v, want %v", c.file, c.data, got, c.want)
		}
	}
}

// TestUnitsExact pins the units the writers choose (the largest
// that keeps the value exact) and a delay with a space before its unit.
func TestUnitsExact(t *testing.T) {
	for r, want := range map[int64]string{1e12: "1T", 3e12: "3T", 1e9: "1G", 25e8: "2500M", 1e6: "1M", 1000: "1K", 1500: "1500", 1: "1"} {
		if got := FormatRate(r); got != want {
			t.Errorf("FormatRate(%d) = %q, want %q", r, got, want)
		}
	}
	for d, want := range map[element.Time]string{0: "0", element.Second: "1s", 3 * element.Second: "3s", 2 * element.Millisecond: "2ms",
		1500 * element.Nanosecond: "1500ns", element.Microsecond: "1us", 7: "7ps"} {
		if got := FormatDelay(d); got != want {
			t.Errorf("FormatDelay(%d) = %q, want %q", d, got, want)
		}
	}
	for s, want := range map[string]element.Time{"2 us": 2 * element.Microsecond, " 3 ms ": 3 * element.Millisecond} {
		if got, err := ParseDelay(s); err != nil || got != want {
			t.Errorf("ParseDelay(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
}

// TestAddressBytes pins the address plan byte by byte
// (docs/topology.md §1, addr.go): the sim and emu captures depend on it.
func TestAddressBytes(t *testing.T) {
	if got, want := HostMAC(0x01020304), [6]byte{0x02, 0xef, 1, 2, 3, 4}; got != want {
		t.Errorf("HostMAC = %x, want %x", got, want)
	}
	if got, want := HostIP(0x010203), netip.MustParseAddr("10.1.2.3"); got != want {
		t.Errorf("HostIP = %v, want %v", got, want)
	}
	if got, want := PortMAC(0x010203, 0x0405), [6]byte{0x06, 1, 2, 3, 4, 5}; got != want {
		t.Errorf("PortMAC = %x, want %x", got, want)
	}
	if got, want := BridgeMAC(0x0a0b0c), [6]byte{0x06, 0x0a, 0x0b, 0x0c, 0, 0}; got != want {
		t.Errorf("BridgeMAC = %x, want %x", got, want)
	}
}

// TestClab: special endpoints, role labels, label errors at the
// label's own line, short endpoints, extra link vars and export names.
func TestClab(t *testing.T) {
	const lab = `name: x
topology:
  nodes:
    s1: {kind: srl, labels: {role: switch}}
    host: {kind: linux}
    h2: {kind: linux}
  links:
    - endpoints: ["s1:e1-1", "host:eth1"]
    - endpoints: ["s1:e1-2", "h2:eth1"]
      vars: {rate: 10G, mtu: 9000}
    - endpoints: ["s1:e1-3", "macvlan:enp0s3"]
    - endpoints: ["s1:e1-4", "mgmt-net:s1-mgmt"]
`
	g, err := Decode([]byte(lab), "lab.clab.yml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g.NumNodes() != 3 || g.NumLinks() != 2 {
		t.Fatalf("%d nodes, %d links; want 3 and 2 (a node named host is a node)", g.NumNodes(), g.NumLinks())
	}
	if got := peer(t, g, "s1", 1); got != "host:1" {
		t.Errorf("s1:1 -> %q, want host:1", got)
	}
	s1, _ := g.Lookup("s1")
	if n := g.Node(s1); n.Kind != Switch || n.Role != "" {
		t.Errorf("s1: %+v; role: switch is a kind, not a role", *n)
	}
	l, _ := g.PortLink(s1, 2)
	if g.Link(l).Rate != 10*Rate1G {
		t.Errorf("vars: rate %d", g.Link(l).Rate)
	}
	head := "name: x\ntopology:\n  nodes:\n    a: {}\n    b: {}\n  links:\n"
	decodeErrors(t, []struct{ file, data, want string }{
		{"lab.clab.yml", "name: x\ntopology:\n  nodes:\n    a: {labels: {edgefabric.relay: maybe}}\n", `topo: lab.clab.yml:4: topology.nodes.a.labels.edgefabric.relay: bad value: "maybe" is not true or false`},
		{"lab.clab.yml", "name: x\ntopology:\n  nodes:\n    a: {labels: {edgefabric.ports: many}}\n", `topo: lab.clab.yml:4: topology.nodes.a.labels.edgefabric.ports: bad value: "many" is not an integer`},
		{"lab.clab.yml", "name: x\ntopology:\n  nodes:\n    a:\n      kind: linux\n      labels:\n        edgefabric.kind: router\n", `topo: lab.clab.yml:7: topology.nodes.a.labels.edgefabric.kind: bad value: "router" (want switch or host)`},
		{"lab.clab.yml", "name: x\ntopology:\n  nodes:\n    a: {labels: {edgefabric.ports: \"1\"}}\n    b: {}\n  links:\n    - endpoints: [\"a:eth2\", \"b:eth1\"]\n", "topo: lab.clab.yml:4: topology.nodes.a.labels.edgefabric.ports: bad port number: declares 1 ports but a link uses port 2"},
		// inherited from the kind: the error is at the node's line
		{"lab.clab.yml", "name: x\ntopology:\n  kinds:\n    linux: {labels: {edgefabric.kind: router}}\n  nodes:\n    a: {kind: linux}\n", `topo: lab.clab.yml:6: topology.nodes.a.labels.edgefabric.kind: bad value: "router" (want switch or host)`},
		{"lab.clab.yml", head + "    - endpoints: [\"a\", \"b:eth1\"]\n", `topo: lab.clab.yml:7: topology.links[0].endpoints[0]: syntax error: endpoint "a": want node:interface`},
		{"lab.clab.yml", head + "    - endpoints: [\"a:\", \"b:eth1\"]\n", "topo: lab.clab.yml:7: topology.links[0].endpoints[0]: syntax error: endpoint needs a node and an interface"},
	})
	for name, want := range map[string]string{"!!!": "name: edgefabric\n", "my lab/1": "name: my-lab-1\n", "": "name: edgefabric\n"} {
		b := NewBuilder(name)
		b.AddNode("s1", Switch)
		g, err := b.Graph()
		if err != nil {
			t.Fatal(err)
		}
		var buf strings.Builder
		if err := WriteClab(&buf, g); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "\n"+want) {
			t.Errorf("graph %q: clab name, want %q in\n%s", name, want, buf.String())
		}
	}
}

// TestGraphML: GraphML structure errors, name collisions in Zoo
// graphs, coordinates out of range, exact fibre delays and the graph's
// name.
func TestGraphML(t *testing.T) {
	const efKeys = `<key id="k" for="node" attr.name="ef.kind"/><key id="r" for="node" attr.name="ef.relay"/><key id="l" for="node" attr.name="label"/>`
	decodeErrors(t, []struct{ file, data, want string }{
		{"z.graphml", "<graphml><graph id=\"a\"></graph>\n<graph id=\"b\"></graph></graphml>", "topo: z.graphml:2: graph: syntax error: nested or multiple graphs are not supported"},
		{"z.graphml", "<graphml><graph>\n<hyperedge/></graph></graphml>", "topo: z.graphml:2: hyperedge: syntax error: hyperedges are not supported"},
		{"z.graphml", "<graphml><graph>\n<node/></graph></graphml>", "topo: z.graphml:2: node.id: syntax error: node without id"},
		{"z.graphml", "<graphml>\n<key for=\"node\"/><graph></graph></graphml>", "topo: z.graphml:2: key: syntax error: key without id"},
		{"z.graphml", "<graphml>" + efKeys + "<graph>\n<node id=\"a\"><data key=\"k\">host</data><data key=\"r\">maybe</data></node></graph></graphml>", `topo: z.graphml:2: node "a" ef.relay: bad value: "maybe" is not true or false`},
	})
	// edgefabric's dialect names nodes by id, whatever their label.
	g, err := Decode([]byte("<graphml>"+efKeys+`<graph id="g"><node id="a"><data key="k">switch</data><data key="l">Alpha</data></node></graph></graphml>`), "z.graphml", LoadOptions{ZooHosts: 1})
	if err != nil || g.NumNodes() != 1 || g.Node(0).Name != "a" {
		t.Fatalf("native dialect with a label: %v", err)
	}
	// Zoo: labels that collide again after "#id" is appended, a router
	// labelled like a generated host (its label indented: Zoo data is
	// trimmed), a longitude without a latitude (no coordinate), and a
	// graph id that wins over the Network data.
	const zooNames = `<graphml><key id="l" for="node" attr.name="label"/><key id="n" for="graph" attr.name="Network"/>
<key id="la" for="node" attr.name="Latitude"/><key id="lo" for="node" attr.name="Longitude"/>
<graph id="G"><data key="n">Net</data>
<node id="1"><data key="l">X</data><data key="lo">0</data></node>
<node id="2"><data key="l">X#3</data><data key="la">0</data><data key="lo">0</data></node>
<node id="5"><data key="l">X#3#3</data><data key="la">0</data><data key="lo">1</data></node>
<node id="3"><data key="l">X</data></node>
<node id="4"><data key="l">
      h1
    </data></node>
<edge source="1" target="2"/><edge source="2" target="5"/><edge source="5" target="3"/><edge source="3" target="4"/>
</graph></graphml>`
	g, err = Decode([]byte(zooNames), "z.graphml", LoadOptions{ZooHosts: 1})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range g.NumNodes() {
		names = append(names, g.Node(NodeID(i)).Name)
	}
	// The Network data names the graph, not yEd's and igraph's placeholder
	// id "G".
	if got, want := strings.Join(names, " "), "X X#3 X#3#3 X#3#3#3 h1 host-h1 h2 h3 h4 h5"; got != want || g.Name != "Net" {
		t.Errorf("names %q, graph %q; want %q and Net", got, g.Name, want)
	}
	if g.Link(0).Delay != DefaultDelay {
		t.Errorf("a longitude alone is no coordinate: delay %d, want the default", g.Link(0).Delay)
	}
	// One degree along the equator, 111,194.9 m: 555,974.6 ns, rounded.
	if d, want := g.Link(1).Delay, 555975*element.Nanosecond; d != want {
		t.Errorf("one degree of longitude: delay %d ps, want %d", d, want)
	}
	// Paris–London: the great circle at 2×10⁸ m/s, to the nanosecond.
	z, err := Decode([]byte(zoo), "Tiny.graphml", LoadOptions{ZooHosts: 1})
	if err != nil {
		t.Fatal(err)
	}
	if d, want := z.Link(0).Delay, 1715639*element.Nanosecond; d != want {
		t.Errorf("Paris–London delay %d ps, want %d", d, want)
	}
}

// TestSpecs: spec text around the values, argument counts, the
// list's shapes and alignment, and sizes with default arguments.
func TestSpecs(t *testing.T) {
	g, err := Parse(" ring:3 ", 1)
	if err != nil || g.Name != "ring:3" || g.NumNodes() != 9 {
		t.Fatalf("Parse(\" ring:3 \"): %v", err)
	}
	if g, err := Parse(" spain-fig2\t", 1); err != nil || g.NumNodes() != 13 {
		t.Fatalf("Parse(\" spain-fig2\"): %v", err)
	}
	for spec, want := range map[string]string{
		"leafspine:1":  `topo: spec "leafspine:1": bad topology spec: leafspine takes 3 values (S,L,H), got 1`,
		"hyperx:1,2,3": `topo: spec "hyperx:1,2,3": bad topology spec: hyperx takes 1 to 2 values (k,T), got 3`,
		"fattree:":     `topo: spec "fattree:": bad topology spec: fattree needs arguments p`,
		"cube:1,2":     `topo: spec "cube:1,2": bad topology spec: cube takes 3 to 4 values (X,Y,Z,H), got 2`,
	} {
		if _, err := Parse(spec, 1); err == nil || err.Error() != want {
			t.Errorf("Parse(%q):\n got  %v\n want %s", spec, err, want)
		}
	}
	shapes := map[string]bool{}
	for _, s := range SpecInfos() {
		shapes[s.Spec] = true
	}
	for _, s := range []string{"fattree:p", "hyperx:k[,T]", "ciscodc:m,a[,H]", "cube:X,Y,Z[,H]", "jellyfish:N,K,R", "spain-fig2"} {
		if !shapes[s] {
			t.Errorf("SpecInfos has no %q", s)
		}
	}
	// Specs aligns the usage texts in one column.
	col := -1
	for _, line := range Specs() {
		spec, _, _ := strings.Cut(line, " ")
		i := len(spec) + strings.IndexFunc(line[len(spec):], func(r rune) bool { return r != ' ' })
		if col < 0 {
			col = i
		}
		if i != col || !strings.HasPrefix(line[i-2:], "  ") {
			t.Errorf("%q: usage at column %d, want %d", line, i, col)
		}
	}
	// The size checked before building counts default arguments as the
	// generator does.
	for _, spec := range []string{"hyperx:3", "ciscodc:1,1", "cube:2,2,2", "torus:3,3,3"} {
		name, args, _ := strings.Cut(spec, ":")
		var a []int
		for _, f := range strings.Split(args, ",") {
			a = append(a, atoi(f))
		}
		for i := range generators {
			if generators[i].name != name {
				continue
			}
			nodes, _ := generators[i].size(a)
			g, err := Parse(spec, 1)
			if err != nil || int(nodes) != g.NumNodes() {
				t.Errorf("%s: estimated %v nodes, built %d (%v)", spec, nodes, g.NumNodes(), err)
			}
		}
	}
}

// TestResolveMissingFileAndFileOverSpec: a name with a dot that is no file is reported as a
// missing file, and an existing file wins over a spec of the same name.
func TestResolveMissingFileAndFileOverSpec(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if _, err := Resolve("nosuch.yaml", 1); err == nil || err.Error() != "topo: open nosuch.yaml: no such file or directory" {
		t.Errorf("nosuch.yaml: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ring:3"), []byte("nodes:\n  - {name: only}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := Resolve("ring:3", 1)
	if err != nil || g.NumNodes() != 1 || g.Node(0).Name != "only" {
		t.Errorf("a file named ring:3 was not loaded: %v", err)
	}
}
