package topo

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// slowDiameter is the textbook diameter of the forwarding graph: one BFS
// per node.
func slowDiameter(g *Graph) int {
	c := g.fabric()
	d := 0
	dist := make([]int32, len(c.node))
	for v := range c.node {
		ecc, _ := c.bfs(int32(v), dist)
		for _, x := range dist {
			if x < 0 {
				return -1
			}
		}
		d = max(d, ecc)
	}
	return d
}

func TestDiameterMatchesBFS(t *testing.T) {
	for _, spec := range []string{"jellyfish:130,7,3", "jellyfish:70,6,4", "torus:5,4,3,0", "cube:4,3,2,0", "bcube:3,3", "hyperx:5,0", "fattree:6", "ciscodc:3,2,1", "spain-fig2", "ring:9", "line:70"} {
		g, err := Parse(spec, 5)
		if err != nil {
			t.Fatal(err)
		}
		want := slowDiameter(g)
		for _, workers := range []int{1, 3} {
			got, up, exact := g.diameter(StatsOptions{Workers: workers})
			if got != want || up != want || !exact {
				t.Errorf("%s (%d workers): %d..%d exact=%v, want %d", spec, workers, got, up, exact, want)
			}
		}
		// With a tiny budget, the bounds must bracket the truth.
		lo, hi, exact := g.diameter(StatsOptions{DiameterBudget: 1})
		if exact || lo > want || hi < want || lo < 0 {
			t.Errorf("%s bounds %d..%d exact=%v, true %d", spec, lo, hi, exact, want)
		}
	}
}

func TestDiameterDisconnected(t *testing.T) {
	b := NewBuilder("two islands")
	s1, s2, s3, s4 := b.AddNode("s1", Switch), b.AddNode("s2", Switch), b.AddNode("s3", Switch), b.AddNode("s4", Switch)
	b.Connect(s1, s2)
	b.Connect(s3, s4)
	g, _ := b.Graph()
	s := Stats(g)
	if s.Diameter != -1 || s.Connected {
		t.Errorf("%+v", s)
	}
	empty, _ := NewBuilder("empty").Graph()
	if s := Stats(empty); s.Diameter != 0 || !s.Connected || s.BisectionBps != 0 {
		t.Errorf("empty: %+v", s)
	}
}

// TestBisection checks the estimate on topologies whose bisection is known
// in closed form, and that the reported cut is a real balanced cut.
func TestBisection(t *testing.T) {
	for spec, want := range map[string]int64{
		"fattree:4":       8 * Rate1G,   // p³/8 links: full bisection
		"fattree:8":       64 * Rate1G,  //
		"fattree:16":      512 * Rate1G, //
		"leafspine:2,5,5": 6 * Rate1G,   // 2 leaves' uplinks + 2 host links
		"dumbnet-testbed": 6 * Rate10G,  // same shape at 10G
		"torus:4,4,4,1":   32 * Rate1G,  // two 4×4 planes of wrap links
		"line:3":          2 * Rate1G,   //
		"ring:3":          3 * Rate1G,   //
		"spain-testbed":   40 * Rate1G,  // 40 server links: cheaper than any 10G cut
		"ciscodc:2,2":     4 * Rate1G,   // one module's 4 core links
		"hyperx:2,1":      2 * Rate1G,   // a 4-cycle cut in half
		"hyperx:4":        16 * Rate1G,  // two rows against two: 4 links per column
		"bcube:2,1":       1 * Rate1G,   // two servers on one switch
	} {
		g, err := Parse(spec, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Bisection(); got != want {
			t.Errorf("%s: bisection %d, want %d", spec, got, want)
		}
	}
}

// TestGrowerCut recomputes the cut of the final partition independently.
func TestGrowerCut(t *testing.T) {
	for _, spec := range []string{"bcube:8,2", "jellyfish:40,8,5", "cube:3,3,3,1", "hyperx:3"} {
		g, _ := Parse(spec, 2)
		gr := newGrower(g)
		hosts := g.Nodes(Host)
		target := len(hosts) / 2
		cut := gr.grow(hosts[0], target) * gr.unit
		var recount int64
		for l := range g.NumLinks() {
			lk := g.Link(LinkID(l))
			if gr.inA[lk.A.Node] != gr.inA[lk.B.Node] {
				recount += lk.Rate
			}
		}
		inA := 0
		for _, h := range hosts {
			if gr.inA[h] {
				inA++
			}
		}
		if recount != cut || inA != target {
			t.Errorf("%s: cut %d, recount %d; %d hosts in A, want %d", spec, cut, recount, inA, target)
		}
	}
}

func TestDistances(t *testing.T) {
	g, _ := Parse("fattree:4", 1)
	h1, _ := g.Lookup("h1")
	h2, _ := g.Lookup("h2")
	h16, _ := g.Lookup("h16")
	d := g.Distances(h1)
	if d[h1] != 0 || d[h2] != 2 || d[h16] != 6 {
		t.Errorf("h1->h1 %d, h1->h2 %d, h1->h16 %d", d[h1], d[h2], d[h16])
	}
	// A non-relaying dual-homed host does not carry traffic between its
	// switches; a relaying one does.
	for _, relay := range []bool{false, true} {
		b := NewBuilder("dual")
		s1, s2, h := b.AddNode("s1", Switch), b.AddNode("s2", Switch), b.AddNode("h", Host)
		b.Node(h).Relay = relay
		b.Connect(s1, h)
		b.Connect(h, s2)
		g, _ := b.Graph()
		want := int32(-1)
		if relay {
			want = 2
		}
		if got := g.Distances(s1)[s2]; got != want {
			t.Errorf("relay=%v: s1->s2 %d, want %d", relay, got, want)
		}
	}
	if d := g.Distances(-1); d[0] != -1 {
		t.Error("bad source")
	}
}

func TestHostAddrErrors(t *testing.T) {
	g, _ := Parse("line:1", 1)
	if _, _, err := g.HostAddr(0); err == nil {
		t.Error("switch has a host address")
	}
	if _, _, err := g.HostAddr(99); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("unknown node: %v", err)
	}
	mac, ip, err := g.HostAddr(1)
	if err != nil || mac != HostMAC(1) || ip.String() != "10.0.0.1/8" {
		t.Errorf("h1: %v %v %v", mac, ip, err)
	}
}

// TestStatsGolden pins the full summary of every generator and figure
// (testdata/golden/stats.json; go test -update rewrites it).
func TestStatsGolden(t *testing.T) {
	specs := []string{"fattree:4", "fattree:8", "leafspine:2,5,5", "hyperx:3", "hyperx:4", "bcube:8,2", "bcube:2,3",
		"ciscodc:2,2", "ciscodc:3,2", "cube:3,3,3,1", "torus:4,4,4,1", "jellyfish:20,8,4", "line:3", "ring:3", "ring:8",
		"spain-fig2", "spain-testbed", "dumbnet-fig1", "dumbnet-testbed"}
	var out []Summary
	for _, s := range specs {
		g, err := Parse(s, 1)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Stats(g))
	}
	got, _ := json.MarshalIndent(out, "", " ")
	got = append(got, '\n')
	path := filepath.Join("testdata", "golden", "stats.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("summaries differ from %s:\n%s", path, got)
	}
}

// bruteBisection is the exact minimum bisection of a small graph: every
// split of the nodes with ⌊H/2⌋ hosts on one side.
func bruteBisection(g *Graph) int64 {
	n := g.NumNodes()
	hosts := len(g.Nodes(Host))
	if hosts < 2 {
		return 0
	}
	best := int64(-1)
	for m := uint32(0); m < 1<<n; m++ {
		h := 0
		for i := range n {
			if m>>i&1 == 1 && g.Node(NodeID(i)).Kind == Host {
				h++
			}
		}
		if h != hosts/2 {
			continue
		}
		var c int64
		for l := range g.NumLinks() {
			lk := g.Link(LinkID(l))
			if m>>lk.A.Node&1 != m>>lk.B.Node&1 {
				c += lk.Rate
			}
		}
		if best < 0 || c < best {
			best = c
		}
	}
	return best
}

// TestBisectionBrute compares the estimate with the exact minimum on small
// graphs, among them ones whose cheapest split cuts only host links
// (one host per switch): ciscodc:1,2,1 splits its 4 hosts 2/2 by cutting
// 2 host links, not the 4 links of an aggregation pair's uplinks.
func TestBisectionBrute(t *testing.T) {
	for _, spec := range []string{"line:4", "line:5", "ring:5", "hyperx:2,2", "hyperx:3,1", "bcube:2,2", "bcube:3,2",
		"leafspine:2,3,2", "ciscodc:1,2,1", "ciscodc:2,1,1", "cube:2,2,2,1", "torus:3,3,1,1", "torus:5,1,1,2",
		"spain-fig2", "dumbnet-fig1", "jellyfish:6,4,3"} {
		g, err := Parse(spec, 1)
		if err != nil {
			t.Fatal(err)
		}
		if g.NumNodes() > 22 {
			t.Fatalf("%s: %d nodes, too many for brute force", spec, g.NumNodes())
		}
		if got, want := g.Bisection(), bruteBisection(g); got != want {
			t.Errorf("%s: bisection %d, exact minimum %d", spec, got, want)
		}
	}
}

// TestSelfLoopRefused: a link from a node to itself, even between two of
// its ports, is refused by the Builder (the metrics would count it: it
// added its capacity twice to a grown cut and two to the degree).
func TestSelfLoopRefused(t *testing.T) {
	b := NewBuilder("loop")
	s1, h1 := b.AddNode("s1", Switch), b.AddNode("h1", Host)
	b.Connect(s1, h1)
	b.ConnectPorts(End{s1, 2}, End{s1, 3}, DefaultRate, DefaultDelay)
	if _, err := b.Graph(); !errors.Is(err, ErrSelfLoop) || err.Error() != "topo: link s1:2-s1:3: link joins a node to itself" {
		t.Errorf("got %v", err)
	}
}

// TestDiameterBoundsPassBounded: over budget, the pass that sharpens the
// lower bound runs only when it is cheap; on a long ring it cost a sweep
// of every node per level (ring:100000: 23 s for `topo show`, quadratic).
func TestDiameterBoundsPassBounded(t *testing.T) {
	g := bigFabric(8)
	if lo, hi, _ := g.diameter(StatsOptions{DiameterBudget: 1}); lo != 7 || hi != 12 {
		t.Fatalf("big8 with the pass: %d..%d, want 7..12", lo, hi)
	}
	old := boundsPassBudget
	boundsPassBudget = 1
	lo, hi, exact := g.diameter(StatsOptions{DiameterBudget: 1})
	boundsPassBudget = old
	if lo != 6 || hi != 12 || exact {
		t.Fatalf("big8 without the pass: %d..%d exact %v, want the sweeps' 6..12", lo, hi, exact)
	}
	// ring:20000 is past the pass's budget (60,000 nodes and links, 10,001
	// levels): its bounds are the sweeps', exact on a ring's lower side.
	r, err := Parse("ring:20000", 1)
	if err != nil {
		t.Fatal(err)
	}
	c := r.fabric()
	if cost := int64(len(c.node)+len(c.adj)) * (10_000 + 2); cost <= boundsPassBudget {
		t.Fatalf("ring:20000's pass costs %d, within the budget %d: pick a longer ring", cost, boundsPassBudget)
	}
	passes := 0
	onBoundsPass = func() { passes++ }
	defer func() { onBoundsPass = nil }()
	if lo, hi, exact := r.diameter(StatsOptions{}); lo != 10_000 || hi != 20_000 || exact || passes != 0 {
		t.Errorf("ring:20000: %d..%d exact %v, %d bounds passes; want 10000..20000 (bounds), no pass", lo, hi, exact, passes)
	}
	if g.diameter(StatsOptions{DiameterBudget: 1}); passes != 1 {
		t.Errorf("big8: %d bounds passes, want 1", passes)
	}
}
