package emu

import (
	"fmt"
	"net"
	"reflect"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// Status is a snapshot of a lab, as "edgefabric status --json" prints it.
type Status struct {
	Name     string       `json:"name"`
	Scheme   string       `json:"scheme"`
	Topology string       `json:"topology"`
	Pid      int          `json:"pid,omitempty"`
	Started  time.Time    `json:"started"`
	Uptime   string       `json:"uptime"`
	Ready    bool         `json:"ready"`
	NotReady string       `json:"not_ready,omitempty"`
	Nodes    []NodeStatus `json:"nodes"`
	Links    []LinkStatus `json:"links"`
}

// NodeStatus describes one node.
type NodeStatus struct {
	Name      string            `json:"name"`
	Kind      string            `json:"kind"`
	Namespace string            `json:"namespace"`
	IP        string            `json:"ip,omitempty"`
	MAC       string            `json:"mac,omitempty"`
	Element   string            `json:"element,omitempty"` // the element's Go type, "kernel-bridge", or "" for a plain host
	Counters  map[string]uint64 `json:"counters,omitempty"`
	Ports     []PortStatus      `json:"ports,omitempty"`
}

// PortStatus is one port of a node running an element or a kernel bridge.
type PortStatus struct {
	Port      element.Port `json:"port"`
	Interface string       `json:"interface"`
	Up        bool         `json:"up"`
	Local     bool         `json:"local,omitempty"`
	STP       string       `json:"stp,omitempty"` // spanning-tree port state: the kernel bridge's, or the stp element's state/role
	RxFrames  uint64       `json:"rx_frames"`
	RxBytes   uint64       `json:"rx_bytes"`
	TxFrames  uint64       `json:"tx_frames"`
	TxBytes   uint64       `json:"tx_bytes"`
	// Drops and errors, by reason; absent when zero.
	Drops map[string]uint64 `json:"drops,omitempty"`
}

// LinkStatus is one link.
type LinkStatus struct {
	A     string `json:"a"`
	APort int    `json:"a_port"`
	AIf   string `json:"a_if"`
	B     string `json:"b"`
	BPort int    `json:"b_port"`
	BIf   string `json:"b_if"`
	Up    bool   `json:"up"`
	Rate  int64  `json:"rate"` // the topology's rate, b/s
	// ShapedRate is the rate tbf holds the link to (up --rate), b/s;
	// absent when the link is not shaped.
	ShapedRate int64 `json:"shaped_rate,omitempty"`
	// DelayNs is the delay the emulator applies to each direction (up
	// --delay), ns; absent when none.
	DelayNs int64 `json:"delay_ns,omitempty"`
}

// Status returns a snapshot of the lab: nodes, per-port traffic and drops,
// the elements' own counters (element.CounterReporter, read on the element's
// goroutine), kernel bridge port states, and link states.
func (l *Lab) Status() Status {
	st := Status{
		Name:     l.name,
		Scheme:   l.scheme,
		Topology: l.opts.Topology,
		Started:  l.start.UTC(),
		Uptime:   time.Since(l.start).Round(time.Millisecond).String(),
	}
	if st.Topology == "" {
		st.Topology = l.g.Name
	}
	if !l.hold() {
		st.NotReady = ErrLabDown.Error()
		return st
	}
	defer l.release()
	st.NotReady = l.notReady()
	st.Ready = st.NotReady == ""
	for _, ln := range l.nodes {
		ns := NodeStatus{Name: ln.name, Kind: ln.kind.String(), Namespace: ln.ns}
		if ln.kind == topo.Host {
			ns.IP = ln.ip.String()
			ns.MAC = net.HardwareAddr(ln.mac[:]).String()
		}
		switch {
		case ln.bridge:
			ns.Element = KernelBridge
			states, _ := l.bridgeStates(ln)
			for i, name := range ln.ifnames {
				if name == "" {
					continue
				}
				ps := PortStatus{Port: element.Port(i + 1), Interface: name, Up: l.portUp(ln, element.Port(i+1))}
				if s, ok := states[name]; ok {
					ps.STP = BridgePortStateName(s)
				}
				l.kernelCounters(ln, name, &ps)
				ns.Ports = append(ns.Ports, ps)
			}
		case ln.run != nil:
			ns.Element = reflect.TypeOf(ln.el).String()
			if cr, ok := ln.el.(element.CounterReporter); ok {
				// A late answer (do gave up) goes to c, which is
				// never read then: never into ns, already returned.
				var c map[string]uint64
				if ln.run.do(func() { c = cr.Counters() }, 2*time.Second) {
					ns.Counters = c
				}
			}
			var states map[element.Port]string
			if sr, ok := ln.el.(element.PortStateReporter); ok {
				var m map[element.Port]string
				if ln.run.do(func() { m = sr.PortStateNames() }, 2*time.Second) {
					states = m
				}
			}
			if n := ln.run.badPort.Load(); n > 0 {
				if ns.Counters == nil {
					ns.Counters = map[string]uint64{}
				}
				ns.Counters["engine_tx_drop_bad_port"] += n
			}
			for i, pi := range ln.run.ports {
				if pi.Name == "" || (!pi.Local && ln.ifnames[i] == "") {
					continue
				}
				s := &ln.run.stats[i]
				ps := PortStatus{
					Port: pi.Port, Interface: pi.Name, Local: pi.Local, Up: ln.run.up[i].Load(),
					RxFrames: s.rxFrames.Load(), RxBytes: s.rxBytes.Load(),
					TxFrames: s.txFrames.Load(), TxBytes: s.txBytes.Load(),
					STP: states[pi.Port],
				}
				d := map[string]uint64{
					"rx_oversize": s.rxDropOversize.Load(), "rx_runt": s.rxDropRunt.Load(),
					"rx_error": s.rxErrors.Load(), "tx_link_down": s.txDropDown.Load(), "tx_error": s.txErrors.Load(),
				}
				if i < len(ln.run.ios) && ln.run.ios[i] != nil {
					if dp, ok := ln.run.ios[i].(*delayedPort); ok {
						// Frames the delay line took and then could not
						// write (the link failed meanwhile), or found full.
						d["tx_error"] += dp.lateErrs.Load()
						d["rx_delay_full"] = dp.inFull.Load()
						// Frames in flight when the link failed.
						d["tx_link_down"] += dp.out.flushed.Load()
						if dp.in != nil {
							d["rx_link_down"] = dp.in.flushed.Load()
						}
					}
				}
				if i < len(ln.pports) && ln.pports[i] != nil {
					// PACKET_STATISTICS resets on read: accumulate.
					if _, drops, err := ln.pports[i].stats(); err == nil {
						s.kernelDrops.Add(uint64(drops))
					}
					d["rx_socket_full"] = s.kernelDrops.Load()
				}
				if pi.Local && ln.nl != nil {
					// The TAP's frames wait in the tun queue (500
					// frames); when the agent does not read them fast
					// enough, tun drops them and counts them as the
					// device's tx drops (cumulative).
					if lk, err := ln.nl.LinkByName(pi.Name); err == nil && lk.Attrs().Statistics != nil {
						d["rx_socket_full"] = lk.Attrs().Statistics.TxDropped
					}
				}
				for k, v := range d {
					if v > 0 {
						if ps.Drops == nil {
							ps.Drops = map[string]uint64{}
						}
						ps.Drops[k] = v
					}
				}
				ns.Ports = append(ns.Ports, ps)
			}
		}
		st.Nodes = append(st.Nodes, ns)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := 0; i < l.g.NumLinks(); i++ {
		lk := l.g.Link(topo.LinkID(i))
		a, b := l.nodes[lk.A.Node], l.nodes[lk.B.Node]
		st.Links = append(st.Links, LinkStatus{
			A: a.name, APort: int(lk.A.Port), AIf: a.ifnames[lk.A.Port-1],
			B: b.name, BPort: int(lk.B.Port), BIf: b.ifnames[lk.B.Port-1],
			Up: l.links[i], Rate: lk.Rate, ShapedRate: shapedRate(l.g, topo.LinkID(i), l.opts),
			DelayNs: l.linkDelay(topo.LinkID(i)).Nanoseconds(),
		})
	}
	return st
}

func (l *Lab) portUp(ln *labNode, p element.Port) bool {
	lid, ok := l.g.PortLink(ln.id, p)
	if !ok {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.links[lid]
}

// kernelCounters fills a kernel bridge port's counters from the
// interface's statistics.
func (l *Lab) kernelCounters(ln *labNode, name string, ps *PortStatus) {
	lk, err := ln.nl.LinkByName(name)
	if err != nil || lk.Attrs().Statistics == nil {
		return
	}
	s := lk.Attrs().Statistics
	ps.RxFrames, ps.RxBytes, ps.TxFrames, ps.TxBytes = s.RxPackets, s.RxBytes, s.TxPackets, s.TxBytes
	if s.RxDropped+s.TxDropped > 0 {
		ps.Drops = map[string]uint64{"rx_dropped": s.RxDropped, "tx_dropped": s.TxDropped}
	}
}

// String summarizes a status in a few lines, for the CLI.
func (s Status) String() string {
	up := 0
	for _, l := range s.Links {
		if l.Up {
			up++
		}
	}
	ready := "ready"
	if !s.Ready {
		ready = "not ready: " + s.NotReady
	}
	return fmt.Sprintf("lab %s: scheme %s on %s, %d nodes, %d/%d links up, %s, up %s", s.Name, s.Scheme, s.Topology, len(s.Nodes), up, len(s.Links), ready, s.Uptime)
}

// LinkTxFrames returns, for every link keep accepts (given its two end
// nodes), the frames both ends have sent: a cheap way to find which links a
// traffic stream crosses. Parallel links between two nodes (SetLink fails
// them together) add up under their one key.
func (s Status) LinkTxFrames(keep func(a, b string) bool) map[[2]string]uint64 {
	tx := map[string]map[int]uint64{}
	for _, n := range s.Nodes {
		tx[n.Name] = map[int]uint64{}
		for _, p := range n.Ports {
			tx[n.Name][int(p.Port)] = p.TxFrames
		}
	}
	out := map[[2]string]uint64{}
	for _, lk := range s.Links {
		if !keep(lk.A, lk.B) {
			continue
		}
		out[[2]string{lk.A, lk.B}] += tx[lk.A][lk.APort] + tx[lk.B][lk.BPort]
	}
	return out
}
