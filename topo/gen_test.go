package topo

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSpainTable3 checks every row of SPAIN Table 3 (§8): switches, fabric
// links and hosts, exactly as the paper prints them.
func TestSpainTable3(t *testing.T) {
	rows := []struct {
		spec                   string
		switches, links, hosts int
	}{
		{"fattree:4", 20, 32, 16},
		{"fattree:8", 80, 256, 128},
		{"fattree:16", 320, 2048, 1024},
		{"fattree:48", 2880, 55296, 27648},
		{"hyperx:3", 9, 18, 216},
		{"hyperx:4", 16, 48, 384},
		{"hyperx:8", 64, 448, 1536},
		{"hyperx:16", 256, 3840, 6144},
		{"ciscodc:2,2", 14, 31, 192},
		{"ciscodc:3,2", 20, 46, 288},
		{"ciscodc:4,3", 34, 81, 576},
		{"ciscodc:8,8", 146, 361, 3072},
		{"bcube:8,2", 16, 128, 64},
		{"bcube:48,2", 96, 4608, 2304},
		{"bcube:8,4", 2048, 16384, 4096},
	}
	for _, r := range rows {
		t.Run(r.spec, func(t *testing.T) {
			g, err := Parse(r.spec, 1)
			if err != nil {
				t.Fatal(err)
			}
			s := Stats(g)
			if s.Switches != r.switches || s.FabricLinks != r.links || s.Hosts != r.hosts {
				t.Errorf("got %d switches, %d fabric links, %d hosts; Table 3 says %d, %d, %d",
					s.Switches, s.FabricLinks, s.Hosts, r.switches, r.links, r.hosts)
			}
			checkWellFormed(t, g)
		})
	}
}

// checkWellFormed checks the invariants every generated graph keeps: ports
// and links agree both ways, the graph is connected, names are unique and
// follow the s/h convention or the topology's own.
func checkWellFormed(t *testing.T, g *Graph) {
	t.Helper()
	for l := range g.NumLinks() {
		lk := g.Link(LinkID(l))
		for _, e := range []End{lk.A, lk.B} {
			got, ok := g.PortLink(e.Node, e.Port)
			if !ok || got != LinkID(l) {
				t.Fatalf("link %d end %v: port table says %v, %v", l, e, got, ok)
			}
		}
		if lk.Rate <= 0 || lk.Delay < 0 {
			t.Fatalf("link %d: rate %d delay %d", l, lk.Rate, lk.Delay)
		}
	}
	for n := range g.NumNodes() {
		node := g.Node(NodeID(n))
		if len(g.Ports(NodeID(n))) != node.Ports {
			t.Fatalf("%s: %d port slots, Ports=%d", node.Name, len(g.Ports(NodeID(n))), node.Ports)
		}
		if id, ok := g.Lookup(node.Name); !ok || id != NodeID(n) {
			t.Fatalf("%s: lookup gives %v %v", node.Name, id, ok)
		}
	}
	if !g.Connected() {
		t.Fatal("not connected")
	}
}

// dense reports whether every node's ports 1..Ports are all connected.
func dense(g *Graph) string {
	for n := range g.NumNodes() {
		if g.Degree(NodeID(n)) != g.Node(NodeID(n)).Ports {
			return g.Node(NodeID(n)).Name
		}
	}
	return ""
}

func TestGenerators(t *testing.T) {
	cases := []struct {
		spec                                      string
		switches, hosts, fabric, hostLinks, maxDg int
		diameter                                  int
		denseOK                                   bool
		degrees                                   map[string]int // role or name -> degree
	}{
		{"fattree:2", 5, 2, 4, 2, 2, 4, true, nil},
		{"fattree:4", 20, 16, 32, 16, 4, 4, true, map[string]int{"core": 4, "agg": 4, "edge": 4}},
		{"leafspine:2,5,5", 7, 25, 10, 25, 7, 2, true, map[string]int{"spine": 5, "leaf": 7}},
		{"leafspine:4,2,0", 6, 0, 8, 0, 4, 2, true, nil},
		{"hyperx:3", 9, 216, 18, 216, 28, 2, true, nil},
		{"hyperx:4,1", 16, 16, 48, 16, 7, 2, true, nil},
		{"bcube:8,2", 16, 64, 128, 0, 8, 4, true, map[string]int{"level0": 8, "level1": 8, "server": 2}},
		{"bcube:2,3", 12, 8, 24, 0, 3, 6, true, map[string]int{"server": 3}},
		{"ciscodc:2,2", 14, 192, 31, 192, 27, 4, true, map[string]int{"core": 5, "agg": 7, "access": 27}},
		{"cube:3,3,3,1", 27, 27, 54, 27, 7, 6, true, nil},
		{"cube:2,2,2", 8, 80, 12, 80, 13, 3, true, nil},
		{"torus:4,4,4,1", 64, 64, 192, 64, 7, 6, true, nil},
		{"torus:2,3,1,2", 6, 12, 2*3/2*1 + 6, 12, 5, 2, true, nil},
		{"jellyfish:20,8,4", 20, 80, 40, 80, 8, -1, true, nil},
		{"line:1", 1, 2, 0, 2, 2, 0, true, nil},
		{"line:3", 3, 6, 2, 6, 4, 2, true, nil},
		{"ring:3", 3, 6, 3, 6, 4, 1, true, nil},
		{"ring:4", 4, 8, 4, 8, 4, 2, true, nil},
		{"spain-fig2", 7, 6, 15, 6, 6, 2, true, map[string]int{"root": 6, "edge": 5}},
		{"spain-testbed", 4, 80, 6, 80, 32, 1, true, map[string]int{"TS": 3, "S1": 26, "S2": 31, "S3": 32}},
		{"dumbnet-fig1", 5, 6, 6, 6, 4, 2, false, map[string]int{"S1": 4, "S2": 4, "S3": 4, "S4": 3, "S5": 3}},
		{"dumbnet-testbed", 7, 25, 10, 25, 7, 2, true, nil},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			g, err := Parse(c.spec, 7)
			if err != nil {
				t.Fatal(err)
			}
			checkWellFormed(t, g)
			s := Stats(g)
			if s.Switches != c.switches || s.Hosts != c.hosts || s.FabricLinks != c.fabric || s.HostLinks != c.hostLinks || s.MaxDegree != c.maxDg {
				t.Errorf("got %+v", s)
			}
			if c.diameter >= 0 && (s.Diameter != c.diameter || !s.DiameterExact) {
				t.Errorf("diameter %d (exact %v), want %d", s.Diameter, s.DiameterExact, c.diameter)
			}
			if n := dense(g); (n == "") != c.denseOK {
				t.Errorf("dense port numbering: first gap at %q, want dense=%v", n, c.denseOK)
			}
			for key, want := range c.degrees {
				for n := range g.NumNodes() {
					node := g.Node(NodeID(n))
					if node.Role == key || node.Name == key {
						if d := g.Degree(NodeID(n)); d != want {
							t.Errorf("%s (%s): degree %d, want %d", node.Name, node.Role, d, want)
						}
					}
				}
			}
			// names follow the convention: switches s1.., hosts h1.. in ID order
			if !strings.HasPrefix(c.spec, "spain-testbed") && !strings.HasPrefix(c.spec, "dumbnet-fig1") {
				si, hi := 0, 0
				for n := range g.NumNodes() {
					node := g.Node(NodeID(n))
					want := ""
					if node.Kind == Switch {
						si++
						want = "s" + itoa(si)
					} else {
						hi++
						want = "h" + itoa(hi)
						if g.HostIndex(NodeID(n)) != hi {
							t.Fatalf("%s: host index %d", node.Name, g.HostIndex(NodeID(n)))
						}
					}
					if node.Name != want {
						t.Fatalf("node %d named %q, want %q", n, node.Name, want)
					}
				}
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// peer returns "name:port" at the far end of name's port p.
func peer(t *testing.T, g *Graph, name string, p Port) string {
	t.Helper()
	id, ok := g.Lookup(name)
	if !ok {
		t.Fatalf("no node %q", name)
	}
	e, ok := g.Peer(id, p)
	if !ok {
		return ""
	}
	return g.Node(e.Node).Name + ":" + itoa(int(e.Port))
}

// TestFatTreePorts pins the documented port plan of fattree:4.
func TestFatTreePorts(t *testing.T) {
	g, err := FatTree(4)
	if err != nil {
		t.Fatal(err)
	}
	// s1..s4 cores, s5..s12 aggs (pod 0: s5,s6), s13..s20 edges (pod 0: s13,s14)
	want := map[string]string{
		"s13:1": "h1:1", "s13:2": "h2:1", "s13:3": "s5:1", "s13:4": "s6:1",
		"s14:3": "s5:2", "s5:3": "s1:1", "s5:4": "s2:1", "s6:3": "s3:1", "s6:4": "s4:1",
		"s1:4": "s11:3", "s4:2": "s8:4",
	}
	for from, to := range want {
		name, port, _ := strings.Cut(from, ":")
		if got := peer(t, g, name, Port(atoi(port))); got != to {
			t.Errorf("%s -> %s, want %s", from, got, to)
		}
	}
	if g.Node(0).Role != "core" || g.Node(4).Role != "agg" || g.Node(12).Role != "edge" {
		t.Error("roles")
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// TestDumbNetFig1 checks every port the paper's prose fixes.
func TestDumbNetFig1(t *testing.T) {
	g, err := Parse("dumbnet-fig1", 0)
	if err != nil {
		t.Fatal(err)
	}
	for from, to := range map[string]string{
		"S2:1": "S3:2", // "link S2-S3 connects port 1 of S2 and port 2 of S3"
		"S3:1": "S1:1", // "a link between S3-1 and S1-1"
		"S1:2": "S4:1", // probe 1-2-0-1-1-9 returns via S1
		"S4:2": "S2:2", // H4-S4-S2 leaves S4 on port 2
		"S2:3": "S5:2", // ... leaves S2 on port 3 towards S5
		"S5:5": "H5:1", // ... and S5 on port 5 to H5
		"S3:9": "C3:1", // C3 probes 9-∅ back to itself
		"S3:5": "H3:1", // PM 5-9-∅ reaches H3
		"S1:5": "H1:1", // 1-5-1-9-∅ reaches H1
	} {
		name, port, _ := strings.Cut(from, ":")
		if got := peer(t, g, name, Port(atoi(port))); got != to {
			t.Errorf("%s -> %s, want %s", from, got, to)
		}
	}
	// Probes from C3 per §4.1 bounce back: 1-1-9 (S3→S1→S3→C3).
	if walk(t, g, "C3", []Port{1, 1, 9}) != "C3" {
		t.Error("probe 1-1-9 does not return to C3")
	}
	// 1-2-0-1-1-9 and 1-2-0-2-1-9 both return (the ambiguity of §4.1);
	// the 0 is the ID query and is skipped here.
	for _, path := range [][]Port{{1, 2, 1, 1, 9}, {1, 2, 2, 1, 9}} {
		if got := walk(t, g, "C3", path); got != "C3" {
			t.Errorf("probe %v ends at %s", path, got)
		}
	}
	// H4 -> H5 over 2-3-5.
	if got := walk(t, g, "H4", []Port{2, 3, 5}); got != "H5" {
		t.Errorf("2-3-5 from H4 ends at %s", got)
	}
}

// walk follows a DumbNet tag path from a host and returns where it ends.
func walk(t *testing.T, g *Graph, from string, tags []Port) string {
	t.Helper()
	id, _ := g.Lookup(from)
	e, ok := g.Peer(id, 1)
	if !ok {
		return ""
	}
	for _, p := range tags {
		if g.Node(e.Node).Kind == Host {
			return g.Node(e.Node).Name
		}
		if e, ok = g.Peer(e.Node, p); !ok {
			return ""
		}
	}
	return g.Node(e.Node).Name
}

func TestSpainTestbed(t *testing.T) {
	g, err := Parse("spain-testbed", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{23, 28, 29} {
		id, _ := g.Lookup("S" + itoa(i+1))
		hosts := 0
		for _, l := range g.Ports(id) {
			if g.Node(g.Link(l).Other(id).Node).Kind == Host {
				hosts++
				if g.Link(l).Rate != Rate1G {
					t.Error("server link not 1G")
				}
			} else if g.Link(l).Rate != Rate10G {
				t.Error("switch link not 10G")
			}
		}
		if hosts != want {
			t.Errorf("S%d has %d servers, want %d", i+1, hosts, want)
		}
	}
	// TS has the lowest ID: the original tree's root wins the STP election.
	if g.Node(0).Name != "TS" {
		t.Error("TS is not node 0")
	}
}

func TestJellyfish(t *testing.T) {
	a, err := Parse("jellyfish:50,10,6", 42)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Parse("jellyfish:50,10,6", 42)
	c, _ := Parse("jellyfish:50,10,6", 43)
	if !sameGraph(a, b) {
		t.Error("same seed, different graphs")
	}
	if sameGraph(a, c) {
		t.Error("different seeds, same graph")
	}
	for _, g := range []*Graph{a, c} {
		checkWellFormed(t, g)
		pairs := map[[2]NodeID]bool{}
		for l := range g.NumLinks() {
			lk := g.Link(LinkID(l))
			if g.IsFabricLink(LinkID(l)) {
				k := [2]NodeID{min(lk.A.Node, lk.B.Node), max(lk.A.Node, lk.B.Node)}
				if pairs[k] {
					t.Fatal("parallel link")
				}
				pairs[k] = true
			}
		}
		// For this draw every switch gets exactly R switch links. That
		// is not true of every draw with N·R even: two switches left with
		// one free port each may already be linked (jellyfish:7,4,4 with
		// seed 3; docs/topology.md).
		for _, s := range g.Nodes(Switch) {
			fab := 0
			for _, l := range g.Ports(s) {
				if l != NoLink && g.IsFabricLink(l) {
					fab++
				}
			}
			if fab != 6 {
				t.Fatalf("%s has %d switch links, want 6", g.Node(s).Name, fab)
			}
		}
	}
}

func TestSpecErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"fattree:3":                   `topo: spec "fattree:3": p: bad value: must be even and at least 2, got 3`,
		"leafspine:70000,1,1":         `topo: spec "leafspine:70000,1,1": S: bad value: a leaf would have more than 65535 ports (S spines + H hosts)`,
		"leafspine:1,70000,1":         `topo: spec "leafspine:1,70000,1": L: bad value: a spine would have more than 65535 ports (one per leaf)`,
		"leafspine:1,1,70000":         `topo: spec "leafspine:1,1,70000": H: bad value: a leaf would have more than 65535 ports (S spines + H hosts)`,
		"hyperx:2,70000":              `topo: spec "hyperx:2,70000": T: bad value: a switch would have more than 65535 ports (2(k-1) peers + T hosts)`,
		"ciscodc:40000,1":             `topo: spec "ciscodc:40000,1": m: bad value: a core switch would have more than 65535 ports (2m+1)`,
		"ciscodc:1,40000":             `topo: spec "ciscodc:1,40000": a: bad value: an aggregation switch would have more than 65535 ports (2a+3)`,
		"fattree:x":                   `topo: spec "fattree:x": p: bad topology spec: "x" is not an integer`,
		"fattree":                     `topo: spec "fattree": bad topology spec: fattree needs arguments p`,
		"fattree:4,4":                 `topo: spec "fattree:4,4": bad topology spec: fattree takes 1 value (p), got 2`,
		"bcube:1,2":                   `topo: spec "bcube:1,2": p: bad value: switches need at least 2 ports, got 1`,
		"bcube:8,0":                   `topo: spec "bcube:8,0": l: bad value: need at least 1 level, got 0`,
		"leafspine:0,2,2":             `topo: spec "leafspine:0,2,2": S: bad value: need at least 1 spine, got 0`,
		"leafspine:2,-1,2":            `topo: spec "leafspine:2,-1,2": L: bad topology spec: must not be negative, got -1`,
		"ring:2":                      `topo: spec "ring:2": n: bad value: a ring needs at least 3 switches, got 2`,
		"jellyfish:10,4,10":           `topo: spec "jellyfish:10,4,10": R: bad value: switch ports must be 1..K (4), got 10`,
		"jellyfish:4,8,4":             `topo: spec "jellyfish:4,8,4": R: bad value: must be below N (4) for a graph without parallel links, got 4`,
		"jellyfish:10,7,2":            `topo: spec "jellyfish:10,7,2": R: bad value: need at least 3 switch ports per switch for a connected random graph (or R = N-1 for a full mesh), got 2`,
		"ciscodc:2,0":                 `topo: spec "ciscodc:2,0": a: bad value: need at least 1 access pair per module, got 0`,
		"cube:2,0,2":                  `topo: spec "cube:2,0,2": Y: bad value: must be at least 1, got 0`,
		"spain-fig2:3":                `topo: spec "spain-fig2:3": bad topology spec: spain-fig2 takes no arguments`,
		"fattree:4800":                `topo: spec "fattree:4800": topology too large: about 2.77e+10 nodes and 8.29e+10 links, limits 4000000 and 8000000`,
		"hyperx:99999999999999999999": `topo: spec "hyperx:99999999999999999999": k: topology too large: 99999999999999999999 is out of range: every argument is 0..4000000 (the node limit)`,
		// An integer too long for an int is out of range, not "not an
		// integer", for every argument; so is any above MaxArg.
		"fattree:99999999999999999999":         `topo: spec "fattree:99999999999999999999": p: topology too large: 99999999999999999999 is out of range: every argument is 0..4000000 (the node limit)`,
		"leafspine:2,5,99999999999999999999":   `topo: spec "leafspine:2,5,99999999999999999999": H: topology too large: 99999999999999999999 is out of range: every argument is 0..4000000 (the node limit)`,
		"jellyfish:20,8,+99999999999999999999": `topo: spec "jellyfish:20,8,+99999999999999999999": R: topology too large: +99999999999999999999 is out of range: every argument is 0..4000000 (the node limit)`,
		"ring:4000001":                         `topo: spec "ring:4000001": n: topology too large: 4000001 is out of range: every argument is 0..4000000 (the node limit)`,
		"bcube:2,-99999999999999999999":        `topo: spec "bcube:2,-99999999999999999999": l: bad topology spec: must not be negative, got -99999999999999999999`,
		"ring:1.5":                             `topo: spec "ring:1.5": n: bad topology spec: "1.5" is not an integer`,
	} {
		_, err := Parse(spec, 1)
		if err == nil || err.Error() != want {
			t.Errorf("Parse(%q):\n got  %v\n want %s", spec, err, want)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("multi-line error for %q", spec)
		}
	}
	if _, err := Parse("nosuch:1", 1); !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), "known: fattree") {
		t.Errorf("unknown topology: %v", err)
	}
}

func TestResolve(t *testing.T) {
	if g, err := Resolve("ring:3", 1); err != nil || g.NumNodes() != 9 {
		t.Fatalf("spec: %v", err)
	}
	if _, err := Resolve("testdata/nosuch.yaml", 1); err == nil || !strings.Contains(err.Error(), "nosuch.yaml") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Resolve("bogus", 1); !errors.Is(err, ErrBadSpec) {
		t.Errorf("bogus: %v", err)
	}
	if _, err := Resolve("fattree", 1); err == nil || err.Error() != `topo: spec "fattree": bad topology spec: fattree needs arguments p` {
		t.Errorf("bare generator name: %v", err)
	}
	g, err := Resolve("testdata/example.yaml", 1)
	if err != nil || g.Name != "example" {
		t.Fatalf("file: %v", err)
	}
}

func TestHostByIP(t *testing.T) {
	g, _ := FatTree(4)
	for _, h := range g.Nodes(Host) {
		_, ip, err := g.HostAddr(h)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := g.HostByIP(ip.Addr()); !ok || got != h {
			t.Fatalf("HostByIP(%v) = %v, %v; want %v", ip, got, ok, h)
		}
	}
	if _, ok := g.HostByIP(HostIP(17)); ok {
		t.Error("host 17 of 16 found")
	}
	if _, ok := g.HostByIP(HostIP(0)); ok {
		t.Error("host 0 found")
	}
	if g.HostIndex(0) != 0 || g.HostIndex(-1) != 0 || g.HostIndex(1000) != 0 {
		t.Error("HostIndex of a non-host")
	}
}

// TestGeneratorLimits: the public generators refuse oversized graphs
// before allocating, like Parse.
func TestGeneratorLimits(t *testing.T) {
	for name, f := range map[string]func() (*Graph, error){
		"FatTree":   func() (*Graph, error) { return FatTree(1 << 20) },
		"LeafSpine": func() (*Graph, error) { return LeafSpine(60000, 60000, 10) },
		"HyperX":    func() (*Graph, error) { return HyperX(30000, 2) },
		"BCube":     func() (*Graph, error) { return BCube(1000, 4) },
		"CiscoDC":   func() (*Graph, error) { return CiscoDCHosts(30000, 30000, 1) },
		"Cube":      func() (*Graph, error) { return Cube(1000, 1000, 1000, 1) },
		"Torus":     func() (*Graph, error) { return Torus(1<<30, 1<<30, 1<<30, 1) },
		"Jellyfish": func() (*Graph, error) { return Jellyfish(1<<30, 8, 4, 1) },
		"Line":      func() (*Graph, error) { return Line(1 << 30) },
		"Ring":      func() (*Graph, error) { return Ring(1 << 30) },
	} {
		if _, err := f(); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestSpecHugeExponent: a bcube level count near MaxInt with a base of 0
// or 1 is refused at once (sizing it used to loop that many times).
func TestSpecHugeExponent(t *testing.T) {
	for _, spec := range []string{"bcube:1,9000000000000000000", "bcube:0,9000000000000000000"} {
		done := make(chan error, 1)
		go func() { _, err := Parse(spec, 1); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrBadValue) && !errors.Is(err, ErrTooLarge) {
				t.Errorf("%s: %v", spec, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Parse did not return", spec)
		}
	}
}

// TestTotalPortsLimit: nodes that each declare the most ports allowed
// are refused once their sum passes MaxTotalPorts, before the port table
// is allocated.
func TestTotalPortsLimit(t *testing.T) {
	b := NewBuilder("ports")
	for i := range MaxTotalPorts/MaxPorts + 1 {
		b.Node(b.AddNode("s"+itoa(i), Switch)).Ports = MaxPorts
	}
	if _, err := b.Graph(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("%d nodes of %d ports: %v", MaxTotalPorts/MaxPorts+1, MaxPorts, err)
	}
	b = NewBuilder("ports")
	for i := range 3 {
		b.Node(b.AddNode("s"+itoa(i), Switch)).Ports = MaxPorts
	}
	if _, err := b.Graph(); err != nil {
		t.Fatal(err)
	}
}

// TestHighPortLinksLimit: links that name the highest port grow the port
// tables to it, so they are refused as soon as the tables would pass
// MaxTotalPorts, at the link that does it, not after the file is read
// (each such link costs 2 × 256 KB). A file of 1,000 of them once took
// 450 MB before Graph refused it.
func TestHighPortLinksLimit(t *testing.T) {
	b := NewBuilder("ports")
	n := MaxTotalPorts/MaxPorts + 2
	ids := make([]NodeID, n)
	for i := range n {
		ids[i] = b.AddNode("s"+itoa(i), Switch)
	}
	links := 0
	for i := 0; i+1 < n; i += 2 {
		if b.ConnectPorts(End{ids[i], MaxPorts}, End{ids[i+1], MaxPorts}, DefaultRate, DefaultDelay) == NoLink {
			break
		}
		links++
	}
	if want := MaxTotalPorts / MaxPorts / 2; links != want {
		t.Errorf("%d links on port %d accepted, want %d", links, MaxPorts, want)
	}
	if b.slots > MaxTotalPorts {
		t.Errorf("port tables hold %d slots, more than %d", b.slots, MaxTotalPorts)
	}
	if _, err := b.Graph(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Graph: %v, want ErrTooLarge", err)
	}
	// Below the limit, high ports stay legal.
	b = NewBuilder("ports")
	x, y := b.AddNode("x", Switch), b.AddNode("y", Switch)
	b.ConnectPorts(End{x, MaxPorts}, End{y, 1}, DefaultRate, DefaultDelay)
	g, err := b.Graph()
	if err != nil || g.Node(x).Ports != MaxPorts {
		t.Fatalf("one link on port %d: %v", MaxPorts, err)
	}
}

// TestSpecSize: the size Parse checks against the limits before building
// is the size the generator builds (nodes exactly, links at least and not
// far above), so that valid specs near the limits are not refused. The
// jellyfish estimate counted K hosts per switch instead of K-R, refusing
// jellyfish:400000,12,10 (1.2 million nodes) as 5.2 million.
func TestSpecSize(t *testing.T) {
	for _, spec := range []string{"fattree:6", "leafspine:3,4,5", "hyperx:4,3", "bcube:3,3", "ciscodc:2,3,4",
		"cube:3,2,4,2", "torus:3,4,5,1", "jellyfish:20,8,4", "jellyfish:31,7,5", "jellyfish:10,3,3", "line:5", "ring:5"} {
		name, args, _ := strings.Cut(spec, ":")
		var a []int
		for _, f := range strings.Split(args, ",") {
			a = append(a, atoi(f))
		}
		var gen *generator
		for i := range generators {
			if generators[i].name == name {
				gen = &generators[i]
			}
		}
		nodes, links := gen.size(a)
		g, err := Parse(spec, 1)
		if err != nil {
			t.Fatal(err)
		}
		sw := len(g.Nodes(Switch))
		if int(nodes) != g.NumNodes() || links < float64(g.NumLinks()) || links > float64(g.NumLinks()+3*sw) {
			t.Errorf("%s: estimated %v nodes %v links, built %d and %d", spec, nodes, links, g.NumNodes(), g.NumLinks())
		}
	}
}
