package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestSkipVLANsRepeated: every --skip-vlans given is kept out of the
// plan, as the IDs of one list are; the last one replaced the others, so
// that "--skip-vlans 2-3 --skip-vlans 5" planned into 2 and 3.
func TestSkipVLANsRepeated(t *testing.T) {
	code, out, errOut := topoCLI("plan", "spain", "fattree:4", "--trials", "1", "--skip-vlans", "2-3", "--skip-vlans", "5", "--skip-vlans", "3,7", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var p struct {
		Skip  []int `json:"skip_vlans"`
		VLANs []struct {
			ID int `json:"id"`
		} `json:"vlans"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, v := range p.VLANs {
		ids = append(ids, v.ID)
	}
	if !slices.Equal(p.Skip, []int{2, 3, 5, 7}) || !slices.Equal(ids, []int{1, 4, 6, 8}) {
		t.Errorf("skip_vlans %v, VLAN IDs %v; want [2 3 5 7] and [1 4 6 8]", p.Skip, ids)
	}
	_, text, _ := topoCLI("plan", "spain", "fattree:4", "--trials", "1", "--skip-vlans", "2-3", "--skip-vlans", "5")
	if !strings.Contains(text, "  VLAN IDs          1,4,6-7 (skipping 2-3,5)\n") {
		t.Errorf("text summary:\n%s", text)
	}
	// Each value is checked, an empty one too (it was refused as the
	// one value of a string flag).
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--skip-vlans", "2", "--skip-vlans", ""}, "edgefabric: --skip-vlans: empty value (leave the flag out for its default; see 'edgefabric plan spain --help')\n"},
		{[]string{"--skip-vlans", "2", "--skip-vlans", "x"}, "edgefabric: --skip-vlans \"x\": want IDs and ranges such as 1002-1005,4000\n"},
		{[]string{"--skip-vlans", "2", "--skip-vlans", "4095"}, "edgefabric: --skip-vlans 4095: only IDs 2 to 4094 can be skipped (VLAN 1 is the default tree; 802.1Q reserves 0 and 4095)\n"},
	} {
		code, out, errOut := topoCLI(append([]string{"plan", "spain", "fattree:4"}, c.args...)...)
		if code != 2 || out != "" || errOut != c.want {
			t.Errorf("%v: exit %d, stdout %q, stderr\n got  %q\n want %q", c.args, code, out, errOut, c.want)
		}
	}
}
