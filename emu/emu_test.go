package emu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/internal/testenv"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/topo"
)

// learningBridge is a minimal learning switch for the tests: learn the
// source, forward to the known port or flood.
type learningBridge struct {
	env    element.Env
	ports  []element.PortInfo
	table  map[[6]byte]element.Port
	links  []string // LinkChange calls, "p:up"
	mu     sync.Mutex
	frames atomic.Uint64
	c      element.Counters
}

func (b *learningBridge) Attach(env element.Env, ports []element.PortInfo) {
	b.env, b.ports, b.table = env, ports, map[[6]byte]element.Port{}
}

func (b *learningBridge) Receive(p element.Port, f []byte) {
	b.frames.Add(1)
	var dst, src [6]byte
	copy(dst[:], f[0:6])
	copy(src[:], f[6:12])
	if src[0]&1 == 0 {
		b.table[src] = p
	}
	if out, ok := b.table[dst]; ok && dst[0]&1 == 0 {
		if out != p {
			b.env.Send(out, f)
			b.c.Inc("forwarded")
		}
		return
	}
	b.c.Inc("flooded")
	for _, pi := range b.ports {
		if pi.Port != p && pi.Up {
			b.env.Send(pi.Port, f)
		}
	}
}

func (b *learningBridge) LinkChange(p element.Port, up bool) {
	b.mu.Lock()
	b.links = append(b.links, fmt.Sprintf("%d:%v", p, up))
	b.mu.Unlock()
	b.ports[p-1].Up = up
	for mac, port := range b.table {
		if port == p {
			delete(b.table, mac)
		}
	}
}

func (b *learningBridge) Counters() map[string]uint64 { return b.c.Snapshot() }

func (b *learningBridge) linkCalls() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.links...)
}

// repeater is a host agent for the tests: it relays between the host's NIC
// (port 1) and its stack (the Local port 2) and arms a timer to prove
// timers fire on the element's goroutine.
type repeater struct {
	env     element.Env
	ticks   atomic.Int64
	relayed atomic.Uint64
	ready   atomic.Bool
}

func (r *repeater) Attach(env element.Env, ports []element.PortInfo) {
	r.env = env
	if len(ports) != 2 || !ports[1].Local || ports[0].Local {
		panic(fmt.Sprintf("repeater: unexpected ports %+v", ports))
	}
	var tick func()
	tick = func() {
		r.ticks.Add(1)
		if r.ticks.Load() >= 3 {
			r.ready.Store(true)
		}
		r.env.After(10*element.Millisecond, tick)
	}
	env.After(10*element.Millisecond, tick)
}

func (r *repeater) Receive(p element.Port, f []byte) {
	r.relayed.Add(1)
	r.env.Send(3-p, f)
}

func (r *repeater) LinkChange(element.Port, bool) {}

// Ready is called on the element's goroutine: the lab waits for three ticks.
func (r *repeater) Ready() bool { return r.ready.Load() }

// testFabric runs a learning bridge on every switch and, when agents is
// set, a repeater on every host.
type testFabric struct {
	g       *topo.Graph
	agents  bool
	bridges map[topo.NodeID]*learningBridge
	reps    map[topo.NodeID]*repeater
}

func (f *testFabric) Element(n topo.NodeID) element.Element {
	if f.g.Node(n).Kind == topo.Switch {
		if f.bridges[n] == nil {
			f.bridges[n] = &learningBridge{}
		}
		return f.bridges[n]
	}
	if !f.agents {
		return nil
	}
	if f.reps[n] == nil {
		f.reps[n] = &repeater{}
	}
	return f.reps[n]
}

func testRegistry(t testing.TB, fabrics *[]*testFabric) *scheme.Registry {
	r := &scheme.Registry{}
	for _, agents := range []bool{false, true} {
		name := "learn"
		if agents {
			name = "learn-agent"
		}
		err := r.Register(scheme.Scheme{Name: name, New: func(g *topo.Graph, _ scheme.Options) (scheme.Fabric, error) {
			f := &testFabric{g: g, agents: agents, bridges: map[topo.NodeID]*learningBridge{}, reps: map[topo.NodeID]*repeater{}}
			*fabrics = append(*fabrics, f)
			return f, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// needRoot skips a test that needs root when not root.
func needRoot(t *testing.T) {
	t.Helper()
	if err := checkRoot(); err != nil {
		t.Skipf("skipping: %v", err)
	}
}

// waitLimit bounds how long a test waits for something that happens on
// another goroutine or process: far beyond what it takes, so that a
// loaded machine (CI runs two packages' tests at once on two cores) does
// not fail a test whose element merely ran late.
const waitLimit = 10 * time.Second

// waitUntil polls cond until it holds or waitLimit has passed, and reports
// whether it held. Tests wait with it, instead of sleeping a fixed time,
// for what is bound to happen (a frame counted, a timer fired), then
// assert exactly as before.
func waitUntil(cond func() bool) bool {
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

var labSeq atomic.Int32

// labName returns a lab name unique to this test process.
func labName() string {
	return fmt.Sprintf("t%d_%d", os.Getpid(), labSeq.Add(1))
}

// star builds hosts h1..hn on one switch s1.
func star(t testing.TB, n int) *topo.Graph {
	b := topo.NewBuilder(fmt.Sprintf("star%d", n))
	s := b.AddNode("s1", topo.Switch)
	for i := 1; i <= n; i++ {
		h := b.AddNode(fmt.Sprintf("h%d", i), topo.Host)
		b.Connect(h, s)
	}
	g, err := b.Graph()
	if err != nil {
		panic(err) // a fixed, valid topology
	}
	return g
}

// upLab starts a lab and registers its removal, also on failure, and checks
// that no namespace is left.
func upLab(t *testing.T, g *topo.Graph, schemeName string, opts Options) *Lab {
	t.Helper()
	if opts.Name == "" {
		opts.Name = labName()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cleanupLab(t, opts.Name)
	l, err := Up(ctx, g, schemeName, opts)
	if err != nil {
		t.Fatalf("Up: %v", err)
	}
	t.Cleanup(func() {
		if err := l.Down(); err != nil {
			t.Errorf("Down: %v", err)
		}
	})
	return l
}

// cleanupLab removes lab name when the test ends and checks that nothing
// of it stays behind, whatever happened.
func cleanupLab(t *testing.T, name string) {
	t.Helper()
	t.Cleanup(func() {
		if _, err := Cleanup(name, 10*time.Second); err != nil && !errors.Is(err, ErrNoLab) {
			t.Errorf("cleanup: %v", err)
		}
		if left, _ := listNS(Prefix(name)); len(left) > 0 {
			t.Errorf("namespaces left: %v", left)
		}
	})
}

// needTool skips a test whose tool is missing, unless CI is set: then it
// fails, because scripts/deps installs it.
func needTool(t *testing.T, name string) {
	t.Helper()
	testenv.NeedTools(t, name)
}

func ping(t *testing.T, l *Lab, from, to string) error {
	t.Helper()
	needTool(t, "ping")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	out, err := l.Exec(ctx, from, "ping", "-c", "2", "-i", "0.2", "-W", "2", to)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	if !strings.Contains(string(out), " 0% packet loss") {
		return fmt.Errorf("loss:\n%s", out)
	}
	return nil
}

func TestCheckRoot(t *testing.T) {
	if err := CheckRoot(0); err != nil {
		t.Fatalf("CheckRoot(0) = %v", err)
	}
	err := CheckRoot(1000)
	if err == nil || !strings.Contains(err.Error(), "root") {
		t.Fatalf("CheckRoot(1000) = %v, want a clear error", err)
	}
}

func TestPingThroughElement(t *testing.T) {
	needRoot(t)
	var fabrics []*testFabric
	g := star(t, 2)
	l := upLab(t, g, "learn", Options{Registry: testRegistry(t, &fabrics)})
	if err := ping(t, l, "h1", "10.0.0.2"); err != nil {
		t.Fatalf("ping h1 -> h2: %v", err)
	}
	// An in-process lab is known as running, not as crashed.
	if pid, alive := Owner(l.Name()); pid != os.Getpid() || !alive {
		t.Fatalf("Owner = %d, %v; want this process", pid, alive)
	}
	st := l.Status()
	var sw NodeStatus
	for _, n := range st.Nodes {
		if n.Name == "s1" {
			sw = n
		}
	}
	if sw.Counters["forwarded"] == 0 || len(sw.Ports) != 2 || sw.Ports[0].RxFrames == 0 || sw.Ports[1].TxFrames == 0 {
		t.Fatalf("switch status shows no forwarding: %+v", sw)
	}
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	if labs, _ := Labs(); slices.Contains(labs, l.Name()) {
		t.Fatalf("Down left lab %s behind", l.Name())
	}
}

func TestHostAgentThroughTAP(t *testing.T) {
	needRoot(t)
	var fabrics []*testFabric
	g := star(t, 2)
	l := upLab(t, g, "learn-agent", Options{Registry: testRegistry(t, &fabrics)})
	// The host's eth0 is the TAP with the planned address; the fabric side
	// is fab0.
	out, err := l.Exec(context.Background(), "h1", "ip", "-o", "addr", "show", "dev", "eth0")
	if err != nil || !strings.Contains(string(out), "10.0.0.1/8") {
		t.Fatalf("eth0 of h1: %v\n%s", err, out)
	}
	out, err = l.Exec(context.Background(), "h1", "ip", "-o", "link", "show", "dev", "eth0")
	if err != nil || !strings.Contains(string(out), "02:ef:00:00:00:01") {
		t.Fatalf("eth0 MAC of h1: %v\n%s", err, out)
	}
	if err := ping(t, l, "h1", "10.0.0.2"); err != nil {
		t.Fatalf("ping through the agents: %v", err)
	}
	f := fabrics[0]
	h1, _ := g.Lookup("h1")
	rep := f.reps[h1]
	if rep.relayed.Load() == 0 {
		t.Fatal("the host agent relayed nothing: traffic bypassed it")
	}
	if rep.ticks.Load() < 3 {
		t.Fatalf("agent timer fired %d times before ready", rep.ticks.Load())
	}
	var hs NodeStatus
	for _, n := range l.Status().Nodes {
		if n.Name == "h1" {
			hs = n
		}
	}
	if len(hs.Ports) != 2 || hs.Ports[0].Interface != "fab0" || !hs.Ports[1].Local || hs.Ports[1].RxFrames == 0 {
		t.Fatalf("agent ports: %+v", hs.Ports)
	}
}

func TestLinkDownUp(t *testing.T) {
	needRoot(t)
	var fabrics []*testFabric
	g := star(t, 2)
	l := upLab(t, g, "learn", Options{Registry: testRegistry(t, &fabrics)})
	s1, _ := g.Lookup("s1")
	br := fabrics[0].bridges[s1]
	if err := l.SetLink("h2", "s1", false); err != nil {
		t.Fatal(err)
	}
	if err := ping(t, l, "h1", "10.0.0.2"); err == nil {
		t.Fatal("ping crossed a failed link")
	}
	if err := l.SetLink("s1", "h2", true); err != nil {
		t.Fatal(err)
	}
	// h1's ARP entry for h2 failed during the outage and resolution that
	// was under way may still fail: as on a real host, retry.
	var perr error
	for try := 0; try < 4; try++ {
		if perr = ping(t, l, "h1", "10.0.0.2"); perr == nil {
			break
		}
	}
	if perr != nil {
		t.Fatalf("ping after repair: %v", perr)
	}
	if got, want := strings.Join(br.linkCalls(), ","), "2:false,2:true"; got != want {
		t.Fatalf("LinkChange calls = %s, want %s", got, want)
	}
	for _, ls := range l.Status().Links {
		if !ls.Up {
			t.Fatalf("link %+v reported down after repair", ls)
		}
	}
	if err := l.SetLink("h1", "h2", false); !errors.Is(err, ErrNoLink) {
		t.Fatalf("SetLink on non-adjacent nodes = %v, want ErrNoLink", err)
	}
	if err := l.SetLink("h1", "nope", false); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("SetLink on unknown node = %v, want ErrUnknownNode", err)
	}
}

func TestKernelBridgeRing(t *testing.T) {
	needRoot(t)
	// Three switches in a ring, one host on each of two: STP must block one
	// ring port, and ping must still work.
	b := topo.NewBuilder("ring3")
	s := []topo.NodeID{b.AddNode("s1", topo.Switch), b.AddNode("s2", topo.Switch), b.AddNode("s3", topo.Switch)}
	b.Connect(s[0], s[1])
	b.Connect(s[1], s[2])
	b.Connect(s[2], s[0])
	b.Connect(b.AddNode("h1", topo.Host), s[0])
	b.Connect(b.AddNode("h2", topo.Host), s[1])
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	l := upLab(t, g, KernelBridge, Options{Scheme: scheme.Options{Params: map[string]string{"forward_delay": "2", "hello_time": "1", "max_age": "6"}}})
	blocking := 0
	for _, n := range l.Status().Nodes {
		for _, p := range n.Ports {
			if p.STP == "blocking" {
				blocking++
			}
		}
	}
	if blocking != 1 {
		t.Fatalf("%d blocking ports in a 3-ring, want 1", blocking)
	}
	if err := ping(t, l, "h1", "10.0.0.2"); err != nil {
		t.Fatalf("ping over STP: %v", err)
	}
}

func TestKernelBridgeParams(t *testing.T) {
	for _, p := range []map[string]string{
		{"stp": "maybe"}, {"forward_delay": "1"}, {"hello_time": "x"}, {"bogus": "1"},
		{"max_age": "41"}, {"forward_delay": "NaN"}, {"hello_time": "nan"}, {"max_age": "-Inf"},
	} {
		if _, err := parseKBParams(p); !errors.Is(err, ErrBadOption) {
			t.Errorf("parseKBParams(%v) = %v, want ErrBadOption", p, err)
		}
	}
	c, err := parseKBParams(map[string]string{"forward_delay": "4", "hello_time": "1", "max_age": "6", "stp": "on"})
	if err != nil || c.forwardDelay != 4*time.Second || !c.stp {
		t.Fatalf("parseKBParams = %+v, %v", c, err)
	}
}

// FuzzKBParams: any value is a valid configuration within the kernel's
// ranges or ErrBadOption, never a panic.
func FuzzKBParams(f *testing.F) {
	for _, s := range []string{"stp", "forward_delay", "hello_time", "max_age", "bogus"} {
		f.Add(s, "4")
	}
	f.Add("forward_delay", "NaN")
	f.Fuzz(func(t *testing.T, k, v string) {
		c, err := parseKBParams(map[string]string{k: v})
		if err != nil {
			if !errors.Is(err, ErrBadOption) {
				t.Fatalf("%s=%q: %v, want ErrBadOption", k, v, err)
			}
			return
		}
		for name, d := range map[string]time.Duration{"forward_delay": c.forwardDelay, "hello_time": c.hello, "max_age": c.maxAge} {
			if r := kbRange[name]; d < time.Duration(r[0]*float64(time.Second)) || d > time.Duration(r[1]*float64(time.Second)) {
				t.Fatalf("%s=%q: %s %v outside %v s", k, v, name, d, r)
			}
		}
	})
}

func TestUpRejects(t *testing.T) {
	needRoot(t)
	g := star(t, 1)
	ctx := context.Background()
	if _, err := Up(ctx, g, "learn", Options{Name: "bad-name"}); !errors.Is(err, ErrBadLabName) {
		t.Errorf("bad name: %v", err)
	}
	if _, err := Up(ctx, g, "nosuch", Options{Name: labName()}); err == nil || !strings.Contains(err.Error(), "kernel-bridge") {
		t.Errorf("unknown scheme: %v", err)
	}
	if _, err := Up(ctx, g, KernelBridge, Options{Name: labName(), Rate: -1}); !errors.Is(err, ErrBadOption) {
		t.Errorf("negative rate: %v", err)
	}
	// A lab name whose namespaces exist is refused, and left alone.
	name := labName()
	h, err := createNS(Prefix(name)+"x", false)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	t.Cleanup(func() { deleteNS(Prefix(name) + "x") })
	if _, err := Up(ctx, g, KernelBridge, Options{Name: name}); !errors.Is(err, ErrLabExists) {
		t.Errorf("existing lab: %v", err)
	}
	if left, _ := listNS(Prefix(name)); len(left) != 1 {
		t.Errorf("Up touched an existing lab: %v", left)
	}
}

func TestRateLimit(t *testing.T) {
	needRoot(t)
	// The kernel bridge forwards, so that the measurement shows the
	// shaping rather than how much CPU an element gets on a loaded machine.
	l := upLab(t, star(t, 2), KernelBridge, Options{Rate: 50_000_000, Scheme: scheme.Options{Params: map[string]string{"stp": "off"}}})
	for _, node := range []string{"h1", "s1"} {
		out, err := l.Exec(context.Background(), node, "tc", "qdisc", "show")
		if err != nil || strings.Count(string(out), "qdisc tbf") != map[string]int{"h1": 1, "s1": 2}[node] || !strings.Contains(string(out), "rate 50Mbit") {
			t.Fatalf("tbf at 50 Mbit missing in %s: %v\n%s", node, err, out)
		}
	}
	needTool(t, "iperf3")
	mbps := iperfTCP(t, l, "h1", "h2", "10.0.0.2", 3)
	// Above the rate means no shaping; far below it means a bucket too
	// small for TCP.
	if mbps > 55 || mbps < 25 {
		t.Fatalf("iperf3 through a 50 Mb/s link: %.1f Mb/s", mbps)
	}
	t.Logf("iperf3 through a 50 Mb/s tbf: %.1f Mb/s", mbps)
}
