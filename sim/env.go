package sim

import (
	"log/slog"
	"math/rand/v2"

	"github.com/edgefabric/edgefabric/element"
)

// env is the element.Env the engine hands each node.
type env struct {
	s   *Sim
	n   int32
	rng *rand.Rand
	log *slog.Logger
}

var _ element.Env = (*env)(nil)

func (e *env) Now() element.Time                 { return e.s.now }
func (e *env) Rand() *rand.Rand                  { return e.rng }
func (e *env) Log() *slog.Logger                 { return e.log }
func (e *env) Send(p element.Port, frame []byte) { e.s.send(e.n, p, frame) }

func (e *env) After(d element.Time, f func()) (cancel func()) {
	if d < 0 {
		d = 0
	}
	return e.s.after(e.n, e.s.now.AddSat(d), f)
}

// Alloc returns a frame buffer of length n from the engine's pool. A frame
// built in it and given to Send is recycled after delivery, which spares
// the allocator on the forwarding hot path. Unlike make, Alloc does not
// zero the buffer: a recycled one holds the bytes of an earlier frame, so
// the element must write every byte (or clear it). Elements find it through the
// Allocator interface; it is optional.
func (e *env) Alloc(n int) []byte { return e.s.alloc(n) }

// Allocator is implemented by an Env that can hand out recycled frame
// buffers. An element that forwards a copy of every frame it receives can
// use it instead of make or append:
//
//	if a, ok := env.(sim.Allocator); ok { out = a.Alloc(len(frame)) }
type Allocator interface {
	Alloc(n int) []byte
}

func (s *Sim) send(n int32, p element.Port, frame []byte) {
	switch {
	case s.rx.buf != nil && sameBuffer(frame, s.rx.buf):
		// The element forwards the frame it is receiving, in place: the
		// engine owns the bytes again through this Send, and must not
		// recycle them when Receive returns.
		s.rx.handed, s.rx.buf = s.rx.buf, nil
	case s.rx.handed != nil && sameBuffer(frame, s.rx.handed):
		// The same buffer again (flooded in place, which the emulator
		// takes, since its Send writes before returning): it is queued
		// already, so this one goes as a copy, or both deliveries would
		// recycle the one buffer.
		frame = append(s.alloc(len(frame))[:0], frame...)
	}
	nd := &s.nodes[n]
	if p < 1 || int(p) > len(nd.ports) {
		nd.badPort++
		s.recycle(frame)
		return
	}
	pt := &nd.ports[p-1]
	switch {
	case !nd.up:
		pt.stats.Drops[DropNodeDown]++
	case pt.out < 0:
		pt.stats.Drops[DropNoLink]++
	case !s.pipes[pt.out].up:
		pt.stats.Drops[DropLinkDown]++
	default:
		s.pipes[pt.out].send(frame, &pt.stats)
		return
	}
	s.recycle(frame)
}
