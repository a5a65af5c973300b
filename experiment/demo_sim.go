package experiment

import (
	"encoding/binary"
	"fmt"
	"slices"

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

	// Bulk TCP between two pods with a probe stream beside it; a second
	// in, fail a switch-to-switch link that both cross: the middle one of
	// those the two paths share (on a fat tree, when the streams take one
	// path, the third of four: core to aggregation in the destination
	// pod). The source's agent hashes each flow onto one of its k paths,
	// so the streams may share none: then the middle link of the probes'
	// path fails, where the outage is measured, and the report says so.
	src, dst := farHosts(g)
	sn, dn := g.Node(src).Name, g.Node(dst).Name
	smac, sip, _ := g.HostAddr(src)
	dmac, dip, _ := g.HostAddr(dst)
	agent := f.Agent(src)
	e := agent.PathTable().Lookup(wire.MAC(dmac))
	if e == nil || len(e.Paths) == 0 {
		return fmt.Errorf("demo: %s has no path to %s after the pings", sn, dn)
	}
	if _, err := tagLinks(g, src, e.Paths[0]); err != nil {
		return err
	}
	var fail topo.LinkID
	var failErr error
	streamLinks := func(proto byte, sport, dport uint16) ([]topo.LinkID, error) {
		path := agent.FlowPath(flowFrame(smac, dmac, sip.Addr().As4(), dip.Addr().As4(), proto, sport, dport))
		if path == nil {
			return nil, fmt.Errorf("demo: %s has no path to %s", sn, dn)
		}
		return tagLinks(g, src, path)
	}

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
		pl, err := streamLinks(17, probe.Result().SrcPort, demoProbePort)
		if err != nil {
			failErr = err
			s.Stop()
			return
		}
		bl, err := streamLinks(6, bulk.Flow().LocalPort, demoBulkPort)
		if err != nil {
			failErr = err
			s.Stop()
			return
		}
		var shared []topo.LinkID
		for _, l := range pl {
			if slices.Contains(bl, l) {
				shared = append(shared, l)
			}
		}
		if rep.FailedLinkOnIperf = len(shared) > 0; rep.FailedLinkOnIperf {
			fail = shared[len(shared)/2]
		} else {
			fail = pl[len(pl)/2]
		}
		if err := s.SetLink(fail, false); err != nil {
			failErr = err
			s.Stop()
		}
	})
	s.At(start+demoRun, func() { acked = bulk.BytesAcked() })
	s.Run(start + demoRun + 100*element.Millisecond)
	if err := s.Err(); err != nil {
		return err
	}
	if failErr != nil {
		return failErr
	}
	lk := g.Link(fail)
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

// flowFrame is the start of an IPv4 TCP or UDP frame of the flow: what an
// agent's flow hash reads (addresses, protocol, ports), for FlowPath.
func flowFrame(src, dst [6]byte, sip, dip [4]byte, proto byte, sport, dport uint16) []byte {
	f := make([]byte, 14+20+4)
	copy(f[0:6], dst[:])
	copy(f[6:12], src[:])
	binary.BigEndian.PutUint16(f[12:14], uint16(wire.EtherTypeIPv4))
	ip := f[14:]
	ip[0] = 0x45 // version 4, 20-byte header
	ip[9] = proto
	copy(ip[12:16], sip[:])
	copy(ip[16:20], dip[:])
	binary.BigEndian.PutUint16(ip[20:22], sport)
	binary.BigEndian.PutUint16(ip[22:24], dport)
	return f
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
