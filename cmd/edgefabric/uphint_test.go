package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/emu"
	"github.com/edgefabric/edgefabric/topo"
)

// stateOf is the state file a lab of g would have: its nodes with their
// planned addresses (host k: 10.0.0.k).
func stateOf(name string, g *topo.Graph) *emu.State {
	st := &emu.State{Name: name}
	k := 0
	for i := range g.NumNodes() {
		n := g.Node(topo.NodeID(i))
		sn := emu.StateNode{Name: n.Name, Kind: "switch", Namespace: emu.Prefix(name) + n.Name}
		if n.Kind == topo.Host {
			k++
			sn.Kind, sn.IP = "host", fmt.Sprintf("10.0.0.%d/8", k)
		}
		st.Nodes = append(st.Nodes, sn)
	}
	return st
}

// TestUpTryLines: up's closing hint suggests a ping only to a host the
// first one reaches; in a split lab (up --no-wait-reach on a topology
// that is not connected) it says the hosts are split. It suggested
// "ping h2" whatever the topology, a ping that could not work.
func TestUpTryLines(t *testing.T) {
	dir := t.TempDir()
	split := writeFile(t, dir, "split.yaml", `name: split
nodes:
  - {name: s1, kind: switch}
  - {name: s2, kind: switch}
  - {name: h1, kind: host}
  - {name: h2, kind: host}
links:
  - [s1:1, h1:1]
  - [s2:1, h2:1]
`)
	// h1 and h3 on s1, h2 alone on s2: h1 reaches h3, not h2.
	partial := writeFile(t, dir, "partial.yaml", `name: partial
nodes:
  - {name: s1, kind: switch}
  - {name: s2, kind: switch}
  - {name: h1, kind: host}
  - {name: h2, kind: host}
  - {name: h3, kind: host}
  - {name: h4, kind: host}
  - {name: h5, kind: host}
  - {name: h6, kind: host}
links:
  - [s1:1, h1:1]
  - [s2:1, h2:1]
  - [s1:2, h3:1]
  - [s2:2, h4:1]
  - [s2:3, h5:1]
  - [s2:4, h6:1]
`)
	for _, c := range []struct {
		topo, want string
	}{
		{"line:1", "try: edgefabric exec lab1 h1 -- ping -c 3 10.0.0.2   (h2)\n"},
		{split, "note: the hosts are split (the topology is not connected): h1 cannot reach h2; no ping to try\n"},
		{partial, "try: edgefabric exec lab1 h1 -- ping -c 3 10.0.0.3   (h3)\n" +
			"note: the hosts are split (the topology is not connected): h1 cannot reach h2, h4, h5 and 1 more; only hosts of its part answer\n"},
	} {
		g, err := topo.Resolve(c.topo, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, agents := range []bool{false, true} {
			if got := tryLines(g, agents, stateOf("lab1", g)); got != c.want {
				t.Errorf("%s (agents %v): up said\n%s\nwant\n%s", c.topo, agents, got, c.want)
			}
		}
	}
}

// TestUpSplitLabHint: a real split lab (kernel-bridge, --no-wait-reach)
// comes up and says its hosts are split instead of suggesting a ping.
func TestUpSplitLabHint(t *testing.T) {
	bin, name := rootLab(t, "lh")
	labCleanup(t, name)
	split := writeFile(t, t.TempDir(), "split.yaml", `name: split
nodes:
  - {name: s1, kind: switch}
  - {name: s2, kind: switch}
  - {name: h1, kind: host}
  - {name: h2, kind: host}
links:
  - [s1:1, h1:1]
  - [s2:1, h2:1]
`)
	code, out, errOut := labBin(t, bin, false, "", "up", split, "--scheme", "kernel-bridge", "-p", "stp=off", "--no-wait-reach", "--name", name)
	if code != 0 {
		t.Fatalf("up: exit %d\n%s%s", code, out, errOut)
	}
	lines := strings.SplitAfter(out, "\n")
	want := "note: the hosts are split (the topology is not connected): h1 cannot reach h2; no ping to try\n"
	if len(lines) != 3 || lines[1] != want || strings.Contains(out, "try:") {
		t.Errorf("up on a split lab said\n%s\nwant its second line\n%s", out, want)
	}
	if code, out, errOut := labBin(t, bin, false, "", "down", name); code != 0 {
		t.Errorf("down: exit %d\n%s%s", code, out, errOut)
	}
}
