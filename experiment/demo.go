package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/topo"
)

// DemoOptions configures the demo: DumbNet on a topology, discovered,
// pinged, loaded and broken.
type DemoOptions struct {
	// Topology is a spec or file; default fattree:4.
	Topology string
	// Engine is "emu", "sim" or "" (auto: emu when root, sim otherwise).
	Engine string
	// Name is the emulator lab name; default "demo".
	Name string
	// Seed for the scheme and the simulator; 0 is a seed like any other
	// (the CLI's default is 1).
	Seed uint64
	// Progress receives one line per step; nil means silence.
	Progress io.Writer
}

// DemoStep is a step of the demo, in the order the steps complete. The
// zero value is no step: a report that stopped before none is complete.
type DemoStep int

// The steps. The emulator measures the failover before iperf3 reports;
// the simulator measures both at once.
const (
	DemoDiscovery DemoStep = iota + 1
	DemoPing
	DemoFailover
	DemoIperf3
)

var demoStepNames = [...]string{"none", "discovery", "ping", "failover", "iperf3"}

func (s DemoStep) String() string {
	if s < 0 || int(s) >= len(demoStepNames) {
		return fmt.Sprintf("DemoStep(%d)", int(s))
	}
	return demoStepNames[s]
}

// DemoReport is what the demo found. Field names are the JSON keys
// docs/demo.md documents. A field tagged with a step (demo:"ping") holds
// a measurement of that step: it is zero, and left out of the JSON, when
// the run stopped before the step was done (StoppedBefore).
type DemoReport struct {
	Engine   string `json:"engine"`
	Note     string `json:"note,omitempty"`
	Topology string `json:"topology"`

	ExpectedSwitches   int      `json:"expected_switches"`
	ExpectedLinks      int      `json:"expected_links"`
	ExpectedHosts      int      `json:"expected_hosts"`
	DiscoveredSwitches int      `json:"discovered_switches" demo:"discovery"`
	DiscoveredLinks    int      `json:"discovered_links" demo:"discovery"`
	DiscoveredHosts    int      `json:"discovered_hosts" demo:"discovery"`
	DiscoveryExact     bool     `json:"discovery_exact" demo:"discovery"`
	DiscoveryDiff      []string `json:"discovery_diff,omitempty" demo:"discovery"`
	DiscoveryMS        float64  `json:"discovery_ms" demo:"discovery"`
	DiscoveryProbes    uint64   `json:"discovery_probes" demo:"discovery"`
	// DiscoveryLateMS: when discovery ended without a host whose answer
	// came late (a loaded machine), how long after the lab was ready the
	// controller's rescan had placed it (emulator only; 0: nothing was
	// late).
	DiscoveryLateMS float64 `json:"discovery_late_ms,omitempty" demo:"discovery"`

	PingPairsOK    int      `json:"ping_pairs_ok" demo:"ping"`
	PingPairsTotal int      `json:"ping_pairs_total" demo:"ping"`
	PingFailed     []string `json:"ping_failed,omitempty" demo:"ping"`

	// Iperf3Mbps is the receiver's average over the whole run, the link
	// failure included (in the simulator: the TCP model's goodput).
	Iperf3Mbps float64 `json:"iperf3_mbps" demo:"iperf3"`
	IperfFrom  string  `json:"iperf_from" demo:"iperf3"`
	IperfTo    string  `json:"iperf_to" demo:"iperf3"`

	FailedLink [2]string `json:"failed_link" demo:"failover"`
	// FailedLinkOnIperf says the failed link carried the bulk stream as
	// well as the probes. The agents hash each flow onto one of the k
	// paths, so the two streams may share no switch-to-switch link; the
	// link then fails on the probes' path, where the outage is measured.
	FailedLinkOnIperf bool    `json:"failed_link_on_iperf3_path" demo:"failover"`
	FailoverOutageMS  float64 `json:"failover_outage_ms" demo:"failover"`
	FailoverLost      int     `json:"failover_probes_lost" demo:"failover"`
	FailoverSent      int     `json:"failover_probes_sent" demo:"failover"`
	FailoverProbeMS   float64 `json:"failover_probe_interval_ms" demo:"failover"`
	Recovered         bool    `json:"recovered" demo:"failover"`

	// Error is why the run stopped before its end; the fields above hold
	// what it had measured by then.
	Error string `json:"error,omitempty"`

	// StoppedBefore is the first step a run that stopped early did not
	// complete; 0 when the run completed them all. The JSON shows it by
	// the keys it leaves out, the text by "not reached".
	StoppedBefore DemoStep `json:"-"`

	done DemoStep // the last step completed so far, while the demo runs
}

// reached reports whether the run completed step s.
func (r *DemoReport) reached(s DemoStep) bool { return r.StoppedBefore == 0 || s < r.StoppedBefore }

// MarshalJSON leaves out the keys of the steps the run did not reach, as
// it leaves out the optional ones: an outage of 0 ms is a measurement, a
// failover never tried is none. The keys keep their order.
func (r DemoReport) MarshalJSON() ([]byte, error) {
	type plain DemoReport // without this method
	data, err := json.Marshal(plain(r))
	if err != nil {
		return nil, err
	}
	drop := map[string]bool{}
	t := reflect.TypeFor[DemoReport]()
	for i := range t.NumField() {
		f := t.Field(i)
		step, ok := f.Tag.Lookup("demo")
		if !ok || r.reached(demoStepNamed(step)) {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		drop[name] = true
	}
	if len(drop) == 0 {
		return data, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if drop[key] {
			continue
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		out.Write(k)
		out.WriteByte(':')
		out.Write(v)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// demoStepNamed maps a field's demo tag to its step; an unknown name (a
// typo in a tag) is a step never reached, which a test catches.
func demoStepNamed(name string) DemoStep {
	for i, n := range demoStepNames {
		if i > 0 && n == name {
			return DemoStep(i)
		}
	}
	return DemoStep(len(demoStepNames))
}

// ErrBadInput marks the errors Demo returns for its input (a topology it
// cannot resolve or run DumbNet on, an unknown engine): the CLI exits 2 on
// them. The errors keep their own messages.
var ErrBadInput = errors.New("bad input")

type inputError struct{ error }

func (e inputError) Unwrap() []error { return []error{e.error, ErrBadInput} }

// ErrInterrupted marks a run stopped by its context (Ctrl-C in the CLI)
// before its end. Demo returns the report of the steps reached with it.
var ErrInterrupted = errors.New("interrupted")

// interrupted is ErrInterrupted with the context's reason: its message
// is "demo: interrupted" for a cancellation, and names any other reason
// (a deadline).
type interrupted struct{ cause error }

func (e interrupted) Error() string {
	if errors.Is(e.cause, context.Canceled) {
		return "demo: interrupted"
	}
	return fmt.Sprintf("demo: interrupted: %v", e.cause)
}

func (e interrupted) Unwrap() []error { return []error{ErrInterrupted, e.cause} }

// Demo runs the demo and returns its report. The emulator path needs root;
// with Engine "" it falls back to the simulator and says so in Note. A
// run stopped early returns its report with the error, ErrInterrupted
// when ctx ended. An emulator lab of the same name that runs (or is
// starting) is left alone: that is ErrBadInput, wrapping
// emu.ErrLabExists; only the leftovers of a crashed one are removed.
func Demo(ctx context.Context, o DemoOptions) (*DemoReport, error) {
	if o.Topology == "" {
		o.Topology = "fattree:4"
	}
	if o.Name == "" {
		o.Name = "demo"
	}
	g, err := topo.Resolve(o.Topology, o.Seed)
	if err != nil {
		return nil, inputError{err}
	}
	if len(g.Nodes(topo.Host)) < 2 {
		return nil, inputError{fmt.Errorf("demo: %s has fewer than two hosts", o.Topology)}
	}
	if err := dumbnet.CheckTopology(g); err != nil {
		return nil, inputError{err}
	}
	if !g.Connected() {
		return nil, inputError{fmt.Errorf("demo: %s is not connected: some hosts cannot reach each other", o.Topology)}
	}
	// The failover step fails a switch-to-switch link on the iperf3 path:
	// its two hosts must hang off different switches.
	a, b := farHosts(g)
	ea, okA := g.Peer(a, 1)
	eb, okB := g.Peer(b, 1)
	switch {
	case !okA || !okB:
		return nil, inputError{fmt.Errorf("demo: %s: host %s or %s is cabled to nothing", o.Topology, g.Node(a).Name, g.Node(b).Name)}
	case ea.Node == eb.Node:
		return nil, inputError{fmt.Errorf("demo: %s has no switch-to-switch link between %s and %s to fail", o.Topology, g.Node(a).Name, g.Node(b).Name)}
	}
	rep := &DemoReport{Topology: o.Topology, ExpectedHosts: len(g.Nodes(topo.Host))}
	want, err := dumbnet.Expected(g)
	if err != nil {
		return nil, inputError{fmt.Errorf("demo: %w", err)}
	}
	rep.ExpectedSwitches, rep.ExpectedLinks = len(want.Switches), len(want.Links)
	rep.ExpectedHosts = len(want.Hosts)

	engine := o.Engine
	switch engine {
	case "":
		engine = "emu"
		if os.Geteuid() != 0 {
			engine = "sim"
			rep.Note = "not root: ran the same scenario in the simulator (run as root for real Linux hosts)"
		}
	case "emu":
		if os.Geteuid() != 0 {
			return nil, errors.New("demo: the emulator needs root (use --engine sim, or run as root)")
		}
	case "sim":
	default:
		return nil, inputError{fmt.Errorf("demo: unknown engine %q (emu or sim)", engine)}
	}
	rep.Engine = engine
	if engine == "emu" {
		err = demoEmu(ctx, g, o, rep, want)
	} else {
		err = demoSim(g, o, rep, want)
	}
	if err != nil && ctx.Err() != nil && !errors.Is(err, ErrBadInput) {
		// However it surfaced (a ping, iperf3, the failover), the run
		// stopped because ctx ended.
		err = interrupted{ctx.Err()}
	}
	if err != nil {
		rep.Error = err.Error()
		rep.StoppedBefore = rep.done + 1
	}
	return rep, err
}

func (o *DemoOptions) step(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "demo: "+format+"\n", args...)
	}
}

// farHosts picks the iperf pair: the first host and the last one, in two
// different pods of a fat tree (the last host's edge switch is as far as
// the topology goes).
func farHosts(g *topo.Graph) (topo.NodeID, topo.NodeID) {
	hs := g.Nodes(topo.Host)
	return hs[0], hs[len(hs)-1]
}

func (o *DemoOptions) recordDiscovery(rep *DemoReport, got, want *dumbnet.Topology) {
	rep.DiscoveredSwitches = len(got.Switches)
	rep.DiscoveredLinks = len(got.Links)
	rep.DiscoveredHosts = len(got.Hosts)
	rep.DiscoveryDiff = got.Diff(want)
	rep.DiscoveryExact = len(rep.DiscoveryDiff) == 0
	rep.done = DemoDiscovery
	o.step("discovered %d switches, %d links, %d hosts in %.1f ms (%d probes); exact: %v",
		rep.DiscoveredSwitches, rep.DiscoveredLinks, rep.DiscoveredHosts, rep.DiscoveryMS, rep.DiscoveryProbes, rep.DiscoveryExact)
}

// Text renders the report for a person. A step the run did not reach
// says so instead of showing zeros.
func (r *DemoReport) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "DumbNet demo on %s (%s)\n", r.Topology, r.Engine)
	if r.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", r.Note)
	}
	ok := func(v bool) string {
		if v {
			return "ok"
		}
		return "MISMATCH"
	}
	const notReached = "not reached"
	if r.reached(DemoDiscovery) {
		fmt.Fprintf(&b, "  discovery      %d/%d switches, %d/%d links, %d/%d hosts in %.1f ms, %d probes: %s\n",
			r.DiscoveredSwitches, r.ExpectedSwitches, r.DiscoveredLinks, r.ExpectedLinks,
			r.DiscoveredHosts, r.ExpectedHosts, r.DiscoveryMS, r.DiscoveryProbes, ok(r.DiscoveryExact))
		if r.DiscoveryLateMS > 0 {
			fmt.Fprintf(&b, "                 complete %.0f ms after the lab was ready: the controller's rescan placed hosts that answered late\n", r.DiscoveryLateMS)
		}
		for _, d := range r.DiscoveryDiff {
			fmt.Fprintf(&b, "                 %s\n", d)
		}
	} else {
		fmt.Fprintf(&b, "  discovery      %s\n", notReached)
	}
	if r.reached(DemoPing) {
		fmt.Fprintf(&b, "  ping           %d/%d host pairs answer\n", r.PingPairsOK, r.PingPairsTotal)
		for _, f := range r.PingFailed {
			fmt.Fprintf(&b, "                 failed: %s\n", f)
		}
	} else {
		fmt.Fprintf(&b, "  ping           %s\n", notReached)
	}
	what := "iperf3"
	if r.Engine == "sim" {
		what = "tcp bulk"
	}
	if r.reached(DemoIperf3) {
		fmt.Fprintf(&b, "  %-14s %s -> %s: %.1f Mb/s averaged over the run, failure included\n", what, r.IperfFrom, r.IperfTo, r.Iperf3Mbps)
	} else {
		fmt.Fprintf(&b, "  %-14s %s\n", what, notReached)
	}
	if r.reached(DemoFailover) {
		where := ""
		if !r.FailedLinkOnIperf {
			where = fmt.Sprintf(" (on the probes' path; the %s stream took another)", what)
		}
		fmt.Fprintf(&b, "  failover       link %s-%s failed mid-run%s: outage %.1f ms (%d of %d probes lost at %.1f ms), recovered: %v\n",
			r.FailedLink[0], r.FailedLink[1], where, r.FailoverOutageMS, r.FailoverLost, r.FailoverSent, r.FailoverProbeMS, r.Recovered)
	} else {
		fmt.Fprintf(&b, "  failover       %s\n", notReached)
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "  stopped early  %s\n", r.Error)
	}
	return b.String()
}

// OK reports whether the demo showed a working fabric: every step
// reached, the topology found exactly, every pair pinging, traffic moving
// and recovering.
func (r *DemoReport) OK() bool {
	return r.reached(DemoIperf3) && r.DiscoveryExact && r.PingPairsOK == r.PingPairsTotal && r.Iperf3Mbps > 0 && r.Recovered
}
