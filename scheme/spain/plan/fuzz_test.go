package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/edgefabric/edgefabric/paths"
	"github.com/edgefabric/edgefabric/topo"
)

// FuzzCompute builds a small arbitrary topology from the input (switches,
// hosts, links between any two nodes) and plans it: the planner must
// either refuse it with an error or return a plan that passes Verify,
// covers every path, derives the deployment and V_reach that a direct
// computation gives, and writes JSON that parses. It must never panic.
func FuzzCompute(f *testing.F) {
	f.Add([]byte{3, 2, 0, 1, 1, 2, 0, 3, 2, 4}, uint8(2))
	f.Add([]byte{4, 4, 0, 1, 1, 2, 2, 3, 3, 0, 0, 4, 1, 5, 2, 6, 3, 7, 0, 2}, uint8(3))
	f.Add([]byte{1, 0}, uint8(1))
	f.Add([]byte{1, 2, 0, 1, 0, 2}, uint8(0)) // one switch, two hosts
	f.Fuzz(func(t *testing.T, data []byte, k uint8) {
		if len(data) < 2 {
			return
		}
		ns, nh := int(data[0]%8)+1, int(data[1]%8)
		b := topo.NewBuilder("fuzz")
		var ids []topo.NodeID
		for i := range ns {
			ids = append(ids, b.AddNode(fmt.Sprintf("s%d", i+1), topo.Switch))
		}
		for i := range nh {
			ids = append(ids, b.AddNode(fmt.Sprintf("h%d", i+1), topo.Host))
		}
		rest := data[2:]
		for i := 0; i+1 < len(rest) && i < 64; i += 2 {
			a, c := ids[int(rest[i])%len(ids)], ids[int(rest[i+1])%len(ids)]
			if a != c {
				b.Connect(a, c)
			}
		}
		g, err := b.Graph()
		if err != nil {
			return
		}
		// k also picks the tie rule: k%5 is K, k/5%4 the rule (all four).
		opt := Options{K: int(k % 5), Trials: 2, Seed: 1, Workers: 2, Ties: paths.Ties(k / 5 % 4)}
		p, err := Compute(g, opt)
		if errors.Is(err, paths.ErrNoHosts) || errors.Is(err, paths.ErrDisconnected) {
			return // the generator's bad topologies: refused, as they must be
		}
		if err != nil {
			t.Fatal(err) // a failed verification above all
		}
		if err := p.Verify(); err != nil {
			t.Fatal(err)
		}
		// Pruning never needs more VLANs than the unpruned plan, and says
		// how many it deleted from the trial it kept (which, when every
		// trial is pruned, need not be the unpruned plan's best trial).
		opt.NoPrune = true
		raw, err := Compute(g, opt)
		if err != nil {
			t.Fatal(err)
		}
		pk := p.Packing
		if raw.Packing.Pruned != 0 || p.NumVLANs > raw.NumVLANs || p.NumVLANs+pk.Pruned != pk.TrialVLANs[pk.BestTrial] {
			t.Fatalf("pruned plan %d VLANs (trial %d: %d, pruned %d), unpruned %d", p.NumVLANs, pk.BestTrial, pk.TrialVLANs[pk.BestTrial], pk.Pruned, raw.NumVLANs)
		}
		if !(p.Coverage >= 0 && p.Coverage <= 1 && p.STPCoverage >= 0 && p.STPCoverage <= p.Coverage) {
			t.Fatalf("coverage %v, STP %v", p.Coverage, p.STPCoverage)
		}
		// Every port tagged for exactly its link's VLANs, host ports for
		// every VLAN of their switch, V_reach as a search inside each VLAN
		// finds it.
		checkDeployment(t, p, false)
		ncp, err := p.NCP(0.5, 2, 1)
		if err != nil {
			t.Fatal(err)
		}
		// The streamed JSON must parse and carry every VLAN.
		var buf bytes.Buffer
		if err := p.WriteJSON(&buf, &ncp); err != nil {
			t.Fatal(err)
		}
		var back struct {
			NumVLANs int    `json:"num_vlans"`
			VLANs    []VLAN `json:"vlans"`
			NCP      *NCP   `json:"ncp"`
		}
		if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
			t.Fatalf("plan JSON does not parse: %v\n%s", err, buf.String())
		}
		if back.NumVLANs != len(p.VLANs) || len(back.VLANs) != len(p.VLANs) || back.NCP == nil {
			t.Fatalf("plan JSON: %d of %d VLANs, num_vlans %d, ncp %v", len(back.VLANs), len(p.VLANs), back.NumVLANs, back.NCP)
		}
	})
}
