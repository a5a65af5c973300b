package dumbnet

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// floodPTAgent is A (switch 1 port 9, controller B) with four PathTable
// destinations, K = 1: D1 (switch 2) over the link 1:1-2:1, its backup
// by switch 3; D2 (switch 3) directly by 1:2, its path graph holding
// 1:1-2:1 for the backup; D3 and D4 (switch 4, ports 9 and 8) by 1:3,
// their path graphs without it.
func floodPTAgent(t *testing.T, floodPT int) (*Agent, *fakeEnv, [4]wire.MAC) {
	t.Helper()
	a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, K: 1, FloodPT: floodPT})
	d := [4]wire.MAC{{0x02, 0, 0, 0, 0, 1}, {0x02, 0, 0, 0, 0, 2}, {0x02, 0, 0, 0, 0, 3}, {0x02, 0, 0, 0, 0, 0xe}}
	up := func(a uint64, ap uint16, b uint64, bp uint16, f wire.LinkFlags) wire.DumbNetLink {
		return wire.DumbNetLink{A: a, APort: ap, B: b, BPort: bp, Flags: wire.LinkUp | f}
	}
	replies := []struct {
		sw    uint64
		port  uint16
		links []wire.DumbNetLink
	}{
		{2, 9, []wire.DumbNetLink{up(1, 1, 2, 1, wire.LinkPrimary), up(1, 2, 3, 1, wire.LinkBackup), up(3, 2, 2, 2, wire.LinkBackup)}},
		{3, 9, []wire.DumbNetLink{up(1, 2, 3, 1, wire.LinkPrimary), up(1, 1, 2, 1, wire.LinkBackup), up(2, 2, 3, 2, wire.LinkBackup)}},
		{4, 9, []wire.DumbNetLink{up(1, 3, 4, 1, wire.LinkPrimary)}},
		{4, 8, []wire.DumbNetLink{up(1, 3, 4, 1, wire.LinkPrimary)}},
	}
	for i, r := range replies {
		a.hold(d[i], netip.Addr{}, nil, nil)
		a.pathReply(&wire.DumbNetPathReply{QueryID: a.qid, Version: 1, Src: macA, Dst: d[i], SrcSwitch: 1, SrcPort: 9, DstSwitch: r.sw, DstPort: r.port, Links: r.links})
		if e := a.table.Lookup(d[i]); e == nil || len(e.Paths) == 0 {
			t.Fatalf("no entry for %v: %v", d[i], a.Counters())
		}
	}
	env.take()
	return a, env, d
}

// TestFloodPTCapOrder: with FloodPT capped, a notification that C
// floods about the link 1:1-2:1 goes to the controller (never counted
// against the cap), then to the destinations whose paths crossed the
// link (D1), then to those whose path graph holds it (D2), then to the
// others in ring order from A's MAC (...0e before ...03); the rest are
// counted as capped. Uncapped, every destination gets it, in MAC order.
func TestFloodPTCapOrder(t *testing.T) {
	for _, tc := range []struct {
		floodPT int
		want    []int // indexes into d; -1 is the controller
		capped  uint64
	}{
		{-1, []int{-1}, 4},
		{1, []int{-1, 0}, 3},
		{3, []int{-1, 0, 1, 3}, 1},
		{4, []int{-1, 0, 1, 3, 2}, 0},
		{FloodPTAll, []int{0, 1, 2, -1, 3}, 0},
	} {
		a, env, d := floodPTAgent(t, tc.floodPT)
		a.Receive(1, ctrl(t, macA, macC, &wire.DumbNetHostNotify{Origin: macC, Seq: 1, SwitchID: 1, Port: 1, State: wire.PortDown, SwitchSeq: 1}))
		var got []wire.MAC
		for _, f := range framesTo(t, env.take()) {
			got = append(got, f.dst)
		}
		var want []wire.MAC
		for _, i := range tc.want {
			if i < 0 {
				want = append(want, macB)
			} else {
				want = append(want, d[i])
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("FloodPT %d: sent to %v, want %v", tc.floodPT, got, want)
		}
		c := a.Counters()
		if c["notify_capped"] != tc.capped || c["notify_flooded"] != uint64(len(want)) {
			t.Errorf("FloodPT %d: notify_capped %d, notify_flooded %d; want %d, %d", tc.floodPT, c["notify_capped"], c["notify_flooded"], tc.capped, len(want))
		}
		if e := a.table.Lookup(d[0]); e == nil || !slices.Equal(e.Paths[0], []uint8{2, 2, 9}) {
			t.Errorf("FloodPT %d: D1 did not fail over to its backup: %+v", tc.floodPT, e)
		}
	}
}

// TestFloodPTParam: floodpt takes all, or 0..65536 (0: none, which
// Config spells negative); anything else is refused with what it wants.
func TestFloodPTParam(t *testing.T) {
	g, err := topo.Parse("line:3", 1)
	if err != nil {
		t.Fatal(err)
	}
	for v, want := range map[string]int{"all": FloodPTAll, "0": -1, "1": 1, " 8 ": 8, "65536": 65536} {
		f, err := New(g, scheme.Options{Params: map[string]string{"floodpt": v}})
		if err != nil {
			t.Fatalf("floodpt=%q: %v", v, err)
		}
		for _, ag := range f.agents {
			if ag.cfg.FloodPT != want {
				t.Fatalf("floodpt=%q: FloodPT %d, want %d", v, ag.cfg.FloodPT, want)
			}
		}
	}
	for _, v := range []string{"-1", "65537", "none", "", "ALL"} {
		_, err := New(g, scheme.Options{Params: map[string]string{"floodpt": v}})
		if err == nil || err.Error() != `dumbnet: bad parameter: floodpt="`+v+`": want an integer 0..65536, or all` {
			t.Errorf("floodpt=%q: %v", v, err)
		}
	}
	f, err := New(g, scheme.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ag := range f.agents {
		if ag.cfg.FloodPT != DefaultFloodPT {
			t.Fatalf("default FloodPT %d, want %d", ag.cfg.FloodPT, DefaultFloodPT)
		}
	}
}
