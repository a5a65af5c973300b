package dumbnet

import (
	"cmp"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

// Store keeps the controller's state outside the controller (DumbNet §4.1
// keeps replicas consistent through ZooKeeper; edgefabric's design puts it
// in etcd). The controller writes the topology after discovery and after
// every change, with the version hosts see in patches and path graphs.
type Store interface {
	PutTopology(version uint64, t *Topology) error
	Topology() (version uint64, t *Topology, ok bool)
}

// MemStore is the in-memory Store, the default.
type MemStore struct {
	version uint64
	t       *Topology
}

// PutTopology implements Store.
func (s *MemStore) PutTopology(version uint64, t *Topology) error {
	s.version, s.t = version, t
	return nil
}

// Topology implements Store.
func (s *MemStore) Topology() (uint64, *Topology, bool) { return s.version, s.t, s.t != nil }

// hostRec is a discovered host in the controller's graph.
type hostRec struct {
	loc HostLoc
	at  attach
	// nbrs is the host's last flood-neighbour list; resent tells whether
	// it went out again after a query of the host's (below).
	nbrs   *wire.DumbNetNeighbors
	resent bool
	// ann is the path to the controller last announced to the host.
	ann []uint8
}

// Controller is the DumbNet controller (DumbNet §4): it discovers the
// topology by BFS probing from its host, serves path graphs on query, and
// turns failure notifications into topology patches flooded to every host.
// It is part of its host's Agent, which carries its frames.
type Controller struct {
	a     *Agent
	disc  *discovery
	store Store

	g       *netGraph
	sc      scratch
	alt     scratch // sendNeighbors' second routes, beside its BFS in sc
	hosts   map[wire.MAC]*hostRec
	byIP    map[netipKey]wire.MAC
	root    attach // where the controller's own NIC is cabled
	version uint64
	ready   bool
	// tree is a BFS tree from the controller's switch, for the paths of its
	// replies, rebuilt when the topology changes.
	tree     []hop
	treeDist []int32
	treeVer  uint64
	treeGen  uint64
	// checksGen counts the changes to downChecks: the tree leaves links
	// under a check out, and is rebuilt when they change.
	checksGen uint64

	// downChecks are the links reported down whose check probes are out
	// (by their lower end, linkKey): booked down if none is answered.
	downChecks map[portID]*downCheck
	// upChecks are the links reported up whose verification probe is
	// out, by linkKey.
	upChecks map[portID]*upCheck

	deferred []wire.DumbNetPathQuery
	// early are the port state changes that reached the controller while
	// its first discovery ran, by port (the last word wins): applied when
	// it ends. A switch reports a change once, and hosts drop repeats, so
	// a change dropped then would be lost for good (a link that failed
	// after discovery saw it would stay up in the controller's view).
	early map[portID]bool
	// rescanHostsAfterCheck: a link went down while the first discovery
	// ran, so its probes past the link may have been lost; once the check
	// books the link down, the hosts are looked for again.
	rescanHostsAfterCheck bool
	// waitingPorts are the ports that came up, where no link was known,
	// while a discovery run was on: each is rescanned when the run ends.
	waitingPorts []portID
	// unverifiedWaiting are the waiting ports (by ID) whose link, held
	// up, failed the verification of an "up" report (upUnverified): their
	// rescan is due though the link is still up in the graph.
	unverifiedWaiting map[portID]bool
	// rescanned is the port the running rescan probes, whose record of a
	// known link it cleared (a host found there must be placed).
	rescanned *portID
	// refound are the links a rescan found again at the ports the graph
	// holds them on, in the order found; downInRun the links (by linkKey)
	// held down and reported down while the run was on. discovered brings
	// the first up (refound), unless they are among the second.
	refound   []Link
	downInRun map[portID]bool
	// recabled are the switches (by ID) held failed that lost a link to a
	// rescan that found its far end cabled elsewhere (dropLink): replaced,
	// their hosts may be found elsewhere (hostGone). One leaves the set
	// when it comes back.
	recabled map[uint64]bool
	// nextHostScan rate-limits rescans for missed hosts; hostScanWaiting:
	// one asked for sooner waits for it (rescanHosts).
	nextHostScan    element.Time
	hostScanWaiting bool
	// unplaced are the hosts the controller heard from (a probe of theirs,
	// a query, a flooded notification, an answer that came late) without
	// having placed them, with the host rescans each may still start. A
	// host that found the controller by its own search while the first
	// discovery ran, its answer to discovery lost, sends nothing more
	// until its stack talks: the controller must not forget it (the
	// TestEmuChaosRecovers failure of 2026-11-26).
	unplaced map[wire.MAC]int
	// periodic: the periodic audit is marking switches stale (its audit
	// rescans nothing). wantRescan: switches went out of reach (the
	// controller cut off, a partition, a flap) or were audited for such a
	// reason, so the next audit to end rescans the ports where no link is
	// known; nextAuditRescan and auditRescanWaiting pace those rescans
	// (auditRescan).
	periodic           bool
	wantRescan         bool
	nextAuditRescan    element.Time
	auditRescanWaiting bool
	// lateHost: a host the controller does not know answered after its
	// round ended, while discovery ran; it is looked for at the end.
	lateHost bool
	// stale are the switches (by ID) whose port changes may not have
	// reached the controller, and audit re-checks their links once it can
	// reach them again (audit.go).
	stale map[uint64]bool
	audit *audit
	// auditArmed: the periodic audit's timer runs (from the first
	// discovery's end on).
	auditArmed bool
	// nextFlapAudit and flapTimer pace the audits flapped starts; cut is
	// what it looks up which switches a flapped link cut off in.
	nextFlapAudit element.Time
	flapTimer     bool
	cut           cuts
	// recentAnn is when each link's patch last went out, and repatch the
	// links whose patches may have been lost to a NIC outage
	// (resendPatches).
	recentAnn map[portID]element.Time
	repatch   map[portID]bool
	// fullScan makes the next rescan for hosts probe for switches too:
	// the probes of a discovery run past a link that failed meanwhile
	// were lost, and a switch behind it may be missing (hostsAfterChecks).
	fullScan bool

	// snap is the topology as last published, and done its completion:
	// both safe to read from any goroutine (the emulator runs the element
	// on its own goroutine while a test or the demo reads them).
	snap   atomic.Pointer[Topology]
	done   atomic.Bool
	doneAt atomic.Int64
}

// maxDeferred bounds the queries held while discovery runs.
const maxDeferred = 4096

func newController(a *Agent, st Store) *Controller {
	c := &Controller{a: a, store: st, hosts: make(map[wire.MAC]*hostRec), byIP: make(map[netipKey]wire.MAC), downChecks: make(map[portID]*downCheck), upChecks: make(map[portID]*upCheck), stale: make(map[uint64]bool), recabled: make(map[uint64]bool),
		recentAnn: make(map[portID]element.Time), repatch: make(map[portID]bool), unplaced: make(map[wire.MAC]int)}
	c.disc = newDiscovery(a, false)
	c.disc.onDone = c.discovered
	return c
}

// Done reports whether the first topology discovery has finished. Safe
// from any goroutine.
func (c *Controller) Done() bool { return c.done.Load() }

// Snapshot returns the topology as of the last change (discovery's end, a
// link going down or up), or nil before discovery finishes. Safe from any
// goroutine; the result must not be modified.
func (c *Controller) Snapshot() *Topology { return c.snap.Load() }

// DoneAt returns when the first discovery finished (engine time), 0
// before. Safe from any goroutine.
func (c *Controller) DoneAt() element.Time { return element.Time(c.doneAt.Load()) }

// Probes returns how many probing messages discovery sent. Safe from any
// goroutine.
func (c *Controller) Probes() uint64 { return c.disc.probes.Load() }

// Rounds returns how many BFS rounds discovery took. Safe from any
// goroutine.
func (c *Controller) Rounds() int { return int(c.disc.rounds.Load()) }

// Version returns the topology version (bumped by every change).
func (c *Controller) Version() uint64 { return c.version }

// Topology returns the discovered topology with current link states; a
// switch with no link up is listed as down (switchDown).
func (c *Controller) Topology() *Topology {
	t := c.disc.topology()
	if c.g != nil {
		for i, l := range t.Links {
			a := c.g.idx[l.A]
			t.Links[i].Up = c.g.peerOf(a, l.APort).up
		}
		withHosts := make(map[uint64]bool, len(t.Switches))
		for _, h := range t.Hosts {
			withHosts[h.Switch] = true
		}
		up := t.Switches[:0]
		for _, id := range t.Switches {
			i, ok := c.g.idx[id]
			switch {
			case !ok || !c.switchDown(i):
				up = append(up, id)
			case len(c.g.used[i]) > 0 || withHosts[id]:
				t.Down = append(t.Down, id)
			}
			// A switch with nothing left on it, its links found cabled
			// elsewhere and its hosts moved (a switch replaced by one with
			// another ID), is gone.
		}
		t.Switches = up
	}
	return t
}

// hostGone reports whether the place where host h was found is gone: its
// switch is held failed and a rescan found one of its links cabled
// elsewhere since (dropLink: a switch replaced by one with another ID on
// the same cables), or its port leads to a switch now (its cable moved).
// A host found at another port then moved there; otherwise a second place
// for a MAC is an identity conflict. A switch that is only held failed
// keeps its hosts: it may come back as it was, and host answers are not
// authenticated, so that a rogue host answering in another's name while
// that host's switch is down would otherwise take its place for good.
func (c *Controller) hostGone(h HostLoc) bool {
	i, ok := c.g.idx[h.Switch]
	return ok && (c.recabled[h.Switch] && c.switchDown(i) || c.g.peerOf(i, h.Port).sw >= 0)
}

// switchDown reports whether switch i is held failed: no link of it is up
// (its neighbours reported every one down, or the audit found them
// silent). The controller cannot tell a failed switch from one whose
// links all failed; either carries nothing to or from the rest of the
// fabric. Its own switch is never down: the controller's NIC is cabled
// to it.
func (c *Controller) switchDown(i int32) bool {
	if i == c.root.sw {
		return false
	}
	for _, p := range c.g.used[i] {
		if c.g.ports[i][p].up {
			return false
		}
	}
	return true
}

// discovered builds the controller's graph from what discovery found,
// keeping the state of links it already knew, announces the controller to
// every host, and serves the queries that waited.
func (c *Controller) discovered() {
	if k := c.rescanned; k != nil {
		// A rescanned port that still holds its link (the rescan found
		// nothing else there: every answer lost) stays one where a link is
		// known, so that host probes avoid it: one would go on past the
		// switch there, and a host's answer from beyond would place the
		// host on the port and drop the link.
		c.rescanned = nil
		if i, ok := c.g.idx[k.sw]; ok && c.g.peerOf(i, k.port).sw >= 0 {
			c.disc.sws[c.disc.byID[k.sw]].known[k.port] = true
		}
	}
	old := c.g
	g := newNetGraph()
	t := c.disc.topology()
	for _, id := range t.Switches {
		g.addSwitch(id)
	}
	for _, l := range t.Links {
		up := true
		if old != nil {
			if a, ok := old.idx[l.A]; ok {
				if pe := old.peerOf(a, l.APort); pe.sw >= 0 && old.ids[pe.sw] == l.B && pe.port == l.BPort {
					up = pe.up
				}
			}
		}
		g.addLink(g.idx[l.A], l.APort, g.idx[l.B], l.BPort, up, 0)
	}
	c.g = g
	clear(c.hosts)
	clear(c.byIP)
	for _, h := range t.Hosts {
		c.hosts[h.MAC] = &hostRec{loc: h, at: attach{sw: g.idx[h.Switch], port: h.Port}}
		if h.IP.IsValid() {
			c.byIP[netipKey(h.IP.As16())] = h.MAC
		}
	}
	root := c.disc.sws[0]
	c.root = attach{sw: g.idx[root.id], port: uint16(root.ret[0])}
	c.version++
	c.ready = true
	c.a.env.Log().Info("topology discovered", "switches", len(t.Switches), "links", len(t.Links), "hosts", len(t.Hosts),
		"probes", c.disc.probes.Load(), "version", c.version)
	c.publish()
	if !c.done.Load() {
		c.doneAt.Store(int64(c.disc.doneAt))
	}
	c.done.Store(true)
	c.a.controllerReady()
	// Announce the controller to every host (see Agent.acceptAnnouncement).
	for _, h := range t.Hosts {
		c.announceController(h.MAC)
	}
	c.sendNeighbors()
	for i := range c.deferred {
		c.query(&c.deferred[i])
	}
	c.deferred = nil
	c.refoundUp()
	c.applyEarly()
	c.retryUnplaced()
	c.nextRescan()
	if !c.auditArmed && c.a.cfg.AuditEvery > 0 {
		c.auditArmed = true
		c.a.env.After(c.a.cfg.AuditEvery, c.periodicAudit)
	}
}

// refoundUp brings up the links held down that the run just ended found
// again where the graph holds them (refound): a rescan of a port whose link
// failed its verification (every answer lost or late) sends, among others,
// the very probes of the verification (out through the port to a tag-0
// query at the far end, and out and back through the far end's port to
// one at the port's switch), and both were answered. The graph rebuilt at
// the run's end keeps the state the old one held, down, and no switch
// would report the ports again: the link stayed down for good, and a
// switch that came back with it held failed. A link reported down during
// the run, after its answers perhaps, is verified afresh instead.
func (c *Controller) refoundUp() {
	found, vetoed := c.refound, c.downInRun
	c.refound, c.downInRun = nil, nil
	for _, l := range found {
		i, ok := c.g.idx[l.A]
		if !ok {
			continue
		}
		pe := c.g.peerOf(i, l.APort)
		if pe.sw < 0 || pe.up || c.g.ids[pe.sw] != l.B || pe.port != l.BPort {
			continue
		}
		if vetoed[c.linkKey(i, l.APort)] {
			c.verifyLink(i, l.APort)
			continue
		}
		c.a.c.Inc("ctrl_links_refound")
		c.a.env.Log().Info("link found again by a rescan: up", "link", fmt.Sprintf("%#x:%d-%#x:%d", l.A, l.APort, l.B, l.BPort))
		c.linkUpVerified(l.A, l.APort)
	}
}

// applyEarly applies the port state changes held during the discovery run
// that just ended (early), in port order. One that arrives while a run
// this starts is on is held for its end.
func (c *Controller) applyEarly() {
	early := c.early
	if len(early) == 0 {
		return
	}
	c.early = nil
	keys := make([]portID, 0, len(early))
	for k := range early {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, comparePortID)
	for _, k := range keys {
		// A link discovery found up, reported down: its check decides.
		if i, ok := c.g.idx[k.sw]; ok && !early[k] {
			if pe := c.g.peerOf(i, k.port); pe.sw >= 0 && pe.up {
				c.rescanHostsAfterCheck = true
			}
		}
	}
	for _, k := range keys {
		c.linkEvent(k.sw, k.port, early[k])
	}
	c.hostsAfterChecks() // if no check is left out (a link with no probe path)
}

// hostsAfterChecks looks for hosts again once the link-downs held during a
// discovery run are all checked (rescanHostsAfterCheck): that run's host
// probes past a failed link were lost, and a rescan while another such
// link is still up in the graph would lose its own past it.
func (c *Controller) hostsAfterChecks() {
	if !c.rescanHostsAfterCheck || len(c.downChecks) > 0 {
		return
	}
	c.rescanHostsAfterCheck = false
	c.nextHostScan = 0
	c.fullScan = true
	c.rescanHosts()
}

// nextRescan starts what waited for a discovery run to end: the next port
// that came up meanwhile, else a rescan for hosts that answered late.
func (c *Controller) nextRescan() {
	for len(c.waitingPorts) > 0 && !c.disc.running {
		k := c.waitingPorts[0]
		c.waitingPorts = c.waitingPorts[1:]
		// Unless something found a working link there meanwhile (a port
		// whose link failed its verification waits with the link down),
		// or the link was held up when its verification failed: nothing
		// but the rescan finds where its cable leads now.
		due := c.unverifiedWaiting[k]
		delete(c.unverifiedWaiting, k)
		if i, ok := c.g.idx[k.sw]; ok && (due || !c.g.peerOf(i, k.port).up) {
			c.rescan(i, k.port)
		}
	}
	if c.lateHost && !c.disc.running {
		c.lateHost = false
		c.rescanHosts()
	}
}

// announceController tells host mac the path from it to the controller,
// with an unsolicited probe reply (seq 0), unless that is the path it was
// last told. It reports whether it sent one.
//
// A host the controller cannot reach is told nothing, and what it was
// last told is forgotten: an announcement sent just before its switch was
// cut off (the second of two uplinks failing while the first's check ran)
// may never have arrived, and the host would keep querying along a path
// over the first, dead link. Once the host can be reached again, it is
// told whichever path there is, even the one it was told last.
func (c *Controller) announceController(mac wire.MAC) bool {
	h := c.hosts[mac]
	if mac == c.a.mac || h == nil {
		return false
	}
	back, ok := c.pathFrom(mac)
	if !ok {
		h.ann = nil
		return false
	}
	if slices.Equal(back, h.ann) {
		return false
	}
	m := wire.DumbNetProbeReply{Seq: 0, HostMAC: c.a.mac, HostIP: c.a.ip, Controller: c.a.mac, Path: back}
	if !c.sendTo(mac, &m) {
		return false
	}
	h.ann = back
	return true
}

// sendNeighbors gives every host the hosts it floods a failure notification
// to (DumbNet §4.2 stage 1: "the message starts from the hosts on the same
// switch, then goes to hosts on the neighboring switches"): the other hosts
// of its switch, then the first host of each neighbouring switch with
// hosts, with the tags to each over working links, twice when a second
// route shares no link with the first. Each host floods on to its own.
//
// Switches with hosts are neighbours along a spanning tree of the "near"
// relation (two switches are near when only switches without hosts lie on
// a shortest path between them), the shortest near pairs first (Kruskal,
// ties in a fixed pseudo-random order so that no switch becomes a hub): a
// tree reaches every switch the failure leaves connected to it, at a cost
// of one list entry per tree edge end. Taking every near pair instead
// would give each edge switch of a fat tree every other one (only
// aggregation and core switches lie between them): quadratic flood
// traffic.
func (c *Controller) sendNeighbors() {
	bySw := make(map[int32][]wire.MAC)
	for mac, h := range c.hosts {
		bySw[h.at.sw] = append(bySw[h.at.sw], mac)
	}
	sws := make([]int32, 0, len(bySw))
	for sw, macs := range bySw {
		slices.SortFunc(macs, func(x, y wire.MAC) int { return slices.Compare(x[:], y[:]) })
		sws = append(sws, sw)
	}
	slices.Sort(sws)
	// Near pairs, each once (a < b).
	type pair struct {
		a, b int32
		dist int32
		tie  uint64
	}
	var pairs []pair
	for _, sw := range sws {
		c.g.bfs(&c.sc, sw, nil)
		dist, prev := c.sc.dist, c.sc.prev
		for _, t := range sws {
			if t <= sw || dist[t] < 0 {
				continue
			}
			v := prev[t].sw
			for v != sw && len(bySw[v]) == 0 {
				v = prev[v].sw
			}
			if v == sw {
				pairs = append(pairs, pair{sw, t, dist[t], mix(uint64(c.g.ids[sw]) ^ mix(uint64(c.g.ids[t])))})
			}
		}
	}
	slices.SortFunc(pairs, func(x, y pair) int {
		if x.dist != y.dist {
			return int(x.dist - y.dist)
		}
		return cmp.Compare(x.tie, y.tie)
	})
	parent := make(map[int32]int32, len(sws))
	var find func(int32) int32
	find = func(v int32) int32 {
		p, ok := parent[v]
		if !ok || p == v {
			return v
		}
		r := find(p)
		parent[v] = r
		return r
	}
	tree := make(map[int32][]int32, len(sws))
	for _, p := range pairs {
		ra, rb := find(p.a), find(p.b)
		if ra == rb {
			continue
		}
		parent[ra] = rb
		tree[p.a] = append(tree[p.a], p.b)
		tree[p.b] = append(tree[p.b], p.a)
	}
	type out struct {
		to wire.MAC
		m  wire.DumbNetNeighbors
	}
	var msgs []out
	for _, sw := range sws {
		var nbs []wire.DumbNetNeighbor
		for _, mac := range bySw[sw] {
			nbs = append(nbs, wire.DumbNetNeighbor{MAC: mac, Path: []uint8{uint8(c.hosts[mac].at.port)}})
		}
		c.g.bfs(&c.sc, sw, nil)
		dist, prev := c.sc.dist, c.sc.prev
		ts := tree[sw]
		slices.SortFunc(ts, func(x, y int32) int {
			if dist[x] != dist[y] {
				return int(dist[x] - dist[y])
			}
			return int(x - y)
		})
		for _, t := range ts {
			mac := bySw[t][0]
			// Routes end with a hop out of the last switch to the host.
			last := hop{sw: t, out: c.hosts[mac].at.port}
			r := []hop{last}
			for v := t; v != sw; v = prev[v].sw {
				r = append(r, prev[v])
			}
			slices.Reverse(r)
			nb := wire.DumbNetNeighbor{MAC: mac, Path: routeTags(r)}
			// A second route sharing no link with the first, so that the
			// failure being announced cannot cut both.
			ban := &bans{ports: make(map[uint32]bool, 2*len(r))}
			for _, h := range r[:len(r)-1] {
				pe := c.g.peerOf(h.sw, h.out)
				ban.ports[portKey(h.sw, h.out)] = true
				ban.ports[portKey(pe.sw, pe.port)] = true
			}
			if alt := c.g.shortest(&c.alt, sw, t, nil, ban); alt != nil {
				alt[len(alt)-1] = last
				nb.Alt = routeTags(alt)
			}
			if len(nb.Path) <= wire.DumbNetMaxTags && len(nb.Alt) <= wire.DumbNetMaxTags {
				nbs = append(nbs, nb)
			}
		}
		for _, mac := range bySw[sw] {
			m := wire.DumbNetNeighbors{Version: c.version}
			for _, nb := range nbs {
				if nb.MAC != mac && len(m.Neighbors) < wire.DumbNetMaxNeighbors {
					m.Neighbors = append(m.Neighbors, nb)
				}
			}
			msgs = append(msgs, out{mac, m})
		}
	}
	// Sent after: sendTo's paths reuse the BFS scratch.
	for _, o := range msgs {
		h := c.hosts[o.to]
		h.nbrs, h.resent = &o.m, false
		c.a.c.Inc("ctrl_neighbor_lists")
		c.sendTo(o.to, h.nbrs)
	}
}

// publish stores the current topology in the Store and the snapshot.
func (c *Controller) publish() {
	t := c.Topology()
	if err := c.store.PutTopology(c.version, t); err != nil {
		c.a.c.Inc("store_error")
	}
	c.snap.Store(t)
}

// refreshTree recomputes the BFS tree from the controller's switch, over
// the links that are up and not under a down check: the controller's
// messages to hosts and the paths it tells them to reach it by avoid a
// link reported down at once, as path graphs do (stage 1 needs no
// controller, but a host whose path graph the failure cut asks it for
// paths, and neither its query nor the reply must cross the failed link).
func (c *Controller) refreshTree() {
	if c.tree != nil && c.treeVer == c.version && c.treeGen == c.checksGen {
		return
	}
	restore := c.checkedDown()
	var unaudited []attach
	if c.audit != nil {
		for k := range c.audit.links {
			if i, ok := c.g.idx[k.sw]; ok && c.g.setUp(i, k.port, false) {
				unaudited = append(unaudited, attach{sw: i, port: k.port})
			}
		}
	}
	c.g.bfs(&c.sc, c.root.sw, nil)
	for _, f := range unaudited {
		c.g.setUp(f.sw, f.port, true)
	}
	restore()
	n := c.g.numSwitches()
	c.tree = slices.Clone(c.sc.prev[:n])
	c.treeDist = slices.Clone(c.sc.dist[:n])
	c.treeVer, c.treeGen = c.version, c.checksGen
}

// treeReaching returns the controller's BFS tree (parents and distances),
// or, when switch sw can be reached only across a link under a down check,
// a tree over every up link: the link may work, and a probe or patch sent
// across it is better than none (a second report's check, a refutation's
// patch).
func (c *Controller) treeReaching(sw int32) ([]hop, []int32) {
	c.refreshTree()
	if c.treeDist[sw] >= 0 || len(c.downChecks) == 0 && c.audit == nil {
		return c.tree, c.treeDist
	}
	var sc scratch
	c.g.bfs(&sc, c.root.sw, nil)
	return sc.prev, sc.dist
}

// checksChanged notes a change to downChecks and tells every host whose
// path to the controller it changes its new path.
func (c *Controller) checksChanged() {
	c.checksGen++
	for _, m := range c.sortedHosts() {
		if c.announceController(m) {
			c.a.c.Inc("ctrl_reannounced")
		}
	}
}

// pathTo returns the tags from the controller to host mac.
func (c *Controller) pathTo(mac wire.MAC) ([]uint8, bool) {
	h, ok := c.hosts[mac]
	if !ok {
		return nil, false
	}
	tree, dist := c.treeReaching(h.at.sw)
	d := dist[h.at.sw]
	if d < 0 {
		return nil, false
	}
	tags := make([]uint8, d+1)
	tags[d] = uint8(h.at.port)
	for i, v := int(d)-1, h.at.sw; i >= 0; i-- {
		tags[i] = uint8(tree[v].out)
		v = tree[v].sw
	}
	return tags, true
}

// pathFrom returns the tags from host mac to the controller: the tree path
// walked backwards, each hop leaving by the port its parent link arrives
// on.
func (c *Controller) pathFrom(mac wire.MAC) ([]uint8, bool) {
	h, ok := c.hosts[mac]
	if !ok {
		return nil, false
	}
	c.refreshTree()
	d := c.treeDist[h.at.sw]
	if d < 0 {
		return nil, false
	}
	tags := make([]uint8, 0, d+1)
	for v := h.at.sw; v != c.root.sw; v = c.tree[v].sw {
		pe := c.g.peerOf(c.tree[v].sw, c.tree[v].out)
		tags = append(tags, uint8(pe.port))
	}
	return append(tags, uint8(c.root.port)), true
}

func (c *Controller) sendTo(mac wire.MAC, m wire.Message) bool {
	if mac == c.a.mac {
		c.a.localControl(m)
		return true
	}
	tags, ok := c.pathTo(mac)
	if !ok {
		c.a.c.Inc("ctrl_no_path_to_host")
		return false
	}
	f, err := c.a.controlFrame(mac, tags, m)
	if err != nil {
		c.a.c.Inc("ctrl_encode_error")
		return false
	}
	c.a.sendNIC(f)
	return true
}

// query serves a path query (DumbNet §4.3) with a path graph.
func (c *Controller) query(q *wire.DumbNetPathQuery) {
	if !c.ready {
		if len(c.deferred) >= maxDeferred {
			c.a.c.Inc("ctrl_query_dropped")
			return
		}
		c.deferred = append(c.deferred, *q)
		c.a.c.Inc("ctrl_query_deferred")
		return
	}
	src, ok := c.hosts[q.Src]
	if !ok {
		// A host discovery missed (its answer was lost) found the
		// controller by itself: look for it.
		c.a.c.Inc("ctrl_query_unknown_src")
		c.noteUnplaced(q.Src)
		c.rescanHosts()
		return
	}
	dstMAC := q.Dst
	if dstMAC == (wire.MAC{}) && q.DstIP.IsValid() {
		dstMAC = c.byIP[netipKey(q.DstIP.As16())]
	}
	dst, ok := c.hosts[dstMAC]
	if !ok {
		c.a.c.Inc("ctrl_query_unknown_dst")
		return
	}
	r := wire.DumbNetPathReply{QueryID: q.QueryID, Version: c.version, Src: q.Src, Dst: dstMAC,
		SrcSwitch: src.loc.Switch, SrcPort: src.loc.Port, DstSwitch: dst.loc.Switch, DstPort: dst.loc.Port}
	if src.at.sw != dst.at.sw {
		// A link whose reported failure is being checked is left out, as
		// the paper's controller, which books a report at once, would:
		// a host that heard the report before it cached the link would
		// otherwise route new flows into it until the patch.
		restore := c.checkedDown()
		pg := c.g.pathGraph(&c.sc, src.at.sw, dst.at.sw, c.a.cfg.S, c.a.cfg.Eps, c.a.env.Rand())
		restore()
		if pg == nil {
			c.a.c.Inc("ctrl_query_no_path")
			return
		}
		r.Links = c.linksOf(pg)
	}
	c.a.c.Inc("ctrl_path_graphs")
	c.sendTo(q.Src, &r)
	// A list lost on the way, or sent before the host knew the controller
	// (then refused as forged), would leave it out of the flood: send the
	// current one once more after the host's first query since.
	if src.nbrs != nil && !src.resent {
		src.resent = true
		c.a.c.Inc("ctrl_neighbor_lists_resent")
		c.sendTo(q.Src, src.nbrs)
	}
}

// linksOf lists a path graph's links, primary and backup first, so that a
// graph too large for one frame loses detours, never its paths.
func (c *Controller) linksOf(pg *PathGraph) []wire.DumbNetLink {
	ls := make([]wire.DumbNetLink, 0, len(pg.Links))
	for k, f := range pg.Links {
		ls = append(ls, wire.DumbNetLink{A: c.g.ids[k.a], APort: k.ap, B: c.g.ids[k.b], BPort: k.bp, Flags: f})
	}
	rank := func(f wire.LinkFlags) int {
		if f&(wire.LinkPrimary|wire.LinkBackup) != 0 {
			return 0
		}
		return 1
	}
	slices.SortFunc(ls, func(x, y wire.DumbNetLink) int {
		if r := rank(x.Flags) - rank(y.Flags); r != 0 {
			return r
		}
		if x.A != y.A {
			return cmp.Compare(x.A, y.A)
		}
		if x.APort != y.APort {
			return int(x.APort) - int(y.APort)
		}
		return cmp.Compare(x.B, y.B)
	})
	if max := c.a.cfg.MaxReplyLinks; len(ls) > max {
		ls = ls[:max]
		c.a.c.Inc("ctrl_pathgraph_truncated")
	}
	return ls
}

// linkEvent applies a port state change that reached the controller
// (directly from a switch or through the hosts' flood) and floods the
// topology patch (DumbNet §4.2 stage 2). A link coming back is verified
// with a probe first ("the controller will probe the ports to discover
// and verify the newly added links"). So is a link reported down: the
// report may come from any host (the flood relays hosts' word), and one
// forged report would otherwise take a working link out of every host's
// view for good, since no switch would ever report it up again.
func (c *Controller) linkEvent(sw uint64, port uint16, up bool) {
	// Held until the discovery run ends (early): every change during the
	// first one, which has no graph yet, and during a rescan a change on a
	// switch the graph does not hold yet, or a link going down that it
	// does not hold: the run may be finding that link, and would add it up
	// (a port coming up where no link is known waits in rescan instead).
	var i int32
	ok := false
	if c.ready {
		i, ok = c.g.idx[sw]
	}
	if !c.ready || c.disc.running && (!ok || !up && c.g.peerOf(i, port).sw < 0) {
		if c.early == nil {
			c.early = make(map[portID]bool)
		}
		k := portID{sw, port}
		if _, held := c.early[k]; !held && len(c.early) >= maxPortStates {
			// Only forged reports, each naming a new port, get here; the
			// periodic audit finds a real change lost this way.
			c.a.c.Inc("ctrl_link_events_dropped")
			return
		}
		c.early[k] = up
		c.a.c.Inc("ctrl_link_events_held")
		return
	}
	if !ok {
		// Held during a run that did not find the switch (the agent drops
		// the others): forged, or out of reach.
		c.a.c.Inc("ctrl_link_events_unknown")
		return
	}
	pe := c.g.peerOf(i, port)
	if pe.sw < 0 {
		if up {
			c.rescan(i, port)
		} else {
			c.a.c.Inc("ctrl_link_events_no_link") // a host's cable, or a port never cabled
		}
		return
	}
	if c.auditReport(i, port, up) {
		return
	}
	if up {
		// Back before its check ended: the check's probes went out while
		// the link was down and will not be answered, so it would book a
		// working link down for good (the switch reports "up" once).
		if k := c.linkKey(i, port); c.downChecks[k] != nil {
			c.a.c.Inc("ctrl_link_down_withdrawn")
			chk := c.downChecks[k]
			chk.cancel()
			delete(c.downChecks, k)
			c.dropDownProbes(chk)
			c.checksChanged()
			c.hostsAfterChecks()
			if pe.up {
				// Hosts believed the report (stage 1) and route around
				// the link; only a patch tells them it works.
				c.announce(i, port)
			}
		}
	}
	if up && pe.up {
		// A switch reports a port's state when its alarm window ends,
		// so "up" for a link held up is a port that went down and up
		// within the window, or came back while its down check ran: its
		// cable may have moved meanwhile (to another switch's port, to a
		// host). Checked as any link coming up; a working link passes at
		// no cost but two probes, a moved one fails and is rescanned.
		c.verifyLink(i, port)
		return
	}
	if pe.up == up {
		if !up && c.disc.running {
			// A rescan may be finding the link again (refoundUp).
			if c.downInRun == nil {
				c.downInRun = make(map[portID]bool)
			}
			c.downInRun[c.linkKey(i, port)] = true
		}
		return
	}
	if up {
		c.verifyLink(i, port)
		return
	}
	if c.disc.running {
		c.rescanHostsAfterCheck = true // the run's probes past it were lost
	}
	c.checkDown(i, port)
}

// repeatedEvent takes a new alarm whose state its host had already seen:
// news if it contradicts what the graph holds for a known link, and for a
// known link "up" again, which a switch reports when the port went down and
// up within its alarm window: its cable may have moved (linkEvent checks).
func (c *Controller) repeatedEvent(sw uint64, port uint16, up bool) {
	if !c.ready {
		return
	}
	if i, ok := c.g.idx[sw]; ok {
		if pe := c.g.peerOf(i, port); pe.sw >= 0 && (pe.up != up || up) {
			c.linkEvent(sw, port, up)
		}
	}
}

// checkedDown marks the links under a down check down in the graph and
// returns the function that marks them up again.
func (c *Controller) checkedDown() (restore func()) {
	var flipped []attach
	for k := range c.downChecks {
		if i, ok := c.g.idx[k.sw]; ok && c.g.setUp(i, k.port, false) {
			flipped = append(flipped, attach{sw: i, port: k.port})
		}
	}
	return func() {
		for _, f := range flipped {
			c.g.setUp(f.sw, f.port, true)
		}
	}
}

// downCheck is a link reported down whose check probes are out.
type downCheck struct {
	// seqs are the probes sent, linkCheckTries of them at once, in
	// disc.pending until the check ends: an answer to any of them refutes
	// the report.
	seqs   []uint32
	cancel func() // the timer that books the link down
}

// dropDownProbes forgets the probes of down check chk still out.
func (c *Controller) dropDownProbes(chk *downCheck) {
	for _, seq := range chk.seqs {
		c.dropPending(seq, kindLinkDown)
	}
	chk.seqs = nil
}

// linkKey names a link by its end on the lower switch ID (then port), so
// that reports from both ends meet; IDs, not graph indices, which a
// rediscovery renumbers.
func (c *Controller) linkKey(i int32, port uint16) portID {
	k := portID{c.g.ids[i], port}
	if pe := c.g.peerOf(i, port); pe.sw >= 0 {
		if o := (portID{c.g.ids[pe.sw], pe.port}); o.sw < k.sw || o.sw == k.sw && o.port < k.port {
			k = o
		}
	}
	return k
}

// linkProbePath is the path of a probe that checks the link on switch i's
// port: out through it, back through the far end, and a tag-0 query that
// must name switch i again.
func (c *Controller) linkProbePath(i int32, port uint16) ([]uint8, bool) {
	fwd, ret, ok := c.switchPaths(i)
	if !ok {
		return nil, false
	}
	pe := c.g.peerOf(i, port)
	return slices.Concat(fwd, []uint8{uint8(port), uint8(pe.port), wire.DumbNetQuery}, ret), true
}

// checkDown sends a link reported down linkCheckTries copies of the probe
// verifyLink sends, at once (the discovery queue paces them a probe gap
// apart), and books it down only if none is answered within the probe
// wait after the last of them leaves (probes queued before them are paced
// out first); an answer to any refutes the report (linkDownRefuted). One
// lost probe or answer cannot book a working link down, and a link that
// really failed is booked one probe wait (and the pacing) after the
// report, not one wait per try. The patch, stage 2, comes that much
// later; hosts route around the link at once anyway (stage 1).
func (c *Controller) checkDown(i int32, port uint16) {
	k := c.linkKey(i, port)
	if c.downChecks[k] != nil {
		return // the other end's report, or a repeat: one check
	}
	path, ok := c.linkProbePath(i, port)
	if !ok {
		c.setLink(i, port, false) // no way to the switch to check from
		return
	}
	d := c.disc
	ahead := len(d.queue) - d.qhead
	chk := &downCheck{}
	rec := probeRec{kind: kindLinkDown, sw: i, p: port, q: c.g.peerOf(i, port).port, nid: c.g.ids[i], path: path}
	for range linkCheckTries {
		before := d.seq
		d.send(rec)
		if _, out := d.pending[d.seq]; out && d.seq != before {
			chk.seqs = append(chk.seqs, d.seq)
		}
	}
	if len(chk.seqs) == 0 {
		c.setLink(i, port, false) // the probe could not be built
		return
	}
	c.downChecks[k] = chk
	// Path graphs computed from now on leave the link out: a version of
	// their own lets a host tell them from older ones when the link comes
	// back (Agent.repaired).
	c.version++
	defer c.checksChanged() // after the timer below is set
	id := c.g.ids[i]
	chk.cancel = c.a.env.After(scale(ahead+len(chk.seqs), d.gap)+d.wait(), func() {
		if c.downChecks[k] != chk {
			return // answered, or withdrawn
		}
		delete(c.downChecks, k)
		c.checksGen++ // setLink below re-announces
		c.dropDownProbes(chk)
		c.a.c.Inc("ctrl_link_down_confirmed")
		c.a.env.Log().Info("link down confirmed", "switch", fmt.Sprintf("%#x", id), "port", port)
		if i, ok := c.g.idx[id]; ok {
			c.setLink(i, port, false)
		}
		c.hostsAfterChecks()
	})
}

// linkDownRefuted completes checkDown when the link answered: it works.
// Hosts that believed the report (stage 1) routed around it, so a patch
// tells them it is up.
func (c *Controller) linkDownRefuted(id uint64, port uint16) {
	i, ok := c.g.idx[id]
	if !ok {
		return
	}
	k := c.linkKey(i, port)
	chk := c.downChecks[k]
	if chk == nil {
		return
	}
	chk.cancel()
	delete(c.downChecks, k)
	c.dropDownProbes(chk) // the other probes
	c.checksChanged()
	c.hostsAfterChecks()
	c.a.c.Inc("ctrl_link_down_refuted")
	c.a.env.Log().Info("link down refuted", "switch", fmt.Sprintf("%#x", id), "port", port)
	if pe := c.g.peerOf(i, port); pe.sw >= 0 && pe.up {
		c.announce(i, port)
	}
}

// heardFrom is called for every PM the controller's host answers and
// every notification a host floods to it: a sender the controller does
// not know is a host its discovery missed. Heard while the first
// discovery runs (every host's search may reach the controller before
// it ends), it is remembered, and looked for at the end if that
// discovery did not find it.
func (c *Controller) heardFrom(mac wire.MAC) {
	if !c.ready {
		c.noteUnplaced(mac)
		return
	}
	if _, ok := c.hosts[mac]; !ok {
		c.noteUnplaced(mac)
		c.rescanHosts()
	}
}

// hostRescanTries is how many host rescans a host heard from but not
// placed may start: its answer to one can be lost too (an emulator's
// loaded sockets), and a host that knows its controller may send
// nothing more for a long time.
const hostRescanTries = 3

// noteUnplaced remembers a host heard from that the controller has not
// placed (unplaced), at most maxOrigins of them (while the first
// discovery runs, every searching host is heard from): only forged
// senders, each a new MAC, fill the table, and the rescan the hint asks
// for runs all the same.
func (c *Controller) noteUnplaced(mac wire.MAC) {
	if mac == c.a.mac || mac.IsMulticast() || mac == (wire.MAC{}) {
		return
	}
	if _, ok := c.unplaced[mac]; !ok && len(c.unplaced) >= maxOrigins {
		c.a.c.Inc("ctrl_unplaced_dropped")
		return
	}
	c.unplaced[mac] = hostRescanTries
}

// retryUnplaced runs at the end of every discovery run: hosts heard from
// that it placed are forgotten, and if others are left with tries, a
// host rescan is asked for (nextRescan starts it, or it waits for the
// rate limit). One out of tries is given up (ctrl_hosts_unplaced); a new
// hint from it starts over.
func (c *Controller) retryUnplaced() {
	for m, n := range c.unplaced {
		switch _, ok := c.hosts[m]; {
		case ok:
			delete(c.unplaced, m)
		case n <= 0:
			delete(c.unplaced, m)
			c.a.c.Inc("ctrl_hosts_unplaced")
		default:
			c.lateHost = true
		}
	}
}

// unmatchedHostReply is told of a host's answer that matched no probe
// still out: most likely an answer that came after its round had ended (a
// loaded host or link), so that discovery went on without that host. Its
// round trip, if it answers a probe of the last round, stretches the
// rounds to come, so that the rescan waits long enough for it. A
// host the controller does not know is looked for again at once (at most
// once a second, as every rescan), rather than when its own search, which
// starts only if no announcement reaches it, finds the controller. During
// discovery it is remembered for the end.
func (c *Controller) unmatchedHostReply(m *wire.DumbNetProbeReply) {
	if _, known := c.disc.hosts[m.HostMAC]; known {
		return
	}
	c.disc.late(m.Seq)
	c.a.c.Inc("ctrl_late_host_replies")
	c.noteUnplaced(m.HostMAC)
	if c.ready && !c.disc.running {
		c.rescanHosts()
		return
	}
	c.lateHost = true
}

// rescanHosts sends one host probe to every switch port where discovery
// found nothing, to place hosts whose answers were lost or who came late.
// At most one rescan runs per second (or per ten probe timeouts); one
// asked for sooner waits for then. It used to be dropped: a hint that
// came during a rescan, or an answer late to one, was then lost for good
// when its host fell silent.
func (c *Controller) rescanHosts() {
	d := c.disc
	now := c.a.env.Now()
	if !c.ready {
		return // the first discovery's end looks at what it missed
	}
	if d.running {
		c.lateHost = true // one run at a time: at its end (nextRescan)
		return
	}
	if now < c.nextHostScan {
		if !c.hostScanWaiting {
			c.hostScanWaiting = true
			c.a.c.Inc("ctrl_host_rescans_deferred")
			c.a.env.After(c.nextHostScan-now, func() {
				if c.hostScanWaiting { // else one started meanwhile
					c.hostScanWaiting = false
					c.rescanHosts()
				}
			})
		}
		return
	}
	c.nextHostScan = now + max(element.Second, scale(10, d.timeout))
	full := c.fullScan
	c.fullScan = false
	d.frontier = d.frontier[:0]
	for gi, id := range c.g.ids {
		di, ok := d.byID[id]
		if !ok {
			continue
		}
		fwd, ret, ok := c.switchPaths(int32(gi))
		if !ok {
			continue
		}
		s := d.sws[di]
		s.fwd, s.ret = fwd, ret
		var ports []uint16
		for p := 1; p <= min(d.maxPorts, 254); p++ {
			if !s.known[uint16(p)] {
				ports = append(ports, uint16(p))
			}
		}
		if len(ports) > 0 {
			d.jobs = append(d.jobs, scanJob{sw: di, kind: kindRescan, ports: ports, hostOnly: !full})
			d.frontier = append(d.frontier, di)
		}
	}
	if len(d.frontier) == 0 {
		return
	}
	c.a.c.Inc("ctrl_host_rescans")
	c.hostScanWaiting = false
	for m := range c.unplaced {
		c.unplaced[m]--
	}
	d.running = true
	if !d.pacing {
		d.pace()
	}
	d.armRound()
}

// rescan probes a port that came up where no link was known: a new cable,
// a new switch behind it, or a new host. Discovery runs again from that
// switch and port (BFS onwards from any new switch); its end rebuilds the
// controller's graph, keeping the state of the links it knew.
func (c *Controller) rescan(i int32, port uint16) {
	d := c.disc
	di, ok := d.byID[c.g.ids[i]]
	if !ok {
		return
	}
	if d.running {
		// One run at a time; the switch reports the port once, so it
		// must not be forgotten: it is rescanned when this run ends.
		if k := (portID{c.g.ids[i], port}); !slices.Contains(c.waitingPorts, k) {
			c.waitingPorts = append(c.waitingPorts, k)
			c.a.c.Inc("ctrl_rescans_waiting")
		}
		return
	}
	fwd, ret, ok := c.switchPaths(i)
	if !ok {
		return
	}
	// The paths found at discovery may cross links that failed since.
	s := d.sws[di]
	s.fwd, s.ret = fwd, ret
	delete(s.known, port)
	c.rescanned = &portID{c.g.ids[i], port}
	c.a.c.Inc("ctrl_rescans")
	d.running = true
	d.frontier = []int32{di}
	d.scan(di, []uint16{port})
}

func (c *Controller) setLink(i int32, port uint16, up bool) {
	ends := []int32{i, c.g.peerOf(i, port).sw}
	if ends[1] == i || ends[1] < 0 {
		ends = ends[:1]
	}
	var was [2]bool
	for k, s := range ends {
		was[k] = c.switchDown(s)
	}
	if !c.g.setUp(i, port, up) {
		return
	}
	for k, s := range ends {
		switch now := c.switchDown(s); {
		case now && !was[k]:
			c.a.c.Inc("ctrl_switches_down")
			c.a.env.Log().Info("switch down: every link of it is down", "switch", fmt.Sprintf("%#x", c.g.ids[s]))
		case !now && was[k]:
			delete(c.recabled, c.g.ids[s])
			c.a.c.Inc("ctrl_switches_back")
			c.a.env.Log().Info("switch back: a link of it works", "switch", fmt.Sprintf("%#x", c.g.ids[s]))
		}
	}
	if !up {
		c.noteUnreached() // reports from beyond it cannot reach us now
	}
	c.announce(i, port)
	// Routes to flood neighbours may cross the link, or could now use it.
	c.sendNeighbors()
	// So may the paths hosts send their queries along: a host whose path
	// to the controller crossed a failed link would never reach it again.
	for _, m := range c.sortedHosts() {
		if c.announceController(m) {
			c.a.c.Inc("ctrl_reannounced")
		}
	}
	if up {
		c.auditStale() // a stale part of the fabric may be back
	}
}

func (c *Controller) sortedHosts() []wire.MAC {
	macs := make([]wire.MAC, 0, len(c.hosts))
	for m := range c.hosts {
		macs = append(macs, m)
	}
	slices.SortFunc(macs, func(x, y wire.MAC) int { return slices.Compare(x[:], y[:]) })
	return macs
}

// announce publishes a new version and floods a patch with the link's
// state to every host.
func (c *Controller) announce(i int32, port uint16) {
	pe := c.g.peerOf(i, port)
	up := pe.up
	if k := c.linkKey(i, port); c.a.nicUp {
		c.recentAnn[k] = c.a.env.Now()
	} else {
		c.repatch[k] = true // it goes nowhere: sent again once the NIC is back
	}
	c.version++
	c.publish()
	var f wire.LinkFlags
	if up {
		f = wire.LinkUp
	}
	l := wire.DumbNetLink{A: c.g.ids[i], APort: port, B: c.g.ids[pe.sw], BPort: pe.port, Flags: f}
	patch := wire.DumbNetTopoPatch{Version: c.version, Links: []wire.DumbNetLink{l}}
	c.a.c.Inc("ctrl_patches")
	c.a.env.Log().Info("topology patch sent", "version", c.version, "link", fmt.Sprintf("%#x:%d-%#x:%d", l.A, l.APort, l.B, l.BPort), "up", up)
	for _, m := range c.sortedHosts() {
		c.sendTo(m, &patch)
	}
}

// linkCheckTries is how many times the probes of a link reported up are
// sent (a try after each unanswered probe wait), and how many copies of
// the probe of a link reported down are sent (all at once, one wait for
// them all). The switch reports a port changing once: a single lost probe
// (or its answer) would leave a working link out of the topology for
// good, or take one out of it until the next audit.
const linkCheckTries = 3

// upCheck is a link reported up whose verification probes are out.
type upCheck struct {
	// seqs are the probes sent, every try's (in disc.pending until the
	// check ends: an answer to an earlier try that comes while a later one
	// is out stretches the waits to come); cur: where the running try's
	// begin, the only ones whose answers verify the link. backOK and
	// idOK: each kind answered right.
	seqs         []uint32
	cur, try     int
	backOK, idOK bool
	// ends are the ports reported up, the first the one probed from:
	// each is rescanned if the link fails its verification.
	ends   []portID
	cancel func() // the timer that tries again
}

// verifyLink probes a link that a notification says is back (§4.2: "the
// controller will probe the ports to discover and verify the newly added
// links"), from the reported end, switch i's port: out through it and
// back through the far end's port to a tag-0 query that must name switch
// i again, and out through it to a tag-0 query at the far end that must
// name the switch the link led to, its answer coming home through the
// far end's port. With both answered, the link is up (linkUpVerified).
// The probes not answered within the probe wait are sent again, up to
// linkCheckTries in all; then the ports reported up are rescanned
// (upUnverified). The first probe alone took a cable moved to another
// switch, on a port with the number of the old far end's, for the old
// link, since it comes back to switch i either way.
func (c *Controller) verifyLink(i int32, port uint16) {
	k := c.linkKey(i, port)
	end := portID{c.g.ids[i], port}
	if chk := c.upChecks[k]; chk != nil {
		// The other end's report, or a repeat: one verification.
		if !slices.Contains(chk.ends, end) {
			chk.ends = append(chk.ends, end)
		}
		return
	}
	c.sendUpCheck(k, &upCheck{ends: []portID{end}}, 1)
}

// sendUpCheck sends the probes of chk not answered yet (try: this
// sending's number) and arms the timer that tries again.
func (c *Controller) sendUpCheck(k portID, chk *upCheck, try int) {
	from := chk.ends[0]
	i, ok := c.g.idx[from.sw]
	pe := peer{sw: -1}
	if ok {
		pe = c.g.peerOf(i, from.port)
	}
	var fwd, ret []uint8
	if pe.sw >= 0 { // else dropped meanwhile (a rescan found the port cabled elsewhere)
		fwd, ret, ok = c.switchPaths(i)
	}
	if pe.sw < 0 || !ok {
		c.dropUpProbes(chk)
		return
	}
	d := c.disc
	ahead := len(d.queue) - d.qhead
	chk.cur = len(chk.seqs)
	send := func(kind uint8, nid uint64, tags ...uint8) bool {
		before := d.seq
		d.send(probeRec{kind: kind, sw: i, p: from.port, q: pe.port, nid: nid, path: slices.Concat(fwd, tags, ret)})
		if d.seq == before {
			return false // the probe could not be built
		}
		chk.seqs = append(chk.seqs, d.seq)
		return true
	}
	n := 0
	if !chk.backOK {
		if !send(kindLinkUp, from.sw, uint8(from.port), uint8(pe.port), wire.DumbNetQuery) {
			c.dropUpProbes(chk)
			return
		}
		n++
	}
	if !chk.idOK {
		if !send(kindLinkUpID, c.g.ids[pe.sw], uint8(from.port), wire.DumbNetQuery, uint8(pe.port)) {
			c.dropUpProbes(chk)
			return
		}
		n++
	}
	c.upChecks[k] = chk
	chk.try = try
	chk.cancel = c.a.env.After(scale(ahead+n, d.gap)+d.wait(), func() { c.upTimedOut(k, chk, try) })
}

// upTimedOut ends try try of link-up check chk, unanswered: the probes
// not answered are sent again, or after linkCheckTries the ports reported
// up are rescanned.
func (c *Controller) upTimedOut(k portID, chk *upCheck, try int) {
	if c.upChecks[k] != chk {
		return // answered
	}
	delete(c.upChecks, k)
	if try >= linkCheckTries {
		c.dropUpProbes(chk)
		c.upUnverified(chk)
		return
	}
	// The probes out stay matched: on a machine loaded since the
	// round trips that set the wait, an answer comes after it, while
	// the next try is out, and stretches the waits to come (the next
	// try's answers then come in time). It verifies nothing: it may
	// have crossed a cable that moved since, inside the switches'
	// alarm window, with no report yet of the port going down.
	c.a.c.Inc("ctrl_link_up_retried")
	c.sendUpCheck(k, chk, try+1)
}

// dropUpProbes forgets the probes of link-up check chk still out.
func (c *Controller) dropUpProbes(chk *upCheck) {
	for _, seq := range chk.seqs {
		if rec, ok := c.disc.pending[seq]; ok && (rec.kind == kindLinkUp || rec.kind == kindLinkUpID) {
			delete(c.disc.pending, seq)
		}
	}
	chk.seqs = chk.seqs[:0]
}

// linkUpAnswered takes a right answer to probe seq, of the given kind, of
// a link-up check; with both kinds answered by the running try, the link
// is verified. An earlier try's answer has stretched the waits (it was
// matched) and counts for nothing more: its probe may have crossed the
// port before its cable moved.
func (c *Controller) linkUpAnswered(seq uint32, kind uint8) {
	for k, chk := range c.upChecks {
		n := slices.Index(chk.seqs, seq)
		if n < 0 {
			continue
		}
		if n < chk.cur {
			// Its round trip stretched the wait: the running try's
			// answers, as slow, get as long.
			chk.cancel()
			try := chk.try
			chk.cancel = c.a.env.After(c.disc.wait(), func() { c.upTimedOut(k, chk, try) })
			return
		}
		if kind == kindLinkUp {
			chk.backOK = true
		} else {
			chk.idOK = true
		}
		if chk.backOK && chk.idOK {
			c.linkUpVerified(chk.ends[0].sw, chk.ends[0].port)
		}
		return
	}
}

// upUnverified ends a link-up check whose probes went unanswered
// linkCheckTries times: the ports reported up lead elsewhere now (a cable
// moved to another switch or to a host), or to nothing that answers.
// Each is rescanned as a port where no link is known would be: what the
// rescan finds there replaces the link (replaceAt); if it finds nothing,
// the link stays as it was: down, or up if the report was for a link held
// up. One failed while a run is on waits for its end (unverifiedWaiting).
func (c *Controller) upUnverified(chk *upCheck) {
	c.a.c.Inc("ctrl_link_up_unverified")
	for _, e := range chk.ends {
		if i, ok := c.g.idx[e.sw]; ok {
			if c.disc.running && c.g.peerOf(i, e.port).up {
				// Held up (an "up" report for a link up): rescanned when
				// the run ends though the graph still holds it up.
				if c.unverifiedWaiting == nil {
					c.unverifiedWaiting = make(map[portID]bool)
				}
				c.unverifiedWaiting[e] = true
			}
			c.a.env.Log().Info("link up unverified: rescanning the port", "switch", fmt.Sprintf("%#x", e.sw), "port", e.port)
			c.rescan(i, e.port)
		}
	}
}

// heldPairsFirst orders ps, ports of switch a, and qs, ports of switch b,
// that a rescan found leading to each other, for resolve to pair them in
// that order: the pairs the graph holds first, then the ports whose link
// in the graph goes elsewhere or nowhere, then those with a link to the
// other switch held down, then those with one up, each in port order.
// Which of parallel links a frame took is not observable, so any pairing
// routes alike; the graph's own keeps the links it holds, and a port with
// a working link of its own is left to it. In
// port order, a rescan of one port of a bundle (its link failed its
// verification, or its cable moved to another port of the far end)
// paired it with the far end's lowest port leading back, and the links on
// both, working, were dropped (replaceAt) for a link between them.
func (c *Controller) heldPairsFirst(a, b uint64, ps, qs []uint16) {
	i, ok := c.g.idx[a]
	j, ok2 := c.g.idx[b]
	if !ok || !ok2 {
		return
	}
	var hp, hq []uint16
	for _, p := range ps {
		if pe := c.g.peerOf(i, p); pe.sw == j && slices.Contains(qs, pe.port) && !slices.Contains(hq, pe.port) {
			hp, hq = append(hp, p), append(hq, pe.port)
		}
	}
	rest := func(ports, held []uint16, sw, other int32) []uint16 {
		var free, down, up []uint16
		for _, p := range ports {
			switch pe := c.g.peerOf(sw, p); {
			case slices.Contains(held, p):
			case pe.sw != other:
				free = append(free, p)
			case !pe.up:
				down = append(down, p) // its link's cable may be the one that moved
			default:
				up = append(up, p) // its own working link to the other switch
			}
		}
		return slices.Concat(free, down, up)
	}
	rp, rq := rest(ps, hp, i, j), rest(qs, hq, j, i)
	copy(ps, append(hp, rp...))
	copy(qs, append(hq, rq...))
}

// replaceAt drops the link the graph holds on port at, unless it leads to
// port to (nil: a host was found at the port): a rescan found the port
// cabled elsewhere. Hosts that hold the link up are patched that it is
// down first.
func (c *Controller) replaceAt(at portID, to *portID) {
	i, ok := c.g.idx[at.sw]
	if !ok {
		return
	}
	pe := c.g.peerOf(i, at.port)
	if pe.sw < 0 || to != nil && (portID{c.g.ids[pe.sw], pe.port}) == *to {
		return
	}
	if pe.up {
		c.setLink(i, at.port, false)
	}
	c.dropLink(i, at.port)
}

// dropLink takes the link on switch i's port out of the topology, from
// the graph and from what discovery found, and publishes the change; a
// check still out for it is dropped. Both its ports count as ports where
// no link is known from then on.
func (c *Controller) dropLink(i int32, port uint16) {
	pe := c.g.peerOf(i, port)
	if pe.sw < 0 {
		return
	}
	k := c.linkKey(i, port)
	if chk := c.downChecks[k]; chk != nil {
		chk.cancel()
		delete(c.downChecks, k)
		c.dropDownProbes(chk)
		c.checksGen++
	}
	if chk := c.upChecks[k]; chk != nil {
		chk.cancel()
		delete(c.upChecks, k)
		c.dropUpProbes(chk)
	}
	a, b := portID{c.g.ids[i], port}, portID{c.g.ids[pe.sw], pe.port}
	delete(c.disc.links, normLink(Link{A: a.sw, APort: a.port, B: b.sw, BPort: b.port, Up: true}))
	for _, e := range []portID{a, b} {
		if di, ok := c.disc.byID[e.sw]; ok {
			delete(c.disc.sws[di].known, e.port)
		}
	}
	c.g.removeLink(i, port)
	for _, e := range []portID{a, b} {
		if j := c.g.idx[e.sw]; c.switchDown(j) {
			c.recabled[e.sw] = true
		}
	}
	c.a.c.Inc("ctrl_links_dropped")
	c.a.env.Log().Info("link dropped: a port leads elsewhere", "link", fmt.Sprintf("%#x:%d-%#x:%d", a.sw, a.port, b.sw, b.port))
	c.version++
	c.publish()
}

// switchPaths returns working paths from the controller to switch i (the
// last tag delivers to it) and from it back.
func (c *Controller) switchPaths(i int32) (fwd, ret []uint8, ok bool) {
	tree, dist := c.treeReaching(i)
	d := dist[i]
	if d < 0 {
		return nil, nil, false
	}
	fwd = make([]uint8, d)
	for k, v := int(d)-1, i; k >= 0; k-- {
		fwd[k] = uint8(tree[v].out)
		v = tree[v].sw
	}
	for v := i; v != c.root.sw; v = tree[v].sw {
		pe := c.g.peerOf(tree[v].sw, tree[v].out)
		ret = append(ret, uint8(pe.port))
	}
	return fwd, append(ret, uint8(c.root.port)), true
}

// linkUpVerified completes verifyLink.
func (c *Controller) linkUpVerified(id uint64, port uint16) {
	// By switch ID: a rescan since the probe left may have renumbered
	// the graph.
	i, ok := c.g.idx[id]
	if !ok {
		return
	}
	if k := c.linkKey(i, port); c.upChecks[k] != nil {
		chk := c.upChecks[k]
		chk.cancel()
		delete(c.upChecks, k)
		c.dropUpProbes(chk)
	}
	c.setLink(i, port, true)
}
