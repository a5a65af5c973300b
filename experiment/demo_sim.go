package experiment

import (
	"fmt"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/host"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/sim"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// The simulated demo runs the emulator's scenario on the simulated host
// stack: iperf3 becomes the TCP model's bulk transfer, and the outage is
// measured with a 1 ms UDP probe stream (the emulator uses ping at 1 ms).
const (
	demoRun       = 3 * element.Second // bulk transfer and probe stream
	demoFailAfter = 1 * element.Second // link failure, from the start of the run
	demoProbeSize = 1000               // bytes per UDP probe
	demoProbeRate = demoProbeSize * 8 * 1000
	demoProbeGap  = element.Millisecond
	demoBulkPort  = 5001
	demoProbePort = 7000
)

func demoSim(g *topo.Graph, o DemoOptions, rep *DemoReport, want *dumbnet.Topology) error {
	f, err := dumbnet.New(g, scheme.Options{Seed: o.Seed})
	if err != nil {
		return err
	}
	s, err := sim.New(g, sim.Options{Seed: o.Seed})
	if err != nil {
		return err
	}
	hosts := map[topo.NodeID]*host.Host{}
	for i := range g.NumNodes() {
		n := topo.NodeID(i)
		if g.Node(n).Kind != topo.Host {
			if err := s.Place(n, f.Element(n)); err != nil {
				return err
			}
			continue
		}
		mac, ip, err := g.HostAddr(n)
		if err != nil {
			return err
		}
		h := host.New(host.Config{Name: g.Node(n).Name, MAC: mac, IP: ip})
		hosts[n] = h
		if err := s.PlaceHost(n, f.Element(n), h); err != nil {
			return err
		}
	}

	// Discovery: the controller probes the fabric from its host.
	o.step("simulating DumbNet on %s: %d switches, %d hosts", o.Topology, rep.ExpectedSwitches, rep.ExpectedHosts)
	c := f.Controller()
	for !c.Done() {
		if s.Now() > 30*element.Second {
			return fmt.Errorf("demo: discovery not finished after %v of simulated time", s.Now())
		}
		s.Run(s.Now() + element.Millisecond)
	}
	rep.DiscoveryMS = float64(c.DoneAt()) / float64(element.Millisecond)
	rep.DiscoveryProbes = c.Probes()
	o.recordDiscovery(rep, c.Topology(), want)

	// All pairs ping: two echo requests per ordered pair; a pair answers
	// if either does (the first may wait for ARP and a path query).
	type pingRun struct {
		a, b topo.NodeID
		app  *host.PingApp
	}
	var runs []pingRun
	hs := g.Nodes(topo.Host)
	s.At(s.Now(), func() {
		for _, a := range hs {
			for _, b := range hs {
				if a == b {
					continue
				}
				_, ip, _ := g.HostAddr(b)
				app := hosts[a].PingWith(ip.Addr(), host.PingOptions{Count: 2, Interval: 100 * element.Millisecond, Timeout: 500 * element.Millisecond})
				runs = append(runs, pingRun{a, b, app})
			}
		}
	})
	s.Run(s.Now() + 2*element.Second)
	for _, r := range runs {
		rep.PingPairsTotal++
		if r.app.Result().Received > 0 {
			rep.PingPairsOK++
		} else {
			rep.PingFailed = append(rep.PingFailed, g.Node(r.a).Name+"->"+g.Node(r.b).Name)
		}
	}
	rep.done = DemoPing
	o.step("ping: %d/%d host pairs answer", rep.PingPairsOK, rep.PingPairsTotal)

	// Bulk TCP between two pods with a probe stream beside it; fail the
	// middle switch-to-switch link of the path the source's agent uses
	// (the third of four on a fat tree: core to aggregation in the
	// destination pod) a second in.
	src, dst := farHosts(g)
	sn, dn := g.Node(src).Name, g.Node(dst).Name
	dmac, dip, _ := g.HostAddr(dst)
	_, sip, _ := g.HostAddr(src)
	e := f.Agent(src).PathTable().Lookup(wire.MAC(dmac))
	if e == nil || len(e.Paths) == 0 {
		return fmt.Errorf("demo: %s has no path to %s after the pings", sn, dn)
	}
	links, err := tagLinks(g, src, e.Paths[0])
	if err != nil {
		return err
	}
	fail := links[len(links)/2]
	lk := g.Link(fail)

	start := s.Now()
	var bulk *host.TCPConn
	var acked int64
	// Two probe streams, one after the other, so that the outage counts
	// only probes sent from just before the failure on: the first
	// milliseconds of the bulk flow (slow start) can overflow the
	// source's queue and cost a probe or two, which is not failover.
	var probe *host.UDPApp
	s.At(start, func() {
		bulk = hosts[src].TCPBulk(dip.Addr(), demoBulkPort, 1<<40) // more than the run can carry
		hosts[src].UDP(dip.Addr(), demoProbePort, demoProbeRate, demoProbeSize, demoFailAfter-demoProbeGap)
	})
	s.At(start+demoFailAfter-demoProbeGap, func() {
		probe = hosts[src].UDP(dip.Addr(), demoProbePort, demoProbeRate, demoProbeSize, demoRun-demoFailAfter+demoProbeGap)
	})
	s.At(start+demoFailAfter, func() {
		if err := s.SetLink(fail, false); err != nil {
			s.Stop()
		}
	})
	s.At(start+demoRun, func() { acked = bulk.BytesAcked() })
	s.Run(start + demoRun + 100*element.Millisecond)
	if err := s.Err(); err != nil {
		return err
	}
	rep.IperfFrom, rep.IperfTo = sn, dn
	rep.Iperf3Mbps = float64(acked) * 8 / demoRun.Seconds() / 1e6
	rep.FailedLink = [2]string{g.Node(lk.A.Node).Name, g.Node(lk.B.Node).Name}
	pr := probe.Result()
	fl, _ := hosts[dst].UDPFlow(sip.Addr(), pr.SrcPort, demoProbePort)
	rep.FailoverSent = int(pr.Sent)
	rep.FailoverLost = int(pr.Sent - fl.Packets)
	rep.FailoverProbeMS = float64(demoProbeGap) / float64(element.Millisecond)
	rep.FailoverOutageMS = float64(rep.FailoverLost) * rep.FailoverProbeMS
	rep.Recovered = fl.Last > start+demoFailAfter
	rep.done = DemoIperf3 // the failover too: both measured in one run
	o.step("tcp %s -> %s: %.1f Mb/s; link %s-%s failed: outage %.1f ms, recovered %v",
		rep.IperfFrom, rep.IperfTo, rep.Iperf3Mbps, rep.FailedLink[0], rep.FailedLink[1], rep.FailoverOutageMS, rep.Recovered)
	return nil
}

// tagLinks walks a DumbNet tag path from host src's switch and returns the
// switch-to-switch links it crosses, in order.
func tagLinks(g *topo.Graph, src topo.NodeID, tags []uint8) ([]topo.LinkID, error) {
	e, ok := g.Peer(src, 1)
	if !ok {
		return nil, fmt.Errorf("demo: %s has no link", g.Node(src).Name)
	}
	var ls []topo.LinkID
	cur := e.Node
	for _, tag := range tags {
		if tag == 0xFF {
			break
		}
		l, ok := g.PortLink(cur, topo.Port(tag))
		if !ok {
			return nil, fmt.Errorf("demo: tag %d names no link on %s", tag, g.Node(cur).Name)
		}
		nx, _ := g.Peer(cur, topo.Port(tag))
		if g.Node(nx.Node).Kind == topo.Host {
			break
		}
		ls = append(ls, l)
		cur = nx.Node
	}
	if len(ls) == 0 {
		return nil, fmt.Errorf("demo: the path crosses no switch-to-switch link")
	}
	return ls, nil
}
