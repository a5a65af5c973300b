package emu

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// othersMayConnect reports whether a user other than the owner (root)
// may connect to the socket at path: write permission on it, and search
// permission on every directory from its own up to top.
func othersMayConnect(t *testing.T, path, top string) bool {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o002 == 0 {
		return false
	}
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		di, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if di.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == top || d == filepath.Dir(d) {
			return true
		}
	}
}

// TestControlSocketNeverOpen: with umask 0 the control socket is bound
// with mode 0777; it was bound at its final path, in the lab's directory
// (0755), and set to 0600 only then, so that anyone could connect in
// between and keep the connection (and then fail links or stop the lab).
// Now no one but root can reach it until it is 0600, and it ends at its
// path, 0600, answering.
func TestControlSocketNeverOpen(t *testing.T) {
	old := unix.Umask(0)
	defer unix.Umask(old)
	top := t.TempDir()
	if err := os.Chmod(top, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(top, "ctl.sock")
	bound := false
	socketBound = func(p string) {
		bound = true
		if othersMayConnect(t, p, top) {
			t.Errorf("control socket %s: others may connect before its mode is set", p)
		}
	}
	defer func() { socketBound = nil }()
	ln, err := listenPrivate(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if !bound {
		t.Fatal("socketBound not called")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("socket at %s: %v, %v; want a socket, mode 0600", path, fi.Mode(), err)
	}
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Write([]byte("x"))
			c.Close()
		}
	}()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("connect to the moved socket: %v", err)
	}
	defer c.Close()
	if b := make([]byte, 1); func() bool { n, _ := c.Read(b); return n != 1 || b[0] != 'x' }() {
		t.Error("no answer through the moved socket")
	}
	if ents, _ := os.ReadDir(top); len(ents) != 1 {
		t.Errorf("left in the directory: %v, want the socket only", ents)
	}
}
