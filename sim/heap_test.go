package sim

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/element"
)

// The heap pops in (time, seq) order under any mix of push, pop and
// replaceTop, checked against a sorted reference.
func TestEventRef(t *testing.T) {
	for _, c := range []struct {
		k   eventKind
		idx int32
		gen uint32
	}{{evPipe, 0, 0}, {evTimer, maxIndex, 1<<32 - 1}, {evPipe, 12345, 678}} {
		e := event{ref: mkRef(c.k, c.idx, c.gen)}
		if e.kind() != c.k || e.idx() != c.idx || e.gen() != c.gen {
			t.Errorf("ref %x: %v %d %d, want %v %d %d", e.ref, e.kind(), e.idx(), e.gen(), c.k, c.idx, c.gen)
		}
	}
}

func TestHeapOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h eventHeap
	var ref []event
	seq := uint64(0)
	now := element.Time(0)
	for i := range 200000 {
		switch op := r.IntN(3); {
		case op == 0 || len(ref) == 0:
			seq++
			e := event{t: now + element.Time(r.IntN(50)), seq: seq}
			h.push(e)
			ref = insertSorted(ref, e)
		case op == 1:
			got := h.pop()
			if got != ref[0] {
				t.Fatalf("op %d: pop %+v, want %+v", i, got, ref[0])
			}
			ref = ref[1:]
			now = got.t
		default:
			if *h.peek() != ref[0] {
				t.Fatalf("op %d: peek %+v, want %+v", i, *h.peek(), ref[0])
			}
			now = ref[0].t
			seq++
			e := event{t: now + element.Time(r.IntN(50)), seq: seq}
			h.replaceTop(e)
			ref = insertSorted(ref[1:], e)
		}
		if h.len() != len(ref) {
			t.Fatalf("len %d, want %d", h.len(), len(ref))
		}
	}
}

// The calendar pops in (time, seq) order under pushes near and far,
// replaceTop and long idle gaps, checked against a sorted reference.
func TestCalendarOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var c calendar
	var ref []event
	seq := uint64(0)
	now := element.Time(0)
	delta := func() element.Time {
		switch r.IntN(6) {
		case 0:
			return 0
		case 1:
			return element.Time(r.IntN(1000)) // same bucket
		case 2:
			return element.Time(r.IntN(int(calHorizon))) // anywhere in the wheel
		case 3:
			return calHorizon + element.Time(r.IntN(int(10*calHorizon))) // far
		case 4:
			return element.Time(r.Int64N(int64(element.Second))) // very far
		}
		return element.Time(r.IntN(20_000_000)) // ~20 us: a frame time
	}
	for i := range 300000 {
		op := r.IntN(3)
		if len(ref) == 0 {
			op = 0
		}
		switch op {
		case 0:
			seq++
			e := event{t: now + delta(), seq: seq}
			c.push(e)
			ref = insertSorted(ref, e)
		case 1, 2:
			got := *c.peek()
			if got != ref[0] {
				t.Fatalf("op %d: peek %+v, want %+v", i, got, ref[0])
			}
			now = got.t
			if op == 1 {
				c.pop()
				ref = ref[1:]
			} else {
				seq++
				e := event{t: now + delta(), seq: seq}
				c.replaceTop(e)
				ref = insertSorted(ref[1:], e)
			}
		}
		if c.len() != len(ref) {
			t.Fatalf("op %d: len %d, want %d", i, c.len(), len(ref))
		}
	}
	// Drain.
	for i, want := range ref {
		if got := *c.peek(); got != want {
			t.Fatalf("drain %d: %+v, want %+v", i, got, want)
		}
		c.pop()
	}
	if c.len() != 0 {
		t.Fatal("not empty")
	}
	// The end of time.
	c.push(event{t: 1<<63 - 1, seq: 1})
	c.push(event{t: 1<<63 - 2, seq: 2})
	if c.peek().seq != 2 {
		t.Fatal("end of time order")
	}
	c.pop()
	if c.peek().seq != 1 {
		t.Fatal("end of time order")
	}
}

// insertSorted inserts e into ref, kept in (time, seq) order.
func insertSorted(ref []event, e event) []event {
	i, _ := slices.BinarySearchFunc(ref, e, eventCmp)
	return slices.Insert(ref, i, e)
}

// A spent bucket keeps its array for the next turn of the wheel only up
// to calKeep events: a burst of one event per picosecond used to leave
// every bucket it passed holding room for tens of thousands (a 1 Tb/s
// flow of 1-byte datagrams: 1.4 GB after 200 us of simulated time).
func TestCalendarReleasesBurstBuckets(t *testing.T) {
	var c calendar
	seq := uint64(0)
	// A chain, as a sender's timer makes: each event schedules the next
	// 1 ps later, over four buckets; then one event in a later bucket.
	c.push(event{t: 0, seq: seq})
	end := element.Time(4 * calWidth)
	for {
		e := *c.peek()
		c.pop()
		if e.t+1 >= end {
			break
		}
		seq++
		c.push(event{t: e.t + 1, seq: seq})
	}
	seq++
	c.push(event{t: 10 * calWidth, seq: seq})
	c.peek() // settles past the spent buckets
	for i := range 4 {
		if n := cap(c.buckets[i]); n > calKeep {
			t.Errorf("spent bucket %d keeps room for %d events, want at most %d", i, n, calKeep)
		}
	}
	// A small bucket keeps its array: the next turn reuses it.
	var d calendar
	for i := range 10 {
		d.push(event{t: element.Time(i), seq: uint64(i)})
	}
	for range 10 {
		d.peek()
		d.pop()
	}
	d.push(event{t: 5 * calWidth, seq: 11})
	d.peek()
	if cap(d.buckets[0]) == 0 {
		t.Error("a spent bucket of 10 events lost its array")
	}
}
