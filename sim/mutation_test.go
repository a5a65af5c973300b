package sim

import (
	"errors"
	"math"
	"testing"

	"github.com/edgefabric/edgefabric/element"
)

// Tests that pin behaviour a mutation sweep found no test held.

// TestSerSaturatesAtQuotientOverflow: a product whose high word equals the
// rate would overflow Div64's quotient; it saturates instead of panicking.
func TestSerSaturatesAtQuotientOverflow(t *testing.T) {
	pp := pipe{psPerByteNum: 8 * int64(element.Second), rate: 1}
	// 2305844 * 8e12 is just past 2^64: high word 1, the rate.
	if got := pp.ser(2305844); got != math.MaxInt64 {
		t.Fatalf("ser = %v, want the end of time", got)
	}
}

// TestCaptureSurvivesCompaction: a long backlog is compacted from the front
// of the flight list as it drains; the capture keeps its place.
func TestCaptureSurvivesCompaction(t *testing.T) {
	const n = 300
	s, a, b, cp := slowPairCaptured(t)
	s.At(0, func() {
		for i := range n {
			a.env.Send(1, frameOf(60, byte(i)))
		}
	})
	s.RunAll()
	if len(b.got) != n || len(cp.pkts) != n {
		t.Fatalf("delivered %d, captured %d, want %d", len(b.got), len(cp.pkts), n)
	}
	for i, p := range cp.pkts {
		if p.frame[0] != byte(i) || (i > 0 && p.t <= cp.pkts[i-1].t) {
			t.Fatalf("record %d: tag %d at %v", i, p.frame[0], p.t)
		}
	}
}

// TestLinkFailsAsFrameStarts: a frame whose transmission starts at the
// very time the link fails has started: it is in the capture and in
// TxFrames, lost with the link.
func TestLinkFailsAsFrameStarts(t *testing.T) {
	const ms = 1000 * us
	s, a, b, cp := slowPairCaptured(t)
	s.At(0, func() {
		a.env.Send(1, frameOf(1000, 1))
		a.env.Send(1, frameOf(1000, 2)) // starts at 8.192 ms
	})
	s.At(8192*us, func() { must(t, s.SetLink(0, false)) })
	s.Run(20 * ms)
	if len(cp.pkts) != 2 || cp.pkts[1].t != 8192*us {
		t.Fatalf("capture has %d records, want 2 (the second at 8.192 ms)", len(cp.pkts))
	}
	st, _ := s.PortStats(0, 1)
	if len(b.got) != 1 || st.TxFrames != 2 || st.DropCount(DropLinkDown) != 1 {
		t.Errorf("delivered %d, stats %+v: want 1 delivered, 2 sent, 1 link_down", len(b.got), st)
	}
}

// TestCorruptEmptyFrame: a corruption fault has no bit to flip in an empty
// frame; the frame goes through.
func TestCorruptEmptyFrame(t *testing.T) {
	s, a, b := twoHosts(t)
	must(t, s.SetFault(0, Fault{Corrupt: 1}))
	s.At(0, func() { a.env.Send(1, []byte{}) })
	s.RunAll()
	if len(b.got) != 1 || len(b.got[0].frame) != 0 {
		t.Fatalf("got %d frames", len(b.got))
	}
}

// TestPoisonedFrameStartsAtItsTail: a poisoned frame whose output starts
// exactly when its tail is in has been buffered whole: the cut-through
// switch checks the CRC and drops it.
func TestPoisonedFrameStartsAtItsTail(t *testing.T) {
	// In: 1 Gb/s (8 ns/byte), out: 100 Mb/s (80 ns/byte), no delay.
	// Frame 1 (60 bytes, 72 on the wire) leaves s1 at 112 ns and keeps the
	// output busy until 112 + 80*72 + 80*12 = 6832 ns. Frame 2 (758 bytes,
	// 770 on the wire) has its tail in at 8*(72+12+770) = 6832 ns.
	s, h1, sw, h2 := slowOutCutThrough(t)
	s.At(0, func() {
		h1.env.Send(1, frameOf(60, 1))
		must(t, s.SetFault(0, Fault{Corrupt: 1}))
		h1.env.Send(1, frameOf(758, 2))
	})
	s.RunAll()
	if len(sw.got) != 2 || len(h2.got) != 1 {
		t.Fatalf("switch saw %d, host got %d frames", len(sw.got), len(h2.got))
	}
	if st, _ := s.PortStats(1, 2); st.DropCount(DropBadFCS) != 1 || st.TxFrames != 1 {
		t.Errorf("s1 port 2: %+v, want 1 bad_fcs, 1 sent", st)
	}
}

// TestCutThroughDecideBeyondFrame: a cut-through node that needs more
// bytes than the frame has gets it when its tail is in.
func TestCutThroughDecideBeyondFrame(t *testing.T) {
	s, a, b := twoHosts(t)
	must(t, s.SetTiming(1, Timing{CutThrough: 1000}))
	s.At(0, func() { a.env.Send(1, frameOf(42, 1)) })
	s.RunAll()
	// 8 + 60 + 4 = 72 bytes: 576 ns.
	if len(b.got) != 1 || b.got[0].t != 576*ns+us {
		t.Fatalf("got %+v, want one frame at 1.576 us", b.got)
	}
}

func TestLinkLocalRange(t *testing.T) {
	for _, c := range []struct {
		last byte
		want bool
	}{{0x00, true}, {0x02, true}, {0x0e, true}, {0x0f, true}, {0x10, false}, {0x21, false}} {
		f := []byte{0x01, 0x80, 0xc2, 0, 0, c.last, 1, 2}
		if got := linkLocal(f); got != c.want {
			t.Errorf("linkLocal(01-80-c2-00-00-%02x) = %v, want %v", c.last, got, c.want)
		}
	}
	if linkLocal([]byte{0x01, 0x80, 0xc2, 0, 0}) || linkLocal([]byte{0x01, 0x80, 0xc2, 0, 1, 0}) {
		t.Error("short frame or 01-80-c2-00-01-00 taken as link-local")
	}
}

// TestTraceHeadersHashesLength: frames alike in their first 128 bytes but
// of different lengths give different hashes under TraceHeaders.
func TestTraceHeadersHashesLength(t *testing.T) {
	run := func(n int) (uint64, element.Time) {
		s := mustNew(t, line(t, 0, 1_000_000_000, us), Options{Trace: TraceHeaders})
		// 8 Pb/s: both frames serialize in 0 ps, so they arrive together.
		must(t, s.SetLinkParams(0, 8_000_000_000_000_000, us))
		a, b := &rec{}, &rec{}
		must(t, s.Place(0, a))
		must(t, s.Place(1, b))
		s.At(0, func() { a.env.Send(1, frameOf(n, 1)) })
		s.RunAll()
		if len(b.got) != 1 {
			t.Fatalf("got %d frames", len(b.got))
		}
		return s.TraceHash(), b.got[0].t
	}
	h1, t1 := run(200)
	h2, t2 := run(300)
	if t1 != t2 {
		t.Fatalf("arrivals differ: %v, %v", t1, t2)
	}
	if h1 == h2 {
		t.Error("TraceHeaders hash ignores the frame length")
	}
}

// TestCaptureTimeOrder: a port that transmits and receives has both in
// its capture in time order, though its queued frame's start came before
// any event of its link.
func TestCaptureTimeOrder(t *testing.T) {
	s := mustNew(t, line(t, 0, 1_000_000_000, 100*us), Options{})
	a, b := &rec{}, &rec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, b))
	cp := &capRec{}
	must(t, s.Capture(1, 1, cp))
	s.At(0, func() {
		b.env.Send(1, frameOf(1500, 1))
		b.env.Send(1, frameOf(1500, 2)) // starts at 12.192 us
		a.env.Send(1, frameOf(60, 3))   // reaches b at 100.576 us
	})
	s.RunAll()
	if len(cp.pkts) != 3 {
		t.Fatalf("%d records, want 3", len(cp.pkts))
	}
	for i := 1; i < len(cp.pkts); i++ {
		if cp.pkts[i].t < cp.pkts[i-1].t {
			t.Fatalf("capture out of order: %v then %v", cp.pkts[i-1].t, cp.pkts[i].t)
		}
	}
}

// TestFaultBothDirections: SetFault impairs both directions.
func TestFaultBothDirections(t *testing.T) {
	s, a, b := twoHosts(t)
	must(t, s.SetFault(0, Fault{Loss: 1}))
	s.At(0, func() {
		a.env.Send(1, frameOf(60, 1))
		b.env.Send(1, frameOf(60, 2))
	})
	s.RunAll()
	sa, _ := s.PortStats(0, 1)
	sb, _ := s.PortStats(1, 1)
	if len(a.got)+len(b.got) != 0 || sa.DropCount(DropFaultLoss) != 1 || sb.DropCount(DropFaultLoss) != 1 {
		t.Fatalf("a got %d, b got %d; drops %v / %v", len(a.got), len(b.got), sa.DropMap(), sb.DropMap())
	}
}

// TestCaptureSwappedMidRun: a writer replaced from inside the run gets
// what started under it, even with no event of the link since.
func TestCaptureSwappedMidRun(t *testing.T) {
	const ms = 1000 * us
	s, a, _, c1 := slowPairCaptured(t)
	c2 := &capRec{}
	s.At(0, func() {
		a.env.Send(1, frameOf(1000, 1))
		a.env.Send(1, frameOf(1000, 2)) // starts at 8.192 ms, delivered at 16.288 ms
	})
	s.At(9*ms, func() { must(t, s.Capture(0, 1, c2)) })
	s.RunAll()
	if len(c1.pkts) != 2 || len(c2.pkts) != 0 {
		t.Fatalf("records: first writer %d, second %d; want 2, 0", len(c1.pkts), len(c2.pkts))
	}
}

func TestSetupBounds(t *testing.T) {
	g := line(t, 0, 1_000_000_000, us)
	s := mustNew(t, g, Options{})
	if err := s.SetFault(0, Fault{Corrupt: 1.5}); !errors.Is(err, ErrBadOption) {
		t.Errorf("Corrupt 1.5: %v", err)
	}
	if err := s.SetFault(0, Fault{Loss: 1, Corrupt: 1}); err != nil {
		t.Errorf("probabilities of 1: %v", err)
	}
	if _, err := New(g, Options{Framing: &Framing{Preamble: 8, FCS: 4, IFG: 12, MinFrame: -1}}); !errors.Is(err, ErrBadOption) {
		t.Errorf("negative MinFrame: %v", err)
	}
	// TraceOff is a valid mode: no hash.
	s = mustNew(t, g, Options{Trace: TraceOff})
	a, b := &rec{}, &rec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, b))
	s.At(0, func() { a.env.Send(1, frameOf(60, 1)) })
	s.RunAll()
	if len(b.got) != 1 || s.TraceHash() != 0 {
		t.Errorf("TraceOff: got %d frames, hash %x", len(b.got), s.TraceHash())
	}
}

// TestAtInThePast: an action scheduled for a time already past runs now;
// the clock never goes back.
func TestAtInThePast(t *testing.T) {
	s := mustNew(t, line(t, 0, 1_000_000_000, us), Options{})
	var at element.Time = -1
	s.At(10*us, func() { s.At(5*us, func() { at = s.Now() }) })
	s.RunAll()
	if at != 10*us {
		t.Fatalf("past action ran at %v, want 10us", at)
	}
}

// TestNodeZeroTimersHashed: element timers enter the trace hash, node 0's
// included.
func TestNodeZeroTimersHashed(t *testing.T) {
	run := func(d element.Time) uint64 {
		s, a, _ := twoHosts(t)
		s.At(0, func() { a.env.After(d, func() {}) })
		s.RunAll()
		return s.TraceHash()
	}
	if run(us) == run(2*us) {
		t.Error("node 0's timers leave the trace hash alone")
	}
}

// TestForeignBufferNotRecycled: a buffer of larger capacity than the
// pool's, made by the element, is never recycled.
func TestForeignBufferNotRecycled(t *testing.T) {
	s, a, _ := twoHosts(t)
	s.At(0, func() { a.env.Send(1, make([]byte, 100, 4096)) })
	s.RunAll()
	if len(s.pool) != 0 {
		t.Fatalf("pool took a foreign buffer of cap %d", cap(s.pool[0]))
	}
}

// TestStaleCancel: a timer's cancel, called after it fired, leaves alone
// the timer that reuses its slot.
func TestStaleCancel(t *testing.T) {
	s, a, _ := twoHosts(t)
	fired := false
	var c1 func()
	s.At(0, func() {
		c1 = a.env.After(us, func() {
			a.env.After(us, func() { fired = true }) // takes c1's slot
			c1()
		})
	})
	s.RunAll()
	if !fired {
		t.Fatal("a stale cancel stopped another timer")
	}
}

// TestCancelledTimerSlotReused: the dead event of a cancelled timer does
// not fire the timer that took its slot.
func TestCancelledTimerSlotReused(t *testing.T) {
	s, a, _ := twoHosts(t)
	var got []element.Time
	s.At(0, func() {
		c := a.env.After(10*us, func() { t.Error("cancelled timer fired") })
		c()
		a.env.After(20*us, func() { got = append(got, s.Now()) })
	})
	s.RunAll()
	if len(got) != 1 || got[0] != 20*us {
		t.Fatalf("timer fired at %v, want once at 20us", got)
	}
}

// TestDeliveryAfterLinkFlap: the delivery event of a frame lost with the
// link does not deliver a frame sent after the link came back early.
func TestDeliveryAfterLinkFlap(t *testing.T) {
	s := mustNew(t, line(t, 0, 1_000_000_000, 100*us), Options{})
	a, b := &rec{}, &rec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, b))
	s.At(0, func() { a.env.Send(1, frameOf(1000, 1)) }) // due at 108.096 us
	s.At(us, func() { must(t, s.SetLink(0, false)) })
	s.At(2*us, func() { must(t, s.SetLink(0, true)) })
	s.At(3*us, func() { a.env.Send(1, frameOf(1000, 2)) })
	s.RunAll()
	if len(b.got) != 1 || b.got[0].frame[0] != 2 || b.got[0].t != 3*us+8096*ns+100*us {
		t.Fatalf("got %+v, want frame 2 at 111.096 us", b.got)
	}
}
