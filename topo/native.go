package topo

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/edgefabric/edgefabric/element"
)

// The native format (docs/topology.md), YAML or JSON:
//
//	name: pair
//	defaults: {rate: 1G, delay: 1us}      # optional
//	nodes:
//	  - {name: s1, kind: switch, role: leaf, ports: 48,
//	     port_names: {1: Ethernet1, 48: Ethernet48}}     # optional
//	  - {name: h1, kind: host}
//	  - {name: b1, kind: host, relay: true}
//	links:
//	  - [s1:1, h1:1]                       # short form
//	  - {a: s1:2, b: b1, rate: 10G, delay: 2us}
//
// kind defaults to switch; ports reserves unconnected ports; an endpoint
// without ":port" takes the node's next free port.

// decodeNative reads the native format from YAML or JSON bytes.
func decodeNative(file string, data []byte) (*Graph, error) {
	r := newResolver(file, "")
	top, err := parseYAML(file, data)
	if err != nil {
		return nil, err
	}
	entries, err := r.mapping(top, "")
	if err != nil {
		return nil, err
	}
	rate, delay := DefaultRate, DefaultDelay
	var nodesN, linksN *yaml.Node
	for _, e := range entries {
		switch e.key {
		case "name":
			if r.b.g.Name, err = r.scalar(e.v, "name"); err != nil {
				return nil, err
			}
		case "defaults":
			if rate, delay, err = r.rateDelay(e.v, "defaults", rate, delay, nil); err != nil {
				return nil, err
			}
		case "nodes":
			nodesN = e.v
		case "links":
			linksN = e.v
		default:
			return nil, r.errf(e.k.Line, e.key, ErrSyntax, "unknown key (want name, defaults, nodes, links)")
		}
	}
	if nodesN == nil {
		return nil, r.errf(top.Line, "nodes", ErrSyntax, "missing")
	}
	nodes, err := r.sequence(nodesN, "nodes")
	if err != nil {
		return nil, err
	}
	if linksN != nil {
		if l := deref(linksN); l.Kind == yaml.SequenceNode {
			r.b.Grow(len(nodes), len(l.Content))
		}
	}
	declared := map[NodeID]int{}
	lines := map[NodeID]int{}
	fields := map[NodeID]string{}
	for i, n := range nodes {
		f := index("nodes", i)
		ents, err := r.mapping(n, f)
		if err != nil {
			return nil, err
		}
		var name, role string
		var portNames *yaml.Node
		kind, relay, ports, nameLine, relayLine := Switch, false, 0, n.Line, 0
		for _, e := range ents {
			ff := joinField(f, e.key)
			switch e.key {
			case "name":
				name, err = r.scalar(e.v, ff)
				nameLine = e.v.Line
			case "kind":
				var s string
				if s, err = r.scalar(e.v, ff); err == nil {
					switch s {
					case "switch":
						kind = Switch
					case "host":
						kind = Host
					default:
						err = r.errf(e.v.Line, ff, ErrBadValue, "%s (want switch or host)", quote(s))
					}
				}
			case "role":
				if role, err = r.scalar(e.v, ff); err == nil && !printable(role) {
					err = r.errf(e.v.Line, ff, ErrBadValue, "%s: control character or invalid UTF-8", quote(role))
				}
			case "relay":
				relay, err = r.boolean(e.v, ff)
				relayLine = e.v.Line
			case "ports":
				// Checked here, not only when the node is added, so that
				// the error names this field and line.
				var s string
				if s, err = r.scalar(e.v, ff); err == nil {
					if ports, err = parsePorts(s); err != nil {
						err = r.errAt(e.v.Line, ff, err)
					}
				}
			case "port_names":
				portNames = e.v
			default:
				err = r.errf(e.k.Line, ff, ErrSyntax, "unknown key (want name, kind, role, relay, ports, port_names)")
			}
			if err != nil {
				return nil, err
			}
		}
		if name == "" {
			return nil, r.errf(nameLine, joinField(f, "name"), ErrBadValue, "missing or empty")
		}
		if relay && kind == Switch {
			return nil, r.errAt(relayLine, joinField(f, "relay"), errSwitchRelay)
		}
		id, err := r.node(nameLine, joinField(f, "name"), name, kind, role, relay, ports)
		if err != nil {
			return nil, err
		}
		if ports > 0 {
			declared[id], lines[id], fields[id] = ports, n.Line, joinField(f, "ports")
		}
		if portNames != nil {
			if err := r.nativePortNames(portNames, joinField(f, "port_names"), id, ports); err != nil {
				return nil, err
			}
		}
	}
	if linksN != nil {
		links, err := r.sequence(linksN, "links")
		if err != nil {
			return nil, err
		}
		for i, l := range links {
			if err := r.nativeLink(l, index("links", i), rate, delay); err != nil {
				return nil, err
			}
		}
	}
	return r.graph(declared, lines, func(id NodeID) string { return fields[id] })
}

// nativePortNames reads a node's port_names, a mapping from port number
// to the port's name (an interface name such as Ethernet1/1), kept as
// Graph.PortName. A node that declares its ports (declared > 0) may name
// only those. A mapping that YAML aliases give many nodes is read once
// and its names kept once (r.portSets), shared by the nodes: read for
// each, 4,000 names on 4,000 nodes took 6.2 GB.
func (r *resolver) nativePortNames(n *yaml.Node, f string, id NodeID, declared int) error {
	n = deref(n)
	pn, seen := r.portSets[n]
	if !seen {
		var err error
		if pn, err = r.readPortNames(n, f, id, declared); err != nil {
			return err
		}
		// Keyed by the mapping's node: an alias of it, or of a node whose
		// merge key (<<) brings it, reaches the same one.
		if n != nil {
			if r.portSets == nil {
				r.portSets = map[*yaml.Node]portNamesRead{}
			}
			r.portSets[n] = pn
		}
	}
	if pn.set == nil {
		return nil // an empty mapping
	}
	if declared > 0 && int(pn.set.last()) > declared {
		// The first entry, in the mapping's order, as reading it for
		// this node would have found.
		for _, e := range pn.ents {
			if p, _ := strconv.Atoi(e.key); p > declared {
				return r.errf(e.k.Line, joinField(f, e.key), ErrBadPort, "port %d, but the node declares %d ports", p, declared)
			}
		}
	}
	r.b.namePortSet(id, pn.set)
	if err := r.b.Err(); err != nil {
		return r.errAt(line(n), f, err)
	}
	return nil
}

// portNamesRead is a port_names mapping read: its entries, in order,
// and its names as a set (nil when it has none).
type portNamesRead struct {
	ents []kv
	set  *portNameSet
}

// readPortNames reads a port_names mapping for node id. Everything it
// checks but the declared ports holds for any node, so that a mapping
// read once is good for every node aliases give it to.
func (r *resolver) readPortNames(n *yaml.Node, f string, id NodeID, declared int) (portNamesRead, error) {
	ents, err := r.mapping(n, f)
	if err != nil {
		return portNamesRead{}, err
	}
	node := r.b.Node(id).Name
	byName := map[string]int{}
	byPort := map[int]string{}
	for _, e := range ents {
		ff := joinField(f, e.key)
		p, err := strconv.Atoi(e.key)
		if err != nil || p < 1 || p > MaxPorts {
			return portNamesRead{}, r.errf(e.k.Line, ff, ErrBadPort, "port %s: want a port number 1..%d", quote(e.key), MaxPorts)
		}
		if declared > 0 && p > declared {
			return portNamesRead{}, r.errf(e.k.Line, ff, ErrBadPort, "port %d, but the node declares %d ports", p, declared)
		}
		name, err := r.scalar(e.v, ff)
		if err != nil {
			return portNamesRead{}, err
		}
		if q, dup := byName[name]; dup && q != p {
			return portNamesRead{}, r.errf(e.v.Line, ff, ErrBadValue, "%q names port %d too", name, q)
		}
		byName[name] = p
		if err := checkPortName(node, Port(p), name); err != nil {
			return portNamesRead{}, r.errAt(e.v.Line, ff, err)
		}
		if old, ok := byPort[p]; ok && old != name {
			return portNamesRead{}, r.errAt(e.v.Line, ff, errPortNamedTwice(node, Port(p), old, name))
		}
		byPort[p] = name
	}
	pn := portNamesRead{ents: ents}
	if len(byPort) > 0 {
		pn.set = &portNameSet{ports: make([]namedPort, 0, len(byPort))}
		for _, p := range slices.Sorted(maps.Keys(byPort)) {
			pn.set.ports = append(pn.set.ports, namedPort{Port(p), byPort[p]})
		}
	}
	return pn, nil
}

// nativeLink reads one link in the short form [a, b] or the long form
// {a: .., b: .., rate: .., delay: ..}.
func (r *resolver) nativeLink(n *yaml.Node, f string, rate int64, delay element.Time) error {
	var ends [2]*yaml.Node
	switch n.Kind {
	case yaml.SequenceNode:
		if len(n.Content) != 2 {
			return r.errf(n.Line, f, ErrSyntax, "a link joins 2 endpoints, got %d", len(n.Content))
		}
		ends = [2]*yaml.Node{deref(n.Content[0]), deref(n.Content[1])}
	case yaml.MappingNode:
		ents, err := r.mapping(n, f)
		if err != nil {
			return err
		}
		var rest []kv
		for _, e := range ents {
			switch e.key {
			case "a":
				ends[0] = e.v
			case "b":
				ends[1] = e.v
			default:
				rest = append(rest, e)
			}
		}
		if rate, delay, err = r.rateDelay(nil, f, rate, delay, rest); err != nil {
			return err
		}
		for i, e := range ends {
			if e == nil {
				return r.errf(n.Line, joinField(f, "ab"[i:i+1]), ErrSyntax, "missing endpoint")
			}
		}
	default:
		return r.errf(n.Line, f, ErrSyntax, "want [a, b] or {a: .., b: ..}, got %s", kindName(n))
	}
	var refs [2]endRef
	for i, e := range ends {
		ff := joinField(f, "ab"[i:i+1])
		s, err := r.scalar(e, ff)
		if err != nil {
			return err
		}
		if refs[i], err = parseEnd(s); err != nil {
			return r.errAt(e.Line, ff, err)
		}
	}
	return r.link(n.Line, joinField(f, "a"), refs[0], joinField(f, "b"), refs[1], rate, delay)
}

// rateDelay reads rate and delay keys, from a mapping node or from entries
// already split off one; any other key is an error.
func (r *resolver) rateDelay(n *yaml.Node, f string, rate int64, delay element.Time, ents []kv) (int64, element.Time, error) {
	if n != nil {
		var err error
		if ents, err = r.mapping(n, f); err != nil {
			return 0, 0, err
		}
	}
	for _, e := range ents {
		ff := joinField(f, e.key)
		s, err := r.scalar(e.v, ff)
		if err != nil {
			return 0, 0, err
		}
		switch e.key {
		case "rate":
			if rate, err = ParseRate(s); err != nil {
				return 0, 0, r.errAt(e.v.Line, ff, err)
			}
		case "delay":
			if delay, err = ParseDelay(s); err != nil {
				return 0, 0, r.errAt(e.v.Line, ff, err)
			}
		default:
			return 0, 0, r.errf(e.k.Line, ff, ErrSyntax, "unknown key (want rate, delay)")
		}
	}
	return rate, delay, nil
}

// commonRateDelay picks the most frequent link rate and delay, written
// once as defaults so that only the exceptions repeat them.
func commonRateDelay(g *Graph) (int64, element.Time) {
	rates := map[int64]int{}
	delays := map[element.Time]int{}
	for i := range g.links {
		rates[g.links[i].Rate]++
		delays[g.links[i].Delay]++
	}
	rate, delay := DefaultRate, DefaultDelay
	best := -1
	for r, n := range rates {
		if n > best || n == best && r < rate {
			rate, best = r, n
		}
	}
	best = -1
	for d, n := range delays {
		if n > best || n == best && d < delay {
			delay, best = d, n
		}
	}
	return rate, delay
}

// usedPorts returns the highest connected port of n, 0 if none.
func (g *Graph) usedPorts(n NodeID) int {
	ps := g.Ports(n)
	for i := len(ps) - 1; i >= 0; i-- {
		if ps[i] != NoLink {
			return i + 1
		}
	}
	return 0
}

var plainYAML = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_./:-]*$`)

// yamlString quotes s unless it is a plain scalar YAML reads back as the
// same string. A ':' at the end makes a plain scalar a mapping key
// ("name: t:" is no name), so such a string is quoted.
func yamlString(s string) string {
	if plainYAML.MatchString(s) && !yamlSpecial(s) && !strings.HasSuffix(s, ":") {
		return s
	}
	b, _ := json.Marshal(s) // a JSON string is a valid YAML double-quoted scalar
	return string(b)
}

// yamlSpecial reports plain scalars YAML would read as something else.
func yamlSpecial(s string) bool {
	switch s {
	case "true", "false", "yes", "no", "on", "off", "null", "y", "n", "True", "False", "Yes", "No", "On", "Off", "Null", "NULL", "TRUE", "FALSE", "YES", "NO", "ON", "OFF", "Y", "N", "~":
		return true
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func endString(g *Graph, e End) string {
	return g.nodes[e.Node].Name + ":" + strconv.Itoa(int(e.Port))
}

// WriteYAML writes g in the native format as YAML, one node or link a line.
func WriteYAML(w io.Writer, g *Graph) error {
	bw := bufio.NewWriter(w)
	rate, delay := commonRateDelay(g)
	fmt.Fprintf(bw, "# edgefabric topology, native format (docs/topology.md)\n")
	fmt.Fprintf(bw, "name: %s\n", yamlString(g.Name))
	fmt.Fprintf(bw, "defaults: {rate: %s, delay: %s}\n", FormatRate(rate), FormatDelay(delay))
	if len(g.nodes) == 0 {
		bw.WriteString("nodes: []\n")
	} else {
		bw.WriteString("nodes:\n")
	}
	shared := g.sharedPortNames()
	anchors := map[*string]string{}
	for i := range g.nodes {
		n := &g.nodes[i]
		fmt.Fprintf(bw, "  - {name: %s, kind: %s", yamlString(n.Name), n.Kind)
		if n.Role != "" {
			fmt.Fprintf(bw, ", role: %s", yamlString(n.Role))
		}
		if n.Relay {
			bw.WriteString(", relay: true")
		}
		if n.Ports > g.usedPorts(NodeID(i)) {
			fmt.Fprintf(bw, ", ports: %d", n.Ports)
		}
		t := g.portNames.of(NodeID(i))
		if a, ok := anchors[t]; ok {
			fmt.Fprintf(bw, ", port_names: *%s}\n", a)
			continue
		}
		if names := g.namedPorts(NodeID(i)); len(names) > 0 {
			bw.WriteString(", port_names: ")
			if shared[t] {
				// a table that one alias gave several nodes: written
				// once, and aliased on the others
				anchors[t] = "p" + strconv.Itoa(len(anchors)+1)
				fmt.Fprintf(bw, "&%s ", anchors[t])
			}
			bw.WriteString("{")
			for j, pn := range names {
				if j > 0 {
					bw.WriteString(", ")
				}
				fmt.Fprintf(bw, "%d: %s", pn.port, yamlString(pn.name))
			}
			bw.WriteString("}")
		}
		bw.WriteString("}\n")
	}
	if len(g.links) == 0 {
		bw.WriteString("links: []\n")
	} else {
		bw.WriteString("links:\n")
	}
	for i := range g.links {
		l := &g.links[i]
		a, b := yamlString(endString(g, l.A)), yamlString(endString(g, l.B))
		if l.Rate == rate && l.Delay == delay {
			fmt.Fprintf(bw, "  - [%s, %s]\n", a, b)
			continue
		}
		fmt.Fprintf(bw, "  - {a: %s, b: %s", a, b)
		if l.Rate != rate {
			fmt.Fprintf(bw, ", rate: %s", FormatRate(l.Rate))
		}
		if l.Delay != delay {
			fmt.Fprintf(bw, ", delay: %s", FormatDelay(l.Delay))
		}
		bw.WriteString("}\n")
	}
	return bw.Flush()
}

type jsonNode struct {
	Name      string            `json:"name"`
	Kind      string            `json:"kind"`
	Role      string            `json:"role,omitempty"`
	Relay     bool              `json:"relay,omitempty"`
	Ports     int               `json:"ports,omitempty"`
	PortNames map[string]string `json:"port_names,omitempty"`
}

// sharedPortNames returns the port-name tables that several nodes share,
// by their first element (portNames.of).
func (g *Graph) sharedPortNames() map[*string]bool {
	uses := map[*string]int{}
	for i := range g.portNames {
		if t := g.portNames.of(NodeID(i)); t != nil {
			uses[t]++
		}
	}
	shared := map[*string]bool{}
	for t, n := range uses {
		if n > 1 {
			shared[t] = true
		}
	}
	return shared
}

type namedPort struct {
	port Port
	name string
}

// namedPorts returns node n's named ports in port order.
func (g *Graph) namedPorts(n NodeID) []namedPort {
	if g.portNames == nil {
		return nil
	}
	var out []namedPort
	// An int, not a Port: a node may have 65,535 ports, where a uint16
	// counter wraps and never ends the loop.
	for p := 1; p <= g.nodes[n].Ports; p++ {
		if name := g.PortName(n, Port(p)); name != "" {
			out = append(out, namedPort{Port(p), name})
		}
	}
	return out
}

type jsonLink struct {
	A     string `json:"a"`
	B     string `json:"b"`
	Rate  string `json:"rate,omitempty"`
	Delay string `json:"delay,omitempty"`
}

type jsonTopo struct {
	Name     string            `json:"name"`
	Defaults map[string]string `json:"defaults"`
	Nodes    []jsonNode        `json:"nodes"`
	Links    []jsonLink        `json:"links"`
}

// WriteJSON writes g in the native format as JSON.
func WriteJSON(w io.Writer, g *Graph) error {
	rate, delay := commonRateDelay(g)
	t := jsonTopo{
		Name:     g.Name,
		Defaults: map[string]string{"rate": FormatRate(rate), "delay": FormatDelay(delay)},
		Nodes:    make([]jsonNode, len(g.nodes)),
		Links:    make([]jsonLink, len(g.links)),
	}
	for i := range g.nodes {
		n := &g.nodes[i]
		t.Nodes[i] = jsonNode{Name: n.Name, Kind: n.Kind.String(), Role: n.Role, Relay: n.Relay}
		if n.Ports > g.usedPorts(NodeID(i)) {
			t.Nodes[i].Ports = n.Ports
		}
		if names := g.namedPorts(NodeID(i)); len(names) > 0 {
			t.Nodes[i].PortNames = make(map[string]string, len(names))
			for _, pn := range names {
				t.Nodes[i].PortNames[strconv.Itoa(int(pn.port))] = pn.name
			}
		}
	}
	for i := range g.links {
		l := &g.links[i]
		t.Links[i] = jsonLink{A: endString(g, l.A), B: endString(g, l.B)}
		if l.Rate != rate {
			t.Links[i].Rate = FormatRate(l.Rate)
		}
		if l.Delay != delay {
			t.Links[i].Delay = FormatDelay(l.Delay)
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(t)
}
