package flowsim

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Errors returned by Run, wrapped with context.
var (
	ErrBadLink = errors.New("flow path names a link outside the network")
	ErrBadSize = errors.New("flow size must be positive and finite")
	ErrBadCap  = errors.New("link capacity must be positive and finite")
	// ErrRange: a rate or a completion time the run needs is not a
	// positive finite float64 (capacities or sizes so extreme that a fair
	// share underflows to 0 or a completion time overflows).
	ErrRange = errors.New("rate or time out of floating-point range")
)

// Network is a set of directed links, identified by index.
type Network struct {
	Cap []float64
}

// Flow is a transfer of Size units along Path (directed link indices).
// A flow with an empty path completes at time 0; a link repeated in Path
// is crossed, and loaded, once per occurrence (MaxLoad counts it so too).
type Flow struct {
	Path []int32
	Size float64
}

// Result of a run.
type Result struct {
	// Makespan is the time the last flow completes.
	Makespan float64
	// Events is the number of distinct completion times simulated.
	Events int
	// Classes is the number of distinct (path, size) flow classes.
	Classes int
}

type class struct {
	path      []int32
	count     float64
	remaining float64 // per flow
	rate      float64 // per flow
	done      bool
	frozen    bool
}

// Run simulates the flows, all starting at time 0, to completion.
func Run(net Network, flows []Flow) (Result, error) {
	s, err := newState(net, flows)
	if err != nil {
		return Result{}, err
	}
	res := Result{Classes: len(s.classes)}
	active := 0
	for _, c := range s.classes {
		if !c.done {
			active++
		}
	}
	now := 0.0
	for active > 0 {
		s.fill()
		// Next completion.
		dt := math.Inf(1)
		var first *class
		for _, c := range s.classes {
			if !c.done {
				if !(c.rate > 0) {
					// A rate of 0 would never complete the flow: the
					// loop would not end.
					return Result{}, fmt.Errorf("flowsim: %w: a flow's fair share is %v", ErrRange, c.rate)
				}
				if d := c.remaining / c.rate; first == nil || d < dt {
					dt, first = d, c
				}
			}
		}
		now += dt
		if math.IsInf(now, 0) {
			return Result{}, fmt.Errorf("flowsim: %w: a completion time overflows", ErrRange)
		}
		res.Events++
		for _, c := range s.classes {
			if c.done {
				continue
			}
			c.remaining -= c.rate * dt
			// Relative tolerance: classes finishing together must not be
			// split by rounding into separate events. The class that set
			// dt is done whatever rounding left of it: every event ends
			// at least one class, so the loop ends (a dt that underflows
			// to 0 once left the time, and every remainder, unchanged).
			if c == first || c.remaining <= 1e-9*c.rate*now {
				c.done = true
				active--
			}
		}
	}
	res.Makespan = now
	return res, nil
}

// state is a run: the flow classes and, per link, the classes crossing it.
type state struct {
	caps    []float64
	classes []*class
	// through[off[l]:off[l+1]] are the classes crossing link l, a class
	// once per occurrence of l in its path.
	off, through []int32
	// Per-link scratch space of fill.
	rem, weight []float64
}

// newState validates the input and groups identical flows into classes.
func newState(net Network, flows []Flow) (*state, error) {
	for i, c := range net.Cap {
		if !(c > 0) || math.IsInf(c, 0) {
			return nil, fmt.Errorf("flowsim: link %d: %w: %v", i, ErrBadCap, c)
		}
	}
	// Group identical flows.
	idx := map[string]int{}
	var classes []*class
	var key strings.Builder
	for i, f := range flows {
		if !(f.Size > 0) || math.IsInf(f.Size, 0) {
			return nil, fmt.Errorf("flowsim: flow %d: %w: %v", i, ErrBadSize, f.Size)
		}
		key.Reset()
		for _, l := range f.Path {
			if l < 0 || int(l) >= len(net.Cap) {
				return nil, fmt.Errorf("flowsim: flow %d: %w: %d", i, ErrBadLink, l)
			}
			key.WriteString(strconv.Itoa(int(l)))
			key.WriteByte(',')
		}
		key.WriteString(strconv.FormatFloat(f.Size, 'g', -1, 64))
		k := key.String()
		if ci, ok := idx[k]; ok {
			classes[ci].count++
			continue
		}
		idx[k] = len(classes)
		classes = append(classes, &class{path: slices.Clone(f.Path), count: 1, remaining: f.Size, done: len(f.Path) == 0})
	}
	// Per link: the classes crossing it (CSR).
	nl := len(net.Cap)
	off := make([]int32, nl+1)
	for _, c := range classes {
		for _, l := range c.path {
			off[l+1]++
		}
	}
	for l := range nl {
		off[l+1] += off[l]
	}
	through := make([]int32, off[nl])
	pos := slices.Clone(off[:nl])
	for ci, c := range classes {
		for _, l := range c.path {
			through[pos[l]] = int32(ci)
			pos[l]++
		}
	}
	return &state{caps: net.Cap, classes: classes, off: off, through: through,
		rem: make([]float64, nl), weight: make([]float64, nl)}, nil
}

// fill sets the rate of every class not done to its max-min fair share
// (progressive filling): the link whose equal share among the flows still
// unfrozen on it is the smallest saturates first and freezes them at that
// share. A link is loaded once per flow of a class and per occurrence in
// the class's path.
func (s *state) fill() {
	caps, classes, off, through, rem, weight := s.caps, s.classes, s.off, s.through, s.rem, s.weight
	for l := range caps {
		rem[l], weight[l] = caps[l], 0
	}
	for _, c := range classes {
		if !c.done {
			c.frozen = false
			for _, l := range c.path {
				weight[l] += c.count
			}
		}
	}
	h := &linkHeap{}
	for l := range caps {
		if weight[l] > 0 {
			heap.Push(h, linkItem{rem[l] / weight[l], int32(l)})
		}
	}
	for h.Len() > 0 {
		it := heap.Pop(h).(linkItem)
		l := it.link
		if weight[l] <= 0 {
			continue
		}
		share := rem[l] / weight[l]
		if share != it.share {
			heap.Push(h, linkItem{share, l})
			continue
		}
		for _, ci := range through[off[l]:off[l+1]] {
			c := classes[ci]
			if c.done || c.frozen {
				continue
			}
			c.frozen, c.rate = true, share
			for _, m := range c.path {
				rem[m] -= c.count * share
				weight[m] -= c.count
				if weight[m] > 0 && m != l {
					heap.Push(h, linkItem{max(rem[m], 0) / weight[m], m})
				}
			}
		}
	}
}

type linkItem struct {
	share float64
	link  int32
}
type linkHeap []linkItem

func (h linkHeap) Len() int { return len(h) }
func (h linkHeap) Less(i, j int) bool {
	if h[i].share != h[j].share {
		return h[i].share < h[j].share
	}
	return h[i].link < h[j].link
}
func (h linkHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *linkHeap) Push(x any)   { *h = append(*h, x.(linkItem)) }
func (h *linkHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// MaxLoad returns the largest number of flows crossing one directed link
// (nl links): the makespan, in units of size/capacity, of equal-size flows
// on equal-capacity links (see the package comment).
func MaxLoad(nl int, paths [][]int32) (int, error) {
	if nl < 0 {
		return 0, fmt.Errorf("flowsim: %w: %d links", ErrBadLink, nl)
	}
	load := make([]int32, nl)
	m := int32(0)
	for i, p := range paths {
		for _, l := range p {
			if l < 0 || int(l) >= nl {
				return 0, fmt.Errorf("flowsim: flow %d: %w: %d", i, ErrBadLink, l)
			}
			load[l]++
			m = max(m, load[l])
		}
	}
	return int(m), nil
}
