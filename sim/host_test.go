package sim

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

type capRec struct{ pkts []got }

func (c *capRec) WritePacket(t element.Time, f []byte) error {
	c.pkts = append(c.pkts, got{t: t, frame: append([]byte(nil), f...)})
	return nil
}

// An agent between the stack and the NIC: port 2 (Local) joins the stack
// through a zero-delay, unlimited-rate link.
func TestPlaceHostWithAgent(t *testing.T) {
	g := line(t, 0, 1_000_000_000, us)
	s := mustNew(t, g, Options{})
	agent := &rec{fwd: map[element.Port]element.Port{1: 2, 2: 1}}
	stack, peer := &rec{}, &rec{}
	must(t, s.PlaceHost(0, agent, stack))
	must(t, s.Place(1, peer))
	cp := &capRec{}
	must(t, s.Capture(0, 1, cp))
	s.At(10*us, func() { stack.env.Send(1, frameOf(100, 1)) })
	s.At(100*us, func() { peer.env.Send(1, frameOf(200, 2)) })
	s.RunAll()
	if len(agent.ports) != 2 || !agent.ports[1].Local || agent.ports[0].Local || agent.ports[1].Rate != 0 {
		t.Fatalf("agent ports %+v", agent.ports)
	}
	mac, _, _ := g.HostAddr(0)
	if len(stack.ports) != 1 || stack.ports[0].MAC != mac {
		t.Fatalf("stack ports %+v, want its plan MAC", stack.ports)
	}
	// The stack's port reports the host NIC's rate (its link to the agent
	// has none), so that it can pace itself (docs/host.md).
	if stack.ports[0].Rate != 1_000_000_000 {
		t.Errorf("stack port rate %d, want the NIC's 1 Gb/s", stack.ports[0].Rate)
	}
	if len(agent.got) != 2 || agent.got[0].t != 10*us || agent.got[0].p != 2 {
		t.Fatalf("agent got %+v", agent.got)
	}
	// 100 bytes + 12 on the wire at 1 Gb/s: 896 ns, plus 1 us.
	if len(peer.got) != 1 || peer.got[0].t != 10*us+896*ns+us {
		t.Fatalf("peer got %+v", peer.got)
	}
	// 200 + 12 = 212 bytes: 1.696 us + 1 us; then straight up to the stack.
	if want := 100*us + 1696*ns + us; len(stack.got) != 1 || stack.got[0].t != want {
		t.Fatalf("stack got %+v, want at %v", stack.got, want)
	}
	if s.Stack(0) != stack || s.Element(0) != agent || s.Stack(1) != nil {
		t.Error("Stack/Element accessors")
	}
	if st, ok := s.PortStats(0, 2); !ok || st.TxFrames != 1 || st.RxFrames != 1 {
		t.Errorf("agent Local port: %+v", st)
	}
	// The capture saw the frame leave at 10 us and the peer's arrive.
	if len(cp.pkts) != 2 || cp.pkts[0].t != 10*us || cp.pkts[1].t != 100*us+1696*ns+us || cp.pkts[1].frame[0] != 2 {
		t.Errorf("capture %+v", cp.pkts)
	}
	// A node failure takes the host's stack down with it.
	must(t, s.SetNode(0, false))
	s.At(s.Now(), func() { stack.env.Send(1, frameOf(60, 3)) })
	s.RunAll()
	if s.nodes[s.nodes[0].stack].ports[0].stats.DropCount(DropNodeDown) != 1 {
		t.Errorf("a failed host's stack could still send")
	}
}

type failWriter struct{}

func (failWriter) WritePacket(element.Time, []byte) error { return errTest }

var errTest = topo.ErrBadValue

func TestCaptureError(t *testing.T) {
	g := line(t, 0, 1_000_000_000, us)
	s := mustNew(t, g, Options{})
	a := &rec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, &rec{}))
	must(t, s.Capture(0, 1, failWriter{}))
	s.At(0, func() { a.env.Send(1, frameOf(60, 1)) })
	s.RunAll()
	if s.Err() == nil {
		t.Fatal("capture write error not reported")
	}
}

// Buffers from the Env's Alloc are recycled after delivery.
func TestAllocRecycles(t *testing.T) {
	g := line(t, 0, 1_000_000_000, us)
	s := mustNew(t, g, Options{})
	a, b := &rec{}, &rec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, b))
	s.At(0, func() {
		al := a.env.(Allocator)
		f := al.Alloc(1514)
		if len(f) != 1514 || cap(f) != poolCap {
			t.Fatalf("Alloc gave len %d cap %d", len(f), cap(f))
		}
		a.env.Send(1, f)
		if big := al.Alloc(9000); len(big) != 9000 {
			t.Fatal("jumbo Alloc")
		}
	})
	s.RunAll()
	if len(s.pool) != 1 {
		t.Fatalf("pool holds %d buffers after delivery, want 1", len(s.pool))
	}
	// Buffers the element made itself are never recycled.
	s.At(s.Now(), func() { a.env.Send(1, make([]byte, 1514)) })
	s.RunAll()
	if len(s.pool) != 1 {
		t.Fatalf("pool took a foreign buffer")
	}
}

func TestPcapCapture(t *testing.T) {
	g := line(t, 0, 1_000_000_000, us)
	s := mustNew(t, g, Options{})
	a, b := &rec{}, &rec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, b))
	var buf bytes.Buffer
	w, err := wire.NewPcapWriter(&buf, wire.LinkTypeEthernet, time.Time{})
	must(t, err)
	must(t, s.Capture(1, 1, Pcap{w}))
	s.At(3*us, func() { a.env.Send(1, frameOf(100, 0xab)) })
	s.RunAll()
	must(t, s.Err())
	// 24-byte file header, 16-byte record header, 100 bytes; the record is
	// stamped with the delivery time, 3 us + 0.896 us + 1 us = 4896 ns.
	raw := buf.Bytes()
	if len(raw) != 24+16+100 {
		t.Fatalf("pcap is %d bytes", len(raw))
	}
	if sec, nsec := binary.LittleEndian.Uint32(raw[24:]), binary.LittleEndian.Uint32(raw[28:]); sec != 0 || nsec != 4896 {
		t.Errorf("record time %d.%09d, want 0.000004896", sec, nsec)
	}
	if raw[40] != 0xab {
		t.Errorf("record data %x", raw[40:44])
	}
}

// TestCaptureOnlyStartedFrames: a capture holds a sent frame once its
// transmission has started. Five 1000-byte frames queued at 1 Mb/s take
// 8.192 ms each; the link fails at 9 ms, during the second: the last three
// never left and are neither in the capture nor counted as sent (they once
// were, stamped after the failure). The capture stays in time order with
// the frames the port receives between.
func TestCaptureOnlyStartedFrames(t *testing.T) {
	const ms = 1000 * us
	s, a, b, cp := slowPairCaptured(t)
	s.At(0, func() {
		for i := range 5 {
			a.env.Send(1, frameOf(1000, byte(i)))
		}
	})
	s.At(5*ms, func() { b.env.Send(1, frameOf(60, 9)) })
	s.At(9*ms, func() { must(t, s.SetLink(0, false)) })
	s.RunAll()
	var stamps []element.Time
	for _, p := range cp.pkts {
		stamps = append(stamps, p.t)
	}
	// Sent at 0 and 8.192 ms; received b's 60-byte frame (72 bytes on the
	// wire: 576 us) at 5.576 ms, in between.
	want := []element.Time{0, 5*ms + 576*us, 8192 * us}
	if len(stamps) != len(want) || stamps[0] != want[0] || stamps[1] != want[1] || stamps[2] != want[2] {
		t.Fatalf("capture stamps %v, want %v", stamps, want)
	}
	st, _ := s.PortStats(0, 1)
	if st.TxFrames != 2 || st.DropCount(DropLinkDown) != 4 {
		t.Errorf("port stats %+v: want 2 sent, 4 lost with the link", st)
	}
}

// TestCaptureFlushedAtRunEnd: a frame whose transmission started before
// Run returns is in the capture then, though no event of its link came
// since; a writer swapped later keeps what started under it.
func TestCaptureFlushedAtRunEnd(t *testing.T) {
	const ms = 1000 * us
	s, a, _, c1 := slowPairCaptured(t)
	c2 := &capRec{}
	s.At(0, func() {
		a.env.Send(1, frameOf(1000, 1))
		a.env.Send(1, frameOf(1000, 2)) // starts at 8.192 ms
	})
	s.Run(10 * ms)
	if len(c1.pkts) != 2 || c1.pkts[1].t != 8192*us {
		t.Fatalf("after Run(10ms): %d records", len(c1.pkts))
	}
	must(t, s.Capture(0, 1, c2))
	s.RunAll()
	if len(c1.pkts) != 2 || len(c2.pkts) != 0 {
		t.Fatalf("records: first writer %d, second %d; want 2, 0", len(c1.pkts), len(c2.pkts))
	}
}

// slowPairCaptured is two nodes on a 1 Mb/s link without delay, the first
// one's port captured.
func slowPairCaptured(t *testing.T) (s *Sim, a, b *rec, cp *capRec) {
	t.Helper()
	s = mustNew(t, line(t, 0, 1_000_000, 0), Options{})
	a, b, cp = &rec{}, &rec{}, &capRec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, b))
	must(t, s.Capture(0, 1, cp))
	return s, a, b, cp
}

// TestStackDropsReported: on a host with an agent, what the stack sends
// while the host is down (and sends on a port it does not have) is
// counted on the stack's own port, which no accessor reached: the drops
// were silent. StackPortStats and BadPortSends now report them, and every
// frame is accounted for.
func TestStackDropsReported(t *testing.T) {
	g := line(t, 0, 1_000_000_000, us)
	s := mustNew(t, g, Options{})
	agent := &rec{fwd: map[element.Port]element.Port{1: 2, 2: 1}}
	stack, peer := &rec{}, &rec{}
	must(t, s.PlaceHost(0, agent, stack))
	must(t, s.Place(1, peer))
	s.At(10*us, func() { must(t, s.SetNode(0, false)) })
	s.At(20*us, func() {
		stack.env.Send(1, frameOf(100, 1)) // the host is down
		stack.env.Send(1, frameOf(100, 2))
		stack.env.Send(2, frameOf(100, 3)) // no such port
	})
	s.RunAll()
	st, ok := s.StackPortStats(0)
	if !ok || st.DropCount(DropNodeDown) != 2 {
		t.Fatalf("stack port: %+v, %v; want 2 node_down", st, ok)
	}
	if b := s.BadPortSends(0); b != 1 {
		t.Errorf("BadPortSends(h1) = %d, want the stack's 1", b)
	}
	if _, ok := s.StackPortStats(1); ok {
		t.Error("StackPortStats of a host without an agent")
	}
}
