package topo

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The loaders' fuzz targets: any input yields a graph or a one-line error,
// never a panic; a graph that loads writes out and reads back identically.
// Seed corpora live in testdata/fuzz/<Target>/ and the golden files.

// checkLoaded verifies a decoded graph round-trips through its own format
// and through the native one.
func checkLoaded(t *testing.T, g *Graph, err error, f Format) {
	if err != nil {
		if strings.ContainsAny(err.Error(), "\n\r") {
			t.Fatalf("multi-line error: %q", err)
		}
		var pe *posError
		if !errors.As(err, &pe) && !errors.Is(err, ErrBadValue) {
			t.Fatalf("error without position: %v", err)
		}
		return
	}
	for _, out := range []Format{f, FormatYAML} {
		var buf bytes.Buffer
		if err := Export(&buf, g, out); err != nil {
			t.Fatal(err)
		}
		if out == FormatClab {
			if bad := clabBadIfnames(t, buf.Bytes()); bad != "" {
				t.Fatalf("clab export names an interface %q, which Linux refuses:\n%s", bad, buf.String())
			}
		}
		back, err := Decode(buf.Bytes(), "rt", LoadOptions{Format: out})
		if err != nil {
			t.Fatalf("written %v does not read back: %v\n%s", out, err, buf.String())
		}
		if d := diffGraph(g, back); d != "" {
			t.Fatalf("%v round trip: %s\n%s", out, d, buf.String())
		}
		if out == FormatYAML || out == FormatJSON || out == f && (f == FormatClab || f == FormatGraphML) {
			// the interface names a file gave survive writing it again
			// (as port_names in the native formats)
			if d := diffPortNames(g, back); d != "" {
				t.Fatalf("%v round trip: %s\n%s", out, d, buf.String())
			}
		}
	}
}

func addGolden(f *testing.F, ext string) {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*"+ext))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

func FuzzNative(f *testing.F) {
	addGolden(f, ".yaml")
	addGolden(f, ".json")
	if b, err := os.ReadFile("testdata/example.yaml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("nodes:\n  - {name: a}\n  - {name: b, kind: host}\nlinks:\n  - [a, b]\n"))
	f.Add([]byte("nodes: &x [{name: a}]\nlinks: *x\n"))
	f.Add([]byte("nodes:\n  - {name: a, ports: 4, port_names: {1: Ethernet1, 4: \"x y\"}}\n  - {name: b, kind: host, port_names: {1: eth0}}\nlinks:\n  - [a:1, b]\n"))
	f.Add([]byte("nodes:\n  - {name: a, port_names: &p {1: e1, 3: e3}}\n  - {name: b, port_names: *p}\n  - {name: c, ports: 3, port_names: {<<: *p, 2: e2}}\nlinks:\n  - [a, b]\n  - [b, c]\n"))
	// JSON's escapes that YAML parsers lack: \/ and a surrogate pair
	f.Add([]byte(`{"nodes": [{"name": "a\/b\ud83d\ude00"}, {"name": "h", "kind": "host"}], "links": [["a\/b\ud83d\ude00", "h"]]}`))
	// names ending in ':' (written plain, "name: t:" read back as a key)
	f.Add([]byte("name: \"t:\"\nnodes:\n  - {name: \"x:\", role: \"r:\", port_names: {1: \"e:\"}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		g, err := Decode(data, "fuzz.yaml", LoadOptions{Format: FormatYAML})
		checkLoaded(t, g, err, FormatYAML)
	})
}

func FuzzClab(f *testing.F) {
	addGolden(f, ".clab.yml")
	f.Add([]byte("name: x\ntopology:\n  nodes:\n    a: {kind: srl}\n    b: {kind: linux}\n  links:\n    - endpoints: [\"a:e1-1\", \"b:eth1\"]\n"))
	f.Add([]byte("name: x\ntopology:\n  nodes:\n    a:\n  links:\n    - type: veth\n      endpoints: [{node: a, interface: eth1}, {node: a, interface: eth2}]\n"))
	// groups, defaults' labels, a merge key, environment references,
	// hierarchical interface names numbered in natural order, veth-stitch
	f.Add([]byte("name: x\ntopology:\n  defaults: {labels: {role: leaf}}\n  groups: {g: {kind: linux}}\n  nodes:\n    a: &a {kind: nokia_srsim}\n    b: {<<: *a, group: g}\n    ${EF_FUZZ:=c}: {group: g}\n  links:\n    - endpoints: [\"a:1/1/c1/1\", \"b:1/1/c1/1\"]\n    - endpoints: [\"a:1/1/c2/1\", \"c:net0\"]\n    - type: veth-stitch\n      endpoints: [{node: b, interface: Gi0-0-0-0}, {node: c, interface: eth2}]\n"))
	// labels and vars that aliases repeat (read once, kept for all)
	f.Add([]byte("name: x\ntopology:\n  kinds: {linux: {labels: &l {role: leaf, x: y}}}\n  nodes:\n    a: {labels: *l}\n    b: &b {kind: linux, labels: {edgefabric.kind: host}}\n    c: *b\n  links:\n    - {endpoints: [\"a:e1\", \"b:e1\"], vars: &v {rate: 10G, x: 1}}\n    - {endpoints: [\"a:e2\", \"c:e1\"], vars: *v}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		g, err := Decode(data, "fuzz.clab.yml", LoadOptions{Format: FormatClab})
		checkLoaded(t, g, err, FormatClab)
	})
}

func FuzzGraphML(f *testing.F) {
	addGolden(f, ".graphml")
	f.Add([]byte(zoo))
	f.Add([]byte(`<graphml><graph><node id="a"/><node id="b"/><edge source="a" target="b" sourceport="p3"/></graph></graphml>`))
	// keys' defaults, named ports, port data, a yEd label, a reciprocal
	// directed pair, LinkSpeed units; the same in UTF-16 and Latin-1
	rich := `<graphml xmlns:y="y"><key id="s" for="edge" attr.name="LinkSpeed"><default>10</default></key><key id="u" for="edge" attr.name="LinkSpeedUnits"><default>G</default></key><key id="g" for="node" yfiles.type="nodegraphics"/><key id="l" for="port" attr.name="label"/>` +
		`<graph edgedefault="directed"><node id="a"><port name="North"><data key="l">x</data></port><port name="South"/></node><node id="b"><data key="g"><y:NodeLabel>B</y:NodeLabel></data></node>` +
		`<edge source="a" target="b" sourceport="South"/><edge source="b" target="a" targetport="South"/></graph></graphml>`
	f.Add([]byte(rich))
	f.Add([]byte(`<?xml version="1.0" encoding="iso-8859-1"?>` + rich))
	u := []byte{0xFF, 0xFE}
	for _, c := range rich {
		u = append(u, byte(c), 0)
	}
	f.Add(u)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		g, err := Decode(data, "fuzz.graphml", LoadOptions{Format: FormatGraphML, ZooHosts: 1})
		if err == nil && g.NumNodes() > 0 {
			// Zoo graphs gain hosts, so compare the re-read of our own
			// dialect instead of the input.
			checkLoaded(t, g, nil, FormatGraphML)
			return
		}
		checkLoaded(t, g, err, FormatGraphML)
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"fattree:4", "leafspine:2,5,5", "hyperx:3", "hyperx:2,1", "bcube:4,2", "ciscodc:2,2,1", "cube:2,2,2,1", "torus:3,3,3,0", "jellyfish:10,5,3", "line:3", "ring:3", "spain-fig2", "spain-testbed", "dumbnet-fig1", "dumbnet-testbed", "fattree:x", "bcube:1,2", "bcube:1,9000000000000000000", "fattree:99999999999999999999", "ring:-99999999999999999999", ""} {
		f.Add(s, uint64(1))
	}
	f.Fuzz(func(t *testing.T, spec string, seed uint64) {
		// a smaller size limit keeps each run fast; the full limits are
		// the same code path with larger numbers
		g, err := parse(spec, seed, 5000, 20000)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") || !strings.HasPrefix(err.Error(), "topo: spec ") {
				t.Fatalf("bad error: %q", err)
			}
			return
		}
		if !g.Connected() && g.NumNodes() > 0 {
			t.Fatalf("%q: not connected", spec)
		}
		// The same spec and seed build the same graph (a scenario names
		// its topology by spec and must get it back on every run), and a
		// small one writes out and reads back unchanged.
		again, err := parse(spec, seed, 5000, 20000)
		if err != nil || diffGraph(g, again) != "" {
			t.Fatalf("%q seed %d: second parse differs: %v", spec, seed, err)
		}
		if g.NumNodes() <= 300 {
			checkLoaded(t, g, nil, FormatYAML)
		}
	})
}

// FuzzParseFormat: a format name (--format, a scenario's format) is one
// of the formats in any case, which its String reads back as, or an
// ErrBadValue error on one line.
func FuzzParseFormat(f *testing.F) {
	seeds := []string{"YAML", "GraphML", "yml", "clab.yml", "", " json", "jſon", "format(9)"}
	for _, s := range append(seeds, formatNames...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		format, err := ParseFormat(s)
		if err != nil {
			if format != FormatInvalid || !errors.Is(err, ErrBadValue) || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("ParseFormat(%q) = %v, bad error %q", s, format, err)
			}
			return
		}
		if format == FormatInvalid || int(format) >= len(formatNames) || !strings.EqualFold(s, format.String()) {
			t.Fatalf("ParseFormat(%q) = %v", s, format)
		}
		if back, err := ParseFormat(format.String()); err != nil || back != format {
			t.Fatalf("ParseFormat(%q) = %v, read back as %v, %v", s, format, back, err)
		}
	})
}

// FuzzDecodeDetect: Decode without a format, as Load reads a file, so
// that DetectFormat picks it from the name and the contents (no other
// target reaches detection, nor FormatJSON). Any input yields a graph
// that round-trips in the detected format, or a one-line error.
func FuzzDecodeDetect(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*"))
	for i, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(uint8(i), b)
		}
	}
	for i := range detectNames {
		f.Add(uint8(i), []byte("nodes:\n  - {name: a}\n  - {name: b, kind: host}\nlinks:\n  - [a, b]\n"))
	}
	f.Add(uint8(0), []byte(`{"nodes": [{"name": "a"}, {"name": "b", "kind": "host"}], "links": [["a", "b"]]}`))
	f.Add(uint8(0), []byte("strict digraph x {\n a -> b\n}\n"))
	f.Add(uint8(0), []byte("name: x\ntopology:\n  nodes:\n    a: {kind: srl}\n    b: {kind: linux}\n  links:\n    - endpoints: [\"a:e1-1\", \"b:eth1\"]\n"))
	f.Add(uint8(0), []byte("\ufeff  <graphml><graph><node id=\"a\"/><node id=\"b\"/><edge source=\"a\" target=\"b\"/></graph></graphml>"))
	f.Fuzz(func(t *testing.T, name uint8, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		file := detectNames[int(name)%len(detectNames)]
		format := DetectFormat(file, data)
		if again := DetectFormat(file, data); again != format {
			t.Fatalf("DetectFormat not deterministic: %v then %v", format, again)
		}
		g, err := Decode(data, file, LoadOptions{ZooHosts: 1})
		if format == FormatDOT {
			if !errors.Is(err, ErrExportOnly) {
				t.Fatalf("DOT input read: %v", err)
			}
			return
		}
		checkLoaded(t, g, err, format) // a Zoo graph's hosts are in g: its re-read is compared
	})
}

// detectNames are the file names FuzzDecodeDetect gives Decode: no
// extension (contents decide), and one per extension DetectFormat knows.
var detectNames = []string{"fuzz", "fuzz.yaml", "fuzz.json", "fuzz.clab.yml", "fuzz.graphml", "fuzz.xml", "fuzz.dot", "fuzz.gv"}
