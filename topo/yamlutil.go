package topo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"unicode/utf16"

	"gopkg.in/yaml.v3"
)

// Helpers over yaml.v3 nodes: the loaders walk the node tree rather than
// decode into structs, so that every error carries the line of the value
// at fault and unknown or duplicate keys are caught.

// parseYAML parses data into its document's top node. A syntax error
// becomes a posError with the parser's line.
func parseYAML(file string, data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(jsonForYAML(data), &doc); err != nil {
		return nil, &posError{file: file, line: yamlErrLine(err), field: "syntax", err: fmt.Errorf("%w: %s", ErrSyntax, yamlErrText(err))}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &posError{file: file, line: 1, field: "document", err: fmt.Errorf("%w: empty file", ErrSyntax)}
	}
	return deref(doc.Content[0]), nil
}

// jsonForYAML rewrites, in a document that is JSON, the two string
// escapes JSON has and yaml.v3 does not read (go-yaml issue 840): \/, a
// '/' (PHP's json_encode writes it), and a surrogate pair such as
// \ud83d\ude00, how JSON writers that keep to ASCII (Python's json.dumps
// by default) write a character beyond U+FFFF, which becomes YAML's
// \U0001F600. Anything else is returned as it is: only in valid JSON is
// every '"' outside a string the start of one and every backslash inside
// one an escape, so YAML's own quoting is never taken for JSON's. Lines
// stay where they were.
func jsonForYAML(data []byte) []byte {
	if !bytes.Contains(data, []byte(`\/`)) && !bytes.Contains(data, []byte(`\ud`)) && !bytes.Contains(data, []byte(`\uD`)) {
		return data
	}
	if !json.Valid(bytes.TrimPrefix(data, []byte("\ufeff"))) {
		return data
	}
	out := make([]byte, 0, len(data))
	in := false // inside a string
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\':
			// valid JSON: an escape, complete
			switch n := data[i+1]; {
			case n == '/':
				out = append(out, '/')
				i++
				continue
			case n == 'u' && i+12 <= len(data) && data[i+6] == '\\' && data[i+7] == 'u':
				hi, lo := hex4(data[i+2:i+6]), hex4(data[i+8:i+12])
				if r := utf16.DecodeRune(hi, lo); r != 0xFFFD {
					out = fmt.Appendf(out, `\U%08X`, r)
					i += 11
					continue
				}
			}
			out = append(out, c, data[i+1])
			i++
			continue
		}
		out = append(out, c)
	}
	return out
}

// hex4 reads four hex digits (valid JSON has them after \u).
func hex4(b []byte) rune {
	v, _ := strconv.ParseUint(string(b), 16, 16)
	return rune(v)
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

func yamlErrLine(err error) int {
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

var yamlPrefixRE = regexp.MustCompile(`^yaml: (line \d+: )?`)

func yamlErrText(err error) string { return yamlPrefixRE.ReplaceAllString(err.Error(), "") }

// deref follows aliases (a bounded number of times: yaml.v3 rejects cycles,
// the bound is a second line of defence).
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 8; i++ {
		n = n.Alias
	}
	return n
}

type kv struct {
	key string
	k   *yaml.Node
	v   *yaml.Node
}

// mapping returns a mapping's entries in document order, rejecting
// duplicate keys. A merge key (<<: *anchor, or a list of them) brings in
// the entries of the mappings it names that the mapping does not give
// itself, at its own place, the first mapping named winning.
func (r *resolver) mapping(n *yaml.Node, field string) ([]kv, error) {
	return r.mappingDepth(n, field, 0)
}

// maxMergeDepth bounds merges of merges, and maxMerged the entries all
// merges of a file bring in: merges of lists of merges grow exponentially
// with depth (a "billion laughs" of a few lines).
const (
	maxMergeDepth = 16
	maxMerged     = 1 << 20
)

func (r *resolver) mappingDepth(n *yaml.Node, field string, depth int) ([]kv, error) {
	n = deref(n)
	if isNull(n) {
		return nil, nil // "key:" with nothing after it: an empty mapping
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, r.errf(line(n), field, ErrSyntax, "want a mapping, got %s", kindName(n))
	}
	out := make([]kv, 0, len(n.Content)/2)
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := deref(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode {
			return nil, r.errf(line(k), field, ErrSyntax, "mapping keys must be plain strings")
		}
		if k.Tag == "!!merge" {
			continue
		}
		if seen[k.Value] {
			return nil, r.errf(k.Line, joinField(field, k.Value), ErrSyntax, "key %q given twice", k.Value)
		}
		seen[k.Value] = true
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k.Tag != "!!merge" {
			out = append(out, kv{k.Value, k, v})
			continue
		}
		if depth >= maxMergeDepth {
			return nil, r.errf(k.Line, joinField(field, "<<"), ErrSyntax, "merges nested more than %d deep", maxMergeDepth)
		}
		srcs := []*yaml.Node{v}
		if v != nil && v.Kind == yaml.SequenceNode {
			srcs = v.Content
		}
		for _, src := range srcs {
			if src = deref(src); src == nil || src.Kind != yaml.MappingNode {
				return nil, r.errf(k.Line, joinField(field, "<<"), ErrSyntax, "a merge takes a mapping or a list of mappings, got %s", kindName(src))
			}
			ents, err := r.mappingDepth(src, field, depth+1)
			if err != nil {
				return nil, err
			}
			if r.merged += len(ents); r.merged > maxMerged {
				return nil, r.errf(k.Line, joinField(field, "<<"), ErrTooLarge, "merge keys bring in more than %d entries", maxMerged)
			}
			for _, e := range ents {
				if !seen[e.key] {
					seen[e.key] = true
					out = append(out, e)
				}
			}
		}
	}
	return out, nil
}

func (r *resolver) sequence(n *yaml.Node, field string) ([]*yaml.Node, error) {
	n = deref(n)
	if isNull(n) {
		return nil, nil // "key:" with nothing after it: an empty list
	}
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil, r.errf(line(n), field, ErrSyntax, "want a list, got %s", kindName(n))
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		out[i] = deref(c)
	}
	return out, nil
}

func (r *resolver) scalar(n *yaml.Node, field string) (string, error) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return "", r.errf(line(n), field, ErrSyntax, "want a single value, got %s", kindName(n))
	}
	return n.Value, nil
}

func (r *resolver) boolean(n *yaml.Node, field string) (bool, error) {
	s, err := r.scalar(n, field)
	if err != nil {
		return false, err
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, r.errf(line(n), field, ErrBadValue, "%s is not true or false", quote(s))
	}
	return v, nil
}

func isNull(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func line(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}

func kindName(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return quote(n.Value) // bounded: it may be a whole file
	}
	return "an alias"
}

func joinField(parent, child string) string {
	if parent == "" {
		return child
	}
	return parent + "." + child
}

func index(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }
