package dumbnet_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// TestRescanKeepsParallelLinks: s1 and s2 are joined by two cables, s1:3 to
// s2:3 and, through a patch panel, s1:4 to s2:4; s2:5 goes to the panel
// too, dark, and h1 (the controller's) and h2 hang off port 1 of each.
// The second cable is pulled and plugged back ("lost": every answer to its
// verification lost, so that s1:4 is rescanned), or moved from s2:4 to
// s2:5 ("moved": s2:5, with no known link, is rescanned). From s1:4 both
// s2:3 and the port the cable reaches lead back to s1, and from s2:5 both
// s1:3 and s1:4; which cable a frame took is not observable. The rescan
// must pair the port with the one the graph pairs it with (s1:4 with
// s2:4, "lost"), or else not with one whose own link works (s2:5 with
// s1:4, whose link is down, "moved"), and drop only the link the cable
// left. Before, it paired them in port order, with s2:3 or s1:3: the
// working s1:3-s2:3 was dropped too (a down patch to every host), for a
// link s1:4-s2:3 or s1:3-s2:5.
func TestRescanKeepsParallelLinks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mates   [2]element.Port
		lose    bool
		want    []string
		dropped uint64
		patches uint64 // h2's: the second cable down, then up (if it stays)
	}{
		{"lost", [2]element.Port{1, 2}, true, []string{"s1:3-s2:3 up", "s1:4-s2:4 up"}, 0, 2},
		{"moved", [2]element.Port{1, 3}, false, []string{"s1:3-s2:3 up", "s1:4-s2:5 up"}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := topo.NewBuilder("parallel")
			s1, s2 := b.AddNode("s1", topo.Switch), b.AddNode("s2", topo.Switch)
			px := b.AddNode("px", topo.Switch)
			h1, h2 := b.AddNode("h1", topo.Host), b.AddNode("h2", topo.Host)
			link := func(a topo.NodeID, ap int, c topo.NodeID, cp int) topo.LinkID {
				return b.ConnectPorts(topo.End{Node: a, Port: topo.Port(ap)}, topo.End{Node: c, Port: topo.Port(cp)}, topo.DefaultRate, topo.DefaultDelay)
			}
			link(s1, 1, h1, 1)
			link(s2, 1, h2, 1)
			link(s1, 3, s2, 3)
			pl := map[element.Port]topo.LinkID{1: link(px, 1, s1, 4), 2: link(px, 2, s2, 4), 3: link(px, 3, s2, 5)}
			g, err := b.Graph()
			if err != nil {
				t.Fatal(err)
			}
			p := &panel{mate: map[element.Port]element.Port{1: 2, 2: 1}}
			var l *lab
			armed := false
			d := &dropIDs{drop: func() bool {
				return armed && l.f.Agent(l.f.ControllerNode()).Counters()["ctrl_link_up_unverified"] == 0
			}}
			l = newLabWrapped(t, g, map[string]string{"controller": "h1"}, func(n topo.NodeID, e element.Element) element.Element {
				switch n {
				case px:
					return p
				case h1:
					d.Element = e
					return d
				}
				return e
			}, true)
			l.s.At(0, func() { _ = l.s.SetLink(pl[3], false) })
			l.discover(t)
			c := l.f.Controller()
			if got, want := viewOf(l, c.Topology()), []string{"s1:3-s2:3 up", "s1:4-s2:4 up"}; !slices.Equal(got, want) {
				t.Fatalf("discovered %v, want %v", got, want)
			}
			t0 := l.s.Now()
			l.s.At(t0+2*element.Second-1, func() { armed = tc.lose })
			recable(l, p, pl, t0, 2*element.Second, tc.mates)
			l.s.Run(t0 + 4*element.Second)
			cc := l.f.Agent(l.f.ControllerNode()).Counters()
			if tc.lose && (d.dropped == 0 || cc["ctrl_link_up_unverified"] != 1) || cc["ctrl_rescans"] == 0 {
				t.Fatalf("%d answers lost, ctrl_link_up_unverified %d, ctrl_rescans %d: want rescans (after answers lost and a failed verification)", d.dropped, cc["ctrl_link_up_unverified"], cc["ctrl_rescans"])
			}
			if got := viewOf(l, c.Topology()); !slices.Equal(got, tc.want) || cc["ctrl_links_dropped"] != tc.dropped {
				t.Fatalf("after: %v, ctrl_links_dropped %d; want %v, %d\ncounters %v", got, cc["ctrl_links_dropped"], tc.want, tc.dropped, cc)
			}
			if n := l.f.Agent(h2).Counters()["patches_applied"]; n != tc.patches {
				t.Errorf("h2 applied %d patches, want %d", n, tc.patches)
			}
			if ok, total, bad := l.pingAll(t); ok != total {
				t.Fatalf("%d/%d pairs; silent: %s", ok, total, failedPairs(bad))
			}
			_ = fmt.Sprint()
		})
	}
}
