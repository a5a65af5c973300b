package paths

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgefabric/edgefabric/topo"
)

// ParallelFirstFitLimit is the largest path set on which the parallel
// packer also runs the serial first-fit and best-fit trials.
const ParallelFirstFitLimit = 2_000_000

// PruneLimit is the largest path set the planner prunes (Prune): every
// attempt to empty a subgraph re-places its paths one by one, which on
// tens of millions of paths takes minutes.
const PruneLimit = 2_000_000

// PruneEachLimit is the largest path set on which the planner prunes every
// trial (PackOptions.PruneEach), not only the best: a worse trial often
// prunes to fewer VLANs than the best one (CiscoDC(8,8)'s tree-cover
// trials: 73–75 VLANs before, 55–66 after). Up to here the whole plan,
// 30 trials pruned, stays near a second (HyperX(8), 28,224 paths: 1.3 s,
// 0.15 s pruning the best only).
const PruneEachLimit = 50_000

// MaxVLANs is the number of usable 802.1Q VLAN IDs: 1..4094 (0 and 4095
// are reserved).
const MaxVLANs = 4094

// ErrTooManyVLANs: the path set cannot be packed into MaxVLANs VLANs.
var ErrTooManyVLANs = errors.New("path set needs more VLANs than 802.1Q offers")

// Strategy selects how one packing trial places a path.
type Strategy uint8

const (
	_ Strategy = iota // the zero value is no strategy
	// FirstFit is Algorithm 2 as published: pairs in node order, a
	// pair's paths in random order, each uncovered path added to the first
	// subgraph, in random order, it does not close a loop in.
	FirstFit
	// BestFit: Algorithm 2 except that an uncovered path goes to the
	// subgraph that already holds the most of its links (ties at random),
	// falling back to first fit.
	BestFit
	// TreeCover is edgefabric's parallel heuristic: greedy set cover of
	// the paths by per-node shortest-path trees, then best fit for the
	// rest (see treecover.go).
	TreeCover
)

func (s Strategy) String() string {
	switch s {
	case FirstFit:
		return "first-fit"
	case BestFit:
		return "best-fit"
	case TreeCover:
		return "tree-cover"
	}
	return fmt.Sprintf("strategy(%d)", uint8(s))
}

// PackOptions configures Pack.
type PackOptions struct {
	// Trials is N, the number of randomized runs; the best is kept.
	Trials int
	Seed   uint64
	// Parallel runs N tree-cover trials, each on Workers goroutines,
	// then the N first-fit trials of the serial algorithm and N best-fit
	// trials on Workers goroutines; the serial algorithm runs only the
	// first-fit trials, one after the other. Trial t uses the same random
	// stream either way, so the parallel result is never worse (above
	// ParallelFirstFitLimit paths the parallel packer runs tree cover
	// only).
	Parallel bool
	Workers  int
	// PruneEach prunes every trial's packing (Prune) and keeps the one
	// with the fewest VLANs after pruning. No trial is then abandoned, so
	// that the choice does not depend on which trials finished first:
	// meant for small path sets (PruneEachLimit).
	PruneEach bool
}

// Packing is the result: loop-free subgraphs, VLAN 1 first.
type Packing struct {
	// VLANs[i] holds the links of VLAN ID i+1, sorted. VLANs[0] is the
	// default spanning tree.
	VLANs [][]topo.LinkID
	// Trials run; BestTrial is the index of the winning trial and
	// BestStrategy its strategy.
	Trials       int
	BestTrial    int
	BestStrategy Strategy
	// TrialVLANs is the VLAN count each trial reached, or -1 for a trial
	// abandoned once it could no longer beat the best.
	TrialVLANs []int
	// Pruned is the number of VLANs pruning deleted from the best trial's
	// packing (len(VLANs) = TrialVLANs[BestTrial] - Pruned; TrialVLANs
	// are the counts before pruning).
	Pruned int
	// Loose is the number of paths the best trial, when it is a tree
	// cover, found in no candidate tree, and LooseWay how it placed them:
	// "majority round" or "best fit" (see placeLoose), "" when none.
	Loose    int
	LooseWay string
	// PruneSeconds is the time PruneEach spent pruning, summed over the
	// trials (which may run at once: it can exceed the wall time).
	PruneSeconds float64
	// PathVLAN, when not nil, is per path (PathSet order) the index in
	// VLANs of a VLAN the packer placed it in or found it inside, or
	// math.MaxUint16 where it kept none. A hint for the plan's check that
	// every path lies in a VLAN (one bit per link to test instead of a
	// search over all VLANs), never a result: the check tests it and
	// searches where it fails. Tree cover keeps it; the other strategies
	// and pruning (which renumbers VLANs) leave it nil.
	PathVLAN []uint16
}

// Pack maps the path set onto loop-free subgraphs (VLANs) with Algorithm
// 2 of spain-cots-multipath.txt §5.3, keeping the best of opt.Trials
// randomized runs. VLAN 1 is base (the default spanning tree), counted and
// able to cover paths like any other subgraph.
func Pack(f *Fabric, ps *PathSet, base []topo.LinkID, opt PackOptions) (*Packing, error) {
	trials := max(opt.Trials, 1)
	type job struct {
		idx   int
		strat Strategy
	}
	var jobs []job
	workers := 1
	if opt.Parallel {
		workers = opt.Workers
		if workers <= 0 {
			workers = runtime.GOMAXPROCS(0)
		}
		// Tree-cover trials first, each on every core: they usually set
		// the best count early, so that first-fit trials that cannot beat
		// it are abandoned soon.
		for range trials {
			jobs = append(jobs, job{len(jobs), TreeCover})
		}
	}
	// The parallel packer repeats the serial trials only on path sets it
	// can afford to: first fit over millions of paths and hundreds of
	// subgraphs costs minutes per trial (docs/spain-plan.md).
	ff := !opt.Parallel || ps.NumPaths() <= ParallelFirstFitLimit
	for range trials {
		if ff {
			jobs = append(jobs, job{len(jobs), FirstFit})
		}
	}
	if opt.Parallel && ff {
		for range trials {
			jobs = append(jobs, job{len(jobs), BestFit})
		}
	}
	res := &Packing{Trials: len(jobs), TrialVLANs: make([]int, len(jobs))}
	var best atomic.Int64
	best.Store(MaxVLANs + 1)
	var mu sync.Mutex
	var bestSG *packState
	bestIdx := -1
	record := func(j job, st *packState, n int) {
		var pruned time.Duration
		if opt.PruneEach && n > 0 {
			t0 := time.Now()
			st.prune(ps) // each trial its own state: outside the lock
			pruned = time.Since(t0)
		}
		mu.Lock()
		defer mu.Unlock()
		res.PruneSeconds += pruned.Seconds()
		res.TrialVLANs[j.idx] = n
		if m := len(st.vlinks); n > 0 && (bestIdx < 0 || m < len(bestSG.vlinks) || m == len(bestSG.vlinks) && j.idx < bestIdx) {
			bestSG, bestIdx = st, j.idx
		}
		if opt.PruneEach {
			return // best stays above MaxVLANs: no trial is abandoned
		}
		for {
			b := best.Load()
			if n <= 0 || int64(n) >= b || best.CompareAndSwap(b, int64(n)) {
				break
			}
		}
	}
	// trialNo numbers the trials of one strategy 0..N-1: trial t of the
	// serial algorithm and of the parallel one draw the same stream.
	trialNo := func(j job) uint64 { return uint64(j.idx % trials) }
	var rest []job
	var roots []topo.NodeID // tree cover's, found for the first trial
	var rootIdx []int32
	for _, j := range jobs {
		if j.strat != TreeCover {
			rest = append(rest, j)
			continue
		}
		if rootIdx == nil {
			roots, rootIdx = coverRoots(f)
			roots, rootIdx = rootsOnPaths(f, ps, base, roots, rootIdx, workers)
		}
		st, ok := treeCoverFrom(f, ps, base, roots, rootIdx, opt.Seed, trialNo(j), workers, min(best.Load(), MaxVLANs))
		n := -1
		if ok {
			n = len(st.vlinks)
		}
		record(j, st, n)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, len(rest)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(rest) {
					return
				}
				j := rest[i]
				st := newPackState(f, base)
				n := st.run(ps, j.strat, opt.Seed, trialNo(j), &best)
				record(j, st, n)
			}
		}()
	}
	wg.Wait()
	if bestSG == nil {
		return nil, fmt.Errorf("paths: %w: every trial exceeded %d VLANs", ErrTooManyVLANs, MaxVLANs)
	}
	res.BestTrial = bestIdx
	res.BestStrategy = jobs[bestIdx].strat
	res.Pruned = res.TrialVLANs[bestIdx] - len(bestSG.vlinks)
	res.Loose, res.LooseWay = bestSG.loose, bestSG.looseWay
	if res.Pruned == 0 && !opt.PruneEach {
		res.PathVLAN = bestSG.hint // pruning deletes and renumbers subgraphs
	}
	for _, ls := range bestSG.vlinks {
		ls = slices.Clone(ls)
		slices.Sort(ls)
		res.VLANs = append(res.VLANs, ls)
	}
	return res, nil
}

// packState is one trial's subgraphs.
type packState struct {
	f     *Fabric
	words int
	// bits[l*words:(l+1)*words] is the set of subgraphs holding link l;
	// inAny[l] whether that set is not empty: the test that rejects, with
	// one small lookup, most paths no subgraph covers.
	bits  []uint64
	inAny []bool
	// blocked, laid out as bits: the subgraphs found to connect link l's
	// ends already (by fits), so that adding l would close a loop. A
	// subgraph only grows, so once blocked it stays blocked, and placing
	// skips it without another union-find walk.
	blocked []uint64
	uf      [][]int32 // per subgraph: union-find parents over nodes
	vlinks  [][]topo.LinkID
	// Once trackGiant is on, giant[x*words:(x+1)*words] is the set of
	// subgraphs whose anchor component (the one holding an end of their
	// first link, anchor) holds node x; members lists every component's
	// nodes, circularly (members[vl][x] is the next node of x's), so that
	// a component that joins the anchor's can be walked.
	giant    []uint64
	anchor   []int32
	members  [][]int32
	tracking bool
	// scratch
	nodes   []topo.NodeID
	overlay []int32 // pairs (root, merged-into) tentatively joined
	perm    []int32
	count   []int32
	cands   []int32
	sorted  []int32
	hist    []int32
	ctr     []uint64 // bit-sliced shared-link counters (placeBestFit)
	excl    []uint64 // subgraphs a placement skips (exclMask: placeBestFit, fitBundle)
	// Tree cover's loose paths and the way that placed them (Packing).
	loose    int
	looseWay string
	// hint, when not nil, is per path the subgraph found to hold it
	// (Packing.PathVLAN): tree cover records it as it goes.
	hint []uint16
	// The majority round's: a stamp, and per link (linkStamp) and per
	// node (ovStamp, ovParent: a union-find overlay) what it marks.
	stamp     uint32
	linkStamp []uint32
	ovStamp   []uint32
	ovParent  []int32
}

// sortByCount orders st.cands by cnt, most first, keeping the order of
// equal counts: the same order as a stable comparison sort, but by
// counting sort, since a count is at most maxc (the path's length). On
// BCube(8,4) the candidates are most of ~2000 VLANs for each of millions
// of paths, where the comparison sort dominated the whole plan.
func (st *packState) sortByCount(cnt []int32, maxc int) {
	if cap(st.hist) < maxc+2 {
		st.hist = make([]int32, maxc+2)
	}
	h := st.hist[:maxc+2]
	clear(h)
	for _, vl := range st.cands {
		h[maxc-int(cnt[vl])+1]++
	}
	for i := 1; i < len(h); i++ {
		h[i] += h[i-1]
	}
	if cap(st.sorted) < len(st.cands) {
		st.sorted = make([]int32, len(st.cands), 2*len(st.cands))
	}
	out := st.sorted[:len(st.cands)]
	for _, vl := range st.cands {
		k := maxc - int(cnt[vl])
		out[h[k]] = vl
		h[k]++
	}
	st.cands, st.sorted = out, st.cands
}

func newPackState(f *Fabric, base []topo.LinkID) *packState {
	st := &packState{f: f, words: 1}
	st.bits = make([]uint64, f.G.NumLinks())
	st.blocked = make([]uint64, f.G.NumLinks())
	st.inAny = make([]bool, f.G.NumLinks())
	st.newVLAN()
	for _, l := range base {
		a, b := f.Ends(l)
		st.add(0, l, a, b)
	}
	return st
}

func (st *packState) newVLAN() int {
	i := len(st.vlinks)
	if i >= st.words*64 {
		// Grow every link's bitset by one word, keeping the layout flat.
		nw := st.words + 1
		grow := func(old []uint64) []uint64 {
			nb := make([]uint64, len(old)/st.words*nw)
			for l := 0; l < len(old)/st.words; l++ {
				copy(nb[l*nw:], old[l*st.words:(l+1)*st.words])
			}
			return nb
		}
		st.bits, st.blocked = grow(st.bits), grow(st.blocked)
		if st.tracking {
			st.giant = grow(st.giant)
		}
		st.words = nw
	}
	parent := make([]int32, st.f.G.NumNodes())
	for v := range parent {
		parent[v] = int32(v)
	}
	st.uf = append(st.uf, parent)
	st.vlinks = append(st.vlinks, nil)
	if st.tracking {
		st.anchor = append(st.anchor, -1)
		st.members = append(st.members, slices.Clone(parent))
	}
	return i
}

func (st *packState) has(vl int, l topo.LinkID) bool {
	return st.bits[int(l)*st.words+vl/64]&(1<<(vl%64)) != 0
}

func find(p []int32, v int32) int32 {
	for p[v] != v {
		p[v] = p[p[v]]
		v = p[v]
	}
	return v
}

func (st *packState) add(vl int, l topo.LinkID, a, b topo.NodeID) {
	st.bits[int(l)*st.words+vl/64] |= 1 << (vl % 64)
	st.inAny[l] = true
	st.vlinks[vl] = append(st.vlinks[vl], l)
	p := st.uf[vl]
	ra, rb := find(p, int32(a)), find(p, int32(b))
	if ra != rb {
		if st.tracking {
			st.joinGiant(vl, ra, rb, int32(a))
		}
		p[ra] = rb
	}
}

// trackGiant starts keeping giant (see packState) for every subgraph,
// those there are and those to come.
func (st *packState) trackGiant() {
	n := st.f.G.NumNodes()
	st.tracking = true
	st.giant = make([]uint64, n*st.words)
	st.anchor = make([]int32, len(st.vlinks))
	st.members = make([][]int32, len(st.vlinks))
	for vl, ls := range st.vlinks {
		uf := st.uf[vl]
		m := make([]int32, n)
		for x := range m {
			m[x] = int32(x)
		}
		for x := range m {
			// Splice x into its root's circle.
			if r := find(uf, int32(x)); r != int32(x) {
				m[x], m[r] = m[r], m[x]
			}
		}
		st.members[vl] = m
		st.anchor[vl] = -1
		if len(ls) > 0 {
			a, _ := st.f.Ends(ls[0])
			st.anchor[vl] = int32(a)
			st.markGiant(vl, find(uf, int32(a)))
		}
	}
}

// joinGiant records, before roots ra and rb of subgraph vl are united,
// the nodes that join its anchor component (a: an end of the new link).
func (st *packState) joinGiant(vl int, ra, rb, a int32) {
	uf, m := st.uf[vl], st.members[vl]
	if st.anchor[vl] < 0 {
		st.anchor[vl] = a
		st.markGiant(vl, find(uf, a))
	}
	switch find(uf, st.anchor[vl]) {
	case ra:
		st.markGiant(vl, rb)
	case rb:
		st.markGiant(vl, ra)
	}
	m[ra], m[rb] = m[rb], m[ra]
}

// markGiant puts every node of the component with root r of subgraph vl
// into giant.
func (st *packState) markGiant(vl int, r int32) {
	m, w := st.members[vl], st.words
	for x := r; ; {
		st.giant[int(x)*w+vl/64] |= 1 << (vl % 64)
		if x = m[x]; x == r {
			return
		}
	}
}

// covered reports whether one subgraph holds every link of the path.
func (st *packState) covered(p []topo.LinkID) bool { return st.holder(p) >= 0 }

// holder returns the lowest-numbered subgraph holding every link of the
// path, or -1.
func (st *packState) holder(p []topo.LinkID) int {
	for _, l := range p {
		if !st.inAny[l] {
			return -1
		}
	}
	w := st.words
	for k := range w {
		acc := ^uint64(0)
		for _, l := range p {
			acc &= st.bits[int(l)*w+k]
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

// noHint marks a path with no recorded subgraph in packState.hint and
// Packing.PathVLAN.
const noHint = math.MaxUint16

// setHint records, when hints are kept, that subgraph vl holds path j.
func (st *packState) setHint(j uint32, vl int) {
	if st.hint != nil {
		st.hint[j] = uint16(vl)
	}
}

// fits reports whether adding the path (nodes st.nodes, links p) to
// subgraph vl keeps it loop-free: no new link may join two nodes the
// subgraph, plus the path's earlier new links, already connects.
func (st *packState) fits(vl int, p []topo.LinkID) bool {
	if len(p) > fitsFlatLimit {
		return st.fitsLong(vl, p)
	}
	uf := st.uf[vl]
	st.overlay = st.overlay[:0]
	follow := func(r int32) int32 {
		for changed := true; changed; {
			changed = false
			for i := 0; i < len(st.overlay); i += 2 {
				if st.overlay[i] == r {
					r = st.overlay[i+1]
					changed = true
				}
			}
		}
		return r
	}
	for i, l := range p {
		if st.has(vl, l) {
			continue
		}
		ra, rb := find(uf, int32(st.nodes[i])), find(uf, int32(st.nodes[i+1]))
		if ra == rb {
			st.blocked[int(l)*st.words+vl/64] |= 1 << (vl % 64)
			return false
		}
		if ra, rb = follow(ra), follow(rb); ra == rb {
			return false
		}
		st.overlay = append(st.overlay, ra, rb)
	}
	return true
}

// fitsFlatMax is the longest path fits tests with its flat list of
// tentative unions, which it scans end to end for every new link: fast
// for the few links of a data-center path, quadratic in long ones (a
// path along a line of 20,000 switches took minutes to place).
const fitsFlatMax = 32

// fitsFlatLimit is fitsFlatMax, a variable so that a test can compare the
// two ways on long paths.
var fitsFlatLimit = fitsFlatMax

// fitsLong is fits for long paths: the tentative unions go into the
// stamped per-node overlay the majority round's bundleFits uses, so that
// each new link costs a near-constant find. Same answers, same blocked
// links.
func (st *packState) fitsLong(vl int, p []topo.LinkID) bool {
	if n := st.f.G.NumNodes(); len(st.ovStamp) != n {
		st.ovParent, st.ovStamp = make([]int32, n), make([]uint32, n)
	}
	uf := st.uf[vl]
	st.nextStamp()
	for i, l := range p {
		if st.has(vl, l) {
			continue
		}
		ra, rb := find(uf, int32(st.nodes[i])), find(uf, int32(st.nodes[i+1]))
		if ra == rb {
			st.blocked[int(l)*st.words+vl/64] |= 1 << (vl % 64)
			return false
		}
		if ra, rb = st.ovFind(ra), st.ovFind(rb); ra == rb {
			return false
		}
		st.ovParent[ra], st.ovStamp[ra] = rb, st.stamp
	}
	return true
}

// ovFind follows node x's tentative unions under the current stamp: the
// overlay fitsLong and bundleFits lay over a subgraph's union-find.
func (st *packState) ovFind(x int32) int32 {
	for st.ovStamp[x] == st.stamp {
		px := st.ovParent[x]
		if st.ovStamp[px] == st.stamp { // path halving
			st.ovParent[x] = st.ovParent[px]
		}
		x = px
	}
	return x
}

// nextStamp advances the stamp of the per-link and per-node marks; when
// it wraps, every mark is cleared, since a stamp of 0 (or any reused one)
// would match marks left long ago.
func (st *packState) nextStamp() {
	st.stamp++
	if st.stamp == 0 {
		clear(st.linkStamp)
		clear(st.ovStamp)
		st.stamp = 1
	}
}

// isBlocked reports whether some link of p that subgraph vl lacks is
// blocked in vl: fits would fail.
func (st *packState) isBlocked(vl int32, p []topo.LinkID) bool {
	k, bit := int(vl)/64, uint64(1)<<(vl%64)
	for _, l := range p {
		i := int(l)*st.words + k
		if st.blocked[i]&^st.bits[i]&bit != 0 {
			return true
		}
	}
	return false
}

func (st *packState) commit(vl int, p []topo.LinkID) {
	for i, l := range p {
		if !st.has(vl, l) {
			st.add(vl, l, st.nodes[i], st.nodes[i+1])
		}
	}
}

// run executes one trial and returns its VLAN count, or -1 when it was
// abandoned because it exceeded *best (no chance to win) or MaxVLANs.
func (st *packState) run(ps *PathSet, strat Strategy, seed, trial uint64, best *atomic.Int64) int {
	r := rand.New(rand.NewPCG(seed^0x5350_4149_4e00_0000, trial))
	ne := len(st.f.Edges)
	var order []int
	// Algorithm 2's loops: for v, for u: pairs in lexicographic order of
	// edge-node index. The path set stores pair (i, j), i<j, at index
	// j(j-1)/2 + i.
	for i := range ne {
		for j := i + 1; j < ne; j++ {
			pi := j*(j-1)/2 + i
			lo, hi := ps.PairPaths(pi)
			order = append(order[:0], make([]int, hi-lo)...)
			for k := range order {
				order[k] = lo + k
			}
			r.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
			src := ps.Pairs[pi].A
			for _, pj := range order {
				p := ps.Path(pj)
				if st.covered(p) {
					continue
				}
				st.nodes = st.f.PathNodes(src, p, st.nodes[:0])
				if !st.place(p, strat, r) {
					vl := st.newVLAN()
					st.commit(vl, p)
					if n := int64(len(st.vlinks)); n > best.Load() || n > MaxVLANs {
						return -1
					}
				}
			}
		}
	}
	return len(st.vlinks)
}

// place adds the path to an existing subgraph if one can take it.
func (st *packState) place(p []topo.LinkID, strat Strategy, r *rand.Rand) bool {
	m := len(st.vlinks)
	if strat == BestFit {
		// Count, per subgraph, how many of the path's links it holds.
		if cap(st.count) < m {
			st.count = make([]int32, m+64)
		}
		cnt := st.count[:m]
		st.cands = st.cands[:0]
		for _, l := range p {
			row := st.bits[int(l)*st.words : (int(l)+1)*st.words]
			for k, w := range row {
				for w != 0 {
					b := bits.TrailingZeros64(w)
					w &= w - 1
					vl := k*64 + b
					if cnt[vl] == 0 {
						st.cands = append(st.cands, int32(vl))
					}
					cnt[vl]++
				}
			}
		}
		r.Shuffle(len(st.cands), func(a, b int) { st.cands[a], st.cands[b] = st.cands[b], st.cands[a] })
		st.sortByCount(cnt, len(p))
		placed := -1
		for _, vl := range st.cands {
			if placed < 0 && vl != 0 && !st.isBlocked(vl, p) && st.fits(int(vl), p) {
				placed = int(vl)
			}
		}
		for _, vl := range st.cands {
			cnt[vl] = 0
		}
		if placed >= 0 {
			st.commit(placed, p)
			return true
		}
	}
	// First fit over the subgraphs in random order.
	placed := st.firstFitUntested(p, func(vl int32) bool { return st.isBlocked(vl, p) }, r)
	if placed >= 0 {
		st.commit(placed, p)
		return true
	}
	return false
}
