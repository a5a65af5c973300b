package sim

import (
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// rec is a test element that records what it receives and can send on
// demand.
type rec struct {
	env   element.Env
	ports []element.PortInfo
	got   []got
	links []linkEv
	// fwd, when set, forwards every received frame: out port by in port.
	fwd map[element.Port]element.Port
	ct  int
	// sends counts frames this element forwarded.
	sends int
}

type got struct {
	t     element.Time
	p     element.Port
	frame []byte
}

type linkEv struct {
	t  element.Time
	p  element.Port
	up bool
}

func (r *rec) Attach(env element.Env, ports []element.PortInfo) { r.env, r.ports = env, ports }
func (r *rec) Receive(p element.Port, frame []byte) {
	r.got = append(r.got, got{r.env.Now(), p, append([]byte(nil), frame...)})
	if out, ok := r.fwd[p]; ok {
		r.sends++
		r.env.Send(out, append([]byte(nil), frame...))
	}
}
func (r *rec) LinkChange(p element.Port, up bool) {
	r.links = append(r.links, linkEv{r.env.Now(), p, up})
}

// ctRec is a rec that declares itself cut-through.
type ctRec struct{ rec }

func (r *ctRec) CutThrough() int { return r.ct }

func frameOf(n int, tag byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = tag
	}
	return b
}

// line builds n0 - n1 - ... - n(k) with hosts at both ends and switches in
// between, every link at rate and delay.
func line(t testing.TB, switches int, rate int64, delay element.Time) *topo.Graph {
	t.Helper()
	b := topo.NewBuilder("line")
	prev := b.AddNode("h1", topo.Host)
	for i := 1; i <= switches; i++ {
		s := b.AddNode("s"+itoa(i), topo.Switch)
		b.ConnectPorts(topo.End{Node: prev, Port: portAfter(prev)}, topo.End{Node: s, Port: 1}, rate, delay)
		prev = s
	}
	h2 := b.AddNode("h2", topo.Host)
	b.ConnectPorts(topo.End{Node: prev, Port: portAfter(prev)}, topo.End{Node: h2, Port: 1}, rate, delay)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// portAfter: hosts use port 1, switches 1 toward h1 and 2 toward h2.
func portAfter(n topo.NodeID) element.Port {
	if n == 0 {
		return 1
	}
	return 2
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func mustNew(t testing.TB, g *topo.Graph, o Options) *Sim {
	t.Helper()
	s, err := New(g, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type nodeID = topo.NodeID

// twoHosts is two recording elements joined by one 1 Gb/s link with 1 us
// of delay.
func twoHosts(t testing.TB) (s *Sim, a, b *rec) {
	t.Helper()
	s = mustNew(t, line(t, 0, 1_000_000_000, us), Options{})
	a, b = &rec{}, &rec{}
	must(t, s.Place(0, a))
	must(t, s.Place(1, b))
	return s, a, b
}

// slowOutCutThrough is h1 - s1 - h2 with no delay: h1's link at 1 Gb/s,
// s1's output at 100 Mb/s, s1 a cut-through element (6 bytes) forwarding
// port 1 to port 2.
func slowOutCutThrough(t testing.TB) (s *Sim, h1 *rec, sw *ctRec, h2 *rec) {
	t.Helper()
	s = mustNew(t, line(t, 1, 1_000_000_000, 0), Options{})
	s.pipes[2].setRate(100_000_000)
	h1, h2 = &rec{}, &rec{}
	sw = &ctRec{rec{fwd: map[element.Port]element.Port{1: 2}, ct: 6}}
	must(t, s.Place(0, h1))
	must(t, s.Place(1, sw))
	must(t, s.Place(2, h2))
	return s, h1, sw, h2
}
