package dumbnet_test

import (
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// floodedFrames sums notify_flooded over every host agent.
func floodedFrames(l *lab) uint64 {
	var n uint64
	for _, h := range l.g.Nodes(topo.Host) {
		n += l.f.Agent(h).Counters()["notify_flooded"]
	}
	return n
}

// TestFlappingLinkFloodDamped: on fattree:4 with every host talking to
// every other (PathTables all-to-all), a link in the pod farthest from
// the controller (h1) that flaps every 1.5 s costs each change a flood
// to up to floodpt (16) PathTable destinations of every host, all 15 of
// them on fattree:4 (O(hosts²) frames there), until
// its fifth change within 10 s; from then on each host tells only the
// controller, whose patches keep every host's view right: once the link
// stays down, the controller's view matches the fabric and every pair
// answers. With hops=2 the switches' broadcast reaches the hosts of that
// pod only: the controller and the other pods hear the first four
// changes through the flood, the rest, controller told by the pod's
// hosts, from the patches.
func TestFlappingLinkFloodDamped(t *testing.T) {
	for _, hops := range []string{"5", "2"} {
		t.Run("hops="+hops, func(t *testing.T) { flappingLinkFloodDamped(t, hops) })
	}
}

func flappingLinkFloodDamped(t *testing.T, hops string) {
	l := newLab(t, "fattree:4", map[string]string{"hops": hops})
	l.discover(t)
	if ok, total, failed := l.pingAll(t); ok != total {
		t.Fatalf("%d/%d pairs before the flaps: %v", ok, total, failed)
	}
	hosts := uint64(len(l.g.Nodes(topo.Host)))
	link := fabricLink(t, l, "s19", "s11")
	var cost []uint64
	for k := range 7 { // down, up, ..., down
		before := floodedFrames(l)
		up := k%2 == 1
		l.s.At(l.s.Now(), func() { _ = l.s.SetLink(link, up) })
		l.s.Run(l.s.Now() + 1500*element.Millisecond)
		cost = append(cost, floodedFrames(l)-before)
	}
	t.Logf("frames flooded per change of %s-%s (%d hosts): %v", l.name(l.g.Link(link).A.Node), l.name(l.g.Link(link).B.Node), hosts, cost)
	for k, c := range cost {
		// Both ends report each change; undamped, every host floods each
		// report to its 15 destinations and its flood neighbours.
		if k < 4 && c < hosts*(hosts-1) {
			t.Errorf("change %d: %d frames, want the full flood (at least %d)", k+1, c, hosts*(hosts-1))
		}
		// Held: one frame per host and report, to the controller.
		if k >= 4 && c > 2*hosts {
			t.Errorf("change %d: %d frames, want at most %d (the controller only)", k+1, c, 2*hosts)
		}
	}
	var damped, holds uint64
	for _, h := range l.g.Nodes(topo.Host) {
		c := l.f.Agent(h).Counters()
		damped += c["notify_damped"]
		holds += c["flap_holddowns"]
	}
	if holds == 0 || damped == 0 {
		t.Fatalf("flap_holddowns %d, notify_damped %d", holds, damped)
	}
	l.s.Run(l.s.Now() + 2*element.Second) // the last change (down) is checked and patched
	if bad := viewErrors(l); len(bad) > 0 {
		t.Fatalf("controller's view after the flaps: %v", bad)
	}
	if ok, total, failed := l.pingAll(t); ok != total {
		t.Fatalf("%d/%d pairs after the flaps: %v", ok, total, failed)
	}
}
