package emu

// Tests added by a mutation sweep of the package: each pins an exact
// outcome that a small change to the code would otherwise get past the
// suite unnoticed. Pure tests come first; the few that need root build no
// lab, or only namespaces with the test's own prefix, and bound their time.

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// The prefix ends in '-', and lab names have none: one lab's prefix is
// never a prefix of another lab's namespaces, even when one lab's name is
// a prefix of the other's.
func TestPrefix(t *testing.T) {
	if got := Prefix("lab1"); got != "ef-lab1-" {
		t.Fatalf("Prefix(lab1) = %q, want ef-lab1-", got)
	}
	for _, c := range [][2]string{{"a", "ab"}, {"a", "a_b"}, {"t1", "t10"}, {"x", "x0"}} {
		if strings.HasPrefix(Prefix(c[1])+"h1", Prefix(c[0])) {
			t.Errorf("lab %q's prefix %q matches lab %q's namespace %q", c[0], Prefix(c[0]), c[1], Prefix(c[1])+"h1")
		}
	}
}

// A node whose name is unfit for a file name, or "." / "..", gets the
// namespace n<id>; every other name is kept as is.
func TestNsName(t *testing.T) {
	long := strings.Repeat("a", 41)
	names := []string{"h1", "a.b_C9", "a/b", ".", "..", "x y", long, strings.Repeat("b", 40)}
	b := topo.NewBuilder("names")
	for _, n := range names {
		b.AddNode(n, topo.Host)
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"h1", "a.b_C9", "n2", "n3", "n4", "n5", "n6", strings.Repeat("b", 40)}
	for i := range names {
		if got := nsName("lab", g, topo.NodeID(i)); got != "ef-lab-"+want[i] {
			t.Errorf("nsName(%q) = %q, want %q", names[i], got, "ef-lab-"+want[i])
		}
	}
}

func TestCheckRootNegative(t *testing.T) {
	// os.Geteuid is -1 where there are no uids: that is not root.
	if err := CheckRoot(-1); !errors.Is(err, ErrNotRoot) {
		t.Fatalf("CheckRoot(-1) = %v, want ErrNotRoot", err)
	}
}

// The exact token bucket: 1 ms of traffic but at least tbfBucketMin, a
// queue of 20 ms more, and the clamps that keep both in 32 bits.
func TestTBFExact(t *testing.T) {
	for _, c := range []struct {
		rate         int64
		bps          uint64
		burst, limit uint32
	}{
		{1_000_000, 125_000, tbfBucketMin, 125_000/50 + tbfBucketMin},
		{1_000_000_000, 125_000_000, 125_000, 2_500_000 + 125_000},
		{100_000_000_000, 12_500_000_000, 12_500_000, 250_000_000 + 12_500_000},
		// The queue past 2^31 bytes is clamped (the bucket is not yet).
		{1_200_000_000_000, 150_000_000_000, 150_000_000, 1 << 31},
		// Both clamped.
		{10_000_000_000_000, 1_250_000_000_000, 1 << 30, 1 << 31},
	} {
		bps, burst, limit := tbfParams(c.rate)
		if bps != c.bps || burst != c.burst || limit != c.limit {
			t.Errorf("tbfParams(%d) = %d, %d, %d; want %d, %d, %d", c.rate, bps, burst, limit, c.bps, c.burst, c.limit)
		}
	}
	if tbfBucketMin != FabricMTU+14+4+64 {
		t.Errorf("tbfBucketMin = %d", tbfBucketMin)
	}
}

// 1000 b/s is the slowest rate shaped; 999 is refused, before anything is
// built; a negative rate is refused by CheckScheme as by Up.
func TestCheckRatesBoundary(t *testing.T) {
	g := star(t, 1)
	if err := CheckScheme(g, KernelBridge, Options{Rate: minShapedRate}); err != nil {
		t.Errorf("rate %d: %v", minShapedRate, err)
	}
	if err := CheckScheme(g, KernelBridge, Options{Rate: minShapedRate - 1}); !errors.Is(err, ErrBadOption) {
		t.Errorf("rate %d: %v, want ErrBadOption", minShapedRate-1, err)
	}
	if err := CheckScheme(g, KernelBridge, Options{Rate: -1}); !errors.Is(err, ErrBadOption) {
		t.Errorf("rate -1: %v, want ErrBadOption (Up refuses it)", err)
	}
}

// Exactly at the limit fits; one entry over warns.
func TestNeighBoundary(t *testing.T) {
	limit := func(v string) func(string) ([]byte, error) {
		return func(string) ([]byte, error) { return []byte(v), nil }
	}
	if w := neighWarning(33, limit("1056")); w != "" { // 33*32 = 1056
		t.Errorf("1056 entries, limit 1056: warned %q", w)
	}
	if w := neighWarning(33, limit("1055")); !strings.Contains(w, "1056") || !strings.Contains(w, "limit is 1055") {
		t.Errorf("1056 entries, limit 1055: warning %q", w)
	}
}

func TestStatusString(t *testing.T) {
	s := Status{Name: "l", Scheme: "stp", Topology: "ring:3", Uptime: "1s",
		Nodes: make([]NodeStatus, 4),
		Links: []LinkStatus{{Up: true}, {Up: false}, {Up: true}}}
	s.NotReady = "s1 port eth1 is listening"
	if got, want := s.String(), "lab l: scheme stp on ring:3, 4 nodes, 2/3 links up, not ready: s1 port eth1 is listening, up 1s"; got != want {
		t.Errorf("String() = %q\nwant       %q", got, want)
	}
	s.Ready, s.NotReady = true, ""
	if got := s.String(); !strings.Contains(got, "2/3 links up, ready, up 1s") {
		t.Errorf("ready String() = %q", got)
	}
}

func TestLinkTxFrames(t *testing.T) {
	s := Status{
		Nodes: []NodeStatus{
			{Name: "s1", Ports: []PortStatus{{Port: 1, TxFrames: 10}, {Port: 2, TxFrames: 20}}},
			{Name: "s2", Ports: []PortStatus{{Port: 1, TxFrames: 100}, {Port: 2, TxFrames: 200}}},
			{Name: "h1"},
		},
		Links: []LinkStatus{
			{A: "s1", APort: 1, B: "s2", BPort: 2},
			{A: "h1", APort: 1, B: "s1", BPort: 2},
		},
	}
	got := s.LinkTxFrames(func(a, b string) bool { return a != "h1" && b != "h1" })
	want := map[[2]string]uint64{{"s1", "s2"}: 10 + 200}
	if len(got) != len(want) || got[[2]string{"s1", "s2"}] != want[[2]string{"s1", "s2"}] {
		t.Fatalf("LinkTxFrames = %v, want %v", got, want)
	}
}

// Status of an element's node: exact traffic counters per port, drops only
// where non-zero, unconnected ports left out, the Local port shown.
func TestStatusPorts(t *testing.T) {
	b := topo.NewBuilder("one")
	b.AddNode("s1", topo.Switch)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	ports := []element.PortInfo{{Port: 1, Name: "eth1", Up: true}, {Port: 2}, {Port: 3, Name: "eth0", Local: true, Up: true}}
	r := newRunner("s1", &recorder{}, ports, make([]frameIO, 3), time.Now(), 1, quietLog())
	s := &r.stats[0]
	s.rxFrames.Store(2)
	s.rxBytes.Store(120)
	s.txFrames.Store(1)
	s.txBytes.Store(60)
	s.txDropDown.Store(3)
	r.stats[2].rxErrors.Store(4)
	r.stats[2].txErrors.Store(5)
	r.stats[2].rxDropRunt.Store(6)
	r.stats[2].rxDropOversize.Store(7)
	l := &Lab{name: "x", g: g, start: time.Now(), nodes: []*labNode{{name: "s1", kind: topo.Switch, ns: "ef-x-s1", ifnames: []string{"eth1", ""}, el: r.el, run: r}}}
	st := l.Status()
	if len(st.Nodes) != 1 {
		t.Fatalf("nodes %+v", st.Nodes)
	}
	n := st.Nodes[0]
	if n.Counters != nil || n.Element != "*emu.recorder" || n.Namespace != "ef-x-s1" {
		t.Errorf("node %+v", n)
	}
	if len(n.Ports) != 2 {
		t.Fatalf("ports %+v, want 1 and the Local 3", n.Ports)
	}
	p := n.Ports[0]
	if p.Port != 1 || p.Interface != "eth1" || !p.Up || p.Local || p.RxFrames != 2 || p.RxBytes != 120 || p.TxFrames != 1 || p.TxBytes != 60 ||
		len(p.Drops) != 1 || p.Drops["tx_link_down"] != 3 {
		t.Errorf("port 1 = %+v", p)
	}
	p = n.Ports[1]
	want := map[string]uint64{"rx_error": 4, "tx_error": 5, "rx_runt": 6, "rx_oversize": 7}
	if p.Port != 3 || !p.Local || p.Interface != "eth0" || len(p.Drops) != len(want) {
		t.Errorf("port 3 = %+v", p)
	}
	for k, v := range want {
		if p.Drops[k] != v {
			t.Errorf("port 3 drop %s = %d, want %d", k, p.Drops[k], v)
		}
	}
}

func TestLongestGapEdges(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := time.Millisecond
	var none time.Time
	// Nothing lost, ping's pacing slipped: no outage.
	if lost, out := longestGap(map[int]time.Time{1: t0, 2: t0.Add(500 * ms)}, 2, 10*ms, none); lost != 0 || out != 0 {
		t.Errorf("no loss: %d lost, %v", lost, out)
	}
	// A run with no reply after it is counted in intervals.
	if lost, out := longestGap(map[int]time.Time{1: t0, 2: t0.Add(10 * ms)}, 5, 10*ms, none); lost != 3 || out != 30*ms {
		t.Errorf("trailing loss: %d lost, %v; want 3, 30ms", lost, out)
	}
	// Of two equally long runs, the first is the one measured.
	got := map[int]time.Time{1: t0, 3: t0.Add(20 * ms), 4: t0.Add(30 * ms), 6: t0.Add(500 * ms)}
	if lost, out := longestGap(got, 6, 10*ms, none); lost != 2 || out != 10*ms {
		t.Errorf("two runs of 1: %d lost, %v; want 2, 10ms", lost, out)
	}
}

// Timers due at the same instant fire in the order they were armed.
func TestTimerHeapTies(t *testing.T) {
	h := &timerHeap{}
	for _, tm := range []*timer{{at: 5, seq: 3}, {at: 5, seq: 1}, {at: 1, seq: 9}, {at: 5, seq: 2}, {at: 7, seq: 0}} {
		heap.Push(h, tm)
	}
	var out []uint64
	for h.Len() > 0 {
		out = append(out, heap.Pop(h).(*timer).seq)
	}
	if !slices.Equal(out, []uint64{9, 1, 2, 3, 0}) {
		t.Fatalf("timers popped in seq order %v, want [9 1 2 3 0]", out)
	}
}

// linkRec records LinkChange calls and arms the timers it is told to.
type linkRec struct {
	mu     sync.Mutex
	env    element.Env
	calls  []string
	fired  []int
	timers []element.Time
	rx     []int
}

func (e *linkRec) Attach(env element.Env, _ []element.PortInfo) {
	e.env = env
	for i, d := range e.timers {
		id := i + 1
		env.After(d, func() { e.mu.Lock(); e.fired = append(e.fired, id); e.mu.Unlock() })
	}
}

func (e *linkRec) Receive(p element.Port, f []byte) {
	e.mu.Lock()
	e.rx = append(e.rx, len(f))
	e.mu.Unlock()
	e.env.Send(2, f)
	e.env.Send(3, f) // unconnected: no transport
}

func (e *linkRec) LinkChange(p element.Port, up bool) {
	e.mu.Lock()
	e.calls = append(e.calls, strconv.Itoa(int(p))+":"+strconv.FormatBool(up))
	e.mu.Unlock()
}

func (e *linkRec) snapshot() (calls []string, fired, rx []int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.calls...), append([]int(nil), e.fired...), append([]int(nil), e.rx...)
}

// Link changes reach the element once per change, in order, from the state
// each port started in (an unconnected port starts down); ports that do not
// exist are ignored without harm.
func TestRunnerLinkChanges(t *testing.T) {
	el := &linkRec{}
	ports := []element.PortInfo{{Port: 1, Up: true}, {Port: 2, Up: true}, {Port: 3, Up: false}}
	r := newRunner("s1", el, ports, []frameIO{newFakeIO(), newFakeIO(), nil}, time.Now(), 1, quietLog())
	r.run()
	defer r.stop()
	sync := func() {
		if !r.do(func() {}, waitLimit) {
			t.Fatal("runner does not answer")
		}
	}
	r.linkChange(0, false)
	r.linkChange(4, false)
	sync()
	r.linkChange(2, false)
	sync()
	if calls, _, _ := el.snapshot(); !slices.Equal(calls, []string{"2:false"}) {
		t.Fatalf("after one change: %v", calls)
	}
	r.linkChange(2, false)
	r.linkChange(3, false) // already down
	r.linkChange(3, true)
	r.linkChange(2, true)
	r.linkChange(2, true)
	sync()
	if calls, _, _ := el.snapshot(); !slices.Equal(calls, []string{"2:false", "3:true", "2:true"}) {
		t.Fatalf("LinkChange calls %v, want [2:false 3:true 2:true]", calls)
	}
}

// Frames: exact byte counts each way; 13 bytes is a runt, 14 is a frame;
// a Send to a port without a transport is a counted bad-port send.
func TestRunnerFrames(t *testing.T) {
	el := &linkRec{}
	p1, p2 := newFakeIO(), newFakeIO()
	ports := []element.PortInfo{{Port: 1, Up: true}, {Port: 2, Up: true}, {Port: 3}}
	r := newRunner("s1", el, ports, []frameIO{p1, p2, nil}, time.Now(), 1, quietLog())
	r.run()
	defer r.stop()
	p1.in <- make([]byte, 13)
	p1.in <- make([]byte, 14)
	p1.in <- make([]byte, 60)
	waitUntil(func() bool { return p2.sent() >= 2 })
	r.do(func() {}, waitLimit) // the second Receive has returned
	_, _, rx := el.snapshot()
	s1, s2 := &r.stats[0], &r.stats[1]
	if !slices.Equal(rx, []int{14, 60}) || s1.rxDropRunt.Load() != 1 || s1.rxFrames.Load() != 2 || s1.rxBytes.Load() != 74 {
		t.Errorf("rx: delivered %v, runts %d, frames %d, bytes %d; want [14 60], 1, 2, 74", rx, s1.rxDropRunt.Load(), s1.rxFrames.Load(), s1.rxBytes.Load())
	}
	if p2.sent() != 2 || s2.txFrames.Load() != 2 || s2.txBytes.Load() != 74 {
		t.Errorf("tx: sent %d, frames %d, bytes %d; want 2, 2, 74", p2.sent(), s2.txFrames.Load(), s2.txBytes.Load())
	}
	if r.badPort.Load() != 2 || r.stats[2].txFrames.Load() != 0 {
		t.Errorf("sends to the unconnected port: bad-port %d, want 2", r.badPort.Load())
	}
}

// A read error other than a link going down is an rx_error, once each.
func TestRunnerReadError(t *testing.T) {
	p1 := &errIO{fakeIO: *newFakeIO(), errs: make(chan error, 4)}
	r := newRunner("s1", &linkRec{}, []element.PortInfo{{Port: 1, Up: true}}, []frameIO{p1}, time.Now(), 1, quietLog())
	r.run()
	defer r.stop()
	p1.errs <- unix.ENOBUFS
	p1.errs <- errOversize
	waitUntil(func() bool { return r.stats[0].rxDropOversize.Load() > 0 })
	p1.in <- make([]byte, 60)
	waitUntil(func() bool { return r.stats[0].rxFrames.Load() > 0 })
	if s := &r.stats[0]; s.rxErrors.Load() != 1 || s.rxDropOversize.Load() != 1 || s.rxFrames.Load() != 1 {
		t.Errorf("rx_error %d, rx_oversize %d, rx %d; want 1, 1, 1", s.rxErrors.Load(), s.rxDropOversize.Load(), s.rxFrames.Load())
	}
}

// Timers fire on their own, with no other event to wake the element; a
// negative delay is "now", never ahead of a timer armed before it.
func TestRunnerTimers(t *testing.T) {
	el := &linkRec{timers: []element.Time{0, -5 * element.Second, 20 * element.Millisecond}}
	r := newRunner("s1", el, nil, nil, time.Now(), 1, quietLog())
	r.run()
	defer r.stop()
	waitUntil(func() bool { _, fired, _ := el.snapshot(); return len(fired) >= 3 })
	if _, fired, _ := el.snapshot(); !slices.Equal(fired, []int{1, 2, 3}) {
		t.Fatalf("timers fired %v, want [1 2 3] without any other event", fired)
	}
}

// do reports an element that does not answer in time, and a stopped
// runner, as false.
func TestRunnerDo(t *testing.T) {
	r := newRunner("s1", &linkRec{}, nil, nil, time.Now(), 1, quietLog())
	r.run()
	release := make(chan struct{})
	t0 := time.Now()
	if r.do(func() { <-release }, 50*time.Millisecond) {
		t.Error("do of a call that never returns reported done")
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("do waited %v past its 50ms bound", d)
	}
	close(release)
	if !r.do(func() {}, waitLimit) {
		t.Error("do of a quick call reported not done")
	}
	r.stop()
	if r.do(func() {}, time.Second) {
		t.Error("do on a stopped runner reported done")
	}
}

func TestParseStateNUL(t *testing.T) {
	if _, err := ParseState([]byte(`{"name":"ok","nodes":[{"name":"h1","namespace":"ef-ok-h1\u0000x"}]}`)); !errors.Is(err, ErrBadState) {
		t.Fatalf("namespace with NUL: %v, want ErrBadState", err)
	}
}

func TestParseRequestEdges(t *testing.T) {
	for _, bad := range []string{`{}`, `{"op":""}`, `{"op":"STATUS"}`} {
		if _, err := ParseRequest([]byte(bad)); !errors.Is(err, ErrBadRequest) {
			t.Errorf("ParseRequest(%s) = %v, want ErrBadRequest", bad, err)
		}
	}
	req := `{"op":"status"}`
	exact := req + strings.Repeat(" ", maxRequest-len(req))
	if _, err := ParseRequest([]byte(exact)); err != nil {
		t.Errorf("request of exactly %d bytes: %v", maxRequest, err)
	}
	if _, err := ParseRequest([]byte(exact + " ")); !errors.Is(err, ErrBadRequest) {
		t.Errorf("request of %d bytes: %v, want ErrBadRequest", maxRequest+1, err)
	}
}

// procStart is field 22 of /proc/PID/stat; alive tells a recycled pid (a
// different start time) and a zombie from the process it was given.
func TestProcStartAlive(t *testing.T) {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Skip("no /proc")
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	want, _ := strconv.ParseUint(f[19], 10, 64)
	start, err := procStart(os.Getpid())
	if err != nil || start != want || start == 0 {
		t.Fatalf("procStart(self) = %d, %v; want %d", start, err, want)
	}
	if !alive(os.Getpid(), start) {
		t.Error("alive(self) = false")
	}
	if alive(os.Getpid(), 0) {
		t.Error("alive without a start time: a forged or recycled pid would be signalled")
	}
	if alive(os.Getpid(), start+1) {
		t.Error("alive with another start time: a recycled pid would be signalled")
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer cmd.Wait()
	pid := cmd.Process.Pid
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if i := strings.LastIndexByte(string(st), ')'); i >= 0 && i+2 < len(st) && st[i+2] == 'Z' {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if running(pid) {
		t.Error("a zombie counts as alive")
	}
}

// parseProcStat reads the state and the start time from one stat line,
// counting fields from the last ')' (a command name may hold ") Z 1"),
// and refuses a line cut short. alive reads the line once: reading it
// twice, as it once did, let a zombie reaped between the reads look
// alive (the second read found nothing to call a zombie), and a stress
// run saw down report a crashed daemon as "killed".
func TestParseProcStat(t *testing.T) {
	tail := " 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 20 21"
	for _, c := range []struct {
		line  string
		start uint64
		state byte
		ok    bool
	}{
		{"77 (edgefabric) S" + tail, 4242, 'S', true},
		{"77 (a) Z 1 (b) R" + tail, 4242, 'R', true},
		{"77 (x) Z" + tail, 4242, 'Z', true},
		{"77 (x) X" + tail, 4242, 'X', true},
		{"77 (x) S 1 2 3", 0, 0, false},
		{"77 (x) SS" + tail, 0, 0, false},
		{"77 x S" + tail, 0, 0, false},
		{"", 0, 0, false},
	} {
		start, state, err := parseProcStat([]byte(c.line))
		if (err == nil) != c.ok || start != c.start || state != c.state {
			t.Errorf("%q: %d %q %v", c.line, start, state, err)
		}
	}
}

func TestTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	os.WriteFile(p, []byte("a\nb\nc\nd\ne\n"), 0o644)
	for n, want := range map[int]string{2: "d\ne", 4: "b\nc\nd\ne", 5: "a\nb\nc\nd\ne", 9: "a\nb\nc\nd\ne"} {
		if got := tail(p, n); got != want {
			t.Errorf("tail(%d) = %q, want %q", n, got, want)
		}
	}
	if got := tail(filepath.Join(t.TempDir(), "none"), 3); got != "" {
		t.Errorf("tail of a missing file = %q", got)
	}
}

func TestKBParams(t *testing.T) {
	for _, v := range []string{"off", "false", "0"} {
		if c, err := parseKBParams(map[string]string{"stp": v}); err != nil || c.stp {
			t.Errorf("stp=%s: %+v, %v; want STP off", v, c, err)
		}
	}
	for _, v := range []string{"on", "true", "1"} {
		if c, err := parseKBParams(map[string]string{"stp": v}); err != nil || !c.stp {
			t.Errorf("stp=%s: %+v, %v; want STP on", v, c, err)
		}
	}
	c, err := parseKBParams(map[string]string{"hello_time": "3"})
	if err != nil || c.hello != 3*time.Second || c.maxAge != 20*time.Second || c.forwardDelay != 15*time.Second {
		t.Errorf("hello_time=3: %+v, %v", c, err)
	}
	c, err = parseKBParams(map[string]string{"max_age": "7.5"})
	if err != nil || c.maxAge != 7500*time.Millisecond || c.hello != 2*time.Second {
		t.Errorf("max_age=7.5: %+v, %v", c, err)
	}
	for k, r := range kbRange {
		for _, ok := range []float64{r[0], r[1]} {
			if _, err := parseKBParams(map[string]string{k: strconv.FormatFloat(ok, 'g', -1, 64)}); err != nil {
				t.Errorf("%s=%g: %v", k, ok, err)
			}
		}
	}
	for k, v := range map[string]string{"hello_time": "11", "forward_delay": "31", "max_age": "5", "hello_time ": "2"} {
		if _, err := parseKBParams(map[string]string{k: v}); !errors.Is(err, ErrBadOption) {
			t.Errorf("%q=%s: %v, want ErrBadOption", k, v, err)
		}
	}
	if want := map[string][2]float64{"forward_delay": {2, 30}, "hello_time": {1, 10}, "max_age": {6, 40}}; len(kbRange) != 3 ||
		kbRange["forward_delay"] != want["forward_delay"] || kbRange["hello_time"] != want["hello_time"] || kbRange["max_age"] != want["max_age"] {
		t.Errorf("kbRange = %v, want the kernel's %v", kbRange, want)
	}
	for d, want := range map[time.Duration]uint32{15 * time.Second: 1500, 2 * time.Second: 200, 7500 * time.Millisecond: 750} {
		if got := centis(d); got != want {
			t.Errorf("centis(%v) = %d, want %d", d, got, want)
		}
	}
}

func TestBridgePortStateName(t *testing.T) {
	for s, want := range map[uint8]string{0: "disabled", 1: "listening", 2: "learning", 3: "forwarding", 4: "blocking", 9: "state(9)"} {
		if got := BridgePortStateName(s); got != want {
			t.Errorf("BridgePortStateName(%d) = %q, want %q", s, got, want)
		}
	}
}

// bridgeMsg is one AF_BRIDGE RTM_NEWLINK payload for ifindex with the
// given IFLA_PROTINFO attribute type and IFLA_BRPORT_STATE value.
func bridgeMsg(ifindex int32, protinfo uint16, state []byte) []byte {
	m := nl.NewIfInfomsg(unix.AF_BRIDGE)
	m.Index = ifindex
	pi := nl.NewRtAttr(int(protinfo), nil)
	pi.AddRtAttr(unix.IFLA_BRPORT_STATE, state)
	return append(m.Serialize(), pi.Serialize()...)
}

func TestParseBridgeDump(t *testing.T) {
	got, err := parseBridgeDump([][]byte{
		bridgeMsg(5, unix.IFLA_PROTINFO|unix.NLA_F_NESTED, []byte{brForwarding}),
		bridgeMsg(6, unix.IFLA_PROTINFO, []byte{brBlocking}),
		bridgeMsg(7, unix.IFLA_PROTINFO, nil), // no state: skipped, no panic
		bridgeMsg(8, unix.IFLA_IFNAME, []byte{brListening}),
	})
	if err != nil || len(got) != 2 || got[5] != brForwarding || got[6] != brBlocking {
		t.Fatalf("parseBridgeDump = %v, %v; want map[5:3 6:4]", got, err)
	}
	if _, err := parseBridgeDump([][]byte{make([]byte, unix.SizeofIfInfomsg-1)}); err == nil {
		t.Fatal("short message accepted")
	}
}

// TestParseBridgeDumpUnpadded: an attribute whose padding runs past the
// message (a 5-byte attribute at its end) is read, not a panic; one whose
// length runs past it is an error. nl.ParseRouteAttr panicked on the
// first ("slice bounds out of range [8:5]").
func TestParseBridgeDumpUnpadded(t *testing.T) {
	m := nl.NewIfInfomsg(unix.AF_BRIDGE)
	m.Index = 3
	state := []byte{5, 0, unix.IFLA_BRPORT_STATE, 0, brForwarding}
	msg := append(m.Serialize(), 4+byte(len(state)), 0, unix.IFLA_PROTINFO, 0)
	msg = append(msg, state...)
	got, err := parseBridgeDump([][]byte{msg})
	if err != nil || len(got) != 1 || got[3] != brForwarding {
		t.Fatalf("parseBridgeDump = %v, %v; want map[3:3]", got, err)
	}
	if _, err := parseBridgeDump([][]byte{append(m.Serialize(), 9, 0, unix.IFLA_PROTINFO, 0, 1)}); err == nil {
		t.Fatal("an attribute longer than its message was accepted")
	}
}

// FuzzParseBridgeDump: whatever the dump holds, parseBridgeDump returns
// an error or port states, never panics, and only states of the messages'
// own interfaces.
func FuzzParseBridgeDump(f *testing.F) {
	f.Add(bridgeMsg(5, unix.IFLA_PROTINFO|unix.NLA_F_NESTED, []byte{brForwarding}))
	f.Add(bridgeMsg(7, unix.IFLA_PROTINFO, nil))
	m := nl.NewIfInfomsg(unix.AF_BRIDGE).Serialize()
	f.Add(append(m, 9, 0, unix.IFLA_PROTINFO, 0, 5, 0, unix.IFLA_BRPORT_STATE, 0, 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The input as one message, and cut in two where it says.
		// (Copies: a message is read in place as an ifinfomsg, and the
		// kernel's come aligned.)
		msgs := [][]byte{bytes.Clone(data)}
		if len(data) > 1 {
			i := int(data[0]) % len(data)
			msgs = append(msgs, bytes.Clone(data[:i]), bytes.Clone(data[i:]))
		}
		got, err := parseBridgeDump(msgs)
		if err != nil {
			return
		}
		for idx := range got {
			found := false
			for _, m := range msgs {
				found = found || len(m) >= unix.SizeofIfInfomsg && int(nl.DeserializeIfInfomsg(m).Index) == idx
			}
			if !found {
				t.Fatalf("state for ifindex %d, which no message names", idx)
			}
		}
	})
}

func TestExecNoCommand(t *testing.T) {
	if _, err := ExecIn(context.Background(), "ef-none-h1"); !errors.Is(err, ErrBadOption) {
		t.Fatalf("ExecIn without a command = %v, want ErrBadOption", err)
	}
}

// A 16-character interface name does not fit IFNAMSIZ with its NUL.
func TestIfNameTooLong(t *testing.T) {
	name := strings.Repeat("x", unix.IFNAMSIZ)
	if err := ethtoolIoctl(-1, name, &ethtoolValue{}); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("ethtool on %q: %v, want too long", name, err)
	}
	if _, err := openTAP(name); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("tap %q: %v, want too long", name, err)
	}
}

// The address plan: a plain host's first NIC carries the host's MAC and
// MTU 1500; everything else (switch ports, an agent's fab ports, a relaying
// host's bridge ports) a port MAC and the fabric MTU.
func TestPortPlan(t *testing.T) {
	l := &Lab{}
	hostMAC := [6]byte{2, 0xef, 0, 0, 0, 1}
	plain := &labNode{id: 1, kind: topo.Host, mac: hostMAC, ifnames: []string{"", "eth1", "eth2"}}
	agent := &labNode{id: 2, kind: topo.Host, mac: hostMAC, agent: true, ifnames: []string{"fab0"}}
	relay := &labNode{id: 3, kind: topo.Host, mac: hostMAC, bridge: true, ifnames: []string{"eth0", "eth1"}}
	sw := &labNode{id: 4, kind: topo.Switch, ifnames: []string{"eth1"}}
	if l.firstIf(plain) != "eth1" || l.firstIf(&labNode{ifnames: []string{"", ""}}) != "" {
		t.Errorf("firstIf = %q", l.firstIf(plain))
	}
	pm := func(n topo.NodeID, p element.Port) [6]byte { return topo.PortMAC(n, p) }
	for _, c := range []struct {
		ln   *labNode
		p    element.Port
		want [6]byte
	}{{plain, 2, hostMAC}, {plain, 3, pm(1, 3)}, {agent, 1, pm(2, 1)}, {relay, 1, pm(3, 1)}, {sw, 1, pm(4, 1)}} {
		if got := l.portMAC(c.ln, c.p); [6]byte(got) != c.want {
			t.Errorf("node %d port %d: MAC %x, want %x", c.ln.id, c.p, got, c.want)
		}
	}
	for ln, want := range map[*labNode]int{plain: HostMTU, agent: FabricMTU, relay: FabricMTU, sw: FabricMTU} {
		if got := l.portMTU(ln); got != want {
			t.Errorf("node %d: MTU %d, want %d", ln.id, got, want)
		}
	}
}

// WaitReach pings at most 16 hosts, evenly spread over the others, and
// every other host when there are no more than 16 (the step was rounded
// down: 31 other hosts were all pinged, one after another).
func TestReachTargets(t *testing.T) {
	if got := reachTargets(1); len(got) != 0 {
		t.Errorf("reachTargets(1) = %v", got)
	}
	if got := reachTargets(17); !slices.Equal(got, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}) {
		t.Errorf("reachTargets(17) = %v, want all 16 others", got)
	}
	if got := reachTargets(18); !slices.Equal(got, []int{1, 3, 5, 7, 9, 11, 13, 15, 17}) {
		t.Errorf("reachTargets(18) = %v", got)
	}
	for n := 2; n <= 200; n++ {
		got := reachTargets(n)
		if len(got) == 0 || len(got) > 16 || got[0] != 1 || got[len(got)-1] >= n {
			t.Errorf("reachTargets(%d) = %v: want 1..16 targets among 1..%d", n, got, n-1)
		}
		if n <= 17 && len(got) != n-1 {
			t.Errorf("reachTargets(%d) = %v: want every other host", n, got)
		}
	}
}

// startSleep starts a sleep in namespace ns and registers its end.
func startSleep(t *testing.T, ns string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := StartIn(ns, cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// Cleanup removes exactly what carries the lab's prefix: the namespaces
// (a half-created one, a plain file, too) and the processes in them. It
// leaves another lab whose name extends this one's, and a namespace that
// only contains the prefix, and the process in that other lab, alone.
func TestCleanupOnlyOwnPrefix(t *testing.T) {
	needRoot(t)
	name := labName()
	other := name + "0"
	t.Cleanup(func() {
		Cleanup(name, 5*time.Second)
		Cleanup(other, 5*time.Second)
		for _, p := range []string{Prefix(name), Prefix(other)} {
			if left, _ := listNS(p); len(left) > 0 {
				t.Errorf("namespaces left: %v", left)
			}
		}
	})
	mine := Prefix(name) + "leaf-1"                                                // node names may hold '-'; lab names never do
	foreign := []string{Prefix(other) + Prefix(name) + "h1", Prefix(other) + "h1"} // sorted
	for _, ns := range append([]string{mine}, foreign...) {
		h, err := createNS(ns, false)
		if err != nil {
			t.Fatal(err)
		}
		h.Close()
	}
	half := Prefix(name) + "half"
	if err := os.WriteFile(filepath.Join(netnsDir, half), nil, 0o444); err != nil {
		t.Fatal(err)
	}
	// Several victims: a process SIGKILLed by the first sweep may still be
	// exiting, in its namespace, at the second; it is killed once, and
	// reported once.
	var victims []int
	for range 4 {
		victims = append(victims, startSleep(t, mine).Process.Pid)
	}
	slices.Sort(victims)
	bystander := startSleep(t, foreign[1])
	if labs, _ := Labs(); !slices.Contains(labs, name) || !slices.Contains(labs, other) {
		t.Errorf("Labs() = %v, want %s and %s", labs, name, other)
	}
	rep, err := Cleanup(name, 5*time.Second)
	if err != nil {
		t.Fatalf("Cleanup: %v", err)
	}
	killed := slices.Sorted(slices.Values(rep.Killed))
	if rep.Daemon != "none" || !slices.Equal(rep.Leftovers, []string{half, mine}) || !slices.Equal(killed, victims) {
		t.Errorf("Cleanup = %+v; want daemon none, leftovers [%s %s], killed %v (each once)", rep, half, mine, victims)
	}
	if left, _ := listNS(Prefix(name)); len(left) != 0 {
		t.Errorf("left of the lab: %v", left)
	}
	if left, _ := listNS(Prefix(other)); !slices.Equal(left, foreign) {
		t.Errorf("the other lab's namespaces: %v, want %v untouched", left, foreign)
	}
	if !running(bystander.Process.Pid) {
		t.Error("Cleanup killed a process of another lab")
	}
	if labs, _ := Labs(); slices.Contains(labs, name) || !slices.Contains(labs, other) {
		t.Errorf("Labs() = %v, want %s and not %s", labs, other, name)
	}
	if _, err := Cleanup(name, time.Second); !errors.Is(err, ErrNoLab) {
		t.Errorf("second Cleanup = %v, want ErrNoLab", err)
	}
}

// Two nodes that map to one namespace (node "n1", and node 1 whose name is
// unfit for a file) are refused by CheckScheme, without root: what up
// checks as input (exit 2).
func TestCheckSchemeDuplicateNamespace(t *testing.T) {
	b := topo.NewBuilder("dup")
	b.Connect(b.AddNode("n1", topo.Host), b.AddNode("a/b", topo.Host))
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	err = CheckScheme(g, KernelBridge, Options{})
	want := `emu: nodes "n1" and "a/b" map to the same namespace suffix n1 (names of up to 40 letters, digits, '_' and '.' are kept, others become n<id>): rename one: bad option`
	if !errors.Is(err, ErrBadOption) || err.Error() != want {
		t.Errorf("CheckScheme = %v\nwant %s", err, want)
	}
	b = topo.NewBuilder("nodup")
	b.Connect(b.AddNode("n0", topo.Host), b.AddNode("a/b", topo.Host)) // a/b is node 1: n1
	if g, err = b.Graph(); err != nil {
		t.Fatal(err)
	}
	if err := CheckScheme(g, KernelBridge, Options{}); err != nil {
		t.Errorf("n0 and a/b (n1): %v", err)
	}
}

// Up refuses the same clash before it makes anything.
func TestDuplicateNamespace(t *testing.T) {
	needRoot(t)
	b := topo.NewBuilder("dup")
	b.Connect(b.AddNode("n1", topo.Host), b.AddNode("a/b", topo.Host))
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	name := labName()
	t.Cleanup(func() { Cleanup(name, 5*time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := Up(ctx, g, KernelBridge, Options{Name: name, Scheme: scheme.Options{Params: map[string]string{"stp": "off"}}})
	if err == nil {
		l.Down()
		t.Fatal("lab with two nodes in one namespace came up")
	}
	if !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), `nodes "n1" and "a/b" map to the same namespace suffix n1`) {
		t.Errorf("Up = %v, want ErrBadOption naming the clash", err)
	}
	if left, _ := listNS(Prefix(name)); len(left) != 0 {
		t.Errorf("namespaces made: %v", left)
	}
	if _, err := os.Stat(LabDir(name)); !os.IsNotExist(err) {
		t.Errorf("state directory left: %v", err)
	}
}

// A TPID of 0 reads as 802.1Q even when flagged valid; the auxdata is
// found behind another control message.
func TestVLANAuxdataEdges(t *testing.T) {
	if _, tpid, ok := vlanFromAuxdata(auxCmsg(unix.TP_STATUS_VLAN_VALID|unix.TP_STATUS_VLAN_TPID_VALID, 7, 0)); !ok || tpid != 0x8100 {
		t.Errorf("TPID 0: tpid %#x ok %v, want 0x8100", tpid, ok)
	}
	other := make([]byte, unix.CmsgSpace(8))
	binary.NativeEndian.PutUint64(other[0:], uint64(unix.CmsgLen(8)))
	binary.NativeEndian.PutUint32(other[8:], unix.SOL_SOCKET)
	binary.NativeEndian.PutUint32(other[12:], unix.SCM_TIMESTAMP)
	oob := append(other, auxCmsg(unix.TP_STATUS_VLAN_VALID|unix.TP_STATUS_VLAN_TPID_VALID, 0x123, 0x88a8)...)
	if tci, tpid, ok := vlanFromAuxdata(oob); !ok || tci != 0x123 || tpid != 0x88a8 {
		t.Errorf("auxdata second: %#x %#x %v", tci, tpid, ok)
	}
}
