package topo

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// reciprocalRef is reciprocal as it was before the edges were grouped by
// their data's fingerprint: each reverse edge compared with every
// unpaired edge between the same ports. probes counts the comparisons.
func reciprocalRef(edges []*gmlEdge, native bool) (skip []bool, probes int) {
	skip = make([]bool, len(edges))
	if native {
		return skip, 0
	}
	type end struct{ src, dst, sport, dport string }
	open := map[end][]int{}
	for i, e := range edges {
		if !e.directed {
			continue
		}
		rev := end{e.dst, e.src, e.dport, e.sport}
		if cand := open[rev]; len(cand) > 0 {
			if j := slices.IndexFunc(cand, func(j int) bool { probes++; return edges[j].data.equal(e.data) }); j >= 0 {
				open[rev] = slices.Delete(cand, j, j+1)
				skip[i] = true
				continue
			}
		}
		k := end{e.src, e.dst, e.sport, e.dport}
		open[k] = append(open[k], i)
	}
	return skip, probes
}

// TestReciprocalSameAsBefore: on random small edge lists (three nodes,
// two named ports, defaults of two keys, data of three, values that equal
// the defaults or are empty, directed and undirected edges, half of them
// the reverse of an earlier one with its data maybe changed), reciprocal
// pairs exactly the edges the former pairwise comparison paired.
func TestReciprocalSameAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	runs := 20000
	if testing.Short() {
		runs = 2000
	}
	paired := 0
	for run := range runs {
		defs := map[string]string{}
		for _, k := range []string{"x", "y"} {
			if rng.IntN(2) == 0 {
				defs[k] = pick("", "1", "2")
			}
		}
		edges := make([]*gmlEdge, 1+rng.IntN(16))
		for i := range edges {
			e := &gmlEdge{src: pick("a", "b", "c"), dst: pick("a", "b"), directed: rng.IntN(5) > 0,
				data: gmlData{own: map[string]string{}, defs: defs}}
			if rng.IntN(4) == 0 {
				e.sport, e.dport = pick("", "p", "q"), pick("", "p")
			}
			if i > 0 && rng.IntN(2) == 0 {
				// the reverse of an earlier edge, its data maybe changed
				f := edges[rng.IntN(i)]
				e.src, e.dst, e.sport, e.dport = f.dst, f.src, f.dport, f.sport
				for k, v := range f.data.own {
					e.data.own[k] = v
				}
			}
			for _, k := range []string{"x", "y", "z"} {
				switch rng.IntN(8) {
				case 0:
					e.data.own[k] = pick("", "1", "2")
				case 1:
					delete(e.data.own, k)
				case 2:
					if v, ok := defs[k]; ok {
						e.data.own[k] = v
					}
				}
			}
			edges[i] = e
		}
		for _, native := range []bool{false, true} {
			want, _ := reciprocalRef(edges, native)
			got, _ := reciprocal(edges, native)
			if !slices.Equal(got, want) {
				var b strings.Builder
				for i, e := range edges {
					fmt.Fprintf(&b, "\n%d: %s:%s -> %s:%s directed %v data %v", i, e.src, e.sport, e.dst, e.dport, e.directed, e.data.own)
				}
				t.Fatalf("run %d, native %v, defaults %v: skip %v, before %v%s", run, native, defs, got, want, b.String())
			}
			for _, s := range got {
				if s {
					paired++
				}
			}
		}
	}
	if paired < runs {
		t.Errorf("only %d edges paired in %d runs: the inputs hardly test pairing", paired, runs)
	}
}

// reciprocalDoc is k directed edges a->b and then k b->a, the data of
// every edge its own unless pair, when b->a i repeats a->b i.
func reciprocalDoc(k int, pair bool) []byte {
	var b strings.Builder
	b.WriteString(`<graphml><key id="x" for="edge" attr.name="x"/><graph edgedefault="directed"><node id="a"/><node id="b"/>` + "\n")
	for i := range k {
		fmt.Fprintf(&b, "<edge source=\"a\" target=\"b\"><data key=\"x\">%d</data></edge>\n", i)
	}
	for i := range k {
		v := "r" + fmt.Sprint(i)
		if pair {
			v = fmt.Sprint(i)
		}
		fmt.Fprintf(&b, "<edge source=\"b\" target=\"a\"><data key=\"x\">%s</data></edge>\n", v)
	}
	b.WriteString("</graph></graphml>\n")
	return []byte(b.String())
}

// TestReciprocalLinear: k edges a->b and k b->a, with data that differs
// (no pair) or matches in the other order (k pairs). Pairing once
// compared each reverse edge with every unpaired one, k² comparisons
// (k = 20,000, a 2.5 MB file: 27 s); now it looks at one candidate per
// pair. Counted, not timed. The file then loads, each no-port edge taking
// its nodes' next free port without searching from port 1 again.
func TestReciprocalLinear(t *testing.T) {
	k := 20000
	if testing.Short() {
		k = 2000
	}
	for _, pair := range []bool{false, true} {
		edges := make([]*gmlEdge, 2*k)
		defs := map[string]string{}
		for i := range k {
			fwd, rev := fmt.Sprint(i), "r"+fmt.Sprint(i)
			if pair {
				fwd, rev = fmt.Sprint(k-1-i), fmt.Sprint(i)
			}
			edges[i] = &gmlEdge{src: "a", dst: "b", directed: true, data: gmlData{own: map[string]string{"x": fwd}, defs: defs}}
			edges[k+i] = &gmlEdge{src: "b", dst: "a", directed: true, data: gmlData{own: map[string]string{"x": rev}, defs: defs}}
		}
		skip, probes := reciprocal(edges, false)
		if n := countTrue(skip); pair && n != k || !pair && n != 0 {
			t.Errorf("pair %v: %d edges paired", pair, n)
		}
		if probes > len(edges) {
			t.Errorf("pair %v: %d candidates looked at for %d edges", pair, probes, len(edges))
		}
		// the measure catches the quadratic pairing, on a smaller k
		const small = 500
		if _, before := reciprocalRef(append(edges[:small:small], edges[k:k+small]...), false); before < small*small/4 {
			t.Errorf("pair %v: the former pairing made %d comparisons for k = %d, want k²/4 or more", pair, before, small)
		}
	}
	g, err := Decode(reciprocalDoc(k, false), "recip.graphml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g.NumLinks() != 2*k {
		t.Errorf("%d links, want %d", g.NumLinks(), 2*k)
	}
	g, err = Decode(reciprocalDoc(k, true), "recip.graphml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g.NumLinks() != k {
		t.Errorf("%d links, want %d", g.NumLinks(), k)
	}
}

func countTrue(s []bool) int {
	n := 0
	for _, v := range s {
		if v {
			n++
		}
	}
	return n
}

// TestNextPortLinear: k links on a node, each on its next free port (some
// named, so skipped), look at a few ports each, not at every port from 1:
// k²/2 in all (1.8×10⁹ here).
func TestNextPortLinear(t *testing.T) {
	const k = 60000
	b := NewBuilder("x")
	a, c := b.AddNode("a", Switch), b.AddNode("c", Switch)
	for p := 3; p <= k; p += 7 {
		b.NamePort(End{a, Port(p)}, fmt.Sprint("e", p))
	}
	named := (k-3)/7 + 1
	links := 0
	for ; links < k-named && b.Err() == nil; links++ {
		b.Connect(a, c)
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if g.NumLinks() != k-named || g.Node(a).Ports != k {
		t.Errorf("%d links, %d ports, want %d and %d", g.NumLinks(), g.Node(a).Ports, k-named, k)
	}
	if p, _ := g.PortLink(a, 3); p != NoLink {
		t.Error("a named port was connected")
	}
	// two calls a link, each looking at the port the last one took and
	// the next, plus the named ports passed
	if b.scanned > 5*k {
		t.Errorf("nextPort looked at %d ports for %d links", b.scanned, links)
	}
	t.Logf("%d links: nextPort looked at %d ports", links, b.scanned)
}

// TestFingerprintIsEqual: two edges' data have equal fingerprints exactly
// when equal says their data are equal, for names and values that would
// run together if they were not each preceded by their length.
func TestFingerprintIsEqual(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	words := []string{"", "a", "b", "ab", "a\x01", "\x01", "\x01b", "\x00"}
	random := func(defs map[string]string) gmlData {
		d := gmlData{own: map[string]string{}, defs: defs}
		for range rng.IntN(4) {
			d.own[words[rng.IntN(len(words))]] = words[rng.IntN(len(words))]
		}
		return d
	}
	same := 0
	for range 200000 {
		defs := random(nil).own
		d, e := random(defs), random(defs)
		fd, _ := d.fingerprint(nil)
		fe, _ := e.fingerprint(nil)
		if eq := d.equal(e); eq != (fd == fe) {
			t.Fatalf("%q and %q over defaults %q: equal %v, fingerprints %q and %q", d.own, e.own, defs, eq, fd, fe)
		} else if eq {
			same++
		}
	}
	if same < 1000 {
		t.Errorf("only %d equal pairs: the test hardly tests equality", same)
	}
}
