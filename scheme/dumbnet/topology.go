package dumbnet

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// SwitchID returns the unique ID of the switch on node n: its bridge
// address (topo.BridgeMAC) read as a 48-bit number. The controller never
// reads it from the graph; it learns it from the switch's answer to a
// tag-0 query.
func SwitchID(n topo.NodeID) uint64 {
	m := topo.BridgeMAC(n)
	var v uint64
	for _, b := range m {
		v = v<<8 | uint64(b)
	}
	return v
}

// Topology is a fabric as the controller sees it: switches by ID, links
// with both port numbers, and hosts with where they attach. Lists are
// sorted so that two topologies compare with Diff.
//
// Down lists the switches the controller holds failed, every link of them
// down (DumbNet §4.2: "if a DumbNet switch fails, all the neighbor
// switches will report link failure, and the switch will be removed from
// the topology"); they are not in Switches. Their links stay in Links,
// down, and their hosts in Hosts: a switch comes back, with what hangs off
// it, once a link of it is found working again.
type Topology struct {
	Switches []uint64  `json:"switches"`
	Down     []uint64  `json:"down,omitempty"`
	Links    []Link    `json:"links"`
	Hosts    []HostLoc `json:"hosts"`
}

// Link is a switch-to-switch link; A is the end with the lower (switch,
// port).
type Link struct {
	A     uint64 `json:"a"`
	APort uint16 `json:"a_port"`
	B     uint64 `json:"b"`
	BPort uint16 `json:"b_port"`
	Up    bool   `json:"up"`
}

// HostLoc is a host and where it attaches.
type HostLoc struct {
	MAC    wire.MAC   `json:"mac"`
	IP     netip.Addr `json:"ip"`
	Switch uint64     `json:"switch"`
	Port   uint16     `json:"port"`
}

func normLink(l Link) Link {
	if l.B < l.A || (l.A == l.B && l.BPort < l.APort) {
		l.A, l.APort, l.B, l.BPort = l.B, l.BPort, l.A, l.APort
	}
	return l
}

func (t *Topology) sort() {
	slices.Sort(t.Switches)
	slices.Sort(t.Down)
	for i := range t.Links {
		t.Links[i] = normLink(t.Links[i])
	}
	slices.SortFunc(t.Links, func(x, y Link) int {
		return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.APort, y.APort), cmp.Compare(x.B, y.B), cmp.Compare(x.BPort, y.BPort))
	})
	slices.SortFunc(t.Hosts, func(x, y HostLoc) int {
		for i := range x.MAC {
			if c := cmp.Compare(x.MAC[i], y.MAC[i]); c != 0 {
				return c
			}
		}
		return 0
	})
}

// Expected is the topology the controller should discover on g: every
// switch with its ID, every switch-to-switch link with both ports, every
// host with its address-plan MAC and IP and the switch port its first NIC
// is cabled to. It is what tests and the demo compare discovery against.
func Expected(g *topo.Graph) (*Topology, error) {
	t := &Topology{}
	for _, n := range g.Nodes(topo.Switch) {
		t.Switches = append(t.Switches, SwitchID(n))
	}
	for l := range g.NumLinks() {
		lk := g.Link(topo.LinkID(l))
		ka, kb := g.Node(lk.A.Node).Kind, g.Node(lk.B.Node).Kind
		switch {
		case ka == topo.Switch && kb == topo.Switch:
			t.Links = append(t.Links, Link{A: SwitchID(lk.A.Node), APort: uint16(lk.A.Port), B: SwitchID(lk.B.Node), BPort: uint16(lk.B.Port), Up: true})
		}
	}
	for _, h := range g.Nodes(topo.Host) {
		mac, ip, err := g.HostAddr(h)
		if err != nil {
			return nil, err
		}
		nic, ok := firstNIC(g, h)
		if !ok {
			continue // an unconnected host cannot be discovered
		}
		if g.Node(nic.Node).Kind != topo.Switch {
			continue
		}
		t.Hosts = append(t.Hosts, HostLoc{MAC: mac, IP: ip.Addr(), Switch: SwitchID(nic.Node), Port: uint16(nic.Port)})
	}
	t.sort()
	return t, nil
}

// firstNIC returns the switch end of host h's lowest-numbered cabled NIC.
func firstNIC(g *topo.Graph, h topo.NodeID) (topo.End, bool) {
	for i := range g.Ports(h) {
		if e, ok := g.Peer(h, topo.Port(i+1)); ok {
			return e, true
		}
	}
	return topo.End{}, false
}

// Diff lists the differences between t (discovered) and want, one line
// each; none means the topologies are equal.
func (t *Topology) Diff(want *Topology) []string {
	var d []string
	diffSets(&d, "switch", t.Switches, want.Switches, func(a, b uint64) int { return cmp.Compare(a, b) }, func(v uint64) string { return fmt.Sprintf("%#x", v) })
	diffSets(&d, "down switch", t.Down, want.Down, func(a, b uint64) int { return cmp.Compare(a, b) }, func(v uint64) string { return fmt.Sprintf("%#x", v) })
	diffSets(&d, "link", t.Links, want.Links, func(x, y Link) int {
		return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.APort, y.APort), cmp.Compare(x.B, y.B), cmp.Compare(x.BPort, y.BPort), cmpBool(x.Up, y.Up))
	}, func(l Link) string { return fmt.Sprintf("%#x:%d-%#x:%d up=%v", l.A, l.APort, l.B, l.BPort, l.Up) })
	diffSets(&d, "host", t.Hosts, want.Hosts, func(x, y HostLoc) int {
		return cmp.Or(slices.Compare(x.MAC[:], y.MAC[:]), x.IP.Compare(y.IP), cmp.Compare(x.Switch, y.Switch), cmp.Compare(x.Port, y.Port))
	}, func(h HostLoc) string { return fmt.Sprintf("%v %v at %#x:%d", h.MAC, h.IP, h.Switch, h.Port) })
	return d
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

func diffSets[T any](d *[]string, what string, got, want []T, c func(a, b T) int, s func(T) string) {
	for _, g := range got {
		if !slices.ContainsFunc(want, func(w T) bool { return c(g, w) == 0 }) {
			*d = append(*d, "extra "+what+" "+s(g))
		}
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g T) bool { return c(g, w) == 0 }) {
			*d = append(*d, "missing "+what+" "+s(w))
		}
	}
}
