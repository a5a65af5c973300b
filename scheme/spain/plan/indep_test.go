package plan

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/edgefabric/edgefabric/topo"
)

// fPlan is what indepFiles reads back from plan.json.
type fPlan struct {
	Coverage    float64 `json:"coverage"`
	STPCoverage float64 `json:"stp_coverage"`
	FabricLinks int     `json:"fabric_links"`
	EdgeNodes   int     `json:"edge_nodes"`
	Pairs       int     `json:"pairs"`
	NumVLANs    int     `json:"num_vlans"`
	MaxSw       int     `json:"max_switch_vlans"`
	SkipVLANs   []int   `json:"skip_vlans"`
	VLANs       []VLAN  `json:"vlans"`
}

// TestIndepFiles checks the files --out writes against one another and the
// topology alone, by node names and port numbers (not the plan's bitsets,
// union-finds or link IDs), on random fabrics the named generators do not
// make: relaying hosts, hosts with two NICs, hosts cabled to hosts,
// parallel links, k fixed or α, and --skip-vlans. switches.json: every
// forwarding node, every cabled port, each fabric port tagged for exactly
// the other VLANs of plan.json holding its link and native 1 exactly on
// VLAN 1's links, each host port native 1 and tagged for every other VLAN
// of its node; vreach.json: the edge nodes found from the hosts' first
// NICs, each with the VLANs a breadth-first search finds it in and the
// lowest name of its tree; paths.json: every pair, each path a walk over
// fabric links whose VLANs are exactly those holding all its hops;
// plan.json's coverage and stp_coverage recounted from those.
func TestIndepFiles(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 99))
		b := topo.NewBuilder(fmt.Sprintf("rnd%d", seed))
		ns := 2 + r.IntN(6)
		var sw, all []topo.NodeID
		for i := range ns {
			id := b.AddNode(fmt.Sprintf("s%d", i+1), topo.Switch)
			sw = append(sw, id)
			all = append(all, id)
		}
		nr := 0
		if r.IntN(3) == 0 {
			nr = r.IntN(3)
		}
		for i := range nr {
			id := b.AddNode(fmt.Sprintf("r%d", i+1), topo.Host)
			b.Node(id).Relay = true
			all = append(all, id)
		}
		// spanning chain so it is connected
		for i := 1; i < len(all); i++ {
			b.Connect(all[r.IntN(i)], all[i])
		}
		for range r.IntN(2 * ns) {
			a, c := all[r.IntN(len(all))], all[r.IntN(len(all))]
			if a != c {
				b.Connect(a, c)
			}
		}
		nh := 1 + r.IntN(6)
		var hs []topo.NodeID
		for i := range nh {
			h := b.AddNode(fmt.Sprintf("h%d", i+1), topo.Host)
			if len(hs) > 0 && r.IntN(5) == 0 {
				b.Connect(h, hs[r.IntN(len(hs))])
			}
			hs = append(hs, h)
			b.Connect(h, all[r.IntN(len(all))])
			if r.IntN(4) == 0 {
				b.Connect(h, all[r.IntN(len(all))])
			}
		}
		g, err := b.Graph()
		if err != nil {
			t.Fatal(err)
		}
		var skip []int
		if r.IntN(2) == 0 {
			skip = []int{2 + r.IntN(3), 3 + r.IntN(5)}
		}
		p, err := Compute(g, Options{K: r.IntN(4), Trials: 2, Seed: seed, Workers: 2, SkipVLANs: skip})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		dir := t.TempDir()
		if _, err := p.WriteDir(dir, nil, true); err != nil {
			t.Fatal(err)
		}
		checkFiles(t, seed, g, dir)
	}
}

// readJ decodes dir/name into v.
func readJ(t *testing.T, dir, name string, v any) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(name, err)
	}
}

// checkFiles is TestIndepFiles' check of one plan's directory.
func checkFiles(t *testing.T, seed uint64, g *topo.Graph, dir string) {
	var pl fPlan
	readJ(t, dir, "plan.json", &pl)
	var dep Deployment
	readJ(t, dir, "switches.json", &dep)
	var rm ReachMap
	readJ(t, dir, "vreach.json", &rm)
	var pf struct {
		Pairs []PairPaths `json:"pairs"`
	}
	readJ(t, dir, "paths.json", &pf)
	fw := func(n topo.NodeID) bool { return g.Node(n).Forwards() }
	type end struct {
		n string
		p int
	}
	key := func(a end, b end) [2]end {
		if a.n > b.n || a.n == b.n && a.p > b.p {
			a, b = b, a
		}
		return [2]end{a, b}
	}
	// links of the topology by key
	fabric := map[[2]end]bool{}
	nf := 0
	for l := range g.NumLinks() {
		lk := g.Link(topo.LinkID(l))
		k := key(end{g.Node(lk.A.Node).Name, int(lk.A.Port)}, end{g.Node(lk.B.Node).Name, int(lk.B.Port)})
		if fw(lk.A.Node) && fw(lk.B.Node) {
			fabric[k] = true
			nf++
		}
	}
	if nf != pl.FabricLinks {
		t.Errorf("seed %d: fabric links %d, want %d", seed, pl.FabricLinks, nf)
	}
	vl := map[int]map[[2]end]bool{}
	var ids []int
	for _, v := range pl.VLANs {
		if slices.Contains(pl.SkipVLANs, v.ID) {
			t.Errorf("seed %d: skipped ID %d used", seed, v.ID)
		}
		ids = append(ids, v.ID)
		vl[v.ID] = map[[2]end]bool{}
		for i, l := range v.Links {
			k := key(end{l[0], v.Ports[i][0]}, end{l[1], v.Ports[i][1]})
			if !fabric[k] {
				t.Errorf("seed %d: VLAN %d holds non-fabric %v", seed, v.ID, k)
			}
			vl[v.ID][k] = true
		}
	}
	if ids[0] != 1 {
		t.Errorf("seed %d: first VLAN %d", seed, ids[0])
	}
	inV := func(k [2]end) []int {
		var out []int
		for _, id := range ids {
			if vl[id][k] {
				out = append(out, id)
			}
		}
		return out
	}
	// switches
	byName := map[string]SwitchConfig{}
	for _, s := range dep.Switches {
		byName[s.Name] = s
	}
	nfw := 0
	for v := range g.NumNodes() {
		n := topo.NodeID(v)
		if !fw(n) {
			continue
		}
		nfw++
		name := g.Node(n).Name
		s, ok := byName[name]
		if !ok {
			t.Fatalf("seed %d: no switch %s", seed, name)
		}
		member := map[int]bool{1: true}
		cabled := 0
		for _, l := range g.Ports(n) {
			if l == topo.NoLink {
				continue
			}
			cabled++
			lk := g.Link(l)
			k := key(end{g.Node(lk.A.Node).Name, int(lk.A.Port)}, end{g.Node(lk.B.Node).Name, int(lk.B.Port)})
			for _, id := range inV(k) {
				member[id] = true
			}
		}
		var mem []int
		for id := range member {
			mem = append(mem, id)
		}
		sort.Ints(mem)
		if !slices.Equal(mem, s.VLANs) {
			t.Errorf("seed %d: %s VLANs %v want %v", seed, name, s.VLANs, mem)
		}
		if len(s.Ports) != cabled {
			t.Errorf("seed %d: %s lists %d ports, %d cabled", seed, name, len(s.Ports), cabled)
		}
		for _, pc := range s.Ports {
			l := g.Ports(n)[pc.Port-1]
			lk := g.Link(l)
			peer := lk.Other(n)
			if pc.Peer != fmt.Sprintf("%s:%d", g.Node(peer.Node).Name, peer.Port) {
				t.Errorf("seed %d: %s:%d peer %s", seed, name, pc.Port, pc.Peer)
			}
			k := key(end{name, pc.Port}, end{g.Node(peer.Node).Name, int(peer.Port)})
			if fabric[k] {
				in := inV(k)
				wantU := 0
				if slices.Contains(in, 1) {
					wantU = 1
				}
				want := slices.DeleteFunc(slices.Clone(in), func(x int) bool { return x == 1 })
				if pc.HostPort || pc.Untagged != wantU || !slices.Equal(pc.Tagged, want) && len(want)+len(pc.Tagged) > 0 {
					t.Errorf("seed %d: %s:%d fabric: %+v want untagged %d tagged %v", seed, name, pc.Port, pc, wantU, want)
				}
			} else {
				if !pc.HostPort || pc.Untagged != 1 || !slices.Equal(pc.Tagged, mem[1:]) && len(mem) > 1 {
					t.Errorf("seed %d: %s:%d host: %+v want tagged %v", seed, name, pc.Port, pc, mem[1:])
				}
			}
		}
	}
	if nfw != len(dep.Switches) {
		t.Errorf("seed %d: %d switches in switches.json, %d forwarding", seed, len(dep.Switches), nfw)
	}
	// edge nodes, independently
	edges := map[string]bool{}
	for v := range g.NumNodes() {
		n := topo.NodeID(v)
		nd := g.Node(n)
		if nd.Kind != topo.Host {
			continue
		}
		if nd.Relay {
			edges[nd.Name] = true
			continue
		}
		for _, l := range g.Ports(n) {
			if l == topo.NoLink {
				continue
			}
			o := g.Link(l).Other(n).Node
			if fw(o) {
				edges[g.Node(o).Name] = true
				break
			}
		}
	}
	if len(edges) != pl.EdgeNodes || len(rm.Edges) != len(edges) {
		t.Errorf("seed %d: edges %d/%d want %d", seed, pl.EdgeNodes, len(rm.Edges), len(edges))
	}
	adjOf := func(id int) map[string][]string {
		adj := map[string][]string{}
		for k := range vl[id] {
			adj[k[0].n] = append(adj[k[0].n], k[1].n)
			adj[k[1].n] = append(adj[k[1].n], k[0].n)
		}
		return adj
	}
	comp := func(id int, src string) map[string]bool {
		adj := adjOf(id)
		seen := map[string]bool{src: true}
		for q := []string{src}; len(q) > 0; q = q[1:] {
			for _, w := range adj[q[0]] {
				if !seen[w] {
					seen[w] = true
					q = append(q, w)
				}
			}
		}
		return seen
	}
	for _, e := range rm.Edges {
		if !edges[e.Edge] {
			t.Errorf("seed %d: vreach lists %s, not an edge", seed, e.Edge)
		}
		var want []ReachVLAN
		for _, id := range ids {
			adj := adjOf(id)
			if _, ok := adj[e.Edge]; !ok && id != 1 {
				continue
			}
			c := comp(id, e.Edge)
			low := e.Edge
			for n := range c {
				low = min(low, n)
			}
			want = append(want, ReachVLAN{id, low})
		}
		if !slices.Equal(e.VLANs, want) {
			t.Errorf("seed %d: vreach %s %v want %v", seed, e.Edge, e.VLANs, want)
		}
	}
	// paths
	covered := map[[2]end]bool{}
	if len(pf.Pairs) != len(edges)*(len(edges)-1)/2 {
		t.Errorf("seed %d: %d pairs", seed, len(pf.Pairs))
	}
	for _, pp := range pf.Pairs {
		for _, path := range pp.Paths {
			if path.Nodes[0] != pp.Src || path.Nodes[len(path.Nodes)-1] != pp.Dst {
				t.Errorf("seed %d: path ends", seed)
			}
			var hops [][2]end
			for i, po := range path.Ports {
				k := key(end{path.Nodes[i], po[0]}, end{path.Nodes[i+1], po[1]})
				if !fabric[k] {
					t.Errorf("seed %d: path hop %v not fabric", seed, k)
				}
				hops = append(hops, k)
				covered[k] = true
			}
			var want []int
			for _, id := range ids {
				ok := true
				for _, h := range hops {
					ok = ok && vl[id][h]
				}
				if ok {
					want = append(want, id)
				}
			}
			if len(want) == 0 || !slices.Equal(want, path.VLANs) {
				t.Errorf("seed %d: path %v vlans %v want %v", seed, path.Nodes, path.VLANs, want)
			}
		}
	}
	// STP's used links: tree links with an edge node on both sides.
	used := map[[2]end]bool{}
	var el []string
	for e := range edges {
		el = append(el, e)
	}
	for k := range vl[1] {
		// remove k; used iff both sides contain an edge
		adj := map[string][]string{}
		for k2 := range vl[1] {
			if k2 == k {
				continue
			}
			adj[k2[0].n] = append(adj[k2[0].n], k2[1].n)
			adj[k2[1].n] = append(adj[k2[1].n], k2[0].n)
		}
		seen := map[string]bool{k[0].n: true}
		for q := []string{k[0].n}; len(q) > 0; q = q[1:] {
			for _, w := range adj[q[0]] {
				if !seen[w] {
					seen[w] = true
					q = append(q, w)
				}
			}
		}
		a, b := 0, 0
		for _, e := range el {
			if seen[e] {
				a++
			} else {
				b++
			}
		}
		if a > 0 && b > 0 {
			used[k] = true
		}
	}
	stp := float64(len(used)) / float64(nf)
	for k := range used {
		covered[k] = true
	}
	cov := float64(len(covered)) / float64(nf)
	if nf == 0 {
		stp, cov = 1, 1
	}
	if stp != pl.STPCoverage || cov != pl.Coverage {
		t.Errorf("seed %d: coverage %v stp %v, want %v %v", seed, pl.Coverage, pl.STPCoverage, cov, stp)
	}
}

// TestIndepNCP recounts NCP on random fabrics (parallel links, k fixed or
// α) from its definition: the same failure draws (one per fabric link, in
// link order, from (seed, trial)), then per pair of edge nodes a search
// over the surviving links of VLAN 1 (STP) and of every VLAN (SPAIN).
func TestIndepNCP(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 7))
		b := topo.NewBuilder("x")
		ns := 2 + r.IntN(6)
		var all []topo.NodeID
		for i := range ns {
			all = append(all, b.AddNode(fmt.Sprintf("s%d", i+1), topo.Switch))
		}
		for i := 1; i < len(all); i++ {
			b.Connect(all[r.IntN(i)], all[i])
		}
		for range r.IntN(2 * ns) {
			a, c := all[r.IntN(len(all))], all[r.IntN(len(all))]
			if a != c {
				b.Connect(a, c)
			}
		}
		for i := range 1 + r.IntN(6) {
			h := b.AddNode(fmt.Sprintf("h%d", i+1), topo.Host)
			b.Connect(h, all[r.IntN(len(all))])
		}
		g, _ := b.Graph()
		p, err := Compute(g, Options{K: r.IntN(3), Trials: 1, Seed: seed, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		fp := 0.3
		trials := 5
		got, err := p.NCP(fp, trials, seed)
		if err != nil {
			t.Fatal(err)
		}
		f := p.F
		var stp, sp float64
		for tr := range trials {
			rr := ncpRand(seed, tr)
			failed := map[topo.LinkID]bool{}
			for l := range g.NumLinks() {
				if g.IsFabricLink(topo.LinkID(l)) && rr.Float64() < fp {
					failed[topo.LinkID(l)] = true
				}
			}
			conn := func(ls []topo.LinkID, a, b topo.NodeID) bool {
				seen := map[topo.NodeID]bool{a: true}
				for q := []topo.NodeID{a}; len(q) > 0; q = q[1:] {
					for _, l := range ls {
						if failed[l] {
							continue
						}
						x, y := f.Ends(l)
						if x == q[0] && !seen[y] {
							seen[y] = true
							q = append(q, y)
						}
						if y == q[0] && !seen[x] {
							seen[x] = true
							q = append(q, x)
						}
					}
				}
				return seen[b]
			}
			sd, pd := 0, 0
			np := 0
			for i, a := range f.Edges {
				for _, bb := range f.Edges[i+1:] {
					np++
					if !conn(p.Tree.Links, a, bb) {
						sd++
					}
					up := false
					for _, v := range p.Pack.VLANs {
						up = up || conn(v, a, bb)
					}
					if !up {
						pd++
					}
				}
			}
			if np > 0 {
				stp += float64(sd) / float64(np)
				sp += float64(pd) / float64(np)
			}
		}
		stp /= float64(trials)
		sp /= float64(trials)
		if d := stp - got.STP; d > 1e-12 || d < -1e-12 {
			t.Errorf("seed %d: STP %v want %v", seed, got.STP, stp)
		}
		if d := sp - got.SPAIN; d > 1e-12 || d < -1e-12 {
			t.Errorf("seed %d: SPAIN %v want %v", seed, got.SPAIN, sp)
		}
	}
}
