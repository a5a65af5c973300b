package sim

import (
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// randStack sends one frame at start whose bytes come from its Env's
// random source, so that a run shows which seed each stack got.
type randStack struct{ rec }

func (r *randStack) Attach(env element.Env, ports []element.PortInfo) {
	r.rec.Attach(env, ports)
	env.After(0, func() {
		f := frameOf(64, 0)
		for i := range f {
			f[i] = byte(env.Rand().Uint32())
		}
		env.Send(1, f)
	})
}

// TestPlaceHostOrder: the order of PlaceHost calls does not change the
// run. A stack behind an agent took its node index (its random source's
// seed, its name in the trace hash) from the call order.
func TestPlaceHostOrder(t *testing.T) {
	run := func(order []topo.NodeID) (uint64, [][]byte) {
		g := line(t, 2, 1_000_000_000, us)
		s := mustNew(t, g, Options{Seed: 7})
		stacks := map[topo.NodeID]*randStack{}
		for _, n := range order {
			stacks[n] = &randStack{}
			must(t, s.PlaceHost(n, &rec{fwd: map[element.Port]element.Port{1: 2, 2: 1}}, stacks[n]))
		}
		for _, n := range g.Nodes(topo.Switch) {
			must(t, s.Place(n, &rec{fwd: map[element.Port]element.Port{1: 2, 2: 1}}))
		}
		s.RunAll()
		var frames [][]byte
		for _, n := range g.Nodes(topo.Host) {
			if s.Stack(n) != stacks[n] {
				t.Fatalf("Stack(%d) is not the stack placed there", n)
			}
			if len(stacks[n].got) != 1 {
				t.Fatalf("stack %d got %d frames", n, len(stacks[n].got))
			}
			frames = append(frames, stacks[n].got[0].frame)
		}
		return s.TraceHash(), frames
	}
	g := line(t, 2, 1_000_000_000, us)
	hosts := g.Nodes(topo.Host)
	h1, f1 := run(hosts)
	h2, f2 := run([]topo.NodeID{hosts[1], hosts[0]})
	if h1 != h2 || string(f1[0]) != string(f2[0]) || string(f1[1]) != string(f2[1]) {
		t.Fatalf("PlaceHost order changed the run: trace hash %x vs %x", h1, h2)
	}
}
