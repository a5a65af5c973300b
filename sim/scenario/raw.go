package scenario

import (
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// The raw layer: what the YAML says, with the line of every value, before
// any name or unit is resolved (containerlab's parse-then-resolve habit).

// rawError is what the raw layer finds wrong with the value at a line.
// Parse reports it as FILE:LINE: bad scenario: MESSAGE, as it does yaml's
// own errors; the raw layer does not know the field's path.
type rawError struct {
	line int
	msg  string
}

func (e *rawError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

func rawErrorf(line int, format string, args ...any) error {
	return &rawError{line: line, msg: fmt.Sprintf(format, args...)}
}

// scalar is a YAML scalar and where it was.
type scalar struct {
	V    string
	Line int
	Set  bool
}

func (s *scalar) UnmarshalYAML(n *yaml.Node) error {
	line := n.Line
	n = deref(n)
	if n.Kind != yaml.ScalarNode {
		return rawErrorf(line, "expected a single value, got a %s", kindName(n.Kind))
	}
	s.V, s.Line, s.Set = n.Value, line, true
	return nil
}

// deref follows an alias (*a) to the node its anchor (&a) names. yaml
// does so itself for the fields it decodes, but not for the nodes our
// own UnmarshalYAML methods walk into. An anchor never names an alias.
func deref(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// names is one name or a list of names ("h1", [h1, h2], all).
type names struct {
	V    []scalar
	Line int
	Set  bool
}

func (s *names) UnmarshalYAML(n *yaml.Node) error {
	s.Line, s.Set = n.Line, true
	n = deref(n)
	switch n.Kind {
	case yaml.ScalarNode:
		s.V = []scalar{{V: n.Value, Line: s.Line, Set: true}}
		return nil
	case yaml.SequenceNode:
		for _, c := range n.Content {
			var v scalar
			if err := v.UnmarshalYAML(c); err != nil {
				return err
			}
			s.V = append(s.V, v)
		}
		return nil
	}
	return rawErrorf(s.Line, "expected a name or a list of names, got a %s", kindName(n.Kind))
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	}
	return "document"
}

type rawScenario struct {
	Name      scalar            `yaml:"name"`
	Topology  scalar            `yaml:"topology"`
	Scheme    scalar            `yaml:"scheme"`
	Params    map[string]scalar `yaml:"params"`
	Seed      scalar            `yaml:"seed"`
	Duration  scalar            `yaml:"duration"`
	Links     rawLinkParams     `yaml:"links"`
	TCP       rawTCP            `yaml:"tcp"`
	Link      []rawLink         `yaml:"link"`
	Timing    []rawTiming       `yaml:"timing"`
	Workloads []rawWorkload     `yaml:"workloads"`
	Failures  []rawFailure      `yaml:"failures"`
	Captures  []rawCapture      `yaml:"captures"`
}

type rawLinkParams struct {
	Rate    scalar `yaml:"rate"`
	Delay   scalar `yaml:"delay"`
	Queue   scalar `yaml:"queue"`
	Loss    scalar `yaml:"loss"`
	Corrupt scalar `yaml:"corrupt"`
}

// rawTCP tunes every host's TCP (host.TCPConfig).
type rawTCP struct {
	RecvWindow  scalar `yaml:"recv_window"`
	InitialCwnd scalar `yaml:"initial_cwnd"`
	InitialRTO  scalar `yaml:"initial_rto"`
	MinRTO      scalar `yaml:"min_rto"`
	MaxRTO      scalar `yaml:"max_rto"`
	DelayedACK  scalar `yaml:"delayed_ack"`
	// DelayedACKTimeout is the delayed-ACK timer.
	DelayedACKTimeout scalar `yaml:"delayed_ack_timeout"`
}

type rawLink struct {
	Ends          names `yaml:"ends"`
	rawLinkParams `yaml:",inline"`
	line          int
}

func (r *rawLink) UnmarshalYAML(n *yaml.Node) error {
	type plain rawLink
	r.line = n.Line
	return decodeStrict(n, (*plain)(r))
}

type rawTiming struct {
	Nodes      names  `yaml:"nodes"`
	Role       scalar `yaml:"role"`
	Kind       scalar `yaml:"kind"`
	Latency    scalar `yaml:"latency"`
	CutThrough scalar `yaml:"cut_through"`
	line       int
}

func (r *rawTiming) UnmarshalYAML(n *yaml.Node) error {
	type plain rawTiming
	r.line = n.Line
	return decodeStrict(n, (*plain)(r))
}

// rawApp holds the fields of every workload kind; each kind checks that
// only its own fields are set.
type rawApp struct {
	From     names  `yaml:"from"`
	To       names  `yaml:"to"`
	Hosts    names  `yaml:"hosts"`
	At       scalar `yaml:"at"`
	Count    scalar `yaml:"count"`
	Interval scalar `yaml:"interval"`
	Size     scalar `yaml:"size"`
	Rate     scalar `yaml:"rate"`
	Duration scalar `yaml:"duration"`
	Bytes    scalar `yaml:"bytes"`
	Port     scalar `yaml:"port"`
	Request  scalar `yaml:"request"`
	Response scalar `yaml:"response"`
}

// rawWorkload is a one-key mapping: {ping: {...}}, {tcp: {...}}, ...
type rawWorkload struct {
	Kind string
	App  rawApp
	line int
}

func (w *rawWorkload) UnmarshalYAML(n *yaml.Node) error {
	w.line = n.Line
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		return rawErrorf(n.Line, "a workload is one of {ping: ...}, {udp: ...}, {tcp: ...}, {tcp_rr: ...}, {shuffle: ...}")
	}
	w.Kind = deref(n.Content[0]).Value
	dec := deref(n.Content[1])
	if dec.Kind != yaml.MappingNode {
		return rawErrorf(n.Content[1].Line, "workload %s: expected a mapping of its settings", w.Kind)
	}
	// Decode strictly: an unknown setting is a mistake worth reporting.
	return decodeStrict(dec, &w.App)
}

// rawFailure is {at: 2s, link: [s1, s2], down} or {at: 5s, node: s3, up};
// "state: down" works too.
type rawFailure struct {
	At    scalar
	Link  names
	Node  scalar
	State scalar
	line  int
}

func (f *rawFailure) UnmarshalYAML(n *yaml.Node) error {
	f.line = n.Line
	if n.Kind != yaml.MappingNode {
		return rawErrorf(n.Line, "a failure is a mapping like {at: 2s, link: [s1, s2], down}")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if seen[k.Value] {
			return rawErrorf(k.Line, "failure: %q given twice", k.Value)
		}
		seen[k.Value] = true
		var err error
		switch k.Value {
		case "at":
			err = f.At.UnmarshalYAML(v)
		case "link":
			err = f.Link.UnmarshalYAML(v)
		case "node":
			err = f.Node.UnmarshalYAML(v)
		case "state":
			// After a bare down/up, a state: would silently win.
			if f.State.Set {
				return rawErrorf(k.Line, "failure: state given twice")
			}
			err = f.State.UnmarshalYAML(v)
		case "down", "up":
			if v := deref(v); v.Tag != "!!null" && !(v.Tag == "!!bool" && v.Value == "true") {
				return rawErrorf(k.Line, "failure: write a bare %q (or state: %s)", k.Value, k.Value)
			}
			if f.State.Set {
				return rawErrorf(k.Line, "failure: state given twice")
			}
			f.State = scalar{V: k.Value, Line: k.Line, Set: true}
		default:
			return rawErrorf(k.Line, "failure: unknown field %q (at, link, node, down, up, state)", k.Value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

type rawCapture struct {
	Node scalar `yaml:"node"`
	Port scalar `yaml:"port"`
	line int
}

func (r *rawCapture) UnmarshalYAML(n *yaml.Node) error {
	type plain rawCapture
	r.line = n.Line
	return decodeStrict(n, (*plain)(r))
}

// decodeStrict decodes n into v and rejects unknown fields, which
// yaml.Node.Decode alone does not.
func decodeStrict(n *yaml.Node, v any) error {
	if n.Kind == yaml.MappingNode {
		fields := knownFields(v)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if _, ok := fields[k.Value]; !ok {
				return rawErrorf(k.Line, "unknown field %q", k.Value)
			}
		}
	}
	return n.Decode(v)
}

// knownFields lists the yaml keys of the struct v points to, following
// inline fields.
func knownFields(v any) map[string]struct{} {
	m := map[string]struct{}{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("yaml")
			name, opts, _ := strings.Cut(tag, ",")
			if opts == "inline" {
				walk(f.Type)
				continue
			}
			if name == "" || name == "-" {
				continue
			}
			m[name] = struct{}{}
		}
	}
	walk(reflect.TypeOf(v).Elem())
	return m
}
