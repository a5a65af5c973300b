package sim

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// endlessStar is runChatter's star (a hub, six hosts sending frames of
// random sizes at random times, a lossy and corrupting link, a link that
// fails and comes back) whose hosts never stop sending: only a Stop ends
// its RunAll.
func endlessStar(t *testing.T) *Sim {
	t.Helper()
	b := topo.NewBuilder("star")
	sw := b.AddNode("s1", topo.Switch)
	for i := range 6 {
		b.Connect(b.AddNode(fmt.Sprintf("h%d", i+1), topo.Host), sw)
	}
	g, err := b.Graph()
	must(t, err)
	s := mustNew(t, g, Options{Seed: 7, QueueBytes: 20000})
	must(t, s.Place(sw, &hub{}))
	for i := 1; i <= 6; i++ {
		must(t, s.Place(topo.NodeID(i), &chatter{n: -1}))
	}
	must(t, s.SetFault(2, Fault{Loss: 0.05, Corrupt: 0.05}))
	s.At(500*element.Microsecond, func() { must(t, s.SetLink(3, false)) })
	s.At(900*element.Microsecond, func() { must(t, s.SetLink(3, true)) })
	return s
}

// TestStopFromAnotherGoroutine: a Stop made from another goroutine while
// RunAll runs (a signal handler's) ends it at an event boundary: resumed
// from there, the run is the same, event for event and bit for bit (trace
// hash, counters), as one never stopped; an event cut short, or one run
// twice, would show in the hash. Stop was a plain bool, which -race
// reports as a data race here.
func TestStopFromAnotherGoroutine(t *testing.T) {
	s := endlessStar(t)
	// The other goroutine stops the run once it is 300 us in, at no
	// particular event: whichever it is, the run must end between two.
	var reached atomic.Bool
	s.At(300*element.Microsecond, func() { reached.Store(true) })
	go func() {
		for !reached.Load() {
			runtime.Gosched()
		}
		s.Stop()
	}()
	s.RunAll() // endless: only the Stop ends it
	if !s.Stopped() {
		t.Fatal("RunAll returned, not stopped")
	}
	stopAt, events := s.Now(), s.Events()
	if stopAt < 300*element.Microsecond {
		t.Fatalf("stopped at %v, before the Stop was made", stopAt)
	}
	until := max(stopAt, element.Millisecond) + 200*element.Microsecond
	s.Run(until)
	if s.Stopped() || s.Now() != until {
		t.Fatalf("resumed run: stopped %v at %v, want it to reach %v", s.Stopped(), s.Now(), until)
	}

	ref := endlessStar(t)
	ref.At(300*element.Microsecond, func() {})
	ref.Run(until)
	if s.TraceHash() != ref.TraceHash() || s.Events() != ref.Events() {
		t.Errorf("stopped after %d events at %v and resumed: hash %x, %d events; never stopped: %x, %d",
			events, stopAt, s.TraceHash(), s.Events(), ref.TraceHash(), ref.Events())
	}
	for n := range topo.NodeID(7) {
		for p := element.Port(1); p <= element.Port(len(s.nodes[n].ports)); p++ {
			got, _ := s.PortStats(n, p)
			want, _ := ref.PortStats(n, p)
			if got != want {
				t.Errorf("node %d port %d: %+v, never stopped %+v", n, p, got, want)
			}
		}
	}
}

// TestStopBeforeRun: a Stop made while no Run runs (it came from another
// goroutine as the last Run returned) ends the next Run before its first
// event, with the clock where it was, and only that one: it was dropped,
// and the next Run ran on to its end.
func TestStopBeforeRun(t *testing.T) {
	s, a, b := twoHosts(t)
	s.At(us, func() { a.env.Send(1, frameOf(100, 1)) })
	s.Stop()
	s.Run(10 * us)
	if !s.Stopped() || s.Now() != 0 || s.Events() != 0 || len(b.got) != 0 {
		t.Fatalf("after a Stop before Run: stopped %v, clock %v, %d events, %d frames; want stopped at 0 with none",
			s.Stopped(), s.Now(), s.Events(), len(b.got))
	}
	s.Run(10 * us)
	if s.Stopped() || s.Now() != 10*us || len(b.got) != 1 {
		t.Fatalf("next Run: stopped %v, clock %v, %d frames; want 10us and the frame", s.Stopped(), s.Now(), len(b.got))
	}
}

// TestStopFlushesCaptures: a stopped Run hands its captures every frame
// whose transmission had started, as a Run that reaches its end does.
func TestStopFlushesCaptures(t *testing.T) {
	s, a, _ := twoHosts(t)
	var w recWriter
	must(t, s.Capture(0, 1, &w))
	s.At(us, func() {
		a.env.Send(1, frameOf(100, 1))
		a.env.Send(1, frameOf(100, 2)) // queued behind the first
	})
	s.At(us, s.Stop)
	s.Run(10 * us)
	if !s.Stopped() || s.Now() != us {
		t.Fatalf("stopped %v at %v, want stopped at 1us", s.Stopped(), s.Now())
	}
	if len(w.frames) != 1 || w.frames[0][0] != 1 {
		t.Fatalf("capture holds %d frames, want the one whose transmission started", len(w.frames))
	}
}

type recWriter struct{ frames [][]byte }

func (r *recWriter) WritePacket(t element.Time, frame []byte) error {
	r.frames = append(r.frames, append([]byte(nil), frame...))
	return nil
}
