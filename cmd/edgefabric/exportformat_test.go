package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportFormatFromName: without --format, topo export -o FILE writes
// the format FILE's name asks for, so that edgefabric reads the file back
// (it read x.graphml as GraphML, and the default YAML written into it
// was refused); a --format the name contradicts is refused, and nothing
// is written.
func TestExportFormatFromName(t *testing.T) {
	dir := t.TempDir()
	for name, head := range map[string]string{
		"t.graphml":   `<?xml`,
		"T.XML":       `<?xml`,
		"t.json":      `{`,
		"t.clab.yml":  "# containerlab topology",
		"t.clab.yaml": "# containerlab topology",
		"t.dot":       `graph "ring:3" {`,
		"t.gv":        `graph "ring:3" {`,
		"t.yaml":      "# edgefabric topology, native format",
		"t.topo":      "# edgefabric topology, native format",
	} {
		path := filepath.Join(dir, name)
		if code, out, errOut := topoCLI("topo", "export", "ring:3", "-o", path); code != 0 || out != "" || errOut != "" {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", name, code, out, errOut)
		}
		b, _ := os.ReadFile(path)
		if !strings.HasPrefix(string(b), head) {
			t.Errorf("%s: starts %q, want %q", name, b[:min(len(b), 40)], head)
		}
		if strings.HasSuffix(name, ".dot") || strings.HasSuffix(name, ".gv") {
			continue // export only
		}
		if code, out, errOut := topoCLI("topo", "show", path); code != 0 || !strings.Contains(out, "switches:     3\n") {
			t.Errorf("%s read back: exit %d, stdout %q, stderr %q", name, code, out, errOut)
		}
	}
	// A --format that fits the name, or that it does not constrain.
	for _, c := range [][2]string{{"clab", "c.yaml"}, {"json", "c.yml"}, {"json", "c.txt"}, {"GraphML", "c.graphml"}} {
		path := filepath.Join(dir, c[1])
		if code, _, errOut := topoCLI("topo", "export", "ring:3", "--format", c[0], "-o", path); code != 0 {
			t.Errorf("--format %s -o %s: exit %d, stderr %q", c[0], c[1], code, errOut)
		}
		if code, _, errOut := topoCLI("topo", "show", path); code != 0 {
			t.Errorf("--format %s -o %s read back: exit %d, stderr %q", c[0], c[1], code, errOut)
		}
	}
	for _, c := range [][3]string{
		{"yaml", "x.graphml", "graphml"},
		{"dot", "x.yml", "yaml"},
		{"yaml", "x.clab.yml", "clab"},
		{"graphml", "x.json", "json"},
		{"clab", "x.dot", "dot"},
	} {
		path := filepath.Join(dir, c[1])
		code, out, errOut := topoCLI("topo", "export", "ring:3", "--format", c[0], "-o", path)
		want := "edgefabric: --format " + c[0] + ": --output " + path + " names a " + c[2] + " file: give --format " + c[2] + ", or a name that fits\n"
		if code != 2 || out != "" || errOut != want {
			t.Errorf("--format %s -o %s: exit %d, stdout %q, stderr\n got  %q\n want %q", c[0], c[1], code, out, errOut, want)
		}
		if _, err := os.Stat(path); err == nil {
			t.Errorf("--format %s -o %s: the file was written", c[0], c[1])
		}
	}
	// Standard output is YAML unless --format says otherwise.
	if code, out, _ := topoCLI("topo", "export", "ring:3", "-o", "-"); code != 0 || !strings.HasPrefix(out, "# edgefabric topology, native format") {
		t.Errorf("-o -: exit %d, %q", code, out[:min(len(out), 40)])
	}
}
