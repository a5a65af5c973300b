package emu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// testNS makes a namespace with the test prefix for one test, removes it
// afterwards, and returns a handle to it and its name.
func testNS(t *testing.T, suffix string) (netns.NsHandle, string) {
	t.Helper()
	needRoot(t)
	name := Prefix(labName()) + suffix
	h, err := createNS(name, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.Close()
		if err := deleteNS(name); err != nil {
			t.Errorf("remove %s: %v", name, err)
		}
	})
	return h, name
}

// jumboTAP opens TAP name in the current namespace with a 16,000-byte MTU,
// brings it up and opens a packet socket on it: the two ends a test
// writes oversize frames between. closeBoth closes both.
func jumboTAP(name string) (tap *tapPort, pp *packetPort, closeBoth func(), err error) {
	if tap, err = openTAP(name); err != nil {
		return nil, nil, nil, err
	}
	lk, err := linkByNameHere(name)
	if err == nil {
		err = netlink.LinkSetMTU(lk, 16000)
	}
	if err == nil {
		err = linkUpHere(lk)
	}
	if err == nil {
		pp, err = openPacketPort(lk.Attrs().Index)
	}
	if err != nil {
		tap.Close()
		return nil, nil, nil, err
	}
	return tap, pp, func() { pp.Close(); tap.Close() }, nil
}

// TestTAPOversize: a frame the host's kernel sends on the TAP that is
// larger than the read buffer (the host raised eth0's MTU) must be a
// counted oversize drop: tun reports the frame's full length after copying
// only what fits, so it was handed on truncated, with a length beyond the
// buffer (a panic in the runner's slice).
func TestTAPOversize(t *testing.T) {
	h, _ := testNS(t, "tap")
	err := inNS(h, func() error {
		tap, pp, closeBoth, err := jumboTAP("eth0")
		if err != nil {
			return err
		}
		defer closeBoth()
		mk := func(n int) []byte {
			f := make([]byte, n)
			copy(f, []byte{0x02, 0xef, 0, 0, 0, 9, 0x02, 0xef, 0, 0, 0, 8, 0x88, 0xb5})
			for i := 14; i < n; i++ {
				f[i] = byte(i)
			}
			return f
		}
		big, small := mk(12000), mk(9000)
		for _, f := range [][]byte{big, small} {
			if err := pp.WriteFrame(f); err != nil {
				return err
			}
		}
		bp := framePool.Get().(*[]byte)
		defer framePool.Put(bp)
		read := func() (int, error) {
			done := make(chan struct{})
			var n int
			var err error
			go func() { n, err = tap.ReadFrame(*bp); close(done) }()
			select {
			case <-done:
				return n, err
			case <-time.After(5 * time.Second):
				tap.Close()
				<-done
				return 0, errors.New("no frame on the TAP")
			}
		}
		// The kernel may send other frames on the TAP (none with IPv6
		// off); skip anything that is not ours.
		for {
			n, err := read()
			if err == nil && n <= len(*bp) && n > 12 && (*bp)[12] != 0x88 {
				continue
			}
			if !errors.Is(err, errOversize) {
				t.Errorf("a 12000-byte frame read into a %d-byte buffer: n=%d err=%v, want errOversize", len(*bp), n, err)
				if n <= len(*bp) {
					break // the next read is the small frame
				}
			}
			break
		}
		n, err := read()
		if err != nil || !bytes.Equal((*bp)[:n], small) {
			t.Errorf("the next frame: n=%d err=%v, want the 9000-byte frame intact", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// sender sends frame on port 1 every 20 ms; the element on the other end
// of the link records what arrives.
type sender struct {
	frame []byte
	tagger
}

func (s *sender) Attach(env element.Env, _ []element.PortInfo) {
	s.env = env
	if s.frame != nil {
		var tick func()
		tick = func() {
			env.Send(1, s.frame)
			env.After(20*element.Millisecond, tick)
		}
		env.After(0, tick)
	}
}

// pairLab runs el1 on s1 and el2 on s2, joined by one link.
func pairLab(t *testing.T, el1, el2 element.Element, opts Options) *Lab {
	b := topo.NewBuilder("pair")
	s1, s2 := b.AddNode("s1", topo.Switch), b.AddNode("s2", topo.Switch)
	b.Connect(s1, s2)
	g, _ := b.Graph()
	fab := tagFabric{s1: el1, s2: el2}
	r := &scheme.Registry{}
	r.Register(scheme.Scheme{Name: "pair", New: func(*topo.Graph, scheme.Options) (scheme.Fabric, error) { return fab, nil }})
	opts.Registry = r
	return upLab(t, g, "pair", opts)
}

// TestRateLimitJumbo: the fabric's MTU is 9000, so a shaped link must pass
// a full jumbo frame; tbf drops (silently, for the emulator) every frame
// larger than its bucket, which was 4 x 1514 bytes below 48 Mb/s. At the
// slowest rate too: given the bucket as a time alone, the kernel caps it
// at 2^32-1 ns of traffic, and at 1 kb/s dropped every frame over 536
// bytes (below 17 kb/s every jumbo frame).
func TestRateLimitJumbo(t *testing.T) {
	needRoot(t)
	jumbo := make([]byte, FabricMTU+14)
	copy(jumbo, bigFrame[:14])
	for i := 14; i < len(jumbo); i++ {
		jumbo[i] = byte(i)
	}
	for _, rate := range []int64{minShapedRate, 10_000, 10_000_000} {
		t.Run(fmt.Sprint(rate), func(t *testing.T) {
			rx := &sender{}
			pairLab(t, &sender{frame: jumbo}, rx, Options{Rate: rate})
			var first []byte
			waitUntil(func() bool {
				rx.mu.Lock()
				defer rx.mu.Unlock()
				if len(rx.got) > 0 {
					first = rx.got[0]
				}
				return first != nil
			})
			if first == nil {
				t.Fatalf("no jumbo frame crossed a %d b/s link", rate)
			}
			if !bytes.Equal(first, jumbo) {
				t.Fatalf("a different frame arrived")
			}
		})
	}
}

func TestTBFParams(t *testing.T) {
	for _, rate := range []int64{1_000, 1_000_000, 10_000_000, 50_000_000, 72_000_000, 73_000_000, 1_000_000_000, 400_000_000_000} {
		bps, burst, limit := tbfParams(rate)
		if bps != uint64(rate)/8 {
			t.Errorf("rate %d: %d bytes/s", rate, bps)
		}
		// What the kernel makes of it: the bucket as a time in ticks,
		// back to bytes.
		if eff := netlink.Xmitsize(bps, netlink.Xmittime(bps, burst)); eff < FabricMTU+14+4 {
			t.Errorf("rate %d: bucket %d bytes (%d for the kernel) holds no jumbo frame", rate, burst, eff)
		}
		if limit < burst {
			t.Errorf("rate %d: queue limit %d below the bucket %d", rate, limit, burst)
		}
	}
}

// TestTCPThroughElements: TCP (whose checksums the kernel leaves to the
// NIC when it may) must cross an element on AF_PACKET ports and a host
// agent's TAP; ping alone proves nothing, ICMP is always summed in
// software. And TX checksum offload is off on every interface.
func TestTCPThroughElements(t *testing.T) {
	needRoot(t)
	needTool(t, "iperf3")
	for _, sch := range []string{"learn", "learn-agent"} {
		t.Run(sch, func(t *testing.T) {
			var fabrics []*testFabric
			l := upLab(t, star(t, 2), sch, Options{Registry: testRegistry(t, &fabrics)})
			for _, ln := range l.nodes {
				names := append([]string(nil), ln.ifnames...)
				if ln.agent {
					names = append(names, "eth0")
				}
				inNS(ln.h, func() error {
					for _, name := range names {
						if name == "" {
							continue
						}
						if on, err := txChecksum(name); err != nil || on {
							t.Errorf("%s %s: TX checksum offload on=%v, %v", ln.name, name, on, err)
						}
					}
					return nil
				})
			}
			if mbps := iperfTCP(t, l, "h1", "h2", "10.0.0.2", 1); mbps <= 0 {
				t.Fatalf("TCP through %s: %.1f Mb/s", sch, mbps)
			}
		})
	}
}

// TestLinkDownCountsNoDrop: a link failure is not a lost frame. The
// kernel reports it to a bound AF_PACKET socket once, as ENETDOWN from
// recvmsg; the reader counted it as rx_error (and slept).
func TestLinkDownCountsNoDrop(t *testing.T) {
	needRoot(t)
	var fabrics []*testFabric
	l := upLab(t, star(t, 2), "learn", Options{Registry: testRegistry(t, &fabrics)})
	if err := l.SetLink("h2", "s1", false); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if err := l.SetLink("h2", "s1", true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	for _, n := range l.Status().Nodes {
		for _, p := range n.Ports {
			if len(p.Drops) > 0 {
				t.Errorf("%s port %d: drops %v after a link failure and repair", n.Name, p.Port, p.Drops)
			}
		}
	}
}

// errIO is a frameIO whose reads return the errors (or frames) queued in.
type errIO struct {
	fakeIO
	errs chan error
}

func (e *errIO) ReadFrame(buf []byte) (int, error) {
	select {
	case err := <-e.errs:
		return 0, err
	case fr := <-e.in:
		return copy(buf, fr), nil
	case <-e.closed:
		return 0, os.ErrClosed
	}
}

// TestRunnerErrorAccounting: a link going down (ENETDOWN on read or
// write) is no rx_error or tx_error; a runt is a runt.
func TestRunnerErrorAccounting(t *testing.T) {
	p1 := &errIO{fakeIO: *newFakeIO(), errs: make(chan error, 4)}
	p2 := newFakeIO()
	ports := []element.PortInfo{{Port: 1, Up: true}, {Port: 2, Up: true}}
	rec := &recorder{}
	r := newRunner("s1", rec, ports, []frameIO{p1, p2}, time.Now(), 1, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.run()
	defer r.stop()
	p1.errs <- unix.ENETDOWN
	p1.errs <- errRunt
	p2.mu.Lock()
	p2.werr = unix.ENETDOWN
	p2.mu.Unlock()
	p1.in <- make([]byte, 60)
	s1, s2 := &r.stats[0], &r.stats[1]
	// The reader may take the frame before the queued errors (select picks
	// at random among ready cases): wait for the runt too, which comes
	// after ENETDOWN, and for the send on the down port.
	waitUntil(func() bool {
		return s1.rxFrames.Load() >= 1 && s1.rxDropRunt.Load() >= 1 && s2.txDropDown.Load() >= 1
	})
	r.do(func() {}, waitLimit)
	if s1.rxErrors.Load() != 0 || s1.rxDropRunt.Load() != 1 || s1.rxFrames.Load() != 1 {
		t.Errorf("port 1: rx_error %d (want 0), rx_runt %d (want 1), rx %d (want 1)", s1.rxErrors.Load(), s1.rxDropRunt.Load(), s1.rxFrames.Load())
	}
	if s2.txErrors.Load() != 0 || s2.txDropDown.Load() != 1 {
		t.Errorf("port 2: tx_error %d (want 0), tx_link_down %d (want 1)", s2.txErrors.Load(), s2.txDropDown.Load())
	}
}

// slowAgent relays like repeater but takes its time over frames from the
// host, so that the TAP's queue overflows.
type slowAgent struct{ repeater }

func (s *slowAgent) Receive(p element.Port, f []byte) {
	if p == 2 {
		time.Sleep(100 * time.Microsecond)
	}
	s.repeater.Receive(p, f)
}

type slowFabric struct{ g *topo.Graph }

func (f slowFabric) Element(n topo.NodeID) element.Element {
	if f.g.Node(n).Kind == topo.Switch {
		return &learningBridge{}
	}
	return &slowAgent{}
}

// TestTAPDropsCounted: every frame the host sends on its TAP is either
// received by the agent or counted as a drop (tun drops what does not fit
// its queue; those were counted nowhere).
func TestTAPDropsCounted(t *testing.T) {
	needRoot(t)
	g := star(t, 2)
	r := &scheme.Registry{}
	r.Register(scheme.Scheme{Name: "slow", New: func(g *topo.Graph, _ scheme.Options) (scheme.Fabric, error) { return slowFabric{g}, nil }})
	l := upLab(t, g, "slow", Options{Registry: r})
	h1, _ := g.Lookup("h1")
	ln := l.nodes[h1]
	frame := make([]byte, 60)
	copy(frame, []byte{0x02, 0xef, 0, 0, 0, 2, 0x02, 0xef, 0, 0, 0, 1, 0x88, 0xb5})
	const sent = 3000
	err := inNS(ln.h, func() error {
		lk, err := linkByNameHere("eth0")
		if err != nil {
			return err
		}
		pp, err := openPacketPort(lk.Attrs().Index)
		if err != nil {
			return err
		}
		defer pp.Close()
		for i := 0; i < sent; i++ {
			if err := pp.WriteFrame(frame); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var rx, drops uint64
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, n := range l.Status().Nodes {
			if n.Name != "h1" {
				continue
			}
			for _, p := range n.Ports {
				if p.Local {
					rx, drops = p.RxFrames, 0
					for _, v := range p.Drops {
						drops += v
					}
				}
			}
		}
		if rx+drops >= sent {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if rx+drops < sent {
		t.Fatalf("host sent %d frames on its TAP: the agent got %d, drops counted %d", sent, rx, drops)
	}
	t.Logf("agent got %d, drops %d", rx, drops)
}

// slowCounters takes longer to report its counters than Status waits.
type slowCounters struct{ recorder }

func (s *slowCounters) Counters() map[string]uint64 {
	time.Sleep(2500 * time.Millisecond)
	return map[string]uint64{"late": 1}
}

// TestStatusSlowCounters: when an element does not answer within Status's
// bound, its late answer must not be written into the node status Status
// already returned (a data race; run with -race).
func TestStatusSlowCounters(t *testing.T) {
	b := topo.NewBuilder("one")
	b.AddNode("s1", topo.Switch)
	g, _ := b.Graph()
	el := &slowCounters{}
	r := newRunner("s1", el, nil, nil, time.Now(), 1, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.run()
	defer r.stop()
	l := &Lab{name: "x", g: g, start: time.Now(), nodes: []*labNode{{name: "s1", kind: topo.Switch, el: el, run: r}}}
	st := l.Status()
	if c := st.Nodes[0].Counters; c != nil {
		t.Fatalf("counters %v from an element that did not answer", c)
	}
	time.Sleep(time.Second) // the late answer
	r.do(func() {}, time.Second)
}

// TestRateLimitTooSlow: a rate tbf cannot represent with a jumbo bucket
// (or at all: 0 bytes/s means no limit) is refused, not shaped wrong.
func TestRateLimitTooSlow(t *testing.T) {
	needRoot(t)
	for _, rate := range []int64{5, 100} {
		b := topo.NewBuilder("pair")
		b.Connect(b.AddNode("h1", topo.Host), b.AddNode("h2", topo.Host))
		g, _ := b.Graph()
		name := labName()
		l, err := Up(context.Background(), g, KernelBridge, Options{Name: name, Rate: rate})
		if err == nil {
			l.Down()
			t.Errorf("rate %d b/s: lab up", rate)
		} else if !errors.Is(err, ErrBadOption) {
			t.Errorf("rate %d b/s: %v, want ErrBadOption", rate, err)
		}
		if left, _ := listNS(Prefix(name)); len(left) > 0 {
			t.Errorf("namespaces left: %v", left)
		}
	}
}

// CheckScheme, what up runs before it spawns anything (exit 2 there),
// refuses a rate tbf cannot shape: the --rate override and, with
// RateLimit, a topology link's own rate.
func TestCheckSchemeRates(t *testing.T) {
	b := topo.NewBuilder("pair")
	b.ConnectPorts(topo.End{Node: b.AddNode("h1", topo.Host), Port: 1}, topo.End{Node: b.AddNode("h2", topo.Host), Port: 1}, 500, 0)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opts Options
		ok   bool
	}{
		{Options{Rate: 100}, false},
		{Options{RateLimit: true}, false}, // the link's own 500 b/s
		{Options{RateLimit: true, Rate: 1e6}, true},
		{Options{}, true}, // not shaped: the topology's rate is not used
	} {
		err := CheckScheme(g, KernelBridge, c.opts)
		if c.ok != (err == nil) || err != nil && !errors.Is(err, ErrBadOption) {
			t.Errorf("%+v: %v", c.opts, err)
		}
	}
}
