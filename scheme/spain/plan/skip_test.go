package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/topo"
)

// TestSkipVLANs: skipped IDs appear nowhere (plan, switches, V_reach,
// paths); the VLANs take the lowest free IDs in order, VLAN 1 first; the
// plan still verifies; too few free IDs and IDs that cannot be skipped
// are refused.
func TestSkipVLANs(t *testing.T) {
	g, err := topo.Parse("fattree:8", 1)
	if err != nil {
		t.Fatal(err)
	}
	base, err := Compute(g, Options{Trials: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compute(g, Options{Trials: 1, Seed: 1, SkipVLANs: []int{10, 3, 4, 5, 4}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(p.SkipVLANs) != "[3 4 5 10]" {
		t.Errorf("skip_vlans %v", p.SkipVLANs)
	}
	want := []int{1, 2, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	var ids []int
	for i, v := range p.VLANs {
		ids = append(ids, v.ID)
		// the same VLANs as without skipping, renumbered
		if fmt.Sprint(v.Links) != fmt.Sprint(base.VLANs[i].Links) {
			t.Errorf("VLAN %d (index %d) differs from the unskipped plan's", v.ID, i)
		}
	}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("IDs %v, want %v", ids, want)
	}
	if err := p.Verify(); err != nil {
		t.Fatal(err)
	}
	skipped := func(id int) bool { return slices.Contains(p.SkipVLANs, id) }
	valid := func(id int) bool { return slices.Contains(want, id) && !skipped(id) }
	for _, s := range p.Deployment().Switches {
		for _, id := range s.VLANs {
			if !valid(id) {
				t.Fatalf("switch %s in VLAN %d", s.Name, id)
			}
		}
		for _, pc := range s.Ports {
			for _, id := range append(pc.Tagged, pc.Untagged) {
				if id != 0 && !valid(id) {
					t.Fatalf("switch %s port %d in VLAN %d", s.Name, pc.Port, id)
				}
			}
		}
	}
	for _, e := range p.Reach().Edges {
		for _, v := range e.VLANs {
			if !valid(v.ID) {
				t.Fatalf("V_reach(%s) has VLAN %d", e.Edge, v.ID)
			}
		}
	}
	var buf bytes.Buffer
	if err := p.WritePathsJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct{ Pairs []PairPaths }
	json.Unmarshal(buf.Bytes(), &doc)
	for _, pr := range doc.Pairs {
		for _, pv := range pr.Paths {
			for _, id := range pv.VLANs {
				if !valid(id) {
					t.Fatalf("path %v in VLAN %d", pv.Nodes, id)
				}
			}
		}
	}

	// 16 VLANs need 16 free IDs: 4094 - 4079 = 15 is one short.
	if _, err := Compute(g, Options{Trials: 1, Seed: 1, SkipVLANs: rangeIDs(2, 4080)}); !errors.Is(err, ErrTooManyVLANs) {
		t.Errorf("16 VLANs in 15 free IDs: %v", err)
	}
	if q, err := Compute(g, Options{Trials: 1, Seed: 1, SkipVLANs: rangeIDs(2, 4079)}); err != nil || q.VLANs[15].ID != 4094 {
		t.Errorf("16 VLANs in 16 free IDs: %v", err)
	}
	for _, id := range []int{1, 0, 4095, -3} {
		if _, err := Compute(g, Options{Trials: 1, SkipVLANs: []int{id}}); !errors.Is(err, ErrBadOption) {
			t.Errorf("skip %d: %v, want ErrBadOption", id, err)
		}
	}
}

func rangeIDs(lo, hi int) []int {
	var ids []int
	for id := lo; id <= hi; id++ {
		ids = append(ids, id)
	}
	return ids
}

// TestMaxSwitchVLANs: the plan's max_switch_vlans is the largest VLAN
// list of any switch in the deployment, at the first switch that has it.
func TestMaxSwitchVLANs(t *testing.T) {
	for _, spec := range []string{"fattree:4", "fattree:8", "hyperx:4", "bcube:3,2", "spain-testbed", "line:1"} {
		p := compute(t, spec, Options{Trials: 1, Seed: 1})
		most, at := 0, ""
		for _, s := range p.Deployment().Switches {
			if len(s.VLANs) > most {
				most, at = len(s.VLANs), s.Name
			}
		}
		if p.MaxSwitchVLANs != most || p.MaxSwitchVLANsAt != at {
			t.Errorf("%s: max_switch_vlans %d at %s, the deployment's %d at %s", spec, p.MaxSwitchVLANs, p.MaxSwitchVLANsAt, most, at)
		}
	}
}

func TestParseRanges(t *testing.T) {
	for in, want := range map[string]string{"": "[]", "none": "[]", "7": "[7]", "1002-1005,4000": "[1002 1003 1004 1005 4000]",
		"5,3-4,4": "[3 4 5]", " 2 - 3": "bad", "3-2": "bad", "x": "bad", "1,,2": "bad", "-1": "bad", "0-99999": "bad", "4096": "bad", "9223372036854775807-9223372036854775807": "bad", "0-4095,4095": "ok"} {
		ids, err := ParseRanges(in)
		got := fmt.Sprint(ids)
		if ids == nil && err == nil {
			got = "[]"
		}
		if err != nil {
			got = "bad"
		} else if want == "ok" {
			got = "ok"
		}
		if got != want {
			t.Errorf("ParseRanges(%q) = %v, %v; want %s", in, ids, err, want)
		}
		if err == nil && len(ids) > 0 {
			if back, _ := ParseRanges(Ranges(ids)); fmt.Sprint(back) != fmt.Sprint(ids) {
				t.Errorf("%q: Ranges round trip %v -> %q -> %v", in, ids, Ranges(ids), back)
			}
		}
	}
}

// FuzzParseRanges: an error, or ascending distinct IDs that Ranges writes
// back into the same IDs.
func FuzzParseRanges(f *testing.F) {
	for _, s := range []string{"1002-1005,4000", "7", "3-2", "1,,2", "-1", "0-99999", "none"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := ParseRanges(s)
		if err != nil {
			return
		}
		for i := 1; i < len(ids); i++ {
			if ids[i] <= ids[i-1] {
				t.Fatalf("%q: %v not ascending", s, ids)
			}
		}
		if len(ids) > 0 {
			if back, err := ParseRanges(Ranges(ids)); err != nil || !slices.Equal(back, ids) {
				t.Fatalf("%q: %v -> %q -> %v, %v", s, ids, Ranges(ids), back, err)
			}
		}
	})
}
