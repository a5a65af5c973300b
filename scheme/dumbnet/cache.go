package dumbnet

import (
	"errors"
	"fmt"

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
// reported. It finds paths without asking the controller.
type TopoCache struct {
	g       *netGraph
	self    attach
	hasSelf bool
	hosts   map[wire.MAC]attach
	version uint64
	sc      scratch
}

// NewTopoCache returns an empty cache.
func NewTopoCache() *TopoCache {
	return &TopoCache{g: newNetGraph(), hosts: make(map[wire.MAC]attach)}
}

// Merge integrates a path graph from the controller.
func (c *TopoCache) Merge(r *wire.DumbNetPathReply) {
	s := c.g.addSwitch(r.SrcSwitch)
	c.self, c.hasSelf = attach{sw: s, port: r.SrcPort}, true
	c.hosts[r.Dst] = attach{sw: c.g.addSwitch(r.DstSwitch), port: r.DstPort}
	for _, l := range r.Links {
		a, b := c.g.addSwitch(l.A), c.g.addSwitch(l.B)
		up := l.Flags&wire.LinkUp != 0
		// A link this cache already knows to be down stays down until a
		// patch newer than the one that failed it says otherwise.
		if pe := c.g.peerOf(a, l.APort); pe.sw == b && pe.port == l.BPort && !pe.up && r.Version <= c.version {
			up = false
		}
		c.g.addLink(a, l.APort, b, l.BPort, up, l.Flags)
	}
	c.version = max(c.version, r.Version)
}

// SetLink records the state of the link on a switch port; it reports
// whether the cache knew the link and its state changed.
func (c *TopoCache) SetLink(sw uint64, port uint16, up bool) bool {
	i, ok := c.g.idx[sw]
	if !ok {
		return false
	}
	return c.g.setUp(i, port, up)
}

// Switches returns how many switches the cache holds.
func (c *TopoCache) Switches() int { return c.g.numSwitches() }

func (c *TopoCache) where(dst wire.MAC) (attach, error) {
	d, ok := c.hosts[dst]
	if !ok || !c.hasSelf {
		return attach{}, fmt.Errorf("dumbnet: topocache: %v: %w", dst, ErrUnknownHost)
	}
	return d, nil
}

// FindPath computes a shortest working path to dst in the cache and
// returns its tags (DumbNet Table 2, "Find Path").
func (c *TopoCache) FindPath(dst wire.MAC, buf []uint8) ([]uint8, error) {
	d, err := c.where(dst)
	if err != nil {
		return nil, err
	}
	g := c.g
	g.bfs(&c.sc, c.self.sw, nil)
	n := c.sc.dist[d.sw]
	if n < 0 {
		return nil, fmt.Errorf("dumbnet: topocache: %v: %w", dst, ErrNoPath)
	}
	tags := append(buf[:0], make([]uint8, n+1)...)
	tags[n] = uint8(d.port)
	for i, v := int(n)-1, d.sw; i >= 0; i-- {
		h := c.sc.prev[v]
		tags[i] = uint8(h.out)
		v = h.sw
	}
	return tags, nil
}

// KPaths computes up to k shortest working routes to dst.
func (c *TopoCache) KPaths(dst wire.MAC, k int) ([][]hop, attach, error) {
	d, err := c.where(dst)
	if err != nil {
		return nil, d, err
	}
	rs := c.g.kShortest(&c.sc, c.self.sw, d.sw, k)
	if len(rs) == 0 {
		return nil, d, fmt.Errorf("dumbnet: topocache: %v: %w", dst, ErrNoPath)
	}
	for _, r := range rs {
		r[len(r)-1].out = d.port
	}
	return rs, d, nil
}

// route returns the route of switches a backup-flagged walk takes from
// the source to dst: the backup path the controller marked.
func (c *TopoCache) backupRoute(dst wire.MAC) []hop {
	d, err := c.where(dst)
	if err != nil {
		return nil
	}
	ban := &bans{ports: map[uint32]bool{}}
	for i := range c.g.ports {
		for p, pe := range c.g.ports[i] {
			if pe.sw >= 0 && pe.flags&wire.LinkBackup == 0 {
				ban.ports[portKey(int32(i), uint16(p))] = true
			}
		}
	}
	r := c.g.shortest(&c.sc, c.self.sw, d.sw, nil, ban)
	if r != nil {
		r[len(r)-1].out = d.port
	}
	return r
}

// Verify is the path verifier (DumbNet §6.1): it walks tags from this
// host's switch through the cache and accepts them only if every hop is a
// working link the cache knows and the last tag delivers to dst. An
// application-made route must pass it before it enters the PathTable.
func (c *TopoCache) Verify(tags []uint8, dst wire.MAC) error {
	d, err := c.where(dst)
	if err != nil {
		return err
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
type routeRec struct{ links []linkKey }

func (r *routeRec) uses(k linkKey) bool {
	for _, l := range r.links {
		if l == k {
			return true
		}
	}
	return false
}

// PathTable is a host's second-level path cache (DumbNet §5.2): indexed by
// destination MAC, it holds the k shortest paths and the backup path.
type PathTable struct {
	m map[wire.MAC]*PathEntry
}

// NewPathTable returns an empty table.
func NewPathTable() *PathTable { return &PathTable{m: make(map[wire.MAC]*PathEntry)} }

// Lookup returns the entry for dst, or nil (DumbNet Table 2, "PathTable
// Lookup").
func (t *PathTable) Lookup(dst wire.MAC) *PathEntry { return t.m[dst] }

// Len returns the number of destinations.
func (t *PathTable) Len() int { return len(t.m) }

// Put stores an entry.
func (t *PathTable) Put(dst wire.MAC, e *PathEntry) { t.m[dst] = e }

// Delete removes dst.
func (t *PathTable) Delete(dst wire.MAC) { delete(t.m, dst) }

// fill computes dst's entry from the cache: k shortest paths and the
// controller's backup path.
func (c *TopoCache) fill(dst wire.MAC, k int) (*PathEntry, error) {
	rs, _, err := c.KPaths(dst, k)
	if err != nil {
		return nil, err
	}
	e := &PathEntry{Version: c.version}
	for _, r := range rs {
		e.Paths = append(e.Paths, routeTags(r))
		e.routes = append(e.routes, routeRec{links: c.g.routeLinks(r)})
	}
	if b := c.backupRoute(dst); b != nil {
		e.Backup = routeTags(b)
		e.backup = routeRec{links: c.g.routeLinks(b)}
	}
	return e, nil
}

// failover removes from e the paths that cross link k and reports whether
// a path is left; with none left it falls back on the backup path if the
// backup does not cross k (DumbNet §5.2: "caching backup paths allows the
// hosts to failover fast").
func (e *PathEntry) failover(k linkKey) (changed, ok bool) {
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
