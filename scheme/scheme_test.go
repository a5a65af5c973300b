package scheme

import (
	"errors"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

type noFabric struct{}

func (noFabric) Element(topo.NodeID) element.Element { return nil }

func newNo(*topo.Graph, Options) (Fabric, error) { return noFabric{}, nil }

func TestRegistry(t *testing.T) {
	var r Registry
	if err := r.Register(Scheme{Name: "b", New: newNo}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(Scheme{Name: "a", New: newNo}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(Scheme{Name: "a", New: newNo}); err == nil {
		t.Fatal("registering a twice succeeded")
	}
	if err := r.Register(Scheme{Name: "c"}); err == nil {
		t.Fatal("registering without a constructor succeeded")
	}
	if s, err := r.Get("a"); err != nil || s.Name != "a" {
		t.Fatalf("Get(a) = %v, %v", s, err)
	}
	_, err := r.Get("zzz")
	if !errors.Is(err, ErrUnknownScheme) || !strings.Contains(err.Error(), "known: a, b") {
		t.Fatalf("Get(zzz) error = %v, want unknown scheme listing a, b", err)
	}
}
