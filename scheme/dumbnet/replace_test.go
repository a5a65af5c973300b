package dumbnet_test

import (
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/topo"
)

// gatedEnv sends only while on is set.
type gatedEnv struct {
	element.Env
	on *bool
}

func (e gatedEnv) Send(p element.Port, f []byte) {
	if *e.on {
		e.Env.Send(p, f)
	}
}

// replaced is a switch node whose hardware is swapped: old works until
// swapped is set, repl (another ID) from then on. Both follow the ports'
// states; only the one in place sends.
type replaced struct {
	old, repl     element.Element
	oldOn, replOn bool
}

func (r *replaced) Attach(env element.Env, ports []element.PortInfo) {
	r.oldOn = true
	r.old.Attach(gatedEnv{env, &r.oldOn}, ports)
	r.repl.Attach(gatedEnv{env, &r.replOn}, ports)
}

func (r *replaced) LinkChange(p element.Port, up bool) {
	r.old.LinkChange(p, up)
	r.repl.LinkChange(p, up)
}

func (r *replaced) Receive(p element.Port, f []byte) {
	switch {
	case r.oldOn:
		r.old.Receive(p, f)
	case r.replOn:
		r.repl.Receive(p, f)
	}
}

// TestReplacedSwitchFound: fattree:4's edge switch s20 (hosts h15 and h16)
// fails after discovery (every pair has pinged) and is replaced, 1.5 s
// later, by a switch with another ID on the same cables. Its neighbours'
// ports come up; their links fail verification (the far end's ID is not
// s20's), so the ports are rescanned and find the new switch, its links
// and its hosts. The topology is the fabric's with the new ID in s20's
// place, s20 gone (not even down), and every pair answers. Before, h15
// and h16 answering at the new switch claimed MACs placed at s20, an
// identity conflict: they stayed at s20, held failed, and no one reached
// them.
func TestReplacedSwitchFound(t *testing.T) {
	g, err := topo.Parse("fattree:4", 1)
	if err != nil {
		t.Fatal(err)
	}
	s20, _ := g.Lookup("s20")
	const newID = 0x0e0000000099
	var r *replaced
	l := newLabWrapped(t, g, map[string]string{"controller": "h1"}, func(n topo.NodeID, e element.Element) element.Element {
		if n == s20 {
			r = &replaced{old: e, repl: dumbnet.NewSwitch(newID, 0, 0)}
			return r
		}
		return e
	}, true)
	l.discover(t)
	if ok, total, bad := l.pingAll(t); ok != total {
		t.Fatalf("before: %d/%d pairs; silent: %s", ok, total, failedPairs(bad))
	}
	t0 := l.s.Now()
	l.s.At(t0, func() { _ = l.s.SetNode(s20, false) })
	l.s.At(t0+1500*element.Millisecond, func() {
		r.oldOn, r.replOn = false, true
		_ = l.s.SetNode(s20, true)
	})
	l.s.Run(t0 + 4*element.Second)
	want, _ := dumbnet.Expected(g)
	old := dumbnet.SwitchID(s20)
	for i, id := range want.Switches {
		if id == old {
			want.Switches[i] = newID
		}
	}
	slices.Sort(want.Switches)
	for i := range want.Links {
		if want.Links[i].A == old {
			want.Links[i].A = newID
		}
		if want.Links[i].B == old {
			want.Links[i].B = newID
		}
	}
	for i := range want.Hosts {
		if want.Hosts[i].Switch == old {
			want.Hosts[i].Switch = newID
		}
	}
	c := l.f.Controller()
	if d := c.Topology().Diff(want); len(d) > 0 {
		t.Fatalf("topology differs: %v\ncounters %v", d, l.f.Agent(l.f.ControllerNode()).Counters())
	}
	if ok, total, bad := l.pingAll(t); ok != total {
		t.Fatalf("after: %d/%d pairs; silent: %s", ok, total, failedPairs(bad))
	}
	if n := l.f.Agent(l.f.ControllerNode()).Counters()["hosts_moved"]; n != 2 {
		t.Errorf("hosts_moved %d, want 2", n)
	}
}
