package topo

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// namedLab loads a containerlab file whose interfaces name its ports.
func namedLab(t *testing.T) *Graph {
	t.Helper()
	lab := "name: x\ntopology:\n  nodes:\n    leaf1: {kind: nokia_srlinux}\n    spine1: {kind: arista_ceos}\n    h1: {kind: linux, labels: {edgefabric.kind: host}}\n" +
		"  links:\n    - endpoints: [\"leaf1:e1-49\", \"spine1:Ethernet1/1\"]\n    - endpoints: [\"leaf1:e1-1\", \"h1:eth1\"]\n"
	g, err := Decode([]byte(lab), "x.clab.yml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestPortNamesClab: a containerlab file's interface names are the ports'
// names, and writing the graph back keeps them as interfaces.
func TestPortNamesClab(t *testing.T) {
	g := namedLab(t)
	if !g.HasPortNames() {
		t.Fatal("no port names")
	}
	for _, c := range []struct {
		node string
		port Port
		name string
	}{{"leaf1", 49, "e1-49"}, {"leaf1", 1, "e1-1"}, {"leaf1", 2, ""}, {"spine1", 1, "Ethernet1/1"}, {"h1", 1, "eth1"}, {"h1", 9, ""}} {
		n, _ := g.Lookup(c.node)
		if got := g.PortName(n, c.port); got != c.name {
			t.Errorf("%s port %d: %q, want %q", c.node, c.port, got, c.name)
		}
	}
	var buf bytes.Buffer
	if err := WriteClab(&buf, g); err != nil {
		t.Fatal(err)
	}
	// e1-49 is a name Linux takes, so it stays the interface; a linux
	// container cannot have an interface called Ethernet1/1 ('/'), so
	// spine1's port 1 is eth1 and its name goes in a label
	if !strings.Contains(buf.String(), "endpoints: [leaf1:e1-49, spine1:eth1]") ||
		!strings.Contains(buf.String(), `edgefabric.port-names: "\x7b\"1\":\"Ethernet1/1\"}"`) {
		t.Errorf("interfaces not kept:\n%s", buf.String())
	}
	back, err := Decode(buf.Bytes(), "y.clab.yml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := diffGraph(g, back); d != "" {
		t.Fatal(d)
	}
	if d := diffPortNames(g, back); d != "" {
		t.Fatal(d)
	}
	// GraphML keeps them too, as port data, and hands them on
	var gm bytes.Buffer
	if err := WriteGraphML(&gm, g); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(gm.String(), `<port name="1"><data key="pname">Ethernet1/1</data></port>`) {
		t.Errorf("GraphML port data missing:\n%s", gm.String())
	}
	viaGML, err := Decode(gm.Bytes(), "y.graphml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := diffPortNames(g, viaGML); d != "" {
		t.Fatal(d)
	}
}

// TestPortNamesNative: the native YAML and JSON formats keep port names
// (port_names per node, in port order), including names that need
// quoting and a named port with no link, and read them back.
func TestPortNamesNative(t *testing.T) {
	g := namedLab(t)
	b := NewBuilder("q")
	s := b.AddNode("s", Switch)
	h := b.AddNode("h", Host)
	b.Connect(s, h)
	b.NamePort(End{s, 1}, "ge 0/0: true")
	b.NamePort(End{s, 3}, "yes") // unconnected, and a YAML boolean unquoted
	quoted, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []*Graph{g, quoted} {
		for _, w := range []struct {
			file  string
			write func(*bytes.Buffer, *Graph) error
		}{
			{"n.yaml", func(b *bytes.Buffer, g *Graph) error { return WriteYAML(b, g) }},
			{"n.json", func(b *bytes.Buffer, g *Graph) error { return WriteJSON(b, g) }},
		} {
			var buf bytes.Buffer
			if err := w.write(&buf, src); err != nil {
				t.Fatal(err)
			}
			back, err := Decode(buf.Bytes(), w.file, LoadOptions{})
			if err != nil {
				t.Fatalf("%s: %v\n%s", w.file, err, buf.String())
			}
			if d := diffGraph(src, back); d != "" {
				t.Fatalf("%s: %s\n%s", w.file, d, buf.String())
			}
			if d := diffPortNames(src, back); d != "" {
				t.Fatalf("%s: %s\n%s", w.file, d, buf.String())
			}
		}
	}
	var buf bytes.Buffer
	if err := WriteYAML(&buf, g); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "{name: leaf1, kind: switch, port_names: {1: e1-1, 49: e1-49}}") {
		t.Errorf("YAML:\n%s", buf.String())
	}
}

// TestPortNamesMaxPorts: writing port names of a node with 65,535 ports
// ends (a uint16 loop counter wrapped at the last port and never did).
func TestPortNamesMaxPorts(t *testing.T) {
	doc := "nodes:\n  - {name: s1, ports: 65535}\n  - {name: h1, kind: host, port_names: {1: eth0}}\nlinks:\n  - [s1, h1]\n"
	g, err := Decode([]byte(doc), "m.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() {
		var y, j bytes.Buffer
		done <- WriteYAML(&y, g)
		done <- WriteJSON(&j, g)
	}()
	for range 2 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("writing a 65,535-port node's names does not end")
		}
	}
}

// TestPortNamesNativeErrors: a bad port_names entry is an error at its
// line and field.
func TestPortNamesNativeErrors(t *testing.T) {
	for _, c := range []struct{ names, want string }{
		{"{0: x}", `a.yaml:3: nodes[0].port_names.0: bad port number: port "0": want a port number 1..65535`},
		{"{p: x}", `a.yaml:3: nodes[0].port_names.p: bad port number: port "p"`},
		{"{70000: x}", `nodes[0].port_names.70000: bad port number`},
		{"{1: \"\"}", "nodes[0].port_names.1: s1 port 1: name: bad value: empty, control character or invalid UTF-8"},
		{"{1: \"a\\tb\"}", "nodes[0].port_names.1: s1 port 1: name: bad value"},
		{"{1: x, 2: x}", `a.yaml:3: nodes[0].port_names.2: bad value: "x" names port 1 too`},
		{"{1: x, 01: y}", `nodes[0].port_names.01: s1 port 1: bad value: named "x" and "y"`},
		{"[x]", "nodes[0].port_names: syntax error: want a mapping, got a list"},
		{"{1: [x]}", "nodes[0].port_names.1: syntax error: want a single value, got a list"},
		{"{1: x, 5: y}, ports: 2", "nodes[0].port_names.5: bad port number: port 5, but the node declares 2 ports"},
	} {
		doc := "name: t\nnodes:\n  - {name: s1, port_names: " + c.names + "}\n  - {name: h1, kind: host}\nlinks:\n  - [s1:1, h1:1]\n"
		_, err := Decode([]byte(doc), "a.yaml", LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.names, err, c.want)
		}
	}
}

// TestPortNamesGraphML: declared port names are kept (the ones that are
// just the port's number are not names), and a host added to a Zoo
// switch takes a port nobody named.
func TestPortNamesGraphML(t *testing.T) {
	doc := `<graphml><graph><node id="a"><port name="North"/><port name="South"/></node><node id="b"><port name="2"/></node>` +
		`<edge source="a" target="b" sourceport="South" targetport="2"/></graph></graphml>`
	g, err := Decode([]byte(doc), "z.graphml", LoadOptions{ZooHosts: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := g.Lookup("a")
	b, _ := g.Lookup("b")
	if g.PortName(a, 1) != "North" || g.PortName(a, 2) != "South" || g.PortName(b, 2) != "" {
		t.Errorf("names: a %q %q, b %q", g.PortName(a, 1), g.PortName(a, 2), g.PortName(b, 2))
	}
	// North is declared but unconnected: the host goes to port 3
	if _, ok := g.PortLink(a, 1); ok {
		t.Error("a host took the named port North")
	}
	if peer, ok := g.Peer(a, 3); !ok || g.Node(peer.Node).Kind != Host {
		t.Errorf("a port 3: %v %v", peer, ok)
	}
	// b's free port 1 was not named: its host takes it
	if peer, ok := g.Peer(b, 1); !ok || g.Node(peer.Node).Kind != Host {
		t.Errorf("b port 1: %v %v", peer, ok)
	}
}

// TestPortNamesNotWritable: names the loader would number otherwise
// (port 1 called eth7) are written as numbers, so the graph reads back
// with the same ports.
func TestPortNamesNotWritable(t *testing.T) {
	b := NewBuilder("w")
	s := b.AddNode("s", Switch)
	h := b.AddNode("h", Host)
	b.Connect(s, h)
	b.NamePort(End{s, 1}, "eth7")
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteClab(&buf, g); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "[s:eth1, h:eth1]") {
		t.Errorf("want numbered interfaces:\n%s", buf.String())
	}
	back, err := Decode(buf.Bytes(), "w.clab.yml", LoadOptions{})
	if err != nil || diffGraph(g, back) != "" {
		t.Fatalf("%v %s", err, diffGraph(g, back))
	}
}

// TestNamePortErrors: bad names are errors, not silently kept.
func TestNamePortErrors(t *testing.T) {
	for _, c := range []struct {
		what string
		name func(b *Builder, s, h NodeID)
		want string
	}{
		{"empty", func(b *Builder, s, h NodeID) { b.NamePort(End{s, 1}, "") }, "empty"},
		{"control", func(b *Builder, s, h NodeID) { b.NamePort(End{s, 1}, "e\n1") }, "control character"},
		{"port 0", func(b *Builder, s, h NodeID) { b.NamePort(End{s, 0}, "e0") }, "bad port number"},
		{"unknown node", func(b *Builder, s, h NodeID) { b.NamePort(End{7, 1}, "e1") }, "unknown node"},
		{"renamed", func(b *Builder, s, h NodeID) { b.NamePort(End{s, 1}, "a"); b.NamePort(End{s, 1}, "b") }, `named "a" and "b"`},
		{"twice on a node", func(b *Builder, s, h NodeID) { b.NamePort(End{s, 3}, "x"); b.NamePort(End{s, 1}, "x") }, `s ports 1 and 3: bad value: both named "x"`},
	} {
		b := NewBuilder("e")
		s := b.AddNode("s", Switch)
		h := b.AddNode("h", Host)
		b.Connect(s, h)
		c.name(b, s, h)
		_, err := b.Graph()
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrBadValue) && !errors.Is(err, ErrBadPort) && !errors.Is(err, ErrUnknownNode) {
			t.Errorf("%s: %v, want %q", c.what, err, c.want)
		}
	}
	// the same name on two nodes is fine, and naming a port above the
	// links declares it
	b := NewBuilder("ok")
	s := b.AddNode("s", Switch)
	h := b.AddNode("h", Host)
	b.Connect(s, h)
	b.NamePort(End{s, 1}, "eth1")
	b.NamePort(End{h, 1}, "eth1")
	b.NamePort(End{s, 4}, "eth4")
	g, err := b.Graph()
	if err != nil || g.Node(s).Ports != 4 || g.PortName(s, 4) != "eth4" {
		t.Fatalf("%v, ports %d", err, g.Node(s).Ports)
	}
	// a file's bad name is an error at its node
	_, err = Decode([]byte("<graphml><graph><node id=\"a\"><port name=\"x&#9;y\"/></node></graph></graphml>"), "t.graphml", LoadOptions{ZooHosts: 1})
	if err == nil || !strings.Contains(err.Error(), "t.graphml:1: node \"a\"") {
		t.Errorf("tab in a port name: %v", err)
	}
}
