package topo

import (
	"fmt"
	"net/netip"
)

// The address plan shared by both engines, so that a host has the same MAC
// and IP in the simulator and in the emulator, and captures from both read
// alike. All addresses are locally administered unicast MACs and 10.0.0.0/8,
// which only ever exists inside a lab's own namespaces.
//
//	host with host index k (1-based, in NodeID order among hosts):
//	    MAC 02:ef:KK:KK:KK:KK (k, 32 bits), IP 10.a.b.c/8 with a.b.c = k
//	node n's port p (switch ports, host NICs seen from the fabric side):
//	    MAC 06:NN:NN:NN:PP:PP (n = NodeID, 24 bits; p, 16 bits)
//	node n's bridge address (STP bridge ID, switch ID):
//	    MAC 06:NN:NN:NN:00:00
//
// A host's index is stable for a given graph: h1 of fattree:4 is host 1.

// HostIndex returns the 1-based index of host n among the graph's hosts, in
// NodeID order, or 0 when n is not a host.
func (g *Graph) HostIndex(n NodeID) int {
	if n < 0 || int(n) >= len(g.nodes) || g.nodes[n].Kind != Host {
		return 0
	}
	g.indexHosts()
	return int(g.hostIdx[n])
}

// indexHosts builds, once, the host index of every node and the host of
// every index, so that HostIndex and HostByIP are O(1).
func (g *Graph) indexHosts() {
	g.hostIdxOnce.Do(func() {
		g.hostIdx = make([]int32, len(g.nodes))
		k := int32(0)
		for i := range g.nodes {
			if g.nodes[i].Kind == Host {
				k++
				g.hostIdx[i] = k
				g.hostByIdx = append(g.hostByIdx, NodeID(i))
			}
		}
	})
}

// HostMAC returns the MAC address of the host with index k.
func HostMAC(k int) [6]byte {
	return [6]byte{0x02, 0xef, byte(k >> 24), byte(k >> 16), byte(k >> 8), byte(k)}
}

// HostIP returns the IPv4 address of the host with index k, in 10.0.0.0/8.
func HostIP(k int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, byte(k >> 16), byte(k >> 8), byte(k)})
}

// HostPrefixBits is the prefix length of every host address: one flat
// layer-2 subnet, as the seeds' fabrics are.
const HostPrefixBits = 8

// HostAddr returns host n's MAC and IP prefix under the address plan.
func (g *Graph) HostAddr(n NodeID) (mac [6]byte, ip netip.Prefix, err error) {
	k := g.HostIndex(n)
	if k == 0 {
		if n < 0 || int(n) >= len(g.nodes) {
			return mac, ip, fmt.Errorf("topo: %w: id %d", ErrUnknownNode, n)
		}
		return mac, ip, fmt.Errorf("topo: %q is not a host", g.nodes[n].Name)
	}
	if k >= 1<<24-1 {
		return mac, ip, fmt.Errorf("topo: host %q: index %d beyond the 10.0.0.0/8 plan", g.nodes[n].Name, k)
	}
	return HostMAC(k), netip.PrefixFrom(HostIP(k), HostPrefixBits), nil
}

// HostByIP returns the host whose plan address is ip.
func (g *Graph) HostByIP(ip netip.Addr) (NodeID, bool) {
	if !ip.Is4() {
		return -1, false
	}
	b := ip.As4()
	if b[0] != 10 {
		return -1, false
	}
	k := int(b[1])<<16 | int(b[2])<<8 | int(b[3])
	g.indexHosts()
	if k < 1 || k > len(g.hostByIdx) {
		return -1, false
	}
	return g.hostByIdx[k-1], true
}

// PortMAC returns the MAC address of port p of node n.
func PortMAC(n NodeID, p Port) [6]byte {
	return [6]byte{0x06, byte(n >> 16), byte(n >> 8), byte(n), byte(p >> 8), byte(p)}
}

// BridgeMAC returns node n's own address (port 0 of the plan): the STP
// bridge address, a switch's unique ID.
func BridgeMAC(n NodeID) [6]byte { return PortMAC(n, 0) }
