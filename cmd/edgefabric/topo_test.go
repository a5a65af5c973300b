package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/topo"
)

func topoCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// TestTopoShowTable3 is the acceptance check: topo show --json
// reports SPAIN Table 3's counts with exactly the documented keys.
func TestTopoShowTable3(t *testing.T) {
	for spec, want := range map[string][3]int{
		"fattree:48":  {2880, 55296, 27648},
		"hyperx:16":   {256, 3840, 6144},
		"ciscodc:8,8": {146, 361, 3072},
		"bcube:8,4":   {2048, 16384, 4096},
	} {
		code, out, errOut := topoCLI("topo", "show", spec, "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", spec, code, errOut)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"switches", "hosts", "fabric_links", "host_links", "diameter", "max_degree"} {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: key %q missing", spec, k)
			}
		}
		if int(m["switches"].(float64)) != want[0] || int(m["fabric_links"].(float64)) != want[1] || int(m["hosts"].(float64)) != want[2] {
			t.Errorf("%s: %v", spec, m)
		}
	}
}

func TestTopoShowHuman(t *testing.T) {
	code, out, _ := topoCLI("topo", "show", "fattree:4")
	if code != 0 {
		t.Fatal(code)
	}
	want := `topology:     fattree:4
switches:     20
hosts:        16
fabric links: 32
host links:   16
diameter:     4 switch hops
max degree:   4
bisection:    8 Gb/s (estimate, upper bound)
link rates:   48 x 1 Gb/s
link delays:  1 us
connected:    yes
`
	if out != want {
		t.Errorf("got\n%s", out)
	}
}

func TestTopoExport(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"yaml", "json", "clab", "graphml"} {
		path := filepath.Join(dir, "t."+f)
		if code, _, e := topoCLI("topo", "export", "bcube:4,2", "--format", f, "-o", path); code != 0 {
			t.Fatalf("%s: %s", f, e)
		}
		code, out, e := topoCLI("topo", "show", path, "--json")
		if code != 0 {
			t.Fatalf("%s: %s", f, e)
		}
		if !strings.Contains(out, `"fabric_links": 32`) || !strings.Contains(out, `"hosts": 16`) {
			t.Errorf("%s: %s", f, out)
		}
	}
	code, out, _ := topoCLI("topo", "export", "line:2", "--format", "dot")
	if code != 0 || !strings.HasPrefix(out, `graph "line:2" {`) {
		t.Errorf("dot: %d %s", code, out)
	}
}

// TestTopoBadInput: a broken spec or file gives exit code 2 and one line
// naming the file, line and field.
func TestTopoBadInput(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.yaml")
	os.WriteFile(broken, []byte("nodes:\n  - {name: s1}\nlinks:\n  - [s1:1, s7:1]\n"), 0o644)
	bad := filepath.Join(dir, "bad.graphml")
	os.WriteFile(bad, []byte("<graphml><graph>\n<node id=\"a\">\n</graph>"), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"topo", "show", broken}, "edgefabric: topo: " + broken + ":4: links[0].b: unknown node: \"s7\"\n"},
		{[]string{"topo", "show", bad}, "edgefabric: topo: " + bad + ":3: xml: syntax error: element <node> closed by </graph>\n"},
		{[]string{"topo", "show", "fattree:3"}, "edgefabric: topo: spec \"fattree:3\": p: bad value: must be even and at least 2, got 3\n"},
		{[]string{"topo", "show", "fattree:x", "--json"}, "edgefabric: topo: spec \"fattree:x\": p: bad topology spec: \"x\" is not an integer\n"},
		{[]string{"topo", "show", "bcube:1,2"}, "edgefabric: topo: spec \"bcube:1,2\": p: bad value: switches need at least 2 ports, got 1\n"},
		{[]string{"topo", "show", filepath.Join(dir, "missing.yaml")}, "edgefabric: topo: open " + filepath.Join(dir, "missing.yaml") + ": no such file or directory\n"},
		{[]string{"topo", "show"}, "edgefabric: topo show takes 1 argument, got 0 (usage: edgefabric topo show SPEC|FILE [flags])\n"},
		{[]string{"topo", "export", "ring:3", "--format", "gml"}, "edgefabric: --format: topo: bad value: format \"gml\" (want yaml, json, clab, graphml or dot)\n"},
		{[]string{"topo", "show", "ring:3", "--hosts-per-switch", "-1"}, "edgefabric: --hosts-per-switch must not be negative, got -1\n"},
		{[]string{"topo", "show", "ring:3", "--nosuch"}, "edgefabric: unknown flag: --nosuch (see 'edgefabric topo show --help')\n"},
	}
	for _, c := range cases {
		code, out, errOut := topoCLI(c.args...)
		if code != 2 || out != "" || errOut != c.want {
			t.Errorf("%v: exit %d, stdout %q, stderr\n got  %q\n want %q", c.args, code, out, errOut, c.want)
		}
	}
}

func TestTopoZooHosts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "zoo.graphml")
	os.WriteFile(path, []byte(`<graphml><graph><node id="a"/><node id="b"/><edge source="a" target="b"/></graph></graphml>`), 0o644)
	code, out, e := topoCLI("topo", "show", path, "--json", "--hosts-per-switch", "3")
	if code != 0 || !strings.Contains(out, `"hosts": 6`) {
		t.Errorf("%d %s %s", code, out, e)
	}
}

func TestTopoList(t *testing.T) {
	code, out, _ := topoCLI("topo", "list")
	if code != 0 || !strings.Contains(out, "fattree:p") || !strings.Contains(out, "dumbnet-fig1") {
		t.Errorf("%d %s", code, out)
	}
}

// TestTopoListJSON: topo list reports, so it has --json like every
// reporting command.
func TestTopoListJSON(t *testing.T) {
	code, out, e := topoCLI("topo", "list", "--json")
	var specs []struct{ Spec, Usage string }
	if code != 0 || json.Unmarshal([]byte(out), &specs) != nil {
		t.Fatalf("exit %d: %s %s", code, out, e)
	}
	if len(specs) != len(topo.Specs()) || specs[0].Spec != "fattree:p" || specs[0].Usage == "" {
		t.Errorf("%+v", specs)
	}
}

// TestTopoHelpExamples: every topo verb's help teaches by example.
func TestTopoHelpExamples(t *testing.T) {
	for _, verb := range []string{"show", "export", "list"} {
		code, out, _ := topoCLI("topo", verb, "--help")
		if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "edgefabric topo "+verb) {
			t.Errorf("topo %s --help (exit %d):\n%s", verb, code, out)
		}
	}
}

// TestTopoExportBadOutput: an --output path that cannot be created is a
// wrong argument: exit 2 and a message naming the flag.
func TestTopoExportBadOutput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "no", "such", "dir", "x.yaml")
	code, stdout, e := topoCLI("topo", "export", "ring:3", "-o", out)
	if code != 2 || stdout != "" || !strings.HasPrefix(e, "edgefabric: --output: open "+out) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, e)
	}
}

// TestTopoRefusals: inputs once accepted silently or misreported exit 2
// with one line naming the file, line and field (or the flag): impossible
// Zoo coordinates, a DOT file the tool wrote, a relaying switch,
// --hosts-per-switch where it does nothing, a spec integer out of range.
func TestTopoRefusals(t *testing.T) {
	dir := t.TempDir()
	zoo := filepath.Join(dir, "zoo.graphml")
	os.WriteFile(zoo, []byte(`<graphml><key id="la" for="node" attr.name="Latitude"/><key id="lo" for="node" attr.name="Longitude"/><graph>
<node id="a"><data key="la">NaN</data><data key="lo">999</data></node>
<node id="b"><data key="la">0</data><data key="lo">0</data></node>
<edge source="a" target="b"/>
</graph></graphml>`), 0o644)
	lon := filepath.Join(dir, "lon.graphml")
	os.WriteFile(lon, []byte(`<graphml><key id="la" for="node" attr.name="Latitude"/><key id="lo" for="node" attr.name="Longitude"/><graph>
<node id="a">
<data key="la">45</data>
<data key="lo">999</data>
</node>
</graph></graphml>`), 0o644)
	dot := filepath.Join(dir, "ring3.dot")
	if code, _, e := topoCLI("topo", "export", "ring:3", "--format", "dot", "-o", dot); code != 0 {
		t.Fatal(e)
	}
	// the same DOT text under a YAML name: recognized by its first word
	dotYAML := filepath.Join(dir, "ring3.yaml")
	b, _ := os.ReadFile(dot)
	os.WriteFile(dotYAML, b, 0o644)
	relay := filepath.Join(dir, "relay.yaml")
	os.WriteFile(relay, []byte("nodes:\n  - {name: s1, kind: switch, relay: true}\n"), 0o644)
	native := filepath.Join(dir, "lab.yaml")
	os.WriteFile(native, []byte("nodes:\n  - {name: s1}\n"), 0o644)
	const dotMsg = ": export-only format: DOT (Graphviz) can be written but not read; edgefabric reads native YAML or JSON, containerlab (.clab.yml) and GraphML\n"
	const hostsMsg = "no effect: hosts per switch apply only to GraphML files without edgefabric annotations (Topology Zoo)"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"topo", "show", zoo}, "edgefabric: topo: " + zoo + `:2: node "a" Latitude: bad value: "NaN" is not a latitude in degrees (want -90..90)` + "\n"},
		{[]string{"topo", "export", lon}, "edgefabric: topo: " + lon + `:4: node "a" Longitude: bad value: "999" is not a longitude in degrees (want -180..180)` + "\n"},
		{[]string{"topo", "show", dot}, "edgefabric: topo: " + dot + dotMsg},
		{[]string{"topo", "show", dotYAML, "--json"}, "edgefabric: topo: " + dotYAML + dotMsg},
		{[]string{"topo", "show", relay}, "edgefabric: topo: " + relay + ":2: nodes[0].relay: bad value: only a host can relay (forward between its NICs, as BCube servers do); this node is a switch\n"},
		{[]string{"topo", "show", "ring:3", "--hosts-per-switch", "2"}, "edgefabric: --hosts-per-switch: topo: spec \"ring:3\": " + hostsMsg + "; a spec places its own hosts\n"},
		{[]string{"topo", "export", "fattree:4", "--hosts-per-switch", "1", "--format", "json"}, "edgefabric: --hosts-per-switch: topo: spec \"fattree:4\": " + hostsMsg + "; a spec places its own hosts\n"},
		{[]string{"topo", "show", native, "--hosts-per-switch", "3"}, "edgefabric: --hosts-per-switch: topo: " + native + ": " + hostsMsg + ", and this is a native YAML file\n"},
		{[]string{"topo", "show", "fattree:99999999999999999999"}, "edgefabric: topo: spec \"fattree:99999999999999999999\": p: topology too large: 99999999999999999999 is out of range: every argument is 0..4000000 (the node limit)\n"},
		{[]string{"topo", "show", "jellyfish:20,8,99999999999999999999"}, "edgefabric: topo: spec \"jellyfish:20,8,99999999999999999999\": R: topology too large: 99999999999999999999 is out of range: every argument is 0..4000000 (the node limit)\n"},
	}
	for _, c := range cases {
		code, out, errOut := topoCLI(c.args...)
		if code != 2 || out != "" || errOut != c.want {
			t.Errorf("%v: exit %d, stdout %q, stderr\n got  %q\n want %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestTopoClabName: a containerlab export keeps the topology's name
// exactly, though containerlab's own name field cannot hold ':' or '"'.
func TestTopoClabName(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "weird.yaml")
	os.WriteFile(src, []byte("name: 'we\"ird: name'\nnodes:\n  - {name: s1}\n"), 0o644)
	for arg, want := range map[string]string{"ring:3": "ring:3", src: `we"ird: name`} {
		lab := filepath.Join(dir, "lab.clab.yml")
		if code, _, e := topoCLI("topo", "export", arg, "--format", "clab", "-o", lab); code != 0 {
			t.Fatalf("%s: %s", arg, e)
		}
		code, out, e := topoCLI("topo", "show", lab, "--json")
		var s struct{ Name string }
		if code != 0 || json.Unmarshal([]byte(out), &s) != nil || s.Name != want {
			t.Errorf("%s: exit %d, name %q, want %q (%s)", arg, code, s.Name, want, e)
		}
	}
}
