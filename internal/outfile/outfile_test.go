package outfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// umask is the process's file mode creation mask (set and put back at
// once: no test of the package runs in parallel).
func umask() fs.FileMode {
	m := syscall.Umask(0o022)
	syscall.Umask(m)
	return fs.FileMode(m)
}

// names lists dir's entries.
func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// replace writes content to path through Create, Write, Commit.
func replace(path, content string) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Discard()
	if _, err := f.Write([]byte(content)); err != nil {
		return err
	}
	return f.Commit()
}

func wantFile(t *testing.T, path, content string, mode fs.FileMode) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != content {
		t.Errorf("%s holds %q, %v; want %q", path, b, err, content)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode() != mode {
		t.Errorf("%s: mode %v, %v; want %v", path, fi.Mode(), err, mode)
	}
}

// A new file is 0644 less the umask; a file replaced keeps its mode, and
// its owner and group (as root, who may give them); nothing else is left
// in the directory.
func TestCreateModeAndOwner(t *testing.T) {
	// 0002, so that 0644 and os.Create's 0666 differ.
	defer syscall.Umask(syscall.Umask(0o002))
	dir := t.TempDir()
	p := filepath.Join(dir, "new.json")
	if err := replace(p, "one\n"); err != nil {
		t.Fatal(err)
	}
	wantFile(t, p, "one\n", 0o644&^umask())
	if err := os.Chmod(p, 0o604); err != nil {
		t.Fatal(err)
	}
	const uid, gid = 65534, 65533
	root := os.Geteuid() == 0
	if root {
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if err := replace(p, "two\n"); err != nil {
		t.Fatal(err)
	}
	wantFile(t, p, "two\n", 0o604)
	if st, _ := os.Stat(p); root && (st.Sys().(*syscall.Stat_t).Uid != uid || st.Sys().(*syscall.Stat_t).Gid != gid) {
		t.Errorf("owner %d:%d, want %d:%d kept", st.Sys().(*syscall.Stat_t).Uid, st.Sys().(*syscall.Stat_t).Gid, uid, gid)
	}
	if n := names(t, dir); len(n) != 1 {
		t.Errorf("left in the directory: %q", n)
	}
}

// dirOf is the directory file is in.
func dirOf(t *testing.T, file string) fs.FileInfo {
	t.Helper()
	fi, err := os.Stat(filepath.Dir(file))
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// A symbolic link is followed and its target replaced, the link kept: a
// link into another directory, a chain of links, a dangling link (its
// target created, as os.Create creates it), and a relative link reached
// through a linked directory, whose ".." the kernel takes from the real
// directory, not from the name given.
func TestFollowsLinks(t *testing.T) {
	base := t.TempDir()
	mk := func(p string) string {
		if err := os.MkdirAll(filepath.Join(base, p), 0o755); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(base, p)
	}
	out, other, deep := mk("out"), mk("other"), mk("real/sub")
	link := func(target, at string) string {
		if err := os.Symlink(target, at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	os.WriteFile(filepath.Join(other, "a.json"), []byte("old\n"), 0o600)
	link(filepath.Join(base, "real/sub"), filepath.Join(out, "sub")) // out/sub -> real/sub
	link("../x.json", filepath.Join(deep, "up.json"))                // real/sub/up.json -> real/x.json
	for _, c := range []struct {
		path, target string
		mode         fs.FileMode
	}{
		{link(filepath.Join(other, "a.json"), filepath.Join(out, "abs.json")), filepath.Join(other, "a.json"), 0o600},
		{link("abs.json", filepath.Join(out, "chain.json")), filepath.Join(other, "a.json"), 0o600},
		{link("../other/none.json", filepath.Join(out, "dangling.json")), filepath.Join(other, "none.json"), 0o644 &^ umask()},
		{filepath.Join(out, "sub", "up.json"), filepath.Join(base, "real", "x.json"), 0o644 &^ umask()},
	} {
		fi, err := os.Lstat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Create(c.path)
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		// The new file is made beside the target, where a rename can
		// put it (not across file systems).
		if a, err := os.Stat(filepath.Dir(f.TempName())); err != nil || !os.SameFile(a, dirOf(t, c.target)) {
			t.Errorf("%s: the new file is made in %s, not beside %s", c.path, filepath.Dir(f.TempName()), c.target)
		}
		f.Write([]byte(c.path + "\n"))
		if err := f.Commit(); err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		wantFile(t, c.target, c.path+"\n", c.mode)
		if after, err := os.Lstat(c.path); err != nil || after.Mode() != fi.Mode() || after.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s after: %v, %v; want the link kept", c.path, after.Mode(), err)
		}
	}
	for _, d := range []string{out, other, deep, filepath.Join(base, "real")} {
		for _, n := range names(t, d) {
			if strings.HasSuffix(n, ".tmp") {
				t.Errorf("%s left in %s", n, d)
			}
		}
	}
}

// What cannot be replaced is refused, naming the path as given, and left
// as it was: a directory and a device (ErrNotRegular, for the caller to
// write in place or refuse), a loop of links, a directory that does not
// exist (os.Create's errors), a link into a directory where no file can be
// made (the file beside which the new one is written).
func TestRefused(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink("loop", loop); err != nil {
		t.Fatal(err)
	}
	proc := filepath.Join(dir, "proc")
	if err := os.Symlink("/proc/version", proc); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "no", "f.json")
	for _, c := range []struct {
		path, want string
		notRegular bool
	}{
		{sub, sub + " is a directory", true},
		{"/dev/null", "/dev/null is not a regular file", true},
		{loop, "open " + loop + ": too many levels of symbolic links", false},
		{missing, "open " + missing + ": no such file or directory", false},
		{proc, proc + " links to /proc/version, in a directory where no file can be created (", false},
	} {
		for what, err := range map[string]error{"Create": func() error { _, err := Create(c.path); return err }(), "Check": Check(c.path)} {
			if err == nil || !strings.HasPrefix(err.Error(), c.want) || errors.Is(err, ErrNotRegular) != c.notRegular {
				t.Errorf("%s(%s): %v; want %q (ErrNotRegular: %v)", what, c.path, err, c.want, c.notRegular)
			}
		}
	}
	if n := names(t, dir); len(n) != 3 {
		t.Errorf("left in the directory: %q", n)
	}
}

// Check makes no file in the directory path is in (one made and removed
// there, unguarded, is one a stop signal could leave behind), and passes
// what Create takes.
func TestCheckMakesNothing(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.json")
	if err := os.WriteFile(old, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("old.json", link); err != nil {
		t.Fatal(err)
	}
	// A file made and removed in dir would change its time.
	then := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(dir, then, then); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{old, link, filepath.Join(dir, "new.json")} {
		if err := Check(p); err != nil {
			t.Errorf("Check(%s): %v", p, err)
		}
	}
	if fi, err := os.Stat(dir); err != nil || !fi.ModTime().Equal(then) {
		t.Errorf("the directory changed (modified %v, %v): Check made a file there", fi.ModTime(), err)
	}
}

// A file the process may not write (made read-only by its owner) is
// refused as os.Create refuses it, though the directory would let a
// rename replace it, and left as it was; one beside it that the process
// may write is not. Root may write any file, so as root the test runs as
// nobody, the files' owner (effective user ID, which the write check
// uses; no test of the package runs in parallel).
func TestReadOnlyRefused(t *testing.T) {
	dir, err := os.MkdirTemp("", "outfilero")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil { // nobody may write beside them
		t.Fatal(err)
	}
	ro, rw := filepath.Join(dir, "ro.json"), filepath.Join(dir, "rw.json")
	for p, mode := range map[string]fs.FileMode{ro: 0o444, rw: 0o644} {
		if err := os.WriteFile(p, []byte("precious\n"), mode); err != nil {
			t.Fatal(err)
		}
		if os.Geteuid() == 0 {
			if err := os.Chown(p, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func() {
		if os.Geteuid() == 0 {
			if err := syscall.Seteuid(65534); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := syscall.Seteuid(0); err != nil {
					panic(err) // the rest of the run would not be root's
				}
			}()
		}
		for what, err := range map[string]error{"Create": func() error { _, err := Create(ro); return err }(), "Check": Check(ro)} {
			if want := "open " + ro + ": permission denied"; err == nil || err.Error() != want {
				t.Errorf("%s: %v, want %q", what, err, want)
			}
		}
		if err := Check(rw); err != nil {
			t.Errorf("Check(%s): %v", rw, err)
		}
	}
	check()
	wantFile(t, ro, "precious\n", 0o444)
	if n := names(t, dir); len(n) != 2 {
		t.Errorf("left in the directory: %q", n)
	}
}

// A write, flush or close that fails names the file replaced, not the
// temporary file (which is gone), and leaves the file as it was and no
// temporary file. Here the temporary file's descriptor is closed under
// it; a full disk (EFBIG, ENOSPC) fails the same way (cmd/edgefabric's
// tests run plan, repro and topo export under ulimit -f).
func TestErrorsNameFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.f.Close()
	if _, err := f.Write([]byte("x")); err == nil || err.Error() != "write "+p+": file already closed" {
		t.Errorf("Write: %v, want it naming %s", err, p)
	}
	if err := f.Close(); err == nil || err.Error() != "sync "+p+": file already closed" {
		t.Errorf("Close: %v, want it naming %s", err, p)
	}
	if err := f.Commit(); err == nil || !strings.Contains(err.Error(), p+":") {
		t.Errorf("Commit after a failed Close: %v, want its error", err)
	}
	wantFile(t, p, "old\n", 0o644)
	if n := names(t, dir); len(n) != 1 {
		t.Errorf("left in the directory: %q", n)
	}
}

// Discard leaves the file as it was and no temporary file; a Commit after
// it fails; a Discard after Commit does nothing.
func TestDiscard(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new\n"))
	f.Discard()
	if err := f.Commit(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Commit after Discard: %v", err)
	}
	wantFile(t, p, "old\n", 0o644)
	if err := replace(p, "new\n"); err != nil {
		t.Fatal(err)
	}
	wantFile(t, p, "new\n", 0o644)
	if n := names(t, dir); len(n) != 1 {
		t.Errorf("left in the directory: %q", n)
	}
}

// A file name as long as one may be (255 bytes) is replaced: the
// temporary file is named after its first 64 bytes, whole characters.
func TestLongName(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, strings.Repeat("é", 120)+"-long-name.yaml")
	if n := len(filepath.Base(p)); n != 255 {
		t.Fatalf("name of %d bytes", n)
	}
	for _, content := range []string{"new\n", "replaced\n"} {
		if err := replace(p, content); err != nil {
			t.Fatal(err)
		}
		wantFile(t, p, content, 0o644&^umask())
	}
}

// A Group puts its files in place in the order they were created, after
// each is; one that fails to close leaves every file as it was.
func TestGroup(t *testing.T) {
	dir := t.TempDir()
	paths := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")}
	for _, p := range paths {
		if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write := func(fail int) error {
		var g Group
		defer g.Discard()
		for i, p := range paths {
			f, err := g.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("new\n"))
			if i == fail {
				f.f.Close() // its Close fails
			}
		}
		return g.Commit(func(i int) {
			for j, p := range paths {
				b, _ := os.ReadFile(p)
				if want := map[bool]string{true: "new\n", false: "old\n"}[j <= i]; string(b) != want {
					t.Errorf("after %d: %s holds %q, want %q", i, p, b, want)
				}
			}
		})
	}
	if err := write(2); err == nil || err.Error() != "sync "+paths[2]+": file already closed" {
		t.Errorf("a close that fails: %v", err)
	}
	for _, p := range paths {
		wantFile(t, p, "old\n", 0o644)
	}
	if err := write(-1); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		wantFile(t, p, "new\n", 0o644)
	}
	if n := names(t, dir); len(n) != 3 {
		t.Errorf("left in the directory: %q", n)
	}
}

// TestProcFDLinks: a path whose links lead through /proc/PID/fd, as
// /dev/stdout and /dev/fd/N do, to a pipe or socket is no regular file,
// though the link's text ("pipe:[N]") names none: Create and Check say
// ErrNotRegular, so that a caller writes to it in place, as it writes to
// a device. Taken for a dangling link, it was refused as "links to
// /proc/PID/fd/pipe:[N], in a directory where no file can be created", and
// 'topo export -o /dev/stdout | less' failed.
func TestProcFDLinks(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	fdLink := "/proc/self/fd/" + strconv.Itoa(int(w.Fd()))
	stdout := filepath.Join(t.TempDir(), "stdout") // as /dev/stdout
	if err := os.Symlink(fdLink, stdout); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fdLink, stdout} {
		if f, err := Create(p); !errors.Is(err, ErrNotRegular) {
			if err == nil {
				f.Discard()
			}
			t.Errorf("Create(%s) (a pipe): %v, want ErrNotRegular", p, err)
		}
		if err := Check(p); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Check(%s) (a pipe): %v, want ErrNotRegular", p, err)
		}
	}
}
