package host

import (
	"container/heap"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/edgefabric/edgefabric/element"
)

// fakeNet is a tiny engine for the host's tests: a manual clock, a timer
// heap, and point-to-point wires with a fixed delay and rate (FIFO
// serialization, unlimited queue, no framing overhead: a frame of n bytes
// occupies the wire n*8/rate). It lets the host be tested exactly, without
// package sim.
type fakeNet struct {
	now    element.Time
	seq    uint64
	events evHeap
	nodes  []*fakeEnv
	steps  int
}

type ev struct {
	at       element.Time
	seq      uint64
	f        func()
	canceled bool
}

type evHeap []*ev

func (h evHeap) Len() int { return len(h) }
func (h evHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h evHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *evHeap) Push(x any)   { *h = append(*h, x.(*ev)) }
func (h *evHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func (n *fakeNet) at(t element.Time, f func()) *ev {
	n.seq++
	e := &ev{at: t, seq: n.seq, f: f}
	heap.Push(&n.events, e)
	return e
}

// run processes events up to and including time until.
func (n *fakeNet) run(until element.Time) {
	for n.events.Len() > 0 {
		e := n.events[0]
		if e.at > until {
			break
		}
		heap.Pop(&n.events)
		if e.canceled {
			continue
		}
		n.now = e.at
		n.steps++
		e.f()
	}
	if n.now < until {
		n.now = until
	}
}

// wireEnd is one direction of a wire.
type wireEnd struct {
	to    *fakeEnv
	port  element.Port
	rate  int64
	delay element.Time
	busy  element.Time
	up    bool
	// drop, when set, decides per frame whether the wire loses it.
	drop func(f []byte) bool
	// sent records (time, frame copy) of every frame put on the wire.
	log []sent
}

type sent struct {
	t element.Time
	f []byte
}

func (w *wireEnd) ser(n int) element.Time {
	if w.rate == 0 {
		return 0
	}
	return element.Time(int64(n) * 8 * int64(element.Second) / w.rate)
}

type fakeEnv struct {
	net   *fakeNet
	el    element.Element
	rng   *rand.Rand
	ports map[element.Port]*wireEnd
}

func (e *fakeEnv) Now() element.Time { return e.net.now }
func (e *fakeEnv) Rand() *rand.Rand  { return e.rng }
func (e *fakeEnv) Log() *slog.Logger { return slog.New(slog.DiscardHandler) }
func (e *fakeEnv) After(d element.Time, f func()) func() {
	ev := e.net.at(e.net.now+max(d, 0), f)
	return func() { ev.canceled = true }
}
func (e *fakeEnv) Send(p element.Port, frame []byte) {
	w := e.ports[p]
	if w == nil || !w.up {
		return
	}
	n := e.net
	w.log = append(w.log, sent{n.now, append([]byte(nil), frame...)})
	if w.drop != nil && w.drop(frame) {
		return
	}
	start := max(n.now, w.busy)
	end := start + w.ser(len(frame))
	w.busy = end
	to, tp := w.to, w.port
	n.at(end+w.delay, func() { to.el.Receive(tp, frame) })
}

func (n *fakeNet) add(el element.Element, seed uint64) *fakeEnv {
	e := &fakeEnv{net: n, el: el, rng: rand.New(rand.NewPCG(seed, uint64(len(n.nodes)))), ports: map[element.Port]*wireEnd{}}
	n.nodes = append(n.nodes, e)
	return e
}

// connect joins a's port pa and b's port pb; it returns the a->b and b->a
// directions.
func (n *fakeNet) connect(a *fakeEnv, pa element.Port, b *fakeEnv, pb element.Port, rate int64, delay element.Time) (ab, ba *wireEnd) {
	ab = &wireEnd{to: b, port: pb, rate: rate, delay: delay, up: true}
	ba = &wireEnd{to: a, port: pa, rate: rate, delay: delay, up: true}
	a.ports[pa], b.ports[pb] = ab, ba
	return ab, ba
}

// attach calls Attach on every node, at time 0.
func (n *fakeNet) attach() {
	for _, e := range n.nodes {
		var ps []element.PortInfo
		for p := element.Port(1); int(p) <= len(e.ports); p++ {
			ps = append(ps, element.PortInfo{Port: p, Up: true})
		}
		e.el.Attach(e, ps)
	}
}

// pair builds two hosts joined by one wire.
func pair(t testing.TB, rate int64, delay element.Time, mod func(*Config)) (n *fakeNet, a, b *Host, ab, ba *wireEnd) {
	t.Helper()
	return pairSeeded(t, 1, 2, rate, delay, mod)
}

// pairSeeded is pair with chosen random seeds for the two hosts.
func pairSeeded(t testing.TB, sa, sb uint64, rate int64, delay element.Time, mod func(*Config)) (n *fakeNet, a, b *Host, ab, ba *wireEnd) {
	t.Helper()
	n = &fakeNet{}
	ca := Config{Name: "a", MAC: [6]byte{2, 0, 0, 0, 0, 1}, IP: netip.MustParsePrefix("10.0.0.1/24")}
	cb := Config{Name: "b", MAC: [6]byte{2, 0, 0, 0, 0, 2}, IP: netip.MustParsePrefix("10.0.0.2/24")}
	if mod != nil {
		mod(&ca)
		mod(&cb)
	}
	a, b = New(ca), New(cb)
	ea, eb := n.add(a, sa), n.add(b, sb)
	ab, ba = n.connect(ea, 1, eb, 1, rate, delay)
	n.attach()
	return n, a, b, ab, ba
}

// hub is a learning switch for multi-host tests.
type hub struct {
	env   element.Env
	n     int
	table map[[6]byte]element.Port
}

func (h *hub) Attach(env element.Env, ports []element.PortInfo) {
	h.env, h.n, h.table = env, len(ports), map[[6]byte]element.Port{}
}
func (h *hub) LinkChange(element.Port, bool) {}
func (h *hub) Receive(p element.Port, f []byte) {
	var src, dst [6]byte
	copy(dst[:], f[0:6])
	copy(src[:], f[6:12])
	h.table[src] = p
	if out, ok := h.table[dst]; ok && dst[0]&1 == 0 {
		if out != p {
			h.env.Send(out, append([]byte(nil), f...))
		}
		return
	}
	for q := element.Port(1); int(q) <= h.n; q++ {
		if q != p {
			h.env.Send(q, append([]byte(nil), f...))
		}
	}
}

// star builds k hosts around a learning switch; host i has 10.0.0.(i+1).
func star(t testing.TB, k int, rate int64, delay element.Time) (*fakeNet, []*Host) {
	t.Helper()
	n := &fakeNet{}
	sw := n.add(&hub{}, 99)
	var hs []*Host
	for i := range k {
		h := New(Config{Name: "h" + string(rune('1'+i)), MAC: [6]byte{2, 0, 0, 0, 0, byte(i + 1)},
			IP: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(i + 1)}), 24)})
		e := n.add(h, uint64(i+1))
		n.connect(e, 1, sw, element.Port(i+1), rate, delay)
		hs = append(hs, h)
	}
	n.attach()
	return n, hs
}
