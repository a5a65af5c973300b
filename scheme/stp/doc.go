// Package stp is edgefabric's baseline fabric scheme: Ethernet learning
// bridges running the IEEE 802.1D-1998 spanning tree algorithm and
// protocol, the design every seed paper compares itself with.
//
// A Bridge is an element.Element. It learns source addresses into a MAC
// table with aging, forwards known unicast to the learned port, floods
// unknown and group destinations to every forwarding port but the input
// one, and never relays the link-local group addresses
// 01:80:C2:00:00:00..0F. The spanning tree runs over real BPDUs on the
// wire (802.3 length, LLC 42-42-03, to 01:80:C2:00:00:00; BPDU and
// AppendFrame/DecodeFrame): root election by bridge identifier, root,
// designated and blocked ports, the blocking, listening, learning and
// forwarding states, the hello, max age, forward delay and hold timers,
// message age, topology change notification and acknowledgment, and the
// short aging (forward delay) of the MAC table while a topology change is
// signalled. The protocol code follows the standard's procedural model
// (clause 8.6–8.8) procedure for procedure.
//
// With Config.Protocol = ProtocolRSTP (the scheme parameter protocol=rstp)
// a bridge runs the Rapid Spanning Tree Protocol of 802.1D-2004 clause 17
// instead (rstp.go): RST BPDUs, alternate and backup ports, the proposal
// and agreement handshake, edge detection, immediate MAC table flushes on
// a topology change, and per-port fallback to 802.1D-1998 BPDUs.
//
// On a topology, Register adds the scheme "stp" to a scheme.Registry and
// NewFabric builds a bridge for every switch and relaying host, with the
// bridge identifier made of the priority and topo.BridgeMAC(node), and
// port path costs from link rates (802.1D-1998 Table 8-5). Plain hosts get
// no element: their NICs are cabled straight to bridge ports. Parameters
// (Params) set the timers, priorities (all, or one node's), single ports'
// path costs, MAC table aging and size, and optional PortFast-style edge
// ports.
//
// Bridge.Ready (emu.Readier) says whether the tree has settled on the
// bridge: no port listening or learning.
//
// For tests and reports, Bridge.Status gives the root, the root port and
// every port's role, state and designated information; Fabric.CheckTree
// verifies that the forwarding ports form exactly one spanning tree that
// carries every host, Fabric.Path gives the links a frame crosses between
// two nodes, and Fabric.Statuses reports every bridge as JSON-ready values. Bridges count what they do (element.Counters):
// frames forwarded and flooded, drops by reason (blocked port, malformed
// BPDU, bad source, ...), BPDUs sent and received, MAC table events and
// topology changes. docs/stp.md describes the choices the standard leaves
// open.
package stp
