package dumbnet

import (
	"net/netip"
	"testing"

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
