package scenario

import (
	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/topo"
)

// learn is a test scheme: a plain learning bridge (no spanning tree, so
// only for loop-free topologies) on every switch, nothing on hosts. It lets
// the runner be tested without depending on scheme/stp's timers.
type learnFabric struct{ g *topo.Graph }

func (f *learnFabric) Element(n topo.NodeID) element.Element {
	if f.g.Node(n).Kind != topo.Switch {
		return nil
	}
	return &bridge{}
}

type bridge struct {
	env   element.Env
	ports int
	fdb   map[[6]byte]element.Port
	up    []bool
	n     uint64
}

func (b *bridge) Attach(env element.Env, ports []element.PortInfo) {
	b.env, b.ports, b.fdb = env, len(ports), map[[6]byte]element.Port{}
	b.up = make([]bool, len(ports)+1)
	for _, p := range ports {
		b.up[p.Port] = p.Up
	}
}

func (b *bridge) Receive(p element.Port, f []byte) {
	if len(f) < 14 {
		return
	}
	b.n++
	var dst, src [6]byte
	copy(dst[:], f[0:6])
	copy(src[:], f[6:12])
	b.fdb[src] = p
	if out, ok := b.fdb[dst]; ok {
		if out != p && b.up[out] {
			b.env.Send(out, append([]byte(nil), f...))
		}
		return
	}
	for q := 1; q <= b.ports; q++ {
		if element.Port(q) != p && b.up[q] {
			b.env.Send(element.Port(q), append([]byte(nil), f...))
		}
	}
}

func (b *bridge) LinkChange(p element.Port, up bool) {
	b.up[p] = up
	for k, v := range b.fdb {
		if v == p {
			delete(b.fdb, k)
		}
	}
}

func (b *bridge) Counters() map[string]uint64 { return map[string]uint64{"frames": b.n} }

// agentFabric is learn plus a pass-through agent on every host, which
// counts the frames it relays under a name the host stack uses too.
type agentFabric struct{ learnFabric }

func (f *agentFabric) Element(n topo.NodeID) element.Element {
	if f.g.Node(n).Kind == topo.Host {
		return &relayAgent{}
	}
	return f.learnFabric.Element(n)
}

type relayAgent struct {
	env   element.Env
	local element.Port
	n     uint64
}

func (a *relayAgent) Attach(env element.Env, ports []element.PortInfo) {
	a.env = env
	for _, p := range ports {
		if p.Local {
			a.local = p.Port
		}
	}
}

func (a *relayAgent) Receive(p element.Port, f []byte) {
	a.n++
	out := a.local
	if p == a.local {
		out = 1
	}
	a.env.Send(out, append([]byte(nil), f...))
}

func (a *relayAgent) LinkChange(element.Port, bool) {}

func (a *relayAgent) Counters() map[string]uint64 { return map[string]uint64{"rx_frames": a.n} }

func testRegistry() *scheme.Registry {
	r := &scheme.Registry{}
	if err := r.Register(scheme.Scheme{Name: "learn", Summary: "test learning bridge",
		New: func(g *topo.Graph, o scheme.Options) (scheme.Fabric, error) { return &learnFabric{g}, nil }}); err != nil {
		panic(err)
	}
	if err := r.Register(scheme.Scheme{Name: "agent", Summary: "test learning bridge with host agents",
		New: func(g *topo.Graph, o scheme.Options) (scheme.Fabric, error) { return &agentFabric{learnFabric{g}}, nil }}); err != nil {
		panic(err)
	}
	return r
}
