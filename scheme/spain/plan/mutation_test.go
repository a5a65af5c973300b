package plan

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/paths"
	"github.com/edgefabric/edgefabric/topo"
)

// Tests written in a mutation sweep of this package: each pins a
// behaviour that some small change to the code left unnoticed.

// ring4 is a ring of four switches s1-s2-s3-s4-s1, one host each. Ports
// are known: s1:1-s2:1, s2:2-s3:1, s3:2-s4:1, s4:2-s1:2, hosts on port 3
// of s2..s4 and on port 4 of s1, whose port 3 is left uncabled. h1's link
// is created first, before the ring's, so that host links and fabric
// links interleave in link order.
//
// By hand: s1 is the root (lowest bridge ID); s2 and s4 hang off it; s3
// has two equal-cost root ports and takes the one towards s2, the lower
// designated bridge. So the tree is s1s2, s1s4, s2s3, and s3s4 is left
// out (STP coverage 3/4: every tree link joins edge switches). k = α = 2: every pair's two paths are the two arcs of the ring,
// whatever the ties. A VLAN is the ring minus at least one link, and for
// every link X some path (the long arc of the pair X joins) avoids only
// X, so the optimum is four VLANs: the ring minus each link, VLAN 1 the
// ring minus s3s4.
func ring4(t *testing.T) *topo.Graph {
	t.Helper()
	b := topo.NewBuilder("ring4")
	var s, h [4]topo.NodeID
	for i, n := range []string{"s1", "s2", "s3", "s4"} {
		s[i] = b.AddNode(n, topo.Switch)
	}
	for i, n := range []string{"h1", "h2", "h3", "h4"} {
		h[i] = b.AddNode(n, topo.Host)
	}
	b.ConnectPorts(topo.End{Node: s[0], Port: 4}, topo.End{Node: h[0], Port: 1}, topo.DefaultRate, topo.DefaultDelay)
	for i := range 4 {
		b.Connect(s[i], s[(i+1)%4])
	}
	for i := 1; i < 4; i++ {
		b.Connect(s[i], h[i])
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// linkName names a fabric link by its two ends, sorted: "s1s2".
func linkName(g *topo.Graph, l topo.LinkID) string {
	lk := g.Link(l)
	a, b := g.Node(lk.A.Node).Name, g.Node(lk.B.Node).Name
	if a > b {
		a, b = b, a
	}
	return a + b
}

// The ring's deployment files, computed by hand: VLAN membership, native
// VLAN, tagged VLANs, peers, host-port flags, V_reach and the readable
// switches.txt, on a switch with an uncabled port.
func TestRing4Deployment(t *testing.T) {
	g := ring4(t)
	p, err := Compute(g, Options{Trials: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p.Root != "s1" || p.K != 2 || p.NumVLANs != 4 || p.Coverage != 1 || p.STPCoverage != 0.75 {
		t.Fatalf("root %s, k %d, %d VLANs, coverage %v, STP %v; want s1, 2, 4, 1, 0.75", p.Root, p.K, p.NumVLANs, p.Coverage, p.STPCoverage)
	}
	var tree []string
	for _, l := range p.Tree.Links {
		tree = append(tree, linkName(g, l))
	}
	slices.Sort(tree)
	if !slices.Equal(tree, []string{"s1s2", "s1s4", "s2s3"}) {
		t.Fatalf("tree %v, want s1s2 s1s4 s2s3", tree)
	}
	// without[X] is the ID of the VLAN that lacks link X: every VLAN is
	// the ring minus one link, a different one each, VLAN 1 minus s3s4.
	ring := []string{"s1s2", "s1s4", "s2s3", "s3s4"}
	without := map[string]int{}
	for _, v := range p.VLANs {
		var names []string
		for _, l := range v.Links {
			a, b := l[0], l[1]
			if a > b {
				a, b = b, a
			}
			names = append(names, a+b)
		}
		slices.Sort(names)
		missing := slices.DeleteFunc(slices.Clone(ring), func(x string) bool { return slices.Contains(names, x) })
		if len(names) != 3 || len(missing) != 1 {
			t.Fatalf("VLAN %d holds %v: want the ring minus one link", v.ID, names)
		}
		without[missing[0]] = v.ID
	}
	if len(without) != 4 || without["s3s4"] != 1 {
		t.Fatalf("VLANs lack %v: want each ring link missing from one VLAN, s3s4 from VLAN 1", without)
	}
	// A tree link is native 1 and tagged for the two other VLANs that
	// hold it; s3s4 is tagged for 2-4 with no native VLAN.
	others := func(x string) []int {
		return slices.DeleteFunc([]int{2, 3, 4}, func(id int) bool { return id == without[x] })
	}
	type port struct {
		peer     string
		host     bool
		untagged int
		tagged   []int
	}
	host := func(h string) port { return port{h + ":1", true, 1, []int{2, 3, 4}} }
	want := map[string]map[int]port{
		"s1": {1: {"s2:1", false, 1, others("s1s2")}, 2: {"s4:2", false, 1, others("s1s4")}, 4: host("h1")},
		"s2": {1: {"s1:1", false, 1, others("s1s2")}, 2: {"s3:1", false, 1, others("s2s3")}, 3: host("h2")},
		"s3": {1: {"s2:2", false, 1, others("s2s3")}, 2: {"s4:1", false, 0, []int{2, 3, 4}}, 3: host("h3")},
		"s4": {1: {"s3:2", false, 0, []int{2, 3, 4}}, 2: {"s1:2", false, 1, others("s1s4")}, 3: host("h4")},
	}
	d := p.Deployment()
	if d.Topology != "ring4" || len(d.Switches) != 4 {
		t.Fatalf("deployment of %q with %d switches, want ring4 with 4", d.Topology, len(d.Switches))
	}
	for _, s := range d.Switches {
		ws := want[s.Name]
		if !slices.Equal(s.VLANs, []int{1, 2, 3, 4}) {
			t.Errorf("%s: VLANs %v, want 1-4", s.Name, s.VLANs)
		}
		if len(s.Ports) != len(ws) {
			t.Errorf("%s: %d ports configured, want %d (no uncabled one)", s.Name, len(s.Ports), len(ws))
		}
		for _, pc := range s.Ports {
			w, ok := ws[pc.Port]
			if !ok || pc.Peer != w.peer || pc.HostPort != w.host || pc.Untagged != w.untagged || !slices.Equal(pc.Tagged, w.tagged) {
				t.Errorf("%s port %d: %+v, want %+v", s.Name, pc.Port, pc, w)
			}
		}
	}
	// V_reach: every VLAN is one tree spanning the ring, named s1.
	rm := p.Reach()
	wantReach := []ReachVLAN{{1, "s1"}, {2, "s1"}, {3, "s1"}, {4, "s1"}}
	if rm.Topology != "ring4" || len(rm.Edges) != 4 {
		t.Fatalf("V_reach of %q for %d edges, want ring4, 4", rm.Topology, len(rm.Edges))
	}
	for i, r := range rm.Edges {
		if r.Edge != []string{"s1", "s2", "s3", "s4"}[i] || !slices.Equal(r.VLANs, wantReach) {
			t.Errorf("V_reach edge %d: %+v, want s%d: %v", i, r, i+1, wantReach)
		}
	}
	// switches.txt, line by line where the line does not depend on
	// which VLAN got which ID.
	sum := d.Summary()
	for _, line := range []string{
		"SPAIN switch configuration for ring4\n",
		"\ns1: VLANs 1-4\n",
		"\n  port 4   host   -> h1:1           untagged 1    tagged 2-4\n",
		"\n  port 2   fabric -> s4:1           untagged none tagged 2-4\n",
		"\n  port 1   fabric -> s3:2           untagged none tagged 2-4\n",
		"\n  port 3   host   -> h3:1           untagged 1    tagged 2-4\n",
	} {
		if !strings.Contains(sum, line) {
			t.Errorf("switches.txt lacks %q:\n%s", line, sum)
		}
	}
	if strings.Contains(sum, "port 3   fabric") || strings.Count(sum, "\n  port ") != 12 {
		t.Errorf("switches.txt: want 12 port lines, none for s1's uncabled port 3:\n%s", sum)
	}
}

// NCP on the ring against a count that uses neither the plan's tree nor
// its VLANs: STP loses a pair when a link of the hand-made tree path
// fails; SPAIN only when the surviving ring no longer joins the pair (each
// arc lies in some VLAN). Trial t draws one number per fabric link, in
// link order, from (seed, t): h1's host link comes first and draws none.
func TestRing4NCP(t *testing.T) {
	g := ring4(t)
	p, err := Compute(g, Options{Trials: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	const fp, trials, seed = 0.3, 40, 5
	got, err := p.NCP(fp, trials, seed)
	if err != nil {
		t.Fatal(err)
	}
	treeLinks := map[string]bool{"s1s2": true, "s1s4": true, "s2s3": true}
	// connected joins a and b over the surviving links the filter keeps.
	connected := func(failed map[string]bool, keep func(string) bool, a, b string) bool {
		seen := map[string]bool{a: true}
		for changed := true; changed; {
			changed = false
			for _, x := range []string{"s1s2", "s2s3", "s3s4", "s1s4"} {
				u, v := x[:2], x[2:]
				if failed[x] || !keep(x) || seen[u] == seen[v] {
					continue
				}
				seen[u], seen[v], changed = true, true, true
			}
		}
		return seen[b]
	}
	var wantSTP, wantSPAIN float64
	for tr := range trials {
		r := ncpRand(seed, tr)
		failed := map[string]bool{}
		for l := range topo.LinkID(g.NumLinks()) {
			lk := g.Link(l)
			if g.Node(lk.A.Node).Kind == topo.Switch && g.Node(lk.B.Node).Kind == topo.Switch {
				failed[linkName(g, l)] = r.Float64() < fp
			}
		}
		sw := []string{"s1", "s2", "s3", "s4"}
		for i := range sw {
			for j := i + 1; j < len(sw); j++ {
				if !connected(failed, func(x string) bool { return treeLinks[x] }, sw[i], sw[j]) {
					wantSTP++
				}
				if !connected(failed, func(string) bool { return true }, sw[i], sw[j]) {
					wantSPAIN++
				}
			}
		}
	}
	wantSTP /= 6 * trials
	wantSPAIN /= 6 * trials
	if math.Abs(got.STP-wantSTP) > 1e-12 || math.Abs(got.SPAIN-wantSPAIN) > 1e-12 {
		t.Errorf("NCP STP %v SPAIN %v, hand count %v %v", got.STP, got.SPAIN, wantSTP, wantSPAIN)
	}
	if !(wantSPAIN > 0 && wantSPAIN < wantSTP) || got.FailProb != fp || got.Trials != trials {
		t.Errorf("hand count STP %v SPAIN %v, result %+v: want 0 < SPAIN < STP, fail_prob %v, %d trials", wantSTP, wantSPAIN, got, fp, trials)
	}
}

// The plan's summary fields, against hand counts on FatTree(4): 8 edge
// switches, 32 fabric links, 28 pairs, α = 2 paths each; the default of
// 10 trials per packer (30 in all); k fixed or α; the serial packer's
// name; a tree cover's loose paths (spain-fig2).
func TestPlanSummaryFields(t *testing.T) {
	p := compute(t, "fattree:4", Options{Seed: 1})
	n := 0
	for i := range p.PS.Pairs {
		lo, hi := p.PS.PairPaths(i)
		n += hi - lo
	}
	if p.Topology != "fattree:4" || p.EdgeNodes != 8 || p.FabricLinks != 32 || p.Pairs != 28 || p.NumPaths != 56 || n != 56 ||
		p.Alpha != 2 || p.K != 2 || p.KMode != "alpha" || p.Root != "s1" || p.Ties != "pair" {
		t.Errorf("fattree:4: %q edges %d links %d pairs %d paths %d (counted %d) α %d k %d %s root %s ties %s; want fattree:4 8 32 28 56 56 2 2 alpha s1 pair",
			p.Topology, p.EdgeNodes, p.FabricLinks, p.Pairs, p.NumPaths, n, p.Alpha, p.K, p.KMode, p.Root, p.Ties)
	}
	if pk := p.Packing; pk.Algorithm != "parallel" || pk.Trials != 30 || len(pk.TrialVLANs) != 30 || pk.Strategy != "tree-cover" {
		t.Errorf("default packing %+v: want parallel, 30 trials, tree-cover", pk)
	}
	p = compute(t, "fattree:4", Options{K: 1, Trials: 1, Seed: 1})
	if p.K != 1 || p.KMode != "fixed" || p.NumPaths != 28 || p.Alpha != 2 {
		t.Errorf("k=1: k %d %s, %d paths, α %d; want 1 fixed 28 2", p.K, p.KMode, p.NumPaths, p.Alpha)
	}
	p = compute(t, "fattree:4", Options{Trials: 2, Seed: 1, Serial: true})
	if pk := p.Packing; pk.Algorithm != "serial" || pk.Trials != 2 || pk.Strategy != "first-fit" {
		t.Errorf("serial packing %+v: want serial, 2 trials, first-fit", pk)
	}
	p = compute(t, "spain-fig2", Options{Trials: 1, Seed: 1})
	if pk := p.Packing; pk.Strategy != "tree-cover" || pk.LoosePaths == 0 || pk.LoosePaths != p.Pack.Loose || pk.LooseWay == "" || pk.LooseWay != p.Pack.LooseWay {
		t.Errorf("spain-fig2 packing %+v, packer's loose %d %q: want a tree cover with its loose paths", pk, p.Pack.Loose, p.Pack.LooseWay)
	}
	// A negative k is refused by the planner itself, before any work.
	g, _ := topo.Parse("fattree:4", 1)
	if _, err := Compute(g, Options{K: -1}); !errors.Is(err, paths.ErrBadK) || !strings.HasPrefix(err.Error(), "plan: k=-1") {
		t.Errorf("k=-1: %v, want plan: k=-1 ... ErrBadK", err)
	}
}

// The plan's VLAN list (plan.json's "vlans") is the packing: VLAN i+1 is
// Pack.VLANs[i], each link named by its two ends and, aligned, the port
// numbers at those ends.
func TestVLANListMatchesPacking(t *testing.T) {
	for _, spec := range []string{"fattree:4", "spain-testbed", "bcube:3,2"} {
		p := compute(t, spec, Options{Trials: 1, Seed: 1})
		g := p.F.G
		if len(p.VLANs) != len(p.Pack.VLANs) || p.NumVLANs != len(p.VLANs) {
			t.Fatalf("%s: %d VLANs listed, %d packed, num_vlans %d", spec, len(p.VLANs), len(p.Pack.VLANs), p.NumVLANs)
		}
		for i, v := range p.VLANs {
			ls := p.Pack.VLANs[i]
			if v.ID != i+1 || len(v.Links) != len(ls) || len(v.Ports) != len(ls) {
				t.Fatalf("%s: VLAN %d listed as ID %d with %d links, %d ports; want %d links", spec, i+1, v.ID, len(v.Links), len(v.Ports), len(ls))
			}
			for j, l := range ls {
				for end := range 2 {
					n, ok := g.Lookup(v.Links[j][end])
					port := v.Ports[j][end]
					if !ok || port < 1 || port > len(g.Ports(n)) || g.Ports(n)[port-1] != l {
						t.Fatalf("%s: VLAN %d link %d end %d is %s:%d, not an end of link %d", spec, v.ID, j, end, v.Links[j][end], port, l)
					}
				}
				if v.Links[j][0] == v.Links[j][1] {
					t.Fatalf("%s: VLAN %d link %d names one node twice", spec, v.ID, j)
				}
			}
		}
	}
}

// More than 64 VLANs: the per-link bitsets span two words. Two switches
// joined by 65 parallel links: k = α = 65 one-link paths, pairwise
// closing loops, so 65 VLANs of one link each (VLAN 1 the tree's).
func TestMoreThan64VLANs(t *testing.T) {
	b := topo.NewBuilder("parallel65")
	s1, s2 := b.AddNode("s1", topo.Switch), b.AddNode("s2", topo.Switch)
	var links []topo.LinkID
	for range 65 {
		links = append(links, b.Connect(s1, s2))
	}
	b.Connect(s1, b.AddNode("h1", topo.Host))
	b.Connect(s2, b.AddNode("h2", topo.Host))
	p := computeBuilt(t, b)
	if p.NumVLANs != 65 || p.NumPaths != 65 {
		t.Fatalf("%d VLANs, %d paths; want 65, 65", p.NumVLANs, p.NumPaths)
	}
	seen := map[int]bool{}
	for _, l := range links {
		ids := p.LinkVLANs(l)
		if len(ids) != 1 || ids[0] < 1 || ids[0] > 65 || seen[ids[0]] || !slices.Equal(p.Pack.VLANs[ids[0]-1], []topo.LinkID{l}) {
			t.Fatalf("link %d in VLANs %v: want the one VLAN that holds it alone", l, ids)
		}
		seen[ids[0]] = true
	}
	checkDeployment(t, p, false)
	all := make([]int, 65)
	for i := range all {
		all[i] = i + 1
	}
	for _, s := range p.Deployment().Switches {
		if !slices.Equal(s.VLANs, all) {
			t.Errorf("%s: VLANs %v, want 1-65", s.Name, s.VLANs)
		}
	}
}

// Verify's bounds: no VLAN at all is refused (VLAN 1 must be the tree),
// exactly 4094 VLANs are accepted.
func TestVerifyVLANCountBounds(t *testing.T) {
	p := compute(t, "fattree:4", Options{Trials: 1, Seed: 1})
	p.Pack.VLANs = nil
	if err := p.Verify(); !errors.Is(err, ErrVerify) || !strings.Contains(err.Error(), "VLAN 1 is not") {
		t.Errorf("no VLANs: %v, want ErrVerify: VLAN 1 is not the tree", err)
	}
	p = compute(t, "fattree:4", Options{Trials: 1, Seed: 1})
	l := p.Pack.VLANs[1][0]
	for len(p.Pack.VLANs) < paths.MaxVLANs {
		p.Pack.VLANs = append(p.Pack.VLANs, []topo.LinkID{l})
	}
	if err := p.Verify(); err != nil {
		t.Errorf("exactly %d VLANs: %v, want accepted", paths.MaxVLANs, err)
	}
	if ids := p.LinkVLANs(l); len(ids) < paths.MaxVLANs-4 || ids[len(ids)-1] != paths.MaxVLANs {
		t.Errorf("link %d in %d VLANs, the last %d; want every padding VLAN up to %d", l, len(ids), ids[len(ids)-1], paths.MaxVLANs)
	}
}

// A path must be a walk over fabric links: one that detours through a
// (non-relaying) host with two NICs is reported as such, not merely as
// lying in no VLAN.
func TestVerifyPathOverHostLinks(t *testing.T) {
	b := topo.NewBuilder("detour")
	s1, s2 := b.AddNode("s1", topo.Switch), b.AddNode("s2", topo.Switch)
	b.Connect(s1, s2)
	b.Connect(s1, b.AddNode("h1", topo.Host))
	b.Connect(s2, b.AddNode("h2", topo.Host))
	h3 := b.AddNode("h3", topo.Host)
	up, down := b.Connect(s1, h3), b.Connect(h3, s2)
	p := computeBuilt(t, b)
	if p.Pairs != 1 || p.NumPaths != 1 {
		t.Fatalf("%d pairs, %d paths; want 1, 1", p.Pairs, p.NumPaths)
	}
	p.PS = withPaths(p.PS, func(int, [][]topo.LinkID) [][]topo.LinkID {
		return [][]topo.LinkID{{up, down}}
	})
	if err := p.Verify(); !errors.Is(err, ErrVerify) || !strings.Contains(err.Error(), "is not a walk") {
		t.Errorf("path over host links: %v, want ErrVerify: is not a walk", err)
	}
}

// WriteDir writes the four files, each what the matching call gives, the
// directory created if missing; it reports a directory it cannot create
// and a write that fails (a full disk) instead of leaving a short file.
func TestWriteDir(t *testing.T) {
	p, err := Compute(ring4(t), Options{Trials: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ncp, err := p.NCP(0.1, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "a", "b")
	if _, err := p.WriteDir(dir, &ncp, false); err != nil {
		t.Fatal(err)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var pl struct {
		NumVLANs int    `json:"num_vlans"`
		VLANs    []VLAN `json:"vlans"`
		NCP      *NCP   `json:"ncp"`
	}
	if err := json.Unmarshal(read("plan.json"), &pl); err != nil {
		t.Fatalf("plan.json: %v", err)
	}
	if pl.NumVLANs != 4 || !reflect.DeepEqual(pl.VLANs, p.VLANs) || pl.NCP == nil || *pl.NCP != ncp {
		t.Errorf("plan.json: %d VLANs %v, ncp %v; want 4 %v, %v", pl.NumVLANs, pl.VLANs, pl.NCP, p.VLANs, ncp)
	}
	var d Deployment
	if err := json.Unmarshal(read("switches.json"), &d); err != nil {
		t.Fatalf("switches.json: %v", err)
	}
	if !reflect.DeepEqual(&d, p.Deployment()) {
		t.Errorf("switches.json: %+v, want %+v", d, p.Deployment())
	}
	var rm ReachMap
	if err := json.Unmarshal(read("vreach.json"), &rm); err != nil {
		t.Fatalf("vreach.json: %v", err)
	}
	if !reflect.DeepEqual(&rm, p.Reach()) {
		t.Errorf("vreach.json: %+v, want %+v", rm, p.Reach())
	}
	if txt := string(read("switches.txt")); txt != p.Deployment().Summary() {
		t.Errorf("switches.txt:\n%s\nwant\n%s", txt, p.Deployment().Summary())
	}
	// A file where the directory should be.
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := p.WriteDir(file, nil, false); err == nil {
		t.Error("WriteDir into a regular file succeeded")
	}
	// A full disk: plan.json is /dev/full.
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	full := t.TempDir()
	if err := os.Symlink("/dev/full", filepath.Join(full, "plan.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.WriteDir(full, nil, false); err == nil || !strings.Contains(err.Error(), "plan.json") {
		t.Errorf("writing plan.json to /dev/full: %v, want its error", err)
	}
}

// The NCP trial bound is inclusive at the top too (a fabric of one switch:
// no pair, nothing to lose).
func TestNCPMaxTrials(t *testing.T) {
	b := topo.NewBuilder("one")
	s := b.AddNode("s1", topo.Switch)
	b.Connect(s, b.AddNode("h1", topo.Host))
	b.Connect(s, b.AddNode("h2", topo.Host))
	p := computeBuilt(t, b)
	n, err := p.NCP(0.5, MaxNCPTrials, 1)
	if err != nil || n.STP != 0 || n.SPAIN != 0 || n.Trials != MaxNCPTrials {
		t.Errorf("NCP with %d trials: %+v, %v; want 0, 0", MaxNCPTrials, n, err)
	}
}
