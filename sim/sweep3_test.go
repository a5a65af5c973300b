package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// Tests from a third mutation sweep of the engine: each pins an outcome
// that a mutant changed without failing the earlier tests (a bound at its
// edge, the reverse direction of a link, the draws a seed gives, the
// exact trace hash of each kind of event).

// TestSetupRefusals3: the setup checks the earlier tables leave out.
func TestSetupRefusals3(t *testing.T) {
	g := line(t, 0, 1_000_000_000, us)
	if _, err := New(g, Options{Framing: &Framing{Preamble: -1, FCS: 4, IFG: 12, MinFrame: 60}}); !errors.Is(err, ErrBadOption) {
		t.Errorf("negative preamble: %v", err)
	}
	s := mustNew(t, g, Options{})
	if err := s.PlaceHost(0, &rec{}, nil); !errors.Is(err, ErrBadOption) {
		t.Errorf("PlaceHost with an agent and no stack: %v", err)
	}
	if err := s.SetLinkParams(0, 1_000_000_000, -1); !errors.Is(err, ErrBadOption) {
		t.Errorf("delay -1ps: %v", err)
	}
	s.Run(us)
	if err := s.SetTiming(0, Timing{Latency: us}); !errors.Is(err, ErrStarted) {
		t.Errorf("SetTiming after Run: %v", err)
	}
	if err := s.SetLinkParams(0, 1_000_000_000, us); !errors.Is(err, ErrStarted) {
		t.Errorf("SetLinkParams after Run: %v", err)
	}
}

// TestAttachPortInfo: Attach names each port NODE:N and gives it the MAC
// topo.PortMAC assigns to that port number, and the link's rate.
func TestAttachPortInfo(t *testing.T) {
	s := mustNew(t, line(t, 1, 1_000_000_000, us), Options{})
	sw := &rec{}
	must(t, s.Place(1, sw))
	s.Run(0)
	if len(sw.ports) != 2 {
		t.Fatalf("ports %+v", sw.ports)
	}
	for i, p := range sw.ports {
		n := element.Port(i + 1)
		if p.Port != n || p.Name != fmt.Sprintf("s1:%d", n) || p.MAC != topo.PortMAC(1, n) || p.Rate != 1_000_000_000 || !p.Up {
			t.Errorf("port %d: %+v", n, p)
		}
	}
}

// TestReverseQueueLimit: the B-to-A direction has the same limit as the
// other: 1000 + 1000 + 1001 bytes do not fit in 3000.
func TestReverseQueueLimit(t *testing.T) {
	s := mustNew(t, line(t, 0, 1_000_000_000, us), Options{QueueBytes: 3000})
	a, b := &rec{}, &rec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, b))
	s.At(0, func() {
		b.env.Send(1, frameOf(1000, 1))
		b.env.Send(1, frameOf(1000, 2))
		b.env.Send(1, frameOf(1001, 3))
	})
	s.RunAll()
	st, _ := s.PortStats(1, 1)
	if len(a.got) != 2 || st.DropCount(DropQueueFull) != 1 || st.MaxQueue != 2000 {
		t.Errorf("delivered %d, queue_full %d, max queue %d; want 2, 1, 2000", len(a.got), st.DropCount(DropQueueFull), st.MaxQueue)
	}
}

// TestStackLinkUnlimited: the internal link between a host's agent and its
// stack has no queue limit either way: a frame larger than any queue
// default gets through, at once.
func TestStackLinkUnlimited(t *testing.T) {
	s := mustNew(t, line(t, 0, 1_000_000_000, us), Options{})
	agent, stack := &rec{}, &rec{}
	must(t, s.PlaceHost(0, agent, stack))
	must(t, s.Place(1, &rec{}))
	s.At(us, func() {
		stack.env.Send(1, make([]byte, 2*DefaultQueueBytes))
		agent.env.Send(2, make([]byte, 2*DefaultQueueBytes))
	})
	s.RunAll()
	st, _ := s.StackPortStats(0)
	ast, _ := s.PortStats(0, 2)
	if len(agent.got) != 1 || agent.got[0].p != 2 || agent.got[0].t != us || st.TotalDrops() != 0 {
		t.Errorf("agent got %d frames, stack drops %v", len(agent.got), st.DropMap())
	}
	if len(stack.got) != 1 || stack.got[0].p != 1 || stack.got[0].t != us || ast.TotalDrops() != 0 {
		t.Errorf("stack got %d frames, agent Local port drops %v", len(stack.got), ast.DropMap())
	}
}

// TestElementRandStreams: node i's Rand is PCG(seed, splitmix(i+1)), so
// that a run is the same whatever else changed in the engine.
func TestElementRandStreams(t *testing.T) {
	s := mustNew(t, line(t, 0, 1_000_000_000, us), Options{Seed: 42})
	a, b := &rec{}, &rec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, b))
	s.Run(0)
	for i, r := range []*rec{a, b} {
		want := rand.New(rand.NewPCG(42, splitmix(uint64(i)+1))).Uint64()
		if got := r.env.Rand().Uint64(); got != want {
			t.Errorf("node %d first draw %x, want %x", i, got, want)
		}
	}
}

// TestNilTimerFunc: a timer or action with a nil func does nothing when
// its time comes.
func TestNilTimerFunc(t *testing.T) {
	s, a, _ := twoHosts(t)
	s.At(0, func() { a.env.After(us, nil) })
	s.At(2*us, nil)
	s.RunAll()
	if s.Now() != 2*us {
		t.Errorf("clock %v, want 2us", s.Now())
	}
}

// TestTraceHashPinned: the exact hash of each kind of event, so that a
// change to what the hash mixes in (a tag, a shift) shows here and not
// only in the experiments' pinned hashes.
func TestTraceHashPinned(t *testing.T) {
	for _, c := range []struct {
		name string
		do   func(s *Sim, a *rec)
		want uint64
	}{
		{"timer", func(s *Sim, a *rec) { a.env.After(us, func() {}) }, 0x849ef05721652bf5},
		{"link change", func(s *Sim, a *rec) { must(t, s.SetLink(0, false)) }, 0x89fdd16205b1f76d},
		{"frame", func(s *Sim, a *rec) { a.env.Send(1, frameOf(60, 1)) }, 0xe287f25a91ce8354},
	} {
		s, a, _ := twoHosts(t)
		s.At(0, func() { c.do(s, a) })
		s.RunAll()
		if s.TraceHash() != c.want {
			t.Errorf("%s: hash %#x, want %#x", c.name, s.TraceHash(), c.want)
		}
	}
}

// TestAllocReusesFullSizeBuffer: a buffer of exactly the pool's capacity
// comes from the pool, and goes back to it after delivery.
func TestAllocReusesFullSizeBuffer(t *testing.T) {
	s, a, b := twoHosts(t)
	var first, second []byte
	s.At(0, func() {
		first = a.env.(Allocator).Alloc(poolCap)
		a.env.Send(1, first)
	})
	s.At(100*us, func() { second = a.env.(Allocator).Alloc(poolCap) })
	s.RunAll()
	if len(b.got) != 1 || len(second) != poolCap || &first[0] != &second[0] {
		t.Errorf("a %d-byte buffer was not reused after delivery", poolCap)
	}
}

// seqWriter fails every write with a new error.
type seqWriter struct{ n int }

func (w *seqWriter) WritePacket(element.Time, []byte) error {
	w.n++
	return fmt.Errorf("write %d", w.n)
}

// TestCaptureKeepsFirstError: Err reports the first capture error, not the
// last.
func TestCaptureKeepsFirstError(t *testing.T) {
	s, a, _ := twoHosts(t)
	must(t, s.Capture(0, 1, &seqWriter{}))
	s.At(0, func() {
		a.env.Send(1, frameOf(60, 1))
		a.env.Send(1, frameOf(60, 2))
	})
	s.RunAll()
	if s.Err() == nil || s.Err().Error() != "sim: capture: write 1" {
		t.Errorf("Err() = %v, want the first write's", s.Err())
	}
}

// TestTraceHeadersIgnoresPayload: TraceHeaders hashes the first 128 bytes
// and the length: frames differing at byte 200 hash alike (and differ
// under TraceFull).
func TestTraceHeadersIgnoresPayload(t *testing.T) {
	run := func(mode TraceMode, tag byte) uint64 {
		s := mustNew(t, line(t, 0, 1_000_000_000, us), Options{Trace: mode})
		a := &rec{}
		must(t, s.Place(0, a))
		must(t, s.Place(1, &rec{}))
		f := frameOf(300, 1)
		f[200] = tag
		s.At(0, func() { a.env.Send(1, f) })
		s.RunAll()
		return s.TraceHash()
	}
	if run(TraceHeaders, 1) != run(TraceHeaders, 2) {
		t.Error("TraceHeaders hashed byte 200")
	}
	if run(TraceFull, 1) == run(TraceFull, 2) {
		t.Error("TraceFull did not hash byte 200")
	}
}

// TestCorruptDrawsPinned: a link direction's fault draws come from
// PCG(seed^0xFA017, splitmix(pipe+1)): per frame one Float64 against
// Corrupt (none against a zero Loss), then the bit, uniform over the
// frame, flipped on delivery.
func TestCorruptDrawsPinned(t *testing.T) {
	const n, size = 32, 100
	s, h1, h2 := corruptingLine(t, 7, 0.5)
	s.At(0, func() {
		for range n {
			h1.env.Send(1, frameOf(size, 0))
		}
	})
	s.RunAll()
	if len(h2.got) != n {
		t.Fatalf("got %d of %d", len(h2.got), n)
	}
	rng := rand.New(rand.NewPCG(7^0xFA017, splitmix(0+1)))
	flips := 0
	for i, g := range h2.got {
		want := frameOf(size, 0)
		if rng.Float64() < 0.5 {
			bit := rng.IntN(8 * size)
			want[bit/8] ^= 1 << (bit % 8)
			flips++
		}
		if string(g.frame) != string(want) {
			t.Fatalf("frame %d:\n got %x\nwant %x", i, g.frame, want)
		}
	}
	if flips == 0 || flips == n {
		t.Fatalf("%d of %d corrupted: the draws do not test both outcomes", flips, n)
	}
}

// TestCaptureUncabledPort: a capture on a port with no link records
// nothing and the run ends cleanly.
func TestCaptureUncabledPort(t *testing.T) {
	b := topo.NewBuilder("gap")
	h1 := b.AddNode("h1", topo.Host)
	h2 := b.AddNode("h2", topo.Host)
	b.ConnectPorts(topo.End{Node: h1, Port: 2}, topo.End{Node: h2, Port: 1}, 1_000_000_000, us)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	s := mustNew(t, g, Options{})
	a := &rec{}
	must(t, s.Place(h1, a))
	must(t, s.Place(h2, &rec{}))
	cp := &capRec{}
	must(t, s.Capture(h1, 1, cp))
	s.At(0, func() { a.env.Send(1, frameOf(60, 1)) })
	s.Run(10 * us)
	st, _ := s.PortStats(h1, 1)
	if len(cp.pkts) != 0 || s.Err() != nil || st.DropCount(DropNoLink) != 1 {
		t.Errorf("captured %d, err %v, no_link %d", len(cp.pkts), s.Err(), st.DropCount(DropNoLink))
	}
}

// TestLinkChangeOnlyOnChange: setting a link to the state it is in tells
// nobody: one LinkChange per end for down, down, up, up.
func TestLinkChangeOnlyOnChange(t *testing.T) {
	s, a, b := twoHosts(t)
	s.At(us, func() {
		must(t, s.SetLink(0, true))
		must(t, s.SetLink(0, false))
		must(t, s.SetLink(0, false))
	})
	s.At(2*us, func() {
		must(t, s.SetLink(0, true))
		must(t, s.SetLink(0, true))
	})
	s.RunAll()
	want := []linkEv{{us, 1, false}, {2 * us, 1, true}}
	if !eqLinks(a.links, want) || !eqLinks(b.links, want) {
		t.Errorf("link changes %+v and %+v, want %+v at each end", a.links, b.links, want)
	}
}

// TestCutThroughQueuedFrame: a frame queued behind another reaches a
// cut-through receiver its decide bytes after its own start, not after
// the time it was sent: 1000-byte frames at 1 Gb/s, the second starting
// at 8192 ns (8 + 1004 bytes, then a 12-byte gap), each decided 14 bytes
// (112 ns) in.
func TestCutThroughQueuedFrame(t *testing.T) {
	s := mustNew(t, line(t, 0, 1_000_000_000, 0), Options{})
	a, b := &rec{}, &ctRec{rec{ct: 6}}
	must(t, s.Place(0, a))
	must(t, s.Place(1, b))
	s.At(0, func() {
		a.env.Send(1, frameOf(1000, 1))
		a.env.Send(1, frameOf(1000, 2))
	})
	s.RunAll()
	if len(b.got) != 2 || b.got[0].t != 112*ns || b.got[1].t != 8304*ns {
		t.Errorf("got %+v, want at 112ns and 8304ns", b.got)
	}
}

// TestEventsCounted: Events counts each event once: an action and the
// frame delivery it causes make two.
func TestEventsCounted(t *testing.T) {
	s, a, _ := twoHosts(t)
	s.At(0, func() { a.env.Send(1, frameOf(60, 1)) })
	s.RunAll()
	if s.Events() != 2 {
		t.Errorf("Events() = %d, want 2", s.Events())
	}
}

// TestSetFaultNegative: a negative probability is refused.
func TestSetFaultNegative(t *testing.T) {
	s, _, _ := twoHosts(t)
	for _, f := range []Fault{{Loss: -0.5}, {Corrupt: -0.5}} {
		if err := s.SetFault(0, f); !errors.Is(err, ErrBadOption) {
			t.Errorf("SetFault(%+v): %v", f, err)
		}
	}
}
