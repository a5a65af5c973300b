package sim

import (
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// FuzzEngine drives a small network with an arbitrary script of sends (any
// size, any port number, valid or not), link and node failures and repairs,
// faults and clock advances, and checks that nothing panics and every frame
// sent is accounted for: delivered, dropped with a counted reason, or still
// in a pipe.
func FuzzEngine(f *testing.F) {
	f.Add([]byte{0, 1, 200, 3, 1, 0, 9, 4, 0, 2, 1, 5, 3, 0, 1, 1})
	f.Add([]byte{6, 6, 6, 0, 0, 0, 1, 1, 1, 2, 2, 2, 7, 3, 3})
	f.Fuzz(func(t *testing.T, script []byte) {
		b := topo.NewBuilder("fz")
		h1 := b.AddNode("h1", topo.Host)
		s1 := b.AddNode("s1", topo.Switch)
		s2 := b.AddNode("s2", topo.Switch)
		h2 := b.AddNode("h2", topo.Host)
		b.Connect(h1, s1)
		b.Connect(s1, s2)
		b.Connect(s2, h2)
		b.ConnectPorts(topo.End{Node: s1, Port: 3}, topo.End{Node: s2, Port: 3}, 10_000_000_000, 0)
		g, err := b.Graph()
		if err != nil {
			t.Fatal(err)
		}
		s := mustNew(t, g, Options{Seed: 1, QueueBytes: 4000})
		recs := []*rec{{}, {fwd: map[element.Port]element.Port{1: 2, 2: 1, 3: 1}, ct: 0}, {fwd: map[element.Port]element.Port{1: 2, 2: 1, 3: 2}}, {}}
		ct := &ctRec{rec{fwd: map[element.Port]element.Port{1: 2, 2: 1, 3: 1}, ct: 14}}
		must(t, s.Place(h1, recs[0]))
		must(t, s.Place(s1, ct))
		must(t, s.Place(s2, recs[2]))
		must(t, s.Place(h2, recs[3]))
		envs := []*rec{recs[0], &ct.rec, recs[2], recs[3]}
		sent := uint64(0)
		for i := 0; i+2 < len(script); i += 3 {
			op, a, c := script[i]%8, script[i+1], script[i+2]
			switch op {
			case 0, 1, 2: // a node sends
				n := int(a) % 4
				s.At(s.Now(), func() {
					envs[n].env.Send(element.Port(c%5), frameOf(int(c)*7%1600, c))
				})
				sent++
			case 3:
				_ = s.SetLink(topo.LinkID(a%5), c%2 == 0)
			case 4:
				_ = s.SetNode(topo.NodeID(a%5), c%2 == 0)
			case 5:
				_ = s.SetFault(topo.LinkID(a%4), Fault{Loss: float64(c%3) / 4, Corrupt: float64(c%5) / 8})
			default:
				s.Run(s.Now() + element.Time(a)*element.Microsecond)
			}
		}
		s.Run(s.Now() + element.Second)
		if s.Pending() != 0 {
			t.Fatalf("%d events pending after a quiet second", s.Pending())
		}
		// Conservation: every Send ends as exactly one of a bad-port send,
		// a counted drop (at the sender, on the way, or at the receiver), a
		// frame handed to an element, or a frame still in a pipe.
		sends := sent
		for _, r := range envs {
			sends += uint64(r.sends)
		}
		var rx, drops, bad, inPipes uint64
		for n := range g.NumNodes() {
			for p := 1; p <= g.Node(topo.NodeID(n)).Ports; p++ {
				st, _ := s.PortStats(topo.NodeID(n), element.Port(p))
				rx += st.RxFrames
				drops += st.TotalDrops()
			}
			bad += s.BadPortSends(topo.NodeID(n))
		}
		for i := range s.pipes {
			inPipes += uint64(len(s.pipes[i].fl) - s.pipes[i].dh)
		}
		if sends != bad+drops+rx+inPipes {
			t.Fatalf("sends %d != bad port %d + drops %d + received %d + in pipes %d", sends, bad, drops, rx, inPipes)
		}
	})
}
