package dumbnet

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCountersDocumented: docs/dumbnet.md's Counters section names every
// counter the code keeps, and only those. The code's are the string
// literals given to Counters.Inc and Add and the keys Switch.Counters
// sets itself.
func TestCountersDocumented(t *testing.T) {
	code := map[string]bool{}
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		inCounters := false
		ast.Inspect(af, func(n ast.Node) bool {
			var lit ast.Expr
			switch n := n.(type) {
			case *ast.FuncDecl:
				inCounters = n.Name.Name == "Counters"
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Inc" || sel.Sel.Name == "Add") && len(n.Args) > 0 {
					lit = n.Args[0]
				}
			case *ast.AssignStmt:
				if ix, ok := n.Lhs[0].(*ast.IndexExpr); ok && inCounters {
					lit = ix.Index
				}
			}
			if bl, ok := lit.(*ast.BasicLit); ok && bl.Kind == token.STRING {
				s, _ := strconv.Unquote(bl.Value)
				code[s] = true
			}
			return true
		})
	}
	if len(code) < 90 {
		t.Fatalf("found only %d counters in the code: %v", len(code), code)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "dumbnet.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Counters\n")
	if !ok {
		t.Fatal("docs/dumbnet.md has no Counters section")
	}
	sec, _, _ = strings.Cut(sec, "The number of discovery probes is no counter")
	doc := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(sec, -1) {
		doc[m[1]] = true
	}
	var undocumented, unknown []string
	for c := range code {
		if !doc[c] {
			undocumented = append(undocumented, c)
		}
	}
	for d := range doc {
		if !code[d] {
			unknown = append(unknown, d)
		}
	}
	slices.Sort(undocumented)
	slices.Sort(unknown)
	if len(undocumented) > 0 || len(unknown) > 0 {
		t.Errorf("counters not in docs/dumbnet.md: %v; named there but not counted: %v", undocumented, unknown)
	}
}
