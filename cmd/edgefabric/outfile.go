package main

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
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// beforeReplace, when set, runs after writeReplacing has written the new
// file and before it renames it into place. Only the test binary sets it
// (TestMain), to hold the process there while a test signals it.
var beforeReplace func()

// writeReplacing writes what write produces to the file path names, as
// a whole or not at all: an existing file is replaced only once the new
// one is complete (written into a temporary file in the same directory,
// then renamed over it), so an export that fails half-way, or a stop
// signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) while it runs, leaves it
// untouched, and leaves no temporary file behind. A file that may not be
// written (read-only) is refused, as os.Create refuses it. The replacement keeps
// the permissions of the file it replaces, and its owner and group where
// it may (run as root, always); a symbolic link is followed
// and its target replaced (a dangling one is written through, as
// os.Create would). A path that exists and is not a regular file (a
// device such as /dev/stdout, a FIFO) cannot be replaced by a rename and
// is written in place; so is a file that is a mount point (bind-mounted),
// once the export is complete (a stop signal while it is copied leaves it
// cut short). flag names the flag in errors about the path
// itself, which are wrong arguments (badInput); write's errors name
// path, not the temporary file.
func writeReplacing(flag, path string, write func(io.Writer) error) error {
	target := path
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		t, err := filepath.EvalSymlinks(path)
		if err != nil {
			// Dangling (or a loop): os.Create creates the target, or
			// says why not.
			return writeInPlace(flag, path, write)
		}
		target = t
	}
	fi, statErr := os.Stat(target)
	if statErr == nil && !fi.Mode().IsRegular() || statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
		return writeInPlace(flag, path, write)
	}
	exists := statErr == nil
	if exists {
		// A file we may not write is refused, as os.Create refuses it:
		// one its owner made read-only (chmod a-w) is not replaced
		// behind their back, though the directory would let a rename
		// do it. Root may write any file.
		if err := unix.Faccessat(unix.AT_FDCWD, target, unix.W_OK, unix.AT_EACCESS); err != nil {
			return badInput(fmt.Errorf("%s: %w", flag, &fs.PathError{Op: "open", Path: path, Err: err}))
		}
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	// Guarded before the file exists: a signal between its creation and
	// the guard would leave it. The name is set once it is created.
	var mu sync.Mutex
	tmp := ""
	unguard := undoOnSignal(func() {
		mu.Lock()
		defer mu.Unlock()
		if tmp != "" {
			os.Remove(tmp)
		}
	})
	defer unguard()
	perm := fs.FileMode(0o666) // as os.Create: the umask applies
	if exists {
		perm = 0o600 // set to the replaced file's below
	}
	var f *os.File
	var err error
	mu.Lock()
	// The temporary file is named after FILE, up to 64 bytes of its name
	// (whole characters): a name of up to 255 bytes is valid, and the
	// temporary file's adds 19.
	short := base
	if len(short) > 64 {
		short = strings.ToValidUTF8(short[:64], "")
	}
	for range 100 {
		name := filepath.Join(dir, "."+short+".tmp-"+strconv.FormatUint(rand.Uint64(), 36))
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			tmp = name
		}
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	mu.Unlock()
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		if exists {
			return badInput(fmt.Errorf("%s: %s is replaced only whole, through a new file beside it, which cannot be made in %s: %w", flag, path, filepath.Clean(dir), err))
		}
		// The message os.Create would give.
		return badInput(fmt.Errorf("%s: %w", flag, &fs.PathError{Op: "open", Path: path, Err: err}))
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == tmp {
			pe.Path = path
		}
		return err
	}
	if exists {
		// The replaced file's owner and group, as far as we may give
		// them (root may; others keep the group if they are in it): as
		// GNU sed -i, errors ignored. Before the mode, which a chown
		// may clear bits of.
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			if f.Chown(int(st.Uid), int(st.Gid)) != nil {
				f.Chown(-1, int(st.Gid))
			}
		}
		if err := f.Chmod(fi.Mode().Perm()); err != nil {
			return fail(err)
		}
	}
	if err := write(f); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("close %s: %w", path, err)
	}
	if beforeReplace != nil {
		beforeReplace()
	}
	if err := os.Rename(tmp, target); err != nil {
		if errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.EXDEV) {
			// target is a mount point (a file bind-mounted into a
			// container, as docker -v mounts one), which no rename
			// replaces: the finished export is copied into it.
			err := copyInto(path, target, tmp)
			os.Remove(tmp)
			return err
		}
		os.Remove(tmp)
		var le *os.LinkError
		if errors.As(err, &le) {
			err = le.Err
		}
		return fmt.Errorf("replace %s: %w", path, err)
	}
	return nil
}

// copyInto writes the content of file from into target in place, for a
// target a rename cannot replace. path names target in errors.
func copyInto(path, target, from string) error {
	r, err := os.Open(from)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.OpenFile(target, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	return nil
}

// writeInPlace writes to a path that is no regular file (a device, a
// FIFO): it cannot be replaced, and is never removed, whatever happens
// (-o /dev/full as root once deleted the device).
func writeInPlace(flag, path string, write func(io.Writer) error) error {
	w, err := os.Create(path)
	if err != nil {
		// A path that cannot be written is a wrong argument.
		return badInput(fmt.Errorf("%s: %w", flag, err))
	}
	if err := write(w); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
