package topo

import (
	"math"
	"testing"
)

// withRate copies g with every link at rate r.
func withRate(t *testing.T, g *Graph, r int64) *Graph {
	t.Helper()
	b := NewBuilder(g.Name)
	b.Grow(g.NumNodes(), g.NumLinks())
	for i := range g.NumNodes() {
		n := g.Node(NodeID(i))
		id := b.AddNode(n.Name, n.Kind)
		*b.Node(id) = *n
	}
	for i := range g.NumLinks() {
		l := g.Link(LinkID(i))
		b.ConnectPorts(l.A, l.B, r, l.Delay)
	}
	out, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBisectionFastLinks: the bisection of fast links is counted without
// overflow. fattree:48's minimum bisection is p³/8 = 13,824 links: at
// 500 Tb/s, 6.912×10¹⁸ b/s, which an int64 holds and which stays exact;
// at 1 Pb/s, 1.38×10¹⁹ b/s, beyond an int64, and the most it holds is
// reported. Added up in b/s, that came out negative (-4.6×10¹⁸).
func TestBisectionFastLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("fattree:48")
	}
	ft, err := Parse("fattree:48", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := withRate(t, ft, 500e12).Bisection(), int64(13824*500e12); got != want {
		t.Errorf("fattree:48 at 500T: bisection %d, want %d", got, want)
	}
	if got := withRate(t, ft, 1e15).Bisection(); got != math.MaxInt64 {
		t.Errorf("fattree:48 at 1000T: bisection %d, want %d (the most an int64 holds)", got, int64(math.MaxInt64))
	}
	// rates without a common divisor to speak of: 1000T and 1000T-1 b/s
	// on alternate links sum to more than maxCapUnits units of 1 b/s;
	// the unit grows and the estimate stays an upper bound close to the
	// true value (between 13,824 links of the slower and of the faster)
	b := NewBuilder("mixed")
	for i := range ft.NumNodes() {
		n := ft.Node(NodeID(i))
		b.AddNode(n.Name, n.Kind)
	}
	for i := range ft.NumLinks() {
		l := ft.Link(LinkID(i))
		b.ConnectPorts(l.A, l.B, 1e15-int64(i%2), l.Delay)
	}
	mixed, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if got := mixed.Bisection(); got != math.MaxInt64 {
		t.Errorf("mixed: bisection %d, want %d", got, int64(math.MaxInt64))
	}
	b = NewBuilder("mixed-250T")
	for i := range ft.NumNodes() {
		n := ft.Node(NodeID(i))
		b.AddNode(n.Name, n.Kind)
	}
	for i := range ft.NumLinks() {
		l := ft.Link(LinkID(i))
		b.ConnectPorts(l.A, l.B, 250e12+int64(i%2), l.Delay)
	}
	mh, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := int64(13824*250e12), int64(13824*(250e12+1))
	if got := mh.Bisection(); got < lo || got > hi+1<<20 {
		t.Errorf("mixed at 250T: bisection %d, want %d..%d", got, lo, hi)
	}
}

// TestBisectionRatesNearMaxInt64: the Builder takes any positive rate,
// up to math.MaxInt64. Two such rates without a common divisor sum to
// more than maxCapUnits units of 1 b/s, so the unit grows; rounding a
// rate up to it added unit-1 to the rate first, which overflowed an
// int64 for a rate within unit of math.MaxInt64, and the bisection came
// out negative.
func TestBisectionRatesNearMaxInt64(t *testing.T) {
	b := NewBuilder("huge")
	h1 := b.AddNode("h1", Host)
	s := b.AddNode("s", Switch)
	h2 := b.AddNode("h2", Host)
	b.ConnectPorts(End{h1, 1}, End{s, 1}, math.MaxInt64, 0)
	b.ConnectPorts(End{s, 2}, End{h2, 1}, math.MaxInt64-1, 0)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Bisection(); got != math.MaxInt64 {
		// the cut is one link of at least MaxInt64-1 b/s, rounded up
		t.Errorf("bisection %d, want %d", got, int64(math.MaxInt64))
	}
	capa, unit := linkCapacities(g)
	for i, c := range capa {
		if r := g.Link(LinkID(i)).Rate; c <= 0 || float64(c)*float64(unit) < float64(r) {
			t.Errorf("link %d: rate %d as %d units of %d b/s", i, r, c, unit)
		}
	}
}
