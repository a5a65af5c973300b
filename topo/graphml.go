package topo

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/edgefabric/edgefabric/element"
)

// GraphML (http://graphml.graphdrawing.org/), two dialects:
//
//   - edgefabric's own, written by WriteGraphML: node data ef.kind,
//     ef.role, ef.relay, ef.ports; edges with sourceport/targetport and
//     data ef.rate, ef.delay. Read back exactly.
//   - anything else, notably the Internet Topology Zoo: router graphs
//     without ports or hosts. Every node is a switch named by its label
//     (its id when the label is missing or taken); ports are assigned in
//     edge order (sourceport/targetport win when given); each switch then
//     gets LoadOptions.ZooHosts hosts on the following ports. A link's rate
//     is the edge's LinkSpeedRaw (b/s) when given, its delay the
//     great-circle distance between the two nodes' Latitude/Longitude at
//     2×10⁸ m/s (light in fibre), in whole nanoseconds, when both nodes
//     have both, else the defaults; a coordinate that is given must be a
//     number of degrees in range (latitude -90..90, longitude -180..180),
//     else it is an error. The graph's name is its id, else the Zoo's
//     Network data, else the file name. With LoadOptions.ZooHostsSet, a
//     file in edgefabric's dialect is refused (ErrNoEffect).

type gmlKey struct {
	forWhat, name string
}

type gmlNode struct {
	id    string
	line  int
	data  map[string]string // by attr.name
	lines map[string]int    // each data element's line, by attr.name
}

type gmlEdge struct {
	src, dst, sport, dport string
	line                   int
	data                   map[string]string
}

// decodeGraphML reads a GraphML file.
func decodeGraphML(file string, data []byte, o LoadOptions) (*Graph, error) {
	r := newResolver(file, "")
	d := xml.NewDecoder(bytes.NewReader(data))
	keys := map[string]gmlKey{}
	var nodes []*gmlNode
	var edges []*gmlEdge
	var curNode *gmlNode
	var curEdge *gmlEdge
	var curData map[string]string
	var curKey string
	var curKeyLine int
	var text strings.Builder
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
			return nil, r.errf(ln, "xml", ErrSyntax, "%s", strings.TrimPrefix(err.Error(), "XML syntax error on line "+strconv.Itoa(ln)+": "))
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
				keys[id] = gmlKey{attr("for"), attr("attr.name")}
			case "graph":
				if curNode != nil || curEdge != nil || graphs > 0 {
					return nil, r.errf(ln, "graph", ErrSyntax, "nested or multiple graphs are not supported")
				}
				graphs++
				r.b.g.Name = attr("id")
			case "node":
				if curNode != nil {
					return nil, r.errf(ln, "node", ErrSyntax, "node inside node")
				}
				curNode = &gmlNode{id: attr("id"), line: ln, data: map[string]string{}, lines: map[string]int{}}
				if curNode.id == "" {
					return nil, r.errf(ln, "node.id", ErrSyntax, "node without id")
				}
				curData = curNode.data
			case "edge":
				curEdge = &gmlEdge{src: attr("source"), dst: attr("target"), sport: attr("sourceport"), dport: attr("targetport"), line: ln, data: map[string]string{}}
				curData = curEdge.data
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
		case xml.EndElement:
			switch t.Name.Local {
			case "data":
				if curData == nil && curNode == nil && curEdge == nil && keys[curKey].name == "Network" && r.b.g.Name == "" {
					r.b.g.Name = strings.TrimSpace(text.String()) // the Zoo's network name
				}
				if curData != nil && curKey != "" {
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
		if lbl := n.data["label"]; !native && lbl != "" {
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
			switch n.data["ef.kind"] {
			case "switch":
			case "host":
				kind = Host
			default:
				return nil, r.errf(n.line, "node "+strconv.Quote(n.id)+" ef.kind", ErrBadValue, "%s (want switch or host)", quote(n.data["ef.kind"]))
			}
			role = n.data["ef.role"]
			if s, ok := n.data["ef.relay"]; ok {
				v, err := strconv.ParseBool(s)
				if err != nil {
					return nil, r.errf(n.line, "node "+strconv.Quote(n.id)+" ef.relay", ErrBadValue, "%s is not true or false", quote(s))
				}
				if v && kind == Switch {
					return nil, r.errAt(dataLine(n, "ef.relay"), "node "+strconv.Quote(n.id)+" ef.relay", errSwitchRelay)
				}
				relay = v
			}
			if s, ok := n.data["ef.ports"]; ok {
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
	for i, e := range edges {
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
				p, err := ifacePort(end[1])
				if err != nil {
					return nil, r.errAt(e.line, f+"."+which+"port", err)
				}
				refs[j].port = p
			}
		}
		rate, delay := DefaultRate, DefaultDelay
		var err error
		if native {
			if s, ok := e.data["ef.rate"]; ok {
				if rate, err = ParseRate(s); err != nil {
					return nil, r.errAt(e.line, f+".ef.rate", err)
				}
			}
			if s, ok := e.data["ef.delay"]; ok {
				if delay, err = ParseDelay(s); err != nil {
					return nil, r.errAt(e.line, f+".ef.delay", err)
				}
			}
		} else {
			if s, ok := e.data["LinkSpeedRaw"]; ok && s != "" {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil || !(v >= 1 && v <= 1e15) {
					return nil, r.errf(e.line, f+".LinkSpeedRaw", ErrBadValue, "%s is not a rate in b/s", quote(s))
				}
				rate = int64(v)
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
				if err := r.link(0, "hosts", endRef{r.b.g.nodes[s].Name, 0}, "hosts", endRef{r.b.g.nodes[hid].Name, 1}, DefaultRate, DefaultDelay); err != nil {
					return nil, err
				}
			}
		}
	}
	return r.graph(declared, lines, func(id NodeID) string { return fields[id] })
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
	s, ok := n.data[key]
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
		fmt.Fprintf(bw, "<data key=\"ports\">%d</data>", n.Ports)
		for p := 1; p <= n.Ports; p++ {
			fmt.Fprintf(bw, "<port name=\"%d\"/>", p)
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
