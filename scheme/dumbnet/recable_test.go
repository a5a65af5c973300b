package dumbnet_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// panel is a patch panel on a switch node of the graph: it joins its
// ports in pairs (mate), so that moving a cable is a change of pairs. It
// passes every frame on unchanged and answers nothing, so discovery never
// sees it; a port without a mate drops what it gets.
type panel struct {
	env  element.Env
	mate map[element.Port]element.Port
}

func (x *panel) Attach(env element.Env, _ []element.PortInfo) { x.env = env }
func (x *panel) LinkChange(element.Port, bool)                {}
func (x *panel) Receive(p element.Port, frame []byte) {
	if q, ok := x.mate[p]; ok {
		x.env.Send(q, frame)
	}
}

// recableLab is a line s1-s2-s3-s4 (port 1 of each a host, h1 the
// controller's, port 4 to the next switch's port 2) and a patch panel px
// whose ports lead to s1:3, s3:3, s4:3, h5, s2:3 and s4:5 (panel ports 1
// to 6). The panel joins s1:3 to s3:3 and s2:3 to s4:3; h5 and s4:5 are
// dark.
func recableLab(t *testing.T) (*lab, *panel, map[element.Port]topo.LinkID) {
	t.Helper()
	return recableLabWrap(t, nil)
}

// recableLabWrap is recableLab with the nodes other than the panel
// wrapped by wrap (nil: none).
func recableLabWrap(t *testing.T, wrap func(topo.NodeID, element.Element) element.Element) (*lab, *panel, map[element.Port]topo.LinkID) {
	t.Helper()
	b := topo.NewBuilder("recable")
	var sw [5]topo.NodeID
	for i := 1; i <= 4; i++ {
		sw[i] = b.AddNode(fmt.Sprintf("s%d", i), topo.Switch)
	}
	px := b.AddNode("px", topo.Switch)
	var hs [6]topo.NodeID
	for i := 1; i <= 5; i++ {
		hs[i] = b.AddNode(fmt.Sprintf("h%d", i), topo.Host)
	}
	link := func(a topo.NodeID, ap int, c topo.NodeID, cp int) topo.LinkID {
		return b.ConnectPorts(topo.End{Node: a, Port: topo.Port(ap)}, topo.End{Node: c, Port: topo.Port(cp)}, topo.DefaultRate, topo.DefaultDelay)
	}
	for i := 1; i <= 4; i++ {
		link(sw[i], 1, hs[i], 1)
	}
	for i := 1; i <= 3; i++ {
		link(sw[i], 4, sw[i+1], 2)
	}
	ends := []topo.End{{Node: sw[1], Port: 3}, {Node: sw[3], Port: 3}, {Node: sw[4], Port: 3}, {Node: hs[5], Port: 1}, {Node: sw[2], Port: 3}, {Node: sw[4], Port: 5}}
	pl := map[element.Port]topo.LinkID{}
	for i, e := range ends {
		pl[element.Port(i+1)] = link(px, i+1, e.Node, int(e.Port))
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	p := &panel{mate: map[element.Port]element.Port{1: 2, 2: 1, 5: 3, 3: 5}}
	l := newLabWrapped(t, g, map[string]string{"controller": "h1"}, func(n topo.NodeID, e element.Element) element.Element {
		if n == px {
			return p
		}
		if wrap != nil {
			return wrap(n, e)
		}
		return e
	}, true)
	l.s.At(0, func() {
		_ = l.s.SetLink(pl[4], false)
		_ = l.s.SetLink(pl[6], false)
	})
	return l, p, pl
}

// recable moves cables on the panel at t0: the links of every panel port
// in pairs (new mates) and of their old mates go dark, and gap later the
// ports that have a mate light up again.
func recable(l *lab, p *panel, pl map[element.Port]topo.LinkID, t0, gap element.Time, pairs ...[2]element.Port) {
	l.s.At(t0, func() {
		touched := map[element.Port]bool{}
		for _, pr := range pairs {
			for _, e := range pr {
				touched[e] = true
				if o, ok := p.mate[e]; ok {
					touched[o] = true
					delete(p.mate, o)
				}
			}
		}
		for _, pr := range pairs {
			p.mate[pr[0]], p.mate[pr[1]] = pr[1], pr[0]
		}
		for _, e := range slices.Sorted(func(yield func(element.Port) bool) {
			for e := range touched {
				if !yield(e) {
					return
				}
			}
		}) {
			_ = l.s.SetLink(pl[e], false)
			if _, ok := p.mate[e]; ok {
				l.s.At(t0+gap, func() { _ = l.s.SetLink(pl[e], true) })
			}
		}
	})
}

// viewOf is the controller's topology by node names: its links
// ("s1:3-s3:3 up", ends in name order) and the hosts not on a port 1
// ("h5@s1:3"), sorted.
func viewOf(l *lab, t *dumbnet.Topology) []string {
	names := map[uint64]string{}
	for _, n := range l.g.Nodes(topo.Switch) {
		names[dumbnet.SwitchID(n)] = l.name(n)
	}
	macs := map[wire.MAC]string{}
	for _, h := range l.g.Nodes(topo.Host) {
		mac, _, _ := l.g.HostAddr(h)
		macs[wire.MAC(mac)] = l.name(h)
	}
	var v []string
	for _, k := range t.Links {
		a, b := fmt.Sprintf("%s:%d", names[k.A], k.APort), fmt.Sprintf("%s:%d", names[k.B], k.BPort)
		if b < a {
			a, b = b, a
		}
		state := "down"
		if k.Up {
			state = "up"
		}
		v = append(v, a+"-"+b+" "+state)
	}
	for _, h := range t.Hosts {
		if h.Port != 1 {
			v = append(v, fmt.Sprintf("%s@%s:%d", macs[h.MAC], names[h.Switch], h.Port))
		}
	}
	slices.Sort(v)
	return v
}

// lineLinks are recableLab's links that no recabling touches.
var lineLinks = []string{"s1:4-s2:2 up", "s2:4-s3:2 up", "s3:4-s4:2 up"}

// darkH5 leaves recableLab's h5 out of pingAll (its cable is dark until a
// recabling lights it) and returns the function that puts it back.
func darkH5(l *lab) (back func()) {
	h5, _ := l.g.Lookup("h5")
	h := l.hosts[h5]
	delete(l.hosts, h5)
	return func() { l.hosts[h5] = h }
}

// failAndRepair takes the links of the panel's ports down now and brings
// them back 2 s later, when it returns.
func failAndRepair(l *lab, pl map[element.Port]topo.LinkID, ports ...element.Port) (repaired element.Time) {
	set := func(up bool) func() {
		return func() {
			for _, e := range ports {
				_ = l.s.SetLink(pl[e], up)
			}
		}
	}
	t0 := l.s.Now()
	l.s.At(t0, set(false))
	l.s.At(t0+2*element.Second, set(true))
	return t0 + 2*element.Second
}

// wantView fails t unless the controller's topology is lineLinks and
// extra, then unless every pair of l.hosts answers.
func wantView(t *testing.T, l *lab, extra ...string) {
	t.Helper()
	want := append(slices.Clone(lineLinks), extra...)
	slices.Sort(want)
	if got := viewOf(l, l.f.Controller().Topology()); !slices.Equal(got, want) {
		t.Fatalf("view %v, want %v\ncounters %v", got, want, l.f.Agent(l.f.ControllerNode()).Counters())
	}
	if ok, total, bad := l.pingAll(t); ok != total {
		t.Fatalf("%d/%d pairs; silent: %s", ok, total, failedPairs(bad))
	}
}

// TestRecabledPortRescanned moves cables on recableLab after discovery
// (every pair has pinged, so the hosts cache paths across the panel):
// s1:3 from s3:3 to the dark s4:5 ("switch"), or to the dark host h5
// ("host"), or the two panel cables swapped, s1:3 to s4:3 and s2:3 to
// s3:3 ("swap"); the moved ports come up 100 ms later (inside the
// switches' 1-s alarm window, so the ports that went down report "up" at
// its end) or 2 s later. The controller must find each port's new
// neighbour and drop its old link, and every pair must answer, h5
// included once it is cabled. Before, a port that came up where a link
// was known was only re-verified, and a failed verification was the end
// of it: a cable whose new far end had had no link (s4:5) was found from
// that end only, and the old link stayed in the topology beside the new
// one; one moved to a host was never found; and in the swap the probe
// along the old link, s1:3 then port 3 of the far end, came back to s1
// over the moved cable itself (s4:3 is a port 3 too) and kept s1:3-s3:3
// up.
func TestRecabledPortRescanned(t *testing.T) {
	cases := []struct {
		name  string
		pairs [][2]element.Port
		want  []string
		h5    bool
	}{
		{"switch", [][2]element.Port{{1, 6}}, []string{"s1:3-s4:5 up", "s2:3-s4:3 up"}, false},
		{"host", [][2]element.Port{{1, 4}}, []string{"h5@s1:3", "s2:3-s4:3 up"}, true},
		{"swap", [][2]element.Port{{1, 3}, {5, 2}}, []string{"s1:3-s4:3 up", "s2:3-s3:3 up"}, false},
	}
	for _, tc := range cases {
		for _, gap := range []element.Time{100 * element.Millisecond, 2 * element.Second} {
			t.Run(fmt.Sprintf("%s/%v", tc.name, gap), func(t *testing.T) {
				l, p, pl := recableLab(t)
				h5, _ := l.g.Lookup("h5")
				h5host := l.hosts[h5]
				delete(l.hosts, h5) // dark: pingAll leaves it out
				l.discover(t)
				before := append(slices.Clone(lineLinks), "s1:3-s3:3 up", "s2:3-s4:3 up")
				slices.Sort(before)
				if got := viewOf(l, l.f.Controller().Topology()); !slices.Equal(got, before) {
					t.Fatalf("discovered %v, want %v", got, before)
				}
				if ok, total, bad := l.pingAll(t); ok != total {
					t.Fatalf("before: %d/%d pairs; silent: %s", ok, total, failedPairs(bad))
				}
				t0 := l.s.Now()
				recable(l, p, pl, t0, gap, tc.pairs...)
				l.s.Run(t0 + gap + 3*element.Second)
				want := append(slices.Clone(lineLinks), tc.want...)
				slices.Sort(want)
				c := l.f.Controller()
				if got := viewOf(l, c.Topology()); !slices.Equal(got, want) {
					t.Fatalf("view %v, want %v\ncounters %v", got, want, l.f.Agent(l.f.ControllerNode()).Counters())
				}
				if got := viewOf(l, c.Snapshot()); !slices.Equal(got, want) {
					t.Fatalf("snapshot %v, want %v", got, want)
				}
				if tc.h5 {
					l.hosts[h5] = h5host
				}
				if ok, total, bad := l.pingAll(t); ok != total {
					t.Fatalf("after: %d/%d pairs; silent: %s", ok, total, failedPairs(bad))
				}
				if n := l.f.Agent(l.f.ControllerNode()).Counters()["ctrl_links_dropped"]; n != uint64(len(tc.pairs)) {
					t.Errorf("ctrl_links_dropped %d, want %d", n, len(tc.pairs))
				}
				cc := l.f.Agent(l.f.ControllerNode()).Counters()
				t.Logf("%s; unverified %d retried %d rescans %d waiting %d", strings.Join(viewOf(l, c.Topology()), ", "), cc["ctrl_link_up_unverified"], cc["ctrl_link_up_retried"], cc["ctrl_rescans"], cc["ctrl_rescans_waiting"])
			})
		}
	}
}
