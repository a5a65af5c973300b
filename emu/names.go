package emu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/edgefabric/edgefabric/topo"
)

// Errors of the emulator, wrapped with context.
var (
	ErrNotRoot     = errors.New("the emulator needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN): run as root")
	ErrBadLabName  = errors.New("bad lab name")
	ErrLabExists   = errors.New("lab already exists")
	ErrNoLab       = errors.New("no such lab")
	ErrUnknownNode = errors.New("unknown node")
	ErrNoLink      = errors.New("no link between the nodes")
	ErrNotHost     = errors.New("not a host")
	ErrBadOption   = errors.New("bad option")
	ErrDaemon      = errors.New("lab daemon")
	ErrLabDown     = errors.New("lab is shutting down")
	// ErrElementPanic: an element panicked (a bug), and the lab was
	// taken down; Down reports it.
	ErrElementPanic = errors.New("element panicked")
	ErrNotReady     = errors.New("fabric not ready")
	// ErrInterrupted: Up's context was cancelled (a signal to the
	// process building the lab, or down stopping it). It is also
	// context.Canceled.
	ErrInterrupted error = interrupted{}
)

type interrupted struct{}

func (interrupted) Error() string { return "interrupted (by a signal, or by edgefabric down)" }
func (interrupted) Unwrap() error { return context.Canceled }

// ctxErr is ctx.Err(), told as ErrInterrupted when it was cancelled.
func ctxErr(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return ErrInterrupted
	}
	return ctx.Err()
}

// CheckRoot returns ErrNotRoot unless euid is 0. Pass os.Geteuid().
func CheckRoot(euid int) error {
	if euid != 0 {
		return fmt.Errorf("emu: %w (effective uid %d)", ErrNotRoot, euid)
	}
	return nil
}

func checkRoot() error { return CheckRoot(os.Geteuid()) }

// Lab names are short and contain no '-', so that the prefix "ef-<lab>-"
// of one lab is never a prefix of another lab's names ("ef-a-" against lab
// "a-b" would otherwise match "ef-a-b-h1").
var labNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_]{0,15}$`)

// ValidateName checks a lab name: 1..16 characters of [a-z0-9_], starting
// with a letter or digit.
func ValidateName(name string) error {
	if !labNameRE.MatchString(name) {
		return fmt.Errorf("emu: %w %q: use 1-16 characters of a-z, 0-9 and _ (no '-'), starting with a letter or digit", ErrBadLabName, name)
	}
	return nil
}

// Prefix returns the prefix of every object of lab name.
func Prefix(name string) string { return "ef-" + name + "-" }

// ifNameRE is what a file's port name must be to name a switch's
// interface: a Linux interface name (at most 15 bytes, no '/', ':' or
// space) of the characters interface names usually have.
var ifNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,15}$`)

// switchIfNames returns the interface names of switch n's connected ports
// (port p at p-1) when the topology file named every one of them with a
// usable Linux interface name (a containerlab lab's e1-1, Ethernet1), so
// that the lab's switches carry the lab file's names; nil otherwise, and
// they are eth<port>. Names are unique per node (topo checks it); br0 and
// lo are taken inside the namespace.
func switchIfNames(g *topo.Graph, n topo.NodeID) []string {
	if !g.HasPortNames() || g.Node(n).Kind != topo.Switch {
		return nil
	}
	ports := g.Ports(n)
	names := make([]string, len(ports))
	for i, l := range ports {
		if l == topo.NoLink {
			continue
		}
		name := g.PortName(n, topo.Port(i+1))
		if !ifNameRE.MatchString(name) || name == "." || name == ".." || name == "br0" || name == "lo" {
			return nil
		}
		names[i] = name
	}
	return names
}

// nodeNameRE is what may appear in a namespace name as is.
var nodeNameRE = regexp.MustCompile(`^[A-Za-z0-9_.]{1,40}$`)

// nsName returns the namespace of node n in lab name: the prefix and the
// node's name, or "n<id>" when the node's name is unfit for a file name.
func nsName(lab string, g *topo.Graph, n topo.NodeID) string {
	name := g.Node(n).Name
	if !nodeNameRE.MatchString(name) || name == "." || name == ".." {
		name = fmt.Sprintf("n%d", n)
	}
	return Prefix(lab) + name
}

// checkNamespaces refuses a topology two of whose nodes would share a
// namespace (a name unfit for a file name becomes "n<id>", which another
// node may already be called). The prefix is the same for both, so this
// holds for any lab name; CheckScheme runs it before anything is built.
func checkNamespaces(g *topo.Graph) error {
	seen := make(map[string]topo.NodeID, g.NumNodes())
	for i := range g.NumNodes() {
		n := topo.NodeID(i)
		ns := nsName("", g, n)
		if other, dup := seen[ns]; dup {
			return fmt.Errorf("emu: nodes %q and %q map to the same namespace suffix %s (names of up to 40 letters, digits, '_' and '.' are kept, others become n<id>): rename one: %w",
				g.Node(other).Name, g.Node(n).Name, strings.TrimPrefix(ns, Prefix("")), ErrBadOption)
		}
		seen[ns] = n
	}
	return nil
}

func sortStrings(s []string) { sort.Strings(s) }
