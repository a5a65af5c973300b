package dumbnet

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

// Tests of the review findings of 2026-11-26 fixed since (docs/dumbnet.md).

// firstTags lists the first tag of every path of dst's entry.
func firstTags(a *Agent, dst wire.MAC) []uint8 {
	e := a.table.Lookup(dst)
	if e == nil {
		return nil
	}
	var out []uint8
	for _, p := range e.Paths {
		out = append(out, p[0])
	}
	return out
}

// replyForC answers a's query for C, at switch 6, with a path graph of
// version ver whose two paths from switch 1 leave by port 5 (via switch
// 5) and by port 2 (via switch 3).
func replyForC(a *Agent, ver uint64) {
	a.hold(macC, netip.Addr{}, nil, nil)
	answerC(a, a.qid, ver)
}

// answerC answers query id as replyForC does.
func answerC(a *Agent, id uint32, ver uint64) {
	a.pathReply(&wire.DumbNetPathReply{QueryID: id, Version: ver, Src: macA, Dst: macC, SrcSwitch: 1, SrcPort: 9, DstSwitch: 6, DstPort: 9,
		Links: []wire.DumbNetLink{
			{A: 1, APort: 5, B: 5, BPort: 1, Flags: wire.LinkUp | wire.LinkPrimary},
			{A: 5, APort: 2, B: 6, BPort: 1, Flags: wire.LinkUp | wire.LinkPrimary},
			{A: 1, APort: 2, B: 3, BPort: 1, Flags: wire.LinkUp | wire.LinkBackup},
			{A: 3, APort: 3, B: 6, BPort: 2, Flags: wire.LinkUp | wire.LinkBackup},
		}})
}

// TestMergeKeepsUnknownFailedLinkDown: switch 1's port 5 fails while the
// host's TopoCache does not hold that link (its only path graph, to B,
// does not cross it). A path graph to C the controller computed before it
// heard of the failure (version 1, the cache's own) lists the link up;
// it used to be taken as up, and flows to C hashed onto it were lost
// until the controller's patch. A graph of a version that can know of the
// failure (2) revives it, and so does a patch saying it is up.
func TestMergeKeepsUnknownFailedLinkDown(t *testing.T) {
	a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, K: 2})
	withPaths(a, env, twoPaths) // to B, version 1: switch 1's ports 1 and 2
	a.Receive(1, portStatusFrame(1, 5, wire.PortDown, 4, 1))
	env.take()
	replyForC(a, 1)
	if tags := firstTags(a, macC); len(tags) != 1 || tags[0] != 2 {
		t.Fatalf("entry for C leaves switch 1 by %v, want only port 2: a graph older than the failure put the link back", tags)
	}
	if known, up := a.CacheLinkUp(1, 5); !known || up {
		t.Fatalf("cache holds 1:5 known %v up %v, want known and down", known, up)
	}
	replyForC(a, 2)
	if tags := firstTags(a, macC); len(tags) != 2 {
		t.Fatalf("a graph of version 2 did not revive the link: first tags %v", tags)
	}

	// A patch saying the link is up ends the record: the answer to a
	// query sent before it, computed before the failure, lists the link
	// up, as it is now.
	b, envB := attachedAgent(Config{Name: "b", MAC: macA, IP: ipA, Search: -1, K: 2})
	withPaths(b, envB, twoPaths)
	b.Receive(1, portStatusFrame(1, 5, wire.PortDown, 4, 1))
	b.hold(macC, netip.Addr{}, nil, nil)
	qC := b.qid
	b.topoPatch(&wire.DumbNetTopoPatch{Version: 2, Links: []wire.DumbNetLink{{A: 1, APort: 5, B: 5, BPort: 1, Flags: wire.LinkUp}}})
	envB.take()
	answerC(b, qC, 1)
	if tags := firstTags(b, macC); len(tags) != 2 || len(b.cache.downSince) != 0 {
		t.Fatalf("after the up patch: first tags %v, %d failure records; want 2 paths and none; %v", tags, len(b.cache.downSince), b.Counters())
	}
}

// TestUnknownFailureRecordsBounded: the failure records of links the
// cache does not hold are bounded as the other tables per switch port:
// forged notifications each naming a new port fill them, and a full
// table starts afresh, counted.
func TestUnknownFailureRecordsBounded(t *testing.T) {
	a, env := newTestAgent()
	for i := 0; len(a.cache.downSince) < maxPortStates; i++ {
		a.cache.downSince[portID{uint64(1<<40 + i), 1}] = 1
	}
	a.Receive(1, notify(t, macC, 7, wire.PortDown))
	env.take()
	if c := a.Counters(); len(a.cache.downSince) != 1 || c["notify_state_forgotten"] != 1 || c["host_notify_received"] != 1 {
		t.Fatalf("%d failure records, %v; want 1 record, notify_state_forgotten 1", len(a.cache.downSince), c)
	}
}

// patchLink is a one-link patch of version ver for the link between
// switch a's port ap and switch b's port bp.
func patchLink(ver, a uint64, ap uint16, b uint64, bp uint16, up bool) *wire.DumbNetTopoPatch {
	var f wire.LinkFlags
	if up {
		f = wire.LinkUp
	}
	return &wire.DumbNetTopoPatch{Version: ver, Links: []wire.DumbNetLink{{A: a, APort: ap, B: b, BPort: bp, Flags: f}}}
}

// TestLateRepairPatchApplied: link X (switch 1's port 1, B's primary)
// fails (the notification, at version 1, and the down patch, version 3);
// it is repaired (patch 4), and another link's patch (5) overtakes that
// repair. The repair, stale by then, is newer than the failure the host
// knows of X: it sets X up again in the views that held it down, and B's
// entry uses X again. It used to be taken as stale and change nothing:
// X stayed down until a newer path graph came.
func TestLateRepairPatchApplied(t *testing.T) {
	a, env := squareAgent(t, 4) // to B: via switch 2 (port 1) and via switch 3 (port 2)
	a.Receive(1, portStatusFrame(1, 1, wire.PortDown, 4, 1))
	a.topoPatch(patchLink(3, 1, 1, 2, 1, false))
	a.topoPatch(patchLink(5, 7, 1, 8, 1, true))
	env.take()
	if tags := firstTags(a, macB); len(tags) != 1 || tags[0] != 2 {
		t.Fatalf("before the repair B's entry leaves switch 1 by %v, want port 2 only", tags)
	}
	a.topoPatch(patchLink(4, 1, 1, 2, 1, true))
	c := a.Counters()
	if known, up := a.CacheLinkUp(1, 1); !known || !up || c["patch_stale"] != 1 || c["patch_stale_repaired"] != 1 {
		t.Fatalf("after the late repair: X known %v up %v; %v", known, up, c)
	}
	if tags := firstTags(a, macB); len(tags) != 2 || tags[0] != 1 {
		t.Fatalf("after the late repair B's entry leaves switch 1 by %v, want ports 1 and 2", tags)
	}
	if err := a.cache.Verify([]uint8{1, 2, 9}, macB); err != nil {
		t.Fatalf("a view still holds X down: %v", err)
	}
	if a.evState[portID{1, 1}] != wire.PortUp {
		t.Fatal("the host still takes X's next failure for a repeat")
	}
}

// TestLateRepairOlderThanFailureIgnored: a stale repair older than the
// failure the host knows of is no repair of it. X fails (version 1),
// another link's patch takes the cache to version 4 while X's repair
// (3) is on its way, X comes back and fails again (notifications): the
// repair arriving now must not set X up. Nor after a down patch of the
// second failure, for a host that heard no notification of it.
func TestLateRepairOlderThanFailureIgnored(t *testing.T) {
	t.Run("notification", func(t *testing.T) {
		a, env := squareAgent(t, 4)
		a.Receive(1, portStatusFrame(1, 1, wire.PortDown, 4, 1))
		a.topoPatch(patchLink(4, 7, 1, 8, 1, true))
		a.Receive(1, portStatusFrame(1, 1, wire.PortUp, 4, 2))
		a.Receive(1, portStatusFrame(1, 1, wire.PortDown, 4, 3))
		env.take()
		a.topoPatch(patchLink(3, 1, 1, 2, 1, true))
		if known, up := a.CacheLinkUp(1, 1); !known || up || a.Counters()["patch_stale_repaired"] != 0 {
			t.Fatalf("a repair older than the second failure set X up: known %v up %v, %v", known, up, a.Counters())
		}
	})
	t.Run("patch", func(t *testing.T) {
		a, env := squareAgent(t, 4)
		a.Receive(1, portStatusFrame(1, 1, wire.PortDown, 4, 1))
		a.topoPatch(patchLink(5, 1, 1, 2, 1, false)) // the second failure, booked
		env.take()
		a.topoPatch(patchLink(3, 1, 1, 2, 1, true))
		if known, up := a.CacheLinkUp(1, 1); !known || up || a.Counters()["patch_stale_repaired"] != 0 {
			t.Fatalf("a repair older than the down patch set X up: known %v up %v, %v", known, up, a.Counters())
		}
	})
}

// TestHeldARPsExpire: ARP requests of the stack held for a path expire
// after the hold time, as held frames do. The stack asks for B at 0 s and
// again at 2 s; the controller answers at 3.5 s: only the request of 2 s
// is answered, the one of 0 s (which the stack gave up on) is dropped and
// counted. It used to be answered 3.5 s late.
func TestHeldARPsExpire(t *testing.T) {
	a, env := newTestAgent()
	req := wire.ARP{Op: wire.ARPRequest, SenderMAC: macA, SenderIP: ipA, TargetIP: ipB}
	f, _ := wire.AppendARPFrame(nil, wire.Broadcast, 0, &req)
	a.Receive(2, f)
	env.advance(2 * element.Second)
	a.Receive(2, f)
	env.advance(1500 * element.Millisecond)
	env.take()
	a.pathReply(&wire.DumbNetPathReply{QueryID: a.qid, Version: 1, Src: macA, Dst: macB, SrcSwitch: 0x10, SrcPort: 1, DstSwitch: 0x10, DstPort: 2})
	answers := 0
	for _, s := range env.take() {
		if s.port == 2 && wire.Frame(s.frame).EtherType() == wire.EtherTypeARP {
			answers++
		}
	}
	if c := a.Counters(); answers != 1 || c["arp_answered"] != 1 || c["drop_held_expired"] != 1 {
		t.Fatalf("%d ARP answers to the stack; %v; want 1 answer, drop_held_expired 1", answers, c)
	}
}

// udpFrame is a UDP datagram from A to B of flow f (its ports).
func udpFrame(f int) []byte {
	ip := make([]byte, 40)
	ip[0], ip[9] = 0x45, 17
	binary.BigEndian.PutUint32(ip[20:24], uint32(f))
	return wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, ip)
}

// TestActiveFlowsSurviveFullFlowTable: flow bindings age out in two
// generations instead of the table being cleared when it is full. A flow
// in its second flowlet keeps its path while 70,000 other flows start
// within the same flowlet: it used to be forgotten when the table reached
// 65,536 flows and moved back to its first flowlet's path mid-flowlet.
// The flows past the bound are not remembered (counted), the bindings
// idle for a generation are forgotten (counted), and a binding in use
// keeps its flowlet count across the swaps.
func TestActiveFlowsSurviveFullFlowTable(t *testing.T) {
	a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, K: 3, Flowlets: true, FlowletGap: element.Millisecond})
	withPaths(a, env, threePaths)
	e := a.table.Lookup(macB)
	flowA := udpFrame(1 << 30)
	hA := a.flowHash(flowA)
	p0 := a.choose(e, flowA)
	env.advance(2 * element.Millisecond)
	p1 := a.choose(e, flowA)
	if bytes.Equal(p0, p1) {
		t.Fatalf("second flowlet kept path %v", p0)
	}
	const others = 70000
	for f := range others {
		a.choose(e, udpFrame(f))
		if n := len(a.flows) + len(a.oldFlows); n > maxFlows {
			t.Fatalf("%d bindings after %d flows, bound %d", n, f+1, maxFlows)
		}
	}
	if got := a.choose(e, flowA); !bytes.Equal(got, p1) {
		t.Fatalf("flow moved from %v to %v mid-flowlet when the flow table filled", p1, got)
	}
	c := a.Counters()
	if c["flows_unbound"] != others-(maxFlows-1) || c["flows_forgotten"] != 0 {
		t.Fatalf("flows_unbound %d, flows_forgotten %d; want %d, 0", c["flows_unbound"], c["flows_forgotten"], others-(maxFlows-1))
	}

	// 1.5 s on, A sends (a new flowlet); 1.1 s later the others, silent
	// since, are forgotten, and a new flow is remembered again.
	env.advance(1500 * element.Millisecond)
	a.choose(e, flowA)
	env.advance(1100 * element.Millisecond)
	a.choose(e, udpFrame(others))
	c = a.Counters()
	if c["flows_forgotten"] != maxFlows-1 || c["flows_unbound"] != others-(maxFlows-1) || len(a.flows)+len(a.oldFlows) != 2 {
		t.Fatalf("flows_forgotten %d (want %d), flows_unbound %d, %d bindings (want 2)", c["flows_forgotten"], maxFlows-1, c["flows_unbound"], len(a.flows)+len(a.oldFlows))
	}
	a.choose(e, flowA)
	if fb := a.flows[hA]; fb == nil || fb.flowlet != 3 {
		t.Fatalf("A's binding %+v, want it kept through the swaps at flowlet 3", fb)
	}

	// Two ages of silence: both generations go at the next frame, A's
	// binding too, however long ago the last swap was.
	env.advance(2*a.flowAge() + element.Millisecond)
	if a.FlowPath(flowA) == nil {
		t.Fatal("no path for A")
	}
	a.choose(e, udpFrame(others+1))
	if _, ok := a.flows[hA]; ok || a.oldFlows[hA] != nil || len(a.flows)+len(a.oldFlows) != 1 {
		t.Fatalf("after %v of silence A's binding is kept (%d bindings)", 2*a.flowAge(), len(a.flows)+len(a.oldFlows))
	}
	if c := a.Counters(); c["flows_forgotten"] != maxFlows-1+2 {
		t.Fatalf("flows_forgotten %d, want %d", c["flows_forgotten"], maxFlows-1+2)
	}
}

// X (1:1-2:1) fails (N1), is booked down (patch 2), comes back and fails
// again (switch alarms up, down) while the host's cache is still at
// version 2; the controller's repair patch (3), sent before the second
// failure, is overtaken by another link's patch (4). The stale repair
// must not set X up: the second failure is newer than it.
func TestLateRepairAfterRefailureSameVersion(t *testing.T) {
	a, env := squareAgent(t, 4)
	a.Receive(1, portStatusFrame(1, 1, wire.PortDown, 4, 1))
	a.topoPatch(patchLink(2, 1, 1, 2, 1, false))
	a.Receive(1, portStatusFrame(1, 1, wire.PortUp, 4, 2))
	a.Receive(1, portStatusFrame(1, 1, wire.PortDown, 4, 3))
	a.topoPatch(patchLink(4, 7, 1, 8, 1, true))
	env.take()
	a.topoPatch(patchLink(3, 1, 1, 2, 1, true))
	if known, up := a.CacheLinkUp(1, 1); !known || up {
		t.Fatalf("a repair older than the second failure set X up: known %v up %v, %v; B's first tags %v", known, up, a.Counters(), firstTags(a, macB))
	}
}

// The host hears of 1:5's failure only by the controller's patch
// (version 2). Its query for C went out at version 1 and the answer,
// computed before the failure (version 1), lists 1:5 up and arrives
// after the patch.
func TestPatchOnlyFailureOfUnknownLink(t *testing.T) {
	a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, K: 2})
	withPaths(a, env, twoPaths) // version 1
	a.hold(macC, netip.Addr{}, nil, nil)
	q := a.qid
	a.topoPatch(patchLink(2, 1, 5, 5, 1, false))
	env.take()
	answerC(a, q, 1)
	if tags := firstTags(a, macC); len(tags) != 1 || tags[0] != 2 {
		t.Fatalf("entry for C leaves switch 1 by %v after the down patch, want only port 2; downSince %v", tags, a.cache.downSince)
	}
}
