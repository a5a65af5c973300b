package emu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/scheme/all"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Options configures a lab.
type Options struct {
	// Name of the lab (required): 1..16 of [a-z0-9_]. Every namespace is
	// named Prefix(Name)+node.
	Name string
	// Registry resolves the scheme name; nil means every shipped scheme
	// (scheme/all). KernelBridge needs no registry.
	Registry *scheme.Registry
	// Scheme is handed to the scheme's constructor (seed, params). For
	// KernelBridge, Params holds stp, forward_delay, hello_time, max_age.
	Scheme scheme.Options
	// RateLimit shapes every link to its topology rate with a tbf qdisc on
	// both veth ends.
	RateLimit bool
	// Rate, when positive, shapes every link to this many bits per second
	// (implies RateLimit).
	Rate int64
	// TopoDelay applies each link's delay from the topology in the
	// emulator's own port wrappers (delay.go: this kernel has no netem);
	// Delay, when positive, applies that delay to every link instead.
	// Delays below MinDelay are not applied. A link must have an end
	// that runs an element (not kernel-bridge).
	TopoDelay bool
	Delay     time.Duration
	// IPv6 keeps IPv6 enabled in the lab's namespaces (off by default).
	IPv6 bool
	// ReadyTimeout bounds the wait for the fabric to be ready; zero means
	// 60 s plus the time the scheme's timers take before it forwards
	// (scheme.Settler; KernelBridge with STP alike).
	ReadyTimeout time.Duration
	// WaitReach makes Up also wait until the first host reaches up to 16
	// other hosts with ping (needs the ping binary): the end-to-end sign
	// of readiness for a scheme that converges on its own clock (802.1D
	// listening and learning; the stp bridges are Readiers as well, for a
	// lab with fewer than two hosts).
	WaitReach bool
	// Topology is the spec or file the graph came from, for status only.
	Topology string
	// Log receives the engine's and the elements' logs; nil means warnings
	// and errors on stderr.
	Log *slog.Logger
	// Built, when set, is called once the lab is built, before Up waits
	// for the fabric to be ready: a daemon serves status, link and exec
	// from then on, so that a spanning tree can be watched converging.
	// Up's wait ends early when ctx is cancelled.
	Built func(*Lab)
}

// Lab is a running emulated fabric.
type Lab struct {
	name, scheme string
	g            *topo.Graph
	opts         Options
	start        time.Time
	fabric       scheme.Fabric
	kb           *kbConfig
	log          *slog.Logger
	nodes        []*labNode // by NodeID
	links        []bool     // link state, by LinkID

	mu sync.Mutex // guards links
	// ops is held for reading by every use of the nodes' netlink and
	// namespace handles from outside Up (SetLink, Status), and for
	// writing by Down while it sets closed. A netlink handle that
	// Down has closed does not fail: the library runs the request in
	// the calling thread's namespace, the machine's own (a link request
	// during teardown once set the root namespace's eth0 down).
	ops    sync.RWMutex
	closed bool // Down has begun: the handles are closed or closing
	// panicErr is the first element panic, which Down reports.
	panicErr atomic.Pointer[error]
	once     sync.Once
	downErr  error
}

type labNode struct {
	id      topo.NodeID
	name    string
	kind    topo.Kind
	ns      string
	h       netns.NsHandle
	nl      *netlink.Handle
	ifnames []string // port p at p-1; "" when unconnected
	el      element.Element
	agent   bool // a host with an agent: TAP eth0 + fab0..
	bridge  bool // a kernel bridge br0 over the ports
	run     *runner
	pports  []*packetPort // port p at p-1, for kernel statistics
	mac     [6]byte
	ip      netip.Prefix
}

// Up builds a lab from graph g running scheme schemeName (or KernelBridge)
// and returns once the fabric is ready. On any failure it removes what it
// built. The caller must call Down.
func Up(ctx context.Context, g *topo.Graph, schemeName string, opts Options) (*Lab, error) {
	if err := checkRoot(); err != nil {
		return nil, err
	}
	if err := ValidateName(opts.Name); err != nil {
		return nil, err
	}
	if err := checkRates(g, opts); err != nil {
		return nil, err
	}
	if left, err := listNS(Prefix(opts.Name)); err != nil {
		return nil, fmt.Errorf("emu: list namespaces: %w", err)
	} else if len(left) > 0 {
		return nil, fmt.Errorf("emu: lab %q: %w (%d namespaces named %s*; run 'edgefabric down %s' to remove them)", opts.Name, ErrLabExists, len(left), Prefix(opts.Name), opts.Name)
	}
	l := &Lab{name: opts.Name, scheme: schemeName, g: g, opts: opts, log: opts.Log}
	if l.log == nil {
		l.log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	var err error
	if l.kb, l.fabric, err = buildScheme(g, schemeName, opts); err != nil {
		return nil, err
	}
	if w := neighWarning(len(g.Nodes(topo.Host)), readProc); w != "" {
		l.log.Warn("emu: " + w)
	}
	t0 := time.Now()
	if err := takeName(l.name); err != nil {
		return nil, err
	}
	if err := l.build(ctx); err != nil {
		return nil, errors.Join(err, l.Down())
	}
	t1 := time.Now()
	if opts.Built != nil {
		opts.Built(l)
	}
	if err := l.waitReady(ctx); err != nil {
		return nil, errors.Join(err, l.Down())
	}
	l.log.Info("lab up", "lab", l.name, "nodes", g.NumNodes(), "links", g.NumLinks(), "build", t1.Sub(t0).Round(time.Millisecond), "ready", time.Since(t1).Round(time.Millisecond))
	return l, nil
}

// takeName records this process as lab name's owner, unless another live
// process has claimed the name (an up starting its daemon, a foreground
// lab being built: a state directory, no namespace yet), which Up's look
// for namespaces cannot see: the new lab would overwrite its owner record,
// and on failure remove its state directory. The claim of the up that
// spawned this process as the lab's daemon is this lab's own. The look
// and the record are made between claims.
func takeName(name string) error {
	unlock, err := lockClaims()
	if err != nil {
		return err
	}
	defer unlock()
	if o, ok := readOwner(name); ok && o.Pid != os.Getpid() && alive(o.Pid, o.PidStart) &&
		!(os.Getenv(ReadyFDEnv) != "" && o.Pid == os.Getppid()) {
		return fmt.Errorf("emu: lab %q: %w (claimed by process %d; run 'edgefabric down %s' to remove it)", name, ErrLabExists, o.Pid, name)
	}
	return writeOwner(name)
}

// Name returns the lab's name.
func (l *Lab) Name() string { return l.name }

// Graph returns the lab's topology.
func (l *Lab) Graph() *topo.Graph { return l.g }

func (l *Lab) build(ctx context.Context) error {
	g := l.g
	l.start = time.Now()
	l.links = make([]bool, g.NumLinks())
	if err := checkNamespaces(g); err != nil {
		return err
	}
	for i := 0; i < g.NumNodes(); i++ {
		n := topo.NodeID(i)
		nd := g.Node(n)
		ln := &labNode{id: n, name: nd.Name, kind: nd.Kind, ns: nsName(l.name, g, n), h: -1, ifnames: make([]string, nd.Ports)}
		if l.fabric != nil {
			ln.el = l.fabric.Element(n)
		}
		switch {
		case nd.Kind == topo.Host:
			mac, ip, err := g.HostAddr(n)
			if err != nil {
				return fmt.Errorf("emu: %w", err)
			}
			ln.mac, ln.ip = mac, ip
			ln.agent = ln.el != nil
			ln.bridge = l.kb != nil && nd.Relay
		case l.kb != nil:
			ln.bridge = true
		case ln.el == nil:
			return fmt.Errorf("emu: scheme %s runs nothing on switch %q: %w", l.scheme, nd.Name, ErrBadOption)
		}
		fileNames := switchIfNames(g, n)
		for p := 1; p <= nd.Ports; p++ {
			if _, ok := g.PortLink(n, element.Port(p)); !ok {
				continue
			}
			switch {
			case fileNames != nil:
				ln.ifnames[p-1] = fileNames[p-1]
			case nd.Kind == topo.Switch:
				ln.ifnames[p-1] = fmt.Sprintf("eth%d", p)
			case ln.agent:
				ln.ifnames[p-1] = fmt.Sprintf("fab%d", p-1)
			default:
				ln.ifnames[p-1] = fmt.Sprintf("eth%d", p-1)
			}
		}
		l.nodes = append(l.nodes, ln)
	}
	if err := l.checkDelay(); err != nil {
		return err
	}
	// Namespaces.
	for _, ln := range l.nodes {
		if ctx.Err() != nil {
			return fmt.Errorf("emu: lab %s: stopped while it was being built: %w", l.name, ctxErr(ctx))
		}
		h, err := createNS(ln.ns, l.opts.IPv6)
		if err != nil {
			return err
		}
		ln.h = h
		if ln.nl, err = netlink.NewHandleAt(h); err != nil {
			return fmt.Errorf("emu: netlink in %s: %w", ln.ns, err)
		}
	}
	// Links: each veth pair is created with its two ends straight in their
	// namespaces under their final names, so nothing of the lab ever
	// appears in the root namespace and names need no shortening.
	for i := 0; i < g.NumLinks(); i++ {
		if ctx.Err() != nil {
			return fmt.Errorf("emu: lab %s: stopped while it was being built: %w", l.name, ctxErr(ctx))
		}
		lk := g.Link(topo.LinkID(i))
		a, b := l.nodes[lk.A.Node], l.nodes[lk.B.Node]
		v := &netlink.Veth{
			LinkAttrs: netlink.LinkAttrs{
				Name:         a.ifnames[lk.A.Port-1],
				Namespace:    netlink.NsFd(a.h),
				HardwareAddr: net.HardwareAddr(l.portMAC(a, lk.A.Port)),
				TxQLen:       1000,
				MTU:          l.portMTU(a),
			},
			PeerMTU:          uint32(l.portMTU(b)),
			PeerName:         b.ifnames[lk.B.Port-1],
			PeerNamespace:    netlink.NsFd(b.h),
			PeerHardwareAddr: net.HardwareAddr(l.portMAC(b, lk.B.Port)),
			PeerTxQLen:       1000,
		}
		if err := netlink.LinkAdd(v); err != nil {
			return fmt.Errorf("emu: veth %s:%s - %s:%s: %w", a.name, v.Name, b.name, v.PeerName, err)
		}
		l.links[i] = true
	}
	for _, ln := range l.nodes {
		if err := l.setupNode(ln); err != nil {
			return err
		}
	}
	if err := l.rateLimits(); err != nil {
		return err
	}
	for _, ln := range l.nodes {
		if ln.run != nil {
			ln.run.run()
		}
	}
	return nil
}

// portMAC is the address plan: a plain host's first NIC carries the host's
// MAC (it is the host's eth0); every other port, including an agent host's
// fab ports, carries topo.PortMAC.
func (l *Lab) portMAC(ln *labNode, p element.Port) []byte {
	if ln.kind == topo.Host && !ln.agent && !ln.bridge && ln.ifnames[p-1] == l.firstIf(ln) {
		m := ln.mac
		return m[:]
	}
	m := topo.PortMAC(ln.id, p)
	return m[:]
}

// FabricMTU is the MTU of every fabric-side interface (switch ports, a host
// agent's fab ports); HostMTU that of a host's own interface (its eth0).
// The fabric carries the hosts' full-size frames plus whatever a scheme
// adds (DumbNet tags, an Axon header, VXLAN's 50 bytes), and a veth drops
// a received frame longer than its MTU without a trace, so the fabric runs
// jumbo while hosts keep the usual 1500.
const (
	FabricMTU = 9000
	HostMTU   = 1500
)

func (l *Lab) portMTU(ln *labNode) int {
	if ln.kind == topo.Host && !ln.agent && !ln.bridge {
		return HostMTU
	}
	return FabricMTU
}

func (l *Lab) firstIf(ln *labNode) string {
	for _, n := range ln.ifnames {
		if n != "" {
			return n
		}
	}
	return ""
}

// setupNode configures one namespace: offloads, links up, addresses, the
// kernel bridge, the TAP and the element's ports.
func (l *Lab) setupNode(ln *labNode) error {
	return inNS(ln.h, func() error {
		ifindex := make([]int, len(ln.ifnames))
		for i, name := range ln.ifnames {
			if name == "" {
				continue
			}
			if err := offloadsOff(name); err != nil {
				return fmt.Errorf("emu: %s: %w", ln.ns, err)
			}
			lk, err := ln.nl.LinkByName(name)
			if err != nil {
				return fmt.Errorf("emu: %s %s: %w", ln.ns, name, err)
			}
			ifindex[i] = lk.Attrs().Index
			if err := ln.nl.LinkSetUp(lk); err != nil {
				return fmt.Errorf("emu: %s %s up: %w", ln.ns, name, err)
			}
		}
		var addrDev netlink.Link
		switch {
		case ln.bridge:
			br, err := l.setupBridge(ln)
			if err != nil {
				return err
			}
			addrDev = br
		case ln.agent:
			tap, err := openTAP("eth0")
			if err != nil {
				return fmt.Errorf("emu: %s: %w", ln.ns, err)
			}
			// The runner owns and closes the TAP from here on.
			if err := l.attach(ln, ifindex, tap); err != nil {
				tap.Close()
				return err
			}
			lk, err := ln.nl.LinkByName("eth0")
			if err != nil {
				return fmt.Errorf("emu: %s eth0: %w", ln.ns, err)
			}
			if err := ln.nl.LinkSetHardwareAddr(lk, ln.mac[:]); err != nil {
				return fmt.Errorf("emu: %s eth0 mac: %w", ln.ns, err)
			}
			if err := offloadsOff("eth0"); err != nil {
				return fmt.Errorf("emu: %s: %w", ln.ns, err)
			}
			if err := ln.nl.LinkSetUp(lk); err != nil {
				return fmt.Errorf("emu: %s eth0 up: %w", ln.ns, err)
			}
			addrDev = lk
		case ln.el != nil:
			if err := l.attach(ln, ifindex, nil); err != nil {
				return err
			}
		case ln.kind == topo.Host:
			lk, err := ln.nl.LinkByName(l.firstIf(ln))
			if err != nil {
				return fmt.Errorf("emu: %s: host has no connected NIC: %w", ln.ns, err)
			}
			addrDev = lk
		}
		if ln.kind == topo.Host && addrDev != nil {
			addr := &netlink.Addr{IPNet: &net.IPNet{IP: ln.ip.Addr().AsSlice(), Mask: net.CIDRMask(ln.ip.Bits(), 32)}}
			if err := ln.nl.AddrAdd(addrDev, addr); err != nil {
				return fmt.Errorf("emu: %s address %s: %w", ln.ns, ln.ip, err)
			}
		}
		return nil
	})
}

// attach opens the element's ports in the node's namespace (the calling
// thread is in it) and makes its runner. tap is the agent's Local port.
func (l *Lab) attach(ln *labNode, ifindex []int, tap *tapPort) error {
	n := len(ln.ifnames)
	total := n
	if tap != nil {
		total++
	}
	ports := make([]element.PortInfo, total)
	ios := make([]frameIO, total)
	ln.pports = make([]*packetPort, n)
	closeAll := func() {
		for _, io := range ios {
			if io != nil && io != frameIO(tap) {
				io.Close()
			}
		}
	}
	for i := 0; i < n; i++ {
		p := element.Port(i + 1)
		ports[i] = element.PortInfo{Port: p, Name: ln.ifnames[i]}
		copy(ports[i].MAC[:], l.portMAC(ln, p))
		if ln.ifnames[i] == "" {
			continue
		}
		lid, _ := l.g.PortLink(ln.id, p)
		ports[i].Rate = l.g.Link(lid).Rate
		ports[i].Up = true
		pp, err := openPacketPort(ifindex[i])
		if err != nil {
			closeAll()
			return fmt.Errorf("emu: %s %s: %w", ln.ns, ln.ifnames[i], err)
		}
		ios[i], ln.pports[i] = pp, pp
		if d := l.linkDelay(lid); d > 0 {
			peer := l.nodes[l.g.Link(lid).Other(ln.id).Node]
			ios[i] = newDelayedPort(pp, d, !runsElement(peer))
		}
	}
	if tap != nil {
		ports[n] = element.PortInfo{Port: element.Port(n + 1), Name: "eth0", MAC: ln.mac, Local: true, Up: true}
		ios[n] = tap
	}
	seed := l.opts.Scheme.Seed ^ uint64(ln.id+1)*0x9e3779b97f4a7c15
	ln.run = newRunner(ln.name, ln.el, ports, ios, l.start, seed, l.log)
	ln.run.onPanic = func(v any, stack []byte) { l.elementPanicked(ln.name, v, stack) }
	return nil
}

// elementPanicked takes the lab down after the element of node panicked,
// then panics on: a bug must not pass unseen, and must not leave the
// lab's namespaces and processes behind either.
func (l *Lab) elementPanicked(node string, v any, stack []byte) {
	// Recorded first: a Down already under way (a signal) returns it, so
	// that its caller fails even if it exits before the panic below.
	pe := fmt.Errorf("emu: lab %s: the element of %s panicked: %v: %w", l.name, node, v, ErrElementPanic)
	l.panicErr.CompareAndSwap(nil, &pe)
	note := "the lab was taken down"
	if err := l.Down(); err != nil && err.Error() != (*l.panicErr.Load()).Error() {
		note = fmt.Sprintf("taking the lab down: %v", err)
	}
	panic(fmt.Sprintf("emu: lab %s: the element of %s panicked: %v (%s)\n\n%s", l.name, node, v, note, stack))
}

// setupBridge makes br0 over the node's ports with the configured STP.
func (l *Lab) setupBridge(ln *labNode) (netlink.Link, error) {
	mac := topo.BridgeMAC(ln.id)
	if ln.kind == topo.Host {
		mac = ln.mac // a relaying host's address lives on its bridge
	}
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0", HardwareAddr: mac[:]}}
	if err := ln.nl.LinkAdd(br); err != nil {
		return nil, fmt.Errorf("emu: %s br0: %w", ln.ns, err)
	}
	lk, err := ln.nl.LinkByName("br0")
	if err != nil {
		return nil, fmt.Errorf("emu: %s br0: %w", ln.ns, err)
	}
	if err := setBridgeSTP(lk.Attrs().Index, *l.kb); err != nil {
		return nil, fmt.Errorf("emu: %s br0 stp: %w", ln.ns, err)
	}
	for _, name := range ln.ifnames {
		if name == "" {
			continue
		}
		port, err := ln.nl.LinkByName(name)
		if err != nil {
			return nil, fmt.Errorf("emu: %s %s: %w", ln.ns, name, err)
		}
		if err := ln.nl.LinkSetMaster(port, lk); err != nil {
			return nil, fmt.Errorf("emu: %s %s master br0: %w", ln.ns, name, err)
		}
	}
	if err := ln.nl.LinkSetUp(lk); err != nil {
		return nil, fmt.Errorf("emu: %s br0 up: %w", ln.ns, err)
	}
	return lk, nil
}

// readyTimeout is how long Up waits for the fabric (Options.ReadyTimeout,
// or by default 60 s plus settle), and settle how long the scheme's own
// timers may keep it from forwarding at all (802.1D's 2 x forward delay +
// max age, with the kernel bridge or the stp scheme's bridges).
func (l *Lab) readyTimeout() (timeout, settle time.Duration) {
	if l.kb != nil && l.kb.stp {
		settle = 2*l.kb.forwardDelay + l.kb.maxAge
	}
	if s, ok := l.fabric.(scheme.Settler); ok {
		settle = time.Duration(s.SettleTime() / element.Nanosecond)
	}
	timeout = l.opts.ReadyTimeout
	if timeout <= 0 {
		timeout = 60*time.Second + settle
	}
	return timeout, settle
}

// waitReady polls until the fabric is ready: every kernel bridge port that
// has carrier is forwarding or blocking (STP has converged), and every
// Readier (the Fabric and each element) says so.
func (l *Lab) waitReady(ctx context.Context) error {
	timeout, settle := l.readyTimeout()
	hint := ""
	if settle >= timeout {
		hint = fmt.Sprintf(" (the scheme's own timers take up to %v before it forwards: give --timeout above that)", settle)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		why := l.notReady()
		if why == "" {
			break
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return fmt.Errorf("emu: lab %s: stopped before it was ready: %w", l.name, ErrInterrupted)
			}
			return fmt.Errorf("emu: lab %s: %w after %v: %s%s", l.name, ErrNotReady, timeout, why, hint)
		case <-tick.C:
		}
	}
	if !l.opts.WaitReach {
		return nil
	}
	if _, err := exec.LookPath("ping"); err != nil {
		// Ready would be a guess: an STP fabric, for one, forwards
		// nothing for its first 30 s.
		return fmt.Errorf("emu: lab %s: %w: ping is not installed, and up waits with it until the hosts reach each other (apt-get install iputils-ping, or --no-wait-reach to skip the wait)", l.name, ErrNotReady)
	}
	hosts := l.g.Nodes(topo.Host)
	if len(hosts) < 2 {
		return nil
	}
	src := l.nodes[hosts[0]]
	for _, i := range reachTargets(len(hosts)) {
		dst := l.nodes[hosts[i]]
		for {
			if _, err := ExecIn(ctx, src.ns, "ping", "-c", "1", "-W", "1", "-q", dst.ip.Addr().String()); err == nil {
				break
			}
			if errors.Is(ctx.Err(), context.Canceled) {
				return fmt.Errorf("emu: lab %s: stopped before it was ready: %w", l.name, ErrInterrupted)
			}
			if ctx.Err() != nil {
				return fmt.Errorf("emu: lab %s: %w after %v: %s cannot reach %s%s", l.name, ErrNotReady, timeout, src.name, dst.name, hint)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

// maxReachTargets bounds how many hosts WaitReach pings.
const maxReachTargets = 16

// reachTargets returns the indices, among hosts 0..n-1, of the hosts the
// first one pings for WaitReach: at most maxReachTargets of 1..n-1, evenly
// spread (every host when there are that few).
func reachTargets(n int) []int {
	if n < 2 {
		return nil
	}
	// Round the step up: rounded down, 31 other hosts gave step 1 and 31
	// pings.
	step := (n - 1 + maxReachTargets - 1) / maxReachTargets
	var out []int
	for i := 1; i < n; i += step {
		out = append(out, i)
	}
	return out
}

// notReady returns why the fabric is not ready, or "".
func (l *Lab) notReady() string {
	if rd, ok := l.fabric.(Readier); ok && !rd.Ready() {
		return "the scheme's fabric reports not ready"
	}
	for _, ln := range l.nodes {
		if ln.run != nil {
			if rd, ok := ln.el.(Readier); ok {
				var ready bool
				if !ln.run.do(func() { ready = rd.Ready() }, 2*time.Second) || !ready {
					return fmt.Sprintf("element on %s reports not ready", ln.name)
				}
			}
		}
		if ln.bridge {
			states, err := l.bridgeStates(ln)
			if err != nil {
				return fmt.Sprintf("%s: %v", ln.name, err)
			}
			for port, st := range states {
				if st == brListening || st == brLearning {
					return fmt.Sprintf("%s port %s is %s", ln.name, port, BridgePortStateName(st))
				}
			}
		}
	}
	return ""
}

// bridgeStates returns the STP state of each of the node's bridge ports by
// interface name.
func (l *Lab) bridgeStates(ln *labNode) (map[string]uint8, error) {
	var byIdx map[int]uint8
	if err := inNS(ln.h, func() (err error) { byIdx, err = bridgePortStates(); return }); err != nil {
		return nil, err
	}
	out := make(map[string]uint8)
	for _, name := range ln.ifnames {
		if name == "" {
			continue
		}
		lk, err := ln.nl.LinkByName(name)
		if err != nil {
			return nil, err
		}
		if st, ok := byIdx[lk.Attrs().Index]; ok {
			out[name] = st
		}
	}
	return out, nil
}

// Down stops every element, kills the processes still running in the
// lab's namespaces (but this one), and removes every namespace of the lab
// (their veths, bridges, qdiscs and TAPs go with them). It is idempotent.
func (l *Lab) Down() error {
	l.once.Do(func() {
		// Wait for the requests in flight, and refuse the later ones.
		// A request may be waiting on a runner (Status asks the element
		// for its counters; SetLink tells it of the link) whose element
		// is stuck or has panicked, behind a full event queue: quit the
		// runners first, which ends those waits, or the lock would wait
		// for ever.
		for _, ln := range l.nodes {
			if ln.run != nil {
				ln.run.quit()
			}
		}
		l.ops.Lock()
		l.closed = true
		l.ops.Unlock()
		// Closing an AF_PACKET socket waits for an RCU grace period
		// (synchronize_net in packet_release), tens of milliseconds on a
		// busy machine: close them all at once, not one after another.
		var wg sync.WaitGroup
		for _, ln := range l.nodes {
			if ln.run != nil {
				wg.Add(1)
				go func() { defer wg.Done(); ln.run.stop() }()
			}
		}
		wg.Wait()
		// Commands started in the lab (iperf3 -s -D through exec) would
		// outlive it, each in a namespace kept alive by nothing else,
		// out of sight of ip netns, status and down: kill them first,
		// as down does (a daemon stopped by SIGTERM, a foreground lab
		// stopped by Ctrl-C, the demo).
		// By the handles' inodes, not by name: a namespace whose name
		// was removed behind the lab's back (ip netns delete) is still
		// the lab's, and the commands in it keep it alive.
		inodes := map[uint64]bool{}
		for _, ln := range l.nodes {
			if ino, ok := nsInode(ln.h); ok {
				inodes[ino] = true
			}
		}
		// Namespaces and the state directory are removed by name. If
		// down removed this lab under it and a new lab has claimed the
		// name since, those names are the new lab's: leave them (this
		// once deleted a new lab and orphaned its daemon). The look is
		// made between claims. While this process owns the name, no
		// claim can take it until the state directory, removed last, is
		// gone, so the claims wait only when the owner record is gone
		// (down removed the lab): then for the removal too.
		var errs []error
		unlock, lerr := lockClaims()
		if lerr != nil {
			errs = append(errs, lerr)
			unlock = func() {}
		}
		taken := 0
		o, owned := readOwner(l.name)
		if owned && (o.Pid != os.Getpid() || o.PidStart != ownStart()) && alive(o.Pid, o.PidStart) {
			taken = o.Pid
		}
		if owned && taken == 0 {
			unlock()
			unlock = func() {}
		}
		if taken == 0 {
			killInNamespaces(inodes)
		}
		if beforeNSDelete != nil {
			beforeNSDelete()
		}
		for _, ln := range l.nodes {
			if ln.nl != nil {
				ln.nl.Close()
				ln.nl = nil
			}
			if ln.h >= 0 && taken == 0 {
				if err := deleteNS(ln.ns); err != nil {
					errs = append(errs, fmt.Errorf("emu: remove namespace %s: %w", ln.ns, err))
				}
			}
		}
		if taken == 0 {
			// Again, once the names are gone: a command forked into a
			// namespace after the kill above (an exec that entered it
			// just before) would keep it, nameless, and its links
			// alive. One forked later finds the name gone (StartIn).
			// The handles are still open: a namespace that is gone
			// frees its inode number for the next one made, anyone's.
			killInNamespaces(inodes)
		}
		for _, ln := range l.nodes {
			if ln.h >= 0 {
				ln.h.Close()
			}
		}
		if taken != 0 {
			l.log.Warn("emu: lab removed under this process by down; its name now belongs to another lab, left alone", "lab", l.name, "owner", taken)
		} else if ValidateName(l.name) != nil {
			// Not a lab's name (LabDir("") is the state directory of
			// every lab): nothing of ours to remove.
		} else if err := os.RemoveAll(LabDir(l.name)); err != nil {
			errs = append(errs, fmt.Errorf("emu: %w", err))
		}
		unlock()
		if p := l.panicErr.Load(); p != nil {
			errs = append(errs, *p)
		}
		l.downErr = errors.Join(errs...)
	})
	return l.downErr
}

// hold reports whether the lab's handles may be used, and if so keeps
// Down from closing them until release.
func (l *Lab) hold() bool {
	l.ops.RLock()
	if l.closed {
		l.ops.RUnlock()
		return false
	}
	return true
}

func (l *Lab) release() { l.ops.RUnlock() }

// node finds a node by name.
func (l *Lab) node(name string) (*labNode, error) {
	n, ok := l.g.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("emu: lab %s: %w %q", l.name, ErrUnknownNode, name)
	}
	return l.nodes[n], nil
}

// SetLink fails (up=false) or repairs every link between nodes a and b. Both
// veth ends are set administratively down (or up), so the peers lose (or
// regain) carrier as with a pulled cable, and the element on each end gets
// LinkChange from the engine right away (the engine does the cabling, so it
// tells the elements itself rather than watching carrier).
func (l *Lab) SetLink(a, b string, up bool) error {
	na, err := l.node(a)
	if err != nil {
		return err
	}
	nb, err := l.node(b)
	if err != nil {
		return err
	}
	if !l.hold() {
		return fmt.Errorf("emu: lab %s: %w", l.name, ErrLabDown)
	}
	defer l.release()
	l.mu.Lock()
	defer l.mu.Unlock()
	found := false
	for i := 0; i < l.g.NumLinks(); i++ {
		lk := l.g.Link(topo.LinkID(i))
		if !(lk.A.Node == na.id && lk.B.Node == nb.id) && !(lk.A.Node == nb.id && lk.B.Node == na.id) {
			continue
		}
		found = true
		for _, e := range []topo.End{lk.A, lk.B} {
			ln := l.nodes[e.Node]
			dev, err := ln.nl.LinkByName(ln.ifnames[e.Port-1])
			if err != nil {
				return fmt.Errorf("emu: %s %s: %w", ln.ns, ln.ifnames[e.Port-1], err)
			}
			if up {
				err = ln.nl.LinkSetUp(dev)
			} else {
				err = ln.nl.LinkSetDown(dev)
			}
			if err != nil {
				return fmt.Errorf("emu: %s %s: %w", ln.ns, ln.ifnames[e.Port-1], err)
			}
		}
		if !up {
			// Frames in flight on the cut link (held in a delayed port's
			// lines) are lost, as in the simulator.
			for _, e := range []topo.End{lk.A, lk.B} {
				if r := l.nodes[e.Node].run; r != nil {
					if dp, ok := r.ios[e.Port-1].(*delayedPort); ok {
						dp.setDown(true) // first: nothing queued behind the flush
						dp.flush()
					}
				}
			}
		}
		if up {
			// The delayed ports take frames again, as the interfaces do.
			for _, e := range []topo.End{lk.A, lk.B} {
				if r := l.nodes[e.Node].run; r != nil {
					if dp, ok := r.ios[e.Port-1].(*delayedPort); ok {
						dp.setDown(false)
					}
				}
			}
			// Carrier and the qdisc come back through the kernel's link
			// watch, up to a second later; frames sent before are lost.
			// Return only when both ends really pass traffic.
			for _, e := range []topo.End{lk.A, lk.B} {
				ln := l.nodes[e.Node]
				if err := waitOperUp(ln, ln.ifnames[e.Port-1], 5*time.Second); err != nil {
					return err
				}
			}
		}
		l.links[i] = up
		for _, e := range []topo.End{lk.A, lk.B} {
			if r := l.nodes[e.Node].run; r != nil {
				r.linkChange(e.Port, up)
			}
		}
	}
	if !found {
		return fmt.Errorf("emu: lab %s: %w %q and %q", l.name, ErrNoLink, a, b)
	}
	return nil
}

// waitOperUp polls until interface name of ln is operationally up.
func waitOperUp(ln *labNode, name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		dev, err := ln.nl.LinkByName(name)
		if err != nil {
			return fmt.Errorf("emu: %s %s: %w", ln.ns, name, err)
		}
		if dev.Attrs().OperState == netlink.OperUp {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("emu: %s %s: not up after %v (state %v)", ln.ns, name, timeout, dev.Attrs().OperState)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// NodeNS returns the namespace of a node, for tools that want to enter it
// ("ip netns exec", nsenter).
func (l *Lab) NodeNS(node string) (string, error) {
	ln, err := l.node(node)
	if err != nil {
		return "", err
	}
	return ln.ns, nil
}

// Socket opens a socket (unix.Socket's arguments) inside node's
// namespace and returns its descriptor, which the caller closes: a socket
// keeps the namespace it was made in, so this process can probe from a
// host (a raw ICMP socket, say) without a process per probe. Close it
// before Down: an open socket keeps its namespace, and the node's links,
// alive after the name is gone.
func (l *Lab) Socket(node string, domain, typ, proto int) (int, error) {
	ns, err := l.NodeNS(node)
	if err != nil {
		return -1, err
	}
	h, err := openNS(ns)
	if err != nil {
		return -1, err
	}
	defer h.Close()
	fd := -1
	err = inNS(h, func() error {
		var err error
		fd, err = unix.Socket(domain, typ|unix.SOCK_CLOEXEC, proto)
		return err
	})
	if err != nil {
		if fd >= 0 {
			unix.Close(fd)
		}
		return -1, fmt.Errorf("emu: socket in %s: %w", node, err)
	}
	return fd, nil
}

// Exec runs argv in node's namespace and returns its combined output. The
// command is an ordinary process of the unmodified host: ping, iperf3, ip.
func (l *Lab) Exec(ctx context.Context, node string, argv ...string) ([]byte, error) {
	ns, err := l.NodeNS(node)
	if err != nil {
		return nil, err
	}
	return ExecIn(ctx, ns, argv...)
}

// Start starts cmd in node's namespace; the caller Waits for it.
func (l *Lab) Start(node string, cmd Cmd) error {
	ns, err := l.NodeNS(node)
	if err != nil {
		return err
	}
	return StartIn(ns, cmd)
}

// Cmd is what StartIn starts: an *exec.Cmd.
type Cmd interface{ Start() error }

// StartIn starts cmd inside the named namespace, as "ip netns exec" does:
// the child is forked from a thread switched into the namespace, so it is
// born there, with a mount namespace of its own where /sys is sysfs as seen
// from the namespace (/sys/class/net lists the node's interfaces, not the
// machine's). The Go process itself stays where it was.
func StartIn(ns string, cmd Cmd) error {
	h, err := openNS(ns)
	if err != nil {
		return err
	}
	defer h.Close()
	errc := make(chan error, 1)
	// The thread is retired when the start returns, so no other
	// goroutine runs in its namespaces.
	goRetired(func() { errc <- startWithOwnSys(h, ns, cmd) })
	return <-errc
}

// isMainThread reports whether the calling goroutine runs on the
// process's main thread (a var: tests pretend).
var isMainThread = func() bool { return unix.Gettid() == unix.Getpid() }

// goRetired runs f on a goroutine of its own, locked to an OS thread that
// the runtime retires when f returns (it is never unlocked), for work that
// moves the thread into other namespaces. Never on the main thread: the
// runtime cannot retire it, so it would stay in a lab's network and mount
// namespaces for the life of the process (the lab then outlives Down as
// an unnamed namespace, and a later down of it kills this process).
func goRetired(f func()) {
	go func() {
		runtime.LockOSThread()
		if !isMainThread() {
			f()
			return
		}
		// While this goroutine holds the main thread, a new one cannot
		// be scheduled on it.
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			defer close(done)
			f()
		}()
		<-done
		runtime.UnlockOSThread()
	}()
}

// StartInHeld is StartIn for a command that must not outlive this
// process: the kernel kills it (SIGKILL) when the thread that forked it
// ends, and that thread is kept until release is called, which the caller
// does once cmd has ended (after Wait). So a caller killed by any signal,
// SIGKILL included, takes the command with it; one that returns normally
// has waited for it already. (StartIn retires the forking thread at once,
// so a parent-death signal there would fire at once.)
func StartInHeld(ns string, cmd *exec.Cmd) (release func(), err error) {
	h, err := openNS(ns)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	errc := make(chan error, 1)
	hold := make(chan struct{})
	goRetired(func() {
		err := startWithOwnSys(h, ns, cmd)
		errc <- err
		if err == nil {
			<-hold
		}
	})
	if err := <-errc; err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { close(hold) }) }, nil
}

// startWithOwnSys runs on a locked thread that is thrown away afterwards.
func startWithOwnSys(h netns.NsHandle, name string, cmd Cmd) error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("emu: own mount namespace: %w", err)
	}
	// Nothing mounted or unmounted below may propagate back to the
	// machine's mount namespace.
	if err := unix.Mount("", "/", "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("emu: make mounts private: %w", err)
	}
	if err := netns.Set(h); err != nil {
		return fmt.Errorf("emu: enter namespace: %w", err)
	}
	if err := unix.Unmount("/sys", unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("emu: unmount /sys: %w", err)
	}
	if err := unix.Mount(name, "/sys", "sysfs", 0, ""); err != nil {
		// As "ip netns exec": where sysfs may only be mounted read-only.
		if err2 := unix.Mount(name, "/sys", "sysfs", unix.MS_RDONLY, ""); err2 != nil {
			return fmt.Errorf("emu: mount /sys: %w", err)
		}
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	// The lab may have been removed while this thread entered its
	// namespace (a down racing the exec): the command then runs in a
	// namespace without a name, which no down can find, and keeps it
	// and its links alive. Down kills what it finds in its namespaces
	// after removing their names too, so a command started before the
	// removal is killed there, and one started after sees it here.
	if !namedNS(h, name) {
		if c, ok := cmd.(*exec.Cmd); ok && c.Process != nil {
			c.Process.Kill()
			c.Wait()
		}
		return fmt.Errorf("emu: namespace %s was removed as the command started (the lab is going down): %w", name, ErrLabDown)
	}
	return nil
}

var _ io.Closer = (*packetPort)(nil)

// buildScheme builds what runs in a lab's nodes: the kernel bridge's
// configuration, or the scheme's fabric from the registry.
func buildScheme(g *topo.Graph, schemeName string, opts Options) (*kbConfig, scheme.Fabric, error) {
	if schemeName == KernelBridge {
		c, err := parseKBParams(opts.Scheme.Params)
		if err != nil {
			return nil, nil, err
		}
		return &c, nil, nil
	}
	reg := opts.Registry
	if reg == nil {
		reg = all.Registry()
	}
	s, err := reg.Get(schemeName)
	if err != nil {
		return nil, nil, fmt.Errorf("emu: %w (or %s)", err, KernelBridge)
	}
	fab, err := s.New(g, opts.Scheme)
	if err != nil {
		return nil, nil, fmt.Errorf("emu: scheme %s on %s: %w", schemeName, g.Name, err)
	}
	return nil, fab, nil
}

// CheckScheme reports whether scheme schemeName and its parameters in
// opts can run on g, before anything is built: what Up would refuse.
func CheckScheme(g *topo.Graph, schemeName string, opts Options) error {
	if err := checkNamespaces(g); err != nil {
		return err
	}
	if err := checkRates(g, opts); err != nil {
		return err
	}
	kb, fab, err := buildScheme(g, schemeName, opts)
	if err != nil {
		return err
	}
	// What build refuses once it has the nodes' elements: a switch that
	// runs nothing, a delay on a link the kernel forwards at both ends.
	// Up refused them in the daemon (exit 1, after it had started).
	runs := func(n topo.NodeID) bool { return kb == nil && fab.Element(n) != nil }
	for i := range g.NumNodes() {
		n := topo.NodeID(i)
		if kb == nil && g.Node(n).Kind == topo.Switch && !runs(n) {
			return fmt.Errorf("emu: scheme %s runs nothing on switch %q: %w", schemeName, g.Node(n).Name, ErrBadOption)
		}
	}
	return checkDelays(g, opts, schemeName, runs)
}
