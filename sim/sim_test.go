package sim

import (
	"errors"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

const (
	us = element.Microsecond
	ns = element.Nanosecond
)

func TestDeliveryTimes(t *testing.T) {
	g := line(t, 0, 1_000_000_000, us)
	s := mustNew(t, g, Options{})
	a, b := &rec{}, &rec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, b))
	s.At(0, func() {
		a.env.Send(1, frameOf(1514, 1))
		a.env.Send(1, frameOf(1514, 2))
		a.env.Send(1, frameOf(42, 3)) // padded to 60, +FCS
	})
	s.Run(element.Second)
	// 1514 bytes + 4 FCS + 8 preamble = 1526 bytes = 12.208 us at 1 Gb/s;
	// IFG 12 bytes = 96 ns; the 42-byte frame occupies 8+60+4 = 72 bytes.
	want := []element.Time{
		12208*ns + us,
		12208*ns + 96*ns + 12208*ns + us,
		2*(12208*ns+96*ns) + 576*ns + us,
	}
	if len(b.got) != len(want) {
		t.Fatalf("got %d frames, want %d", len(b.got), len(want))
	}
	for i, w := range want {
		if b.got[i].t != w || b.got[i].p != 1 {
			t.Errorf("frame %d at %v port %d, want %v port 1", i, b.got[i].t, b.got[i].p, w)
		}
	}
	if len(b.got[2].frame) != 42 || b.got[2].frame[0] != 3 {
		t.Errorf("padding leaked into the frame: len %d", len(b.got[2].frame))
	}
	st, _ := s.PortStats(0, 1)
	if st.TxFrames != 3 || st.TxBytes != 1514*2+42 {
		t.Errorf("tx stats %+v", st)
	}
	st, _ = s.PortStats(1, 1)
	if st.RxFrames != 3 || st.RxBytes != 1514*2+42 || st.TotalDrops() != 0 {
		t.Errorf("rx stats %+v", st)
	}
	if s.Now() != element.Second {
		t.Errorf("clock at %v after Run, want 1s", s.Now())
	}
}

func TestRates(t *testing.T) {
	for _, c := range []struct {
		rate int64
		want element.Time // 1526 bytes on the wire
	}{
		{100_000_000_000, 122080 * element.Picosecond},
		{10_000_000_000, 1220800 * element.Picosecond},
		{25_000_000_000, 488320 * element.Picosecond},
	} {
		g := line(t, 0, c.rate, 0)
		s := mustNew(t, g, Options{})
		a, b := &rec{}, &rec{}
		must(t, s.Place(0, a))
		must(t, s.Place(1, b))
		s.At(0, func() { a.env.Send(1, frameOf(1514, 1)) })
		s.RunAll()
		if len(b.got) != 1 || b.got[0].t != c.want {
			t.Errorf("rate %d: got %+v, want arrival at %v", c.rate, b.got, c.want)
		}
	}
}

func TestQueueDropTail(t *testing.T) {
	g := line(t, 0, 1_000_000_000, us)
	s := mustNew(t, g, Options{QueueBytes: 3000})
	a, b := &rec{}, &rec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, b))
	s.At(0, func() {
		for i := range 5 {
			a.env.Send(1, frameOf(1000, byte(i)))
		}
	})
	// Once the first frame has been serialized, its bytes leave the queue
	// and the next send fits again. 1000+4+8 = 1012 bytes = 8.096 us.
	s.At(8096*ns, func() { a.env.Send(1, frameOf(1000, 9)) })
	s.RunAll()
	st, _ := s.PortStats(0, 1)
	if st.DropCount(DropQueueFull) != 2 || st.TxFrames != 4 || st.MaxQueue != 3000 {
		t.Errorf("stats %+v, want 2 queue_full drops, 4 sent, max queue 3000", st)
	}
	var tags []byte
	for _, g := range b.got {
		tags = append(tags, g.frame[0])
	}
	if string(tags) != "\x00\x01\x02\x09" {
		t.Errorf("delivered %v, want frames 0 1 2 9", tags)
	}
}

func TestTimers(t *testing.T) {
	g := line(t, 0, 1_000_000_000, us)
	s := mustNew(t, g, Options{})
	a := &rec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, &rec{}))
	var fired []element.Time
	s.At(5*us, func() {
		a.env.After(3*us, func() { fired = append(fired, a.env.Now()) })
		c := a.env.After(1*us, func() { t.Error("cancelled timer fired") })
		c()
		c() // harmless twice
		a.env.After(-1, func() { fired = append(fired, a.env.Now()) })
	})
	cancelAt := s.At(6*us, func() { t.Error("cancelled action ran") })
	cancelAt()
	s.Run(7 * us)
	if len(fired) != 1 || fired[0] != 5*us {
		t.Fatalf("fired %v, want [5us]", fired)
	}
	s.Run(100 * us)
	if len(fired) != 2 || fired[1] != 8*us {
		t.Fatalf("fired %v, want [5us 8us]", fired)
	}
}

func TestSameTimeOrderIsFIFO(t *testing.T) {
	g := line(t, 0, 1_000_000_000, us)
	s := mustNew(t, g, Options{})
	a := &rec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, &rec{}))
	var order []int
	s.At(0, func() {
		for i := range 50 {
			a.env.After(us, func() { order = append(order, i) })
		}
	})
	s.RunAll()
	for i, v := range order {
		if v != i {
			t.Fatalf("same-time timers ran in order %v", order)
		}
	}
	if len(order) != 50 {
		t.Fatalf("%d timers ran", len(order))
	}
}

func TestBadSends(t *testing.T) {
	b := topo.NewBuilder("x")
	h1 := b.AddNode("h1", topo.Host)
	h2 := b.AddNode("h2", topo.Host)
	b.Connect(h1, h2)
	b.Node(h1).Ports = 2 // port 2 exists but is not cabled
	g, err := b.Graph()
	must(t, err)
	s := mustNew(t, g, Options{})
	a := &rec{}
	must(t, s.Place(h1, a))
	s.At(0, func() {
		a.env.Send(0, []byte{1})
		a.env.Send(9, []byte{1})
		a.env.Send(2, []byte{1})
		a.env.Send(1, []byte{1}) // h2 has no element
	})
	s.RunAll()
	if s.BadPortSends(h1) != 2 {
		t.Errorf("bad port sends %d, want 2", s.BadPortSends(h1))
	}
	st, _ := s.PortStats(h1, 2)
	if st.DropCount(DropNoLink) != 1 {
		t.Errorf("uncabled port: %+v", st)
	}
	st, _ = s.PortStats(h2, 1)
	if st.DropCount(DropNoElement) != 1 {
		t.Errorf("no element: %+v", st)
	}
	if _, ok := s.PortStats(h1, 3); ok {
		t.Error("PortStats of a missing port")
	}
}

func TestSetupErrors(t *testing.T) {
	g := line(t, 1, 1_000_000_000, us)
	if _, err := New(g, Options{QueueBytes: -1}); !errors.Is(err, ErrBadOption) {
		t.Errorf("negative queue: %v", err)
	}
	if _, err := New(g, Options{Framing: &Framing{IFG: -1}}); !errors.Is(err, ErrBadOption) {
		t.Errorf("negative IFG: %v", err)
	}
	s := mustNew(t, g, Options{})
	if err := s.Place(99, &rec{}); !errors.Is(err, ErrBadNode) {
		t.Errorf("bad node: %v", err)
	}
	must(t, s.Place(0, &rec{}))
	if err := s.Place(0, &rec{}); !errors.Is(err, ErrPlaced) {
		t.Errorf("placed twice: %v", err)
	}
	if err := s.Place(1, nil); !errors.Is(err, ErrBadOption) {
		t.Errorf("nil element: %v", err)
	}
	if err := s.PlaceHost(1, &rec{}, &rec{}); !errors.Is(err, ErrNotAHost) {
		t.Errorf("host on a switch: %v", err)
	}
	if err := s.SetTiming(1, Timing{Latency: -1}); !errors.Is(err, ErrBadOption) {
		t.Errorf("negative latency: %v", err)
	}
	if err := s.SetLink(5, false); !errors.Is(err, ErrNoSuchLink) {
		t.Errorf("bad link: %v", err)
	}
	if err := s.SetFault(0, Fault{Loss: 2}); !errors.Is(err, ErrBadOption) {
		t.Errorf("loss 2: %v", err)
	}
	if err := s.SetLinkParams(0, 0, 0); !errors.Is(err, ErrBadOption) {
		t.Errorf("rate 0: %v", err)
	}
	if err := s.SetLinkParams(7, 1, 0); !errors.Is(err, ErrNoSuchLink) {
		t.Errorf("bad link: %v", err)
	}
	if err := s.SetQueue(0, 0); !errors.Is(err, ErrBadOption) {
		t.Errorf("queue 0: %v", err)
	}
	if err := s.Capture(0, 7, nil); !errors.Is(err, topo.ErrBadPort) {
		t.Errorf("capture bad port: %v", err)
	}
	s.Run(0)
	if err := s.Place(1, &rec{}); !errors.Is(err, ErrStarted) {
		t.Errorf("place after start: %v", err)
	}
}

func TestNestedRunRefused(t *testing.T) {
	g := line(t, 0, 1_000_000_000, us)
	s := mustNew(t, g, Options{})
	a := &rec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, &rec{}))
	ran := 0
	s.At(us, func() { s.Run(element.Second) })
	s.At(2*us, func() { ran++ })
	s.RunAll()
	if ran != 1 || !errors.Is(s.Err(), ErrStarted) || s.Now() != 2*us {
		t.Fatalf("nested Run: ran %d, err %v, now %v", ran, s.Err(), s.Now())
	}
}
