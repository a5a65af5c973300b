// Package paths holds the graph algorithms edgefabric's schemes plan with:
// the fabric view of a topology (forwarding nodes, fabric links, edge
// nodes), hop distances, the 802.1D spanning tree a bridged network elects,
// edge-disjoint path counts (max-flow), SPAIN's path sets (Algorithm 1 of
// spain-cots-multipath.txt §5.2) and SPAIN's VLAN packing (Algorithm 2,
// §5.3) with a parallel tree-cover variant (treecover.go) and a pruning
// pass that deletes VLANs whose paths fit into others (prune.go).
//
// Everything here is pure computation over a topo.Graph: no I/O, no clock,
// no global random source. Randomness comes from a seed, and results do not
// depend on how many goroutines computed them (one exception, in the
// diagnostics only: which first-fit and best-fit trials Pack abandons, -1
// in Packing.TrialVLANs, depends on which finished first; the packing it
// keeps does not).
//
// Typical use, as the SPAIN planner does it:
//
//	f, err := paths.NewFabric(g)             // fabric links, edge nodes
//	tree := paths.STP(f)                     // VLAN 1, the 802.1D tree
//	ps, err := paths.ComputePathSets(f, paths.PathOptions{K: 4, Seed: 1})
//	pk, err := paths.Pack(f, ps, tree.Links, paths.PackOptions{Trials: 10, Parallel: true})
//	paths.Prune(f, ps, pk)                   // delete VLANs whose paths fit elsewhere
//
// Paths are stored compactly: one []topo.LinkID for all paths, with uint32
// offsets, because FatTree(48) has 663,000 edge-switch pairs.
package paths
