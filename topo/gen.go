package topo

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
)

// Port numbering shared by the generators: on every switch the host ports
// come first (1..H), then the fabric ports, downlinks before peer links
// before uplinks in tree-shaped topologies. Switches are created before
// hosts and named s1..sN in NodeID order, hosts h1..hN, so that the lowest
// bridge ID (topo.BridgeMAC) belongs to the top of the tree.

// gen wraps a Builder with the naming and port helpers the generators
// share.
type gen struct {
	b        *Builder
	switches int
	hosts    int
}

func newGen(name string) *gen { return &gen{b: NewBuilder(name)} }

// sized starts a generator that knows how many nodes and links it builds.
func sized(name string, nodes, links int) *gen {
	g := newGen(name)
	g.b.Grow(nodes, links)
	return g
}

func (g *gen) sw(role string) NodeID {
	g.switches++
	id := g.b.AddNode("s"+strconv.Itoa(g.switches), Switch)
	g.b.Node(id).Role = role
	return id
}

func (g *gen) host() NodeID {
	g.hosts++
	return g.b.AddNode("h"+strconv.Itoa(g.hosts), Host)
}

func (g *gen) link(a NodeID, pa int, c NodeID, pc int, rate int64) {
	g.b.ConnectPorts(End{a, Port(pa)}, End{c, Port(pc)}, rate, DefaultDelay)
}

// attachHosts gives switch s hosts on its ports 1..n.
func (g *gen) attachHosts(s NodeID, n int, rate int64) {
	for i := 1; i <= n; i++ {
		g.link(s, i, g.host(), 1, rate)
	}
}

// checkSize refuses graphs beyond MaxNodes or MaxLinks before anything is
// allocated (the generators are public: Parse checks first, direct callers
// get the same protection).
func checkSize(nodes, links float64) error {
	if nodes > MaxNodes || links > MaxLinks {
		return fmt.Errorf("%w: about %.3g nodes and %.3g links, limits %d and %d", ErrTooLarge, nodes, links, MaxNodes, MaxLinks)
	}
	return nil
}

func badArg(field string, format string, args ...any) error {
	return fmt.Errorf("%s: %w: %s", field, ErrBadValue, fmt.Sprintf(format, args...))
}

// FatTree builds the k-ary fat tree of Al-Fares et al. with p-port
// switches (SPAIN's FatTree(p)): (p/2)² core switches, p pods of p/2
// aggregation and p/2 edge switches, p/2 hosts per edge switch; 5p²/4
// switches, p³/4 hosts, p³/2 switch links.
//
// Ports: edge switch 1..p/2 hosts, p/2+i to aggregation switch i of its
// pod; aggregation switch 1..p/2 edge switches, p/2+j to core j of its
// group; core port q to pod q.
func FatTree(p int) (*Graph, error) {
	if p < 2 || p%2 != 0 {
		return nil, badArg("p", "must be even and at least 2, got %d", p)
	}
	if err := checkSize(5*float64(p)*float64(p)/4+pow(float64(p), 3)/4, 0.75*pow(float64(p), 3)); err != nil {
		return nil, err
	}
	k := p / 2
	g := sized("fattree:"+strconv.Itoa(p), 5*p*p/4+p*p*p/4, 3*p*p*p/4)
	cores := make([]NodeID, k*k)
	for i := range cores {
		cores[i] = g.sw("core")
	}
	aggs := make([]NodeID, p*k)
	for i := range aggs {
		aggs[i] = g.sw("agg")
	}
	edges := make([]NodeID, p*k)
	for i := range edges {
		edges[i] = g.sw("edge")
	}
	for q := range p {
		for i := range k {
			a := aggs[q*k+i]
			for j := range k {
				g.link(a, k+j+1, cores[i*k+j], q+1, DefaultRate)
			}
			for e := range k {
				g.link(edges[q*k+e], k+i+1, a, e+1, DefaultRate)
			}
		}
	}
	for _, e := range edges {
		g.attachHosts(e, k, DefaultRate)
	}
	return g.b.Graph()
}

// LeafSpine builds a two-tier Clos: s spines, l leaves each linked to every
// spine, h hosts per leaf. Leaf ports: 1..h hosts, h+j spine j; spine port
// i is leaf i.
func LeafSpine(s, l, h int) (*Graph, error) {
	return leafSpine(fmt.Sprintf("leafspine:%d,%d,%d", s, l, h), s, l, h, DefaultRate)
}

// larger names the field whose term is the larger of a sum that went over a
// limit: the one to blame.
func larger(a string, x int, b string, y int) string {
	if y > x {
		return b
	}
	return a
}

func leafSpine(name string, s, l, h int, rate int64) (*Graph, error) {
	switch {
	case s < 1:
		return nil, badArg("S", "need at least 1 spine, got %d", s)
	case l < 1:
		return nil, badArg("L", "need at least 1 leaf, got %d", l)
	case h < 0:
		return nil, badArg("H", "hosts per leaf must not be negative, got %d", h)
	case l > MaxPorts:
		return nil, badArg("L", "a spine would have more than %d ports (one per leaf)", MaxPorts)
	case h > MaxPorts-s:
		// not s+h, which a huge h (called directly) wraps negative
		return nil, badArg(larger("S", s, "H", h), "a leaf would have more than %d ports (S spines + H hosts)", MaxPorts)
	}
	if err := checkSize(float64(s)+float64(l)*float64(1+h), float64(l)*float64(s+h)); err != nil {
		return nil, err
	}
	g := sized(name, s+l+l*h, s*l+l*h)
	spines := make([]NodeID, s)
	for i := range spines {
		spines[i] = g.sw("spine")
	}
	leaves := make([]NodeID, l)
	for i := range leaves {
		leaves[i] = g.sw("leaf")
	}
	for i, lf := range leaves {
		for j, sp := range spines {
			g.link(lf, h+j+1, sp, i+1, rate)
		}
	}
	for _, lf := range leaves {
		g.attachHosts(lf, h, rate)
	}
	return g.b.Graph()
}

// HyperX builds the 2-D HyperX of Ahn et al. (SPAIN's HyperX(k)): k×k
// switches, each linked to every other switch of its row and of its
// column, t hosts per switch (SPAIN uses 24). Switch (r,c) is s(r·k+c+1).
// Ports: 1..t hosts, then the k-1 row peers in column order, then the k-1
// column peers in row order.
func HyperX(k, t int) (*Graph, error) {
	if k < 1 {
		return nil, badArg("k", "need at least 1 switch per dimension, got %d", k)
	}
	if t < 0 {
		// a negative count would number the peer ports from below 1,
		// which wrap around as 16-bit port numbers
		return nil, badArg("T", "hosts per switch must not be negative, got %d", t)
	}
	if t > MaxPorts || t+2*(k-1) > MaxPorts { // t first: a huge t wraps the sum negative
		return nil, badArg(larger("k", 2*(k-1), "T", t), "a switch would have more than %d ports (2(k-1) peers + T hosts)", MaxPorts)
	}
	if err := checkSize(float64(k)*float64(k)*float64(1+t), float64(k)*float64(k)*float64(k-1+t)); err != nil {
		return nil, err
	}
	g := sized(fmt.Sprintf("hyperx:%d,%d", k, t), k*k*(1+t), k*k*(k-1)+k*k*t)
	sw := make([]NodeID, k*k)
	for i := range sw {
		sw[i] = g.sw("")
	}
	// peer index of b among a's k-1 peers along one dimension
	idx := func(a, b int) int {
		if b < a {
			return b
		}
		return b - 1
	}
	for r := range k {
		for c1 := range k {
			for c2 := c1 + 1; c2 < k; c2++ {
				g.link(sw[r*k+c1], t+idx(c1, c2)+1, sw[r*k+c2], t+idx(c2, c1)+1, DefaultRate)
			}
		}
	}
	for c := range k {
		for r1 := range k {
			for r2 := r1 + 1; r2 < k; r2++ {
				g.link(sw[r1*k+c], t+k-1+idx(r1, r2)+1, sw[r2*k+c], t+k-1+idx(r2, r1)+1, DefaultRate)
			}
		}
	}
	for _, s := range sw {
		g.attachHosts(s, t, DefaultRate)
	}
	return g.b.Graph()
}

// BCube builds the server-centric BCube of Guo et al. as SPAIN counts it
// (BCube(p, l)): p^l servers, each with l NICs, and l levels of p^(l-1)
// p-port switches. Server x has base-p digits x_{l-1}..x_0; its NIC i+1
// joins the level-i switch shared by the servers that differ from x only
// in digit i, on that switch's port x_i+1. Servers relay (Relay is set), so
// every link is a fabric link.
func BCube(p, l int) (*Graph, error) {
	if p < 2 {
		return nil, badArg("p", "switches need at least 2 ports, got %d", p)
	}
	if l < 1 {
		return nil, badArg("l", "need at least 1 level, got %d", l)
	}
	if p > MaxPorts {
		return nil, badArg("p", "a switch would have more than %d ports (p)", MaxPorts)
	}
	// All of it counts: p^l servers, l·p^(l-1) switches and l·p^l links
	// (servers alone let BCube(2000,2), 4,004,000 nodes, and BCube(8,7),
	// 14.7 million links, through).
	servers := pow(float64(p), l)
	if servers+float64(l)*servers/float64(p) > MaxNodes || float64(l)*servers > MaxLinks {
		return nil, fmt.Errorf("%w: bcube:%d,%d", ErrTooLarge, p, l)
	}
	hosts := 1
	for range l {
		hosts *= p
	}
	perLevel := hosts / p
	g := sized(fmt.Sprintf("bcube:%d,%d", p, l), hosts+l*perLevel, l*hosts)
	sw := make([]NodeID, l*perLevel)
	for i := range sw {
		sw[i] = g.sw("level" + strconv.Itoa(i/perLevel))
	}
	hs := make([]NodeID, hosts)
	for x := range hs {
		hs[x] = g.host()
		n := g.b.Node(hs[x])
		n.Relay = true
		n.Role = "server"
	}
	pi := 1 // p^i
	for i := range l {
		for x := range hosts {
			digit := (x / pi) % p
			s := (x/(pi*p))*pi + x%pi
			g.link(hs[x], i+1, sw[i*perLevel+s], digit+1, DefaultRate)
		}
		pi *= p
	}
	return g.b.Graph()
}

// CiscoDC builds Cisco's three-tier data-center design as SPAIN
// parameterizes it (CiscoDC(m, a)) with 24 hosts per access switch.
func CiscoDC(m, a int) (*Graph, error) { return CiscoDCHosts(m, a, 24) }

// CiscoDCHosts builds CiscoDC(m, a) with h hosts per access switch: two
// core switches joined by a link; m aggregation modules, each a pair of
// aggregation switches joined by a link and each linked to both cores; a
// pairs of access switches per module, each access switch linked to both
// aggregation switches of its module and to its pair.
//
// Ports: access 1..h hosts, h+1 and h+2 the module's aggregation switches,
// h+3 its pair; aggregation 1..2a access switches, 2a+1 its pair, 2a+2 and
// 2a+3 the cores; core 1..2m aggregation switches, 2m+1 the other core.
func CiscoDCHosts(m, a, h int) (*Graph, error) {
	switch {
	case m < 1:
		return nil, badArg("m", "need at least 1 aggregation module, got %d", m)
	case a < 1:
		return nil, badArg("a", "need at least 1 access pair per module, got %d", a)
	case h < 0:
		return nil, badArg("H", "hosts per access switch must not be negative, got %d", h)
	case 2*m+1 > MaxPorts:
		return nil, badArg("m", "a core switch would have more than %d ports (2m+1)", MaxPorts)
	case 2*a+3 > MaxPorts:
		return nil, badArg("a", "an aggregation switch would have more than %d ports (2a+3)", MaxPorts)
	case h > MaxPorts-3: // not h+3, which a huge h wraps negative
		return nil, badArg("H", "an access switch would have more than %d ports (H+3)", MaxPorts)
	}
	if err := checkSize(2+2*float64(m)+2*float64(m)*float64(a)*float64(1+h), 1+5*float64(m)+float64(m)*float64(a)*float64(5+2*h)); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("ciscodc:%d,%d", m, a)
	if h != 24 {
		name += "," + strconv.Itoa(h)
	}
	g := sized(name, 2+2*m+2*m*a*(1+h), 1+5*m+5*m*a+2*m*a*h)
	core := [2]NodeID{g.sw("core"), g.sw("core")}
	aggs := make([]NodeID, 2*m)
	for i := range aggs {
		aggs[i] = g.sw("agg")
	}
	acc := make([]NodeID, 2*m*a)
	for i := range acc {
		acc[i] = g.sw("access")
	}
	g.link(core[0], 2*m+1, core[1], 2*m+1, DefaultRate)
	for q := range m {
		ag := aggs[2*q : 2*q+2]
		for x := range 2 {
			for c := range 2 {
				g.link(ag[x], 2*a+2+c, core[c], 2*q+x+1, DefaultRate)
			}
		}
		g.link(ag[0], 2*a+1, ag[1], 2*a+1, DefaultRate)
		for j := range a {
			pair := acc[2*(q*a+j) : 2*(q*a+j)+2]
			for y := range 2 {
				for x := range 2 {
					g.link(pair[y], h+x+1, ag[x], 2*j+y+1, DefaultRate)
				}
			}
			g.link(pair[0], h+3, pair[1], h+3, DefaultRate)
		}
	}
	for _, s := range acc {
		g.attachHosts(s, h, DefaultRate)
	}
	return g.b.Graph()
}

// Cube builds DumbNet's cube: an X×Y×Z 3-D mesh of switches, each linked to
// its neighbours along every axis, h hosts per switch.
func Cube(x, y, z, h int) (*Graph, error) { return grid("cube", x, y, z, h, false) }

// Torus is Cube with wrap-around links along every axis of size 3 or more
// (on an axis of size 2 the wrap link would duplicate the mesh link).
func Torus(x, y, z, h int) (*Graph, error) { return grid("torus", x, y, z, h, true) }

// grid builds cube and torus. Switch (i,j,k) is s(((i·Y)+j)·Z+k+1). Ports:
// 1..h hosts, then the next free port in link order: along X for every
// switch in ID order, then Y, then Z; each switch links to its + neighbour,
// and in a torus the last one wraps to the first.
func grid(kind string, x, y, z, h int, wrap bool) (*Graph, error) {
	dims := [3]int{x, y, z}
	for i, n := range dims {
		if n < 1 {
			return nil, badArg(string("XYZ"[i]), "must be at least 1, got %d", n)
		}
	}
	if h < 0 {
		return nil, badArg("H", "hosts per switch must not be negative, got %d", h)
	}
	if h > MaxPorts-6 { // not h+6, which a huge h wraps negative
		return nil, badArg("H", "a switch would have more than %d ports (H hosts + up to 6 mesh neighbours)", MaxPorts)
	}
	sz := float64(x) * float64(y) * float64(z)
	if err := checkSize(sz*float64(1+h), sz*float64(3+h)); err != nil {
		return nil, err
	}
	n := x * y * z
	g := sized(fmt.Sprintf("%s:%d,%d,%d,%d", kind, x, y, z, h), n*(1+h), 3*n+n*h)
	sw := make([]NodeID, n)
	for i := range sw {
		sw[i] = g.sw("")
	}
	for _, s := range sw {
		g.attachHosts(s, h, DefaultRate) // ports 1..h, so Connect continues at h+1
	}
	stride := [3]int{y * z, z, 1}
	for d := range 3 {
		for id := range n {
			c := (id / stride[d]) % dims[d]
			switch {
			case c+1 < dims[d]:
				g.b.Connect(sw[id], sw[id+stride[d]])
			case wrap && dims[d] >= 3:
				g.b.Connect(sw[id], sw[id-c*stride[d]])
			}
		}
	}
	return g.b.Graph()
}

// Line builds Axon Fig. 4.2: n switches in a line, 2 hosts each. Ports 1
// and 2 are the hosts; the switch links take the next ports in link order
// s1–s2, s2–s3, ...
func Line(n int) (*Graph, error) {
	if n < 1 {
		return nil, badArg("n", "need at least 1 switch, got %d", n)
	}
	if err := checkSize(3*float64(n), 3*float64(n)); err != nil {
		return nil, err
	}
	return chain(fmt.Sprintf("line:%d", n), n, false)
}

// Ring builds Axon Fig. 4.3: n switches in a ring, 2 hosts each, ports as
// in Line with the closing link sn–s1 last.
func Ring(n int) (*Graph, error) {
	if n < 3 {
		return nil, badArg("n", "a ring needs at least 3 switches, got %d", n)
	}
	if err := checkSize(3*float64(n), 3*float64(n)); err != nil {
		return nil, err
	}
	return chain(fmt.Sprintf("ring:%d", n), n, true)
}

func chain(name string, n int, ring bool) (*Graph, error) {
	links := 3*n - 1
	if ring {
		links++
	}
	g := sized(name, 3*n, links)
	sw := make([]NodeID, n)
	for i := range sw {
		sw[i] = g.sw("")
	}
	for i := range sw {
		g.attachHosts(sw[i], 2, DefaultRate)
	}
	for i := 0; i+1 < n; i++ {
		g.b.Connect(sw[i], sw[i+1])
	}
	if ring {
		g.b.Connect(sw[n-1], sw[0])
	}
	return g.b.Graph()
}

// Jellyfish builds the random regular topology of Singla et al.: n
// switches with k ports, r of them linked to other switches at random and
// k-r to hosts. Construction follows the paper: join random pairs of
// switches that have free ports and are not yet neighbours until no pair
// is left; then a switch with two or more free ports takes them by
// removing a random link (x,y) and linking itself to x and y. The seed
// makes it reproducible. Ports: 1..k-r hosts, then the switch links in
// order of the neighbour's ID.
func Jellyfish(n, k, r int, seed uint64) (*Graph, error) {
	switch {
	case n < 2:
		return nil, badArg("N", "need at least 2 switches, got %d", n)
	case k < 1 || k > MaxPorts:
		return nil, badArg("K", "ports per switch must be 1..%d, got %d", MaxPorts, k)
	case r < 1 || r > k:
		return nil, badArg("R", "switch ports must be 1..K (%d), got %d", k, r)
	case r >= n:
		return nil, badArg("R", "must be below N (%d) for a graph without parallel links, got %d", n, r)
	case float64(n)*float64(1+k-r) > MaxNodes || float64(n)*(float64(r)/2+float64(k-r)) > MaxLinks:
		return nil, checkSize(float64(n)*float64(1+k-r), float64(n)*(float64(r)/2+float64(k-r)))
	case r < 3 && r != n-1:
		// R = 1 is a matching and R = 2 a union of cycles: almost never
		// connected. A full mesh (R = N-1) always is.
		return nil, badArg("R", "need at least 3 switch ports per switch for a connected random graph (or R = N-1 for a full mesh), got %d", r)
	}
	rng := rand.New(rand.NewPCG(seed, 0x6a656c6c79666973)) // "jellyfis"
	// A random regular graph with R >= 3 is connected with high
	// probability; the rare disconnected draw is redrawn from the same
	// random stream, so the result stays a function of the seed.
	for attempt := 0; attempt < 64; attempt++ {
		adj := jellyfishAdj(n, r, rng)
		if connectedAdj(adj) {
			return jellyfishGraph(n, k, r, adj)
		}
	}
	return nil, badArg("R", "no connected graph in 64 draws; try another seed")
}

// connectedAdj reports whether an adjacency list is one component.
func connectedAdj(adj [][]int32) bool {
	seen := make([]bool, len(adj))
	stack := []int32{0}
	seen[0] = true
	count := 1
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, v := range adj[u] {
			if !seen[v] {
				seen[v] = true
				count++
				stack = append(stack, v)
			}
		}
	}
	return count == len(adj)
}

// jellyfishAdj draws one random graph of n switches with r links each.
//
// Dense draws (R near N) must not cost more per link than sparse ones:
// whether two switches are linked is one bit of an N×N matrix when R is
// large (a scan of R neighbours otherwise), and the exhaustive search for
// a joinable pair, which dense draws need thousands of times, counts the
// joinable pairs per row of open switches (a Fenwick tree, kept up to
// date as links are added and switches fill up) instead of listing all
// pairs again. It finds the pair the listing would, so a seed draws the
// same graph as before; jellyfish:400,399,398 took 82 s, and
// jellyfish:1000,999,998 did not finish in hours.
func jellyfishAdj(n, r int, rng *rand.Rand) [][]int32 {
	adj := make([][]int32, n)
	free := make([]int, n)
	for i := range free {
		free[i] = r
	}
	type edge struct{ a, b int32 }
	var edges []edge
	// mat[a*n+b] says a and b are linked, for dense draws with a matrix
	// of at most 32 MB; sparse ones scan the (short) neighbour list.
	var mat []uint64
	if r >= 32 && n <= 1<<14 {
		mat = make([]uint64, (n*n+63)/64)
	}
	setBit := func(a, b int32, on bool) {
		for _, i := range [2]int{int(a)*n + int(b), int(b)*n + int(a)} {
			if on {
				mat[i/64] |= 1 << (i % 64)
			} else {
				mat[i/64] &^= 1 << (i % 64)
			}
		}
	}
	linked := func(a, b int32) bool {
		if mat != nil {
			i := int(a)*n + int(b)
			return mat[i/64]&(1<<(i%64)) != 0
		}
		return slices.Contains(adj[a], b)
	}
	// open holds the switches with free ports; pos[s] is s's index in it
	// (-1 once full), so a full switch leaves in O(1).
	open := make([]int32, n)
	pos := make([]int32, n)
	for i := range open {
		open[i], pos[i] = int32(i), int32(i)
	}
	// The joinable pairs (two open switches, not linked), as the
	// exhaustive search lists them: by the position in open of the first
	// switch, then of the second. rows counts them by the first position,
	// from the first search on (rows != nil); until the fix-up, pairs only
	// stop being joinable (no link is removed, no full switch frees a
	// port), so the counts are kept, not recounted.
	var rows fenwick
	joinable := 0
	add := func(a, b int32) {
		if rows != nil && pos[a] >= 0 && pos[b] >= 0 {
			rows.add(int(min(pos[a], pos[b])), -1)
			joinable--
		}
		adj[a] = append(adj[a], b)
		adj[b] = append(adj[b], a)
		free[a]--
		free[b]--
		edges = append(edges, edge{a, b})
		if mat != nil {
			setBit(a, b, true)
		}
	}
	drop := func(a, b int32) {
		adj[a] = slices.DeleteFunc(adj[a], func(x int32) bool { return x == b })
		adj[b] = slices.DeleteFunc(adj[b], func(x int32) bool { return x == a })
		free[a]++
		free[b]++
		if mat != nil {
			setBit(a, b, false)
		}
	}
	leave := func(s int32) {
		if free[s] > 0 || pos[s] < 0 {
			return
		}
		last := open[len(open)-1]
		if rows != nil {
			// s's pairs go; the last switch's pairs move to s's place.
			for _, v := range open {
				if v != s && !linked(s, v) {
					rows.add(int(min(pos[s], pos[v])), -1)
					joinable--
				}
			}
			for _, v := range open {
				if v != s && v != last && !linked(last, v) && pos[s] < pos[v] {
					rows.add(int(pos[v]), -1)
					rows.add(int(pos[s]), 1)
				}
			}
		}
		open[pos[s]], pos[last] = last, pos[s]
		open, pos[s] = open[:len(open)-1], -1
	}
	for len(open) >= 2 {
		// Random pairs first; when they keep colliding, look for any
		// joinable pair exhaustively (the open set is small by then).
		var a, c int32 = -1, -1
		for range 8 {
			i, j := rng.IntN(len(open)), rng.IntN(len(open))
			if i != j && !linked(open[i], open[j]) {
				a, c = open[i], open[j]
				break
			}
		}
		if a < 0 {
			if rows == nil {
				rows = make(fenwick, len(open)+1)
				for i := range open {
					for j := i + 1; j < len(open); j++ {
						if !linked(open[i], open[j]) {
							rows.add(i, 1)
							joinable++
						}
					}
				}
			}
			if joinable == 0 {
				break
			}
			// the k-th pair: its row, then its second switch
			i, k := rows.find(rng.IntN(joinable))
			a = open[i]
			for j := i + 1; ; j++ {
				if !linked(a, open[j]) {
					if k == 0 {
						c = open[j]
						break
					}
					k--
				}
			}
		}
		add(a, c)
		leave(a)
		leave(c)
	}
	// Fix-up: a switch with two or more free ports splices itself into a
	// random link of two switches it is not yet linked to.
	// In a dense draw few links can take a switch (every link touches it
	// or one of its neighbours but a handful, or all of them): the tries
	// are the same draws, but after 64 misses the links that can are
	// listed once, in one pass, and each try looks its index up there
	// instead of reading a random link (jellyfish:4000,3999,3998 read
	// 8 million links at random a few million times). The draws, and so
	// the graph, are what they were.
	splices := func(s int32, e edge) bool {
		return e.a != s && e.b != s && !linked(s, e.a) && !linked(s, e.b)
	}
	for s := range n {
		fails := 0
		var can []int // indices of the links that can take s, after 64 misses
		for tries := 0; free[s] >= 2 && tries < 16*len(edges)+16; tries++ {
			ei := rng.IntN(len(edges))
			if fails >= 64 {
				if _, ok := slices.BinarySearch(can, ei); !ok {
					continue
				}
			} else if !splices(int32(s), edges[ei]) {
				if fails++; fails == 64 {
					can = can[:0]
					for i, e := range edges {
						if splices(int32(s), e) {
							can = append(can, i)
						}
					}
				}
				continue
			}
			fails = 0
			e := edges[ei]
			drop(e.a, e.b)
			edges[ei] = edges[len(edges)-1]
			edges = edges[:len(edges)-1]
			add(int32(s), e.a)
			add(int32(s), e.b)
		}
	}
	return adj
}

// jellyfishGraph numbers the ports of a drawn graph and adds the hosts.
func jellyfishGraph(n, k, r int, adj [][]int32) (*Graph, error) {
	h := k - r
	g := sized(fmt.Sprintf("jellyfish:%d,%d,%d", n, k, r), n*(1+h), n*r/2+n*h)
	sw := make([]NodeID, n)
	for i := range sw {
		sw[i] = g.sw("")
	}
	next := make([]int, n)
	for i := range next {
		next[i] = h + 1
		slices.Sort(adj[i])
	}
	for a := range n {
		for _, b := range adj[a] {
			if int(b) > a {
				g.link(sw[a], next[a], sw[b], next[b], DefaultRate)
				next[a]++
				next[b]++
			}
		}
	}
	for _, s := range sw {
		g.attachHosts(s, h, DefaultRate)
		g.b.Node(s).Ports = k // free fabric ports stay as unconnected ports
	}
	return g.b.Graph()
}

// Rates of the seeds' testbeds.
const (
	Rate1G  int64 = 1_000_000_000
	Rate10G int64 = 10_000_000_000
)

// SpainFig2 builds SPAIN Fig. 2, reconstructed from the prose (the figure
// is not in the text): seven switches, a one-level tree with s1 as root
// and s2..s7 below it, plus three cross-connects per non-root switch. The
// cross-connects form the 3-regular graph drawn as a hexagon with its three
// long diagonals (s2–s3–s4–s5–s6–s7–s2 and s2–s5, s3–s6, s4–s7). One host
// hangs off each non-root switch (h1 on s2 .. h6 on s7). Ports: s1 port i
// is s(i+1); s2..s7 port 1 is the host, port 2 the root, then the
// cross-connects in link order.
func SpainFig2() (*Graph, error) {
	g := newGen("spain-fig2")
	root := g.sw("root")
	var leaf [6]NodeID
	for i := range leaf {
		leaf[i] = g.sw("edge")
	}
	for i, s := range leaf {
		g.link(s, 1, g.host(), 1, DefaultRate)
		g.link(root, i+1, s, 2, DefaultRate)
	}
	for i := range 6 {
		g.b.Connect(leaf[i], leaf[(i+1)%6])
	}
	for i := range 3 {
		g.b.Connect(leaf[i], leaf[i+3])
	}
	return g.b.Graph()
}

// SpainTestbed builds SPAIN Fig. 4 (§10.1), reconstructed from the prose:
// the core switch TS linked to the rack switches S1, S2, S3 at 10 Gb/s,
// the added 10 Gb/s cross-connects S1–S2, S2–S3, S3–S1, and 23, 28 and 29
// servers on S1, S2, S3 at 1 Gb/s (h1..h23, h24..h51, h52..h80). Ports: TS
// port i is Si; Si ports 1..n are its servers, n+1 the core, then the
// cross-connects in link order.
func SpainTestbed() (*Graph, error) {
	b := NewBuilder("spain-testbed")
	ts := b.AddNode("TS", Switch)
	b.Node(ts).Role = "core"
	counts := [3]int{23, 28, 29}
	var racks [3]NodeID
	for i := range racks {
		racks[i] = b.AddNode("S"+strconv.Itoa(i+1), Switch)
		b.Node(racks[i]).Role = "tor"
	}
	h := 0
	for i, s := range racks {
		for p := 1; p <= counts[i]; p++ {
			h++
			b.ConnectPorts(End{s, Port(p)}, End{b.AddNode("h"+strconv.Itoa(h), Host), 1}, Rate1G, DefaultDelay)
		}
		b.ConnectPorts(End{ts, Port(i + 1)}, End{s, Port(counts[i] + 1)}, Rate10G, DefaultDelay)
	}
	for i := range racks {
		a, c := racks[i], racks[(i+1)%3]
		b.ConnectPorts(End{a, b.nextPort(a)}, End{c, b.nextPort(c)}, Rate10G, DefaultDelay)
	}
	return b.Graph()
}

// DumbNetFig1 builds DumbNet Fig. 1, reconstructed from §3.2 and §4.1 (the
// figure is not in the text). The prose fixes S2-1–S3-2, S3-1–S1-1,
// S1-2–S4-1 (the text's "S4-2" contradicts its own probe 1-2-0-1-1-9),
// S4-2 towards S2, S2-3 towards S5, C3 on S3-9, H3 on S3-5, H1 on S1-5 and
// H5 on S5-5. Completed by symmetry: S1 and S2 are spines and S3, S4, S5
// leaves, spine j's port i is leaf i and leaf port j is spine j, and host
// Hi sits on port 5 of Si. Switch IDs are S1..S5, hosts H1..H5 then C3.
func DumbNetFig1() (*Graph, error) {
	b := NewBuilder("dumbnet-fig1")
	var s [5]NodeID
	for i := range s {
		s[i] = b.AddNode("S"+strconv.Itoa(i+1), Switch)
		b.Node(s[i]).Role = "leaf"
	}
	b.Node(s[0]).Role, b.Node(s[1]).Role = "spine", "spine"
	for leaf := 2; leaf < 5; leaf++ {
		for spine := range 2 {
			b.ConnectPorts(End{s[spine], Port(leaf - 1)}, End{s[leaf], Port(spine + 1)}, DefaultRate, DefaultDelay)
		}
	}
	for i := range s {
		b.ConnectPorts(End{s[i], 5}, End{b.AddNode("H"+strconv.Itoa(i+1), Host), 1}, DefaultRate, DefaultDelay)
	}
	c3 := b.AddNode("C3", Host)
	b.Node(c3).Role = "controller"
	b.ConnectPorts(End{s[2], 9}, End{c3, 1}, DefaultRate, DefaultDelay)
	return b.Graph()
}

// DumbNetTestbed builds the DumbNet §7 testbed: a leaf-spine of 2 spines
// and 5 leaves, 5 servers per leaf, every link 10 Gb/s. (The paper counts
// 27 servers; 25 hang off the leaves as it describes, the other two are
// not placed by the text and are left out.)
func DumbNetTestbed() (*Graph, error) {
	return leafSpine("dumbnet-testbed", 2, 5, 5, Rate10G)
}

// fenwick is a Fenwick (binary indexed) tree of counts over 0..len-2.
type fenwick []int

// add adds d to the count at i.
func (f fenwick) add(i, d int) {
	for i++; i < len(f); i += i & -i {
		f[i] += d
	}
}

// find returns the index i whose counts up to and including it first
// exceed k, and k less the counts before i; k must be below the total.
func (f fenwick) find(k int) (int, int) {
	i := 0
	for step := 1 << bits.Len(uint(len(f)-1)); step > 0; step >>= 1 {
		if j := i + step; j < len(f) && f[j] <= k {
			i = j
			k -= f[j]
		}
	}
	return i, k
}
