package scenario

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// nullValue is a value the file leaves empty ("duration:", "~", "- ")
// where one is needed. yaml leaves such a value at its zero without
// calling our decoders, so it would pass as "not given" (reported at the
// wrong line, or, for a list entry, dropped without a word).
type nullValue struct {
	line  int
	field string
	entry bool
}

func (e *nullValue) Error() string {
	if e.entry {
		return fmt.Sprintf("empty entry (remove the %q, or give the entry)", "-")
	}
	return "no value"
}

// emptySections are the top-level fields an empty value may leave out
// ("failures:" with nothing under it: none).
var emptySections = map[string]bool{
	"params": true, "links": true, "link": true, "timing": true,
	"workloads": true, "failures": true, "captures": true,
}

// findNull returns the first empty value of doc, in document order, that
// the scenario cannot take: any list entry, and any field's value but a
// top-level section's and a failure's bare down or up.
func findNull(doc *yaml.Node) *nullValue {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	var walk func(n *yaml.Node, path string, failure bool) *nullValue
	walk = func(n *yaml.Node, path string, failure bool) *nullValue {
		switch n.Kind {
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				if isNull(c) {
					return &nullValue{line: c.Line, field: p, entry: true}
				}
				if e := walk(c, p, path == "failures"); e != nil {
					return e
				}
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				if isNull(v) {
					if path == "" && emptySections[k.Value] || failure && (k.Value == "down" || k.Value == "up") {
						continue
					}
					return &nullValue{line: k.Line, field: p}
				}
				if e := walk(v, p, false); e != nil {
					return e
				}
			}
		}
		return nil
	}
	return walk(doc.Content[0], "", false)
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}
