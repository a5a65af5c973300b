package emu

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

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

// TestUpRSTPFailover runs the stp scheme with protocol=rstp on ring:3 with
// real hosts: up returns once every bridge says its tree settled, and a
// ping from h1 to h5 (on s3) running while s3's root port fails loses
// nothing: the alternate port takes over at once (802.1D-1998 would stop
// the stream for two forward delays).
func TestUpRSTPFailover(t *testing.T) {
	needRoot(t)
	g, err := topo.Parse("ring:3", 1)
	if err != nil {
		t.Fatal(err)
	}
	l := upLab(t, g, "stp", Options{Registry: all.Registry(), Scheme: scheme.Options{Params: map[string]string{"protocol": "rstp"}}})
	for _, n := range l.Status().Nodes {
		for _, p := range n.Ports {
			if n.Kind == "switch" && !strings.HasPrefix(p.STP, "forwarding") && p.STP != "discarding/alternate" {
				t.Errorf("%s port %d: %q right after up", n.Name, p.Port, p.STP)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan []byte, 1)
	go func() {
		out, _ := l.Exec(ctx, "h1", "ping", "-c", "30", "-i", "0.1", "-W", "1", "10.0.0.5")
		done <- out
	}()
	time.Sleep(time.Second)
	if err := l.SetLink("s1", "s3", false); err != nil {
		t.Fatal(err)
	}
	out := <-done
	if !strings.Contains(string(out), "30 received") {
		t.Fatalf("ping across the failover:\n%s", out)
	}
}
