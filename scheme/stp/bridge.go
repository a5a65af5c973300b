package stp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/paths"
)

// Protocol defaults (802.1D-1998 Table 8-3 and §7.9.2).
const (
	DefaultPriority            uint16       = 0x8000
	DefaultPortPriority        uint8        = 0x80
	DefaultHelloTime           element.Time = 2 * element.Second
	DefaultMaxAge              element.Time = 20 * element.Second
	DefaultForwardDelay        element.Time = 15 * element.Second
	DefaultHoldTime            element.Time = 1 * element.Second
	DefaultMessageAgeIncrement element.Time = 1 * element.Second
	DefaultAgingTime           element.Time = 300 * element.Second
	DefaultMaxEntries                       = 1 << 16
	// MaxMaxEntries bounds Config.MaxEntries: the MAC table indexes its
	// entries with int32, and 16M stations is far beyond any fabric the
	// engines hold.
	MaxMaxEntries = 1 << 24
	// MaxPort is the highest port number an 802.1t port identifier holds.
	MaxPort element.Port = 0x0fff
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("bad configuration")

// Config sets up one bridge. Zero fields take the defaults above.
type Config struct {
	// Name for logs.
	Name string
	// MAC is the bridge address, the low 48 bits of the bridge ID. Ports
	// whose PortInfo carries no MAC use it with the port number in the
	// last two bytes (as topo.PortMAC does).
	MAC [6]byte
	// Priority is the high 16 bits of the bridge ID. Zero means
	// DefaultPriority; use PriorityZero for a real priority of 0.
	Priority     uint16
	PriorityZero bool
	// PortPriority is the priority part of every port identifier (its top
	// four bits are used).
	PortPriority uint8
	// Timers the bridge uses when it is the root (Bridge Hello Time,
	// Bridge Max Age, Bridge Forward Delay) and for its own timers.
	HelloTime, MaxAge, ForwardDelay element.Time
	// HoldTime is the least interval between two configuration BPDUs on a
	// port (802.1D-1998 fixes it at 1 s).
	HoldTime element.Time
	// MessageAgeIncrement is what a bridge adds to the message age it
	// relays, beyond the time the information spent in the bridge
	// (802.1D-1998's Message Age Increment Overestimate, 1 s).
	MessageAgeIncrement element.Time
	// AgingTime is the MAC table's aging time outside topology changes.
	AgingTime element.Time
	// MaxEntries caps the MAC table; stations beyond it are not learned
	// (counted as learn_table_full) and their frames flood.
	MaxEntries int
	// PathCost overrides the rate-derived cost of a port.
	PathCost map[element.Port]uint32
	// PortRate gives a port's link rate in bits/s when the engine's
	// PortInfo carries none (element p-1 for port p).
	PortRate []int64
	// Edge marks ports that face end stations (element p-1 for port p),
	// like Cisco's PortFast: they forward as soon as they are enabled and
	// their changes raise no topology change. A BPDU received on an edge
	// port turns the port back into an ordinary one. Classic 802.1D has
	// no edge ports; leave nil for the standard's behaviour.
	Edge []bool
	// Protocol is the spanning tree protocol: ProtocolSTP (the zero
	// value), 802.1D-1998's, or ProtocolRSTP, 802.1D-2004's rapid one.
	Protocol Protocol
	// NoSTP turns the spanning tree off: a plain learning bridge whose
	// ports forward as soon as their links are up, sends no BPDUs and
	// drops (and counts) those it receives. Loops in the topology then
	// make broadcast storms, which is what it is for: showing why the
	// baseline needs the tree.
	NoSTP bool
}

func (c *Config) withDefaults() Config {
	d := *c
	if d.Priority == 0 && !d.PriorityZero {
		d.Priority = DefaultPriority
	}
	if d.PortPriority == 0 {
		d.PortPriority = DefaultPortPriority
	}
	def := func(v *element.Time, dv element.Time) {
		if *v == 0 {
			*v = dv
		}
	}
	def(&d.HelloTime, DefaultHelloTime)
	def(&d.MaxAge, DefaultMaxAge)
	def(&d.ForwardDelay, DefaultForwardDelay)
	def(&d.HoldTime, DefaultHoldTime)
	def(&d.MessageAgeIncrement, DefaultMessageAgeIncrement)
	def(&d.AgingTime, DefaultAgingTime)
	if d.MaxEntries == 0 {
		d.MaxEntries = DefaultMaxEntries
	}
	return d
}

// validate checks the timer relations of 802.1D-1998 §8.10.2, which keep
// a bridge from forwarding before the tree's information has crossed the
// network: 2 × (Forward Delay − 1 s) ≥ Max Age ≥ 2 × (Hello Time + 1 s).
// The absolute ranges of Table 8-3 (hello 1–10 s ...) are not enforced so
// that the simulator can run faster timers; the wire holds up to 255.99 s.
func (c *Config) validate() error {
	for _, t := range []struct {
		name string
		v    element.Time
	}{{"hello", c.HelloTime}, {"max_age", c.MaxAge}, {"forward_delay", c.ForwardDelay},
		{"hold", c.HoldTime}, {"message_age_increment", c.MessageAgeIncrement}, {"aging", c.AgingTime}} {
		if t.v < 0 {
			return fmt.Errorf("stp: %s %v: %w: negative", t.name, t.v, ErrConfig)
		}
		if t.name != "aging" && t.v > 0xffff*tick {
			return fmt.Errorf("stp: %s %v: %w: above 255.99s, the BPDU's limit", t.name, t.v, ErrConfig)
		}
		// The BPDU carries timers in 1/256 s: a shorter one goes out as
		// 0, every receiver drops the BPDU (bad timers), every bridge
		// stays root with all ports forwarding, and any loop storms.
		if t.v > 0 && t.v < tick && (t.name == "hello" || t.name == "max_age" || t.name == "forward_delay") {
			return fmt.Errorf("stp: %s %v: %w: below 1/256 s, which the BPDU would carry as 0", t.name, t.v, ErrConfig)
		}
	}
	if c.MaxAge < 2*(c.HelloTime+element.Second) {
		return fmt.Errorf("stp: max_age %v < 2 × (hello %v + 1s): %w", c.MaxAge, c.HelloTime, ErrConfig)
	}
	if 2*(c.ForwardDelay-element.Second) < c.MaxAge {
		return fmt.Errorf("stp: 2 × (forward_delay %v − 1s) < max_age %v: %w", c.ForwardDelay, c.MaxAge, ErrConfig)
	}
	switch c.Protocol {
	case ProtocolSTP:
	case ProtocolRSTP:
		// RSTP's timers count whole seconds (802.1D-2004 §17.13).
		for _, t := range []struct {
			name string
			v    element.Time
		}{{"hello", c.HelloTime}, {"max_age", c.MaxAge}, {"forward_delay", c.ForwardDelay}} {
			if t.v%element.Second != 0 {
				return fmt.Errorf("stp: %s %v: %w: rstp counts whole seconds", t.name, t.v, ErrConfig)
			}
		}
		if c.NoSTP {
			return fmt.Errorf("stp: protocol rstp with the spanning tree off: %w", ErrConfig)
		}
	default:
		return fmt.Errorf("stp: protocol %v: %w: want stp or rstp", c.Protocol, ErrConfig)
	}
	if c.MaxEntries < 0 || c.MaxEntries > MaxMaxEntries {
		return fmt.Errorf("stp: max_entries %d: %w: want 0..%d", c.MaxEntries, ErrConfig, MaxMaxEntries)
	}
	// As the path_cost parameter: 802.1D-2004 Table 17-3's range. A cost
	// of 0 would make a port's far side as close to the root as its near.
	for _, p := range slices.Sorted(maps.Keys(c.PathCost)) {
		if v := c.PathCost[p]; v < 1 || v > MaxPathCost {
			return fmt.Errorf("stp: port %d path cost %d: %w: want 1..%d", p, v, ErrConfig, MaxPathCost)
		}
	}
	return nil
}

// MaxPathCost is the largest port path cost (802.1D-2004 Table 17-3).
const MaxPathCost = 200_000_000

// PathCostForRate returns the recommended port path cost of 802.1D-1998
// Table 8-5 for a link of rate bits/s (paths.PathCost, which the SPAIN
// planner's VLAN 1 uses too): 100 for 10 Mb/s, 19 for 100 Mb/s, 4 for
// 1 Gb/s, 2 for 10 Gb/s; an unknown rate (0) is taken as 1 Gb/s.
func PathCostForRate(rate int64) uint32 { return uint32(paths.PathCost(rate)) }

// timer is one of the protocol's timers (802.1D-1998 §8.5.4–8.5.6) over
// Env.After. Its callback is bound once (bindTimer), so arming it costs
// no closure; the callback acts only while the timer is active and its
// deadline has come, which makes a stopped or re-armed timer's old
// callback harmless if an engine delivers it anyway. For the message age
// timer, value reports the timer's current value: the age it started at
// plus the time since.
type timer struct {
	active   bool
	start    element.Time
	base     element.Time
	deadline element.Time
	cancel   func()
	fire     func() // bound once: checks, then expire
	expire   func()
}

func (t *timer) stop() {
	if t.active {
		t.active = false
		if t.cancel != nil {
			t.cancel()
			t.cancel = nil
		}
	}
}

func (t *timer) value(now element.Time) element.Time { return t.base + now - t.start }

type port struct {
	num      element.Port
	id       PortID
	mac      [6]byte
	local    bool // faces the node's own stack: no STP, always forwarding
	edge     bool // operational edge port (PortFast)
	state    State
	pathCost uint32

	// The port's designated information (§8.5.5).
	desRoot   BridgeID
	desCost   uint32
	desBridge BridgeID
	desPort   PortID

	tca             bool // topology change acknowledge pending
	configPending   bool
	changeDetection bool

	msgAge, fwdDelay, hold timer

	rs rport // RSTP's state (rstp.go), when the bridge runs RSTP
}

// Bridge is an 802.1D-1998 MAC bridge: a learning bridge whose ports are
// put into forwarding or blocking by the spanning tree algorithm and
// protocol of clause 8, exchanging real BPDUs with its neighbours. It is an
// element.Element; port numbers are the node's topology ports.
//
// The protocol code follows the standard's procedural model (§8.6–8.8)
// name for name, so that it can be read beside the text.
type Bridge struct {
	cfg   Config
	env   element.Env
	log   *slog.Logger
	id    BridgeID
	ports []port // port p at index p-1; unconnected ports stay Disabled

	// Bridge parameters (§8.5.3).
	desRoot  BridgeID
	rootCost uint32
	rootPort element.Port // 0: none, this bridge is the root
	maxAge   element.Time
	hello    element.Time
	fwdDelay element.Time
	tcDet    bool // topology_change_detected
	tc       bool // topology_change

	helloT, tcnT, tcT timer

	rs *rstpBridge // nil unless the bridge runs RSTP (Config.Protocol)

	alloc allocator // the engine's buffer pool, when it has one

	fdb      fdb
	sweepArm bool
	ctr      element.Counters
	hot      hotCounters
	scratch  []byte
	// stateVer is PortStateVersion: bumped by Attach, every setState and
	// every change of what a port's role derives from (PortStateNames
	// reports "state/role").
	stateVer uint64
}

// New checks cfg and returns a bridge ready to be attached.
func New(cfg Config) (*Bridge, error) {
	c := cfg.withDefaults()
	if err := c.validate(); err != nil {
		return nil, err
	}
	b := &Bridge{cfg: c, id: MakeBridgeID(c.Priority, c.MAC)}
	b.fdb.max = c.MaxEntries
	return b, nil
}

// ID returns the bridge identifier.
func (b *Bridge) ID() BridgeID { return b.id }

// Counters reports frames forwarded and flooded, drops by reason, BPDUs
// sent and received, MAC table events and topology changes.
func (b *Bridge) Counters() map[string]uint64 {
	m := b.ctr.Snapshot()
	for _, c := range []struct {
		name string
		v    uint64
	}{
		{"forwarded", b.hot.forwarded}, {"flooded", b.hot.flooded}, {"flood_copies", b.hot.floodCopies},
		{"filtered_same_port", b.hot.filtered}, {"drop_port_blocked", b.hot.blocked}, {"drop_port_learning", b.hot.learning},
	} {
		if c.v > 0 {
			if m == nil {
				m = map[string]uint64{}
			}
			m[c.name] = c.v
		}
	}
	return m
}

// hotCounters are the counters of the per-frame path, kept as fields: a
// named counter costs a string hash per frame.
type hotCounters struct {
	forwarded, flooded, floodCopies, filtered, blocked, learning uint64
}

// Attach takes the bridge's ports and starts the protocol
// (initialisation, §8.8.1): every port that is up begins Blocking as a
// designated port, and the bridge claims to be the root until it hears
// better.
func (b *Bridge) Attach(env element.Env, infos []element.PortInfo) {
	b.stateVer++ // the ports' states are set below
	b.env = env
	b.log = env.Log()
	b.alloc, _ = env.(allocator)
	n := 0
	for _, pi := range infos {
		if int(pi.Port) > n {
			n = int(pi.Port)
		}
	}
	b.ports = make([]port, n)
	for i := range b.ports {
		p := &b.ports[i]
		p.num = element.Port(i + 1)
		p.id = MakePortID(b.cfg.PortPriority, p.num)
		p.state = Disabled
		p.mac = b.cfg.MAC
		p.mac[4], p.mac[5] = byte(p.num>>8), byte(p.num)
		p.pathCost = b.cfg.pathCost(p.num, 0)
		p.changeDetection = true
	}
	b.bindTimer(&b.helloT, b.helloTimerExpiry)
	b.bindTimer(&b.tcnT, b.tcnTimerExpiry)
	b.bindTimer(&b.tcT, b.topologyChangeTimerExpiry)
	for i := range b.ports {
		p := &b.ports[i]
		b.bindTimer(&p.msgAge, func() { b.messageAgeTimerExpiry(p) })
		b.bindTimer(&p.fwdDelay, func() { b.forwardDelayTimerExpiry(p) })
		b.bindTimer(&p.hold, func() { b.holdTimerExpiry(p) })
	}
	up := make([]bool, n)
	for _, pi := range infos {
		if pi.Port < 1 {
			b.ctr.Inc("port_invalid")
			continue
		}
		p := &b.ports[pi.Port-1]
		if pi.MAC != ([6]byte{}) {
			p.mac = pi.MAC
		}
		p.pathCost = b.cfg.pathCost(pi.Port, pi.Rate)
		p.local = pi.Local
		if pi.Port > MaxPort && !pi.Local {
			// An 802.1t port identifier holds 12 bits; such a port
			// cannot take part in the protocol. The fabric refuses
			// these topologies; an engine that passes one anyway
			// gets a disabled port and a counter, not a panic.
			b.ctr.Inc("port_out_of_range")
			b.log.Warn("stp: port number beyond 4095 stays disabled", "bridge", b.cfg.Name, "port", pi.Port)
			continue
		}
		up[pi.Port-1] = pi.Up
	}

	if b.cfg.NoSTP {
		// Every port is its own LAN's designated port, forwarding
		// while its link is up.
		b.desRoot = b.id
		for i := range b.ports {
			b.becomeDesignatedPort(&b.ports[i])
			if up[i] {
				b.ports[i].state = Forwarding
			}
		}
		return
	}

	if b.cfg.Protocol == ProtocolRSTP {
		b.rstpAttach(up)
		return
	}

	// Initialisation (§8.8.1).
	b.desRoot = b.id
	b.rootCost = 0
	b.rootPort = 0
	b.maxAge, b.hello, b.fwdDelay = b.cfg.MaxAge, b.cfg.HelloTime, b.cfg.ForwardDelay
	b.tcDet, b.tc = false, false
	for i := range b.ports {
		p := &b.ports[i]
		if p.local {
			if up[i] {
				p.state = Forwarding
			}
			continue
		}
		if up[i] {
			b.initializePort(p)
		} else {
			b.becomeDesignatedPort(p)
		}
	}
	b.portStateSelection()
	b.configBPDUGeneration()
	b.startTimer(&b.helloT, b.cfg.HelloTime)
}

func (c *Config) pathCost(p element.Port, rate int64) uint32 {
	if v, ok := c.PathCost[p]; ok {
		return v
	}
	if rate == 0 && int(p) <= len(c.PortRate) {
		rate = c.PortRate[p-1]
	}
	return PathCostForRate(rate)
}

func (b *Bridge) isEdgeCfg(p element.Port) bool {
	return int(p) <= len(b.cfg.Edge) && b.cfg.Edge[p-1]
}

// LinkChange enables a port whose link came up (§8.8.2) and disables one
// whose link went down (§8.8.3).
func (b *Bridge) LinkChange(pn element.Port, up bool) {
	p := b.port(pn)
	if p == nil {
		b.ctr.Inc("port_invalid")
		return
	}
	if p.local || b.cfg.NoSTP {
		if up {
			b.setState(p, Forwarding)
		} else {
			b.setState(p, Disabled)
		}
		return
	}
	if pn > MaxPort {
		return
	}
	if b.rs != nil {
		b.rstpLinkChange(p, up)
		return
	}
	if up {
		if p.state == Disabled {
			b.enablePort(p)
		}
		return
	}
	if p.state != Disabled {
		b.disablePort(p)
	}
}

func (b *Bridge) port(pn element.Port) *port {
	if pn < 1 || int(pn) > len(b.ports) {
		return nil
	}
	return &b.ports[pn-1]
}

// ---- data plane -------------------------------------------------------

// Receive relays a frame (§7.5–7.7) or consumes a BPDU.
func (b *Bridge) Receive(pn element.Port, frame []byte) {
	p := b.port(pn)
	if p == nil {
		b.ctr.Inc("drop_port_invalid")
		return
	}
	if len(frame) < ethLen {
		b.ctr.Inc("drop_runt")
		return
	}
	if IsBridgeGroup(frame[:6]) {
		if [6]byte(frame[:6]) == GroupAddress {
			b.receiveBPDU(p, frame)
			return
		}
		// 01:80:C2:00:00:01..0F (pause, LACP, LLDP, ...): link-local,
		// never relayed (§7.12.6), and nothing here consumes them.
		b.ctr.Inc("drop_link_local")
		return
	}
	switch p.state {
	case Disabled:
		b.ctr.Inc("drop_port_disabled")
		return
	case Blocking, Listening, Discarding:
		b.hot.blocked++
		return
	}
	src := [6]byte(frame[6:12])
	if src[0]&1 != 0 {
		// A group address is never a source (§7.8): learning it
		// would send unicast traffic into a multicast.
		b.ctr.Inc("drop_bad_source")
		return
	}
	now := b.env.Now()
	aging := b.agingTime()
	res := b.fdb.learn(src, pn, now, aging)
	if res == learnFull {
		if n := b.fdb.reclaim(now, aging); n > 0 {
			b.ctr.Add("aged_out", uint64(n))
			res = b.fdb.learn(src, pn, now, aging)
		}
	}
	switch res {
	case learnNew:
		b.ctr.Inc("learned")
		b.armSweep()
	case learnExpired:
		// Under continuous aging the old entry died (and was counted)
		// before the station spoke again.
		b.ctr.Inc("aged_out")
		b.ctr.Inc("learned")
	case learnMoved:
		b.ctr.Inc("moved")
	case learnFull:
		b.ctr.Inc("learn_table_full")
	}
	if p.state == Learning {
		b.hot.learning++
		return
	}
	dst := [6]byte(frame[:6])
	if dst[0]&1 == 0 {
		out, ok, expired := b.fdb.lookup(dst, now, aging)
		if expired {
			b.ctr.Inc("aged_out")
		}
		if ok {
			if out == pn {
				// The station is on the LAN the frame came
				// from: it already has it (§7.7.1).
				b.hot.filtered++
				return
			}
			if q := b.port(out); q != nil && q.state == Forwarding {
				b.hot.forwarded++
				b.env.Send(out, b.clone(frame))
				return
			}
			// The entry names a port that is still Learning (it
			// fills the table before it forwards; entries of a
			// port that left Forwarding are flushed). 802.1D would
			// discard here; we flood as for an unknown station,
			// over the forwarding ports only: the frame reaches the
			// station if one of them also leads to it, and is
			// counted as drop_no_egress when no port forwards
			// (TestNoForwardingToLearningPort).
		}
	}
	b.flood(pn, frame)
}

// flood sends frame out of every forwarding port but the one it came in
// on.
func (b *Bridge) flood(in element.Port, frame []byte) {
	n := 0
	for i := range b.ports {
		q := &b.ports[i]
		if q.num == in || q.state != Forwarding {
			continue
		}
		b.env.Send(q.num, b.clone(frame))
		n++
	}
	if n == 0 {
		b.ctr.Inc("drop_no_egress")
		return
	}
	b.hot.flooded++
	b.hot.floodCopies += uint64(n)
}

// allocator is the optional buffer pool of an engine (sim.Allocator): the
// copies a bridge sends are recycled by the engine after delivery. The
// interface is declared here because a scheme never imports an engine.
type allocator interface{ Alloc(n int) []byte }

// clone copies f into a buffer the engine may own: every Send needs its
// own, since the engine keeps it after the call.
func (b *Bridge) clone(f []byte) []byte {
	var c []byte
	if b.alloc != nil {
		c = b.alloc.Alloc(len(f))
	} else {
		c = make([]byte, len(f))
	}
	copy(c, f)
	return c
}

// agingTime is the MAC table's aging time in force: the forward delay
// while a topology change is signalled (§8.3.5), so that stations that
// moved to another branch of the new tree are relearned within it.
func (b *Bridge) agingTime() element.Time {
	if b.tc {
		return b.fwdDelay
	}
	return b.cfg.AgingTime
}

func (b *Bridge) armSweep() {
	if b.sweepArm {
		return
	}
	b.sweepArm = true
	b.env.After(b.cfg.AgingTime, b.sweep)
}

// sweep frees aged entries that no lookup has removed. It runs only while
// the table holds entries, so an idle bridge has no timer besides hello.
func (b *Bridge) sweep() {
	b.sweepArm = false
	if n := b.fdb.sweep(b.env.Now(), b.agingTime()); n > 0 {
		b.ctr.Add("aged_out", uint64(n))
	}
	if b.fdb.len() > 0 {
		b.armSweep()
	}
}

// Ready reports whether the spanning tree has settled on this bridge: no
// port is listening or learning (disabled ports, whose links are down, and
// blocking ones count as settled). It is the test the emulator applies to
// kernel bridges, and as emu.Readier it makes "up" wait for the tree
// whatever the number of hosts (a lab with one host has no pair to ping).
//
// Under RSTP, which has no listening state, a root or designated port that
// still discards is not settled either.
func (b *Bridge) Ready() bool {
	for i := range b.ports {
		p := &b.ports[i]
		if s := p.state; s == Listening || s == Learning {
			return false
		}
		if b.rs != nil && p.state == Discarding && (p.rs.role == RoleRoot || p.rs.role == RoleDesignated) {
			return false
		}
	}
	return true
}

// Lookup returns the port the MAC table holds for mac, as forwarding
// would see it now (an aged entry misses).
func (b *Bridge) Lookup(mac [6]byte) (element.Port, bool) {
	e, ok := b.fdb.get(mac)
	if !ok || b.env == nil || b.env.Now()-e.seen > b.agingTime() {
		return 0, false
	}
	return e.port, true
}

// Entries returns the number of entries in the MAC table, aged ones not
// yet swept included.
func (b *Bridge) Entries() int { return b.fdb.len() }

// setState changes a port's state. A port that stops learning loses its
// MAC table entries: its stations are now reached, if at all, through
// another port.
func (b *Bridge) setState(p *port, s State) {
	old := p.state
	if old == s {
		return
	}
	p.state = s
	b.stateVer++
	b.ctr.Inc("port_state_" + s.String())
	if (old == Learning || old == Forwarding) && (s == Blocking || s == Disabled || s == Listening || s == Discarding) {
		if n := b.fdb.flushPort(p.num); n > 0 {
			b.ctr.Add("flushed", uint64(n))
		}
	}
	if b.log.Enabled(context.Background(), slog.LevelDebug) {
		b.log.Debug("stp: port state", "bridge", b.cfg.Name, "port", p.num, "from", old, "to", s)
	}
}

// ---- BPDU reception (§8.7.1, §8.7.2) -----------------------------------

func (b *Bridge) receiveBPDU(p *port, frame []byte) {
	if p.local {
		b.ctr.Inc("drop_bpdu_local_port")
		return
	}
	if b.cfg.NoSTP {
		b.ctr.Inc("drop_bpdu_stp_off")
		return
	}
	var m BPDU
	if err := DecodeFrame(frame, &m); err != nil {
		if errors.Is(err, ErrUnknownType) {
			b.ctr.Inc("drop_bpdu_unknown_type")
		} else {
			b.ctr.Inc("drop_bpdu_malformed")
		}
		return
	}
	if p.state == Disabled {
		b.ctr.Inc("drop_port_disabled")
		return
	}
	if b.rs != nil {
		// §9.3.4's age check is for configuration BPDUs only: an RST
		// BPDU as old as its max age is recorded and aged at once
		// (updtRcvdInfoWhile, §17.21.23), so that it replaces what the
		// port held from that bridge.
		if m.Type != TypeTCN && !b.saneTimers(&m, m.Type == TypeConfig) {
			return
		}
		b.rstpReceive(p, &m)
		return
	}
	if m.Type == TypeRST {
		// 802.1D-1998 knows configuration and TCN BPDUs only
		// (§9.3.4); an RSTP neighbour falls back to them when it
		// hears ours (802.1D-2004 §17.24).
		b.ctr.Inc("drop_bpdu_unknown_type")
		return
	}
	if p.edge {
		// A bridge answered on an edge port: it is not an edge after
		// all. Take it through listening and learning like any port.
		p.edge = false
		p.changeDetection = true
		b.ctr.Inc("edge_lost")
		if p.state == Forwarding {
			b.setState(p, Blocking)
			b.makeForwarding(p)
		}
	}
	if m.Type == TypeTCN {
		b.ctr.Inc("bpdu_rx_tcn")
		b.receivedTCNBPDU(p)
		return
	}
	if !b.saneTimers(&m, true) {
		return
	}
	b.ctr.Inc("bpdu_rx_config")
	b.receivedConfigBPDU(p, &m)
}

// timerRanges are the ranges of hello time, max age and forward delay a
// root may set (802.1D-1998 Table 8-3).
var timerRanges = [3][2]element.Time{
	{1 * element.Second, 10 * element.Second}, // hello
	{6 * element.Second, 40 * element.Second}, // max age
	{4 * element.Second, 30 * element.Second}, // forward delay
}

// saneTimers checks a configuration or RST BPDU's times, and with
// checkAge its message age against its max age, counting the drop when
// they fail.
func (b *Bridge) saneTimers(m *BPDU, checkAge bool) bool {
	// The standard's ranges, widened to take in this bridge's own setting
	// (the fabric shares its timers, and the simulator may run them
	// faster or slower than the standard allows). The standard does not
	// check what it receives; but a forged forward delay of 1/256 s would
	// open every port in 8 ms, loops and all, and a zero max age is no
	// root's.
	own := [3]element.Time{b.cfg.HelloTime, b.cfg.MaxAge, b.cfg.ForwardDelay}
	for i, v := range [3]Time256{m.HelloTime, m.MaxAge, m.ForwardDelay} {
		lo := ToTime256(min(timerRanges[i][0], own[i]))
		hi := ToTime256(max(timerRanges[i][1], own[i]))
		if v < lo || v > hi {
			b.ctr.Inc("drop_bpdu_bad_timers")
			return false
		}
	}
	if checkAge && m.MessageAge >= m.MaxAge {
		// Information as old as its own lifetime (802.1D-2004 §9.3.4 a
		// makes this validation explicit for configuration BPDUs).
		b.ctr.Inc("drop_bpdu_aged")
		return false
	}
	return true
}

// receivedConfigBPDU is §8.7.1.
func (b *Bridge) receivedConfigBPDU(p *port, c *BPDU) {
	wasRoot := b.rootBridge()
	if b.supersedesPortInfo(p, c) {
		b.recordConfigInformation(p, c)
		b.configurationUpdate()
		b.portStateSelection()
		if !b.rootBridge() && wasRoot {
			b.helloT.stop()
			if b.tcDet {
				b.tcT.stop()
				b.transmitTCN()
				b.startTimer(&b.tcnT, b.cfg.HelloTime)
			}
		}
		if p.num == b.rootPort {
			b.recordConfigTimeoutValues(c)
			b.configBPDUGeneration()
			if c.TCA {
				b.topologyChangeAcknowledged()
			}
		}
	} else if b.designatedPort(p) {
		b.reply(p)
	}
}

// receivedTCNBPDU is §8.7.2.
func (b *Bridge) receivedTCNBPDU(p *port) {
	if b.designatedPort(p) {
		b.topologyChangeDetection()
		b.acknowledgeTopologyChange(p)
	}
}

// ---- the procedures of §8.6 -------------------------------------------

func (b *Bridge) rootBridge() bool { return b.desRoot == b.id }

func (b *Bridge) designatedPort(p *port) bool {
	return p.desBridge == b.id && p.desPort == p.id
}

// transmitConfig is §8.6.1.
func (b *Bridge) transmitConfig(p *port) {
	if p.hold.active {
		p.configPending = true
		return
	}
	m := BPDU{
		Type:         TypeConfig,
		Root:         b.desRoot,
		RootPathCost: b.rootCost,
		Bridge:       b.id,
		Port:         p.id,
		MaxAge:       ToTime256(b.maxAge),
		HelloTime:    ToTime256(b.hello),
		ForwardDelay: ToTime256(b.fwdDelay),
		TCA:          p.tca,
		TC:           b.tc,
	}
	age := element.Time(0)
	if !b.rootBridge() {
		if rp := b.port(b.rootPort); rp != nil && rp.msgAge.active {
			age = rp.msgAge.value(b.env.Now())
		}
		age += b.cfg.MessageAgeIncrement
	}
	if age >= b.maxAge {
		// The root's information would arrive dead: say nothing and
		// let the neighbour's message age timer run out.
		return
	}
	m.MessageAge = ToTime256(age)
	p.tca = false
	p.configPending = false
	b.send(p, &m)
	b.ctr.Inc("bpdu_tx_config")
	b.startTimer(&p.hold, b.cfg.HoldTime)
}

func (b *Bridge) send(p *port, m *BPDU) {
	b.scratch = AppendFrame(b.scratch[:0], p.mac, m)
	b.env.Send(p.num, b.clone(b.scratch))
}

// supersedesPortInfo is §8.6.2.2: is c better than what the port holds?
// The last clause lets a designated bridge's own repeated information
// (equal in every part) refresh the port's message age timer.
func (b *Bridge) supersedesPortInfo(p *port, c *BPDU) bool {
	if c.Root != p.desRoot {
		return c.Root < p.desRoot
	}
	if c.RootPathCost != p.desCost {
		return c.RootPathCost < p.desCost
	}
	if c.Bridge != p.desBridge {
		return c.Bridge < p.desBridge
	}
	return c.Bridge != b.id || c.Port <= p.desPort
}

// recordConfigInformation is §8.6.2.
func (b *Bridge) recordConfigInformation(p *port, c *BPDU) {
	if p.desBridge != c.Bridge || p.desPort != c.Port {
		b.stateVer++ // whether p is designated
	}
	p.desRoot, p.desCost, p.desBridge, p.desPort = c.Root, c.RootPathCost, c.Bridge, c.Port
	age := c.MessageAge.Time()
	b.startTimer(&p.msgAge, b.maxAge-age)
	p.msgAge.base = age
}

// recordConfigTimeoutValues is §8.6.3: the root's timers rule the tree.
func (b *Bridge) recordConfigTimeoutValues(c *BPDU) {
	b.setTimes(c.MaxAge.Time(), c.HelloTime.Time(), c.ForwardDelay.Time())
	b.setTC(c.TC)
}

// setTimes sets the max age, hello time and forward delay in force. The
// standard's message age and forward delay timers count up and are
// checked against the values in force at every tick, so running timers
// keep their value and expire at the new limit: information that arrived
// older than this bridge's own max age but younger than the root's is
// kept, and a root's shorter max age or forward delay takes effect at
// once.
func (b *Bridge) setTimes(maxAge, hello, fwdDelay element.Time) {
	ma, fd := maxAge != b.maxAge, fwdDelay != b.fwdDelay
	b.maxAge, b.hello, b.fwdDelay = maxAge, hello, fwdDelay
	if !ma && !fd {
		return
	}
	for i := range b.ports {
		p := &b.ports[i]
		if ma {
			b.rearmTimer(&p.msgAge, maxAge)
		}
		if fd {
			b.rearmTimer(&p.fwdDelay, fwdDelay)
		}
	}
}

// configBPDUGeneration is §8.6.4.
func (b *Bridge) configBPDUGeneration() {
	for i := range b.ports {
		p := &b.ports[i]
		if !p.local && p.state != Disabled && b.designatedPort(p) {
			b.transmitConfig(p)
		}
	}
}

// reply is §8.6.5: answer inferior information on a designated port.
func (b *Bridge) reply(p *port) { b.transmitConfig(p) }

// transmitTCN is §8.6.6.
func (b *Bridge) transmitTCN() {
	p := b.port(b.rootPort)
	if p == nil {
		return
	}
	b.send(p, &BPDU{Type: TypeTCN})
	b.ctr.Inc("bpdu_tx_tcn")
}

// configurationUpdate is §8.6.7.
func (b *Bridge) configurationUpdate() {
	root, port, cost := b.desRoot, b.rootPort, b.rootCost
	b.rootSelection()
	b.designatedPortSelection()
	if port != b.rootPort {
		b.stateVer++ // the old and new root ports' roles
	}
	if (root != b.desRoot || port != b.rootPort || cost != b.rootCost) &&
		b.log.Enabled(context.Background(), slog.LevelDebug) {
		b.log.Debug("stp: root", "bridge", b.cfg.Name, "root", b.desRoot, "port", b.rootPort, "cost", b.rootCost)
	}
}

// rootSelection is §8.6.8: the root port is the port, not designated and
// not disabled, whose information names the best root, then the lowest
// cost to it, the lowest designated bridge, designated port and own port
// identifier.
func (b *Bridge) rootSelection() {
	var best *port
	for i := range b.ports {
		p := &b.ports[i]
		if p.local || p.state == Disabled || b.designatedPort(p) || p.desRoot >= b.id {
			continue
		}
		if best == nil || betterRootPort(p, best) {
			best = p
		}
	}
	if best == nil {
		b.rootPort = 0
		b.desRoot = b.id
		b.rootCost = 0
		return
	}
	b.rootPort = best.num
	b.desRoot = best.desRoot
	b.rootCost = addCost(best.desCost, best.pathCost)
}

// addCost adds path costs, saturating at the largest the BPDU's 32-bit
// root path cost holds: a wrapped sum (more than 21 hops at the largest
// port cost) would look cheap and break the tree.
func addCost(a, b uint32) uint32 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxUint32
}

func betterRootPort(p, q *port) bool {
	if p.desRoot != q.desRoot {
		return p.desRoot < q.desRoot
	}
	if pc, qc := addCost(p.desCost, p.pathCost), addCost(q.desCost, q.pathCost); pc != qc {
		return pc < qc
	}
	if p.desBridge != q.desBridge {
		return p.desBridge < q.desBridge
	}
	if p.desPort != q.desPort {
		return p.desPort < q.desPort
	}
	return p.id < q.id
}

// designatedPortSelection is §8.6.9.
func (b *Bridge) designatedPortSelection() {
	for i := range b.ports {
		p := &b.ports[i]
		if p.local {
			continue
		}
		if b.designatedPort(p) ||
			p.desRoot != b.desRoot ||
			b.rootCost < p.desCost ||
			(b.rootCost == p.desCost &&
				(b.id < p.desBridge || (b.id == p.desBridge && p.id <= p.desPort))) {
			b.becomeDesignatedPort(p)
		}
	}
}

// becomeDesignatedPort is §8.6.10.
func (b *Bridge) becomeDesignatedPort(p *port) {
	p.desRoot = b.desRoot
	p.desCost = b.rootCost
	if p.desBridge != b.id || p.desPort != p.id {
		b.stateVer++ // p's role: designated now
	}
	p.desBridge = b.id
	p.desPort = p.id
}

// portStateSelection is §8.6.11.
func (b *Bridge) portStateSelection() {
	for i := range b.ports {
		p := &b.ports[i]
		if p.local {
			continue
		}
		switch {
		case p.num == b.rootPort:
			p.configPending = false
			p.tca = false
			b.makeForwarding(p)
		case b.designatedPort(p):
			p.msgAge.stop()
			b.makeForwarding(p)
		default:
			p.configPending = false
			p.tca = false
			b.makeBlocking(p)
		}
	}
}

// makeForwarding is §8.6.12. An edge port skips listening and learning.
func (b *Bridge) makeForwarding(p *port) {
	if p.state != Blocking {
		return
	}
	if p.edge {
		b.setState(p, Forwarding)
		return
	}
	b.setState(p, Listening)
	b.startTimer(&p.fwdDelay, b.fwdDelay)
}

// makeBlocking is §8.6.13.
func (b *Bridge) makeBlocking(p *port) {
	if p.state == Disabled || p.state == Blocking {
		return
	}
	if (p.state == Forwarding || p.state == Learning) && p.changeDetection {
		b.topologyChangeDetection()
	}
	b.setState(p, Blocking)
	p.fwdDelay.stop()
}

// topologyChangeDetection is §8.6.14.
func (b *Bridge) topologyChangeDetection() {
	b.ctr.Inc("topology_change_detected")
	if b.rootBridge() {
		b.tc = true
		b.startTimer(&b.tcT, b.cfg.MaxAge+b.cfg.ForwardDelay)
	} else if !b.tcDet {
		b.transmitTCN()
		b.startTimer(&b.tcnT, b.cfg.HelloTime)
	}
	b.tcDet = true
}

// topologyChangeAcknowledged is §8.6.15.
func (b *Bridge) topologyChangeAcknowledged() {
	b.tcDet = false
	b.tcnT.stop()
}

// acknowledgeTopologyChange is §8.6.16.
func (b *Bridge) acknowledgeTopologyChange(p *port) {
	p.tca = true
	b.transmitConfig(p)
}

// ---- timer expiry (§8.7.3–8.7.8) ---------------------------------------

// bindTimer gives t its expiry procedure, once.
func (b *Bridge) bindTimer(t *timer, expire func()) {
	t.expire = expire
	t.fire = func() {
		if !t.active || b.env.Now() < t.deadline {
			return
		}
		t.active = false
		t.cancel = nil
		t.expire()
	}
}

// rearmTimer makes an active timer expire when its value reaches limit.
func (b *Bridge) rearmTimer(t *timer, limit element.Time) {
	if !t.active {
		return
	}
	v := t.value(b.env.Now())
	b.startTimer(t, limit-v)
	t.base = v
}

// startTimer (re)arms t to expire after d.
func (b *Bridge) startTimer(t *timer, d element.Time) {
	t.stop()
	if d < 0 {
		d = 0
	}
	t.active = true
	t.start = b.env.Now()
	t.base = 0
	t.deadline = t.start + d
	t.cancel = b.env.After(d, t.fire)
}

func (b *Bridge) helloTimerExpiry() {
	b.configBPDUGeneration()
	b.startTimer(&b.helloT, b.cfg.HelloTime)
}

func (b *Bridge) messageAgeTimerExpiry(p *port) {
	b.ctr.Inc("message_age_expired")
	wasRoot := b.rootBridge()
	b.becomeDesignatedPort(p)
	b.configurationUpdate()
	b.portStateSelection()
	if b.rootBridge() && !wasRoot {
		b.becameRoot()
	}
}

// becameRoot is the tail shared by §8.7.4 and §8.8.3: a bridge that finds
// itself root takes its own timers, announces a topology change and starts
// sending hellos.
func (b *Bridge) becameRoot() {
	b.setTimes(b.cfg.MaxAge, b.cfg.HelloTime, b.cfg.ForwardDelay)
	b.topologyChangeDetection()
	b.tcnT.stop()
	b.configBPDUGeneration()
	b.startTimer(&b.helloT, b.cfg.HelloTime)
}

func (b *Bridge) forwardDelayTimerExpiry(p *port) {
	switch p.state {
	case Listening:
		b.setState(p, Learning)
		b.startTimer(&p.fwdDelay, b.fwdDelay)
	case Learning:
		b.setState(p, Forwarding)
		if b.designatedForSomePort() && p.changeDetection {
			b.topologyChangeDetection()
		}
	}
}

// designatedForSomePort is the standard's designated_for_some_port: a
// disabled port counts, as §8.8.3 makes it designated. (Linux's bridge
// skips disabled ports, and so raises no topology change for a bridge
// whose only other ports are down.)
func (b *Bridge) designatedForSomePort() bool {
	for i := range b.ports {
		p := &b.ports[i]
		if !p.local && p.desBridge == b.id {
			return true
		}
	}
	return false
}

func (b *Bridge) tcnTimerExpiry() {
	b.transmitTCN()
	b.startTimer(&b.tcnT, b.cfg.HelloTime)
}

func (b *Bridge) topologyChangeTimerExpiry() {
	b.tcDet = false
	b.setTC(false)
}

// setTC sets the topology change flag. When it clears, entries that went
// unused for longer than the forward delay while it was set are deleted:
// under the standard's continuous aging they died during the change, and
// the lazy aging of lookups may not have met them.
func (b *Bridge) setTC(tc bool) {
	if b.tc && !tc {
		if n := b.fdb.sweep(b.env.Now(), b.fwdDelay); n > 0 {
			b.ctr.Add("aged_out", uint64(n))
		}
	}
	b.tc = tc
}

func (b *Bridge) holdTimerExpiry(p *port) {
	if p.configPending {
		b.transmitConfig(p)
	}
}

// ---- port management (§8.8) --------------------------------------------

// initializePort is §8.8.1's per-port part.
func (b *Bridge) initializePort(p *port) {
	b.becomeDesignatedPort(p)
	b.setState(p, Blocking)
	p.tca = false
	p.configPending = false
	p.edge = b.isEdgeCfg(p.num)
	p.changeDetection = !p.edge
	p.msgAge.stop()
	p.fwdDelay.stop()
	p.hold.stop()
}

// enablePort is §8.8.2.
func (b *Bridge) enablePort(p *port) {
	b.initializePort(p)
	b.portStateSelection()
}

// disablePort is §8.8.3. Beyond the standard, a port that was learning or
// forwarding raises a topology change when its link fails, as Cisco's and
// 802.1D-2004's bridges do: stations behind it are gone, and the rest of
// the tree must age them out fast rather than in 300 s.
func (b *Bridge) disablePort(p *port) {
	wasActive := p.state == Forwarding || p.state == Learning
	wasRoot := b.rootBridge()
	b.becomeDesignatedPort(p)
	b.setState(p, Disabled)
	p.tca = false
	p.configPending = false
	p.msgAge.stop()
	p.fwdDelay.stop()
	p.hold.stop()
	b.configurationUpdate()
	b.portStateSelection()
	if b.rootBridge() && !wasRoot {
		b.becameRoot()
	} else if wasActive && p.changeDetection {
		b.topologyChangeDetection()
	}
}

// Status returns the bridge's spanning tree state.
func (b *Bridge) Status() Status {
	s := Status{
		Bridge:                 b.id,
		Root:                   b.desRoot,
		RootPathCost:           b.rootCost,
		RootPort:               b.rootPort,
		MaxAge:                 b.maxAge,
		HelloTime:              b.hello,
		ForwardDelay:           b.fwdDelay,
		TopologyChange:         b.tc,
		TopologyChangeDetected: b.tcDet,
		Protocol:               b.cfg.Protocol.String(),
		Ports:                  make([]PortStatus, len(b.ports)),
	}
	if b.rs != nil {
		s.MaxAge = element.Time(b.rs.rootTimes.maxAge) * element.Second
		s.ForwardDelay = element.Time(b.rs.rootTimes.fwdDelay) * element.Second
		s.HelloTime = element.Time(b.rs.hello) * element.Second
		s.TopologyChange = b.rstpTopologyChange()
	}
	for i := range b.ports {
		p := &b.ports[i]
		s.Ports[i] = PortStatus{
			Port: p.num, ID: p.id, Role: b.role(p), State: p.state, PathCost: p.pathCost,
			DesignatedRoot: p.desRoot, DesignatedCost: p.desCost,
			DesignatedBridge: p.desBridge, DesignatedPort: p.desPort,
		}
		if p.rs.on {
			ps := &s.Ports[i]
			ps.DesignatedRoot, ps.DesignatedCost = p.rs.portPrio.root, p.rs.portPrio.cost
			ps.DesignatedBridge, ps.DesignatedPort = p.rs.portPrio.bridge, p.rs.portPrio.port
			ps.Edge = p.rs.operEdge
		}
	}
	return s
}

// PortStateNames implements element.PortStateReporter: every port's state
// and role, "forwarding/root", "blocking/blocked", for status reports.
func (b *Bridge) PortStateNames() map[element.Port]string {
	m := make(map[element.Port]string, len(b.ports))
	for i := range b.ports {
		p := &b.ports[i]
		m[p.num] = p.state.String() + "/" + b.role(p).String()
	}
	return m
}

// PortStateVersion changes whenever a port's state may have
// (element.PortStateVersioner): a state, or a role, which it reports too.
func (b *Bridge) PortStateVersion() uint64 { return b.stateVer }

// PortState returns port pn's state and role (StateInvalid for a port the
// bridge does not have).
func (b *Bridge) PortState(pn element.Port) (State, Role) {
	p := b.port(pn)
	if p == nil {
		return StateInvalid, RoleInvalid
	}
	return p.state, b.role(p)
}

func (b *Bridge) role(p *port) Role {
	switch {
	case p.local:
		return RoleLocal
	case p.state == Disabled:
		return RoleDisabled
	case p.rs.on:
		return p.rs.role
	case p.num == b.rootPort:
		return RoleRoot
	case b.designatedPort(p):
		return RoleDesignated
	}
	return RoleBlocked
}
