package scenario

import (
	"fmt"
	"strings"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// WatchEvery is how often, in virtual time, a run samples the port states
// of the elements that report them (element.PortStateReporter: the stp
// bridge). Failures and repairs are sampled at their own instants as well.
// Spanning-tree timers count in seconds, so 10 ms resolves them well; a
// sample is a read of the elements' state between events, so the run's
// events and trace hash do not depend on it.
const WatchEvery = 10 * element.Millisecond

// PortStatePeriod is what the port states did from one instant (the start,
// or failures and repairs) until the next one or the end of the run: the
// time a spanning tree took to settle.
type PortStatePeriod struct {
	FromS float64 `json:"from_s"`
	// Cause is "start", or the failures and repairs applied at FromS
	// ("node s1 down", several joined by "; ").
	Cause string `json:"cause"`
	// Changes counts port state changes seen by the samples (a port that
	// went listening, learning, forwarding between two samples counts
	// once).
	Changes int `json:"changes"`
	// LastChangeS is the sample time of the last change (at most
	// WatchEvery after it happened), null when no port changed state.
	LastChangeS *float64 `json:"last_change_s"`
	// EndS is the end of the period: the next failure or repair, or the
	// end of the run.
	EndS float64 `json:"end_s"`
	// Transitional counts the ports on their way to forwarding at EndS:
	// listening or learning (802.1D-1998), or discarding in the root or a
	// designated role (RSTP, until it agrees or its forward delay runs
	// out). Settled is true when there are none (which says nothing of
	// changes a timer would still have made: 802.1D reacts to a silent
	// failure only when max age expires).
	Transitional int  `json:"transitional_ports"`
	Settled      bool `json:"settled"`
}

// portWatch follows the port states of the elements that report them.
type portWatch struct {
	reps    []element.PortStateReporter
	last    []map[element.Port]string // as reported: "state/role"
	vers    []uint64                  // PortStateVersion at the last sample, for those that have one
	periods []PortStatePeriod
}

// newPortWatch returns a watch over every node's element that reports
// port states, or nil when none does.
func newPortWatch(g *topo.Graph, elementOf func(topo.NodeID) element.Element) *portWatch {
	w := &portWatch{}
	for i := range g.NumNodes() {
		if sr, ok := elementOf(topo.NodeID(i)).(element.PortStateReporter); ok {
			w.reps = append(w.reps, sr)
			w.last = append(w.last, portStates(sr))
			w.vers = append(w.vers, version(sr))
		}
	}
	if len(w.reps) == 0 {
		return nil
	}
	w.periods = []PortStatePeriod{{Cause: "start", Settled: true}}
	return w
}

// portStates reads a reporter's states ("forwarding/root").
func portStates(sr element.PortStateReporter) map[element.Port]string {
	return sr.PortStateNames()
}

// stateRole splits a reported name into the state and the role, if any.
func stateRole(s string) (state, role string) {
	state, role, _ = strings.Cut(s, "/")
	return state, role
}

// version is the reporter's PortStateVersion, or 0 when it has none.
func version(sr element.PortStateReporter) uint64 {
	if v, ok := sr.(element.PortStateVersioner); ok {
		return v.PortStateVersion()
	}
	return 0
}

// transitional reports whether a port ("state/role") is on its way to
// forwarding: 802.1D-1998's listening and learning, or an RSTP root or
// designated port still discarding (the condition stp.Bridge.Ready checks).
func transitional(s string) bool {
	state, role := stateRole(s)
	return state == "listening" || state == "learning" ||
		state == "discarding" && (role == "root" || role == "designated")
}

// sample compares the states now with the last sample's, counting the
// changes into the current period.
func (w *portWatch) sample(now element.Time) {
	cur := &w.periods[len(w.periods)-1]
	changed := false
	for i, sr := range w.reps {
		if v, ok := sr.(element.PortStateVersioner); ok {
			if v.PortStateVersion() == w.vers[i] {
				continue // no state changed since the last sample
			}
			w.vers[i] = v.PortStateVersion()
		}
		m := portStates(sr)
		for p, s := range m {
			if old, _ := stateRole(w.last[i][p]); old != stateOf(s) {
				cur.Changes++
				changed = true
			}
		}
		w.last[i] = m
	}
	if changed {
		t := now.Seconds()
		cur.LastChangeS = &t
	}
}

// begin samples the states just before a failure or repair at now and
// starts a new period there (or adds the cause to the one that began at
// the same instant).
func (w *portWatch) begin(now element.Time, cause string) {
	w.sample(now)
	cur := &w.periods[len(w.periods)-1]
	if cur.FromS == now.Seconds() && cur.Cause != "start" {
		cur.Cause += "; " + cause
		return
	}
	w.end(now)
	w.periods = append(w.periods, PortStatePeriod{FromS: now.Seconds(), Cause: cause})
}

// end closes the current period at now.
func (w *portWatch) end(now element.Time) {
	cur := &w.periods[len(w.periods)-1]
	cur.EndS = now.Seconds()
	cur.Transitional = 0
	for _, m := range w.last {
		for _, s := range m {
			if transitional(s) {
				cur.Transitional++
			}
		}
	}
	cur.Settled = cur.Transitional == 0
}

// portStateLines writes the periods for the text report.
func portStateLines(ps []PortStatePeriod) []string {
	if len(ps) == 0 {
		return nil
	}
	out := []string{fmt.Sprintf("port states (sampled every %v):", WatchEvery)}
	for _, p := range ps {
		head := "  from the start"
		if p.Cause != "start" {
			head = fmt.Sprintf("  after %s at %gs", p.Cause, p.FromS)
		}
		var what string
		if p.LastChangeS == nil {
			what = "no port changed state"
		} else {
			what = fmt.Sprintf("%d changes, the last at %gs (%+.2fs)", p.Changes, *p.LastChangeS, *p.LastChangeS-p.FromS)
		}
		end := fmt.Sprintf("none listening or learning at %gs", p.EndS)
		if !p.Settled {
			end = fmt.Sprintf("%d ports still listening or learning (or, under RSTP, discarding as root or designated port) at %gs", p.Transitional, p.EndS)
		}
		out = append(out, fmt.Sprintf("%s: %s; %s", head, what, end))
	}
	return out
}

// stateOf is the state part of a reported name.
func stateOf(s string) string {
	state, _ := stateRole(s)
	return state
}
