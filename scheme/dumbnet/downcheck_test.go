package dumbnet_test

import (
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// firstAnswers wraps a host: the next n switch answers (DumbNetSwitchID)
// it receives are lost, or delivered delay late if delay is set.
type firstAnswers struct {
	element.Element
	env   element.Env
	n     int
	delay element.Time
	took  int // answers lost or delayed so far
}

func (f *firstAnswers) Attach(env element.Env, ports []element.PortInfo) {
	f.env = env
	f.Element.Attach(env, ports)
}

func (f *firstAnswers) Receive(p element.Port, frame []byte) {
	if _, inner, payload, err := wire.ParseDumbNet(frame); f.n > 0 && err == nil && inner == wire.EtherTypeLocalExp &&
		len(payload) > 0 && wire.Subtype(payload[0]) == wire.SubDumbNetSwitchID {
		f.n--
		f.took++
		if f.delay > 0 {
			fr := slices.Clone(frame)
			f.env.After(f.delay, func() { f.Element.Receive(p, fr) })
		}
		return
	}
	f.Element.Receive(p, frame)
}

// TestFalseDownReportFirstCheckLost: a forged report that the working link
// s1-s2 of line:3 is down, while the controller's host loses the switches'
// answer to the check's first probe, or to its first two, or gets the
// first 70 ms late against a 50 ms probe wait. The check sends its three
// probes at once, and an answer to any refutes the report: refuted within
// a millisecond of the report, by the first answer that comes; the answers
// after it, to probes no longer out, are counted unmatched, and the link
// stays up, every pair talking. With one probe, the check booked the
// working link down (ctrl_link_down_confirmed) until an audit; with the
// probes sent one after another, a probe wait apart, it was refuted only
// 50 ms (one lost) or 100 ms (two lost) after the report.
func TestFalseDownReportFirstCheckLost(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int          // the first n answers to the check are...
		late element.Time // ...this late, or lost (0)
	}{
		{name: "first lost", n: 1},
		{name: "two lost", n: 2},
		{name: "first late", n: 1, late: 70 * element.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &firstAnswers{delay: tc.late}
			l, forge, _ := forgedDownLabWrap(t, nil, func(e element.Element) element.Element {
				w.Element = e
				return w
			})
			l.discover(t)
			lk := fabricLink(t, l, "s1", "s2")
			ca := l.f.Agent(l.f.ControllerNode())
			unmatched := ca.Counters()["drop_unmatched_reply"]
			at := l.s.Now() + element.Millisecond
			l.s.At(at, func() {
				w.n = tc.n
				forge(lk, 1)
			})
			l.s.Run(at + element.Millisecond)
			if cc := ca.Counters(); w.took != tc.n || cc["ctrl_link_down_refuted"] != 1 || cc["ctrl_link_down_confirmed"] != 0 {
				t.Fatalf("1 ms after the report: %d answers taken (want %d), ctrl_link_down_refuted %d, ctrl_link_down_confirmed %d; want 1, 0\ncounters %v",
					w.took, tc.n, cc["ctrl_link_down_refuted"], cc["ctrl_link_down_confirmed"], cc)
			}
			l.s.Run(at + element.Second)
			cc := ca.Counters()
			// Every answer but the refuting one and the lost ones came
			// after the check ended.
			lost := 0
			if tc.late == 0 {
				lost = tc.n
			}
			if want := unmatched + uint64(3-1-lost); cc["ctrl_link_down_refuted"] != 1 || cc["ctrl_link_down_confirmed"] != 0 || cc["drop_unmatched_reply"] != want {
				t.Fatalf("ctrl_link_down_refuted %d, ctrl_link_down_confirmed %d, drop_unmatched_reply %d; want 1, 0, %d\ncounters %v",
					cc["ctrl_link_down_refuted"], cc["ctrl_link_down_confirmed"], cc["drop_unmatched_reply"], want, cc)
			}
			for _, x := range l.f.Controller().Topology().Links {
				if !x.Up {
					t.Fatalf("link %+v down at the controller after a false report", x)
				}
			}
			if ok, total, bad := l.pingAll(t); ok != total {
				t.Fatalf("%d/%d pairs; silent: %s", ok, total, failedPairs(bad))
			}
		})
	}
}

// TestFalseDownReportAllAnswersLost is the limit of sending the check's
// probes together: a loss that eats the answers to all three (here the
// next three switch answers at the controller's host) books the working
// link down, one probe wait after the report, as one lost probe did when
// the check sent one. The audit (every second here) finds it working and
// books it up again (ctrl_audit_found_up), and every pair talks.
func TestFalseDownReportAllAnswersLost(t *testing.T) {
	w := &firstAnswers{}
	l, forge, _ := forgedDownLabWrap(t, map[string]string{"auditevery": "1s"}, func(e element.Element) element.Element {
		w.Element = e
		return w
	})
	l.discover(t)
	lk := fabricLink(t, l, "s1", "s2")
	ca := l.f.Agent(l.f.ControllerNode())
	at := l.s.Now() + element.Millisecond
	l.s.At(at, func() {
		w.n = 3
		forge(lk, 1)
	})
	l.s.Run(at + 100*element.Millisecond)
	cc := ca.Counters()
	if w.took != 3 || cc["ctrl_link_down_refuted"] != 0 || cc["ctrl_link_down_confirmed"] != 1 {
		t.Fatalf("100 ms after the report: %d answers lost (want 3), ctrl_link_down_refuted %d, ctrl_link_down_confirmed %d; want 0, 1\ncounters %v",
			w.took, cc["ctrl_link_down_refuted"], cc["ctrl_link_down_confirmed"], cc)
	}
	audits := cc["ctrl_audits"]
	l.s.Run(at + 2*element.Second)
	cc = ca.Counters()
	if cc["ctrl_audits"] == audits || cc["ctrl_audit_found_up"] != 1 {
		t.Fatalf("ctrl_audits %d (%d before), ctrl_audit_found_up %d; want an audit to find the link up\ncounters %v",
			cc["ctrl_audits"], audits, cc["ctrl_audit_found_up"], cc)
	}
	for _, x := range l.f.Controller().Topology().Links {
		if !x.Up {
			t.Fatalf("link %+v still down at the controller after the audit", x)
		}
	}
	if ok, total, bad := l.pingAll(t); ok != total {
		t.Fatalf("%d/%d pairs; silent: %s", ok, total, failedPairs(bad))
	}
}

// TestFailedLinkConfirmedAfterOneWait: a core link of fattree:4 fails for
// real. Every host learns of it from the notification within a
// millisecond (stage 1), and the controller books it down once none of
// its check's three probes, sent together, is answered: 50.033152 ms
// after the failure, the simulator's exact figure (the first report
// reaches the controller 3.152 µs in; its three probes are paced 10 µs
// apart and the bound counts one gap more, the pacer may just have sent;
// then the 50-ms probe wait), and not a picosecond before. The patch
// reaches the last host 50.052016 ms in. With the probes sent one after
// another, a wait each, it was booked about 150 ms in; with one probe,
// 20 µs earlier (50.013152 ms).
func TestFailedLinkConfirmedAfterOneWait(t *testing.T) {
	l := newLab(t, "fattree:4", map[string]string{"suppress": "10ms"})
	l.discover(t)
	core := coreLink(t, l)
	at := l.s.Now() + element.Millisecond
	l.s.At(at, func() { _ = l.s.SetLink(core, false) })
	ca := l.f.Agent(l.f.ControllerNode())
	booked := at + 50_033_152*element.Nanosecond
	l.s.Run(booked - 1)
	if cc := ca.Counters(); cc["ctrl_link_down_confirmed"] != 0 {
		t.Fatalf("just before %v: ctrl_link_down_confirmed %d, want 0", booked-at, cc["ctrl_link_down_confirmed"])
	}
	l.s.Run(booked)
	if cc := ca.Counters(); cc["ctrl_link_down_confirmed"] != 1 || cc["ctrl_link_down_refuted"] != 0 {
		t.Fatalf("at %v: ctrl_link_down_confirmed %d, ctrl_link_down_refuted %d; want 1, 0",
			booked-at, cc["ctrl_link_down_confirmed"], cc["ctrl_link_down_refuted"])
	}
	l.s.Run(at + 200*element.Millisecond)
	down := 0
	for _, x := range l.f.Controller().Topology().Links {
		if !x.Up {
			down++
		}
	}
	if down != 1 {
		t.Fatalf("%d links down at the controller, want the failed one", down)
	}
	var last element.Time
	for _, h := range l.g.Nodes(topo.Host) {
		s1, s2 := l.f.Agent(h).Notified()
		if s1 < at || s1-at > element.Millisecond {
			t.Errorf("%s notified at %v, want within 1 ms of the failure at %v", l.name(h), s1, at)
		}
		if s2 < booked {
			t.Errorf("%s patched %v after the failure, before the link was booked down (%v)", l.name(h), s2-at, booked-at)
		}
		last = max(last, s2)
	}
	if want := 50_052_016 * element.Nanosecond; last-at != want {
		t.Errorf("last host patched %v after the failure, want %v", last-at, want)
	}
	if ok, total, bad := l.pingAll(t); ok != total {
		t.Fatalf("%d/%d pairs; silent: %s", ok, total, failedPairs(bad))
	}
}

// TestAuditFirstAnswersLost: fattree:4's controller (h1) is cut off for a
// second, so every switch is stale and the audit probes every link once
// h1's link is back; the answers reaching h1 in the audit's first 20 ms
// are lost: those to the probes of its switch's two uplinks, the first
// links the audit can reach. A link is settled silent only after three
// unanswered tries: both are tried again (ctrl_audit_retried 2), answer,
// and nothing is booked down. With one try, both uplinks were booked
// down and the controller lost the whole fabric from its view.
func TestAuditFirstAnswersLost(t *testing.T) {
	g, err := topo.Parse("fattree:4", 1)
	if err != nil {
		t.Fatal(err)
	}
	h1, _ := g.Lookup("h1")
	drop := &lossy{sub: wire.SubDumbNetSwitchID}
	l := newLabGraphWrap(t, g, map[string]string{"controller": "h1"}, func(n topo.NodeID, e element.Element) element.Element {
		if n == h1 {
			drop.Element = e
			return drop
		}
		return e
	})
	l.discover(t)
	own := hostLink(t, l, "h1")
	t0 := l.s.Now()
	back := t0 + element.Second
	l.s.At(t0, func() { _ = l.s.SetLink(own, false) })
	l.s.At(back, func() {
		drop.on, drop.until = true, back+20*element.Millisecond
		_ = l.s.SetLink(own, true)
	})
	l.s.Run(back + 2*element.Second)
	cc := l.f.Agent(l.f.ControllerNode()).Counters()
	want, _ := dumbnet.Expected(g)
	if d := l.f.Controller().Topology().Diff(want); len(d) > 0 || cc["ctrl_audits"] != 1 || cc["ctrl_audit_retried"] != 2 || cc["ctrl_audit_found_down"] != 0 {
		t.Fatalf("topology %v; ctrl_audits %d, ctrl_audit_retried %d, ctrl_audit_found_down %d; want every link up, 1, 2, 0\ncounters %v",
			d, cc["ctrl_audits"], cc["ctrl_audit_retried"], cc["ctrl_audit_found_down"], cc)
	}
	if ok, total, bad := l.pingAll(t); ok != total {
		t.Fatalf("%d/%d pairs; silent: %s", ok, total, failedPairs(bad))
	}
}
