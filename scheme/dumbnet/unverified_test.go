package dumbnet

import (
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

// A link reported up whose verification goes unanswered has its port
// rescanned; when the rescan finds nothing there either (every answer
// lost), the link stays, down, and its port stays one where a link is
// known: a later host rescan sends no host probe out of it. Such a probe
// goes on past the switch there and can bring back the answer of a host
// beyond, which would be placed on the port, the link dropped. Before, the
// port was left as one where no link is known.
func TestUnverifiedLinkPortStaysKnown(t *testing.T) {
	a, env, want := discoveredController(t, "fattree:4", 0, Config{MaxPorts: 6})
	c := a.ctrl
	l := want.Links[0]
	i, p := ctrlLink(c, l)
	c.setLink(i, p, false)
	c.linkEvent(l.A, l.APort, true)
	env.advance(2 * element.Second) // three tries, then the rescan's round
	if cc := a.Counters(); cc["ctrl_link_up_unverified"] != 1 || cc["ctrl_rescans"] != 1 || c.disc.running {
		t.Fatalf("counters %v, running %v: want the verification failed and its rescan over", cc, c.disc.running)
	}
	down := l
	down.Up = false
	if !slices.Contains(c.Topology().Links, down) {
		t.Fatalf("link %+v not in the topology, down", l)
	}
	di := c.disc.byID[l.A]
	if !c.disc.sws[di].known[l.APort] {
		t.Fatal("the link's port is taken for one where no link is known")
	}
	c.heardFrom(wire.MAC{0x02, 0xee, 0, 0, 0, 1})
	if len(c.disc.jobs) == 0 {
		t.Fatal("no host rescan")
	}
	for _, j := range c.disc.jobs {
		if j.sw == di && slices.Contains(j.ports, l.APort) {
			t.Fatalf("the host rescan probes the link's port %d", l.APort)
		}
	}
}

// A link held down that a rescan finds where it was is up at the rescan's
// end (refoundUp), unless it was reported down during the rescan: the
// rescan's answers may predate that failure, so it is verified afresh.
func TestRefoundLinkReportedDownVerified(t *testing.T) {
	for _, downDuring := range []bool{false, true} {
		a, env, want := discoveredController(t, "fattree:4", 0, Config{MaxPorts: 6})
		c := a.ctrl
		l := want.Links[0]
		i, p := ctrlLink(c, l)
		c.setLink(i, p, false)
		c.linkEvent(l.A, l.APort, true)
		for a.Counters()["ctrl_rescans"] == 0 && env.now < element.Second {
			env.advance(element.Millisecond) // three tries, then the rescan starts
		}
		d := c.disc
		if a.Counters()["ctrl_rescans"] != 1 || !d.running {
			t.Fatalf("counters %v, running %v: want the rescan running", a.Counters(), d.running)
		}
		if downDuring {
			c.linkEvent(l.A, l.APort, false)
		}
		// The rescan finds the link where it was, and ends.
		d.addLink(d.sws[d.byID[l.A]], l.APort, d.sws[d.byID[l.B]], l.BPort)
		d.stop()
		d.finish()
		i, _ = ctrlLink(c, l)
		up, checked := c.g.peerOf(i, p).up, c.upChecks[c.linkKey(i, p)] != nil
		if up == downDuring || checked != downDuring || a.Counters()["ctrl_links_refound"] != map[bool]uint64{false: 1, true: 0}[downDuring] {
			t.Fatalf("reported down during the rescan %v: link up %v, verification out %v, ctrl_links_refound %d",
				downDuring, up, checked, a.Counters()["ctrl_links_refound"])
		}
	}
}
