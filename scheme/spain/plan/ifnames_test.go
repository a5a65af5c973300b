package plan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/topo"
)

// TestDeploymentInterfaces: a containerlab file's interface names reach
// the deployment files, beside the port numbers, for both ends of a port;
// a topology without names keeps the numbers alone.
func TestDeploymentInterfaces(t *testing.T) {
	lab := `name: pn
topology:
  nodes:
    leaf1: {kind: nokia_srlinux}
    leaf2: {kind: nokia_srlinux}
    spine1: {kind: arista_ceos}
    h1: {kind: linux, labels: {edgefabric.kind: host}}
    h2: {kind: linux, labels: {edgefabric.kind: host}}
  links:
    - endpoints: ["leaf1:e1-49", "spine1:Ethernet1"]
    - endpoints: ["leaf2:e1-49", "spine1:Ethernet2"]
    - endpoints: ["leaf1:e1-1", "h1:eth1"]
    - endpoints: ["leaf2:e1-1", "h2:eth1"]
`
	g, err := topo.Decode([]byte(lab), "pn.clab.yml", topo.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compute(g, Options{Trials: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	d := p.Deployment()
	got := map[string]PortConfig{}
	for _, s := range d.Switches {
		for _, pc := range s.Ports {
			got[s.Name+"/"+pc.Interface] = pc
		}
	}
	for key, want := range map[string]PortConfig{
		"leaf1/e1-49":      {Port: 49, Interface: "e1-49", Peer: "spine1:1", PeerInterface: "Ethernet1"},
		"leaf1/e1-1":       {Port: 1, Interface: "e1-1", Peer: "h1:1", PeerInterface: "eth1", HostPort: true},
		"spine1/Ethernet2": {Port: 2, Interface: "Ethernet2", Peer: "leaf2:49", PeerInterface: "e1-49"},
	} {
		pc, ok := got[key]
		if !ok || pc.Port != want.Port || pc.Interface != want.Interface || pc.Peer != want.Peer || pc.PeerInterface != want.PeerInterface || pc.HostPort != want.HostPort {
			t.Errorf("%s: %+v, want %+v", key, pc, want)
		}
	}
	sum := d.Summary()
	for _, line := range []string{
		"  port 1   e1-1  host   -> h1:eth1          untagged 1",
		"  port 49  e1-49 fabric -> spine1:Ethernet1 untagged 1",
		"  port 2   Ethernet2 fabric -> leaf2:e1-49    untagged 1",
	} {
		if !strings.Contains(sum, line) {
			t.Errorf("summary lacks %q:\n%s", line, sum)
		}
	}
	var buf bytes.Buffer
	if err := d.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back Deployment
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if pc := back.Switches[0].Ports[0]; pc.Interface == "" || pc.PeerInterface == "" {
		t.Errorf("JSON lost the interfaces: %+v", pc)
	}
	// no names, no interface fields
	g2, _ := topo.Parse("spain-testbed", 1)
	p2, err := Compute(g2, Options{Trials: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	p2.Deployment().WriteJSON(&buf)
	if strings.Contains(buf.String(), "interface") || !strings.Contains(p2.Deployment().Summary(), "  port 1   fabric -> S1:24          untagged 1") {
		t.Errorf("unnamed topology shows interfaces:\n%s", buf.String()[:300])
	}
}
