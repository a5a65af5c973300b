package dumbnet

import (
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"sort"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

// fakeEnv is an element.Env for unit tests: it records sends and runs
// timers when the test advances the clock.
type fakeEnv struct {
	now    element.Time
	sent   []sent
	timers []*fakeTimer
	rng    *rand.Rand
}

type sent struct {
	port  element.Port
	frame []byte
}

type fakeTimer struct {
	at   element.Time
	f    func()
	dead bool
}

func newFakeEnv() *fakeEnv { return &fakeEnv{rng: rand.New(rand.NewPCG(1, 2))} }

func (e *fakeEnv) Now() element.Time                 { return e.now }
func (e *fakeEnv) Send(p element.Port, frame []byte) { e.sent = append(e.sent, sent{p, frame}) }
func (e *fakeEnv) Rand() *rand.Rand                  { return e.rng }
func (e *fakeEnv) Log() *slog.Logger                 { return slog.New(slog.DiscardHandler) }
func (e *fakeEnv) After(d element.Time, f func()) func() {
	t := &fakeTimer{at: e.now + d, f: f}
	e.timers = append(e.timers, t)
	return func() { t.dead = true }
}

// advance runs every timer due up to now+d, in time order.
func (e *fakeEnv) advance(d element.Time) {
	end := e.now + d
	for {
		sort.SliceStable(e.timers, func(i, j int) bool { return e.timers[i].at < e.timers[j].at })
		if len(e.timers) == 0 || e.timers[0].at > end {
			break
		}
		t := e.timers[0]
		e.timers = e.timers[1:]
		if t.dead {
			continue
		}
		e.now = t.at
		t.f()
	}
	e.now = end
}

func (e *fakeEnv) take() []sent {
	s := e.sent
	e.sent = nil
	return s
}

func ports(n int) []element.PortInfo {
	ps := make([]element.PortInfo, n)
	for i := range ps {
		ps[i] = element.PortInfo{Port: element.Port(i + 1), Up: true}
	}
	return ps
}

// attachedAgent is an agent attached to a fakeEnv on a NIC (port 1) and
// its stack (port 2, Local); unless it runs the controller, it knows the
// controller, B, by the path 3-1.
func attachedAgent(cfg Config) (*Agent, *fakeEnv) {
	a := NewAgent(cfg)
	env := newFakeEnv()
	a.Attach(env, []element.PortInfo{{Port: 1, Up: true}, {Port: 2, Up: true, Local: true}})
	if !cfg.Controller {
		a.setController(macB, []uint8{3, 1})
	}
	return a, env
}

// twoPaths are two equal paths from switch 1 to switch 4, the first
// (primary) via switch 2, leaving switch 1 by port 1, the other via switch
// 3, by port 2.
func twoPaths() (dst uint64, links []wire.DumbNetLink) {
	return 4, []wire.DumbNetLink{
		{A: 1, APort: 1, B: 2, BPort: 1, Flags: wire.LinkUp | wire.LinkPrimary},
		{A: 2, APort: 2, B: 4, BPort: 1, Flags: wire.LinkUp | wire.LinkPrimary},
		{A: 1, APort: 2, B: 3, BPort: 1, Flags: wire.LinkUp | wire.LinkDetour},
		{A: 3, APort: 2, B: 4, BPort: 2, Flags: wire.LinkUp | wire.LinkDetour},
	}
}

// threePaths are three equal paths from switch 1 to switch 5, via switches
// 2, 3 and 4, leaving switch 1 by ports 2, 3 and 4.
func threePaths() (dst uint64, links []wire.DumbNetLink) {
	for m := uint64(2); m <= 4; m++ {
		links = append(links,
			wire.DumbNetLink{A: 1, APort: uint16(m), B: m, BPort: 1, Flags: wire.LinkUp | wire.LinkDetour},
			wire.DumbNetLink{A: m, APort: 2, B: 5, BPort: uint16(m), Flags: wire.LinkUp | wire.LinkDetour})
	}
	return 5, links
}

// withPaths answers a's query for macB (held here) with paths (twoPaths,
// threePaths) from its switch 1, and forgets what a sent so far.
func withPaths(a *Agent, env *fakeEnv, paths func() (uint64, []wire.DumbNetLink)) {
	dst, links := paths()
	a.hold(macB, netip.Addr{}, nil, nil)
	a.pathReply(&wire.DumbNetPathReply{QueryID: 1, Version: 1, Src: macA, Dst: macB, SrcSwitch: 1, SrcPort: 9, DstSwitch: dst, DstPort: 9, Links: links})
	env.take()
}

// firstTag has a's stack send frame and returns the first tag of the one
// frame a sends for it: the port it leaves switch 1 by.
func firstTag(t *testing.T, a *Agent, env *fakeEnv, frame []byte) uint8 {
	t.Helper()
	a.Receive(2, frame)
	out := env.take()
	if len(out) != 1 {
		t.Fatalf("%d frames sent, want 1", len(out))
	}
	tags, _, _, err := wire.ParseDumbNet(out[0].frame)
	if err != nil || len(tags) == 0 {
		t.Fatalf("sent %x: %v", out[0].frame, err)
	}
	return tags[0]
}
