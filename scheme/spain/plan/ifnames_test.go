package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
	// leaf1's ports 2..48 exist (e1-49 is port 49) but carry nothing
	for _, s := range d.Switches {
		if s.Name == "leaf1" && (len(s.Unused) != 47 || s.Unused[0] != 2 || s.Unused[46] != 48) {
			t.Errorf("leaf1 unused ports %v, want 2..48", s.Unused)
		}
		if s.Name == "spine1" && len(s.Unused) != 0 {
			t.Errorf("spine1 unused ports %v, want none", s.Unused)
		}
	}
	sum := d.Summary()
	for _, line := range []string{
		"  port 1   e1-1  host   -> h1:eth1          untagged 1",
		"  port 49  e1-49 fabric -> spine1:Ethernet1 untagged 1",
		"  port 2   Ethernet2 fabric -> leaf2:e1-49    untagged 1",
		"  ports 2-48 uncabled: in no VLAN (take them out of VLAN 1, or shut them down)\n",
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
	if pc := back.Switches[0].Ports[0]; pc.Interface == "" || pc.PeerInterface == "" || len(back.Switches[0].Unused) != 47 {
		t.Errorf("JSON lost the interfaces or unused ports: %+v %v", pc, back.Switches[0].Unused)
	}
	// names with spaces are quoted in switches.txt, so its lines split on
	// whitespace; a port without a name beside named ones shows "-"
	b := topo.NewBuilder("q")
	ny := b.AddNode("New York", topo.Switch)
	ldn := b.AddNode("London", topo.Switch)
	h1 := b.AddNode("h1", topo.Host)
	h2 := b.AddNode("h2", topo.Host)
	b.ConnectPorts(topo.End{Node: ny, Port: 1}, topo.End{Node: ldn, Port: 1}, topo.DefaultRate, topo.DefaultDelay)
	b.Connect(ny, h1)
	b.Connect(ldn, h2)
	b.NamePort(topo.End{Node: ny, Port: 1}, "Gi 0/1 uplink")
	gq, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	pq, err := Compute(gq, Options{Trials: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	sq := pq.Deployment().Summary()
	for _, line := range []string{
		"\n\"New York\": VLANs 1\n",
		"  port 1   \"Gi 0/1 uplink\" fabric -> London:1",
		"  port 2   -               host   -> h1:1",
		"  port 1   fabric -> \"New York\":\"Gi 0/1 uplink\" untagged 1",
	} {
		if !strings.Contains(sq, line) {
			t.Errorf("summary lacks %q:\n%s", line, sq)
		}
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

// TestWritePathsJSON: paths.json lists every computed path, as a walk
// from its pair's src to its dst, with exactly the VLANs holding it.
func TestWritePathsJSON(t *testing.T) {
	for _, spec := range []string{"fattree:4", "bcube:3,2", "ring:5"} {
		g, err := topo.Parse(spec, 1)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compute(g, Options{Trials: 1, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := p.WriteDir(dir, nil, true); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, PathsFile))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Topology string      `json:"topology"`
			Pairs    []PairPaths `json:"pairs"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		// VLAN membership from the plan's own JSON view, by link name
		inVLAN := map[[2]string]map[int]bool{}
		for _, v := range p.VLANs {
			for _, l := range v.Links {
				for _, k := range [][2]string{{l[0], l[1]}, {l[1], l[0]}} {
					if inVLAN[k] == nil {
						inVLAN[k] = map[int]bool{}
					}
					inVLAN[k][v.ID] = true
				}
			}
		}
		n := 0
		for _, pr := range doc.Pairs {
			if len(pr.Paths) == 0 || len(pr.Paths) > p.K {
				t.Fatalf("%s %s-%s: %d paths, k=%d", spec, pr.Src, pr.Dst, len(pr.Paths), p.K)
			}
			for _, pv := range pr.Paths {
				n++
				if pv.Nodes[0] != pr.Src || pv.Nodes[len(pv.Nodes)-1] != pr.Dst {
					t.Fatalf("%s: path %v does not join %s and %s", spec, pv.Nodes, pr.Src, pr.Dst)
				}
				var want []int
				for _, v := range p.VLANs {
					all := true
					for i := 1; i < len(pv.Nodes); i++ {
						if !inVLAN[[2]string{pv.Nodes[i-1], pv.Nodes[i]}][v.ID] {
							all = false
						}
					}
					if all {
						want = append(want, v.ID)
					}
				}
				if len(want) == 0 || fmt.Sprint(want) != fmt.Sprint(pv.VLANs) {
					t.Fatalf("%s: path %v: vlans %v, want %v", spec, pv.Nodes, pv.VLANs, want)
				}
			}
		}
		if doc.Topology != spec || len(doc.Pairs) != p.Pairs || n != p.NumPaths {
			t.Fatalf("%s: topology %q, %d pairs, %d paths; want %d, %d", spec, doc.Topology, len(doc.Pairs), n, p.Pairs, p.NumPaths)
		}
	}
}
