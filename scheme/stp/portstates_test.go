package stp_test

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/scheme/stp"
	"github.com/edgefabric/edgefabric/sim/scenario"
	"github.com/edgefabric/edgefabric/topo"
)

// ring3 is examples/stp-ring3-node-failure.yaml's fabric with short
// timers (hello 1 s, max age 6 s, forward delay 4 s): s1 is the root,
// s2-s3 the blocked link.
const ring3 = "topology: ring:3\nscheme: stp\nparams: {hello: 1s, max_age: 6s, forward_delay: 4s}\nlinks: {rate: 1Gbps, delay: 2us}\n"

func runRing3(t *testing.T, rest string, watch bool) *scenario.Result {
	t.Helper()
	return runScenarioText(t, ring3+rest, watch)
}

// runScenarioText runs a whole scenario file's text under the stp scheme.
func runScenarioText(t *testing.T, text string, watch bool) *scenario.Result {
	t.Helper()
	r := &scheme.Registry{}
	if err := stp.Register(r); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse([]byte(text), "ring3.yaml", scenario.Options{Registry: r})
	if err != nil {
		t.Fatal(err)
	}
	run, err := sc.Setup(scenario.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !watch {
		run.Unwatch()
	}
	res, err := run.Execute()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestPortStatesTellReconvergence: the run's port-state periods give the
// tree's convergence exactly, with every change counted. Ring:3 has 12
// ports (4 a switch).
//   - Start: the 11 ports that end forwarding go blocking, listening,
//     learning, forwarding (33 changes), the blocked one listens and goes
//     back to blocking (2); the last at 2 x forward delay, 8 s.
//   - s1 (the root) fails: its 4 ports and its neighbours' 2 ports towards
//     it go disabled at once (6), and the blocked s2-s3 port listens,
//     learns and forwards (3): 9, the last at 15 + 8 s.
//   - s1 returns and s2-s3 fails at once: s1's 4 ports and the 2 towards
//     it go disabled, listening, learning, forwarding (18), the two s2-s3
//     ports go disabled (2): 20, the last at 30 + 8 s.
//
// A period cut short 2 s after s1 fails counts the one port still
// listening. Watching changes neither the events nor the trace hash.
func TestPortStatesTellReconvergence(t *testing.T) {
	res := runRing3(t, "duration: 40s\nworkloads:\n  - ping: {from: h3, to: h5, count: 30, interval: 1s, at: 9s}\nfailures:\n  - {at: 15s, node: s1, down}\n  - {at: 30s, node: s1, up}\n  - {at: 30s, link: [s2, s3], down}\n", true)
	got, _ := json.Marshal(res.PortStates)
	want := `[{"from_s":0,"cause":"start","changes":35,"last_change_s":8,"end_s":15,"transitional_ports":0,"settled":true},` +
		`{"from_s":15,"cause":"node s1 down","changes":9,"last_change_s":23,"end_s":30,"transitional_ports":0,"settled":true},` +
		`{"from_s":30,"cause":"node s1 up; link s2-s3 down","changes":20,"last_change_s":38,"end_s":40,"transitional_ports":0,"settled":true}]`
	if string(got) != want {
		t.Errorf("port_states\n got  %s\n want %s", got, want)
	}
	var text strings.Builder
	res.WriteText(&text)
	t.Logf("\n%s", text.String())

	plain := runRing3(t, "duration: 40s\nworkloads:\n  - ping: {from: h3, to: h5, count: 30, interval: 1s, at: 9s}\nfailures:\n  - {at: 15s, node: s1, down}\n  - {at: 30s, node: s1, up}\n  - {at: 30s, link: [s2, s3], down}\n", false)
	if plain.TraceHash != res.TraceHash || plain.Events != res.Events || len(plain.PortStates) != 0 {
		t.Errorf("unwatched run: hash %s, %d events, %d periods; watched: hash %s, %d events", plain.TraceHash, plain.Events, len(plain.PortStates), res.TraceHash, res.Events)
	}

	// Cut 2 s into the listening after the root's failure.
	short := runRing3(t, "duration: 17s\nfailures:\n  - {at: 15s, node: s1, down}\n", true)
	got, _ = json.Marshal(short.PortStates[1])
	if want := `{"from_s":15,"cause":"node s1 down","changes":7,"last_change_s":15,"end_s":17,"transitional_ports":1,"settled":false}`; string(got) != want {
		t.Errorf("cut short\n got  %s\n want %s", got, want)
	}
}

// TestPortStatesKeepStop: a Stop from an At action ends a watched run
// where it ends an unwatched one (stepping Run reset it at every step).
func TestPortStatesKeepStop(t *testing.T) {
	run := func(watch bool) (uint64, string, float64) {
		r := &scheme.Registry{}
		if err := stp.Register(r); err != nil {
			t.Fatal(err)
		}
		sc, err := scenario.Parse([]byte(ring3+"duration: 20s\n"), "ring3.yaml", scenario.Options{Registry: r})
		if err != nil {
			t.Fatal(err)
		}
		rn, err := sc.Setup(scenario.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !watch {
			rn.Unwatch()
		}
		rn.Sim.At(2*element.Second, rn.Sim.Stop)
		res, err := rn.Execute()
		if err != nil {
			t.Fatal(err)
		}
		return res.Events, res.TraceHash, rn.Sim.Now().Seconds()
	}
	ew, hw, nw := run(true)
	eu, hu, nu := run(false)
	if ew != eu || hw != hu || nw != 2 || nu != 2 {
		t.Errorf("watched: %d events, hash %s, clock %vs; unwatched: %d, %s, %vs; want equal, at 2s", ew, hw, nw, eu, hu, nu)
	}
}

// TestPortStatesRSTPDiscarding: under RSTP a port on its way to forwarding
// is discarding, not listening or learning: the host ports here (designated,
// never agreed: hosts send no BPDUs, and edge_ports is off) discard for a
// forward delay (4 s), learn for another, then forward. A period ending at
// 2 s is not settled (the six host ports count), as stp.Bridge.Ready says;
// one ending at 20 s is.
func TestPortStatesRSTPDiscarding(t *testing.T) {
	rstp := strings.Replace(ring3, "params: {", "params: {protocol: rstp, ", 1)
	short := runScenarioText(t, rstp+"duration: 2s\n", true)
	got, _ := json.Marshal(short.PortStates[0])
	if want := `{"from_s":0,"cause":"start","changes":12,"last_change_s":0.01,"end_s":2,"transitional_ports":6,"settled":false}`; string(got) != want {
		t.Errorf("2 s into RSTP\n got  %s\n want %s", got, want)
	}
	long := runScenarioText(t, rstp+"duration: 20s\n", true)
	if p := long.PortStates[0]; !p.Settled || p.Transitional != 0 {
		t.Errorf("20 s into RSTP: %+v", p)
	}
}

// TestPortStatesFollowRoleChanges: an RSTP port that changes role while
// it stays discarding (alternate to designated) is on its way to
// forwarding; the watch, which rebuilds a bridge's states only when its
// PortStateVersion changes, must see it. The version counted only state
// changes, so on ring:5 1.5 s after s1-s2 failed the watch still held
// the port as alternate: 1 transitional port where the bridges had 2.
func TestPortStatesFollowRoleChanges(t *testing.T) {
	text := "topology: ring:5\nscheme: stp\nparams: {protocol: rstp, hello: 1s, max_age: 6s, forward_delay: 4s}\n" +
		"links: {rate: 1Gbps, delay: 2us}\nduration: 16.5s\nfailures:\n  - {at: 15s, link: [s1, s2], down}\n"
	r := &scheme.Registry{}
	if err := stp.Register(r); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse([]byte(text), "ring5.yaml", scenario.Options{Registry: r})
	if err != nil {
		t.Fatal(err)
	}
	run, err := sc.Setup(scenario.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Execute()
	if err != nil {
		t.Fatal(err)
	}
	live := 0
	for i := range sc.Graph.NumNodes() {
		if b, ok := run.Sim.Element(topo.NodeID(i)).(*stp.Bridge); ok {
			for _, s := range b.PortStateNames() {
				if s == "discarding/root" || s == "discarding/designated" {
					live++
				}
			}
		}
	}
	p := res.PortStates[len(res.PortStates)-1]
	if live != 2 || p.Transitional != live || p.Settled {
		t.Errorf("at %gs: %d ports discarding as root or designated; the watch counts %d (settled %v)", p.EndS, live, p.Transitional, p.Settled)
	}
}

// TestPortStateVersionFollowsNames: whenever PortStateNames changes (a
// state, or a role: an RSTP port's, or the root port 802.1D picks), so
// does PortStateVersion, sampled every millisecond through failures and
// repairs on ring:6 under both protocols.
func TestPortStateVersionFollowsNames(t *testing.T) {
	for _, proto := range []string{"rstp", "stp"} {
		text := "topology: ring:6\nscheme: stp\nparams: {protocol: " + proto + ", hello: 1s, max_age: 6s, forward_delay: 4s}\n" +
			"links: {rate: 1Gbps, delay: 2us}\nduration: 40s\nfailures:\n  - {at: 15s, node: s1, down}\n  - {at: 30s, node: s1, up}\n  - {at: 32s, link: [s3, s4], down}\n"
		r := &scheme.Registry{}
		if err := stp.Register(r); err != nil {
			t.Fatal(err)
		}
		sc, err := scenario.Parse([]byte(text), "ring6.yaml", scenario.Options{Registry: r})
		if err != nil {
			t.Fatal(err)
		}
		run, err := sc.Setup(scenario.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		run.Unwatch()
		var bs []*stp.Bridge
		for i := range sc.Graph.NumNodes() {
			if b, ok := run.Sim.Element(topo.NodeID(i)).(*stp.Bridge); ok {
				bs = append(bs, b)
			}
		}
		last := make([]map[element.Port]string, len(bs))
		vers := make([]uint64, len(bs))
		bad := 0
		var tick func()
		tick = func() {
			for i, b := range bs {
				m := b.PortStateNames()
				if last[i] != nil && b.PortStateVersion() == vers[i] && !maps.Equal(m, last[i]) && bad < 3 {
					bad++
					t.Errorf("%s at %v: bridge %d's ports went from %v to %v, version %d unchanged", proto, run.Sim.Now(), i, last[i], m, vers[i])
				}
				last[i], vers[i] = m, b.PortStateVersion()
			}
			run.Sim.At(run.Sim.Now()+element.Millisecond, tick)
		}
		run.Sim.At(0, tick)
		if _, err := run.Execute(); err != nil {
			t.Fatal(err)
		}
	}
}
