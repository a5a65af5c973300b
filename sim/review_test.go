package sim

import (
	"errors"
	"math"
	"testing"

	"github.com/edgefabric/edgefabric/element"
)

// TestNilTimerSlotFreed: a timer or action armed with a nil func does
// nothing when its time comes, and its slot goes back to the free list
// as any other's does. It stayed taken for good: an element arming
// After(d, nil) every period leaked a slot each time, until the engine
// refused timers past a billion.
func TestNilTimerSlotFreed(t *testing.T) {
	s, a, _ := twoHosts(t)
	n := 0
	var arm func()
	arm = func() {
		if n++; n > 1000 {
			return
		}
		a.env.After(us, nil)
		s.At(s.Now()+us, nil)
		a.env.After(us, arm)
	}
	s.At(0, arm)
	s.RunAll()
	if len(s.timers) > 4 {
		t.Fatalf("%d timer slots after 1000 rounds of nil timers (%d free), want at most 4", len(s.timers), len(s.freeTimer))
	}
}

// inPlace forwards every frame it receives on port 1 out of port 2,
// less its first strip bytes, handing the received buffer back to the
// engine with Send.
type inPlace struct {
	env   element.Env
	strip int
}

func (e *inPlace) Attach(env element.Env, _ []element.PortInfo) { e.env = env }
func (e *inPlace) Receive(p element.Port, frame []byte) {
	if p == 1 {
		e.env.Send(2, frame[e.strip:])
	}
}
func (e *inPlace) LinkChange(element.Port, bool) {}

// TestForwardReceivedBufferInPlace: an element that forwards the frame it
// receives by giving that very buffer to Send (as it may in the emulator,
// whose Send writes the frame before returning) gets it delivered intact.
// The engine recycled the buffer when Receive returned, while it was still
// queued on the output link: the next Alloc wrote another frame into it,
// which the far end received in its place, and its delivery put the buffer
// in the free list a second time, so that two later Allocs shared it.
func TestForwardReceivedBufferInPlace(t *testing.T) {
	for _, strip := range []int{0, 4} {
		forwardInPlace(t, strip)
	}
}

func forwardInPlace(t *testing.T, strip int) {
	s, _, h2, send := inPlaceLine(t, &inPlace{strip: strip})
	s.At(0, func() { send(0xaa) })
	// s1 has received the first frame (13.208 us) and is sending it on.
	s.At(14*us, func() { send(0xbb) })
	s.RunAll()
	if len(h2.got) != 2 {
		t.Fatalf("h2 got %d frames, want 2", len(h2.got))
	}
	for i, tag := range []byte{0xaa, 0xbb} {
		if f := h2.got[i].frame; len(f) != 1514-strip || f[0] != tag || f[len(f)-1] != tag {
			t.Errorf("strip %d: frame %d arrived as %d bytes %#x..%#x, want %d bytes of %#x", strip, i, len(f), f[0], f[len(f)-1], 1514-strip, tag)
		}
	}
	for i := range s.pool {
		for j := range i {
			if &s.pool[i][:1][0] == &s.pool[j][:1][0] {
				t.Fatalf("strip %d: the free list holds one buffer twice (entries %d and %d)", strip, j, i)
			}
		}
	}
}

// TestFramingBounded: a framing overhead so large that a frame's length on
// the wire overflows an int is refused (ErrBadOption) like a negative one.
// It was accepted: Preamble MaxInt wrapped every frame's wire length
// negative, and a 100-byte frame took 0.824 us of a 1 Gb/s link, as the
// products of the wrapped length came out.
func TestFramingBounded(t *testing.T) {
	g := line(t, 0, 1_000_000_000, us)
	for _, fr := range []Framing{
		{Preamble: math.MaxInt, FCS: 4, IFG: 12, MinFrame: 60},
		{Preamble: 8, FCS: math.MaxInt - 100, IFG: 12, MinFrame: 60},
		{Preamble: 8, FCS: 4, IFG: math.MaxInt, MinFrame: 60},
		{Preamble: 8, FCS: 4, IFG: 12, MinFrame: math.MaxInt},
		{Preamble: MaxFraming, FCS: 1, MinFrame: 0, IFG: 0},
	} {
		if _, err := New(g, Options{Framing: &fr}); !errors.Is(err, ErrBadOption) {
			t.Errorf("framing %+v: err %v, want ErrBadOption", fr, err)
		}
	}
	fr := Framing{Preamble: MaxFraming, FCS: 0, IFG: 0, MinFrame: 0}
	s := mustNew(t, g, Options{Framing: &fr, QueueBytes: 1 << 30})
	a, b := &rec{}, &rec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, b))
	s.At(us, func() { a.env.Send(1, frameOf(100, 1)) })
	s.RunAll()
	if want := us + element.Time(MaxFraming+100)*8*element.Nanosecond + us; len(b.got) != 1 || b.got[0].t != want {
		t.Fatalf("got %v, want one frame at %v", b.got, want)
	}
}

// clipInPlace forwards every frame it receives on port 1 out of port 2
// in place, as a full slice expression frame[:n:n] (a slice of the
// received buffer whose capacity ends with its length).
type clipInPlace struct{ env element.Env }

func (e *clipInPlace) Attach(env element.Env, _ []element.PortInfo) { e.env = env }
func (e *clipInPlace) Receive(p element.Port, frame []byte) {
	if p == 1 {
		e.env.Send(2, frame[:len(frame):len(frame)])
	}
}
func (e *clipInPlace) LinkChange(element.Port, bool) {}

// TestForwardClippedSliceInPlace: a slice of the received buffer whose
// capacity was cut (frame[:n:n]) is a slice of it too, which Receive's
// contract lets an element hand to Send. The engine recognised the buffer
// only by the last byte of its capacity, so it recycled this one when
// Receive returned while it was still queued, and the next Alloc's frame
// arrived in its place.
func TestForwardClippedSliceInPlace(t *testing.T) {
	s, _, h2, send := inPlaceLine(t, &clipInPlace{})
	s.At(0, func() { send(0xaa) })
	s.At(14*us, func() { send(0xbb) })
	s.RunAll()
	if len(h2.got) != 2 {
		t.Fatalf("h2 got %d frames, want 2", len(h2.got))
	}
	wantTagged(t, h2.got, 0xaa, 0xbb)
}

// floodInPlace sends the frame it receives on port 1 back out of port 1
// and on out of port 2, the same buffer both times.
type floodInPlace struct{ env element.Env }

func (e *floodInPlace) Attach(env element.Env, _ []element.PortInfo) { e.env = env }
func (e *floodInPlace) Receive(p element.Port, frame []byte) {
	if p == 1 {
		e.env.Send(1, frame)
		e.env.Send(2, frame)
	}
}
func (e *floodInPlace) LinkChange(element.Port, bool) {}

// TestFloodReceivedBufferInPlace: an element that sends the buffer it is
// receiving on two ports (the emulator takes that: its Send writes before
// returning) gets two frames. The engine took only the first Send as the
// hand-back, so both deliveries recycled the one buffer, the pool held it
// twice, and two frames allocated later shared it: the second overwrote
// the first in flight. A second Send of the received buffer now sends a
// copy.
func TestFloodReceivedBufferInPlace(t *testing.T) {
	s, _, h2, send := inPlaceLine(t, &floodInPlace{})
	s.At(0, func() { send(0xaa) })
	s.At(100*us, func() { send(0xbb); send(0xcc) })
	s.RunAll()
	if len(h2.got) != 3 {
		t.Fatalf("h2 got %d frames, want 3", len(h2.got))
	}
	wantTagged(t, h2.got, 0xaa, 0xbb, 0xcc)
}

// dropThenFlood sends the frame it receives on port 1 in place on a port
// that does not exist (dropped at once), allocates a frame of its own,
// then sends the received frame, still in place, out of port 2.
type dropThenFlood struct{ env element.Env }

func (e *dropThenFlood) Attach(env element.Env, _ []element.PortInfo) { e.env = env }
func (e *dropThenFlood) Receive(p element.Port, frame []byte) {
	if p != 1 {
		return
	}
	e.env.Send(9, frame)
	own := e.env.(Allocator).Alloc(len(frame))
	for i := range own {
		own[i] = 0xee
	}
	e.env.Send(1, own)
	e.env.Send(2, frame)
}
func (e *dropThenFlood) LinkChange(element.Port, bool) {}

// TestDroppedInPlaceSendNotRecycledMidReceive: a received buffer sent in
// place and dropped at once (no such port, link down) went back to the
// pool while Receive still ran and the element could still send it on
// another port (a flood in place); the element's next Alloc got the same
// array, and the frame it wrote there replaced the flooded one.
func TestDroppedInPlaceSendNotRecycledMidReceive(t *testing.T) {
	s, h1, h2, send := inPlaceLine(t, &dropThenFlood{})
	s.At(0, func() { send(0xaa) })
	s.RunAll()
	if len(h2.got) != 1 {
		t.Fatalf("h2 got %d frames, want 1", len(h2.got))
	}
	if f := h2.got[0].frame; len(f) != 1514 || f[0] != 0xaa || f[len(f)-1] != 0xaa {
		t.Fatalf("the flooded frame arrived as %d bytes %#x..%#x, want 1514 bytes of 0xaa", len(f), f[0], f[len(f)-1])
	}
	if len(h1.got) != 1 || h1.got[0].frame[0] != 0xee {
		t.Fatalf("h1 got %d frames, want the element's own", len(h1.got))
	}
}

// inPlaceLine places mid between two recording hosts on a line (h1 on
// mid's port 1, h2 on its port 2); send makes h1 send a 1514-byte frame
// of tag bytes from the engine's pool, which mid then forwards in place.
func inPlaceLine(t *testing.T, mid element.Element) (s *Sim, h1, h2 *rec, send func(tag byte)) {
	t.Helper()
	s = mustNew(t, line(t, 1, 1_000_000_000, us), Options{})
	h1, h2 = &rec{}, &rec{}
	must(t, s.Place(0, h1))
	must(t, s.Place(1, mid))
	must(t, s.Place(2, h2))
	send = func(tag byte) {
		f := h1.env.(Allocator).Alloc(1514)
		copy(f, frameOf(1514, tag))
		h1.env.Send(1, f)
	}
	return s, h1, h2, send
}

// wantTagged checks that got holds, in order, 1514-byte frames of the
// given tag bytes (as many as got has, which the caller checked).
func wantTagged(t *testing.T, got []got, tags ...byte) {
	t.Helper()
	for i, tag := range tags {
		if f := got[i].frame; len(f) != 1514 || f[0] != tag || f[len(f)-1] != tag {
			t.Errorf("frame %d arrived as %d bytes %#x..%#x, want 1514 bytes of %#x", i, len(f), f[0], f[len(f)-1], tag)
		}
	}
}
