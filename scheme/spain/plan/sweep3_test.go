package plan

import (
	"bytes"
	"testing"

	"github.com/edgefabric/edgefabric/topo"
)

// Tests written in a third mutation sweep of this package: each pins a
// behaviour that some small change to the code left unnoticed by every
// other test (plan_test.go, mutation_test.go, sweep2_test.go, ...).

// Verify names the pair whose path is broken, not the first pair: on
// FatTree(4) pair 5, (e2, e3), gets pair 0's path, which starts elsewhere.
func TestVerifyNamesTheBrokenPair(t *testing.T) {
	p := compute(t, "fattree:4", Options{Trials: 1, Seed: 1})
	first := append([]topo.LinkID(nil), p.PS.Path(0)...)
	p.PS = withPaths(p.PS, func(pair int, ls [][]topo.LinkID) [][]topo.LinkID {
		if pair == 5 {
			return [][]topo.LinkID{first}
		}
		return ls
	})
	g, pr := p.F.G, p.PS.Pairs[5]
	want := "plan: plan failed verification: pair " + g.Node(pr.A).Name + "-" + g.Node(pr.B).Name +
		" has no path, or one that is not a walk between them over fabric links"
	if err := p.Verify(); err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

// A list of one entry closes on a line of its own, like longer ones: the
// deployment files of a single switch with two hosts, byte for byte.
func TestOneEntryListsJSON(t *testing.T) {
	b := topo.NewBuilder("one")
	s := b.AddNode("s1", topo.Switch)
	for _, h := range []string{"h1", "h2"} {
		b.Connect(s, b.AddNode(h, topo.Host))
	}
	p := computeBuilt(t, b)
	var dep, reach bytes.Buffer
	if err := p.Deployment().WriteJSON(&dep); err != nil {
		t.Fatal(err)
	}
	if err := p.Reach().WriteJSON(&reach); err != nil {
		t.Fatal(err)
	}
	wantDep := `{
  "topology": "one",
  "switches": [
    {"name": "s1", "vlans": [1],
     "ports": [
      {"port":1,"peer":"h1:1","host_port":true,"untagged":1,"tagged":[]},
      {"port":2,"peer":"h2:1","host_port":true,"untagged":1,"tagged":[]}]}
  ]
}
`
	wantReach := `{
  "topology": "one",
  "edges": [
    {"edge":"s1","vlans":[{"id":1,"tree":"s1"}]}
  ]
}
`
	if dep.String() != wantDep || reach.String() != wantReach {
		t.Fatalf("switches.json:\n%s\nwant\n%s\nvreach.json:\n%s\nwant\n%s", dep.String(), wantDep, reach.String(), wantReach)
	}
}
