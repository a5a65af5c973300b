package dumbnet

import (
	"encoding/binary"
	"errors"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

// Switch defaults (DumbNet §4.2).
const (
	// DefaultHopLimit is how many switch hops a port notification travels.
	DefaultHopLimit = wire.DumbNetDefaultHopLimit
	// DefaultSuppress is the per-port alarm suppression window: at most one
	// notification per port per second.
	DefaultSuppress = element.Second
	// maxEcho bounds the probe payload a switch echoes in its ID reply, so
	// that a forged oversized query cannot make the reply exceed an MTU.
	maxEcho = 1024
)

// Switch is the DumbNet switch (DumbNet §3.2, §4.1, §4.2): it pops the
// first tag of a frame and forwards the frame on the port the tag names;
// tag 0 makes it answer with its ID along the rest of the path; on a port
// state change it broadcasts a notification that neighbouring switches
// re-broadcast until its hop limit runs out. It has no forwarding table
// and no configuration: its only state is the link state of its own ports
// and the alarm-suppression timers the paper asks for.
//
// Every frame it cannot forward is dropped and counted (Counters):
// drop_truncated, drop_malformed (no end marker, tag or label stack too
// long),
// drop_at_end (a frame for a host reached a switch), drop_bad_port (a tag
// naming a port the switch does not have), drop_port_down,
// drop_query_no_path (a tag 0 with no return path), drop_hop_limit (a
// notification whose hop limit is above what any switch sends: forged),
// drop_bad_control, drop_not_dumbnet.
type Switch struct {
	id       uint64
	mac      wire.MAC
	hopLimit uint8
	suppress element.Time

	env   element.Env
	up    []bool // index = port; up[0] unused
	alarm []alarm
	seq   uint32
	c     element.Counters
	// The per-frame counters are plain fields: a map update per frame
	// would cost more than the forwarding itself.
	forwarded, badPort uint64
	alloc              func(n int) []byte
}

// alarm is one port's notification state: when the last notification left,
// which state it announced, and whether a deferred one is armed.
type alarm struct {
	sent     bool
	lastAt   element.Time
	lastSent wire.PortState
	pending  bool
}

// NewSwitch returns a switch whose unique ID is id (the low 48 bits also
// form the MAC address it sends from). hopLimit 0 means DefaultHopLimit;
// suppress 0 means DefaultSuppress.
func NewSwitch(id uint64, hopLimit uint8, suppress element.Time) *Switch {
	if hopLimit == 0 {
		hopLimit = DefaultHopLimit
	}
	if suppress <= 0 {
		suppress = DefaultSuppress
	}
	suppress = min(suppress, maxDuration)
	var mac wire.MAC
	binary.BigEndian.PutUint16(mac[0:2], uint16(id>>32))
	binary.BigEndian.PutUint32(mac[2:6], uint32(id))
	return &Switch{id: id, mac: mac, hopLimit: hopLimit, suppress: suppress}
}

// ID returns the switch's unique ID, the answer to a tag-0 query.
func (s *Switch) ID() uint64 { return s.id }

// Counters returns the switch's counters: frames forwarded, ID queries
// answered, notifications sent, and drops by reason.
func (s *Switch) Counters() map[string]uint64 {
	m := s.c.Snapshot()
	if m == nil {
		m = map[string]uint64{}
	}
	if s.forwarded > 0 {
		m["forwarded"] = s.forwarded
	}
	if s.badPort > 0 {
		m["drop_bad_port"] = s.badPort
	}
	return m
}

// allocator is the optional frame pool of an engine's Env (the
// simulator's sim.Allocator), without importing the engine.
type allocator interface{ Alloc(n int) []byte }

func allocFor(env element.Env) func(n int) []byte {
	if a, ok := env.(allocator); ok {
		return a.Alloc
	}
	return func(n int) []byte { return make([]byte, n) }
}

// Attach implements element.Element.
func (s *Switch) Attach(env element.Env, ports []element.PortInfo) {
	s.env = env
	s.alloc = allocFor(env)
	n := 0
	for _, p := range ports {
		n = max(n, int(p.Port))
	}
	s.up = make([]bool, n+1)
	s.alarm = make([]alarm, n+1)
	for _, p := range ports {
		s.up[p.Port] = p.Up
	}
}

// Receive implements element.Element.
func (s *Switch) Receive(p element.Port, frame []byte) {
	if len(frame) < wire.EthHeaderLen {
		s.c.Inc("drop_truncated")
		return
	}
	switch binary.BigEndian.Uint16(frame[12:14]) {
	case wire.EtherTypeDumbNet:
		s.forward(frame)
	case wire.EtherTypeMPLS:
		s.forwardMPLS(frame)
	case wire.EtherTypeLocalExp:
		s.control(p, frame)
	default:
		// No tables: a plain Ethernet frame has nowhere to go.
		s.c.Inc("drop_not_dumbnet")
	}
}

// forward pops the first tag and sends the frame on the port it names.
func (s *Switch) forward(frame []byte) {
	// Check the whole stack once, so that a malformed frame dies at the
	// first switch instead of wandering until its tags run out.
	tags, _, _, err := wire.ParseDumbNet(frame)
	if err != nil {
		if errors.Is(err, wire.ErrTruncated) {
			s.c.Inc("drop_truncated")
		} else {
			s.c.Inc("drop_malformed")
		}
		return
	}
	if len(tags) == 0 {
		s.c.Inc("drop_at_end")
		return
	}
	if tags[0] == wire.DumbNetQuery {
		s.answerQuery(frame)
		return
	}
	out := element.Port(tags[0])
	if !s.portOK(out) {
		return
	}
	// Pop while copying: the output is the frame without its first tag.
	buf := s.alloc(len(frame) - 1)
	copy(buf, frame[:wire.EthHeaderLen])
	copy(buf[wire.EthHeaderLen:], frame[wire.EthHeaderLen+1:])
	s.forwarded++
	s.env.Send(out, buf)
}

// portOK checks that a tag names a port that exists and is up, counting
// the drop otherwise.
func (s *Switch) portOK(out element.Port) bool {
	if int(out) >= len(s.up) || out == 0 {
		s.badPort++
		return false
	}
	if !s.up[out] {
		s.c.Inc("drop_port_down")
		return false
	}
	return true
}

// answerQuery handles tag 0 (DumbNet §4.1): the switch replies with its
// unique ID in a frame that carries the rest of the path, echoing the
// query's payload so that the prober can match the answer to its probe,
// and forwards that reply by popping its first tag like any frame.
func (s *Switch) answerQuery(frame []byte) {
	tags, _, payload, _ := wire.ParseDumbNet(frame) // checked by the caller
	rest := tags[1:]
	if len(rest) == 0 {
		s.c.Inc("drop_query_no_path")
		return
	}
	if rest[0] == wire.DumbNetQuery {
		// Two queries in a row would make the switch answer itself.
		s.c.Inc("drop_malformed")
		return
	}
	out := element.Port(rest[0])
	if !s.portOK(out) {
		return
	}
	if len(payload) > maxEcho {
		payload = payload[:maxEcho]
	}
	// Reply frame: back to the prober (the query's source), from the switch.
	b := make([]byte, 0, wire.EthHeaderLen+len(rest)+3+9+len(payload))
	b = append(b, frame[6:12]...)
	b = append(b, s.mac[:]...)
	b = binary.BigEndian.AppendUint16(b, wire.EtherTypeDumbNet)
	b = append(b, rest[1:]...)
	b = append(b, wire.DumbNetEnd)
	b = binary.BigEndian.AppendUint16(b, wire.EtherTypeLocalExp)
	m := wire.DumbNetSwitchID{SwitchID: s.id, Echo: payload}
	b, _ = m.AppendTo(b) // never fails
	s.c.Inc("id_replies")
	s.env.Send(out, b)
}

// forwardMPLS is the MPLS option (DumbNet §5.3): the label is the port.
func (s *Switch) forwardMPLS(frame []byte) {
	// As forward does: a stack deeper than a path can be dies here, not
	// after wandering until its labels run out.
	if drop := mplsStackDrop(frame); drop != "" {
		s.c.Inc(drop)
		return
	}
	buf := append(make([]byte, 0, len(frame)), frame...)
	label, buf, err := wire.DumbNetMPLSPop(buf)
	if err != nil {
		if errors.Is(err, wire.ErrNoHops) {
			s.c.Inc("drop_at_end")
		} else {
			s.c.Inc("drop_truncated")
		}
		return
	}
	if label > 0xffff {
		s.badPort++
		return
	}
	out := element.Port(label)
	if !s.portOK(out) {
		return
	}
	s.forwarded++
	s.env.Send(out, buf)
}

// mplsStackDrop checks the label stack once, as forward checks the tags:
// it must end (bottom of stack) within DumbNetMaxTags labels and the end
// label. It returns the drop counter of a stack that does not, or "".
func mplsStackDrop(frame []byte) string {
	for i := range wire.DumbNetMaxTags + 1 {
		off := wire.EthHeaderLen + i*wire.MPLSLabelLen
		if off+wire.MPLSLabelLen > len(frame) {
			return "drop_truncated"
		}
		if frame[off+2]&1 != 0 { // the S bit
			return ""
		}
	}
	return "drop_malformed"
}

// control handles a port notification from a neighbour: the hop limit is
// decremented and the notification re-broadcast on every other port while
// it stays above zero (DumbNet §4.2 stage 1). No duplicate suppression:
// the switch keeps no state about other switches; the hop limit bounds the
// flood.
func (s *Switch) control(in element.Port, frame []byte) {
	f, _ := wire.ParseFrame(frame)
	var m wire.DumbNetPortStatus
	// A notification (31 bytes) from a physical NIC arrives padded to 60.
	body, err := wire.DecodePadded(&m, f.Payload(), len(frame))
	if err != nil {
		s.c.Inc("drop_bad_control")
		return
	}
	frame = frame[:wire.EthHeaderLen+len(body)] // relayed without the padding
	if m.HopLimit > s.hopLimit || m.HopLimit == 0 {
		// No switch sends more hops than its limit: forged, or a loop.
		s.c.Inc("drop_hop_limit")
		return
	}
	buf := append(make([]byte, 0, len(frame)), frame...)
	fwd, _ := wire.DumbNetPortStatusHop(buf[wire.EthHeaderLen:])
	if !fwd {
		s.c.Inc("notify_expired")
		return
	}
	s.c.Inc("notify_relayed")
	s.broadcast(buf, in)
}

// broadcast sends frame on every up port but skip, taking ownership of it.
func (s *Switch) broadcast(frame []byte, skip element.Port) {
	last := element.Port(0)
	for p := len(s.up) - 1; p >= 1; p-- {
		if s.up[p] && element.Port(p) != skip {
			last = element.Port(p)
			break
		}
	}
	for p := 1; p < len(s.up); p++ {
		port := element.Port(p)
		if !s.up[p] || port == skip {
			continue
		}
		if port == last {
			s.env.Send(port, frame)
			return
		}
		s.env.Send(port, append(make([]byte, 0, len(frame)), frame...))
	}
}

// LinkChange implements element.Element: it records the port state and
// raises an alarm, at most one per port per suppression window; changes
// inside the window are announced when it ends with the state then, even
// when that is the state announced last: a flap is not lost, and the
// controller may have probed the port between (its audit, a link-up
// check) and found the other state, which only this alarm corrects.
func (s *Switch) LinkChange(p element.Port, up bool) {
	if int(p) >= len(s.up) || p == 0 {
		s.badPort++
		return
	}
	s.up[p] = up
	s.env.Log().Info("port state changed", "port", p, "up", up)
	s.raise(p, false)
}

// raise broadcasts port p's state; again says so even if it is the state
// announced last (the end of a window with changes in it).
func (s *Switch) raise(p element.Port, again bool) {
	a := &s.alarm[p]
	state := wire.PortDown
	if s.up[p] {
		state = wire.PortUp
	}
	now := s.env.Now()
	if a.sent && now-a.lastAt < s.suppress {
		s.c.Inc("alarm_suppressed")
		if !a.pending {
			a.pending = true
			s.env.After(a.lastAt+s.suppress-now, func() {
				a.pending = false
				s.raise(p, true)
			})
		}
		return
	}
	if a.sent && a.lastSent == state && !again {
		return // nothing new to say
	}
	a.sent, a.lastAt, a.lastSent = true, now, state
	s.seq++
	if s.seq == 0 {
		// 0 says "number unknown" in a host's flooded copy
		// (wire.DumbNetHostNotify.SwitchSeq): never an alarm's.
		s.seq = 1
	}
	s.env.Log().Debug("port alarm broadcast", "port", p, "state", state, "seq", s.seq)
	m := wire.DumbNetPortStatus{SwitchID: s.id, Port: uint16(p), State: state, HopLimit: s.hopLimit, Seq: s.seq}
	b, _ := wire.AppendControlFrame(make([]byte, 0, 64), wire.Broadcast, s.mac, &m)
	s.c.Inc("notify_sent")
	// On every up port: a port that just came up is included, so that the
	// device on it hears the news too.
	s.broadcast(b, 0)
}
