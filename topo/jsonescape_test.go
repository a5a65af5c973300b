package topo

import (
	"errors"
	"testing"
)

// TestJSONEscapes: a native JSON file is read as JSON reads it. The
// YAML parser that reads it refused two escapes JSON has: \/ (a '/',
// which PHP's json_encode and others write) and a surrogate pair
// (\ud83d\ude00, how Python's json.dumps writes a character beyond
// U+FFFF by default): "found unknown escape character", "found invalid
// Unicode character escape code".
func TestJSONEscapes(t *testing.T) {
	data := `{"name": "lab\/1",
 "nodes": [{"name": "s\ud83d\ude00", "role": "a\\/b"}, {"name": "h\/1", "kind": "host"}],
 "links": [["s\ud83d\ude00", "h\/1"]]}`
	g, err := Decode([]byte(data), "lab.json", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Name != "lab/1" {
		t.Errorf("name %q, want lab/1", g.Name)
	}
	s, ok := g.Lookup("s\U0001F600")
	if !ok || g.Node(s).Role != `a\/b` {
		t.Fatalf("node s\U0001F600: found %v", ok)
	}
	if _, ok := g.Lookup("h/1"); !ok || g.NumLinks() != 1 {
		t.Fatalf("node h/1: found %v, %d links", ok, g.NumLinks())
	}
	// YAML that is not JSON keeps its own quoting: in single quotes a
	// backslash is itself
	y := "nodes:\n  - {name: 'a\\/b\\ud83d\\ude00'}\n"
	g, err = Decode([]byte(y), "lab.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g.Lookup(`a\/b\ud83d\ude00`); !ok {
		t.Errorf("single-quoted YAML name not kept as written: %q", g.Node(0).Name)
	}
	// a lone surrogate is no character: still an error, on one line
	_, err = Decode([]byte(`{"nodes": [{"name": "a\ud83d"}]}`), "lone.json", LoadOptions{})
	if !errors.Is(err, ErrSyntax) {
		t.Errorf("lone surrogate: %v", err)
	}
}
