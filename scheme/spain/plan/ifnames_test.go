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
	// leaf1's port numbers 2..48 are gaps between e1-1 and e1-49, not
	// ports the file declares: none is listed as uncabled (they were,
	// and an engineer had to guess which interfaces were meant)
	for _, s := range d.Switches {
		if len(s.Unused) != 0 || len(s.UnusedInterfaces) != 0 {
			t.Errorf("%s unused ports %v %v, want none", s.Name, s.Unused, s.UnusedInterfaces)
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
	if strings.Contains(sum, "uncabled") {
		t.Errorf("summary lists uncabled ports:\n%s", sum)
	}
	var buf bytes.Buffer
	if err := d.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back Deployment
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if pc := back.Switches[0].Ports[0]; pc.Interface == "" || pc.PeerInterface == "" || len(back.Switches[0].Unused) != 0 {
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
	// A declared port cabled to nothing: listed by number and name.
	b.NamePort(topo.End{Node: ny, Port: 3}, "Gi 0/3")
	// A peer named with a non-ASCII letter: the columns still align.
	zh := b.AddNode("Zürich", topo.Switch)
	b.ConnectPorts(topo.End{Node: ny, Port: 4}, topo.End{Node: zh, Port: 1}, topo.DefaultRate, topo.DefaultDelay)
	b.NamePort(topo.End{Node: ny, Port: 4}, "Gi 0/4")
	b.NamePort(topo.End{Node: zh, Port: 1}, "Gi 0/1 Zürich-Süd") // the widest peer
	h3 := b.AddNode("h3", topo.Host)
	b.Connect(zh, h3)
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
		"  ports 3 \"Gi 0/3\" uncabled: in no VLAN (take them out of VLAN 1, or shut them down)\n",
		// the widest peer, padded by runes, not bytes: one space
		"-> Zürich:\"Gi 0/1 Zürich-Süd\" untagged 1",
	} {
		if !strings.Contains(sq, line) {
			t.Errorf("summary lacks %q:\n%s", line, sq)
		}
	}
	// Every port line of New York has "untagged" at the same rune column.
	col := -1
	for _, line := range strings.Split(sq[strings.Index(sq, "\"New York\": VLANs"):], "\n")[1:] {
		if !strings.HasPrefix(line, "  port ") {
			break
		}
		c := len([]rune(line[:strings.Index(line, " untagged ")]))
		if col >= 0 && c != col {
			t.Errorf("New York's port lines misalign (\"untagged\" at rune %d and %d):\n%s", col, c, sq)
		}
		col = c
	}
	for _, s := range pq.Deployment().Switches {
		if s.Name == "New York" && (fmt.Sprint(s.Unused) != "[3]" || fmt.Sprint(s.UnusedInterfaces) != "[Gi 0/3]") {
			t.Errorf("New York unused %v %q, want [3] [Gi 0/3]", s.Unused, s.UnusedInterfaces)
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
// from its pair's src to its dst over the links its ports name, with
// exactly the VLANs holding it; parallel links are told apart by ports.
func TestWritePathsJSON(t *testing.T) {
	for _, spec := range []string{"fattree:4", "bcube:3,2", "ring:5", "par"} {
		g, err := topo.Parse(spec, 1)
		if spec == "par" {
			g, err = parallelPair(t, "par", 2), nil
		}
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compute(g, Options{Trials: 1, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if _, err := p.WriteDir(dir, nil, true); err != nil {
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
		// VLAN membership from the plan's own JSON view, by link end
		// (node:port at both ends)
		inVLAN := map[[2]string]map[int]bool{}
		end := func(n string, port int) string { return fmt.Sprintf("%s:%d", n, port) }
		for _, v := range p.VLANs {
			for i, l := range v.Links {
				a, b := end(l[0], v.Ports[i][0]), end(l[1], v.Ports[i][1])
				for _, k := range [][2]string{{a, b}, {b, a}} {
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
			seen := map[string]bool{}
			for _, pv := range pr.Paths {
				n++
				if pv.Nodes[0] != pr.Src || pv.Nodes[len(pv.Nodes)-1] != pr.Dst || len(pv.Ports) != len(pv.Nodes)-1 {
					t.Fatalf("%s: path %v (ports %v) does not join %s and %s", spec, pv.Nodes, pv.Ports, pr.Src, pr.Dst)
				}
				// every hop a link of the graph, at the ports given
				for i, pp := range pv.Ports {
					a, _ := g.Lookup(pv.Nodes[i])
					l := g.Ports(a)[pp[0]-1]
					if o := g.Link(l).Other(a); g.Node(o.Node).Name != pv.Nodes[i+1] || int(o.Port) != pp[1] {
						t.Fatalf("%s: path %v hop %d: no link %s:%d-%s:%d", spec, pv.Nodes, i, pv.Nodes[i], pp[0], pv.Nodes[i+1], pp[1])
					}
				}
				key := fmt.Sprint(pv.Nodes, pv.Ports)
				if seen[key] {
					t.Fatalf("%s %s-%s: path %s twice", spec, pr.Src, pr.Dst, key)
				}
				seen[key] = true
				var want []int
				for _, v := range p.VLANs {
					all := true
					for i := 1; i < len(pv.Nodes); i++ {
						if !inVLAN[[2]string{end(pv.Nodes[i-1], pv.Ports[i-1][0]), end(pv.Nodes[i], pv.Ports[i-1][1])}][v.ID] {
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
		if spec == "par" && (n != 2 || len(doc.Pairs) != 1 || fmt.Sprint(doc.Pairs[0].Paths[0].Nodes) != fmt.Sprint(doc.Pairs[0].Paths[1].Nodes)) {
			t.Fatalf("par: want two paths over the same nodes (told apart by ports): %+v", doc.Pairs)
		}
		if doc.Topology != spec || len(doc.Pairs) != p.Pairs || n != p.NumPaths {
			t.Fatalf("%s: topology %q, %d pairs, %d paths; want %d, %d", spec, doc.Topology, len(doc.Pairs), n, p.Pairs, p.NumPaths)
		}
	}
}

// TestWriteDirRemovesStalePaths: a plan written without --paths removes
// the paths.json an earlier plan left in the directory (it would sit
// beside plans of another topology) and says so; a paths.json that is
// not one of ours is left alone.
func TestWriteDirRemovesStalePaths(t *testing.T) {
	plan := func(spec string) *Plan { return compute(t, spec, Options{Trials: 1, Seed: 1}) }
	dir := t.TempDir()
	stale := filepath.Join(dir, PathsFile)
	if removed, err := plan("fattree:4").WriteDir(dir, nil, true); err != nil || len(removed) != 0 {
		t.Fatalf("with paths: removed %v, %v", removed, err)
	}
	if removed, err := plan("ring:3").WriteDir(dir, nil, false); err != nil || fmt.Sprint(removed) != "[paths.json]" {
		t.Fatalf("without paths: removed %v, %v; want [paths.json]", removed, err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("paths.json of fattree:4 still beside ring:3's plan: %v", err)
	}
	for _, foreign := range []string{`{"pairs": []}`, "{\n  \"topology\": \"x\",\n  \"routes\": []\n}\n", "notes"} {
		os.WriteFile(stale, []byte(foreign), 0o644)
		if removed, err := plan("ring:3").WriteDir(dir, nil, false); err != nil || len(removed) != 0 {
			t.Errorf("foreign %q: removed %v, %v", foreign, removed, err)
		}
		if data, _ := os.ReadFile(stale); string(data) != foreign {
			t.Errorf("foreign paths.json changed to %q", data)
		}
	}
}
