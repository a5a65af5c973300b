package emu

import (
	"container/heap"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"golang.org/x/sys/unix"
)

// Readier is implemented by a scheme's Fabric or elements that need time to
// become ready after they start (DumbNet's discovery, a controller's first
// computation). Up waits until every Readier reports true. An element's
// Ready is called on the element's own goroutine, like every other call
// into it; a Fabric's Ready is called from another goroutine and must be
// safe for that.
type Readier interface {
	Ready() bool
}

// event is one thing an element's goroutine does: deliver a frame, a link
// change, or run a function (timers use the heap, not events).
type event struct {
	kind evKind
	port element.Port
	buf  *[]byte
	n    int
	up   bool
	fn   func()
}

type evKind uint8

const (
	evFrame evKind = iota + 1
	evLink
	evFunc
)

// framePool recycles read buffers: an element's frame is valid only during
// Receive, so the buffer goes back as soon as Receive returns.
var framePool = sync.Pool{New: func() any { b := make([]byte, maxFrame+4); return &b }}

// portStats counts one port's traffic. Readers and the element goroutine
// update it; status reads it, so it is atomic.
type portStats struct {
	rxFrames, rxBytes, txFrames, txBytes atomic.Uint64
	rxDropOversize, rxDropRunt, rxErrors atomic.Uint64
	txDropDown, txErrors, kernelDrops    atomic.Uint64
}

// runner drives one element: one goroutine reads a channel of events and
// runs due timers, so calls into the element never overlap.
type runner struct {
	name  string
	el    element.Element
	ports []element.PortInfo // port p at p-1
	ios   []frameIO          // nil for unconnected ports
	stats []portStats
	up    []atomic.Bool // link state as the element was told

	events   chan event
	done     chan struct{}
	loopDone chan struct{}  // closed when the element's goroutine returns
	wg       sync.WaitGroup // the loop and the readers
	start    time.Time
	rnd      *rand.Rand
	log      *slog.Logger

	timers   timerHeap
	tseq     uint64
	armed    time.Duration // deadline the Go timer is set for, or -1
	badPort  atomic.Uint64 // Sends to a port that does not exist
	stopped  atomic.Bool
	quitOnce sync.Once
	started  atomic.Bool // run was called; a lab that failed midway has runners never started
	// onPanic, when set, is called on a goroutine of its own once the
	// element's goroutine has ended in a panic (a bug in the element):
	// the lab takes itself down before the process dies, instead of
	// leaving its namespaces behind. Unset, the panic goes on.
	onPanic func(v any, stack []byte)
}

func newRunner(name string, el element.Element, ports []element.PortInfo, ios []frameIO, start time.Time, seed uint64, log *slog.Logger) *runner {
	r := &runner{
		name:     name,
		el:       el,
		ports:    ports,
		ios:      ios,
		stats:    make([]portStats, len(ports)),
		up:       make([]atomic.Bool, len(ports)),
		events:   make(chan event, 1024),
		done:     make(chan struct{}),
		loopDone: make(chan struct{}),
		start:    start,
		rnd:      rand.New(rand.NewPCG(seed, 0x656d75)),
		log:      log.With("node", name),
		armed:    -1,
	}
	for i := range ports {
		r.up[i].Store(ports[i].Up)
	}
	return r
}

// run attaches the element and starts its goroutine and one reader per port.
func (r *runner) run() {
	r.started.Store(true)
	r.wg.Add(1)
	go r.loop()
	for i, io := range r.ios {
		if io != nil {
			r.wg.Add(1)
			go r.reader(element.Port(i+1), io)
		}
	}
}

// quit tells the element's goroutine, the readers and every post or do
// waiting on the runner to stop, without waiting for them (stop does).
// It is idempotent.
func (r *runner) quit() { r.quitOnce.Do(func() { close(r.done) }) }

// stopWait bounds how long stop waits for the element's goroutine (a var:
// tests shorten it).
var stopWait = 10 * time.Second

// stop ends the goroutine and the readers and closes the ports. It is
// idempotent.
func (r *runner) stop() {
	if r.stopped.Swap(true) {
		return
	}
	r.quit()
	// The element's goroutine must be gone before the ports close: Send
	// writes to the raw fd, whose number could otherwise be reused by
	// another file while it is still writing.
	if r.started.Load() {
		select {
		case <-r.loopDone:
		case <-time.After(stopWait):
			// An element stuck inside a call (a bug): leave its ports
			// open rather than risk a reused fd, and let the lab's
			// teardown go on; the process exit closes them.
			r.log.Error("element did not stop; its ports are left open", "waited", stopWait)
			return
		}
	}
	var wg sync.WaitGroup
	for _, io := range r.ios {
		if io != nil {
			wg.Add(1)
			go func() { defer wg.Done(); io.Close() }() // unblocks the readers
		}
	}
	wg.Wait()
	r.wg.Wait()
}

func (r *runner) reader(p element.Port, io frameIO) {
	defer r.wg.Done()
	st := &r.stats[p-1]
	for {
		bp := framePool.Get().(*[]byte)
		n, err := io.ReadFrame(*bp)
		if err != nil {
			framePool.Put(bp)
			if errors.Is(err, os.ErrClosed) {
				return
			}
			select {
			case <-r.done:
				return
			default:
			}
			switch {
			case errors.Is(err, errOversize):
				st.rxDropOversize.Add(1)
				continue
			case errors.Is(err, errRunt):
				st.rxDropRunt.Add(1)
				continue
			case errors.Is(err, unix.ENETDOWN):
				// The interface went down: the kernel tells a bound
				// packet socket once. No frame was lost, and the
				// next read waits for the interface to come back.
				continue
			}
			// Anything else (ENOBUFS): count it and back off
			// instead of spinning.
			st.rxErrors.Add(1)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		select {
		case r.events <- event{kind: evFrame, port: p, buf: bp, n: n}:
		case <-r.done:
			framePool.Put(bp)
			return
		}
	}
}

func (r *runner) loop() {
	defer r.wg.Done()
	defer close(r.loopDone)
	defer r.recoverPanic()
	r.el.Attach(r, r.ports)
	tm := time.NewTimer(time.Hour)
	tm.Stop()
	for {
		r.fireDue()
		var tc <-chan time.Time
		if len(r.timers) > 0 {
			next := r.timers[0].at
			if next != r.armed {
				tm.Reset(next - time.Since(r.start))
				r.armed = next
			}
			tc = tm.C
		} else if r.armed >= 0 {
			tm.Stop()
			r.armed = -1
		}
		select {
		case ev := <-r.events:
			r.handle(ev)
		case <-tc:
			r.armed = -1
		case <-r.done:
			tm.Stop()
			return
		}
	}
}

// recoverPanic, deferred by loop, hands a panic of the element to onPanic.
// It runs before loop's goroutine is marked done, so the lab's Down, which
// waits for that, can be called by onPanic.
func (r *runner) recoverPanic() {
	v := recover()
	if v == nil {
		return
	}
	stack := debug.Stack()
	if r.onPanic == nil {
		panic(fmt.Sprintf("%v\n\n%s", v, stack))
	}
	r.log.Error("element panicked", "panic", fmt.Sprint(v))
	go r.onPanic(v, stack)
}

func (r *runner) handle(ev event) {
	switch ev.kind {
	case evFrame:
		st := &r.stats[ev.port-1]
		if ev.n < 14 {
			st.rxDropRunt.Add(1)
		} else {
			st.rxFrames.Add(1)
			st.rxBytes.Add(uint64(ev.n))
			r.el.Receive(ev.port, (*ev.buf)[:ev.n:ev.n])
		}
		framePool.Put(ev.buf)
	case evLink:
		if r.up[ev.port-1].Swap(ev.up) != ev.up {
			r.el.LinkChange(ev.port, ev.up)
		}
	case evFunc:
		ev.fn()
	}
}

// fireDue runs every timer whose deadline has passed, in deadline order
// (ties in the order they were armed).
func (r *runner) fireDue() {
	for len(r.timers) > 0 {
		now := time.Since(r.start)
		t := r.timers[0]
		if t.at > now {
			return
		}
		heap.Pop(&r.timers)
		if !t.cancelled {
			t.f()
		}
	}
}

// post queues an event; false when the runner has stopped.
func (r *runner) post(ev event) bool {
	select {
	case r.events <- ev:
		return true
	case <-r.done:
		return false
	}
}

// do runs f on the element's goroutine and waits for it, or gives up after
// timeout (an element stuck in a call) or when the runner stops.
func (r *runner) do(f func(), timeout time.Duration) bool {
	fin := make(chan struct{})
	if !r.post(event{kind: evFunc, fn: func() { f(); close(fin) }}) {
		return false
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-fin:
		return true
	case <-t.C:
		return false
	case <-r.done:
		return false
	}
}

// linkChange tells the element that port p went up or down.
func (r *runner) linkChange(p element.Port, up bool) {
	if int(p) < 1 || int(p) > len(r.ports) {
		return
	}
	r.post(event{kind: evLink, port: p, up: up})
}

// Env implementation. Only the element's goroutine calls these.

func (r *runner) Now() element.Time {
	return element.Time(time.Since(r.start).Nanoseconds()) * element.Nanosecond
}

func (r *runner) Send(p element.Port, frame []byte) {
	if int(p) < 1 || int(p) > len(r.ports) || r.ios[p-1] == nil {
		r.badPort.Add(1)
		return
	}
	st := &r.stats[p-1]
	if !r.up[p-1].Load() {
		st.txDropDown.Add(1)
		return
	}
	if err := r.ios[p-1].WriteFrame(frame); err != nil {
		if errors.Is(err, unix.ENETDOWN) {
			// The link failed and the element is not told yet
			// (SetLink takes the interfaces down first).
			st.txDropDown.Add(1)
		} else {
			st.txErrors.Add(1)
		}
		return
	}
	st.txFrames.Add(1)
	st.txBytes.Add(uint64(len(frame)))
}

func (r *runner) After(d element.Time, f func()) (cancel func()) {
	if d < 0 {
		d = 0
	}
	r.tseq++
	t := &timer{at: time.Since(r.start) + ceilNanoseconds(d), seq: r.tseq, f: f}
	heap.Push(&r.timers, t)
	return func() { t.cancelled = true }
}

// ceilNanoseconds rounds d up to whole nanoseconds, the clock's
// resolution: an element may check, when its timer fires, that Now() has
// reached the deadline it asked for (stp's timers do), and a delay rounded
// down could fire up to 1 ns before it and be ignored for good.
func ceilNanoseconds(d element.Time) time.Duration {
	ns := d / element.Nanosecond
	if d%element.Nanosecond != 0 {
		ns++
	}
	return time.Duration(ns)
}

func (r *runner) Rand() *rand.Rand { return r.rnd }

func (r *runner) Log() *slog.Logger { return r.log }

// timer is one After; cancelled timers stay in the heap until due, which is
// cheaper than removing them and harmless.
type timer struct {
	at        time.Duration
	seq       uint64
	f         func()
	cancelled bool
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(*timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return t
}
