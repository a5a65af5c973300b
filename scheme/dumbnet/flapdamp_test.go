package dumbnet

import (
	"errors"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// flapAgent is squareAgent (B, the controller, is its one destination)
// with C and D as flood neighbours, and cfg's damping.
func flapAgent(t *testing.T, cfg Config) (*Agent, *fakeEnv) {
	t.Helper()
	a, env := squareAgent(t, 4)
	a.cfg.FlapChanges, a.cfg.FlapWindow, a.cfg.FlapHold = cfg.FlapChanges, cfg.FlapWindow, cfg.FlapHold
	a.cfg.defaults()
	a.setNeighbors(&wire.DumbNetNeighbors{Version: 1, Neighbors: []wire.DumbNetNeighbor{
		{MAC: macC, Path: []uint8{5}},
		{MAC: macD, Path: []uint8{6}},
	}})
	env.take()
	return a, env
}

// floodedTo lists whom frames went to.
func floodedTo(t *testing.T, env *fakeEnv) map[wire.MAC]int {
	t.Helper()
	got := map[wire.MAC]int{}
	for _, f := range framesTo(t, env.take()) {
		got[f.dst]++
	}
	return got
}

// The review finding "no host-side flap damping" (§4.2: hosts "suppress
// alarms if the link flapping lasts longer" than the switches' 1-s
// window): a port whose state changes a fifth time within 10 s is held
// down. Its changes are still applied (failover included) and told to
// the controller, but not flooded to the other hosts, until it has been
// stable for 30 s; every change meanwhile starts the hold over.
func TestFlappingPortNotFlooded(t *testing.T) {
	a, env := flapAgent(t, Config{})
	primary := []uint8{1, 2, 9} // over switch 2's port 2
	seq := uint32(0)
	change := func(after element.Time) map[wire.MAC]int {
		env.advance(after)
		seq++
		st := wire.PortDown
		if seq%2 == 0 {
			st = wire.PortUp
		}
		a.Receive(1, portStatusFrame(2, 2, st, 4, seq))
		if a.evState[portID{2, 2}] != st {
			t.Fatalf("change %d: state %v not applied", seq, a.evState[portID{2, 2}])
		}
		return floodedTo(t, env)
	}
	everyone := func(got map[wire.MAC]int) bool { return got[macB] == 1 && got[macC] == 1 && got[macD] == 1 }
	onlyController := func(got map[wire.MAC]int) bool { return len(got) == 1 && got[macB] == 1 }
	for k := 1; k <= 4; k++ {
		if got := change(1500 * element.Millisecond); !everyone(got) {
			t.Fatalf("change %d flooded to %v, want B, C and D", k, got)
		}
	}
	// The fifth within 6 s: a failure, applied and failed over (the
	// controller's patch had put the link back), told to the controller
	// only.
	a.topoPatch(&wire.DumbNetTopoPatch{Version: 2, Links: []wire.DumbNetLink{{A: 2, APort: 2, B: 4, BPort: 1, Flags: wire.LinkUp}}})
	if err := a.cache.Verify(primary, macB); err != nil {
		t.Fatalf("after the up patch: %v", err)
	}
	env.take()
	failovers := a.Counters()["failovers"]
	if got := change(1500 * element.Millisecond); !onlyController(got) {
		t.Fatalf("fifth change flooded to %v, want the controller only", got)
	}
	if err := a.cache.Verify(primary, macB); err == nil || a.Counters()["failovers"] != failovers+1 {
		t.Fatalf("the damped failure was not applied: verify %v, failovers %d", err, a.Counters()["failovers"])
	}
	// Still flapping: held; 29 s later still held (the hold started over).
	if got := change(5 * element.Second); !onlyController(got) {
		t.Fatalf("sixth change flooded to %v", got)
	}
	if got := change(29 * element.Second); !onlyController(got) {
		t.Fatalf("change 29 s after the last flooded to %v", got)
	}
	c := a.Counters()
	if c["flap_holddowns"] != 1 || c["notify_damped"] != 3 {
		t.Fatalf("flap_holddowns %d, notify_damped %d; want 1, 3", c["flap_holddowns"], c["notify_damped"])
	}
	// Stable for 30 s: flooded again.
	if got := change(30 * element.Second); !everyone(got) {
		t.Fatalf("change after 30 s of calm flooded to %v, want B, C and D", got)
	}
	// Another port is not held with it.
	a.Receive(1, portStatusFrame(3, 7, wire.PortDown, 4, 100))
	if got := floodedTo(t, env); !everyone(got) {
		t.Fatalf("another port's failure flooded to %v", got)
	}
}

// A host damps what it hears through the flood as what it hears from the
// switch: the changes of a held port are applied, not flooded on.
func TestFlappingPortFromFloodNotReflooded(t *testing.T) {
	a, env := flapAgent(t, Config{FlapChanges: 2, FlapWindow: 5 * element.Second, FlapHold: 10 * element.Second})
	macE := wire.MAC{0x02, 0, 0, 0, 0, 0xe}
	for k := uint32(1); k <= 4; k++ {
		env.advance(element.Second)
		st := wire.PortDown
		if k%2 == 0 {
			st = wire.PortUp
		}
		a.Receive(1, ctrl(t, macA, macE, &wire.DumbNetHostNotify{Origin: macE, Seq: k, SwitchID: 2, Port: 2, State: st, SwitchSeq: k}))
		got := floodedTo(t, env)
		if a.evState[portID{2, 2}] != st {
			t.Fatalf("change %d not applied", k)
		}
		if want := 3; k >= 3 {
			if len(got) != 1 || got[macB] != 1 {
				t.Fatalf("change %d (held) flooded to %v, want the controller only", k, got)
			}
		} else if len(got) != want {
			t.Fatalf("change %d flooded to %v, want B, C and D", k, got)
		}
	}
	if c := a.Counters(); c["flap_holddowns"] != 1 || c["notify_damped"] != 2 {
		t.Fatalf("counters %v", c)
	}
}

// The controller's host tells no one else while it damps a port: its
// controller books the changes and patches every host.
func TestFlappingPortOnControllerHost(t *testing.T) {
	a, env, want := discoveredController(t, "line:3", 0, Config{FlapChanges: 1})
	l := want.Links[0]
	for k := uint32(1); k <= 2; k++ {
		env.advance(2 * element.Second)
		st := wire.PortDown
		if k == 2 {
			st = wire.PortUp
		}
		before := a.Counters()["notify_flooded"]
		a.Receive(1, portStatusFrame(l.A, l.APort, st, 4, k))
		flooded := a.Counters()["notify_flooded"] - before
		if k == 1 && flooded == 0 {
			t.Fatal("first change not flooded")
		}
		if k == 2 && flooded != 0 {
			t.Fatalf("held change flooded %d frames", flooded)
		}
	}
	if c := a.Counters(); c["notify_damped"] != 1 {
		t.Fatalf("notify_damped %d, want 1", c["notify_damped"])
	}
}

// flapchanges=off never damps.
func TestFlapDampingOff(t *testing.T) {
	a, env := flapAgent(t, Config{FlapChanges: -1})
	for k := uint32(1); k <= 12; k++ {
		env.advance(1100 * element.Millisecond)
		st := wire.PortDown
		if k%2 == 0 {
			st = wire.PortUp
		}
		a.Receive(1, portStatusFrame(2, 2, st, 4, k))
		if got := floodedTo(t, env); len(got) != 3 {
			t.Fatalf("change %d flooded to %v", k, got)
		}
	}
	if c := a.Counters(); c["flap_holddowns"] != 0 || c["notify_damped"] != 0 || len(a.flaps) != 0 {
		t.Fatalf("counters %v, %d records", c, len(a.flaps))
	}
}

// The damping records are bounded as the other per-port tables are:
// only forged notifications, each naming a new port, fill them.
func TestFlapRecordsBounded(t *testing.T) {
	a, _ := newTestAgent()
	for i := range maxFlapStates + 10 {
		a.Receive(1, portStatusFrame(uint64(1<<40+i), 1, wire.PortDown, 4, 1))
	}
	if n := len(a.flaps); n > maxFlapStates {
		t.Fatalf("%d flap records, at most %d", n, maxFlapStates)
	}
	if a.Counters()["flap_state_forgotten"] != 1 {
		t.Fatalf("flap_state_forgotten %d, want 1", a.Counters()["flap_state_forgotten"])
	}
}

// The damping's parameters: flapchanges (1..64 or off), flapwindow and
// flaphold (durations); defaults 4, 10 s and 30 s.
func TestFlapParams(t *testing.T) {
	g, err := topo.Parse("line:2", 1)
	if err != nil {
		t.Fatal(err)
	}
	cfgOf := func(params map[string]string) (Config, error) {
		f, err := New(g, scheme.Options{Params: params})
		if err != nil {
			return Config{}, err
		}
		return f.agents[g.Nodes(topo.Host)[0]].cfg, nil
	}
	c, err := cfgOf(nil)
	if err != nil || c.FlapChanges != 4 || c.FlapWindow != 10*element.Second || c.FlapHold != 30*element.Second {
		t.Fatalf("defaults %d %v %v, %v", c.FlapChanges, c.FlapWindow, c.FlapHold, err)
	}
	c, err = cfgOf(map[string]string{"flapchanges": "2", "flapwindow": "3s", "flaphold": "500ms"})
	if err != nil || c.FlapChanges != 2 || c.FlapWindow != 3*element.Second || c.FlapHold != 500*element.Millisecond {
		t.Fatalf("set %d %v %v, %v", c.FlapChanges, c.FlapWindow, c.FlapHold, err)
	}
	if c, err = cfgOf(map[string]string{"flapchanges": "off"}); err != nil || c.FlapChanges >= 0 {
		t.Fatalf("off: %d, %v", c.FlapChanges, err)
	}
	for _, p := range []map[string]string{{"flapchanges": "0"}, {"flapchanges": "65"}, {"flapchanges": "x"}, {"flapwindow": "0s"}, {"flaphold": "-1s"}, {"flaphold": "off"}} {
		if _, err := cfgOf(p); !errors.Is(err, ErrBadParam) {
			t.Errorf("%v: %v, want ErrBadParam", p, err)
		}
	}
}
