package topo

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// ErrBadSpec reports a topology spec that cannot be parsed or names no
// known topology.
var ErrBadSpec = errors.New("bad topology spec")

// ErrTooLarge reports a spec or file whose graph would exceed MaxNodes or
// MaxLinks. The limits keep a typo (fattree:4800) from exhausting memory.
var ErrTooLarge = errors.New("topology too large")

// Limits on one graph. A node costs about 60 bytes and a link about 40, so
// the limits bound a graph to a few hundred MB.
const (
	MaxNodes = 4_000_000
	MaxLinks = 8_000_000
)

// MaxArg bounds every spec argument: no topology within MaxNodes has a
// count (switches, hosts, ports, levels) above it, since every generator
// builds at least that many nodes from each argument or refuses it (ports
// stop at MaxPorts).
const MaxArg = MaxNodes

// generator is one entry of the spec table: its argument names (optional
// ones after the required ones), what it builds and how to size it first.
type generator struct {
	name     string
	args     []string // argument names, for errors and help
	required int      // how many of args are required
	usage    string
	build    func(a []int, seed uint64) (*Graph, error)
	// size returns the node and link counts the arguments would produce,
	// checked against the limits before anything is allocated.
	size func(a []int) (nodes, links float64)
}

var generators = []generator{
	{"fattree", []string{"p"}, 1, "k-ary fat tree of p-port switches: 5p²/4 switches, p³/4 hosts",
		func(a []int, _ uint64) (*Graph, error) { return FatTree(a[0]) },
		func(a []int) (float64, float64) {
			p := float64(a[0])
			return 5*p*p/4 + p*p*p/4, p * p * p / 2 * 1.5
		}},
	{"leafspine", []string{"S", "L", "H"}, 3, "S spines, L leaves, H hosts per leaf",
		func(a []int, _ uint64) (*Graph, error) { return LeafSpine(a[0], a[1], a[2]) },
		func(a []int) (float64, float64) {
			s, l, h := float64(a[0]), float64(a[1]), float64(a[2])
			return s + l + l*h, s*l + l*h
		}},
	{"hyperx", []string{"k", "T"}, 1, "2-D HyperX: k×k switches, full mesh per row and column, T hosts per switch (default 24)",
		func(a []int, _ uint64) (*Graph, error) { return HyperX(a[0], argOr(a, 1, 24)) },
		func(a []int) (float64, float64) {
			k, t := float64(a[0]), float64(argOr(a, 1, 24))
			return k*k + k*k*t, k*k*(k-1) + k*k*t
		}},
	{"bcube", []string{"p", "l"}, 2, "server-centric BCube: l levels of p-port switches, p^l hosts with l NICs",
		func(a []int, _ uint64) (*Graph, error) { return BCube(a[0], a[1]) },
		func(a []int) (float64, float64) {
			h := pow(float64(a[0]), a[1])
			return h + float64(a[1])*h/float64(max(a[0], 1)), float64(a[1]) * h
		}},
	{"ciscodc", []string{"m", "a", "H"}, 2, "Cisco 3-tier: 2 cores, m aggregation modules, a access pairs per module, H hosts per access switch (default 24)",
		func(a []int, _ uint64) (*Graph, error) { return CiscoDCHosts(a[0], a[1], argOr(a, 2, 24)) },
		func(a []int) (float64, float64) {
			m, ac, h := float64(a[0]), float64(a[1]), float64(argOr(a, 2, 24))
			return 2 + 2*m + 2*m*ac*(1+h), 1 + 5*m + 5*m*ac + 2*m*ac*h
		}},
	{"cube", []string{"X", "Y", "Z", "H"}, 3, "3-D mesh of X×Y×Z switches, H hosts per switch (default 10)",
		func(a []int, _ uint64) (*Graph, error) { return Cube(a[0], a[1], a[2], argOr(a, 3, 10)) },
		gridSize},
	{"torus", []string{"X", "Y", "Z", "H"}, 3, "3-D torus of X×Y×Z switches, H hosts per switch (default 10)",
		func(a []int, _ uint64) (*Graph, error) { return Torus(a[0], a[1], a[2], argOr(a, 3, 10)) },
		gridSize},
	{"jellyfish", []string{"N", "K", "R"}, 3, "random regular graph of N K-port switches, R ports each to other switches, K-R hosts each (uses the seed)",
		func(a []int, seed uint64) (*Graph, error) { return Jellyfish(a[0], a[1], a[2], seed) },
		func(a []int) (float64, float64) {
			// n switches with k-r hosts each; n·r/2 switch links (at
			// most) and n·(k-r) host links
			n, k, r := float64(a[0]), float64(a[1]), float64(a[2])
			h := max(k-r, 0)
			return n * (1 + h), n*r/2 + n*h
		}},
	{"line", []string{"n"}, 1, "n switches in a line, 2 hosts each (Axon Fig. 4.2)",
		func(a []int, _ uint64) (*Graph, error) { return Line(a[0]) },
		func(a []int) (float64, float64) { n := float64(a[0]); return 3 * n, 3 * n }},
	{"ring", []string{"n"}, 1, "n switches in a ring, 2 hosts each (Axon Fig. 4.3)",
		func(a []int, _ uint64) (*Graph, error) { return Ring(a[0]) },
		func(a []int) (float64, float64) { n := float64(a[0]); return 3 * n, 3 * n }},
}

// named lists the fixed topologies from the seeds.
var named = map[string]struct {
	usage string
	build func() (*Graph, error)
}{
	"spain-fig2":      {"SPAIN Fig. 2: 7 switches, a one-level tree under s1 plus three cross-connects per non-root switch", SpainFig2},
	"spain-testbed":   {"SPAIN Fig. 4: core TS, rack switches S1..S3 with cross-connects, 23/28/29 hosts", SpainTestbed},
	"dumbnet-fig1":    {"DumbNet Fig. 1: switches S1..S5, hosts H1..H5 and the controller C3, with the paper's port numbers", DumbNetFig1},
	"dumbnet-testbed": {"DumbNet §7 testbed: 2 spines, 5 leaves, 5 hosts per leaf, 10 Gb/s", DumbNetTestbed},
}

func argOr(a []int, i, def int) int {
	if i < len(a) {
		return a[i]
	}
	return def
}

// pow is b^e for sizing, capped once past 1e18 (the limits are far
// below). A base of 0 or 1 returns at once: e comes from the spec and may
// be near MaxInt, and multiplying 1 by 1 that often would never finish.
func pow(b float64, e int) float64 {
	if e <= 0 {
		return 1
	}
	if b <= 1 {
		return b
	}
	r := 1.0
	for range e {
		r *= b
		if r > 1e18 {
			return r
		}
	}
	return r
}

func gridSize(a []int) (float64, float64) {
	x, y, z, h := float64(a[0]), float64(a[1]), float64(a[2]), float64(argOr(a, 3, 10))
	return x * y * z * (1 + h), 3*x*y*z + x*y*z*h
}

// SpecInfo describes one spec the parser accepts.
type SpecInfo struct {
	// Spec is the spec's shape: "fattree:p", "hyperx:k[,T]", "spain-fig2".
	Spec string `json:"spec"`
	// Usage says what it builds.
	Usage string `json:"usage"`
}

// SpecInfos describes every spec the parser accepts: the generators in
// table order, then the named topologies sorted by name.
func SpecInfos() []SpecInfo {
	var out []SpecInfo
	for _, g := range generators {
		spec := g.name + ":" + strings.Join(g.args[:g.required], ",")
		for _, a := range g.args[g.required:] {
			spec += "[," + a + "]"
		}
		out = append(out, SpecInfo{spec, g.usage})
	}
	var fixed []string
	for n := range named {
		fixed = append(fixed, n)
	}
	sort.Strings(fixed)
	for _, n := range fixed {
		out = append(out, SpecInfo{n, named[n].usage})
	}
	return out
}

// Specs describes every spec the parser accepts, one aligned line each,
// for help texts.
func Specs() []string {
	infos := SpecInfos()
	width := 0
	for _, s := range infos {
		width = max(width, len(s.Spec))
	}
	out := make([]string, len(infos))
	for i, s := range infos {
		out[i] = fmt.Sprintf("%-*s  %s", width, s.Spec, s.Usage)
	}
	return out
}

// Parse builds the topology a spec names: "fattree:4", "leafspine:2,5,5",
// "spain-testbed", ... (see Specs). The seed drives random generators
// (jellyfish); the others ignore it. Errors name the spec and the field.
func Parse(spec string, seed uint64) (*Graph, error) {
	return parse(spec, seed, MaxNodes, MaxLinks)
}

func parse(spec string, seed uint64, maxNodes, maxLinks float64) (*Graph, error) {
	s := strings.TrimSpace(spec)
	if nt, ok := named[s]; ok {
		return nt.build()
	}
	name, argstr, hasArgs := strings.Cut(s, ":")
	var gen *generator
	for i := range generators {
		if generators[i].name == name {
			gen = &generators[i]
		}
	}
	if gen == nil {
		if _, ok := named[name]; ok {
			return nil, fmt.Errorf("topo: spec %q: %w: %s takes no arguments", spec, ErrBadSpec, name)
		}
		return nil, fmt.Errorf("topo: spec %q: %w: unknown topology %q (known: %s)", spec, ErrBadSpec, name, knownNames())
	}
	if !hasArgs || argstr == "" {
		return nil, fmt.Errorf("topo: spec %q: %w: %s needs arguments %s", spec, ErrBadSpec, name, strings.Join(gen.args, ","))
	}
	fields := strings.Split(argstr, ",")
	if len(fields) < gen.required || len(fields) > len(gen.args) {
		return nil, fmt.Errorf("topo: spec %q: %w: %s takes %s, got %d", spec, ErrBadSpec, name, argCount(gen), len(fields))
	}
	a := make([]int, len(fields))
	for i, f := range fields {
		t := strings.TrimSpace(f)
		v, err := strconv.Atoi(t)
		switch {
		case errors.Is(err, strconv.ErrRange) && strings.HasPrefix(t, "-"):
			return nil, fmt.Errorf("topo: spec %q: %s: %w: must not be negative, got %s", spec, gen.args[i], ErrBadSpec, t)
		case errors.Is(err, strconv.ErrRange) || err == nil && v > MaxArg:
			// An integer all the same, just far too large: say how large
			// an argument may be, not that it is no number.
			return nil, fmt.Errorf("topo: spec %q: %s: %w: %s is out of range: every argument is 0..%d (the node limit)", spec, gen.args[i], ErrTooLarge, t, MaxArg)
		case err != nil:
			return nil, fmt.Errorf("topo: spec %q: %s: %w: %q is not an integer", spec, gen.args[i], ErrBadSpec, f)
		case v < 0:
			return nil, fmt.Errorf("topo: spec %q: %s: %w: must not be negative, got %d", spec, gen.args[i], ErrBadSpec, v)
		}
		a[i] = v
	}
	nodes, links := gen.size(a)
	if nodes > maxNodes || links > maxLinks {
		return nil, fmt.Errorf("topo: spec %q: %w: about %.3g nodes and %.3g links, limits %d and %d", spec, ErrTooLarge, nodes, links, int(maxNodes), int(maxLinks))
	}
	g, err := gen.build(a, seed)
	if err != nil {
		return nil, fmt.Errorf("topo: spec %q: %w", spec, err)
	}
	g.Name = s // the spec as given: "hyperx:3", not "hyperx:3,24"
	return g, nil
}

func argCount(g *generator) string {
	if g.required == len(g.args) {
		unit := "values"
		if g.required == 1 {
			unit = "value"
		}
		return fmt.Sprintf("%d %s (%s)", g.required, unit, strings.Join(g.args, ","))
	}
	return fmt.Sprintf("%d to %d values (%s)", g.required, len(g.args), strings.Join(g.args, ","))
}

func knownNames() string {
	var ns []string
	for _, g := range generators {
		ns = append(ns, g.name)
	}
	var fixed []string
	for n := range named {
		fixed = append(fixed, n)
	}
	sort.Strings(fixed)
	return strings.Join(append(ns, fixed...), ", ")
}

// IsSpec reports whether s has the shape of a spec (a known generator name
// followed by ':' or a named topology), as opposed to a file name.
func IsSpec(s string) bool {
	s = strings.TrimSpace(s)
	// a bare "fattree" is a spec missing its arguments, "spain-fig2:1"
	// one given arguments it does not take: Parse says which
	name, _, _ := strings.Cut(s, ":")
	if _, ok := named[name]; ok {
		return true
	}
	for _, g := range generators {
		if g.name == name {
			return true
		}
	}
	return false
}

// Resolve builds a topology from a spec or loads it from a file: an
// existing file wins, then anything shaped like a spec is parsed, and
// otherwise the error says that neither worked.
func Resolve(specOrPath string, seed uint64) (*Graph, error) {
	return ResolveWith(specOrPath, seed, LoadOptions{ZooHosts: DefaultZooHosts})
}

// ResolveWith is Resolve with options for loading files.
func ResolveWith(specOrPath string, seed uint64, o LoadOptions) (*Graph, error) {
	// A regular file or a named pipe is read, whatever its name (a pipe
	// named "topo" has no dot or slash to tell it from a spec).
	if fi, err := os.Stat(specOrPath); err == nil && (fi.Mode().IsRegular() || fi.Mode()&os.ModeNamedPipe != 0) {
		return LoadWith(specOrPath, o)
	}
	if IsSpec(specOrPath) {
		if o.ZooHostsSet {
			return nil, fmt.Errorf("topo: spec %q: %w: hosts per switch apply only to GraphML files without edgefabric annotations (Topology Zoo); a spec places its own hosts", specOrPath, ErrNoEffect)
		}
		return Parse(specOrPath, seed)
	}
	if strings.ContainsAny(specOrPath, "/.\\") {
		return LoadWith(specOrPath, o) // reports the missing file
	}
	return nil, fmt.Errorf("topo: %q: %w: not a file and not a spec (known topologies: %s)", specOrPath, ErrBadSpec, knownNames())
}
