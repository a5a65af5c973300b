package emu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/scheme/all"
	"github.com/edgefabric/edgefabric/topo"
)

// statedBridge is a learning bridge that reports a state per port, as the
// stp element does.
type statedBridge struct{ learningBridge }

func (b *statedBridge) PortStateNames() map[element.Port]string {
	m := map[element.Port]string{}
	for p := range element.Port(3) {
		m[p+1] = fmt.Sprintf("state-of-%d", p+1)
	}
	return m
}

type statedFabric struct{ g *topo.Graph }

func (f *statedFabric) Element(n topo.NodeID) element.Element {
	if f.g.Node(n).Kind == topo.Switch {
		return &statedBridge{}
	}
	return nil
}

// TestStatusPortStates: status shows the port states an element reports
// (the stp element's state/role), as it shows the kernel bridge's. It
// showed them for kernel-bridge only: with the stp scheme an engineer could
// not see which port was blocked.
func TestStatusPortStates(t *testing.T) {
	needRoot(t)
	r := &scheme.Registry{}
	if err := r.Register(scheme.Scheme{Name: "stated", New: func(g *topo.Graph, _ scheme.Options) (scheme.Fabric, error) {
		return &statedFabric{g: g}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	l := upLab(t, star(t, 2), "stated", Options{Registry: r})
	for _, n := range l.Status().Nodes {
		if n.Kind != "switch" {
			continue
		}
		if len(n.Ports) != 2 {
			t.Fatalf("%s: %d ports", n.Name, len(n.Ports))
		}
		for _, p := range n.Ports {
			if want := fmt.Sprintf("state-of-%d", p.Port); p.STP != want {
				t.Errorf("%s port %d: stp %q, want %q", n.Name, p.Port, p.STP, want)
			}
		}
	}
}

// TestUpSTPOneHostWaitsForTree: with one host there is no pair to ping,
// so up used to return while the stp bridges still listened; the bridges
// are Readiers now, and up returns once every port forwards or blocks.
func TestUpSTPOneHostWaitsForTree(t *testing.T) {
	needRoot(t)
	params := map[string]string{"forward_delay": "4", "hello": "1", "max_age": "6"}
	l := upLab(t, star(t, 1), "stp", Options{Registry: all.Registry(), Scheme: scheme.Options{Params: params}})
	for _, n := range l.Status().Nodes {
		if n.Kind != "switch" {
			continue
		}
		for _, p := range n.Ports {
			if !strings.HasPrefix(p.STP, "forwarding") && !strings.HasPrefix(p.STP, "blocking") {
				t.Errorf("%s port %d: %q right after up", n.Name, p.Port, p.STP)
			}
		}
	}
}
