package emu

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Tests from a third mutation sweep of the package, aimed at what the
// first two left loose: the uptime a status reports, the error of a wait
// for a listener, the bounds of the token bucket's clamps and of the
// slowest rate, the read limits of a TAP, a bare bridge dump message, a
// short /proc stat line, the order Labs lists labs in, the engine's bound
// on a stuck element, a received frame's capacity, a packet port's
// buffers, outgoing filter and statistics, the offload switches, socket
// drops that accumulate across status reads, a kernel bridge port's
// status, a daemon's error text, and a scheme that runs nothing on a
// switch. Each pins an outcome that a mutant changed without failing the
// earlier tests. Those that need root make
// namespaces and state directories with the test prefix only, bound their
// time and clean up after themselves.

// Uptime is rounded to the millisecond, not to the second: a lab up for
// 1.234 s reports at least that, in whole milliseconds.
func TestStatusUptimeMillis(t *testing.T) {
	l := recordLab(t, 0)
	l.start = time.Now().Add(-1234 * time.Millisecond)
	st := l.Status()
	d, err := time.ParseDuration(st.Uptime)
	if err != nil || d < 1234*time.Millisecond || d%time.Millisecond != 0 {
		t.Errorf("uptime %q (%v): want at least 1.234s in whole milliseconds", st.Uptime, err)
	}
}

// WaitListening gives up when its context ends, naming the node and the
// port it waited for, and wraps the context's error.
func TestWaitListeningCancelled(t *testing.T) {
	l := recordLab(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := l.WaitListening(ctx, "h1", 5201)
	if !errors.Is(err, context.Canceled) || err.Error() != "emu: h1: nothing listens on TCP port 5201: context canceled" {
		t.Errorf("WaitListening after cancel: %v", err)
	}
}

// The engine waits 10 s for a stuck element before it gives up on it, as
// docs/emulator.md says (tests shorten it; this is the shipped value).
func TestStopWaitDefault(t *testing.T) {
	if stopWait != 10*time.Second {
		t.Errorf("stopWait = %v, want 10s", stopWait)
	}
}

// The clamps of the token bucket take effect exactly past their bounds:
// a bucket between 2^29 and 2^30 bytes and a queue between 2^30 and 2^31
// bytes are kept as computed.
func TestTBFClampBounds(t *testing.T) {
	for _, c := range []struct {
		rate         int64
		bps          uint64
		burst, limit uint32
	}{
		{6_400_000_000_000, 800_000_000_000, 800_000_000, 1 << 31},
		{560_000_000_000, 70_000_000_000, 70_000_000, 1_400_000_000 + 70_000_000},
	} {
		bps, burst, limit := tbfParams(c.rate)
		if bps != c.bps || burst != c.burst || limit != c.limit {
			t.Errorf("tbfParams(%d) = %d, %d, %d; want %d, %d, %d", c.rate, bps, burst, limit, c.bps, c.burst, c.limit)
		}
	}
}

// Rates below 1 kb/s are refused, as docs/emulator.md says: the bound is
// 1000 b/s itself (the earlier test reads it from the constant).
func TestMinShapedRateIs1k(t *testing.T) {
	g := star(t, 1)
	if err := CheckScheme(g, KernelBridge, Options{Rate: 999}); !errors.Is(err, ErrBadOption) {
		t.Errorf("rate 999: %v, want ErrBadOption", err)
	}
	if err := CheckScheme(g, KernelBridge, Options{Rate: 1000}); err != nil {
		t.Errorf("rate 1000: %v", err)
	}
}

// A frame is read whole up to 9216+22 bytes (docs/emulator.md: rx_oversize
// is larger than that); the read buffer has 4 bytes of tag room beyond.
func TestMaxFrameSize(t *testing.T) {
	bp := framePool.Get().(*[]byte)
	defer framePool.Put(bp)
	if maxFrame != 9238 || len(*bp) != 9242 {
		t.Errorf("maxFrame %d, read buffer %d; want 9238 and 9242", maxFrame, len(*bp))
	}
}

// A bridge dump message of a bare ifinfomsg (no attributes) is no port
// and no error.
func TestBridgeDumpBareMessage(t *testing.T) {
	got, err := parseBridgeDump([][]byte{make([]byte, unix.SizeofIfInfomsg)})
	if err != nil || len(got) != 0 {
		t.Errorf("bare ifinfomsg: %v, %v; want no ports, no error", got, err)
	}
}

// A /proc stat line one field short of the start time is an error, not a
// read past the fields.
func TestParseProcStatOneShort(t *testing.T) {
	line := "77 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18"
	if start, state, err := parseProcStat([]byte(line)); err == nil || start != 0 || state != 0 {
		t.Errorf("19 fields: %d %q %v, want an error", start, state, err)
	}
}

// A packet port gets 4 MiB of socket buffer each way, which the kernel
// doubles: room for bursts that the default (about 200 KiB) lacks.
func TestPacketPortBuffers(t *testing.T) {
	h, _ := testNS(t, "buf")
	err := inNS(h, func() error {
		lo, err := linkByNameHere("lo")
		if err != nil {
			return err
		}
		pp, err := openPacketPort(lo.Attrs().Index)
		if err != nil {
			return err
		}
		defer pp.Close()
		rcv, err := unix.GetsockoptInt(pp.fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
		if err != nil {
			return err
		}
		snd, err := unix.GetsockoptInt(pp.fd, unix.SOL_SOCKET, unix.SO_SNDBUF)
		if err != nil {
			return err
		}
		if rcv != 8<<20 || snd != 8<<20 {
			t.Errorf("socket buffers rcv %d snd %d, want %d each", rcv, snd, 8<<20)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Labs lists the labs sorted by name, whatever order the state
// directory and the namespaces come in.
func TestLabsSorted(t *testing.T) {
	needRoot(t)
	base := labName()
	var names []string
	for _, s := range []string{"q", "c", "x", "a", "m", "f", "z", "b"} {
		names = append(names, base+s)
	}
	t.Cleanup(func() {
		for _, n := range names {
			os.RemoveAll(LabDir(n))
		}
	})
	for _, n := range names {
		if err := os.MkdirAll(LabDir(n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	labs, err := Labs()
	if err != nil {
		t.Fatal(err)
	}
	var ours []string
	for _, n := range labs {
		if strings.HasPrefix(n, base) {
			ours = append(ours, n)
		}
	}
	want := slices.Clone(names)
	slices.Sort(want)
	if !slices.Equal(ours, want) || !slices.IsSorted(labs) {
		t.Errorf("Labs() lists %v, want %v, all sorted", ours, want)
	}
}

// vethPairHere makes veth pair a-b in the calling thread's namespace, sets
// both ends up and waits until both are operationally up (a frame sent
// before the peer has carrier is dropped), and returns their ifindexes.
func vethPairHere(a, b string) (ia, ib int, err error) {
	if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a}, PeerName: b}); err != nil {
		return 0, 0, err
	}
	var idx [2]int
	for i, name := range []string{a, b} {
		lk, err := linkByNameHere(name)
		if err != nil {
			return 0, 0, err
		}
		if err := linkUpHere(lk); err != nil {
			return 0, 0, err
		}
		idx[i] = lk.Attrs().Index
	}
	up := waitUntil(func() bool {
		for _, name := range []string{a, b} {
			if lk, err := linkByNameHere(name); err != nil || lk.Attrs().OperState != netlink.OperUp {
				return false
			}
		}
		return true
	})
	if !up {
		return 0, 0, errors.New("veth pair not up")
	}
	return idx[0], idx[1], nil
}

// A packet port never reads frames sent out of its interface (here by
// another socket on it: the element's own sends never loop back anyway),
// counts what it received in its kernel statistics (packets, then drops),
// and TX checksum offload, on by default on a veth, reads as on before
// offloadsOff and off after. offloadsOff tolerates a device that cannot
// change an offload (lo has no TX checksum to turn off: EOPNOTSUPP).
func TestPacketPortOutgoingAndStats(t *testing.T) {
	h, _ := testNS(t, "own")
	bp := framePool.Get().(*[]byte)
	defer framePool.Put(bp)
	err := inNS(h, func() error {
		ia, ib, err := vethPairHere("va", "vb")
		if err != nil {
			return err
		}
		if on, err := txChecksum("va"); err != nil || !on {
			t.Errorf("fresh veth: tx checksum %v, %v; want on", on, err)
		}
		if on, err := activeFeatures("va", isSegmentation); err != nil || len(on) == 0 {
			t.Errorf("fresh veth: active segmentation offloads %v, %v; want some", on, err)
		}
		if err := offloadsOff("va"); err != nil {
			return err
		}
		if on, err := txChecksum("va"); err != nil || on {
			t.Errorf("after offloadsOff: tx checksum %v, %v; want off", on, err)
		}
		// Every one, by name: the legacy TSO switch left Linux 6.18's
		// tx-tcp-accecn-segmentation on, and active (and SCTP's, and
		// the tunnels').
		// A predicate of its own, wider than offloadsOff's, so that a
		// narrower one there (tx-tcp* only, as before) fails here.
		anySeg := func(f string) bool { return strings.Contains(f, "segmentation") || strings.HasPrefix(f, "tx-gso") }
		if on, err := activeFeatures("va", anySeg); err != nil || len(on) != 0 {
			t.Errorf("after offloadsOff: active segmentation offloads %v, %v; want none", on, err)
		}
		if err := offloadsOff("lo"); err != nil {
			t.Errorf("offloadsOff(lo) = %v, want nil", err)
		}
		var pp [3]*packetPort // two on va, one on vb
		for i, idx := range []int{ia, ia, ib} {
			if pp[i], err = openPacketPort(idx); err != nil {
				return err
			}
			defer pp[i].Close()
		}
		if err := pp[0].WriteFrame(testFrame(60)); err != nil {
			return err
		}
		if n, err := readWithin(func() (int, error) { return pp[2].ReadFrame(*bp) }, pp[2]); err != nil || n != 60 {
			t.Errorf("peer read %d, %v; want the 60-byte frame", n, err)
		}
		if err := pp[2].WriteFrame(testFrame(61)); err != nil {
			return err
		}
		if n, err := readWithin(func() (int, error) { return pp[1].ReadFrame(*bp) }, pp[1]); err != nil || n != 61 {
			t.Errorf("first read on va after 60 bytes out and 61 in: %d, %v; want 61 (never an outgoing frame)", n, err)
		}
		if packets, drops, err := pp[1].stats(); err != nil || packets != 1 || drops != 0 {
			t.Errorf("stats = %d packets, %d drops, %v; want 1, 0", packets, drops, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A TAP frame one byte past the read limit is an oversize drop, never a
// frame handed on cut; the next frame reads whole.
func TestTAPOneOver(t *testing.T) {
	h, _ := testNS(t, "tap1")
	bp := framePool.Get().(*[]byte)
	defer framePool.Put(bp)
	limit := len(*bp) - 4
	err := inNS(h, func() error {
		tap, host, closeBoth, err := jumboTAP("tp0")
		if err != nil {
			return err
		}
		defer closeBoth()
		for _, c := range []struct {
			n  int
			ok bool
		}{{limit + 1, false}, {60, true}} {
			if err := host.WriteFrame(testFrame(c.n)); err != nil {
				return err
			}
			n, err := readWithin(func() (int, error) { return tap.ReadFrame(*bp) }, tap)
			if c.ok && (err != nil || n != c.n) || !c.ok && !errors.Is(err, errOversize) {
				t.Errorf("TAP, %d-byte frame: n=%d err=%v, want ok=%v", c.n, n, err, c.ok)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The error a failed daemon reports reaches the caller as the daemon's
// own error, without the pipe protocol's "error: " prefix.
func TestSpawnDaemonErrorText(t *testing.T) {
	needRoot(t)
	name := labName()
	t.Setenv(daemonEnv, name)
	t.Setenv("EMU_TEST_DAEMON_FAIL", "1")
	t.Cleanup(func() {
		if _, err := Cleanup(name, 5*time.Second); err != nil && !errors.Is(err, ErrNoLab) {
			t.Errorf("cleanup: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := SpawnDaemon(ctx, name, []string{os.Args[0], "-test.run=^$"})
	if err == nil || !strings.HasPrefix(err.Error(), "emu: ") || !strings.Contains(err.Error(), "unknown scheme") {
		t.Errorf("SpawnDaemon = %v, want the daemon's own error (emu: ... unknown scheme ...)", err)
	}
}

// Up refuses a scheme that runs nothing on a switch as a bad option,
// naming the scheme and the switch, and leaves nothing behind.
func TestUpSwitchWithoutElement(t *testing.T) {
	needRoot(t)
	r := &scheme.Registry{}
	err := r.Register(scheme.Scheme{Name: "none", New: func(*topo.Graph, scheme.Options) (scheme.Fabric, error) { return &readyAfter{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	name := labName()
	t.Cleanup(func() {
		if _, err := Cleanup(name, 5*time.Second); err != nil && !errors.Is(err, ErrNoLab) {
			t.Errorf("cleanup: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := Up(ctx, star(t, 1), "none", Options{Name: name, Registry: r, Log: quietLog()})
	if err == nil {
		l.Down()
		t.Fatal("Up with nothing on the switch succeeded")
	}
	if !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), `scheme none runs nothing on switch "s1"`) {
		t.Errorf("Up = %v, want ErrBadOption naming the scheme and s1", err)
	}
	if left, _ := listNS(Prefix(name)); len(left) > 0 {
		t.Errorf("namespaces left: %v", left)
	}
	if _, err := os.Stat(LabDir(name)); !os.IsNotExist(err) {
		t.Errorf("%s left: %v", LabDir(name), err)
	}
}

// A packet port's kernel drops accumulate across status reads
// (PACKET_STATISTICS resets on read): a port whose socket stays full
// reports the first batch's drops plus every frame of the second.
func TestStatusSocketDropsAccumulate(t *testing.T) {
	h, _ := testNS(t, "drops")
	l := recordLab(t, 0)
	s1 := l.nodes[1]
	var tx *packetPort
	err := inNS(h, func() error {
		ia, ib, err := vethPairHere("eth2", "vb")
		if err != nil {
			return err
		}
		rx, err := openPacketPort(ia)
		if err != nil {
			return err
		}
		s1.pports = []*packetPort{nil, rx}
		t.Cleanup(func() { rx.Close() })
		// The least receive buffer: a few frames fit, the rest drop.
		if err := unix.SetsockoptInt(rx.fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 1); err != nil {
			return err
		}
		tx, err = openPacketPort(ib)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	s1.run.ports = []element.PortInfo{{Port: 1}, {Port: 2, Name: "eth2", Up: true}}
	s1.run.stats = make([]portStats, 2)
	s1.run.up = make([]atomic.Bool, 2)
	drops := func() uint64 {
		for _, p := range l.Status().Nodes[1].Ports {
			if p.Port == 2 {
				return p.Drops["rx_socket_full"]
			}
		}
		t.Fatal("no port 2 in status")
		return 0
	}
	send := func(n int) {
		for range n {
			if err := tx.WriteFrame(testFrame(60)); err != nil {
				t.Fatal(err)
			}
		}
	}
	send(200)
	first := drops()
	send(200)
	if second := drops(); first == 0 || second != first+200 {
		t.Errorf("rx_socket_full after 200 then 200 more frames into a full socket: %d then %d, want %d then %d", first, second, first, first+200)
	}
}

// A kernel bridge port's status: the element is the kernel bridge, the
// port's STP state is named, its link state follows SetLink, and a port
// that dropped nothing reports no drops.
func TestKernelBridgeStatus(t *testing.T) {
	needRoot(t)
	l := upLab(t, star(t, 1), KernelBridge, Options{Scheme: scheme.Options{Params: map[string]string{"stp": "off"}}, Log: quietLog()})
	port := func() (NodeStatus, PortStatus) {
		for _, n := range l.Status().Nodes {
			if n.Name == "s1" && len(n.Ports) == 1 {
				return n, n.Ports[0]
			}
		}
		t.Fatal("no s1 with one port in status")
		return NodeStatus{}, PortStatus{}
	}
	n, p := port()
	if n.Element != KernelBridge || p.STP != "forwarding" || !p.Up || p.Drops != nil {
		t.Errorf("s1: element %q, port %+v; want kernel-bridge, forwarding, up, no drops", n.Element, p)
	}
	if err := l.SetLink("h1", "s1", false); err != nil {
		t.Fatal(err)
	}
	if _, p := port(); p.Up {
		t.Errorf("s1 port after the link failed: %+v, want down", p)
	}
}

// capRec records the length and capacity of each frame it receives.
type capRec struct {
	linkRec
	caps []int
}

func (c *capRec) Receive(p element.Port, f []byte) {
	c.mu.Lock()
	c.caps = append(c.caps, len(f), cap(f))
	c.mu.Unlock()
}

// A received frame's capacity ends at its length: an element that appends
// to it gets a copy, never a write into the pooled buffer past the frame.
func TestReceiveFrameCapacity(t *testing.T) {
	el := &capRec{}
	in := newFakeIO()
	r := newRunner("s1", el, []element.PortInfo{{Port: 1, Up: true}}, []frameIO{in}, time.Now(), 1, quietLog())
	r.run()
	defer r.stop()
	in.in <- make([]byte, 60)
	waitUntil(func() bool { return r.stats[0].rxFrames.Load() == 1 })
	r.do(func() {}, waitLimit)
	el.mu.Lock()
	defer el.mu.Unlock()
	if !slices.Equal(el.caps, []int{60, 60}) {
		t.Errorf("len, cap of the frame = %v, want [60 60]", el.caps)
	}
}

// TestReadyTimeoutFollowsSchemeTimers: the default wait for readiness is
// 60 s plus what the spanning tree's timers take, for the stp scheme as
// for the kernel bridge: with forward_delay 30 s and max age 40 s (valid
// 802.1D values) a fixed 60 s gave up before the tree could forward. A
// shorter --timeout fails saying why.
func TestReadyTimeoutFollowsSchemeTimers(t *testing.T) {
	g := star(t, 2)
	for _, c := range []struct {
		scheme string
		params map[string]string
		given  time.Duration
		want   time.Duration
	}{
		{"stp", map[string]string{"forward_delay": "30", "max_age": "40"}, 0, 160 * time.Second},
		{"stp", nil, 0, 110 * time.Second},
		{"stp", map[string]string{"stp": "off"}, 0, 60 * time.Second},
		{"stp", nil, 5 * time.Second, 5 * time.Second},
		{KernelBridge, nil, 0, 110 * time.Second},
		{KernelBridge, map[string]string{"stp": "off"}, 0, 60 * time.Second},
		{"dumbnet", nil, 0, 60 * time.Second},
	} {
		kb, fab, err := buildScheme(g, c.scheme, Options{Scheme: scheme.Options{Params: c.params}})
		if err != nil {
			t.Fatal(err)
		}
		l := &Lab{kb: kb, fabric: fab, opts: Options{ReadyTimeout: c.given}}
		if got, _ := l.readyTimeout(); got != c.want {
			t.Errorf("%s %v, --timeout %v: waits %v, want %v", c.scheme, c.params, c.given, got, c.want)
		}
	}
	needRoot(t)
	name := labName()
	cleanupLab(t, name)
	_, err := Up(context.Background(), g, "stp", Options{Name: name, ReadyTimeout: time.Second, WaitReach: true})
	if !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "(the scheme's own timers take up to 50s before it forwards: give --timeout above that)") {
		t.Errorf("stp with --timeout 1s: %v", err)
	}
}
