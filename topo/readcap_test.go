package topo

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadRefusesHugeFile: a regular file larger than MaxFileSize is
// refused by its size, before it is read (the sparse file here reads as
// zeros); the cap was 1 GiB, which a file read into memory could not
// survive decoding.
func TestLoadRefusesHugeFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "huge.yaml")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	start := time.Now()
	_, err = Load(p)
	if !errors.Is(err, ErrTooLarge) || err.Error() != "topo: "+p+": topology too large: file of 67108865 bytes, larger than 67108864" {
		t.Errorf("Load(a file of MaxFileSize+1 bytes): %v, want ErrTooLarge", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Load took %v to refuse a file by its size", took)
	}
	if MaxFileSize > 256<<20 {
		t.Errorf("MaxFileSize %d: a file that size takes gigabytes to decode", MaxFileSize)
	}
}

// TestLoadPipeStopsAtCap: a pipe that does not end is read up to
// MaxFileSize and one byte more, then refused; the writer finds the pipe
// closed, having written little more than the cap.
func TestLoadPipeStopsAtCap(t *testing.T) {
	p := filepath.Join(t.TempDir(), "endless")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	const chunk = 1 << 20
	written := make(chan int64, 1)
	go func() {
		var n int64
		defer func() { written <- n }()
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		buf := bytes.Repeat([]byte("# endless\n"), chunk/10)
		for n < 4*MaxFileSize {
			k, err := w.Write(buf)
			n += int64(k)
			if err != nil {
				return // EPIPE: the reader has gone
			}
		}
	}()
	_, err := Load(p)
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("Load(an endless pipe): %v, want ErrTooLarge", err)
	}
	// What the pipe holds beyond what was read: its buffer (64 KiB by
	// default, at most 1 MiB) and the write under way.
	if n := <-written; n > MaxFileSize+2*chunk+(1<<20) {
		t.Errorf("the writer got %d bytes into the pipe before Load refused it, want about %d", n, MaxFileSize)
	}
}

// TestLoadPipe: a topology given through a pipe is read as a file is.
func TestLoadPipe(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "topo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	var yaml bytes.Buffer
	g0, err := Parse("line:3", 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteYAML(&yaml, g0); err != nil {
		t.Fatal(err)
	}
	go func() {
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		io.Copy(w, &yaml)
		w.Close()
	}()
	// By its path, and by the bare name that looks like no file: Resolve
	// took a pipe for a spec ("not a file and not a spec").
	t.Chdir(dir)
	g, err := Resolve("topo", 1)
	if err != nil {
		t.Fatalf("Resolve(a named pipe): %v", err)
	}
	if g.NumNodes() != g0.NumNodes() || g.NumLinks() != g0.NumLinks() {
		t.Errorf("read %d nodes, %d links through a pipe, want %d, %d", g.NumNodes(), g.NumLinks(), g0.NumNodes(), g0.NumLinks())
	}
}

// TestLoadRefusesNonFiles: a directory or a socket (like a device such as
// /dev/zero, which was read for a gigabyte) is refused at once, by what
// it is, without being opened.
func TestLoadRefusesNonFiles(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for p, what := range map[string]string{dir: "a directory", sock: "a socket"} {
		_, err := Load(p)
		if want := "topo: " + p + ": not a regular file or a pipe (" + what + ")"; !errors.Is(err, ErrNotRegular) || err.Error() != want {
			t.Errorf("Load(%s): %v, want %q", what, err, want)
		}
		_, err = Resolve(p, 1)
		if !errors.Is(err, ErrNotRegular) || !strings.HasSuffix(err.Error(), "("+what+")") {
			t.Errorf("Resolve(%s): %v, want ErrNotRegular", what, err)
		}
	}
}
