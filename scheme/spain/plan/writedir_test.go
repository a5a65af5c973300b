package plan

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// WriteDir replaces its files as topo export -o and repro --out do
// (outfile): a dangling link at plan.json is followed, its target created
// and the link kept, as os.Create follows it (the link was replaced by a
// regular file); as root, a file another user owns stays theirs (it
// became root's).
func TestWriteDirLinksAndOwner(t *testing.T) {
	dir := t.TempDir()
	p := triangle(t)
	if _, err := p.WriteDir(dir, nil, false); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "plan.json")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("published/plan.json", link); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "published"), 0o755); err != nil {
		t.Fatal(err)
	}
	sw := filepath.Join(dir, "switches.json")
	const uid, gid = 65534, 65533
	root := os.Geteuid() == 0
	if root {
		if err := os.Chown(sw, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.WriteDir(dir, nil, false); err != nil {
		t.Fatal(err)
	}
	if got, err := os.Readlink(link); err != nil || got != "published/plan.json" {
		t.Errorf("plan.json: link to %q, %v; want the link kept", got, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "published", "plan.json")); err != nil || !json.Valid(b) {
		t.Errorf("the link's target holds %.40q, %v; want the plan", b, err)
	}
	if fi, err := os.Stat(sw); err != nil {
		t.Error(err)
	} else if st := fi.Sys().(*syscall.Stat_t); root && (st.Uid != uid || st.Gid != gid) {
		t.Errorf("switches.json owned by %d:%d, want %d:%d kept", st.Uid, st.Gid, uid, gid)
	}
	if n, _ := os.ReadDir(filepath.Join(dir, "published")); len(n) != 1 {
		t.Errorf("left beside the link's target: %v", n)
	}
}
