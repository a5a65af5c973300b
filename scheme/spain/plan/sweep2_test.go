package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/paths"
	"github.com/edgefabric/edgefabric/topo"
)

// Tests written in a second mutation sweep of this package: each pins a
// behaviour that some small change to the code left unnoticed.

// triangle is s1, s2, s3 joined in a triangle, hosts on s2 and s3 only,
// links in the order s1s2 (0), s1s3 (1), s2s3 (2), s2h2 (3), s3h3 (4);
// ports: s1:1-s2:1, s1:2-s3:1, s2:2-s3:2, hosts on port 3.
//
// By hand, with k = 1 and the serial packer: s1 is the root (lowest
// bridge ID), so VLAN 1 is s1s2, s1s3. The one pair (s2, s3) has one
// path, the direct link, which VLAN 1 lacks: VLAN 2 is s2s3 alone.
// Coverage is 3/3 (the path, plus the tree path s2-s1-s3 hosts fall back
// to), STP coverage 2/3, α = 2.
func triangle(t *testing.T) *Plan {
	t.Helper()
	b := topo.NewBuilder("tri")
	s1, s2, s3 := b.AddNode("s1", topo.Switch), b.AddNode("s2", topo.Switch), b.AddNode("s3", topo.Switch)
	b.Connect(s1, s2)
	b.Connect(s1, s3)
	b.Connect(s2, s3)
	b.Connect(s2, b.AddNode("h2", topo.Host))
	b.Connect(s3, b.AddNode("h3", topo.Host))
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compute(g, Options{K: 1, Trials: 1, Seed: 1, Serial: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The four files --out writes, byte for byte, for the triangle: every
// JSON key the documentation names, omitted empty fields, "tagged": []
// (not null) on a port with no tagged VLAN, one VLAN, switch port or edge
// node per line, and the closing newline.
func TestTriangleFiles(t *testing.T) {
	p := triangle(t)
	if p.Coverage != 1 || p.STPCoverage != 2.0/3 || p.NumVLANs != 2 || !p.AlphaExact {
		t.Fatalf("coverage %v, STP %v, %d VLANs, alpha exact %v; want 1, 2/3, 2, true", p.Coverage, p.STPCoverage, p.NumVLANs, p.AlphaExact)
	}
	p.Seconds = Timing{} // the only field that is not reproducible
	dir := t.TempDir()
	if _, err := p.WriteDir(dir, &NCP{FailProb: 0.5, Trials: 2, STP: 0.25, SPAIN: 0}, false); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"plan.json": `{
  "topology": "tri",
  "k": 1,
  "k_mode": "fixed",
  "ties": "pair",
  "alpha": 2,
  "alpha_exact": true,
  "edge_nodes": 2,
  "fabric_links": 3,
  "pairs": 1,
  "num_paths": 1,
  "stp_root": "s1",
  "num_vlans": 2,
  "skip_vlans": [],
  "max_switch_vlans": 2,
  "max_switch_vlans_at": "s2",
  "coverage": 1,
  "stp_coverage": 0.6666666666666666,
  "packing": {
    "algorithm": "serial",
    "trials": 1,
    "best_trial": 0,
    "best_strategy": "first-fit",
    "trial_vlans": [
      2
    ],
    "pruned": 0,
    "loose_paths": 0
  },
  "seconds": {
    "paths": 0,
    "pack": 0,
    "prune": 0,
    "verify": 0
  },
  "vlans": [
    {"id": 1, "links": [["s1", "s2"], ["s1", "s3"]], "ports": [[1, 1], [2, 1]]},
    {"id": 2, "links": [["s2", "s3"]], "ports": [[2, 2]]}
  ],
  "ncp": {
    "fail_prob": 0.5,
    "trials": 2,
    "stp": 0.25,
    "spain": 0
  }
}
`,
		"switches.json": `{
  "topology": "tri",
  "switches": [
    {"name": "s1", "vlans": [1],
     "ports": [
      {"port":1,"peer":"s2:1","untagged":1,"tagged":[]},
      {"port":2,"peer":"s3:1","untagged":1,"tagged":[]}]},
    {"name": "s2", "vlans": [1,2],
     "ports": [
      {"port":1,"peer":"s1:1","untagged":1,"tagged":[]},
      {"port":2,"peer":"s3:2","tagged":[2]},
      {"port":3,"peer":"h2:1","host_port":true,"untagged":1,"tagged":[2]}]},
    {"name": "s3", "vlans": [1,2],
     "ports": [
      {"port":1,"peer":"s1:2","untagged":1,"tagged":[]},
      {"port":2,"peer":"s2:2","tagged":[2]},
      {"port":3,"peer":"h3:1","host_port":true,"untagged":1,"tagged":[2]}]}
  ]
}
`,
		"switches.txt": `SPAIN switch configuration for tri
Turn 802.1D off (SPAIN §5.5). "untagged none": the port is not in VLAN 1 (remove it from the factory default).

s1: VLANs 1
  port 1   fabric -> s2:1           untagged 1    tagged none
  port 2   fabric -> s3:1           untagged 1    tagged none

s2: VLANs 1-2
  port 1   fabric -> s1:1           untagged 1    tagged none
  port 2   fabric -> s3:2           untagged none tagged 2
  port 3   host   -> h2:1           untagged 1    tagged 2

s3: VLANs 1-2
  port 1   fabric -> s1:2           untagged 1    tagged none
  port 2   fabric -> s2:2           untagged none tagged 2
  port 3   host   -> h3:1           untagged 1    tagged 2
`,
		"vreach.json": `{
  "topology": "tri",
  "edges": [
    {"edge":"s2","vlans":[{"id":1,"tree":"s1"},{"id":2,"tree":"s2"}]},
    {"edge":"s3","vlans":[{"id":1,"tree":"s1"},{"id":2,"tree":"s2"}]}
  ]
}
`,
	}
	for name, w := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != w {
			t.Errorf("%s:\n%s\nwant\n%s", name, got, w)
		}
	}
}

// Empty lists are written as [] on the line that opens them.
func TestEmptyListsJSON(t *testing.T) {
	for _, c := range []struct {
		name  string
		write func(*bytes.Buffer) error
		want  string
	}{
		{"reach", func(b *bytes.Buffer) error { return (&ReachMap{Topology: "x"}).WriteJSON(b) }, "{\n  \"topology\": \"x\",\n  \"edges\": []\n}\n"},
		{"deployment", func(b *bytes.Buffer) error { return (&Deployment{Topology: "x"}).WriteJSON(b) }, "{\n  \"topology\": \"x\",\n  \"switches\": []\n}\n"},
	} {
		var b bytes.Buffer
		if err := c.write(&b); err != nil || b.String() != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, b.String(), err, c.want)
		}
	}
	var b bytes.Buffer
	if err := (&Plan{Topology: "x"}).WriteJSON(&b, nil); err != nil || !strings.Contains(b.String(), "\n  \"vlans\": []\n}\n") {
		t.Errorf("plan without VLANs: %v\n%s", err, b.String())
	}
}

// failAt fails the n-th Write call only (a transient error): the writers
// must still report it, not go on and return nil.
type failAt struct{ n, calls int }

func (w *failAt) Write(b []byte) (int, error) {
	w.calls++
	if w.calls == w.n {
		return 0, errors.New("transient")
	}
	return len(b), nil
}

func TestListJSONReportsEveryWriteError(t *testing.T) {
	p := triangle(t)
	for name, write := range map[string]func(*failAt) error{
		"switches.json": func(w *failAt) error { return p.Deployment().WriteJSON(w) },
		"vreach.json":   func(w *failAt) error { return p.Reach().WriteJSON(w) },
	} {
		count := &failAt{}
		if err := write(count); err != nil || count.calls < 10 {
			t.Fatalf("%s: %v after %d writes", name, err, count.calls)
		}
		for n := 1; n <= count.calls; n++ {
			if err := write(&failAt{n: n}); err == nil || err.Error() != "transient" {
				t.Errorf("%s: write %d of %d failed: got %v", name, n, count.calls, err)
			}
		}
	}
}

// A value JSON cannot carry (NaN) is reported as encoding/json's error,
// and by WriteDir with the file's name; NCP itself refuses a NaN
// probability.
func TestNaNRefused(t *testing.T) {
	p := triangle(t)
	bad := &NCP{FailProb: 0.1, Trials: 1, STP: math.NaN()}
	var uv *json.UnsupportedValueError
	if err := p.WriteJSON(&bytes.Buffer{}, bad); !errors.As(err, &uv) {
		t.Errorf("WriteJSON with NaN: %v, want json.UnsupportedValueError", err)
	}
	if _, err := p.WriteDir(t.TempDir(), bad, false); !errors.As(err, &uv) || !strings.HasPrefix(err.Error(), "plan: plan.json: ") {
		t.Errorf("WriteDir with NaN: %v, want plan: plan.json: ... unsupported value", err)
	}
	if _, err := p.NCP(math.NaN(), 1, 1); !errors.Is(err, ErrBadOption) {
		t.Errorf("NCP(NaN): %v, want ErrBadOption", err)
	}
}

// A file WriteDir cannot put in place is reported, and the directory is
// left as it was: no file of this plan beside an earlier plan's, no
// temporary file (found in review: plan.json was this plan's, the others
// the earlier one's).
func TestWriteDirCreateError(t *testing.T) {
	dir := t.TempDir()
	old := compute(t, "fattree:4", Options{Trials: 1, Seed: 1})
	if _, err := old.WriteDir(dir, nil, false); err != nil {
		t.Fatal(err)
	}
	before := readOutFiles(t, dir)
	// A directory where the last file goes.
	last := OutFiles(false)[len(OutFiles(false))-1]
	if err := os.Remove(filepath.Join(dir, last)); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, last), 0o755); err != nil {
		t.Fatal(err)
	}
	p := triangle(t)
	_, err := p.WriteDir(dir, nil, false)
	if err == nil || !strings.Contains(err.Error(), last+" is a directory") {
		t.Fatalf("%s a directory: %v", last, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != len(before) {
		t.Errorf("%d entries in the directory, want the %d there before (no temporary file left)", len(ents), len(before))
	}
	for name, want := range before {
		if name == last {
			continue
		}
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != want {
			t.Errorf("%s changed by a write that failed", name)
		}
	}
	if err := CheckOutFile(dir, last); err == nil || CheckOutFile(dir, "plan.json") != nil || CheckOutFile(dir, "absent") != nil {
		t.Errorf("CheckOutFile: directory %v, file %v, absent %v", err, CheckOutFile(dir, "plan.json"), CheckOutFile(dir, "absent"))
	}
}

// Options refused by Compute: a negative trial count (0 means 10, so -1
// is no default), an unknown tie rule (from paths, wrapped).
func TestComputeRefusesOptions(t *testing.T) {
	g, err := topo.Parse("fattree:4", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compute(g, Options{Trials: -1}); !errors.Is(err, ErrBadOption) {
		t.Errorf("trials=-1: %v, want ErrBadOption", err)
	}
	if _, err := Compute(g, Options{Trials: 1, Ties: paths.Ties(9)}); !errors.Is(err, paths.ErrBadTies) || !strings.HasPrefix(err.Error(), "plan: ") {
		t.Errorf("ties 9: %v, want plan: ... ErrBadTies", err)
	}
}

// The phase times: none negative; prune is what pruning every trial took
// (the packer's sum) when every trial is pruned, and 0 when nothing is.
func TestSecondsFields(t *testing.T) {
	p := compute(t, "fattree:4", Options{Trials: 2, Seed: 1})
	s := p.Seconds
	if s.Paths <= 0 || s.Pack <= 0 || s.Verify <= 0 || s.Prune <= 0 || s.Prune != p.Pack.PruneSeconds {
		t.Errorf("seconds %+v, packer's pruning %v: want all positive, prune the packer's", s, p.Pack.PruneSeconds)
	}
	for _, opt := range []Options{{Trials: 2, Seed: 1, NoPrune: true}, {Trials: 2, Seed: 1, Serial: true}} {
		if s := compute(t, "fattree:4", opt).Seconds; s.Prune != 0 || s.Paths <= 0 || s.Pack <= 0 || s.Verify <= 0 {
			t.Errorf("%+v: seconds %+v, want prune 0, the others positive", opt, s)
		}
	}
}

// Above paths.PruneEachLimit only the best trial is pruned, after
// packing: BCube(16,2) has 256 servers, 32,640 pairs, k = 2: 65,280
// paths. Seed 1's best trial loses at least one VLAN.
func TestPruneBestOnly(t *testing.T) {
	p := compute(t, "bcube:16,2", Options{Trials: 1, Seed: 1})
	pk := p.Packing
	if p.NumPaths != 65280 || p.NumPaths <= paths.PruneEachLimit {
		t.Fatalf("%d paths, want 65280 (above %d)", p.NumPaths, paths.PruneEachLimit)
	}
	if p.Pack.PruneSeconds != 0 || p.Seconds.Prune <= 0 || pk.Pruned < 1 || p.NumVLANs+pk.Pruned != pk.TrialVLANs[pk.BestTrial] {
		t.Errorf("packer pruned for %vs, plan %vs; %d VLANs, pruned %d, trial %d had %d: want the best trial pruned after packing only",
			p.Pack.PruneSeconds, p.Seconds.Prune, p.NumVLANs, pk.Pruned, pk.BestTrial, pk.TrialVLANs[pk.BestTrial])
	}
}

// ringTail builds a ring of r switches with a line of tail more hanging
// off the first, each switch with one host. With k = 2 a pair on the ring,
// or a tail switch and a ring switch other than the first, has two paths,
// any other pair one: r(r−1) + tail(tail−1)/2 + 2·tail·(r−1) + tail paths.
func ringTail(t *testing.T, r, tail int) *topo.Graph {
	t.Helper()
	b := topo.NewBuilder("ringtail")
	sw := make([]topo.NodeID, r+tail)
	for i := range sw {
		sw[i] = b.AddNode("s"+strconv.Itoa(i+1), topo.Switch)
		b.Connect(sw[i], b.AddNode("h"+strconv.Itoa(i+1), topo.Host))
	}
	for i := range r {
		b.Connect(sw[i], sw[(i+1)%r])
	}
	prev := sw[0]
	for _, s := range sw[r:] {
		b.Connect(prev, s)
		prev = s
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Every trial is pruned up to exactly paths.PruneEachLimit paths, and
// only the best one above: a ring of 42 with a tail of 239 has 50,000
// paths, with a tail of 240 it has 50,322.
func TestPruneEachBoundary(t *testing.T) {
	for _, c := range []struct {
		tail, paths int
		each        bool
	}{{239, paths.PruneEachLimit, true}, {240, 50322, false}} {
		p, err := Compute(ringTail(t, 42, c.tail), Options{Trials: 2, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if p.NumPaths != c.paths {
			t.Fatalf("tail %d: %d paths, want %d", c.tail, p.NumPaths, c.paths)
		}
		if each := p.Pack.PruneSeconds > 0; each != c.each || p.Seconds.Prune <= 0 {
			t.Errorf("%d paths: packer pruned for %vs, plan %vs: want every trial pruned %v, some pruning always",
				p.NumPaths, p.Pack.PruneSeconds, p.Seconds.Prune, c.each)
		}
	}
}

// The packing summary is the packer's: which trial was kept and every
// trial's count (serial FatTree(4), three trials, seed 1, random ties:
// the second).
func TestPackingBestTrial(t *testing.T) {
	p := compute(t, "fattree:4", Options{Trials: 3, Seed: 1, Serial: true, Ties: paths.TiesRandom})
	pk := p.Packing
	if pk.BestTrial != 1 || p.Pack.BestTrial != 1 || !slices.Equal(pk.TrialVLANs, p.Pack.TrialVLANs) || p.NumVLANs != pk.TrialVLANs[1] {
		t.Errorf("packing %+v, packer's best %d %v, %d VLANs: want trial 1, as the packer says", pk, p.Pack.BestTrial, p.Pack.TrialVLANs, p.NumVLANs)
	}
}

// The refusal beyond 4094 VLANs names the paths and pairs involved: two
// switches joined by 4095 parallel links, k = 4095, the serial packer
// (one trial, the cheapest way there).
func TestTooManyVLANsMessage(t *testing.T) {
	_, err := Compute(parallelPair(t, "par", 4095), Options{K: 4095, Trials: 1, Seed: 1, Serial: true})
	want := "plan: par: fabric cannot be covered within the 4094 usable VLAN IDs: every packing trial needed more than 4094 VLANs for 4095 paths of 1 edge-node pair; lower --k or split the fabric into several SPAIN domains"
	if !errors.Is(err, ErrTooManyVLANs) || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// Verify on the triangle, whose one path (pair s2-s3, [s2s3]) is edited:
// the last path of the set in no VLAN; a walk that leaves VLAN 1 after
// its first link; a walk that ends with a host link, and the message
// naming the pair's ends in order.
func TestVerifyTriangle(t *testing.T) {
	p := triangle(t)
	p.Pack.VLANs = p.Pack.VLANs[:1]
	if err := p.Verify(); !errors.Is(err, ErrVerify) || !strings.Contains(err.Error(), "path 0 lies in no single VLAN") {
		t.Errorf("the only path in no VLAN: %v, want path 0 in no VLAN", err)
	}
	for _, c := range []struct {
		name string
		path []topo.LinkID
		want string
	}{
		// s2 -s1s2-> s1 -s1s3-> s3 -s2s3-> s2 -s2s3-> s3: a walk; its first
		// two links only in VLAN 1, the last two only in VLAN 2.
		{"two VLANs", []topo.LinkID{0, 1, 2, 2}, "plan: plan failed verification: path 0 lies in no single VLAN"},
		{"host link", []topo.LinkID{2, 4}, "plan: plan failed verification: pair s2-s3 has no path, or one that is not a walk between them over fabric links"},
	} {
		p := triangle(t)
		p.PS = withPaths(p.PS, func(int, [][]topo.LinkID) [][]topo.LinkID { return [][]topo.LinkID{c.path} })
		if err := p.Verify(); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
}

// Verify's pair checks on FatTree(4), each edit alone: one pair too many
// is counted as such; a pair given reversed is still a repeat; a pair
// naming a switch that is no edge node, or no node at all, is refused
// (not a panic); a path with a link of its own VLAN that touches none of
// its nodes spliced in is no walk.
func TestVerifyPairEdits(t *testing.T) {
	for _, c := range []struct {
		name, want string
		edit       func(t *testing.T, p *Plan)
	}{
		{"extra pair", "29 pairs for 8 edge nodes, want 28", func(_ *testing.T, p *Plan) {
			p.PS.Pairs = append(p.PS.Pairs, p.PS.Pairs[0])
			p.PS.PairOff = append(p.PS.PairOff, p.PS.PairOff[len(p.PS.PairOff)-1])
		}},
		{"reversed repeat", "is not a new pair", func(_ *testing.T, p *Plan) {
			p.PS.Pairs[1] = paths.Pair{A: p.PS.Pairs[0].B, B: p.PS.Pairs[0].A}
		}},
		{"not an edge node", "is not a new pair", func(t *testing.T, p *Plan) {
			for v := range topo.NodeID(p.F.G.NumNodes()) {
				if p.F.G.Node(v).Forwards() && !slices.Contains(p.F.Edges, v) {
					p.PS.Pairs[0].A = v
					return
				}
			}
			t.Fatal("no switch without hosts")
		}},
		{"no such node", "is not a new pair", func(_ *testing.T, p *Plan) { p.PS.Pairs[0].B = 1 << 20 }},
		{"stray link", "is not a walk", func(t *testing.T, p *Plan) {
			for i := range p.PS.Pairs {
				lo, hi := p.PS.PairPaths(i)
				for j := lo; j < hi; j++ {
					path := p.PS.Path(j)
					var nodes []topo.NodeID
					for _, l := range path {
						a, b := p.F.Ends(l)
						nodes = append(nodes, a, b)
					}
					for _, l := range p.Pack.VLANs[p.vlanOf(path)] {
						if a, b := p.F.Ends(l); slices.Contains(nodes, a) || slices.Contains(nodes, b) {
							continue
						}
						p.PS = withPaths(p.PS, func(pair int, ls [][]topo.LinkID) [][]topo.LinkID {
							if pair == i {
								q := ls[j-lo]
								ls[j-lo] = append(q[:1:1], append([]topo.LinkID{l}, q[1:]...)...)
							}
							return ls
						})
						return
					}
				}
			}
			t.Fatal("no path with a link of its VLAN away from it")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := compute(t, "fattree:4", Options{Trials: 1, Seed: 1})
			c.edit(t, p)
			if err := p.Verify(); !errors.Is(err, ErrVerify) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want ErrVerify %q", err, c.want)
			}
		})
	}
}

// WriteDir creates the directory readable by all, as os.Mkdir(dir, 0o755)
// would under the same umask: hosts download vreach.json from it.
func TestWriteDirMode(t *testing.T) {
	p := triangle(t)
	base := t.TempDir()
	ref, dir := filepath.Join(base, "ref"), filepath.Join(base, "out")
	if err := os.Mkdir(ref, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := p.WriteDir(dir, nil, false); err != nil {
		t.Fatal(err)
	}
	a, err := os.Stat(ref)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.Mode() != b.Mode() {
		t.Errorf("output directory mode %v, want %v", b.Mode(), a.Mode())
	}
}

// WriteDir into a directory other writers use too (found in review): two
// writers at once both succeed and leave whole files (temporary names
// are unique: they collided within one process); a file behind a symbolic
// link is replaced behind it, the link kept; a file's permissions stay.
func TestWriteDirTempLinkMode(t *testing.T) {
	dir := t.TempDir()
	a, b := compute(t, "fattree:4", Options{Trials: 1, Seed: 1}), triangle(t)
	errs := make(chan error, 2)
	for _, p := range []*Plan{a, b} {
		go func() { _, err := p.WriteDir(dir, nil, true); errs <- err }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent WriteDir: %v", err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != len(OutFiles(true)) {
		t.Errorf("%d entries after two writers, want %d (no temporary file left)", len(ents), len(OutFiles(true)))
	}
	for _, name := range OutFiles(true) {
		if strings.HasSuffix(name, ".json") {
			b, _ := os.ReadFile(filepath.Join(dir, name))
			if !json.Valid(b) {
				t.Errorf("%s is not whole JSON after two writers", name)
			}
		}
	}
	// A link at plan.json, a private switches.json.
	real := filepath.Join(t.TempDir(), "real.json")
	if err := os.WriteFile(real, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "plan.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "plan.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "switches.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WriteDir(dir, nil, false); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "plan.json")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("plan.json no longer a link: %v", err)
	}
	if got, _ := os.ReadFile(real); !json.Valid(got) || !strings.Contains(string(got), `"topology": "fattree:4"`) {
		t.Errorf("the link's target holds %.60q, want the plan", got)
	}
	if fi, err := os.Stat(filepath.Join(dir, "switches.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("switches.json mode %v (%v), want 0600 kept", fi.Mode().Perm(), err)
	}
}

// A write stopped half-way (its context done: a signal) removes its
// temporary files and leaves the directory as it was (found in review: a
// killed run left hidden files behind, up to gigabytes for paths.json).
func TestWriteDirContextStopped(t *testing.T) {
	dir := t.TempDir()
	old := triangle(t)
	if _, err := old.WriteDir(dir, nil, false); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "plan.json"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := compute(t, "fattree:4", Options{Trials: 1, Seed: 1})
	if _, err := p.WriteDirContext(ctx, dir, nil, true); !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped write: %v, want context.Canceled", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != len(OutFiles(false)) {
		t.Errorf("%d entries after a stopped write, want the %d there before", len(ents), len(OutFiles(false)))
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "plan.json")); string(after) != string(before) {
		t.Error("plan.json changed by a stopped write")
	}
}
