package dumbnet_test

import (
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/topo"
)

// mute wraps a switch that, while on, forwards and answers nothing: its
// links stay up, so no neighbour reports them.
type mute struct {
	element.Element
	on bool
}

func (m *mute) Receive(p element.Port, frame []byte) {
	if !m.on {
		m.Element.Receive(p, frame)
	}
}

// TestFailedSwitchRemoved fails aggregation switch s11 of fattree:4 after
// discovery (every pair has pinged): "failed", the switch is down and its
// four links with it, so its neighbours report them; "mute", it stops
// forwarding and answering with its links up, and the periodic audit
// (every second here) finds them silent. Once every link of it is booked
// down, the controller's topology lists s11 as down and no longer among
// its switches (§4.2: "if a DumbNet switch fails, all the neighbor
// switches will report link failure, and the switch will be removed from
// the topology"), its links down, and every pair still answers; once the
// switch works again, its links are verified (or audited) up and it is
// back: the topology is the fabric's again. Before, a failed switch stayed
// listed among the switches.
func TestFailedSwitchRemoved(t *testing.T) {
	for _, name := range []string{"failed", "mute"} {
		t.Run(name, func(t *testing.T) {
			g, err := topo.Parse("fattree:4", 1)
			if err != nil {
				t.Fatal(err)
			}
			s11, _ := g.Lookup("s11")
			m := &mute{}
			l := newLabWrapped(t, g, map[string]string{"controller": "h1", "auditevery": "1s"}, func(n topo.NodeID, e element.Element) element.Element {
				if n == s11 {
					m.Element = e
					return m
				}
				return e
			}, true)
			l.discover(t)
			want, _ := dumbnet.Expected(g)
			if ok, total, bad := l.pingAll(t); ok != total {
				t.Fatalf("before: %d/%d pairs; silent: %s", ok, total, failedPairs(bad))
			}
			id := dumbnet.SwitchID(s11)
			set := func(working bool) {
				if name == "failed" {
					_ = l.s.SetNode(s11, working)
				} else {
					m.on = !working
				}
			}
			t0 := l.s.Now()
			l.s.At(t0, func() { set(false) })
			l.s.Run(t0 + 2500*element.Millisecond)
			c := l.f.Controller()
			for _, top := range []*dumbnet.Topology{c.Topology(), c.Snapshot()} {
				if slices.Contains(top.Switches, id) || !slices.Equal(top.Down, []uint64{id}) || len(top.Switches) != len(want.Switches)-1 {
					t.Fatalf("s11 failed: %d switches (s11 among them: %v), down %x; want s11 down, not among the %d others",
						len(top.Switches), slices.Contains(top.Switches, id), top.Down, len(want.Switches)-1)
				}
				for _, k := range top.Links {
					if k.Up == (k.A == id || k.B == id) {
						t.Fatalf("s11 failed: link %+v", k)
					}
				}
			}
			if ok, total, bad := l.pingAll(t); ok != total {
				t.Fatalf("s11 failed: %d/%d pairs; silent: %s", ok, total, failedPairs(bad))
			}
			t1 := l.s.Now()
			l.s.At(t1, func() { set(true) })
			l.s.Run(t1 + 2500*element.Millisecond)
			for _, top := range []*dumbnet.Topology{c.Topology(), c.Snapshot()} {
				if d := top.Diff(want); len(d) > 0 {
					t.Fatalf("s11 back: topology differs: %v", d)
				}
			}
			if ok, total, bad := l.pingAll(t); ok != total {
				t.Fatalf("s11 back: %d/%d pairs; silent: %s", ok, total, failedPairs(bad))
			}
			cc := l.f.Agent(l.f.ControllerNode()).Counters()
			if cc["ctrl_switches_down"] != 1 || cc["ctrl_switches_back"] != 1 {
				t.Errorf("ctrl_switches_down %d, ctrl_switches_back %d; want 1 and 1", cc["ctrl_switches_down"], cc["ctrl_switches_back"])
			}
		})
	}
}
