package topo

import (
	"bytes"
	"cmp"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// Inherited values (GraphML keys' defaults, containerlab's default, kind
// and group labels, labels and link vars that a YAML alias repeats) once
// were copied into every node or link: k of them on k elements cost k²
// (k = 4000, a file of 110-350 KB: 1.4-6 GB). These check the cost by the
// bytes allocated, which unlike time does not depend on the machine.

// allocated is the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// bombLimit is far above what the bombs below cost now (a few MB) and far
// below what they cost before (GBs).
const bombLimit = 50 << 20

func TestGraphMLDefaultsBomb(t *testing.T) {
	const k = 4000
	var b strings.Builder
	b.WriteString("<graphml>\n")
	for i := range k {
		fmt.Fprintf(&b, "<key id=\"k%d\" for=\"all\" attr.name=\"a%d\"><default>v</default></key>\n", i, i)
	}
	b.WriteString("<graph>\n")
	for i := range k {
		fmt.Fprintf(&b, "<node id=\"n%d\"/>\n", i)
	}
	b.WriteString("<edge source=\"n0\" target=\"n1\"/>\n</graph>\n</graphml>\n")
	data := []byte(b.String())
	var g *Graph
	var err error
	n := allocated(func() { g, err = Decode(data, "bomb.graphml", LoadOptions{Format: FormatGraphML}) })
	t.Logf("%d keys and nodes (%d bytes): %.1f MB allocated", k, len(data), float64(n)/(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	if g.NumNodes() != k {
		t.Errorf("%d nodes, want %d", g.NumNodes(), k)
	}
	if n > bombLimit {
		t.Errorf("%d keys' defaults on %d nodes allocated %d bytes, want under %d", k, k, n, bombLimit)
	}
}

// TestClabLabelsBomb: labels of the defaults, a kind or a group apply to
// every node, and an alias repeats a node's own labels or a link's vars.
func TestClabLabelsBomb(t *testing.T) {
	const d = 4000
	labels := func(indent string) string {
		var b strings.Builder
		for i := range d {
			fmt.Fprintf(&b, "%sl%d: v\n", indent, i)
		}
		return b.String()
	}
	nodes := func(node string) string {
		var b strings.Builder
		b.WriteString("  nodes:\n")
		for i := range d {
			fmt.Fprintf(&b, "    n%d: %s\n", i, node)
		}
		return b.String()
	}
	var links strings.Builder
	links.WriteString("  nodes: {a: {}, b: {}}\n  links:\n")
	for i := range d {
		fmt.Fprintf(&links, "    - {endpoints: [\"a:e%d\", \"b:e%d\"], vars: *V}\n", i+1, i+1)
	}
	for _, c := range []struct {
		name, file string
		nodes      int
	}{
		{"defaults", "name: x\ntopology:\n  defaults:\n    labels:\n" + labels("      ") + nodes("{}"), d},
		{"kind", "name: x\ntopology:\n  kinds:\n    linux:\n      labels:\n" + labels("        ") + nodes("{kind: linux}"), d},
		{"group", "name: x\ntopology:\n  groups:\n    g:\n      labels:\n" + labels("        ") + nodes("{group: g}"), d},
		{"alias", "name: x\ntopology:\n  kinds:\n    k:\n      labels: &L\n" + labels("        ") + nodes("{labels: *L}"), d},
		{"vars", "name: x\nv: &V\n" + labels("  ") + "topology:\n" + links.String(), 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := []byte(c.file)
			var g *Graph
			var err error
			n := allocated(func() { g, err = Decode(data, "bomb.clab.yml", LoadOptions{Format: FormatClab}) })
			t.Logf("%d labels on %d nodes or links (%d bytes): %.1f MB allocated", d, d, len(data), float64(n)/(1<<20))
			if err != nil {
				t.Fatal(err)
			}
			if g.NumNodes() != c.nodes {
				t.Errorf("%d nodes, want %d", g.NumNodes(), c.nodes)
			}
			if n > bombLimit {
				t.Errorf("%d labels on %d nodes or links allocated %d bytes, want under %d", d, d, n, bombLimit)
			}
		})
	}
}

// TestGraphMLDefaultsShared: the defaults, looked up rather than copied,
// still count as the element's data: in a reciprocal pair (an edge with a
// key's default value equals its reverse without the data), and of two
// keys of one name the first by id gives the default.
func TestGraphMLDefaultsShared(t *testing.T) {
	g := decodeGML(t, gmlHead+`<key id="s" for="edge" attr.name="LinkSpeedRaw"><default>1e10</default></key>
<key id="x" for="all" attr.name="x"><default>1</default></key>
<key id="la1" for="node" attr.name="Latitude"><default>0</default></key><key id="la2" for="node" attr.name="Latitude"><default>north</default></key>
<key id="lo" for="node" attr.name="Longitude"><default>0</default></key>
<graph edgedefault="directed"><node id="a"/><node id="b"><data key="lo">1</data></node><node id="c"/>
<edge source="a" target="b"><data key="s">1e10</data><data key="x">1</data></edge><edge source="b" target="a"/>
<edge source="b" target="c"/><edge source="c" target="b"><data key="x">2</data></edge>
</graph></graphml>`)
	if n := g.NumLinks(); n != 3 {
		t.Errorf("%d links, want 3: a-b once (the same data, given or by default), b-c twice (x differs)", n)
	}
	if r, d := g.Link(0).Rate, g.Link(0).Delay; r != 10*Rate1G || d != fibreDelay(0, 0, 0, 1) {
		t.Errorf("a-b: rate %d delay %d, want the defaults' 10G and 1 degree", r, d)
	}
}

// aliasPortNamesDoc is k nodes; with names, the first names k ports in a
// mapping that a YAML alias gives every other node, else each declares
// k ports.
func aliasPortNamesDoc(k int, names bool) []byte {
	var b strings.Builder
	b.WriteString("name: x\nnodes:\n")
	for i := range k {
		switch {
		case !names:
			fmt.Fprintf(&b, "  - {name: n%d, ports: %d}\n", i, k)
		case i == 0:
			b.WriteString("  - name: n0\n    port_names: &P\n")
			for p := 1; p <= k; p++ {
				fmt.Fprintf(&b, "      %d: Ethernet%d\n", p, p)
			}
		default:
			fmt.Fprintf(&b, "  - {name: n%d, port_names: *P}\n", i)
		}
	}
	return []byte(b.String())
}

// TestNativePortNamesAliasBomb: a port_names mapping of 4,000 names that
// an alias gives 4,000 nodes (a 233 KB file) names 16 million ports, all
// real (a name declares its port) and within MaxTotalPorts. Read again
// for every node, it took 6.2 GB; read once and shared, it costs what the
// same ports cost declared with ports: 4000 (the port tables, 64 MB),
// and writing the graph back as YAML aliases it again.
func TestNativePortNamesAliasBomb(t *testing.T) {
	const k = 4000
	plain := aliasPortNamesDoc(k, false)
	var err error
	base := allocated(func() { _, err = Decode(plain, "ports.yaml", LoadOptions{}) })
	if err != nil {
		t.Fatal(err)
	}
	t.Run("alias", func(t *testing.T) { portNamesBomb(t, k, aliasPortNamesDoc(k, true), base) })
	// The anchor on the node, the mapping reached through its merge key:
	// the mapping itself has no anchor (found by a review: 6.3 GB).
	t.Run("merge", func(t *testing.T) { portNamesBomb(t, k, mergePortNamesDoc(k), base) })
}

// mergePortNamesDoc is aliasPortNamesDoc's document with the anchor on
// the first node and every other node merging it (<<: *d).
func mergePortNamesDoc(k int) []byte {
	var b strings.Builder
	b.WriteString("name: x\nnodes:\n  - &d\n    name: n0\n    port_names:\n")
	for p := 1; p <= k; p++ {
		fmt.Fprintf(&b, "      %d: Ethernet%d\n", p, p)
	}
	for i := 1; i < k; i++ {
		fmt.Fprintf(&b, "  - {<<: *d, name: n%d}\n", i)
	}
	return []byte(b.String())
}

func portNamesBomb(t *testing.T, k int, data []byte, base uint64) {
	var g *Graph
	var err error
	n := allocated(func() { g, err = Decode(data, "bomb.yaml", LoadOptions{}) })
	t.Logf("%d names on %d nodes (%d bytes): %.1f MB allocated; the same ports declared: %.1f MB", k, k, len(data), float64(n)/(1<<20), float64(base)/(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	if g.NumNodes() != k {
		t.Fatalf("%d nodes, want %d", g.NumNodes(), k)
	}
	for _, id := range []NodeID{0, 1, NodeID(k - 1)} {
		if p, name := g.Node(id).Ports, g.PortName(id, Port(k)); p != k || name != fmt.Sprintf("Ethernet%d", k) {
			t.Errorf("node %d: %d ports, port %d named %q", id, p, k, name)
		}
	}
	if n > base+bombLimit {
		t.Errorf("%d names on %d nodes allocated %d bytes, want under %d (the same ports declared: %d)", k, k, n, base+bombLimit, base)
	}
	var out bytes.Buffer
	w := allocated(func() { err = WriteYAML(&out, g) })
	t.Logf("written back: %d bytes, %.1f MB allocated", out.Len(), float64(w)/(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	if out.Len() > 2*len(data) || w > bombLimit {
		t.Errorf("written back: %d bytes (%d allocated), want under %d (%d)", out.Len(), w, 2*len(data), bombLimit)
	}
}

// TestNativePortNamesAlias: a port_names mapping that aliases repeat, as a
// lab of one switch model writes it, names every node's ports alike,
// checked for each node (its declared ports), and reads back alike.
func TestNativePortNamesAlias(t *testing.T) {
	doc := `name: lab
nodes:
  - name: s1
    port_names: &arista
      1: Ethernet1
      2: Ethernet2
      49: Ethernet49/1
  - {name: s2, port_names: *arista}
  - {name: s3, port_names: {<<: *arista, 3: Ethernet3}}
  - {name: h1, kind: host}
  - {name: h2, kind: host}
links:
  - [s1:49, s2:49]
  - [s2, h1]
  - [s3, h2]
`
	g, err := Decode([]byte(doc), "lab.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		node string
		port Port
		name string
	}{{"s1", 1, "Ethernet1"}, {"s1", 49, "Ethernet49/1"}, {"s2", 2, "Ethernet2"}, {"s2", 49, "Ethernet49/1"}, {"s2", 3, ""}, {"s3", 3, "Ethernet3"}, {"s3", 49, "Ethernet49/1"}} {
		n, _ := g.Lookup(c.node)
		if got := g.PortName(n, c.port); got != c.name {
			t.Errorf("%s port %d: %q, want %q", c.node, c.port, got, c.name)
		}
	}
	// the next free port skips the named ones on every node
	for _, c := range []struct {
		host, sw string
		port     Port
	}{{"h1", "s2", 3}, {"h2", "s3", 4}} {
		h, _ := g.Lookup(c.host)
		if peer, ok := g.Peer(h, 1); !ok || g.Node(peer.Node).Name != c.sw || peer.Port != c.port {
			t.Errorf("%s: on %v, want %s port %d", c.host, peer, c.sw, c.port)
		}
	}
	for _, f := range []Format{FormatYAML, FormatJSON, FormatGraphML} {
		var buf bytes.Buffer
		if err := Export(&buf, g, f); err != nil {
			t.Fatal(err)
		}
		if f == FormatYAML && (!strings.Contains(buf.String(), "{name: s1, kind: switch, port_names: &p1 {1: Ethernet1") || !strings.Contains(buf.String(), "{name: s2, kind: switch, port_names: *p1}")) {
			t.Errorf("the shared names are not written once:\n%s", buf.String())
		}
		back, err := Decode(buf.Bytes(), "rt."+f.String(), LoadOptions{Format: f})
		if err != nil {
			t.Fatalf("%v: %v\n%s", f, err, buf.String())
		}
		if d := cmp.Or(diffGraph(g, back), diffPortNames(g, back), diffPortNames(back, g)); d != "" {
			t.Errorf("%v: %s", f, d)
		}
	}
	// A node's declared ports bound the names an alias gives it: the
	// error is at the entry, in the mapping the alias names.
	bad := strings.Replace(doc, "{name: s2, port_names: *arista}", "{name: s2, ports: 48, port_names: *arista}", 1)
	want := "lab.yaml:7: nodes[1].port_names.49: bad port number: port 49, but the node declares 48 ports"
	if _, err := Decode([]byte(bad), "lab.yaml", LoadOptions{}); err == nil || err.Error() != "topo: "+want {
		t.Errorf("%v, want %q", err, want)
	}
	// an error in the mapping is reported for the first node to use it
	bad = strings.Replace(doc, "2: Ethernet2", "2: Ethernet1", 1)
	want = `lab.yaml:6: nodes[0].port_names.2: bad value: "Ethernet1" names port 1 too`
	if _, err := Decode([]byte(bad), "lab.yaml", LoadOptions{}); err == nil || err.Error() != "topo: "+want {
		t.Errorf("%v, want %q", err, want)
	}
}
