package dumbnet

import (
	"bytes"
	"net/netip"
	"slices"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

var (
	ipA = netip.MustParseAddr("10.0.0.1")
	ipB = netip.MustParseAddr("10.0.0.2")
)

// newTestAgent attaches an agent with NIC 1 and Local port 2, and tells it
// where the controller is.
func newTestAgent() (*Agent, *fakeEnv) {
	a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1})
	return a, env
}

// reply answers the agent's outstanding query as the controller would:
// both hosts on one switch 0x10, A on port 1, B on port 2.
func reply(a *Agent, id uint32) {
	a.pathReply(&wire.DumbNetPathReply{QueryID: id, Version: 1, Src: macA, Dst: macB, SrcSwitch: 0x10, SrcPort: 1, DstSwitch: 0x10, DstPort: 2})
}

func TestAgentAnswersARPAndPushesPath(t *testing.T) {
	a, env := newTestAgent()
	req := wire.ARP{Op: wire.ARPRequest, SenderMAC: macA, SenderIP: ipA, TargetIP: ipB}
	f, _ := wire.AppendARPFrame(nil, wire.Broadcast, 0, &req)
	a.Receive(2, f)
	out := env.take()
	if len(out) != 1 || out[0].port != 1 {
		t.Fatalf("sent %v, want one path query on the NIC", out)
	}
	_, _, payload, err := wire.ParseDumbNet(out[0].frame)
	if err != nil {
		t.Fatal(err)
	}
	var q wire.DumbNetPathQuery
	if err := q.DecodeFromBytes(payload); err != nil || q.DstIP != ipB || q.Src != macA {
		t.Fatalf("query %+v err %v", q, err)
	}
	reply(a, q.QueryID)
	out = env.take()
	if len(out) != 1 || out[0].port != 2 {
		t.Fatalf("sent %v, want the ARP reply to the stack", out)
	}
	rep, err := wire.DecodeARP(out[0].frame)
	if err != nil || rep.Op != wire.ARPReply || rep.SenderMAC != macB || rep.SenderIP != ipB {
		t.Fatalf("ARP reply %+v err %v", rep, err)
	}
	// Data to B gets the path pushed: port 2 of the shared switch.
	data := wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, make([]byte, 40))
	a.Receive(2, data)
	out = env.take()
	if len(out) != 1 || out[0].port != 1 {
		t.Fatalf("sent %v", out)
	}
	tags, inner, _, err := wire.ParseDumbNet(out[0].frame)
	if err != nil || !bytes.Equal(tags, []uint8{2}) || inner != wire.EtherTypeIPv4 {
		t.Fatalf("pushed tags %v inner %#x err %v", tags, inner, err)
	}
}

func TestAgentStripsAndDrops(t *testing.T) {
	a, env := newTestAgent()
	good := wire.AppendEthernet(nil, macA, macB, wire.EtherTypeDumbNet, []byte{0xff, 0x08, 0x00})
	good = append(good, make([]byte, 40)...)
	a.Receive(1, good)
	out := env.take()
	want := wire.AppendEthernet(nil, macA, macB, wire.EtherTypeIPv4, make([]byte, 40))
	if len(out) != 1 || out[0].port != 2 || !bytes.Equal(out[0].frame, want) {
		t.Fatalf("delivered %v", out)
	}
	cases := []struct {
		name, counter string
		frame         []byte
	}{
		{"tags left", "drop_not_at_end", append(wire.AppendEthernet(nil, macA, macB, wire.EtherTypeDumbNet, []byte{4, 0xff, 0x08, 0x00}), make([]byte, 40)...)},
		{"not for us", "drop_not_for_us", append(wire.AppendEthernet(nil, macB, macB, wire.EtherTypeDumbNet, []byte{0xff, 0x08, 0x00}), make([]byte, 40)...)},
		{"no end marker", "drop_truncated", wire.AppendEthernet(nil, macA, macB, wire.EtherTypeDumbNet, []byte{1, 2})},
		{"plain ethernet", "drop_not_dumbnet", wire.AppendEthernet(nil, macA, macB, wire.EtherTypeIPv4, make([]byte, 40))},
		{"runt", "drop_truncated", []byte{1}},
		{"forged reply", "drop_forged_reply", ctrl(t, macA, macA, &wire.DumbNetPathReply{QueryID: 9, Src: macA, Dst: macB})},
		{"garbage control", "drop_bad_control", append(wire.AppendEthernet(nil, macA, macB, wire.EtherTypeDumbNet, []byte{0xff, 0x88, 0xb5}), 0x27, 1)},
	}
	for _, c := range cases {
		before := a.Counters()[c.counter]
		a.Receive(1, c.frame)
		if got := a.Counters()[c.counter]; got != before+1 {
			t.Errorf("%s: %s = %d, want %d (%v)", c.name, c.counter, got, before+1, a.Counters())
		}
		if out := env.take(); len(out) != 0 {
			t.Errorf("%s: sent %v", c.name, out)
		}
	}
}

func ctrl(t testing.TB, dst, src wire.MAC, m wire.Message) []byte {
	t.Helper()
	b := wire.AppendEthernet(nil, dst, src, wire.EtherTypeDumbNet, []byte{0xff, 0x88, 0xb5})
	b, err := m.AppendTo(b)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAgentAnswersProbe(t *testing.T) {
	a, env := newTestAgent()
	pm := wire.DumbNetProbe{Seq: 5, SrcMAC: macB, SrcIP: ipB, Path: []uint8{1, 4, 2}}
	payload, _ := pm.AppendTo(nil)
	// Two tags consumed, "2" is the way back.
	f := wire.AppendEthernet(nil, wire.Broadcast, macB, wire.EtherTypeDumbNet, []byte{2, 0xff, 0x88, 0xb5})
	a.Receive(1, append(f, payload...))
	out := env.take()
	if len(out) != 1 || out[0].port != 1 {
		t.Fatalf("sent %v", out)
	}
	tags, _, body, err := wire.ParseDumbNet(out[0].frame)
	if err != nil || !bytes.Equal(tags, []uint8{2}) {
		t.Fatalf("reply tags %v err %v", tags, err)
	}
	var r wire.DumbNetProbeReply
	if err := r.DecodeFromBytes(body); err != nil || r.Seq != 5 || r.HostMAC != macA || r.Controller != macB || !bytes.Equal(r.Path, pm.Path) {
		t.Fatalf("reply %+v err %v", r, err)
	}
	// A PM whose remaining tags are not the tail of its path is forged.
	f = wire.AppendEthernet(nil, wire.Broadcast, macB, wire.EtherTypeDumbNet, []byte{3, 0xff, 0x88, 0xb5})
	a.Receive(1, append(f, payload...))
	if len(env.take()) != 0 || a.Counters()["drop_probe_inconsistent"] != 1 {
		t.Fatalf("inconsistent PM answered: %v", a.Counters())
	}
}

func TestAgentFailsOverOnNotification(t *testing.T) {
	a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, K: 1})
	// Square: 1 -(p1/p1)- 2 -(p2/p1)- 4, 1 -(p2/p1)- 3 -(p2/p2)- 4; A on
	// 1:9, B on 4:9. Primary through 2, backup through 3.
	a.hold(macB, netip.Addr{}, nil, nil)
	links := []wire.DumbNetLink{
		{A: 1, APort: 1, B: 2, BPort: 1, Flags: wire.LinkUp | wire.LinkPrimary},
		{A: 2, APort: 2, B: 4, BPort: 1, Flags: wire.LinkUp | wire.LinkPrimary},
		{A: 1, APort: 2, B: 3, BPort: 1, Flags: wire.LinkUp | wire.LinkBackup},
		{A: 3, APort: 2, B: 4, BPort: 2, Flags: wire.LinkUp | wire.LinkBackup},
	}
	a.pathReply(&wire.DumbNetPathReply{QueryID: 1, Version: 1, Src: macA, Dst: macB, SrcSwitch: 1, SrcPort: 9, DstSwitch: 4, DstPort: 9, Links: links})
	e := a.table.Lookup(macB)
	if e == nil || !bytes.Equal(e.Paths[0], []uint8{1, 2, 9}) || !bytes.Equal(e.Backup, []uint8{2, 2, 9}) {
		t.Fatalf("entry %+v", e)
	}
	if err := a.cache.Verify([]uint8{2, 2, 9}, macB); err != nil {
		t.Fatal(err)
	}
	if err := a.cache.Verify([]uint8{2, 1, 9}, macB); err == nil {
		t.Fatal("verify accepted a path that ends on the wrong switch")
	}
	m := wire.DumbNetPortStatus{SwitchID: 2, Port: 2, State: wire.PortDown, HopLimit: 4, Seq: 1}
	f, _ := wire.AppendControlFrame(nil, wire.Broadcast, macB, &m)
	env.take()
	a.Receive(1, f)
	e = a.table.Lookup(macB)
	if e == nil || !bytes.Equal(e.Paths[0], []uint8{2, 2, 9}) {
		t.Fatalf("after failure entry %+v", e)
	}
	if err := a.cache.Verify([]uint8{1, 2, 9}, macB); err == nil {
		t.Fatal("verify accepted a path over the failed link")
	}
	// The notification is flooded to the controller and to B.
	out := env.take()
	if len(out) != 1 {
		t.Fatalf("flooded %d frames, want 1 (B is the controller here)", len(out))
	}
	// The same notification again is a duplicate.
	a.Receive(1, f)
	if a.Counters()["notify_duplicate"] != 1 || len(env.take()) != 0 {
		t.Fatalf("duplicate handled: %v", a.Counters())
	}
}

func FuzzAgentReceive(f *testing.F) {
	pm := wire.DumbNetProbe{Seq: 5, SrcMAC: macB, SrcIP: ipB, Path: []uint8{1, 4, 2}}
	payload, _ := pm.AppendTo(nil)
	fr := wire.AppendEthernet(nil, wire.Broadcast, macB, wire.EtherTypeDumbNet, []byte{2, 0xff, 0x88, 0xb5})
	f.Add(uint8(1), append(fr, payload...))
	f.Add(uint8(1), append(wire.AppendEthernet(nil, macA, macB, wire.EtherTypeDumbNet, []byte{0xff, 0x08, 0x00}), make([]byte, 20)...))
	m := wire.DumbNetPortStatus{SwitchID: 2, Port: 2, State: wire.PortDown, HopLimit: 4, Seq: 1}
	c, _ := wire.AppendControlFrame(nil, wire.Broadcast, macB, &m)
	f.Add(uint8(1), c)
	req := wire.ARP{Op: wire.ARPRequest, SenderMAC: macA, SenderIP: ipA, TargetIP: ipB}
	arp, _ := wire.AppendARPFrame(nil, wire.Broadcast, 0, &req)
	f.Add(uint8(2), arp)
	rep, _ := (&wire.DumbNetPathReply{QueryID: 1, Src: macA, Dst: macB, Links: []wire.DumbNetLink{{A: 1, APort: 1, B: 2, BPort: 1, Flags: wire.LinkUp}}}).AppendTo(nil)
	f.Add(uint8(1), append(wire.AppendEthernet(nil, macA, macB, wire.EtherTypeDumbNet, []byte{0xff, 0x88, 0xb5}), rep...))
	// The controller's messages, for each state the port's bits pick.
	for _, m := range []wire.Message{
		&wire.DumbNetNeighbors{Version: 2, Neighbors: []wire.DumbNetNeighbor{{MAC: macC, Path: []uint8{1}}}},
		&wire.DumbNetTopoPatch{Version: 2, Links: []wire.DumbNetLink{{A: 1, APort: 1, B: 2, BPort: 1, Flags: wire.LinkUp}}},
		&wire.DumbNetTopoPatch{Version: 2, Links: []wire.DumbNetLink{{A: 1, APort: 1, B: 2, BPort: 1}}},
		&wire.DumbNetPathReply{QueryID: 1, Version: 1, Src: macA, Dst: macB, SrcSwitch: 1, SrcPort: 9, DstSwitch: 1, DstPort: 8},
		&wire.DumbNetPathQuery{QueryID: 1, Src: macB, Dst: macA},
		&wire.DumbNetSwitchID{SwitchID: 5},
	} {
		for _, port := range []uint8{1, 3, 5} {
			f.Add(port, ctrl(f, macA, macB, m))
		}
	}
	// Answers to a search's first probe (seq 1, path 0-1).
	echo, _ := (&wire.DumbNetProbe{Seq: 1, SrcMAC: macA, Path: []uint8{0, 1}}).AppendTo(nil)
	f.Add(uint8(9), ctrl(f, macA, macB, &wire.DumbNetSwitchID{SwitchID: 5, Echo: echo}))
	f.Add(uint8(9), ctrl(f, macA, macB, &wire.DumbNetProbeReply{Seq: 1, HostMAC: macB, Controller: macB, Path: []uint8{0, 1}}))
	f.Add(uint8(1), announce(f, []uint8{4, 2}))
	f.Add(uint8(1), announce(f, nil))
	f.Add(uint8(3), wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, make([]byte, 40)))
	f.Add(uint8(5), ctrl(f, macA, macC, &wire.DumbNetHostNotify{Origin: macC, Seq: 1, SwitchID: 2, Port: 2, State: wire.PortDown}))
	f.Fuzz(func(t *testing.T, port uint8, frame []byte) {
		// Bit 0 of port picks the NIC or the stack; bit 1 an agent with a
		// path to B (else its query for B is out); bit 2 one that does not
		// know the controller yet, bit 3 with it searching for it.
		var a *Agent
		var env *fakeEnv
		if port&12 != 0 {
			search := element.Time(-1)
			if port&8 != 0 {
				search = element.Millisecond
			}
			a = NewAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: search})
			env = newFakeEnv()
			a.Attach(env, []element.PortInfo{{Port: 1, Up: true}, {Port: 2, Up: true, Local: true}})
			env.advance(2 * element.Millisecond) // the search's first probes
		} else {
			a, env = newTestAgent()
		}
		if port&2 != 0 {
			withPaths(a, env, twoPaths)
		} else {
			a.hold(macB, netip.Addr{}, nil, nil)
		}
		env.take()
		before := a.Counters()
		a.Receive(element.Port(port%2+1), frame)
		// Every frame moves a counter: nothing is lost, or handled,
		// silently.
		if moved(before, a.Counters()) == 0 {
			t.Fatalf("frame %x on port %d: no counter moved (%v)", frame, port%2+1, a.Counters())
		}
		env.advance(element.Second)
		for _, o := range env.take() {
			if o.port != 1 && o.port != 2 {
				t.Fatalf("sent on port %d", o.port)
			}
		}
	})
}

// moved is by how much the counters grew from before to after.
func moved(before, after map[string]uint64) uint64 {
	var n uint64
	for k, v := range after {
		n += v - before[k]
	}
	return n
}

func TestAgentFlowlets(t *testing.T) {
	a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, K: 2, Flowlets: true, FlowletGap: element.Millisecond})
	withPaths(a, env, twoPaths)
	data := wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, make([]byte, 40))
	first := func() uint8 { return firstTag(t, a, env, data) }
	used := map[uint8]int{}
	for range 40 {
		// Inside a flowlet the path never changes.
		p := first()
		for range 5 {
			env.advance(100 * element.Microsecond)
			if q := first(); q != p {
				t.Fatalf("path changed inside a flowlet: %d then %d", p, q)
			}
		}
		used[p]++
		env.advance(2 * element.Millisecond) // a gap: new flowlet
	}
	if len(used) != 2 {
		t.Fatalf("flowlets used paths %v, want both", used)
	}
	if a.Counters()["flowlet_switches"] != 39 {
		t.Fatalf("flowlet_switches = %d, want 39", a.Counters()["flowlet_switches"])
	}
}

// TestFlowletPathsDeterministic: the path of each flowlet follows from
// the flow and its flowlet ID alone (§6.2: the routing function "can then
// deterministically choose one of the many k paths ... based on the
// flowlet ID"), not from the random numbers anything else draws: two
// agents attached alike, one of whose environments draws numbers between
// packets, send a flow's 30 flowlets along the same paths, each another
// path than the one before, over all three.
func TestFlowletPathsDeterministic(t *testing.T) {
	var seqs [2][]uint8
	for i := range seqs {
		a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, K: 3, Flowlets: true, FlowletGap: element.Millisecond})
		withPaths(a, env, threePaths)
		data := wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, make([]byte, 40))
		for range 30 {
			seqs[i] = append(seqs[i], firstTag(t, a, env, data))
			if i == 1 {
				env.Rand().Uint64()
			}
			env.advance(2 * element.Millisecond)
		}
	}
	if !slices.Equal(seqs[0], seqs[1]) {
		t.Fatalf("flowlet paths depend on other random draws:\n%v\n%v", seqs[0], seqs[1])
	}
	used := map[uint8]bool{}
	for k, p := range seqs[0] {
		used[p] = true
		if k > 0 && p == seqs[0][k-1] {
			t.Fatalf("flowlet %d kept the path of the one before: %v", k, seqs[0])
		}
	}
	if len(used) != 3 {
		t.Fatalf("flowlets used %v, want all three paths", seqs[0])
	}
}

func TestAgentFragmentationNeeded(t *testing.T) {
	a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, MTU: 1500})
	a.hold(macB, netip.Addr{}, nil, nil)
	reply(a, 1)
	env.take()
	ipPacket := func(n int, df bool) []byte {
		ip := make([]byte, n)
		ip[0] = 0x45
		ip[2], ip[3] = byte(n>>8), byte(n)
		if df {
			ip[6] = 0x40
		}
		ip[9] = 6
		copy(ip[12:16], ipA.AsSlice())
		copy(ip[16:20], ipB.AsSlice())
		return wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, ip)
	}
	// 1496 bytes of IP plus one tag, the end marker and the inner type fit.
	a.Receive(2, ipPacket(1496, true))
	if out := env.take(); len(out) != 1 || out[0].port != 1 {
		t.Fatalf("a packet that fits: sent %v", out)
	}
	a.Receive(2, ipPacket(1500, true))
	out := env.take()
	if len(out) != 1 || out[0].port != 2 {
		t.Fatalf("too big with DF: sent %v, want ICMP to the stack", out)
	}
	icmp := out[0].frame[wire.EthHeaderLen+20:]
	if icmp[0] != 3 || icmp[1] != 4 || int(icmp[6])<<8|int(icmp[7]) != 1496 {
		t.Fatalf("ICMP %x, want type 3 code 4 next-hop MTU 1496", icmp[:8])
	}
	if inetChecksum(out[0].frame[wire.EthHeaderLen:wire.EthHeaderLen+20]) != 0 || inetChecksum(icmp) != 0 {
		t.Fatal("bad checksum")
	}
	a.Receive(2, ipPacket(1500, false))
	if len(env.take()) != 0 || a.Counters()["drop_too_big"] != 1 {
		t.Fatalf("too big without DF: %v", a.Counters())
	}
}

// TestAgentRecoversFromForgedPatchVersion: a patch forged with the
// controller's MAC and a huge version fails both first hops. The real
// controller's next answer to this host's query carries a lower version
// than the cache had when the query left, which a real controller cannot
// do: the cache takes the answer's version and links, and real patches are
// applied again (before, every later patch was stale and the links stayed
// down for good).
func TestAgentRecoversFromForgedPatchVersion(t *testing.T) {
	a, _ := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, K: 1})
	links := []wire.DumbNetLink{
		{A: 1, APort: 1, B: 2, BPort: 1, Flags: wire.LinkUp | wire.LinkPrimary},
		{A: 2, APort: 2, B: 4, BPort: 1, Flags: wire.LinkUp | wire.LinkPrimary},
		{A: 1, APort: 2, B: 3, BPort: 1, Flags: wire.LinkUp | wire.LinkBackup},
		{A: 3, APort: 2, B: 4, BPort: 2, Flags: wire.LinkUp | wire.LinkBackup},
	}
	answer := func(version uint64) {
		t.Helper()
		q := a.byDst[macB]
		if q == nil {
			t.Fatal("no query outstanding")
		}
		a.pathReply(&wire.DumbNetPathReply{QueryID: q.id, Version: version, Src: macA, Dst: macB, SrcSwitch: 1, SrcPort: 9, DstSwitch: 4, DstPort: 9, Links: links})
	}
	a.hold(macB, netip.Addr{}, nil, nil)
	answer(1)
	if a.table.Lookup(macB) == nil {
		t.Fatal("no entry after the first answer")
	}
	a.topoPatch(&wire.DumbNetTopoPatch{Version: 1 << 62, Links: []wire.DumbNetLink{
		{A: 1, APort: 1, B: 2, BPort: 1}, {A: 1, APort: 2, B: 3, BPort: 1}}})
	if a.table.Lookup(macB) != nil || a.byDst[macB] == nil {
		t.Fatal("the forged patch did not send the host back to the controller")
	}
	// A real patch is stale against the forged version...
	a.topoPatch(&wire.DumbNetTopoPatch{Version: 2, Links: []wire.DumbNetLink{{A: 1, APort: 1, B: 2, BPort: 1, Flags: wire.LinkUp}}})
	if a.Counters()["patch_stale"] != 1 {
		t.Fatalf("counters %v, want patch_stale 1", a.Counters())
	}
	// ...until the controller's answer, which resets it.
	answer(3)
	c := a.Counters()
	if e := a.table.Lookup(macB); e == nil || !bytes.Equal(e.Paths[0], []uint8{1, 2, 9}) {
		t.Fatalf("entry after the real answer %+v, counters %v", e, c)
	}
	if c["version_reset"] != 1 || a.cache.version != 3 {
		t.Fatalf("version_reset %d, cache version %d; want 1, 3", c["version_reset"], a.cache.version)
	}
	applied := c["patches_applied"]
	a.topoPatch(&wire.DumbNetTopoPatch{Version: 4, Links: []wire.DumbNetLink{{A: 2, APort: 2, B: 4, BPort: 1}}})
	if a.Counters()["patches_applied"] != applied+1 {
		t.Fatalf("a real patch after the reset was not applied: %v", a.Counters())
	}
}

// TestAgentControlDropsCounted: every control message an agent cannot use
// is dropped under its own counter and draws no answer.
func TestAgentControlDropsCounted(t *testing.T) {
	other := wire.MAC{2, 0, 0, 0, 0, 0xcc}
	probe := func(src wire.MAC, tags ...uint8) []byte {
		pm := wire.DumbNetProbe{Seq: 5, SrcMAC: src, SrcIP: ipB, Path: []uint8{1, 4, 2}}
		payload, _ := pm.AppendTo(nil)
		f := wire.AppendEthernet(nil, wire.Broadcast, src, wire.EtherTypeDumbNet, append(tags, 0xff, 0x88, 0xb5))
		return append(f, payload...)
	}
	echo, _ := (&wire.DumbNetProbe{Seq: 9, SrcMAC: macA, Path: []uint8{1, 0}}).AppendTo(nil)
	cases := []struct {
		name, counter string
		ctrl          bool // sent to an agent that runs the controller
		port          element.Port
		frame         []byte
	}{
		{"query to a host without the controller", "drop_not_controller", false, 1, ctrl(t, macA, macB, &wire.DumbNetPathQuery{QueryID: 1, Src: macB, Dst: other})},
		{"query in another host's name", "drop_forged_query", true, 1, ctrl(t, macA, macB, &wire.DumbNetPathQuery{QueryID: 1, Src: other, Dst: macB})},
		{"switch answer nobody waits for", "drop_unmatched_reply", false, 1, ctrl(t, macA, macB, &wire.DumbNetSwitchID{SwitchID: 5, Echo: echo})},
		{"switch answer echoing no probe of ours", "drop_bad_echo", true, 1, ctrl(t, macA, macB, &wire.DumbNetSwitchID{SwitchID: 5, Echo: []byte{1, 2, 3}})},
		{"host answer nobody waits for", "drop_unmatched_reply", false, 1, ctrl(t, macA, macB, &wire.DumbNetProbeReply{Seq: 9, HostMAC: macB, Path: []uint8{1}})},
		{"a second controller's announcement", "drop_other_controller", false, 1, ctrl(t, macA, other, &wire.DumbNetProbeReply{HostMAC: other, Controller: other, Path: []uint8{2}})},
		{"a probe as a delivered message", "drop_unexpected_control", false, 1, ctrl(t, macA, macB, &wire.DumbNetProbe{Seq: 1, SrcMAC: macB, Path: []uint8{1}})},
		{"flood neighbours not from the controller", "drop_forged_neighbors", false, 1, ctrl(t, macA, other, &wire.DumbNetNeighbors{Version: 9, Neighbors: []wire.DumbNetNeighbor{{MAC: other, Path: []uint8{1}}}})},
		{"own probe back", "drop_own_probe", false, 1, probe(macA, 2)},
		{"a switch probe met a host", "drop_probe_query_path", false, 1, probe(macB, 0, 2)},
	}
	for _, c := range cases {
		a, env := newTestAgent()
		if c.ctrl {
			a = NewAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true})
			a.Attach(env, []element.PortInfo{{Port: 1, Up: true}, {Port: 2, Up: true, Local: true}})
		}
		env.take()
		a.Receive(c.port, c.frame)
		if got := a.Counters()[c.counter]; got != 1 {
			t.Errorf("%s: %s = %d, want 1 (%v)", c.name, c.counter, got, a.Counters())
		}
		if out := env.take(); len(out) != 0 {
			t.Errorf("%s: sent %d frames", c.name, len(out))
		}
	}
	// Flood neighbours older than the ones held are stale.
	a0, env0 := newTestAgent()
	a0.Receive(1, ctrl(t, macA, macB, &wire.DumbNetNeighbors{Version: 5, Neighbors: []wire.DumbNetNeighbor{{MAC: other, Path: []uint8{1}}}}))
	a0.Receive(1, ctrl(t, macA, macB, &wire.DumbNetNeighbors{Version: 3}))
	if c := a0.Counters(); c["neighbors_stale"] != 1 || len(a0.neighbors) != 1 || len(env0.take()) != 0 {
		t.Errorf("stale neighbours: %v, held %v", c, a0.neighbors)
	}
	// A probe on a second NIC of a multi-homed host: answered only on the
	// NIC the agent uses.
	a := NewAgent(Config{Name: "m", MAC: macA, IP: ipA, Search: -1})
	env := newFakeEnv()
	a.Attach(env, []element.PortInfo{{Port: 1, Up: true}, {Port: 2, Up: true}, {Port: 3, Up: true, Local: true}})
	env.take()
	a.Receive(2, probe(macB, 2))
	if a.Counters()["drop_probe_other_nic"] != 1 || len(env.take()) != 0 {
		t.Errorf("probe on the other NIC: %v", a.Counters())
	}
}

// FuzzControllerReceive feeds arbitrary frames to the agent that runs the
// controller, while its discovery runs, after it gave up, and after it
// found line:3 (mode 0, 1, 2): switch and host answers, path queries,
// notifications (FuzzAgentReceive's agent has no controller, so none of
// this reaches the controller there). No panic, every frame moves a
// counter, and frames leave only on the agent's ports.
func FuzzControllerReceive(f *testing.F) {
	echo, _ := (&wire.DumbNetProbe{Seq: 1, SrcMAC: macA, Path: []uint8{0, 1}}).AppendTo(nil)
	for _, m := range []wire.Message{
		&wire.DumbNetSwitchID{SwitchID: 5, Echo: echo},
		&wire.DumbNetProbeReply{Seq: 1, HostMAC: macB, Path: []uint8{0, 1}},
		&wire.DumbNetPathQuery{QueryID: 1, Src: macB, Dst: macA},
		&wire.DumbNetHostNotify{Origin: macB, Seq: 1, SwitchID: 5, Port: 1, State: wire.PortDown},
	} {
		b := wire.AppendEthernet(nil, macA, macB, wire.EtherTypeDumbNet, []byte{0xff, 0x88, 0xb5})
		b, _ = m.AppendTo(b)
		f.Add(uint8(0), b)
		f.Add(uint8(1), b)
	}
	// line:3 as the controller found it: h1 (the controller) and h2 on s1.
	want := expectedOf(f, "line:3")
	c, h := want.Hosts[0], want.Hosts[1]
	far := want.Hosts[len(want.Hosts)-1]
	for _, m := range []wire.Message{
		&wire.DumbNetPathQuery{QueryID: 1, Src: h.MAC, Dst: far.MAC},
		&wire.DumbNetPathQuery{QueryID: 2, Src: h.MAC, DstIP: far.IP},
		&wire.DumbNetHostNotify{Origin: h.MAC, Seq: 1, SwitchID: want.Links[0].A, Port: want.Links[0].APort, State: wire.PortDown},
		&wire.DumbNetHostNotify{Origin: h.MAC, Seq: 1, SwitchID: want.Links[0].A, Port: want.Links[0].APort, State: wire.PortUp},
		&wire.DumbNetHostNotify{Origin: h.MAC, Seq: 1, SwitchID: far.Switch, Port: far.Port, State: wire.PortDown},
		&wire.DumbNetHostNotify{Origin: h.MAC, Seq: 1, SwitchID: 0xdead, Port: 1, State: wire.PortDown},
		&wire.DumbNetProbeReply{Seq: 7, HostMAC: h.MAC, Path: []uint8{2}},
	} {
		f.Add(uint8(2), ctrl(f, c.MAC, h.MAC, m))
	}
	st, _ := wire.AppendControlFrame(nil, wire.Broadcast, h.MAC, &wire.DumbNetPortStatus{SwitchID: want.Links[0].B, Port: want.Links[0].BPort, State: wire.PortDown, HopLimit: 3, Seq: 1})
	f.Add(uint8(2), st)
	f.Fuzz(func(t *testing.T, mode uint8, frame []byte) {
		var a *Agent
		var env *fakeEnv
		switch mode % 3 {
		case 0:
			a, env = attachedAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true})
		case 1:
			a, env = attachedAgent(Config{Name: "c", MAC: macA, IP: ipA, Search: -1, Controller: true})
			env.advance(10 * element.Second) // discovery found nothing and stopped
		case 2:
			a, env, _ = discoveredController(t, "line:3", 0, Config{})
		}
		for range 2 {
			before := a.Counters()
			a.Receive(1, frame)
			if moved(before, a.Counters()) == 0 {
				t.Fatalf("mode %d, frame %x: no counter moved (%v)", mode%3, frame, a.Counters())
			}
		}
		env.advance(element.Second)
		for _, o := range env.take() {
			if o.port != 1 && o.port != 2 {
				t.Fatalf("sent on port %d", o.port)
			}
		}
	})
}

// TestAgentRecoversFromForgedNeighbors: flood neighbours forged with the
// controller's MAC and a huge version would steer this host's stage-1
// flood for good (every real list older); the controller's next answer,
// lower than the version the query left with, drops them, and the next
// real list is taken.
func TestAgentRecoversFromForgedNeighbors(t *testing.T) {
	a, _ := newTestAgent()
	rogue := wire.MAC{2, 0xba, 0xd0, 0, 0, 1}
	a.setNeighbors(&wire.DumbNetNeighbors{Version: 1 << 62, Neighbors: []wire.DumbNetNeighbor{{MAC: rogue, Path: []uint8{7}}}})
	a.hold(macB, netip.Addr{}, nil, nil)
	reply(a, a.byDst[macB].id) // version 1
	if c := a.Counters(); c["neighbors_reset"] != 1 || a.neighbors != nil {
		t.Fatalf("forged neighbours kept: %v, %v", c, a.neighbors)
	}
	a.setNeighbors(&wire.DumbNetNeighbors{Version: 2, Neighbors: []wire.DumbNetNeighbor{{MAC: macB, Path: []uint8{2}}}})
	if len(a.neighbors) != 1 || a.neighbors[0].MAC != macB {
		t.Fatalf("real list not taken: %v", a.neighbors)
	}
}

// TestFlowPath: FlowPath names the path the flow's next frame takes, for
// flows the agent has not seen and for flows bound to a path, with and
// without flowlets, and binds nothing itself.
func TestFlowPath(t *testing.T) {
	for _, flowlets := range []bool{false, true} {
		a, env := attachedAgent(Config{Name: "a", MAC: macA, IP: ipA, Search: -1, K: 3, Flowlets: flowlets, FlowletGap: element.Second})
		withPaths(a, env, threePaths)
		seen := map[string]bool{}
		for port := uint16(40000); port < 40064; port++ {
			ip := make([]byte, 28)
			ip[0], ip[9] = 0x45, 17
			copy(ip[12:16], ipA.AsSlice())
			copy(ip[16:20], ipB.AsSlice())
			ip[20], ip[21], ip[22], ip[23] = byte(port>>8), byte(port), 0x1b, 0x58
			frame := wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, ip)
			flows := len(a.flows)
			want := a.FlowPath(frame)
			if len(a.flows) != flows {
				t.Fatalf("flowlets %v: FlowPath bound a flow", flowlets)
			}
			for range 2 { // unseen, then bound
				a.Receive(2, frame)
				out := env.take()
				if len(out) != 1 {
					t.Fatalf("flowlets %v: %d frames sent, want 1", flowlets, len(out))
				}
				tags, _, _, err := wire.ParseDumbNet(out[0].frame)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(want, tags) || len(tags) == 0 || len(want)-len(tags) > 1 {
					t.Fatalf("flowlets %v, port %d: FlowPath %v, the frame took %v", flowlets, port, want, tags)
				}
				if got := a.FlowPath(frame); !bytes.Equal(got, want) {
					t.Fatalf("flowlets %v, port %d: FlowPath of the bound flow %v, want %v", flowlets, port, got, want)
				}
			}
			seen[string(want)] = true
		}
		if len(seen) != 3 {
			t.Fatalf("flowlets %v: 64 flows took %d paths, want all 3", flowlets, len(seen))
		}
	}
	a, _ := newTestAgent()
	if p := a.FlowPath(make([]byte, 10)); p != nil {
		t.Fatalf("FlowPath of a runt: %v", p)
	}
	if p := a.FlowPath(wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, make([]byte, 40))); p != nil {
		t.Fatalf("FlowPath without a path: %v", p)
	}
}
