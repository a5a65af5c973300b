package emu

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/topo"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// TestDownFencesHandles: a link or status request that reaches a lab once
// Down has begun (the daemon's control socket answers until Serve returns)
// is refused and touches nothing. A netlink handle Down has closed does
// not fail: the library runs the request in the calling thread's
// namespace, for the daemon's handlers the machine's own, where a
// "link h1 s1 down" set eth0 down. The request is made here from a thread
// inside a scratch namespace holding interfaces of the same names, which
// stands in for the machine's: they must stay up.
func TestDownFencesHandles(t *testing.T) {
	needRoot(t)
	var fabrics []*testFabric
	l := upLab(t, star(t, 2), "learn", Options{Registry: testRegistry(t, &fabrics)})
	h1, err := l.node("h1")
	if err != nil {
		t.Fatal(err)
	}
	s1, err := l.node("s1")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{h1.ifnames[0], s1.ifnames[0]}
	if names[0] == names[1] {
		names[1] += "x" // a veth pair needs two names; the first one matters
	}

	sbxName := Prefix(l.Name()) + "sbx"
	sbx, err := createNS(sbxName, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sbx.Close()
		if err := deleteNS(sbxName); err != nil {
			t.Errorf("remove %s: %v", sbxName, err)
		}
	})
	nh, err := netlink.NewHandleAt(sbx)
	if err != nil {
		t.Fatal(err)
	}
	defer nh.Close()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: names[0]}, PeerName: names[1]}
	if err := nh.LinkAdd(veth); err != nil {
		t.Fatalf("scratch veth: %v", err)
	}
	for _, n := range names {
		lk, err := nh.LinkByName(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := nh.LinkSetUp(lk); err != nil {
			t.Fatal(err)
		}
	}

	if err := l.Down(); err != nil {
		t.Fatalf("Down: %v", err)
	}
	type answer struct {
		err      error
		notReady string
		nodes    int
	}
	done := make(chan answer, 1)
	go func() {
		// Never unlocked: the thread ends with the goroutine rather
		// than go back to the pool inside the scratch namespace.
		runtime.LockOSThread()
		if err := netns.Set(sbx); err != nil {
			done <- answer{err: err}
			return
		}
		var a answer
		a.err = l.SetLink("h1", "s1", false)
		st := l.Status()
		a.notReady, a.nodes = st.NotReady, len(st.Nodes)
		done <- a
	}()
	a := <-done
	if !errors.Is(a.err, ErrLabDown) {
		t.Errorf("SetLink after Down = %v, want ErrLabDown", a.err)
	}
	if a.notReady != ErrLabDown.Error() || a.nodes != 0 {
		t.Errorf("Status after Down: not ready %q with %d nodes, want %q and none", a.notReady, a.nodes, ErrLabDown.Error())
	}
	for _, n := range names {
		lk, err := nh.LinkByName(n)
		if err != nil {
			t.Fatal(err)
		}
		if lk.Attrs().Flags&net.FlagUp == 0 {
			t.Errorf("%s in the scratch namespace was set down by a request made after Down", n)
		}
	}
}

// TestStrayNamespaceFile: an empty file in the namespace directory (what
// a failed bind mount leaves) is no namespace: it is removed, it names no
// process, and a real namespace's file is left alone.
func TestStrayNamespaceFile(t *testing.T) {
	needRoot(t)
	name := labName()
	cleanupLab(t, name)
	real := Prefix(name) + "real"
	h, err := createNS(real, false)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	t.Cleanup(func() { deleteNS(real) })
	stray := filepath.Join(netnsDir, Prefix(name)+"stray")
	if err := os.WriteFile(stray, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(stray) })
	if !isNSFile(filepath.Join(netnsDir, real)) || isNSFile(stray) {
		t.Fatalf("isNSFile: namespace %v, plain file %v; want true, false", isNSFile(filepath.Join(netnsDir, real)), isNSFile(stray))
	}
	if pids := killNSProcesses([]string{Prefix(name) + "stray"}); len(pids) != 0 {
		t.Fatalf("killNSProcesses on a plain file killed %v", pids)
	}
	removeIfNotNS(filepath.Join(netnsDir, real))
	removeIfNotNS(stray)
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Fatalf("stray file left: %v", err)
	}
	if !isNSFile(filepath.Join(netnsDir, real)) {
		t.Fatal("removeIfNotNS removed a namespace")
	}
}

// panicEnv makes the test binary run testPanicLab; its value is the lab's
// name.
const panicEnv = "EMU_TEST_PANIC"

// panicky is a switch element with a bug: it panics on its first frame.
type panicky struct{ learningBridge }

func (p *panicky) Receive(element.Port, []byte) { panic("boom") }

type panickyFabric struct{ g *topo.Graph }

func (f panickyFabric) Element(n topo.NodeID) element.Element {
	if f.g.Node(n).Kind == topo.Switch {
		return &panicky{}
	}
	return nil
}

// testPanicLab brings up a 2-host star whose switch panics on the first
// frame, and sends it one. The process must die of the panic; it exits 3
// if it does not.
func testPanicLab(name string) int {
	reg := &scheme.Registry{}
	if err := reg.Register(scheme.Scheme{Name: "panicky", New: func(g *topo.Graph, _ scheme.Options) (scheme.Fabric, error) {
		return panickyFabric{g}, nil
	}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l, err := Up(ctx, star(nil, 2), "panicky", Options{Name: name, Registry: reg})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ns, _ := l.NodeNS("h1")
	ExecIn(ctx, ns, "ping", "-c", "1", "-W", "1", "10.0.0.2")
	time.Sleep(20 * time.Second)
	l.Down()
	return 3
}

// TestElementPanicTakesLabDown: an element that panics (a bug) kills the
// process that runs the lab, loudly, but only after the lab is down: no
// namespace, process or state directory of it is left behind.
func TestElementPanicTakesLabDown(t *testing.T) {
	needRoot(t)
	needTool(t, "ping")
	name := labName()
	cleanupLab(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), panicEnv+"="+name)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 3 || ee.ExitCode() == 1 {
		t.Fatalf("lab process: %v, want it to die of the panic; output:\n%s", err, out)
	}
	if !strings.Contains(string(out), "the element of s1 panicked: boom (the lab was taken down)") {
		t.Fatalf("output does not tell of the panic and the teardown:\n%s", out)
	}
	left, err := listNS(Prefix(name))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Fatalf("namespaces left: %v", left)
	}
	if _, err := os.Stat(LabDir(name)); !os.IsNotExist(err) {
		t.Fatalf("state directory left: %v", err)
	}
}

// TestGoRetiredOffMainThread: work that moves its thread into a lab's
// namespaces never runs on the main thread, which the runtime cannot
// retire: it is handed to another thread when the goroutine lands there.
func TestGoRetiredOffMainThread(t *testing.T) {
	for range 50 {
		onMain := make(chan bool, 1)
		goRetired(func() { onMain <- unix.Gettid() == unix.Getpid() })
		if <-onMain {
			t.Fatal("goRetired ran f on the main thread")
		}
	}
	// Pretend the goroutine landed on the main thread: f must run on a
	// thread of its own.
	var outer int
	isMainThread = func() bool { outer = unix.Gettid(); return true }
	t.Cleanup(func() { isMainThread = func() bool { return unix.Gettid() == unix.Getpid() } })
	inner := make(chan int, 1)
	goRetired(func() { inner <- unix.Gettid() })
	if tid := <-inner; tid == outer {
		t.Fatalf("f ran on the thread taken for the main one (tid %d)", tid)
	}
}

// TestDownWithStuckElement: Down returns while a request waits on a runner
// whose element is stuck behind a full event queue (the request holds the
// handles' read lock; only quitting the runner ends its wait). Down took
// the write lock first and waited for ever, also when called by the
// handler of an element's panic.
func TestDownWithStuckElement(t *testing.T) {
	defer func(old time.Duration) { stopWait = old }(stopWait)
	stopWait = 100 * time.Millisecond
	r := newRunner("s1", &recorder{}, nil, nil, time.Now(), 1, quietLog())
	r.run()
	stuck := make(chan struct{})
	defer close(stuck)
	r.post(event{kind: evFunc, fn: func() { <-stuck }})
	for len(r.events) < cap(r.events) {
		r.events <- event{kind: evFunc, fn: func() {}}
	}
	l := &Lab{name: labName(), log: quietLog(), nodes: []*labNode{{name: "s1", run: r, h: -1}}}
	waiting := make(chan struct{})
	go func() {
		if !l.hold() {
			return
		}
		defer l.release()
		close(waiting)
		r.do(func() {}, time.Hour) // as Status asks for counters
	}()
	<-waiting
	done := make(chan error, 1)
	go func() { done <- l.Down() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Down still waiting 10 s on a request stuck behind the element")
	}
}

// TestServeCutsIdleClients: once the daemon stops serving, a client that
// has not sent its request is cut off; it held Serve's return, and the
// lab's teardown, for its 30-s deadline.
func TestServeCutsIdleClients(t *testing.T) {
	needRoot(t)
	var fabrics []*testFabric
	l := upLab(t, star(t, 2), "learn", Options{Registry: testRegistry(t, &fabrics)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, l) }()
	var c net.Conn
	if !waitUntil(func() bool {
		var err error
		c, err = net.Dial("unix", socketPath(l.Name()))
		return err == nil
	}) {
		t.Fatal("control socket did not come up")
	}
	defer c.Close()
	// Accepted, not only queued: a request on another connection is
	// answered after the idle one's accept.
	time.Sleep(50 * time.Millisecond)
	if _, err := RemoteStatus(l.Name()); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve still waiting 5 s on an idle client")
	}
}

// TestDownReportsElementPanic: an element's panic recorded while Down runs
// (a signal took the lab down first) is in Down's error, so that the
// process fails even if it exits before the panic itself.
func TestDownReportsElementPanic(t *testing.T) {
	l := &Lab{name: labName(), log: quietLog()}
	pe := fmt.Errorf("emu: lab %s: the element of s1 panicked: boom: %w", l.name, ErrElementPanic)
	l.panicErr.Store(&pe)
	if err := l.Down(); !errors.Is(err, ErrElementPanic) || !strings.Contains(err.Error(), "s1 panicked: boom") {
		t.Fatalf("Down = %v, want the element's panic", err)
	}
}
