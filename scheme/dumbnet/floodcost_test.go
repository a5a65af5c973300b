package dumbnet

import (
	"runtime"
	"testing"

	"github.com/edgefabric/edgefabric/wire"
)

// bigTableAgent is an agent whose PathTable holds n destinations.
func bigTableAgent(tb testing.TB, n int, cfg Config) (*Agent, *fakeEnv) {
	cfg.Name, cfg.MAC, cfg.IP, cfg.Search = "a", macA, ipA, -1
	a, env := attachedAgent(cfg)
	for i := range n {
		d := wire.MAC{0x06, 0, 0, byte(i >> 16), byte(i >> 8), byte(i)}
		a.table.Put(d, &PathEntry{Paths: [][]uint8{{3, 9}}, routes: []routeRec{{links: []Link{{A: 1, APort: 3, B: 4, BPort: 1}}}}})
	}
	env.take()
	return a, env
}

// A capped flood (16 frames) costs per event what picking 16 destinations
// costs, not a sort of the whole PathTable: forged notifications, each
// naming a new port, could otherwise make every host sort 65,536
// destinations (20 ms and 10 MB each) at will. Found by review.
func TestCappedFloodCostPerEvent(t *testing.T) {
	a, env := bigTableAgent(t, 65536, Config{})
	frames := make([][]byte, 20)
	for i := range frames {
		frames[i] = ctrl(t, macA, macC, &wire.DumbNetHostNotify{Origin: macC, Seq: uint32(i + 1), SwitchID: 0xdead, Port: uint16(i + 1), State: wire.PortDown})
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	for _, f := range frames {
		a.Receive(1, f)
		env.take()
	}
	runtime.ReadMemStats(&m1)
	per := (m1.TotalAlloc - m0.TotalAlloc) / uint64(len(frames))
	c := a.Counters()
	if c["notify_flooded"] == 0 || c["notify_capped"] == 0 {
		t.Fatalf("nothing flooded or capped: %v", c)
	}
	if per > 1<<20 {
		t.Fatalf("a capped flood allocated %d bytes per event (PathTable 65,536) to send %d frames", per, c["notify_flooded"]/uint64(len(frames)))
	}
}
