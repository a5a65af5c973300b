package topo

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// clabNodeNamesSearch is clabNodeNames as it was: for every node whose
// name containerlab refuses, a search from -2 for a free suffix.
func clabNodeNamesSearch(g *Graph) []string {
	names := make([]string, len(g.nodes))
	taken := map[string]bool{}
	for s := range clabSpecial {
		taken[s] = true
	}
	for i := range g.nodes {
		if n := g.nodes[i].Name; !clabNodeRE.MatchString(n) && !taken[n] {
			names[i] = n
			taken[n] = true
		}
	}
	for i := range g.nodes {
		if names[i] != "" {
			continue
		}
		base := strings.Trim(clabNodeRE.ReplaceAllString(g.nodes[i].Name, "-"), "-")
		if base == "" {
			base = "node"
		}
		name := base
		for k := 2; taken[name]; k++ {
			name = base + "-" + strconv.Itoa(k)
		}
		names[i] = name
		taken[name] = true
	}
	return names
}

// TestClabKeysLinear: containerlab keys for many nodes whose names share
// one base cost a few lookups each. Each node searched its base's
// suffixes from -2 again: 10,000 nodes named "a" and one CJK character
// (all the base "a") took 13 s to export, 36,000 four minutes. The keys
// are the ones that search gave.
func TestClabKeysLinear(t *testing.T) {
	const n = 5000
	b := NewBuilder("cjk")
	for i := range n {
		b.AddNode("a"+string(rune(0x4e00+i)), Switch)
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	keys, probes := clabNodeNamesProbes(g)
	if probes > 2*n {
		t.Errorf("%d nodes: %d names looked up, want at most %d", n, probes, 2*n)
	}
	if keys[0] != "a" || keys[1] != "a-2" || keys[n-1] != "a-"+strconv.Itoa(n) {
		t.Errorf("keys %q, %q, ..., %q", keys[0], keys[1], keys[n-1])
	}
	// the same keys as the search, on names that collide in every way:
	// with each other, with names containerlab takes as they are ("a-2"),
	// with the special endpoints ("host")
	rng := rand.New(rand.NewPCG(1, 2))
	parts := []string{"a", "b", "-", "2", "3", " ", "!", "host", "node", "é"}
	for round := range 200 {
		b := NewBuilder("mix")
		seen := map[string]bool{}
		for range 30 {
			var s strings.Builder
			for range 1 + rng.IntN(4) {
				s.WriteString(parts[rng.IntN(len(parts))])
			}
			if name := s.String(); !seen[name] {
				seen[name] = true
				b.AddNode(name, Switch)
			}
		}
		g, err := b.Graph()
		if err != nil {
			t.Fatal(err)
		}
		got, want := clabNodeNames(g), clabNodeNamesSearch(g)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("round %d node %q: key %q, the search gives %q", round, g.Node(NodeID(i)).Name, got[i], want[i])
			}
		}
	}
}
