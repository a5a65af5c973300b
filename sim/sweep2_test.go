package sim

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"math/bits"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// Tests that pin behaviour a second mutation sweep found no test held.

// TestTimerAtHorizonEdge: an event exactly one wheel horizon ahead belongs
// to the far heap, not to the current bucket (whose index it wraps to):
// it fires after an earlier one, at its own time.
func TestTimerAtHorizonEdge(t *testing.T) {
	s, a, _ := twoHosts(t)
	var got []element.Time
	s.At(0, func() {
		a.env.After(calHorizon, func() { got = append(got, s.Now()) })
		a.env.After(us, func() { got = append(got, s.Now()) })
	})
	s.RunAll()
	if len(got) != 2 || got[0] != us || got[1] != calHorizon {
		t.Fatalf("timers fired at %v, want [1us %v]", got, element.Time(calHorizon))
	}
}

// TestScheduleBetweenRuns: Run(until) stops short of the next event, whose
// bucket the wheel has already moved to; an action scheduled then, between
// until and that event, still comes first, at its own time.
func TestScheduleBetweenRuns(t *testing.T) {
	s, _, _ := twoHosts(t)
	var got []element.Time
	mark := func() { got = append(got, s.Now()) }
	s.At(10*us, mark)
	s.Run(5 * us)
	s.At(6*us, mark)
	s.Run(20 * us)
	if len(got) != 2 || got[0] != 6*us || got[1] != 10*us {
		t.Fatalf("actions ran at %v, want [6us 10us]", got)
	}
}

// TestStopThenResume: Stop leaves the clock at the stopping event (not at
// Run's until, which would later run earlier events in the past), and the
// next Run goes on from there.
func TestStopThenResume(t *testing.T) {
	s, _, _ := twoHosts(t)
	var got []element.Time
	s.At(5*us, s.Stop)
	s.At(7*us, func() { got = append(got, s.Now()) })
	s.Run(10 * us)
	if s.Now() != 5*us || len(got) != 0 {
		t.Fatalf("after Stop: clock %v, ran %v; want 5us and nothing", s.Now(), got)
	}
	s.Run(10 * us)
	if s.Now() != 10*us || len(got) != 1 || got[0] != 7*us {
		t.Fatalf("resumed: clock %v, ran %v; want 10us and [7us]", s.Now(), got)
	}
}

// TestTraceHashFields: every field docs/sim.md lists goes into the trace
// hash: the time of a link change; a delivered frame's time, port and
// length (beside its CRC); the node of a timer, apart from its time.
func TestTraceHashFields(t *testing.T) {
	t.Run("link change time", func(t *testing.T) {
		run := func(at element.Time) uint64 {
			s, _, _ := twoHosts(t)
			s.At(at, func() { must(t, s.SetLink(0, false)) })
			s.RunAll()
			return s.TraceHash()
		}
		if run(us) == run(2*us) {
			t.Error("link changes at 1us and 2us hash alike")
		}
	})
	t.Run("frame time", func(t *testing.T) {
		run := func(delay element.Time) uint64 {
			s, a, b := twoHosts(t)
			must(t, s.SetLinkParams(0, 1_000_000_000, delay))
			s.At(0, func() { a.env.Send(1, frameOf(60, 1)) })
			s.RunAll()
			if len(b.got) != 1 || b.got[0].t != 576*ns+delay {
				t.Fatalf("got %+v", b.got)
			}
			return s.TraceHash()
		}
		if run(us) == run(2*us) {
			t.Error("one frame delivered at two times hashes alike")
		}
	})
	t.Run("frame port", func(t *testing.T) {
		// The same bytes reach s1 at the same time, on port 1 or port 2.
		run := func(from topo.NodeID) uint64 {
			s := mustNew(t, line(t, 1, 1_000_000_000, us), Options{})
			hs := []*rec{{}, {}, {}}
			for i, r := range hs {
				must(t, s.Place(topo.NodeID(i), r))
			}
			s.At(0, func() { hs[from].env.Send(1, frameOf(60, 1)) })
			s.RunAll()
			if len(hs[1].got) != 1 || hs[1].got[0].t != 576*ns+us {
				t.Fatalf("s1 got %+v", hs[1].got)
			}
			return s.TraceHash()
		}
		if run(0) == run(2) {
			t.Error("a frame on port 1 and on port 2 hashes alike")
		}
	})
	t.Run("frame length", func(t *testing.T) {
		// m || CRC(m) has the same CRC-32C (the residue) for every m: two
		// frames of 20 and 30 bytes, both padded to 60 on the wire, arrive
		// together with equal CRCs. Only the length tells them apart.
		tab := crc32.MakeTable(crc32.Castagnoli)
		withCRC := func(m []byte) []byte { return binary.LittleEndian.AppendUint32(m, crc32.Checksum(m, tab)) }
		f1, f2 := withCRC(frameOf(16, 1)), withCRC(frameOf(26, 2))
		if crc32.Checksum(f1, tab) != crc32.Checksum(f2, tab) {
			t.Fatal("precondition: the residues differ")
		}
		run := func(f []byte) uint64 {
			s, a, b := twoHosts(t)
			s.At(0, func() { a.env.Send(1, f) })
			s.RunAll()
			if len(b.got) != 1 || b.got[0].t != 576*ns+us {
				t.Fatalf("got %+v", b.got)
			}
			return s.TraceHash()
		}
		if run(f1) == run(f2) {
			t.Error("frames of 20 and 30 bytes with one CRC hash alike")
		}
	})
	t.Run("timer node", func(t *testing.T) {
		run := func(on int) uint64 {
			s, a, b := twoHosts(t)
			s.At(0, func() { []*rec{a, b}[on].env.After(us, func() {}) })
			s.RunAll()
			return s.TraceHash()
		}
		if run(0) == run(1) {
			t.Error("timers on node 0 and node 1 hash alike")
		}
	})
	t.Run("timer node and time", func(t *testing.T) {
		// The node once shared bits with the time (node<<40 XOR time):
		// node 1's timer at 1 us and node 0's at 1 us + 2^40 ps (1.1 s)
		// hashed alike.
		run := func(on int, at element.Time) uint64 {
			s, a, b := twoHosts(t)
			s.At(0, func() { []*rec{a, b}[on].env.After(at, func() {}) })
			s.RunAll()
			if s.Now() != at {
				t.Fatalf("clock %v, want %v", s.Now(), at)
			}
			return s.TraceHash()
		}
		if run(1, us) == run(0, us+1<<40) {
			t.Error("node 1's timer at 1us and node 0's at 1us+2^40ps hash alike")
		}
	})
}

// TestDefaultQueueLimit: without QueueBytes a link direction holds
// DefaultQueueBytes, 512 KiB.
func TestDefaultQueueLimit(t *testing.T) {
	s := mustNew(t, line(t, 0, 1_000_000_000, us), Options{})
	if c, _ := s.LinkConfig(0); c.Queue != 512<<10 || DefaultQueueBytes != 512<<10 {
		t.Errorf("queue %d, default %d; want 524288", c.Queue, DefaultQueueBytes)
	}
	s = mustNew(t, line(t, 0, 1_000_000_000, us), Options{QueueBytes: 3000})
	if c, _ := s.LinkConfig(0); c.Queue != 3000 {
		t.Errorf("queue %d, want 3000", c.Queue)
	}
}

// TestNegativeCutThroughIsStoreAndForward: an element that declares a
// negative cut-through is store-and-forward: it gets frames whole and a
// corrupted one is dropped on arrival.
func TestNegativeCutThroughIsStoreAndForward(t *testing.T) {
	s := mustNew(t, line(t, 0, 1_000_000_000, us), Options{})
	a, b := &rec{}, &ctRec{rec{ct: -1}}
	must(t, s.Place(0, a))
	must(t, s.Place(1, b))
	s.At(0, func() {
		must(t, s.SetFault(0, Fault{Corrupt: 1}))
		a.env.Send(1, frameOf(60, 1))
		must(t, s.SetFault(0, Fault{}))
		a.env.Send(1, frameOf(60, 2))
	})
	s.RunAll()
	// The second frame: 2 x 576 ns + 96 ns of gap + 1 us, whole.
	if len(b.got) != 1 || b.got[0].frame[0] != 2 || b.got[0].t != 2*576*ns+96*ns+us {
		t.Fatalf("got %+v, want frame 2 at 2.248us", b.got)
	}
	if st, _ := s.PortStats(1, 1); st.DropCount(DropBadFCS) != 1 {
		t.Errorf("receiver: %+v, want 1 bad_fcs", st)
	}
}

// TestDownNodeSendsOnUncabledPort: whatever the port, a failed node's
// sends are node_down.
func TestDownNodeSendsOnUncabledPort(t *testing.T) {
	b := topo.NewBuilder("x")
	h1 := b.AddNode("h1", topo.Host)
	b.Connect(h1, b.AddNode("h2", topo.Host))
	b.Node(h1).Ports = 2
	g, err := b.Graph()
	must(t, err)
	s := mustNew(t, g, Options{})
	a := &rec{}
	must(t, s.Place(h1, a))
	s.At(0, func() {
		must(t, s.SetNode(h1, false))
		a.env.Send(2, frameOf(60, 1))
	})
	s.RunAll()
	if st, _ := s.PortStats(h1, 2); st.DropCount(DropNodeDown) != 1 || st.TotalDrops() != 1 {
		t.Errorf("h1 port 2: %v, want 1 node_down", st.DropMap())
	}
}

// TestLinkDownCountsPropagatingFrames: frames that have left the queue but
// not arrived are lost with the link too, after the queue count has been
// drained past them.
func TestLinkDownCountsPropagatingFrames(t *testing.T) {
	s := mustNew(t, line(t, 0, 1_000_000_000, 100*us), Options{})
	a, b := &rec{}, &rec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, b))
	s.At(0, func() { a.env.Send(1, frameOf(1000, 1)) })     // on the wire until 8.096 us
	s.At(10*us, func() { a.env.Send(1, frameOf(1000, 2)) }) // drains the first from the queue
	s.At(50*us, func() { must(t, s.SetLink(0, false)) })    // both propagating
	s.RunAll()
	st, _ := s.PortStats(0, 1)
	if len(b.got) != 0 || st.TxFrames != 2 || st.DropCount(DropLinkDown) != 2 {
		t.Errorf("delivered %d, stats %+v: want 0 delivered, 2 sent, 2 link_down", len(b.got), st)
	}
}

// TestCutThroughLatencyIntoFasterLink: a cut-through node's output never
// ends before the input's tail has arrived plus the node's latency.
func TestCutThroughLatencyIntoFasterLink(t *testing.T) {
	s := mustNew(t, line(t, 1, 100_000_000, 0), Options{})
	must(t, s.SetLinkParams(1, 1_000_000_000, 0))
	must(t, s.SetTiming(1, Timing{Latency: us, CutThrough: 6}))
	h1, h2 := &rec{}, &rec{}
	sw := &rec{fwd: map[element.Port]element.Port{1: 2}}
	must(t, s.Place(0, h1))
	must(t, s.Place(1, sw))
	must(t, s.Place(2, h2))
	s.At(0, func() { h1.env.Send(1, frameOf(1514, 7)) })
	s.RunAll()
	// In at 80 ns/byte: 14 bytes (preamble + 6) = 1.12 us, +1 us latency.
	// Tail in at 1526 x 80 ns = 122.08 us; +1 us = 123.08 us, when the
	// 12.208 us output ends.
	if len(sw.got) != 1 || sw.got[0].t != 2120*ns {
		t.Fatalf("switch got %+v, want one frame at 2.12us", sw.got)
	}
	if len(h2.got) != 1 || h2.got[0].t != 123080*ns {
		t.Fatalf("host got %+v, want one frame at 123.08us", h2.got)
	}
}

// TestMaxQueueExact: MaxQueue is the exact largest occupancy in bytes.
func TestMaxQueueExact(t *testing.T) {
	s, a, _ := twoHosts(t)
	s.At(0, func() { a.env.Send(1, frameOf(60, 1)) })  // serialized by 576 ns
	s.At(us, func() { a.env.Send(1, frameOf(61, 2)) }) // alone in the queue
	s.RunAll()
	if st, _ := s.PortStats(0, 1); st.MaxQueue != 61 {
		t.Errorf("max queue %d, want 61", st.MaxQueue)
	}
}

// TestFaultDrawsPerDirection: each link direction draws from its own
// source: the same traffic both ways loses different frames.
func TestFaultDrawsPerDirection(t *testing.T) {
	s, a, b := twoHosts(t)
	must(t, s.SetFault(0, Fault{Loss: 0.5}))
	s.At(0, func() {
		for i := range 64 {
			a.env.Send(1, frameOf(60, byte(i)))
			b.env.Send(1, frameOf(60, byte(i)))
		}
	})
	s.RunAll()
	tags := func(r *rec) (m uint64) {
		for _, g := range r.got {
			m |= 1 << g.frame[0]
		}
		return m
	}
	if len(a.got) == 0 || len(b.got) == 0 || tags(a) == tags(b) {
		t.Errorf("both directions lost the same frames: %x", tags(a))
	}
}

// TestLostFrameNotCorrupted: a frame the loss draw takes is not also
// corrupted: the sender's capture has the bytes it sent.
func TestLostFrameNotCorrupted(t *testing.T) {
	s, a, b := twoHosts(t)
	cp := &capRec{}
	must(t, s.Capture(0, 1, cp))
	must(t, s.SetFault(0, Fault{Loss: 1, Corrupt: 1}))
	s.At(0, func() { a.env.Send(1, frameOf(100, 0)) })
	s.RunAll()
	if len(b.got) != 0 || len(cp.pkts) != 1 {
		t.Fatalf("delivered %d, captured %d; want 0, 1", len(b.got), len(cp.pkts))
	}
	for _, x := range cp.pkts[0].frame {
		if x != 0 {
			t.Fatalf("lost frame was corrupted: % x", cp.pkts[0].frame)
		}
	}
}

// TestCorruptFlipsAnyBit: the flipped bit is any bit of the frame, not
// only the lowest of a byte.
func TestCorruptFlipsAnyBit(t *testing.T) {
	s, h1, h2 := corruptingLine(t, 5, 1)
	s.At(0, func() {
		for range 64 {
			h1.env.Send(1, frameOf(100, 0))
		}
	})
	s.RunAll()
	if len(h2.got) != 64 {
		t.Fatalf("got %d of 64", len(h2.got))
	}
	var bits [8]int
	for _, g := range h2.got {
		n := 0
		for _, x := range g.frame {
			for i := range 8 {
				if x&(1<<i) != 0 {
					n++
					bits[i]++
				}
			}
		}
		if n != 1 {
			t.Fatalf("%d bits flipped, want 1", n)
		}
	}
	if bits[0] == 64 {
		t.Errorf("only bit 0 of a byte is ever flipped")
	}
}

// TestSetupRejectsNaN: NaN is no probability, and a trace mode past
// TraceOff is no mode: both are refused, not taken as "off".
func TestSetupRejectsNaN(t *testing.T) {
	g := line(t, 0, 1_000_000_000, us)
	s := mustNew(t, g, Options{})
	for _, f := range []Fault{{Loss: math.NaN()}, {Corrupt: math.NaN()}} {
		if err := s.SetFault(0, f); !errors.Is(err, ErrBadOption) {
			t.Errorf("SetFault(%+v): %v", f, err)
		}
	}
	if _, err := New(g, Options{Trace: TraceOff + 1}); !errors.Is(err, ErrBadOption) {
		t.Errorf("trace mode %d: %v", TraceOff+1, err)
	}
}

// TestDropNames: the names reports use, as docs/sim.md's table gives
// them; a reason out of range counts nothing and prints its number.
func TestDropNames(t *testing.T) {
	want := map[Drop]string{DropQueueFull: "queue_full", DropLinkDown: "link_down", DropNodeDown: "node_down",
		DropBadFCS: "bad_fcs", DropFaultLoss: "fault_loss", DropNoLink: "no_link", DropNoElement: "no_element"}
	for d, w := range want {
		if d.String() != w {
			t.Errorf("Drop(%d) = %q, want %q", d, d.String(), w)
		}
	}
	if s := Drop(99).String(); s != "drop(99)" {
		t.Errorf("Drop(99) = %q", s)
	}
	var st PortStats
	st.Drops[DropNoElement] = 3
	if st.DropCount(numDrops) != 0 || st.DropCount(255) != 0 || st.DropCount(DropNoElement) != 3 {
		t.Error("DropCount out of range")
	}
	if m := st.DropMap(); len(m) != 1 || m["no_element"] != 3 {
		t.Errorf("DropMap %v", m)
	}
}

// TestTraceOffHashesNothing: with TraceOff, TraceHash is 0 whatever ran:
// element timers and link changes too, not only frames.
func TestTraceOffHashesNothing(t *testing.T) {
	s := mustNew(t, line(t, 0, 1_000_000_000, us), Options{Trace: TraceOff})
	a, b := &rec{}, &rec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, b))
	s.At(0, func() {
		a.env.After(us, func() { a.env.Send(1, frameOf(60, 1)) })
		must(t, s.SetLink(0, false))
		must(t, s.SetLink(0, true))
	})
	s.RunAll()
	if len(b.got) != 1 || len(a.links) != 2 || s.TraceHash() != 0 {
		t.Errorf("got %d frames, %d link changes, hash %x; want 1, 2, 0", len(b.got), len(a.links), s.TraceHash())
	}
}

// TestCorruptionOnTheWire: a corruption fault damages a frame on the link,
// so the sending port's capture has the frame as sent and the receiving
// port's capture the frame as received, one bit apart. (The bit used to be
// flipped at send time, so both captures showed the damage.)
func TestCorruptionOnTheWire(t *testing.T) {
	s, h1, h2 := corruptingLine(t, 5, 1)
	sent, recv := &capRec{}, &capRec{}
	must(t, s.Capture(0, 1, sent))
	must(t, s.Capture(1, 1, recv))
	s.At(0, func() { h1.env.Send(1, frameOf(100, 0)) })
	s.RunAll()
	if len(sent.pkts) != 1 || len(recv.pkts) != 1 || len(h2.got) != 1 {
		t.Fatalf("captured %d sent and %d received, element got %d; want 1 each", len(sent.pkts), len(recv.pkts), len(h2.got))
	}
	if !bytes.Equal(sent.pkts[0].frame, frameOf(100, 0)) {
		t.Errorf("the sender's capture shows the damage:\n%x", sent.pkts[0].frame)
	}
	if !bytes.Equal(recv.pkts[0].frame, h2.got[0].frame) {
		t.Errorf("the receiver's capture differs from what its element got")
	}
	diff := 0
	for i, b := range recv.pkts[0].frame {
		diff += bits.OnesCount8(b ^ sent.pkts[0].frame[i])
	}
	if diff != 1 {
		t.Errorf("%d bits differ between the two captures, want 1", diff)
	}
}

// corruptingLine is line's two nodes, a recorder sending from node 0 and a
// cut-through recorder at node 1 (it takes frames before their FCS, so it
// sees corrupted ones), over a 1 Gb/s link that corrupts with probability p.
func corruptingLine(t *testing.T, seed uint64, p float64) (*Sim, *rec, *ctRec) {
	t.Helper()
	s := mustNew(t, line(t, 0, 1_000_000_000, 0), Options{Seed: seed})
	h1, h2 := &rec{}, &ctRec{rec{ct: 6}}
	must(t, s.Place(0, h1))
	must(t, s.Place(1, h2))
	must(t, s.SetFault(0, Fault{Corrupt: p}))
	return s, h1, h2
}
