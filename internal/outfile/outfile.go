package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNotRegular is the cause of Create's error for a path that exists and
// is no regular file (a directory, a device, a FIFO), which a rename
// cannot replace.
var ErrNotRegular = errors.New("not a regular file")

// Error says why path cannot be replaced where os.Create's error would
// not (a directory at path, a link into a directory where no file can be
// created).
type Error struct {
	Path string // as the caller gave it
	Why  string // what is wrong with it, said after Path: "is a directory"
	Err  error  // the cause: ErrNotRegular, or the system's error
}

func (e *Error) Error() string {
	if e.Err == ErrNotRegular {
		return e.Path + " " + e.Why
	}
	return e.Path + " " + e.Why + " (" + e.Err.Error() + ")"
}

func (e *Error) Unwrap() error { return e.Err }

// File is the new content of a file, written into a temporary file beside
// the one it replaces. Its errors name the file replaced, as the caller
// named it, never the temporary file.
type File struct {
	path     string   // as the caller gave it: errors name it
	target   string   // what Commit replaces: path, its links followed
	tmp      string   // the temporary file
	f        *os.File // tmp, open
	closed   bool
	closeErr error
	done     bool // committed or discarded: tmp is gone
}

// Create starts the replacement of the file at path (created if missing).
// It refuses what os.Create would refuse (a file the process may not
// write, a directory that does not exist, a loop of links), with the
// error os.Create gives, and a path that is no regular file, with an
// *Error wrapping ErrNotRegular; an *Error also says when no temporary
// file can be made beside the file replaced.
func Create(path string) (*File, error) {
	t, err := inspect(path)
	if err != nil {
		return nil, err
	}
	perm := fs.FileMode(0o644) // less the umask
	if t.fi != nil {
		perm = 0o600 // set to the replaced file's below
	}
	tf, err := createTemp(filepath.Dir(t.name), filepath.Base(t.name), perm)
	if err != nil {
		return nil, t.tempErr(err)
	}
	f := &File{path: path, target: t.name, tmp: tf.Name(), f: tf}
	if t.fi != nil {
		// The replaced file's owner and group, as far as we may give
		// them (root may; others keep the group if they are in it): as
		// GNU sed -i, errors ignored. Before the mode, which a chown
		// may clear bits of.
		if st, ok := t.fi.Sys().(*syscall.Stat_t); ok {
			if tf.Chown(int(st.Uid), int(st.Gid)) != nil {
				tf.Chown(-1, int(st.Gid))
			}
		}
		if err := tf.Chmod(t.fi.Mode().Perm()); err != nil {
			f.Discard()
			return nil, f.named(err)
		}
	}
	return f, nil
}

// Check reports the error Create(path) would, without changing anything
// where it can: for checking an output's files before a long computation.
// It tries making a file only in a directory a symbolic link at path
// leads into; whether the directory path is in takes files, the caller
// checks once for all its files (a file made and removed there,
// unguarded, is one a stop signal could leave behind).
func Check(path string) error {
	t, err := inspect(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(t.name)
	if fi, err := os.Stat(dir); err != nil {
		return t.tempErr(err)
	} else if !fi.IsDir() {
		return t.tempErr(syscall.ENOTDIR)
	}
	if !t.linked {
		return nil
	}
	if a, err := os.Stat(filepath.Dir(path)); err == nil {
		if b, err := os.Stat(dir); err == nil && os.SameFile(a, b) {
			return nil
		}
	}
	tf, err := createTemp(dir, filepath.Base(t.name), 0o600)
	if err != nil {
		return t.tempErr(err)
	}
	tf.Close()
	os.Remove(tf.Name())
	return nil
}

// target is what replacing a path replaces.
type target struct {
	path   string      // as the caller gave it
	name   string      // path, its links followed
	linked bool        // path is a symbolic link
	fi     fs.FileInfo // name's, a regular file's; nil when it is not there
}

// inspect finds what replacing path replaces, and refuses what cannot be
// replaced (Create).
func inspect(path string) (*target, error) {
	// What the kernel finds at path first: a link under /proc/PID/fd
	// (/dev/stdout, /dev/fd/N) to a pipe or a socket reads "pipe:[N]",
	// no file follow can find, and was taken for a dangling link into a
	// directory where nothing can be made.
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, notRegular(path, fi)
	}
	name, linked, err := follow(path)
	if err != nil {
		return nil, err
	}
	t := &target{path: path, name: name, linked: linked}
	fi, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: cause(err)}
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(path, fi)
	}
	// A file we may not write is refused, as os.Create refuses it: one
	// its owner made read-only (chmod a-w) is not replaced behind their
	// back, though the directory would let a rename do it. Root may
	// write any file.
	if err := unix.Faccessat(unix.AT_FDCWD, name, unix.W_OK, unix.AT_EACCESS); err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	t.fi = fi
	return t, nil
}

// tempErr is the error for a temporary file that could not be made
// beside the file replaced.
func (t *target) tempErr(err error) error {
	err = cause(err)
	switch {
	case t.linked:
		return &Error{Path: t.path, Why: "links to " + t.name + ", in a directory where no file can be created", Err: err}
	case t.fi != nil:
		return &Error{Path: t.path, Why: "is replaced only whole, through a new file beside it, which cannot be made in " + filepath.Dir(t.name), Err: err}
	}
	return &fs.PathError{Op: "open", Path: t.path, Err: err} // as os.Create says
}

// follow returns the file path names, its symbolic links followed (a
// dangling one's target too, as os.Create creates it), and whether path
// is a link. A link's relative target is found from the link's directory
// through that directory's own links, as the kernel finds it.
func follow(path string) (name string, linked bool, err error) {
	p := path
	for hops := 0; ; hops++ {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return p, hops > 0, nil // what is wrong with it, Create says
		}
		if hops == 40 { // as Linux gives up
			return "", false, &fs.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
		}
		dest, err := os.Readlink(p)
		if err != nil {
			return "", false, &fs.PathError{Op: "open", Path: path, Err: cause(err)}
		}
		if !filepath.IsAbs(dest) {
			linkDir, _ := filepath.Split(p)
			dest = linkDir + dest
		}
		if dir, name := filepath.Split(dest); dir != "" {
			// Left as it is where the directory is missing: creating the
			// temporary file there fails, saying so.
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dest = filepath.Join(real, name)
			}
		}
		p = dest
	}
}

// createTemp creates a new file in dir for name's content, under a
// hidden name no other writer can be using (O_EXCL, a random part):
// .NAME.RANDOM.tmp, after up to 64 bytes of NAME (whole characters), so
// that a name as long as a file name may be (255 bytes) still leaves room.
func createTemp(dir, name string, perm fs.FileMode) (*os.File, error) {
	if len(name) > 64 {
		name = strings.ToValidUTF8(name[:64], "")
	}
	var err error
	for range 100 {
		var f *os.File
		f, err = os.OpenFile(filepath.Join(dir, "."+name+"."+strconv.FormatUint(rand.Uint64(), 36)+".tmp"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, err
}

// cause is the system's error inside err (a *fs.PathError's Err).
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// named is err naming the file replaced where it names the temporary file.
func (f *File) named(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == f.tmp {
		return &fs.PathError{Op: pe.Op, Path: f.path, Err: pe.Err}
	}
	return err
}

// Write writes into the temporary file.
func (f *File) Write(b []byte) (int, error) {
	n, err := f.f.Write(b)
	return n, f.named(err)
}

// TempName is the temporary file's name, for a signal handler to remove
// it (Discard is not safe to call while another goroutine writes).
func (f *File) TempName() string { return f.tmp }

// Close finishes the new content: flushed to the disk and closed, ready
// for Commit. One that fails removes the temporary file. Calling it again
// returns the first call's error.
func (f *File) Close() error {
	if f.closed {
		return f.closeErr
	}
	f.closed = true
	err := f.f.Sync()
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		f.done = true
		os.Remove(f.tmp)
		f.closeErr = f.named(err)
	}
	return f.closeErr
}

// Commit closes the file if Close was not called, and puts it in place of
// the file it replaces: renamed over it, or, where it is a mount point,
// which no rename replaces (a file bind-mounted into a container, as
// docker -v mounts one), copied into it. It leaves no temporary file.
func (f *File) Commit() error {
	if err := f.Close(); err != nil {
		return err
	}
	if f.done {
		return &fs.PathError{Op: "replace", Path: f.path, Err: fs.ErrClosed}
	}
	f.done = true
	err := os.Rename(f.tmp, f.target)
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.EXDEV) {
		err = f.copyInto()
		os.Remove(f.tmp)
		return err
	}
	os.Remove(f.tmp)
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return fmt.Errorf("replace %s: %w", f.path, err)
}

// copyInto writes the temporary file's content into the target in place
// (a stop signal during the copy leaves it cut short).
func (f *File) copyInto() error {
	r, err := os.Open(f.tmp)
	if err != nil {
		return f.named(err)
	}
	defer r.Close()
	w, err := os.OpenFile(f.target, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", f.path, cause(err))
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return fmt.Errorf("write %s: %w", f.path, cause(err))
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("close %s: %w", f.path, cause(err))
	}
	return nil
}

// Discard abandons the replacement, removing the temporary file; the
// file it would replace stays as it was. After Commit it does nothing,
// so that it can be deferred.
func (f *File) Discard() {
	if f.done {
		return
	}
	f.done = true
	if !f.closed {
		f.closed = true
		f.f.Close()
	}
	os.Remove(f.tmp)
}

// Group is files written side by side and put in place together, once
// all are written: a failure while writing any leaves every one as it
// was. The zero value is empty, ready for Create.
type Group struct {
	files []*File
}

// Create starts one more file of the group (Create).
func (g *Group) Create(path string) (*File, error) {
	f, err := Create(path)
	if err == nil {
		g.files = append(g.files, f)
	}
	return f, err
}

// Commit closes every file of the group, then puts them in place in the
// order they were created, calling after(i) (when not nil) once file i
// is. A close that fails leaves every file as it was; a Commit that fails
// leaves the files before it in place and the others as they were. Either
// way no temporary file stays.
func (g *Group) Commit(after func(i int)) error {
	defer g.Discard()
	for _, f := range g.files {
		if err := f.Close(); err != nil {
			return err
		}
	}
	for i, f := range g.files {
		if err := f.Commit(); err != nil {
			return err
		}
		if after != nil {
			after(i)
		}
	}
	return nil
}

// Discard abandons the files not yet in place (Discard); deferred, it
// cleans up after a failure.
func (g *Group) Discard() {
	for _, f := range g.files {
		f.Discard()
	}
}

// notRegular is the error for a path that is fi, no regular file.
func notRegular(path string, fi fs.FileInfo) error {
	why := "is not a regular file"
	if fi.IsDir() {
		why = "is a directory"
	}
	return &Error{Path: path, Why: why, Err: ErrNotRegular}
}
