package main

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/topo"
)

// TestTopoShowRefusesHugeAndNonFiles: a topology file beyond the size cap
// and something that is no file at all (a socket here; /dev/zero is a
// device, refused alike) are bad input: exit 2 with one line, at once.
// /dev/zero was read for a gigabyte first.
func TestTopoShowRefusesHugeAndNonFiles(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.yaml")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(topo.MaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, c := range []struct{ path, want string }{
		{huge, "edgefabric: topo: " + huge + ": topology too large: file of 67108865 bytes, larger than 67108864\n"},
		{sock, "edgefabric: topo: " + sock + ": not a regular file or a pipe (a socket)\n"},
		{dir, "edgefabric: topo: " + dir + ": not a regular file or a pipe (a directory)\n"},
	} {
		start := time.Now()
		code, out, errOut := topoCLI("topo", "show", c.path)
		if code != 2 || out != "" || errOut != c.want {
			t.Errorf("topo show %s: exit %d, stdout %q, stderr\n got  %q\n want %q", c.path, code, out, errOut, c.want)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("topo show %s took %v to refuse it", c.path, took)
		}
	}
}
