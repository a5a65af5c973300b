package topo

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// Boundary tests: each pins one limit at its edge (last valid value, first
// invalid one) or one refusal, so that moving a comparison by one or
// dropping a check fails a test. They came out of mutation testing.

func TestBuilderRefuses(t *testing.T) {
	two := func() (*Builder, NodeID, NodeID) {
		b := NewBuilder("t")
		return b, b.AddNode("a", Switch), b.AddNode("b", Switch)
	}
	b := NewBuilder("t")
	b.AddNode("a", Switch)
	b.AddNode("a", Host)
	if !errors.Is(b.Err(), ErrDuplicateName) {
		t.Errorf("duplicate name: %v", b.Err())
	}
	cases := []struct {
		name string
		f    func(b *Builder, a, c NodeID)
		want error
	}{
		{"port 0", func(b *Builder, a, c NodeID) { b.ConnectPorts(End{a, 0}, End{c, 1}, DefaultRate, DefaultDelay) }, ErrBadPort},
		{"rate 0", func(b *Builder, a, c NodeID) { b.ConnectPorts(End{a, 1}, End{c, 1}, 0, DefaultDelay) }, ErrBadValue},
		{"delay -1", func(b *Builder, a, c NodeID) { b.ConnectPorts(End{a, 1}, End{c, 1}, DefaultRate, -1) }, ErrBadValue},
		{"port in use", func(b *Builder, a, c NodeID) {
			b.ConnectPorts(End{a, 1}, End{c, 1}, DefaultRate, DefaultDelay)
			b.ConnectPorts(End{a, 1}, End{c, 2}, DefaultRate, DefaultDelay)
		}, ErrPortInUse},
		{"65536 ports", func(b *Builder, a, c NodeID) { b.Node(a).Ports = MaxPorts + 1 }, ErrBadPort},
	}
	for _, c := range cases {
		b, a, s := two()
		c.f(b, a, s)
		if _, err := b.Graph(); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// The edges that are allowed: delay 0, rate 1, MaxPorts ports.
	b, a, s := two()
	b.ConnectPorts(End{a, 1}, End{s, MaxPorts}, 1, 0)
	if _, err := b.Graph(); err != nil {
		t.Errorf("rate 1, delay 0, port %d: %v", MaxPorts, err)
	}
}

// TestBuilderTotalPorts declares one port more than MaxTotalPorts with
// unconnected ports, which costs nothing until Graph.
func TestBuilderTotalPorts(t *testing.T) {
	b := NewBuilder("t")
	left := MaxTotalPorts + 1
	for i := 0; left > 0; i++ {
		n := b.AddNode("s"+strings.Repeat("x", i%3)+string(rune('A'+i%26))+itoa(i), Switch)
		p := min(left, MaxPorts)
		b.Node(n).Ports = p
		left -= p
	}
	if _, err := b.Graph(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("%d ports: %v, want ErrTooLarge", MaxTotalPorts+1, err)
	}
}

// TestBuilderTotalPortSlots connects ports so high that the port tables
// would pass MaxTotalPorts by one slot. It allocates about 100 MB.
func TestBuilderTotalPortSlots(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates ~100 MB")
	}
	b := NewBuilder("t")
	hub := b.AddNode("hub", Switch)
	b.ConnectPorts(End{hub, MaxPorts}, End{b.AddNode("x", Switch), MaxPorts}, DefaultRate, DefaultDelay)
	used := 2 * MaxPorts
	i := 0
	for used+MaxPorts <= MaxTotalPorts {
		n := b.AddNode("n"+itoa(i), Switch)
		i++
		b.ConnectPorts(End{n, MaxPorts}, End{b.AddNode("n"+itoa(i), Switch), 1}, DefaultRate, DefaultDelay)
		i++
		used += MaxPorts + 1
	}
	// used <= MaxTotalPorts < used+MaxPorts: fill up to exactly the limit.
	if rest := MaxTotalPorts - used; rest > 0 {
		n := b.AddNode("n"+itoa(i), Switch)
		i++
		b.ConnectPorts(End{n, Port(rest - 1)}, End{b.AddNode("n"+itoa(i), Switch), 1}, DefaultRate, DefaultDelay)
	}
	if err := b.Err(); err != nil {
		t.Fatalf("exactly %d ports: %v", MaxTotalPorts, err)
	}
	n := b.AddNode("last", Switch)
	b.ConnectPorts(End{n, 1}, End{hub, 1}, DefaultRate, DefaultDelay)
	if !errors.Is(b.Err(), ErrTooLarge) {
		t.Fatalf("%d ports: %v, want ErrTooLarge", MaxTotalPorts+1, b.Err())
	}
}

func TestPortLinkOutOfRange(t *testing.T) {
	g, err := Parse("line:2", 0)
	if err != nil {
		t.Fatal(err)
	}
	for id := range NodeID(g.NumNodes()) {
		n := len(g.Ports(id))
		for _, p := range []Port{0, Port(n + 1)} {
			if l, ok := g.PortLink(id, p); ok {
				t.Errorf("%s port %d: link %d", g.Node(id).Name, p, l)
			}
			if _, ok := g.Peer(id, p); ok {
				t.Errorf("%s port %d: peer", g.Node(id).Name, p)
			}
		}
	}
}

func TestNativeLimits(t *testing.T) {
	head := "name: t\nnodes:\n  - {name: s1, kind: switch}\n  - {name: s2, kind: switch}\n"
	cases := []struct {
		name, yaml, at string
		want           error
	}{
		{"65536 ports", "name: t\nnodes:\n  - {name: s1, kind: switch, ports: 65536}\n", "t.yaml:3: nodes[0]", ErrBadPort},
		{"port 65536", head + "links:\n  - [s1:65536, s2:1]\n", "t.yaml:6", ErrBadPort},
		{"no node name", head + "links:\n  - [':3', s2:1]\n", "no node name", ErrBadValue},
	}
	for _, c := range cases {
		if _, err := Decode([]byte(c.yaml), "t.yaml", LoadOptions{}); !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.at) {
			t.Errorf("%s: %v, want %v at %q", c.name, err, c.want, c.at)
		}
	}
	ok := "name: t\nnodes:\n  - {name: s1, kind: switch, ports: 65535}\n  - {name: s2, kind: switch}\nlinks:\n  - [s1:65535, s2:1]\n"
	if _, err := Decode([]byte(ok), "t.yaml", LoadOptions{}); err != nil {
		t.Errorf("port 65535: %v", err)
	}
}

// TestWriteYAMLDefaultTie: with as many 1G links as 10G links the default
// written is the smaller rate (and delay), whatever the map order.
func TestWriteYAMLDefaultTie(t *testing.T) {
	b := NewBuilder("t")
	s1, s2, s3 := b.AddNode("s1", Switch), b.AddNode("s2", Switch), b.AddNode("s3", Switch)
	b.ConnectPorts(End{s1, 1}, End{s2, 1}, 10*Rate1G, 2000)
	b.ConnectPorts(End{s2, 2}, End{s3, 1}, Rate1G, 1000)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		var buf bytes.Buffer
		if err := WriteYAML(&buf, g); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "defaults: {rate: 1G, delay: 1ns}") {
			t.Fatalf("defaults not the smaller rate and delay:\n%s", buf.String())
		}
		if !strings.Contains(buf.String(), "rate: 10G") {
			t.Fatalf("10G link lost:\n%s", buf.String())
		}
	}
}

func TestZooBoundaries(t *testing.T) {
	// Refused up front, not when the builder later finds too many ports.
	if _, err := Decode([]byte(zoo), "z.graphml", LoadOptions{ZooHosts: MaxPorts + 1}); !errors.Is(err, ErrBadPort) || !strings.Contains(err.Error(), "hosts per switch") {
		t.Errorf("%d hosts per switch: %v", MaxPorts+1, err)
	}
	for _, v := range []string{"0.5", "0"} {
		z := strings.Replace(zoo, "10000000000.0", v, 1)
		// Refused as a bad LinkSpeedRaw, not later as a zero rate.
		if _, err := Decode([]byte(z), "z.graphml", LoadOptions{ZooHosts: 1}); !errors.Is(err, ErrBadValue) || !strings.Contains(err.Error(), "LinkSpeedRaw") {
			t.Errorf("LinkSpeedRaw %s: %v, want ErrBadValue at LinkSpeedRaw", v, err)
		}
	}
	z := strings.Replace(zoo, "10000000000.0", "1", 1)
	if g, err := Decode([]byte(z), "z.graphml", LoadOptions{ZooHosts: 1}); err != nil {
		t.Errorf("LinkSpeedRaw 1: %v", err)
	} else if g.Link(0).Rate != 1 {
		t.Errorf("LinkSpeedRaw 1: rate %d", g.Link(0).Rate)
	}
}

func TestUnitBoundaries(t *testing.T) {
	for _, s := range []string{"0.4", "0.6", "1001T", "2000T"} {
		if r, err := ParseRate(s); !errors.Is(err, ErrBadValue) {
			t.Errorf("ParseRate(%q) = %d, %v; want ErrBadValue", s, r, err)
		}
	}
	for s, want := range map[string]int64{"1": 1, "1000T": 1e15} {
		if r, err := ParseRate(s); err != nil || r != want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", s, r, err, want)
		}
	}
	if _, err := ParseDelay("3600s"); err != nil {
		t.Errorf("1h: %v", err)
	}
	for _, s := range []string{"3600.5s", "3600001ms"} {
		if d, err := ParseDelay(s); !errors.Is(err, ErrBadValue) {
			t.Errorf("ParseDelay(%q) = %d, %v; want ErrBadValue", s, d, err)
		}
	}
}

func TestHostByIPOtherNet(t *testing.T) {
	g, err := Parse("line:2", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g.HostByIP(netip.MustParseAddr("10.0.0.1")); !ok {
		t.Fatal("10.0.0.1 not found")
	}
	for _, a := range []string{"11.0.0.1", "192.0.0.1", "::ffff:10.0.0.1"} {
		if id, ok := g.HostByIP(netip.MustParseAddr(a)); ok {
			t.Errorf("%s: host %d", a, id)
		}
	}
}

func TestSpecSizeLimit(t *testing.T) {
	g, err := Parse("hyperx:3,1", 0)
	if err != nil {
		t.Fatal(err)
	}
	n, l := float64(g.NumNodes()), float64(g.NumLinks())
	if _, err := parse("hyperx:3,1", 0, n, l); err != nil {
		t.Fatalf("at the limits: %v", err)
	}
	if _, err := parse("hyperx:3,1", 0, n-1, l); !errors.Is(err, ErrTooLarge) {
		t.Errorf("one node over: %v", err)
	}
	if _, err := parse("hyperx:3,1", 0, n, l-1); !errors.Is(err, ErrTooLarge) {
		t.Errorf("one link over: %v", err)
	}
	if _, err := HyperX(1, MaxPorts+1); err == nil || !strings.Contains(err.Error(), "more than 65535 ports") {
		t.Errorf("HyperX(1, 65536): %v", err)
	}
}
