package stp

import (
	"container/heap"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// fakeNet is a tiny deterministic engine for the package's own tests, so
// that they do not depend on package sim: a manual clock, a timer heap
// ordered by (time, sequence), and links with a fixed one-way delay and no
// rate limit. Every host of the topology is a station that records what it
// receives and sends what the test tells it to.
type fakeNet struct {
	t     testing.TB
	g     *topo.Graph
	fab   *Fabric
	now   element.Time
	seq   uint64
	q     evHeap
	nodes []*fakeNode
	down  map[topo.LinkID]bool
	sent  int // frames put on links

	// With logging set, the elements' debug logs (port state and root
	// changes) are recorded in events, stamped with the time.
	logging bool
	events  []string
}

// recHandler records log lines into the net's events.
type recHandler struct{ n *fakeNet }

func (h recHandler) Enabled(_ context.Context, l slog.Level) bool { return h.n.logging }
func (h recHandler) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h recHandler) WithGroup(string) slog.Handler                { return h }
func (h recHandler) Handle(_ context.Context, r slog.Record) error {
	var sb strings.Builder
	// Exact times: 101.000002s, not Time.String's 101s.
	fmt.Fprintf(&sb, "%ss %s", strconv.FormatFloat(h.n.now.Seconds(), 'f', -1, 64), strings.TrimPrefix(r.Message, "stp: "))
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&sb, " %s=%v", a.Key, a.Value)
		return true
	})
	h.n.events = append(h.n.events, sb.String())
	return nil
}

type fakeNode struct {
	net *fakeNet
	id  topo.NodeID
	el  element.Element
	st  *station // non-nil on hosts
	rng *rand.Rand
}

type ev struct {
	at   element.Time
	seq  uint64
	f    func()
	dead bool
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
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (n *fakeNet) schedule(d element.Time, f func()) *ev {
	if d < 0 {
		n.t.Fatalf("negative delay %v", d)
	}
	n.seq++
	e := &ev{at: n.now + d, seq: n.seq, f: f}
	heap.Push(&n.q, e)
	return e
}

// runUntil processes events up to and including time t, then sets the
// clock to t.
func (n *fakeNet) runUntil(t element.Time) {
	for n.q.Len() > 0 && n.q[0].at <= t {
		e := heap.Pop(&n.q).(*ev)
		if e.dead {
			continue
		}
		n.now = e.at
		e.f()
	}
	n.now = t
}

func (n *fakeNet) run(d element.Time) { n.runUntil(n.now + d) }

// Env implementation, one per node.
func (nd *fakeNode) Now() element.Time { return nd.net.now }
func (nd *fakeNode) Rand() *rand.Rand  { return nd.rng }
func (nd *fakeNode) Log() *slog.Logger { return slog.New(recHandler{nd.net}) }
func (nd *fakeNode) After(d element.Time, f func()) func() {
	e := nd.net.schedule(d, f)
	return func() { e.dead = true }
}
func (nd *fakeNode) Send(p element.Port, frame []byte) {
	n := nd.net
	l, ok := n.g.PortLink(nd.id, p)
	if !ok {
		n.t.Errorf("%s sent on unconnected port %d", n.g.Node(nd.id).Name, p)
		return
	}
	if n.down[l] {
		return
	}
	n.sent++
	peer, _ := n.g.Peer(nd.id, p)
	delay := n.g.Link(l).Delay
	n.schedule(delay, func() {
		if n.down[l] {
			return // lost in flight
		}
		dst := n.nodes[peer.Node]
		dst.el.Receive(peer.Port, frame)
	})
}

// station is a plain host: it records every frame it receives.
type station struct {
	env element.Env
	mac [6]byte
	rx  [][]byte
}

func (s *station) Attach(env element.Env, _ []element.PortInfo) { s.env = env }
func (s *station) Receive(_ element.Port, f []byte)             { s.rx = append(s.rx, append([]byte(nil), f...)) }
func (s *station) LinkChange(element.Port, bool)                {}

func newFakeNet(t testing.TB, g *topo.Graph, params map[string]string) *fakeNet {
	t.Helper()
	fab, err := NewFabric(g, params)
	if err != nil {
		t.Fatal(err)
	}
	n := &fakeNet{t: t, g: g, fab: fab, down: map[topo.LinkID]bool{}}
	for id := topo.NodeID(0); int(id) < g.NumNodes(); id++ {
		nd := &fakeNode{net: n, id: id, rng: rand.New(rand.NewPCG(1, uint64(id)))}
		if el := fab.Element(id); el != nil {
			nd.el = el
		} else {
			mac, _, err := g.HostAddr(id)
			if err != nil {
				t.Fatal(err)
			}
			nd.st = &station{mac: mac}
			nd.el = nd.st
		}
		n.nodes = append(n.nodes, nd)
	}
	for id, nd := range n.nodes {
		var infos []element.PortInfo
		for i, l := range g.Ports(topo.NodeID(id)) {
			if l == topo.NoLink {
				continue
			}
			p := element.Port(i + 1)
			infos = append(infos, element.PortInfo{
				Port: p, Name: fmt.Sprintf("%s:%d", g.Node(topo.NodeID(id)).Name, p),
				MAC: topo.PortMAC(topo.NodeID(id), p), Rate: g.Link(l).Rate, Up: true,
			})
		}
		nd.el.Attach(nd, infos)
	}
	return n
}

func (n *fakeNet) node(name string) *fakeNode {
	id, ok := n.g.Lookup(name)
	if !ok {
		n.t.Fatalf("no node %q", name)
	}
	return n.nodes[id]
}

func (n *fakeNet) bridge(name string) *Bridge {
	b := n.fab.Bridge(n.node(name).id)
	if b == nil {
		n.t.Fatalf("%s has no bridge", name)
	}
	return b
}

// setLink fails or repairs the link between two named nodes (the first
// one found) and tells both ends.
func (n *fakeNet) setLink(a, b string, up bool) topo.LinkID {
	ia, ib := n.node(a).id, n.node(b).id
	for i, l := range n.g.Ports(ia) {
		if l == topo.NoLink || n.g.Link(l).Other(ia).Node != ib {
			continue
		}
		n.down[l] = !up
		lk := n.g.Link(l)
		n.nodes[lk.A.Node].el.LinkChange(lk.A.Port, up)
		n.nodes[lk.B.Node].el.LinkChange(lk.B.Port, up)
		_ = i
		return l
	}
	n.t.Fatalf("no link %s-%s", a, b)
	return topo.NoLink
}

// sendFrom makes host name send an Ethernet frame to dst.
func (n *fakeNet) sendFrom(name string, dst [6]byte, payload string) {
	nd := n.node(name)
	f := append([]byte(nil), dst[:]...)
	f = append(f, nd.st.mac[:]...)
	f = append(f, 0x88, 0xb5)
	f = append(f, payload...)
	for len(f) < 60 {
		f = append(f, 0)
	}
	nd.Send(1, f)
}

// received counts the frames host name got whose payload starts with tag.
func (n *fakeNet) received(name, tag string) int {
	c := 0
	for _, f := range n.node(name).st.rx {
		if len(f) >= 14+len(tag) && string(f[14:14+len(tag)]) == tag {
			c++
		}
	}
	return c
}

func (n *fakeNet) hostMAC(name string) [6]byte { return n.node(name).st.mac }

// ring3 builds ring:3 with one host per switch: s1-s2, s2-s3, s3-s1 on
// ports 1 and 2 of each switch, host hK on port 3 of sK.
func ring3(t testing.TB) *topo.Graph {
	t.Helper()
	b := topo.NewBuilder("ring:3")
	var s, h [3]topo.NodeID
	for i := range s {
		s[i] = b.AddNode(fmt.Sprintf("s%d", i+1), topo.Switch)
	}
	for i := range h {
		h[i] = b.AddNode(fmt.Sprintf("h%d", i+1), topo.Host)
	}
	d := topo.DefaultDelay
	r := topo.DefaultRate
	b.ConnectPorts(topo.End{Node: s[0], Port: 1}, topo.End{Node: s[1], Port: 2}, r, d)
	b.ConnectPorts(topo.End{Node: s[1], Port: 1}, topo.End{Node: s[2], Port: 2}, r, d)
	b.ConnectPorts(topo.End{Node: s[2], Port: 1}, topo.End{Node: s[0], Port: 2}, r, d)
	for i := range h {
		b.ConnectPorts(topo.End{Node: s[i], Port: 3}, topo.End{Node: h[i], Port: 1}, r, d)
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// line builds s1 - s2 - ... - sN with host hK on port 3 of sK.
func lineGraph(t testing.TB, n int) *topo.Graph {
	t.Helper()
	b := topo.NewBuilder(fmt.Sprintf("line:%d", n))
	s := make([]topo.NodeID, n)
	for i := range s {
		s[i] = b.AddNode(fmt.Sprintf("s%d", i+1), topo.Switch)
	}
	for i := range s {
		h := b.AddNode(fmt.Sprintf("h%d", i+1), topo.Host)
		if i > 0 {
			b.ConnectPorts(topo.End{Node: s[i-1], Port: 2}, topo.End{Node: s[i], Port: 1}, topo.DefaultRate, topo.DefaultDelay)
		}
		b.ConnectPorts(topo.End{Node: s[i], Port: 3}, topo.End{Node: h, Port: 1}, topo.DefaultRate, topo.DefaultDelay)
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return g
}
