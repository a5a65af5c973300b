package topo

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/edgefabric/edgefabric/element"
)

// Kind says what a node is. The zero value is invalid.
type Kind uint8

const (
	KindInvalid Kind = iota
	// Switch is a forwarding element of the fabric.
	Switch
	// Host is an end host. A host with Relay set also forwards traffic
	// (BCube servers do).
	Host
)

func (k Kind) String() string {
	switch k {
	case Switch:
		return "switch"
	case Host:
		return "host"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// NodeID indexes a node of a Graph: 0..NumNodes()-1.
type NodeID int32

// LinkID indexes a link of a Graph: 0..NumLinks()-1.
type LinkID int32

// NoLink marks an unconnected port.
const NoLink LinkID = -1

// Port numbers a node's ports 1..N; it is the element package's Port.
type Port = element.Port

// Defaults for links that do not say otherwise.
const (
	DefaultRate  int64        = 1_000_000_000 // 1 Gb/s, the seeds' testbeds
	DefaultDelay element.Time = element.Microsecond
)

// Node is a switch or a host.
type Node struct {
	// Name is stable and unique: "s1", "h1", or the topology's own names.
	Name string
	Kind Kind
	// Relay marks a host that forwards traffic between its NICs (BCube).
	Relay bool
	// Role is an optional label from the generator or file: "core", "agg",
	// "edge", "spine", "leaf", "tor", ...
	Role string
	// Ports is the node's port count; its ports are numbered 1..Ports.
	// Some may be unconnected.
	Ports int
}

// Forwards reports whether the node forwards traffic: switches and relaying
// hosts.
func (n *Node) Forwards() bool { return n.Kind == Switch || n.Relay }

// End is one end of a link: a node and one of its ports.
type End struct {
	Node NodeID
	Port Port
}

// Link joins two ports, full duplex.
type Link struct {
	A, B End
	// Rate in bits per second, each direction.
	Rate int64
	// Delay is the one-way propagation delay.
	Delay element.Time
}

// Other returns the end of l that is not on node n (the A end if both are).
func (l *Link) Other(n NodeID) End {
	if l.A.Node == n {
		return l.B
	}
	return l.A
}

// Graph is an immutable topology. Build one with a Builder or a generator.
//
// Adjacency is stored compactly (CSR): the ports of node n are the slice
// portLink[portOff[n]:portOff[n+1]], port p at index p-1, so a 100,000-node
// graph costs a few bytes per port and no per-node allocation.
type Graph struct {
	Name string

	nodes    []Node
	links    []Link
	byName   map[string]NodeID
	portOff  []int32
	portLink []LinkID
	// portNames holds the names the file gave ports (interface names):
	// portNames[n][p-1] is port p of node n's, "" for none; a node's
	// table ends at its last named port. Nodes that one YAML alias gives
	// the same port_names share one table. nil when the file gave none.
	portNames portNameTables

	hostIdxOnce sync.Once
	hostIdx     []int32  // per node: 1-based host index, 0 for switches
	hostByIdx   []NodeID // per host index k: the node, at k-1
}

// NumNodes returns the number of nodes.
func (g *Graph) NumNodes() int { return len(g.nodes) }

// NumLinks returns the number of links.
func (g *Graph) NumLinks() int { return len(g.links) }

// Node returns node n. The pointer is into the graph: do not modify it.
func (g *Graph) Node(n NodeID) *Node { return &g.nodes[n] }

// Link returns link l. The pointer is into the graph: do not modify it.
func (g *Graph) Link(l LinkID) *Link { return &g.links[l] }

// Lookup finds a node by name.
func (g *Graph) Lookup(name string) (NodeID, bool) {
	id, ok := g.byName[name]
	return id, ok
}

// Ports returns, for node n, the link on each port: element p-1 is port p's
// link or NoLink. The slice is into the graph: do not modify it.
func (g *Graph) Ports(n NodeID) []LinkID {
	return g.portLink[g.portOff[n]:g.portOff[n+1]]
}

// PortLink returns the link on port p of node n.
func (g *Graph) PortLink(n NodeID, p Port) (LinkID, bool) {
	ports := g.Ports(n)
	if p < 1 || int(p) > len(ports) || ports[p-1] == NoLink {
		return NoLink, false
	}
	return ports[p-1], true
}

// PortName returns the name the topology file gave port p of node n (an
// interface name such as "eth3" or "Ethernet1/3"), or "" when it gave
// none. Generated topologies number ports only.
func (g *Graph) PortName(n NodeID, p Port) string {
	if g.portNames == nil || p < 1 {
		return ""
	}
	if t := g.portNames[n]; int(p) <= len(t) {
		return t[p-1]
	}
	return ""
}

// HasPortNames reports whether any port has a name.
func (g *Graph) HasPortNames() bool { return g.portNames != nil }

// writablePortNames returns the names a writer can give node n's ports
// ports, in order, instead of numbers: every port named, none refused,
// and the loaders' numbering (numberPorts) giving each its own number
// back. Otherwise nil, and the writer writes numbers.
func (g *Graph) writablePortNames(n NodeID, ports []Port, refused func(string) bool) []string {
	if g.portNames == nil || len(ports) == 0 {
		return nil
	}
	names := make([]string, len(ports))
	for i, p := range ports {
		names[i] = g.PortName(n, p)
		if names[i] == "" || refused(names[i]) {
			return nil
		}
	}
	num, err := numberPorts(names)
	if err != nil || len(num) != len(ports) {
		return nil
	}
	for i, p := range ports {
		if num[names[i]] != int(p) {
			return nil
		}
	}
	return names
}

// Peer returns the far end of the link on port p of node n.
func (g *Graph) Peer(n NodeID, p Port) (End, bool) {
	l, ok := g.PortLink(n, p)
	if !ok {
		return End{}, false
	}
	lk := &g.links[l]
	if lk.A.Node == n && lk.A.Port == p {
		return lk.B, true
	}
	return lk.A, true
}

// Degree returns the number of connected ports of node n.
func (g *Graph) Degree(n NodeID) int {
	d := 0
	for _, l := range g.Ports(n) {
		if l != NoLink {
			d++
		}
	}
	return d
}

// Nodes returns the IDs of all nodes of the given kind, in ID order.
func (g *Graph) Nodes(k Kind) []NodeID {
	var ids []NodeID
	for i := range g.nodes {
		if g.nodes[i].Kind == k {
			ids = append(ids, NodeID(i))
		}
	}
	return ids
}

// IsFabricLink reports whether both ends of l forward traffic: switch to
// switch, and the links of relaying hosts (BCube). Other links are host
// links.
func (g *Graph) IsFabricLink(l LinkID) bool {
	lk := &g.links[l]
	return g.nodes[lk.A.Node].Forwards() && g.nodes[lk.B.Node].Forwards()
}

// Errors returned by Builder and the loaders, wrapped with context.
var (
	ErrDuplicateName = errors.New("duplicate node name")
	ErrUnknownNode   = errors.New("unknown node")
	ErrPortInUse     = errors.New("port already connected")
	ErrBadPort       = errors.New("bad port number")
	ErrSelfLoop      = errors.New("link joins a node to itself")
	ErrBadValue      = errors.New("bad value")
)

// MaxPorts bounds the ports of one node; port numbers are 16-bit.
const MaxPorts = 65535

// MaxTotalPorts bounds the ports of a whole graph, connected or not: both
// ends of MaxLinks links plus two spare ports per node. Port tables are
// allocated per declared port, here and in the engines, so a file that
// declares many unconnected ports must be refused like an oversized spec.
const MaxTotalPorts = 2*MaxLinks + 2*MaxNodes

// printable reports whether s can be a node name or role: valid UTF-8
// without control characters (or U+FFFE, U+FFFF), so that every writer
// (XML cannot hold most control characters) reproduces it exactly.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == 0xFFFE || r == 0xFFFF {
			return false
		}
	}
	return true
}

// Builder assembles a Graph. Methods record the first error and later calls
// become no-ops; Graph returns it.
type Builder struct {
	g     Graph
	ports [][]LinkID // per node, while building
	// slots is the sum of len(ports[n]): port tables grow up to the
	// highest port a link names, so it is bounded as they grow (a link on
	// port 65535 costs 256 KB; Graph's check would come too late).
	slots int
	names map[End]string // NamePort's, until Graph
	// namePortSet's, until Graph: a set may be many nodes'
	sets map[NodeID]*portNameSet
	// free holds, per node, a port below which none is free (nextPort);
	// scanned counts the ports nextPort looked at, for tests.
	free    []int32
	scanned int
	err     error
}

// portNameTables holds each node's port names: element p-1 of a node's
// table names port p.
type portNameTables [][]string

// of identifies node n's table by its first element, nil when it has none:
// nodes that share a table give the same pointer.
func (t portNameTables) of(n NodeID) *string {
	if t == nil || len(t[n]) == 0 {
		return nil
	}
	return &t[n][0]
}

// portNameSet is a node's port names as one place in a file gives them
// (a native port_names mapping), which YAML aliases can repeat on many
// nodes: the Builder and the Graph keep one set once, by reference. (Read
// again for every node, one alias of a mapping naming 4,000 ports on 4,000
// nodes, a 233 KB file, cost 6.2 GB.)
type portNameSet struct {
	ports []namedPort // in port order; distinct, valid ports and names
	table []string    // Graph's table of the set, built once
}

// last returns the highest port the set names.
func (s *portNameSet) last() Port { return s.ports[len(s.ports)-1].port }

// has reports whether s names port p; s may be nil.
func (s *portNameSet) has(p Port) bool {
	if s == nil {
		return false
	}
	_, ok := slices.BinarySearchFunc(s.ports, p, func(x namedPort, p Port) int { return cmp.Compare(x.port, p) })
	return ok
}

// NewBuilder starts an empty graph.
func NewBuilder(name string) *Builder {
	return &Builder{g: Graph{Name: name, byName: make(map[string]NodeID)}}
}

// Grow reserves room for n more nodes and l more links, so that builders
// of large graphs that know their size up front allocate once.
func (b *Builder) Grow(n, l int) {
	if n > 0 {
		b.g.nodes = slices.Grow(b.g.nodes, n)
		b.ports = slices.Grow(b.ports, n)
		if len(b.g.byName) == 0 {
			b.g.byName = make(map[string]NodeID, n)
		}
	}
	if l > 0 {
		b.g.links = slices.Grow(b.g.links, l)
	}
}

// Err returns the first error recorded so far.
func (b *Builder) Err() error { return b.err }

func (b *Builder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// AddNode adds a node with no ports yet. Names must be unique and non-empty.
func (b *Builder) AddNode(name string, kind Kind) NodeID {
	if b.err != nil {
		return -1
	}
	if name == "" {
		b.fail(fmt.Errorf("topo: node name: %w: empty", ErrBadValue))
		return -1
	}
	if !printable(name) {
		b.fail(fmt.Errorf("topo: node %q: name: %w: control character or invalid UTF-8", name, ErrBadValue))
		return -1
	}
	if kind != Switch && kind != Host {
		b.fail(fmt.Errorf("topo: node %q: %w: kind %v", name, ErrBadValue, kind))
		return -1
	}
	if _, dup := b.g.byName[name]; dup {
		b.fail(fmt.Errorf("topo: node %q: %w", name, ErrDuplicateName))
		return -1
	}
	id := NodeID(len(b.g.nodes))
	b.g.nodes = append(b.g.nodes, Node{Name: name, Kind: kind})
	b.g.byName[name] = id
	b.ports = append(b.ports, nil)
	return id
}

// Node gives access to a node under construction, to set Role, Relay or a
// port count larger than its links need.
func (b *Builder) Node(id NodeID) *Node {
	if id < 0 || int(id) >= len(b.g.nodes) {
		return &Node{} // only reachable after an error was recorded
	}
	return &b.g.nodes[id]
}

// Lookup finds a node added so far.
func (b *Builder) Lookup(name string) (NodeID, bool) {
	id, ok := b.g.byName[name]
	return id, ok
}

// NamePort records the name a file gives port e, an interface name, so
// that output meant for the device (plan --out, the writers) can use it.
// Names are printable, non-empty and unique per node; naming a port above
// the node's links declares it (the node gets at least that many ports).
func (b *Builder) NamePort(e End, name string) {
	if b.err != nil {
		return
	}
	if e.Node < 0 || int(e.Node) >= len(b.g.nodes) {
		b.fail(fmt.Errorf("topo: port name: %w: id %d", ErrUnknownNode, e.Node))
		return
	}
	node := &b.g.nodes[e.Node]
	if err := checkPortName(node.Name, e.Port, name); err != nil {
		b.fail(err)
		return
	}
	if b.names == nil {
		b.names = make(map[End]string)
	}
	if old, ok := b.names[e]; ok && old != name {
		b.fail(errPortNamedTwice(node.Name, e.Port, old, name))
		return
	}
	b.names[e] = name
	if int(e.Port) > node.Ports {
		node.Ports = int(e.Port)
	}
}

// checkPortName checks a name for port p of the named node.
func checkPortName(node string, p Port, name string) error {
	if p < 1 {
		return fmt.Errorf("topo: %s port name %q: %w: %d", node, name, ErrBadPort, p)
	}
	if name == "" || !printable(name) {
		return fmt.Errorf("topo: %s port %d: name: %w: empty, control character or invalid UTF-8", node, p, ErrBadValue)
	}
	return nil
}

func errPortNamedTwice(node string, p Port, old, name string) error {
	return fmt.Errorf("topo: %s port %d: %w: named %q and %q", node, p, ErrBadValue, old, name)
}

// namePortSet gives node id the names of s (not empty, checked by
// checkPortName, one name per port and one port per name), as NamePort
// would one by one; s may be given to many nodes, and is kept once.
func (b *Builder) namePortSet(id NodeID, s *portNameSet) {
	if b.err != nil {
		return
	}
	if id < 0 || int(id) >= len(b.g.nodes) {
		b.fail(fmt.Errorf("topo: port names: %w: id %d", ErrUnknownNode, id))
		return
	}
	node := &b.g.nodes[id]
	if b.sets[id] != nil {
		b.fail(fmt.Errorf("topo: %s: port names: %w: given twice", node.Name, ErrBadValue))
		return
	}
	if b.sets == nil {
		b.sets = make(map[NodeID]*portNameSet)
	}
	b.sets[id] = s
	if p := int(s.last()); p > node.Ports {
		node.Ports = p
	}
}

// Connect links the next free ports of a and c with the default rate and
// delay, and returns the link.
func (b *Builder) Connect(a, c NodeID) LinkID {
	return b.ConnectPorts(End{a, b.nextPort(a)}, End{c, b.nextPort(c)}, DefaultRate, DefaultDelay)
}

func (b *Builder) nextPort(n NodeID) Port {
	if n < 0 || int(n) >= len(b.ports) {
		return 0
	}
	// A named port is one the file declared for its own use: the next
	// free port is the first neither connected nor named. A port once
	// connected or named stays so, so the search starts where the last
	// one ended: from port 1 each time, k links on a node looked at k²/2
	// ports (65,535 on one node: 2×10⁹).
	if len(b.free) < len(b.ports) {
		b.free = append(b.free, make([]int32, len(b.ports)-len(b.free))...)
	}
	ps, set := b.ports[n], b.sets[n]
	for p := max(int(b.free[n]), 1); ; p++ {
		b.scanned++
		if p <= len(ps) && ps[p-1] != NoLink {
			continue
		}
		if _, named := b.names[End{n, Port(p)}]; !named && !set.has(Port(p)) {
			b.free[n] = int32(p)
			return Port(p) // 0 past port 65,535: the callers check
		}
	}
}

// ConnectPorts links two given ports, on two different nodes (a link from
// a node to itself is ErrSelfLoop). Rate and delay must be positive and
// non-negative.
func (b *Builder) ConnectPorts(a, c End, rate int64, delay element.Time) LinkID {
	if b.err != nil {
		return NoLink
	}
	for _, e := range []End{a, c} {
		if e.Node < 0 || int(e.Node) >= len(b.g.nodes) {
			b.fail(fmt.Errorf("topo: link: %w: id %d", ErrUnknownNode, e.Node))
			return NoLink
		}
		if e.Port < 1 {
			b.fail(fmt.Errorf("topo: link on %q: %w: %d", b.g.nodes[e.Node].Name, ErrBadPort, e.Port))
			return NoLink
		}
	}
	if a.Node == c.Node {
		// A cable from a node to itself, on one port or two, carries
		// nothing a fabric needs and breaks what counts links per
		// neighbour (degree, cuts, spanning trees): refused like a typo.
		b.fail(fmt.Errorf("topo: link %s:%d-%s:%d: %w", b.g.nodes[a.Node].Name, a.Port, b.g.nodes[c.Node].Name, c.Port, ErrSelfLoop))
		return NoLink
	}
	if rate <= 0 {
		b.fail(fmt.Errorf("topo: link %s-%s: rate: %w: %d", b.g.nodes[a.Node].Name, b.g.nodes[c.Node].Name, ErrBadValue, rate))
		return NoLink
	}
	if delay < 0 {
		b.fail(fmt.Errorf("topo: link %s-%s: delay: %w: %d", b.g.nodes[a.Node].Name, b.g.nodes[c.Node].Name, ErrBadValue, delay))
		return NoLink
	}
	id := LinkID(len(b.g.links))
	for _, e := range []End{a, c} {
		ps := b.ports[e.Node]
		if grow := int(e.Port) - len(ps); grow > 0 {
			if b.slots+grow > MaxTotalPorts {
				b.fail(fmt.Errorf("topo: %s port %d: %w: more than %d ports in all", b.g.nodes[e.Node].Name, e.Port, ErrTooLarge, MaxTotalPorts))
				return NoLink
			}
			b.slots += grow
			ps = slices.Grow(ps, grow)
			for range grow {
				ps = append(ps, NoLink)
			}
		}
		if ps[e.Port-1] != NoLink {
			b.fail(fmt.Errorf("topo: %s port %d: %w", b.g.nodes[e.Node].Name, e.Port, ErrPortInUse))
			return NoLink
		}
		ps[e.Port-1] = id
		b.ports[e.Node] = ps
	}
	b.g.links = append(b.g.links, Link{A: a, B: c, Rate: rate, Delay: delay})
	return id
}

// Graph finishes the build. The Builder must not be used afterwards.
func (b *Builder) Graph() (*Graph, error) {
	if b.err != nil {
		return nil, b.err
	}
	g := &b.g
	total := 0
	for i := range g.nodes {
		if !printable(g.nodes[i].Role) {
			return nil, fmt.Errorf("topo: node %q: role: %w: control character or invalid UTF-8 in %q", g.nodes[i].Name, ErrBadValue, g.nodes[i].Role)
		}
		if len(b.ports[i]) > g.nodes[i].Ports {
			g.nodes[i].Ports = len(b.ports[i])
		}
		if g.nodes[i].Ports > MaxPorts {
			return nil, fmt.Errorf("topo: node %q: %w: %d ports, at most %d", g.nodes[i].Name, ErrBadPort, g.nodes[i].Ports, MaxPorts)
		}
		total += g.nodes[i].Ports
		if total > MaxTotalPorts {
			// Checked as it grows: a file of 100 000 nodes declaring
			// 65 535 ports each would otherwise allocate 26 GB here
			// (and overflow the int32 port offsets).
			return nil, fmt.Errorf("topo: %w: more than %d ports in all (node %q brings the count to %d)", ErrTooLarge, MaxTotalPorts, g.nodes[i].Name, total)
		}
	}
	g.portOff = make([]int32, len(g.nodes)+1)
	g.portLink = make([]LinkID, total)
	off := 0
	for i := range g.nodes {
		g.portOff[i] = int32(off)
		n := copy(g.portLink[off:], b.ports[i])
		for j := off + n; j < off+g.nodes[i].Ports; j++ {
			g.portLink[j] = NoLink
		}
		off += g.nodes[i].Ports
	}
	g.portOff[len(g.nodes)] = int32(off)
	if len(b.names) > 0 || len(b.sets) > 0 {
		if err := b.portNameTables(); err != nil {
			return nil, err
		}
	}
	b.ports, b.names, b.sets, b.free = nil, nil, nil, nil
	return g, nil
}

// portNameTables builds g.portNames from NamePort's names and the sets of
// namePortSet, in node and port order so that a file with several
// clashes always names the same one. A node with a set and no names of
// its own shares the set's table.
func (b *Builder) portNameTables() error {
	g := &b.g
	ends := slices.SortedFunc(maps.Keys(b.names), func(x, y End) int {
		return cmp.Or(cmp.Compare(x.Node, y.Node), cmp.Compare(x.Port, y.Port))
	})
	g.portNames = make(portNameTables, len(g.nodes))
	byName := map[string]Port{} // the current table's names
	// table fills t from s and own, and checks that no name is on two ports.
	table := func(n NodeID, t []string, s *portNameSet, own []End) error {
		if s != nil {
			for _, pn := range s.ports {
				t[pn.port-1] = pn.name
			}
		}
		for _, e := range own {
			name := b.names[e]
			if old := t[e.Port-1]; old != "" && old != name {
				return errPortNamedTwice(g.nodes[n].Name, e.Port, old, name)
			}
			t[e.Port-1] = name
		}
		clear(byName)
		for i, name := range t {
			if name == "" {
				continue
			}
			if p, dup := byName[name]; dup {
				return fmt.Errorf("topo: %s ports %d and %d: %w: both named %q", g.nodes[n].Name, p, i+1, ErrBadValue, name)
			}
			byName[name] = Port(i + 1)
		}
		return nil
	}
	for i := range g.nodes {
		n := NodeID(i)
		j := 0
		for j < len(ends) && ends[j].Node == n {
			j++
		}
		own := ends[:j]
		ends = ends[j:]
		s := b.sets[n]
		if len(own) == 0 && s == nil {
			continue
		}
		if len(own) == 0 && s.table != nil {
			g.portNames[n] = s.table
			continue
		}
		last := Port(0)
		if len(own) > 0 {
			last = own[len(own)-1].Port
		}
		if s != nil {
			last = max(last, s.last())
		}
		t := make([]string, last)
		if err := table(n, t, s, own); err != nil {
			return err
		}
		if len(own) == 0 {
			s.table = t // the next node with the set shares it
		}
		g.portNames[n] = t
	}
	return nil
}
