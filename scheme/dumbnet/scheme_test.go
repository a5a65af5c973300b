package dumbnet_test

import (
	"errors"
	"testing"

	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/topo"
)

func TestNewRejectsBadParams(t *testing.T) {
	g, err := topo.Parse("fattree:4", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []map[string]string{
		{"bogus": "1"},
		{"k": "0"},
		{"k": "x"},
		{"s": "-1"},
		{"eps": "99"},
		{"hops": "0"},
		{"suppress": "-1s"},
		{"flowlets": "maybe"},
		{"maxports": "255"},
		{"probetimeout": "soon"},
		{"holdtime": "a while"},
		{"holdtime": "-1s"},
		{"search": "never"},
		{"controller": "s1"},
		{"controller": "nobody"},
	} {
		if _, err := dumbnet.New(g, scheme.Options{Params: p}); !errors.Is(err, dumbnet.ErrBadParam) {
			t.Errorf("New(%v) = %v, want ErrBadParam", p, err)
		}
	}
	f, err := dumbnet.New(g, scheme.Options{Params: map[string]string{"controller": "h7", "k": "2", "search": "off", "mpls": "true", "holdtime": "500ms"}})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := g.Lookup("h7"); f.ControllerNode() != n || f.Controller() == nil {
		t.Fatalf("controller on %v", f.ControllerNode())
	}
	r := &scheme.Registry{}
	if err := dumbnet.Register(r); err != nil {
		t.Fatal(err)
	}
	if err := dumbnet.Register(r); err == nil {
		t.Fatal("registered twice without error")
	}
}

func TestNewRejectsRelayHosts(t *testing.T) {
	g, err := topo.Parse("bcube:4,1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dumbnet.New(g, scheme.Options{}); err == nil {
		t.Fatal("BCube's relaying hosts accepted")
	}
}

// TestBadParamMessages: each parameter's error says what it wants, in the
// words of the parameter list (no strconv or time package internals), and
// an empty controller is refused rather than read as the default.
func TestBadParamMessages(t *testing.T) {
	g, err := topo.Parse("fattree:4", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ k, v, want string }{
		{"k", "abc", `dumbnet: bad parameter: k="abc": want an integer 1..64`},
		{"k", "65", `dumbnet: bad parameter: k="65": want an integer 1..64`},
		{"eps", "-1", `dumbnet: bad parameter: eps="-1": want an integer 0..16`},
		{"mtu", "0", `dumbnet: bad parameter: mtu="0": want an integer 576..65535`},
		{"mtu", "10", `dumbnet: bad parameter: mtu="10": want an integer 576..65535`},
		{"mpls", "yes", `dumbnet: bad parameter: mpls="yes": want true or false`},
		{"flowletgap", "soon", `dumbnet: bad parameter: flowletgap="soon": want a duration like 200ms or 2s`},
		{"search", "never", `dumbnet: bad parameter: search="never": want a duration like 200ms or 2s, or off`},
		{"search", "0s", `dumbnet: bad parameter: search="0s": want a positive duration, or off`},
		{"controller", "", `dumbnet: bad parameter: controller="": want the name of a host`},
	} {
		_, err := dumbnet.New(g, scheme.Options{Params: map[string]string{c.k: c.v}})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s=%q: %v\nwant %s", c.k, c.v, err, c.want)
		}
	}
	if _, err := dumbnet.New(g, scheme.Options{Params: map[string]string{"mtu": " 9000 ", "mpls": "1"}}); err != nil {
		t.Errorf("mtu with blanks, mpls=1: %v", err)
	}
}
