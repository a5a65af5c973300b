package emu

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/element"
)

// fakeIO is a frameIO over channels: what tests write in arrives at the
// element, what the element sends is recorded.
type fakeIO struct {
	in     chan []byte
	mu     sync.Mutex
	out    [][]byte
	closed chan struct{}
	once   sync.Once
	werr   error
}

func newFakeIO() *fakeIO { return &fakeIO{in: make(chan []byte, 16), closed: make(chan struct{})} }

func (f *fakeIO) ReadFrame(buf []byte) (int, error) {
	select {
	case fr := <-f.in:
		if len(fr) > len(buf)-4 {
			return 0, errOversize
		}
		return copy(buf, fr), nil
	case <-f.closed:
		return 0, os.ErrClosed
	}
}

func (f *fakeIO) WriteFrame(fr []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.werr != nil {
		return f.werr
	}
	f.out = append(f.out, append([]byte(nil), fr...))
	return nil
}

func (f *fakeIO) Close() error { f.once.Do(func() { close(f.closed) }); return nil }

func (f *fakeIO) sent() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.out) }

// recorder records calls and checks they never overlap.
type recorder struct {
	env    element.Env
	mu     sync.Mutex
	busy   bool
	events []string
	fired  []int
}

func (r *recorder) enter() {
	r.mu.Lock()
	if r.busy {
		panic("overlapping calls into an element")
	}
	r.busy = true
	r.mu.Unlock()
}

func (r *recorder) leave() { r.mu.Lock(); r.busy = false; r.mu.Unlock() }

func (r *recorder) Attach(env element.Env, _ []element.PortInfo) {
	r.enter()
	defer r.leave()
	r.env = env
	// Timers fire in deadline order, ties in arming order; a cancelled
	// one never fires.
	for _, c := range []struct {
		d  element.Time
		id int
	}{{30, 3}, {10, 1}, {10, 2}, {20, 99}} {
		id := c.id
		cancel := env.After(c.d*element.Millisecond, func() { r.mu.Lock(); r.fired = append(r.fired, id); r.mu.Unlock() })
		if id == 99 {
			cancel()
		}
	}
}

func (r *recorder) Receive(p element.Port, f []byte) {
	r.enter()
	defer r.leave()
	r.mu.Lock()
	r.events = append(r.events, "rx")
	r.mu.Unlock()
	r.env.Send(2, f) // forwarded
	r.env.Send(9, f) // no such port: counted
	r.env.Send(0, f) // never a port: counted
}

func (r *recorder) LinkChange(p element.Port, up bool) {
	r.enter()
	defer r.leave()
	r.mu.Lock()
	r.events = append(r.events, "link")
	r.mu.Unlock()
}

func TestRunner(t *testing.T) {
	p1, p2 := newFakeIO(), newFakeIO()
	ports := []element.PortInfo{{Port: 1, Up: true}, {Port: 2, Up: true}}
	rec := &recorder{}
	r := newRunner("s1", rec, ports, []frameIO{p1, p2}, time.Now(), 1, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.run()
	defer r.stop()

	frame := make([]byte, 60)
	p1.in <- frame
	p1.in <- []byte{1, 2, 3}          // runt: counted, never delivered
	p1.in <- make([]byte, maxFrame+1) // oversize: counted
	st := &r.stats[0]
	// Until the frame is forwarded, both drops are counted and the last
	// timer (30 ms) has fired: the cancelled one (20 ms) would have fired
	// before it. The oversize drop is counted by the port's reader, which
	// may get to it after the element has forwarded the frame.
	waitUntil(func() bool {
		rec.mu.Lock()
		fired := len(rec.fired)
		rec.mu.Unlock()
		return p2.sent() >= 1 && st.rxDropRunt.Load() >= 1 && st.rxDropOversize.Load() >= 1 && fired >= 3
	})
	var n int
	r.do(func() { n = len(rec.events) }, waitLimit) // Receive has returned
	if p2.sent() != 1 || n != 1 || st.rxFrames.Load() != 1 || st.rxDropRunt.Load() != 1 || st.rxDropOversize.Load() != 1 {
		t.Fatalf("sent %d, events %d, rx %d runt %d oversize %d", p2.sent(), n, st.rxFrames.Load(), st.rxDropRunt.Load(), st.rxDropOversize.Load())
	}
	if r.badPort.Load() != 2 {
		t.Fatalf("bad-port sends counted %d, want 2", r.badPort.Load())
	}
	rec.mu.Lock()
	fired := append([]int(nil), rec.fired...)
	rec.mu.Unlock()
	if len(fired) != 3 || fired[0] != 1 || fired[1] != 2 || fired[2] != 3 {
		t.Fatalf("timers fired %v, want [1 2 3]", fired)
	}

	// A link going down is told once; sends on it are counted drops.
	r.linkChange(2, false)
	r.linkChange(2, false)
	p1.in <- frame
	waitUntil(func() bool { return r.stats[1].txDropDown.Load() >= 1 })
	r.do(func() {}, waitLimit)
	if got := r.stats[1].txDropDown.Load(); got != 1 {
		t.Fatalf("sends on a down port counted %d, want 1", got)
	}
	rec.mu.Lock()
	links := 0
	for _, e := range rec.events {
		if e == "link" {
			links++
		}
	}
	rec.mu.Unlock()
	if links != 1 {
		t.Fatalf("LinkChange delivered %d times, want 1", links)
	}
	// Write errors are counted.
	r.linkChange(2, true)
	p2.mu.Lock()
	p2.werr = errors.New("ENOBUFS")
	p2.mu.Unlock()
	p1.in <- frame
	waitUntil(func() bool { return r.stats[1].txErrors.Load() >= 1 })
	r.do(func() {}, waitLimit)
	if r.stats[1].txErrors.Load() != 1 {
		t.Fatalf("write errors counted %d, want 1", r.stats[1].txErrors.Load())
	}
	r.stop()
	r.stop() // idempotent
}

func TestRunnerNow(t *testing.T) {
	r := newRunner("x", &recorder{}, nil, nil, time.Now().Add(-time.Second), 1, slog.Default())
	if now := r.Now(); now < element.Second || now > 10*element.Second {
		t.Fatalf("Now() = %v, want about 1s since start", now)
	}
	a, b := r.Rand().Uint64(), newRunner("x", &recorder{}, nil, nil, time.Now(), 1, slog.Default()).Rand().Uint64()
	if a != b {
		t.Fatal("Rand is not seeded deterministically per element")
	}
}

// A delay with a picosecond part is rounded up, never down: the runner's
// clock counts nanoseconds, and a timer that fired before its deadline
// would be ignored by an element that checks it (stp's hello timer with
// hello=2.0000000005).
func TestCeilNanoseconds(t *testing.T) {
	for _, c := range []struct {
		d    element.Time
		want time.Duration
	}{{0, 0}, {1, 1}, {999, 1}, {1000, 1}, {1001, 2}, {2*element.Second + 500, 2*time.Second + 1}} {
		if got := ceilNanoseconds(c.d); got != c.want {
			t.Errorf("ceilNanoseconds(%d ps) = %v, want %v", c.d, got, c.want)
		}
	}
}

func TestLongestGap(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := time.Millisecond
	got := map[int]time.Time{1: t0, 2: t0.Add(10 * ms), 3: t0.Add(20 * ms), 7: t0.Add(2 * time.Second), 8: t0.Add(2010 * ms), 10: t0.Add(2030 * ms)}
	var none time.Time // no failure time: every run counts
	lost, out := longestGap(got, 10, 10*ms, none)
	if lost != 4 || out != 1970*ms {
		t.Fatalf("longestGap = %d lost, %v; want 4, 1.97s", lost, out)
	}
	if lost, out := longestGap(map[int]time.Time{1: t0}, 1, 10*ms, none); lost != 0 || out != 0 {
		t.Fatalf("no loss: %d %v", lost, out)
	}
	// Replies around a run that came back early (a burst after a stall)
	// never make the outage shorter than the lost probes' intervals.
	burst := map[int]time.Time{1: t0, 4: t0.Add(5 * ms)}
	if lost, out := longestGap(burst, 4, 10*ms, none); lost != 2 || out != 20*ms {
		t.Fatalf("burst: %d %v, want 2, 20ms", lost, out)
	}
	// A run at the start has no reply before it: counted in intervals.
	if lost, out := longestGap(map[int]time.Time{4: t0}, 4, 10*ms, none); lost != 3 || out != 30*ms {
		t.Fatalf("leading loss: %d %v", lost, out)
	}
	// Runs over before the failure (seqs 4-6, a queue the bulk flow filled
	// at its start) are not the failover's: only 9 counts.
	if lost, out := longestGap(got, 10, 10*ms, t0.Add(2005*ms)); lost != 1 || out != 10*ms {
		t.Fatalf("with the failure at 2.005 s: %d lost, %v; want 1, 10ms", lost, out)
	}
}

// TestRunnerStopUnstarted: a lab that fails after making a runner but
// before starting it must still be able to stop it.
func TestRunnerStopUnstarted(t *testing.T) {
	p := newFakeIO()
	r := newRunner("x", &recorder{}, []element.PortInfo{{Port: 1, Up: true}}, []frameIO{p}, time.Now(), 1, slog.Default())
	done := make(chan struct{})
	go func() { r.stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("stop of an unstarted runner hangs")
	}
	select {
	case <-p.closed:
	default:
		t.Fatal("port not closed")
	}
}

// stuck is an element whose Receive blocks until release is closed.
type stuck struct{ entered, release chan struct{} }

func (s *stuck) Attach(element.Env, []element.PortInfo) {}
func (s *stuck) Receive(element.Port, []byte)           { close(s.entered); <-s.release }
func (s *stuck) LinkChange(element.Port, bool)          {}

// TestRunnerStopStuckElement: stop gives up on an element stuck inside a
// call after stopWait, leaving its ports open, instead of hanging the
// lab's teardown.
func TestRunnerStopStuckElement(t *testing.T) {
	defer func(w time.Duration) { stopWait = w }(stopWait)
	stopWait = 100 * time.Millisecond
	p := newFakeIO()
	el := &stuck{entered: make(chan struct{}), release: make(chan struct{})}
	r := newRunner("x", el, []element.PortInfo{{Port: 1, Up: true}}, []frameIO{p}, time.Now(), 1, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.run()
	p.in <- make([]byte, 60)
	select {
	case <-el.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the element never got the frame")
	}
	done := make(chan struct{})
	go func() { r.stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("stop hangs on a stuck element")
	}
	select {
	case <-p.closed:
		t.Fatal("the port of a stuck element was closed")
	default:
	}
	close(el.release) // let the goroutine go
}
