package sim

import (
	"math/bits"
	"slices"

	"github.com/edgefabric/edgefabric/element"
)

// calendar is the event list: a calendar queue (a timing wheel of
// fixed-width buckets) for the near future, backed by the 4-ary heap for
// events beyond its horizon. Discrete-event time only moves forward, so the
// wheel can hand events out bucket by bucket: a bucket is sorted by (time,
// seq) when the clock reaches it, and popping is then an index increment.
// On a saturated fabric, where every link delivery schedules the next a few
// microseconds later, that replaces a heap's dozens of comparisons per
// event with an append and, per bucket, a sort of a handful of events.
//
// The order is exactly the heap's: (time, seq), seq unique.
type calendar struct {
	buckets [calBuckets][]event
	// nonEmpty has bit i set when buckets[i] holds events.
	nonEmpty [calBuckets / 64]uint64
	// base is the start time of the current bucket cur; the wheel covers
	// [base, base + calBuckets*calWidth).
	base element.Time
	cur  int
	// pos is the read position in the current bucket, which is sorted
	// from pos on.
	pos     int
	sorted  bool
	inWheel int
	far     eventHeap
}

const (
	calWidthLog = 18               // 2^18 ps = 262 ns per bucket
	calWidth    = 1 << calWidthLog // in picoseconds
	calBuckets  = 1 << 12          // horizon 1.07 ms
	calHorizon  = calBuckets * calWidth
	// calKeep is the most events a spent bucket's array keeps room for
	// (24 KiB; all buckets: 96 MiB at most).
	calKeep = 1024
)

func eventCmp(a, b event) int {
	if a.t != b.t {
		if a.t < b.t {
			return -1
		}
		return 1
	}
	if a.seq < b.seq {
		return -1
	}
	if a.seq > b.seq {
		return 1
	}
	return 0
}

func (c *calendar) len() int { return c.inWheel + c.far.len() }

// inHorizon reports whether t falls inside the wheel (the end saturates
// near the end of time).
func (c *calendar) inHorizon(t element.Time) bool {
	end := c.base + calHorizon
	return end < c.base || t < end
}

func (c *calendar) push(e event) {
	if !c.inHorizon(e.t) {
		c.far.push(e)
		return
	}
	c.inWheel++
	// Events earlier than base cannot happen (time only moves forward);
	// clamp defensively into the current bucket.
	off := int((max(e.t, c.base) - c.base) >> calWidthLog)
	i := (c.cur + off) & (calBuckets - 1)
	b := c.buckets[i]
	if i == c.cur && c.sorted {
		// The current bucket is being read: keep it sorted. e has the
		// largest seq so far, so it goes after every event at its time.
		j := c.pos + sortSearchAfter(b[c.pos:], e.t)
		c.buckets[i] = slices.Insert(b, j, e)
	} else {
		c.buckets[i] = append(b, e)
	}
	c.nonEmpty[i>>6] |= 1 << (i & 63)
}

// sortSearchAfter returns the index of the first event later than t.
func sortSearchAfter(b []event, t element.Time) int {
	lo, hi := 0, len(b)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if b[m].t <= t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// peek returns the earliest event; the calendar must not be empty.
func (c *calendar) peek() *event {
	c.settle()
	return &c.buckets[c.cur][c.pos]
}

// pop removes the earliest event, which peek has returned.
func (c *calendar) pop() {
	c.settle()
	c.pos++
	c.inWheel--
}

// replaceTop removes the earliest event and adds e.
func (c *calendar) replaceTop(e event) {
	c.pop()
	c.push(e)
}

// settle moves the read position to the earliest event: through the
// current bucket, then to the next non-empty one, pulling far events into
// the wheel as its horizon advances.
func (c *calendar) settle() {
	for {
		b := c.buckets[c.cur]
		if c.pos < len(b) {
			if !c.sorted {
				slices.SortFunc(b[c.pos:], eventCmp)
				c.sorted = true
			}
			return
		}
		// The current bucket is spent. It keeps its array for the next
		// turn of the wheel, unless a burst made it large: every bucket
		// would keep its largest, and a flow sending a datagram every few
		// picoseconds fills each bucket it passes with tens of thousands
		// (1 Tb/s of 1-byte datagrams: 1.4 GB after 200 us, 24 GB at
		// 1 ps apart).
		if cap(b) > calKeep {
			c.buckets[c.cur] = nil
		} else {
			clear(b)
			c.buckets[c.cur] = b[:0]
		}
		c.nonEmpty[c.cur>>6] &^= 1 << (c.cur & 63)
		c.pos, c.sorted = 0, false
		if c.inWheel == 0 {
			if c.far.len() == 0 {
				return // empty: peek must not be called
			}
			// Jump the wheel to the next far event.
			c.base = c.far.peek().t &^ (calWidth - 1)
			c.cur = 0
			c.refill()
			continue
		}
		n := c.nextNonEmpty()
		c.base += element.Time(n) * calWidth
		c.cur = (c.cur + n) & (calBuckets - 1)
		c.refill()
	}
}

// nextNonEmpty returns how many buckets ahead of cur the next non-empty
// one is (at least 1).
func (c *calendar) nextNonEmpty() int {
	for d := 1; d < calBuckets; {
		i := (c.cur + d) & (calBuckets - 1)
		w := c.nonEmpty[i>>6] >> (i & 63)
		if w != 0 {
			return d + bits.TrailingZeros64(w)
		}
		d += 64 - (i & 63)
	}
	return calBuckets // unreachable while inWheel > 0
}

// refill moves far events that now fall inside the horizon into the wheel.
func (c *calendar) refill() {
	for c.far.len() > 0 && c.inHorizon(c.far.peek().t) {
		e := c.far.pop()
		c.push(e)
	}
}
