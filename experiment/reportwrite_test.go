package experiment

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Write replaces the files as plan spain --out and topo export -o do: a
// symbolic link at NAME.json stays a link, its target (in another
// directory) replaced; a file there keeps its permissions. Write replaced
// the link with a regular file and reset the file's mode to 0644.
func TestReportWriteKeepsLinksAndModes(t *testing.T) {
	r := &Report{Name: "t", Title: "T", Columns: []Column{{Key: "a", Title: "A"}}, Chart: "a",
		Rows: []Row{{Name: "r1", Values: map[string]Value{"a": {Ours: f64(2)}}}}}
	dir, elsewhere := t.TempDir(), t.TempDir()
	real := filepath.Join(elsewhere, "published.json")
	if err := os.WriteFile(real, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "t.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	md := filepath.Join(dir, "t.md")
	if err := os.WriteFile(md, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(md, 0o600); err != nil { // whatever the umask
		t.Fatal(err)
	}
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("t.json is no longer a link: %v, %v", fi.Mode(), err)
	}
	if b, err := os.ReadFile(real); err != nil || !json.Valid(b) {
		t.Errorf("the link's target holds %.40q, %v; want the report's JSON", b, err)
	}
	if fi, err := os.Stat(md); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("t.md: mode %v, %v; want 0600 kept", fi.Mode(), err)
	}
	if b, err := os.ReadFile(md); err != nil || string(b) != r.Markdown() {
		t.Errorf("t.md holds %.40q, %v; want the Markdown", b, err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 3 {
		t.Errorf("left in the directory: %v", names)
	}
	if names, _ := os.ReadDir(elsewhere); len(names) != 1 {
		t.Errorf("left beside the link's target: %v", names)
	}
}
