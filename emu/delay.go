package emu

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
	"golang.org/x/sys/unix"
)

// Link delay without netem (this kernel has none): a port of a node that
// runs an element holds its frames for the link's delay in the emulator's
// own wrapper. Frames it sends wait before they are written; frames from a
// peer that the kernel runs (a host without an agent) wait after they are
// read, so that each direction of a link is delayed once. The delay is
// constant per port, so a FIFO keeps the order and one goroutine per
// direction serves it.

// MinDelay is the shortest link delay the emulator applies: below it a
// frame's hand-over between goroutines and the machine's own forwarding
// (tens of microseconds a hop) exceed the delay itself, so the topology's
// default 1 us links run as fast as the machine forwards.
const MinDelay = 100 * time.Microsecond

// maxDelayedBytes and maxDelayedFrames bound what one direction of a port
// holds: at 1 Gb/s, 200 ms of full frames or 180 ms of the smallest. A frame
// beyond them is dropped (errDelayFull).
const (
	maxDelayedBytes  = 25 << 20
	maxDelayedFrames = 1 << 18
)

var errDelayFull = errors.New("emu: delay line full")

type delayed struct {
	due   time.Time
	frame []byte
	err   error  // a read error, passed on in order
	gen   uint64 // the line's generation when queued (flush)
}

// delayLine is a FIFO of frames, each released at its due time.
type delayLine struct {
	mu     sync.Mutex
	cond   *sync.Cond
	q      []delayed
	bytes  int
	closed bool
	done   chan struct{} // closed by close: ends a wait for a due time
	// gen counts flushes: an item queued before the last one, popped
	// and waiting for its due time meanwhile, is dropped too.
	gen     uint64
	flushed atomic.Uint64 // frames dropped by flush, or read while down
	// down: the link failed and is not repaired yet (setDown): the line
	// takes nothing, as a down interface takes nothing (a frame queued
	// then was written after a repair faster than the delay).
	down bool
}

func newDelayLine() *delayLine {
	d := &delayLine{done: make(chan struct{})}
	d.cond = sync.NewCond(&d.mu)
	return d
}

// push queues a frame (copied) or an error; it reports false when the
// line is full, closed or down.
func (d *delayLine) push(it delayed) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.down || d.bytes+len(it.frame) > maxDelayedBytes || len(d.q) >= maxDelayedFrames {
		return false
	}
	it.gen = d.gen
	d.q = append(d.q, it)
	d.bytes += len(it.frame)
	d.cond.Signal()
	return true
}

// pop waits for the oldest item and for its due time; ok is false once the
// line is closed.
func (d *delayLine) pop() (it delayed, ok bool) {
	for {
		d.mu.Lock()
		for len(d.q) == 0 && !d.closed {
			d.cond.Wait()
		}
		if d.closed {
			d.mu.Unlock()
			return delayed{}, false
		}
		it = d.q[0]
		d.q[0] = delayed{}
		d.q = d.q[1:]
		d.bytes -= len(it.frame)
		d.mu.Unlock()
		if !sleepUntil(it.due, d.done) {
			return delayed{}, false
		}
		d.mu.Lock()
		stale := it.gen != d.gen
		d.mu.Unlock()
		if !stale {
			return it, true
		}
		if it.err == nil {
			d.flushed.Add(1)
		}
	}
}

// flush drops every frame the line holds, also one waiting for its due
// time: the link failed, and what was in flight on it is lost, as in the
// simulator.
func (d *delayLine) flush() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gen++
	for _, it := range d.q {
		if it.err == nil {
			d.flushed.Add(1)
		}
	}
	clear(d.q)
	d.q = d.q[:0]
	d.bytes = 0
}

// sleepSlack is how late a sleep may wake on a loaded machine: measured
// here, 0.1 ms for 1 ms sleeps and up to 1 ms for 0.1 ms ones. waitUntil
// sleeps until that much before t and yields the rest, so that a frame
// leaves within microseconds of its due time instead of up to a
// millisecond late on every delayed hop.
const sleepSlack = time.Millisecond

// It reports false when done closes first (a lab going down does not wait
// out a long delay).
func sleepUntil(t time.Time, done <-chan struct{}) bool {
	if w := time.Until(t); w > sleepSlack {
		tm := time.NewTimer(w - sleepSlack)
		select {
		case <-tm.C:
		case <-done:
			tm.Stop()
			return false
		}
	}
	for time.Now().Before(t) {
		runtime.Gosched()
	}
	return true
}

// setDown makes the line refuse frames (the link failed) or take them
// again (repaired).
func (d *delayLine) setDown(down bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.down = down
}

func (d *delayLine) isClosed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closed
}

func (d *delayLine) isDown() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.down
}

func (d *delayLine) close() {
	d.mu.Lock()
	if !d.closed {
		d.closed = true
		close(d.done)
	}
	d.q = nil
	d.cond.Broadcast()
	d.mu.Unlock()
}

// delayedPort wraps a port's frameIO: writes wait for delay before they
// reach the wire; with ingress, reads wait for it too.
type delayedPort struct {
	inner   frameIO
	delay   time.Duration
	out, in *delayLine // in is nil without ingress
	// The writer and the reader: Close stops the writer before it
	// closes the inner port (it writes through the socket's fd number,
	// which a closed socket's successor may reuse), and the reader after
	// (only closing the port ends its read).
	wg, rwg sync.WaitGroup
	// lateErrs counts writes that failed after their delay (the element
	// was told the frame was sent: it was queued, as in a NIC's queue),
	// but for a failed link's ENETDOWN, counted with the flushed frames;
	// inFull counts frames read while the ingress line was full.
	lateErrs, inFull atomic.Uint64
}

func newDelayedPort(inner frameIO, delay time.Duration, ingress bool) *delayedPort {
	p := &delayedPort{inner: inner, delay: delay, out: newDelayLine()}
	p.wg.Add(1)
	go p.writer()
	if ingress {
		p.in = newDelayLine()
		p.rwg.Add(1)
		go p.reader()
	}
	return p
}

func (p *delayedPort) writer() {
	defer p.wg.Done()
	for {
		it, ok := p.out.pop()
		if !ok {
			return
		}
		if err := p.inner.WriteFrame(it.frame); errors.Is(err, unix.ENETDOWN) {
			// The link failed while the frame was in flight, and the
			// line is not flushed yet (SetLink takes the interfaces
			// down first): lost with the link (tx_link_down), as the
			// flush would have counted it, not a send error.
			p.out.flushed.Add(1)
		} else if err != nil {
			p.lateErrs.Add(1)
		}
	}
}

// reader reads the inner port as fast as frames come and stamps each with
// its due time; ReadFrame hands them out when due.
func (p *delayedPort) reader() {
	defer p.rwg.Done()
	// One read buffer, and each frame queued in a copy of its own length:
	// the line's bound counts lengths, and a full-size buffer per queued
	// frame held 9 KiB for every 64-byte frame (2.4 GB within the bounds).
	// The buffer has the runner's size, so that the limits are the same
	// with and without a delay.
	buf := make([]byte, maxFrame+4)
	for {
		n, err := p.inner.ReadFrame(buf)
		it := delayed{due: time.Now().Add(p.delay)}
		if err != nil {
			it.err = err
		} else {
			it.frame = append([]byte(nil), buf[:n]...)
		}
		if !p.in.push(it) {
			if p.in.isClosed() {
				return // the port was closed, whatever error its read gave
			}
			if err == nil {
				if p.in.isDown() {
					p.in.flushed.Add(1) // read as the link failed: lost with it
				} else {
					p.inFull.Add(1) // full: dropped, as a full queue does
				}
			}
		}
		if errors.Is(err, os.ErrClosed) {
			return
		}
		if err != nil && !errors.Is(err, errOversize) && !errors.Is(err, errRunt) && !errors.Is(err, unix.ENETDOWN) {
			// passed on in order; back off as the runner's reader does
			// rather than spin on an error that repeats. Not after a
			// frame refused (oversize, runt) or the link's ENETDOWN,
			// which the runner's reader takes without a pause: the
			// next frame is read at once, with a delay or without.
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// ReadFrame implements frameIO.
func (p *delayedPort) ReadFrame(buf []byte) (int, error) {
	if p.in == nil {
		return p.inner.ReadFrame(buf)
	}
	it, ok := p.in.pop()
	if !ok {
		return 0, os.ErrClosed
	}
	if it.err != nil {
		return 0, it.err
	}
	return copy(buf, it.frame), nil
}

// WriteFrame implements frameIO: the frame is copied and sent after the
// delay. While the link is down (setDown) it is refused
// with ENETDOWN, as a write to the down interface is, and the runner
// counts it tx_link_down.
func (p *delayedPort) WriteFrame(frame []byte) error {
	if !p.out.push(delayed{due: time.Now().Add(p.delay), frame: append([]byte(nil), frame...)}) {
		if p.out.isDown() {
			return unix.ENETDOWN
		}
		return errDelayFull
	}
	return nil
}

// flush drops the frames in flight on the port's link, both ways: the
// link failed (SetLink), and frames in flight on a cut link are lost.
// Without it they reached the far end after the failure (while the
// element had been told the link was down), or after the repair.
func (p *delayedPort) flush() {
	p.out.flush()
	if p.in != nil {
		p.in.flush()
	}
}

// setDown makes the port's lines refuse frames while its link is down
// (a write fails with ENETDOWN, as on the down interface), and take them
// again once it is repaired. A frame the element sent after the failure
// (before it was told) was queued, and written to the far end after a
// repair that came within the delay.
func (p *delayedPort) setDown(down bool) {
	p.out.setDown(down)
	if p.in != nil {
		p.in.setDown(down)
	}
}

// Close implements frameIO.
func (p *delayedPort) Close() error {
	p.out.close()
	p.wg.Wait()
	if p.in != nil {
		p.in.close()
	}
	err := p.inner.Close()
	p.rwg.Wait()
	return err
}

// runsElement reports whether the emulator forwards ln's frames itself
// (an element on its ports), rather than the kernel (a host without an
// agent, a kernel bridge).
func runsElement(ln *labNode) bool { return ln.el != nil && !ln.bridge }

// linkDelay is the delay the emulator applies to link lid: Options.Delay,
// else with TopoDelay the link's own; 0 below MinDelay.
func (l *Lab) linkDelay(lid topo.LinkID) time.Duration { return linkDelayOf(l.g, lid, l.opts) }

func linkDelayOf(g *topo.Graph, lid topo.LinkID, opts Options) time.Duration {
	d := opts.Delay
	if d <= 0 && opts.TopoDelay {
		d = time.Duration(g.Link(lid).Delay / element.Nanosecond)
	}
	if d < MinDelay {
		return 0
	}
	return d
}

// checkDelay refuses a delay the emulator cannot apply: a link whose two
// ends the kernel forwards (kernel-bridge, or two hosts without agents
// cabled together), since the delay is applied in the emulator's own
// ports and there is no netem here.
func (l *Lab) checkDelay() error {
	return checkDelays(l.g, l.opts, l.scheme, func(n topo.NodeID) bool { return runsElement(l.nodes[n]) })
}

// checkDelays is checkDelay for graph g, where runs(n) says whether the
// emulator forwards node n's frames (runsElement).
func checkDelays(g *topo.Graph, opts Options, schemeName string, runs func(topo.NodeID) bool) error {
	if opts.Delay < 0 {
		return fmt.Errorf("emu: %w: delay %v", ErrBadOption, opts.Delay)
	}
	for i := range g.NumLinks() {
		lid := topo.LinkID(i)
		if linkDelayOf(g, lid, opts) == 0 {
			continue
		}
		lk := g.Link(lid)
		if !runs(lk.A.Node) && !runs(lk.B.Node) {
			return fmt.Errorf("emu: %w: link %s-%s: a delay is applied by the emulator's own ports, and the kernel forwards both ends of this link (%s; this kernel has no netem)", ErrBadOption, g.Node(lk.A.Node).Name, g.Node(lk.B.Node).Name, schemeName)
		}
	}
	return nil
}
