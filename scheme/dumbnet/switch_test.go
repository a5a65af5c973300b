package dumbnet

import (
	"bytes"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

var (
	macA = wire.MAC{0x02, 0, 0, 0, 0, 0xa}
	macB = wire.MAC{0x02, 0, 0, 0, 0, 0xb}
)

func tagged(t testing.TB, tags []uint8, inner uint16, payload []byte) []byte {
	t.Helper()
	b := wire.AppendEthernet(nil, macB, macA, wire.EtherTypeDumbNet, nil)
	h := wire.DumbNetHeader{Tags: tags, InnerType: inner}
	b, err := h.AppendTo(b)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, payload...)
}

func newTestSwitch(n int) (*Switch, *fakeEnv) {
	s := NewSwitch(0x42, 0, 0)
	env := newFakeEnv()
	s.Attach(env, ports(n))
	return s, env
}

func TestSwitchPopsAndForwards(t *testing.T) {
	s, env := newTestSwitch(4)
	in := tagged(t, []uint8{3, 2}, wire.EtherTypeIPv4, []byte("payload"))
	s.Receive(1, in)
	out := env.take()
	if len(out) != 1 || out[0].port != 3 {
		t.Fatalf("sent %v, want one frame on port 3", out)
	}
	want := tagged(t, []uint8{2}, wire.EtherTypeIPv4, []byte("payload"))
	if !bytes.Equal(out[0].frame, want) {
		t.Fatalf("forwarded %x, want %x", out[0].frame, want)
	}
	// Bounce: a tag may name the port the frame came in on (§4.1).
	s.Receive(2, tagged(t, []uint8{2}, wire.EtherTypeIPv4, nil))
	if out := env.take(); len(out) != 1 || out[0].port != 2 {
		t.Fatalf("bounce sent %v", out)
	}
	if got := s.Counters()["forwarded"]; got != 2 {
		t.Fatalf("forwarded = %d", got)
	}
}

func TestSwitchAnswersIDQuery(t *testing.T) {
	s, env := newTestSwitch(4)
	probe := wire.DumbNetProbe{Seq: 7, SrcMAC: macA, Path: []uint8{0, 2, 1}}
	payload, _ := probe.AppendTo(nil)
	s.Receive(1, tagged(t, []uint8{0, 2, 1}, wire.EtherTypeLocalExp, payload))
	out := env.take()
	if len(out) != 1 || out[0].port != 2 {
		t.Fatalf("sent %v, want the ID reply on port 2", out)
	}
	tags, inner, body, err := wire.ParseDumbNet(out[0].frame)
	if err != nil || !bytes.Equal(tags, []uint8{1}) || inner != wire.EtherTypeLocalExp {
		t.Fatalf("reply tags %v inner %#x err %v", tags, inner, err)
	}
	if dst := wire.Frame(out[0].frame).Dst(); dst != macA {
		t.Fatalf("reply to %v, want the prober %v", dst, macA)
	}
	var m wire.DumbNetSwitchID
	if err := m.DecodeFromBytes(body); err != nil || m.SwitchID != 0x42 || !bytes.Equal(m.Echo, payload) {
		t.Fatalf("reply %+v err %v", m, err)
	}
}

func TestSwitchDropsAndCounts(t *testing.T) {
	s, env := newTestSwitch(4)
	noEnd := wire.AppendEthernet(nil, macB, macA, wire.EtherTypeDumbNet, []byte{1, 2, 3})
	longStack := wire.AppendEthernet(nil, macB, macA, wire.EtherTypeDumbNet, bytes.Repeat([]byte{1}, 80))
	cases := []struct {
		name, counter string
		frame         []byte
	}{
		{"runt", "drop_truncated", []byte{1, 2, 3}},
		{"no end marker", "drop_truncated", noEnd},
		{"stack too long", "drop_malformed", longStack},
		{"missing port", "drop_bad_port", tagged(t, []uint8{9}, wire.EtherTypeIPv4, nil)},
		{"port 0 after query", "drop_malformed", tagged(t, []uint8{0, 0}, wire.EtherTypeIPv4, nil)},
		{"query without return", "drop_query_no_path", tagged(t, []uint8{0}, wire.EtherTypeIPv4, nil)},
		{"query to missing port", "drop_bad_port", tagged(t, []uint8{0, 9}, wire.EtherTypeIPv4, nil)},
		{"at end", "drop_at_end", tagged(t, nil, wire.EtherTypeIPv4, nil)},
		{"plain ethernet", "drop_not_dumbnet", wire.AppendEthernet(nil, macB, macA, wire.EtherTypeIPv4, make([]byte, 46))},
		{"bad control", "drop_bad_control", wire.AppendEthernet(nil, wire.Broadcast, macA, wire.EtherTypeLocalExp, []byte{0x23, 1})},
	}
	for _, c := range cases {
		before := s.Counters()[c.counter]
		s.Receive(1, c.frame)
		if got := s.Counters()[c.counter]; got != before+1 {
			t.Errorf("%s: %s = %d, want %d (%v)", c.name, c.counter, got, before+1, s.Counters())
		}
		if out := env.take(); len(out) != 0 {
			t.Errorf("%s: forwarded %v", c.name, out)
		}
	}
	s.LinkChange(3, false)
	env.take()
	s.Receive(1, tagged(t, []uint8{3}, wire.EtherTypeIPv4, nil))
	if s.Counters()["drop_port_down"] != 1 || len(env.take()) != 0 {
		t.Fatalf("frame to a down port: %v", s.Counters())
	}
}

func statusFrame(t *testing.T, hops uint8) []byte {
	t.Helper()
	m := wire.DumbNetPortStatus{SwitchID: 9, Port: 1, State: wire.PortDown, HopLimit: hops, Seq: 1}
	b, err := wire.AppendControlFrame(nil, wire.Broadcast, macA, &m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSwitchNotifications(t *testing.T) {
	s, env := newTestSwitch(4)
	s.LinkChange(2, false)
	out := env.take()
	if len(out) != 3 {
		t.Fatalf("notification sent on %d ports, want 3 (all up ports but the failed one)", len(out))
	}
	var m wire.DumbNetPortStatus
	if err := m.DecodeFromBytes(out[0].frame[wire.EthHeaderLen:]); err != nil {
		t.Fatal(err)
	}
	if m.SwitchID != 0x42 || m.Port != 2 || m.State != wire.PortDown || m.HopLimit != DefaultHopLimit {
		t.Fatalf("notification %+v", m)
	}
	// Flapping inside the suppression window: nothing now, one notification
	// of the final state when the window ends.
	env.advance(100 * element.Millisecond)
	s.LinkChange(2, true)
	s.LinkChange(2, false)
	s.LinkChange(2, true)
	if out := env.take(); len(out) != 0 {
		t.Fatalf("suppressed alarms sent %d frames", len(out))
	}
	env.advance(element.Second)
	out = env.take()
	if len(out) != 4 {
		t.Fatalf("deferred notification on %d ports, want 4", len(out))
	}
	_ = m.DecodeFromBytes(out[0].frame[wire.EthHeaderLen:])
	if m.State != wire.PortUp || m.Seq != 2 {
		t.Fatalf("deferred notification %+v, want up, seq 2", m)
	}
	if s.Counters()["alarm_suppressed"] != 3 {
		t.Fatalf("counters %v", s.Counters())
	}

	// Relay: hop limit decremented, not sent back on the ingress port.
	s.Receive(1, statusFrame(t, 3))
	out = env.take()
	if len(out) != 3 {
		t.Fatalf("relayed on %d ports, want 3", len(out))
	}
	for _, o := range out {
		_ = m.DecodeFromBytes(o.frame[wire.EthHeaderLen:])
		if o.port == 1 || m.HopLimit != 2 {
			t.Fatalf("relayed on port %d with hop limit %d", o.port, m.HopLimit)
		}
	}
	s.Receive(1, statusFrame(t, 1))
	if out := env.take(); len(out) != 0 || s.Counters()["notify_expired"] != 1 {
		t.Fatalf("hop limit 1 relayed: %v", s.Counters())
	}
	// Forged: more hops than any switch sends.
	s.Receive(1, statusFrame(t, 200))
	if out := env.take(); len(out) != 0 || s.Counters()["drop_hop_limit"] != 1 {
		t.Fatalf("oversized hop limit relayed: %v", s.Counters())
	}
}

func FuzzSwitchReceive(f *testing.F) {
	probe := wire.DumbNetProbe{Seq: 7, SrcMAC: macA, Path: []uint8{0, 2, 1}}
	payload, _ := probe.AppendTo(nil)
	b := wire.AppendEthernet(nil, macB, macA, wire.EtherTypeDumbNet, []byte{0, 2, 1, 0xff, 0x88, 0xb5})
	f.Add(append(b, payload...))
	f.Add(wire.AppendEthernet(nil, macB, macA, wire.EtherTypeDumbNet, []byte{3, 0xff, 8, 0}))
	m := wire.DumbNetPortStatus{SwitchID: 9, Port: 1, State: wire.PortDown, HopLimit: 3, Seq: 1}
	c, _ := wire.AppendControlFrame(nil, wire.Broadcast, macA, &m)
	f.Add(c)
	f.Add(wire.AppendEthernet(nil, macB, macA, wire.EtherTypeMPLS, []byte{0, 0, 0x20, 0xff, 0, 0xff, 0x11, 0xff, 0x45}))
	f.Add(wire.AppendEthernet(nil, macB, macA, wire.EtherTypeMPLS, bytes.Repeat([]byte{0, 0, 0x20, 0xff}, 70)))
	f.Add(tagged(f, []uint8{0}, wire.EtherTypeLocalExp, payload))
	f.Fuzz(func(t *testing.T, frame []byte) {
		s, env := newTestSwitch(4)
		s.LinkChange(4, false) // a port down, for drop_port_down
		env.take()
		before := switchOutcomes(s.Counters())
		s.Receive(1, frame)
		// Every frame ends in exactly one outcome: forwarded, answered,
		// relayed, expired or dropped for a reason.
		if got := switchOutcomes(s.Counters()) - before; got != 1 {
			t.Fatalf("frame %x: %d outcomes counted (%v)", frame, got, s.Counters())
		}
		for _, o := range env.take() {
			if o.port < 1 || o.port > 3 {
				t.Fatalf("sent on port %d", o.port)
			}
		}
	})
}

// switchOutcomes sums the counters that record what became of a frame a
// switch received.
func switchOutcomes(c map[string]uint64) uint64 {
	var n uint64
	for k, v := range c {
		switch {
		case k == "forwarded", k == "id_replies", k == "notify_relayed", k == "notify_expired", strings.HasPrefix(k, "drop_"):
			n += v
		}
	}
	return n
}
