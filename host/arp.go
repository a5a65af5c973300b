package host

import (
	"net/netip"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

// arpTable is the neighbour cache. An entry is incomplete (a request is
// out, frames wait in its queue) or resolved. A resolved entry past its
// age is still used, as Linux's STALE state is, while a fresh request
// re-confirms it: throughput does not stall every ARPTimeout. If nobody
// answers the re-confirmation, the entry is removed and the next packet
// resolves from scratch. An entry left unused goes on to be garbage once
// it has been stale for another ARPTimeout (Linux's gc_stale_time in
// spirit): lookups skip it, and it is deleted then or when the table is
// full. Every entry counts against ARPMaxEntries, whatever created it.
type arpTable struct {
	m map[[4]byte]*arpEntry
	// gcNext is the earliest time the full table can hold garbage again,
	// as the last walk found it: until then a flood of new addresses
	// against a table full of live entries costs a lookup a frame, not a
	// walk over every entry.
	gcNext element.Time
	// The last walk of the full table, and the refusals since: walks
	// are rate-limited (arpRoom).
	walked   bool
	lastWalk element.Time
	refused  int
	scans    int // full scans, for tests
}

type arpEntry struct {
	ip       netip.Addr
	mac      wire.MAC
	resolved bool
	expires  element.Time // resolved: fresh until then
	probing  bool         // a request is out (incomplete, or re-confirming)
	sent     int          // requests sent in the current probe
	round    uint32       // counts probes: a retry timer of an earlier one does nothing
	queue    [][]byte     // frames waiting for resolution (incomplete only)
}

func (t *arpTable) init() { t.m = make(map[[4]byte]*arpEntry) }

// ARPEntry is one neighbour cache entry, for reports and tests.
type ARPEntry struct {
	IP       netip.Addr   `json:"ip"`
	MAC      wire.MAC     `json:"mac"`
	Resolved bool         `json:"resolved"`
	Expires  element.Time `json:"expires_ps"`
	Queued   int          `json:"queued"`
}

// ARPCache returns the neighbour cache entry for ip.
func (h *Host) ARPCache(ip netip.Addr) (ARPEntry, bool) {
	if !ip.Is4() {
		return ARPEntry{}, false
	}
	e := h.arpLookup(ip.As4())
	if e == nil {
		return ARPEntry{}, false
	}
	return ARPEntry{IP: e.ip, MAC: e.mac, Resolved: e.resolved, Expires: e.expires, Queued: len(e.queue)}, true
}

// resolveAndSend fills in f's destination MAC for next hop nh and sends
// it, or queues it while nh is resolved.
func (h *Host) resolveAndSend(nh netip.Addr, f []byte) {
	k := nh.As4()
	e := h.arpLookup(k)
	if e != nil && e.resolved {
		copy(f[0:6], e.mac[:])
		h.send(f)
		if h.env.Now() >= e.expires && !e.probing {
			h.ctr.Inc("arp_refresh")
			h.arpProbe(e)
		}
		return
	}
	if e == nil {
		// Received packets lead here too (an echo reply, a SYN-ACK, a
		// reset to any source in the subnet): the bound applies.
		if !h.arpRoom() {
			h.ctr.Inc("drop_arp_table_full")
			return
		}
		e = &arpEntry{ip: nh}
		h.arp.m[k] = e
		h.arpProbe(e)
	}
	if len(e.queue) >= h.cfg.ARPQueue {
		h.ctr.Inc("drop_arp_queue_full")
		return
	}
	e.queue = append(e.queue, f)
}

// arpLookup returns the entry for k, or nil; a garbage entry (resolved,
// unused and unconfirmed for twice ARPTimeout) is deleted, as Linux's
// garbage collector would have done by then.
func (h *Host) arpLookup(k [4]byte) *arpEntry {
	e := h.arp.m[k]
	if e != nil && h.arpGarbage(e) {
		delete(h.arp.m, k)
		h.ctr.Inc("arp_gc")
		return nil
	}
	return e
}

// arpGarbage reports whether e has been stale for another ARPTimeout: a
// stale entry that is used is re-confirmed (or removed) at once, so this
// one was not used since it went stale.
func (h *Host) arpGarbage(e *arpEntry) bool {
	return e.resolved && !e.probing && h.env.Now()-e.expires >= h.cfg.ARPTimeout
}

// arpRoom reports whether the table may take one more entry, deleting
// garbage entries first when it is full; it counts arp_table_full when
// not.
func (h *Host) arpRoom() bool {
	now := h.env.Now()
	// A steady flood fills each slot a walk frees at once, and the
	// entries it made turn into garbage one by one, a frame apart: were
	// a walk allowed whenever garbage may exist, every frame would walk
	// the table again. So a walk also waits for an eighth of the table's
	// size in refusals since the last (8 entries a frame, amortized) or
	// for arpGCInterval (Linux too rate-limits its forced collection),
	// whichever comes first; meanwhile the table refuses, as when full.
	mayWalk := !h.arp.walked || h.arp.refused >= max(1, h.cfg.ARPMaxEntries/8) ||
		now >= h.arp.lastWalk.AddSat(min(arpGCInterval, h.cfg.ARPTimeout))
	if len(h.arp.m) >= h.cfg.ARPMaxEntries && now >= h.arp.gcNext && mayWalk {
		h.arp.scans++
		h.arp.walked, h.arp.lastWalk, h.arp.refused = true, now, 0
		// An entry becomes garbage ARPTimeout after it expires, and
		// expires is only ever set to a resolution's time plus
		// ARPTimeout: an entry that is not yet resolved and idle (one
		// being resolved or re-confirmed, or one created after this
		// scan) is garbage no sooner than now + 2·ARPTimeout (we take
		// now + ARPTimeout, to spare the argument), and one that is
		// resolved and idle at expires + ARPTimeout, later still if it
		// is used meanwhile. Until the earliest of those, a scan would
		// find nothing.
		next := now.AddSat(h.cfg.ARPTimeout)
		for k, e := range h.arp.m {
			if h.arpGarbage(e) {
				delete(h.arp.m, k)
				h.ctr.Inc("arp_gc")
			} else if e.resolved && !e.probing {
				next = min(next, e.expires.AddSat(h.cfg.ARPTimeout))
			}
		}
		h.arp.gcNext = next
	}
	if len(h.arp.m) >= h.cfg.ARPMaxEntries {
		h.arp.refused++
		h.ctr.Inc("arp_table_full")
		return false
	}
	return true
}

// arpProbe starts a round of requests for e.
func (h *Host) arpProbe(e *arpEntry) {
	e.probing = true
	e.sent = 0
	e.round++
	h.arpRequest(e)
}

// arpRequest sends one request for e: broadcast to resolve it, unicast to
// the MAC it has to re-confirm a resolved entry, as Linux's PROBE state
// sends its ucast_probes and RFC 1122 §2.3.2.1 suggests ("unicast
// poll"). Re-confirmations were broadcast, one per live neighbour every
// ARPTimeout, flooding the fabric; with no answer the entry goes, and the
// next packet resolves afresh, by broadcast.
func (h *Host) arpRequest(e *arpEntry) {
	e.sent++
	dst := wire.Broadcast
	if e.resolved {
		dst = e.mac
	}
	h.sendARP(wire.ARPRequest, dst, wire.MAC{}, e.ip)
	round := e.round
	h.env.After(h.cfg.ARPRetryInterval, func() { h.arpRetry(e, round) })
}

// arpRetry runs ARPRetryInterval after a request of probe round.
func (h *Host) arpRetry(e *arpEntry, round uint32) {
	if h.arp.m[e.ip.As4()] != e || !e.probing || e.round != round {
		// Answered, or replaced; or answered, and stale again already
		// (ARPTimeout under ARPRetryInterval): the timer of the earlier
		// probe ran on into the new one, which then sent requests twice
		// as often and gave up early.
		return
	}
	if e.sent < h.cfg.ARPRetries {
		h.ctr.Inc("arp_retry")
		h.arpRequest(e)
		return
	}
	h.ctr.Inc("arp_failed")
	if n := len(e.queue); n > 0 {
		h.ctr.Add("drop_arp_unresolved", uint64(n))
	}
	delete(h.arp.m, e.ip.As4())
}

func (h *Host) sendARP(op uint16, dst, tmac wire.MAC, tip netip.Addr) {
	sip := h.ip
	if !sip.IsValid() {
		sip = netip.AddrFrom4([4]byte{})
	}
	h.sendARPFrom(op, dst, sip, tmac, tip)
}

// sendARPFrom sends an ARP packet with sender address sip (0.0.0.0 for an
// RFC 5227 probe).
func (h *Host) sendARPFrom(op uint16, dst wire.MAC, sip netip.Addr, tmac wire.MAC, tip netip.Addr) {
	f, err := wire.AppendARPFrame(nil, dst, 0, &wire.ARP{Op: op, SenderMAC: h.mac, SenderIP: sip, TargetMAC: tmac, TargetIP: tip})
	if err != nil {
		// Only a non-IPv4 target can fail, and the callers pass IPv4.
		h.ctr.Inc("arp_build_error")
		return
	}
	if op == wire.ARPRequest {
		h.ctr.Inc("arp_request_tx")
	} else {
		h.ctr.Inc("arp_reply_tx")
	}
	h.send(f)
}

// gratuitousARP announces the host's binding: a broadcast request for its
// own address (RFC 5227 §3), which refreshes neighbours' caches and
// switches' learning tables.
func (h *Host) gratuitousARP() {
	if !h.ip.IsValid() {
		return
	}
	h.ctr.Inc("arp_gratuitous_tx")
	h.sendARP(wire.ARPRequest, wire.Broadcast, wire.MAC{}, h.ip)
}

func (h *Host) receiveARP(frame []byte) {
	a, err := wire.DecodeARP(frame)
	if err != nil {
		h.ctr.Inc("drop_arp_malformed")
		return
	}
	if a.SenderMAC.IsMulticast() || a.SenderMAC == (wire.MAC{}) || (a.Op != wire.ARPRequest && a.Op != wire.ARPReply) {
		h.ctr.Inc("drop_arp_invalid")
		return
	}
	h.ctr.Inc("arp_rx")
	if h.dhcp != nil && h.dhcp.conflict(&a) {
		return
	}
	if a.SenderIP.IsUnspecified() {
		// An address probe (RFC 5227): nothing to learn; answer if it
		// asks for our address, which defends it.
		if h.ip.IsValid() && a.TargetIP == h.ip && a.Op == wire.ARPRequest {
			h.sendARP(wire.ARPReply, a.SenderMAC, a.SenderMAC, a.SenderIP)
		}
		return
	}
	if h.ip.IsValid() && a.SenderIP == h.ip {
		if a.SenderMAC != h.mac {
			h.ctr.Inc("arp_conflict")
		}
		return
	}
	if a.SenderIP == a.TargetIP {
		h.ctr.Inc("arp_gratuitous_rx")
	}
	// RFC 826: merge the sender into an existing entry; create one only
	// when the packet is for us.
	forUs := h.ip.IsValid() && a.TargetIP == h.ip
	k := a.SenderIP.As4()
	e := h.arpLookup(k)
	if e == nil && forUs && h.arpRoom() {
		e = &arpEntry{ip: a.SenderIP}
		h.arp.m[k] = e
	}
	if e != nil {
		h.arpLearn(e, a.SenderMAC)
	} else if a.Op == wire.ARPReply {
		h.ctr.Inc("arp_unsolicited")
	}
	if forUs && a.Op == wire.ARPRequest {
		h.sendARP(wire.ARPReply, a.SenderMAC, a.SenderMAC, a.SenderIP)
	}
}

func (h *Host) arpLearn(e *arpEntry, mac wire.MAC) {
	if e.resolved && e.mac != mac {
		h.ctr.Inc("arp_changed")
	}
	e.mac = mac
	e.resolved = true
	e.probing = false
	e.expires = h.env.Now() + h.cfg.ARPTimeout
	q := e.queue
	e.queue = nil
	for _, f := range q {
		copy(f[0:6], mac[:])
		h.send(f)
	}
}

// arpGCInterval is the time after which a full table may be walked
// again however few refusals came since (ARPTimeout if shorter).
const arpGCInterval = element.Second
