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
// other run-time state live in the engines, not here. Adjacency is a CSR
// array (a few bytes per port), so graphs of 100,000+ nodes stay small.
//
// # Generators and specs
//
// Parse builds a topology from a spec string, with the seeds'
// parameterization: "fattree:4", "leafspine:2,5,5", "hyperx:3",
// "bcube:8,2", "ciscodc:2,2", "cube:8,8,8", "torus:4,4,4",
// "jellyfish:N,K,R", "line:3", "ring:3", and the seeds' own figures
// "spain-fig2", "spain-testbed", "dumbnet-fig1", "dumbnet-testbed" (Specs
// lists them). The generator functions (FatTree, LeafSpine, HyperX, BCube,
// CiscoDC, Cube, Torus, Jellyfish, Line, Ring) are the same code. Switches
// are named s1..sN and hosts h1..hN in NodeID order unless the topology
// names them; Node.Role says "core", "agg", "edge", "spine", "leaf", ...;
// on every switch the host ports come first.
//
// # Files
//
// Load reads the native YAML/JSON format, containerlab topology files and
// GraphML (Internet Topology Zoo graphs included); Resolve takes either a
// spec or a file name. Export writes YAML, JSON, containerlab, GraphML and
// Graphviz DOT. Errors name the file, the line and the field on one line:
//
//	topo: lab.yaml:12: links[3].b: unknown node: "s9"
//
// # Metrics
//
// Stats reports switches, hosts, fabric links (both ends forward: switch to
// switch, and the links of relaying hosts such as BCube servers), host
// links, the diameter in switch hops, the largest degree and a bisection
// bandwidth estimate; docs/topology.md explains how each is computed.
package topo
