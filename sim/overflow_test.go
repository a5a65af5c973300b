package sim

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/edgefabric/edgefabric/element"
)

// TestAfterFarFuture: a timer asked for "never" (math.MaxInt64 from now)
// must not wrap around to a time in the past and fire at once.
func TestAfterFarFuture(t *testing.T) {
	g := line(t, 0, 1e9, 0)
	s := mustNew(t, g, Options{})
	a := &rec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, &rec{}))
	fired := false
	s.At(element.Second, func() {
		a.env.After(math.MaxInt64, func() { fired = true })
		a.env.After(math.MaxInt64-element.Millisecond, func() { fired = true })
	})
	s.Run(10 * element.Second)
	if fired {
		t.Fatal("a timer set for the far future fired within 10 s")
	}
	if s.Now() != 10*element.Second {
		t.Fatalf("clock at %v", s.Now())
	}
}

// TestSendFarFuture: a link delay and a node latency each within their
// limits (as a scenario may set them) must not add up past the end of
// time and deliver the frame in the past.
func TestSendFarFuture(t *testing.T) {
	g := line(t, 0, 1, 0)
	s := mustNew(t, g, Options{})
	a, b := &rec{}, &rec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, b))
	must(t, s.SetLinkParams(0, 1, math.MaxInt64/2))
	must(t, s.SetTiming(1, Timing{Latency: math.MaxInt64 / 2}))
	s.At(element.Second, func() { a.env.Send(1, frameOf(1500, 1)) })
	s.Run(10 * element.Second)
	if len(b.got) != 0 {
		t.Fatalf("frame delivered at %v, sent at 1s over a link of delay %v", b.got[0].t, element.Time(math.MaxInt64/2))
	}
	if s.Now() != 10*element.Second {
		t.Fatalf("clock at %v", s.Now())
	}
}

// TestSerHugeFrame: the serialization time of a frame too large for
// n·8e12 to fit in an int64 is computed exactly (or saturates), never
// negative.
func TestSerHugeFrame(t *testing.T) {
	pp := pipe{psPerByteNum: 8 * int64(element.Second)}
	for _, c := range []struct {
		rate int64
		n    int
		want element.Time
	}{
		{1e9, 1500, 12 * element.Microsecond},
		{1e9, 1 << 30, element.Time(8 * (1 << 30) * 1000)},
		{1e9, 1 << 40, element.Time(8 * (1 << 40) * 1000)},
		{1, 1 << 30, math.MaxInt64},
	} {
		pp.rate = c.rate
		if got := pp.ser(c.n); got != c.want {
			t.Errorf("ser(%d) at %d b/s = %v, want %v", c.n, c.rate, got, c.want)
		}
	}
}

// TestSerializationCarriesFraction: at a rate that does not divide 8e12,
// a frame's serialization is not a whole number of picoseconds; the
// fraction carries to the next frame sent back to back, so 1000 frames
// take exactly 1000 frame times. Rounded down one by one, the link ran
// faster than its rate: 333 ps in 4.1 ms at 3 Gb/s, and at 1 Pb/s a
// 42-byte frame (72 bytes on the wire, 0.576 ps) took no time at all,
// so the link had no rate.
func TestSerializationCarriesFraction(t *testing.T) {
	for _, c := range []struct {
		rate        int64
		size        int
		first, last element.Time // exact: floor(k·slot + frame time)
	}{
		{3_000_000_000, 1514, 4069333, 4101301333}, // 1538-byte slots of 4101333.33 ps
		{1_000_000_000_000_000, 42, 0, 671},        // 84-byte slots of 0.672 ps
		{1_000_000_000, 1514, 12208000, 999*12304000 + 12208000},
	} {
		g := line(t, 0, c.rate, 0)
		s := mustNew(t, g, Options{QueueBytes: 1 << 30})
		a, b := &rec{}, &rec{}
		must(t, s.Place(0, a))
		must(t, s.Place(1, b))
		s.At(0, func() {
			for range 1000 {
				a.env.Send(1, frameOf(c.size, 1))
			}
		})
		s.RunAll()
		if len(b.got) != 1000 || b.got[0].t != c.first || b.got[999].t != c.last {
			t.Errorf("%d b/s: %d frames, the first at %d ps, the last at %d ps; want 1000, %d, %d",
				c.rate, len(b.got), b.got[0].t, b.got[len(b.got)-1].t, c.first, c.last)
		}
	}
}

// TestZeroSerializationKeepsOrder: at 1 Pb/s most frames take 0 ps to
// serialize (the fraction carries), and with no delay they arrive the
// instant they are sent. A link still delivers in the order sent, at
// times that never go back, to a store-and-forward or a cut-through
// receiver, which takes reserved group frames (every third here) whole:
// the pipe's one pending event serves its frames in order, their times
// are set at enqueue and do not decrease, and events due at one instant
// run in the order scheduled. 50 bursts of 7 frames, sent from 0 to 9 ps,
// keep the link busy for 50 * 10987 bytes (4394.8 ps); the last frame
// arrives at floor(4394.8 - 12 * 0.008) ps.
func TestZeroSerializationKeepsOrder(t *testing.T) {
	for _, ct := range []int{0, 6} {
		s := mustNew(t, line(t, 0, 1_000_000_000_000_000, 0), Options{QueueBytes: 1 << 30})
		a, b := &rec{}, &ctRec{rec{ct: ct}}
		must(t, s.Place(0, a))
		must(t, s.Place(1, b))
		sizes := []int{14, 60, 61, 1514, 20, 9000, 64}
		id := uint32(0)
		for k := range 50 {
			s.At(element.Time(k/5), func() {
				for j := range 7 {
					id++
					f := frameOf(sizes[(j+k)%7], 0x22)
					if j%3 == 0 {
						copy(f, []byte{0x01, 0x80, 0xc2, 0, 0, 0})
					}
					binary.BigEndian.PutUint32(f[6:], id)
					a.env.Send(1, f)
				}
			})
		}
		s.RunAll()
		if len(b.got) != 350 || b.got[0].t != 0 || b.got[349].t != 4394 {
			t.Fatalf("cut-through %d: %d frames, first at %v, last at %v; want 350, 0, 4394 ps", ct, len(b.got), b.got[0].t, b.got[len(b.got)-1].t)
		}
		for i, g := range b.got {
			if n := binary.BigEndian.Uint32(g.frame[6:]); n != uint32(i+1) || i > 0 && g.t < b.got[i-1].t {
				t.Fatalf("cut-through %d: arrival %d is frame %d at %v (previous at %v)", ct, i+1, n, g.t, b.got[max(i-1, 0)].t)
			}
		}
	}
}

// TestSerializeFastPathExact: at rates dividing 8e12 serialize multiplies
// instead of dividing 128 bits; end and busy are the same either way,
// across frame sizes, gaps, back-to-back starts and huge frames.
func TestSerializeFastPathExact(t *testing.T) {
	for _, rate := range []int64{1, 8, 1e6, 1e8, 1e9, 1e10, 25e9, 4e10, 1e11, 4e11, 8e12} {
		var fast, slow pipe
		fast.psPerByteNum, slow.psPerByteNum = 8*int64(element.Second), 8*int64(element.Second)
		fast.setRate(rate)
		slow.rate = rate // psPerByte 0: the general path
		if fast.psPerByte == 0 {
			t.Fatalf("rate %d: no fast path", rate)
		}
		start := element.Time(0)
		for i, n := range []int{0, 1, 64, 72, 1538, 9000, 1<<20 - 21, 1 << 20, 1 << 30} {
			for _, ifg := range []int{0, 12, 20} {
				if i%2 == 1 {
					start = fast.busy // back to back
				} else {
					start = max(fast.busy, start) + 7
				}
				ef, es := fast.serialize(start, n, ifg), slow.serialize(start, n, ifg)
				if ef != es || fast.busy != slow.busy || fast.frac != slow.frac {
					t.Fatalf("rate %d, %d+%d bytes from %d: fast end %d busy %d frac %d, general end %d busy %d frac %d",
						rate, n, ifg, start, ef, fast.busy, fast.frac, es, slow.busy, slow.frac)
				}
			}
		}
	}
	var p pipe
	p.psPerByteNum = 8 * int64(element.Second)
	if p.setRate(3e9); p.psPerByte != 0 {
		t.Errorf("3 Gb/s: psPerByte %d, want 0 (not exact)", p.psPerByte)
	}
}
