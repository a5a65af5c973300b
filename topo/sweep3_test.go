package topo

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
)

// Tests from a third mutation sweep of the package, aimed at what the
// first two left open: range checks one past the last node, the node
// counts the generators check before building (just past the limit, where
// an undercount would let the graph be built), the seed's stream in
// Jellyfish, the loaders' messages for malformed values, the writers'
// output for empty graphs and shared defaults, and the bisection
// partitioner and diameter bounds on irregular fabrics. Each pins an
// outcome that a mutant changed without failing the earlier tests.

// errText is err's text, "<nil>" for no error.
func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestAddressOnePastEnd: the node ID one past the last is no host, and
// HostAddr reports it as unknown (not a panic).
func TestAddressOnePastEnd(t *testing.T) {
	g, err := Parse("line:2", 1) // 2 switches, 4 hosts: IDs 0..5
	if err != nil {
		t.Fatal(err)
	}
	end := NodeID(g.NumNodes())
	if k := g.HostIndex(end); k != 0 {
		t.Errorf("HostIndex(%d) = %d, want 0", end, k)
	}
	if _, _, err := g.HostAddr(end); errText(err) != "topo: unknown node: id 6" {
		t.Errorf("HostAddr(%d): %v", end, err)
	}
	for _, d := range g.Distances(end) {
		if d != -1 {
			t.Errorf("Distances(%d) = %v, want all -1", end, g.Distances(end))
			break
		}
	}
}

// TestDiameterOneSwitch: a single forwarding node has diameter 0, exactly,
// whatever the budget (the bounds computation is for larger graphs).
func TestDiameterOneSwitch(t *testing.T) {
	g, err := Parse("line:1", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, budget := range []int64{1, 0, -1} {
		if lo, hi, exact := g.diameter(StatsOptions{DiameterBudget: budget}); lo != 0 || hi != 0 || !exact {
			t.Errorf("budget %d: %d..%d exact=%v, want 0..0 exact", budget, lo, hi, exact)
		}
	}
}

// TestUnitsRounding: fractional bits per second and picoseconds round to
// the nearest, both spellings of the micro sign are read, and a zero rate
// is written without a unit.
func TestUnitsRounding(t *testing.T) {
	for s, want := range map[string]int64{"1.5": 2, "1.4": 1, "2.5K": 2500} {
		if got, err := ParseRate(s); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for s, want := range map[string]element.Time{"1.7ps": 2, "1.2ps": 1, "2µs": 2 * element.Microsecond, "2μs": 2 * element.Microsecond} {
		if got, err := ParseDelay(s); err != nil || got != want {
			t.Errorf("ParseDelay(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	if got := FormatRate(0); got != "0" {
		t.Errorf("FormatRate(0) = %q, want 0", got)
	}
}

// TestNamesRefused: invalid UTF-8 and the noncharacters U+FFFE and U+FFFF
// are refused in node names like control characters.
func TestNamesRefused(t *testing.T) {
	for _, name := range []string{"a\xff", "a\uFFFE", "a\uFFFF", "a\x01"} {
		b := NewBuilder("t")
		b.AddNode(name, Switch)
		if !errors.Is(b.Err(), ErrBadValue) {
			t.Errorf("AddNode(%q): %v, want ErrBadValue", name, b.Err())
		}
	}
	b := NewBuilder("t")
	b.AddNode("x", Kind(3))
	if want := `topo: node "x": bad value: kind kind(3)`; errText(b.Err()) != want {
		t.Errorf("kind 3: %v, want %s", b.Err(), want)
	}
}

// TestBuilderOnePastEnd: node IDs one past the last, and negative ones, are
// refused by Connect and ConnectPorts, and Builder.Node returns a detached
// node for them; Grow after nodes exist keeps their names.
func TestBuilderOnePastEnd(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(b *Builder, a NodeID)
		want string
	}{
		{"Connect to id 2", func(b *Builder, a NodeID) { b.Connect(a, 2) }, "topo: link: unknown node: id 2"},
		{"Connect to id -1", func(b *Builder, a NodeID) { b.Connect(a, -1) }, "topo: link: unknown node: id -1"},
		{"ConnectPorts to id 2", func(b *Builder, a NodeID) { b.ConnectPorts(End{a, 1}, End{2, 1}, DefaultRate, DefaultDelay) }, "topo: link: unknown node: id 2"},
	} {
		b := NewBuilder("t")
		a := b.AddNode("a", Switch)
		b.AddNode("b", Switch)
		c.f(b, a)
		if errText(b.Err()) != c.want {
			t.Errorf("%s: %v, want %s", c.name, b.Err(), c.want)
		}
	}
	b := NewBuilder("t")
	a := b.AddNode("a", Switch)
	b.Node(1).Role = "detached"
	b.Grow(10, 10)
	if id, ok := b.Lookup("a"); !ok || id != a {
		t.Errorf("after Grow: Lookup(a) = %d, %v", id, ok)
	}
	b.AddNode("a", Host)
	if !errors.Is(b.Err(), ErrDuplicateName) {
		t.Errorf("after Grow: duplicate name accepted: %v", b.Err())
	}
}

// TestBuilderTotalPortsExact: declared ports adding up to exactly
// MaxTotalPorts are accepted. It allocates about 100 MB.
func TestBuilderTotalPortsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates ~100 MB")
	}
	b := NewBuilder("t")
	for i, left := 0, MaxTotalPorts; left > 0; i++ {
		p := min(left, MaxPorts)
		b.Node(b.AddNode("s"+itoa(i), Switch)).Ports = p
		left -= p
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatalf("exactly %d ports: %v", MaxTotalPorts, err)
	}
	if n := len(g.Ports(NodeID(g.NumNodes() - 1))); n != MaxTotalPorts%MaxPorts {
		t.Errorf("last node has %d ports, want %d", n, MaxTotalPorts%MaxPorts)
	}
}

// TestGeneratorNodeCounts: each generator refuses a graph just past
// MaxNodes by fewer nodes than one of the terms of its count (the hosts,
// the leaves, the access switches), so that leaving a term out lets the
// graph be built.
func TestGeneratorNodeCounts(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func() (*Graph, error)
		want string
	}{
		// 1 spine + 65535 leaves × (1 + 61 hosts) = 4,063,171 nodes
		{"LeafSpine(1, 65535, 61)", func() (*Graph, error) { return LeafSpine(1, MaxPorts, 61) }, "about 4.06e+06 nodes and 4.06e+06 links"},
		// 64 switches × (1 + 62500 hosts) = 4,000,064 nodes
		{"HyperX(8, 62500)", func() (*Graph, error) { return HyperX(8, 62500) }, "about 4e+06 nodes and 4e+06 links"},
		// 4 + 62 access switches × (1 + 64516 hosts) = 4,000,058 nodes
		{"CiscoDCHosts(1, 31, 64516)", func() (*Graph, error) { return CiscoDCHosts(1, 31, 64516) }, "about 4e+06 nodes and 4e+06 links"},
		// 1.5 million switches × (1 + 2 hosts); 7.5 million links
		{"Cube(1500000, 1, 1, 2)", func() (*Graph, error) { return Cube(1_500_000, 1, 1, 2) }, "about 4.5e+06 nodes and 7.5e+06 links"},
		// 1,333,334 switches × (1 + 2 hosts) = 4,000,002 nodes
		{"Line(1333334)", func() (*Graph, error) { return Line(1_333_334) }, "about 4e+06 nodes and 4e+06 links"},
		{"Ring(1333334)", func() (*Graph, error) { return Ring(1_333_334) }, "about 4e+06 nodes and 4e+06 links"},
		// a million switches, no hosts, but 10 million links
		{"Jellyfish(1000000, 20, 20)", func() (*Graph, error) { return Jellyfish(1_000_000, 20, 20, 1) }, "about 1e+06 nodes and 1e+07 links"},
	} {
		want := "topology too large: " + c.want + ", limits 4000000 and 8000000"
		if _, err := c.f(); errText(err) != want {
			t.Errorf("%s:\n got  %v\n want %s", c.name, err, want)
		}
	}
	// The spec's own estimate counts no negative hosts when R > K.
	if _, err := Parse("jellyfish:5000000,1,2", 1); !errors.Is(err, ErrTooLarge) {
		t.Errorf("jellyfish:5000000,1,2: %v, want ErrTooLarge", err)
	}
	// Past 1e18 the estimate stops growing: the message shows where.
	if _, err := Parse("bcube:2,100", 1); errText(err) != `topo: spec "bcube:2,100": topology too large: about 5.88e+19 nodes and 1.15e+20 links, limits 4000000 and 8000000` {
		t.Errorf("bcube:2,100: %v", err)
	}
}

// TestGeneratorArgEdges: argument checks at their edges that the earlier
// sweeps do not reach.
func TestGeneratorArgEdges(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func() (*Graph, error)
		want string
	}{
		// 2(k-1) = T = 32768: a tie blames k, the first term.
		{"HyperX(16385, 32768)", func() (*Graph, error) { return HyperX(16385, 32768) }, "k: bad value: a switch would have more than 65535 ports (2(k-1) peers + T hosts)"},
		{"jellyfish:1,4,3", func() (*Graph, error) { return Parse("jellyfish:1,4,3", 1) }, `topo: spec "jellyfish:1,4,3": N: bad value: need at least 2 switches, got 1`},
		// K = 65535 passes its check; R is refused next.
		{"Jellyfish(2, 65535, 5)", func() (*Graph, error) { return Jellyfish(2, MaxPorts, 5, 1) }, "R: bad value: must be below N (2) for a graph without parallel links, got 5"},
	} {
		if _, err := c.f(); errText(err) != c.want {
			t.Errorf("%s:\n got  %v\n want %s", c.name, err, c.want)
		}
	}
	// A BCube switch may have all 65535 ports.
	g, err := BCube(MaxPorts, 1)
	if err != nil || g.NumNodes() != MaxPorts+1 || g.Node(0).Ports != MaxPorts {
		t.Errorf("BCube(65535, 1): %v", err)
	}
	// R < 3 is allowed for a full mesh (R = N-1): a triangle, whatever
	// the seed.
	g, err = Jellyfish(3, 3, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := linkList(g), "s1:2-s2:2 s1:3-s3:2 s2:3-s3:3 s1:1-h1:1 s2:1-h2:1 s3:1-h3:1"; got != want {
		t.Errorf("Jellyfish(3, 3, 2):\n got  %s\n want %s", got, want)
	}
}

// TestJellyfishRedraw: the first graph drawn for seed 775 (8 switches,
// R = 3) falls apart into two pieces; Jellyfish draws again from the same
// stream and returns this connected graph. The links pin the random
// stream: the same seed must give the same graph in every version.
func TestJellyfishRedraw(t *testing.T) {
	rng := rand.New(rand.NewPCG(775, 0x6a656c6c79666973))
	if connectedAdj(jellyfishAdj(8, 3, rng)) {
		t.Fatal("the first draw of seed 775 is connected: the test no longer tests a redraw")
	}
	g, err := Jellyfish(8, 4, 3, 775)
	if err != nil {
		t.Fatal(err)
	}
	want := "s1:2-s4:2 s1:3-s5:2 s1:4-s7:2 s2:2-s3:2 s2:3-s6:2 s2:4-s8:2 s3:3-s5:3 s3:4-s6:3 s4:3-s7:3 s4:4-s8:3 s5:4-s7:4 s6:4-s8:4 " +
		"s1:1-h1:1 s2:1-h2:1 s3:1-h3:1 s4:1-h4:1 s5:1-h5:1 s6:1-h6:1 s7:1-h7:1 s8:1-h8:1"
	if got := linkList(g); got != want {
		t.Errorf("jellyfish:8,4,3 seed 775:\n got  %s\n want %s", got, want)
	}
	if !g.Connected() {
		t.Error("not connected")
	}
}

// TestResolveShapes: a named topology and a spec with spaces around it
// are specs; a path with a slash is a file; a socket named like a spec is
// not a file to load; a GraphML file gets one host per router.
func TestResolveShapes(t *testing.T) {
	for s, want := range map[string]bool{" ring:3 ": true, "spain-fig2": true, " dumbnet-fig1\n": true, "fattree": true, "fat": false, "a/b": false} {
		if IsSpec(s) != want {
			t.Errorf("IsSpec(%q) = %v, want %v", s, !want, want)
		}
	}
	if g, err := Resolve("spain-fig2", 1); err != nil || g.NumNodes() != 13 {
		t.Errorf("spain-fig2: %v", err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	if _, err := Resolve("a/b", 1); errText(err) != "topo: open a/b: no such file or directory" {
		t.Errorf("a/b: %v", err)
	}
	if l, err := net.Listen("unix", "ring:3"); err == nil {
		defer l.Close()
		if g, err := Resolve("ring:3", 1); err != nil || g.NumNodes() != 9 {
			t.Errorf("socket ring:3: %v", err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "tiny.graphml"), []byte(zoo), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := Resolve("tiny.graphml", 1)
	if err != nil {
		t.Fatal(err)
	}
	if s := Stats(g); s.Switches != 4 || s.Hosts != 4 {
		t.Errorf("tiny.graphml: %d switches, %d hosts; want 4 and 4", s.Switches, s.Hosts)
	}
	// The named topologies come last in SpecInfos, sorted.
	infos := SpecInfos()
	var last []string
	for _, s := range infos[len(infos)-4:] {
		last = append(last, s.Spec)
	}
	if got := strings.Join(last, " "); got != "dumbnet-fig1 dumbnet-testbed spain-fig2 spain-testbed" {
		t.Errorf("SpecInfos ends with %s", got)
	}
}

// TestFormatEdges: format names past the table, the DOT reader that does
// not exist, a containerlab file whose first line is long, and graph names
// DOT must escape.
func TestFormatEdges(t *testing.T) {
	for f, want := range map[Format]string{FormatDOT: "dot", 6: "format(6)", 200: "format(200)"} {
		if got := f.String(); got != want {
			t.Errorf("Format(%d) = %q, want %q", uint8(f), got, want)
		}
	}
	if _, err := Decode([]byte("graph x {}\n"), "x.dot", LoadOptions{Format: FormatDOT}); errText(err) != "topo: x.dot: export-only format: DOT (Graphviz) can be written but not read; edgefabric reads native YAML or JSON, containerlab (.clab.yml) and GraphML" {
		t.Errorf("decode DOT: %v", err)
	}
	long := "# " + strings.Repeat("x", 2000) + "\nname: x\ntopology:\n  nodes: {}\n"
	if got := DetectFormat("lab.yml", []byte(long)); got != FormatClab {
		t.Errorf("clab file with a long comment: %v", got)
	}
	b := NewBuilder("a\rb\\c")
	b.AddNode("s", Switch)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteDOT(&buf, g); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(buf.String(), "\n"); first != `graph "a\rb\\c" {` {
		t.Errorf("first line %q", first)
	}
}

// TestLoaderMessages: malformed values the earlier sweeps do not feed the
// loaders, each refused with exactly this message.
func TestLoaderMessages(t *testing.T) {
	var big strings.Builder
	big.WriteString("nodes:\n")
	for i := range 367 {
		big.WriteString("  - {name: s" + itoa(i) + ", ports: 65535}\n")
	}
	const clab = "name: x\ntopology:\n  nodes:\n"
	const graphml = `<graphml><key id="k" for="node" attr.name="ef.kind"/><key id="p" for="node" attr.name="ef.ports"/><key id="r" for="edge" attr.name="ef.rate"/><graph>` + "\n"
	decodeErrors(t, []struct{ file, data, want string }{
		// a Builder error has no line or field, and says so without ": :"
		{"big.yaml", big.String(), `topo: big.yaml: topology too large: more than 24000000 ports in all (node "s366" brings the count to 24051345)`},
		{"a.yaml", "\"a\\rb\": 1\nnodes: []\n", `topo: a.yaml:1: a\rb: syntax error: unknown key (want name, defaults, nodes, links)`},
		{"a.yaml", "? [a]\n: 1\nnodes: []\n", "topo: a.yaml:1: syntax error: mapping keys must be plain strings"},
		{"a.yaml", "nodes:\n  - {name: [a]}\n", "topo: a.yaml:2: nodes[0].name: syntax error: want a single value, got a list"},
		{"a.yaml", "name: {a: 1}\nnodes: []\n", "topo: a.yaml:1: name: syntax error: want a single value, got a mapping"},
		{"a.yaml", "nodes:\n  - {name: s1}\nlinks:\n  - ~\n", "topo: a.yaml:4: links[0]: syntax error: want [a, b] or {a: .., b: ..}, got null"},
		{"a.yaml", "nodes:\n  - {kind: host}\n", "topo: a.yaml:2: nodes[0].name: bad value: missing or empty"},
		// the name's own line, not the node's
		{"a.yaml", "nodes:\n  - kind: switch\n    name: s1\n  - kind: host\n    name: s1\n", `topo: a.yaml:5: nodes[1].name: duplicate node name: "s1"`},
		// the node's line, not the name's
		{"a.yaml", "nodes:\n  - {kind: switch,\n     name: s1, ports: 1}\n  - {name: s2}\nlinks:\n  - [s1:2, s2:1]\n", "topo: a.yaml:2: nodes[0].ports: bad port number: declares 1 ports but a link uses port 2"},
		{"lab.clab.yml", clab + "    \"\": {}\n", "topo: lab.clab.yml:4: topology.nodes.: bad value: empty node name"},
		{"lab.clab.yml", clab + "    a: {labels: {role: \"r\\x01\"}}\n", `topo: lab.clab.yml:4: topology.nodes.a: bad value: role "r\x01": control character or invalid UTF-8`},
		{"lab.clab.yml", clab + "    a: {}\n  links:\n    - {vars: {rate: 1G}}\n", "topo: lab.clab.yml:6: topology.links[0].endpoints: syntax error: missing"},
		{"z.graphml", "<graphml><graph>\n<node id=\"a\"><node id=\"b\"/></node></graph></graphml>", "topo: z.graphml:2: node: syntax error: node inside node"},
		{"z.graphml", "<graphml></graphml>", "topo: z.graphml:1: graphml: syntax error: no <graphml> document with a <graph>"},
		{"z.graphml", "<graph></graph>", "topo: z.graphml:1: graphml: syntax error: no <graphml> document with a <graph>"},
		{"z.graphml", graphml + `<node id="a"><data key="k">router</data></node></graph></graphml>`, `topo: z.graphml:2: node "a" ef.kind: bad value: "router" (want switch or host)`},
		{"z.graphml", graphml + `<node id="a"><data key="k">switch</data><data key="p">x</data></node></graph></graphml>`, `topo: z.graphml:2: node "a" ef.ports: bad value: "x" is not an integer`},
		{"z.graphml", graphml + `<node id="a"><data key="k">switch</data></node><node id="b"><data key="k">switch</data></node>` + "\n" +
			`<edge source="a" target="b"><data key="r">fast</data></edge></graph></graphml>`, `topo: z.graphml:3: edge[0].ef.rate: bad value: rate "fast": want bits per second like 1G, 10Gbps or 100M`},
	})
	// 62 routers with 65535 hosts each: the port check passes (65535
	// hosts fit a switch), the node count does not.
	var many strings.Builder
	many.WriteString("<graphml><graph>")
	for i := range 62 {
		many.WriteString(`<node id="` + itoa(i) + `"/>`)
	}
	many.WriteString("</graph></graphml>")
	if _, err := Decode([]byte(many.String()), "z.graphml", LoadOptions{ZooHosts: MaxPorts}); errText(err) != "topo: z.graphml: hosts: topology too large: 62 switches with 65535 hosts each exceed 4000000 nodes" {
		t.Errorf("62 × 65535 hosts: %v", err)
	}
}

// TestClabEdges: a linux node without links is a switch; the interface's
// last number is its port, up to 65535.
func TestClabEdges(t *testing.T) {
	g, err := Decode([]byte("name: x\ntopology:\n  nodes:\n    a: {kind: linux}\n"), "lab.clab.yml", LoadOptions{})
	if err != nil || g.Node(0).Kind != Switch {
		t.Errorf("lone linux node: %v", err)
	}
	for iface, want := range map[string]int{"eth65535": 65535, "eth12a": 12, "e1-3": 3} {
		if p, err := ifacePort(iface); err != nil || p != want {
			t.Errorf("ifacePort(%q) = %d, %v; want %d", iface, p, err, want)
		}
	}
	if _, err := ifacePort("eth65536"); !errors.Is(err, ErrBadPort) {
		t.Errorf("eth65536: %v", err)
	}
}

// TestZooData: data without a key declaration is read under its key's
// name; coordinates at the poles and longitudes up to 180 count, a node
// with a latitude only has none; an empty LinkSpeedRaw is no speed, and
// 1e15 is the highest.
func TestZooData(t *testing.T) {
	g, err := Decode([]byte(`<graphml><graph><node id="1"><data key="label">A</data></node></graph></graphml>`), "z.graphml", LoadOptions{})
	if err != nil || g.Node(0).Name != "A" {
		t.Errorf("undeclared label: %v", err)
	}
	const coords = `<graphml><key id="la" for="node" attr.name="Latitude"/><key id="lo" for="node" attr.name="Longitude"/><key id="s" for="edge" attr.name="LinkSpeedRaw"/><graph>
<node id="1"><data key="la">90</data><data key="lo">0</data></node>
<node id="2"><data key="la">89</data><data key="lo">0</data></node>
<node id="3"><data key="la">0</data><data key="lo">180</data></node>
<node id="4"><data key="la">0</data><data key="lo">179</data></node>
<node id="5"><data key="la">0</data></node>
<edge source="1" target="2"><data key="s"></data></edge>
<edge source="3" target="4"><data key="s">1e15</data></edge>
<edge source="4" target="5"/>
</graph></graphml>`
	g, err = Decode([]byte(coords), "z.graphml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// one degree of a great circle: 111,194.9 m, 555,974.6 ns
	for i, want := range []struct {
		rate  int64
		delay element.Time
	}{{DefaultRate, 555975 * element.Nanosecond}, {1e15, 555975 * element.Nanosecond}, {DefaultRate, DefaultDelay}} {
		if l := g.Link(LinkID(i)); l.Rate != want.rate || l.Delay != want.delay {
			t.Errorf("edge %d: rate %d delay %d, want %d and %d", i, l.Rate, l.Delay, want.rate, want.delay)
		}
	}
}

// TestWriterDefaults: the writers' output for an empty graph, and the
// defaults line when the most common delay is shared by fewer links than
// the most common rate.
func TestWriterDefaults(t *testing.T) {
	empty, err := NewBuilder("empty").Graph()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteYAML(&buf, empty); err != nil {
		t.Fatal(err)
	}
	if want := "# edgefabric topology, native format (docs/topology.md)\nname: empty\ndefaults: {rate: 1G, delay: 1us}\nnodes: []\nlinks: []\n"; buf.String() != want {
		t.Errorf("empty YAML:\n%s\nwant\n%s", buf.String(), want)
	}
	buf.Reset()
	if err := WriteClab(&buf, empty); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(buf.String(), "      image: alpine:3\n  nodes: {}\n  links: []\n") {
		t.Errorf("empty clab:\n%s", buf.String())
	}
	for _, f := range []Format{FormatYAML, FormatClab} {
		if back := roundTrip(t, empty, f); back.NumNodes() != 0 || back.NumLinks() != 0 {
			t.Errorf("%v: empty graph read back with %d nodes", f, back.NumNodes())
		}
	}
	b := NewBuilder("d")
	s1, s2, s3, s4 := b.AddNode("s1", Switch), b.AddNode("s2", Switch), b.AddNode("s3", Switch), b.AddNode("s4", Switch)
	b.ConnectPorts(End{s1, 1}, End{s2, 1}, Rate1G, 2*element.Microsecond)
	b.ConnectPorts(End{s2, 2}, End{s3, 1}, Rate1G, 2*element.Microsecond)
	b.ConnectPorts(End{s3, 2}, End{s4, 1}, Rate1G, 5*element.Microsecond)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := WriteYAML(&buf, g); err != nil {
		t.Fatal(err)
	}
	if want := "# edgefabric topology, native format (docs/topology.md)\nname: d\ndefaults: {rate: 1G, delay: 2us}\nnodes:\n" +
		"  - {name: s1, kind: switch}\n  - {name: s2, kind: switch}\n  - {name: s3, kind: switch}\n  - {name: s4, kind: switch}\n" +
		"links:\n  - [s1:1, s2:1]\n  - [s2:2, s3:1]\n  - {a: s3:2, b: s4:1, delay: 5us}\n"; buf.String() != want {
		t.Errorf("YAML:\n%s\nwant\n%s", buf.String(), want)
	}
	// containerlab has no defaults: a link whose delay alone differs
	// carries both vars.
	buf.Reset()
	if err := WriteClab(&buf, g); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "    - endpoints: [s1:eth1, s2:eth1]\n      vars: {rate: 1G, delay: 2us}\n") {
		t.Errorf("clab:\n%s", buf.String())
	}
	for s, want := range map[string]string{"yes": `"yes"`, "NULL": `"NULL"`, "N": `"N"`, "-": `"-"`, "-a": `"-a"`} {
		if got := yamlString(s); got != want {
			t.Errorf("yamlString(%q) = %s, want %s", s, got, want)
		}
	}
}

// smallFabric draws a random fabric of 2..7 switches (a random tree plus
// a few extra links), 2..8 hosts, some dual-homed (half of those relay),
// sometimes a cable between two hosts, and link rates of 1, 2, 3 and
// 10 Gb/s: small enough for bruteBisection.
func smallFabric(seed uint64) *Graph {
	rng := rand.New(rand.NewPCG(seed, 99))
	b := NewBuilder("small" + itoa(int(seed)))
	link := randomLinker(b, rng)
	sw := addSwitches(b, 2+rng.IntN(6))
	for i := 1; i < len(sw); i++ {
		link(sw[i], sw[rng.IntN(i)])
	}
	randomLinks(rng, sw, rng.IntN(len(sw)+1), link)
	attachHosts(b, rng, sw, 2+rng.IntN(7), 5)
	if rng.IntN(3) == 0 {
		h0, _ := b.Lookup("h0")
		h1, _ := b.Lookup("h1")
		link(h0, h1)
	}
	return mustGraph(b)
}

// bigFabric draws a larger random fabric: 10..69 switches in a chain with
// short cross links plus random extra links, up to twice as many hosts
// (a quarter dual-homed, half of those relaying) and a few host-to-host
// cables.
func bigFabric(seed uint64) *Graph {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := NewBuilder("big" + itoa(int(seed)))
	link := randomLinker(b, rng)
	sw := addSwitches(b, 10+rng.IntN(60))
	for i := 1; i < len(sw); i++ {
		link(sw[i], sw[max(0, i-1-rng.IntN(3))])
	}
	randomLinks(rng, sw, rng.IntN(len(sw)/2), link)
	hs := attachHosts(b, rng, sw, 2+rng.IntN(2*len(sw)), 4)
	randomLinks(rng, hs, rng.IntN(4), link)
	return mustGraph(b)
}

// randomRates are the link rates the random fabrics draw from.
var randomRates = []int64{Rate1G, Rate10G, 2 * Rate1G, 3 * Rate1G}

// randomLinker returns link(a, c): a cable between the next free ports of
// a and c at a random rate.
func randomLinker(b *Builder, rng *rand.Rand) func(a, c NodeID) {
	return func(a, c NodeID) {
		b.ConnectPorts(End{a, b.nextPort(a)}, End{c, b.nextPort(c)}, randomRates[rng.IntN(4)], DefaultDelay)
	}
}

// addSwitches adds switches s0..s(n-1).
func addSwitches(b *Builder, n int) []NodeID {
	var sw []NodeID
	for i := range n {
		sw = append(sw, b.AddNode("s"+itoa(i), Switch))
	}
	return sw
}

// randomLinks draws n pairs of nodes and links each pair that is two
// different nodes.
func randomLinks(rng *rand.Rand, nodes []NodeID, n int, link func(a, c NodeID)) {
	for range n {
		if i, j := rng.IntN(len(nodes)), rng.IntN(len(nodes)); i != j {
			link(nodes[i], nodes[j])
		}
	}
}

// attachHosts adds hosts h0..h(n-1), each cabled to a random switch and,
// one in dualOneIn, to a second one as port 2 (relaying half the time).
func attachHosts(b *Builder, rng *rand.Rand, sw []NodeID, n, dualOneIn int) []NodeID {
	var hs []NodeID
	for h := range n {
		id := b.AddNode("h"+itoa(h), Host)
		hs = append(hs, id)
		s := sw[rng.IntN(len(sw))]
		b.ConnectPorts(End{s, b.nextPort(s)}, End{id, 1}, randomRates[rng.IntN(4)], DefaultDelay)
		if rng.IntN(dualOneIn) == 0 {
			if s2 := sw[rng.IntN(len(sw))]; s2 != s {
				b.ConnectPorts(End{s2, b.nextPort(s2)}, End{id, 2}, randomRates[rng.IntN(4)], DefaultDelay)
				b.Node(id).Relay = rng.IntN(2) == 0
			}
		}
	}
	return hs
}

func mustGraph(b *Builder) *Graph {
	g, err := b.Graph()
	if err != nil {
		panic(err)
	}
	return g
}

// TestBisectionIrregular: on irregular fabrics (uneven rates, dual-homed
// and relaying hosts, host-to-host cables, an odd host count) the
// estimate is exactly the minimum on these small ones, each of which
// needs a different part of the partitioner: the second growth target
// for odd host counts, the cheapest-hosts start, whole clusters in the
// Kernighan–Lin pass, a spread seed, the capacity between two swapped
// hosts.
func TestBisectionIrregular(t *testing.T) {
	for _, seed := range []uint64{6, 24, 52, 143} {
		g := smallFabric(seed)
		if got, want := g.Bisection(), bruteBisection(g); got != want {
			t.Errorf("%s: bisection %d, exact minimum %d", g.Name, got, want)
		}
	}
}

// TestBisectionLarger: on larger irregular fabrics the estimate is at
// most the cut this version's partitioner finds (not proven minima: a
// regression guard for the passes and seeds that find them), and the
// diameter bounds beyond the budget start at the true diameter.
func TestBisectionLarger(t *testing.T) {
	for _, c := range []struct {
		seed   uint64
		cut    int64
		diam   int
		bounds [2]int
	}{
		{7, 25 * Rate1G, 9, [2]int{9, 14}},
		{8, 38 * Rate1G, 7, [2]int{7, 12}},
		{124, 5 * Rate1G, 10, [2]int{10, 16}},
		{181, 21 * Rate1G, 8, [2]int{8, 12}},
	} {
		g := bigFabric(c.seed)
		if got := g.Bisection(); got < 0 || got > c.cut {
			t.Errorf("%s: bisection %d, want at most %d", g.Name, got, c.cut)
		}
		if d := slowDiameter(g); d != c.diam {
			t.Fatalf("%s: diameter %d, want %d", g.Name, d, c.diam)
		}
		if lo, hi, exact := g.diameter(StatsOptions{DiameterBudget: 1}); exact || [2]int{lo, hi} != c.bounds {
			t.Errorf("%s: bounds %d..%d (exact %v), want %v", g.Name, lo, hi, exact, c.bounds)
		}
	}
}

// TestJellyfishLastPairs: the random phase ends only when no two
// switches with free ports are left unlinked, found by the exhaustive
// search once random pairs keep colliding. jellyfish:5,4,4 is then always
// the full mesh K5 (seed 17 leaves its last pair to that search), and in
// jellyfish:7,4,4 the switches left with a free port are pairwise linked
// (seed 36 needs the search too).
func TestJellyfishLastPairs(t *testing.T) {
	for seed := range uint64(40) {
		g, err := Jellyfish(5, 4, 4, seed)
		if err != nil {
			t.Fatal(err)
		}
		if g.NumLinks() != 10 {
			t.Errorf("jellyfish:5,4,4 seed %d: %d links, want the 10 of K5", seed, g.NumLinks())
		}
		if g, err = Jellyfish(7, 4, 4, seed); err != nil {
			t.Fatal(err)
		}
		var open []NodeID
		for _, s := range g.Nodes(Switch) {
			if g.Degree(s) < 4 {
				open = append(open, s)
			}
		}
		for i, a := range open {
			for _, b := range open[i+1:] {
				if g.Distances(a)[b] != 1 {
					t.Errorf("jellyfish:7,4,4 seed %d: %s and %s both have a free port and no link", seed, g.Node(a).Name, g.Node(b).Name)
				}
			}
		}
	}
}
