package topo

import "testing"

// TestDetectClabAfterBOM: a containerlab file that a Windows editor saved
// with a byte-order mark, and whose first line is its topology key, is
// containerlab. The mark hid the key from the line scan, so the file was
// read as native YAML and refused ("topology: unknown key").
func TestDetectClabAfterBOM(t *testing.T) {
	data := "\ufefftopology:\n  nodes:\n    a: {}\n    b: {}\n  links:\n    - endpoints: [\"a:eth1\", \"b:eth1\"]\n"
	if f := DetectFormat("lab.yml", []byte(data)); f != FormatClab {
		t.Fatalf("DetectFormat = %v, want clab", f)
	}
	g, err := Decode([]byte(data), "lab.yml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g.NumNodes() != 2 || g.NumLinks() != 1 {
		t.Fatalf("%d nodes, %d links; want 2 and 1", g.NumNodes(), g.NumLinks())
	}
}
