package topo

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/edgefabric/edgefabric/element"
)

// GraphML (http://graphml.graphdrawing.org/), two dialects:
//
//   - edgefabric's own, written by WriteGraphML: node data ef.kind,
//     ef.role, ef.relay, ef.ports; edges with sourceport/targetport and
//     data ef.rate, ef.delay. Read back exactly.
//   - anything else, notably the Internet Topology Zoo: router graphs
//     without ports or hosts. Every node is a switch named by its label,
//     else its name data, else its yEd NodeLabel (its id when all are
//     missing or the name is taken); ports are assigned in edge order
//     (sourceport/targetport and declared port names win, numbered by
//     numberPorts); each switch then gets LoadOptions.ZooHosts hosts on
//     the following ports. A link's rate is the edge's LinkSpeedRaw (b/s),
//     else LinkSpeed in LinkSpeedUnits, its delay the great-circle
//     distance between the two nodes' Latitude/Longitude at 2×10⁸ m/s
//     (light in fibre), in whole nanoseconds, when both nodes have both,
//     else the defaults; a coordinate that is given must be a number of
//     degrees in range (latitude -90..90, longitude -180..180), else it is
//     an error. A directed edge that repeats an earlier one in the other
//     direction is the same duplex link (reciprocal). The graph's name is
//     its Network, label or name data, else its id, else the file name.
//     With LoadOptions.ZooHostsSet, a file in edgefabric's dialect is
//     refused (ErrNoEffect).
//
// In both, keys' defaults apply, data inside ports is not read, and
// UTF-16 and three single-byte encodings are read besides UTF-8.

type gmlKey struct {
	forWhat, name string
	def           string // <default>: the value of elements without data
	hasDef        bool
}

type gmlNode struct {
	id       string
	line     int
	data     gmlData
	lines    map[string]int    // each data element's line, by attr.name
	ports    []string          // declared <port> names, in order
	pnames   map[string]string // ef.port-name data, by <port> name
	yedLabel string            // the first <y:NodeLabel> of yEd's graphics data
}

type gmlEdge struct {
	src, dst, sport, dport string
	line                   int
	data                   gmlData
	directed               bool
}

// gmlData is an element's data by attr.name, over its keys' defaults.
// The defaults are one map shared by all nodes (or all edges), looked up
// on reading: copied into every element, k keys on n elements cost k×n
// (4000 of each, a 350 KB file, took 2.5 GB).
type gmlData struct {
	own  map[string]string
	defs map[string]string
}

func (d gmlData) get(name string) (string, bool) {
	if v, ok := d.own[name]; ok {
		return v, true
	}
	v, ok := d.defs[name]
	return v, ok
}

func (d gmlData) value(name string) string {
	v, _ := d.get(name)
	return v
}

// equal compares two elements' data, defaults included, for elements
// sharing their defaults: only their own data needs looking at.
func (d gmlData) equal(e gmlData) bool {
	for k, v := range d.own {
		if w, ok := e.get(k); !ok || w != v {
			return false
		}
	}
	for k, v := range e.own {
		if _, ok := d.own[k]; !ok {
			if w, ok := d.defs[k]; !ok || w != v {
				return false
			}
		}
	}
	return true
}

// decodeGraphML reads a GraphML file.
func decodeGraphML(file string, data []byte, o LoadOptions) (*Graph, error) {
	r := newResolver(file, "")
	data, err := fromUTF16(data)
	if err != nil {
		return nil, r.errAt(1, "xml", err)
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = charsetReader
	keys := map[string]gmlKey{}
	var nodes []*gmlNode
	var edges []*gmlEdge
	var curNode *gmlNode
	var curEdge *gmlEdge
	var curData map[string]string
	var curKey string
	var curKeyLine int
	var text strings.Builder
	var keyID string // the <key> being read, for its <default>
	var defText strings.Builder
	inDefault := false
	inLabel := false // in a yEd <y:NodeLabel>
	var label strings.Builder
	portDepth := 0 // data inside a <port> is the port's, not the node's
	curPort := ""  // the name of the node's <port> being read
	graphName := map[string]string{}
	edgesDirected := false
	graphs := 0
	sawRoot := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		ln, _ := d.InputPos()
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				ln = se.Line
			}
			msg := strings.TrimPrefix(err.Error(), "XML syntax error on line "+strconv.Itoa(ln)+": ")
			var enc *encodingError
			if errors.As(err, &enc) {
				msg = enc.Error()
			}
			return nil, r.errf(ln, "xml", ErrSyntax, "%s", msg)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			attr := func(name string) string {
				for _, a := range t.Attr {
					if a.Name.Local == name {
						return a.Value
					}
				}
				return ""
			}
			switch t.Name.Local {
			case "graphml":
				sawRoot = true
			case "key":
				id := attr("id")
				if id == "" {
					return nil, r.errf(ln, "key", ErrSyntax, "key without id")
				}
				keys[id] = gmlKey{forWhat: attr("for"), name: attr("attr.name")}
				keyID = id
			case "default":
				if keyID != "" {
					inDefault = true
					defText.Reset()
				}
			case "graph":
				if curNode != nil || curEdge != nil || graphs > 0 {
					return nil, r.errf(ln, "graph", ErrSyntax, "nested or multiple graphs are not supported")
				}
				graphs++
				r.b.g.Name = attr("id")
				edgesDirected = attr("edgedefault") == "directed"
			case "port":
				if portDepth == 0 && curNode != nil && attr("name") != "" {
					curNode.ports = append(curNode.ports, attr("name"))
					curPort = attr("name")
				}
				portDepth++
			case "NodeLabel":
				if curNode != nil && curKey != "" && curNode.yedLabel == "" {
					inLabel = true
					label.Reset()
				}
			case "node":
				if curNode != nil {
					return nil, r.errf(ln, "node", ErrSyntax, "node inside node")
				}
				curNode = &gmlNode{id: attr("id"), line: ln, data: gmlData{own: map[string]string{}}, lines: map[string]int{}}
				if curNode.id == "" {
					return nil, r.errf(ln, "node.id", ErrSyntax, "node without id")
				}
				curData = curNode.data.own
			case "edge":
				curEdge = &gmlEdge{src: attr("source"), dst: attr("target"), sport: attr("sourceport"), dport: attr("targetport"), line: ln, data: gmlData{own: map[string]string{}}, directed: edgesDirected}
				switch attr("directed") {
				case "true":
					curEdge.directed = true
				case "false":
					curEdge.directed = false
				}
				curData = curEdge.data.own
			case "hyperedge":
				return nil, r.errf(ln, "hyperedge", ErrSyntax, "hyperedges are not supported")
			case "data":
				curKey, curKeyLine = attr("key"), ln
				text.Reset()
			}
		case xml.CharData:
			if curKey != "" && text.Len() < 1<<16 {
				text.Write(t)
			}
			if inLabel && label.Len() < 1<<12 {
				label.Write(t)
			}
			if inDefault && defText.Len() < 1<<16 {
				defText.Write(t)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "key":
				keyID = ""
			case "default":
				if inDefault {
					k := keys[keyID]
					k.def, k.hasDef = strings.TrimSpace(defText.String()), true
					keys[keyID] = k
					inDefault = false
				}
			case "port":
				portDepth--
				if portDepth == 0 {
					curPort = ""
				}
			case "NodeLabel":
				if inLabel {
					// yEd wraps labels over lines: one name, single spaces
					curNode.yedLabel = strings.Join(strings.Fields(label.String()), " ")
					inLabel = false
				}
			case "data":
				if curData == nil && curNode == nil && curEdge == nil && graphs > 0 {
					// the graph's own data: the Zoo's Network, a label or name
					if n := keys[curKey].name; n == "Network" || n == "label" || n == "name" {
						graphName[n] = strings.TrimSpace(text.String())
					}
				}
				if curNode != nil && curPort != "" && portDepth == 1 && keys[curKey].name == "ef.port-name" {
					// verbatim, as WriteGraphML writes it
					if curNode.pnames == nil {
						curNode.pnames = map[string]string{}
					}
					curNode.pnames[curPort] = text.String()
				}
				if curData != nil && curKey != "" && portDepth == 0 {
					name := keys[curKey].name
					if name == "" {
						name = curKey
					}
					v := text.String()
					if name != "ef.role" {
						// ef.role is written verbatim by WriteGraphML
						// and read back so; other data may be indented.
						v = strings.TrimSpace(v)
					}
					if old, twice := curData[name]; twice && old != v && strings.HasPrefix(name, "ef.") {
						// edgefabric's own attributes have one value per
						// element, as a native file's keys do (other
						// files' data keeps its last value)
						f := index("edge", len(edges)) + "." + name
						if curNode != nil {
							f = "node " + strconv.Quote(curNode.id) + " " + name
						}
						return nil, r.errf(curKeyLine, f, ErrSyntax, "given twice (%s, then %s)", quote(old), quote(v))
					}
					curData[name] = v
					if curNode != nil {
						curNode.lines[name] = curKeyLine
					}
				}
				curKey = ""
			case "node":
				if curNode != nil {
					nodes = append(nodes, curNode)
					if len(nodes) > MaxNodes {
						return nil, r.errf(ln, "node", ErrTooLarge, "more than %d nodes", MaxNodes)
					}
				}
				curNode, curData = nil, nil
			case "edge":
				if curEdge != nil {
					edges = append(edges, curEdge)
					if len(edges) > MaxLinks {
						return nil, r.errf(ln, "edge", ErrTooLarge, "more than %d edges", MaxLinks)
					}
				}
				curEdge, curData = nil, nil
			}
		}
	}
	if !sawRoot || graphs == 0 {
		return nil, r.errf(1, "graphml", ErrSyntax, "no <graphml> document with a <graph>")
	}
	// The graph's name: the Zoo's Network data, else its label or name
	// data, else its id (yEd and igraph write the placeholder id "G").
	for _, k := range []string{"Network", "label", "name"} {
		if v := graphName[k]; v != "" {
			r.b.g.Name = v
			break
		}
	}
	// Keys' defaults apply to elements without the data (GraphML primer
	// 2.4), in key order so that the result does not depend on map order
	// (the first key of a name wins).
	nodeDefs, edgeDefs := map[string]string{}, map[string]string{}
	for _, id := range slices.Sorted(maps.Keys(keys)) {
		k := keys[id]
		if !k.hasDef {
			continue
		}
		name := k.name
		if name == "" {
			name = id
		}
		if _, ok := nodeDefs[name]; !ok && (k.forWhat == "node" || k.forWhat == "all") {
			nodeDefs[name] = k.def
		}
		if _, ok := edgeDefs[name]; !ok && (k.forWhat == "edge" || k.forWhat == "all") {
			edgeDefs[name] = k.def
		}
	}
	for _, n := range nodes {
		n.data.defs = nodeDefs
	}
	for _, e := range edges {
		e.data.defs = edgeDefs
	}
	native := false
	for _, k := range keys {
		if k.name == "ef.kind" {
			native = true
		}
	}
	// Names: the id in edgefabric's dialect; the label (unique) in others.
	byID := make(map[string]string, len(nodes))
	used := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		if _, dup := byID[n.id]; dup {
			return nil, r.errf(n.line, "node.id", ErrDuplicateName, "%q", n.id)
		}
		name := n.id
		if lbl := firstNonEmpty(n.data.value("label"), n.data.value("name"), n.yedLabel); !native && lbl != "" {
			name = lbl
			if used[lbl] {
				name = lbl + "#" + n.id
			}
		}
		for used[name] {
			name += "#" + n.id
		}
		used[name] = true
		byID[n.id] = name
	}
	if native && o.ZooHostsSet {
		return nil, r.errf(0, "", ErrNoEffect, "hosts per switch apply only to GraphML files without edgefabric annotations (Topology Zoo), and this one has them (ef.kind)")
	}
	hostsPer := 0
	if !native {
		hostsPer = o.ZooHosts
		if hostsPer > MaxPorts {
			return nil, r.errf(0, "hosts", ErrBadPort, "%d hosts per switch exceed %d ports", hostsPer, MaxPorts)
		}
		if int64(len(nodes))*int64(1+hostsPer) > MaxNodes {
			return nil, r.errf(0, "hosts", ErrTooLarge, "%d switches with %d hosts each exceed %d nodes", len(nodes), hostsPer, MaxNodes)
		}
	}
	r.b.Grow(len(nodes)*(1+hostsPer), len(edges)+len(nodes)*hostsPer)
	var switches []NodeID
	declared := map[NodeID]int{}
	lines := map[NodeID]int{}
	fields := map[NodeID]string{}
	for _, n := range nodes {
		kind, role, relay, ports := Switch, "", false, 0
		if native {
			switch n.data.value("ef.kind") {
			case "switch":
			case "host":
				kind = Host
			default:
				return nil, r.errf(n.line, "node "+strconv.Quote(n.id)+" ef.kind", ErrBadValue, "%s (want switch or host)", quote(n.data.value("ef.kind")))
			}
			role = n.data.value("ef.role")
			if s, ok := n.data.get("ef.relay"); ok {
				v, err := strconv.ParseBool(s)
				if err != nil {
					return nil, r.errf(n.line, "node "+strconv.Quote(n.id)+" ef.relay", ErrBadValue, "%s is not true or false", quote(s))
				}
				if v && kind == Switch {
					return nil, r.errAt(dataLine(n, "ef.relay"), "node "+strconv.Quote(n.id)+" ef.relay", errSwitchRelay)
				}
				relay = v
			}
			if s, ok := n.data.get("ef.ports"); ok {
				v, err := parsePorts(s)
				if err != nil {
					return nil, r.errAt(n.line, "node "+strconv.Quote(n.id)+" ef.ports", err)
				}
				ports = v
			}
		}
		id, err := r.node(n.line, "node "+strconv.Quote(n.id), byID[n.id], kind, role, relay, ports)
		if err != nil {
			return nil, err
		}
		if ports > 0 {
			declared[id], lines[id], fields[id] = ports, n.line, "node "+strconv.Quote(n.id)+" ef.ports"
		}
		if kind == Switch {
			switches = append(switches, id)
		}
	}
	type coord struct{ lat, lon float64 }
	coords := map[string]coord{}
	if !native {
		for _, n := range nodes {
			la, okLa, err := r.degrees(n, "Latitude", 90)
			if err != nil {
				return nil, err
			}
			lo, okLo, err := r.degrees(n, "Longitude", 180)
			if err != nil {
				return nil, err
			}
			if okLa && okLo {
				coords[n.id] = coord{la, lo}
			}
		}
	}
	// Port names are identifiers (the primer's North, South): numberPorts
	// numbers each node's names, declared ports first, then the edges'.
	portNames := map[string][]string{}
	seenPort := map[[2]string]bool{} // (node id, port name)
	addPort := func(id, name string) {
		if k := [2]string{id, name}; !seenPort[k] {
			seenPort[k] = true
			portNames[id] = append(portNames[id], name)
		}
	}
	for _, n := range nodes {
		for _, name := range n.ports {
			addPort(n.id, name)
		}
	}
	for _, e := range edges {
		for _, end := range [2][2]string{{e.src, e.sport}, {e.dst, e.dport}} {
			if end[1] != "" {
				addPort(end[0], end[1])
			}
		}
	}
	portOf := map[string]map[string]int{}
	for _, n := range nodes {
		pm, err := numberPorts(portNames[n.id])
		if err != nil {
			return nil, r.errAt(n.line, "node "+strconv.Quote(n.id), err)
		}
		portOf[n.id] = pm
		// Keep the names for output meant for the device: ef.port-name
		// data, else the port's own name unless it is just its number
		// (edgefabric's writer numbers ports).
		id, _ := r.b.Lookup(byID[n.id])
		for _, name := range portNames[n.id] {
			p := pm[name]
			if v, ok := n.pnames[name]; ok {
				r.b.NamePort(End{id, Port(p)}, v)
			} else if name != strconv.Itoa(p) {
				r.b.NamePort(End{id, Port(p)}, name)
			}
		}
		if err := r.b.Err(); err != nil {
			return nil, r.errAt(n.line, "node "+strconv.Quote(n.id), err)
		}
	}
	skip, _ := reciprocal(edges, native)
	for i, e := range edges {
		if skip[i] {
			continue
		}
		f := index("edge", i)
		var refs [2]endRef
		for j, end := range [2][2]string{{e.src, e.sport}, {e.dst, e.dport}} {
			which := [2]string{"source", "target"}[j]
			name, ok := byID[end[0]]
			if !ok {
				return nil, r.errf(e.line, f+"."+which, ErrUnknownNode, "%q", end[0])
			}
			refs[j].node = name
			if end[1] != "" {
				refs[j].port = portOf[end[0]][end[1]]
			}
		}
		rate, delay := DefaultRate, DefaultDelay
		var err error
		if native {
			if s, ok := e.data.get("ef.rate"); ok {
				if rate, err = ParseRate(s); err != nil {
					return nil, r.errAt(e.line, f+".ef.rate", err)
				}
			}
			if s, ok := e.data.get("ef.delay"); ok {
				if delay, err = ParseDelay(s); err != nil {
					return nil, r.errAt(e.line, f+".ef.delay", err)
				}
			}
		} else {
			if s, ok := e.data.get("LinkSpeedRaw"); ok && s != "" {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil || !(v >= 1 && v <= 1e15) {
					return nil, r.errf(e.line, f+".LinkSpeedRaw", ErrBadValue, "%s is not a rate in b/s", quote(s))
				}
				rate = int64(v)
			} else if s, ok := e.data.get("LinkSpeed"); ok && s != "" {
				// Some Zoo files give only LinkSpeed and its units.
				u := e.data.value("LinkSpeedUnits")
				scale, known := zooUnits[strings.ToUpper(u)]
				v, err := strconv.ParseFloat(s, 64)
				if !known || err != nil || !(v*scale >= 1 && v*scale <= 1e15) {
					return nil, r.errf(e.line, f+".LinkSpeed", ErrBadValue, "%s %s is not a rate (want a number and LinkSpeedUnits K, M, G or T)", quote(s), quote(u))
				}
				rate = int64(math.Round(v * scale))
			}
			c1, ok1 := coords[e.src]
			c2, ok2 := coords[e.dst]
			if ok1 && ok2 {
				delay = fibreDelay(c1.lat, c1.lon, c2.lat, c2.lon)
			}
		}
		if err := r.link(e.line, f+".source", refs[0], f+".target", refs[1], rate, delay); err != nil {
			return nil, err
		}
	}
	if !native {
		h := 0
		for _, s := range switches {
			for range o.ZooHosts {
				h++
				name := "h" + strconv.Itoa(h)
				for used[name] {
					name = "host-" + name
				}
				used[name] = true
				hid, err := r.node(0, "hosts", name, Host, "", false, 0)
				if err != nil {
					return nil, err
				}
				if err := r.link(0, "hosts", endRef{node: r.b.g.nodes[s].Name}, "hosts", endRef{node: r.b.g.nodes[hid].Name, port: 1}, DefaultRate, DefaultDelay); err != nil {
					return nil, err
				}
			}
		}
	}
	return r.graph(declared, lines, func(id NodeID) string { return fields[id] })
}

// zooUnits are the Topology Zoo's LinkSpeedUnits.
var zooUnits = map[string]float64{"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}

// reciprocal marks, outside edgefabric's dialect, the directed edges that
// only repeat a link in the other direction: b->a after a->b, with the
// same ports swapped and the same data. A directed router graph (the
// Zoo's to_directed, a digraph of duplex links) lists each link that
// way; GraphML's own undirected edges, and directed ones without a
// reverse twin, stay links of their own. A reverse edge pairs with the
// first unpaired edge that it repeats. probes counts the unpaired edges
// looked at: the edges are grouped by their ends and their data's
// fingerprint, so that is one per pair, not one per edge between the two
// nodes (k edges a->b and k b->a with other data once compared k² pairs:
// 27 s for k = 20,000, a 2.3 MB file).
func reciprocal(edges []*gmlEdge, native bool) (skip []bool, probes int) {
	skip = make([]bool, len(edges))
	if native {
		return skip, 0
	}
	type key struct{ src, dst, sport, dport, data string }
	open := map[key][]int{} // unpaired directed edges, in file order
	var buf []byte
	for i, e := range edges {
		if !e.directed {
			continue
		}
		var fp string
		fp, buf = e.data.fingerprint(buf[:0])
		rev := key{e.dst, e.src, e.dport, e.sport, fp}
		if cand := open[rev]; len(cand) > 0 {
			probes++
			if len(cand) == 1 {
				delete(open, rev)
			} else {
				open[rev] = cand[1:]
			}
			skip[i] = true
			continue
		}
		k := key{e.src, e.dst, e.sport, e.dport, fp}
		open[k] = append(open[k], i)
	}
	return skip, probes
}

// fingerprint writes d's data, as equal compares it, to buf and returns
// it as a string: the element's own data that is not its key's default,
// by name, each name and value preceded by its length. Two elements that
// share their defaults have equal data exactly when their fingerprints
// are equal.
func (d gmlData) fingerprint(buf []byte) (string, []byte) {
	names := make([]string, 0, len(d.own))
	for k, v := range d.own {
		if w, ok := d.defs[k]; !ok || w != v {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		buf = binary.AppendUvarint(buf, uint64(len(k)))
		buf = append(buf, k...)
		v := d.own[k]
		buf = binary.AppendUvarint(buf, uint64(len(v)))
		buf = append(buf, v...)
	}
	return string(buf), buf
}

// dataLine is the line of a node's data element, else the node's.
func dataLine(n *gmlNode, key string) int {
	if l := n.lines[key]; l > 0 {
		return l
	}
	return n.line
}

// degrees reads a node's Latitude or Longitude: absent or empty is no
// coordinate (ok false); anything but a number of degrees in -max..max
// (NaN, Inf, 999, "north") is an error, not a silent fallback to the
// default delay.
func (r *resolver) degrees(n *gmlNode, key string, max float64) (v float64, ok bool, err error) {
	s, ok := n.data.get(key)
	if !ok || s == "" {
		return 0, false, nil
	}
	v, perr := strconv.ParseFloat(s, 64)
	if perr != nil || !(v >= -max && v <= max) { // NaN fails both
		return 0, false, r.errf(dataLine(n, key), "node "+strconv.Quote(n.id)+" "+key, ErrBadValue, "%s is not a %s in degrees (want -%g..%g)", quote(s), strings.ToLower(key), max, max)
	}
	return v, true, nil
}

// fibreDelay is the propagation delay over the great circle between two
// points, at 2×10⁸ m/s.
func fibreDelay(lat1, lon1, lat2, lon2 float64) element.Time {
	const earthRadius = 6_371_000.0 // m
	rad := math.Pi / 180
	dlat, dlon := (lat2-lat1)*rad, (lon2-lon1)*rad
	a := math.Sin(dlat/2)*math.Sin(dlat/2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dlon/2)*math.Sin(dlon/2)
	dist := 2 * earthRadius * math.Asin(math.Min(1, math.Sqrt(a)))
	// whole nanoseconds: the coordinates are not more precise than that
	return element.Time(math.Round(dist/2e8*1e9)) * element.Nanosecond
}

func xmlEscape(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// WriteGraphML writes g in edgefabric's GraphML dialect: node ids are the
// names, ports are declared GraphML ports, attributes are ef.* data.
func WriteGraphML(w io.Writer, g *Graph) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">
  <key id="kind" for="node" attr.name="ef.kind" attr.type="string"/>
  <key id="role" for="node" attr.name="ef.role" attr.type="string"/>
  <key id="relay" for="node" attr.name="ef.relay" attr.type="boolean"/>
  <key id="ports" for="node" attr.name="ef.ports" attr.type="int"/>
  <key id="rate" for="edge" attr.name="ef.rate" attr.type="string"/>
  <key id="delay" for="edge" attr.name="ef.delay" attr.type="string"/>
`)
	if g.HasPortNames() {
		// a port's name in the file it came from (an interface): the
		// ports themselves are named by number, which the loader keeps
		bw.WriteString(`  <key id="pname" for="port" attr.name="ef.port-name" attr.type="string"/>` + "\n")
	}
	fmt.Fprintf(bw, "  <graph id=\"%s\" edgedefault=\"undirected\">\n", xmlEscape(g.Name))
	for i := range g.nodes {
		n := &g.nodes[i]
		fmt.Fprintf(bw, "    <node id=\"%s\"><data key=\"kind\">%s</data>", xmlEscape(n.Name), n.Kind)
		if n.Role != "" {
			fmt.Fprintf(bw, "<data key=\"role\">%s</data>", xmlEscape(n.Role))
		}
		if n.Relay {
			bw.WriteString(`<data key="relay">true</data>`)
		}
		// GraphML declares the ports an edge names; ef.ports gives the
		// count. A port neither cabled nor named needs no <port> (every
		// port listed made 200 switches of 65,535 ports 260 MB).
		fmt.Fprintf(bw, "<data key=\"ports\">%d</data>", n.Ports)
		for p, l := range g.Ports(NodeID(i)) {
			name := g.PortName(NodeID(i), Port(p+1))
			switch {
			case name != "":
				fmt.Fprintf(bw, "<port name=\"%d\"><data key=\"pname\">%s</data></port>", p+1, xmlEscape(name))
			case l != NoLink:
				fmt.Fprintf(bw, "<port name=\"%d\"/>", p+1)
			}
		}
		bw.WriteString("</node>\n")
	}
	for i := range g.links {
		l := &g.links[i]
		fmt.Fprintf(bw, "    <edge source=\"%s\" sourceport=\"%d\" target=\"%s\" targetport=\"%d\"><data key=\"rate\">%s</data><data key=\"delay\">%s</data></edge>\n",
			xmlEscape(g.nodes[l.A.Node].Name), l.A.Port, xmlEscape(g.nodes[l.B.Node].Name), l.B.Port, FormatRate(l.Rate), FormatDelay(l.Delay))
	}
	bw.WriteString("  </graph>\n</graphml>\n")
	return bw.Flush()
}

// fromUTF16 turns a UTF-16 document (XML processors must read it) into
// UTF-8, told by its byte order mark or by its first character '<'; line
// numbers stay. Other documents are returned as they are.
func fromUTF16(data []byte) ([]byte, error) {
	var order func([]byte) uint16
	switch {
	case len(data) >= 2 && data[0] == 0xFF && data[1] == 0xFE, len(data) >= 2 && data[0] == '<' && data[1] == 0:
		order = func(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }
	case len(data) >= 2 && data[0] == 0xFE && data[1] == 0xFF, len(data) >= 2 && data[0] == 0 && data[1] == '<':
		order = func(b []byte) uint16 { return uint16(b[0])<<8 | uint16(b[1]) }
	default:
		return data, nil
	}
	if len(data)%2 != 0 {
		return nil, fmt.Errorf("%w: UTF-16 document with an odd number of bytes", ErrSyntax)
	}
	units := make([]uint16, 0, len(data)/2)
	for i := 0; i < len(data); i += 2 {
		units = append(units, order(data[i:i+2]))
	}
	if len(units) > 0 && units[0] == 0xFEFF {
		units = units[1:]
	}
	out := make([]byte, 0, len(units))
	for _, r := range utf16.Decode(units) {
		out = utf8.AppendRune(out, r)
	}
	return out, nil
}

// encodingError is an encoding the loader cannot read.
type encodingError struct{ charset string }

func (e *encodingError) Error() string {
	return fmt.Sprintf("unsupported encoding %q (GraphML files are read in UTF-8, UTF-16, ISO-8859-1, windows-1252 or US-ASCII)", e.charset)
}

// charsetReader reads the encodings a GraphML file may declare besides
// UTF-8: UTF-16 (already turned into UTF-8 by fromUTF16), and the
// single-byte ISO-8859-1, windows-1252 and US-ASCII, which some tools
// declare for files that are plain ASCII.
func charsetReader(charset string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(charset) {
	case "utf-16", "utf16", "utf-16le", "utf-16be":
		return input, nil
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "us-ascii", "ascii":
		return singleByte(input, nil)
	case "windows-1252", "cp1252":
		return singleByte(input, &cp1252)
	}
	return nil, &encodingError{charset}
}

// singleByte decodes a single-byte encoding into UTF-8: byte b is rune b
// (ISO-8859-1), except 0x80-0x9F, which high maps when given
// (windows-1252).
func singleByte(input io.Reader, high *[32]rune) (io.Reader, error) {
	b, err := io.ReadAll(io.LimitReader(input, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b))
	for _, c := range b {
		r := rune(c)
		if high != nil && c >= 0x80 && c < 0xA0 {
			r = high[c-0x80]
		}
		out = utf8.AppendRune(out, r)
	}
	return bytes.NewReader(out), nil
}

// cp1252 is windows-1252's 0x80-0x9F; its five unassigned bytes stay
// the C1 controls ISO-8859-1 has there.
var cp1252 = [32]rune{
	0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
	0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
}
