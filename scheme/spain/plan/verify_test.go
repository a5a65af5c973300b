package plan

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/paths"
	"github.com/edgefabric/edgefabric/topo"
)

// withPaths returns a copy of ps whose path lists are edit's result: edit
// gets every pair's paths (copies) and returns the new ones.
func withPaths(ps *paths.PathSet, edit func(pair int, ls [][]topo.LinkID) [][]topo.LinkID) *paths.PathSet {
	out := &paths.PathSet{K: ps.K, Pairs: append([]paths.Pair(nil), ps.Pairs...), PairOff: []uint32{0}, PathOff: []uint32{0}}
	for i := range ps.Pairs {
		lo, hi := ps.PairPaths(i)
		var ls [][]topo.LinkID
		for j := lo; j < hi; j++ {
			ls = append(ls, append([]topo.LinkID(nil), ps.Path(j)...))
		}
		for _, p := range edit(i, ls) {
			out.Links = append(out.Links, p...)
			out.PathOff = append(out.PathOff, uint32(len(out.Links)))
		}
		out.PairOff = append(out.PairOff, uint32(len(out.PathOff)-1))
	}
	return out
}

// Verify's every check fires on a plan that breaks only it: each broken
// plan below passes all the other checks (the path-set edits keep every
// path inside a VLAN), so a skipped check would let it through.
func TestVerifyEachCheck(t *testing.T) {
	for _, c := range []struct {
		name    string
		want    error
		msg     string
		breakIt func(p *Plan)
	}{
		{"4095 VLANs", ErrTooManyVLANs, "4095 VLANs", func(p *Plan) {
			// Pad with one-link VLANs, each loop-free, to 4095.
			l := p.Pack.VLANs[1][0]
			for len(p.Pack.VLANs) < paths.MaxVLANs+1 {
				p.Pack.VLANs = append(p.Pack.VLANs, []topo.LinkID{l})
			}
		}},
		{"VLAN 1 not the tree", ErrVerify, "VLAN 1 is not the default spanning tree", func(p *Plan) {
			// Every VLAN kept (every path still covered), the tree moved
			// to VLAN 2.
			p.Pack.VLANs = append([][]topo.LinkID{p.Pack.VLANs[1]}, p.Pack.VLANs...)
		}},
		{"loop", ErrVerify, "has a loop", func(p *Plan) {
			// A new VLAN: the tree plus one fabric link outside it.
			inTree := map[topo.LinkID]bool{}
			for _, l := range p.Pack.VLANs[0] {
				inTree[l] = true
			}
			for l := range topo.LinkID(p.F.G.NumLinks()) {
				if p.F.IsFabric(l) && !inTree[l] {
					p.Pack.VLANs = append(p.Pack.VLANs, append(append([]topo.LinkID(nil), p.Pack.VLANs[0]...), l))
					return
				}
			}
		}},
		{"host link", ErrVerify, "holds host link", func(p *Plan) {
			for l := range p.F.G.NumLinks() {
				if !p.F.IsFabric(topo.LinkID(l)) {
					p.Pack.VLANs = append(p.Pack.VLANs, []topo.LinkID{topo.LinkID(l)})
					return
				}
			}
		}},
		{"pair of one node", ErrVerify, "is not a new pair", func(p *Plan) {
			p.PS.Pairs[0].B = p.PS.Pairs[0].A
		}},
		{"path stops short", ErrVerify, "is not a walk", func(p *Plan) {
			// Pair 0's first path without its last link: a walk from A
			// over fabric links, inside the same VLAN, ending before B.
			p.PS = withPaths(p.PS, func(pair int, ls [][]topo.LinkID) [][]topo.LinkID {
				if pair == 0 {
					ls[0] = ls[0][:len(ls[0])-1]
				}
				return ls
			})
		}},
		{"pair without paths", ErrVerify, "has no path", func(p *Plan) {
			p.PS = withPaths(p.PS, func(pair int, ls [][]topo.LinkID) [][]topo.LinkID {
				if pair == 0 {
					return nil
				}
				return ls
			})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := compute(t, "fattree:4", Options{Trials: 1, Seed: 1})
			c.breakIt(p)
			if err := p.Verify(); !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("got %v, want %v %q", err, c.want, c.msg)
			}
		})
	}
	// The edits themselves leave a valid plan when they change nothing.
	p := compute(t, "fattree:4", Options{Trials: 1, Seed: 1})
	p.PS = withPaths(p.PS, func(_ int, ls [][]topo.LinkID) [][]topo.LinkID { return ls })
	if err := p.Verify(); err != nil {
		t.Fatalf("unchanged copy: %v", err)
	}
}

// The trial bounds are inclusive: one more is refused before any work
// (a host-less graph would fail later with another error).
func TestTrialBounds(t *testing.T) {
	b := topo.NewBuilder("hostless")
	b.Connect(b.AddNode("s1", topo.Switch), b.AddNode("s2", topo.Switch))
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compute(g, Options{Trials: MaxTrials + 1}); !errors.Is(err, ErrBadOption) {
		t.Errorf("trials=%d: %v, want ErrBadOption", MaxTrials+1, err)
	}
	if _, err := Compute(g, Options{Trials: MaxTrials}); !errors.Is(err, paths.ErrNoHosts) {
		t.Errorf("trials=%d: %v, want it accepted (then ErrNoHosts)", MaxTrials, err)
	}
	p := compute(t, "fattree:4", Options{Trials: 1, Seed: 1})
	if _, err := p.NCP(0.1, MaxNCPTrials+1, 1); !errors.Is(err, ErrBadOption) {
		t.Errorf("NCP trials=%d: %v, want ErrBadOption", MaxNCPTrials+1, err)
	}
	if _, err := p.NCP(1.5, 1, 1); !errors.Is(err, ErrBadOption) {
		t.Errorf("NCP fail probability 1.5: %v, want ErrBadOption", err)
	}
}

func TestRanges(t *testing.T) {
	for _, c := range []struct {
		ids  []int
		want string
	}{
		{nil, "none"},
		{[]int{4}, "4"},
		{[]int{1, 2, 3, 5, 7, 8}, "1-3,5,7-8"},
		{[]int{1, 3, 5}, "1,3,5"},
	} {
		if got := ranges(c.ids); got != c.want {
			t.Errorf("ranges(%v) = %q, want %q", c.ids, got, c.want)
		}
	}
}

// The packer's hints (paths.Packing.PathVLAN) only speed the check that
// every path lies in a VLAN: right hints pass, wrong or missing ones fall
// back to the search and still pass, and no hint lets a path that no VLAN
// holds through.
func TestVerifyHints(t *testing.T) {
	p := compute(t, "fattree:4", Options{Trials: 1, Seed: 1})
	np := p.PS.NumPaths()
	if err := p.Verify(); err != nil { // builds linkVLANs for holds and vlanOf
		t.Fatal(err)
	}
	right := make([]uint16, np)
	wrong := make([]uint16, np)
	nWrong := 0
	for j := range np {
		right[j] = uint16(p.vlanOf(p.PS.Path(j)))
		wrong[j] = 0xffff
		for i := range p.Pack.VLANs {
			if !p.holds(i, p.PS.Path(j)) {
				wrong[j] = uint16(i)
				break
			}
		}
		if wrong[j] != 0xffff {
			nWrong++
		}
	}
	if nWrong == 0 {
		t.Fatal("every VLAN holds every path: no wrong hint to test")
	}
	for _, c := range []struct {
		name string
		hint []uint16
	}{
		{"right", right},
		{"wrong", wrong},
		{"too short", right[:np-1]},
		{"none", nil},
	} {
		p.Pack.PathVLAN = c.hint
		if err := p.Verify(); err != nil {
			t.Errorf("%s hints: %v", c.name, err)
		}
	}
	// Drop VLAN 2: the paths only it held lie in no VLAN, whatever the
	// hints say (the right hints name index 1, now the old VLAN 3).
	p.Pack.VLANs = append(p.Pack.VLANs[:1], p.Pack.VLANs[2:]...)
	first := -1
	for _, hint := range [][]uint16{right, wrong, nil} {
		p.Pack.PathVLAN = hint
		err := p.Verify()
		if first < 0 {
			for j := range np {
				if p.vlanOf(p.PS.Path(j)) < 0 {
					first = j
					break
				}
			}
		}
		if want := fmt.Sprintf("path %d lies in no single VLAN", first); first < 0 || !errors.Is(err, ErrVerify) || !strings.Contains(err.Error(), want) {
			t.Errorf("VLAN 2 dropped, hints %v...: %v, want ErrVerify %q", hint[:min(len(hint), 4)], err, want)
		}
	}
}
