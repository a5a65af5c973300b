package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/edgefabric/edgefabric/internal/outfile"
)

// beforeReplace, when set, runs after writeReplacing has written the new
// file and before it renames it into place. Only the test binary sets it
// (TestMain), to hold the process there while a test signals it.
var beforeReplace func()

// writeReplacing writes what write produces to the file path names, as
// a whole or not at all (outfile: written into a temporary file beside
// it, renamed into place once complete), so that an export that fails
// half-way, or a stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) while it
// runs, leaves it untouched, and leaves no temporary file behind. The
// replacement keeps the file's permissions, and its owner and group where
// it may; a symbolic link is followed and its target replaced; a file
// that may not be written (read-only) is refused, as os.Create refuses
// it; a file that is a mount point (bind-mounted) has the finished export
// copied into it (a stop signal during the copy leaves it cut short). A
// path that exists and is not a regular file (a device such as
// /dev/stdout, a FIFO) cannot be replaced by a rename and is written in
// place. flag names the flag in errors about the path itself, which are
// wrong arguments (badInput); write's errors name path, not the
// temporary file.
func writeReplacing(flag, path string, write func(io.Writer) error) error {
	// Guarded before the temporary file exists: a signal between its
	// creation and the guard would leave it.
	var mu sync.Mutex
	var f *outfile.File
	unguard := undoOnSignal(func() {
		mu.Lock()
		defer mu.Unlock()
		if f != nil {
			os.Remove(f.TempName())
		}
	})
	defer unguard()
	mu.Lock()
	created, err := outfile.Create(path)
	f = created
	mu.Unlock()
	if errors.Is(err, outfile.ErrNotRegular) {
		return writeInPlace(flag, path, write)
	}
	if err != nil {
		return badInput(fmt.Errorf("%s: %w", flag, err))
	}
	defer f.Discard()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if beforeReplace != nil {
		beforeReplace()
	}
	return f.Commit()
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
