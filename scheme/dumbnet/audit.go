package dumbnet

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/edgefabric/edgefabric/element"
)

// The audit: the controller re-checks the links whose changes it may have
// missed.
//
// A switch reports a port change once (§4.2), and the report reaches the
// controller only if some path does. While the controller is cut off (its
// own NIC down, or, in its view, no working path to part of the fabric),
// the reports of the switches it cannot reach are lost for good: a link
// that failed meanwhile stays up in its view (hosts whose path to the
// controller crosses it can no longer ask for paths) and one repaired
// meanwhile stays down. So the controller remembers those switches
// (stale) and, once it can reach one again, probes every link of every
// stale switch with the probe of a link reported up (out through one end,
// back through the other, a tag-0 query naming the first end).
//
// Probing along paths that cross a link it still holds up but that has
// failed would book healthy links down. So the audit goes outwards, as
// discovery does: the controller's tree leaves out every link still under
// audit, and a link is probed only from an end that tree reaches; its
// probe crosses only links already found working (or never in doubt) and
// the link itself. A link that answers joins the tree at once, and the
// links it brings within reach are probed next; a link silent auditTries
// times is settled too. A silent link held up is booked down, an
// answering link held down is booked up, and either way the patch goes
// to every host. The audit ends when no probe is out and no link left
// can be reached; links neither of whose ends can be reached keep their
// switches stale, for the next time one comes back.

// auditTries is how many probes a link under audit gets before its
// silence counts: a lost probe must not book a working link down.
const auditTries = 3

// audit is a running audit.
type audit struct {
	links   map[portID]*auditLink // by linkKey: not settled yet
	order   []portID              // the keys of links, sorted: probes go out in this order
	settled map[portID]bool       // settled in this audit: not added again
	perSw   map[uint64]int        // links under audit per switch ID
	out     int                   // probes out
	started element.Time
}

// add puts link k, between switches ends, under audit.
func (a *audit) add(k portID, al *auditLink) {
	a.links[k] = al
	delete(a.settled, k)
	a.perSw[al.ends[0]]++
	a.perSw[al.ends[1]]++
	if at, found := slices.BinarySearchFunc(a.order, k, comparePortID); !found {
		a.order = slices.Insert(a.order, at, k)
	}
}

func comparePortID(x, y portID) int {
	if x.sw != y.sw {
		return cmp.Compare(x.sw, y.sw)
	}
	return cmp.Compare(x.port, y.port)
}

// auditLink is a link under audit.
type auditLink struct {
	ends [2]uint64 // the switch IDs at its ends
	seq  uint32    // the probe out (disc.pending), 0 when none
	// old are the earlier tries' probes, still matched (in disc.pending)
	// until the link settles: on a machine loaded since the round trips
	// that set the probe wait, an answer comes after its try's wait, and
	// its round trip stretches the waits of the tries to come.
	old    []uint32
	tries  int
	cancel func()
	// reported: the audit took the link over from a down check, or a
	// switch reported it down during the audit, so hosts heard a report
	// (stage 1) and route around it until a patch says up.
	reported bool
	// restarted: a report restarted its probes once already; more
	// reports (a switch's, or a flood of forged ones) do not, so that
	// the audit ends. The last of them (pending: 1 up, 2 down) is
	// checked the usual way once the link is settled, if it disagrees.
	restarted bool
	pending   uint8
}

// nicChange follows the controller's own NIC: while it is down every
// switch goes stale, and when it comes back the audit starts.
func (c *Controller) nicChange(up bool) {
	if !c.ready {
		return // the first discovery is still finding the fabric
	}
	if !up {
		c.a.c.Inc("ctrl_cut_off")
		c.wantRescan = true
		for _, id := range c.g.ids {
			c.stale[id] = true
		}
		// Patches sent just before may have died on the way (in the
		// NIC's queue, on the link): send those links' state again.
		now := c.a.env.Now()
		for k, at := range c.recentAnn {
			if now-at <= repatchWindow {
				c.repatch[k] = true
			}
			delete(c.recentAnn, k)
		}
		// A running audit's probes cannot leave now: their silence would
		// settle links on nothing. It starts over when the NIC is back.
		if a := c.audit; a != nil {
			for k, al := range a.links {
				if al.seq != 0 {
					al.cancel()
					c.dropPending(al.seq, kindAudit)
				}
				c.dropAuditOld(al)
				if al.reported {
					c.repatch[k] = true // hosts heard a report: tell them the truth
				}
			}
			c.audit = nil
			c.checksGen++
			c.a.c.Inc("ctrl_audits_aborted")
		}
		return
	}
	c.auditStale()
	if c.audit == nil {
		c.resendPatches()
	}
}

// repatchWindow is how long a patch may still be on its way when the
// controller's NIC goes down: its link's state is sent again afterwards.
const repatchWindow = element.Second

// resendPatches sends again, with a new version, the state of every link
// whose patch may have been lost while the controller was cut off (sent
// into a NIC that was down, or just before it went down), in key order.
// Hosts had no other way to learn it: the audit compares links with the
// controller's own graph, and a switch reports a change once.
func (c *Controller) resendPatches() {
	if len(c.repatch) == 0 {
		return
	}
	keys := slices.SortedFunc(maps.Keys(c.repatch), comparePortID)
	clear(c.repatch)
	for _, k := range keys {
		if i, ok := c.g.idx[k.sw]; ok && c.g.peerOf(i, k.port).sw >= 0 {
			c.a.c.Inc("ctrl_patches_resent")
			c.announce(i, k.port)
		}
	}
}

// noteUnreached marks stale every switch the controller's view gives no
// path to (over the links up), after a link was booked down.
func (c *Controller) noteUnreached() {
	var sc scratch
	c.g.bfs(&sc, c.root.sw, nil)
	for i, d := range sc.dist[:c.g.numSwitches()] {
		if d < 0 {
			c.stale[c.g.ids[i]] = true
			c.wantRescan = true
		}
	}
}

// periodicAudit audits every link, every AuditEvery: a report can be lost
// for good (a flood relayed across links that failed unseen, a switch
// beyond the notifications' hop limit whose hosts are all cut off), and
// nothing else would ever correct the view. A view that is right costs
// one probe per link and no message to any host: it rescans no port
// unless switches went out of reach since the last rescan (wantRescan; a
// full rescan probes every unknown port with every return port, and
// publishes a new version, which is too much for every 30 s).
func (c *Controller) periodicAudit() {
	c.a.env.After(c.a.cfg.AuditEvery, c.periodicAudit)
	if c.audit != nil || !c.a.nicUp {
		return
	}
	c.a.c.Inc("ctrl_periodic_audits")
	for _, id := range c.g.ids {
		c.stale[id] = true
	}
	c.periodic = true
	c.auditStale()
	c.periodic = false
}

// flapped takes a switch's new alarm that port is up when its last one
// said so too: the port went down and came back within the switch's alarm
// suppression window, which announces the state again at its end. While
// the link was down, the switches the controller reaches only across it
// were cut off from it, silently, and their reports of that time were
// lost: they are stale, and audited now.
//
// Which switches the link's failure alone cuts off comes from cutBy, a
// lookup in what one search per topology version found, not from a search
// per alarm: alarms are not authenticated, and a forged one for a link
// whose failure cuts nothing off (every link of a fat tree) cost a search
// of the whole graph (about 1 ms on a 64-port fat tree) before the pacing
// below could apply, since it ends here.
func (c *Controller) flapped(sw uint64, port uint16) {
	i, ok := c.g.idx[sw]
	if !c.ready || !ok || !c.g.peerOf(i, port).up {
		return
	}
	cut := c.cutBy(i, port)
	n := 0
	for _, j := range cut {
		// Even when they are stale already (a periodic audit has them),
		// the rescan after the audit that takes them is due.
		c.wantRescan = true
		if id := c.g.ids[j]; !c.stale[id] {
			c.stale[id] = true
			n++
		}
	}
	if n == 0 {
		return
	}
	// A real switch repeats a port's state at most once a suppression
	// window (1 s); alarms are not authenticated, so a rogue host could
	// start an audit with every forged one. One a second at most: the
	// switches stay stale and the deferred audit takes them.
	if now := c.a.env.Now(); now < c.nextFlapAudit {
		c.a.c.Inc("ctrl_flaps_deferred")
		if !c.flapTimer {
			c.flapTimer = true
			c.a.env.After(c.nextFlapAudit-now, func() {
				c.flapTimer = false
				c.nextFlapAudit = c.a.env.Now() + DefaultSuppress
				c.auditStale()
			})
		}
		return
	}
	c.nextFlapAudit = c.a.env.Now() + DefaultSuppress
	c.a.c.Inc("ctrl_flaps")
	c.a.env.Log().Info("link flapped: auditing what was cut off", "switch", fmt.Sprintf("%#x", c.g.ids[i]), "port", port, "switches", n)
	c.auditStale()
}

// cuts is what one depth-first search from the controller's switch over
// the links up found, for one topology version: the links whose failure
// alone cuts switches off from the controller (the graph's bridges) and
// which switches each cuts off (a subtree of the search, a run of its
// preorder).
type cuts struct {
	ver   uint64
	n     int     // switches searched
	up    []hop   // per switch: the tree link it was reached by (sw -1: the root, or not reached)
	cut   []bool  // per switch: losing its tree link cuts its subtree off
	pre   []int32 // per switch: its number in preorder, -1 if not reached
	last  []int32 // per switch: the last preorder number in its subtree
	order []int32 // the switches reached, in preorder
	low   []int32
	stack []cutFrame
}

type cutFrame struct {
	u    int32
	next int // index into the graph's used[u]
}

// cutBy returns the switches that the failure of the link on switch i's
// port alone cuts off from the controller (nil: none; a run of c.cut's
// preorder, valid until the topology changes).
func (c *Controller) cutBy(i int32, port uint16) []int32 {
	k := &c.cut
	if k.order == nil || k.ver != c.version || k.n != c.g.numSwitches() {
		c.findCuts()
	}
	pe := c.g.peerOf(i, port)
	child := int32(-1)
	switch {
	case k.up[pe.sw] == hop{sw: i, out: port}:
		child = pe.sw
	case k.up[i] == hop{sw: pe.sw, out: pe.port}:
		child = i
	}
	if child < 0 || !k.cut[child] {
		return nil
	}
	return k.order[k.pre[child] : k.last[child]+1]
}

// findCuts runs the depth-first search of c.cut (Tarjan's bridges: the
// tree link into v cuts v's subtree off unless a link from that subtree
// reaches above it; a parallel link to the parent is such a link).
func (c *Controller) findCuts() {
	k := &c.cut
	n := c.g.numSwitches()
	k.ver, k.n = c.version, n
	if cap(k.pre) < n {
		k.up, k.cut = make([]hop, n), make([]bool, n)
		k.pre, k.last, k.low = make([]int32, n), make([]int32, n), make([]int32, n)
		k.order = make([]int32, 0, n)
	}
	k.up, k.cut, k.pre, k.last, k.low = k.up[:n], k.cut[:n], k.pre[:n], k.last[:n], k.low[:n]
	for v := range n {
		k.up[v], k.cut[v], k.pre[v] = hop{sw: -1}, false, -1
	}
	k.order = k.order[:0]
	visit := func(v int32) {
		k.pre[v] = int32(len(k.order))
		k.low[v] = k.pre[v]
		k.order = append(k.order, v)
		k.stack = append(k.stack, cutFrame{u: v})
	}
	k.stack = k.stack[:0]
	visit(c.root.sw)
	for len(k.stack) > 0 {
		f := &k.stack[len(k.stack)-1]
		u := f.u
		if f.next < len(c.g.used[u]) {
			p := c.g.used[u][f.next]
			f.next++
			pe := c.g.ports[u][p]
			if !pe.up || pe.sw == u || k.up[u] == (hop{sw: pe.sw, out: pe.port}) {
				continue // down, a loop, or the tree link u was reached by
			}
			if k.pre[pe.sw] < 0 {
				k.up[pe.sw] = hop{sw: u, out: p}
				visit(pe.sw)
			} else {
				k.low[u] = min(k.low[u], k.pre[pe.sw])
			}
			continue
		}
		k.stack = k.stack[:len(k.stack)-1]
		k.last[u] = int32(len(k.order)) - 1
		if par := k.up[u].sw; par >= 0 {
			k.low[par] = min(k.low[par], k.low[u])
			k.cut[u] = k.low[u] > k.pre[par]
		}
	}
}

// auditStale puts the links of every stale switch under audit (starting
// one if none runs) once one of them can be reached again.
func (c *Controller) auditStale() {
	if len(c.stale) == 0 || !c.a.nicUp {
		return
	}
	var sc scratch
	c.g.bfs(&sc, c.root.sw, nil)
	reach := false
	for id := range c.stale {
		if i, ok := c.g.idx[id]; ok && sc.dist[i] >= 0 {
			reach = true
			break
		}
	}
	if !reach {
		return
	}
	a := c.audit
	if a == nil {
		a = &audit{links: map[portID]*auditLink{}, settled: map[portID]bool{}, perSw: map[uint64]int{}, started: c.a.env.Now()}
		c.audit = a
		c.a.c.Inc("ctrl_audits")
		c.a.env.Log().Info("audit started", "stale_switches", len(c.stale))
	}
	added := 0
	for id := range c.stale {
		i, ok := c.g.idx[id]
		if !ok {
			delete(c.stale, id) // gone from the graph (a rescan)
			continue
		}
		for _, p := range c.g.used[i] {
			if c.g.peerOf(i, p).sw < 0 {
				continue
			}
			k := c.linkKey(i, p)
			if a.links[k] != nil || a.settled[k] {
				continue
			}
			al := &auditLink{}
			// The audit decides what a check still out would have: that
			// check's probe may cross a link that failed unseen.
			if chk := c.downChecks[k]; chk != nil {
				chk.cancel()
				delete(c.downChecks, k)
				c.dropDownProbes(chk)
				al.reported = true
			}
			if chk := c.upChecks[k]; chk != nil {
				chk.cancel()
				delete(c.upChecks, k)
				c.dropUpProbes(chk)
			}
			al.ends = [2]uint64{c.g.ids[i], c.g.ids[c.g.peerOf(i, p).sw]}
			a.add(k, al)
			added++
		}
	}
	if added > 0 {
		c.checksGen++ // the tree now leaves the links under audit out
	}
	if !c.periodic {
		c.wantRescan = true
	}
	c.auditPump()
}

// dropPending forgets a probe still out of the given kind.
func (c *Controller) dropPending(seq uint32, kind uint8) {
	if rec, ok := c.disc.pending[seq]; ok && rec.kind == kind {
		delete(c.disc.pending, seq)
	}
}

// auditPump probes every link under audit with no probe out that the tree
// over the links not under audit reaches, from its nearer end; with no
// probe out and none to send, the audit ends.
func (c *Controller) auditPump() {
	a := c.audit
	if a == nil {
		return
	}
	c.refreshTree()
	live := a.order[:0]
	var gone []portID
	for _, k := range a.order {
		al := a.links[k]
		if al == nil {
			continue
		}
		live = append(live, k)
		if al.seq != 0 {
			continue
		}
		if i, ok := c.g.idx[k.sw]; !ok || c.g.peerOf(i, k.port).sw < 0 {
			gone = append(gone, k) // gone from the graph (a rescan)
			continue
		}
		c.auditSend(k, al)
	}
	a.order = live
	for _, k := range gone {
		c.auditForget(k)
	}
	if a.out > 0 {
		return
	}
	if n := len(a.links); n > 0 {
		c.a.c.Add("ctrl_audit_unreached", uint64(n))
	}
	c.a.env.Log().Info("audit done", "unreached_links", len(a.links), "stale_switches", len(c.stale),
		"took", c.a.env.Now()-a.started)
	for _, al := range a.links {
		c.dropAuditOld(al) // probed, then out of reach
	}
	c.audit = nil
	c.checksChanged() // the tree holds every link again: tell hosts their paths
	c.resendPatches()
	if c.wantRescan {
		c.wantRescan = false
		c.auditRescan()
	}
}

// AuditRescanGap spaces the rescans audits ask for: a forged flap alarm
// starts an audit a second, and each full rescan probes every unknown
// port and publishes a new version.
const AuditRescanGap = 10 * element.Second

// auditRescan rescans, once an audit that followed a cut-off or a flap
// has ended, every switch port where no link is known, for switches as
// well as hosts: a port that came up there was reported once too,
// perhaps while the controller could not hear it (a cable plugged in
// meanwhile). At most one such rescan starts per AuditRescanGap; one
// asked for sooner waits for the gap's end.
func (c *Controller) auditRescan() {
	now := c.a.env.Now()
	if now < c.nextAuditRescan {
		if !c.auditRescanWaiting {
			c.auditRescanWaiting = true
			c.a.c.Inc("ctrl_audit_rescans_deferred")
			c.a.env.After(c.nextAuditRescan-now, func() {
				c.auditRescanWaiting = false
				c.auditRescan()
			})
		}
		return
	}
	c.nextAuditRescan = now + AuditRescanGap
	c.a.c.Inc("ctrl_audit_rescans")
	c.nextHostScan = 0
	c.fullScan = true
	c.rescanHosts()
}

// auditSend sends link k's probe from its end nearer the controller, if
// the tree reaches either end.
func (c *Controller) auditSend(k portID, al *auditLink) {
	i := c.g.idx[k.sw]
	port := k.port
	pe := c.g.peerOf(i, port)
	di, dj := c.treeDist[i], c.treeDist[pe.sw]
	if di < 0 && dj < 0 {
		return
	}
	if di < 0 || dj >= 0 && dj < di {
		i, port = pe.sw, pe.port
	}
	path, ok := c.linkProbePath(i, port)
	d := c.disc
	ahead := len(d.queue) - d.qhead
	before := d.seq
	if ok {
		d.send(probeRec{kind: kindAudit, sw: i, p: port, q: c.g.peerOf(i, port).port, nid: c.g.ids[i], path: path})
	}
	if d.seq == before {
		c.a.c.Inc("ctrl_audit_unprobed")
		return // the probe could not be built: the link stays as held
	}
	al.seq = d.seq
	al.tries++
	c.audit.out++
	c.a.c.Inc("ctrl_audit_probes")
	seq := d.seq
	al.cancel = c.a.env.After(scale(ahead+1, d.gap)+d.wait(), func() { c.auditTimedOut(k, al, seq) })
}

// auditTimedOut ends link k's try whose probe seq went unanswered: it is
// sent again, or after auditTries the link is settled as silent.
func (c *Controller) auditTimedOut(k portID, al *auditLink, seq uint32) {
	if c.audit == nil || c.audit.links[k] != al || al.seq != seq {
		return
	}
	al.old = append(al.old, seq) // an answer that comes while the next try is out stretches the waits
	al.seq = 0
	c.audit.out--
	if i, ok := c.g.idx[k.sw]; al.tries < auditTries && ok && c.g.peerOf(i, k.port).sw >= 0 {
		c.a.c.Inc("ctrl_audit_retried")
		c.refreshTree()
		c.auditSend(k, al)
		if c.audit.out == 0 {
			c.auditPump()
		}
		return
	}
	c.auditSettle(k, false)
}

// auditAnswered completes an audit probe: the link works.
func (c *Controller) auditAnswered(id uint64, port uint16, seq uint32) {
	i, ok := c.g.idx[id]
	if !ok || c.audit == nil {
		return
	}
	k := c.linkKey(i, port)
	al := c.audit.links[k]
	if al == nil || al.seq != seq {
		if al != nil && al.seq != 0 && slices.Contains(al.old, seq) {
			// An earlier try's answer has stretched the wait: the
			// running try's answer, as slow, gets as long. It settles
			// nothing itself: its probe may have crossed a cable that
			// moved since, inside the switches' alarm window (no
			// report yet).
			al.cancel()
			cur := al.seq
			al.cancel = c.a.env.After(c.disc.wait(), func() { c.auditTimedOut(k, al, cur) })
		}
		return
	}
	al.cancel()
	al.seq = 0
	c.audit.out--
	c.auditSettle(k, true)
}

// dropAuditOld forgets the earlier tries' probes of link al still out.
func (c *Controller) dropAuditOld(al *auditLink) {
	for _, seq := range al.old {
		c.dropPending(seq, kindAudit)
	}
	al.old = nil
}

// auditSettle ends link k's audit: it works, or it stayed silent. The
// graph and the hosts learn of a change, and the links it brings within
// reach are probed.
func (c *Controller) auditSettle(k portID, works bool) {
	a := c.audit
	al := c.auditForget(k)
	c.checksGen++ // the link joins the tree, or stays out as down
	if i, ok := c.g.idx[k.sw]; ok {
		pe := c.g.peerOf(i, k.port)
		switch {
		case works && !pe.up:
			c.a.c.Inc("ctrl_audit_found_up")
			c.a.env.Log().Info("audit: link works", "switch", fmt.Sprintf("%#x", k.sw), "port", k.port)
			c.setLink(i, k.port, true)
		case works && al.reported:
			c.a.c.Inc("ctrl_link_down_refuted")
			c.announce(i, k.port) // hosts believed the report
		case !works && pe.up:
			c.a.c.Inc("ctrl_audit_found_down")
			c.a.env.Log().Info("audit: link down", "switch", fmt.Sprintf("%#x", k.sw), "port", k.port)
			c.setLink(i, k.port, false)
		}
	}
	if al.pending != 0 {
		// A report the audit did not act on: the usual check decides.
		if i, ok := c.g.idx[k.sw]; ok {
			if pe := c.g.peerOf(i, k.port); pe.sw >= 0 && pe.up != (al.pending == 1) {
				c.linkEvent(k.sw, k.port, al.pending == 1)
			}
		}
	}
	if c.audit == a && (works || a.out == 0) {
		c.auditPump()
	}
}

// auditForget takes link k out of the audit; a switch with no link left
// under audit is no longer stale.
func (c *Controller) auditForget(k portID) *auditLink {
	a := c.audit
	al := a.links[k]
	c.dropAuditOld(al)
	delete(a.links, k)
	a.settled[k] = true
	for _, id := range al.ends {
		if a.perSw[id]--; a.perSw[id] <= 0 {
			delete(a.perSw, id)
			delete(c.stale, id)
		}
	}
	return al
}

// auditReport takes a switch's report on a link during an audit. A link
// under audit stays there: its probes start afresh, once (the report is
// newer than the probe out), and a report of failure is remembered, since hosts
// route around the link on it until a patch says otherwise. So does a link
// neither of whose ends the tree over audited links reaches: a check's
// probe to it would cross links still in doubt. It reports whether the
// audit took the report; if not, the usual check follows.
func (c *Controller) auditReport(i int32, port uint16, up bool) bool {
	a := c.audit
	if a == nil {
		return false
	}
	k := c.linkKey(i, port)
	al := a.links[k]
	if al == nil {
		c.refreshTree()
		pe := c.g.peerOf(i, port)
		if c.treeDist[i] >= 0 || c.treeDist[pe.sw] >= 0 {
			return false
		}
		al = &auditLink{ends: [2]uint64{c.g.ids[i], c.g.ids[pe.sw]}}
		a.add(k, al)
		c.checksGen++
	}
	c.a.c.Inc("ctrl_audit_reports")
	if !up {
		al.reported = true
	}
	if al.restarted {
		c.a.c.Inc("ctrl_audit_reports_deferred")
		al.pending = 2
		if up {
			al.pending = 1
		}
		return true
	}
	al.restarted = true
	if al.seq != 0 {
		al.cancel()
		c.dropPending(al.seq, kindAudit)
		al.seq = 0
		a.out--
	}
	c.dropAuditOld(al) // answers older than the report
	al.tries = 0
	c.auditPump()
	return true
}
