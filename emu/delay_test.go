package emu

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/topo"
	"golang.org/x/sys/unix"
)

// TestDelayedPortOrderAndDelay: written frames reach the wire after the
// delay, in order; with ingress, read frames are handed out after it too;
// a failed late write is counted; Close ends both goroutines.
func TestDelayedPortOrderAndDelay(t *testing.T) {
	const d = 20 * time.Millisecond
	in := newFakeIO()
	p := newDelayedPort(in, d, true)
	start := time.Now()
	for i := range 5 {
		if err := p.WriteFrame([]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if in.sent() != 0 {
		t.Fatalf("%d frames on the wire at once", in.sent())
	}
	if !waitUntil(func() bool { return in.sent() == 5 }) {
		t.Fatalf("%d of 5 frames written", in.sent())
	}
	if el := time.Since(start); el < d {
		t.Errorf("written after %v, want at least %v", el, d)
	}
	in.mu.Lock()
	for i, f := range in.out {
		if f[0] != byte(i) {
			t.Errorf("frame %d is %d: out of order", i, f[0])
		}
	}
	in.mu.Unlock()
	// Ingress: a frame read from the wire is handed out d later.
	start = time.Now()
	in.in <- []byte{7, 7}
	buf := make([]byte, maxFrame+4)
	n, err := p.ReadFrame(buf)
	if err != nil || n != 2 || buf[0] != 7 {
		t.Fatalf("read %d %v", n, err)
	}
	if el := time.Since(start); el < d {
		t.Errorf("read after %v, want at least %v", el, d)
	}
	// A write that fails once its delay is over is counted.
	in.mu.Lock()
	in.werr = errTestWrite
	in.mu.Unlock()
	p.WriteFrame([]byte{9})
	if !waitUntil(func() bool { return p.lateErrs.Load() == 1 }) {
		t.Errorf("late write errors %d, want 1", p.lateErrs.Load())
	}
	done := make(chan error)
	go func() { done <- p.Close() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	if _, err := p.ReadFrame(buf); !errors.Is(err, os.ErrClosed) {
		t.Errorf("read after Close: %v", err)
	}
}

// TestDelayedPortLateENETDOWN: a frame whose delay ends after the link's
// interfaces went down, but before SetLink flushed the line, fails with
// ENETDOWN: lost with the link, counted where the flushed frames are
// (tx_link_down), not as a send error (tx_error), which it was.
func TestDelayedPortLateENETDOWN(t *testing.T) {
	in := newFakeIO()
	p := newDelayedPort(in, time.Millisecond, false)
	defer p.Close()
	in.mu.Lock()
	in.werr = unix.ENETDOWN
	in.mu.Unlock()
	if err := p.WriteFrame([]byte{1}); err != nil {
		t.Fatal(err)
	}
	if !waitUntil(func() bool { return p.out.flushed.Load()+p.lateErrs.Load() == 1 }) {
		t.Fatal("the late write was not counted")
	}
	if f, e := p.out.flushed.Load(), p.lateErrs.Load(); f != 1 || e != 0 {
		t.Errorf("lost with the link %d, send errors %d; want 1 and 0", f, e)
	}
}

var errTestWrite = errors.New("test write error")

// TestDelayLineFull: a line holding maxDelayedBytes refuses more (the
// runner counts it as a send error) until it drains.
func TestDelayLineFull(t *testing.T) {
	l := newDelayLine()
	big := make([]byte, maxDelayedBytes/2)
	due := time.Now().Add(time.Hour)
	for i := range 2 {
		if !l.push(delayed{due: due, frame: big}) {
			t.Fatalf("half %d refused below the bound", i)
		}
	}
	if l.push(delayed{due: due, frame: []byte{1}}) {
		t.Error("accepted beyond the bound")
	}
	l.close()
	if l.push(delayed{due: due, frame: []byte{1}}) {
		t.Error("accepted after close")
	}
	if _, ok := l.pop(); ok {
		t.Error("popped after close")
	}
}

// TestLabDelay: with Delay, a ping crosses each of its four link
// directions after the delay (h1-s1-h2, a learning-bridge element on s1,
// unmodified hosts: the switch delays what it sends and, since the kernel
// runs the hosts, what it receives); status gives each link's delay. A
// delay on kernel-bridge, where the kernel forwards both ends of every
// link, is refused before anything is built.
func TestLabDelay(t *testing.T) {
	needRoot(t)
	var fabrics []*testFabric
	const d = 10 * time.Millisecond
	l := upLab(t, star(t, 2), "learn", Options{Registry: testRegistry(t, &fabrics), Delay: d})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := l.Exec(ctx, "h1", "ping", "-c", "5", "-i", "0.2", "-W", "2", "10.0.0.2")
	if err != nil {
		t.Fatalf("ping: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`= ([0-9.]+)/([0-9.]+)/([0-9.]+)/`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no rtt in\n%s", out)
	}
	minMs, _ := strconv.ParseFloat(string(m[1]), 64)
	// At least the four delays; below eight, which each direction delayed
	// twice would give (the margin is for a loaded machine's scheduling).
	if minMs < 40 || minMs >= 80 {
		t.Errorf("min rtt %.3f ms, want 4 x 10 ms and a little", minMs)
	}
	for _, lk := range l.Status().Links {
		if lk.DelayNs != d.Nanoseconds() {
			t.Errorf("link %s-%s: delay_ns %d, want %d", lk.A, lk.B, lk.DelayNs, d.Nanoseconds())
		}
	}
	_, err = Up(ctx, star(t, 2), KernelBridge, Options{Name: labName(), Delay: d})
	if !errors.Is(err, ErrBadOption) {
		t.Errorf("kernel-bridge with a delay: %v", err)
	}
	// Below MinDelay nothing is delayed (the topology's default 1 us).
	l.opts.Delay = MinDelay - 1
	if l.linkDelay(0) != 0 {
		t.Error("a delay below MinDelay applied")
	}
}

// TestDelayedPortCloseLongDelay: closing a port does not wait out a long
// delay (a lab with --delay 1h still goes down at once).
func TestDelayedPortCloseLongDelay(t *testing.T) {
	p := newDelayedPort(newFakeIO(), time.Hour, true)
	p.WriteFrame([]byte{1})
	time.Sleep(10 * time.Millisecond) // the writer is waiting for the frame's time
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited for the delay")
	}
}

// slowWriter is a frameIO whose writes block until released, and which
// records a Close that came while a write was under way.
type slowWriter struct {
	*fakeIO
	writing, release chan struct{}
	inWrite          atomic.Bool
	closedMidWrite   atomic.Bool
}

func (s *slowWriter) WriteFrame(fr []byte) error {
	s.inWrite.Store(true)
	defer s.inWrite.Store(false)
	s.writing <- struct{}{}
	<-s.release
	return s.fakeIO.WriteFrame(fr)
}

func (s *slowWriter) Close() error {
	if s.inWrite.Load() {
		s.closedMidWrite.Store(true)
	}
	return s.fakeIO.Close()
}

// TestDelayedPortCloseStopsWriterFirst: Close lets a write under way end
// before it closes the inner port. The writer writes through the socket's
// fd number: closed first, the number may already name another socket
// (another lab's, a netlink one) when the write lands.
func TestDelayedPortCloseStopsWriterFirst(t *testing.T) {
	s := &slowWriter{fakeIO: newFakeIO(), writing: make(chan struct{}, 1), release: make(chan struct{})}
	p := newDelayedPort(s, 0, true)
	if err := p.WriteFrame([]byte{1}); err != nil {
		t.Fatal(err)
	}
	<-s.writing
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
		t.Fatal("Close returned while a write was under way")
	case <-time.After(50 * time.Millisecond): // time for a Close that does not wait to close the port
	}
	close(s.release)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return once the write ended")
	}
	if s.closedMidWrite.Load() {
		t.Fatal("the inner port was closed while a write was under way")
	}
	if s.sent() != 1 {
		t.Fatalf("%d frames written, want 1", s.sent())
	}
}

// TestDelayLineHoldsWhatItCounts: the ingress line's bound (25 MiB, as
// the docs say) is on the bytes it holds, so a queued frame must not
// hold more memory than its length: the reader read every frame into a
// fresh buffer of maxFrame+1 bytes and queued that, so 2^18 queued
// 64-byte frames (within both bounds) held 2.4 GB.
func TestDelayLineHoldsWhatItCounts(t *testing.T) {
	in := newFakeIO()
	p := newDelayedPort(in, time.Hour, true)
	defer p.Close()
	const frames, size = 1000, 64
	for range frames {
		in.in <- make([]byte, size)
	}
	queued := func() int { p.in.mu.Lock(); defer p.in.mu.Unlock(); return len(p.in.q) }
	if !waitUntil(func() bool { return queued() == frames }) {
		t.Fatalf("%d of %d frames queued", queued(), frames)
	}
	p.in.mu.Lock()
	held, counted := 0, p.in.bytes
	for _, it := range p.in.q {
		held += cap(it.frame)
	}
	p.in.mu.Unlock()
	if counted != frames*size {
		t.Errorf("line counts %d bytes, want %d", counted, frames*size)
	}
	// Allocation rounds a small slice up to its size class: a little slack.
	if held > 2*counted {
		t.Errorf("%d queued %d-byte frames hold %d bytes of memory, the line counts %d", frames, size, held, counted)
	}
}

// TestDelayedPortFlush: the frames in flight when the link fails are
// lost and counted, both ways, also the one the writer holds waiting for
// its due time; what is sent after is delivered. (They used to reach the
// far end after the failure, when the element had been told the link was
// down, or after a repair: the simulator loses them.) Each check waits
// for a frame sent after the flush, which FIFO order puts behind any
// flushed frame that got through.
func TestDelayedPortFlush(t *testing.T) {
	in := newFakeIO()
	p := newDelayedPort(in, 200*time.Millisecond, true)
	defer p.Close()
	for i := range 3 {
		p.WriteFrame([]byte{byte(i)})
	}
	// The writer has popped frame 0 and waits for its time.
	popped := func() bool { p.out.mu.Lock(); defer p.out.mu.Unlock(); return len(p.out.q) == 2 }
	if !waitUntil(popped) {
		t.Fatal("the writer did not take the first frame")
	}
	in.in <- []byte{10}
	in.in <- []byte{11}
	queued := func() bool { p.in.mu.Lock(); defer p.in.mu.Unlock(); return len(p.in.q) == 2 }
	if !waitUntil(queued) {
		t.Fatal("the reader did not queue the frames read")
	}
	p.flush()
	p.WriteFrame([]byte{9})
	in.in <- []byte{19}
	if !waitUntil(func() bool { return in.sent() >= 1 }) {
		t.Fatal("the frame sent after the flush was not written")
	}
	in.mu.Lock()
	out := append([][]byte(nil), in.out...)
	in.mu.Unlock()
	if len(out) != 1 || out[0][0] != 9 {
		t.Errorf("written %v, want only the frame sent after the flush", out)
	}
	buf := make([]byte, maxFrame+4)
	if n, err := p.ReadFrame(buf); err != nil || n != 1 || buf[0] != 19 {
		t.Errorf("first read after the flush: %v %v, want the frame read after it", buf[:n], err)
	}
	if got := p.out.flushed.Load(); got != 3 {
		t.Errorf("egress frames lost to the flush: %d counted, want 3", got)
	}
	if got := p.in.flushed.Load(); got != 2 {
		t.Errorf("ingress frames lost to the flush: %d counted, want 2", got)
	}
}

// TestSetLinkLosesFramesInFlight: a frame held in a delay line when its
// link fails is lost and counted (rx_link_down on the switch's port), as
// in the simulator, not handed to the element after the failure.
func TestSetLinkLosesFramesInFlight(t *testing.T) {
	needRoot(t)
	needTool(t, "ping")
	var fabrics []*testFabric
	l := upLab(t, star(t, 2), "learn", Options{Registry: testRegistry(t, &fabrics), Delay: 2 * time.Second})
	s1, _ := l.node("s1")
	var port int
	for _, lk := range l.Status().Links {
		if lk.A == "s1" && lk.B == "h1" {
			port = lk.APort
		} else if lk.B == "s1" && lk.A == "h1" {
			port = lk.BPort
		}
	}
	dp, ok := s1.run.ios[port-1].(*delayedPort)
	if !ok || dp.in == nil {
		t.Fatalf("s1 port %d toward h1 is no delayed port with an ingress line", port)
	}
	cmd := exec.Command("ping", "-c", "1", "-W", "30", "10.0.0.2")
	if err := l.Start("h1", cmd); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	held := func() bool { dp.in.mu.Lock(); defer dp.in.mu.Unlock(); return len(dp.in.q) > 0 }
	if !waitUntil(held) {
		t.Fatal("h1's ARP request never reached s1's delay line")
	}
	if err := l.SetLink("h1", "s1", false); err != nil {
		t.Fatal(err)
	}
	lost := func() bool {
		for _, n := range l.Status().Nodes {
			for _, p := range n.Ports {
				if n.Name == "s1" && int(p.Port) == port && p.Drops["rx_link_down"] > 0 {
					return true
				}
			}
		}
		return false
	}
	if !waitUntil(lost) {
		t.Fatal("the frame in flight when the link failed is not counted as lost (rx_link_down)")
	}
}

// TestDelayedReaderNoStallOnOversize: a frame too large for the port (or
// a runt) is counted and the next one read at once, as the runner's own
// reader does on an undelayed port. The delayed port's reader slept 10 ms
// after each, as after a socket error, so a few jumbo frames from a host
// stalled the port's reads (and the socket buffer overflowed meanwhile)
// only when the link had a delay.
func TestDelayedReaderNoStallOnOversize(t *testing.T) {
	in := newFakeIO()
	p := newDelayedPort(in, MinDelay, true)
	defer p.Close()
	const oversize = 8
	t0 := time.Now()
	for range oversize {
		in.in <- make([]byte, maxFrame+1)
	}
	in.in <- []byte{7}
	buf := make([]byte, maxFrame+4)
	for i := range oversize {
		if _, err := p.ReadFrame(buf); !errors.Is(err, errOversize) {
			t.Fatalf("read %d: %v, want errOversize", i, err)
		}
	}
	if n, err := p.ReadFrame(buf); err != nil || n != 1 || buf[0] != 7 {
		t.Fatalf("read after the oversize frames: %v %v, want the 1-byte frame", buf[:n], err)
	}
	// Without stalls: the delay and some scheduling; with them, 80 ms.
	if el := time.Since(t0); el >= oversize*10*time.Millisecond*3/4 {
		t.Errorf("the frame after %d oversize ones took %v to come through: the reader stalled after each", oversize, el)
	}
}

// TestSetLinkDelayedPortRefusesWhileDown: between a link's failure and its
// repair, a delayed port takes no frame, as the down interface takes none
// (a write fails with ENETDOWN, counted tx_link_down). The element learns
// of the failure a moment after the interfaces go down, and what it sent
// meanwhile was queued behind the flush and written to the far end after
// a repair that came within the delay, as if the link had carried it.
func TestSetLinkDelayedPortRefusesWhileDown(t *testing.T) {
	needRoot(t)
	var fabrics []*testFabric
	l := upLab(t, star(t, 2), "learn", Options{Registry: testRegistry(t, &fabrics), Delay: 2 * time.Second})
	s1, _ := l.node("s1")
	var port int
	for _, lk := range l.Status().Links {
		if lk.A == "s1" && lk.B == "h1" {
			port = lk.APort
		} else if lk.B == "s1" && lk.A == "h1" {
			port = lk.BPort
		}
	}
	dp, ok := s1.run.ios[port-1].(*delayedPort)
	if !ok {
		t.Fatalf("s1 port %d toward h1 is no delayed port", port)
	}
	if err := l.SetLink("h1", "s1", false); err != nil {
		t.Fatal(err)
	}
	// A frame s1's element sends before it is told (its Send writes to
	// the port while the runner still has the port up).
	frame := make([]byte, 60)
	copy(frame, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	if err := dp.WriteFrame(frame); !errors.Is(err, unix.ENETDOWN) {
		t.Errorf("a write to the delayed port of a failed link: %v, want ENETDOWN", err)
	}
	dp.out.mu.Lock()
	held := len(dp.out.q)
	dp.out.mu.Unlock()
	if held != 0 {
		t.Errorf("the failed link's delay line holds %d frames, to be written after a repair", held)
	}
	if err := l.SetLink("h1", "s1", true); err != nil {
		t.Fatal(err)
	}
	if err := dp.WriteFrame(frame); err != nil {
		t.Errorf("a write to the delayed port of the repaired link: %v", err)
	}
}

// TestCheckSchemeRefusesWhatBuildRefuses: CheckScheme, which up runs
// before it starts a daemon (bad input, exit 2), refuses what Up's build
// refuses once it has the elements: a delay on a link whose two ends the
// kernel forwards (here two plain hosts cabled together under stp), and a
// switch the scheme runs nothing on. Both passed it, and the daemon
// failed (exit 1).
func TestCheckSchemeRefusesWhatBuildRefuses(t *testing.T) {
	b := topo.NewBuilder("hostcable")
	s := b.AddNode("s1", topo.Switch)
	h1, h2 := b.AddNode("h1", topo.Host), b.AddNode("h2", topo.Host)
	b.Connect(h1, s)
	b.Connect(h2, s)
	b.Connect(h1, h2)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	err = CheckScheme(g, "stp", Options{Delay: 5 * time.Millisecond})
	if !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), "link h1-h2") {
		t.Errorf("CheckScheme, delay on a host-to-host link: %v, want ErrBadOption naming h1-h2", err)
	}
	if err := CheckScheme(g, "stp", Options{}); err != nil {
		t.Errorf("CheckScheme without a delay: %v", err)
	}
	if err := CheckScheme(star(t, 2), "stp", Options{Delay: 5 * time.Millisecond}); err != nil {
		t.Errorf("CheckScheme, delay on switch links: %v", err)
	}
	r := &scheme.Registry{}
	if err := r.Register(scheme.Scheme{Name: "none", New: func(*topo.Graph, scheme.Options) (scheme.Fabric, error) { return &readyAfter{}, nil }}); err != nil {
		t.Fatal(err)
	}
	if err := CheckScheme(star(t, 1), "none", Options{Registry: r}); !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), `runs nothing on switch "s1"`) {
		t.Errorf("CheckScheme, nothing on the switch: %v, want ErrBadOption", err)
	}
}
