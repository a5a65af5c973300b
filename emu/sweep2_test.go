package emu

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Tests from a second mutation sweep of the package, aimed at the records
// a lab keeps and hands out (status, state, owner, the claim on a name),
// readiness, the bounds of frame reads, the per-namespace set-up, and the
// lab's plan as the kernel sees it: each pins an outcome that a mutant
// changed without failing the earlier tests. Pure tests come first; those
// that need root make namespaces with the test prefix only, bound their
// time and clean up after themselves.

// recordLab is a lab that was never built: host h1 on port 2 of switch
// s1, whose runner (never started) has made badPort bad-port sends.
func recordLab(t *testing.T, badPort uint64) *Lab {
	t.Helper()
	b := topo.NewBuilder("g1")
	h1 := b.AddNode("h1", topo.Host)
	s1 := b.AddNode("s1", topo.Switch)
	b.ConnectPorts(topo.End{Node: s1, Port: 2}, topo.End{Node: h1, Port: 1}, 123_000_000, 0)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	mac, ip, err := g.HostAddr(h1)
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner("s1", &recorder{}, nil, nil, time.Now(), 1, quietLog())
	r.badPort.Store(badPort)
	return &Lab{name: "x", scheme: "learn", g: g, start: time.Now(), links: []bool{true}, log: quietLog(),
		nodes: []*labNode{
			{id: h1, name: "h1", kind: topo.Host, ns: "ef-x-h1", ifnames: []string{"eth0"}, mac: mac, ip: ip},
			{id: s1, name: "s1", kind: topo.Switch, ns: "ef-x-s1", ifnames: []string{"", "eth2"}, el: r.el, run: r},
		}}
}

// Status and State: the topology falls back to the graph's name, only
// hosts have addresses, every bad-port send is counted, and each link is
// reported in its own orientation with its interfaces and rate.
func TestStatusAndStateRecords(t *testing.T) {
	l := recordLab(t, 2)
	st := l.Status()
	if st.Topology != "g1" || !st.Ready || st.NotReady != "" || st.Name != "x" || st.Scheme != "learn" {
		t.Errorf("status %+v: want topology g1 (the graph's name), ready", st)
	}
	h, s := st.Nodes[0], st.Nodes[1]
	if h.IP != "10.0.0.1/8" || h.MAC != "02:ef:00:00:00:01" || h.Namespace != "ef-x-h1" || h.Kind != topo.Host.String() {
		t.Errorf("host %+v", h)
	}
	if s.IP != "" || s.MAC != "" || len(s.Counters) != 1 || s.Counters["engine_tx_drop_bad_port"] != 2 {
		t.Errorf("switch %+v: want no address, 2 bad-port sends", s)
	}
	want := LinkStatus{A: "s1", APort: 2, AIf: "eth2", B: "h1", BPort: 1, BIf: "eth0", Up: true, Rate: 123_000_000}
	if len(st.Links) != 1 || st.Links[0] != want {
		t.Errorf("links %+v, want [%+v]", st.Links, want)
	}
	if c := recordLab(t, 1).Status().Nodes[1].Counters; c["engine_tx_drop_bad_port"] != 1 {
		t.Errorf("one bad-port send: counters %v", c)
	}
	l.fabric = &readyAfter{after: 1 << 30}
	if st := l.Status(); st.Ready || st.NotReady != "the scheme's fabric reports not ready" {
		t.Errorf("fabric not ready: status ready %v (%q)", st.Ready, st.NotReady)
	}
	l.fabric = nil
	l.opts.Topology = "star:2"
	if got := l.Status().Topology; got != "star:2" {
		t.Errorf("status topology %q, want the spec given", got)
	}
	l.opts.Topology = ""
	rec := l.State()
	wantNodes := []StateNode{{Name: "h1", Kind: topo.Host.String(), Namespace: "ef-x-h1", IP: "10.0.0.1/8"}, {Name: "s1", Kind: topo.Switch.String(), Namespace: "ef-x-s1"}}
	if rec.Name != "x" || rec.Scheme != "learn" || rec.Topology != "g1" || rec.Prefix != "ef-x-" || rec.Pid != 0 ||
		len(rec.Nodes) != 2 || rec.Nodes[0] != wantNodes[0] || rec.Nodes[1] != wantNodes[1] ||
		len(rec.Links) != 1 || rec.Links[0] != (StateLink{A: "s1", AIf: "eth2", B: "h1", BIf: "eth0"}) {
		t.Errorf("state %+v", rec)
	}
}

// The control socket's handler: status carries the status and this
// process's pid; down stops the daemon; a bad request stops nothing.
func TestHandleRequests(t *testing.T) {
	l := recordLab(t, 0)
	stops := 0
	stop := func() { stops++ }
	r := handle(l, []byte(`{"op":"status"}`), stop)
	if !r.OK || r.Status == nil || r.Status.Pid != os.Getpid() || r.Status.Name != "x" || stops != 0 {
		t.Errorf("status: %+v, stops %d", r, stops)
	}
	if r := handle(l, []byte(`{"op":"link","a":"h1","b":"nope"}`), stop); r.OK || !strings.Contains(r.Error, "unknown node") {
		t.Errorf("link to an unknown node: %+v", r)
	}
	if r := handle(l, []byte(`{"op":"reboot"}`), stop); r.OK || stops != 0 {
		t.Errorf("bad request: %+v, stops %d", r, stops)
	}
	if r := handle(l, []byte(`{"op":"down"}`), stop); !r.OK || stops != 1 {
		t.Errorf("down: %+v, stops %d", r, stops)
	}
}

// keep is asked about each link in its own orientation, as the caller's
// predicate may not be symmetric (only links that start at a core node).
func TestLinkTxFramesOrientation(t *testing.T) {
	s := Status{
		Nodes: []NodeStatus{
			{Name: "s1", Ports: []PortStatus{{Port: 1, TxFrames: 1}, {Port: 2, TxFrames: 2}}},
			{Name: "s2", Ports: []PortStatus{{Port: 1, TxFrames: 10}, {Port: 2, TxFrames: 20}}},
		},
		Links: []LinkStatus{{A: "s1", APort: 1, B: "s2", BPort: 1}, {A: "s2", APort: 2, B: "s1", BPort: 2}},
	}
	got := s.LinkTxFrames(func(a, b string) bool { return a == "s1" })
	if len(got) != 1 || got[[2]string{"s1", "s2"}] != 11 {
		t.Fatalf("LinkTxFrames = %v, want only s1-s2 with 11 frames", got)
	}
}

// Parallel links between two nodes add up, as SetLink fails them
// together: the frames of the first were lost when the second was
// counted over them (a stream on one of two parallel uplinks read 0).
func TestLinkTxFramesParallel(t *testing.T) {
	s := Status{
		Nodes: []NodeStatus{
			{Name: "s1", Ports: []PortStatus{{Port: 1, TxFrames: 5}, {Port: 2, TxFrames: 0}}},
			{Name: "s2", Ports: []PortStatus{{Port: 1, TxFrames: 7}, {Port: 2, TxFrames: 0}}},
		},
		Links: []LinkStatus{{A: "s1", APort: 1, B: "s2", BPort: 1}, {A: "s1", APort: 2, B: "s2", BPort: 2}},
	}
	got := s.LinkTxFrames(func(a, b string) bool { return true })
	if len(got) != 1 || got[[2]string{"s1", "s2"}] != 12 {
		t.Fatalf("LinkTxFrames = %v, want s1-s2 with 5+7 frames over its two links", got)
	}
}

// readyAfter is a Fabric that reports ready from its after+1st poll on.
type readyAfter struct {
	polls atomic.Int32
	after int32
}

func (f *readyAfter) Element(topo.NodeID) element.Element { return nil }
func (f *readyAfter) Ready() bool                         { return f.polls.Add(1) > f.after }

// notReadyEl is an element that never reports ready.
type notReadyEl struct{ recorder }

func (*notReadyEl) Ready() bool { return false }

// waitReady: a zero ReadyTimeout is the default, not "no time at all"; the
// default for STP covers its timers; a cancelled start is told apart from
// a fabric that did not get ready; the scheme's fabric and each element
// are asked.
func TestWaitReadyPaths(t *testing.T) {
	f := &readyAfter{after: 2}
	l := &Lab{name: "x", fabric: f, log: quietLog()}
	if err := l.waitReady(context.Background()); err != nil || f.polls.Load() != 3 {
		t.Errorf("fabric ready at the third poll, ReadyTimeout 0: %v after %d polls", err, f.polls.Load())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	l = &Lab{name: "x", fabric: &readyAfter{after: 1 << 30}, kb: &kbConfig{stp: true, forwardDelay: 4 * time.Second, maxAge: 6 * time.Second}, log: quietLog()}
	err := l.waitReady(ctx)
	if !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "after 1m14s: the scheme's fabric reports not ready") {
		t.Errorf("STP lab never ready: %v, want ErrNotReady after 2x4s+6s+60s", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if err := l.waitReady(ctx); !errors.Is(err, context.Canceled) || errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "stopped before it was ready") {
		t.Errorf("cancelled: %v, want context.Canceled, not ErrNotReady", err)
	}
	el := &notReadyEl{}
	r := newRunner("s1", el, nil, nil, time.Now(), 1, quietLog())
	r.run()
	defer r.stop()
	l = &Lab{name: "x", opts: Options{ReadyTimeout: 100 * time.Millisecond}, nodes: []*labNode{{name: "s1", el: el, run: r}}, log: quietLog()}
	if err := l.waitReady(context.Background()); !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "element on s1 reports not ready") {
		t.Errorf("element never ready: %v", err)
	}
}

// Failover refuses, before it starts anything, a target that is no host
// and names that are no node.
func TestFailoverChecksNodes(t *testing.T) {
	b := topo.NewBuilder("g")
	s1 := b.AddNode("s1", topo.Switch)
	b.Connect(b.AddNode("h1", topo.Host), s1)
	b.Connect(b.AddNode("h2", topo.Host), s1)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	l := &Lab{name: "sweep2none", g: g, log: quietLog()}
	for i := range g.NumNodes() {
		n := topo.NodeID(i)
		ln := &labNode{id: n, name: g.Node(n).Name, kind: g.Node(n).Kind, ns: nsName(l.name, g, n)}
		if ln.kind == topo.Host {
			ln.mac, ln.ip, _ = g.HostAddr(n)
		}
		l.nodes = append(l.nodes, ln)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, c := range []struct {
		s    FailoverSpec
		want error
	}{
		{FailoverSpec{From: "h1", To: "s1", A: "h2", B: "s1"}, ErrNotHost},
		{FailoverSpec{From: "h1", To: "nope", A: "h2", B: "s1"}, ErrUnknownNode},
		{FailoverSpec{From: "h1", To: "h2", A: "nope", B: "s1"}, ErrUnknownNode},
		{FailoverSpec{From: "h1", To: "h2", A: "h2", B: "nope"}, ErrUnknownNode},
	} {
		if _, err := l.Failover(ctx, c.s); !errors.Is(err, c.want) {
			t.Errorf("Failover(%+v) = %v, want %v", c.s, err, c.want)
		}
	}
}

// Every element gets a random source of its own: reproducible for a seed
// and a node, different between nodes and between seeds. An agent's Local
// port is the host's eth0, with the host's MAC, after the fabric ports.
func TestAttachSeedsAndLocalPort(t *testing.T) {
	b := topo.NewBuilder("g")
	b.Connect(b.AddNode("h1", topo.Host), b.AddNode("s1", topo.Switch))
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	first := func(seed uint64, id topo.NodeID) uint64 {
		l := &Lab{g: g, opts: Options{Scheme: scheme.Options{Seed: seed}}, start: time.Now(), log: quietLog()}
		ln := &labNode{id: id, name: g.Node(id).Name, kind: g.Node(id).Kind, ifnames: []string{""}, el: &recorder{}}
		if err := l.attach(ln, nil, nil); err != nil {
			t.Fatal(err)
		}
		return ln.run.Rand().Uint64()
	}
	if a, b := first(7, 0), first(7, 0); a != b {
		t.Error("one seed, one node: two random streams")
	}
	if first(7, 0) == first(7, 1) {
		t.Error("two nodes share a random stream")
	}
	if first(7, 0) == first(8, 0) {
		t.Error("the scheme's seed does not reach the elements")
	}
	mac := [6]byte{2, 0xef, 0, 0, 0, 1}
	l := &Lab{g: g, start: time.Now(), log: quietLog()}
	ln := &labNode{id: 0, name: "h1", kind: topo.Host, agent: true, mac: mac, ifnames: []string{""}, el: &recorder{}}
	if err := l.attach(ln, nil, &tapPort{}); err != nil {
		t.Fatal(err)
	}
	want := []element.PortInfo{{Port: 1, MAC: topo.PortMAC(0, 1)}, {Port: 2, Name: "eth0", MAC: mac, Local: true, Up: true}}
	if got := ln.run.ports; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ports %+v, want %+v", got, want)
	}
}

// A state without a pid (no daemon wrote it) is a valid state.
func TestParseStatePidZero(t *testing.T) {
	s, err := ParseState([]byte(`{"name":"ok","nodes":[{"name":"h1","namespace":"ef-ok-h1"}]}`))
	if err != nil || s.Pid != 0 {
		t.Fatalf("ParseState without pid = %+v, %v", s, err)
	}
}

// Control messages are walked at their aligned lengths, an empty one
// included; a tag goes back into a 12-byte frame, and into a buffer with
// exactly 4 bytes of room.
func TestVLANAuxdataLayouts(t *testing.T) {
	aux := auxCmsg(unix.TP_STATUS_VLAN_VALID|unix.TP_STATUS_VLAN_TPID_VALID, 0x321, 0x88a8)
	cmsg := func(datalen int) []byte {
		b := make([]byte, unix.CmsgSpace(datalen))
		binary.NativeEndian.PutUint64(b[0:], uint64(unix.CmsgLen(datalen)))
		binary.NativeEndian.PutUint32(b[8:], unix.SOL_SOCKET)
		binary.NativeEndian.PutUint32(b[12:], 99)
		return b
	}
	for _, datalen := range []int{0, 4, 12} {
		oob := append(cmsg(datalen), aux...)
		if tci, tpid, ok := vlanFromAuxdata(oob); !ok || tci != 0x321 || tpid != 0x88a8 {
			t.Errorf("auxdata behind a control message of %d data bytes: %#x %#x %v", datalen, tci, tpid, ok)
		}
	}
	// Without TP_STATUS_VLAN_TPID_VALID the TPID field means nothing.
	if _, tpid, ok := vlanFromAuxdata(auxCmsg(unix.TP_STATUS_VLAN_VALID, 7, 0x88a8)); !ok || tpid != 0x8100 {
		t.Errorf("TPID not flagged valid: tpid %#x ok %v, want 0x8100", tpid, ok)
	}
	buf := make([]byte, 16)
	copy(buf, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	if n, err := insertVLAN(buf, 12, 0x8100, 5); err != nil || n != 16 || binary.BigEndian.Uint16(buf[12:]) != 0x8100 || buf[15] != 5 {
		t.Errorf("tag into a 12-byte frame: %d, %v, %x", n, err, buf)
	}
	buf = make([]byte, 20)
	if n, err := insertVLAN(buf, 16, 0x8100, 5); err != nil || n != 20 {
		t.Errorf("16 bytes and a tag in 20: %d, %v", n, err)
	}
}

// The largest frame a port reads, maxFrame, reaches the element whole.
func TestRunnerMaxFrame(t *testing.T) {
	el := &linkRec{}
	p := newFakeIO()
	r := newRunner("s1", el, []element.PortInfo{{Port: 1, Up: true}}, []frameIO{p}, time.Now(), 1, quietLog())
	r.run()
	defer r.stop()
	p.in <- make([]byte, maxFrame)
	p.in <- make([]byte, 60)
	waitUntil(func() bool { _, _, rx := el.snapshot(); return len(rx) >= 2 || r.stats[0].rxDropOversize.Load() > 0 })
	r.do(func() {}, waitLimit)
	if _, _, rx := el.snapshot(); len(rx) < 1 || rx[0] != maxFrame || r.stats[0].rxDropOversize.Load() != 0 {
		t.Fatalf("delivered %v, oversize %d; want the %d-byte frame first", rx, r.stats[0].rxDropOversize.Load(), maxFrame)
	}
}

// An element's log names its node.
func TestRunnerLogNamesNode(t *testing.T) {
	var buf strings.Builder
	r := newRunner("s7", &linkRec{}, nil, nil, time.Now(), 1, slog.New(slog.NewTextHandler(&buf, nil)))
	r.Log().Info("hello")
	if !strings.Contains(buf.String(), "node=s7") {
		t.Fatalf("element log %q does not name the node", buf.String())
	}
}

// do on a stopped runner returns at once, not after its timeout.
func TestRunnerDoStopped(t *testing.T) {
	r := newRunner("s1", &linkRec{}, nil, nil, time.Now(), 1, quietLog())
	r.run()
	r.stop()
	for range 20 {
		t0 := time.Now()
		if r.do(func() {}, 3*time.Second) {
			t.Fatal("do on a stopped runner reported done")
		}
		if d := time.Since(t0); d > time.Second {
			t.Fatalf("do on a stopped runner took %v", d)
		}
	}
}

// NotifyReady writes one line on the fd it is given, a multi-line error
// joined, and forgets the fd; it never writes on stdin, stdout or stderr.
func TestNotifyReady(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{{errors.New("line one\nline two"), "error: line one; line two\n"}, {nil, "ready\n"}} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		fd, err := unix.Dup(int(w.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv(ReadyFDEnv, strconv.Itoa(fd))
		NotifyReady(c.err)
		if v, ok := os.LookupEnv(ReadyFDEnv); ok {
			t.Errorf("%s=%q still set", ReadyFDEnv, v)
		}
		w.Close()
		data, _ := io.ReadAll(r)
		r.Close()
		if string(data) != c.want {
			t.Errorf("NotifyReady(%v) wrote %q, want %q", c.err, data, c.want)
		}
	}
	t.Setenv(ReadyFDEnv, "0")
	NotifyReady(nil)
	if os.Getenv(ReadyFDEnv) != "0" {
		t.Error("NotifyReady took fd 0 for the ready pipe")
	}
}

// A process already gone is gone, even with no time left to wait.
func TestWaitGoneNoTime(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	if !waitGone(cmd.ProcessState.Pid(), 0, 0) {
		t.Fatal("waitGone(a reaped process, no time) = false")
	}
}

// A command name may hold ") " and spaces: the start time is still field
// 22, counted from the last ')'.
func TestProcStartOddName(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Skip(err)
	}
	const comm = "x) 1 2 3 4 5"
	bin := filepath.Join(t.TempDir(), comm)
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "30")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	prefix := fmt.Sprintf("%d (%s) ", pid, comm)
	if err != nil || !strings.HasPrefix(string(stat), prefix) {
		t.Skipf("stat %q: %v", stat, err)
	}
	want, _ := strconv.ParseUint(strings.Fields(string(stat[len(prefix):]))[19], 10, 64)
	if got, err := procStart(pid); err != nil || got != want {
		t.Fatalf("procStart = %d, %v; want %d", got, err, want)
	}
}

// A lab namespace has IPv6 off unless asked, and lo up; removing a
// namespace that is already gone is no error.
func TestNamespaceSetup(t *testing.T) {
	h, _ := testNS(t, "v4")
	read := func(k string) string {
		b, _ := os.ReadFile(filepath.Join("/proc/sys/net/ipv6/conf", k, "disable_ipv6"))
		return strings.TrimSpace(string(b))
	}
	err := inNS(h, func() error {
		if all, def := read("all"), read("default"); all != "1" || def != "1" {
			t.Errorf("IPv6 off: disable_ipv6 all=%q default=%q", all, def)
		}
		lo, err := linkByNameHere("lo")
		if err != nil {
			return err
		}
		if lo.Attrs().Flags&net.FlagUp == 0 {
			t.Errorf("lo is down: %v", lo.Attrs().Flags)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	name6 := Prefix(labName()) + "v6"
	h6, err := createNS(name6, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h6.Close(); deleteNS(name6) })
	inNS(h6, func() error {
		if all, def := read("all"), read("default"); all != "0" || def != "0" {
			t.Errorf("IPv6 on: disable_ipv6 all=%q default=%q", all, def)
		}
		return nil
	})
	if err := deleteNS(Prefix(labName()) + "none"); err != nil {
		t.Errorf("deleteNS of a namespace that does not exist: %v", err)
	}
}

// ExecIn hands back what a failing command printed, and its exit status.
func TestExecInFailure(t *testing.T) {
	_, name := testNS(t, "exec")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := ExecIn(ctx, name, "sh", "-c", "echo partial; exit 3")
	var ee *exec.ExitError
	if string(out) != "partial\n" || !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("ExecIn = %q, %v; want the output and exit status 3", out, err)
	}
}

// readWithin runs read, closing c if it has not returned within 5 s.
func readWithin(read func() (int, error), c io.Closer) (int, error) {
	type res struct {
		n   int
		err error
	}
	done := make(chan res, 1)
	go func() { n, err := read(); done <- res{n, err} }()
	select {
	case r := <-done:
		return r.n, r.err
	case <-time.After(5 * time.Second):
		c.Close()
		<-done
		return 0, errors.New("nothing to read")
	}
}

// testFrame is an n-byte frame of an experimental EtherType, its payload
// numbered.
func testFrame(n int) []byte {
	f := make([]byte, n)
	copy(f, []byte{0x02, 0xef, 0, 0, 0, 9, 0x02, 0xef, 0, 0, 0, 8, 0x88, 0xb5})
	for i := 14; i < n; i++ {
		f[i] = byte(i)
	}
	return f
}

// The read bounds of both transports: a frame that fills the buffer but
// its 4 bytes of tag room is read whole, one byte more is an oversize drop
// (AF_PACKET), never a frame handed on cut. Offloads are off on a port
// after offloadsOff.
func TestFrameReadBounds(t *testing.T) {
	h, _ := testNS(t, "bounds")
	bp := framePool.Get().(*[]byte)
	defer framePool.Put(bp)
	limit := len(*bp) - 4
	err := inNS(h, func() error {
		va := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "va", MTU: 16000}, PeerName: "vb"}
		if err := netlink.LinkAdd(va); err != nil {
			return err
		}
		var idx [2]int
		for i, name := range []string{"va", "vb"} {
			lk, err := linkByNameHere(name)
			if err != nil {
				return err
			}
			if err := netlink.LinkSetMTU(lk, 16000); err != nil {
				return err
			}
			if err := offloadsOff(name); err != nil {
				return err
			}
			if err := linkUpHere(lk); err != nil {
				return err
			}
			idx[i] = lk.Attrs().Index
		}
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		for _, cmd := range []uint32{0x16, 0x1e, 0x23, 0x2b} { // get TX csum, TSO, GSO, GRO
			v := ethtoolValue{cmd: cmd}
			if err := ethtoolIoctl(fd, "va", &v); err != nil || v.data != 0 {
				t.Errorf("ethtool get %#x on va: %d, %v; want off", cmd, v.data, err)
			}
		}
		unix.Close(fd)
		rx, err := openPacketPort(idx[0])
		if err != nil {
			return err
		}
		defer rx.Close()
		tx, err := openPacketPort(idx[1])
		if err != nil {
			return err
		}
		defer tx.Close()
		for _, c := range []struct {
			n  int
			ok bool
		}{{limit, true}, {limit + 1, false}, {60, true}} {
			f := testFrame(c.n)
			if err := tx.WriteFrame(f); err != nil {
				return fmt.Errorf("write %d bytes: %w", c.n, err)
			}
			n, err := readWithin(func() (int, error) { return rx.ReadFrame(*bp) }, rx)
			if c.ok && (err != nil || n != c.n || string((*bp)[:n]) != string(f)) {
				t.Errorf("AF_PACKET, %d-byte frame: n=%d err=%v, want it whole", c.n, n, err)
			}
			if !c.ok && !errors.Is(err, errOversize) {
				t.Errorf("AF_PACKET, %d-byte frame: n=%d err=%v, want errOversize", c.n, n, err)
			}
		}
		tap, host, closeBoth, err := jumboTAP("tp0")
		if err != nil {
			return err
		}
		defer closeBoth()
		f := testFrame(limit)
		if err := host.WriteFrame(f); err != nil {
			return err
		}
		n, err := readWithin(func() (int, error) { return tap.ReadFrame(*bp) }, tap)
		if err != nil || n != limit || string((*bp)[:n]) != string(f) {
			t.Errorf("TAP, %d-byte frame: n=%d err=%v, want it whole", limit, n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// An element's connected port is described to it in full: name, MAC, the
// link's rate, up.
func TestAttachPortInfo(t *testing.T) {
	h, _ := testNS(t, "attach")
	b := topo.NewBuilder("g")
	h1, s1 := b.AddNode("h1", topo.Host), b.AddNode("s1", topo.Switch)
	b.ConnectPorts(topo.End{Node: h1, Port: 1}, topo.End{Node: s1, Port: 2}, 77_000_000, 0)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	l := &Lab{g: g, start: time.Now(), log: quietLog()}
	ln := &labNode{id: s1, name: "s1", kind: topo.Switch, ifnames: []string{"", "eth2"}, el: &recorder{}}
	if err := inNS(h, func() error { return l.attach(ln, []int{0, 1}, nil) }); err != nil { // lo stands in for eth2
		t.Fatal(err)
	}
	defer ln.run.stop()
	want := []element.PortInfo{{Port: 1, MAC: topo.PortMAC(s1, 1)}, {Port: 2, Name: "eth2", MAC: topo.PortMAC(s1, 2), Rate: 77_000_000, Up: true}}
	if got := ln.run.ports; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ports %+v, want %+v", got, want)
	}
}

// One kernel-bridge lab, as the kernel sees it: interface names, MTUs,
// MACs and queue lengths of the plan, every link up from the start, the
// tbf of --rate, the bridge timers, a relaying host's bridge, per-port
// kernel counters in the right direction, and a repaired link operational
// when SetLink returns.
func TestKernelBridgePlan(t *testing.T) {
	needRoot(t)
	b := topo.NewBuilder("plan")
	s1 := b.AddNode("s1", topo.Switch)
	h1 := b.AddNode("h1", topo.Host)
	r1 := b.AddNode("r1", topo.Host)
	b.Node(r1).Relay = true
	h2 := b.AddNode("h2", topo.Host)
	b.Connect(h1, s1)
	b.Connect(s1, r1)
	b.Connect(r1, h2)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	const rate = 20_000_000
	params := map[string]string{"stp": "off", "forward_delay": "4", "hello_time": "1", "max_age": "6"}
	l := upLab(t, g, KernelBridge, Options{Rate: rate, Scheme: scheme.Options{Params: params}})
	st := l.Status()
	wantLinks := []StateLink{{"h1", "eth0", "s1", "eth1"}, {"s1", "eth2", "r1", "eth0"}, {"r1", "eth1", "h2", "eth0"}}
	for i, ls := range st.Links {
		if got := (StateLink{ls.A, ls.AIf, ls.B, ls.BIf}); i >= len(wantLinks) || got != wantLinks[i] || !ls.Up {
			t.Errorf("link %d: %+v, want %+v and up", i, ls, wantLinks[i])
		}
	}
	for _, n := range st.Nodes {
		if n.Name != "s1" {
			continue
		}
		if len(n.Ports) != 2 || n.Ports[0].Port != 1 || n.Ports[0].Interface != "eth1" || n.Ports[1].Port != 2 || n.Ports[1].Interface != "eth2" {
			t.Errorf("s1 ports %+v", n.Ports)
		}
	}
	hostMAC := func(n topo.NodeID) [6]byte { m, _, _ := g.HostAddr(n); return m }
	for _, c := range []struct {
		node topo.NodeID
		dev  string
		mtu  int
		mac  [6]byte
	}{
		{h1, "eth0", HostMTU, hostMAC(h1)}, {s1, "eth1", FabricMTU, topo.PortMAC(s1, 1)},
		{s1, "eth2", FabricMTU, topo.PortMAC(s1, 2)}, {r1, "eth0", FabricMTU, topo.PortMAC(r1, 1)},
		{h2, "eth0", HostMTU, hostMAC(h2)}, {r1, "br0", FabricMTU, hostMAC(r1)},
	} {
		ln := l.nodes[c.node]
		lk, err := ln.nl.LinkByName(c.dev)
		if err != nil {
			t.Errorf("%s %s: %v", ln.name, c.dev, err)
			continue
		}
		a := lk.Attrs()
		if a.MTU != c.mtu || [6]byte(a.HardwareAddr) != c.mac || (c.dev != "br0" && a.TxQLen != 1000) {
			t.Errorf("%s %s: mtu %d mac %s txqlen %d; want %d %x 1000", ln.name, c.dev, a.MTU, a.HardwareAddr, a.TxQLen, c.mtu, c.mac)
		}
	}
	// r1's address lives on its bridge.
	if out, err := l.Exec(context.Background(), "r1", "ip", "-o", "-4", "addr", "show", "dev", "br0"); err != nil || !strings.Contains(string(out), "10.0.0.2/8") {
		t.Errorf("r1 br0: %v\n%s", err, out)
	}
	bps, burst, limit := tbfParams(rate)
	for _, c := range []struct {
		node topo.NodeID
		dev  string
	}{{h1, "eth0"}, {s1, "eth1"}} {
		ln := l.nodes[c.node]
		lk, _ := ln.nl.LinkByName(c.dev)
		qs, err := ln.nl.QdiscList(lk)
		var tbf *netlink.Tbf
		for _, q := range qs {
			if q, ok := q.(*netlink.Tbf); ok {
				tbf = q
			}
		}
		// The kernel takes the bucket in bytes (TCA_TBF_BURST, addTBF) and
		// reports it as the time the rate sends it in, in 64 ns ticks, from
		// its own fixed-point rate (psched_l2t_ns): within a tick of the
		// exact time.
		wantBuf := int64(uint64(burst) * 1e9 / bps >> 6)
		if err != nil || tbf == nil || tbf.Rate != bps || tbf.Limit != limit || abs64(int64(tbf.Buffer)-wantBuf) > 1 ||
			tbf.Handle != netlink.MakeHandle(1, 0) || tbf.Parent != netlink.HANDLE_ROOT {
			t.Errorf("%s %s: tbf %+v, %v; want rate %d limit %d buffer %d ticks", ln.name, c.dev, tbf, err, bps, limit, wantBuf)
			if tbf != nil {
				t.Logf("got rate %d limit %d buffer %d", tbf.Rate, tbf.Limit, tbf.Buffer)
			}
		}
	}
	out, err := l.Exec(context.Background(), "s1", "cat", "/sys/class/net/br0/bridge/forward_delay", "/sys/class/net/br0/bridge/hello_time",
		"/sys/class/net/br0/bridge/max_age", "/sys/class/net/br0/bridge/stp_state")
	if got := strings.Fields(string(out)); err != nil || strings.Join(got, " ") != "400 100 600 0" {
		t.Errorf("s1 br0 forward_delay, hello_time, max_age, stp_state = %q, %v; want 400 100 600 0", got, err)
	}
	// Frames h1 sends are what s1's eth1 receives, not what it sends.
	const sent = 20
	err = inNS(l.nodes[h1].h, func() error {
		lk, err := linkByNameHere("eth0")
		if err != nil {
			return err
		}
		pp, err := openPacketPort(lk.Attrs().Index)
		if err != nil {
			return err
		}
		defer pp.Close()
		f := testFrame(60)
		copy(f, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
		for range sent {
			if err := pp.WriteFrame(f); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var port PortStatus
	waitUntil(func() bool {
		for _, n := range l.Status().Nodes {
			if n.Name == "s1" && len(n.Ports) > 0 {
				port = n.Ports[0]
			}
		}
		return port.RxFrames >= sent
	})
	if port.RxFrames < sent || port.TxFrames >= sent {
		t.Errorf("s1 eth1 after %d frames in: rx %d tx %d", sent, port.RxFrames, port.TxFrames)
	}
	if err := l.SetLink("h1", "s1", false); err != nil {
		t.Fatal(err)
	}
	if err := l.SetLink("h1", "s1", true); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		node topo.NodeID
		dev  string
	}{{h1, "eth0"}, {s1, "eth1"}} {
		ln := l.nodes[c.node]
		lk, err := ln.nl.LinkByName(c.dev)
		if err != nil {
			t.Fatal(err)
		}
		if st := lk.Attrs().OperState; st != netlink.OperUp {
			t.Errorf("%s %s right after the repair: %v, want up", ln.name, c.dev, st)
		}
	}
}

// The records of a lab without a daemon: an in-process lab, a claimed
// name, a state without a pid, state of another lab, leftovers alone.
// Cleanup tells them apart and removes them; Labs and ClaimName see what
// exists and nothing else.
func TestLabRecords(t *testing.T) {
	needRoot(t)
	var names []string
	newName := func() string {
		n := labName()
		names = append(names, n)
		return n
	}
	t.Cleanup(func() {
		for _, n := range names {
			Cleanup(n, 5*time.Second)
			os.Remove(filepath.Join(StateDir, n))
			if left, _ := listNS(Prefix(n)); len(left) > 0 {
				t.Errorf("namespaces left: %v", left)
			}
		}
	})

	// A daemon's owner record says so; a test's does not.
	name := newName()
	t.Setenv(ReadyFDEnv, "9")
	if err := writeOwner(name); err != nil {
		t.Fatal(err)
	}
	if !OwnerIsDaemon(name) {
		t.Error("owner written under a ready fd is no daemon")
	}
	os.RemoveAll(LabDir(name)) // Cleanup would stop this process
	os.Unsetenv(ReadyFDEnv)

	// An in-process lab.
	name = newName()
	if err := writeOwner(name); err != nil {
		t.Fatal(err)
	}
	ns := Prefix(name) + "x"
	h, err := createNS(ns, false)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	if pid, running := Owner(name); pid != os.Getpid() || !running || OwnerIsDaemon(name) {
		t.Errorf("Owner = %d, %v, daemon %v; want this process, no daemon", pid, running, OwnerIsDaemon(name))
	}
	rep, err := Cleanup(name, 5*time.Second)
	if err != nil || rep.Daemon != "in-process" || len(rep.Leftovers) != 1 || rep.Leftovers[0] != ns || !rep.StateRemoved || len(rep.Killed) != 0 {
		t.Errorf("Cleanup of an in-process lab = %+v, %v", rep, err)
	}

	// A claimed name, then a state without a pid.
	name = newName()
	if err := ClaimName(name); err != nil {
		t.Fatal(err)
	}
	if err := ClaimName(name); !errors.Is(err, ErrLabExists) {
		t.Errorf("second claim: %v, want ErrLabExists", err)
	}
	data, _ := json.Marshal(State{Name: name, Nodes: []StateNode{{Name: "h1", Namespace: Prefix(name) + "h1"}}})
	if err := os.WriteFile(statePath(name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := ReadState(name); err != nil || s.Pid != 0 {
		t.Errorf("ReadState = %+v, %v", s, err)
	}
	if ns, err := NodeNamespace(name, "h1"); err != nil || ns != Prefix(name)+"h1" {
		t.Errorf("NodeNamespace(h1) = %q, %v", ns, err)
	}
	if _, err := NodeNamespace(name, "h9"); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("NodeNamespace(h9) = %v, want ErrUnknownNode", err)
	}
	other := newName()
	if err := os.MkdirAll(LabDir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(statePath(other), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadState(other); !errors.Is(err, ErrBadState) {
		t.Errorf("state of lab %s under %s: %v, want ErrBadState", name, other, err)
	}
	if _, err := ReadState("a/b"); !errors.Is(err, ErrBadLabName) {
		t.Errorf("ReadState(a/b) = %v", err)
	}
	if _, err := ReadState(labName()); !errors.Is(err, ErrNoLab) {
		t.Errorf("ReadState of no lab = %v, want ErrNoLab", err)
	}
	// The claim recorded this process as the owner: in-process.
	rep, err = Cleanup(name, 5*time.Second)
	if err != nil || rep.Daemon != "in-process" || len(rep.Leftovers) != 0 || !rep.StateRemoved {
		t.Errorf("Cleanup of a claimed lab's state without a pid = %+v, %v", rep, err)
	}

	// A file in the state directory is no lab; a namespace whose node
	// name holds '-' is its lab's, and blocks a claim of the name.
	file := newName()
	if err := os.WriteFile(filepath.Join(StateDir, file), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	leftover := newName()
	h, err = createNS(Prefix(leftover)+"leaf-1", false)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	labs, err := Labs()
	if err != nil || slices.Contains(labs, file) || !slices.Contains(labs, leftover) {
		t.Errorf("Labs() = %v, %v; want %s and not %s", labs, err, leftover, file)
	}
	if err := ClaimName(leftover); !errors.Is(err, ErrLabExists) {
		t.Errorf("claim of a name with namespaces: %v", err)
	}
	if _, err := os.Stat(LabDir(leftover)); !os.IsNotExist(err) {
		t.Errorf("refused claim made %s: %v", LabDir(leftover), err)
	}

	// Of many claims of one name at once, one wins.
	for range 10 {
		name := newName()
		var wins atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if ClaimName(name) == nil {
					wins.Add(1)
				}
			}()
		}
		close(start)
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("%d of 8 concurrent claims of %s won", wins.Load(), name)
		}
	}

	// A daemon that answers status without one.
	name = newName()
	if err := ClaimName(name); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", socketPath(name))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for _, answer := range []string{`{"ok":true}`, `{"ok":false,"error":"boom"}`} {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, maxRequest)
			c.Read(buf)
			c.Write([]byte(answer + "\n"))
			c.Close()
		}
	}()
	if _, err := RemoteStatusWithin(name, 5*time.Second); !errors.Is(err, ErrDaemon) || !strings.Contains(err.Error(), "status missing") {
		t.Errorf("status answer without status: %v", err)
	}
	if _, err := RemoteStatusWithin(name, 5*time.Second); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("failed status answer: %v", err)
	}
}

// A kernel bridge port still listening or learning keeps the lab not
// ready; forwarding and blocking are settled states.
func TestNotReadyBridgeStates(t *testing.T) {
	h, name := testNS(t, "brst")
	needTool(t, "ip")
	nlh, err := netlink.NewHandleAt(h)
	if err != nil {
		t.Fatal(err)
	}
	defer nlh.Close()
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}}
	if err := nlh.LinkAdd(br); err != nil {
		t.Fatal(err)
	}
	if err := nlh.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "va"}, PeerName: "vb"}); err != nil {
		t.Fatal(err)
	}
	for _, dev := range []string{"br0", "va", "vb"} {
		lk, err := nlh.LinkByName(dev)
		if err != nil {
			t.Fatal(err)
		}
		if dev == "va" {
			if err := nlh.LinkSetMaster(lk, br); err != nil {
				t.Fatal(err)
			}
		}
		if err := nlh.LinkSetUp(lk); err != nil {
			t.Fatal(err)
		}
	}
	l := &Lab{name: "x", log: quietLog(), nodes: []*labNode{{name: "s1", bridge: true, h: h, nl: nlh, ifnames: []string{"", "va"}}}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, c := range []struct {
		state uint8
		want  string
	}{{brListening, "s1 port va is listening"}, {brLearning, "s1 port va is learning"}, {brForwarding, ""}, {brBlocking, ""}} {
		if out, err := ExecIn(ctx, name, "ip", "link", "set", "dev", "va", "type", "bridge_slave", "state", strconv.Itoa(int(c.state))); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if got := l.notReady(); got != c.want {
			t.Errorf("port %s: notReady() = %q, want %q", BridgePortStateName(c.state), got, c.want)
		}
	}
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
