package emu

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"

	"github.com/vishvananda/netlink"
)

// ExecIn runs argv in the named namespace and returns its combined output.
// A non-zero exit is an *exec.ExitError, wrapped.
func ExecIn(ctx context.Context, ns string, argv ...string) ([]byte, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("emu: exec: %w: no command", ErrBadOption)
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	// Held: a process that dies meanwhile takes the command with it.
	release, err := StartInHeld(ns, cmd)
	if err != nil {
		return nil, fmt.Errorf("emu: exec in %s: %w", ns, err)
	}
	defer release()
	if err := cmd.Wait(); err != nil {
		return out.Bytes(), fmt.Errorf("emu: exec %q in %s: %w", argv, ns, err)
	}
	return out.Bytes(), nil
}

// linkByNameHere and linkUpHere use the netlink package's default handle,
// whose sockets open in the calling thread's namespace.
func linkByNameHere(name string) (netlink.Link, error) {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return nil, fmt.Errorf("link %s: %w", name, err)
	}
	return l, nil
}

func linkUpHere(l netlink.Link) error {
	if err := netlink.LinkSetUp(l); err != nil {
		return fmt.Errorf("link %s up: %w", l.Attrs().Name, err)
	}
	return nil
}
