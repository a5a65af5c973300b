// Package topo is edgefabric's topology model: switches and hosts with ports
// numbered 1..N, full-duplex links with a rate and a propagation delay, and
// the generators, loaders and writers that produce and consume them.
//
// A Graph is immutable once built; build one with a Builder:
//
//	b := topo.NewBuilder("pair")
//	s := b.AddNode("s1", topo.Switch)
//	h := b.AddNode("h1", topo.Host)
//	b.Connect(s, h) // s1:1 <-> h1:1, 1 Gb/s, 1 µs
//	g, err := b.Graph()
//
// Nodes are addressed by NodeID (dense indices) and by stable names; a port
// is an End{Node, Port}. Engines and schemes read the graph; failures and
// other run-time state live in the engines, not here.
package topo
