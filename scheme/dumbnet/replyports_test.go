package dumbnet

import (
	"net/netip"
	"testing"

	"github.com/edgefabric/edgefabric/wire"
)

// TestPathReplyPortsChecked: a path reply (or patch) naming a switch port
// no one-byte tag can name (0, or above 254) is malformed, as a
// notification naming one is (TestNotificationPortChecked): refused and
// counted, the cache left as it was. The TopoCache indexed each switch's
// ports by number, so one forged reply of 1,000 links, each naming port
// 65,535 of a new switch, made the host allocate 2,000 port tables of
// 65,536 entries (about 1.5 GB); and a destination port of 256 became
// tag 0, which made the destination's switch answer its ID instead of
// delivering.
func TestPathReplyPortsChecked(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(r *wire.DumbNetPathReply)
	}{
		{"link port 65535", func(r *wire.DumbNetPathReply) {
			r.Links = append(r.Links, wire.DumbNetLink{A: 4, APort: 3, B: 7, BPort: 65535, Flags: wire.LinkUp | wire.LinkDetour})
		}},
		{"link port 0", func(r *wire.DumbNetPathReply) {
			r.Links = append(r.Links, wire.DumbNetLink{A: 4, APort: 0, B: 7, BPort: 1, Flags: wire.LinkUp | wire.LinkDetour})
		}},
		{"destination port 256", func(r *wire.DumbNetPathReply) { r.DstPort = 256 }},
		{"source port 300", func(r *wire.DumbNetPathReply) { r.SrcPort = 300 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, env := newTestAgent()
			a.hold(macB, netip.Addr{}, nil, nil)
			env.take()
			dst, links := twoPaths()
			r := &wire.DumbNetPathReply{QueryID: a.byDst[macB].id, Version: 1, Src: macA, Dst: macB, SrcSwitch: 1, SrcPort: 9, DstSwitch: dst, DstPort: 9, Links: links}
			tc.edit(r)
			before := a.Counters()["drop_bad_control"]
			a.Receive(1, ctrl(t, macA, macB, r))
			if got := a.Counters()["drop_bad_control"]; got != before+1 {
				t.Errorf("drop_bad_control %d, want %d", got, before+1)
			}
			if a.table.Lookup(macB) != nil || a.cache.Switches() != 0 {
				t.Errorf("malformed reply applied: entry %v, %d switches cached", a.table.Lookup(macB), a.cache.Switches())
			}
			if a.byDst[macB] == nil {
				t.Error("query retired by a malformed reply")
			}
		})
	}
	t.Run("patch", func(t *testing.T) {
		a, env := newTestAgent()
		withPaths(a, env, twoPaths)
		before := a.Counters()["drop_bad_control"]
		p := &wire.DumbNetTopoPatch{Version: 5, Links: []wire.DumbNetLink{{A: 4, APort: 3, B: 7, BPort: 65535}}}
		a.Receive(1, ctrl(t, macA, macB, p))
		if got := a.Counters()["drop_bad_control"]; got != before+1 {
			t.Errorf("drop_bad_control %d, want %d", got, before+1)
		}
		if a.cache.version != 1 || a.Counters()["patches_applied"] != 0 {
			t.Errorf("malformed patch applied: cache version %d", a.cache.version)
		}
	})
}

// TestForgedReplyBoundsMemory: the allocation itself.
func TestForgedReplyBoundsMemory(t *testing.T) {
	a, env := newTestAgent()
	a.hold(macB, netip.Addr{}, nil, nil)
	env.take()
	r := &wire.DumbNetPathReply{QueryID: a.byDst[macB].id, Version: 1, Src: macA, Dst: macB, SrcSwitch: 1, SrcPort: 9, DstSwitch: 2, DstPort: 9}
	for i := range uint64(1000) {
		r.Links = append(r.Links, wire.DumbNetLink{A: 100 + 2*i, APort: 65535, B: 101 + 2*i, BPort: 65535, Flags: wire.LinkUp | wire.LinkDetour})
	}
	a.Receive(1, ctrl(t, macA, macB, r))
	ports := 0
	for _, ps := range a.cache.g.ports {
		ports += len(ps)
	}
	if ports > 1000 {
		t.Fatalf("one forged reply made the cache hold %d port entries", ports)
	}
}

// TestMPLSLabelsLeftNotAtEnd: an MPLS frame that reaches a host with
// labels left is dropped as a tagged one is (§5.1: the agent "checks if
// the remaining tag is ∅ ... Otherwise, the agent drops the packet") and
// counted alike, drop_not_at_end; it was counted drop_malformed, as if
// its stack could not be read.
func TestMPLSLabelsLeftNotAtEnd(t *testing.T) {
	a, env := newTestAgent()
	ip := make([]byte, 40)
	ip[0] = 0x45
	f, err := wire.DumbNetMPLSPush(wire.AppendEthernet(nil, macA, macB, wire.EtherTypeIPv4, ip), []uint8{2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, f, err = wire.DumbNetMPLSPop(f); err != nil { // one switch hop of two
		t.Fatal(err)
	}
	a.Receive(1, f)
	if c := a.Counters(); c["drop_not_at_end"] != 1 || c["drop_malformed"] != 0 || c["rx_data"] != 0 || len(env.take()) != 0 {
		t.Fatalf("MPLS frame with a label left: %v", c)
	}
}
