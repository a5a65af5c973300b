package dumbnet_test

import (
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// slowIDs hands the switches' answers to tag-0 queries that reach the
// wrapped host from from on to it delay late, in order: a machine that
// got loaded after discovery, its answers slower than the probe wait
// discovery's round trips set.
type slowIDs struct {
	element.Element
	env         element.Env
	from, delay element.Time
}

func (s *slowIDs) Attach(env element.Env, ports []element.PortInfo) {
	s.env = env
	s.Element.Attach(env, ports)
}

func (s *slowIDs) Receive(p element.Port, frame []byte) {
	if _, inner, payload, err := wire.ParseDumbNet(frame); s.from > 0 && s.env.Now() >= s.from && err == nil && inner == wire.EtherTypeLocalExp &&
		len(payload) > 0 && wire.Subtype(payload[0]) == wire.SubDumbNetSwitchID {
		f := slices.Clone(frame)
		s.env.After(s.delay, func() { s.Element.Receive(p, f) })
		return
	}
	s.Element.Receive(p, frame)
}

// slowControllerLab is fattree:4 after discovery, its controller (h1)
// behind slowIDs with the given delay (from slow.from on, 0: not yet).
func slowControllerLab(t *testing.T, delay element.Time) (*lab, *topo.Graph, *slowIDs) {
	t.Helper()
	g, err := topo.Parse("fattree:4", 1)
	if err != nil {
		t.Fatal(err)
	}
	h1, _ := g.Lookup("h1")
	slow := &slowIDs{delay: delay}
	l := newLabGraphWrap(t, g, map[string]string{"controller": "h1"}, func(n topo.NodeID, e element.Element) element.Element {
		if n == h1 {
			slow.Element = e
			return slow
		}
		return e
	})
	l.discover(t)
	return l, g, slow
}

// TestSlowVerificationAnswersCount: after discovery on fattree:4 (probe
// wait 50 ms) the switches' answers take 70 ms (or 120 ms, more than two
// tries' waits) to reach the controller. s7-s1 fails, is booked down, and comes back: each of its verification's
// answers comes after its try's wait, while the next try is out. Such an
// answer is the link's all the same: the link must be up again (and the
// answer's round trip stretch the waits to come). Before, an answer to an
// earlier try was unmatched, all three tries failed, and so did the rescan
// after them, whose round ended before its answers came: the working link
// stayed down.
func TestSlowVerificationAnswersCount(t *testing.T) {
	for _, delay := range []element.Time{70 * element.Millisecond, 120 * element.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			l, g, slow := slowControllerLab(t, delay)
			lk := fabricLink(t, l, "s7", "s1")
			t0 := l.s.Now()
			slow.from = t0
			l.s.At(t0, func() { _ = l.s.SetLink(lk, false) })
			l.s.At(t0+2*element.Second, func() { _ = l.s.SetLink(lk, true) })
			l.s.Run(t0 + 4*element.Second)
			cc := l.f.Agent(l.f.ControllerNode()).Counters()
			want, _ := dumbnet.Expected(g)
			if d := l.f.Controller().Topology().Diff(want); len(d) > 0 || cc["ctrl_link_down_confirmed"] != 1 || cc["ctrl_link_up_unverified"] != 0 {
				t.Fatalf("topology %v; ctrl_link_down_confirmed %d, ctrl_link_up_unverified %d; want s7-s1 up, 1, 0\ncounters %v",
					d, cc["ctrl_link_down_confirmed"], cc["ctrl_link_up_unverified"], cc)
			}
			if ok, total, bad := l.pingAll(t); ok != total {
				t.Fatalf("%d/%d pairs; silent: %s", ok, total, failedPairs(bad))
			}
		})
	}
}

// TestSlowAuditAnswersCount: after discovery on fattree:4 (probe wait 50
// ms) the switches' answers take 70 ms (or 120 ms) to reach the controller, whose own
// link then fails for a second: every switch is stale, and the audit
// probes every link once the controller is back. Each answer comes after
// its try's wait, while the next try is out; it is the link's all the
// same, and every link must stay up. Before, an answer to an earlier try
// was unmatched: the controller's switch's two uplinks were found silent
// three times and booked down, and the controller, its view cut off from
// every other switch, could no longer reach a host (the whole fabric gone
// from its view, on a machine that had merely got slower).
func TestSlowAuditAnswersCount(t *testing.T) {
	for _, delay := range []element.Time{70 * element.Millisecond, 120 * element.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			l, g, slow := slowControllerLab(t, delay)
			own := hostLink(t, l, "h1")
			t0 := l.s.Now()
			slow.from = t0
			l.s.At(t0, func() { _ = l.s.SetLink(own, false) })
			l.s.At(t0+element.Second, func() { _ = l.s.SetLink(own, true) })
			l.s.Run(t0 + 5*element.Second)
			cc := l.f.Agent(l.f.ControllerNode()).Counters()
			want, _ := dumbnet.Expected(g)
			if d := l.f.Controller().Topology().Diff(want); len(d) > 0 || cc["ctrl_audits"] != 1 || cc["ctrl_audit_found_down"] != 0 {
				t.Fatalf("topology %v; ctrl_audits %d, ctrl_audit_found_down %d; want every link up, 1 audit, none found down\ncounters %v",
					d, cc["ctrl_audits"], cc["ctrl_audit_found_down"], cc)
			}
			if ok, total, bad := l.pingAll(t); ok != total {
				t.Fatalf("%d/%d pairs; silent: %s", ok, total, failedPairs(bad))
			}
		})
	}
}
