package host_test

import (
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/host"
	"github.com/edgefabric/edgefabric/sim"
	"github.com/edgefabric/edgefabric/topo"
)

const (
	us   = element.Microsecond
	ms   = element.Millisecond
	sec  = element.Second
	gbps = 1_000_000_000
)

// learner is a learning switch, enough to join hosts in package sim.
type learner struct {
	env   element.Env
	n     int
	table map[[6]byte]element.Port
}

func (l *learner) Attach(env element.Env, ports []element.PortInfo) {
	l.env, l.n, l.table = env, len(ports), map[[6]byte]element.Port{}
}
func (l *learner) LinkChange(element.Port, bool) {}
func (l *learner) Receive(p element.Port, f []byte) {
	var src, dst [6]byte
	copy(dst[:], f[0:6])
	copy(src[:], f[6:12])
	l.table[src] = p
	if out, ok := l.table[dst]; ok && dst[0]&1 == 0 {
		if out != p {
			l.env.Send(out, append([]byte(nil), f...))
		}
		return
	}
	for q := element.Port(1); int(q) <= l.n; q++ {
		if q != p {
			l.env.Send(q, append([]byte(nil), f...))
		}
	}
}

// starSim builds k hosts on one switch in package sim, hosts addressed by
// the topology's address plan.
func starSim(t testing.TB, k int, rate int64, delay element.Time, seed uint64) (*sim.Sim, []*host.Host) {
	t.Helper()
	b := topo.NewBuilder("star")
	sw := b.AddNode("s1", topo.Switch)
	for i := range k {
		h := b.AddNode("h"+string(rune('1'+i)), topo.Host)
		b.ConnectPorts(topo.End{Node: h, Port: 1}, topo.End{Node: sw, Port: topo.Port(i + 1)}, rate, delay)
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(g, sim.Options{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Place(sw, &learner{}); err != nil {
		t.Fatal(err)
	}
	var hs []*host.Host
	for _, n := range g.Nodes(topo.Host) {
		mac, ip, err := g.HostAddr(n)
		if err != nil {
			t.Fatal(err)
		}
		h := host.New(host.Config{Name: g.Node(n).Name, MAC: mac, IP: ip})
		if err := s.PlaceHost(n, nil, h); err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	return s, hs
}

// Over the engine's links (Ethernet framing: preamble and FCS, 12 bytes,
// on every frame) and a store-and-forward switch, a warm ping takes four
// serializations and four propagation delays.
func TestSimPingExact(t *testing.T) {
	const d = 2 * us
	s, hs := starSim(t, 2, gbps, d, 1)
	var p *host.PingApp
	s.At(ms, func() { p = hs[0].Ping(hs[1].Addr(), 3, ms) })
	s.Run(sec)
	r := p.Result()
	if r.Received != 3 {
		t.Fatalf("result %+v counters %v", r, hs[0].Counters())
	}
	hop := element.Time((98+12)*8*int64(sec)/gbps) + d
	for i := 1; i < 3; i++ {
		if r.RTTs[i] != 4*hop {
			t.Errorf("rtt[%d] = %v, want %v", i, r.RTTs[i], 4*hop)
		}
	}
}

// One TCP flow through a switch with the engine's drop-tail queues still
// reaches 90 % of the 1 Gb/s line rate over 10 MB.
func TestSimTCPLineRate(t *testing.T) {
	s, hs := starSim(t, 2, gbps, 25*us, 1)
	var c *host.TCPConn
	s.At(ms, func() { c = hs[0].TCPBulk(hs[1].Addr(), host.DiscardPort, 10_000_000) })
	s.Run(20 * sec)
	r := c.Result()
	if !c.Done() || c.Err() != nil || r.BytesAcked != 10_000_000 {
		t.Fatalf("result %+v", r)
	}
	if r.GoodputBps < 0.9*gbps {
		t.Fatalf("goodput %.1f Mb/s (%+v)", r.GoodputBps/1e6, r)
	}
	// The NIC queue pushed back instead of dropping: no loss anywhere.
	st, _ := s.PortStats(s.Graph().Nodes(topo.Host)[0], 1)
	var drops uint64
	for _, d := range st.Drops {
		drops += d
	}
	if drops != 0 || r.Retransmits != 0 || hs[0].Counter("tcp_tx_queue_full") == 0 {
		t.Fatalf("NIC drops %d, retransmits %d, backpressure %d", drops, r.Retransmits, hs[0].Counter("tcp_tx_queue_full"))
	}
	if st.MaxQueue > 128<<10+1600 {
		t.Fatalf("NIC queue reached %d bytes, limit 128 KiB", st.MaxQueue)
	}
	t.Logf("goodput %.1f Mb/s, retransmits %d, timeouts %d, srtt %.1f us, events %d, max NIC queue %d", r.GoodputBps/1e6, r.Retransmits, r.Timeouts, r.SRTTUs, s.Events(), st.MaxQueue)
}

// A shuffle among 4 hosts in the engine completes, deterministically.
func TestSimShuffleDeterministic(t *testing.T) {
	run := func() (string, uint64) {
		s, hs := starSim(t, 4, gbps, 5*us, 7)
		var sh *host.Shuffle
		s.At(ms, func() { sh = host.StartShuffle(hs, host.ShuffleOptions{Bytes: 1_000_000, Threads: 2}) })
		s.Run(60 * sec)
		if !sh.Done() {
			t.Fatal("shuffle not done")
		}
		r := sh.Result()
		if r.Failed != 0 {
			t.Fatalf("result %+v", r)
		}
		b, _ := json.Marshal(r)
		return string(b), s.TraceHash()
	}
	a, ha := run()
	b, hb := run()
	if a != b || ha != hb {
		t.Fatalf("runs differ: %x %x\n%s\n%s", ha, hb, a, b)
	}
}

// UDP at a constant rate through the engine: nothing lost below line rate.
func TestSimUDP(t *testing.T) {
	s, hs := starSim(t, 2, gbps, us, 1)
	var u *host.UDPApp
	s.At(ms, func() { u = hs[0].UDP(hs[1].Addr(), 9000, 500_000_000, 1000, 10*ms) })
	s.Run(sec)
	r := u.ResultWith(hs[1])
	// 500 Mb/s of 1000-byte payloads: one every 16 us for 10 ms.
	if r.Sent != 625 || r.Received != 625 || *r.Lost != 0 {
		t.Fatalf("result %+v", r)
	}
	if st := hs[1].UDPPort(9000); st.Packets != 625 || st.Bytes != 625_000 {
		t.Fatalf("port stats %+v", st)
	}
	_ = netip.Addr{}
}

// BenchmarkSimBulk runs one 10 MB transfer through a switch in package sim
// and reports engine events per second with the host stack in the loop.
// Baseline: the same run's events would be forwarding-only in sim's own
// benchmarks (docs/sim.md); here the host's share is what differs.
func BenchmarkSimBulk(b *testing.B) {
	b.ReportAllocs()
	var events uint64
	for b.Loop() {
		s, hs := starSim(b, 2, 10*gbps, 5*us, 1)
		var c *host.TCPConn
		s.At(ms, func() { c = hs[0].TCPBulk(hs[1].Addr(), host.DiscardPort, 10_000_000) })
		s.Run(10 * sec)
		if !c.Done() {
			b.Fatal("not done")
		}
		events += s.Events()
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkSimShuffle16 runs a 16-host shuffle (1 MB per pair, 10 threads)
// through one switch: 240 flows, incast included.
func BenchmarkSimShuffle16(b *testing.B) {
	b.ReportAllocs()
	var events uint64
	for b.Loop() {
		s, hs := starSim(b, 16, gbps, 5*us, 3)
		var sh *host.Shuffle
		s.At(ms, func() { sh = host.StartShuffle(hs, host.ShuffleOptions{Bytes: 1_000_000, Threads: 10}) })
		s.Run(100 * sec)
		if !sh.Done() {
			b.Fatal("not done")
		}
		events += s.Events()
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
