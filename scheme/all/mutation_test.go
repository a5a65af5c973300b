package all

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/scheme/stp"
	"github.com/edgefabric/edgefabric/topo"
)

// Every scheme edgefabric ships is in the registry, under its name, with a
// constructor.
func TestRegistryHoldsEveryScheme(t *testing.T) {
	r := Registry()
	for _, name := range []string{"dumbnet", "stp"} {
		s, err := r.Get(name)
		if err != nil || s.Name != name || s.New == nil || s.Summary == "" {
			t.Errorf("Get(%q) = %+v, %v; want the scheme with a constructor and a summary", name, s, err)
		}
	}
}

// A registrar that fails is a programming error: Registry panics, naming
// it, instead of returning a registry without the scheme.
func TestRegistryPanicsOnFailedRegistrar(t *testing.T) {
	saved := registrars
	defer func() { registrars = saved }()
	registrars = []func(*scheme.Registry) error{stp.Register, dumbnet.Register, stp.Register}
	defer func() {
		msg := fmt.Sprint(recover())
		if !strings.Contains(msg, "scheme/all") || !strings.Contains(msg, `"stp" registered twice`) {
			t.Errorf("recovered %q, want the panic of a scheme registered twice", msg)
		}
	}()
	Registry()
}

func newNo(*topo.Graph, scheme.Options) (scheme.Fabric, error) { return nil, nil }

// scheme.Registry refuses a scheme without a name, even with a
// constructor, and does not register it.
func TestRegisterNeedsName(t *testing.T) {
	var r scheme.Registry
	if err := r.Register(scheme.Scheme{New: newNo}); err == nil {
		t.Fatal("registering a scheme without a name succeeded")
	}
	if len(r.Names()) != 0 {
		t.Fatalf("Names() = %v after a refused registration", r.Names())
	}
}

// scheme.Registry.Names is sorted whatever the map's order (twelve names:
// a random order is sorted once in 479,001,600), and so is the list an
// unknown name's error gives.
func TestNamesSorted(t *testing.T) {
	var r scheme.Registry
	var want []string
	for i := 12; i > 0; i-- {
		name := fmt.Sprintf("s%02d", i)
		if err := r.Register(scheme.Scheme{Name: name, New: newNo}); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	slices.Sort(want)
	if got := r.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	if _, err := r.Get("zzz"); err == nil || !strings.Contains(err.Error(), "(known: "+strings.Join(want, ", ")+")") {
		t.Fatalf("Get(zzz) error = %v, want the sorted list", err)
	}
}
