package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTopoShowHelpMatchesOutput: topo show --help describes what it
// prints as docs/topology.md does. It said "the largest switch degree",
// but max degree counts any node: bcube:2,4's servers have 4 NICs and its
// switches 2 ports, and it prints 4. It said the diameter was between
// hosts (it is between forwarding nodes over fabric links) and named
// neither the link rates nor the link delays lines.
func TestTopoShowHelpMatchesOutput(t *testing.T) {
	code, out, _ := topoCLI("topo", "show", "bcube:2,4", "--json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var s struct {
		MaxDegree int `json:"max_degree"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil || s.MaxDegree != 4 {
		t.Fatalf("bcube:2,4 max_degree %d (%v), want 4: a server's NICs, not a switch's 2 ports", s.MaxDegree, err)
	}
	code, help, _ := topoCLI("topo", "show", "--help")
	if code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	help = strings.Join(strings.Fields(help), " ")
	for _, want := range []string{
		"largest number of connected ports of any node",
		"between two forwarding nodes",
		"how many links have each rate",
		"the range of link delays",
		"whether every node reaches every other",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("topo show --help does not say %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, "switch degree") {
		t.Errorf("topo show --help still says \"switch degree\"")
	}
}
