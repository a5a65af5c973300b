package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/emu"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/scheme/all"
	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/spf13/cobra"
)

// upFlags are up's options; the daemon is started with the same flags plus
// --foreground.
type upFlags struct {
	scheme, name, rate string
	delay              string
	seed               uint64
	params             []string
	ipv6, fg, asJSON   bool
	noWait             bool
	timeout            time.Duration
	timeoutSet         bool // --timeout given, so 0 is not the default
	verbose            bool
}

func newUpCmd() *cobra.Command {
	var f upFlags
	c := &cobra.Command{
		Use:   "up TOPO --scheme S [--name LAB]",
		Short: "Start an emulated lab: namespaces, veths and the scheme's elements",
		Long: `up builds a lab from a topology (spec or file) in Linux network namespaces
and runs the scheme's elements on it, then returns when the fabric is ready: the
scheme says so (if it can), STP has converged (kernel-bridge), and h1 reaches
up to 16 other hosts with ping (unless --no-wait-reach). A
daemon keeps the lab running; use exec, link, status and down on it.

Every host is a namespace with the unmodified kernel stack: eth0 carries its
planned address (host k: 10.x.y.z/8 with x.y.z = k, MAC 02:ef:..:k). Every
switch is a namespace with ports eth1..ethN (or the interface names of a
containerlab file, such as e1-1, where Linux takes them). --scheme kernel-bridge makes
every switch a Linux bridge running 802.1D STP, the baseline (params stp,
forward_delay, hello_time, max_age). --scheme stp runs edgefabric's own
802.1D-1998 bridges, or RSTP's (802.1D-2004) with -p protocol=rstp.

Needs root. Objects are named ef-LAB-*; nothing else is touched.`,
		Example: `  edgefabric up fattree:4 --scheme stp --name demo
  edgefabric up ring:3 --scheme kernel-bridge --name base -p forward_delay=4
  edgefabric up ring:3 --scheme stp -p protocol=rstp --name rapid
  edgefabric up leafspine:2,4,2 --scheme dumbnet --rate 100M`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			f.timeoutSet = c.Flags().Changed("timeout")
			// The daemon, the lab's state and every check get the
			// scheme's own name, whatever its case (--scheme DumbNet).
			f.scheme = schemeName(f.scheme)
			return runUp(c, args[0], f)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.scheme, "scheme", "", "fabric scheme (required, any case): "+strings.Join(schemes(), ", "))
	_ = fl.SetAnnotation("scheme", requiredFlag, nil)
	fl.StringVar(&f.name, "name", "lab", "lab name: 1-16 characters of a-z, 0-9 and _, the first a letter or digit (no -)")
	fl.StringVar(&f.rate, "rate", "", `shape every link with tbf: a rate in bits per second ("100M", "1G") or "topo" for each link's own rate`)
	fl.StringVar(&f.delay, "delay", "", `delay every link in the emulator's own ports (no netem here): a delay ("5ms") or "topo" for each link's own; at least 100us: shorter ones the emulator cannot apply, and "topo" leaves such links undelayed (not with kernel-bridge)`)
	fl.Uint64Var(&f.seed, "seed", 1, "seed for the topology generator and the scheme")
	fl.StringArrayVarP(&f.params, "param", "p", nil, "scheme parameter key=value (repeatable)")
	fl.BoolVar(&f.ipv6, "ipv6", false, "keep IPv6 enabled in the lab's namespaces")
	fl.DurationVar(&f.timeout, "timeout", 0, "give up when the fabric is not ready by then (default: 60s plus what the spanning tree's timers take, 2 x forward_delay + max_age: 110s with 802.1D's defaults)")
	fl.BoolVar(&f.noWait, "no-wait-reach", false, "return once the scheme reports ready, without waiting until h1 pings up to 16 other hosts")
	fl.BoolVar(&f.fg, "foreground", false, "run the lab in this process until SIGINT/SIGTERM/SIGHUP or 'edgefabric down' (no daemon)")
	fl.BoolVar(&f.asJSON, "json", false, "print the lab's status as JSON, as 'edgefabric status LAB --json' does")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log the elements' info messages (to the daemon log)")
	return c
}

// upArgs turns the flags back into arguments for the daemon. The
// topology comes last, after "--": a file whose name starts with '-',
// given to up after "--", was read by the daemon as flags, and it failed.
func (f upFlags) args(topoArg string) []string {
	a := []string{"up", "--foreground", "--scheme", f.scheme, "--name", f.name, "--seed", strconv.FormatUint(f.seed, 10)}
	if f.rate != "" {
		a = append(a, "--rate", f.rate)
	}
	if f.delay != "" {
		a = append(a, "--delay", f.delay)
	}
	for _, p := range f.params {
		a = append(a, "--param", p)
	}
	if f.ipv6 {
		a = append(a, "--ipv6")
	}
	if f.timeout > 0 {
		a = append(a, "--timeout", f.timeout.String())
	}
	if f.verbose {
		a = append(a, "--verbose")
	}
	if f.noWait {
		a = append(a, "--no-wait-reach")
	}
	return append(a, "--", topoArg)
}

// parseParams reads key=value scheme parameters.
func parseParams(ps []string) (map[string]string, error) {
	m := map[string]string{}
	for _, p := range ps {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--param %q: want key=value", p)
		}
		if _, dup := m[k]; dup {
			// As a scenario file refuses a key given twice: the
			// last one winning silently hides a typo.
			return nil, fmt.Errorf("--param %q: %s given twice", p, k)
		}
		m[k] = v
	}
	return m, nil
}

// schemes are the names --scheme takes: the registry's and the kernel
// bridge.
func schemes() []string { return append(all.Registry().Names(), emu.KernelBridge) }

// schemeName is the scheme s names in any case (DumbNet is dumbnet), or s.
func schemeName(s string) string { return keyword(s, schemes()) }

// upOptions validates up's input; every error here is bad input.
func upOptions(topoArg string, f upFlags) (*topo.Graph, emu.Options, error) {
	var o emu.Options
	known := strings.Join(schemes(), ", ")
	f.scheme = schemeName(f.scheme)
	if f.scheme == "" {
		return nil, o, fmt.Errorf("--scheme is required (one of: %s)", known)
	}
	if f.scheme != emu.KernelBridge {
		if _, err := all.Registry().Get(f.scheme); err != nil {
			return nil, o, fmt.Errorf("--scheme: unknown scheme %q (known: %s)", f.scheme, known)
		}
	}
	if err := emu.ValidateName(f.name); err != nil {
		return nil, o, err
	}
	params, err := parseParams(f.params)
	if err != nil {
		return nil, o, err
	}
	o = emu.Options{Name: f.name, Scheme: scheme.Options{Seed: f.seed, Params: params}, IPv6: f.ipv6, ReadyTimeout: f.timeout, Topology: topoArg, WaitReach: !f.noWait}
	switch f.rate {
	case "":
	case "topo":
		o.RateLimit = true
	default:
		r, err := topo.ParseRate(f.rate)
		if err != nil {
			return nil, o, fmt.Errorf("--rate: %w", err)
		}
		o.Rate = r
	}
	if f.ipv6 && f.scheme == dumbnet.Name {
		// Its agents resolve addresses by ARP and drop the multicast
		// neighbour discovery needs: hosts would never reach each other.
		return nil, o, fmt.Errorf("--ipv6: dumbnet's host agents carry IPv4 only (they answer ARP; IPv6 neighbour discovery is multicast, which they drop): use stp or kernel-bridge for IPv6")
	}
	if f.delay != "" && f.scheme == emu.KernelBridge {
		return nil, o, fmt.Errorf("--delay: the kernel bridge forwards in the kernel, and this kernel has no netem; the emulator delays frames in its own ports, for schemes with elements (stp, dumbnet)")
	}
	switch f.delay {
	case "":
	case "topo":
		o.TopoDelay = true
	default:
		d, err := topo.ParseDelay(f.delay)
		if err != nil {
			return nil, o, fmt.Errorf("--delay: %w", err)
		}
		if d < element.Time(emu.MinDelay.Nanoseconds())*element.Nanosecond {
			return nil, o, fmt.Errorf("--delay %s: below %v the emulator applies no delay (a hop of its own forwarding takes tens of microseconds)", f.delay, emu.MinDelay)
		}
		o.Delay = time.Duration(d / element.Nanosecond)
	}
	// 0 is the flag's default, which stands for "long enough"; given by
	// hand it is refused like a negative one, as down and bench do.
	if f.timeout < 0 || f.timeout == 0 && f.timeoutSet {
		return nil, o, fmt.Errorf("--timeout %v: must be positive", f.timeout)
	}
	g, err := topo.Resolve(topoArg, f.seed)
	if err != nil {
		return nil, o, err
	}
	if len(g.Nodes(topo.Host)) == 0 {
		return nil, o, fmt.Errorf("topology %s has no hosts", topoArg)
	}
	// Hosts the fabric does not join never get ready: DumbNet's
	// controller cannot discover them, and h1 cannot ping them. up waited
	// out its --timeout (110 s for stp) and failed with "element on h3
	// reports not ready"; plan spain and demo refuse such a topology too.
	if a, b, split := splitHosts(g, f.scheme == dumbnet.Name); split && (f.scheme == dumbnet.Name || !f.noWait) {
		return nil, o, fmt.Errorf("topology %s is not connected: %s cannot reach %s, and the lab would never be ready (fail links of a running lab with 'edgefabric link' instead)", topoArg, g.Node(a).Name, g.Node(b).Name)
	}
	if f.scheme == dumbnet.Name && (o.Delay > 0 || o.TopoDelay) && o.Scheme.Params["probetimeout"] == "" {
		// A discovery round waits 50 ms for its probes; over delayed
		// links their round trip is longer, and the fabric was never
		// ready. Give the round the probes' longest round trip twice.
		if o.Scheme.Params == nil {
			o.Scheme.Params = map[string]string{}
		}
		o.Scheme.Params["probetimeout"] = dumbnetProbeTimeout(g, o).String()
	}
	// Scheme parameters are input too: refuse them here (exit 2), not in
	// the daemon.
	if err := emu.CheckScheme(g, f.scheme, o); err != nil {
		return nil, o, err
	}
	return g, o, nil
}

// splitHosts reports whether some host cannot reach the first host, and
// names the two. Only switches and relay hosts (Forwards) carry traffic
// through; a plain host uses its first cabled NIC only (the emulator
// gives it its address there; DumbNet's agent, too, uses its first
// cabled NIC only). With agents (a scheme with an element on every host,
// DumbNet's), hosts find each other through switches only: a cable from
// host to host carries nothing. A host
// reached only through another host, or over a second NIC into a part of
// the fabric the first host's part does not join, is cut off too.
func splitHosts(g *topo.Graph, agents bool) (a, b topo.NodeID, split bool) {
	hosts := g.Nodes(topo.Host)
	reached := reachableHosts(g, hosts[0], agents)
	for _, h := range hosts[1:] {
		if !reached[h] {
			return hosts[0], h, true
		}
	}
	return 0, 0, false
}

// reachableHosts marks, by node, the hosts (and forwarding nodes) that
// host from reaches, as splitHosts judges reachability.
func reachableHosts(g *topo.Graph, from topo.NodeID, agents bool) []bool {
	usable := func(n topo.NodeID, port int) bool { // port: 0-based
		if g.Node(n).Forwards() {
			return true
		}
		for i, l := range g.Ports(n) {
			if l != topo.NoLink {
				return i == port // the first cabled one
			}
		}
		return false
	}
	reached := make([]bool, g.NumNodes())
	var queue []topo.NodeID
	// visit follows n's usable ports: forwarding nodes are queued, hosts
	// whose end of the link they can use are reached.
	visit := func(n topo.NodeID) {
		for i, l := range g.Ports(n) {
			if l == topo.NoLink || !usable(n, i) {
				continue
			}
			o := g.Link(l).Other(n)
			if reached[o.Node] || !usable(o.Node, int(o.Port)-1) {
				continue
			}
			if agents && !g.Node(n).Forwards() && !g.Node(o.Node).Forwards() {
				continue // agents find each other through switches only
			}
			reached[o.Node] = true
			if g.Node(o.Node).Forwards() {
				queue = append(queue, o.Node)
			}
		}
	}
	reached[from] = true
	visit(from)
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		visit(n)
	}
	return reached
}

// dumbnetProbeTimeout is DumbNet's discovery round under the emulator's
// link delay: its default, 50 ms, plus twice the longest probe round trip,
// out to the farthest switch and back: 2 x (diameter + 2 host links) x the
// largest one-way link delay.
func dumbnetProbeTimeout(g *topo.Graph, o emu.Options) time.Duration {
	d := o.Delay
	if o.TopoDelay {
		for i := range g.NumLinks() {
			d = max(d, time.Duration(g.Link(topo.LinkID(i)).Delay/element.Nanosecond))
		}
	}
	s := topo.Stats(g)
	hops := s.Diameter
	if !s.DiameterExact {
		hops = s.DiameterUpper
	}
	hops = max(hops, 0) // -1: not connected (refused later anyway)
	rtt := 2 * time.Duration(hops+2) * d
	return time.Duration(dumbnet.DefaultProbeTimeout/element.Nanosecond) + 2*rtt
}

func runUp(c *cobra.Command, topoArg string, f upFlags) error {
	g, opts, err := upOptions(topoArg, f)
	if err != nil {
		return badInput(err)
	}
	if err := emu.CheckRoot(os.Geteuid()); err != nil {
		return err
	}
	ctx, stop := stopContext()
	defer stop()
	// SIGTERM removes what this process builds: down may stop it. (Reset
	// for a process that runs commands in-process, as tests do.)
	emu.SetStopsOnTerm(true)
	defer emu.SetStopsOnTerm(false)
	if f.fg {
		return runForeground(ctx, c, g, opts, f)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("up: find own binary: %w", err)
	}
	// The daemon bounds its own waits by --timeout; this bounds the wait
	// for the daemon, should it hang (then it is killed and cleaned up).
	limit := daemonWaitLimit(f.timeout)
	sctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	if err := emu.SpawnDaemon(sctx, f.name, append([]string{exe}, f.args(topoArg)...)); err != nil {
		if errors.Is(err, emu.ErrLabExists) {
			return badInput(err)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%w: the daemon did not report within %v (its log was %s)", err, limit, emu.LogPath(f.name))
		}
		return err
	}
	if f.asJSON {
		// The status, as status --json and up --foreground --json print
		// it: the state file (pid_start, prefix; links without up or
		// rate) is the daemon's own record.
		st, err := emu.RemoteStatus(f.name)
		if err != nil {
			return err
		}
		return writeJSON(c.OutOrStdout(), st)
	}
	st, err := emu.ReadState(f.name)
	if err != nil {
		return err
	}
	hosts := 0
	for _, n := range st.Nodes {
		if n.Kind == "host" {
			hosts++
		}
	}
	fmt.Fprintf(c.OutOrStdout(), "lab %s up: scheme %s on %s, %d nodes (%s), %d links; daemon pid %d, log %s\n",
		st.Name, st.Scheme, st.Topology, len(st.Nodes), plural(hosts, "host"), len(st.Links), st.Pid, emu.LogPath(st.Name))
	fmt.Fprint(c.OutOrStdout(), tryLines(g, f.scheme == dumbnet.Name, st))
	return nil
}

// tryLines are up's closing lines: a ping to try, from the first host to
// the first other host it can reach, and, in a lab whose hosts are split
// (a topology that is not connected, brought up with --no-wait-reach),
// a note that says so. The ping suggested went to the second host
// whether or not the first could reach it. g is the lab's topology,
// agents as for splitHosts, st its state file.
func tryLines(g *topo.Graph, agents bool, st *emu.State) string {
	var hosts []emu.StateNode
	for _, n := range st.Nodes {
		if n.Kind == "host" {
			hosts = append(hosts, n)
		}
	}
	if len(hosts) < 2 {
		return ""
	}
	from, ok := g.Lookup(hosts[0].Name)
	if !ok {
		return "" // not the lab's graph: nothing known about reachability
	}
	reached := reachableHosts(g, from, agents)
	var to *emu.StateNode
	var cut []string
	for i := range hosts[1:] {
		h := &hosts[1+i]
		if id, ok := g.Lookup(h.Name); ok && reached[id] {
			if to == nil {
				to = h
			}
		} else {
			cut = append(cut, h.Name)
		}
	}
	var b strings.Builder
	if to != nil {
		fmt.Fprintf(&b, "try: edgefabric exec %s %s -- ping -c 3 %s   (%s)\n", st.Name, shellWord(hosts[0].Name), strings.Split(to.IP, "/")[0], to.Name)
	}
	if len(cut) > 0 {
		what := "no ping to try"
		if to != nil {
			what = "only hosts of its part answer"
		}
		fmt.Fprintf(&b, "note: the hosts are split (the topology is not connected): %s cannot reach %s; %s\n", hosts[0].Name, listSome(cut, 3), what)
	}
	return b.String()
}

// listSome joins up to n names, with how many more there are.
func listSome(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// daemonWaitLimit is how long up waits for its daemon to report: twice
// the daemon's own --timeout and a minute, 10 minutes without one. It
// saturates: twice a huge --timeout overflowed into a negative limit, and
// up gave up on the daemon it had just started.
func daemonWaitLimit(timeout time.Duration) time.Duration {
	const maxDuration = time.Duration(1<<63 - 1)
	switch {
	case timeout <= 0:
		return 10 * time.Minute
	case timeout > (maxDuration-time.Minute)/2:
		return maxDuration
	}
	return 2*timeout + time.Minute
}

// runForeground runs the lab in this process: it is the daemon when
// started by SpawnDaemon, and a foreground lab otherwise.
func runForeground(ctx context.Context, c *cobra.Command, g *topo.Graph, opts emu.Options, f upFlags) error {
	level := slog.LevelWarn
	if f.verbose {
		level = slog.LevelInfo
	}
	opts.Log = slog.New(slog.NewTextHandler(c.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
	// Run by hand, not as SpawnDaemon's daemon (whose up has claimed the
	// name for it): refuse a name in use and claim it, as up does. emu.Up
	// only looks for namespaces, so a lab still starting (a state
	// directory, no namespace yet) got a second lab of its name beside
	// it, and its owner file overwritten.
	claimed := false
	if os.Getenv(emu.ReadyFDEnv) == "" {
		if err := emu.ClaimName(f.name); errors.Is(err, emu.ErrLabExists) {
			return badInput(err)
		} else if err != nil {
			return err
		}
		claimed = true
	}
	// The control socket serves from the moment the lab is built, so that
	// status shows a spanning tree converging (ready: false and why) and
	// link and exec work meanwhile; a down then ends the wait.
	upCtx, cancelUp := context.WithCancel(ctx)
	defer cancelUp()
	serveCtx, stopServe := context.WithCancel(ctx)
	defer stopServe()
	serveErr := make(chan error, 1)
	serving := false
	opts.Built = func(l *emu.Lab) {
		serving = true
		go func() {
			err := emu.Serve(serveCtx, l)
			cancelUp() // a down request during the wait ends it
			serveErr <- err
		}()
	}
	l, err := emu.Up(upCtx, g, f.scheme, opts)
	if err != nil {
		// Only a down request ends the wait through upCtx alone; judge it
		// before stopServe, whose Serve cancels upCtx on its way out. A
		// fabric that was not ready in time says so, whatever Serve did
		// meanwhile (it said "interrupted" after every --timeout).
		interrupted := ctx.Err() == nil && upCtx.Err() != nil && !errors.Is(err, emu.ErrNotReady)
		if serving {
			stopServe()
			// It removes the state file and socket. When it failed (no
			// control socket), its failure ended the wait: that is the
			// error, not "interrupted (by a signal, or by edgefabric
			// down)", which hid it.
			// (Up's error joins the wait's and its teardown's: the
			// teardown's stays.)
			if serr := <-serveErr; serr != nil && interrupted {
				errs := []error{serr}
				if j, ok := err.(interface{ Unwrap() []error }); ok {
					errs = append(errs, j.Unwrap()[1:]...)
				}
				err, interrupted = errors.Join(errs...), false
			}
		}
		if claimed {
			emu.ReleaseName(f.name) // ours, if it built nothing
		}
		if interrupted {
			err = fmt.Errorf("emu: lab %s: stopped before it was ready: %w", f.name, emu.ErrInterrupted)
		}
		emu.NotifyReady(err)
		if errors.Is(err, emu.ErrLabExists) {
			return badInput(err)
		}
		return err
	}
	defer l.Down()
	// Serve writes the state file before it listens: ready once the
	// control socket answers.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := emu.RemoteStatus(f.name); err == nil {
			break
		}
		if time.Now().After(deadline) {
			err := fmt.Errorf("up: control socket of lab %s did not come up", f.name)
			emu.NotifyReady(err)
			return err
		}
		select {
		case err := <-serveErr:
			if err == nil {
				// Serve ends without an error when ctx ends: stopped
				// (a signal, or down) before the lab was ready.
				err = fmt.Errorf("emu: lab %s: stopped before it was ready: %w", f.name, emu.ErrInterrupted)
			}
			emu.NotifyReady(err)
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
	if ctx.Err() != nil {
		err := fmt.Errorf("emu: lab %s: stopped before it was ready: %w", f.name, emu.ErrInterrupted)
		emu.NotifyReady(err)
		return err
	}
	emu.NotifyReady(nil)
	// With --json stdout carries the lab's status as one JSON document
	// and nothing else, the document up prints for a daemon (with the pid
	// of the process that runs the lab); the closing line is for a
	// person, on stderr then.
	bye := c.OutOrStdout()
	if f.asJSON {
		st := l.Status()
		st.Pid = os.Getpid()
		if err := writeJSON(c.OutOrStdout(), st); err != nil {
			return err
		}
		bye = c.ErrOrStderr()
	} else {
		fmt.Fprintf(c.OutOrStdout(), "%s\n", l.Status())
	}
	err = <-serveErr
	if derr := l.Down(); derr != nil {
		err = errors.Join(err, derr)
	}
	fmt.Fprintf(bye, "lab %s down\n", f.name)
	return err
}

// shellWord quotes s for a POSIX shell when it holds anything but the
// characters a shell leaves alone, so that a printed command can be
// pasted (a node named "h 1").
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+:,/@%=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
