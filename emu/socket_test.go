package emu

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/edgefabric/edgefabric/scheme"
)

// A socket from Lab.Socket lives in the node's namespace: it binds the
// host's address, which no other namespace has, and a socket this process
// opens itself cannot.
func TestLabSocketInNamespace(t *testing.T) {
	needRoot(t)
	g := star(t, 2)
	l := upLab(t, g, KernelBridge, Options{Scheme: scheme.Options{Params: map[string]string{"stp": "off"}}})
	h1, _ := g.Lookup("h1")
	_, ip, err := g.HostAddr(h1)
	if err != nil {
		t.Fatal(err)
	}
	sa := &unix.SockaddrInet4{Addr: ip.Addr().As4()}
	fd, err := l.Socket("h1", unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, sa); err != nil {
		t.Fatalf("bind %v in h1: %v", ip.Addr(), err)
	}
	own, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(own)
	if err := unix.Bind(own, sa); !errors.Is(err, unix.EADDRNOTAVAIL) {
		t.Fatalf("bind %v outside h1: %v, want EADDRNOTAVAIL", ip.Addr(), err)
	}
	if _, err := l.Socket("nosuch", unix.AF_INET, unix.SOCK_DGRAM, 0); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("unknown node: %v", err)
	}
	if _, err := l.Socket("h1", unix.AF_INET, 999, 0); err == nil {
		t.Fatal("a bad socket type was accepted")
	}
}
