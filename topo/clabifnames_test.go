package topo

import (
	"bytes"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// clabBadIfnames returns the first interface of a written containerlab
// file that a linux container could not have (not a Linux interface name,
// or eth0, the management interface), or "".
func clabBadIfnames(t testing.TB, data []byte) string {
	t.Helper()
	var lab struct {
		Topology struct {
			Links []struct {
				Endpoints []string `yaml:"endpoints"`
			} `yaml:"links"`
		} `yaml:"topology"`
	}
	if err := yaml.Unmarshal(data, &lab); err != nil {
		t.Fatalf("written lab is not YAML: %v", err)
	}
	for _, l := range lab.Topology.Links {
		for _, e := range l.Endpoints {
			i := strings.LastIndexByte(e, ':')
			if i < 0 {
				return e
			}
			if ifc := e[i+1:]; !linuxIfName(ifc) || ifc == "eth0" {
				return ifc
			}
		}
	}
	return ""
}

// TestClabExportLinuxIfnames: the export writes linux containers, so every
// interface must be a name Linux takes; a node whose port names are not
// (a vendor's GigabitEthernet0/0/1, a name of 16 bytes, eth0, names the
// loader would number to other ports) gets eth<port> and its names in the
// label edgefabric.port-names, which the loader reads back. The names were
// written as interfaces, and containerlab could not create them.
func TestClabExportLinuxIfnames(t *testing.T) {
	b := NewBuilder("v")
	s := b.AddNode("s", Switch)
	r := b.AddNode("r", Switch)
	h := b.AddNode("h", Host)
	k := b.AddNode("k", Host)
	b.Connect(s, r)
	b.Connect(s, h)
	b.Connect(r, k)
	b.NamePort(End{s, 1}, "GigabitEthernet0/0/1")
	b.NamePort(End{s, 2}, "e 2")
	b.NamePort(End{s, 5}, "unused-but-named") // uncabled: declares port 5
	b.NamePort(End{r, 1}, "eth0")
	b.NamePort(End{r, 2}, "abcdefghijklmnop2") // 17 bytes
	b.NamePort(End{h, 1}, "e1-1")              // fine as it is
	b.NamePort(End{k, 1}, "eth7")              // would read back as port 7
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteClab(&buf, g); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if bad := clabBadIfnames(t, buf.Bytes()); bad != "" {
		t.Fatalf("interface %q:\n%s", bad, out)
	}
	for _, want := range []string{"[s:eth1, r:eth1]", "[s:eth2, h:e1-1]", "[r:eth2, k:eth1]", `edgefabric.port-names: "\x7b\"1\":\"eth7\"}"`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in\n%s", want, out)
		}
	}
	back, err := Decode(buf.Bytes(), "v.clab.yml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := diffGraph(g, back); d != "" {
		t.Fatal(d)
	}
	if d := diffPortNames(g, back); d != "" {
		t.Fatal(d)
	}
	if back.PortName(h, 1) != "e1-1" || back.PortName(s, 5) != "unused-but-named" || back.PortName(r, 2) != "abcdefghijklmnop2" {
		t.Fatalf("names read back: %q %q %q", back.PortName(h, 1), back.PortName(s, 5), back.PortName(r, 2))
	}
}

// TestClabPortNamesLabelErrors: a bad edgefabric.port-names label is an
// error at its line, naming the field.
func TestClabPortNamesLabelErrors(t *testing.T) {
	for _, c := range []struct{ label, want string }{
		{`'not json'`, "not a JSON object"},
		{`'["a"]'`, "not a JSON object"},
		{`'{"0": "a"}'`, `port "0" is not a number`},
		{`'{"01": "a"}'`, `port "01" is not a number`},
		{`'{"65536": "a"}'`, `port "65536" is not a number`},
		{`'{"1": 5}'`, "the name is not a string"},
		{`'{"1": "a", "1": "b"}'`, "port 1 named twice"},
		{`'{"1": "a", "2": "a"}'`, `ports 1 and 2 both named "a"`},
		{`'{"1": ""}'`, "empty"},
		{`'{"1": "a"} x'`, "text after the object"},
		{`'{"1": "a"'`, "not a JSON object"},
	} {
		lab := "name: x\ntopology:\n  nodes:\n    s:\n      kind: linux\n      labels:\n        edgefabric.port-names: " + c.label + "\n    h: {kind: linux}\n  links:\n    - endpoints: [s:eth1, h:eth1]\n"
		_, err := Decode([]byte(lab), "l.clab.yml", LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "l.clab.yml:7") || !strings.Contains(err.Error(), "edgefabric.port-names") {
			t.Errorf("%s: %v, want line 7 and %q", c.label, err, c.want)
		}
	}
	// in a kind's labels it would name every node's ports alike
	lab := "name: x\ntopology:\n  kinds:\n    linux:\n      labels: {edgefabric.port-names: '{\"1\": \"a\"}'}\n  nodes: {n: {kind: linux}}\n"
	if _, err := Decode([]byte(lab), "l.clab.yml", LoadOptions{}); err == nil || !strings.Contains(err.Error(), "names one node's ports") {
		t.Errorf("shared port-names label: %v", err)
	}
}

// TestClabExportUncabledPortName: a node whose cabled ports have names
// Linux takes, and a name on a port without a link, keeps that name: it
// has no interface to carry it, so the node's names go in the label. They
// were written as the interfaces and the uncabled port's name was lost;
// a file the loader takes ({"1": "e1", "2": "e2"} on a node with one link)
// did not read back as itself.
func TestClabExportUncabledPortName(t *testing.T) {
	b := NewBuilder("v")
	s := b.AddNode("s", Switch)
	h := b.AddNode("h", Host)
	b.Connect(s, h)
	b.NamePort(End{s, 1}, "e1")
	b.NamePort(End{s, 2}, "e2")
	b.NamePort(End{h, 1}, "e1-1") // cabled, a Linux name: stays the interface
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteClab(&buf, g); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "[s:eth1, h:e1-1]") {
		t.Errorf("interfaces:\n%s", buf.String())
	}
	back, err := Decode(buf.Bytes(), "v.clab.yml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := diffPortNames(g, back); d != "" {
		t.Fatalf("%s\n%s", d, buf.String())
	}
	lab := "name: x\ntopology:\n  nodes:\n    s:\n      kind: linux\n      labels:\n        edgefabric.port-names: '{\"1\": \"e1\", \"2\": \"e2\"}'\n    h: {kind: linux}\n  links:\n    - endpoints: [s:eth1, h:eth1]\n"
	g, err = Decode([]byte(lab), "l.clab.yml", LoadOptions{})
	checkLoaded(t, g, err, FormatClab)
}
