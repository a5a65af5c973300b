package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"unsafe"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// Errors returned by the engine's setup calls, wrapped with context.
var (
	ErrBadNode    = errors.New("no such node")
	ErrPlaced     = errors.New("node already has an element")
	ErrStarted    = errors.New("simulation already started")
	ErrBadOption  = errors.New("bad option")
	ErrNotAHost   = errors.New("not a host")
	ErrNoSuchLink = errors.New("no such link")
)

// DefaultQueueBytes is the output-queue limit of a link direction when
// neither Options nor the link say otherwise: 512 KiB, a shallow-buffered
// data-center switch port (a few hundred full frames).
const DefaultQueueBytes = 512 << 10

// Framing is the per-frame overhead the link adds on the wire. Frames given
// to Env.Send are Ethernet frames without preamble and FCS (as a capture shows
// them); the engine pads them to MinFrame, adds FCS, and occupies the link for
// Preamble + frame + FCS bytes plus an idle gap of IFG bytes.
type Framing struct {
	Preamble int // preamble + start-of-frame delimiter: 8 on Ethernet
	FCS      int // frame check sequence: 4
	IFG      int // inter-frame gap: 12
	MinFrame int // shortest frame before FCS: 60
}

// MaxFraming bounds a Framing's MinFrame and the sum of its overheads
// (Preamble + FCS + IFG), in bytes: far above any real link's, and low
// enough that no frame's length on the wire overflows.
const MaxFraming = 1 << 20

// Ethernet is IEEE 802.3 framing, the default.
var Ethernet = Framing{Preamble: 8, FCS: 4, IFG: 12, MinFrame: 60}

// Timing is a node's forwarding pipeline as the engine applies it.
type Timing struct {
	// Latency is the processing latency: Receive is called this long after
	// the frame (or, cut-through, its first CutThrough bytes) has arrived.
	Latency element.Time
	// CutThrough, when positive, makes the node cut-through: Receive is
	// called once this many bytes of the frame have arrived, and a frame
	// sent from that call starts at once but never finishes before the
	// input frame's tail has arrived (plus Latency). Zero is
	// store-and-forward: Receive is called when the whole frame is in.
	CutThrough int
}

// CutThrougher is implemented by elements that forward cut-through: it
// returns the number of bytes of a frame the element needs to decide its
// output port (6 for an Axon, whose next hop is in the sixth byte). The
// engine uses it unless SetTiming set the node's timing explicitly.
type CutThrougher interface {
	CutThrough() (decideBytes int)
}

// Options configures a simulation.
type Options struct {
	// Seed seeds every element's Rand and every fault. The same seed, graph
	// and elements give the same run, bit for bit.
	Seed uint64
	// QueueBytes is the default output-queue limit per link direction;
	// 0 means DefaultQueueBytes.
	QueueBytes int
	// Framing is the wire overhead; nil means Ethernet.
	Framing *Framing
	// Log receives element logs; nil discards them.
	Log *slog.Logger
	// Trace says how much of each delivered frame the trace hash covers.
	// The zero value hashes every byte.
	Trace TraceMode
}

// TraceMode says how much of each delivered frame goes into the trace hash.
type TraceMode uint8

const (
	// TraceFull hashes every byte of every delivered frame (the default):
	// any difference between two runs shows.
	TraceFull TraceMode = iota
	// TraceHeaders hashes the first TraceHeaderBytes bytes and the length
	// of each frame: every header a scheme or the host stack reads, at a
	// fraction of the cost for full-size frames. A payload-only difference
	// (a bit flipped by a corruption fault deep in a payload) can go
	// unnoticed.
	TraceHeaders
	// TraceOff keeps no hash (TraceHash returns 0).
	TraceOff
)

// TraceHeaderBytes is how much of a frame TraceHeaders hashes: Ethernet,
// two VLAN tags or an Axon/DumbNet header, IPv4 with options, TCP.
const TraceHeaderBytes = 128

// Sim is a discrete-event simulation of a topology whose nodes run
// elements. It is single-threaded: calls into elements never overlap.
type Sim struct {
	g    *topo.Graph
	opts Options
	// captured lists the pipes whose sending port has had a capture, to
	// flush at the end of every run.
	captured []int32
	framing  Framing
	log      *slog.Logger

	now     element.Time
	seq     uint64
	events  calendar
	nevents uint64
	started bool
	// stopped is set when the last Run returned because of Stop.
	stopped bool
	// stopReq is a pending Stop: the only field another goroutine may
	// touch (Stop), read by the loop between events.
	stopReq atomic.Bool
	// holdRoot is set while the earliest event is being processed and
	// has not been replaced yet.
	holdRoot bool
	running  bool

	nodes []node
	pipes []pipe
	// linkUp is the administrative state of each graph link.
	linkUp []bool

	timers    []timer
	freeTimer []int32

	// rx describes the frame whose Receive call is in progress, so that
	// Send can apply cut-through timing and CRC poisoning to the frames the
	// element forwards from it.
	rx rxContext

	hash traceHash
	pool [][]byte
	err  error
}

type rxContext struct {
	active   bool
	ct       bool
	tail     element.Time // input tail arrival plus latency
	poisoned bool
	// src is 1 + the pipe the frame came on, srcTail when its last byte
	// arrives: a frame forwarded cut through is truncated if that link
	// fails before then.
	src     int32
	srcTail element.Time
	// buf is the received frame when it is a pooled buffer, which the
	// engine recycles when Receive returns unless the element handed it
	// back with Send (forwarding it in place): it is queued then.
	buf []byte
	// handed is buf once the element has sent it: a second Send of it
	// sends a copy.
	handed []byte
}

type node struct {
	name   string
	elem   element.Element
	env    *env
	ports  []port
	timing Timing
	// timingSet records an explicit SetTiming, which overrides the
	// element's CutThrougher.
	timingSet bool
	up        bool
	// stack is the internal stack node of a host with an agent, or -1.
	stack int32
	// badPort counts Sends on ports the node does not have.
	badPort uint64
}

type port struct {
	out     int32 // pipe carrying this port's transmissions, or -1
	stats   PortStats
	capture PacketWriter
	mac     [6]byte
	local   bool
}

type timer struct {
	fn   func()
	node int32 // -1 for engine actions (At)
	gen  uint32
}

// New prepares a simulation of g. Place elements on its nodes, then Run.
func New(g *topo.Graph, opts Options) (*Sim, error) {
	if opts.QueueBytes < 0 {
		return nil, fmt.Errorf("sim: queue bytes %d: %w", opts.QueueBytes, ErrBadOption)
	}
	if opts.QueueBytes == 0 {
		opts.QueueBytes = DefaultQueueBytes
	}
	fr := Ethernet
	if opts.Framing != nil {
		fr = *opts.Framing
		if fr.Preamble < 0 || fr.FCS < 0 || fr.IFG < 0 || fr.MinFrame < 0 {
			return nil, fmt.Errorf("sim: framing %+v: %w: negative", fr, ErrBadOption)
		}
		// Bounded so that a frame's length on the wire, with its gap,
		// cannot overflow an int (a negative length ran time backwards).
		if fr.Preamble > MaxFraming || fr.FCS > MaxFraming || fr.IFG > MaxFraming || fr.MinFrame > MaxFraming ||
			fr.Preamble+fr.FCS+fr.IFG > MaxFraming {
			return nil, fmt.Errorf("sim: framing %+v: %w: overheads over %d bytes", fr, ErrBadOption, MaxFraming)
		}
	}
	if opts.Trace > TraceOff {
		return nil, fmt.Errorf("sim: trace mode %d: %w", opts.Trace, ErrBadOption)
	}
	s := &Sim{g: g, opts: opts, framing: fr}
	if opts.Log == nil {
		s.log = slog.New(slog.DiscardHandler)
	} else {
		// Every record carries the virtual time: element logs are about
		// the simulation, not the wall clock.
		s.log = slog.New(&timeHandler{h: opts.Log.Handler(), s: s})
	}
	s.nodes = make([]node, g.NumNodes())
	for i := range s.nodes {
		n := g.Node(topo.NodeID(i))
		nd := &s.nodes[i]
		nd.name = n.Name
		nd.up = true
		nd.stack = -1
		nd.ports = make([]port, n.Ports)
		for p := range nd.ports {
			nd.ports[p].out = -1
			nd.ports[p].mac = topo.PortMAC(topo.NodeID(i), element.Port(p+1))
		}
	}
	if 2*g.NumLinks()+2*g.NumNodes() > maxIndex {
		return nil, fmt.Errorf("sim: %d links: %w: too many for one simulation", g.NumLinks(), ErrBadOption)
	}
	s.pipes = make([]pipe, 2*g.NumLinks(), 2*g.NumLinks()+8)
	s.linkUp = make([]bool, g.NumLinks())
	for l := range g.NumLinks() {
		lk := g.Link(topo.LinkID(l))
		s.linkUp[l] = true
		s.pipes[2*l].init(s, int32(lk.A.Node), lk.A.Port, int32(lk.B.Node), lk.B.Port, lk.Rate, lk.Delay, opts.QueueBytes, 2*l)
		s.pipes[2*l+1].init(s, int32(lk.B.Node), lk.B.Port, int32(lk.A.Node), lk.A.Port, lk.Rate, lk.Delay, opts.QueueBytes, 2*l+1)
		s.nodes[lk.A.Node].ports[lk.A.Port-1].out = int32(2 * l)
		s.nodes[lk.B.Node].ports[lk.B.Port-1].out = int32(2*l + 1)
	}
	return s, nil
}

// Graph returns the simulated topology.
func (s *Sim) Graph() *topo.Graph { return s.g }

// Now returns the current virtual time.
func (s *Sim) Now() element.Time { return s.now }

// Events returns the number of events processed so far.
func (s *Sim) Events() uint64 { return s.nevents }

// TraceHash returns the running hash of every event delivered so far:
// frames handed to elements (time, node, port, bytes) and link changes.
// Equal hashes mean equal runs.
func (s *Sim) TraceHash() uint64 { return uint64(s.hash) }

// Err returns the first error the engine met while running (a capture that
// failed to write, Run called from inside an event). The run itself
// continues.
func (s *Sim) Err() error { return s.err }

func (s *Sim) node(n topo.NodeID) (*node, error) {
	if n < 0 || int(n) >= s.g.NumNodes() {
		return nil, fmt.Errorf("sim: node %d: %w", n, ErrBadNode)
	}
	return &s.nodes[n], nil
}

// Place runs e on node n, attached with the node's ports 1..N as numbered in
// the topology. Call it before the first Run.
func (s *Sim) Place(n topo.NodeID, e element.Element) error {
	if s.started {
		return fmt.Errorf("sim: place: %w", ErrStarted)
	}
	nd, err := s.node(n)
	if err != nil {
		return err
	}
	if nd.elem != nil {
		return fmt.Errorf("sim: place on %q: %w", nd.name, ErrPlaced)
	}
	if e == nil {
		return fmt.Errorf("sim: place on %q: %w: nil element", nd.name, ErrBadOption)
	}
	nd.elem = e
	return nil
}

// PlaceHost runs a host: stack is the host's own stack (its port 1 is the
// NIC). With a nil agent the stack is cabled straight to the host's ports.
// With an agent (a SPAIN driver, a DumbNet agent), the agent gets the host's
// NICs as ports 1..N plus port N+1, marked Local, joined to the stack's port
// 1 by an internal link with zero delay and unlimited rate, as
// scheme.Fabric describes. The order of the calls does not matter: the
// first Run numbers the stacks in the order of their hosts.
func (s *Sim) PlaceHost(n topo.NodeID, agent, stack element.Element) error {
	if s.started {
		return fmt.Errorf("sim: place host: %w", ErrStarted)
	}
	nd, err := s.node(n)
	if err != nil {
		return err
	}
	if s.g.Node(n).Kind != topo.Host {
		return fmt.Errorf("sim: place host on %q: %w", nd.name, ErrNotAHost)
	}
	if agent == nil {
		return s.Place(n, stack)
	}
	if stack == nil {
		return fmt.Errorf("sim: place host on %q: %w: nil stack", nd.name, ErrBadOption)
	}
	if err := s.Place(n, agent); err != nil {
		return err
	}
	mac, _, err := s.g.HostAddr(n)
	if err != nil {
		return fmt.Errorf("sim: place host: %w", err)
	}
	// The stack is an extra node behind the graph's nodes; its port 1 faces
	// the agent's Local port N+1.
	si := int32(len(s.nodes))
	s.nodes = append(s.nodes, node{
		name: nd.name + "/stack", elem: stack, up: true, stack: -1,
		ports: []port{{out: -1, mac: mac}},
	})
	nd = &s.nodes[n]
	nd.stack = si
	lp := element.Port(len(nd.ports) + 1)
	nd.ports = append(nd.ports, port{out: -1, mac: mac, local: true})
	pi := int32(len(s.pipes))
	s.pipes = append(s.pipes, pipe{}, pipe{})
	s.pipes[pi].init(s, int32(n), lp, si, 1, 0, 0, math.MaxInt, int(pi))
	s.pipes[pi+1].init(s, si, 1, int32(n), lp, 0, 0, math.MaxInt, int(pi+1))
	nd.ports[lp-1].out = pi
	s.nodes[si].ports[0].out = pi + 1
	return nil
}

// SetTiming sets node n's processing latency and cut-through mode,
// overriding what its element reports through CutThrougher.
func (s *Sim) SetTiming(n topo.NodeID, t Timing) error {
	nd, err := s.node(n)
	if err != nil {
		return err
	}
	if s.started {
		return fmt.Errorf("sim: timing of %q: %w", nd.name, ErrStarted)
	}
	if t.Latency < 0 || t.CutThrough < 0 {
		return fmt.Errorf("sim: timing of %q: %w: %+v", nd.name, ErrBadOption, t)
	}
	nd.timing = t
	nd.timingSet = true
	return nil
}

// SetQueue sets the output-queue limit, in bytes, of both directions of
// link l.
func (s *Sim) SetQueue(l topo.LinkID, bytes int) error {
	if l < 0 || int(l) >= s.g.NumLinks() {
		return fmt.Errorf("sim: link %d: %w", l, ErrNoSuchLink)
	}
	if bytes <= 0 {
		return fmt.Errorf("sim: link %d queue %d: %w", l, bytes, ErrBadOption)
	}
	s.pipes[2*l].limit = bytes
	s.pipes[2*l+1].limit = bytes
	return nil
}

// SetLinkParams changes both directions of link l to rate (bits per
// second) and one-way delay, overriding the topology's values. Call it
// before the first Run.
func (s *Sim) SetLinkParams(l topo.LinkID, rate int64, delay element.Time) error {
	if l < 0 || int(l) >= s.g.NumLinks() {
		return fmt.Errorf("sim: link %d: %w", l, ErrNoSuchLink)
	}
	if s.started {
		return fmt.Errorf("sim: link %d: %w", l, ErrStarted)
	}
	if rate <= 0 || delay < 0 {
		return fmt.Errorf("sim: link %d rate %d delay %v: %w", l, rate, delay, ErrBadOption)
	}
	for _, pp := range []*pipe{&s.pipes[2*l], &s.pipes[2*l+1]} {
		pp.setRate(rate)
		pp.delay = delay
	}
	return nil
}

// LinkConfig is what a link is set to: rate (bits per second), one-way
// delay, queue limit in bytes and fault, the same both ways.
type LinkConfig struct {
	Rate  int64
	Delay element.Time
	Queue int
	Fault Fault
}

// LinkConfig returns link l's settings (its first direction's: the
// setters change both alike).
func (s *Sim) LinkConfig(l topo.LinkID) (LinkConfig, error) {
	if l < 0 || int(l) >= s.g.NumLinks() {
		return LinkConfig{}, fmt.Errorf("sim: link %d: %w", l, ErrNoSuchLink)
	}
	pp := &s.pipes[2*l]
	return LinkConfig{Rate: pp.rate, Delay: pp.delay, Queue: pp.limit, Fault: pp.fault}, nil
}

// Element returns the element placed on node n, or nil.
func (s *Sim) Element(n topo.NodeID) element.Element {
	if n < 0 || int(n) >= s.g.NumNodes() {
		return nil
	}
	return s.nodes[n].elem
}

// Stack returns the stack element of a host placed with an agent (nil
// otherwise).
func (s *Sim) Stack(n topo.NodeID) element.Element {
	if n < 0 || int(n) >= s.g.NumNodes() || s.nodes[n].stack < 0 {
		return nil
	}
	return s.nodes[s.nodes[n].stack].elem
}

// PortStats returns the counters of port p of node n (p may be a host
// agent's Local port). ok is false for a port the node does not have.
func (s *Sim) PortStats(n topo.NodeID, p element.Port) (st PortStats, ok bool) {
	if n < 0 || int(n) >= s.g.NumNodes() {
		return st, false
	}
	nd := &s.nodes[n]
	if p < 1 || int(p) > len(nd.ports) {
		return st, false
	}
	return nd.ports[p-1].stats, true
}

// StackPortStats returns the counters of the stack's own port (its port
// 1, facing the agent's Local port) of a host placed with an agent. Frames
// the stack sends while the host is down, and frames that reach it then,
// are counted there (node_down) and nowhere else. ok is false for a node
// without such a stack.
func (s *Sim) StackPortStats(n topo.NodeID) (st PortStats, ok bool) {
	if n < 0 || int(n) >= s.g.NumNodes() || s.nodes[n].stack < 0 {
		return st, false
	}
	return s.nodes[s.nodes[n].stack].ports[0].stats, true
}

// BadPortSends returns how many frames node n (or, on a host with an
// agent, its stack) sent on ports it does not have; they were dropped.
func (s *Sim) BadPortSends(n topo.NodeID) uint64 {
	if n < 0 || int(n) >= s.g.NumNodes() {
		return 0
	}
	b := s.nodes[n].badPort
	if si := s.nodes[n].stack; si >= 0 {
		b += s.nodes[si].badPort
	}
	return b
}

// start attaches every element, in node order, so that the order of Place
// calls does not matter.
func (s *Sim) start() {
	s.started = true
	s.orderStacks()
	for i := range s.nodes {
		nd := &s.nodes[i]
		if nd.elem == nil {
			continue
		}
		if !nd.timingSet {
			if c, ok := nd.elem.(CutThrougher); ok {
				if d := c.CutThrough(); d > 0 {
					nd.timing.CutThrough = d
				}
			}
		}
		nd.env = &env{s: s, n: int32(i), log: s.log.With("node", nd.name),
			rng: rand.New(rand.NewPCG(s.opts.Seed, splitmix(uint64(i)+1)))}
		infos := make([]element.PortInfo, len(nd.ports))
		for p := range nd.ports {
			pt := &nd.ports[p]
			infos[p] = element.PortInfo{Port: element.Port(p + 1), Name: fmt.Sprintf("%s:%d", nd.name, p+1), MAC: pt.mac, Local: pt.local}
			if pt.out >= 0 {
				pp := &s.pipes[pt.out]
				infos[p].Rate = pp.rate
				infos[p].Up = pp.up
			}
		}
		// A stack behind an agent reaches it over an internal link
		// without a rate; its NIC is the host's first port, whose rate
		// it needs to pace itself as a host on that cable would
		// (docs/host.md, transmit-queue backpressure).
		if len(nd.ports) == 1 && nd.ports[0].out >= 0 {
			if a := s.pipes[nd.ports[0].out].to; s.nodes[a].stack == int32(i) && len(s.nodes[a].ports) > 0 && s.nodes[a].ports[0].out >= 0 {
				infos[0].Rate = s.pipes[s.nodes[a].ports[0].out].rate
			}
		}
		nd.elem.Attach(nd.env, infos)
	}
}

// orderStacks renumbers the stack nodes of hosts with agents, and the
// internal pipes joining them, in the order of their hosts: PlaceHost
// appends them in call order, and a node's index seeds its random source,
// fixes when it is attached and names it in the trace hash. Placed in node
// order (as the scenario runner does), nothing moves.
func (s *Sim) orderStacks() {
	base, pbase := int32(s.g.NumNodes()), int32(2*s.g.NumLinks())
	nodeTo := make([]int32, len(s.nodes))
	for i := range nodeTo {
		nodeTo[i] = int32(i)
	}
	next, moved := base, false
	for n := range base {
		if si := s.nodes[n].stack; si >= 0 {
			nodeTo[si] = next
			moved = moved || si != next
			next++
		}
	}
	if !moved {
		return
	}
	// Stack k (k-th placed) owns pipes pbase+2k (agent to stack) and
	// pbase+2k+1; they move with it.
	pipeTo := make([]int32, len(s.pipes))
	for i := range pipeTo {
		pipeTo[i] = int32(i)
	}
	for si := base; si < int32(len(s.nodes)); si++ {
		from, to := pbase+2*(si-base), pbase+2*(nodeTo[si]-base)
		pipeTo[from], pipeTo[from+1] = to, to+1
	}
	nodes := make([]node, len(s.nodes))
	for i := range s.nodes {
		nd := s.nodes[i]
		if nd.stack >= 0 {
			nd.stack = nodeTo[nd.stack]
		}
		for p := range nd.ports {
			if o := nd.ports[p].out; o >= 0 {
				nd.ports[p].out = pipeTo[o]
			}
		}
		nodes[nodeTo[i]] = nd
	}
	pipes := make([]pipe, len(s.pipes))
	for i := range s.pipes {
		pp := s.pipes[i]
		pp.from, pp.to, pp.idx = nodeTo[pp.from], nodeTo[pp.to], pipeTo[i]
		pipes[pipeTo[i]] = pp
	}
	s.nodes, s.pipes = nodes, pipes
	for i, c := range s.captured {
		s.captured[i] = pipeTo[c]
	}
}

// Run processes events up to and including time until, then sets the clock
// to until. It may be called repeatedly with increasing times. A Stop ends
// it early, between two events.
func (s *Sim) Run(until element.Time) { s.run(until, true) }

// RunAll processes events until none is left or Stop is called. The clock
// stays at the last event's time.
func (s *Sim) RunAll() { s.run(math.MaxInt64, false) }

func (s *Sim) run(until element.Time, advance bool) {
	if s.running {
		// Run from inside an event (an At action, an element) would take
		// the event being processed off the list: refuse, and say so.
		if s.err == nil {
			s.err = fmt.Errorf("sim: Run called from inside an event: %w", ErrStarted)
		}
		return
	}
	s.running = true
	defer func() {
		s.running = false
		// Frames whose transmission started by now are in the captures
		// when the run returns, though no event of their pipe came since.
		for _, i := range s.captured {
			s.pipes[i].capture(s.now)
		}
	}()
	if !s.started {
		s.start()
	}
	s.stopped = false
	// One atomic load per event (Stop): a plain MOVL on amd64, LDAR on
	// arm64; nothing measurable (docs/sim.md §6).
	for s.events.len() > 0 && !s.stopReq.Load() {
		ev := *s.events.peek()
		if ev.t > until {
			break
		}
		s.now = ev.t
		s.nevents++
		// The event stays first in the list while it runs: nothing
		// scheduled now can precede it, and the first event it schedules
		// takes its place (replaceTop) instead of a pop and a push.
		s.holdRoot = true
		switch ev.kind() {
		case evPipe:
			s.deliver(ev)
		case evTimer:
			s.fire(ev)
		}
		if s.holdRoot {
			s.holdRoot = false
			s.events.pop()
		}
	}
	// A Stop that came while this Run ran (from an event, or from another
	// goroutine until now) ends it: taken here, so that it stops exactly
	// one Run. One that comes later stops the next.
	if s.stopReq.Swap(false) {
		s.stopped = true
	}
	if advance && !s.stopped && until > s.now {
		s.now = until
	}
}

// Stop makes Run (or RunAll) return at the next event boundary: after the
// event being processed, if any, and before the next one, with the clock
// at the last event processed (Run does not advance it to until). Every
// event is processed whole, so a stopped run is the same, bit for bit, as
// any other run up to the event it stopped after, and a later Run goes on
// from there as if it had not stopped.
//
// Stop is safe to call from any goroutine (a signal handler's, while Run
// runs on another), unlike every other method. A Stop while no Run is in
// progress makes the next Run return before its first event. Each Stop
// ends one Run: Stopped says whether the last one ended so.
func (s *Sim) Stop() { s.stopReq.Store(true) }

// Stopped reports whether the last Run returned because of Stop.
func (s *Sim) Stopped() bool { return s.stopped }

// Pending reports the number of queued events.
func (s *Sim) Pending() int { return s.events.len() }

func (s *Sim) schedule(t element.Time, kind eventKind, idx int32, gen uint32) {
	s.seq++
	e := event{t: t, seq: s.seq, ref: mkRef(kind, idx, gen)}
	if s.holdRoot {
		s.holdRoot = false
		s.events.replaceTop(e)
		return
	}
	s.events.push(e)
}

// At runs f at time t (or now, if t has passed), from the engine's own
// context: f may call into elements (start applications, fail links).
// The returned cancel stops it.
func (s *Sim) At(t element.Time, f func()) (cancel func()) {
	if t < s.now {
		t = s.now
	}
	return s.after(-1, t, f)
}

func (s *Sim) after(n int32, t element.Time, f func()) func() {
	var i int32
	if k := len(s.freeTimer); k > 0 {
		i = s.freeTimer[k-1]
		s.freeTimer = s.freeTimer[:k-1]
	} else {
		if len(s.timers) >= maxIndex {
			// A billion pending timers: the element is leaking them.
			// Refuse rather than corrupt the event list.
			if s.err == nil {
				s.err = fmt.Errorf("sim: more than %d pending timers: %w", maxIndex, ErrBadOption)
			}
			return func() {}
		}
		i = int32(len(s.timers))
		s.timers = append(s.timers, timer{})
	}
	tm := &s.timers[i]
	tm.fn = f
	tm.node = n
	gen := tm.gen
	s.schedule(t, evTimer, i, gen)
	// freeSlot bumps the generation: a slot whose generation still
	// matches is pending (its func nil or not), and only then freed.
	return func() {
		if s.timers[i].gen == gen {
			s.freeSlot(i)
		}
	}
}

func (s *Sim) freeSlot(i int32) {
	tm := &s.timers[i]
	tm.fn = nil
	tm.gen++
	s.freeTimer = append(s.freeTimer, i)
}

func (s *Sim) fire(ev event) {
	tm := &s.timers[ev.idx()]
	if tm.gen != ev.gen() {
		return // cancelled: the slot was freed then
	}
	f, n := tm.fn, tm.node
	s.freeSlot(ev.idx())
	if f == nil {
		// Armed with a nil func: nothing to do, but the slot is free
		// again (it stayed taken for good).
		return
	}
	if n >= 0 && s.opts.Trace != TraceOff {
		s.hash.timer(s.now, n)
	}
	f()
}

// SetLink brings graph link l down or up now. Frames queued or in flight on
// a failing link are lost and counted (link_down, on the sending port);
// both ends get LinkChange. A link whose end node is down stays down until
// the node is repaired.
func (s *Sim) SetLink(l topo.LinkID, up bool) error {
	if l < 0 || int(l) >= s.g.NumLinks() {
		return fmt.Errorf("sim: link %d: %w", l, ErrNoSuchLink)
	}
	if !s.started {
		s.start()
	}
	s.linkUp[l] = up
	s.refreshLink(l)
	return nil
}

// SetNode fails (up == false) or repairs node n now. A failed node's links
// all go down (both ends get LinkChange), frames it sends or that reach it
// are dropped and counted (node_down). The element keeps its state and its
// timers keep firing, isolated: a repair reconnects it rather than rebooting
// it.
func (s *Sim) SetNode(n topo.NodeID, up bool) error {
	nd, err := s.node(n)
	if err != nil {
		return err
	}
	if !s.started {
		s.start()
	}
	if nd.up == up {
		return nil
	}
	nd.up = up
	if nd.stack >= 0 {
		s.nodes[nd.stack].up = up
	}
	for _, l := range s.g.Ports(n) {
		if l != topo.NoLink {
			s.refreshLink(l)
		}
	}
	return nil
}

// LinkUp reports whether graph link l is carrying traffic now.
func (s *Sim) LinkUp(l topo.LinkID) bool {
	if l < 0 || int(l) >= s.g.NumLinks() {
		return false
	}
	return s.pipes[2*l].up
}

func (s *Sim) refreshLink(l topo.LinkID) {
	a, b := &s.pipes[2*l], &s.pipes[2*l+1]
	up := s.linkUp[l] && s.nodes[a.from].up && s.nodes[a.to].up
	if a.up == up {
		return
	}
	a.setUp(up)
	b.setUp(up)
	// Tell both ends, A first; a failed node is told too, so that it
	// forgets what it learned over the link.
	s.linkChange(a.from, a.fromPort, up)
	s.linkChange(b.from, b.fromPort, up)
}

func (s *Sim) linkChange(n int32, p element.Port, up bool) {
	// TraceOff keeps no hash at all: TraceHash stays 0.
	if s.opts.Trace != TraceOff {
		s.hash.linkChange(s.now, n, p, up)
	}
	if e := s.nodes[n].elem; e != nil {
		e.LinkChange(p, up)
	}
}

// alloc returns a frame buffer of length n, recycled when possible.
func (s *Sim) alloc(n int) []byte {
	if n <= poolCap {
		if k := len(s.pool); k > 0 {
			b := s.pool[k-1]
			s.pool = s.pool[:k-1]
			return b[:n]
		}
		return make([]byte, n, poolCap)
	}
	return make([]byte, n)
}

// poolCap is the capacity of the engine's recycled frame buffers. Only
// buffers of exactly this capacity (which Env.Alloc hands out) return to the
// pool, so a buffer an element allocated itself is never reused behind its
// back; the odd size makes an accidental match unlikely.
const poolCap = 2000

const maxPool = 1 << 14

// sameBuffer reports whether b is a slice of the array of a pooled buffer
// p (which starts its array, having its whole capacity): whether b's
// first element lies in it. Any slice counts: frame[4:] (a header
// stripped), frame[:n], and frame[:n:n] too, whose capacity no longer
// ends with the array's.
func sameBuffer(b, p []byte) bool {
	if cap(b) == 0 || cap(p) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	x := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return x >= lo && x-lo < uintptr(cap(p))
}

func (s *Sim) recycle(b []byte) {
	if s.rx.handed != nil && sameBuffer(b, s.rx.handed) {
		// The received buffer, handed back in place and dropped at once
		// (no such port, link down) while Receive still runs: the
		// element may still send it on (a flood in place), and the next
		// Alloc must not hand the array out under it. It is the
		// receiver's again: recycled when Receive returns, unless sent
		// on meanwhile.
		s.rx.buf, s.rx.handed = s.rx.handed, nil
		return
	}
	if cap(b) == poolCap && len(s.pool) < maxPool {
		s.pool = append(s.pool, b)
	}
}

func (s *Sim) captureErr(err error) {
	if err != nil && s.err == nil {
		s.err = fmt.Errorf("sim: capture: %w", err)
	}
}

// splitmix is SplitMix64's finalizer: it spreads small integers (node
// indices) into well-mixed PCG streams.
func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ x>>30) * 0xBF58476D1CE4E5B9
	x = (x ^ x>>27) * 0x94D049BB133111EB
	return x ^ x>>31
}

// timeHandler adds the virtual time ("t") to every log record.
type timeHandler struct {
	h slog.Handler
	s *Sim
}

func (t *timeHandler) Enabled(ctx context.Context, l slog.Level) bool { return t.h.Enabled(ctx, l) }
func (t *timeHandler) Handle(ctx context.Context, r slog.Record) error {
	r.AddAttrs(slog.String("t", t.s.now.String()))
	return t.h.Handle(ctx, r)
}
func (t *timeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &timeHandler{h: t.h.WithAttrs(as), s: t.s}
}
func (t *timeHandler) WithGroup(name string) slog.Handler {
	return &timeHandler{h: t.h.WithGroup(name), s: t.s}
}
