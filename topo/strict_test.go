package topo

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// Inputs a user review found accepted or misreported: impossible Zoo
// coordinates, DOT files fed to the loader, whole files quoted in errors,
// lab names lost in a containerlab round trip, relaying switches, a hosts
// option that changes nothing, and integers too long for an int.

// TestZooCoordinatesRefused: a coordinate that is no number of degrees in
// range is an error at its own line, not a silent fallback to the default
// delay; the ranges' ends are coordinates (TestZooData), absent or empty
// data is none.
func TestZooCoordinatesRefused(t *testing.T) {
	const head = `<graphml><key id="la" for="node" attr.name="Latitude"/><key id="lo" for="node" attr.name="Longitude"/><graph>
<node id="a">
  <data key="la">`
	const tail = `</data>
</node>
<node id="b"><data key="la">0</data><data key="lo">0</data></node>
<edge source="a" target="b"/>
</graph></graphml>`
	for _, c := range []struct{ lat, lon, want string }{
		{"NaN", "999", `topo: z.graphml:3: node "a" Latitude: bad value: "NaN" is not a latitude in degrees (want -90..90)`},
		{"0", "999", `topo: z.graphml:4: node "a" Longitude: bad value: "999" is not a longitude in degrees (want -180..180)`},
		{"+Inf", "0", `topo: z.graphml:3: node "a" Latitude: bad value: "+Inf" is not a latitude in degrees (want -90..90)`},
		{"-90.5", "0", `topo: z.graphml:3: node "a" Latitude: bad value: "-90.5" is not a latitude in degrees (want -90..90)`},
		{"90.01", "0", `topo: z.graphml:3: node "a" Latitude: bad value: "90.01" is not a latitude in degrees (want -90..90)`},
		{"0", "-180.5", `topo: z.graphml:4: node "a" Longitude: bad value: "-180.5" is not a longitude in degrees (want -180..180)`},
		{"0", "-Inf", `topo: z.graphml:4: node "a" Longitude: bad value: "-Inf" is not a longitude in degrees (want -180..180)`},
		{"0", "nan", `topo: z.graphml:4: node "a" Longitude: bad value: "nan" is not a longitude in degrees (want -180..180)`},
		{"north", "0", `topo: z.graphml:3: node "a" Latitude: bad value: "north" is not a latitude in degrees (want -90..90)`},
	} {
		data := head + c.lat + "</data>\n  <data key=\"lo\">" + c.lon + tail
		_, err := Decode([]byte(data), "z.graphml", LoadOptions{ZooHosts: 1})
		if errText(err) != c.want || !errors.Is(err, ErrBadValue) {
			t.Errorf("lat %s lon %s:\n got  %v\n want %s", c.lat, c.lon, err, c.want)
		}
	}
	// An empty value is no coordinate: the default delay, no error.
	g, err := Decode([]byte(head+"</data>\n  <data key=\"lo\">0"+tail), "z.graphml", LoadOptions{ZooHosts: 1})
	if err != nil || g.Link(0).Delay != DefaultDelay {
		t.Errorf("empty latitude: %v", err)
	}
	// Edgefabric's own dialect has no coordinates: such data is not read.
	ef := `<graphml><key id="k" for="node" attr.name="ef.kind"/><key id="la" for="node" attr.name="Latitude"/><graph>
<node id="a"><data key="k">switch</data><data key="la">NaN</data></node></graph></graphml>`
	if _, err := Decode([]byte(ef), "z.graphml", LoadOptions{}); err != nil {
		t.Errorf("ef dialect: %v", err)
	}
}

// TestDOTNotRead: DOT is written, never read. A DOT file is recognized by
// its extension or its first word and refused with a message that says
// so and names the formats that can be read, never as a YAML syntax error
// quoting the whole file.
func TestDOTNotRead(t *testing.T) {
	g, _ := Parse("ring:3", 1)
	var dot bytes.Buffer
	if err := WriteDOT(&dot, g); err != nil {
		t.Fatal(err)
	}
	const want = "export-only format: DOT (Graphviz) can be written but not read; edgefabric reads native YAML or JSON, containerlab (.clab.yml) and GraphML"
	for _, file := range []string{"ring3.dot", "ring3.gv", "ring3.GV", "ring3.yaml", "ring3", "ring3.txt"} {
		_, err := Decode(dot.Bytes(), file, LoadOptions{})
		if errText(err) != "topo: "+file+": "+want || !errors.Is(err, ErrExportOnly) {
			t.Errorf("%s: %v", file, err)
		}
	}
	for data, dotToo := range map[string]bool{
		"graph {}":                            true,
		"digraph G {\n a -> b }":              true,
		"strict digraph \"x y\" { }":          true,
		"  STRICT\tGraph g{}":                 true,
		"\ufeffgraph \"a\\\"b\" {":            true,
		"graph: x\n":                          false, // YAML with a key "graph"
		"graphs {}":                           false,
		"digraph":                             false,
		"nodes: []\n# graph {}\n":             false,
		"strict: true\ngraph {}\n":            false,
		"name: graph\ntopology:\n  nodes: {}": false,
	} {
		if got := DetectFormat("t.yaml", []byte(data)) == FormatDOT; got != dotToo {
			t.Errorf("DetectFormat(%q) is DOT: %v, want %v", data, got, dotToo)
		}
	}
	// Forcing the format gives the same answer.
	if _, err := Decode([]byte("nodes: []"), "x.yaml", LoadOptions{Format: FormatDOT}); !errors.Is(err, ErrExportOnly) {
		t.Errorf("forced DOT: %v", err)
	}
}

// TestErrorQuotesBounded: a file that parses as one long scalar is quoted
// in the error by its first 40 characters and "…", on one line.
func TestErrorQuotesBounded(t *testing.T) {
	long := strings.Repeat("ab", 500) + "\n" + strings.Repeat("c", 500)
	for _, c := range []struct{ file, data, want string }{
		{"x.yaml", `"` + long + `"`, `topo: x.yaml:1: syntax error: want a mapping, got "abababababababababababababababababababab"…`},
		{"x.yaml", "nodes:\n  - {name: s1, kind: " + strings.Repeat("é", 100) + "}\n", `topo: x.yaml:2: nodes[0].kind: bad value: "` + strings.Repeat("é", 40) + `"… (want switch or host)`},
		{"x.yaml", "nodes:\n  - {name: s1}\n  - {name: s2}\nlinks:\n  - {a: s1, b: s2, rate: " + strings.Repeat("9", 60) + "x}\n", `topo: x.yaml:5: links[0].rate: bad value: rate "` + strings.Repeat("9", 40) + `"…: want bits per second like 1G, 10Gbps or 100M`},
		// exactly 40 characters: quoted whole, no "…"
		{"x.yaml", `"` + strings.Repeat("x", 40) + `"`, `topo: x.yaml:1: syntax error: want a mapping, got "` + strings.Repeat("x", 40) + `"`},
	} {
		_, err := Decode([]byte(c.data), c.file, LoadOptions{})
		if errText(err) != c.want {
			t.Errorf("%.30q:\n got  %v\n want %s", c.data, err, c.want)
		}
	}
}

// TestClabNameRoundTrip: a graph name that containerlab's name cannot
// carry is kept in topology.defaults' label edgefabric.name and read back
// exactly; a name it can carry is written once, with no label.
func TestClabNameRoundTrip(t *testing.T) {
	for name, lab := range map[string]string{
		"ring:3":          "ring-3",
		`we"ird: name`:    "we-ird-name",
		"":                "edgefabric",
		"::":              "edgefabric",
		"naïve\tlab <1>&": "na-ve-lab-1",
		"plain_lab-1":     "plain_lab-1",
	} {
		g, err := Parse("ring:3", 1)
		if err != nil {
			t.Fatal(err)
		}
		g.Name = name
		var buf bytes.Buffer
		if err := WriteClab(&buf, g); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if !strings.Contains(out, "\nname: "+lab+"\ntopology:\n") {
			t.Errorf("%q: lab name not %q:\n%s", name, lab, out)
		}
		if hasLabel := strings.Contains(out, "edgefabric.name"); hasLabel != (name != lab) {
			t.Errorf("%q: edgefabric.name label present: %v\n%s", name, hasLabel, out)
		}
		back, err := Decode(buf.Bytes(), "lab.clab.yml", LoadOptions{})
		if err != nil {
			t.Fatalf("%q: %v\n%s", name, err, out)
		}
		want := name
		if want == "" {
			want = "lab.clab" // as in every format: an empty name is the file's
		}
		if back.Name != want || diffGraph(g, back) != "" {
			t.Errorf("%q: read back as %q (%s)", name, back.Name, diffGraph(g, back))
		}
	}
	var buf bytes.Buffer
	g, _ := Parse("ring:3", 1)
	WriteClab(&buf, g)
	if want := "# containerlab topology written by edgefabric from ring:3\nname: ring-3\ntopology:\n  defaults:\n    labels: {edgefabric.name: \"ring:3\"}\n  kinds:\n"; !strings.HasPrefix(buf.String(), want) {
		t.Errorf("got\n%s\nwant prefix\n%s", buf.String(), want)
	}
	// A hand-written lab with the label: the label wins over name.
	g, err := Decode([]byte("name: lab\ntopology:\n  defaults: {kind: linux, labels: {edgefabric.name: \"my lab\"}}\n  nodes: {a: {}}\n"), "x.clab.yml", LoadOptions{})
	if err != nil || g.Name != "my lab" {
		t.Errorf("label: %v, name %q", err, g.Name)
	}
}

// TestRelayOnlyOnHosts: relay means a host forwarding between its NICs;
// on a switch (explicit or by default) it is refused at its own line and
// field in every format. relay: false on a switch says nothing wrong.
func TestRelayOnlyOnHosts(t *testing.T) {
	const why = "bad value: only a host can relay (forward between its NICs, as BCube servers do); this node is a switch"
	const efKeys = `<key id="k" for="node" attr.name="ef.kind"/><key id="r" for="node" attr.name="ef.relay"/>`
	decodeErrors(t, []struct{ file, data, want string }{
		{"a.yaml", "nodes:\n  - {name: h1, kind: host, relay: true}\n  - name: s1\n    kind: switch\n    relay: true\n", "topo: a.yaml:5: nodes[1].relay: " + why},
		{"a.yaml", "nodes:\n  - {name: s1, relay: true}\n", "topo: a.yaml:2: nodes[0].relay: " + why},
		{"a.yaml", "nodes:\n  - {relay: yes, name: s1, kind: switch}\n", "topo: a.yaml:2: nodes[0].relay: bad value: \"yes\" is not true or false"},
		{"a.json", "{\"nodes\": [\n{\"name\": \"s1\",\n \"relay\": true}]}", "topo: a.json:3: nodes[0].relay: " + why},
		{"lab.clab.yml", "name: x\ntopology:\n  nodes:\n    a:\n      kind: srl\n      labels:\n        edgefabric.relay: \"true\"\n", "topo: lab.clab.yml:7: topology.nodes.a.labels.edgefabric.relay: " + why},
		{"lab.clab.yml", "name: x\ntopology:\n  nodes:\n    a: {labels: {edgefabric.kind: switch, edgefabric.relay: \"true\"}}\n", "topo: lab.clab.yml:4: topology.nodes.a.labels.edgefabric.relay: " + why},
		{"z.graphml", "<graphml>" + efKeys + "<graph>\n<node id=\"a\">\n<data key=\"k\">switch</data>\n<data key=\"r\">true</data></node></graph></graphml>", `topo: z.graphml:4: node "a" ef.relay: ` + why},
	})
	for file, data := range map[string]string{
		"a.yaml":       "nodes:\n  - {name: s1, relay: false}\n  - {name: h1, kind: host, relay: true}\n",
		"lab.clab.yml": "name: x\ntopology:\n  nodes:\n    a: {labels: {edgefabric.relay: \"false\"}}\n    b: {labels: {role: host, edgefabric.relay: \"true\"}}\n",
	} {
		if _, err := Decode([]byte(data), file, LoadOptions{}); err != nil {
			t.Errorf("%s: %v", file, err)
		}
	}
}

// TestZooHostsSet: hosts per switch chosen by the caller must take
// effect: a spec, a native or containerlab file, or GraphML in
// edgefabric's dialect is refused with ErrNoEffect; a Zoo graph takes it.
func TestZooHostsSet(t *testing.T) {
	set := LoadOptions{ZooHosts: 2, ZooHostsSet: true}
	const why = "no effect: hosts per switch apply only to GraphML files without edgefabric annotations (Topology Zoo)"
	if _, err := ResolveWith("ring:3", 1, set); errText(err) != `topo: spec "ring:3": `+why+"; a spec places its own hosts" || !errors.Is(err, ErrNoEffect) {
		t.Errorf("spec: %v", err)
	}
	for _, c := range []struct{ file, data, want string }{
		{"a.yaml", "nodes: []\n", "topo: a.yaml: " + why + ", and this is a native YAML file"},
		{"a.json", "{\"nodes\": []}", "topo: a.json: " + why + ", and this is a native JSON file"},
		{"a.clab.yml", "name: x\ntopology:\n  nodes: {}\n", "topo: a.clab.yml: " + why + ", and this is a containerlab file"},
		{"a.graphml", `<graphml><key id="k" for="node" attr.name="ef.kind"/><graph id="g"/></graphml>`, "topo: a.graphml: " + why + ", and this one has them (ef.kind)"},
	} {
		if _, err := Decode([]byte(c.data), c.file, set); errText(err) != c.want || !errors.Is(err, ErrNoEffect) {
			t.Errorf("%s:\n got  %v\n want %s", c.file, err, c.want)
		}
	}
	g, err := Decode([]byte(`<graphml><graph><node id="a"/><node id="b"/><edge source="a" target="b"/></graph></graphml>`), "z.graphml", set)
	if err != nil || len(g.Nodes(Host)) != 4 {
		t.Errorf("zoo: %v", err)
	}
	// Without ZooHostsSet (Load's default) nothing changes.
	if _, err := ResolveWith("ring:3", 1, LoadOptions{ZooHosts: 2}); err != nil {
		t.Errorf("unset: %v", err)
	}
}

// TestPortsOutOfRange: a declared port count too long for an int is out
// of range, with the range, in every format.
func TestPortsOutOfRange(t *testing.T) {
	const big = "99999999999999999999"
	decodeErrors(t, []struct{ file, data, want string }{
		{"a.yaml", "nodes:\n  - {name: s1, ports: " + big + "}\n", "topo: a.yaml:2: nodes[0].ports: bad port number: ports must be 0..65535, got " + big},
		{"a.yaml", "nodes:\n  - {name: s1, ports: -" + big + "}\n", "topo: a.yaml:2: nodes[0].ports: bad port number: ports must be 0..65535, got -" + big},
		{"a.yaml", "nodes:\n  - {name: s1, ports: 65536}\n", "topo: a.yaml:2: nodes[0].ports: bad port number: ports must be 0..65535, got 65536"},
		{"lab.clab.yml", "name: x\ntopology:\n  nodes:\n    a: {labels: {edgefabric.ports: \"" + big + "\"}}\n", "topo: lab.clab.yml:4: topology.nodes.a.labels.edgefabric.ports: bad port number: ports must be 0..65535, got " + big},
		{"z.graphml", `<graphml><key id="k" for="node" attr.name="ef.kind"/><key id="p" for="node" attr.name="ef.ports"/><graph>` + "\n" + `<node id="a"><data key="k">switch</data><data key="p">` + big + `</data></node></graph></graphml>`, `topo: z.graphml:2: node "a" ef.ports: bad port number: ports must be 0..65535, got ` + big},
	})
}
