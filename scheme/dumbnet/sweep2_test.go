package dumbnet

// Tests from a further mutation sweep of the package (after the one of
// exact_test.go), over switch.go, agent.go, cache.go, controller.go,
// discovery.go, graph.go, pathgraph.go, topology.go and scheme.go: each
// pins an outcome that a mutant changed without failing the earlier
// tests (a drop reason, a limit at its edge, a field of a built frame, a
// timer's exact deadline, a parameter's accepted range).

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// mplsFrame is an MPLS-encoded frame whose label stack is labels, the
// last one marked bottom of stack, followed by an IPv4 header's first
// byte.
func mplsFrame(labels ...uint32) []byte {
	b := wire.AppendEthernet(nil, macB, macA, wire.EtherTypeMPLS, nil)
	for i, l := range labels {
		e := l<<12 | 64
		if i == len(labels)-1 {
			e |= 1 << 8
		}
		b = binary.BigEndian.AppendUint32(b, e)
	}
	return append(b, 0x45, 0, 0, 20)
}

// The switch sends from the MAC its ID spells (the ID's low 48 bits, most
// significant byte first): the prober reads the same number from the
// answer's source and from its payload.
func TestSwitchSendsFromItsID(t *testing.T) {
	s := NewSwitch(0x0a0b0c0d0e0f, 0, 0)
	env := newFakeEnv()
	s.Attach(env, ports(4))
	probe := wire.DumbNetProbe{Seq: 7, SrcMAC: macA, Path: []uint8{0, 2}}
	payload, _ := probe.AppendTo(nil)
	s.Receive(1, tagged(t, []uint8{0, 2}, wire.EtherTypeLocalExp, payload))
	out := env.take()
	if len(out) != 1 {
		t.Fatalf("sent %d frames, want the ID answer", len(out))
	}
	if src := wire.Frame(out[0].frame).Src(); src != (wire.MAC{0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f}) {
		t.Fatalf("answer from %v, want 0a:0b:0c:0d:0e:0f", src)
	}
	// The scheme's IDs are the plan's bridge addresses.
	for _, n := range []topo.NodeID{0, 1, 300, 70000} {
		if m := NewSwitch(SwitchID(n), 0, 0).mac; m != wire.MAC(topo.BridgeMAC(n)) {
			t.Fatalf("node %d: switch MAC %v, want the bridge address %v", n, m, wire.MAC(topo.BridgeMAC(n)))
		}
	}
}

// A port attached down is down until the engine says otherwise: a frame
// for it is dropped.
func TestSwitchPortAttachedDown(t *testing.T) {
	s := NewSwitch(0x42, 0, 0)
	env := newFakeEnv()
	ps := ports(4)
	ps[1].Up = false
	s.Attach(env, ps)
	s.Receive(1, tagged(t, []uint8{2}, wire.EtherTypeIPv4, nil))
	if out := env.take(); len(out) != 0 || s.Counters()["drop_port_down"] != 1 {
		t.Fatalf("frame to a port attached down: sent %d, counters %v", len(out), s.Counters())
	}
}

// Switch drops at their edges: a bare 14-byte header is a plain frame,
// not a truncated one; an MPLS label that names no port (0, or above
// 16 bits, whose low bits name a real port) is a bad port; a frame with
// only the end label left is at its end; a cut label is truncated; a
// notification with hop limit 0 is forged, not expired; a link change on
// a port the switch lacks is counted.
func TestSwitchDropEdges(t *testing.T) {
	cases := []struct {
		name, counter string
		frame         []byte
	}{
		{"14-byte IPv4 header", "drop_not_dumbnet", wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, nil)},
		{"13 bytes", "drop_truncated", wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, nil)[:13]},
		{"MPLS label 0", "drop_bad_port", mplsFrame(0, wire.DumbNetEnd)},
		{"MPLS label 0x10002", "drop_bad_port", mplsFrame(0x10002, wire.DumbNetEnd)},
		{"MPLS end label only", "drop_at_end", mplsFrame(wire.DumbNetEnd)},
		{"MPLS label cut", "drop_truncated", mplsFrame(2, wire.DumbNetEnd)[:16]},
		{"hop limit 0", "drop_hop_limit", statusFrame(t, 0)},
	}
	for _, c := range cases {
		s, env := newTestSwitch(4)
		s.Receive(1, c.frame)
		if got := s.Counters(); got[c.counter] != 1 || len(got) != 1 {
			t.Errorf("%s: counters %v, want only %s 1", c.name, got, c.counter)
		}
		if out := env.take(); len(out) != 0 {
			t.Errorf("%s: sent %d frames", c.name, len(out))
		}
	}
	s, env := newTestSwitch(4)
	s.LinkChange(9, false)
	if out := env.take(); len(out) != 0 || s.Counters()["drop_bad_port"] != 1 {
		t.Fatalf("link change on port 9 of 4: sent %d, counters %v", len(out), s.Counters())
	}
}

// A change inside the suppression window is announced when the window
// ends, counted from the last notification (not from the change), and a
// later flap inside the next window is deferred again.
func TestSwitchDeferredNotificationTiming(t *testing.T) {
	s, env := newTestSwitch(4)
	s.LinkChange(2, false) // t=0: sent
	env.take()
	env.advance(100 * element.Millisecond)
	s.LinkChange(2, true) // deferred to t=1s
	env.advance(900*element.Millisecond - 1)
	if out := env.take(); len(out) != 0 {
		t.Fatalf("deferred notification sent %d frames before the window ended", len(out))
	}
	env.advance(1)
	if out := env.take(); len(out) != 4 {
		t.Fatalf("at the window's end: %d frames, want 4 (port up)", len(out))
	}
	env.advance(100 * element.Millisecond)
	s.LinkChange(2, false) // t=1.1s: deferred to t=2s
	env.advance(900 * element.Millisecond)
	out := env.take()
	if len(out) != 3 {
		t.Fatalf("second deferral: %d frames at t=2s, want 3", len(out))
	}
	var m wire.DumbNetPortStatus
	if err := m.DecodeFromBytes(out[0].frame[wire.EthHeaderLen:]); err != nil || m.State != wire.PortDown || m.Seq != 3 {
		t.Fatalf("notification %+v (%v), want down, seq 3", m, err)
	}
}

// The agent never probes a port above 254: tag 255 is the end marker.
func TestAgentMaxPortsBelowEndMarker(t *testing.T) {
	a, env := attachedAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true, MaxPorts: 1000})
	env.advance(5 * element.Millisecond) // the pacer sends every root probe
	if a.cfg.MaxPorts != 254 || a.ctrl.Probes() != 254 {
		t.Fatalf("MaxPorts %d, %d root probes; want 254 and 254", a.cfg.MaxPorts, a.ctrl.Probes())
	}
}

// Search < 0 means never: a host that is never told where the controller
// is does not start probing for it.
func TestAgentSearchOff(t *testing.T) {
	a, env := noCtrlAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1})
	env.advance(100 * element.Second)
	if out := env.take(); len(out) != 0 || a.Counters()["search_started"] != 0 || a.search != nil {
		t.Fatalf("search off: sent %d frames, counters %v", len(out), a.Counters())
	}
}

// A NIC that went down sends nothing until it is up again; a change on
// another port (the stack's) does not touch it.
func TestAgentNICDown(t *testing.T) {
	a, env := newTestAgent()
	a.hold(macB, netip.Addr{}, nil, nil)
	reply(a, 1)
	env.take()
	data := wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, make([]byte, 40))
	a.LinkChange(2, false) // the Local port
	a.Receive(2, data)
	if out := env.take(); len(out) != 1 || out[0].port != 1 {
		t.Fatalf("a change on the Local port stopped the NIC: sent %v", out)
	}
	a.LinkChange(1, false)
	a.Receive(2, data)
	if out := env.take(); len(out) != 0 || a.Counters()["drop_nic_down"] != 1 {
		t.Fatalf("NIC down: sent %d, counters %v", len(out), a.Counters())
	}
	a.LinkChange(1, true)
	a.Receive(2, data)
	if out := env.take(); len(out) != 1 || out[0].port != 1 {
		t.Fatalf("NIC back up: sent %v", out)
	}
}

// The stack's multicast and frames to its own MAC have no path: dropped
// and counted, with no path query.
func TestAgentStackFramesWithoutPath(t *testing.T) {
	for _, c := range []struct {
		counter string
		dst     wire.MAC
	}{
		{"drop_multicast", wire.MAC{0x33, 0x33, 0, 0, 0, 1}},
		{"drop_multicast", wire.Broadcast},
		{"drop_to_self", macA},
	} {
		a, env := newTestAgent()
		a.Receive(2, wire.AppendEthernet(nil, c.dst, macA, wire.EtherTypeIPv6, make([]byte, 40)))
		if out := env.take(); len(out) != 0 || a.Counters()[c.counter] != 1 || len(a.queries) != 0 {
			t.Errorf("to %v: sent %d, counters %v, %d queries", c.dst, len(out), a.Counters(), len(a.queries))
		}
	}
}

// ipv4 is an IPv4 packet of n bytes from ipA to ipB (UDP), with DF set if
// df, in a frame from the stack (macA) to macB.
func ipv4(n int, df bool) []byte {
	ip := make([]byte, n)
	ip[0], ip[8], ip[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(ip[2:], uint16(n))
	if df {
		ip[6] = 0x40
	}
	copy(ip[12:16], ipA.AsSlice())
	copy(ip[16:20], ipB.AsSlice())
	for i := 20; i < n; i++ {
		ip[i] = byte(i)
	}
	return wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, ip)
}

// With MPLS, the tags cost 4 bytes per hop plus the end label: a packet
// exactly at MTU minus that is sent, one byte more is refused with the
// MTU left after the labels.
func TestAgentMTUWithMPLS(t *testing.T) {
	a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, MTU: 1500, MPLS: true})
	a.hold(macB, netip.Addr{}, nil, nil)
	reply(a, 1) // one hop: 8 bytes of labels
	env.take()
	a.Receive(2, ipv4(1492, true))
	if out := env.take(); len(out) != 1 || out[0].port != 1 || len(out[0].frame) != wire.EthHeaderLen+1500 {
		t.Fatalf("1492 bytes: sent %v, want 1500 bytes of MPLS on the NIC", out)
	}
	a.Receive(2, ipv4(1493, true))
	out := env.take()
	if len(out) != 1 || out[0].port != 2 {
		t.Fatalf("1493 bytes: sent %v, want ICMP to the stack", out)
	}
	if icmp := out[0].frame[wire.EthHeaderLen+20:]; binary.BigEndian.Uint16(icmp[6:]) != 1492 {
		t.Fatalf("ICMP next-hop MTU %d, want 1492", binary.BigEndian.Uint16(icmp[6:]))
	}
}

// The ICMP "fragmentation needed" the agent makes: back to the sender,
// from the address the packet was for, protocol ICMP, quoting the IP
// header and 8 bytes of payload; 68, the least MTU IPv4 allows, is still
// announced.
func TestAgentFragNeededBytes(t *testing.T) {
	a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, MTU: 72})
	a.hold(macB, netip.Addr{}, nil, nil)
	reply(a, 1) // one tag: 4 bytes, 68 left
	env.take()
	in := ipv4(100, true)
	a.Receive(2, in)
	out := env.take()
	if len(out) != 1 || out[0].port != 2 {
		t.Fatalf("sent %v, want ICMP to the stack", out)
	}
	f := out[0].frame
	if wire.Frame(f).Dst() != macA || wire.Frame(f).Src() != macB || wire.Frame(f).EtherType() != wire.EtherTypeIPv4 {
		t.Fatalf("ICMP frame %v -> %v", wire.Frame(f).Src(), wire.Frame(f).Dst())
	}
	ip := f[wire.EthHeaderLen:]
	quote := in[wire.EthHeaderLen : wire.EthHeaderLen+28]
	if len(ip) != 20+8+28 || binary.BigEndian.Uint16(ip[2:]) != 56 || ip[0] != 0x45 || ip[8] != 64 || ip[9] != 1 ||
		netip.AddrFrom4([4]byte(ip[12:16])) != ipB || netip.AddrFrom4([4]byte(ip[16:20])) != ipA {
		t.Fatalf("ICMP IP header %x", ip[:20])
	}
	icmp := ip[20:]
	if icmp[0] != 3 || icmp[1] != 4 || binary.BigEndian.Uint16(icmp[6:]) != 68 || !slices.Equal(icmp[8:], quote) {
		t.Fatalf("ICMP %x, want type 3 code 4 MTU 68 quoting %x", icmp, quote)
	}
	if inetChecksum(ip[:20]) != 0 || inetChecksum(icmp) != 0 {
		t.Fatal("bad checksum")
	}
}

// The Internet checksum of RFC 1071, odd lengths padded with a zero byte.
func TestInetChecksum(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		want uint16
	}{
		{[]byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}, 0x220d}, // RFC 1071 §3
		{[]byte{0x00, 0x01, 0xf2}, 0x0dfe},
		{[]byte{0xff}, 0x00ff},
	} {
		if got := inetChecksum(c.b); got != c.want {
			t.Errorf("checksum of %x = %#04x, want %#04x", c.b, got, c.want)
		}
	}
}

// Flows differ by destination IP too (one MAC, several addresses).
func TestFlowHashDestinationIP(t *testing.T) {
	a, _ := newTestAgent()
	f1 := ipv4(40, false)
	f2 := slices.Clone(f1)
	f2[wire.EthHeaderLen+19]++
	if a.flowHash(f1) == a.flowHash(f2) {
		t.Fatal("two destination IPs hash as one flow")
	}
}

// The stack's ARP replies and gratuitous requests are not answered; a
// request is answered to the asker with the asker as target.
func TestAgentARPFields(t *testing.T) {
	a, env := newTestAgent()
	a.ipToMAC[ipB] = macB
	for _, req := range []wire.ARP{
		{Op: wire.ARPReply, SenderMAC: macA, SenderIP: ipA, TargetMAC: macB, TargetIP: ipB},
		{Op: wire.ARPRequest, SenderMAC: macA, SenderIP: ipB, TargetIP: ipB},
	} {
		f, _ := wire.AppendARPFrame(nil, wire.Broadcast, 0, &req)
		a.Receive(2, f)
	}
	if out := env.take(); len(out) != 0 || a.Counters()["arp_ignored"] != 2 {
		t.Fatalf("reply and gratuitous request: sent %d, counters %v", len(out), a.Counters())
	}
	req := wire.ARP{Op: wire.ARPRequest, SenderMAC: macA, SenderIP: ipA, TargetIP: ipB}
	f, _ := wire.AppendARPFrame(nil, wire.Broadcast, 0, &req)
	a.Receive(2, f)
	out := env.take()
	if len(out) != 1 || out[0].port != 2 || wire.Frame(out[0].frame).Dst() != macA {
		t.Fatalf("sent %v, want the ARP reply to the stack's MAC", out)
	}
	rep, err := wire.DecodeARP(out[0].frame)
	want := wire.ARP{Op: wire.ARPReply, SenderMAC: macB, SenderIP: ipB, TargetMAC: macA, TargetIP: ipA}
	if err != nil || rep.Op != want.Op || rep.SenderMAC != want.SenderMAC || rep.SenderIP != want.SenderIP || rep.TargetMAC != want.TargetMAC || rep.TargetIP != want.TargetIP {
		t.Fatalf("ARP reply %+v (%v), want %+v", rep, err, want)
	}
}

// sentQuery decodes the one path query in out.
func sentQuery(t *testing.T, out []sent) wire.DumbNetPathQuery {
	t.Helper()
	if len(out) != 1 {
		t.Fatalf("sent %d frames, want one path query", len(out))
	}
	_, _, payload, err := wire.ParseDumbNet(out[0].frame)
	var q wire.DumbNetPathQuery
	if err == nil {
		err = q.DecodeFromBytes(payload)
	}
	if err != nil {
		t.Fatalf("sent %x: %v", out[0].frame, err)
	}
	return q
}

// An ARP whose query ran out of retries is asked for afresh the next
// time the stack asks: a new query, whose answer answers the stack.
func TestAgentARPAfterQueryGaveUp(t *testing.T) {
	a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, QueryTimeout: element.Millisecond, QueryRetries: 1})
	req := wire.ARP{Op: wire.ARPRequest, SenderMAC: macA, SenderIP: ipA, TargetIP: ipB}
	f, _ := wire.AppendARPFrame(nil, wire.Broadcast, 0, &req)
	a.Receive(2, f)
	env.advance(element.Second)
	env.take()
	if a.Counters()["drop_no_path"] != 1 || len(a.queries) != 0 || len(a.byIP) != 0 {
		t.Fatalf("after the retries: counters %v, %d queries, %d by IP", a.Counters(), len(a.queries), len(a.byIP))
	}
	a.Receive(2, f)
	q := sentQuery(t, env.take())
	if q.QueryID != 2 || q.DstIP != ipB {
		t.Fatalf("second ARP sent query %+v, want a new one (id 2) for %v", q, ipB)
	}
	a.pathReply(&wire.DumbNetPathReply{QueryID: q.QueryID, Version: 1, Src: macA, Dst: macB, SrcSwitch: 0x10, SrcPort: 1, DstSwitch: 0x10, DstPort: 2})
	if out := env.take(); len(out) != 1 || out[0].port != 2 || a.Counters()["arp_answered"] != 1 {
		t.Fatalf("answer released %v, counters %v", out, a.Counters())
	}
}

// Held ARP requests whose answer has no path are counted as drops, like
// held frames.
func TestAgentNoPathCountsHeldARPs(t *testing.T) {
	a, env := newTestAgent()
	req := wire.ARP{Op: wire.ARPRequest, SenderMAC: macA, SenderIP: ipA, TargetIP: ipB}
	f, _ := wire.AppendARPFrame(nil, wire.Broadcast, 0, &req)
	a.Receive(2, f)
	a.Receive(2, f)
	env.take()
	a.pathReply(&wire.DumbNetPathReply{QueryID: 1, Version: 1, Src: macA, Dst: macB, SrcSwitch: 1, SrcPort: 1, DstSwitch: 2, DstPort: 2})
	if out := env.take(); len(out) != 0 || a.Counters()["drop_no_path"] != 2 {
		t.Fatalf("no path: sent %d, counters %v; want the 2 held ARPs dropped", len(out), a.Counters())
	}
}

// Fabric frames at the agent's edges: a control message other than a
// probe with tags left is not at its end; a control message to the
// broadcast address with no tags left is taken; a probe from the zero
// MAC is not answered.
func TestAgentFabricControlEdges(t *testing.T) {
	a, env := newTestAgent()
	rep, _ := (&wire.DumbNetPathReply{QueryID: 1, Src: macA, Dst: macB}).AppendTo(nil)
	a.Receive(1, tagged(t, []uint8{3}, wire.EtherTypeLocalExp, rep))
	if out := env.take(); len(out) != 0 || a.Counters()["drop_not_at_end"] != 1 || a.Counters()["drop_bad_control"] != 0 {
		t.Fatalf("a reply with tags left: sent %d, counters %v", len(out), a.Counters())
	}
	a.Receive(1, ctrl(t, wire.Broadcast, macB, &wire.DumbNetHostNotify{Origin: macB, Seq: 1, SwitchID: 9, Port: 1, State: wire.PortDown}))
	if a.Counters()["host_notify_received"] != 1 {
		t.Fatalf("broadcast notification: counters %v", a.Counters())
	}
	env.take()
	a.Receive(1, pmFrame(wire.MAC{}, 5, []uint8{1, 4, 2}, []uint8{4, 2}))
	if out := env.take(); len(out) != 0 || a.Counters()["drop_bad_control"] != 1 || a.Counters()["probe_replies"] != 0 {
		t.Fatalf("probe from the zero MAC: sent %d, counters %v", len(out), a.Counters())
	}
}

// An empty flood-neighbour list is a list: an older one after it is
// stale.
func TestAgentEmptyNeighborListHeld(t *testing.T) {
	a, _ := newTestAgent()
	a.setNeighbors(&wire.DumbNetNeighbors{Version: 5})
	a.setNeighbors(&wire.DumbNetNeighbors{Version: 3, Neighbors: []wire.DumbNetNeighbor{{MAC: macC, Path: []uint8{1}}}})
	if len(a.neighbors) != 0 || a.nbrVersion != 5 || a.Counters()["neighbors_stale"] != 1 {
		t.Fatalf("neighbours %v version %d, counters %v; want none, 5, one stale", a.neighbors, a.nbrVersion, a.Counters())
	}
}

// A searching host learns the controller from any host's answer naming
// it, when the controller's own PMs already gave it the way back.
func TestLearnControllerFromLearnedPath(t *testing.T) {
	a, env := noCtrlAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1})
	a.Receive(1, pmFrame(macB, 5, []uint8{1, 4, 2}, []uint8{4, 2}))
	env.take()
	a.learnController(&wire.DumbNetProbeReply{Seq: 9, HostMAC: macC, Controller: macB, Path: []uint8{7}}, []uint8{7})
	if mac, ok := a.ControllerMAC(); !ok || mac != macB || !slices.Equal(a.ctrlPath, []uint8{4, 2}) || a.Counters()["controller_found_by_search"] != 1 {
		t.Fatalf("controller %v %v path %v, counters %v; want %v by 4-2", mac, ok, a.ctrlPath, a.Counters(), macB)
	}
}

// Notified reports when the host heard of a change, by notification and
// by patch.
func TestAgentNotifiedTimes(t *testing.T) {
	a, env := newTestAgent()
	env.advance(5 * element.Millisecond)
	a.Receive(1, portStatusFrame(9, 1, wire.PortDown, 3, 1))
	env.advance(2 * element.Millisecond)
	a.topoPatch(&wire.DumbNetTopoPatch{Version: 7})
	if s1, s2 := a.Notified(); s1 != 5*element.Millisecond || s2 != 7*element.Millisecond {
		t.Fatalf("Notified() = %v, %v; want 5ms, 7ms", s1, s2)
	}
}

// The controller's own host applies every patch its controller makes,
// even after a patch forged with the controller's MAC and a huge version
// reached it; its cache version never goes back.
func TestControllerHostAppliesOwnPatches(t *testing.T) {
	a, _, want := discoveredController(t, "line:3", 0, Config{})
	const huge = 1 << 40
	a.Receive(1, ctrl(t, a.mac, a.mac, &wire.DumbNetTopoPatch{Version: huge}))
	i, p := ctrlLink(a.ctrl, want.Links[0])
	a.ctrl.setLink(i, p, false)
	if c := a.Counters(); c["patches_applied"] != 2 || c["patch_stale"] != 0 || a.cache.version != huge {
		t.Fatalf("counters %v, cache version %d; want both patches applied, version %d", c, a.cache.version, huge)
	}
}

// The path verifier rejects an empty path.
func TestVerifyEmptyPath(t *testing.T) {
	c := NewTopoCache()
	c.Merge(twoSwitchReply(1, true))
	if err := c.Verify(nil, macB); !errors.Is(err, ErrBadPath) {
		t.Fatalf("Verify(no tags) = %v, want ErrBadPath", err)
	}
	if err := c.Verify([]uint8{3, 5}, macB); err != nil {
		t.Fatalf("Verify(3-5) = %v", err)
	}
}

// Parallel links between two switches are distinct routes: k = 2 finds
// both, k = 0 none.
func TestKShortestParallelLinks(t *testing.T) {
	g := newNetGraph()
	a, b := g.addSwitch(1), g.addSwitch(2)
	g.addLink(a, 1, b, 1, true, 0)
	g.addLink(a, 2, b, 2, true, 0)
	var sc scratch
	rs := g.kShortest(&sc, a, b, 2)
	if len(rs) != 2 || rs[0][0].out == rs[1][0].out {
		t.Fatalf("routes %v, want both parallel links", rs)
	}
	if rs := g.kShortest(&sc, a, b, 0); rs != nil {
		t.Fatalf("k = 0: routes %v", rs)
	}
}

// A path graph never hands out a link that is down, whatever role
// (primary, backup, detour) it would have had: every link of fattree:4
// down in turn, for every pair of edge switches, with the default slack
// and with ε = 2 (whose detour sets span both ends of some down links).
func TestPathGraphOmitsDownLinks(t *testing.T) {
	g, edges := graphOf(t, "fattree:4")
	want := expectedOf(t, "fattree:4")
	rng := newFakeEnv().rng
	var sc scratch
	for _, l := range want.Links {
		i, p := g.idx[l.A], l.APort
		g.setUp(i, p, false)
		for _, s := range edges {
			for _, d := range edges {
				if s == d {
					continue
				}
				for _, eps := range []int{0, 2} {
					pg := g.pathGraph(&sc, s, d, DefaultS, eps, rng)
					if pg == nil {
						t.Fatalf("no path graph %d -> %d with %v down", s, d, l)
					}
					for k, f := range pg.Links {
						if !g.ports[k.a][k.ap].up || f&wire.LinkUp == 0 {
							t.Fatalf("%d -> %d, eps %d, with %v down: link %v flags %v", s, d, eps, l, k, f)
						}
					}
				}
			}
		}
		g.setUp(i, p, true)
	}
}

// Links are named from their lower end, a cable between two ports of one
// switch from its lower port.
func TestNormLinkSelfLoop(t *testing.T) {
	if got := normLink(Link{A: 7, APort: 5, B: 7, BPort: 2}); got != (Link{A: 7, APort: 2, B: 7, BPort: 5}) {
		t.Fatalf("normLink = %+v", got)
	}
	if got := normLink(Link{A: 9, APort: 1, B: 7, BPort: 2}); got != (Link{A: 7, APort: 2, B: 9, BPort: 1}) {
		t.Fatalf("normLink = %+v", got)
	}
}

// Diff tells a link's state, a host's port and a host's IP apart.
func TestDiffFields(t *testing.T) {
	base := func() *Topology {
		return &Topology{Switches: []uint64{1, 2},
			Links: []Link{{A: 1, APort: 1, B: 2, BPort: 1, Up: true}},
			Hosts: []HostLoc{{MAC: macA, IP: ipA, Switch: 1, Port: 2}}}
	}
	want := base()
	for name, mod := range map[string]func(*Topology){
		"link down": func(t *Topology) { t.Links[0].Up = false },
		"host port": func(t *Topology) { t.Hosts[0].Port = 3 },
		"host IP":   func(t *Topology) { t.Hosts[0].IP = ipB },
	} {
		got := base()
		mod(got)
		if d := got.Diff(want); len(d) != 2 {
			t.Errorf("%s: diff %q, want one extra and one missing", name, d)
		}
	}
	if d := base().Diff(want); d != nil {
		t.Fatalf("equal topologies differ: %q", d)
	}
}

// A multi-homed host is expected where its lowest-numbered cabled NIC
// is.
func TestExpectedFirstNIC(t *testing.T) {
	b := topo.NewBuilder("dual")
	s1, s2 := b.AddNode("s1", topo.Switch), b.AddNode("s2", topo.Switch)
	h := b.AddNode("h1", topo.Host)
	b.ConnectPorts(topo.End{Node: s1, Port: 1}, topo.End{Node: s2, Port: 1}, topo.DefaultRate, topo.DefaultDelay)
	b.ConnectPorts(topo.End{Node: h, Port: 2}, topo.End{Node: s1, Port: 3}, topo.DefaultRate, topo.DefaultDelay)
	b.ConnectPorts(topo.End{Node: h, Port: 3}, topo.End{Node: s2, Port: 4}, topo.DefaultRate, topo.DefaultDelay)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	want, err := Expected(g)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Hosts) != 1 || want.Hosts[0].Switch != SwitchID(s1) || want.Hosts[0].Port != 3 {
		t.Fatalf("hosts %+v, want h1 at s1 port 3", want.Hosts)
	}
}

// An empty MemStore holds no topology.
func TestMemStoreEmpty(t *testing.T) {
	if _, top, ok := (&MemStore{}).Topology(); ok || top != nil {
		t.Fatalf("empty store: %v %v", top, ok)
	}
}

// Switches of up to 254 ports are fine; 255 is one more than a tag
// names.
func TestCheckTopologyPortLimit(t *testing.T) {
	for _, n := range []int{254, 255} {
		b := topo.NewBuilder("big")
		s := b.AddNode("s1", topo.Switch)
		b.Node(s).Ports = n
		g, err := b.Graph()
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckTopology(g); (err != nil) != (n > 254) {
			t.Errorf("%d ports: %v", n, err)
		}
	}
}

// Each parameter's highest value is accepted and reaches the elements;
// maxports below the switches' port count is kept; search=off is never;
// a zero duration is refused.
func TestNewParamsReachElements(t *testing.T) {
	g, err := topo.Parse("fattree:4", 1)
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(g, scheme.Options{Params: map[string]string{"eps": "16", "hops": "255", "mtu": "576", "k": "64", "s": "16", "maxports": "2", "search": "off"}})
	if err != nil {
		t.Fatal(err)
	}
	for n, a := range f.agents {
		c := a.cfg
		if c.Eps != 16 || c.HopLimit != 255 || c.MTU != 576 || c.K != 64 || c.S != 16 || c.MaxPorts != 2 || c.Search >= 0 {
			t.Fatalf("host %s: config %+v", g.Node(n).Name, c)
		}
	}
	for n, s := range f.switches {
		if s.hopLimit != 255 {
			t.Fatalf("switch %s: hop limit %d", g.Node(n).Name, s.hopLimit)
		}
	}
	if got := len(f.Counters()); got != g.NumNodes() {
		t.Fatalf("Counters has %d elements, want %d", got, g.NumNodes())
	}
	if _, err := New(g, scheme.Options{Params: map[string]string{"suppress": "0s"}}); !errors.Is(err, ErrBadParam) {
		t.Fatalf("suppress=0s: %v, want ErrBadParam", err)
	}
}

// Of several hosts marked controller, the first runs it.
func TestNewFirstControllerRole(t *testing.T) {
	b := topo.NewBuilder("roles")
	s := b.AddNode("s1", topo.Switch)
	for _, name := range []string{"h1", "h2", "h3"} {
		h := b.AddNode(name, topo.Host)
		b.Connect(h, s)
		if name != "h1" {
			b.Node(h).Role = "controller"
		}
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(g, scheme.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := f.ControllerNode(); g.Node(n).Name != "h2" {
		t.Fatalf("controller on %s, want h2", g.Node(n).Name)
	}
}

// Flood neighbours on fattree:4: every host lists its switch's other host
// (one tag) and the hosts of its switch's tree neighbours, nearest first,
// never itself.
// The tree takes the shortest near pairs first: the two edge switches of
// each pod (two hops apart, three tags), then three longer pairs (five
// tags) to join the pods: 7 edges for 8 edge switches.
func TestFloodNeighborTree(t *testing.T) {
	a, _, want := discoveredController(t, "fattree:4", 0, Config{})
	c := a.ctrl
	degree := map[uint64]int{}
	for _, hl := range want.Hosts {
		h := c.hosts[hl.MAC]
		if h.nbrs == nil {
			t.Fatalf("host %v has no list", hl.MAC)
		}
		var local, pod, far int
		for i, nb := range h.nbrs.Neighbors {
			if i > 0 && len(nb.Path) < len(h.nbrs.Neighbors[i-1].Path) {
				t.Fatalf("host %v: neighbours not nearest first: %+v", hl.MAC, h.nbrs.Neighbors)
			}
			switch {
			case nb.MAC == hl.MAC:
				t.Fatalf("host %v lists itself", hl.MAC)
			case len(nb.Path) == 1:
				local++
			case len(nb.Path) == 3:
				pod++
			case len(nb.Path) == 5:
				far++
			default:
				t.Fatalf("host %v: neighbour %+v", hl.MAC, nb)
			}
		}
		if local != 1 || pod != 1 {
			t.Fatalf("host %v: %d local and %d pod neighbours, want 1 and 1 (%+v)", hl.MAC, local, pod, h.nbrs.Neighbors)
		}
		degree[hl.Switch] = pod + far
	}
	sum := 0
	for _, d := range degree {
		sum += d
	}
	if len(degree) != 8 || sum != 14 {
		t.Fatalf("tree degrees %v (sum %d), want 8 switches, 7 edges", degree, sum)
	}
}

// hostsOf lists the hosts of want other than the controller's (index 0).
func hostsOf(want *Topology) []HostLoc { return want.Hosts[1:] }

// A new flood-neighbour list is sent again after the host's next query,
// like the first one.
func TestNeighborListResentAfterChange(t *testing.T) {
	a, _, want := discoveredController(t, "fattree:4", 0, Config{})
	c := a.ctrl
	h := hostsOf(want)
	q := &wire.DumbNetPathQuery{QueryID: 1, Src: h[0].MAC, Dst: h[1].MAC}
	c.query(q)
	c.query(q)
	if n := a.Counters()["ctrl_neighbor_lists_resent"]; n != 1 {
		t.Fatalf("ctrl_neighbor_lists_resent %d after two queries, want 1", n)
	}
	i, p := ctrlLink(c, want.Links[0])
	c.setLink(i, p, false)
	c.query(q)
	if n := a.Counters()["ctrl_neighbor_lists_resent"]; n != 2 {
		t.Fatalf("ctrl_neighbor_lists_resent %d after a new list and a query, want 2", n)
	}
}

// A query naming both a MAC and an IP is answered for the MAC.
func TestQueryMACBeforeIP(t *testing.T) {
	a, env, want := discoveredController(t, "fattree:4", 0, Config{})
	h := hostsOf(want)
	a.ctrl.query(&wire.DumbNetPathQuery{QueryID: 1, Src: h[0].MAC, Dst: h[1].MAC, DstIP: h[2].IP})
	var got []wire.MAC
	for _, o := range env.take() {
		_, _, payload, err := wire.ParseDumbNet(o.frame)
		if err != nil {
			t.Fatal(err)
		}
		if m, err := wire.DecodeMessage(payload); err == nil {
			if r, ok := m.(*wire.DumbNetPathReply); ok {
				got = append(got, r.Dst)
			}
		}
	}
	if len(got) != 1 || got[0] != h[1].MAC {
		t.Fatalf("replies for %v, want one for %v", got, h[1].MAC)
	}
}

// A link check that timed out leaves no probe record behind.
func TestConfirmedCheckForgetsProbe(t *testing.T) {
	a, env, want := discoveredController(t, "fattree:4", 0, Config{})
	c := a.ctrl
	l := want.Links[0]
	c.linkEvent(l.A, l.APort, false)
	env.advance(element.Second)
	if a.Counters()["ctrl_link_down_confirmed"] != 1 {
		t.Fatalf("counters %v, want the failure confirmed", a.Counters())
	}
	for seq, rec := range c.disc.pending {
		if rec.kind == kindLinkDown {
			t.Fatalf("confirmed check's probe %d still pending", seq)
		}
	}
}

// Late host answers: one from a host the controller knows is nothing to
// look for; one from a stranger while a rescan runs is looked for when
// it ends.
func TestLateHostReplies(t *testing.T) {
	a, _, want := discoveredController(t, "fattree:4", 0, Config{MaxPorts: 6})
	c := a.ctrl
	h := hostsOf(want)[0]
	a.Receive(1, ctrl(t, a.mac, h.MAC, &wire.DumbNetProbeReply{Seq: 99, HostMAC: h.MAC, HostIP: h.IP, Path: []uint8{1}}))
	if n := a.Counters(); n["ctrl_late_host_replies"] != 0 || n["ctrl_host_rescans"] != 0 || c.disc.running {
		t.Fatalf("a known host's late answer: counters %v, running %v", n, c.disc.running)
	}
	c.rescanHosts()
	if !c.disc.running {
		t.Fatal("rescan not running")
	}
	stranger := wire.MAC{0x02, 0xee, 0, 0, 0, 1}
	c.unmatchedHostReply(&wire.DumbNetProbeReply{Seq: 99, HostMAC: stranger, Path: []uint8{1}})
	if !c.lateHost || a.Counters()["ctrl_late_host_replies"] != 1 {
		t.Fatalf("a stranger's answer during a rescan: lateHost %v, counters %v", c.lateHost, a.Counters())
	}
}

// A rescan for missed hosts where every port is known sends nothing and
// starts no round; a port coming up while a rescan runs is not rescanned
// on top of it.
func TestRescanEdges(t *testing.T) {
	a, env, _ := discoveredController(t, "fattree:4", 0, Config{MaxPorts: 4})
	c := a.ctrl
	probes := c.Probes()
	c.rescanHosts()
	env.advance(element.Second)
	if c.disc.running || c.Probes() != probes || a.Counters()["ctrl_host_rescans"] != 0 || c.disc.rounds.Load() != 0 {
		t.Fatalf("rescan with no empty port: running %v, %d probes, counters %v", c.disc.running, c.Probes()-probes, a.Counters())
	}

	a, _, want := discoveredController(t, "fattree:4", 0, Config{MaxPorts: 6})
	c = a.ctrl
	c.rescanHosts()
	c.linkEvent(want.Switches[0], 5, true)
	if n := a.Counters()["ctrl_rescans"]; n != 0 || len(c.disc.frontier) != 20 {
		t.Fatalf("port up during a host rescan: ctrl_rescans %d, frontier %d", n, len(c.disc.frontier))
	}
}

// A probe path of DumbNetMaxTags tags is sent; one more is not.
func TestProbePathTagLimit(t *testing.T) {
	a := NewAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true})
	a.Attach(newFakeEnv(), []element.PortInfo{{Port: 1, Up: true}, {Port: 2, Up: true, Local: true}})
	d := a.ctrl.disc
	d.stop()
	half := make([]uint8, wire.DumbNetMaxTags/2)
	for i := range half {
		half[i] = 1
	}
	d.addSwitch(1, half[:len(half)-1], half)
	d.addSwitch(2, half, half)
	if _, ok := d.build(probeRec{kind: kindHost, sw: 0, p: 3}); !ok {
		t.Fatalf("a %d-tag probe refused", wire.DumbNetMaxTags)
	}
	if _, ok := d.build(probeRec{kind: kindHost, sw: 1, p: 3}); ok || a.Counters()["probe_path_too_long"] != 1 {
		t.Fatalf("a %d-tag probe built (counters %v)", wire.DumbNetMaxTags+1, a.Counters())
	}
}

// A verified link's check is over: when the link fails and comes back
// again, it is verified again.
func TestLinkVerifiedTwice(t *testing.T) {
	a, env, want := discoveredController(t, "fattree:4", 0, Config{})
	c := a.ctrl
	l := want.Links[0]
	i, p := ctrlLink(c, l)
	for round := range 2 {
		c.setLink(i, p, false)
		probes := c.Probes()
		c.linkEvent(l.A, l.APort, true)
		env.advance(10 * c.disc.gap)
		if c.Probes() != probes+2 {
			t.Fatalf("round %d: %d verification probes, want 2", round, c.Probes()-probes)
		}
		c.linkUpVerified(l.A, l.APort)
		if !c.g.peerOf(i, p).up || len(c.upChecks) != 0 {
			t.Fatalf("round %d: link up %v, %d checks left", round, c.g.peerOf(i, p).up, len(c.upChecks))
		}
	}
}

// Snapshot follows the topology: discovery's, then each change.
func TestSnapshotFollowsChanges(t *testing.T) {
	a, _, want := discoveredController(t, "line:3", 0, Config{})
	c := a.ctrl
	if s := c.Snapshot(); s == nil || s.Diff(want) != nil {
		t.Fatalf("snapshot after discovery %+v", s)
	}
	i, p := ctrlLink(c, want.Links[0])
	c.setLink(i, p, false)
	s := c.Snapshot()
	if s == nil || s.Links[0].Up || !s.Links[1].Up {
		t.Fatalf("snapshot after a failure %+v, want link 0 down", s)
	}
	if v, st, ok := c.store.Topology(); !ok || v != c.Version() || st != s {
		t.Fatalf("store holds version %d (ok %v), controller %d", v, ok, c.Version())
	}
}

// A patch that tells a host what it already knows (a link it holds up is
// up) leaves its PathTable entries as they are: only a repaired link
// recomputes them.
func TestPatchWithoutChangeKeepsEntries(t *testing.T) {
	a, env := newTestAgent()
	withPaths(a, env, twoPaths)
	e := a.table.Lookup(macB)
	a.topoPatch(&wire.DumbNetTopoPatch{Version: 2, Links: []wire.DumbNetLink{{A: 1, APort: 1, B: 2, BPort: 1, Flags: wire.LinkUp}}})
	if got := a.table.Lookup(macB); got != e || got.Version != 1 || a.Counters()["patches_applied"] != 1 {
		t.Fatalf("entry %+v (same %v), counters %v; want the version-1 entry kept", got, got == e, a.Counters())
	}
}

// A flood-neighbour list holds at most DumbNetMaxNeighbors entries, so
// that it still fits its message: here switch 1 has 250 hosts and 253
// tree neighbours (switches 3 hops away, behind hostless switches, and
// 4 hops from each other).
func TestNeighborListBound(t *testing.T) {
	hostMAC := func(i int) wire.MAC { return wire.MAC{2, 0, 0, 1, byte(i >> 8), byte(i)} }
	a, env := attachedAgent(Config{Name: "c", MAC: hostMAC(1), IP: ipA, Search: -1, Controller: true})
	c := a.ctrl
	c.disc.stop()
	c.g = newNetGraph()
	s0, x := c.g.addSwitch(1), c.g.addSwitch(2)
	c.g.addLink(s0, 251, x, 1, true, 0)
	for p := uint16(1); p <= 250; p++ {
		c.hosts[hostMAC(int(p))] = &hostRec{loc: HostLoc{MAC: hostMAC(int(p)), Switch: 1, Port: p}, at: attach{sw: s0, port: p}}
	}
	for j := range 253 {
		y, l := c.g.addSwitch(uint64(1000+j)), c.g.addSwitch(uint64(2000+j))
		c.g.addLink(x, uint16(j+2), y, 1, true, 0)
		c.g.addLink(y, 2, l, 1, true, 0)
		mac := hostMAC(1000 + j)
		c.hosts[mac] = &hostRec{loc: HostLoc{MAC: mac, Switch: uint64(2000 + j), Port: 2}, at: attach{sw: l, port: 2}}
	}
	c.root = attach{sw: s0, port: 1}
	c.version, c.ready = 1, true
	env.advance(element.Second)
	env.take()
	c.sendNeighbors()
	h := c.hosts[hostMAC(2)]
	if h.nbrs == nil || len(h.nbrs.Neighbors) != wire.DumbNetMaxNeighbors || a.Counters()["ctrl_encode_error"] != 0 {
		t.Fatalf("list of %d neighbours, counters %v; want %d", len(h.nbrs.Neighbors), a.Counters(), wire.DumbNetMaxNeighbors)
	}
	if far := h.nbrs.Neighbors[len(h.nbrs.Neighbors)-1]; len(far.Path) != 4 {
		t.Fatalf("last neighbour %+v, want a tree neighbour 3 hops away", far)
	}
}

// A host answer counts only with the path of the probe it answers; the
// same host answering again for its port is no conflict, another host is.
func TestHostReplyMatching(t *testing.T) {
	a, _ := noCtrlAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1})
	d := newDiscovery(a, false)
	s := d.addSwitch(1, []uint8{4}, []uint8{2})
	rec := probeRec{kind: kindHost, sw: 0, p: 3}
	d.pending[7] = rec
	if d.hostReply(&wire.DumbNetProbeReply{Seq: 7, HostMAC: macB, Path: []uint8{4, 3, 1}}) || d.pending[7].kind != kindHost || len(s.hosts) != 0 {
		t.Fatalf("an answer with another path taken: pending %v, hosts %v", d.pending, s.hosts)
	}
	for i, mac := range []wire.MAC{macB, macB, macC} {
		seq := uint32(7 + i)
		d.pending[seq] = rec
		if !d.hostReply(&wire.DumbNetProbeReply{Seq: seq, HostMAC: mac, Path: []uint8{4, 3, 2}}) {
			t.Fatalf("answer %d from %v not matched", seq, mac)
		}
	}
	if s.hosts[3].HostMAC != macB || len(d.pending) != 0 || a.Counters()["drop_identity_conflict"] != 1 {
		t.Fatalf("host on port 3: %v, pending %v, counters %v; want %v and one conflict", s.hosts[3].HostMAC, d.pending, a.Counters(), macB)
	}
}

// resolve at its edges: a host answer from a port whose link is already
// known (found from the other end) places no host; a cable between two
// ports of one switch is one link, not also a link from a port to itself
// (a probe out of either end comes back); ports of a neighbour that do
// not pair up are counted.
func TestResolveEdges(t *testing.T) {
	a, _ := noCtrlAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1})
	d := newDiscovery(a, false)
	s := d.addSwitch(1, nil, []uint8{1})
	s.known[3] = true
	s.hosts[3] = wire.DumbNetProbeReply{HostMAC: macB, HostIP: ipB}
	s.hosts[4] = wire.DumbNetProbeReply{HostMAC: macC}
	s.verified = map[uint16]map[uint16]uint64{2: {5: 1, 2: 1}, 6: {8: 9}, 7: {8: 9}}
	d.resolve(0)
	if len(d.hosts) != 1 || d.hosts[macC].Port != 4 || a.Counters()["host_reply_behind_switch"] != 1 {
		t.Fatalf("hosts %v, counters %v; want only %v on port 4", d.hosts, a.Counters(), macC)
	}
	want := map[Link]bool{{A: 1, APort: 2, B: 1, BPort: 5, Up: true}: true, {A: 1, APort: 6, B: 9, BPort: 8, Up: true}: true}
	if len(d.links) != len(want) || !d.links[normLink(Link{A: 1, APort: 2, B: 1, BPort: 5, Up: true})] || !d.links[normLink(Link{A: 1, APort: 6, B: 9, BPort: 8, Up: true})] {
		t.Fatalf("links %v, want %v", d.links, want)
	}
	if a.Counters()["discovery_unpaired_ports"] != 1 {
		t.Fatalf("counters %v, want the unpaired ports counted", a.Counters())
	}
}

// A down check sent during a rescan round and answered after the round
// ended refutes the report: the round's end keeps its probe record. The
// check's last probe leaves (linkCheckTries-1)·gap after the report (the
// pacer was idle), the round ends a wait after it, and the check's timer
// a gap later.
func TestDownCheckOutlivesRescanRound(t *testing.T) {
	a, env, want := discoveredController(t, "fattree:4", 0, Config{MaxPorts: 6})
	c := a.ctrl
	l := want.Links[0]
	c.heardFrom(wire.MAC{0x02, 0xee, 0, 0, 0, 1})
	env.advance(element.Millisecond) // the rescan's 40 probes are out
	c.linkEvent(l.A, l.APort, false)
	answer := probeEcho(t, a, c.disc.seq, l.A)
	env.advance(c.disc.wait() + scale(linkCheckTries-1, c.disc.gap) + c.disc.gap/2)
	if c.disc.running || c.disc.rounds.Load() != 1 {
		t.Fatalf("the rescan round has not ended (running %v)", c.disc.running)
	}
	a.Receive(1, answer)
	env.advance(element.Second)
	if n := a.Counters(); n["ctrl_link_down_refuted"] != 1 || n["ctrl_link_down_confirmed"] != 0 || !c.Topology().Links[0].Up {
		t.Fatalf("counters %v, link up %v: want the report refuted", n, c.Topology().Links[0].Up)
	}
}

// The fragments of one datagram hash as one flow: only the first carries
// the ports, and the rest hashed on payload bytes (300 datagrams of one
// UDP flow made 301 flow bindings over every path). A whole datagram
// still hashes on its ports.
func TestFlowHashFragments(t *testing.T) {
	a, _ := newTestAgent()
	frag := func(mfOffset uint16, payload byte) []byte {
		f := ipv4(60, false)
		ip := f[wire.EthHeaderLen:]
		binary.BigEndian.PutUint16(ip[6:8], mfOffset)
		for i := 20; i < 60; i++ {
			ip[i] = payload
		}
		return f
	}
	first := a.flowHash(frag(0x2000, 1)) // MF, offset 0: carries the ports
	for _, f := range [][]byte{frag(0x2000, 2), frag(0x0005, 3), frag(0x2010, 4), frag(0x1fff, 5)} {
		if h := a.flowHash(f); h != first {
			t.Errorf("fragment %x hashes %x, the first %x", f[wire.EthHeaderLen+6:wire.EthHeaderLen+8], h, first)
		}
	}
	if a.flowHash(frag(0, 1)) == a.flowHash(frag(0, 2)) {
		t.Error("whole datagrams with other ports hash alike")
	}
}

// IPv6 flows hash on addresses, next header and ports, as IPv4's do: 200
// flows to one destination left by one path.
func TestFlowHashIPv6(t *testing.T) {
	a, _ := newTestAgent()
	v6 := func(nh byte, sport uint16) []byte {
		ip := make([]byte, 48)
		ip[0], ip[6], ip[7] = 0x60, nh, 64
		ip[8], ip[24] = 0xfd, 0xfd
		ip[23], ip[39] = 1, 2
		binary.BigEndian.PutUint16(ip[40:], sport)
		binary.BigEndian.PutUint16(ip[42:], 80)
		return wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv6, ip)
	}
	seen := map[uint64]bool{}
	for p := range uint16(200) {
		seen[a.flowHash(v6(6, 1000+p))] = true
	}
	if len(seen) != 200 {
		t.Errorf("200 TCP flows gave %d hashes", len(seen))
	}
	if a.flowHash(v6(6, 1000)) != a.flowHash(v6(6, 1000)) {
		t.Error("one flow hashes two ways")
	}
	// An extension header (here a fragment header, 44) hides the ports.
	if a.flowHash(v6(44, 1000)) != a.flowHash(v6(44, 2000)) {
		t.Error("ports read behind an extension header")
	}
}

// With no controller known, held destinations arm no timers (each re-armed
// one every query timeout for ever: 2,000 destinations kept 2,000 timers
// firing 50 times a second); the controller, once found, is asked for
// every one. New destinations past maxQueries are counted drops.
func TestQueriesWaitForController(t *testing.T) {
	a := NewAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1})
	env := newFakeEnv()
	a.Attach(env, []element.PortInfo{{Port: 1, Up: true}, {Port: 2, Up: true, Local: true}})
	live := func() int {
		n := 0
		for _, tm := range env.timers {
			if !tm.dead {
				n++
			}
		}
		return n
	}
	before := live()
	for i := range 100 {
		a.hold(wire.MAC{2, 9, 0, 0, 0, byte(i)}, netip.Addr{}, ipv4(40, false), nil)
	}
	env.advance(10 * element.Second)
	if n := live(); n > before {
		t.Errorf("%d live timers after 10 s without a controller, %d before the holds", n, before)
	}
	a.setController(macB, []uint8{3, 1})
	if got := a.Counters()["path_queries"]; got != 100 {
		t.Errorf("path_queries %d once the controller is known, want 100", got)
	}

	// The table of destinations waited on is bounded.
	b := NewAgent(Config{Name: "b", MAC: macA, IP: ipA, Search: -1})
	b.Attach(newFakeEnv(), []element.PortInfo{{Port: 1, Up: true}, {Port: 2, Up: true, Local: true}})
	for i := range maxQueries + 10 {
		b.hold(wire.MAC{2, 8, 0, byte(i >> 16), byte(i >> 8), byte(i)}, netip.Addr{}, ipv4(40, false), nil)
	}
	if got := b.Counters()["drop_query_table_full"]; got != 10 || len(b.queries) != maxQueries {
		t.Errorf("drop_query_table_full %d, %d queries; want 10 and %d", got, len(b.queries), maxQueries)
	}
}
