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
		{[]string{"topo", "show"}, "edgefabric: edgefabric topo show takes 1 argument(s), got 0 (usage: edgefabric topo show SPEC|FILE [flags])\n"},
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
