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
	less := func(a, b event) int {
		if a.before(&b) {
			return -1
		}
		if b.before(&a) {
			return 1
		}
		return 0
	}
	now := element.Time(0)
	for i := range 200000 {
		switch op := r.IntN(3); {
		case op == 0 || len(ref) == 0:
			seq++
			e := event{t: now + element.Time(r.IntN(50)), seq: seq}
			h.push(e)
			ref = append(ref, e)
		case op == 1:
			got := h.pop()
			slices.SortFunc(ref, less)
			if got != ref[0] {
				t.Fatalf("op %d: pop %+v, want %+v", i, got, ref[0])
			}
			ref = ref[1:]
			now = got.t
		default:
			slices.SortFunc(ref, less)
			if *h.peek() != ref[0] {
				t.Fatalf("op %d: peek %+v, want %+v", i, *h.peek(), ref[0])
			}
			now = ref[0].t
			seq++
			e := event{t: now + element.Time(r.IntN(50)), seq: seq}
			h.replaceTop(e)
			ref[0] = e
		}
		if h.len() != len(ref) {
			t.Fatalf("len %d, want %d", h.len(), len(ref))
		}
	}
}
