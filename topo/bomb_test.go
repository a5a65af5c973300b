package topo

import (
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
