package scenario

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/element"
)

// longStream streams 100 Mb/s from h1 to h2 for 999 simulated seconds
// (minutes of real time), capturing h1's NIC: a run that only a stop
// ends in a test's time. At 100 Mb/s over 1 Gb/s links no frame waits
// in a queue, so every frame h1's port counted (TxFrames at the send,
// RxFrames at the delivery) has started by the time the run stops.
const longStream = `
topology: line:1
scheme: learn
duration: 1000s
captures:
  - {node: h1}
workloads:
  - udp: {from: h1, to: h2, rate: 100Mbps, size: 1472, duration: 999s, at: 1ms}
`

// pcapRecords reads a capture the run wrote: a nanosecond pcap of
// Ethernet frames, every record whole (a header cut short, or a record
// longer than what is left, fails the test). It returns the records'
// timestamps.
func pcapRecords(t *testing.T, path string) []time.Duration {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if len(raw) < 24 || le.Uint32(raw) != 0xa1b23c4d || le.Uint32(raw[20:]) != 1 {
		t.Fatalf("%s: not a nanosecond Ethernet pcap: % x", path, raw[:min(len(raw), 24)])
	}
	var ts []time.Duration
	for off := 24; off < len(raw); {
		if off+16 > len(raw) {
			t.Fatalf("%s: record header cut at %d of %d bytes", path, off, len(raw))
		}
		n := int(le.Uint32(raw[off+8:]))
		if off+16+n > len(raw) || n != int(le.Uint32(raw[off+12:])) || n < 14 {
			t.Fatalf("%s: record at %d: %d bytes, %d left", path, off, n, len(raw)-off-16)
		}
		ts = append(ts, time.Duration(le.Uint32(raw[off:]))*time.Second+time.Duration(le.Uint32(raw[off+4:])))
		off += 16 + n
	}
	return ts
}

// TestStopWhileRunning: RunOptions.Stop, closed while the run runs (from
// another goroutine, at no particular event), ends it: Execute returns
// normally, the result is marked interrupted at the simulated time the
// run reached, and the capture is a complete pcap holding every frame
// h1's port sent or received until then.
func TestStopWhileRunning(t *testing.T) {
	sc, err := parse(t, longStream)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	stop := make(chan struct{})
	r, err := sc.Setup(RunOptions{PcapDir: dir, Stop: stop})
	if err != nil {
		t.Fatal(err)
	}
	r.Sim.At(20*element.Millisecond, func() { close(stop) })
	res, err := r.Execute()
	if err != nil {
		t.Fatal(err)
	}
	now := r.Sim.Now()
	if !res.Interrupted || res.SimulatedS != now.Seconds() || now < 20*element.Millisecond || now >= r.Sc.Duration {
		t.Fatalf("interrupted %v at %gs (clock %v), want interrupted between 20ms and 1000s", res.Interrupted, res.SimulatedS, now)
	}
	if res.DurationS != 1000 || res.Events != r.Sim.Events() {
		t.Errorf("duration %gs, %d events; want 1000s and the engine's %d", res.DurationS, res.Events, r.Sim.Events())
	}
	if f := res.Flows[0]; f.Done || f.Sent == 0 || f.Error != "" {
		t.Errorf("flow %+v, want unfinished, some sent", f)
	}
	ts := pcapRecords(t, filepath.Join(dir, "h1-1.pcap"))
	h1, _ := sc.Graph.Lookup("h1")
	st, _ := r.Sim.PortStats(h1, 1)
	if uint64(len(ts)) != st.TxFrames+st.RxFrames {
		t.Errorf("capture holds %d frames, h1's port sent %d and received %d", len(ts), st.TxFrames, st.RxFrames)
	}
	if last := ts[len(ts)-1]; last > time.Duration(now/element.Nanosecond) {
		t.Errorf("last record at %v, after the run stopped at %v", last, now)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["interrupted"] != true || m["simulated_s"] != now.Seconds() {
		t.Errorf("json interrupted %v simulated_s %v, want true and %g", m["interrupted"], m["simulated_s"], now.Seconds())
	}
}

// TestStopBeforeExecute: a Stop closed before the run (a Ctrl-C during
// setup) stops it before its first event: interrupted at 0s, no event,
// no flow started, the captures their headers alone.
func TestStopBeforeExecute(t *testing.T) {
	sc, err := parse(t, longStream)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	stop := make(chan struct{})
	close(stop)
	res, err := sc.Run(RunOptions{PcapDir: dir, Stop: stop})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.SimulatedS != 0 || res.Events != 0 {
		t.Errorf("interrupted %v at %gs after %d events, want interrupted at 0s after none", res.Interrupted, res.SimulatedS, res.Events)
	}
	if f := res.Flows[0]; f.Error != "not started" {
		t.Errorf("flow %+v, want not started", f)
	}
	if ts := pcapRecords(t, filepath.Join(dir, "h1-1.pcap")); len(ts) != 0 {
		t.Errorf("capture holds %d frames, want none", len(ts))
	}
}

// TestRunNotInterrupted: a run that reaches its duration is not marked
// interrupted, and has simulated all of it, though its Stop channel is
// given (and closed after Execute has returned, which stops nothing).
func TestRunNotInterrupted(t *testing.T) {
	sc, err := parse(t, "topology: line:1\nscheme: learn\nduration: 50ms\nworkloads:\n  - ping: {from: h1, to: h2, count: 3, interval: 1ms, at: 1ms}\n")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	res, err := sc.Run(RunOptions{Stop: stop})
	close(stop)
	if err != nil {
		t.Fatal(err)
	}
	if res.Interrupted || res.SimulatedS != 0.05 || !res.Flows[0].Done {
		t.Errorf("interrupted %v at %gs, flow done %v; want the whole 0.05s, done", res.Interrupted, res.SimulatedS, res.Flows[0].Done)
	}
}

// TestWriteTextInterrupted: an interrupted run's report says how far it
// got in its first line and on a line of its own.
func TestWriteTextInterrupted(t *testing.T) {
	res := &Result{Scenario: "x", Topology: "line:1", Scheme: "learn", Seed: 1, DurationS: 1000, Interrupted: true, SimulatedS: 12.5, Events: 7, TraceHash: "00000000000000ab"}
	var b strings.Builder
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `scenario x: learn on line:1, seed 1, 12.5s of 1000s simulated, 7 events
interrupted at simulated time 12.5s: the results are those of the run until then
  id  kind     src         dst         done       throughput     rtt p50     rtt p99     loss  note
aggregate: 0 flows, 0 completed, 0 failed, 0 unfinished; no data flow; no rtt samples; no ping or udp packets
trace_hash 00000000000000ab
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
