package dumbnet

import (
	"log/slog"
	"math/rand/v2"
	"sort"

	"github.com/edgefabric/edgefabric/element"
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
