package emu

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/topo"
)

// TestSwitchInterfaceNames: a lab built from a containerlab file gives its
// switches the file's interface names (e1-1, not eth1), traffic crosses
// them, and status reports them; a name Linux would refuse keeps eth<port>.
func TestSwitchInterfaceNames(t *testing.T) {
	needRoot(t)
	lab := "name: x\ntopology:\n  nodes:\n    leaf: {kind: nokia_srlinux}\n    spine: {kind: arista_ceos}\n" +
		"    h1: {kind: linux, labels: {edgefabric.kind: host}}\n    h2: {kind: linux, labels: {edgefabric.kind: host}}\n" +
		"  links:\n    - endpoints: [\"leaf:e1-1\", \"h1:eth1\"]\n    - endpoints: [\"leaf:e1-49\", \"spine:Ethernet1/1\"]\n" +
		"    - endpoints: [\"spine:Ethernet1/2\", \"h2:eth1\"]\n"
	g, err := topo.Decode([]byte(lab), "x.clab.yml", topo.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var fabrics []*testFabric
	l := upLab(t, g, "learn", Options{Registry: testRegistry(t, &fabrics)})
	if err := ping(t, l, "h1", "10.0.0.2"); err != nil {
		t.Fatalf("ping h1 -> h2: %v", err)
	}
	want := map[string][]string{"leaf": {"e1-1", "e1-49"}, "spine": {"eth1", "eth2"}} // '/' is no interface name
	for _, n := range l.Status().Nodes {
		w, ok := want[n.Name]
		if !ok {
			continue
		}
		var got []string
		for _, p := range n.Ports {
			if p.Interface != "" {
				got = append(got, p.Interface)
			}
		}
		if strings.Join(got, ",") != strings.Join(w, ",") {
			t.Errorf("%s: interfaces %v, want %v", n.Name, got, w)
		}
		if n.Name == "leaf" && (n.Ports[0].RxFrames == 0 || n.Ports[len(n.Ports)-1].TxFrames == 0) {
			t.Errorf("leaf's named ports carried nothing: %+v", n.Ports)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := l.Exec(ctx, "leaf", "ip", "-br", "link")
	if err != nil || !strings.Contains(string(out), "e1-49@") {
		t.Errorf("ip link in leaf: %v\n%s", err, out)
	}
}
