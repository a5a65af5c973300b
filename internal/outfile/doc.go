// Package outfile replaces the files edgefabric writes for its user
// (topo export -o, plan spain --out, repro --out) whole or not at all,
// keeping what the user set on them.
//
// The new content goes into a temporary file beside the file it
// replaces, which is renamed over it only once complete:
//
//	f, err := outfile.Create(path) // refuses what os.Create would refuse
//	if err != nil {
//		return err
//	}
//	defer f.Discard()               // a failure leaves no temporary file
//	if err := write(f); err != nil { // write errors name path, not the temporary file
//		return err
//	}
//	if err := f.Close(); err != nil {
//		return err
//	}
//	return f.Commit()
//
// A symbolic link at path is followed, and its target (which a dangling
// link names, as os.Create creates it) replaced, the link kept. A file
// replaced keeps its permissions, and its owner and group where the
// process may give them (as root, always); a new file is 0644 less the
// umask. A file the process may not write (made read-only) is refused,
// as os.Create refuses it. A file that is a mount point (bind-mounted
// into a container), which no rename replaces, gets the finished content
// copied into it. A path that is no regular file (a directory, a device,
// a pipe, also through /dev/stdout's links) is refused with ErrNotRegular:
// the caller writes a device in place or refuses it.
//
// A Group writes several files side by side and puts them in place
// together, once all are written, one after the other.
package outfile
