package scheme

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// Fabric is a scheme instantiated on one topology: the elements that run on
// its nodes.
type Fabric interface {
	// Element returns the element that runs on node n, or nil when nothing
	// of the scheme runs there (a plain host whose NIC is cabled straight to
	// the fabric).
	//
	// On a switch (or a relaying host) it is the data plane, attached with
	// the node's ports 1..N as numbered in the topology.
	//
	// On a host it is the host agent (SPAIN driver, DumbNet agent, ...): it
	// is attached with the host's NICs as ports 1..N, as in the topology,
	// plus one more port N+1 marked PortInfo.Local that faces the host's own
	// unmodified stack (a TAP device in the emulator, the simulated stack in
	// the simulator). A controller that runs on a host is part of that
	// host's agent.
	Element(n topo.NodeID) element.Element
}

// Settler is implemented by a Fabric whose elements take time of their own
// before they forward anything (802.1D's listening and learning, max age):
// SettleTime bounds it, so that an engine waiting for the fabric to be
// ready by default waits at least that long, and can say why when a given
// bound is shorter.
type Settler interface {
	SettleTime() element.Time
}

// Options carries what every scheme constructor may use.
type Options struct {
	// Seed for any randomness the scheme's offline computations need.
	// Elements get their run-time randomness from element.Env.Rand.
	Seed uint64
	// Params are scheme-specific settings given as key=value on the
	// command line or in a scenario ("k=4", "flowlets=true").
	Params map[string]string
}

// Scheme describes one fabric scheme.
type Scheme struct {
	// Name is the scheme's command-line name ("stp", "dumbnet").
	Name string
	// Summary is a one-line description for --help and listings.
	Summary string
	// New instantiates the scheme on a topology. It returns an error for a
	// topology or parameter the scheme cannot handle.
	New func(g *topo.Graph, opts Options) (Fabric, error)
}

// ErrUnknownScheme is returned by Registry.Get; the message lists the known
// schemes.
var ErrUnknownScheme = errors.New("unknown scheme")

// Registry maps scheme names to schemes. Register each scheme once.
type Registry struct {
	m map[string]*Scheme
}

// Register adds s. Registering a name twice, or a scheme without a name or
// constructor, is an error.
func (r *Registry) Register(s Scheme) error {
	if s.Name == "" || s.New == nil {
		return fmt.Errorf("scheme: register %q: name and constructor are required", s.Name)
	}
	if r.m == nil {
		r.m = make(map[string]*Scheme)
	}
	if _, dup := r.m[s.Name]; dup {
		return fmt.Errorf("scheme: %q registered twice", s.Name)
	}
	r.m[s.Name] = &s
	return nil
}

// Get returns the named scheme.
func (r *Registry) Get(name string) (*Scheme, error) {
	if s, ok := r.m[name]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("scheme: %w %q (known: %s)", ErrUnknownScheme, name, strings.Join(r.Names(), ", "))
}

// Names lists the registered schemes in sorted order.
func (r *Registry) Names() []string {
	return slices.Sorted(maps.Keys(r.m))
}
