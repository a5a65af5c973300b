package dumbnet

import (
	"math/rand/v2"
	"testing"

	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// fabricGraph builds the controller's view of g directly (what discovery
// would find), and the hosts' attachment points.
func fabricGraph(tb testing.TB, g *topo.Graph) (*netGraph, map[wire.MAC]attach) {
	tb.Helper()
	ng := newNetGraph()
	for _, n := range g.Nodes(topo.Switch) {
		ng.addSwitch(SwitchID(n))
	}
	hosts := map[wire.MAC]attach{}
	for l := range g.NumLinks() {
		lk := g.Link(topo.LinkID(l))
		a, b := g.Node(lk.A.Node), g.Node(lk.B.Node)
		switch {
		case a.Kind == topo.Switch && b.Kind == topo.Switch:
			ng.addLink(ng.idx[SwitchID(lk.A.Node)], uint16(lk.A.Port), ng.idx[SwitchID(lk.B.Node)], uint16(lk.B.Port), true, wire.LinkUp)
		case a.Kind == topo.Host:
			mac, _, _ := g.HostAddr(lk.A.Node)
			hosts[mac] = attach{sw: ng.idx[SwitchID(lk.B.Node)], port: uint16(lk.B.Port)}
		default:
			mac, _, _ := g.HostAddr(lk.B.Node)
			hosts[mac] = attach{sw: ng.idx[SwitchID(lk.A.Node)], port: uint16(lk.A.Port)}
		}
	}
	return ng, hosts
}

// bigFabric is the paper's Table 2 setting: a fat tree of 5,120 switches
// (k = 64) and 131,072 switch links.
var bigFabric struct {
	g     *topo.Graph
	ng    *netGraph
	hosts map[wire.MAC]attach
	macs  []wire.MAC
}

func loadBig(tb testing.TB) {
	if bigFabric.g != nil {
		return
	}
	g, err := topo.FatTree(64)
	if err != nil {
		tb.Fatal(err)
	}
	bigFabric.g = g
	bigFabric.ng, bigFabric.hosts = fabricGraph(tb, g)
	for _, h := range g.Nodes(topo.Host) {
		mac, _, _ := g.HostAddr(h)
		bigFabric.macs = append(bigFabric.macs, mac)
	}
}

// BenchmarkPathTableLookup looks up random destinations among 10,000
// entries (DumbNet Table 2: 0.37 µs). Baseline: the bare Go map the table
// is built on.
func BenchmarkPathTableLookup(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	t := NewPathTable()
	base := map[wire.MAC]*PathEntry{}
	keys := make([]wire.MAC, 10_000)
	for i := range keys {
		var m wire.MAC
		for j := range m {
			m[j] = byte(rng.Uint32())
		}
		keys[i] = m
		e := &PathEntry{Paths: [][]uint8{{1, 2, 3, 4, 5}}}
		t.Put(m, e)
		base[m] = e
	}
	b.Run("pathtable", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if t.Lookup(keys[i]) == nil {
				b.Fatal("missing")
			}
			i = (i + 7919) % len(keys)
		}
	})
	b.Run("baseline-map", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if base[keys[i]] == nil {
				b.Fatal("missing")
			}
			i = (i + 7919) % len(keys)
		}
	})
}

// BenchmarkVerify verifies a 16-hop path on the 5,120-switch fat tree
// (DumbNet Table 2: 7.17 µs for a path of 16). Baseline: the same walk
// over the topology graph (topo.Graph.Peer) a verifier without the
// TopoCache's port index would do.
func BenchmarkVerify(b *testing.B) {
	loadBig(b)
	g := bigFabric.g
	c := NewTopoCache()
	c.g = bigFabric.ng
	c.hosts = bigFabric.hosts
	rng := rand.New(rand.NewPCG(2, 2))
	src := bigFabric.macs[0]
	c.self, c.hasSelf = c.hosts[src], true
	// A random walk of 16 switch hops that ends on an edge switch, then
	// the port of a host there.
	var tags []uint8
	var dst wire.MAC
	for dst == (wire.MAC{}) {
		tags = tags[:0]
		u := c.self.sw
		for range 16 {
			used := c.g.used[u]
			p := used[rng.IntN(len(used))]
			tags = append(tags, uint8(p))
			u = c.g.ports[u][p].sw
		}
		for mac, at := range c.hosts {
			if at.sw == u {
				dst = mac
				tags = append(tags, uint8(at.port))
				break
			}
		}
	}
	if err := c.Verify(tags, dst); err != nil {
		b.Fatal(err)
	}
	srcNode := g.Nodes(topo.Host)[0]
	b.Run("topocache", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := c.Verify(tags, dst); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline-topo-graph", func(b *testing.B) {
		b.ReportAllocs()
		first, _ := g.Peer(srcNode, 1)
		for b.Loop() {
			u := first.Node
			for _, t := range tags[:len(tags)-1] {
				e, ok := g.Peer(u, topo.Port(t))
				if !ok || g.Node(e.Node).Kind != topo.Switch {
					b.Fatal("bad hop")
				}
				u = e.Node
			}
		}
	})
}

// BenchmarkFindPath finds a path to a destination whose path graph the
// controller computed on the 5,120-switch fat tree (DumbNet Table 2:
// 1.50 µs). Baseline: a BFS over the whole union of cached path graphs,
// which is what a cache without per-destination views would search.
func BenchmarkFindPath(b *testing.B) {
	loadBig(b)
	ng, hosts := bigFabric.ng, bigFabric.hosts
	rng := rand.New(rand.NewPCG(3, 3))
	ctrl := &Controller{a: &Agent{cfg: Config{MaxReplyLinks: DefaultMaxReplyLinks}}, g: ng}
	c := NewTopoCache()
	src := bigFabric.macs[0]
	var dsts []wire.MAC
	var sc scratch
	for len(dsts) < 64 {
		dst := bigFabric.macs[rng.IntN(len(bigFabric.macs))]
		s, d := hosts[src], hosts[dst]
		if s.sw == d.sw {
			continue
		}
		pg := ng.pathGraph(&sc, s.sw, d.sw, DefaultS, DefaultEps, rng)
		c.Merge(&wire.DumbNetPathReply{Version: 1, Src: src, Dst: dst, SrcSwitch: ng.ids[s.sw], SrcPort: s.port,
			DstSwitch: ng.ids[d.sw], DstPort: d.port, Links: ctrl.linksOf(pg)})
		dsts = append(dsts, dst)
	}
	buf := make([]uint8, 0, 64)
	b.Run("topocache", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			var err error
			if buf, err = c.FindPath(dsts[i%len(dsts)], buf); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("baseline-union-bfs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.g.bfs(&c.sc, c.self.sw, nil)
		}
	})
	b.Logf("union of %d path graphs: %d switches, %d links", len(dsts), c.g.numSwitches(), c.g.nlink)
}

// BenchmarkPathGraph is the controller's cost of one path graph on the
// 5,120-switch fat tree (primary, backup, Algorithm 1 with s=2, ε=2),
// against one shortest path as the baseline.
func BenchmarkPathGraph(b *testing.B) {
	loadBig(b)
	ng, hosts := bigFabric.ng, bigFabric.hosts
	rng := rand.New(rand.NewPCG(4, 4))
	s, d := hosts[bigFabric.macs[0]], hosts[bigFabric.macs[len(bigFabric.macs)-1]]
	var sc scratch
	b.Run("pathgraph", func(b *testing.B) {
		for b.Loop() {
			if ng.pathGraph(&sc, s.sw, d.sw, DefaultS, DefaultEps, rng) == nil {
				b.Fatal("no path graph")
			}
		}
	})
	b.Run("baseline-shortest", func(b *testing.B) {
		for b.Loop() {
			if ng.shortest(&sc, s.sw, d.sw, rng, nil) == nil {
				b.Fatal("no path")
			}
		}
	})
}

// tcpFrames are n 1,514-byte TCP/IPv4 frames from macA to macB, one per
// flow (told apart by the source port).
func tcpFrames(n int) [][]byte {
	fs := make([][]byte, n)
	for i := range fs {
		ip := make([]byte, 1500)
		ip[0], ip[9] = 0x45, 6
		copy(ip[12:16], []byte{10, 0, 0, 1})
		copy(ip[16:20], []byte{10, 0, 0, 2})
		ip[20], ip[21], ip[23] = byte(1024+i>>8), byte(1024+i), 80
		fs[i] = wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, ip)
	}
	return fs
}

// BenchmarkAgentSend is the agent's per-frame cost for a frame its host
// sends to a destination it holds three paths for: look the entry up,
// choose the flow's path (§5.2, §6.2), push the tags, hand the frame to
// the NIC. One flow, and 10,000 flows in turn; by flow hash and with
// flowlets. Baseline, same run: the copy with the tags in front that every
// send needs (a copy and wire.DumbNetPush, as sendData makes it).
func BenchmarkAgentSend(b *testing.B) {
	for _, c := range []struct {
		name     string
		flows    int
		flowlets bool
	}{
		{"hash/1-flow", 1, false},
		{"hash/10000-flows", 10_000, false},
		{"flowlets/1-flow", 1, true},
		{"flowlets/10000-flows", 10_000, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, K: 3, Flowlets: c.flowlets})
			withPaths(a, env, threePaths)
			fs := tcpFrames(c.flows)
			b.SetBytes(int64(len(fs[0])))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				a.Receive(2, fs[i])
				if len(env.sent) != 1 {
					b.Fatalf("%d frames sent, want 1", len(env.sent))
				}
				env.sent = env.sent[:0]
				i = (i + 1) % len(fs)
			}
		})
	}
	b.Run("baseline-push", func(b *testing.B) {
		f := tcpFrames(1)[0]
		tags := []uint8{2, 2, 9}
		b.SetBytes(int64(len(f)))
		b.ReportAllocs()
		var sink []byte
		for b.Loop() {
			buf := make([]byte, len(f), len(f)+len(tags)+3)
			copy(buf, f)
			var err error
			if sink, err = wire.DumbNetPush(buf, tags); err != nil {
				b.Fatal(err)
			}
		}
		_ = sink
	})
}

// BenchmarkFlapAlarm is the controller's cost of a "port flapped" alarm
// (forged or not) for a link of the 5,120-switch fat tree, none of whose
// links cuts a switch off: a lookup ("alarm"), after one search per
// topology version ("first-after-change"). Baseline, same run: the search
// of the whole graph that every alarm cost before.
func BenchmarkFlapAlarm(b *testing.B) {
	loadBig(b)
	a, _ := attachedAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true})
	c := a.ctrl
	c.disc.stop()
	c.g = bigFabric.ng
	c.root = bigFabric.hosts[bigFabric.macs[0]]
	c.version, c.ready = 1, true
	i := c.root.sw
	port := c.g.used[i][len(c.g.used[i])-1] // an uplink
	id := c.g.ids[i]
	b.Run("alarm", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.flapped(id, port)
		}
	})
	b.Run("first-after-change", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.version++
			c.flapped(id, port)
		}
	})
	b.Run("baseline-search", func(b *testing.B) {
		b.ReportAllocs()
		var sc scratch
		for b.Loop() {
			c.g.bfs(&sc, c.root.sw, nil)
		}
	})
	if len(c.stale) != 0 {
		b.Fatalf("%d switches stale: a fat tree link cuts none off", len(c.stale))
	}
}
