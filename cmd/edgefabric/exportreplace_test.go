package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stallReplace makes the test binary, acting as edgefabric, stop before
// it renames a finished --output file into place (beforeReplace), so that
// a test can signal it there.
const stallReplace = "EDGEFABRIC_TEST_STALL_REPLACE"

// dirNames lists dir's entries.
func dirNames(t *testing.T, dir string) []string {
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

// runLimited runs the test binary as edgefabric with args under a file
// size limit of blocks (ulimit -f; Go ignores SIGXFSZ, so writes past it
// fail with EFBIG, as on a full disk), and returns its exit code, stdout
// and stderr.
func runLimited(t *testing.T, blocks string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", append([]string{"-c", `ulimit -f ` + blocks + ` && exec "$0" "$@"`, exe}, args...)...)
	cmd.Env = append(os.Environ(), asCLI+"=1")
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), o.String(), e.String()
}

// TestExportFailureKeepsExistingFile: an export into an existing --output
// file that fails half-way (past the file size limit) exits 1 and leaves
// the file as it was, with no temporary file beside it: the file was
// truncated, written in part, then removed.
func TestExportFailureKeepsExistingFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "ft.yaml")
	const old = "name: precious\n"
	if err := os.WriteFile(out, []byte(old), 0o640); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runLimited(t, "1", "topo", "export", "fattree:4", "-o", out)
	if code != 1 || stderr != "edgefabric: write "+out+": file too large\n" {
		t.Fatalf("exit %d, stderr %q; want 1 and file too large", code, stderr)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != old {
		t.Errorf("%s after the failed export: %q, %v; want it untouched (%q)", out, b, err, old)
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Errorf("left in the directory: %q, want ft.yaml alone", names)
	}
}

// TestExportReplacesWhole: a successful export replaces an existing file's
// content, keeps its permissions, and writes through a symbolic link
// (the link stays a link), leaving nothing else in the directory.
func TestExportReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.yaml")
	if err := os.WriteFile(out, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink("r.yaml", link); err != nil {
		t.Fatal(err)
	}
	_, want, _ := topoCLI("topo", "export", "ring:3")
	for _, p := range []string{out, link} {
		os.WriteFile(out, []byte("old\n"), 0o640)
		if code, _, e := topoCLI("topo", "export", "ring:3", "-o", p); code != 0 {
			t.Fatalf("-o %s: exit %d: %s", p, code, e)
		}
		if b, err := os.ReadFile(out); err != nil || string(b) != want {
			t.Errorf("-o %s: %s holds %q, %v; want the export", p, out, b, err)
		}
		if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("-o %s: %s: %v, %v; want mode 0640 kept", p, out, fi.Mode(), err)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("-o %s: %s is no longer a link: %v", p, link, err)
		}
		if names := dirNames(t, dir); len(names) != 2 {
			t.Errorf("-o %s: left in the directory: %q", p, names)
		}
	}
}

// TestExportSignalKeepsFile: a stop signal during an export into an
// existing --output file kills the process by that signal, leaves the
// file untouched and removes the temporary file (the export wrote the
// existing file in place, so a signal left it truncated or half-written).
func TestExportSignalKeepsFile(t *testing.T) {
	t.Setenv(asCLI, "1")
	t.Setenv(stallReplace, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		dir := t.TempDir()
		out := filepath.Join(dir, "ring.yaml")
		const old = "name: precious\n"
		if err := os.WriteFile(out, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, "topo", "export", "ring:3", "-o", out)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The temporary file appears as the export starts; the export
		// is held before its rename (stallReplace), so the signal comes
		// while the file is being written or before it is renamed.
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		for len(dirNames(t, dir)) < 2 {
			select {
			case err := <-exited:
				t.Fatalf("%v: the export ended (%v) and no temporary file appeared beside %s: %q", sig, err, out, dirNames(t, dir))
			case <-time.After(10 * time.Millisecond):
			}
		}
		cmd.Process.Signal(sig)
		err := <-exited
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%v: %v, want the process killed by it", sig, err)
		}
		if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != sig {
			t.Errorf("%v: exit status %v, want death by the signal", sig, ws)
		}
		if b, err := os.ReadFile(out); err != nil || string(b) != old {
			t.Errorf("%v: %s holds %q, %v; want it untouched", sig, out, b, err)
		}
		if names := dirNames(t, dir); len(names) != 1 {
			t.Errorf("%v: left in the directory: %q, want ring.yaml alone", sig, names)
		}
	}
}

// TestExportKeepsOwner: an export run as root (sudo) into another user's
// --output file leaves the file that user's, owner and group, as
// writing it in place did; the replacement was root's, mode kept, so the
// user could no longer write their own file. (Root only: no one else may
// give a file away.)
func TestExportKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file to another user")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "theirs.yaml")
	if err := os.WriteFile(out, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const uid, gid = 65534, 65533
	if err := os.Chown(out, uid, gid); err != nil {
		t.Fatal(err)
	}
	if code, _, e := topoCLI("topo", "export", "ring:3", "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != uid || st.Gid != gid || fi.Mode().Perm() != 0o644 || fi.Size() < 10 {
		t.Errorf("%s after the export: owner %d:%d, mode %v, %d bytes; want %d:%d, 0644 and the export", out, st.Uid, st.Gid, fi.Mode(), fi.Size(), uid, gid)
	}
}

// TestExportIntoMountedFile: an --output file that is a mount point (a
// file bind-mounted into a container, as docker -v mounts one) cannot be
// renamed over (EBUSY); the finished export is copied into it instead.
// The export failed there ("replace FILE: device or resource busy"),
// where writing in place had worked. (Root only: it mounts, in a mount
// namespace of its own.)
func TestExportIntoMountedFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to bind-mount a file")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare")
	}
	t.Setenv(asCLI, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "outside.yaml") // the file mounted
	mnt := filepath.Join(dir, "mounted.yaml") // where it is mounted
	if err := os.WriteFile(src, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mnt, []byte("under the mount\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(unshare, "-m", "/bin/sh", "-c", `mount --bind "$1" "$2" || exit 99; exec "$0" topo export ring:3 -o "$2"`, exe, src, mnt)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 99 || err != nil && ee == nil {
		t.Skipf("cannot bind-mount here: %v: %s", err, out)
	}
	if err != nil {
		t.Fatalf("export into a mounted file: %v: %s", err, out)
	}
	_, want, _ := topoCLI("topo", "export", "ring:3")
	if b, err := os.ReadFile(src); err != nil || string(b) != want {
		t.Errorf("the mounted file holds %q, %v; want the export", b, err)
	}
	if fi, err := os.Stat(src); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("the mounted file: %v, %v; want mode 0640 kept", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(mnt); string(b) != "under the mount\n" {
		t.Errorf("the file under the mount holds %q", b)
	}
	if names := dirNames(t, dir); len(names) != 2 {
		t.Errorf("left in the directory: %q", names)
	}
}

// TestExportRefusesReadOnlyFile: an --output file its owner made
// read-only (chmod a-w) is refused as os.Create refuses it (exit 2,
// permission denied) and left as it was, as before --output went through
// a temporary file: the rename replaced it behind the user's back. Root
// may write any file, so as root the export runs as nobody, the file's
// owner, from a copy of the test binary where nobody may run it (go
// test builds it in a directory root's alone).
func TestExportRefusesReadOnlyFile(t *testing.T) {
	dir, err := os.MkdirTemp("", "exportro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil { // nobody may write beside it
		t.Fatal(err)
	}
	out := filepath.Join(dir, "ro.yaml")
	const old = "name: precious\n"
	if err := os.WriteFile(out, []byte(old), 0o444); err != nil {
		t.Fatal(err)
	}
	var code int
	var stderr string
	if os.Geteuid() != 0 {
		code, _, stderr = topoCLI("topo", "export", "ring:3", "-o", out)
	} else {
		if err := os.Chown(out, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		bin, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		cp := filepath.Join(dir, "edgefabric")
		if err := os.WriteFile(cp, bin, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(cp, "topo", "export", "ring:3", "-o", out)
		cmd.Env = append(os.Environ(), asCLI+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var e strings.Builder
		cmd.Stderr = &e
		err = cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		code, stderr = cmd.ProcessState.ExitCode(), e.String()
		os.Remove(cp)
	}
	if want := "edgefabric: --output: open " + out + ": permission denied\n"; code != 2 || stderr != want {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != old {
		t.Errorf("%s holds %q, %v; want it untouched", out, b, err)
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Errorf("left in the directory: %q, want ro.yaml alone", names)
	}
}

// TestExportLongFileName: an --output name as long as a file name may be
// (255 bytes) is written, new or existing: the temporary file beside it
// was named after it whole, 19 bytes longer, which no file system takes
// ('file name too long', naming FILE, which is not).
func TestExportLongFileName(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, strings.Repeat("é", 120)+"-long-name.yaml") // 255 bytes
	if n := len(filepath.Base(out)); n != 255 {
		t.Fatalf("name of %d bytes", n)
	}
	_, want, _ := topoCLI("topo", "export", "ring:3")
	for _, existing := range []bool{false, true} {
		if existing {
			if err := os.WriteFile(out, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if code, _, e := topoCLI("topo", "export", "ring:3", "-o", out); code != 0 {
			t.Fatalf("existing %v: exit %d: %s", existing, code, e)
		}
		if b, err := os.ReadFile(out); err != nil || string(b) != want {
			t.Errorf("existing %v: %q, %v; want the export", existing, b, err)
		}
		if names := dirNames(t, dir); len(names) != 1 {
			t.Errorf("existing %v: left in the directory: %q", existing, names)
		}
	}
}

// TestExportDanglingLinkWriteFailure: topo export -o LINK, a symbolic
// link to a file not there yet, creates the link's target whole or not
// at all, as for any other FILE: an export that fails (past the file
// size limit) leaves no target, cut short, and the link as it was. It was
// written in place through the link, and a failure left the target half
// written.
func TestExportDanglingLinkWriteFailure(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "ft.yaml")
	if err := os.Symlink("target.yaml", link); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runLimited(t, "1", "topo", "export", "fattree:4", "-o", link)
	if want := "edgefabric: write " + link + ": file too large\n"; code != 1 || errOut != want {
		t.Errorf("exit %d, stderr\n got  %q\n want %q", code, errOut, want)
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Errorf("left in the directory: %q, want the link alone", names)
	}
	if got, err := os.Readlink(link); err != nil || got != "target.yaml" {
		t.Errorf("the link: %q, %v", got, err)
	}
	// Without the limit, the target is created and the link kept.
	if code, _, e := topoCLI("topo", "export", "fattree:4", "-o", link); code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	_, want, _ := topoCLI("topo", "export", "fattree:4")
	if b, err := os.ReadFile(filepath.Join(dir, "target.yaml")); err != nil || string(b) != want {
		t.Errorf("target.yaml: %.40q, %v; want the export", b, err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s is no longer a link: %v", link, err)
	}
}

// TestExportToStdoutPipe: -o /dev/stdout where standard output is a pipe
// ('topo export ... -o /dev/stdout | less') writes the export into the
// pipe, as to a device. /dev/stdout's links end at /proc/PID/fd/1, whose
// text is "pipe:[N]": it was taken for a dangling link into a directory
// where no file can be made, and refused (exit 2).
func TestExportToStdoutPipe(t *testing.T) {
	for _, p := range []string{"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"} {
		if _, err := os.Stat(p); err != nil {
			t.Skip(err)
		}
		code, stdout, stderr := runLimited(t, "unlimited", "topo", "export", "ring:3", "--format", "json", "-o", p)
		if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "{") {
			t.Errorf("-o %s into a pipe: exit %d, stderr %q, stdout %.40q; want the export on stdout", p, code, stderr, stdout)
		}
	}
}
