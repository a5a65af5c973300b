package dumbnet

import (
	"slices"
	"sync/atomic"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

// Probe kinds: what a probing message (PM) was sent to learn.
const (
	kindRoot     uint8 = iota + 1 // 0-p-∅: the prober's own port and first switch
	kindSwitch                    // fwd-p-0-q-ret: the switch behind port p, and whether its port q leads back
	kindVerify                    // fwd-p-q-0-ret: which switch port q of that neighbour reaches
	kindHost                      // fwd-p-ret: a host behind port p
	kindRescan                    // like kindSwitch, for one port after a link-up notification
	kindLinkUp                    // fwd-p-q-0-ret: the controller re-verifies a link reported up
	kindLinkDown                  // fwd-p-q-0-ret: the controller checks a link reported down
	kindAudit                     // fwd-p-q-0-ret: the controller re-checks a link it may have missed changes on (audit.go)
	kindLinkUpID                  // fwd-p-0-q-ret: with kindLinkUp, the far end of a link reported up must be the switch it was
)

// probeRec remembers an outstanding PM by its sequence number. Its path
// is recomputed from the switch's fwd and ret paths when an answer comes
// (answers are few, probes are many), except for link-up probes, whose
// paths come from the controller's graph.
type probeRec struct {
	kind uint8
	sw   int32 // discovered switch whose port is probed
	p, q uint16
	nid  uint64  // kindVerify: the neighbour the switch probe found
	path []uint8 // kindLinkUp, kindLinkUpID, kindLinkDown and kindAudit only
	sent element.Time
}

// scanJob is a switch scan in progress: its probes are built one at a
// time as the pacer sends them, so that a frontier of hundreds of
// switches costs no memory up front.
type scanJob struct {
	sw    int32
	kind  uint8
	ports []uint16
	pi    int // index into ports
	q     int // 0: the host probe of ports[pi]; 1..maxPorts: switch probes
	// hostOnly sends only the host probes (the controller looking for a
	// host it missed).
	hostOnly bool
}

// dsw is a switch as discovery knows it: its ID, a path from the prober to
// it (fwd: the last tag delivers the frame to it; empty for the first
// switch) and a path from it back to the prober (ret: its first tag is the
// switch's own output port), and what its scan found.
type dsw struct {
	id       uint64
	fwd, ret []uint8
	known    map[uint16]bool              // ports whose link is already known
	verified map[uint16]map[uint16]uint64 // p -> q -> neighbour ID, verified
	hosts    map[uint16]wire.DumbNetProbeReply
}

// discovery is the BFS topology discovery of DumbNet §4.1, run by the
// controller over the whole fabric, and by other hosts (search mode) until
// they find the controller. It is part of an Agent and acts through it.
//
// Each BFS level is one round: the probes for every switch of the frontier
// are sent at once, paced at a fraction of the NIC's line rate (the PMs
// "are sent out in parallel"), and the round ends when no probe has been
// sent for the probe timeout. A switch probe that bounces is always
// verified (the paper verifies when return paths are ambiguous; verifying
// every bounce costs one PM per link and removes the need to decide when
// two switches' return paths coincide).
type discovery struct {
	a        *Agent
	search   bool // stop as soon as the controller is located
	maxPorts int
	timeout  element.Time
	gap      element.Time

	seq     uint32
	pending map[uint32]probeRec
	// expired holds when the last ended round's unanswered host probes
	// left: an answer to one that comes late still measures the round
	// trip the rounds must wait for.
	expired map[uint32]element.Time
	pbuf    []uint8
	sws     []*dsw
	byID    map[uint64]int32
	links   map[Link]bool
	hosts   map[wire.MAC]HostLoc
	byIP    map[netipKey]wire.MAC

	frontier []int32
	// rounds and probes are read by other goroutines (the demo, status)
	// while the element runs in the emulator.
	rounds atomic.Int64
	probes atomic.Uint64

	queue [][]byte
	qhead int
	// lastAnswer and maxRTT stretch a round while answers still arrive
	// and when they come slowly (a loaded emulator): a round ends once
	// nothing was sent or answered for max(timeout, 3 x the slowest
	// answer's round trip).
	lastAnswer element.Time
	maxRTT     element.Time
	jobs       []scanJob
	jhead      int
	pacing     bool
	lastSend   element.Time
	timer      func()

	running bool
	done    bool
	doneAt  element.Time
	// onDone runs when the BFS ends (the controller builds its graph).
	onDone func()
}

type netipKey [16]byte

func newDiscovery(a *Agent, search bool) *discovery {
	return &discovery{
		a: a, search: search,
		maxPorts: a.cfg.MaxPorts, timeout: a.cfg.ProbeTimeout, gap: a.cfg.ProbeGap,
		pending: make(map[uint32]probeRec), expired: make(map[uint32]element.Time), byID: make(map[uint64]int32),
		links: make(map[Link]bool), hosts: make(map[wire.MAC]HostLoc), byIP: make(map[netipKey]wire.MAC),
	}
}

// start begins at depth 0: 0-p-∅ for every p asks the first switch for its
// ID and, for the p that leads back to the prober, brings the answer home
// ("we can combine port number probing and switch ID query").
func (d *discovery) start() {
	d.running = true
	for p := 1; p <= d.maxPorts; p++ {
		d.send(probeRec{kind: kindRoot, sw: -1, p: uint16(p)})
	}
	d.armRound()
}

func (d *discovery) stop() {
	d.running = false
	if d.timer != nil {
		d.timer()
		d.timer = nil
	}
	d.queue, d.qhead = nil, 0
	d.jobs, d.jhead = nil, 0
	clear(d.pending)
}

// pathOf returns the tags a probe travels.
func (d *discovery) pathOf(rec probeRec) []uint8 {
	p := d.pbuf[:0]
	switch rec.kind {
	case kindRoot:
		p = append(p, wire.DumbNetQuery, uint8(rec.p))
	case kindLinkUp, kindLinkUpID, kindLinkDown, kindAudit:
		p = append(p, rec.path...)
	default:
		s := d.sws[rec.sw]
		p = append(p, s.fwd...)
		switch rec.kind {
		case kindHost:
			p = append(p, uint8(rec.p))
		case kindSwitch, kindRescan:
			p = append(p, uint8(rec.p), wire.DumbNetQuery, uint8(rec.q))
		case kindVerify:
			p = append(p, uint8(rec.p), uint8(rec.q), wire.DumbNetQuery)
		}
		p = append(p, s.ret...)
	}
	d.pbuf = p
	return p
}

// build registers a probe and returns its frame.
func (d *discovery) build(rec probeRec) ([]byte, bool) {
	d.seq++
	if d.seq == 0 {
		d.seq++ // 0 is the controller announcement's
	}
	path := d.pathOf(rec)
	m := wire.DumbNetProbe{Seq: d.seq, SrcMAC: d.a.mac, SrcIP: d.a.ip, Path: path}
	n := wire.EthHeaderLen + 2*len(path) + 3 + 1 + 4 + 6 + 17 + 1
	b := d.a.alloc(n)[:0]
	b = wire.AppendEthernet(b, wire.Broadcast, d.a.mac, wire.EtherTypeDumbNet, nil)
	if len(path) > wire.DumbNetMaxTags {
		d.a.c.Inc("probe_path_too_long")
		return nil, false
	}
	b = append(b, path...)
	b = append(b, wire.DumbNetEnd, 0x88, 0xb5) // inner EtherType 0x88B5
	b, err := m.AppendTo(b)
	if err != nil {
		d.a.c.Inc("probe_encode_error")
		return nil, false
	}
	rec.sent = d.a.env.Now()
	d.pending[d.seq] = rec
	return b, true
}

// answered counts an answer that matched a probe out and records its
// round trip.
func (d *discovery) answered(rec probeRec) {
	d.a.c.Inc("probe_answers")
	now := d.a.env.Now()
	d.lastAnswer = now
	d.maxRTT = max(d.maxRTT, now-rec.sent)
}

// late takes an answer to a host probe of the last ended round: its round
// trip, longer than the round waited, stretches the rounds to come (a
// rescan for the host it found among them).
func (d *discovery) late(seq uint32) {
	if sent, ok := d.expired[seq]; ok {
		delete(d.expired, seq)
		d.maxRTT = max(d.maxRTT, d.a.env.Now()-sent)
	}
}

// maxStretch bounds how far slow answers stretch the waits, in probe
// timeouts: the slowest round trip only grows, and an answer that comes
// any time later (a host answering a rescan's probe an hour on, under a
// made-up MAC) would otherwise make every round, link check and audit
// wait three times that before booking a real failure. 20 timeouts
// (1 s by default, the alarms' own window) is far above a loaded
// emulator's round trips (tens of ms to 200 ms).
const maxStretch = 20

// wait is the quiet time that ends a round: max(timeout, 3 x the
// slowest answer's round trip), at most maxStretch timeouts.
func (d *discovery) wait() element.Time {
	return max(d.timeout, min(3*d.maxRTT, maxStretch*d.timeout))
}

// send queues a probe ahead of the scans (roots, verifications).
func (d *discovery) send(rec probeRec) {
	f, ok := d.build(rec)
	if !ok {
		return
	}
	d.queue = append(d.queue, f)
	if !d.pacing {
		d.pace()
	}
}

// next returns the next probe to put on the wire: queued ones first, then
// the scans'.
func (d *discovery) next() ([]byte, bool) {
	if d.qhead < len(d.queue) {
		f := d.queue[d.qhead]
		d.queue[d.qhead] = nil
		d.qhead++
		if d.qhead == len(d.queue) {
			d.queue, d.qhead = d.queue[:0], 0
		}
		return f, true
	}
	for d.jhead < len(d.jobs) {
		j := &d.jobs[d.jhead]
		if j.pi >= len(j.ports) {
			d.jobs[d.jhead] = scanJob{}
			d.jhead++
			continue
		}
		rec := probeRec{kind: kindHost, sw: j.sw, p: j.ports[j.pi]}
		if j.q > 0 {
			rec.kind, rec.q = j.kind, uint16(j.q)
		}
		j.q++
		if j.q > min(d.maxPorts, 254) || j.hostOnly {
			j.q = 0
			j.pi++
		}
		if f, ok := d.build(rec); ok {
			return f, true
		}
	}
	d.jobs, d.jhead = d.jobs[:0], 0
	return nil, false
}

// pace sends one probe per gap: a burst would overflow the output queue
// of the prober's link, and a lost PM reads as a missing link.
func (d *discovery) pace() {
	f, ok := d.next()
	if !ok {
		d.pacing = false
		return
	}
	d.pacing = true
	d.probes.Add(1)
	d.a.sendNIC(f)
	d.lastSend = d.a.env.Now()
	d.a.env.After(d.gap, d.pace)
}

func (d *discovery) armRound() {
	if d.timer != nil {
		d.timer()
	}
	d.timer = d.a.env.After(d.wait(), d.checkRound)
}

// checkRound ends the round once the pacer is idle and the last probe has
// had the probe timeout to come back.
func (d *discovery) checkRound() {
	d.timer = nil
	if !d.running {
		return
	}
	now := d.a.env.Now()
	last := max(d.lastSend, d.lastAnswer)
	if w := d.wait(); d.pacing || now-last < w {
		wait := w
		if !d.pacing {
			wait = last + w - now
		}
		d.timer = d.a.env.After(wait, d.checkRound)
		return
	}
	d.endRound()
}

// switchReply handles a switch's answer to a tag-0 query.
func (d *discovery) switchReply(m *wire.DumbNetSwitchID) {
	var pm wire.DumbNetProbe
	// The echo keeps whatever padding the probe picked up on its way to
	// the switch, and the reply may be longer than a padded frame.
	if _, err := wire.DecodePadded(&pm, m.Echo, wire.MinFrameLen); err != nil || pm.SrcMAC != d.a.mac {
		d.a.c.Inc("drop_bad_echo")
		return
	}
	rec, ok := d.pending[pm.Seq]
	if !ok || !slices.Equal(d.pathOf(rec), pm.Path) {
		d.a.c.Inc("drop_unmatched_reply")
		return
	}
	d.answered(rec)
	switch rec.kind {
	case kindRoot:
		delete(d.pending, pm.Seq)
		if len(d.sws) > 0 {
			d.a.c.Inc("root_duplicate")
			return
		}
		s := d.addSwitch(m.SwitchID, nil, []uint8{uint8(rec.p)})
		s.known[rec.p] = true
		// The prober is the host on the port that brought the answer home.
		d.hosts[d.a.mac] = HostLoc{MAC: d.a.mac, IP: d.a.ip, Switch: m.SwitchID, Port: rec.p}
		if d.a.ip.IsValid() {
			d.byIP[netipKey(d.a.ip.As16())] = d.a.mac
		}
		d.frontier = []int32{0}
		d.scan(0, nil)
	case kindSwitch, kindRescan:
		delete(d.pending, pm.Seq)
		// The neighbour's port q leads to a switch whose return path is
		// s's: confirm that switch is s itself (§4.1, "ambiguity").
		d.send(probeRec{kind: kindVerify, sw: rec.sw, p: rec.p, q: rec.q, nid: m.SwitchID})
	case kindVerify:
		delete(d.pending, pm.Seq)
		s := d.sws[rec.sw]
		if m.SwitchID != s.id {
			d.a.c.Inc("probe_ambiguous_rejected")
			return
		}
		if s.verified[rec.p] == nil {
			s.verified[rec.p] = make(map[uint16]uint64)
		}
		s.verified[rec.p][rec.q] = rec.nid
	case kindLinkUp, kindLinkUpID:
		delete(d.pending, pm.Seq)
		if m.SwitchID == rec.nid && d.a.ctrl != nil {
			d.a.ctrl.linkUpAnswered(pm.Seq, rec.kind)
		}
	case kindLinkDown:
		delete(d.pending, pm.Seq)
		if m.SwitchID == rec.nid && d.a.ctrl != nil {
			d.a.ctrl.linkDownRefuted(rec.nid, rec.p)
		}
	case kindAudit:
		delete(d.pending, pm.Seq)
		if m.SwitchID == rec.nid && d.a.ctrl != nil {
			d.a.ctrl.auditAnswered(rec.nid, rec.p, pm.Seq)
		}
	default:
		d.a.c.Inc("drop_unmatched_reply")
	}
}

// hostReply handles a host's answer to a PM. It reports whether the
// answer matched a probe still out.
func (d *discovery) hostReply(m *wire.DumbNetProbeReply) bool {
	rec, ok := d.pending[m.Seq]
	if !ok || rec.kind != kindHost || !slices.Equal(d.pathOf(rec), m.Path) {
		d.a.c.Inc("drop_unmatched_reply")
		return false
	}
	d.answered(rec)
	delete(d.pending, m.Seq)
	s := d.sws[rec.sw]
	if prev, dup := s.hosts[rec.p]; dup && prev.HostMAC != m.HostMAC {
		d.a.c.Inc("drop_identity_conflict")
		return true
	}
	s.hosts[rec.p] = *m
	if d.search {
		fwd := slices.Concat(s.fwd, []uint8{uint8(rec.p)})
		d.a.learnController(m, fwd)
	}
	return true
}

func (d *discovery) addSwitch(id uint64, fwd, ret []uint8) *dsw {
	s := &dsw{id: id, fwd: fwd, ret: ret, known: map[uint16]bool{},
		verified: map[uint16]map[uint16]uint64{}, hosts: map[uint16]wire.DumbNetProbeReply{}}
	d.byID[id] = int32(len(d.sws))
	d.sws = append(d.sws, s)
	return s
}

// scan sends the PMs for switch i: for every port p not known yet, one
// host probe and one switch probe per port q of the neighbour (O(P²) PMs,
// §4.1). ports limits the scan (a link-up rescan); nil scans all.
func (d *discovery) scan(i int32, ports []uint16) {
	s := d.sws[i]
	kind := kindSwitch
	if ports != nil {
		kind = kindRescan
	} else {
		for p := 1; p <= min(d.maxPorts, 254); p++ {
			if !s.known[uint16(p)] {
				ports = append(ports, uint16(p))
			}
		}
	}
	d.jobs = append(d.jobs, scanJob{sw: i, kind: kind, ports: ports})
	if !d.pacing {
		d.pace()
	}
	d.armRound()
}

// endRound resolves what the frontier's probes found and starts the next
// BFS level, or finishes.
func (d *discovery) endRound() {
	d.rounds.Add(1)
	// Late answers to this round's probes are stale now; the controller's
	// link checks are not the round's and keep their records (their own
	// timers end them): a check sent near the end of a rescan round and
	// answered after it was otherwise unmatched, and a working link
	// booked down.
	clear(d.expired)
	for seq, rec := range d.pending {
		if rec.kind != kindLinkUp && rec.kind != kindLinkUpID && rec.kind != kindLinkDown && rec.kind != kindAudit {
			if rec.kind == kindHost {
				d.expired[seq] = rec.sent
			}
			delete(d.pending, seq)
		}
	}
	if len(d.sws) == 0 {
		// The first switch never answered: no fabric (or no link) yet.
		d.a.c.Inc("discovery_no_switch")
		d.timer = d.a.env.After(scale(100, d.timeout), func() {
			d.timer = nil
			if d.running {
				d.start()
			}
		})
		return
	}
	var next []int32
	for _, i := range d.frontier {
		next = append(next, d.resolve(i)...)
	}
	d.frontier = next
	if !d.running {
		return // search mode found the controller while resolving
	}
	if len(next) == 0 {
		d.finish()
		return
	}
	for _, i := range next {
		d.scan(i, nil)
	}
}

// resolve turns switch i's verified bounces into links (and new switches)
// and its host answers into hosts, on the ports that lead to no switch: a
// host answer from behind a switch port is a PM that wandered on and must
// not place a host there.
func (d *discovery) resolve(i int32) []int32 {
	s := d.sws[i]
	var next []int32
	// Group by neighbour: parallel links to one neighbour are paired in port
	// order, because which of them a frame took is not observable.
	type group struct{ ps, qs []uint16 }
	groups := map[uint64]*group{}
	var order []uint64
	ports := make([]uint16, 0, len(s.verified))
	for p := range s.verified {
		ports = append(ports, p)
	}
	slices.Sort(ports)
	for _, p := range ports {
		for q, nid := range s.verified[p] {
			if nid == s.id && q == p {
				continue
			}
			gr := groups[nid]
			if gr == nil {
				gr = &group{}
				groups[nid] = gr
				order = append(order, nid)
			}
			if !slices.Contains(gr.ps, p) {
				gr.ps = append(gr.ps, p)
			}
			if !slices.Contains(gr.qs, q) {
				gr.qs = append(gr.qs, q)
			}
		}
	}
	switchPort := map[uint16]bool{}
	for _, nid := range order {
		gr := groups[nid]
		slices.Sort(gr.ps)
		slices.Sort(gr.qs)
		if nid == s.id {
			// A cable between two ports of one switch: p and q pair up.
			for _, p := range gr.ps {
				for q := range s.verified[p] {
					if q != p {
						d.addLink(s, p, s, q)
						switchPort[p] = true
					}
				}
			}
			continue
		}
		if len(gr.ps) != len(gr.qs) {
			d.a.c.Inc("discovery_unpaired_ports")
		}
		if c := d.a.ctrl; c != nil && c.ready {
			c.heldPairsFirst(s.id, nid, gr.ps, gr.qs)
		}
		for k := range min(len(gr.ps), len(gr.qs)) {
			p, q := gr.ps[k], gr.qs[k]
			switchPort[p] = true
			j, known := d.byID[nid]
			if !known {
				n := d.addSwitch(nid, slices.Concat(s.fwd, []uint8{uint8(p)}), slices.Concat([]uint8{uint8(q)}, s.ret))
				j = int32(len(d.sws) - 1)
				_ = n
				next = append(next, j)
			}
			d.addLink(s, p, d.sws[j], q)
		}
	}
	ps := make([]uint16, 0, len(s.hosts))
	for p := range s.hosts {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	for _, p := range ps {
		if switchPort[p] || s.known[p] {
			d.a.c.Inc("host_reply_behind_switch")
			continue
		}
		d.addHost(s, p, s.hosts[p])
	}
	s.verified = map[uint16]map[uint16]uint64{}
	s.hosts = map[uint16]wire.DumbNetProbeReply{}
	return next
}

func (d *discovery) addLink(a *dsw, ap uint16, b *dsw, bp uint16) {
	l := normLink(Link{A: a.id, APort: ap, B: b.id, BPort: bp, Up: true})
	if c := d.a.ctrl; c != nil && c.ready {
		// A rescan: a port found leading elsewhere than the link the
		// controller knows on it was recabled, and that link is gone; a
		// link found where it is known works (refoundUp).
		c.replaceAt(portID{a.id, ap}, &portID{b.id, bp})
		c.replaceAt(portID{b.id, bp}, &portID{a.id, ap})
		if d.links[l] {
			c.refound = append(c.refound, l)
		}
	}
	a.known[ap] = true
	b.known[bp] = true
	if d.links[l] {
		return
	}
	d.links[l] = true
	d.a.c.Inc("links_found")
}

// addHost records a host, unless it claims an identity (MAC or IP) that
// another location already holds: a forged or misconfigured answer is
// dropped and counted, and the first holder keeps its place, unless the
// controller holds that place gone (hostGone): the host moved.
func (d *discovery) addHost(s *dsw, p uint16, m wire.DumbNetProbeReply) {
	loc := HostLoc{MAC: m.HostMAC, IP: m.HostIP, Switch: s.id, Port: p}
	old, placed := d.hosts[m.HostMAC]
	moved := placed && (old.Switch != s.id || old.Port != p)
	if moved && (d.a.ctrl == nil || !d.a.ctrl.ready || !d.a.ctrl.hostGone(old)) {
		d.a.c.Inc("drop_identity_conflict")
		return
	}
	if m.HostMAC == (wire.MAC{}) || m.HostMAC.IsMulticast() {
		d.a.c.Inc("drop_identity_conflict")
		return
	}
	if m.HostIP.IsValid() {
		k := netipKey(m.HostIP.As16())
		if owner, ok := d.byIP[k]; ok && owner != m.HostMAC {
			d.a.c.Inc("drop_identity_conflict")
			return
		}
		d.byIP[k] = m.HostMAC
	}
	if c := d.a.ctrl; c != nil && c.ready {
		c.replaceAt(portID{s.id, p}, nil) // a rescan found a host where a link was known
	}
	s.known[p] = true
	if moved {
		// Its old place is gone (hostGone): the host moved here.
		if di, ok := d.byID[old.Switch]; ok {
			delete(d.sws[di].known, old.Port)
		}
		d.hosts[m.HostMAC] = loc
		d.a.c.Inc("hosts_moved")
		return
	}
	if placed {
		// The same host at the same place (a rescan of its port after a
		// port-up notification): a re-confirmation, not a new host, so
		// that hosts_found stays the number of distinct hosts.
		d.hosts[m.HostMAC] = loc
		d.a.c.Inc("hosts_refound")
		return
	}
	d.hosts[m.HostMAC] = loc
	d.a.c.Inc("hosts_found")
}

func (d *discovery) finish() {
	d.running = false
	if !d.done {
		d.doneAt = d.a.env.Now() // the first discovery's end; rescans keep it
	}
	d.done = true
	if d.onDone != nil {
		d.onDone()
	}
}

// topology returns what discovery found, sorted.
func (d *discovery) topology() *Topology {
	t := &Topology{}
	for _, s := range d.sws {
		t.Switches = append(t.Switches, s.id)
	}
	for l := range d.links {
		t.Links = append(t.Links, l)
	}
	for _, h := range d.hosts {
		t.Hosts = append(t.Hosts, h)
	}
	t.sort()
	return t
}
