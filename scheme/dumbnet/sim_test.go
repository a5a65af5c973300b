package dumbnet_test

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/host"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/sim"
	"github.com/edgefabric/edgefabric/topo"
)

// lab is a DumbNet fabric placed in the simulator with a host stack on
// every host.
type lab struct {
	g     *topo.Graph
	s     *sim.Sim
	f     *dumbnet.Fabric
	hosts map[topo.NodeID]*hostT
	wrap  func(topo.NodeID, element.Element) element.Element
}

type hostT = host.Host

func newLab(t testing.TB, spec string, params map[string]string) *lab {
	t.Helper()
	g, err := topo.Parse(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	return newLabGraph(t, g, params)
}

func newLabGraph(t testing.TB, g *topo.Graph, params map[string]string) *lab {
	return newLabGraphWrap(t, g, params, nil)
}

// newLabGraphWrap lets wrap replace the element placed on a host.
func newLabGraphWrap(t testing.TB, g *topo.Graph, params map[string]string, wrap func(topo.NodeID, element.Element) element.Element) *lab {
	t.Helper()
	return newLabWrapped(t, g, params, wrap, false)
}

// newLabWrapped is newLabGraphWrap that also wraps switches if switches.
func newLabWrapped(t testing.TB, g *topo.Graph, params map[string]string, wrap func(topo.NodeID, element.Element) element.Element, switches bool) *lab {
	t.Helper()
	f, err := dumbnet.New(g, scheme.Options{Seed: 1, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(g, sim.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	l := &lab{g: g, s: s, f: f, hosts: map[topo.NodeID]*host.Host{}, wrap: wrap}
	for i := range g.NumNodes() {
		n := topo.NodeID(i)
		if g.Node(n).Kind == topo.Switch {
			e := f.Element(n)
			if switches {
				e = wrap(n, e)
			}
			if err := s.Place(n, e); err != nil {
				t.Fatal(err)
			}
			continue
		}
		l.placeHost(t, n)
	}
	return l
}

// placeHost puts a host stack behind the fabric's agent on host n.
func (l *lab) placeHost(t testing.TB, n topo.NodeID) {
	t.Helper()
	mac, ip, err := l.g.HostAddr(n)
	if err != nil {
		t.Fatal(err)
	}
	h := host.New(host.Config{Name: l.g.Node(n).Name, MAC: mac, IP: ip})
	l.hosts[n] = h
	agent := l.f.Element(n)
	if l.wrap != nil {
		agent = l.wrap(n, agent)
	}
	if err := l.s.PlaceHost(n, agent, h); err != nil {
		t.Fatal(err)
	}
}

// discover runs the simulation until the controller has finished.
func (l *lab) discover(t testing.TB) { l.discoverWithin(t, 2*element.Second) }

func (l *lab) discoverWithin(t testing.TB, limit element.Time) {
	t.Helper()
	c := l.f.Controller()
	for step := 0; !c.Done(); step++ {
		if element.Time(step)*element.Millisecond > limit {
			t.Fatalf("discovery not done after %v", l.s.Now())
		}
		l.s.Run(l.s.Now() + element.Millisecond)
	}
}

func (l *lab) name(n topo.NodeID) string { return l.g.Node(n).Name }

func TestDiscoveryExact(t *testing.T) {
	for _, spec := range []string{"fattree:4", "dumbnet-fig1", "ring:4", "line:3", "leafspine:2,3,2"} {
		t.Run(spec, func(t *testing.T) {
			l := newLab(t, spec, nil)
			l.discover(t)
			got := l.f.Controller().Topology()
			want, err := dumbnet.Expected(l.g)
			if err != nil {
				t.Fatal(err)
			}
			if d := got.Diff(want); len(d) > 0 {
				t.Fatalf("discovered topology differs:\n%s", strings.Join(d, "\n"))
			}
			c := l.f.Controller()
			if spec == "dumbnet-fig1" {
				// §4.1's ambiguity: S1 and S2 share the return path 1-9, so
				// bounces through the wrong spine happen and verification
				// must reject them.
				if n := l.f.Agent(l.f.ControllerNode()).Counters()["probe_ambiguous_rejected"]; n == 0 {
					t.Fatal("no ambiguous bounce was rejected on dumbnet-fig1")
				}
			}
			t.Logf("%s: %d switches, %d links, %d hosts in %v (%d rounds, %d probes)", spec,
				len(got.Switches), len(got.Links), len(got.Hosts), c.DoneAt(), c.Rounds(), c.Probes())
		})
	}
}

// pingAll pings every ordered pair of hosts once and returns the pairs
// that failed.
func (l *lab) pingAll(t testing.TB) (ok, total int, failed []string) {
	t.Helper()
	type run struct {
		src, dst topo.NodeID
		app      *host.PingApp
	}
	var runs []run
	var hosts []topo.NodeID
	for _, h := range l.g.Nodes(topo.Host) {
		if l.hosts[h] != nil {
			hosts = append(hosts, h)
		}
	}
	l.s.At(l.s.Now(), func() {
		for _, a := range hosts {
			for _, b := range hosts {
				if a == b {
					continue
				}
				_, ip, _ := l.g.HostAddr(b)
				app := l.hosts[a].PingWith(ip.Addr(), host.PingOptions{Count: 2, Interval: 100 * element.Millisecond, Timeout: 500 * element.Millisecond})
				runs = append(runs, run{a, b, app})
			}
		}
	})
	l.s.Run(l.s.Now() + 2*element.Second)
	for _, r := range runs {
		total++
		res := r.app.Result()
		if res.Received >= 1 {
			ok++
		} else {
			failed = append(failed, fmt.Sprintf("%s->%s (%+v)", l.name(r.src), l.name(r.dst), res))
		}
	}
	return ok, total, failed
}

func TestAllPairsPing(t *testing.T) {
	for _, spec := range []string{"fattree:4", "dumbnet-fig1"} {
		t.Run(spec, func(t *testing.T) {
			l := newLab(t, spec, nil)
			l.discover(t)
			ok, total, failed := l.pingAll(t)
			if ok != total {
				t.Fatalf("%d/%d pairs answered; failed: %v", ok, total, failed)
			}
			// Every host got its flood neighbours at discovery's end and
			// once more after its first path query.
			hosts := uint64(len(l.g.Nodes(topo.Host)))
			c := l.f.Agent(l.f.ControllerNode()).Counters()
			if c["ctrl_neighbor_lists"] != hosts || c["ctrl_neighbor_lists_resent"] != hosts {
				t.Errorf("neighbour lists: %d sent, %d resent; want %d each", c["ctrl_neighbor_lists"], c["ctrl_neighbor_lists_resent"], hosts)
			}
		})
	}
}

var _ = netip.Addr{}

// SwitchIDOf is dumbnet.SwitchID, short for tests.
func SwitchIDOf(n topo.NodeID) uint64 { return dumbnet.SwitchID(n) }
