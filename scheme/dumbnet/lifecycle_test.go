package dumbnet_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/host"
	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/sim"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// TestLinkRepairVerifiedAndPatched fails a core link, repairs it, and
// checks that the controller re-verified it with a probe, marked it up
// and patched every host (two patches each: down, then up).
func TestLinkRepairVerifiedAndPatched(t *testing.T) {
	l := flapCoreLink(t, 100*element.Millisecond, 300*element.Millisecond)
	c := l.f.Controller()
	for _, lk := range c.Topology().Links {
		if !lk.Up {
			t.Fatalf("link %+v still down at the controller", lk)
		}
	}
	if v := c.Version(); v != 4 {
		t.Fatalf("topology version %d, want 4 (discovery, the down check, down, up)", v)
	}
	for _, h := range l.g.Nodes(topo.Host) {
		if h == l.f.ControllerNode() {
			continue
		}
		if got := l.f.Agent(h).Counters()["patches_applied"]; got != 2 {
			t.Errorf("%s applied %d patches, want 2", l.name(h), got)
		}
	}
	ok, total, failed := l.pingAll(t)
	if ok != total {
		t.Fatalf("%d/%d pairs after repair; failed %v", ok, total, failed)
	}
}

// TestHostsFindControllerByProbing starts the hosts' search before the
// controller can announce itself: every host must locate the controller
// by its own probing (§4.1), and traffic must flow.
func TestHostsFindControllerByProbing(t *testing.T) {
	l := newLab(t, "dumbnet-fig1", map[string]string{"search": "100us", "probetimeout": "1ms", "probegap": "2us"})
	l.discover(t)
	searched, found := 0, 0
	for _, h := range l.g.Nodes(topo.Host) {
		a := l.f.Agent(h)
		mac, ok := a.ControllerMAC()
		cmac, _, _ := l.g.HostAddr(l.f.ControllerNode())
		if !ok || mac != wire.MAC(cmac) {
			t.Fatalf("%s: controller %v %v, want %v", l.name(h), mac, ok, wire.MAC(cmac))
		}
		if a.Counters()["search_started"] > 0 {
			searched++
		}
		found += int(a.Counters()["controller_found_by_search"])
	}
	t.Logf("%d hosts found the controller by probing before its announcement", found)
	// H3 shares the controller's switch: its first BFS round reaches C3
	// long before discovery ends.
	h3, _ := l.g.Lookup("H3")
	if l.f.Agent(h3).Counters()["controller_found_by_search"] != 1 {
		t.Fatalf("H3 did not find the controller by probing: %v", l.f.Agent(h3).Counters())
	}
	if searched != 5 {
		t.Fatalf("%d hosts searched, want all 5 non-controller hosts", searched)
	}
	ok, total, failed := l.pingAll(t)
	if ok != total {
		t.Fatalf("%d/%d pairs; failed %v", ok, total, failed)
	}
}

// TestDeterministic runs the same scenario twice and compares the
// simulator's trace hashes.
func TestDeterministic(t *testing.T) {
	var hashes [2]uint64
	for i := range hashes {
		l := newLab(t, "fattree:4", map[string]string{"flowlets": "true"})
		l.discover(t)
		l.pingAll(t)
		hashes[i] = l.s.TraceHash()
	}
	if hashes[0] != hashes[1] {
		t.Fatalf("trace hashes differ: %x %x", hashes[0], hashes[1])
	}
}

// TestNewLinkRescanned cables a link only after discovery: both ends
// announce the port up, and the controller probes it and adds the link
// and the switch and hosts behind it.
func TestNewLinkRescanned(t *testing.T) {
	l := newLab(t, "line:3", nil)
	var late topo.LinkID = topo.NoLink
	for i := range l.g.NumLinks() {
		lk := l.g.Link(topo.LinkID(i))
		if l.g.IsFabricLink(topo.LinkID(i)) && (l.name(lk.A.Node) == "s3" || l.name(lk.B.Node) == "s3") {
			late = topo.LinkID(i)
		}
	}
	l.s.At(0, func() { _ = l.s.SetLink(late, false) })
	l.discover(t)
	want, _ := dumbnet.Expected(l.g)
	if d := l.f.Controller().Topology().Diff(want); len(d) != 4 {
		t.Fatalf("before the link: diff %v, want s3, its link and its 2 hosts missing", d)
	}
	l.s.At(l.s.Now(), func() { _ = l.s.SetLink(late, true) })
	// The switches' alarm for the port going down at time 0 opened a 1 s
	// suppression window: the "up" is announced when it closes.
	l.s.Run(l.s.Now() + 1500*element.Millisecond)
	if d := l.f.Controller().Topology().Diff(want); len(d) > 0 {
		t.Fatalf("after the link came up: %v", d)
	}
	ok, total, failed := l.pingAll(t)
	if ok != total {
		t.Fatalf("%d/%d pairs; failed %v", ok, total, failed)
	}
}

// lossy wraps an element and, while on and before a time, drops the
// DumbNet control messages of one subtype that reach it: probing messages
// (a host whose answers to discovery are lost; they arrive tagged) or
// path replies (a host whose queries go unanswered).
type lossy struct {
	element.Element
	env   element.Env
	sub   wire.Subtype
	on    bool
	until element.Time
}

func (l *lossy) Attach(env element.Env, ports []element.PortInfo) {
	l.env = env
	l.Element.Attach(env, ports)
}

func (l *lossy) Receive(p element.Port, frame []byte) {
	tags, inner, payload, err := wire.ParseDumbNet(frame)
	if l.on && l.env.Now() < l.until && err == nil && inner == wire.EtherTypeLocalExp && len(payload) > 0 && wire.Subtype(payload[0]) == l.sub &&
		(len(tags) > 0 || l.sub != wire.SubDumbNetProbe) {
		return
	}
	l.Element.Receive(p, frame)
}

// TestMissedHostFound loses a host's answer to discovery: the host finds
// the controller by its own search, the controller hears its probe, looks
// again for hosts, and places it.
func TestMissedHostFound(t *testing.T) {
	g, err := topo.Parse("fattree:4", 1)
	if err != nil {
		t.Fatal(err)
	}
	// Discovery ends near 250 ms; h7 starts searching at 500 ms, once it
	// hears PMs again.
	l := newLabGraphWrap(t, g, map[string]string{"search": "500ms"}, func(n topo.NodeID, e element.Element) element.Element {
		if g.Node(n).Name == "h7" {
			return &lossy{Element: e, sub: wire.SubDumbNetProbe, on: true, until: 400 * element.Millisecond}
		}
		return e
	})
	l.discover(t)
	want, _ := dumbnet.Expected(g)
	if d := l.f.Controller().Topology().Diff(want); len(d) != 1 {
		t.Fatalf("after discovery: %v, want h7 missing", d)
	}
	l.s.Run(l.s.Now() + 3*element.Second)
	if d := l.f.Controller().Topology().Diff(want); len(d) != 0 {
		t.Fatalf("h7 still missing: %v", d)
	}
	if n := l.f.Agent(l.f.ControllerNode()).Counters()["ctrl_host_rescans"]; n != 1 {
		t.Fatalf("ctrl_host_rescans = %d, want 1", n)
	}
	ok, total, failed := l.pingAll(t)
	if ok != total {
		t.Fatalf("%d/%d pairs; failed %v", ok, total, failed)
	}
}

// TestHostLinkFlapCountsHostOnce flaps a host's cable after discovery: the
// port-up notification makes the controller rescan the port and find the
// same host at the same place again. hosts_found must still count every
// host once (it read 56 for 54 hosts on an emulated fattree:6), the
// re-confirmation is counted apart, and every pair still pings.
func TestHostLinkFlapCountsHostOnce(t *testing.T) {
	l := newLab(t, "fattree:4", map[string]string{"suppress": "10ms"})
	l.discover(t)
	var hl topo.LinkID = topo.NoLink
	for i := range l.g.NumLinks() {
		lk := l.g.Link(topo.LinkID(i))
		if l.name(lk.A.Node) == "h7" || l.name(lk.B.Node) == "h7" {
			hl = topo.LinkID(i)
		}
	}
	now := l.s.Now()
	l.s.At(now+element.Millisecond, func() { _ = l.s.SetLink(hl, false) })
	l.s.At(now+50*element.Millisecond, func() { _ = l.s.SetLink(hl, true) })
	l.s.Run(now + 2*element.Second)
	cc := l.f.Agent(l.f.ControllerNode()).Counters()
	if cc["ctrl_rescans"] == 0 {
		t.Fatalf("the controller never rescanned h7's port: %v", cc)
	}
	if got, want := cc["hosts_found"], uint64(len(l.g.Nodes(topo.Host))-1); got != want {
		t.Fatalf("hosts_found = %d, want %d (every host but the controller's own, once)", got, want)
	}
	if cc["hosts_refound"] == 0 {
		t.Fatalf("hosts_refound = 0, want the rescan's re-confirmation counted: %v", cc)
	}
	want, _ := dumbnet.Expected(l.g)
	if d := l.f.Controller().Topology().Diff(want); len(d) != 0 {
		t.Fatalf("topology after the flap: %v", d)
	}
	ok, total, failed := l.pingAll(t)
	if ok != total {
		t.Fatalf("%d/%d pairs; failed %v", ok, total, failed)
	}
}

// TestAllPairsPingUnderLoss mimics a loaded emulator in the simulator:
// after discovery every link (host links included) loses 3% of its
// frames, so path queries, path replies, ARP and pings are lost at
// random. The agents' query retries must hide it: every pair answers
// within a few pings, and no host is left without a path for good.
func TestAllPairsPingUnderLoss(t *testing.T) {
	l := newLab(t, "fattree:6", nil)
	l.discoverWithin(t, 5*element.Second)
	want, _ := dumbnet.Expected(l.g)
	if d := l.f.Controller().Topology().Diff(want); len(d) != 0 {
		t.Fatalf("discovery: %v", d)
	}
	for i := range l.g.NumLinks() {
		if err := l.s.SetFault(topo.LinkID(i), sim.Fault{Loss: 0.03}); err != nil {
			t.Fatal(err)
		}
	}
	type run struct {
		src, dst topo.NodeID
		app      *host.PingApp
	}
	var runs []run
	hosts := l.g.Nodes(topo.Host)
	l.s.At(l.s.Now(), func() {
		for _, a := range hosts {
			for _, b := range hosts {
				if a != b {
					_, ip, _ := l.g.HostAddr(b)
					app := l.hosts[a].PingWith(ip.Addr(), host.PingOptions{Count: 12, Interval: 100 * element.Millisecond, Timeout: element.Second})
					runs = append(runs, run{a, b, app})
				}
			}
		}
	})
	l.s.Run(l.s.Now() + 4*element.Second)
	var failed []string
	for _, r := range runs {
		if r.app.Result().Received == 0 {
			failed = append(failed, fmt.Sprintf("%s->%s %+v src %v dst %v", l.name(r.src), l.name(r.dst), r.app.Result(), l.f.Agent(r.src).Counters(), l.f.Agent(r.dst).Counters()))
		}
	}
	if len(failed) > 0 {
		t.Fatalf("%d/%d pairs never answered under 3%% loss: %v", len(failed), len(runs), failed)
	}
}

// TestStage1FloodReachesEveryHost: with a hop limit of 2 the switches'
// broadcast of a core link failure reaches only the hosts of the pod next
// to it, and no host talks to any other (empty PathTables). The
// hosts' flood, to the hosts of their switch and then of the neighbouring
// switches (DumbNet §4.2 stage 1, the controller's neighbour lists),
// reaches every host before the controller's patch (stage 2, one probe
// wait later) could.
func TestStage1FloodReachesEveryHost(t *testing.T) {
	for _, spec := range []string{"fattree:4", "fattree:8"} {
		t.Run(spec, func(t *testing.T) { stage1Flood(t, spec) })
	}
}

func stage1Flood(t *testing.T, spec string) {
	l := newLab(t, spec, map[string]string{"hops": "2"})
	l.discover(t)
	core := coreLink(t, l)
	heard := func(h topo.NodeID) uint64 {
		c := l.f.Agent(h).Counters()
		return c["notify_received"] + c["host_notify_received"]
	}
	before := map[topo.NodeID]uint64{}
	hosts := l.g.Nodes(topo.Host)
	for _, h := range hosts {
		before[h] = heard(h)
		if l.f.Agent(h).Counters()["patches_applied"] != 0 {
			t.Fatalf("%s has patches before the failure", l.name(h))
		}
	}
	now := l.s.Now()
	l.s.At(now+element.Millisecond, func() { _ = l.s.SetLink(core, false) })
	l.s.Run(now + 6*element.Millisecond)
	direct, missed := 0, []string{}
	for _, h := range hosts {
		c := l.f.Agent(h).Counters()
		if c["notify_received"] > 0 {
			direct++
		}
		if heard(h) == before[h] {
			missed = append(missed, l.name(h))
		}
		if c["patches_applied"] != 0 {
			t.Fatalf("%s got the patch within 5 ms: the test no longer isolates stage 1", l.name(h))
		}
	}
	if direct == len(hosts) {
		t.Fatalf("every host heard a switch: the hop limit no longer isolates the hosts' flood")
	}
	if len(missed) > 0 {
		t.Fatalf("%d hosts heard the switches, and the flood missed %v", direct, missed)
	}
}

// TestLinkFlapDuringDownCheck: a link that fails and comes back before the
// controller's check of the failure ends stays up: the "up" report
// withdraws the check, whose probe left while the link was down and would
// otherwise book it down for good (the switch reports "up" once).
func TestLinkFlapDuringDownCheck(t *testing.T) {
	l := flapCoreLink(t, 20*element.Millisecond, 2*element.Second)
	for _, lk := range l.f.Controller().Topology().Links {
		if !lk.Up {
			t.Fatalf("link %+v down at the controller though the fabric link is up", lk)
		}
	}
	c := l.f.Agent(l.f.ControllerNode()).Counters()
	if c["ctrl_link_down_withdrawn"] != 1 || c["ctrl_link_down_confirmed"] != 0 {
		t.Fatalf("checks: withdrawn %d, confirmed %d; want 1, 0", c["ctrl_link_down_withdrawn"], c["ctrl_link_down_confirmed"])
	}
	ok, total, failed := l.pingAll(t)
	if ok != total {
		t.Fatalf("%d/%d pairs after the flap; failed: %v", ok, total, failed)
	}
}

// coreLink returns the first link of a core switch (fat trees).
func coreLink(t *testing.T, l *lab) topo.LinkID {
	t.Helper()
	for i := range l.g.NumLinks() {
		lk := l.g.Link(topo.LinkID(i))
		if l.g.Node(lk.A.Node).Role == "core" || l.g.Node(lk.B.Node).Role == "core" {
			return topo.LinkID(i)
		}
	}
	t.Fatal("no core link")
	return topo.NoLink
}

// flapCoreLink discovers fattree:4 (alarms suppressed 10 ms), fails a core
// link 1 ms later, repairs it at up and runs until until, all counted from
// the end of discovery.
func flapCoreLink(t *testing.T, up, until element.Time) *lab {
	t.Helper()
	l := newLab(t, "fattree:4", map[string]string{"suppress": "10ms"})
	l.discover(t)
	core := coreLink(t, l)
	now := l.s.Now()
	l.s.At(now+element.Millisecond, func() { _ = l.s.SetLink(core, false) })
	l.s.At(now+up, func() { _ = l.s.SetLink(core, true) })
	l.s.Run(now + until)
	return l
}

// TestARPRetryRearmsQuery: a host's path queries go unanswered for 2.6 s
// (every reply lost). The query's own retries double their wait (20 ms,
// 40 ms, ... 1.28 s, 2.56 s), so its tries at 2.54 s and 5.1 s straddle
// the end of the loss and the stack's ARP gives up at 3 s (three requests
// 1 s apart): the pair could not talk, and under 3 % loss on every link
// that happened to a pair or two in a run of 2862 (16 of 30 seeds). The stack's ARP retry
// at 2 s now re-arms the query from 20 ms: its try at 2.62 s is
// answered, the ARP resolved, the ping answered.
func TestARPRetryRearmsQuery(t *testing.T) {
	g, err := topo.Parse("fattree:4", 1)
	if err != nil {
		t.Fatal(err)
	}
	wraps := map[topo.NodeID]*lossy{}
	l := newLabGraphWrap(t, g, nil, func(n topo.NodeID, e element.Element) element.Element {
		w := &lossy{Element: e, sub: wire.SubDumbNetPathReply}
		wraps[n] = w
		return w
	})
	l.discover(t)
	hosts := g.Nodes(topo.Host)
	src, dst := hosts[len(hosts)-1], hosts[0]
	if src == l.f.ControllerNode() || dst == l.f.ControllerNode() {
		src, dst = hosts[len(hosts)-2], hosts[1]
	}
	t0 := l.s.Now() + element.Millisecond
	wraps[src].on, wraps[src].until = true, t0+2600*element.Millisecond
	_, ip, _ := g.HostAddr(dst)
	var app *host.PingApp
	l.s.At(t0, func() {
		app = l.hosts[src].PingWith(ip.Addr(), host.PingOptions{Count: 1, Timeout: 5 * element.Second})
	})
	l.s.Run(t0 + 6*element.Second)
	if r := app.Result(); r.Received != 1 {
		t.Fatalf("ping %s -> %s: %+v; stack %v, agent %v", l.name(src), l.name(dst), r, l.hosts[src].Counters(), l.f.Agent(src).Counters())
	}
	if c := l.f.Agent(src).Counters(); c["path_query_rearmed"] != 2 {
		t.Fatalf("path_query_rearmed = %d, want 2 (the stack's ARP retries at 1 s and 2 s): %v", c["path_query_rearmed"], c)
	}
}

// TestPathGraphsAvoidLinkUnderCheck: a core link fails and every host,
// with nothing cached yet, starts talking to every host of another pod
// while the controller's probe check of the failure runs (stage 2 one
// probe wait later). The paper's controller books a reported failure at
// once; ours checks it first, and meanwhile served path graphs with the
// failed link up, which the hosts' TopoCaches (that did not hold the link
// when the notification came) took: new flows were routed into the dead
// link until the patch. No PathTable entry may cross the link.
func TestPathGraphsAvoidLinkUnderCheck(t *testing.T) {
	l := newLab(t, "fattree:4", nil)
	l.discover(t)
	core := coreLink(t, l)
	now := l.s.Now()
	l.s.At(now+element.Millisecond, func() { _ = l.s.SetLink(core, false) })
	hosts := l.g.Nodes(topo.Host)
	pod := func(h topo.NodeID) topo.NodeID {
		e, _ := l.g.Peer(h, 1)
		return e.Node
	}
	var apps []*host.PingApp
	l.s.At(now+3*element.Millisecond, func() {
		for _, a := range hosts {
			for _, b := range hosts {
				if a == b || pod(a) == pod(b) {
					continue
				}
				_, ip, _ := l.g.HostAddr(b)
				apps = append(apps, l.hosts[a].Ping(ip.Addr(), 1, element.Millisecond))
			}
		}
	})
	l.s.Run(now + 30*element.Millisecond)
	if c := l.f.Agent(l.f.ControllerNode()).Counters(); c["ctrl_link_down_confirmed"] != 0 {
		t.Fatal("the check ended within 30 ms: the test no longer covers it")
	}
	entries, crossing := 0, 0
	for _, h := range hosts {
		l.f.Agent(h).PathTable().All(func(dst wire.MAC, e *dumbnet.PathEntry) bool {
			entries++
			for _, p := range e.Paths {
				if slices.Contains(pathLinks(t, l.g, h, p), core) {
					crossing++
					break
				}
			}
			return true
		})
	}
	if entries == 0 || crossing != 0 {
		t.Fatalf("%d of %d PathTable entries cross the failed link", crossing, entries)
	}
	l.s.Run(now + 200*element.Millisecond)
	for i, app := range apps {
		if r := app.Result(); r.Received != 1 {
			t.Fatalf("ping %d: %+v\nsrc agent %v", i, r, l.f.Agent(hosts[0]).Counters())
		}
	}
}

// TestControllerPathAfterLinkDown: a host sends its path queries along the
// path the controller announced at the end of discovery. When a link on
// that path fails, the host's queries were lost for good (the path was
// never announced again), so its stack could resolve no new address. The
// controller announces the new path to every host whose way to it changed
// when it books a link down; then every pair pings.
func TestControllerPathAfterLinkDown(t *testing.T) {
	l := newLab(t, "fattree:4", nil)
	l.discover(t)
	core := coreLink(t, l)
	now := l.s.Now()
	l.s.At(now+element.Millisecond, func() { _ = l.s.SetLink(core, false) })
	l.s.Run(now + 200*element.Millisecond)
	c := l.f.Agent(l.f.ControllerNode()).Counters()
	if c["ctrl_link_down_confirmed"] != 1 {
		t.Fatalf("ctrl_link_down_confirmed = %d, want 1", c["ctrl_link_down_confirmed"])
	}
	ok, total, failed := l.pingAll(t)
	if ok != total {
		for _, h := range l.g.Nodes(topo.Host)[:6] {
			t.Logf("%s: %v", l.name(h), l.f.Agent(h).Counters())
		}
		t.Fatalf("%d/%d pairs after the failure; failed: %v", ok, total, failed[:min(3, len(failed))])
	}
	if c["ctrl_reannounced"] == 0 {
		t.Fatalf("no host's way to the controller changed: the link is on no such path, the test covers nothing")
	}
}

// TestLinkUpVerifiedAfterLostProbe: a repaired core link's verification
// probe comes back lost (the switch's answer is dropped at the
// controller's host for 20 ms). The switch reports the port up once, so
// the link stayed out of the controller's topology for good; the
// verification is now sent again after the probe wait and books it up.
func TestLinkUpVerifiedAfterLostProbe(t *testing.T) {
	l := repairWithLostVerification(t, 20*element.Millisecond, 300*element.Millisecond)
	want, _ := dumbnet.Expected(l.g)
	if d := l.f.Controller().Topology().Diff(want); len(d) != 0 {
		t.Fatalf("after the repair: %v", d)
	}
	c := l.f.Agent(l.f.ControllerNode()).Counters()
	if c["ctrl_link_up_retried"] < 1 || c["ctrl_link_up_unverified"] != 0 {
		t.Fatalf("verification: retried %d, unverified %d; want at least 1 and 0 (%v)", c["ctrl_link_up_retried"], c["ctrl_link_up_unverified"], c)
	}
	if v := l.f.Controller().Version(); v != 4 {
		t.Fatalf("topology version %d, want 4 (discovery, the down check, down, up)", v)
	}
}

// repairWithLostVerification discovers fattree:4 (alarms suppressed 10 ms),
// fails a core link 1 ms later, repairs it 100 ms after discovery (its
// down check, one 50-ms probe wait, has booked it down by then) and
// drops, for lost after the repair, the switches' answers to the
// controller's probes at its host (the link-up verification's answer);
// it runs until run after the repair.
func repairWithLostVerification(t *testing.T, lost, run element.Time) *lab {
	t.Helper()
	g, err := topo.Parse("fattree:4", 1)
	if err != nil {
		t.Fatal(err)
	}
	wraps := map[topo.NodeID]*lossy{}
	l := newLabGraphWrap(t, g, map[string]string{"suppress": "10ms"}, func(n topo.NodeID, e element.Element) element.Element {
		w := &lossy{Element: e, sub: wire.SubDumbNetSwitchID}
		wraps[n] = w
		return w
	})
	l.discover(t)
	core := coreLink(t, l)
	now := l.s.Now()
	up := now + 100*element.Millisecond
	l.s.At(now+element.Millisecond, func() { _ = l.s.SetLink(core, false) })
	l.s.At(up, func() {
		w := wraps[l.f.ControllerNode()]
		w.on, w.until = true, up+lost
		_ = l.s.SetLink(core, true)
	})
	l.s.Run(up + run)
	return l
}

// slowProbes hands the probes that reach it before until to the element
// delay late: a loaded host (or emulator) whose answers come after the
// controller's round has ended.
type slowProbes struct {
	element.Element
	env          element.Env
	delay, until element.Time
}

func (s *slowProbes) Attach(env element.Env, ports []element.PortInfo) {
	s.env = env
	s.Element.Attach(env, ports)
}

func (s *slowProbes) Receive(p element.Port, frame []byte) {
	tags, inner, payload, err := wire.ParseDumbNet(frame)
	if s.env.Now() < s.until && err == nil && len(tags) > 0 && inner == wire.EtherTypeLocalExp &&
		len(payload) > 0 && wire.Subtype(payload[0]) == wire.SubDumbNetProbe {
		f := slices.Clone(frame)
		s.env.After(s.delay, func() { s.Element.Receive(p, f) })
		return
	}
	s.Element.Receive(p, frame)
}

// TestLateHostAnswerRescans: a host's answer that comes after its round
// ended matches no probe; discovery goes on without the host. The
// controller takes the answer as the hint it is and looks for hosts again
// (at once after discovery; at its end when it comes during discovery),
// not only when the host's own search, here off, reaches it: without
// that, the host stays unknown until it sends something. The answer's
// round trip stretches the rounds, so that the rescan's answer, as slow,
// is in time.
func TestLateHostAnswerRescans(t *testing.T) {
	for _, c := range []struct {
		name string
		near bool // the slow host shares the controller's switch
		// when discovery ends: a late answer heard during discovery
		// stretches its remaining rounds
		doneAt element.Time
	}{
		{"after-discovery", false, 253 * element.Millisecond},
		{"during-discovery", true, 1014 * element.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := topo.Parse("fattree:4", 1)
			if err != nil {
				t.Fatal(err)
			}
			slow := "h7"
			if c.near {
				slow = "h2" // h1 runs the controller
			}
			l := newLabGraphWrap(t, g, map[string]string{"search": "off"}, func(n topo.NodeID, e element.Element) element.Element {
				if g.Node(n).Name == slow {
					return &slowProbes{Element: e, delay: 80 * element.Millisecond, until: 2 * element.Second}
				}
				return e
			})
			if got := l.name(l.f.ControllerNode()); got != "h1" {
				t.Fatalf("the controller runs on %s, want h1", got)
			}
			l.discover(t)
			want, _ := dumbnet.Expected(g)
			if d := l.f.Controller().Topology().Diff(want); len(d) != 1 || l.s.Now() != c.doneAt {
				t.Fatalf("discovery done at %v: %v; want at %v, %s missing", l.s.Now(), d, c.doneAt, slow)
			}
			l.s.Run(l.s.Now() + 3*element.Second)
			cc := l.f.Agent(l.f.ControllerNode()).Counters()
			if d := l.f.Controller().Topology().Diff(want); len(d) != 0 {
				t.Fatalf("%s still missing: %v (counters %v)", slow, d, cc)
			}
			if cc["ctrl_late_host_replies"] != 1 || cc["ctrl_host_rescans"] != 1 {
				t.Fatalf("ctrl_late_host_replies %d, ctrl_host_rescans %d; want 1 and 1", cc["ctrl_late_host_replies"], cc["ctrl_host_rescans"])
			}
		})
	}
}

// fabricLinks returns the links of g between two switches, in order.
func fabricLinks(g *topo.Graph) []topo.LinkID {
	var fabric []topo.LinkID
	for i := range g.NumLinks() {
		if g.IsFabricLink(topo.LinkID(i)) {
			fabric = append(fabric, topo.LinkID(i))
		}
	}
	return fabric
}

// fabricLink returns the fabric link between the two named switches.
func fabricLink(t *testing.T, l *lab, a, b string) topo.LinkID {
	t.Helper()
	for i := range l.g.NumLinks() {
		lk := l.g.Link(topo.LinkID(i))
		x, y := l.name(lk.A.Node), l.name(lk.B.Node)
		if x == a && y == b || x == b && y == a {
			return topo.LinkID(i)
		}
	}
	t.Fatalf("no link %s-%s", a, b)
	return topo.NoLink
}

// TestLinkFailsDuringDiscovery fails a link discovery has already probed,
// 50 ms before discovery ends (about 253 ms on fattree:4). The switches'
// alarms reach the controller while its first discovery runs; it keeps
// them, checks the link once discovery is done and books it down, and
// since host probes sent past the link were lost, looks for hosts again.
// It used to drop the alarms (the switch reports a change once): the link
// stayed up in its view, 12 of 16 hosts stayed unknown, and 456 of 480
// pings were lost 25 s later.
func TestLinkFailsDuringDiscovery(t *testing.T) {
	l := newLab(t, "fattree:4", nil)
	failed := fabricLink(t, l, "s5", "s1")
	l.s.At(200*element.Millisecond, func() { _ = l.s.SetLink(failed, false) })
	l.discover(t)
	c := l.f.Controller()
	cc := l.f.Agent(l.f.ControllerNode()).Counters // the controller counts in its host's agent
	l.s.Run(l.s.Now() + 500*element.Millisecond)
	want, _ := dumbnet.Expected(l.g)
	for i, lk := range want.Links {
		if lk.Up && !slices.ContainsFunc(c.Topology().Links, func(x dumbnet.Link) bool { return x == lk }) {
			want.Links[i].Up = false // the failed one, checked below
		}
	}
	if d := c.Topology().Diff(want); len(d) > 0 {
		t.Fatalf("controller's view: %v", d)
	}
	down := 0
	for _, lk := range c.Topology().Links {
		if !lk.Up {
			down++
		}
	}
	if down != 1 || cc()["ctrl_link_events_held"] == 0 || cc()["ctrl_link_down_confirmed"] != 1 || cc()["ctrl_host_rescans"] != 1 {
		t.Fatalf("%d links down, counters %v: want s5-s1 alone, its alarms held, confirmed once, one host rescan", down, cc())
	}
	ok, total, failedPairs := l.pingAll(t)
	if ok != total {
		t.Fatalf("%d/%d pairs; failed %v", ok, total, failedPairs)
	}
}

// TestPortsUpDuringRescan plugs in two links 1 ms apart. The first starts
// a rescan; the second's port comes up while it runs and is rescanned
// when it ends (the switch reports the port once: it used to be dropped,
// and the link never found).
func TestPortsUpDuringRescan(t *testing.T) {
	l := newLab(t, "fattree:4", nil)
	a, b := fabricLink(t, l, "s5", "s1"), fabricLink(t, l, "s10", "s3")
	l.s.At(0, func() { _ = l.s.SetLink(a, false); _ = l.s.SetLink(b, false) })
	l.discover(t)
	want, _ := dumbnet.Expected(l.g)
	c := l.f.Controller()
	cc := l.f.Agent(l.f.ControllerNode()).Counters // the controller counts in its host's agent
	if d := c.Topology().Diff(want); len(d) != 2 {
		t.Fatalf("after discovery: %v, want the two links missing", d)
	}
	// The alarms for the ports going down at time 0 opened 1 s windows:
	// the ups are announced as they close.
	l.s.At(element.Second, func() { _ = l.s.SetLink(a, true) })
	l.s.At(element.Second+element.Millisecond, func() { _ = l.s.SetLink(b, true) })
	l.s.Run(2500 * element.Millisecond)
	if d := c.Topology().Diff(want); len(d) > 0 {
		t.Fatalf("after both links came up: %v", d)
	}
	// Three ports waited: the first link's far end and both ends of the
	// second (an unknown link's ends are two ports); once the second is
	// found from one end, the other needs no rescan.
	if got := cc(); got["ctrl_rescans"] != 2 || got["ctrl_rescans_waiting"] != 3 || got["ctrl_host_rescans"] != 0 {
		t.Fatalf("counters %v: want 2 rescans, 3 ports waiting, no host rescan", got)
	}
}

// TestDownDuringRescan fails a link that a rescan is finding: line:4 with
// s2-s3 down from the start, so that discovery finds s1 and s2 only;
// s2-s3 comes up at 1.1 s and its rescan runs to about 1.25 s; s3-s4 fails
// at 1.18 s, reported by switches the controller's graph does not hold yet.
// The report is held until the rescan ends, then checked: the link used to
// be added up, for good (found in review).
func TestDownDuringRescan(t *testing.T) {
	l := newLab(t, "line:4", nil)
	a, b := fabricLink(t, l, "s2", "s3"), fabricLink(t, l, "s3", "s4")
	l.s.At(0, func() { _ = l.s.SetLink(a, false) })
	l.discover(t)
	l.s.At(1100*element.Millisecond, func() { _ = l.s.SetLink(a, true) })
	l.s.At(1180*element.Millisecond, func() { _ = l.s.SetLink(b, false) })
	l.s.Run(3 * element.Second)
	want, _ := dumbnet.Expected(l.g)
	// s4 is known (the rescan reached it before the failure), its link
	// down, so it is held failed, and its hosts not (nothing reaches
	// them).
	got := l.f.Controller().Topology().Diff(want)
	exp := []string{
		"missing switch 0x60000030000",
		"extra down switch 0x60000030000",
		"extra link 0x60000020000:4-0x60000030000:3 up=false",
		"missing link 0x60000020000:4-0x60000030000:3 up=true",
		"missing host 02:ef:00:00:00:07 10.0.0.7 at 0x60000030000:1",
		"missing host 02:ef:00:00:00:08 10.0.0.8 at 0x60000030000:2",
	}
	if !slices.Equal(got, exp) {
		t.Fatalf("controller's view differs by %v, want %v", got, exp)
	}
}

// TestTwoLinksFailDuringDiscovery fails both of s5's uplinks during the
// first discovery. Both reports are held and
// checked; the hosts are looked for again only once both are booked down,
// so that the rescan's probes avoid both (it used to run after the first
// check, across the second failed link, and left 12 of 16 hosts unknown;
// found in review).
func TestTwoLinksFailDuringDiscovery(t *testing.T) {
	l := newLab(t, "fattree:4", nil)
	a, b := fabricLink(t, l, "s5", "s1"), fabricLink(t, l, "s5", "s2")
	l.s.At(200*element.Millisecond, func() { _ = l.s.SetLink(a, false); _ = l.s.SetLink(b, false) })
	l.discover(t)
	l.s.Run(l.s.Now() + 500*element.Millisecond)
	cc := l.f.Agent(l.f.ControllerNode()).Counters()
	if n := len(l.f.Controller().Topology().Hosts); n != 16 || cc["ctrl_link_down_confirmed"] != 2 || cc["ctrl_host_rescans"] != 1 {
		t.Fatalf("%d of 16 hosts known 500 ms after discovery; counters %v: want 2 downs confirmed, then 1 host rescan", n, cc)
	}
}

// TestFailuresDuringDiscovery fails, during the first discovery of
// fattree:4 (about 0-253 ms), every fabric link alone at every 20 ms, and
// every pair of them at every 30 ms from 20 ms. 1 s after discovery the
// controller knows every host still connected to it and holds no failed
// link up. Before held changes were applied after every check, 182 of the
// 496 pairs at 200 ms left reachable hosts unknown; before the repair
// scanned for switches too, not only hosts, 112 of the 4,464 pairs left a
// switch and its hosts unknown (both found in review).
func TestFailuresDuringDiscovery(t *testing.T) {
	g, err := topo.Parse("fattree:4", 1)
	if err != nil {
		t.Fatal(err)
	}
	fabric := fabricLinks(g)
	type run struct {
		at    element.Time
		links []topo.LinkID
	}
	var runs []run
	for at := element.Time(0); at <= 260*element.Millisecond; at += 20 * element.Millisecond {
		for _, a := range fabric {
			runs = append(runs, run{at, []topo.LinkID{a}})
		}
	}
	for at := 20 * element.Millisecond; at <= 260*element.Millisecond; at += 30 * element.Millisecond {
		for x := range fabric {
			for y := x + 1; y < len(fabric); y++ {
				runs = append(runs, run{at, []topo.LinkID{fabric[x], fabric[y]}})
			}
		}
	}
	bad := 0
	for _, r := range runs {
		l := newLabGraph(t, g, nil)
		failed := map[topo.LinkID]bool{}
		var names []string
		for _, lk := range r.links {
			failed[lk] = true
			names = append(names, l.name(g.Link(lk).A.Node)+"-"+l.name(g.Link(lk).B.Node))
		}
		l.s.At(r.at, func() {
			for _, lk := range r.links {
				_ = l.s.SetLink(lk, false)
			}
		})
		l.discover(t)
		l.s.Run(l.s.Now() + element.Second)
		missing, heldUp := viewAfterFailures(l, failed)
		if missing > 0 || heldUp > 0 {
			if bad++; bad <= 5 {
				t.Errorf("%v failing at %v: %d reachable hosts unknown, %d failed links up", names, r.at, missing, heldUp)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d runs wrong", bad, len(runs))
	}
}

// viewAfterFailures checks the controller's view against the fabric with
// the failed links down: how many hosts reachable from the controller it
// does not know, and how many ends of failed links it holds up.
func viewAfterFailures(l *lab, failed map[topo.LinkID]bool) (missing, heldUp int) {
	g := l.g
	reach := map[topo.NodeID]bool{l.f.ControllerNode(): true}
	for queue := []topo.NodeID{l.f.ControllerNode()}; len(queue) > 0; queue = queue[1:] {
		n := queue[0]
		for _, lk := range g.Ports(n) {
			if lk == topo.NoLink || failed[lk] {
				continue
			}
			e := g.Link(lk)
			o := e.A.Node
			if o == n {
				o = e.B.Node
			}
			if !reach[o] {
				reach[o] = true
				queue = append(queue, o)
			}
		}
	}
	topology := l.f.Controller().Topology()
	known := map[wire.MAC]bool{}
	for _, h := range topology.Hosts {
		known[h.MAC] = true
	}
	for _, h := range g.Nodes(topo.Host) {
		if mac, _, _ := g.HostAddr(h); reach[h] && !known[wire.MAC(mac)] {
			missing++
		}
	}
	for f := range failed {
		e := g.Link(f)
		for _, lk := range topology.Links {
			for _, end := range []topo.End{e.A, e.B} {
				if lk.Up && lk.A == dumbnet.SwitchID(end.Node) && lk.APort == uint16(end.Port) {
					heldUp++
				}
			}
		}
	}
	return missing, heldUp
}

// TestFailuresDuringRescan: on line:5, s2-s3 is down from the start (so
// discovery finds s1 and s2 only) and comes up at 1.1 s; its rescan finds
// s3 to s5 by about 1.3 s. Every other fabric link fails at every 10 ms
// from 1.1 s to 1.4 s. A second later the controller knows every host
// still connected to it and holds no failed link up (a failure reported
// by switches the rescan was finding used to be dropped).
func TestFailuresDuringRescan(t *testing.T) {
	g, err := topo.Parse("line:5", 1)
	if err != nil {
		t.Fatal(err)
	}
	runs, bad := 0, 0
	for _, b := range fabricLinks(g) {
		for at := 1100 * element.Millisecond; at <= 1400*element.Millisecond; at += 10 * element.Millisecond {
			l := newLabGraph(t, g, nil)
			a := fabricLink(t, l, "s2", "s3")
			if b == a {
				continue
			}
			runs++
			l.s.At(0, func() { _ = l.s.SetLink(a, false) })
			l.discover(t)
			l.s.At(1100*element.Millisecond, func() { _ = l.s.SetLink(a, true) })
			l.s.At(at, func() { _ = l.s.SetLink(b, false) })
			l.s.Run(at + element.Second)
			if missing, heldUp := viewAfterFailures(l, map[topo.LinkID]bool{b: true}); missing > 0 || heldUp > 0 {
				if bad++; bad <= 5 {
					t.Errorf("s2-s3 up at 1.1s, %s-%s down at %v: %d reachable hosts unknown, %d failed link ends up",
						l.name(g.Link(b).A.Node), l.name(g.Link(b).B.Node), at, missing, heldUp)
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d runs wrong", bad, runs)
	}
}

// TestKnownLinkFailsDuringRescan: pod 4 of fattree:4 is cut off from the
// start (s11-s1, s11-s2, s12-s3, s12-s4 down); s11-s1 comes up at 1.1 s
// and its rescan finds the pod. Every fabric link outside the pod, which
// the controller knows, fails at every 10 ms from 1.1 s to 1.4 s. Two
// seconds later the controller knows every host still connected to it and
// holds no failed link up (a known link failing during the rescan lost
// its probes past it, and s12, s19, s20 and their hosts were never found;
// found in review).
func TestKnownLinkFailsDuringRescan(t *testing.T) {
	g, err := topo.Parse("fattree:4", 1)
	if err != nil {
		t.Fatal(err)
	}
	pod := map[string]bool{"s11": true, "s12": true, "s19": true, "s20": true}
	runs, bad := 0, 0
	for _, b := range fabricLinks(g) {
		if pod[g.Node(g.Link(b).A.Node).Name] || pod[g.Node(g.Link(b).B.Node).Name] {
			continue
		}
		for at := 1100 * element.Millisecond; at <= 1400*element.Millisecond; at += 10 * element.Millisecond {
			l := newLabGraph(t, g, nil)
			cut := []topo.LinkID{fabricLink(t, l, "s11", "s1"), fabricLink(t, l, "s11", "s2"), fabricLink(t, l, "s12", "s3"), fabricLink(t, l, "s12", "s4")}
			runs++
			l.s.At(0, func() {
				for _, c := range cut {
					_ = l.s.SetLink(c, false)
				}
			})
			l.discover(t)
			l.s.At(1100*element.Millisecond, func() { _ = l.s.SetLink(cut[0], true) })
			l.s.At(at, func() { _ = l.s.SetLink(b, false) })
			l.s.Run(at + 2*element.Second)
			failed := map[topo.LinkID]bool{b: true, cut[1]: true, cut[2]: true, cut[3]: true}
			if missing, heldUp := viewAfterFailures(l, failed); missing > 0 || heldUp > 0 {
				if bad++; bad <= 5 {
					t.Errorf("%s-%s down at %v: %d reachable hosts unknown, %d failed link ends up",
						l.name(g.Link(b).A.Node), l.name(g.Link(b).B.Node), at, missing, heldUp)
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d runs wrong", bad, runs)
	}
}

// TestSwitchMissedDuringDiscovery: s5-s1 and s15-s8 fail together 110 ms
// into the first discovery of fattree:4; discovery's probes past them
// were lost, s15 among their targets. Once both are booked down the
// controller scans for switches and hosts again, and finds s15 and its
// hosts (a scan for hosts alone left them unknown for good; found in
// review).
func TestSwitchMissedDuringDiscovery(t *testing.T) {
	l := newLab(t, "fattree:4", nil)
	a, b := fabricLink(t, l, "s5", "s1"), fabricLink(t, l, "s15", "s8")
	l.s.At(110*element.Millisecond, func() { _ = l.s.SetLink(a, false); _ = l.s.SetLink(b, false) })
	l.discover(t)
	l.s.Run(l.s.Now() + element.Second)
	want, _ := dumbnet.Expected(l.g)
	// s5-s1 is held down; s15-s8, probed after it failed, is not known.
	got := l.f.Controller().Topology().Diff(want)
	exp := []string{
		"extra link 0x60000000000:1-0x60000040000:3 up=false",
		"missing link 0x60000000000:1-0x60000040000:3 up=true",
		"missing link 0x60000070000:1-0x600000e0000:4 up=true",
	}
	if !slices.Equal(got, exp) {
		t.Fatalf("controller's view differs by %v, want %v", got, exp)
	}
	if missing, heldUp := viewAfterFailures(l, map[topo.LinkID]bool{a: true, b: true}); missing > 0 || heldUp > 0 {
		t.Fatalf("%d reachable hosts unknown, %d failed link ends up", missing, heldUp)
	}
}
