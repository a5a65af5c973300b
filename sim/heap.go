package sim

import "github.com/edgefabric/edgefabric/element"

// eventKind says what a queued event does when it fires.
type eventKind uint8

const (
	_ eventKind = iota // the zero value is no event
	// evPipe delivers the head frame of pipe idx.
	evPipe
	// evTimer fires timer slot idx if its generation still matches.
	evTimer
)

// event is one entry of the event list: 24 bytes, no pointers, so that the
// heap is one flat slice the garbage collector never scans and four
// siblings span a cache line and a half. ref packs what the event does:
// kind (bits 62-63), index (bits 32-61) and generation (bits 0-31).
type event struct {
	t   element.Time
	seq uint64
	ref uint64
}

// maxIndex bounds pipe and timer indices: 2^30, a billion.
const maxIndex = 1<<30 - 1

func mkRef(kind eventKind, idx int32, gen uint32) uint64 {
	return uint64(kind)<<62 | uint64(idx)<<32 | uint64(gen)
}

func (e *event) kind() eventKind { return eventKind(e.ref >> 62) }
func (e *event) idx() int32      { return int32(e.ref >> 32 & maxIndex) }
func (e *event) gen() uint32     { return uint32(e.ref) }

func (a *event) before(b *event) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	return a.seq < b.seq
}

// eventHeap is a 4-ary min-heap ordered by (time, seq): shallower than a
// binary heap, so a pop touches fewer cache lines. seq is unique, so the
// order is total and the run is deterministic. The calendar keeps its
// events beyond the wheel's horizon in one.
type eventHeap struct {
	ev []event
}

func (h *eventHeap) len() int { return len(h.ev) }

func (h *eventHeap) push(e event) {
	h.ev = append(h.ev, e)
	i := len(h.ev) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !h.ev[i].before(&h.ev[p]) {
			break
		}
		h.ev[i], h.ev[p] = h.ev[p], h.ev[i]
		i = p
	}
}

// peek returns the earliest event; the heap must not be empty.
func (h *eventHeap) peek() *event { return &h.ev[0] }

func (h *eventHeap) pop() event {
	top := h.ev[0]
	n := len(h.ev) - 1
	last := h.ev[n]
	h.ev = h.ev[:n]
	if n > 0 {
		h.siftDown(last)
	}
	return top
}

// replaceTop puts e in place of the earliest event: one sift-down instead
// of a pop and a push. The engine uses it when the event being processed
// schedules its successor (a pipe's next delivery, a periodic timer).
func (h *eventHeap) replaceTop(e event) { h.siftDown(e) }

// siftDown places x, which replaces the root, where it belongs.
func (h *eventHeap) siftDown(x event) {
	n := len(h.ev)
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		end := min(c+4, n)
		for j := c + 1; j < end; j++ {
			if h.ev[j].before(&h.ev[m]) {
				m = j
			}
		}
		if !h.ev[m].before(&x) {
			break
		}
		h.ev[i] = h.ev[m]
		i = m
	}
	h.ev[i] = x
}
