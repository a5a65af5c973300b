package plan

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/edgefabric/edgefabric/paths"
	"github.com/edgefabric/edgefabric/topo"
)

// Errors of the planner, wrapped with context.
var (
	// ErrTooManyVLANs: the fabric cannot be covered within 4094 VLAN IDs.
	ErrTooManyVLANs = errors.New("fabric cannot be covered within the 4094 usable VLAN IDs")
	// ErrVerify: a computed plan failed verification (a bug, never
	// written out).
	ErrVerify = errors.New("plan failed verification")
	// ErrBadOption: an option out of range.
	ErrBadOption = errors.New("bad option")
)

// MaxTrials bounds Options.Trials, MaxNCPTrials NCP's trials: more is
// never useful (a FatTree(4) trial takes milliseconds, a BCube(8,4) one
// over a minute) and would only exhaust time or memory.
const (
	MaxTrials    = 10_000
	MaxNCPTrials = 100_000
)

// Options configures Compute.
type Options struct {
	// K is the path-set size per pair of edge nodes; 0 means α, the
	// maximum number of edge-disjoint paths between edge nodes.
	K int
	// Trials is N of Algorithm 2: randomized packing runs, the best kept.
	// 0 means 10.
	Trials int
	Seed   uint64
	// Serial packs with the paper's serial Algorithm 2 only; otherwise
	// the parallel packer runs the same trials plus the tree-cover and
	// best-fit variants on every core and keeps the best.
	Serial bool
	// Ties is Algorithm 1's tie-breaking rule (pair by default, the zero value).
	Ties    paths.Ties
	Workers int
	// NoPrune keeps the parallel packer's best trial as it came out;
	// otherwise whole VLANs whose paths fit into the others are deleted
	// (paths.Prune): from every trial, keeping the best pruned one, on
	// path sets of up to paths.PruneEachLimit paths, from the best trial
	// only up to paths.PruneLimit. The serial packer never prunes: it is
	// Algorithm 2 as published.
	NoPrune bool
	// SkipVLANs are VLAN IDs the plan must not use (platform-reserved
	// ones, such as 1002-1005 on Cisco IOS, or IDs already in use): the
	// VLANs take the lowest free IDs instead. Each in 2..4094; VLAN 1 is
	// the default tree and cannot be skipped.
	SkipVLANs []int
}

// VLAN is one VLAN of the plan: its ID and its links as node-name pairs;
// Ports[i] are the port numbers of Links[i] at its two ends, which tell
// parallel links between the same two nodes apart.
type VLAN struct {
	ID    int         `json:"id"`
	Links [][2]string `json:"links"`
	Ports [][2]int    `json:"ports"`
}

// Plan is SPAIN's offline configuration of one fabric.
type Plan struct {
	Topology    string `json:"topology"`
	K           int    `json:"k"`
	KMode       string `json:"k_mode"` // "alpha" or "fixed"
	Ties        string `json:"ties"`   // "pair", "random", "ordered" or "node"
	Alpha       int    `json:"alpha"`
	AlphaExact  bool   `json:"alpha_exact"`
	EdgeNodes   int    `json:"edge_nodes"`
	FabricLinks int    `json:"fabric_links"`
	Pairs       int    `json:"pairs"`
	NumPaths    int    `json:"num_paths"`
	Root        string `json:"stp_root"`
	NumVLANs    int    `json:"num_vlans"`
	// SkipVLANs are the IDs the plan was told not to use, ascending.
	SkipVLANs []int `json:"skip_vlans"`
	// MaxSwitchVLANs is the most VLANs one forwarding node (a switch, or
	// a relaying server, which the deployment configures like one) is a
	// member of (VLAN 1 included), at MaxSwitchVLANsAt: what its VLAN
	// table must hold.
	MaxSwitchVLANs   int     `json:"max_switch_vlans"`
	MaxSwitchVLANsAt string  `json:"max_switch_vlans_at"`
	Coverage         float64 `json:"coverage"`
	STPCoverage      float64 `json:"stp_coverage"`
	Packing          Packing `json:"packing"`
	// Seconds is the wall time of each phase.
	Seconds Timing `json:"seconds"`
	VLANs   []VLAN `json:"vlans"`

	F    *paths.Fabric  `json:"-"`
	Tree *paths.Tree    `json:"-"`
	PS   *paths.PathSet `json:"-"`
	Pack *paths.Packing `json:"-"`
	// linkVLANs[l*words:(l+1)*words]: bitset of VLAN indices holding
	// link l; ids[i] is the ID of VLAN index i.
	linkVLANs []uint64
	words     int
	ids       []int
}

// Timing is the wall time of the planner's phases, in seconds.
type Timing struct {
	Paths float64 `json:"paths"`
	Pack  float64 `json:"pack"`
	// Prune is the time pruning took: the best trial's, or on path sets
	// where every trial is pruned (inside Pack, on all cores) the sum over
	// the trials; 0 when it did not run.
	Prune  float64 `json:"prune"`
	Verify float64 `json:"verify"`
}

// Packing describes how the VLANs were found.
type Packing struct {
	Algorithm  string `json:"algorithm"` // "serial" or "parallel"
	Trials     int    `json:"trials"`
	BestTrial  int    `json:"best_trial"`
	Strategy   string `json:"best_strategy"`
	TrialVLANs []int  `json:"trial_vlans"`
	// Pruned is the number of VLANs pruning deleted from the best trial.
	Pruned int `json:"pruned"`
	// LoosePaths is the number of paths the best trial, a tree cover,
	// found in no candidate tree, and LooseWay how it placed them
	// ("majority round" or "best fit"; absent when none).
	LoosePaths int    `json:"loose_paths"`
	LooseWay   string `json:"loose_way,omitempty"`
}

// Compute plans SPAIN on g: path sets (Algorithm 1), VLAN packing
// (Algorithm 2), VLAN 1 as the 802.1D tree, then verifies the result.
func Compute(g *topo.Graph, opt Options) (*Plan, error) {
	if opt.K < 0 {
		return nil, fmt.Errorf("plan: k=%d: %w", opt.K, paths.ErrBadK)
	}
	if opt.Trials < 0 || opt.Trials > MaxTrials {
		return nil, fmt.Errorf("plan: trials=%d: %w: must be 1 to %d", opt.Trials, ErrBadOption, MaxTrials)
	}
	if opt.Trials == 0 {
		opt.Trials = 10
	}
	skip := map[int]bool{}
	for _, id := range opt.SkipVLANs {
		if id < 2 || id > paths.MaxVLANs {
			return nil, fmt.Errorf("plan: skip VLAN %d: %w: only IDs 2 to %d can be skipped (VLAN 1 is the default tree)", id, ErrBadOption, paths.MaxVLANs)
		}
		skip[id] = true
	}
	f, err := paths.NewFabric(g)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	p := &Plan{Topology: g.Name, F: f, EdgeNodes: len(f.Edges), FabricLinks: f.NumFabricLinks, Ties: opt.Ties.String(), SkipVLANs: []int{}}
	for id := range skip {
		p.SkipVLANs = append(p.SkipVLANs, id)
	}
	slices.Sort(p.SkipVLANs)
	a := paths.Alpha(f)
	p.Alpha, p.AlphaExact = a.Alpha, a.Exact
	p.K, p.KMode = opt.K, "fixed"
	if opt.K == 0 {
		p.K, p.KMode = max(a.Alpha, 1), "alpha"
	}
	p.Tree = paths.STP(f)
	p.Root = g.Node(p.Tree.Root).Name
	t0 := time.Now()
	p.PS, err = paths.ComputePathSets(f, paths.PathOptions{K: p.K, Seed: opt.Seed, Ties: opt.Ties, Workers: opt.Workers})
	if errors.Is(err, paths.ErrTooLarge) {
		return nil, fmt.Errorf("plan: %w; lower --k or split the fabric into several SPAIN domains", err)
	}
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	p.Pairs, p.NumPaths = len(p.PS.Pairs), p.PS.NumPaths()
	t1 := time.Now()
	p.Seconds.Paths = t1.Sub(t0).Seconds()
	prune := !opt.Serial && !opt.NoPrune
	pruneEach := prune && p.NumPaths <= paths.PruneEachLimit
	p.Pack, err = paths.Pack(f, p.PS, p.Tree.Links, paths.PackOptions{
		Trials: opt.Trials, Seed: opt.Seed, Parallel: !opt.Serial, Workers: opt.Workers,
		PruneEach: pruneEach,
	})
	if errors.Is(err, paths.ErrTooManyVLANs) {
		pairs := fmt.Sprintf("%d edge-node pairs", p.Pairs)
		if p.Pairs == 1 {
			pairs = "1 edge-node pair"
		}
		return nil, fmt.Errorf("plan: %s: %w: every packing trial needed more than %d VLANs for %d paths of %s; lower --k or split the fabric into several SPAIN domains",
			g.Name, ErrTooManyVLANs, paths.MaxVLANs, p.NumPaths, pairs)
	}
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	t2 := time.Now()
	p.Seconds.Pack = t2.Sub(t1).Seconds()
	p.Seconds.Prune = p.Pack.PruneSeconds
	if prune && !pruneEach && p.NumPaths <= paths.PruneLimit {
		paths.Prune(f, p.PS, p.Pack)
		t3 := time.Now()
		p.Seconds.Prune = t3.Sub(t2).Seconds()
		t2 = t3
	}
	p.NumVLANs = len(p.Pack.VLANs)
	if free := paths.MaxVLANs - len(p.SkipVLANs); p.NumVLANs > free {
		return nil, fmt.Errorf("plan: %s: %w: the plan needs %d VLANs, and skipping %d IDs leaves %d; skip fewer, lower --k or split the fabric into several SPAIN domains",
			g.Name, ErrTooManyVLANs, p.NumVLANs, len(p.SkipVLANs), free)
	}
	for id := 1; len(p.ids) < p.NumVLANs; id++ {
		if !skip[id] {
			p.ids = append(p.ids, id)
		}
	}
	p.Packing = Packing{Algorithm: "parallel", Trials: p.Pack.Trials, BestTrial: p.Pack.BestTrial,
		Strategy: p.Pack.BestStrategy.String(), TrialVLANs: p.Pack.TrialVLANs, Pruned: p.Pack.Pruned,
		LoosePaths: p.Pack.Loose, LooseWay: p.Pack.LooseWay}
	if opt.Serial {
		p.Packing.Algorithm = "serial"
	}
	for i, ls := range p.Pack.VLANs {
		v := VLAN{ID: p.ids[i], Links: make([][2]string, 0, len(ls)), Ports: make([][2]int, 0, len(ls))}
		for _, l := range ls {
			lk := g.Link(l)
			v.Links = append(v.Links, [2]string{g.Node(lk.A.Node).Name, g.Node(lk.B.Node).Name})
			v.Ports = append(v.Ports, [2]int{int(lk.A.Port), int(lk.B.Port)})
		}
		p.VLANs = append(p.VLANs, v)
	}
	if err := p.Verify(); err != nil {
		return nil, err
	}
	p.Seconds.Verify = time.Since(t2).Seconds()
	p.maxSwitchVLANs()
	p.STPCoverage = float64(len(p.Tree.Used)) / float64(f.NumFabricLinks)
	used := make([]bool, g.NumLinks())
	n := 0
	mark := func(l topo.LinkID) {
		if !used[l] {
			used[l] = true
			n++
		}
	}
	for _, l := range p.PS.Links {
		mark(l)
	}
	for _, l := range p.Tree.Used {
		mark(l)
	}
	p.Coverage = float64(n) / float64(f.NumFabricLinks)
	if f.NumFabricLinks == 0 {
		// A single switch: no fabric link, none left uncovered (and 0/0
		// would be NaN, which JSON cannot carry).
		p.Coverage, p.STPCoverage = 1, 1
	}
	return p, nil
}

// id is the ID of VLAN index i: the i+1-th ID not skipped.
func (p *Plan) id(i int) int {
	if i < len(p.ids) {
		return p.ids[i]
	}
	return i + 1 // a plan Verify checks before its IDs are given
}

// maxSwitchVLANs finds the forwarding node that is a member of the most
// VLANs: VLAN 1 and every VLAN with a link at one of its ports.
func (p *Plan) maxSwitchVLANs() {
	g := p.F.G
	acc := make([]uint64, p.words)
	for v := range g.NumNodes() {
		n := topo.NodeID(v)
		if !g.Node(n).Forwards() {
			continue
		}
		clear(acc)
		acc[0] = 1 // VLAN 1
		for _, l := range g.Ports(n) {
			if l != topo.NoLink && p.F.IsFabric(l) {
				for k := range p.words {
					acc[k] |= p.linkVLANs[int(l)*p.words+k]
				}
			}
		}
		c := 0
		for _, w := range acc {
			c += bits.OnesCount64(w)
		}
		if c > p.MaxSwitchVLANs {
			p.MaxSwitchVLANs, p.MaxSwitchVLANsAt = c, g.Node(n).Name
		}
	}
}

// Verify checks, independently of the packer, that there are at most 4094
// VLANs, that VLAN 1 is the spanning tree, that every VLAN is loop-free and
// holds only fabric links, and that every computed path lies entirely
// inside one VLAN.
func (p *Plan) Verify() error {
	f := p.F
	vl := p.Pack.VLANs
	if len(vl) > paths.MaxVLANs {
		return fmt.Errorf("plan: %w: %d VLANs", ErrTooManyVLANs, len(vl))
	}
	if len(vl) == 0 || !slices.Equal(vl[0], sortedClone(p.Tree.Links)) {
		return fmt.Errorf("plan: %w: VLAN 1 is not the default spanning tree", ErrVerify)
	}
	n := f.G.NumNodes()
	parent := make([]int32, n)
	p.words = (len(vl) + 63) / 64
	p.linkVLANs = make([]uint64, f.G.NumLinks()*p.words)
	for i, ls := range vl {
		for v := range parent {
			parent[v] = int32(v)
		}
		for _, l := range ls {
			if !f.IsFabric(l) {
				return fmt.Errorf("plan: %w: VLAN %d holds host link %d", ErrVerify, p.id(i), l)
			}
			a, b := f.Ends(l)
			ra, rb := find(parent, int32(a)), find(parent, int32(b))
			if ra == rb {
				return fmt.Errorf("plan: %w: VLAN %d has a loop through %s-%s", ErrVerify, p.id(i), f.G.Node(a).Name, f.G.Node(b).Name)
			}
			parent[ra] = rb
			p.linkVLANs[int(l)*p.words+i/64] |= 1 << (i % 64)
		}
	}
	if err := p.verifyPaths(); err != nil {
		return err
	}
	// The path checks only read: all cores (tens of millions of paths on
	// the largest rows). The first path in no VLAN is reported. Where the
	// packer says which VLAN holds a path (PathVLAN), that VLAN is tested
	// first, one bit per link; only where it does not hold the path are
	// all VLANs searched, so a wrong hint costs time, never the verdict.
	// (BCube(8,4), 33.5 M paths: the search alone took 2.9 s, the hinted
	// test 0.3 s.)
	var bad atomic.Int64
	np := p.PS.NumPaths()
	bad.Store(int64(np))
	hint := p.Pack.PathVLAN
	if len(hint) != np {
		hint = nil
	}
	paths.ParallelFor(runtime.GOMAXPROCS(0), np, func(lo, hi int) {
		for j := lo; j < hi && int64(j) < bad.Load(); j++ {
			path := p.PS.Path(j)
			if hint != nil && p.holds(int(hint[j]), path) {
				continue
			}
			if p.vlanOf(path) < 0 {
				for b := bad.Load(); int64(j) < b && !bad.CompareAndSwap(b, int64(j)); b = bad.Load() {
				}
				return
			}
		}
	})
	if j := bad.Load(); j < int64(np) {
		return fmt.Errorf("plan: %w: path %d lies in no single VLAN", ErrVerify, j)
	}
	return nil
}

// verifyPaths checks the path set itself, which the VLAN checks take on
// trust: one entry per pair of edge nodes, at least one path per pair, and
// every path a walk over fabric links from its pair's A to its B.
func (p *Plan) verifyPaths() error {
	f, ps := p.F, p.PS
	ne := len(f.Edges)
	if len(ps.Pairs) != ne*(ne-1)/2 {
		return fmt.Errorf("plan: %w: %d pairs for %d edge nodes, want %d", ErrVerify, len(ps.Pairs), ne, ne*(ne-1)/2)
	}
	// As many pairs as there should be, each of two different edge nodes
	// and none twice: every pair is there.
	idx := make([]int, f.G.NumNodes())
	for i := range idx {
		idx[i] = -1
	}
	for i, e := range f.Edges {
		idx[e] = i
	}
	seen := make([]uint64, (ne*ne+63)/64)
	for _, pr := range ps.Pairs {
		a, b := -1, -1
		if int(pr.A) >= 0 && int(pr.A) < len(idx) && int(pr.B) >= 0 && int(pr.B) < len(idx) {
			a, b = idx[pr.A], idx[pr.B]
		}
		k := min(a, b)*ne + max(a, b)
		if a < 0 || b < 0 || a == b || seen[k/64]&(1<<(k%64)) != 0 {
			return fmt.Errorf("plan: %w: pair %d-%d (node IDs) is not a new pair of two edge nodes", ErrVerify, pr.A, pr.B)
		}
		seen[k/64] |= 1 << (k % 64)
	}
	var bad atomic.Int64 // the first bad pair, or len(Pairs)
	bad.Store(int64(len(ps.Pairs)))
	paths.ParallelFor(runtime.GOMAXPROCS(0), len(ps.Pairs), func(lo, hi int) {
		for i := lo; i < hi && int64(i) < bad.Load(); i++ {
			pr := ps.Pairs[i]
			plo, phi := ps.PairPaths(i)
			ok := phi > plo
			for j := plo; j < phi && ok; j++ {
				v := pr.A
				for _, l := range ps.Path(j) {
					a, b := f.Ends(l)
					switch {
					case !f.IsFabric(l):
						ok = false
					case v == a:
						v = b
					case v == b:
						v = a
					default:
						ok = false
					}
				}
				ok = ok && v == pr.B
			}
			if !ok {
				for b := bad.Load(); int64(i) < b && !bad.CompareAndSwap(b, int64(i)); b = bad.Load() {
				}
				return
			}
		}
	})
	if i := bad.Load(); i < int64(len(ps.Pairs)) {
		pr := ps.Pairs[i]
		return fmt.Errorf("plan: %w: pair %s-%s has no path, or one that is not a walk between them over fabric links", ErrVerify, f.G.Node(pr.A).Name, f.G.Node(pr.B).Name)
	}
	return nil
}

// holds reports whether VLAN index i exists and holds every link of path.
func (p *Plan) holds(i int, path []topo.LinkID) bool {
	if i < 0 || i >= len(p.Pack.VLANs) {
		return false
	}
	w, m := i/64, uint64(1)<<(i%64)
	for _, l := range path {
		if p.linkVLANs[int(l)*p.words+w]&m == 0 {
			return false
		}
	}
	return true
}

// vlanOf returns the index of the lowest VLAN holding every link of path,
// or -1.
func (p *Plan) vlanOf(path []topo.LinkID) int {
	w := p.words
	for k := range w {
		acc := ^uint64(0)
		for _, l := range path {
			acc &= p.linkVLANs[int(l)*w+k]
			if acc == 0 {
				break
			}
		}
		if acc != 0 {
			return k*64 + bits.TrailingZeros64(acc)
		}
	}
	return -1
}

// vlansOf returns the IDs of every VLAN holding every link of path,
// ascending.
func (p *Plan) vlansOf(path []topo.LinkID) []int {
	ids := []int{}
	for k := range p.words {
		acc := ^uint64(0)
		for _, l := range path {
			acc &= p.linkVLANs[int(l)*p.words+k]
		}
		for acc != 0 {
			ids = append(ids, p.id(k*64+bits.TrailingZeros64(acc)))
			acc &= acc - 1
		}
	}
	return ids
}

// LinkVLANs returns the IDs of the VLANs that hold link l, ascending.
func (p *Plan) LinkVLANs(l topo.LinkID) []int {
	var ids []int
	for k := range p.words {
		w := p.linkVLANs[int(l)*p.words+k]
		for w != 0 {
			b := bits.TrailingZeros64(w)
			w &= w - 1
			ids = append(ids, p.id(k*64+b))
		}
	}
	return ids
}

func sortedClone(ls []topo.LinkID) []topo.LinkID {
	c := slices.Clone(ls)
	slices.Sort(c)
	return c
}
