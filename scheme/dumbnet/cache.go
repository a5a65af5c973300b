package dumbnet

import (
	"errors"
	"fmt"
	"slices"

	"github.com/edgefabric/edgefabric/wire"
)

// Errors of the path cache, wrapped with context.
var (
	// ErrUnknownHost: the destination's location is not in the TopoCache.
	ErrUnknownHost = errors.New("unknown host")
	// ErrNoPath: no working path in the cached subgraph.
	ErrNoPath = errors.New("no path")
	// ErrBadPath: a tag sequence the path verifier rejects.
	ErrBadPath = errors.New("bad path")
)

// attach is where a host's NIC is cabled: a switch (TopoCache index) and
// its port.
type attach struct {
	sw   int32
	port uint16
}

// TopoCache is a host's first-level path cache (DumbNet §5.2): the union
// of the path graphs the controller returned, the hosts' attachment points
// they named, and the link states that notifications and patches
// reported. It finds paths without asking the controller. Each
// destination's path graph is also kept as its own small view, so that
// finding a path costs the size of that path graph, not of the union.
type TopoCache struct {
	g       *netGraph
	self    attach
	hasSelf bool
	hosts   map[wire.MAC]attach
	views   map[wire.MAC]*view
	version uint64
	// downSince is, per end of a link this cache holds down, or that a
	// notification said is down while the cache did not hold the link,
	// the first topology version that can know of the latest failure this
	// host heard of: a path graph of that version or later that lists the
	// link up was computed after the failure. The agent bounds it
	// (linkDown): forged notifications each name a new port.
	downSince map[portID]uint64
	refailed  map[portID]bool
	sc        scratch
}

// view is one destination's path graph.
type view struct {
	g        *netGraph
	src, dst attach
	version  uint64 // the controller's topology version when it computed the graph
}

// NewTopoCache returns an empty cache.
func NewTopoCache() *TopoCache {
	return &TopoCache{g: newNetGraph(), hosts: make(map[wire.MAC]attach), views: make(map[wire.MAC]*view), downSince: make(map[portID]uint64), refailed: make(map[portID]bool)}
}

// hasSwitch reports whether the path graph holds the switch.
func (v *view) hasSwitch(sw uint64) bool {
	_, ok := v.g.idx[sw]
	return ok
}

// hasLink reports whether the path graph holds the link on the port.
func (v *view) hasLink(id portID) bool {
	i, ok := v.g.idx[id.sw]
	return ok && v.g.peerOf(i, id.port).sw >= 0
}

// Merge integrates a path graph from the controller.
func (c *TopoCache) Merge(r *wire.DumbNetPathReply) {
	s := c.g.addSwitch(r.SrcSwitch)
	c.self, c.hasSelf = attach{sw: s, port: r.SrcPort}, true
	c.hosts[r.Dst] = attach{sw: c.g.addSwitch(r.DstSwitch), port: r.DstPort}
	v := &view{g: newNetGraph(), version: r.Version}
	v.src = attach{sw: v.g.addSwitch(r.SrcSwitch), port: r.SrcPort}
	v.dst = attach{sw: v.g.addSwitch(r.DstSwitch), port: r.DstPort}
	for _, l := range r.Links {
		a, b := c.g.addSwitch(l.A), c.g.addSwitch(l.B)
		up := l.Flags&wire.LinkUp != 0
		// A link this cache already knows to be down stays down against a
		// graph computed before anyone could know (a notification reaches
		// hosts before the controller). A later graph that lists it up
		// revives it: comparing with the cache's latest version instead
		// kept a link down for good once the patch saying it was up got
		// lost while a later patch about another link arrived (found in
		// the emulator, TestEmuChaosRecovers: 8 of 240 pairs silent after
		// every link came back). The same holds for a link the cache did
		// not hold when the notification came: a graph computed before the
		// controller heard of the failure put it back up, and new flows
		// hashed onto it were lost until the patch (TestMergeKeepsUnknownFailedLinkDown).
		pe := c.g.peerOf(a, l.APort)
		heldDown := pe.sw == b && pe.port == l.BPort && !pe.up
		if since, known := c.failedSince(portID{l.A, l.APort}, portID{l.B, l.BPort}, heldDown); known && up {
			if r.Version < since {
				up = false
			} else {
				delete(c.downSince, portID{l.A, l.APort})
				delete(c.downSince, portID{l.B, l.BPort})
				delete(c.refailed, portID{l.A, l.APort})
				delete(c.refailed, portID{l.B, l.BPort})
			}
		}
		c.g.addLink(a, l.APort, b, l.BPort, up, l.Flags)
		v.g.addLink(v.g.addSwitch(l.A), l.APort, v.g.addSwitch(l.B), l.BPort, up, l.Flags)
	}
	c.views[r.Dst] = v
	c.version = max(c.version, r.Version)
}

// failedSince returns the first version that can know of the failure
// recorded for the link with these ends (the later of the two records),
// and whether one is; a link held down without a record (its record
// forgotten) falls back on the version after the cache's.
func (c *TopoCache) failedSince(a, b portID, heldDown bool) (uint64, bool) {
	sa, okA := c.downSince[a]
	sb, okB := c.downSince[b]
	switch {
	case okA || okB:
		return max(sa, sb), true
	case heldDown:
		return c.version + 1, true
	}
	return 0, false
}

// forgetFailure drops what the cache recorded of a failure of the link
// with these ends: the controller says it is up.
func (c *TopoCache) forgetFailure(ends ...portID) {
	for _, e := range ends {
		delete(c.downSince, e)
	}
}

// SetLink records the state of the link on a switch port; it reports
// whether the cache knew the link and its state changed. A failure is
// recorded even for a link the cache does not hold, so that Merge keeps
// it down against a path graph computed before the failure, and the
// record of a link already held down moves on to the new failure (the
// version after the cache's), so that a repair older than it is not
// taken for its end (lateRepair); a link said to be up loses its record.
func (c *TopoCache) SetLink(sw uint64, port uint16, up bool) bool {
	i, ok := c.g.idx[sw]
	if !ok || c.g.peerOf(i, port).sw < 0 {
		id := portID{sw, port}
		if up {
			delete(c.downSince, id)
		} else {
			c.downSince[id] = max(c.downSince[id], c.version+1)
		}
		return false
	}
	for _, v := range c.views {
		if j, ok := v.g.idx[sw]; ok {
			v.g.setUp(j, port, up)
		}
	}
	changed := c.g.setUp(i, port, up)
	pe := c.g.peerOf(i, port)
	for _, e := range []portID{{sw, port}, {c.g.ids[pe.sw], pe.port}} {
		switch {
		case !up:
			c.downSince[e] = max(c.downSince[e], c.version+1)
		case changed:
			delete(c.downSince, e)
			delete(c.refailed, e)
		}
	}
	return changed
}

// lateRepair applies a repair of version ver that arrives older than the
// cache (its patch reordered after a newer one): where the cache holds
// the link with ends a and b down, and the failure it knows of is older
// than the repair, the link is set up again in the union and in every
// view. It reports whether it was.
func (c *TopoCache) lateRepair(a, b portID, ver uint64) bool {
	i, ok := c.g.idx[a.sw]
	if !ok {
		return false
	}
	pe := c.g.peerOf(i, a.port)
	if pe.sw < 0 || pe.up || c.g.ids[pe.sw] != b.sw || pe.port != b.port {
		return false
	}
	if since, _ := c.failedSince(a, b, true); ver < since || c.refailed[a] || c.refailed[b] {
		return false
	}
	return c.SetLink(a.sw, a.port, true)
}

// Switches returns how many switches the cache holds.
func (c *TopoCache) Switches() int { return c.g.numSwitches() }

func (c *TopoCache) where(dst wire.MAC) (*view, error) {
	v, ok := c.views[dst]
	if !ok || !c.hasSelf {
		return nil, fmt.Errorf("dumbnet: topocache: %v: %w", dst, ErrUnknownHost)
	}
	return v, nil
}

// FindPath computes a shortest working path to dst in its path graph and
// returns its tags, appended to buf[:0] (DumbNet Table 2, "Find Path").
func (c *TopoCache) FindPath(dst wire.MAC, buf []uint8) ([]uint8, error) {
	v, err := c.where(dst)
	if err != nil {
		return nil, err
	}
	n := v.g.bfsTo(&c.sc, v.src.sw, v.dst.sw)
	if n < 0 {
		return nil, fmt.Errorf("dumbnet: topocache: %v: %w", dst, ErrNoPath)
	}
	tags := buf[:0]
	for range n + 1 {
		tags = append(tags, 0)
	}
	tags[n] = uint8(v.dst.port)
	for i, u := int(n)-1, v.dst.sw; i >= 0; i-- {
		h := c.sc.prev[u]
		tags[i] = uint8(h.out)
		u = h.sw
	}
	return tags, nil
}

// KPaths computes up to k shortest working routes to dst in its path
// graph.
func (c *TopoCache) KPaths(dst wire.MAC, k int) ([][]hop, *view, error) {
	v, err := c.where(dst)
	if err != nil {
		return nil, nil, err
	}
	rs := v.g.kShortest(&c.sc, v.src.sw, v.dst.sw, k)
	if len(rs) == 0 {
		return nil, v, fmt.Errorf("dumbnet: topocache: %v: %w", dst, ErrNoPath)
	}
	for _, r := range rs {
		r[len(r)-1].out = v.dst.port
	}
	return rs, v, nil
}

// backupRoute returns the backup path the controller marked, if it still
// works.
func (c *TopoCache) backupRoute(v *view) []hop {
	ban := &bans{ports: map[uint32]bool{}}
	for i := range v.g.ports {
		for _, p := range v.g.used[i] {
			if v.g.ports[i][p].flags&wire.LinkBackup == 0 {
				ban.ports[portKey(int32(i), p)] = true
			}
		}
	}
	r := v.g.shortest(&c.sc, v.src.sw, v.dst.sw, nil, ban)
	if r != nil {
		r[len(r)-1].out = v.dst.port
	}
	return r
}

// Verify is the path verifier (DumbNet §6.1): it walks tags from this
// host's switch through the cache and accepts them only if every hop is a
// working link the cache knows and the last tag delivers to dst. An
// application-made route must pass it before it enters the PathTable.
func (c *TopoCache) Verify(tags []uint8, dst wire.MAC) error {
	d, ok := c.hosts[dst]
	if !ok || !c.hasSelf {
		return fmt.Errorf("dumbnet: verify: %v: %w", dst, ErrUnknownHost)
	}
	if len(tags) == 0 || len(tags) > wire.DumbNetMaxTags {
		return fmt.Errorf("dumbnet: verify: %d tags: %w", len(tags), ErrBadPath)
	}
	u := c.self.sw
	last := len(tags) - 1
	for i, t := range tags[:last] {
		pe := c.g.peerOf(u, uint16(t))
		if pe.sw < 0 || !pe.up {
			return fmt.Errorf("dumbnet: verify: hop %d: port %d of %#x leads to no working link: %w", i, t, c.g.ids[u], ErrBadPath)
		}
		u = pe.sw
	}
	if u != d.sw || uint16(tags[last]) != d.port {
		return fmt.Errorf("dumbnet: verify: path ends at %#x port %d, %v is at %#x port %d: %w", c.g.ids[u], tags[last], dst, c.g.ids[d.sw], d.port, ErrBadPath)
	}
	return nil
}

// linkOf names the link on port p of switch i by its ends' IDs, the same
// in every graph.
func (g *netGraph) linkOf(i int32, p uint16) (Link, bool) {
	pe := g.peerOf(i, p)
	if pe.sw < 0 {
		return Link{}, false
	}
	return normLink(Link{A: g.ids[i], APort: p, B: g.ids[pe.sw], BPort: pe.port}), true
}

// routeIDs lists the links a route crosses by ID.
func (g *netGraph) routeIDs(r []hop) []Link {
	ls := make([]Link, 0, len(r))
	for _, h := range r[:len(r)-1] {
		l, _ := g.linkOf(h.sw, h.out)
		ls = append(ls, l)
	}
	return ls
}

// routeTags turns a route into the tag sequence the host pushes.
func routeTags(r []hop) []uint8 {
	t := make([]uint8, len(r))
	for i, h := range r {
		t[i] = uint8(h.out)
	}
	return t
}

// PathEntry is a PathTable row: the k shortest paths to a destination
// and the backup path (DumbNet §5.2, Figure 4).
type PathEntry struct {
	Paths  [][]uint8
	Backup []uint8
	routes []routeRec
	backup routeRec
	// Version of the TopoCache the paths were computed from.
	Version uint64
}

// routeRec keeps the links a path crosses, to find the paths a failure
// breaks.
type routeRec struct{ links []Link }

func (r *routeRec) uses(k Link) bool {
	for _, l := range r.links {
		if l == k {
			return true
		}
	}
	return false
}

// PathTable is a host's second-level path cache (DumbNet §5.2): indexed by
// destination MAC, it holds the k shortest paths and the backup path. It
// is an open-addressing hash table keyed by the 48-bit MAC: a lookup is a
// multiply, a shift and usually one probe, cheaper than a Go map with an
// array key (BenchmarkPathTableLookup).
type PathTable struct {
	keys []uint64 // MAC+1, 0 = empty slot
	vals []*PathEntry
	n    int
	// tomb counts deleted slots (kept as keys == tombstone) to trigger a
	// rehash.
	tomb  int
	shift uint
}

const tombstone = ^uint64(0)

// NewPathTable returns an empty table.
func NewPathTable() *PathTable {
	t := &PathTable{}
	t.resize(16)
	return t
}

func macKey(m wire.MAC) uint64 {
	return (uint64(m[0])<<40 | uint64(m[1])<<32 | uint64(m[2])<<24 | uint64(m[3])<<16 | uint64(m[4])<<8 | uint64(m[5])) + 1
}

func keyMAC(k uint64) wire.MAC {
	k--
	return wire.MAC{byte(k >> 40), byte(k >> 32), byte(k >> 24), byte(k >> 16), byte(k >> 8), byte(k)}
}

func (t *PathTable) slot(k uint64) int { return int((k * 0x9e3779b97f4a7c15) >> t.shift) }

func (t *PathTable) resize(size int) {
	keys, vals := t.keys, t.vals
	t.keys = make([]uint64, size)
	t.vals = make([]*PathEntry, size)
	t.shift = uint(64)
	for s := size; s > 1; s >>= 1 {
		t.shift--
	}
	t.n, t.tomb = 0, 0
	for i, k := range keys {
		if k != 0 && k != tombstone {
			t.put(k, vals[i])
		}
	}
}

// Lookup returns the entry for dst, or nil (DumbNet Table 2, "PathTable
// Lookup").
func (t *PathTable) Lookup(dst wire.MAC) *PathEntry {
	k := macKey(dst)
	mask := len(t.keys) - 1
	for i := t.slot(k); ; i = (i + 1) & mask {
		switch t.keys[i] {
		case k:
			return t.vals[i]
		case 0:
			return nil
		}
	}
}

// Len returns the number of destinations.
func (t *PathTable) Len() int { return t.n }

// Put stores an entry.
func (t *PathTable) Put(dst wire.MAC, e *PathEntry) {
	if 2*(t.n+t.tomb+1) > len(t.keys) {
		size := 16
		for size < 4*(t.n+1) {
			size <<= 1 // a power of two: slot and mask rely on it
		}
		t.resize(size)
	}
	t.put(macKey(dst), e)
}

func (t *PathTable) put(k uint64, e *PathEntry) {
	mask := len(t.keys) - 1
	free := -1
	for i := t.slot(k); ; i = (i + 1) & mask {
		switch t.keys[i] {
		case k:
			t.vals[i] = e
			return
		case tombstone:
			if free < 0 {
				free = i
			}
			continue
		case 0:
			if free >= 0 {
				i = free
				t.tomb--
			}
			t.keys[i], t.vals[i] = k, e
			t.n++
			return
		}
	}
}

// Delete removes dst.
func (t *PathTable) Delete(dst wire.MAC) {
	k := macKey(dst)
	mask := len(t.keys) - 1
	for i := t.slot(k); ; i = (i + 1) & mask {
		switch t.keys[i] {
		case k:
			t.keys[i], t.vals[i] = tombstone, nil
			t.n--
			t.tomb++
			return
		case 0:
			return
		}
	}
}

// All calls f for every destination in an unspecified but deterministic
// order (slot order), stopping if f returns false.
func (t *PathTable) All(f func(dst wire.MAC, e *PathEntry) bool) {
	for i, k := range t.keys {
		if k != 0 && k != tombstone {
			if !f(keyMAC(k), t.vals[i]) {
				return
			}
		}
	}
}

// dsts lists the destinations, sorted, so that iteration order never
// depends on the table's layout.
func (t *PathTable) dsts() []wire.MAC {
	out := make([]wire.MAC, 0, t.n)
	t.All(func(d wire.MAC, _ *PathEntry) bool { out = append(out, d); return true })
	slices.SortFunc(out, func(x, y wire.MAC) int { return slices.Compare(x[:], y[:]) })
	return out
}

// fill computes dst's entry from the cache: k shortest paths and the
// controller's backup path.
func (c *TopoCache) fill(dst wire.MAC, k int) (*PathEntry, error) {
	rs, v, err := c.KPaths(dst, k)
	if err != nil {
		return nil, err
	}
	e := &PathEntry{Version: c.version}
	for _, r := range rs {
		e.Paths = append(e.Paths, routeTags(r))
		e.routes = append(e.routes, routeRec{links: v.g.routeIDs(r)})
	}
	if b := c.backupRoute(v); b != nil {
		e.Backup = routeTags(b)
		e.backup = routeRec{links: v.g.routeIDs(b)}
	}
	return e, nil
}

// failover removes from e the paths that cross link k and reports whether
// a path is left; with none left it falls back on the backup path if the
// backup does not cross k (DumbNet §5.2: "caching backup paths allows the
// hosts to failover fast").
func (e *PathEntry) failover(k Link) (changed, ok bool) {
	n := 0
	for i := range e.Paths {
		if e.routes[i].uses(k) {
			changed = true
			continue
		}
		e.Paths[n], e.routes[n] = e.Paths[i], e.routes[i]
		n++
	}
	e.Paths, e.routes = e.Paths[:n], e.routes[:n]
	if e.Backup != nil && e.backup.uses(k) {
		e.Backup = nil
		changed = true
	}
	if n == 0 && e.Backup != nil {
		e.Paths = [][]uint8{e.Backup}
		e.routes = []routeRec{e.backup}
	}
	return changed, len(e.Paths) > 0
}
