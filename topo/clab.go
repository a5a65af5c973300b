package topo

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Containerlab topology files (https://containerlab.dev):
//
//	name: lab
//	topology:
//	  nodes:
//	    s1: {kind: linux, labels: {role: leaf}}
//	    h1: {kind: linux}
//	  links:
//	    - endpoints: ["s1:eth1", "h1:eth1"]
//
// Mapping to the model (docs/topology.md has it in full):
//   - environment references are expanded first, as containerlab does
//     (clabExpandEnv); a Go template is refused.
//   - a node's kind is its own, else its group's, else the defaults';
//     its labels merge defaults < kind < group < node.
//   - port = the last number in the interface name: eth3, e1-3 and
//     Ethernet3 are port 3, unless two interfaces of the node share one or
//     one has none: then clabPorts numbers them in natural order; eth0
//     (containerlab's management interface) is rejected.
//   - a node is a host if its labels say edgefabric.kind: host or
//     role: host; a switch if they say edgefabric.kind: switch or
//     role: switch; otherwise a host if its kind is linux and it has exactly
//     one link, else a switch (bridge, ovs-bridge, srl, ceos, ...).
//   - labels role (other values) or edgefabric.role set Role;
//     edgefabric.relay: "true" sets Relay (hosts only: refused on a
//     switch); edgefabric.ports reserves ports.
//   - the topology's name is name, unless topology.defaults.labels has
//     edgefabric.name (written by WriteClab when name cannot hold it).
//   - a node's name is its key, unless its own labels have
//     edgefabric.node-name (written by WriteClab when the key cannot hold
//     it); links name nodes by their keys.
//   - link vars rate and delay set the link's rate and delay.
//   - links of containerlab's special endpoints (host, mgmt-net, macvlan,
//     and link types other than veth and veth-stitch) connect to the
//     machine outside the lab, not to the fabric, and are left out.

const labelPrefix = "edgefabric."

var clabSpecial = map[string]bool{"host": true, "mgmt-net": true, "macvlan": true}

type clabNode struct {
	name   string // the key: what links call the node
	model  string // the node's name in the model: name, or its edgefabric.node-name label
	line   int
	kind   string
	labels map[string]string
	v      *yaml.Node // the node's value, to find a label's line on error
	links  int
	ifaces []clabEnd      // the node's ends of the links, in link order
	ports  map[string]int // interface name -> port (clabPorts)
	// namedByLabel: the label edgefabric.port-names names the node's
	// ports, not its interfaces (WriteClab, for names Linux refuses).
	namedByLabel bool
}

// labelLine finds the line of one of the node's own labels (the node's
// line when the label came from its kind).
func (n *clabNode) labelLine(key string) int {
	v := deref(n.v)
	if v == nil || v.Kind != yaml.MappingNode {
		return n.line
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		if v.Content[i].Value == "labels" {
			if l := deref(v.Content[i+1]); l != nil && l.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(l.Content); j += 2 {
					if l.Content[j].Value == key {
						return l.Content[j+1].Line
					}
				}
			}
		}
	}
	return n.line
}

type clabEnd struct {
	node, iface string
	line        int
	field       string
}

type clabLink struct {
	ends  [2]clabEnd
	line  int
	field string
	vars  []kv
}

// decodeClab reads a containerlab topology file.
func decodeClab(file string, data []byte) (*Graph, error) {
	r := newResolver(file, "")
	data = clabExpandEnv(data)
	if i := bytes.Index(data, []byte("{{")); i >= 0 {
		return nil, r.errf(1+bytes.Count(data[:i], []byte("\n")), "template", ErrSyntax,
			"the file is a Go template ({{ ... }}), which containerlab renders with its variables before reading it; edgefabric does not render templates: load the rendered topology")
	}
	top, err := parseYAML(file, data)
	if err != nil {
		return nil, err
	}
	ents, err := r.mapping(top, "")
	if err != nil {
		return nil, err
	}
	var topoN *yaml.Node
	var labName string
	for _, e := range ents {
		switch e.key {
		case "name":
			if labName, err = r.scalar(e.v, "name"); err != nil {
				return nil, err
			}
		case "topology":
			topoN = e.v
		}
	}
	if topoN == nil {
		return nil, r.errf(top.Line, "topology", ErrSyntax, "missing")
	}
	tents, err := r.mapping(topoN, "topology")
	if err != nil {
		return nil, err
	}
	// Containerlab resolves a node's kind as node, then group, then
	// defaults, and its labels as defaults < kind < group < node.
	var defLabels map[string]string
	defKind := ""
	nameSet := false
	kindLabels := map[string]map[string]string{}
	groups := map[string]clabGroup{}
	var nodesN, linksN *yaml.Node
	for _, e := range tents {
		switch e.key {
		case "nodes":
			nodesN = e.v
		case "links":
			linksN = e.v
		case "defaults":
			d, err := r.clabDef(e.v, "topology.defaults")
			if err != nil {
				return nil, err
			}
			if err := r.noSharedNodeName(e.v, "topology.defaults", d.labels); err != nil {
				return nil, err
			}
			defKind, defLabels = d.kind, d.labels
			// The topology's own name, when containerlab's name could
			// not carry it (WriteClab): it wins over name.
			if n, ok := d.labels[labelPrefix+"name"]; ok {
				r.b.g.Name = n
				nameSet = true
			}
		case "kinds", "groups":
			defs, err := r.mapping(e.v, "topology."+e.key)
			if err != nil {
				return nil, err
			}
			for _, k := range defs {
				f := "topology." + e.key + "." + k.key
				d, err := r.clabDef(k.v, f)
				if err != nil {
					return nil, err
				}
				if err := r.noSharedNodeName(k.v, f, d.labels); err != nil {
					return nil, err
				}
				if e.key == "kinds" {
					kindLabels[k.key] = d.labels
				} else {
					groups[k.key] = clabGroup{d.kind, d.labels}
				}
			}
		}
	}
	if !nameSet {
		r.b.g.Name = labName
	}
	if nodesN == nil {
		return nil, r.errf(topoN.Line, "topology.nodes", ErrSyntax, "missing")
	}
	nents, err := r.mapping(nodesN, "topology.nodes")
	if err != nil {
		return nil, err
	}
	nodes := make([]*clabNode, 0, len(nents))
	byName := make(map[string]*clabNode, len(nents))
	for _, e := range nents {
		f := "topology.nodes." + e.key
		n := &clabNode{name: e.key, model: e.key, line: e.k.Line, v: e.v}
		var own clabDef
		if deref(e.v).Tag != "!!null" {
			if own, err = r.clabDef(e.v, f); err != nil {
				return nil, err
			}
		}
		// A group that topology.groups does not define is only a name
		// (containerlab's graph draws nodes by group): it adds nothing.
		g := groups[own.group]
		n.kind = firstNonEmpty(own.kind, g.kind, defKind)
		n.labels = mergeLabels(defLabels, kindLabels[n.kind], g.labels, own.labels)
		if m, ok := own.labels[labelPrefix+"node-name"]; ok {
			n.model = m
		}
		nodes = append(nodes, n)
		byName[n.name] = n
	}
	var links []clabLink
	if linksN != nil {
		seq, err := r.sequence(linksN, "topology.links")
		if err != nil {
			return nil, err
		}
		for i, l := range seq {
			cl, skip, err := r.clabLink(l, index("topology.links", i), byName)
			if err != nil {
				return nil, err
			}
			if skip {
				continue
			}
			for _, e := range cl.ends {
				if n := byName[e.node]; n != nil {
					n.links++
					n.ifaces = append(n.ifaces, e)
				}
			}
			links = append(links, cl)
		}
	}
	r.b.Grow(len(nodes), len(links))
	declared := map[NodeID]int{}
	lines := map[NodeID]int{}
	fields := map[NodeID]string{}
	for _, n := range nodes {
		f := "topology.nodes." + n.name
		// edgefabric.kind decides, then role: host|switch, then the
		// containerlab kind and the link count.
		kind := Switch
		efKind, hasEFKind := n.labels[labelPrefix+"kind"]
		switch {
		case hasEFKind && efKind == "host":
			kind = Host
		case hasEFKind && efKind == "switch":
		case hasEFKind:
			return nil, r.errf(n.labelLine(labelPrefix+"kind"), f+".labels."+labelPrefix+"kind", ErrBadValue, "%s (want switch or host)", quote(efKind))
		case n.labels["role"] == "host":
			kind = Host
		case n.labels["role"] == "switch":
		case n.kind == "linux" && n.links == 1:
			kind = Host
		}
		role := n.labels[labelPrefix+"role"]
		if role == "" && n.labels["role"] != "host" && n.labels["role"] != "switch" {
			role = n.labels["role"]
		}
		relay := false
		if s, ok := n.labels[labelPrefix+"relay"]; ok {
			v, err := strconv.ParseBool(s)
			if err != nil {
				return nil, r.errf(n.labelLine(labelPrefix+"relay"), f+".labels."+labelPrefix+"relay", ErrBadValue, "%s is not true or false", quote(s))
			}
			if v && kind == Switch {
				return nil, r.errAt(n.labelLine(labelPrefix+"relay"), f+".labels."+labelPrefix+"relay", errSwitchRelay)
			}
			relay = v
		}
		ports := 0
		if s, ok := n.labels[labelPrefix+"ports"]; ok {
			v, err := parsePorts(s)
			if err != nil {
				return nil, r.errAt(n.labelLine(labelPrefix+"ports"), f+".labels."+labelPrefix+"ports", err)
			}
			ports = v
		}
		line, field := n.line, f
		if _, ok := n.labels[labelPrefix+"node-name"]; ok {
			line, field = n.labelLine(labelPrefix+"node-name"), f+".labels."+labelPrefix+"node-name"
		}
		id, err := r.node(line, field, n.model, kind, role, relay, ports)
		if err != nil {
			return nil, err
		}
		if ports > 0 {
			declared[id], lines[id], fields[id] = ports, n.line, f+".labels."+labelPrefix+"ports"
		}
		if n.ports, err = r.clabPorts(n); err != nil {
			return nil, err
		}
		if s, ok := n.labels[labelPrefix+"port-names"]; ok {
			key := f + ".labels." + labelPrefix + "port-names"
			names, err := parseClabPortNames(s, n.model)
			if err != nil {
				return nil, r.errAt(n.labelLine(labelPrefix+"port-names"), key, err)
			}
			for _, pn := range names {
				r.b.NamePort(End{Node: id, Port: pn.port}, pn.name)
			}
			n.namedByLabel = true
		}
	}
	for _, l := range links {
		var refs [2]endRef
		for i, e := range l.ends {
			n := byName[e.node]
			if n == nil {
				// Links name nodes by their keys: a key the file does not
				// define is unknown, even if it is another node's model
				// name (its edgefabric.node-name label).
				return nil, r.errf(l.line, e.field, ErrUnknownNode, "%q", e.node)
			}
			refs[i] = endRef{node: n.model, port: n.ports[e.iface], name: e.iface}
			if n.namedByLabel {
				refs[i].name = "" // the label names the ports
			}
		}
		rate, delay, err := r.rateDelay(nil, l.field+".vars", DefaultRate, DefaultDelay, l.vars)
		if err != nil {
			return nil, err
		}
		if err := r.link(l.line, l.field+".endpoints[0]", refs[0], l.field+".endpoints[1]", refs[1], rate, delay); err != nil {
			return nil, err
		}
	}
	return r.graph(declared, lines, func(id NodeID) string { return fields[id] })
}

// clabDef is what the loader reads of a node, group, kind or defaults
// entry; other keys (image, binds, exec, ...) belong to containerlab.
type clabDef struct {
	kind, group string
	labels      map[string]string
}

// clabGroup is a group's contribution to its nodes.
type clabGroup struct {
	kind   string
	labels map[string]string
}

func (r *resolver) clabDef(n *yaml.Node, f string) (clabDef, error) {
	var d clabDef
	ents, err := r.mapping(n, f)
	if err != nil {
		return d, err
	}
	for _, e := range ents {
		switch e.key {
		case "kind":
			if d.kind, err = r.scalar(e.v, f+".kind"); err != nil {
				return d, err
			}
		case "group":
			if d.group, err = r.scalar(e.v, f+".group"); err != nil {
				return d, err
			}
		case "labels":
			// Only the labels the loader reads are kept, once per
			// mapping (which aliases may repeat): merged into every node,
			// d labels on n nodes cost d×n (4000 of each, a 110 KB file,
			// took 2.5 GB).
			lv := deref(e.v)
			if l, ok := r.clabLabels[lv]; ok {
				d.labels = l
				break
			}
			lents, err := r.mapping(lv, f+".labels")
			if err != nil {
				return d, err
			}
			d.labels = map[string]string{}
			for _, le := range lents {
				v, err := r.scalar(le.v, f+".labels."+le.key)
				if err != nil {
					return d, err
				}
				if slices.Contains(clabLabelsRead, le.key) {
					d.labels[le.key] = v
				}
			}
			if r.clabLabels == nil {
				r.clabLabels = map[*yaml.Node]map[string]string{}
			}
			r.clabLabels[lv] = d.labels
		}
	}
	return d, nil
}

// clabLabelsRead are the labels decodeClab reads.
var clabLabelsRead = []string{labelPrefix + "kind", "role", labelPrefix + "role", labelPrefix + "relay", labelPrefix + "ports", labelPrefix + "node-name", labelPrefix + "name", labelPrefix + "port-names"}

// mergeLabels merges label levels, later levels winning. A role label on
// a level overrides an edgefabric.role inherited from the levels before
// it (a node's own role: host beats its kind's edgefabric.role).
func mergeLabels(levels ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, l := range levels {
		if _, ok := l["role"]; ok {
			delete(out, labelPrefix+"role")
		}
		for k, v := range l {
			out[k] = v
		}
	}
	return out
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// noSharedNodeName refuses edgefabric.node-name and edgefabric.port-names
// in the labels of a kind, a group or the defaults: they name one node or
// its ports, and every node of the kind would get the same names.
func (r *resolver) noSharedNodeName(n *yaml.Node, f string, labels map[string]string) error {
	for _, c := range [...]struct{ key, what string }{{labelPrefix + "node-name", "one node"}, {labelPrefix + "port-names", "one node's ports"}} {
		if _, ok := labels[c.key]; !ok {
			continue
		}
		line := (&clabNode{v: n, line: n.Line}).labelLine(c.key)
		return r.errf(line, f+".labels."+c.key, ErrBadValue, "names %s: put it in that node's own labels", c.what)
	}
	return nil
}

// clabLink reads a link in the short form {endpoints: ["a:eth1", "b:eth1"]}
// or the long form {type: veth, endpoints: [{node: a, interface: eth1}, ..]}.
// skip reports links to containerlab's special endpoints.
func (r *resolver) clabLink(n *yaml.Node, f string, byName map[string]*clabNode) (l clabLink, skip bool, err error) {
	ents, err := r.mapping(n, f)
	if err != nil {
		return l, false, err
	}
	l.line, l.field = n.Line, f
	var epN *yaml.Node
	for _, e := range ents {
		switch e.key {
		case "endpoints":
			epN = e.v
		case "type":
			t, err := r.scalar(e.v, f+".type")
			if err != nil {
				return l, false, err
			}
			// veth and veth-stitch (a veth pair on each side, stitched
			// by tc) join two nodes of the lab; the other types (host,
			// mgmt-net, macvlan, vxlan, vxlan-stitch, dummy) reach the
			// machine or beyond.
			if t != "veth" && t != "veth-stitch" {
				return l, true, nil
			}
		case "vars":
			// once per mapping, which aliases may repeat (as labels)
			vv := deref(e.v)
			if vars, ok := r.clabVars[vv]; ok {
				l.vars = vars
				break
			}
			if l.vars, err = r.mapping(vv, f+".vars"); err != nil {
				return l, false, err
			}
			l.vars = keepKeys(l.vars, "rate", "delay")
			if r.clabVars == nil {
				r.clabVars = map[*yaml.Node][]kv{}
			}
			r.clabVars[vv] = l.vars
		}
	}
	if epN == nil {
		return l, false, r.errf(n.Line, f+".endpoints", ErrSyntax, "missing")
	}
	eps, err := r.sequence(epN, f+".endpoints")
	if err != nil {
		return l, false, err
	}
	if len(eps) != 2 {
		return l, false, r.errf(line(deref(epN)), f+".endpoints", ErrSyntax, "a veth link joins 2 endpoints, got %d", len(eps))
	}
	for i, ep := range eps {
		ff := index(f+".endpoints", i)
		var ce clabEnd
		ce.line, ce.field = ep.Line, ff
		if ep.Kind == yaml.MappingNode {
			eents, err := r.mapping(ep, ff)
			if err != nil {
				return l, false, err
			}
			for _, e := range eents {
				switch e.key {
				case "node":
					ce.node, err = r.scalar(e.v, ff+".node")
				case "interface":
					ce.iface, err = r.scalar(e.v, ff+".interface")
				}
				if err != nil {
					return l, false, err
				}
			}
		} else {
			s, err := r.scalar(ep, ff)
			if err != nil {
				return l, false, err
			}
			// containerlab splits at the first colon: a node name has
			// none, an interface name may (macvlan:${IF}, br|ns:e1).
			i := strings.IndexByte(s, ':')
			if i < 0 {
				return l, false, r.errf(ep.Line, ff, ErrSyntax, "endpoint %s: want node:interface", quote(s))
			}
			ce.node, ce.iface = s[:i], s[i+1:]
		}
		if ce.node == "" || ce.iface == "" {
			return l, false, r.errf(ep.Line, ff, ErrSyntax, "endpoint needs a node and an interface")
		}
		if clabSpecial[ce.node] && byName[ce.node] == nil {
			return l, true, nil
		}
		l.ends[i] = ce
	}
	return l, false, nil
}

func keepKeys(ents []kv, keys ...string) []kv {
	var out []kv
	for _, e := range ents {
		for _, k := range keys {
			if e.key == k {
				out = append(out, e)
			}
		}
	}
	return out
}

var lastNumber = regexp.MustCompile(`(\d+)\D*$`)

// ifacePort maps an interface name to a port: its last number.
func ifacePort(iface string) (int, error) {
	m := lastNumber.FindStringSubmatch(iface)
	if m == nil {
		return 0, fmt.Errorf("%w: interface %s has no port number", ErrBadPort, quote(iface))
	}
	p, err := strconv.Atoi(m[1])
	if err != nil || p < 1 || p > MaxPorts {
		return 0, fmt.Errorf("%w: interface %s: port must be 1..%d", ErrBadPort, quote(iface), MaxPorts)
	}
	return p, nil
}

// clabPorts numbers a node's interfaces (numberPorts); eth0,
// containerlab's management interface, is refused.
func (r *resolver) clabPorts(n *clabNode) (map[string]int, error) {
	var names []string
	seen := map[string]bool{}
	for _, e := range n.ifaces {
		if seen[e.iface] {
			continue // the same interface twice: the builder says the port is taken
		}
		if e.iface == "eth0" {
			return nil, r.errf(e.line, e.field, ErrBadPort, "interface \"eth0\" is containerlab's management interface, not a data port")
		}
		seen[e.iface] = true
		names = append(names, e.iface)
	}
	ports, err := numberPorts(names)
	if err != nil {
		return nil, r.errAt(n.line, "topology.nodes."+n.name, err)
	}
	return ports, nil
}

// numberPorts numbers one node's distinct port or interface names. Each
// name's last number is its port (eth3, e1-3, ethernet-1/3 and Ethernet3
// are port 3) when that gives every name a port of its own in
// 1..MaxPorts. Names that do not (SR OS 1/1/c1/1 and 1/1/c2/1, IOS
// Ethernet0/1 and Ethernet1/1, XRd Gi0-0-0-0, GraphML's North and South,
// a bridge's host-side names) are numbered 1, 2, ... in natural order
// (numbers compared as numbers), for that node.
func numberPorts(names []string) (map[string]int, error) {
	ports := make(map[string]int, len(names))
	used := make(map[int]bool, len(names))
	byLast := true
	for _, name := range names {
		p, err := ifacePort(name)
		if err != nil || used[p] {
			byLast = false
			break
		}
		used[p] = true
		ports[name] = p
	}
	if byLast {
		return ports, nil
	}
	if len(names) > MaxPorts {
		return nil, fmt.Errorf("%w: %d ports, more than %d", ErrBadPort, len(names), MaxPorts)
	}
	sorted := slices.Clone(names)
	slices.SortFunc(sorted, naturalCompare)
	for i, name := range sorted {
		ports[name] = i + 1
	}
	return ports, nil
}

// naturalCompare orders strings with their digit runs compared as numbers:
// e1-2 < e1-10, 1/1/c2/1 < 1/1/c10/1; equal strings by value after that
// (e01 and e1), so the order is total.
func naturalCompare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			na, nb := strings.TrimLeft(a[si:i], "0"), strings.TrimLeft(b[sj:j], "0")
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			continue
		}
		if ca != cb {
			return cmp.Compare(int(ca), int(cb))
		}
		i++
		j++
	}
	if c := cmp.Compare(len(a)-i, len(b)-j); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// clabEnvRE matches the environment references containerlab expands in a
// topology file before reading it: $NAME, ${NAME} and ${NAME<op>default}
// with op one of :-, :=, - and =.
var clabEnvRE = regexp.MustCompile(`\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=])([^}]*))?\})`)

// clabExpandEnv expands environment references as containerlab does: a
// variable that is set gives its value; one that is not set gives the
// default when there is one (with ':', also when it is set but empty) and
// stays as written when there is none.
func clabExpandEnv(data []byte) []byte {
	if !bytes.ContainsRune(data, '$') {
		return data
	}
	return clabEnvRE.ReplaceAllFunc(data, func(m []byte) []byte {
		sub := clabEnvRE.FindSubmatch(m)
		name := string(sub[1])
		if name == "" {
			name = string(sub[2])
		}
		v, set := os.LookupEnv(name)
		switch op := string(sub[3]); {
		case op == "":
			if set {
				return []byte(v)
			}
			return m
		case set && (v != "" || op[0] != ':'):
			return []byte(v)
		default:
			return sub[4]
		}
	})
}

// clabString writes s as a YAML scalar that reaches the YAML reader
// unchanged: containerlab (and the loader) expand $VAR and refuse {{ in
// the file's text first, so a '$' or '{' is written as an escape of a
// double-quoted scalar (\x24, \x7b), which YAML turns back into itself.
func clabString(s string) string {
	if !strings.ContainsAny(s, "${") {
		return yamlString(s)
	}
	return clabQuote(s)
}

// clabQuote is clabString always double-quoted.
func clabQuote(s string) string {
	b, _ := json.Marshal(s) // a JSON string is a valid YAML double-quoted scalar
	return strings.NewReplacer("$", `\x24`, "{", `\x7b`).Replace(string(b))
}

var clabNameRE = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// clabNodeRE matches what a containerlab node name may not hold: the node's
// container is clab-<lab>-<node>, and containerlab (like Docker) accepts
// only letters, digits, '.', '_' and '-' there.
var clabNodeRE = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// clabNodeNames gives every node of g its containerlab name: its own name
// when containerlab takes it, else that name with '-' for each run of
// other characters ("New York" -> New-York), and a suffix -2, -3, ... when
// that is another node's name or one of containerlab's special endpoints
// (a node called host would be read as the machine outside the lab).
func clabNodeNames(g *Graph) []string {
	names, _ := clabNodeNamesProbes(g)
	return names
}

// clabNodeNamesProbes is clabNodeNames, also counting the candidate names
// it looked up, for tests. Each base resumes its suffixes where its last
// node's stopped: every name below that was taken then and is still
// taken, so the names are those a search from -2 finds, without the
// search (10,000 nodes whose names differ in one CJK character, all the
// base "a", took 13 s and 36,000 four minutes).
func clabNodeNamesProbes(g *Graph) (names []string, probes int) {
	names = make([]string, len(g.nodes))
	taken := make(map[string]bool, len(g.nodes)+len(clabSpecial))
	for s := range clabSpecial {
		taken[s] = true
	}
	for i := range g.nodes {
		if n := g.nodes[i].Name; !clabNodeRE.MatchString(n) && !taken[n] {
			names[i] = n
			taken[n] = true
		}
	}
	next := map[string]int{} // per base, the first k not yet tried
	for i := range g.nodes {
		if names[i] != "" {
			continue
		}
		base := strings.Trim(clabNodeRE.ReplaceAllString(g.nodes[i].Name, "-"), "-")
		if base == "" {
			base = "node"
		}
		// k = 1 is the base itself, k ≥ 2 the base with -k
		k := max(next[base], 1)
		name := base
		if k > 1 {
			name = base + "-" + strconv.Itoa(k)
		}
		for probes++; taken[name]; probes++ {
			k++
			name = base + "-" + strconv.Itoa(k)
		}
		next[base] = k + 1
		names[i] = name
		taken[name] = true
	}
	return names, probes
}

// WriteClab writes g as a containerlab topology: every node a linux
// container (the image is a placeholder to replace: edgefabric's own
// engine runs switches itself), port p as interface ethp, the model's
// attributes as labels and link vars so that a round trip keeps them.
// A lab name is letters, digits, '-' and '_' (it names containers and
// directories), so a graph name with other characters ("ring:3") is
// written there with '-' for them ("ring-3"), and as itself in the label
// edgefabric.name of topology.defaults, which the loader reads back. A
// node whose name containerlab would refuse (clabNodeNames) gets another
// key, and its own name in the label edgefabric.node-name.
func WriteClab(w io.Writer, g *Graph) error {
	keys := clabNodeNames(g)
	bw := bufio.NewWriter(w)
	name := strings.Trim(clabNameRE.ReplaceAllString(g.Name, "-"), "-")
	if name == "" {
		name = "edgefabric"
	}
	fmt.Fprintf(bw, "# containerlab topology written by edgefabric from %s\n", clabString(g.Name))
	fmt.Fprintf(bw, "name: %s\n", yamlString(name))
	bw.WriteString("topology:\n")
	if name != g.Name {
		fmt.Fprintf(bw, "  defaults:\n    labels: {%sname: %s}\n", labelPrefix, clabQuote(g.Name))
	}
	// Interfaces keep the file's names where the loader numbers them back
	// to the same ports (and none is eth0, the management interface).
	named := make([][]string, len(g.nodes))
	for i := range g.nodes {
		if !g.HasPortNames() {
			break
		}
		var conn []Port
		for p, l := range g.Ports(NodeID(i)) {
			if l != NoLink {
				conn = append(conn, Port(p+1))
			}
		}
		named[i] = g.writablePortNames(NodeID(i), conn, func(s string) bool { return s == "eth0" || !linuxIfName(s) })
		// A name on an uncabled port has no interface to carry it: the
		// label edgefabric.port-names carries the node's names, all of
		// them (the loader takes a labelled node's names from the label
		// alone).
		for p := 1; named[i] != nil && p <= g.nodes[i].Ports; p++ {
			if g.PortName(NodeID(i), Port(p)) != "" && !slices.Contains(conn, Port(p)) {
				named[i] = nil
			}
		}
	}
	bw.WriteString("  kinds:\n    linux:\n      image: alpine:3\n")
	if len(g.nodes) == 0 {
		bw.WriteString("  nodes: {}\n")
	} else {
		bw.WriteString("  nodes:\n")
	}
	for i := range g.nodes {
		n := &g.nodes[i]
		fmt.Fprintf(bw, "    %s:\n      kind: linux\n      labels: {%skind: %s", yamlString(keys[i]), labelPrefix, n.Kind)
		if keys[i] != n.Name {
			fmt.Fprintf(bw, ", %snode-name: %s", labelPrefix, clabQuote(n.Name))
		}
		if n.Role != "" {
			fmt.Fprintf(bw, ", %srole: %s", labelPrefix, clabString(n.Role))
		}
		if n.Relay {
			fmt.Fprintf(bw, ", %srelay: \"true\"", labelPrefix)
		}
		if n.Ports > g.usedPorts(NodeID(i)) {
			fmt.Fprintf(bw, ", %sports: \"%d\"", labelPrefix, n.Ports)
		}
		if named[i] == nil {
			if pn := g.portNamesJSON(NodeID(i)); pn != "" {
				fmt.Fprintf(bw, ", %sport-names: %s", labelPrefix, clabQuote(pn))
			}
		}
		bw.WriteString("}\n")
	}
	if len(g.links) == 0 {
		bw.WriteString("  links: []\n")
	} else {
		bw.WriteString("  links:\n")
	}
	iface := func(e End) string {
		if ns := named[e.Node]; ns != nil {
			return g.PortName(e.Node, e.Port)
		}
		return "eth" + strconv.Itoa(int(e.Port))
	}
	for i := range g.links {
		l := &g.links[i]
		a := clabString(keys[l.A.Node] + ":" + iface(l.A))
		b := clabString(keys[l.B.Node] + ":" + iface(l.B))
		fmt.Fprintf(bw, "    - endpoints: [%s, %s]", a, b)
		if l.Rate != DefaultRate || l.Delay != DefaultDelay {
			fmt.Fprintf(bw, "\n      vars: {rate: %s, delay: %s}", FormatRate(l.Rate), FormatDelay(l.Delay))
		}
		bw.WriteString("\n")
	}
	return bw.Flush()
}

// linuxIfName reports whether Linux takes s as an interface name (the
// kernel's dev_valid_name): 1 to 15 bytes, not "." or "..", no '/', ':'
// or white space. Containerlab's linux nodes get their interfaces under
// the names the links give, so a name from a vendor's file (ethernet-1/1,
// GigabitEthernet0/0/1) cannot be written as one.
func linuxIfName(s string) bool {
	if len(s) == 0 || len(s) > 15 || s == "." || s == ".." {
		return false
	}
	return !strings.ContainsAny(s, "/: \t\n\v\f\r")
}

// portNamesJSON gives node n's port names as the label
// edgefabric.port-names holds them, a JSON object from port number to
// name ({"1":"ethernet-1/1"}), in port order; "" when it has none.
func (g *Graph) portNamesJSON(n NodeID) string {
	var b strings.Builder
	for p := 1; p <= g.nodes[n].Ports; p++ {
		name := g.PortName(n, Port(p))
		if name == "" {
			continue
		}
		if b.Len() == 0 {
			b.WriteByte('{')
		} else {
			b.WriteByte(',')
		}
		q, _ := json.Marshal(name)
		fmt.Fprintf(&b, "\"%d\":%s", p, q)
	}
	if b.Len() == 0 {
		return ""
	}
	b.WriteByte('}')
	return b.String()
}

type clabPortName struct {
	port Port
	name string
}

// parseClabPortNames reads the label edgefabric.port-names of the node
// called node: a JSON object from port number (1..MaxPorts) to a name
// (checkPortName), each port once.
func parseClabPortNames(s, node string) ([]clabPortName, error) {
	d := json.NewDecoder(strings.NewReader(s))
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s (want a JSON object from port number to name, {\"1\": \"ethernet-1/1\"})", ErrBadValue, fmt.Sprintf(format, a...))
	}
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, bad("not a JSON object")
	}
	var out []clabPortName
	seen := map[Port]bool{}
	byName := map[string]Port{}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, bad("%v", err)
		}
		key, _ := t.(string)
		p, err := strconv.Atoi(key)
		if err != nil || p < 1 || p > MaxPorts || strconv.Itoa(p) != key {
			return nil, bad("port %q is not a number in 1..%d", key, MaxPorts)
		}
		var name string
		if err := d.Decode(&name); err != nil {
			return nil, bad("port %d: the name is not a string", p)
		}
		if seen[Port(p)] {
			return nil, bad("port %d named twice", p)
		}
		seen[Port(p)] = true
		if err := checkPortName(node, Port(p), name); err != nil {
			return nil, err
		}
		if q, ok := byName[name]; ok {
			return nil, bad("ports %d and %d both named %q", q, p, name)
		}
		byName[name] = Port(p)
		out = append(out, clabPortName{Port(p), name})
	}
	if t, err := d.Token(); err != nil || t != json.Delim('}') {
		return nil, bad("not a JSON object")
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, bad("text after the object")
	}
	return out, nil
}
