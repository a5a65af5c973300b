package scenario

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/host"
	"github.com/edgefabric/edgefabric/topo"
)

// element0 is picosecond 0 of every capture: the Unix epoch, so that
// timestamps in a pcap read as virtual time since the start of the run.
var element0 = time.Time{}

// Result is what a run reports; it marshals to the --json output.
type Result struct {
	Scenario  string  `json:"scenario"`
	Topology  string  `json:"topology"`
	Scheme    string  `json:"scheme"`
	Seed      uint64  `json:"seed"`
	DurationS float64 `json:"duration_s"`
	// Interrupted is set when the run stopped before its duration
	// (RunOptions.Stop: a Ctrl-C of edgefabric sim); SimulatedS is the
	// simulated time it reached, DurationS when it was not. An
	// interrupted run's results are those of the run up to SimulatedS:
	// every event until then was processed whole, none after.
	Interrupted bool           `json:"interrupted"`
	SimulatedS  float64        `json:"simulated_s"`
	Events      uint64         `json:"events"`
	TraceHash   string         `json:"trace_hash"`
	Flows       []Flow         `json:"flows"`
	Aggregate   Aggregate      `json:"aggregate"`
	Failures    []FailureEvent `json:"failures"`
	// PortStates tells when the port states (of elements that report
	// them: the stp bridge) last changed from the start and after each
	// failure or repair; empty for schemes without port states.
	PortStates []PortStatePeriod `json:"port_states"`
	// Drops sums the engine's drops over every port, by reason.
	Drops map[string]uint64 `json:"drops"`
	// Ports lists every port that dropped something.
	Ports []PortResult `json:"ports_with_drops"`
	// Elements holds each node's element counters (switch data planes,
	// agents, host stacks), by node name.
	Elements map[string]map[string]uint64 `json:"element_counters"`
	Captures []string                     `json:"captures"`
}

// Flow is one workload's outcome, with the app's own result as Detail.
// Every field is in the JSON, zero or not: Dst is empty for a shuffle,
// Loss is null for the kinds that do not count packets (tcp, tcp_rr,
// shuffle) and for a udp flow whose payloads are too short to carry a
// sequence number (under 20 bytes), RTT for those that take no RTT samples
// (udp, tcp, shuffle). InFlight counts the udp datagrams and ping requests
// that may still be on their way at the end of the run (host.UDPResult,
// host.PingResult): neither received nor lost, and not in Loss.
type Flow struct {
	ID            int           `json:"id"`
	Kind          string        `json:"kind"`
	Src           string        `json:"src"`
	Dst           string        `json:"dst"`
	StartS        float64       `json:"start_s"`
	Done          bool          `json:"done"`
	ThroughputBps float64       `json:"throughput_bps"`
	Sent          int64         `json:"sent"`
	Received      int64         `json:"received"`
	InFlight      int64         `json:"in_flight"`
	Loss          *float64      `json:"loss"`
	RTT           *host.Summary `json:"rtt"`
	Error         string        `json:"error"`
	Detail        any           `json:"detail"`
	rtts          []element.Time
}

// Aggregate summarizes every flow: throughput summed over the flows that
// carry data, RTT percentiles over every RTT sample of every flow (ping and
// tcp_rr), loss over every packet sent by ping and udp flows whose loss is
// known, those still in flight at the end left out: (Sent - InFlight -
// Received) / (Sent - InFlight).
//
// Every flow is counted once: Failed if it reports an error (whether or
// not it ended: a TCP connection reset, a shuffle transfer that failed, a
// flow not started), else Completed if its app is done (a ping whose
// every probe was lost is done: its loss says how it went), else
// Unfinished (still running at the end of the run, such as a TCP flow
// still trying to connect).
type Aggregate struct {
	Flows         int          `json:"flows"`
	Completed     int          `json:"completed"`
	Failed        int          `json:"failed"`
	Unfinished    int          `json:"unfinished"`
	ThroughputBps float64      `json:"throughput_bps"`
	RTT           host.Summary `json:"rtt"`
	Sent          int64        `json:"sent"`
	Received      int64        `json:"received"`
	InFlight      int64        `json:"in_flight"`
	Loss          float64      `json:"loss"`
}

// FailureEvent records a failure or repair as it was applied.
type FailureEvent struct {
	AtS   float64 `json:"at_s"`
	What  string  `json:"what"`
	State string  `json:"state"`
	Error string  `json:"error,omitempty"`
}

// PortResult is one port's counters.
type PortResult struct {
	Node     string            `json:"node"`
	Port     element.Port      `json:"port"`
	TxFrames uint64            `json:"tx_frames"`
	RxFrames uint64            `json:"rx_frames"`
	Drops    map[string]uint64 `json:"drops"`
	MaxQueue int               `json:"max_queue_bytes"`
}

func (r *Run) collect() *Result {
	sc, s, g := r.Sc, r.Sim, r.Sc.Graph
	res := &Result{Scenario: sc.Name, Topology: g.Name, Scheme: sc.Scheme.Name, Seed: sc.Seed,
		DurationS: sc.Duration.Seconds(), SimulatedS: s.Now().Seconds(), Events: s.Events(), TraceHash: fmt.Sprintf("%016x", s.TraceHash()),
		Failures: r.fails, Drops: map[string]uint64{}, Elements: map[string]map[string]uint64{}}
	// Empty lists, not null: the JSON has every field (so do the flows).
	res.PortStates = []PortStatePeriod{}
	if r.watch != nil {
		res.PortStates = r.watch.periods
	}
	if res.Failures == nil {
		res.Failures = []FailureEvent{}
	}
	res.Ports, res.Flows = []PortResult{}, []Flow{}
	var rtts []element.Time
	agg := &res.Aggregate
	for _, fl := range r.flows {
		var f Flow
		if fl.result == nil {
			// Named as start names it: a shuffle by its host count (its
			// Src is unset), every other kind by both ends.
			f = Flow{ID: fl.id, Kind: fl.w.Kind.String(), Error: "not started"}
			if fl.w.Kind == Shuffle {
				f.Src = fmt.Sprintf("%d hosts", len(fl.w.Hosts))
			} else {
				f.Src, f.Dst = g.Node(fl.w.Src).Name, g.Node(fl.w.Dst).Name
			}
		} else {
			f = fl.result()
		}
		agg.Flows++
		switch {
		case f.Error != "":
			agg.Failed++
		case f.Done:
			agg.Completed++
		default:
			agg.Unfinished++
		}
		agg.ThroughputBps += f.ThroughputBps
		if f.Loss != nil { // packets of a flow whose loss is unknown do not count
			agg.Sent += f.Sent
			agg.Received += f.Received
			agg.InFlight += f.InFlight
		}
		rtts = append(rtts, f.rtts...)
		res.Flows = append(res.Flows, f)
	}
	if n := agg.Sent - agg.InFlight; n > 0 {
		agg.Loss = float64(max(n-agg.Received, 0)) / float64(n)
	}
	agg.RTT = host.Summarize(rtts)
	for i := range g.NumNodes() {
		n := topo.NodeID(i)
		nports := g.Node(n).Ports
		if g.Node(n).Kind == topo.Host && s.Stack(n) != nil {
			nports++ // the agent's Local port
		}
		for p := 1; p <= nports; p++ {
			st, _ := s.PortStats(n, element.Port(p))
			if st.TotalDrops() == 0 {
				continue
			}
			dm := st.DropMap()
			for k, v := range dm {
				res.Drops[k] += v
			}
			res.Ports = append(res.Ports, PortResult{Node: g.Node(n).Name, Port: element.Port(p), TxFrames: st.TxFrames,
				RxFrames: st.RxFrames, Drops: dm, MaxQueue: st.MaxQueue})
		}
		// The stack of a host with an agent has a port of its own: what
		// it sends while the host is down is dropped there.
		if st, ok := s.StackPortStats(n); ok && st.TotalDrops() > 0 {
			dm := st.DropMap()
			for k, v := range dm {
				res.Drops[k] += v
			}
			res.Ports = append(res.Ports, PortResult{Node: g.Node(n).Name + "/stack", Port: 1, TxFrames: st.TxFrames,
				RxFrames: st.RxFrames, Drops: dm, MaxQueue: st.MaxQueue})
		}
		if b := s.BadPortSends(n); b > 0 {
			res.Drops["bad_port"] += b
		}
		name := g.Node(n).Name
		// A host with an agent has two elements; the stack's counters
		// go under "stack." so that a name both use (rx_frames) is not
		// summed into a count of neither.
		for i, e := range []element.Element{s.Element(n), s.Stack(n)} {
			if cr, ok := e.(element.CounterReporter); ok {
				m := res.Elements[name]
				if m == nil {
					m = map[string]uint64{}
					res.Elements[name] = m
				}
				prefix := ""
				if i == 1 {
					prefix = "stack."
				}
				for k, v := range cr.Counters() {
					m[prefix+k] += v
				}
			}
		}
	}
	return res
}

// usText writes a time given in microseconds in the unit that suits it:
// 812.5us, 60.67ms, 1.250s (a WAN's RTTs read badly as 60668.7us).
func usText(us float64) string {
	switch {
	case us < 1000:
		return fmt.Sprintf("%.1fus", us)
	case us < 1e6:
		return fmt.Sprintf("%.2fms", us/1000)
	}
	return fmt.Sprintf("%.3fs", us/1e6)
}

// WriteText prints the result for people: one line per flow, then the
// aggregate, failures and drops; no line ends in blanks.
func (res *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	if res.Interrupted {
		line(&b, "scenario %s: %s on %s, seed %d, %gs of %gs simulated, %d events", res.Scenario, res.Scheme, res.Topology, res.Seed, res.SimulatedS, res.DurationS, res.Events)
		line(&b, "interrupted at simulated time %gs: the results are those of the run until then", res.SimulatedS)
	} else {
		line(&b, "scenario %s: %s on %s, seed %d, %gs simulated, %d events", res.Scenario, res.Scheme, res.Topology, res.Seed, res.DurationS, res.Events)
	}
	line(&b, "%4s  %-7s  %-10s  %-10s  %-5s  %14s  %10s  %10s  %7s  %s", "id", "kind", "src", "dst", "done", "throughput", "rtt p50", "rtt p99", "loss", "note")
	for _, f := range res.Flows {
		tp, p50, p99, loss := "-", "-", "-", "-"
		if f.ThroughputBps > 0 {
			tp = rate(f.ThroughputBps)
		}
		if f.RTT != nil && f.RTT.Count > 0 {
			p50, p99 = usText(f.RTT.P50Us), usText(f.RTT.P99Us)
		}
		if f.Loss != nil {
			loss = fmt.Sprintf("%.1f%%", 100**f.Loss)
		}
		line(&b, "%4d  %-7s  %-10s  %-10s  %-5v  %14s  %10s  %10s  %7s  %s", f.ID, f.Kind, f.Src, f.Dst, f.Done, tp, p50, p99, loss, f.Error)
	}
	// What has no sample says so rather than print zeros.
	a := res.Aggregate
	tp, rtt, loss := "no data flow", "no rtt samples", "no ping or udp packets"
	for _, f := range res.Flows {
		if f.Kind == "udp" || f.Kind == "tcp" || f.Kind == "shuffle" {
			// a sum of averages over each flow's own time, not a rate
			// the fabric sustained at once: the label says so
			tp = "throughput " + rate(a.ThroughputBps) + " (sum over flows)"
			break
		}
	}
	if a.RTT.Count > 0 {
		rtt = fmt.Sprintf("rtt p50 %s p90 %s p99 %s (%d samples)", usText(a.RTT.P50Us), usText(a.RTT.P90Us), usText(a.RTT.P99Us), a.RTT.Count)
	}
	if n := a.Sent - a.InFlight; n > 0 {
		loss = fmt.Sprintf("loss %.2f%% (%d/%d)", 100*a.Loss, max(n-a.Received, 0), n)
		if a.InFlight > 0 {
			loss += fmt.Sprintf(", %d in flight", a.InFlight)
		}
	} else if a.Sent > 0 {
		loss = fmt.Sprintf("%d packets in flight", a.InFlight)
	}
	line(&b, "aggregate: %d flows, %d completed, %d failed, %d unfinished; %s; %s; %s",
		a.Flows, a.Completed, a.Failed, a.Unfinished, tp, rtt, loss)
	for _, f := range res.Failures {
		line(&b, "at %gs: %s %s %s", f.AtS, f.What, f.State, f.Error)
	}
	for _, l := range portStateLines(res.PortStates) {
		line(&b, "%s", l)
	}
	if len(res.Drops) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(res.Drops)) {
			parts = append(parts, fmt.Sprintf("%s=%d", k, res.Drops[k]))
		}
		line(&b, "engine drops: %s", strings.Join(parts, " "))
	}
	for _, c := range res.Captures {
		line(&b, "capture: %s", c)
	}
	line(&b, "trace_hash %s", res.TraceHash)
	_, err := io.WriteString(w, b.String())
	return err
}

// line adds one formatted line to b without trailing blanks (a column
// left empty, such as a flow's note, would leave them).
func line(b *strings.Builder, format string, args ...any) {
	b.WriteString(strings.TrimRight(fmt.Sprintf(format, args...), " "))
	b.WriteByte('\n')
}

func rate(bps float64) string {
	switch {
	case bps >= 1e9:
		return fmt.Sprintf("%.3f Gb/s", bps/1e9)
	case bps >= 1e6:
		return fmt.Sprintf("%.3f Mb/s", bps/1e6)
	case bps >= 1e3:
		return fmt.Sprintf("%.3f kb/s", bps/1e3)
	}
	return fmt.Sprintf("%.0f b/s", bps)
}
