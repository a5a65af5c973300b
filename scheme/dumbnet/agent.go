package dumbnet

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

// Config configures a host agent. Zero values take the defaults
// (DefaultConfig).
type Config struct {
	// Name is the host's name, for logs.
	Name string
	// MAC and IP are the host's identity: the address its unmodified stack
	// uses on the Local port, announced in probe replies.
	MAC wire.MAC
	IP  netip.Addr
	// Controller makes this host's agent run the controller.
	Controller bool
	// Store keeps the controller's state; nil is a MemStore.
	Store Store
	// K is how many shortest paths the PathTable keeps per destination.
	K int
	// S and Eps are Algorithm 1's window and slack for local detours.
	S, Eps int
	// Flowlets turns on flowlet load balancing (§6.2): a flow moves to
	// another of the k paths, at random, after FlowletGap of silence. Off,
	// a new flow takes one of the k paths by its hash. Either way a flow
	// keeps its path until the path is invalidated (§5.2).
	Flowlets   bool
	FlowletGap element.Time
	// MPLS sends data frames with the MPLS encoding (§5.3) instead of the
	// 0x9800 tag stack; control messages keep the tag stack.
	MPLS bool
	// MaxPorts is the highest port number discovery probes on each switch
	// (the paper's optional "maximum number of ports" argument).
	MaxPorts int
	// ProbeTimeout ends a BFS round once no probe has been sent for this
	// long; ProbeGap paces probes.
	ProbeTimeout, ProbeGap element.Time
	// Search is how long a host waits for the controller's announcement
	// before it starts probing for the controller itself; negative: never.
	Search element.Time
	// AuditEvery is how often the controller re-checks every link (its
	// audit, audit.go) even when no report says anything changed: a
	// report lost on its way (a flood across links that failed unseen)
	// would otherwise leave its view wrong for good. Negative: never.
	AuditEvery element.Time
	// QueryTimeout is the first retry interval of a path query (doubled at
	// each of QueryRetries retries).
	QueryTimeout element.Time
	QueryRetries int
	// MaxReplyLinks bounds a path graph so that its reply fits a frame.
	MaxReplyLinks int
	// QueueLen bounds the frames held per destination while its path is
	// being queried; a full queue drops its oldest frame for a new one.
	QueueLen int
	// HoldTime bounds how long a frame, or an ARP request of the stack,
	// waits for its path: older ones are dropped (drop_held_expired), not
	// delivered or answered late.
	HoldTime element.Time
	// HopLimit is the switches' notification hop limit: a notification
	// that arrives with more is forged.
	HopLimit uint8
	// FlapChanges, FlapWindow and FlapHold damp a flapping link on the
	// host (§4.2: "we rely on host-based mechanisms to suppress alarms if
	// the link flapping lasts longer"): a switch port whose state this
	// host saw change more than FlapChanges times within FlapWindow is
	// held down until FlapHold passes without a change. Its changes are
	// still applied here and told to the controller, which patches every
	// host, but are not flooded to the other hosts. FlapChanges negative:
	// never damp.
	FlapChanges          int
	FlapWindow, FlapHold element.Time
	// FloodPT caps how many PathTable destinations a host sends a
	// notification it floods to, beside its flood neighbours and the
	// controller, which always get it (flood). The destinations whose
	// paths crossed the link go first, then those whose path graph holds
	// it, then the others, each in ring order from this host's MAC. 0
	// takes DefaultFloodPT; negative: none; FloodPTAll: every one.
	FloodPT int
	// MTU, when positive, is the largest frame payload the fabric's links
	// carry. A frame that the tags would push past it is not sent: an IPv4
	// packet with DF set gets an ICMP "fragmentation needed" back to the
	// stack, so that unmodified hosts lower their path MTU; anything else
	// is dropped and counted. Zero: no limit (the simulator's links).
	MTU int
}

// Defaults of Config.
const (
	DefaultK             = 4
	DefaultFlowletGap    = 500 * element.Microsecond
	DefaultMaxPorts      = 64
	DefaultProbeTimeout  = 50 * element.Millisecond
	DefaultProbeGap      = 10 * element.Microsecond
	DefaultSearch        = 200 * element.Millisecond
	DefaultQueryTimeout  = 20 * element.Millisecond
	DefaultQueryRetries  = 8
	DefaultMaxReplyLinks = 64
	DefaultQueueLen      = 64
	DefaultAuditEvery    = 30 * element.Second
	// DefaultFlapChanges, DefaultFlapWindow and DefaultFlapHold: a port
	// that changes a fifth time within 10 s (the switches announce at
	// most one change a second) is not flooded until it has been stable
	// for 30 s. A failure and its repair are two changes; a link that
	// fails again soon after is four.
	DefaultFlapChanges = 4
	DefaultFlapWindow  = 10 * element.Second
	DefaultFlapHold    = 30 * element.Second
	// FloodPTAll sends a flooded notification to every PathTable
	// destination (Config.FloodPT).
	FloodPTAll = int(^uint(0) >> 1)
	// DefaultFloodPT is Config.FloodPT's default. Every destination made
	// the flood O(hosts²) per port event (33,008 frames per link failure
	// on fattree:8 with all-to-all traffic); 16 makes it O(hosts) frames (6,088)
	// and changed nothing else at the default hop limit, and with hops=2,
	// where most hosts hear through the flood, kept every host on stage 1
	// and the streams' outages within a datagram of 10 µs
	// (TestFloodCapTable, docs/dumbnet.md).
	DefaultFloodPT = 16
	// DefaultHoldTime is as long as the kernel's neighbour resolution
	// holds a packet before it gives up (3 probes, 1 s apart).
	DefaultHoldTime = 3 * element.Second
	// maxLearned bounds the return paths remembered from other hosts' PMs.
	maxLearned = 1024
	// maxPortStates and maxOrigins bound the notification state kept per
	// switch port and per flooding host, far above what a real fabric
	// needs (a 64-port fat tree has 327,680 ports and 65,536 hosts): only
	// forged notifications, each naming a new port or origin, get there.
	maxPortStates = 1 << 20
	maxOrigins    = 1 << 18
	// maxFlapStates bounds the ports whose recent changes are kept for
	// flap damping: far more than a real fabric sees change within a
	// window, and smaller than the other tables' bound because each keeps
	// FlapChanges+1 times.
	maxFlapStates = 1 << 16
	// maxSwitchPort is the highest port a one-byte tag names (0 asks for
	// the switch's ID, 0xFF ends the path).
	maxSwitchPort = 254
)

func (c *Config) defaults() {
	if c.K <= 0 {
		c.K = DefaultK
	}
	if c.S <= 0 {
		c.S = DefaultS
	}
	if c.Eps < 0 {
		c.Eps = DefaultEps
	}
	if c.FlowletGap <= 0 {
		c.FlowletGap = DefaultFlowletGap
	}
	if c.MaxPorts <= 0 {
		c.MaxPorts = DefaultMaxPorts
	}
	c.MaxPorts = min(c.MaxPorts, 254)
	if c.ProbeTimeout <= 0 {
		c.ProbeTimeout = DefaultProbeTimeout
	}
	if c.ProbeGap <= 0 {
		c.ProbeGap = DefaultProbeGap
	}
	if c.Search == 0 {
		c.Search = DefaultSearch
	}
	if c.QueryTimeout <= 0 {
		c.QueryTimeout = DefaultQueryTimeout
	}
	if c.QueryRetries <= 0 {
		c.QueryRetries = DefaultQueryRetries
	}
	if c.MaxReplyLinks <= 0 {
		c.MaxReplyLinks = DefaultMaxReplyLinks
	}
	if c.QueueLen <= 0 {
		c.QueueLen = DefaultQueueLen
	}
	if c.AuditEvery == 0 {
		c.AuditEvery = DefaultAuditEvery
	}
	if c.HoldTime <= 0 {
		c.HoldTime = DefaultHoldTime
	}
	if c.FlapChanges == 0 {
		c.FlapChanges = DefaultFlapChanges
	}
	c.FlapChanges = min(c.FlapChanges, maxFlapChanges)
	if c.FlapWindow <= 0 {
		c.FlapWindow = DefaultFlapWindow
	}
	if c.FlapHold <= 0 {
		c.FlapHold = DefaultFlapHold
	}
	if c.FloodPT == 0 {
		c.FloodPT = DefaultFloodPT
	}
	// Longer durations than the parameters take (dur) would make the waits
	// built from them wrap around.
	for _, d := range []*element.Time{&c.FlowletGap, &c.ProbeTimeout, &c.ProbeGap, &c.Search, &c.AuditEvery, &c.QueryTimeout, &c.HoldTime, &c.FlapWindow, &c.FlapHold} {
		*d = min(*d, maxDuration)
	}
	if c.Store == nil {
		c.Store = &MemStore{}
	}
	if c.HopLimit == 0 {
		c.HopLimit = DefaultHopLimit
	}
}

// Agent is the DumbNet host agent (DumbNet §5.2): it sits between the
// host's unmodified stack (the Local port) and its NICs. Outgoing frames
// get the path from the PathTable pushed as tags; incoming frames must
// have only the end marker left, which is stripped. It answers the
// stack's ARP itself from what the controller told it, answers probing
// messages, fails over locally on port notifications and floods them to
// the hosts it talks to (§4.2 stage 1). On the controller's host it also
// runs the Controller.
type Agent struct {
	cfg   Config
	mac   wire.MAC
	ip    netip.Addr
	env   element.Env
	nic   element.Port // the NIC the agent uses (the first cabled one)
	nicUp bool
	local element.Port
	c     element.Counters
	alloc func(n int) []byte

	ctrl     *Controller
	haveCtrl bool
	ctrlMAC  wire.MAC
	ctrlPath []uint8
	learned  map[wire.MAC][]uint8
	search   *discovery

	cache   *TopoCache
	table   *PathTable
	ipToMAC map[netip.Addr]wire.MAC
	qid     uint32
	queries map[uint32]*query
	byDst   map[wire.MAC]*query
	byIP    map[netip.Addr]*query

	swSeq   map[portID]uint32
	evState map[portID]wire.PortState
	// downVer is, per switch port whose link this host learned is down,
	// the lowest version of a path graph that may leave the link out,
	// until a patch says it is up. The controller starts a version when
	// it starts checking a report: told by a notification, the host takes
	// the version after its own; told by the patch that books the link
	// down, the version before it (the check's, unless other changes came
	// in between).
	downVer map[portID]uint64
	// upVer is the version of the latest patch that said a link is up: a
	// path graph of a lower version that arrives later may leave it out.
	upVer uint64
	// neighbors are the flood neighbours the controller gave, as of
	// topology version nbrVersion (nil: none yet).
	neighbors  []wire.DumbNetNeighbor
	nbrVersion uint64
	hostSeen   map[wire.MAC]*seqWindow
	notifySeq  uint32
	// flaps are the recent changes of the ports that changed, for flap
	// damping (damped).
	flaps map[portID]*flapRecord

	// flows are the flow bindings used since flowSwap, oldFlows those of
	// the generation before that no frame has used since: the next swap,
	// once flowAge has passed, forgets them (choose).
	flows, oldFlows map[uint64]*flowBinding
	flowSwap        element.Time
	seed            uint64

	notifiedAt, patchedAt element.Time
	searchBackoff         element.Time
	// relocating: a search runs for the controller this host knows, whose
	// path stopped answering (relocate); nextRelocate and relocateBackoff
	// pace those searches.
	relocating      bool
	nextRelocate    element.Time
	relocateBackoff element.Time
}

// relocateAfter is how many unanswered tries of a path query make a host
// look for its controller again (20 + 40 + 80 ms with the default
// querytimeout).
const relocateAfter = 3

// Notified returns when this host last learnt of a port state change: by
// a notification (stage 1: the switch's broadcast or another host's
// flood) and by the controller's patch (stage 2). Zero: never. For
// DumbNet Fig. 11(a).
func (a *Agent) Notified() (stage1, stage2 element.Time) { return a.notifiedAt, a.patchedAt }

type portID struct {
	sw   uint64
	port uint16
}

// query is a path query in flight and what waits for it.
type query struct {
	id uint32
	// version and nbrVersion are the TopoCache's and the flood
	// neighbours' versions when the query was first sent: the controller
	// answers later, so its reply can carry no lower one unless they came
	// from forged messages (pathReply).
	version, nbrVersion uint64
	dst                 wire.MAC
	dstIP               netip.Addr
	tries               int
	cancel              func()
	frames              []heldFrame
	arps                []heldARP
}

// heldFrame is a frame waiting for its path, and when it came.
type heldFrame struct {
	at element.Time
	b  []byte
}

// heldARP is an ARP request of the stack waiting for its address, and
// when it came.
type heldARP struct {
	at  element.Time
	req wire.ARP
}

// expire drops the held frames and ARP requests older than the hold time;
// each list is in arrival order. An ARP request is answered no later
// than a frame is sent: the stack has given up on one that old (it
// retries every second, three times by default), and a late answer to
// it would fill its neighbour table unasked.
func (a *Agent) expire(q *query) {
	now, n, m := a.env.Now(), 0, 0
	for n < len(q.frames) && now-q.frames[n].at > a.cfg.HoldTime {
		n++
	}
	for m < len(q.arps) && now-q.arps[m].at > a.cfg.HoldTime {
		m++
	}
	if n+m > 0 {
		a.c.Add("drop_held_expired", uint64(n+m))
		q.frames = slices.Delete(q.frames, 0, n)
		q.arps = slices.Delete(q.arps, 0, m)
	}
}

// flowBinding is a flow's path (§5.2) and when it last sent (§6.2).
type flowBinding struct {
	last    element.Time
	path    []uint8
	flowlet uint64 // the flow's flowlet ID, bumped by every new flowlet (§6.2)
}

// maxFlows bounds the flows an agent remembers.
const maxFlows = 65536

// flowIdle is the least silence after which a flow's binding can be
// forgotten (with flowlets, the flowlet gap if longer): a flow that sent
// nothing for a second has no packet left in flight on a data-center
// fabric, so its next path reorders nothing.
const flowIdle = element.Second

// maxQueries bounds the destinations an agent waits on a path for.
const maxQueries = 65536

// NewAgent returns a host agent.
func NewAgent(cfg Config) *Agent {
	cfg.defaults()
	a := &Agent{cfg: cfg, mac: cfg.MAC, ip: cfg.IP,
		learned: make(map[wire.MAC][]uint8), cache: NewTopoCache(), table: NewPathTable(),
		ipToMAC: make(map[netip.Addr]wire.MAC), queries: make(map[uint32]*query),
		byDst: make(map[wire.MAC]*query), byIP: make(map[netip.Addr]*query),
		swSeq: make(map[portID]uint32), evState: make(map[portID]wire.PortState), downVer: make(map[portID]uint64),
		hostSeen: make(map[wire.MAC]*seqWindow), flaps: make(map[portID]*flapRecord), flows: make(map[uint64]*flowBinding), oldFlows: make(map[uint64]*flowBinding)}
	if cfg.Controller {
		a.ctrl = newController(a, cfg.Store)
		a.haveCtrl, a.ctrlMAC = true, a.mac
	}
	return a
}

// Controller returns the controller this agent runs, or nil.
func (a *Agent) Controller() *Controller { return a.ctrl }

// ControllerMAC returns the controller's MAC once the agent knows where
// the controller is.
func (a *Agent) ControllerMAC() (wire.MAC, bool) { return a.ctrlMAC, a.haveCtrl }

// TopoCache returns the agent's topology cache.
func (a *Agent) TopoCache() *TopoCache { return a.cache }

// PathTable returns the agent's path table.
func (a *Agent) PathTable() *PathTable { return a.table }

// Counters returns the agent's (and its controller's) counters.
func (a *Agent) Counters() map[string]uint64 { return a.c.Snapshot() }

// Ready reports whether the agent can carry traffic: on the controller's
// host, discovery has finished; elsewhere, the controller is located. The
// emulator polls it (emu.Readier) on the element's goroutine.
func (a *Agent) Ready() bool {
	if a.ctrl != nil {
		return a.ctrl.ready
	}
	return a.haveCtrl
}

// Attach implements element.Element.
func (a *Agent) Attach(env element.Env, ports []element.PortInfo) {
	a.env = env
	a.alloc = allocFor(env)
	a.seed = env.Rand().Uint64()
	for _, p := range ports {
		if p.Local {
			a.local = p.Port
		} else if a.nic == 0 || p.Port < a.nic {
			a.nic, a.nicUp = p.Port, p.Up
		}
	}
	if a.ctrl != nil {
		a.ctrl.disc.start()
		return
	}
	if a.cfg.Search > 0 {
		// Jitter keeps the hosts' searches from starting in lockstep.
		d := a.cfg.Search + element.Time(env.Rand().Int64N(int64(a.cfg.Search)/2+1))
		env.After(d, a.startSearch)
	}
}

// LinkChange implements element.Element.
func (a *Agent) LinkChange(p element.Port, up bool) {
	if p == a.nic {
		was := a.nicUp
		a.nicUp = up
		if a.ctrl != nil && was != up {
			a.ctrl.nicChange(up)
		}
	}
}

func (a *Agent) sendNIC(f []byte) {
	if a.nic == 0 || !a.nicUp {
		a.c.Inc("drop_nic_down")
		return
	}
	a.env.Send(a.nic, f)
}

// controlFrame builds a DumbNet frame from the agent to dst that follows
// tags and carries m.
func (a *Agent) controlFrame(dst wire.MAC, tags []uint8, m wire.Message) ([]byte, error) {
	b := make([]byte, 0, 64+len(tags))
	b = wire.AppendEthernet(b, dst, a.mac, wire.EtherTypeDumbNet, nil)
	h := wire.DumbNetHeader{Tags: tags, InnerType: wire.EtherTypeLocalExp}
	b, err := h.AppendTo(b)
	if err != nil {
		return nil, err
	}
	return m.AppendTo(b)
}

// Receive implements element.Element.
func (a *Agent) Receive(p element.Port, frame []byte) {
	if len(frame) < wire.EthHeaderLen {
		a.c.Inc("drop_truncated")
		return
	}
	if p == a.local {
		a.fromStack(frame)
		return
	}
	a.fromFabric(p, frame)
}

// fromStack handles a frame from the host's own stack.
func (a *Agent) fromStack(frame []byte) {
	f := wire.Frame(frame)
	if f.EtherType() == wire.EtherTypeARP {
		a.stackARP(frame)
		return
	}
	dst := f.Dst()
	if dst.IsMulticast() {
		// DumbNet has no broadcast for data: ARP is answered here, and
		// nothing else the stack multicasts (IPv6 ND, mDNS) has a path.
		a.c.Inc("drop_multicast")
		return
	}
	if dst == a.mac {
		a.c.Inc("drop_to_self")
		return
	}
	if e := a.table.Lookup(dst); e != nil && len(e.Paths) > 0 {
		a.sendData(frame, a.choose(e, frame))
		return
	}
	a.hold(dst, netip.Addr{}, frame, nil)
}

// sendData pushes tags onto a copy of the stack's frame and sends it.
func (a *Agent) sendData(frame []byte, tags []uint8) {
	et := wire.Frame(frame).EtherType()
	mpls := a.cfg.MPLS && (et == wire.EtherTypeIPv4 || et == wire.EtherTypeIPv6)
	over := len(tags) + 3
	if mpls {
		over = wire.MPLSLabelLen * (len(tags) + 1)
	}
	if a.cfg.MTU > 0 && len(frame)-wire.EthHeaderLen+over > a.cfg.MTU {
		a.tooBig(frame, a.cfg.MTU-over)
		return
	}
	buf := make([]byte, len(frame), len(frame)+over)
	copy(buf, frame)
	var err error
	if mpls {
		buf, err = wire.DumbNetMPLSPush(buf, tags)
	} else {
		buf, err = wire.DumbNetPush(buf, tags)
	}
	if err != nil {
		a.c.Inc("drop_push_error")
		return
	}
	a.c.Inc("tx_data")
	a.sendNIC(buf)
}

// tooBig answers a frame the tags would make too long for the fabric:
// ICMP "fragmentation needed" (RFC 792, RFC 1191) with the MTU left after
// the tags, for an IPv4 packet with DF set; a drop otherwise.
func (a *Agent) tooBig(frame []byte, mtu int) {
	ip := frame[wire.EthHeaderLen:]
	if wire.Frame(frame).EtherType() != wire.EtherTypeIPv4 || len(ip) < 20 || ip[0]>>4 != 4 || ip[6]&0x40 == 0 || mtu < 68 {
		a.c.Inc("drop_too_big")
		return
	}
	ihl := int(ip[0]&0x0f) * 4
	if ihl < 20 || len(ip) < ihl {
		a.c.Inc("drop_too_big")
		return
	}
	quote := ip[:min(len(ip), ihl+8)]
	b := make([]byte, 0, wire.EthHeaderLen+20+8+len(quote))
	b = wire.AppendEthernet(b, wire.Frame(frame).Src(), wire.Frame(frame).Dst(), wire.EtherTypeIPv4, nil)
	total := 20 + 8 + len(quote)
	h := []byte{0x45, 0, byte(total >> 8), byte(total), 0, 0, 0, 0, 64, 1, 0, 0}
	h = append(h, ip[16:20]...) // from the destination the packet was for
	h = append(h, ip[12:16]...) // to its sender
	ck := inetChecksum(h)
	h[10], h[11] = byte(ck>>8), byte(ck)
	b = append(b, h...)
	icmp := []byte{3, 4, 0, 0, 0, 0, byte(mtu >> 8), byte(mtu)}
	icmp = append(icmp, quote...)
	ck = inetChecksum(icmp)
	icmp[2], icmp[3] = byte(ck>>8), byte(ck)
	b = append(b, icmp...)
	a.c.Inc("icmp_frag_needed")
	a.env.Send(a.local, b)
}

// inetChecksum is the Internet checksum (RFC 1071).
func inetChecksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// choose picks one of the entry's paths for a frame. The PathTable
// "remembers the previously used choice for each flow, and binds a flow to
// a particular path" (§5.2): a flow keeps its path for as long as the
// entry holds it, and "will automatically choose a new path when the older
// path is invalidated". A new flow, or one whose path is gone, takes one
// by flow hash. With flowlets, a flowlet ID (the flow hash and a counter
// the flow bumps after every silence longer than the flowlet gap) picks
// the path: §6.2's routing function "can then deterministically choose one
// of the many k paths available in the PathTable, based on the flowlet
// ID", and "whenever flow ID changes, the extension will output a
// different path": one of the others, by the new ID. Bindings are
// forgotten only after at least a second of silence (flow), so no flow
// moves within a flowlet, nor with frames in flight.
func (a *Agent) choose(e *PathEntry, frame []byte) []uint8 {
	h := a.flowHash(frame)
	now := a.env.Now()
	n := len(e.Paths)
	fb := a.flow(h, now)
	cur := -1
	if fb.path != nil {
		cur = slices.IndexFunc(e.Paths, func(p []uint8) bool { return bytes.Equal(p, fb.path) })
	}
	switch {
	case cur < 0 && a.cfg.Flowlets:
		cur = int(mix(h^fb.flowlet) % uint64(n))
	case cur < 0:
		cur = int(h % uint64(n))
	case a.cfg.Flowlets && n > 1 && now-fb.last > a.cfg.FlowletGap:
		fb.flowlet++
		cur = (cur + 1 + int(mix(h^fb.flowlet)%uint64(n-1))) % n
		a.c.Inc("flowlet_switches")
	}
	fb.path, fb.last = e.Paths[cur], now
	return fb.path
}

// flowAge is how long a flow's binding outlives its last frame at least.
func (a *Agent) flowAge() element.Time { return max(flowIdle, a.cfg.FlowletGap) }

// flow returns flow h's binding, a new one for a flow it does not
// remember. The bindings are kept in two generations, swapped once
// flowAge has passed since the last swap: the generation before, which
// no frame has used since the last swap, is forgotten then, and a binding
// found there is used again and moves into the current one. So a binding
// lives at least flowAge after its last frame, and at most twice that,
// at O(1) per frame; a flow forgotten so has been silent longer than
// the flowlet gap, and takes a path again as a new flow does. When
// maxFlows bindings are in use, a new flow gets one that is not
// remembered (flows_unbound): its frames take its hash's path, the
// same each time, and the flows that have the bindings keep them.
func (a *Agent) flow(h uint64, now element.Time) *flowBinding {
	switch age := a.flowAge(); {
	case now-a.flowSwap >= 2*age:
		// Nothing sent for two ages: the current generation has been
		// silent for one at least, and goes too (swaps happen on frames
		// only, so without this a binding outlived any silence).
		if n := len(a.oldFlows) + len(a.flows); n > 0 {
			a.c.Add("flows_forgotten", uint64(n))
		}
		clear(a.oldFlows)
		a.flows = make(map[uint64]*flowBinding)
		a.flowSwap = now
	case now-a.flowSwap >= age:
		if n := len(a.oldFlows); n > 0 {
			a.c.Add("flows_forgotten", uint64(n))
		}
		a.oldFlows, a.flows = a.flows, make(map[uint64]*flowBinding)
		a.flowSwap = now
	}
	if fb := a.flows[h]; fb != nil {
		return fb
	}
	if fb := a.oldFlows[h]; fb != nil {
		delete(a.oldFlows, h)
		a.flows[h] = fb
		return fb
	}
	fb := &flowBinding{}
	if len(a.flows)+len(a.oldFlows) >= maxFlows {
		a.c.Inc("flows_unbound")
		return fb
	}
	a.flows[h] = fb
	return fb
}

// FlowPath returns the tag path the agent gives frame's flow now: the path
// the flow is bound to, or, for a flow it has not seen (or has forgotten),
// the path its next frame would get. Nil when the agent has no path to the
// frame's destination. It changes nothing; like every call into an element,
// it must be made on the engine's goroutine.
func (a *Agent) FlowPath(frame []byte) []uint8 {
	if len(frame) < 14 {
		return nil
	}
	e := a.table.Lookup(wire.Frame(frame).Dst())
	if e == nil || len(e.Paths) == 0 {
		return nil
	}
	h := a.flowHash(frame)
	var flowlet uint64
	age := a.env.Now() - a.flowSwap
	var fb *flowBinding
	if age < 2*a.flowAge() {
		fb = a.flows[h] // otherwise forgotten at the next frame
	}
	if fb == nil && age < a.flowAge() {
		fb = a.oldFlows[h]
	}
	if fb != nil {
		if slices.ContainsFunc(e.Paths, func(p []uint8) bool { return bytes.Equal(p, fb.path) }) {
			return fb.path
		}
		flowlet = fb.flowlet
	}
	// As choose picks a path for a flow without one.
	if a.cfg.Flowlets {
		return e.Paths[mix(h^flowlet)%uint64(len(e.Paths))]
	}
	return e.Paths[h%uint64(len(e.Paths))]
}

// flowHash hashes the frame's destination and, for IPv4 and IPv6, its
// addresses, protocol and TCP/UDP ports. A fragment hashes without ports
// (only the first carries them; the rest would hash on payload bytes and
// spread one datagram over every path, a new flow binding each), and so
// does an IPv6 packet whose next header is not TCP or UDP.
func (a *Agent) flowHash(frame []byte) uint64 {
	h := fnv(a.seed^0xcbf29ce484222325, frame[0:6])
	switch et := wire.Frame(frame).EtherType(); {
	case et == wire.EtherTypeIPv4 && len(frame) >= 34:
		ip := frame[14:]
		ihl := int(ip[0]&0x0f) * 4
		h = fnv(h, ip[9:10])
		h = fnv(h, ip[12:20])
		fragment := (uint16(ip[6])<<8|uint16(ip[7]))&0x3fff != 0 // MF, or an offset
		if (ip[9] == 6 || ip[9] == 17) && !fragment && len(ip) >= ihl+4 && ihl >= 20 {
			h = fnv(h, ip[ihl:ihl+4])
		}
	case et == wire.EtherTypeIPv6 && len(frame) >= 14+40:
		ip := frame[14:]
		h = fnv(h, ip[6:7])  // next header
		h = fnv(h, ip[8:40]) // source and destination
		if (ip[6] == 6 || ip[6] == 17) && len(ip) >= 44 {
			h = fnv(h, ip[40:44])
		}
	}
	// Finalize so that the low bits used by the modulo mix.
	return mix(h)
}

// mix is SplitMix64's finalizer.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// stackARP answers the stack's ARP requests from the fabric's host table,
// so no ARP broadcast ever enters the fabric (stateless switches could not
// flood it). The paper does not say how hosts resolve addresses; the
// controller knows every host's MAC and IP from discovery (§4.1: a host
// answers a PM "together with its identity, such as its MAC or IP
// addresses"), and a path query carries the IP it resolves.
func (a *Agent) stackARP(frame []byte) {
	req, err := wire.DecodeARP(frame)
	if err != nil {
		a.c.Inc("drop_bad_arp")
		return
	}
	if req.Op != wire.ARPRequest {
		a.c.Inc("arp_ignored")
		return
	}
	if req.TargetIP == a.ip || req.TargetIP == req.SenderIP {
		a.c.Inc("arp_ignored") // duplicate address detection, gratuitous ARP
		return
	}
	if mac, ok := a.ipToMAC[req.TargetIP]; ok {
		a.arpReply(req, mac)
		return
	}
	a.hold(wire.MAC{}, req.TargetIP, nil, &req)
}

func (a *Agent) arpReply(req wire.ARP, mac wire.MAC) {
	rep := wire.ARP{Op: wire.ARPReply, SenderMAC: mac, SenderIP: req.TargetIP, TargetMAC: req.SenderMAC, TargetIP: req.SenderIP}
	f, err := wire.AppendARPFrame(nil, req.SenderMAC, 0, &rep)
	if err != nil {
		a.c.Inc("drop_bad_arp")
		return
	}
	a.c.Inc("arp_answered")
	a.env.Send(a.local, f)
}

// hold queues a frame or an ARP request until the path query for its
// destination is answered, and starts that query.
func (a *Agent) hold(dst wire.MAC, ip netip.Addr, frame []byte, arp *wire.ARP) {
	var q *query
	if dst != (wire.MAC{}) {
		q = a.byDst[dst]
	} else {
		q = a.byIP[ip]
	}
	fresh := q == nil
	if fresh && len(a.queries) >= maxQueries {
		// Only a flood of ever new destinations fills it (with no
		// controller to answer, queries are not retired).
		n := uint64(0)
		if frame != nil {
			n++
		}
		if arp != nil {
			n++
		}
		a.c.Add("drop_query_table_full", n)
		return
	}
	if fresh {
		a.qid++
		q = &query{id: a.qid, version: a.cache.version, nbrVersion: a.nbrVersion, dst: dst, dstIP: ip}
		a.queries[q.id] = q
		if dst != (wire.MAC{}) {
			a.byDst[dst] = q
		} else {
			a.byIP[ip] = q
		}
	}
	if frame != nil {
		a.expire(q)
		if len(q.frames) >= a.cfg.QueueLen {
			// The oldest goes, as in the kernel's neighbour queue: the
			// newest frames are the ones still worth delivering.
			a.c.Inc("drop_queue_full")
			q.frames = slices.Delete(q.frames, 0, 1)
		}
		q.frames = append(q.frames, heldFrame{at: a.env.Now(), b: slices.Clone(frame)})
		a.c.Inc("frames_held")
	}
	if arp != nil {
		a.expire(q)
		if len(q.arps) >= a.cfg.QueueLen {
			a.c.Inc("drop_queue_full")
		} else {
			q.arps = append(q.arps, heldARP{at: a.env.Now(), req: *arp})
			a.c.Inc("frames_held")
		}
	}
	switch {
	case fresh:
		// Last: on the controller's own host the answer comes at once.
		a.sendQuery(q)
	case arp != nil:
		// The stack asks again (its ARP retry, 1 s later by default):
		// it still waits, so ask the controller again now, with the
		// backoff started over. The query's own retries double their
		// wait; on a lossy fabric their later ones would come after the
		// stack gave up (3 requests), leaving the pair unable to talk
		// although the controller answers most queries. The stack paces
		// its requests, so this adds a few queries, not a flood; data
		// frames, which come at line rate, do not re-arm.
		a.c.Inc("path_query_rearmed")
		q.tries = 0
		a.sendQuery(q)
	}
}

func (a *Agent) sendQuery(q *query) {
	if q.cancel != nil {
		q.cancel()
		q.cancel = nil
	}
	m := wire.DumbNetPathQuery{QueryID: q.id, Src: a.mac, Dst: q.dst, DstIP: q.dstIP}
	if a.haveCtrl {
		a.c.Inc("path_queries")
		if a.ctrl != nil {
			a.ctrl.query(&m)
		} else if f, err := a.controlFrame(a.ctrlMAC, a.ctrlPath, &m); err == nil {
			a.sendNIC(f)
		}
	}
	if _, live := a.queries[q.id]; !live {
		return // answered at once (the controller's own host)
	}
	if !a.haveCtrl {
		// Nobody to ask: controllerReady sends every query once the
		// controller is known. A timer here re-armed itself every
		// QueryTimeout for ever, one per destination asked for.
		return
	}
	wait := scale(1<<min(q.tries, 16), a.cfg.QueryTimeout)
	q.cancel = a.env.After(wait, func() {
		q.cancel = nil
		if a.queries[q.id] != q {
			return
		}
		if a.haveCtrl {
			q.tries++ // waiting for the controller to be found costs no try
			if q.tries == relocateAfter {
				a.relocate()
			}
		}
		a.expire(q)
		if q.tries > a.cfg.QueryRetries {
			a.c.Add("drop_no_path", uint64(len(q.frames)+len(q.arps)))
			a.forget(q)
			return
		}
		a.sendQuery(q)
	})
}

func (a *Agent) forget(q *query) {
	if q.cancel != nil {
		q.cancel()
	}
	delete(a.queries, q.id)
	if a.byDst[q.dst] == q {
		delete(a.byDst, q.dst)
	}
	if a.byIP[q.dstIP] == q {
		delete(a.byIP, q.dstIP)
	}
}

// controllerReady sends the queries that waited for the controller.
func (a *Agent) controllerReady() {
	for _, id := range slices.Sorted(maps.Keys(a.queries)) {
		if q := a.queries[id]; q != nil {
			a.sendQuery(q)
		}
	}
}

// fromFabric handles a frame from a NIC.
func (a *Agent) fromFabric(p element.Port, frame []byte) {
	switch wire.Frame(frame).EtherType() {
	case wire.EtherTypeDumbNet:
		tags, inner, payload, err := wire.ParseDumbNet(frame)
		if err != nil {
			if errors.Is(err, wire.ErrTruncated) {
				a.c.Inc("drop_truncated")
			} else {
				a.c.Inc("drop_malformed")
			}
			return
		}
		if len(tags) > 0 {
			if inner == wire.EtherTypeLocalExp && len(payload) > 0 && wire.Subtype(payload[0]) == wire.SubDumbNetProbe {
				a.answerProbe(p, frame, tags, payload)
				return
			}
			a.c.Inc("drop_not_at_end")
			return
		}
		dst := wire.Frame(frame).Dst()
		if inner == wire.EtherTypeLocalExp {
			if dst != a.mac && !dst.IsBroadcast() {
				a.c.Inc("drop_not_for_us")
				return
			}
			a.fabricControl(wire.Frame(frame).Src(), payload, len(frame))
			return
		}
		if dst != a.mac {
			a.c.Inc("drop_not_for_us")
			return
		}
		out, _ := wire.DumbNetStrip(slices.Clone(frame)) // checked by ParseDumbNet
		a.deliver(out)
	case wire.EtherTypeMPLS:
		out, err := wire.DumbNetMPLSStrip(slices.Clone(frame))
		switch {
		case errors.Is(err, wire.ErrNotAtEnd):
			// Labels left, as a tag stack with tags left (§5.1).
			a.c.Inc("drop_not_at_end")
			return
		case err != nil:
			a.c.Inc("drop_malformed")
			return
		}
		if wire.Frame(out).Dst() != a.mac {
			a.c.Inc("drop_not_for_us")
			return
		}
		a.deliver(out)
	case wire.EtherTypeLocalExp:
		var m wire.DumbNetPortStatus
		if _, err := wire.DecodePadded(&m, frame[wire.EthHeaderLen:], len(frame)); err != nil || !switchPort(m.Port) {
			a.c.Inc("drop_bad_control")
			return
		}
		if m.HopLimit > a.cfg.HopLimit {
			a.c.Inc("drop_hop_limit")
			return
		}
		a.portStatus(&m)
	default:
		a.c.Inc("drop_not_dumbnet")
	}
}

func (a *Agent) deliver(frame []byte) {
	if a.local == 0 {
		a.c.Inc("drop_no_stack")
		return
	}
	a.c.Inc("rx_data")
	a.env.Send(a.local, frame)
}

// answerProbe answers a PM that reached this host with tags left: those
// tags are the way back to the prober (§4.1).
func (a *Agent) answerProbe(p element.Port, frame, tags, payload []byte) {
	var pm wire.DumbNetProbe
	if _, err := wire.DecodePadded(&pm, payload, len(frame)); err != nil {
		a.c.Inc("drop_bad_control")
		return
	}
	switch {
	case pm.SrcMAC == a.mac:
		a.c.Inc("drop_own_probe")
		return
	case tags[0] == wire.DumbNetQuery:
		// A switch probe that met a host: answering along 0-... would make
		// the switch reply with its ID on this host's behalf.
		a.c.Inc("drop_probe_query_path")
		return
	case len(tags) >= len(pm.Path) || !slices.Equal(pm.Path[len(pm.Path)-len(tags):], tags):
		a.c.Inc("drop_probe_inconsistent")
		return
	case p != a.nic:
		a.c.Inc("drop_probe_other_nic")
		return
	case pm.SrcMAC.IsMulticast() || pm.SrcMAC == (wire.MAC{}):
		a.c.Inc("drop_bad_control")
		return
	}
	if _, ok := a.learned[pm.SrcMAC]; ok || len(a.learned) < maxLearned {
		a.learned[pm.SrcMAC] = slices.Clone(tags)
	}
	if a.ctrl != nil {
		a.ctrl.heardFrom(pm.SrcMAC)
	}
	rep := wire.DumbNetProbeReply{Seq: pm.Seq, HostMAC: a.mac, HostIP: a.ip, Path: pm.Path}
	if a.haveCtrl {
		rep.Controller = a.ctrlMAC
	}
	f, err := a.controlFrame(pm.SrcMAC, tags, &rep)
	if err != nil {
		a.c.Inc("drop_bad_control")
		return
	}
	a.c.Inc("probe_replies")
	a.env.Send(p, f)
}

// fabricControl handles a control message that reached this host.
func (a *Agent) fabricControl(src wire.MAC, payload []byte, frameLen int) {
	m, err := wire.DecodeMessagePadded(payload, frameLen)
	if err != nil {
		a.c.Inc("drop_bad_control")
		return
	}
	switch m := m.(type) {
	case *wire.DumbNetSwitchID:
		switch {
		case a.ctrl != nil && a.ctrl.disc != nil && (a.ctrl.disc.running || len(a.ctrl.disc.pending) > 0):
			a.ctrl.disc.switchReply(m)
		case a.search != nil && a.search.running:
			a.search.switchReply(m)
		default:
			a.c.Inc("drop_unmatched_reply")
		}
	case *wire.DumbNetProbeReply:
		if m.Seq == 0 && m.HostMAC == m.Controller && m.HostMAC == src {
			a.acceptAnnouncement(m)
			return
		}
		switch {
		case a.ctrl != nil && a.ctrl.disc.running:
			if !a.ctrl.disc.hostReply(m) { // counted there
				a.ctrl.unmatchedHostReply(m)
			}
		case a.ctrl != nil:
			a.c.Inc("drop_unmatched_reply")
			a.ctrl.unmatchedHostReply(m)
		case a.search != nil && a.search.running:
			a.search.hostReply(m)
		default:
			a.c.Inc("drop_unmatched_reply")
		}
	case *wire.DumbNetPathQuery:
		if a.ctrl == nil {
			a.c.Inc("drop_not_controller")
			return
		}
		if m.Src != src {
			a.c.Inc("drop_forged_query")
			return
		}
		a.ctrl.query(m)
	case *wire.DumbNetPathReply:
		if !a.haveCtrl || src != a.ctrlMAC {
			a.c.Inc("drop_forged_reply")
			return
		}
		if !switchPort(m.SrcPort) || !switchPort(m.DstPort) || !linkPortsOK(m.Links) {
			a.c.Inc("drop_bad_control")
			return
		}
		a.pathReply(m)
	case *wire.DumbNetTopoPatch:
		if !a.haveCtrl || src != a.ctrlMAC {
			a.c.Inc("drop_forged_patch")
			return
		}
		if !linkPortsOK(m.Links) {
			a.c.Inc("drop_bad_control")
			return
		}
		a.topoPatch(m)
	case *wire.DumbNetNeighbors:
		if !a.haveCtrl || src != a.ctrlMAC {
			a.c.Inc("drop_forged_neighbors")
			return
		}
		a.setNeighbors(m)
	case *wire.DumbNetHostNotify:
		if !switchPort(m.Port) {
			a.c.Inc("drop_bad_control")
			return
		}
		if a.ctrl != nil && !a.unknownSwitch(m.SwitchID) {
			// A host that floods to the controller knows it; if the
			// controller does not know the host, discovery missed it.
			// (Not a notification hostNotify drops as forged: it names
			// a switch the controller does not know.)
			a.ctrl.heardFrom(src)
		}
		a.hostNotify(m, src)
	default:
		a.c.Inc("drop_unexpected_control")
	}
}

// setNeighbors keeps the controller's latest list of flood neighbours.
func (a *Agent) setNeighbors(m *wire.DumbNetNeighbors) {
	if a.neighbors != nil && m.Version < a.nbrVersion {
		a.c.Inc("neighbors_stale")
		return
	}
	a.c.Inc("neighbors_updated")
	a.neighbors, a.nbrVersion = m.Neighbors, m.Version
	if a.neighbors == nil {
		a.neighbors = []wire.DumbNetNeighbor{}
	}
}

// localControl delivers a message the controller sends to its own host.
func (a *Agent) localControl(m wire.Message) {
	switch m := m.(type) {
	case *wire.DumbNetPathReply:
		a.pathReply(m)
	case *wire.DumbNetTopoPatch:
		a.topoPatch(m)
	case *wire.DumbNetNeighbors:
		a.setNeighbors(m)
	}
}

// acceptAnnouncement takes the controller's announcement: an unsolicited
// probe reply (seq 0) from the controller carrying the path from this host
// to it. The first controller found is kept; a different one later is
// counted and ignored.
func (a *Agent) acceptAnnouncement(m *wire.DumbNetProbeReply) {
	if !routable(m.Path) {
		// Queries would go out along it and die at the first switch: the
		// host would be cut off from the controller until it relocates.
		a.c.Inc("drop_bad_control")
		return
	}
	if a.haveCtrl && m.Controller != a.ctrlMAC {
		a.c.Inc("drop_other_controller")
		return
	}
	a.c.Inc("controller_announced")
	switch {
	case a.relocating:
		a.relocated(m.Path)
	case a.haveCtrl:
		a.ctrlPath = slices.Clone(m.Path)
	default:
		a.setController(m.Controller, m.Path)
	}
}

// routable reports whether path can take a frame from a host to another
// host: at least the host's own switch, at most DumbNetMaxTags, and no
// tag that is not a port (0 makes a switch answer its ID instead).
func routable(path []uint8) bool {
	if len(path) == 0 || len(path) > wire.DumbNetMaxTags {
		return false
	}
	return !slices.Contains(path, wire.DumbNetQuery) && !slices.Contains(path, wire.DumbNetEnd)
}

func (a *Agent) setController(mac wire.MAC, path []uint8) {
	if len(path) == 0 {
		return
	}
	a.haveCtrl, a.ctrlMAC, a.ctrlPath = true, mac, slices.Clone(path)
	a.c.Inc("controller_found")
	a.env.Log().Info("controller found", "controller", mac, "switch_hops", len(path))
	if a.search != nil {
		a.search.stop()
		// Gone, not just stopped: a stopped search never ends by itself,
		// and relocate starts none while one is held (half the hosts of
		// fattree:4, which searched at boot, could never relocate).
		a.search = nil
	}
	a.controllerReady()
}

// relocate looks for the controller again, as a host does at boot ("other
// hosts just probe until they learn the location of the controller",
// §2): its path to the controller stopped answering queries. The
// controller tells every host its new path after each change, but that
// announcement can be lost: sent across a link that failed within a
// switch's alarm suppression window, nothing reports the failure until
// the window ends, and a port that comes back inside the window is never
// reported at all, so nothing would ever re-announce. The queries go on
// meanwhile; the search accepts only the controller's own MAC, and runs
// at most once a second, backing off to 30 s while queries keep going
// unanswered (the controller does not answer a query for a destination
// it has no path to). A host told never to search (search=off) does not.
func (a *Agent) relocate() {
	now := a.env.Now()
	if a.search != nil || a.ctrl != nil || a.cfg.Search < 0 || now < a.nextRelocate {
		return
	}
	a.relocateBackoff = min(max(2*a.relocateBackoff, element.Second), 30*element.Second)
	a.nextRelocate = now + a.relocateBackoff
	a.c.Inc("controller_relocate")
	a.env.Log().Info("controller path not answering: searching")
	a.relocating = true
	a.search = newDiscovery(a, true)
	a.search.onDone = func() {
		a.search, a.relocating = nil, false
	}
	a.search.start()
}

// relocated ends a relocation: path is the controller's.
func (a *Agent) relocated(path []uint8) {
	a.relocating = false
	if a.search != nil {
		a.search.stop()
		a.search = nil
	}
	if slices.Equal(path, a.ctrlPath) {
		return
	}
	a.c.Inc("controller_relocated")
	a.env.Log().Info("controller relocated", "switch_hops", len(path))
	a.ctrlPath = slices.Clone(path)
	a.controllerReady() // the waiting queries go out on the new path
}

// learnController is the search's hook for every host that answered: the
// controller itself, or a host that names the controller whose PMs
// already gave this host the way back.
func (a *Agent) learnController(m *wire.DumbNetProbeReply, fwd []uint8) {
	if a.haveCtrl {
		// Relocating, only the controller's own answer will do: the path
		// its PMs once gave (learned) is likely the dead one.
		if a.relocating && m.HostMAC == a.ctrlMAC && m.Controller == a.ctrlMAC {
			a.relocated(fwd)
		}
		return
	}
	if m.Controller == m.HostMAC && m.Controller != (wire.MAC{}) {
		a.c.Inc("controller_found_by_search")
		a.setController(m.Controller, fwd)
		return
	}
	if m.Controller != (wire.MAC{}) {
		if p, ok := a.learned[m.Controller]; ok {
			a.c.Inc("controller_found_by_search")
			a.setController(m.Controller, p)
		}
	}
}

func (a *Agent) startSearch() {
	if a.haveCtrl || a.search != nil {
		return
	}
	a.c.Inc("search_started")
	a.search = newDiscovery(a, true)
	a.search.onDone = func() {
		// The whole fabric probed and no controller: answers were lost, or
		// the controller is not up yet. Search again later.
		a.c.Inc("search_exhausted")
		a.search = nil
		a.searchBackoff = min(max(2*a.searchBackoff, a.cfg.Search), 30*element.Second)
		a.env.After(a.searchBackoff, a.startSearch)
	}
	a.search.start()
}

// pathReply integrates a path graph and releases what waited for it.
func (a *Agent) pathReply(m *wire.DumbNetPathReply) {
	q := a.queries[m.QueryID]
	if q == nil || (q.dst != (wire.MAC{}) && q.dst != m.Dst) || m.Src != a.mac {
		a.c.Inc("drop_unmatched_reply")
		return
	}
	a.forget(q)
	a.c.Inc("path_replies")
	a.relocateBackoff = 0 // the controller answers on this path
	// The controller's version only grows and it answered after the query
	// left, when the cache already had q.version: a lower one in its
	// answer means a version it never issued got in (a patch or list
	// forged with its MAC). Its answer is the authority: without this, one
	// forged patch with a huge version would make every real patch stale
	// and keep the links it failed down for good.
	if m.Version < q.nbrVersion {
		a.c.Inc("neighbors_reset")
		a.neighbors, a.nbrVersion = nil, 0
	}
	var requery []wire.MAC
	if m.Version < q.version {
		a.c.Inc("version_reset")
		// Which links the forgery failed is unknown: start the cache
		// over from this answer and ask again for every destination in
		// use (their entries keep working meanwhile).
		a.cache = NewTopoCache()
		for _, dst := range a.table.dsts() {
			if dst != m.Dst {
				requery = append(requery, dst)
			}
		}
	}
	if m.Version < q.version {
		// The versions start over with the cache.
		a.upVer = 0
		clear(a.downVer)
	}
	a.cache.Merge(m)
	if m.Version < a.upVer {
		// Computed before a repair this host has applied since it asked:
		// it may leave the repaired link out. Ask again in the background.
		a.c.Inc("repair_requery")
		requery = append(requery, m.Dst)
	}
	for _, dst := range requery {
		a.hold(dst, netip.Addr{}, nil, nil)
	}
	a.expire(q)
	e, err := a.cache.fill(m.Dst, a.cfg.K)
	if err != nil {
		a.c.Add("drop_no_path", uint64(len(q.frames)+len(q.arps)))
		return
	}
	a.table.Put(m.Dst, e)
	if q.dstIP.IsValid() {
		a.ipToMAC[q.dstIP] = m.Dst
	}
	for _, h := range q.arps {
		a.arpReply(h.req, m.Dst)
	}
	for _, f := range q.frames {
		a.sendData(f.b, a.choose(e, f.b))
	}
}

// switchPort reports whether a notification's port can exist: a port is
// named by a one-byte tag.
func switchPort(p uint16) bool { return p >= 1 && p <= maxSwitchPort }

// linkPortsOK reports whether every link of a path reply or patch joins
// ports a tag can name. The controller never sends another; a forged
// message with the controller's MAC could, and the TopoCache keeps each
// switch's ports in a table as long as its highest port number: one reply
// of 1,000 links naming port 65,535 of new switches cost 1.5 GB, and a
// host port above 254 became a tag naming another port, or 0, the ID
// query (TestPathReplyPortsChecked).
func linkPortsOK(ls []wire.DumbNetLink) bool {
	for _, l := range ls {
		if !switchPort(l.APort) || !switchPort(l.BPort) {
			return false
		}
	}
	return true
}

// unknownSwitch reports whether a notification names a switch that the
// controller on this host does not know, with its view complete (no
// discovery run on). Every host's path graphs come from that view, which
// only grows, so no host routes over such a switch: it is forged, or
// cabled since, and the rescan its neighbour's report starts finds it.
// Other hosts cannot tell (their caches hold their path graphs only) and
// must flood on what they do not cache (§4.2), so they only bound their
// state (makeRoom).
func (a *Agent) unknownSwitch(sw uint64) bool {
	c := a.ctrl
	if c == nil || !c.ready || c.disc.running {
		return false
	}
	_, ok := c.g.idx[sw]
	return !ok
}

// makeRoom makes room for key k in m, a table of notification state bounded
// by n: a full one starts afresh, as the flow table does. Only forged
// notifications fill one, and what is forgotten costs little: a repeat
// taken for news is caught by the other tables or floods once more; a
// repair without downVer's version falls back on its guess (repaired).
func makeRoom[K comparable, V any](c *element.Counters, m map[K]V, k K, n int) {
	if len(m) < n {
		return
	}
	if _, ok := m[k]; ok {
		return
	}
	c.Inc("notify_state_forgotten")
	clear(m)
}

// portStatus handles a switch's port notification (§4.2 stage 1).
func (a *Agent) portStatus(m *wire.DumbNetPortStatus) {
	if a.unknownSwitch(m.SwitchID) {
		a.c.Inc("drop_unknown_switch")
		return
	}
	id := portID{m.SwitchID, m.Port}
	if !a.newAlarm(id, m.Seq, m.State) {
		a.c.Inc("notify_duplicate")
		return
	}
	a.c.Inc("notify_received")
	a.notifySeq++
	a.linkEvent(id, m.State, wire.DumbNetHostNotify{Origin: a.mac, Seq: a.notifySeq, SwitchID: m.SwitchID, Port: m.Port, State: m.State, SwitchSeq: m.Seq}, wire.MAC{})
}

// newAlarm reports whether alarm seq of port id (the switch's numbering,
// heard from the switch or through another host's flood) is newer than
// the last this host took for the port, modulo 2^32, and if so records
// it. The switch numbers every alarm, so a flooded copy that lags behind
// the switch's next alarm for the port is old news however it is
// routed: taken, it would undo the newer alarm (a repaired link failed
// again, until the controller refuted it).
func (a *Agent) newAlarm(id portID, seq uint32, st wire.PortState) bool {
	if last, ok := a.swSeq[id]; ok && int32(seq-last) <= 0 {
		return false
	}
	makeRoom(&a.c, a.swSeq, id, maxPortStates)
	a.swSeq[id] = seq
	if a.ctrl != nil && st == wire.PortUp && a.evState[id] == wire.PortUp {
		// A new alarm that says again what the last one said: the port
		// went down and back within the switch's suppression window.
		// (Through the flood too: a copy that comes first makes the
		// switch's own broadcast a duplicate.)
		a.ctrl.flapped(id.sw, id.port)
	}
	return true
}

// seqWindow remembers which of an origin's last 64 sequence numbers were
// seen: the flood reaches a host along several routes, so an origin's
// notifications can arrive out of order, and an older one is news unless
// it was seen (a port's state itself is deduplicated by linkEvent).
type seqWindow struct {
	top  uint32 // highest seen
	seen uint64 // bit i: top-i seen
}

// add records seq and reports whether it is new.
func (w *seqWindow) add(seq uint32) bool {
	d := int32(seq - w.top)
	switch {
	case d > 0:
		if d >= 64 {
			w.seen = 0
		} else {
			w.seen <<= uint(d)
		}
		w.top = seq
		w.seen |= 1
		return true
	case -d >= 64:
		return false // too old to tell: taken as seen
	}
	bit := uint64(1) << uint(-d)
	if w.seen&bit != 0 {
		return false
	}
	w.seen |= bit
	return true
}

// hostNotify handles another host's flooded notification.
func (a *Agent) hostNotify(m *wire.DumbNetHostNotify, from wire.MAC) {
	if a.unknownSwitch(m.SwitchID) {
		a.c.Inc("drop_unknown_switch")
		return
	}
	w := a.hostSeen[m.Origin]
	if w == nil {
		makeRoom(&a.c, a.hostSeen, m.Origin, maxOrigins)
		w = &seqWindow{top: m.Seq - 1}
		a.hostSeen[m.Origin] = w
	}
	if !w.add(m.Seq) {
		a.c.Inc("notify_duplicate")
		return
	}
	id := portID{m.SwitchID, m.Port}
	if m.SwitchSeq != 0 {
		// Ordered against every alarm of the port this host took, the
		// switch's broadcasts and other origins' floods alike.
		if last, ok := a.swSeq[id]; ok && m.SwitchSeq == last {
			a.c.Inc("notify_duplicate")
			return
		}
		if !a.newAlarm(id, m.SwitchSeq, m.State) {
			a.c.Inc("notify_stale")
			return
		}
	}
	a.c.Inc("host_notify_received")
	a.linkEvent(id, m.State, *m, from)
}

// linkEvent applies a port state change: the controller books it; a link
// going down is routed around at once from the PathTable's other paths or
// the backup path; and the news is flooded on unless this host already
// had it.
func (a *Agent) linkEvent(id portID, st wire.PortState, flood wire.DumbNetHostNotify, from wire.MAC) {
	if a.evState[id] == st {
		if a.ctrl != nil {
			// Old news to this host, but the controller may have booked
			// the other state since (an audit's probe), and a switch
			// reports once.
			a.ctrl.repeatedEvent(id.sw, id.port, st == wire.PortUp)
		}
		return
	}
	makeRoom(&a.c, a.evState, id, maxPortStates)
	prev := a.evState[id]
	a.evState[id] = st
	a.notifiedAt = a.env.Now()
	if from == (wire.MAC{}) {
		a.env.Log().Info("link event", "switch", fmt.Sprintf("%#x", id.sw), "port", id.port, "state", st, "told_by", "switch")
	} else {
		a.env.Log().Info("link event", "switch", fmt.Sprintf("%#x", id.sw), "port", id.port, "state", st, "told_by", from)
	}
	if a.ctrl != nil {
		a.ctrl.linkEvent(id.sw, id.port, st == wire.PortUp)
	}
	var crossed map[wire.MAC]bool
	if st == wire.PortDown {
		if _, ok := a.downVer[id]; !ok {
			makeRoom(&a.c, a.downVer, id, maxPortStates)
			a.downVer[id] = a.cache.version + 1
		}
		if a.cfg.FloodPT > 0 && a.cfg.FloodPT != FloodPTAll {
			crossed = a.crossing(id) // before the failover moves them
		}
		a.linkDown(id, prev == wire.PortUp)
	}
	if a.damped(id) {
		a.c.Inc("notify_damped")
		a.tellController(&flood, from)
		return
	}
	a.flood(&flood, from, id, crossed)
}

// crossing lists the PathTable destinations one of whose k paths crosses
// the link on port id (the backup path, unused while one of them works,
// does not count): with FloodPT capped, they are told first
// (floodSelect).
func (a *Agent) crossing(id portID) map[wire.MAC]bool {
	i, ok := a.cache.g.idx[id.sw]
	if !ok {
		return nil
	}
	k, ok := a.cache.g.linkOf(i, id.port)
	if !ok {
		return nil
	}
	out := map[wire.MAC]bool{}
	a.table.All(func(dst wire.MAC, e *PathEntry) bool {
		if slices.ContainsFunc(e.routes, func(r routeRec) bool { return r.uses(k) }) {
			out[dst] = true
		}
		return true
	})
	return out
}

// maxFlapChanges bounds Config.FlapChanges (the times kept per port).
const maxFlapChanges = 64

// flapRecord is a port's recent state changes as this host applied them.
type flapRecord struct {
	at    []element.Time // the last FlapChanges+1 changes, oldest first
	until element.Time   // the hold-down's end; zero: not held
}

// damped records a change of port id's state now and reports whether the
// port is held down (§4.2 leaves flapping beyond the switches' 1-s window
// to the hosts): it is from the change that is the FlapChanges+1th within
// FlapWindow until FlapHold has passed without a change; every change
// meanwhile starts the hold over. The hosts near the switch hear each
// change from it and damp alike; those beyond its broadcast learn the
// port's state from the controller's patches meanwhile (stage 2).
func (a *Agent) damped(id portID) bool {
	n := a.cfg.FlapChanges
	if n < 0 {
		return false
	}
	now := a.env.Now()
	r := a.flaps[id]
	if r == nil {
		if len(a.flaps) >= maxFlapStates {
			// As makeRoom does, with a smaller bound: only forged
			// notifications, each naming a new port, fill it, and a
			// flapping port forgotten is flooded for FlapChanges more
			// changes before it is held again.
			a.c.Inc("flap_state_forgotten")
			clear(a.flaps)
		}
		r = &flapRecord{at: make([]element.Time, 0, n+1)}
		a.flaps[id] = r
	}
	if len(r.at) == n+1 {
		r.at = append(r.at[:0], r.at[1:]...)
	}
	r.at = append(r.at, now)
	if r.until != 0 && now < r.until {
		r.until = now.AddSat(a.cfg.FlapHold)
		return true
	}
	if len(r.at) == n+1 && now-r.at[0] <= a.cfg.FlapWindow {
		a.c.Inc("flap_holddowns")
		a.env.Log().Info("link flapping: not flooded", "switch", fmt.Sprintf("%#x", id.sw), "port", id.port, "changes", n+1, "hold", a.cfg.FlapHold)
		r.until = now.AddSat(a.cfg.FlapHold)
		return true
	}
	r.until = 0
	return false
}

// linkDown fails over every PathTable entry that used the link. The
// cache records the failure even when it does not hold the link: a path
// graph the controller computed before it heard of the failure may list
// the link up, and Merge keeps it down. Forged notifications each name a
// new port, so that record is bounded as the other tables per switch
// port are (makeRoom).
func (a *Agent) linkDown(id portID, again bool) {
	makeRoom(&a.c, a.cache.downSince, id, maxPortStates)
	var k Link
	known := false
	if i, ok := a.cache.g.idx[id.sw]; ok {
		k, known = a.cache.g.linkOf(i, id.port)
		if pe := a.cache.g.peerOf(i, id.port); again && known && !pe.up {
			// Down, up and down again while held down: a repair this
			// host was not patched about came between; a stale repair
			// patch may be that one.
			a.cache.refailed[id] = true
			a.cache.refailed[portID{a.cache.g.ids[pe.sw], pe.port}] = true
		}
	}
	a.cache.SetLink(id.sw, id.port, false)
	if known {
		a.refresh(k)
	}
}

// refresh re-examines the PathTable after link k failed.
func (a *Agent) refresh(k Link) {
	for _, dst := range a.table.dsts() {
		e := a.table.Lookup(dst)
		changed, ok := e.failover(k)
		if !changed {
			continue
		}
		a.c.Inc("failovers")
		if ok && len(e.Paths) >= a.cfg.K {
			continue
		}
		// Refill from the TopoCache (detours included); if the cached
		// subgraph has no way left, ask the controller again.
		if ne, err := a.cache.fill(dst, a.cfg.K); err == nil {
			a.table.Put(dst, ne)
			continue
		}
		if !ok {
			a.table.Delete(dst)
			a.c.Inc("failover_requery")
			a.hold(dst, netip.Addr{}, nil, nil)
		}
	}
}

// flood sends a notification on (§4.2 stage 1), except where it came
// from: first to the flood neighbours the controller gave (the hosts of
// this switch, then of the neighbouring ones, peer to peer), then to the
// controller and to the hosts this agent has a path to (the hosts it
// talks to, whose paths are the ones it shares): every one, or with
// FloodPT capped, the first FloodPT of floodSelect's order. crossed are
// the destinations whose paths crossed the link on port id.
func (a *Agent) flood(m *wire.DumbNetHostNotify, from wire.MAC, id portID, crossed map[wire.MAC]bool) {
	sent := make(map[wire.MAC]bool, len(a.neighbors))
	skip := func(t wire.MAC) bool { return t == from || t == m.Origin || t == a.mac || sent[t] }
	for _, nb := range a.neighbors {
		if skip(nb.MAC) {
			continue
		}
		// Both routes: the failure announced may cut one of them.
		for _, tags := range [][]uint8{nb.Path, nb.Alt} {
			if len(tags) == 0 {
				continue
			}
			if f, err := a.controlFrame(nb.MAC, tags, m); err == nil {
				a.c.Inc("notify_flooded")
				a.sendNIC(f)
			}
		}
		sent[nb.MAC] = true
	}
	targets := make([]wire.MAC, 0, 1+min(a.table.Len(), max(a.cfg.FloodPT, 0)))
	if a.haveCtrl && a.ctrl == nil {
		targets = append(targets, a.ctrlMAC)
	}
	capped := a.cfg.FloodPT != FloodPTAll
	if capped {
		top, rest := a.floodSelect(id, crossed, skip, max(a.cfg.FloodPT, 0))
		a.c.Add("notify_capped", uint64(rest))
		targets = append(targets, top...)
	} else {
		for _, dst := range a.table.dsts() {
			if dst != a.ctrlMAC || a.ctrl != nil {
				targets = append(targets, dst)
			}
		}
		slices.SortFunc(targets, func(x, y wire.MAC) int { return slices.Compare(x[:], y[:]) })
	}
	for _, t := range targets {
		if skip(t) {
			continue
		}
		var tags []uint8
		if t == a.ctrlMAC && a.ctrl == nil {
			tags = a.ctrlTags()
		} else if e := a.table.Lookup(t); e != nil && len(e.Paths) > 0 {
			tags = e.Paths[0]
		} else {
			continue
		}
		f, err := a.controlFrame(t, tags, m)
		if err != nil {
			continue
		}
		a.c.Inc("notify_flooded")
		a.sendNIC(f)
	}
}

// floodSelect picks, for a capped flood about the link on port id, the n
// PathTable destinations to tell, in order: those whose paths crossed it
// (crossed: they route into it, and their replies likely do too), then
// those whose path graph holds it, then the others, each group in ring
// order from this host's MAC (so that the hosts' caps do not all land on
// the lowest MACs). The controller, destinations without a path and those
// skip refuses are left out; rest is how many eligible ones the cap left
// out. One pass over the table, the n smallest (tier, ring) keys kept in
// a max-heap: O(P log n) and n words per event, not a sort of all P
// destinations (20 ms and 10 MB per event at 65,536 of them, which a
// forged notification could ask for at will).
func (a *Agent) floodSelect(id portID, crossed map[wire.MAC]bool, skip func(wire.MAC) bool, n int) ([]wire.MAC, int) {
	self := macKey(a.mac)
	const ringMask = 1<<48 - 1
	h := make([]uint64, 0, n) // max-heap of keys: tier<<48 | ring
	eligible := 0
	a.table.All(func(dst wire.MAC, e *PathEntry) bool {
		if (dst == a.ctrlMAC && a.ctrl == nil) || len(e.Paths) == 0 || skip(dst) {
			return true
		}
		eligible++
		if n == 0 {
			return true
		}
		tier := uint64(2)
		if crossed[dst] {
			tier = 0
		} else if v := a.cache.views[dst]; v != nil && v.hasLink(id) {
			tier = 1
		}
		k := tier<<48 | (macKey(dst)-self)&ringMask
		if len(h) < n {
			h = append(h, k)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if h[p] >= h[i] {
					break
				}
				h[p], h[i] = h[i], h[p]
				i = p
			}
			return true
		}
		if k >= h[0] {
			return true
		}
		h[0] = k
		for i := 0; ; {
			l, r, m := 2*i+1, 2*i+2, i
			if l < len(h) && h[l] > h[m] {
				m = l
			}
			if r < len(h) && h[r] > h[m] {
				m = r
			}
			if m == i {
				break
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
		return true
	})
	slices.Sort(h)
	out := make([]wire.MAC, len(h))
	for i, k := range h {
		out[i] = keyMAC(((k&ringMask)+self-1)&ringMask + 1)
	}
	return out, eligible - len(h)
}

// ctrlTags is the path to the controller: the PathTable's when there is
// one (failed over already), else the announced one, which may cross the
// failed link.
func (a *Agent) ctrlTags() []uint8 {
	if e := a.table.Lookup(a.ctrlMAC); e != nil && len(e.Paths) > 0 {
		return e.Paths[0]
	}
	return a.ctrlPath
}

// tellController sends a notification on to the controller only (a
// damped port's, damped): the controller books every change and patches
// every host, so the hosts learn the port's state from stage 2.
func (a *Agent) tellController(m *wire.DumbNetHostNotify, from wire.MAC) {
	if a.ctrl != nil || !a.haveCtrl || a.ctrlMAC == from || a.ctrlMAC == m.Origin {
		return
	}
	if f, err := a.controlFrame(a.ctrlMAC, a.ctrlTags(), m); err == nil {
		a.c.Inc("notify_flooded")
		a.sendNIC(f)
	}
}

// topoPatch applies the controller's patch (§4.2 stage 2).
func (a *Agent) topoPatch(m *wire.DumbNetTopoPatch) {
	if m.Version <= a.cache.version && a.ctrl == nil {
		a.c.Inc("patch_stale")
		// Its link states are out of date, but a repair it tells of still
		// makes the path graphs computed without the link suspect (two
		// repairs' patches can arrive in either order), and a repair
		// newer than the failure this host knows of the link ends that
		// failure: the views that held the link down would otherwise
		// keep it down until a newer path graph came.
		revived := false
		for _, l := range m.Links {
			if l.Flags&wire.LinkUp == 0 {
				continue
			}
			ends := []portID{{l.A, l.APort}, {l.B, l.BPort}}
			a.repaired(ends, m.Version)
			if !a.cache.lateRepair(ends[0], ends[1], m.Version) {
				continue
			}
			a.c.Inc("patch_stale_repaired")
			revived = true
			for _, id := range ends {
				if a.evState[id] == wire.PortDown {
					a.evState[id] = wire.PortUp
				}
			}
		}
		if revived {
			a.refill()
			a.rearmQueries()
		}
		return
	}
	a.cache.version = max(a.cache.version, m.Version)
	a.c.Inc("patches_applied")
	a.env.Log().Info("topology patch applied", "version", m.Version, "links", len(m.Links))
	a.patchedAt = a.env.Now()
	repaired := false
	for _, l := range m.Links {
		up := l.Flags&wire.LinkUp != 0
		ends := []portID{{l.A, l.APort}, {l.B, l.BPort}}
		if up {
			// The controller says it works: a down notification this host
			// saw for it (refuted, or long repaired) must not make the
			// next real one look like a repeat.
			for _, id := range ends {
				if a.evState[id] == wire.PortDown {
					a.evState[id] = wire.PortUp
				}
			}
			a.repaired(ends, m.Version)
			repaired = true
		} else {
			for _, id := range ends {
				if _, ok := a.downVer[id]; !ok {
					makeRoom(&a.c, a.downVer, id, maxPortStates)
					a.downVer[id] = m.Version - 1
				}
				// Likewise, an up notification this host saw (before a
				// failure it never heard of, the controller's audit found
				// since) must not make the next real one look like a repeat.
				if a.evState[id] == wire.PortUp {
					a.evState[id] = wire.PortDown
				}
			}
		}
		var k Link
		known := false
		if i, ok := a.cache.g.idx[l.A]; ok {
			k, known = a.cache.g.linkOf(i, l.APort)
		}
		if !known && up {
			// A failure the cache recorded without holding the link is over.
			a.cache.forgetFailure(ends...)
		}
		if !known && !up {
			makeRoom(&a.c, a.cache.downSince, ends[0], maxPortStates)
			a.cache.SetLink(l.A, l.APort, false)
		}
		if !known || !a.cache.SetLink(l.A, l.APort, up) {
			continue
		}
		if up {
			a.refill()
			continue
		}
		a.refresh(k)
	}
	if repaired {
		a.rearmQueries()
	}
}

// refill recomputes every PathTable entry after a link was repaired, so
// that flows can use it again.
func (a *Agent) refill() {
	for _, dst := range a.table.dsts() {
		if e, err := a.cache.fill(dst, a.cfg.K); err == nil {
			a.table.Put(dst, e)
		}
	}
}

// repaired handles a patch of version ver saying the link with these
// ends is up. The controller left the link out of the path graphs it
// computed while the link was down or under its check (from the version
// before the down patch on), so an entry recomputed from one of those
// could never use the link again (flows stayed on detours through other
// pods for good after a repair): the host asks for those destinations
// again, in the background (the entries keep working). A query still
// out is asked again when its answer comes (upVer, pathReply).
//
// A host that never got the patch booking the link down (cut off from the
// controller then, or a report refuted or withdrawn before it was booked)
// cannot tell which graphs were computed without the link: it asks again
// for every one older than the repair that lacks the link but holds one of
// its switches (a graph that could use the link holds its ends).
func (a *Agent) repaired(ends []portID, ver uint64) {
	a.upVer = max(a.upVer, ver)
	since, ok := uint64(0), false
	for _, id := range ends {
		if d, down := a.downVer[id]; down && d < ver {
			if !ok || d < since {
				since, ok = d, true
			}
			delete(a.downVer, id)
		}
	}
	for _, dst := range a.table.dsts() {
		v := a.cache.views[dst]
		if v == nil || v.version >= ver || a.byDst[dst] != nil {
			continue
		}
		suspect := ok && v.version >= since
		if !ok {
			suspect = !v.hasLink(ends[0]) && (v.hasSwitch(ends[0].sw) || v.hasSwitch(ends[1].sw))
		}
		if suspect {
			a.c.Inc("repair_requery")
			a.hold(dst, netip.Addr{}, nil, nil)
		}
	}
}

// rearmQueries sends every query that has already been retried again
// now, its backoff started over: a query the controller could not answer
// (no path then) would otherwise wait out its doubled retry timer, up to
// seconds after the repair that gives it a path (a leaf cut off and
// reconnected stayed dark 2.1 s after the repair in the emulator).
func (a *Agent) rearmQueries() {
	for _, id := range slices.Sorted(maps.Keys(a.queries)) {
		if q := a.queries[id]; q != nil && q.tries > 0 && a.haveCtrl {
			a.c.Inc("path_query_rearmed")
			q.tries = 0
			a.sendQuery(q)
		}
	}
}

// fnv is FNV-1a, seeded: deterministic under the engine's seed, unlike
// hash/maphash.
func fnv(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= 0x100000001b3
	}
	return h
}
