package dumbnet_test

import (
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/host"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/scheme/stp"
	"github.com/edgefabric/edgefabric/sim"
	"github.com/edgefabric/edgefabric/topo"
)

// BenchmarkDiscovery measures the controller's BFS discovery in the
// simulator (wall time per op; virtual time and probes as metrics) against
// switch count, and against the port count probed per switch (the paper's
// P² term). The baseline of each size probes only the ports the switches
// have (the paper's optional maximum-port argument); the "ports=64" rows
// probe 64 ports per switch as the paper's emulation does. Hosts do not
// search for the controller here (search=off): only discovery is timed.
func BenchmarkDiscovery(b *testing.B) {
	type run struct {
		spec  string
		ports string
	}
	var runs []run
	for _, spec := range []string{"fattree:4", "fattree:8", "fattree:12", "fattree:20"} {
		runs = append(runs, run{spec, ""}, run{spec, "64"})
	}
	for _, p := range []string{"8", "16", "32"} {
		runs = append(runs, run{"fattree:8", p})
	}
	for _, r := range runs {
		name := r.spec + "/ports=actual"
		if r.ports != "" {
			name = r.spec + "/ports=" + r.ports
		}
		b.Run(name, func(b *testing.B) {
			// Timeouts and pacing for the simulator's 1 us, 1 Gb/s links.
			params := map[string]string{"search": "off", "probetimeout": "2ms", "probegap": "2us"}
			if r.ports != "" {
				params["maxports"] = r.ports
			}
			var virt element.Time
			var probes uint64
			var sw int
			var cpu time.Duration
			for b.Loop() {
				l := newLab(b, r.spec, params)
				c0 := cpuTime()
				l.discoverWithin(b, 60*element.Second)
				cpu += cpuTime() - c0
				c := l.f.Controller()
				virt, probes, sw = c.DoneAt(), c.Probes(), len(c.Topology().Switches)
			}
			// CPU time, unlike ns/op, does not grow when other processes
			// share the machine.
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
			b.ReportMetric(virt.Seconds()*1000, "sim-ms")
			b.ReportMetric(float64(probes), "probes")
			b.ReportMetric(float64(sw), "switches")
		})
	}
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// busiestCoreLink returns the aggregation-to-core link that carried the
// most frames since before: the link a flow between pods is using.
func busiestCoreLink(g *topo.Graph, s *sim.Sim, before map[topo.LinkID]uint64) (topo.LinkID, map[topo.LinkID]uint64) {
	now := map[topo.LinkID]uint64{}
	best, bestN := topo.NoLink, uint64(0)
	for i := range g.NumLinks() {
		l := topo.LinkID(i)
		lk := g.Link(l)
		if g.Node(lk.A.Node).Role != "core" && g.Node(lk.B.Node).Role != "core" {
			continue
		}
		sa, _ := s.PortStats(lk.A.Node, lk.A.Port)
		sb, _ := s.PortStats(lk.B.Node, lk.B.Port)
		now[l] = sa.TxFrames + sb.TxFrames
		if d := now[l] - before[l]; d > bestN {
			best, bestN = l, d
		}
	}
	return best, now
}

// outage runs a 100 Mb/s UDP stream between two pods of fattree:4 under
// fabric f, fails the core link it uses once the stream is established,
// and returns the outage: datagrams lost times the sending interval.
func outage(b *testing.B, f scheme.Fabric, g *topo.Graph, settle, runFor element.Time, agents bool) (element.Time, element.Time) {
	s, err := sim.New(g, sim.Options{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	hosts := map[topo.NodeID]*host.Host{}
	for i := range g.NumNodes() {
		n := topo.NodeID(i)
		if g.Node(n).Kind == topo.Switch {
			if err := s.Place(n, f.Element(n)); err != nil {
				b.Fatal(err)
			}
			continue
		}
		mac, ip, _ := g.HostAddr(n)
		hosts[n] = host.New(host.Config{Name: g.Node(n).Name, MAC: mac, IP: ip})
		var agent = f.Element(n)
		if !agents {
			agent = nil
		}
		if err := s.PlaceHost(n, agent, hosts[n]); err != nil {
			b.Fatal(err)
		}
	}
	src, _ := g.Lookup("h5")
	dst, _ := g.Lookup("h16")
	_, sip, _ := g.HostAddr(src)
	_, dip, _ := g.HostAddr(dst)
	s.Run(settle)
	var warm *host.PingApp
	s.At(s.Now(), func() { warm = hosts[src].Ping(dip.Addr(), 3, 100*element.Millisecond) })
	s.Run(s.Now() + element.Second)
	if warm.Result().Received == 0 {
		b.Fatalf("no connectivity before the failure: %+v", warm.Result())
	}
	const rate, size = 100_000_000, 1000
	interval := element.Time(size*8) * element.Second / rate
	start := s.Now()
	var app *host.UDPApp
	s.At(start, func() { app = hosts[src].UDP(dip.Addr(), 7000, rate, size, runFor) })
	_, base := busiestCoreLink(g, s, nil)
	s.Run(start + 20*element.Millisecond)
	l, _ := busiestCoreLink(g, s, base)
	failAt := s.Now()
	if err := s.SetLink(l, false); err != nil {
		b.Fatal(err)
	}
	s.Run(start + runFor + element.Second)
	r := app.Result()
	fl, _ := hosts[dst].UDPFlow(sip.Addr(), r.SrcPort, 7000)
	lost := int64(r.Sent) - int64(fl.Packets)
	if fl.Packets == 0 || lost < 0 {
		b.Fatalf("sent %d received %d", r.Sent, fl.Packets)
	}
	return element.Time(lost) * interval, failAt
}

// notifyTimes returns, over the hosts, when each learnt of the failure at
// failAt by notification (stage 1) and by patch (stage 2): median and
// maximum (DumbNet Fig. 11(a)).
func notifyTimes(b *testing.B, f *dumbnet.Fabric, g *topo.Graph, failAt element.Time) (p50s1, maxs1, p50s2, maxs2 element.Time) {
	var s1, s2 []element.Time
	for _, h := range g.Nodes(topo.Host) {
		a, c := f.Agent(h).Notified()
		if a < failAt {
			b.Fatalf("%s never notified", g.Node(h).Name)
		}
		s1 = append(s1, a-failAt)
		if h != f.ControllerNode() {
			if c < failAt {
				b.Fatalf("%s never patched", g.Node(h).Name)
			}
			s2 = append(s2, c-failAt)
		}
	}
	slices.Sort(s1)
	slices.Sort(s2)
	return s1[len(s1)/2], s1[len(s1)-1], s2[len(s2)/2], s2[len(s2)-1]
}

// BenchmarkFailoverOutage measures the outage of a UDP stream when the
// core link it uses fails, for DumbNet and, in the same run, the 802.1D
// spanning tree on the same topology (stp scheme, default timers) as the
// baseline. Run with -benchtime=1x: one iteration simulates a minute of
// STP.
func BenchmarkFailoverOutage(b *testing.B) {
	g, err := topo.Parse("fattree:4", 1)
	if err != nil {
		b.Fatal(err)
	}
	var dn, st element.Time
	b.Run("dumbnet", func(b *testing.B) {
		var n1, m1, n2, m2 element.Time
		for b.Loop() {
			f := newLabGraph(b, g, nil).f
			var failAt element.Time
			dn, failAt = outage(b, f, g, 100*element.Millisecond, 200*element.Millisecond, true)
			n1, m1, n2, m2 = notifyTimes(b, f, g, failAt)
		}
		b.ReportMetric(dn.Seconds()*1000, "outage-ms")
		b.ReportMetric(n1.Seconds()*1e6, "notify-p50-us")
		b.ReportMetric(m1.Seconds()*1e6, "notify-max-us")
		b.ReportMetric(n2.Seconds()*1e6, "patch-p50-us")
		b.ReportMetric(m2.Seconds()*1e6, "patch-max-us")
	})
	b.Run("stp", func(b *testing.B) {
		for b.Loop() {
			f, err := stp.NewFabric(g, nil)
			if err != nil {
				b.Fatal(err)
			}
			// 802.1D needs 2 x forward delay (30 s) to converge first.
			st, _ = outage(b, f, g, 35*element.Second, 60*element.Second, false)
		}
		b.ReportMetric(st.Seconds()*1000, "outage-ms")
	})
	if dn > 0 {
		b.Logf("outage dumbnet %v, stp %v: %.0fx shorter", dn, st, float64(st)/float64(dn))
	}
}
