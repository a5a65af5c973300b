package topo

import (
	"encoding/binary"
	"strings"
	"testing"
	"unicode/utf16"
)

// GraphML as tools and datasets write it, which a review of 654 real
// files (the published Topology Zoo, its yEd sources, files written by
// yEd, Gephi, igraph and networkx) found misread or refused. The inputs
// are written for the tests, each the smallest case of one finding.

const gmlHead = `<graphml xmlns="http://graphml.graphdrawing.org/xmlns">`

func decodeGML(t *testing.T, data string) *Graph {
	t.Helper()
	g, err := Decode([]byte(data), "g.graphml", LoadOptions{ZooHosts: 0})
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return g
}

// TestGraphMLKeyDefaults: a key's <default> applies to the elements that
// have no data for it (GraphML primer 2.4). Before, it was ignored: a
// networkx graph with a default LinkSpeedRaw came out at 1 Gb/s.
func TestGraphMLKeyDefaults(t *testing.T) {
	g := decodeGML(t, gmlHead+`
 <key id="s" for="edge" attr.name="LinkSpeedRaw"><default>1e10</default></key>
 <key id="la" for="node" attr.name="Latitude"><default>0</default></key>
 <key id="lo" for="node" attr.name="Longitude"><default>0</default></key>
 <graph edgedefault="undirected"><node id="a"/><node id="b"><data key="lo">1</data></node><node id="c"/>
 <edge source="a" target="b"/><edge source="b" target="c"><data key="s">1e9</data></edge></graph></graphml>`)
	if r0, r1 := g.Link(0).Rate, g.Link(1).Rate; r0 != 10*Rate1G || r1 != Rate1G {
		t.Errorf("rates %d %d, want the default 10G and the edge's own 1G", r0, r1)
	}
	// a and b lie on the equator, one degree apart: 111.19 km of fibre.
	if d := g.Link(0).Delay; d != fibreDelay(0, 0, 0, 1) || d < 555*1000*1000 {
		t.Errorf("delay %d from the defaults' coordinates", d)
	}
}

// TestGraphMLPortData: data inside a <port> is the port's. Before, it was
// credited to the node: a port's label renamed the node.
func TestGraphMLPortData(t *testing.T) {
	g := decodeGML(t, gmlHead+`<key id="l" for="node" attr.name="label"/><key id="pl" for="port" attr.name="label"/>
<graph><node id="a"><data key="l">core1</data><port name="1"><data key="pl">uplink</data></port></node><node id="b"/>
<edge source="a" target="b" sourceport="1"/></graph></graphml>`)
	if _, ok := g.Lookup("core1"); !ok {
		t.Errorf("node a is not core1: %q", g.Node(0).Name)
	}
}

// TestGraphMLPortNames: a port's name is an identifier (the primer's
// North and South); names that are not distinct numbers are numbered per
// node in natural order. Before, North was refused ("has no port number")
// and ge-0/0/1 and xe-1/0/1 both became port 1 ("port already
// connected").
func TestGraphMLPortNames(t *testing.T) {
	g := decodeGML(t, gmlHead+`<graph edgedefault="undirected">
<node id="a"><port name="xe-1/0/1"/><port name="ge-0/0/1"/></node><node id="b"><port name="North"/><port name="South"/></node><node id="c"/>
<edge source="a" target="b" sourceport="ge-0/0/1" targetport="South"/><edge source="a" target="c" sourceport="xe-1/0/1"/></graph></graphml>`)
	for _, c := range []struct {
		node, peer string
		want       Port
	}{{"a", "b", 1}, {"a", "c", 2}, {"b", "a", 2}, {"c", "a", 1}} {
		if p := portOf(t, g, c.node, c.peer); p != c.want {
			t.Errorf("%s towards %s: port %d, want %d", c.node, c.peer, p, c.want)
		}
	}
}

// TestGraphMLEncodings: XML processors must read UTF-16; ISO-8859-1,
// windows-1252 and US-ASCII are read too; anything else is refused in
// words, not Go's. Before, UTF-16 failed as "invalid UTF-8" and a declared
// iso-8859-1 as "Decoder.CharsetReader is nil".
func TestGraphMLEncodings(t *testing.T) {
	doc := func(enc, label string) string {
		return `<?xml version="1.0" encoding="` + enc + `"?>` + "\n" + gmlHead + `<key id="l" for="node" attr.name="label"/>` + "\n" +
			`<graph><node id="a"><data key="l">` + label + `</data></node><node id="b"/><edge source="a" target="b"/></graph></graphml>`
	}
	utf16Bytes := func(s string, big bool, bom bool) []byte {
		u := utf16.Encode([]rune(s))
		if bom {
			u = append([]uint16{0xFEFF}, u...)
		}
		b := make([]byte, 2*len(u))
		for i, c := range u {
			if big {
				binary.BigEndian.PutUint16(b[2*i:], c)
			} else {
				binary.LittleEndian.PutUint16(b[2*i:], c)
			}
		}
		return b
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"utf-16le bom", utf16Bytes(doc("UTF-16", "Zürich"), false, true), "Zürich"},
		{"utf-16be bom", utf16Bytes(doc("UTF-16", "Zürich"), true, true), "Zürich"},
		{"utf-16le no bom", utf16Bytes(doc("UTF-16", "Zürich"), false, false), "Zürich"},
		{"latin-1", []byte(doc("iso-8859-1", "Z\xfcrich")), "Zürich"},
		{"windows-1252", []byte(doc("windows-1252", "\x80uro")), "€uro"},
		{"ascii", []byte(doc("US-ASCII", "Zurich")), "Zurich"},
	} {
		g, err := Decode(c.data, "e.graphml", LoadOptions{})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if _, ok := g.Lookup(c.want); !ok {
			t.Errorf("%s: no node %q (%q)", c.name, c.want, g.Node(0).Name)
		}
	}
	decodeErrors(t, []struct{ file, data, want string }{
		{"e.graphml", doc("EBCDIC", "x"), `topo: e.graphml:1: xml: syntax error: unsupported encoding "EBCDIC" (GraphML files are read in UTF-8, UTF-16, ISO-8859-1, windows-1252 or US-ASCII)`},
		{"e.graphml", "\xff\xfe<\x00g", "topo: e.graphml:1: xml: syntax error: UTF-16 document with an odd number of bytes"},
	})
}

// TestGraphMLDirected: a directed graph that lists each duplex link in
// both directions (networkx's to_directed of a Zoo graph) gives one link
// per pair; a reverse edge with other data, a lone directed edge and an
// undirected pair stay links of their own. Before, every link was doubled:
// twice the ports and twice the capacity.
func TestGraphMLDirected(t *testing.T) {
	g := decodeGML(t, gmlHead+`<key id="s" for="edge" attr.name="LinkSpeedRaw"/>
<graph edgedefault="directed"><node id="a"/><node id="b"/><node id="c"/><node id="d"/>
<edge source="a" target="b"/><edge source="b" target="a"/>
<edge source="b" target="c"><data key="s">1e9</data></edge><edge source="c" target="b"><data key="s">1e10</data></edge>
<edge source="c" target="d"/>
<edge source="a" target="d" directed="false"/><edge source="d" target="a" directed="false"/>
</graph></graphml>`)
	if n := g.NumLinks(); n != 6 {
		t.Errorf("%d links, want 6: a-b once, b-c twice (other rates), c-d, a-d twice (undirected)", n)
	}
}

// TestGraphMLZooSpeedUnits: without LinkSpeedRaw, LinkSpeed and
// LinkSpeedUnits give the rate (55 edges of the Zoo's Garr files have
// only those). Before, such links came out at 1 Gb/s.
func TestGraphMLZooSpeedUnits(t *testing.T) {
	g := decodeGML(t, gmlHead+`<key id="s" for="edge" attr.name="LinkSpeed"/><key id="u" for="edge" attr.name="LinkSpeedUnits"/><key id="r" for="edge" attr.name="LinkSpeedRaw"/>
<graph><node id="a"/><node id="b"/><node id="c"/><node id="d"/>
<edge source="a" target="b"><data key="s">155</data><data key="u">M</data></edge>
<edge source="b" target="c"><data key="s">2.5</data><data key="u">G</data><data key="r">1000000000</data></edge>
<edge source="c" target="d"><data key="s">0.02</data><data key="u">k</data></edge></graph></graphml>`)
	for i, want := range []int64{155_000_000, 1_000_000_000, 20} {
		if r := g.Link(LinkID(i)).Rate; r != want {
			t.Errorf("link %d: rate %d, want %d", i, r, want)
		}
	}
	decodeErrors(t, []struct{ file, data, want string }{
		{"z.graphml", gmlHead + `<key id="s" for="edge" attr.name="LinkSpeed"/><key id="u" for="edge" attr.name="LinkSpeedUnits"/><graph><node id="a"/><node id="b"/>` + "\n" + `<edge source="a" target="b"><data key="s">10</data><data key="u">Gbps</data></edge></graph></graphml>`,
			`topo: z.graphml:2: edge[0].LinkSpeed: bad value: "10" "Gbps" is not a rate (want a number and LinkSpeedUnits K, M, G or T)`},
	})
}

// TestGraphMLNames: a node without a label is named by its name data
// (igraph) or its yEd NodeLabel; the graph by its Network, label or name
// data before its id (yEd and igraph write the placeholder id "G").
// Before, yEd's Zoo sources came out as graph "G" with nodes n0, n1, ...
func TestGraphMLNames(t *testing.T) {
	g := decodeGML(t, `<graphml xmlns="http://graphml.graphdrawing.org/xmlns" xmlns:y="http://www.yworks.com/xml/graphml">
<key id="g" for="node" yfiles.type="nodegraphics"/><key id="nm" for="node" attr.name="name"/><key id="net" for="graph" attr.name="Network"/>
<graph id="G" edgedefault="undirected"><data key="net">Abilene</data>
<node id="n0"><data key="g"><y:ShapeNode><y:Geometry x="1" y="2"/><y:NodeLabel>  </y:NodeLabel><y:NodeLabel>Seattle</y:NodeLabel></y:ShapeNode></data></node>
<node id="n1"><data key="g"><y:ShapeNode><y:NodeLabel>Denver</y:NodeLabel></y:ShapeNode></data></node>
<node id="n2"><data key="nm">Chicago</data></node>
<edge source="n0" target="n1"/><edge source="n1" target="n2"/></graph></graphml>`)
	var names []string
	for i := range g.NumNodes() {
		names = append(names, g.Node(NodeID(i)).Name)
	}
	if got := strings.Join(names, " "); got != "Seattle Denver Chicago" || g.Name != "Abilene" {
		t.Errorf("nodes %q, graph %q; want Seattle Denver Chicago in Abilene", got, g.Name)
	}
}
