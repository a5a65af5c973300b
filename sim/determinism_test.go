package sim

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// chatter is a host element whose traffic depends on its Rand: it sends
// frames of random sizes at random intervals to random ports.
type chatter struct {
	env   element.Env
	n     int
	ports int
	recv  int
}

func (c *chatter) Attach(env element.Env, ports []element.PortInfo) {
	c.env, c.ports = env, len(ports)
	c.tick()
}
func (c *chatter) tick() {
	if c.n == 0 {
		return
	}
	c.n--
	r := c.env.Rand()
	f := make([]byte, 60+r.IntN(1400))
	for i := range f {
		f[i] = byte(r.Uint32())
	}
	c.env.Send(element.Port(1+r.IntN(c.ports)), f)
	c.env.After(element.Time(r.IntN(20_000))*element.Nanosecond, c.tick)
}
func (c *chatter) Receive(p element.Port, frame []byte) { c.recv++ }
func (c *chatter) LinkChange(p element.Port, up bool)   {}

// hub floods every frame to all other ports.
type hub struct {
	env   element.Env
	ports int
}

func (h *hub) Attach(env element.Env, ports []element.PortInfo) { h.env, h.ports = env, len(ports) }
func (h *hub) Receive(p element.Port, frame []byte) {
	for q := 1; q <= h.ports; q++ {
		if element.Port(q) != p {
			h.env.Send(element.Port(q), append([]byte(nil), frame...))
		}
	}
}
func (h *hub) LinkChange(p element.Port, up bool) {}

// star is a hub with n hosts.
func runChatter(t testing.TB, seed uint64) (uint64, uint64) {
	b := topo.NewBuilder("star")
	sw := b.AddNode("s1", topo.Switch)
	for i := range 6 {
		h := b.AddNode(fmt.Sprintf("h%d", i+1), topo.Host)
		b.Connect(h, sw)
	}
	g, err := b.Graph()
	must(t, err)
	s := mustNew(t, g, Options{Seed: seed, QueueBytes: 20000})
	must(t, s.Place(sw, &hub{}))
	for i := 1; i <= 6; i++ {
		must(t, s.Place(topo.NodeID(i), &chatter{n: 300}))
	}
	must(t, s.SetFault(2, Fault{Loss: 0.05, Corrupt: 0.05}))
	s.At(500*element.Microsecond, func() { must(t, s.SetLink(3, false)) })
	s.At(900*element.Microsecond, func() { must(t, s.SetLink(3, true)) })
	s.RunAll()
	return s.TraceHash(), s.Events()
}

func TestDeterminismInProcess(t *testing.T) {
	h1, e1 := runChatter(t, 42)
	h2, e2 := runChatter(t, 42)
	if h1 != h2 || e1 != e2 {
		t.Fatalf("same seed: hash %x/%x events %d/%d", h1, h2, e1, e2)
	}
	h3, _ := runChatter(t, 43)
	if h3 == h1 {
		t.Fatalf("seeds 42 and 43 gave the same trace hash %x", h1)
	}
	if e1 < 5000 {
		t.Fatalf("only %d events: the run is too small to mean anything", e1)
	}
}

// TestDeterminismAcrossProcesses runs the same simulation in two child
// processes (this test binary in helper mode) and compares their hashes
// with this process's: map iteration order, ASLR and the scheduler must not
// leak into a run.
func TestDeterminismAcrossProcesses(t *testing.T) {
	if os.Getenv("SIM_HASH_HELPER") == "1" {
		h, e := runChatter(t, 42)
		fmt.Printf("HASH %x %d\n", h, e)
		return
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	h, e := runChatter(t, 42)
	want := fmt.Sprintf("HASH %x %d", h, e)
	for i := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDeterminismAcrossProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SIM_HASH_HELPER=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, out)
		}
		if !strings.Contains(string(out), want) {
			t.Fatalf("child %d printed %q, want %q", i, out, want)
		}
	}
}
