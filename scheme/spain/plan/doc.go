// Package plan is SPAIN's centralized, offline half
// (spain-cots-multipath.txt §4–§5): given a topology it computes the path
// sets (Algorithm 1), packs them into loop-free VLANs (Algorithm 2, VLAN 1
// being the default 802.1D spanning tree), verifies the result, and derives
// what deployment needs: per switch and per port the VLANs it is tagged for
// (§5.1), and the reachability map V_reach(es) hosts download at boot
// (§6.1). It also measures the plan as §8 does: link coverage against
// STP's tree and the no-connectivity pairs under random link failures.
//
//	p, err := plan.Compute(g, plan.Options{Trials: 10, Seed: 1}) // k = α
//	fmt.Println(p.NumVLANs, p.Coverage, p.STPCoverage)
//	_, err = p.WriteDir("out/", nil, false)    // switches.json, vreach.json, ...
//	ncp, err := p.NCP(0.04, 10, 1)
//
// `edgefabric plan spain TOPO` is the command-line face of this package;
// docs/spain-plan.md explains the definitions and every assumption.
package plan
