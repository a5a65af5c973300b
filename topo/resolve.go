package topo

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/edgefabric/edgefabric/element"
	"gopkg.in/yaml.v3"
)

// ErrSyntax reports a file that its format's parser rejects.
var ErrSyntax = errors.New("syntax error")

// posError is a loader error: file, line (0 when the format has none),
// the field at fault and the cause. It prints on one line:
//
//	topo: lab.yaml:12: links[3].b: unknown node: "s9"
type posError struct {
	file  string
	line  int
	field string
	err   error
}

func (e *posError) Error() string {
	var b strings.Builder
	b.WriteString("topo: ")
	b.WriteString(e.file)
	if e.line > 0 {
		b.WriteString(":")
		b.WriteString(strconv.Itoa(e.line))
	}
	if e.field != "" {
		b.WriteString(": ")
		b.WriteString(e.field)
	}
	b.WriteString(": ")
	b.WriteString(strings.TrimPrefix(e.err.Error(), "topo: "))
	// keys, names and file names come from the input: keep it one line
	return oneLine(b.String())
}

func (e *posError) Unwrap() error { return e.err }

// maxQuoted bounds how much of an input value an error quotes: a whole
// file read as one scalar (a DOT file taken for YAML) must not become the
// error message.
const maxQuoted = 40

// quote quotes an input value for an error, cut after maxQuoted
// characters with "…" appended.
func quote(s string) string {
	if c := clip(s); len(c) < len(s) {
		return strconv.Quote(c) + "…"
	}
	return strconv.Quote(s)
}

// clip cuts s after maxQuoted characters.
func clip(s string) string {
	n := 0
	for i := range s {
		if n == maxQuoted {
			return s[:i]
		}
		n++
	}
	return s
}

// oneLine keeps error texts on one line whatever the input contained.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
}

// resolver turns a file's raw nodes and links into a Graph, checking each
// one where it can still name the line and field: the one place every
// loader validates ("parse raw, then resolve").
type resolver struct {
	file   string
	b      *Builder
	links  int
	merged int // mapping entries brought in by merge keys (maxMerged)
	// containerlab labels and link vars read, by their mapping, so that
	// one that aliases repeat is read once
	clabLabels map[*yaml.Node]map[string]string
	clabVars   map[*yaml.Node][]kv
	// native port_names mappings read, likewise
	portSets map[*yaml.Node]portNamesRead
}

func newResolver(file, name string) *resolver {
	return &resolver{file: file, b: NewBuilder(name)}
}

func (r *resolver) errAt(line int, field string, err error) error {
	return &posError{file: r.file, line: line, field: field, err: err}
}

func (r *resolver) errf(line int, field string, sentinel error, format string, args ...any) error {
	return r.errAt(line, field, fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...)))
}

// node adds a node; ports (0 = as many as its links need) may reserve
// unconnected ports.
func (r *resolver) node(line int, field, name string, kind Kind, role string, relay bool, ports int) (NodeID, error) {
	if name == "" {
		return -1, r.errf(line, field, ErrBadValue, "empty node name")
	}
	if _, dup := r.b.Lookup(name); dup {
		return -1, r.errf(line, field, ErrDuplicateName, "%q", name)
	}
	if !printable(role) {
		return -1, r.errf(line, field, ErrBadValue, "role %s: control character or invalid UTF-8", quote(role))
	}
	if ports < 0 || ports > MaxPorts {
		return -1, r.errf(line, field, ErrBadPort, "ports must be 0..%d, got %d", MaxPorts, ports)
	}
	if r.b.g.NumNodes() >= MaxNodes {
		return -1, r.errf(line, field, ErrTooLarge, "more than %d nodes", MaxNodes)
	}
	id := r.b.AddNode(name, kind)
	if err := r.b.Err(); err != nil {
		return -1, r.errAt(line, field, err)
	}
	n := r.b.Node(id)
	n.Role, n.Relay, n.Ports = role, relay, ports
	return id, nil
}

// errSwitchRelay is the error for Relay set on a switch: relaying is what
// a host does when it forwards between its NICs (BCube servers); a switch
// forwards anyway, so the flag there is a mistake, not a no-op.
var errSwitchRelay = fmt.Errorf("%w: only a host can relay (forward between its NICs, as BCube servers do); this node is a switch", ErrBadValue)

// parsePorts reads a node's declared port count, 0..MaxPorts. A number
// too long for an int is out of range, not "not an integer".
func parsePorts(s string) (int, error) {
	v, err := strconv.Atoi(s)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("%w: ports must be 0..%d, got %s", ErrBadPort, MaxPorts, clip(s))
	case err != nil:
		return 0, fmt.Errorf("%w: %s is not an integer", ErrBadValue, quote(s))
	case v < 0 || v > MaxPorts:
		return 0, fmt.Errorf("%w: ports must be 0..%d, got %d", ErrBadPort, MaxPorts, v)
	}
	return v, nil
}

// endRef is an endpoint as written: a node name and a port, 0 for the next
// free one.
type endRef struct {
	node string
	port int
	name string // the port's name in the file (an interface), if any
}

// parseEnd reads "node:port" or "node". The port is the number after the
// last colon; a name may itself contain colons when a port follows. The
// text is not trimmed: YAML already trims plain scalars, and a quoted
// name with spaces at its ends (which the writers quote) must still match.
func parseEnd(s string) (endRef, error) {
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		p, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return endRef{}, fmt.Errorf("%w: endpoint %s: port %s is not a number", ErrBadPort, quote(s), quote(s[i+1:]))
		}
		if p < 1 || p > MaxPorts {
			return endRef{}, fmt.Errorf("%w: endpoint %s: port must be 1..%d", ErrBadPort, quote(s), MaxPorts)
		}
		if i == 0 {
			return endRef{}, fmt.Errorf("%w: endpoint %s: no node name", ErrBadValue, quote(s))
		}
		return endRef{node: s[:i], port: p}, nil
	}
	if s == "" {
		return endRef{}, fmt.Errorf("%w: empty endpoint", ErrBadValue)
	}
	return endRef{node: s}, nil
}

// endText writes an endpoint as the file gave it: "s1:3" or "s1".
func endText(e endRef) string {
	if e.port == 0 {
		return e.node
	}
	return e.node + ":" + strconv.Itoa(e.port)
}

func (r *resolver) end(line int, field string, e endRef) (End, error) {
	id, ok := r.b.Lookup(e.node)
	if !ok {
		return End{}, r.errf(line, field, ErrUnknownNode, "%q", e.node)
	}
	p := Port(e.port)
	if e.port == 0 {
		p = r.b.nextPort(id)
		if p == 0 || int(p) > MaxPorts {
			return End{}, r.errf(line, field, ErrBadPort, "%q has no free port", e.node)
		}
	}
	if ps := r.b.ports[id]; int(p) <= len(ps) && ps[p-1] != NoLink {
		return End{}, r.errf(line, field, ErrPortInUse, "%s port %d", e.node, p)
	}
	return End{id, p}, nil
}

// link joins two endpoints; fieldA and fieldB name them for errors.
func (r *resolver) link(line int, fieldA string, a endRef, fieldB string, c endRef, rate int64, delay element.Time) error {
	if r.links >= MaxLinks {
		return r.errf(line, fieldA, ErrTooLarge, "more than %d links", MaxLinks)
	}
	ea, err := r.end(line, fieldA, a)
	if err != nil {
		return err
	}
	if a.node == c.node {
		return r.errf(line, fieldB, ErrSelfLoop, "%s", endText(c))
	}
	ec, err := r.end(line, fieldB, c)
	if err != nil {
		return err
	}
	r.b.ConnectPorts(ea, ec, rate, delay)
	if a.name != "" {
		r.b.NamePort(ea, a.name)
	}
	if c.name != "" {
		r.b.NamePort(ec, c.name)
	}
	if err := r.b.Err(); err != nil {
		return r.errAt(line, fieldA, err)
	}
	r.links++
	return nil
}

// graph finishes the build; a node whose declared ports are fewer than its
// links use is an error at the node's own line.
func (r *resolver) graph(declared map[NodeID]int, lines map[NodeID]int, field func(NodeID) string) (*Graph, error) {
	// In node order, not map order: with several offending nodes the
	// error must name the same one every time.
	for _, id := range slices.Sorted(maps.Keys(declared)) {
		want := declared[id]
		if have := len(r.b.ports[id]); want > 0 && have > want {
			return nil, r.errf(lines[id], field(id), ErrBadPort, "declares %d ports but a link uses port %d", want, have)
		}
	}
	g, err := r.b.Graph()
	if err != nil {
		return nil, r.errAt(0, "", err)
	}
	return g, nil
}
