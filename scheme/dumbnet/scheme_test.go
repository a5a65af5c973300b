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
		{"search": "never"},
		{"controller": "s1"},
		{"controller": "nobody"},
	} {
		if _, err := dumbnet.New(g, scheme.Options{Params: p}); !errors.Is(err, dumbnet.ErrBadParam) {
			t.Errorf("New(%v) = %v, want ErrBadParam", p, err)
		}
	}
	f, err := dumbnet.New(g, scheme.Options{Params: map[string]string{"controller": "h7", "k": "2", "search": "off", "mpls": "true"}})
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
