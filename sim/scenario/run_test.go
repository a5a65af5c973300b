package scenario

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/host"
)

func run(t *testing.T, y string, opt RunOptions) *Result {
	t.Helper()
	sc, err := parse(t, y)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sc.Run(opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Ping over one switch: every RTT is exactly four times a 98-byte frame's
// hop, (98+4+8) bytes at 1 Gb/s = 880 ns plus 1 us of propagation; the
// first also waits for ARP, a request and a reply padded to 60 bytes,
// (60+4+8) bytes = 576 ns plus 1 us per hop, four hops.
func TestPingExactRTT(t *testing.T) {
	res := run(t, `
topology: line:1
scheme: learn
duration: 1s
workloads:
  - ping: {from: h1, to: h2, count: 3, interval: 10ms, at: 10ms}
`, RunOptions{})
	f := res.Flows[0]
	d := f.Detail.(host.PingResult)
	if !f.Done || d.Received != 3 || *f.Loss != 0 {
		t.Fatalf("ping %+v", f)
	}
	want := 4 * (880*element.Nanosecond + element.Microsecond)
	wantARP := 4 * (576*element.Nanosecond + element.Microsecond)
	for i, rtt := range d.RTTs {
		if w := want + map[bool]element.Time{true: wantARP}[i == 0]; rtt != w {
			t.Errorf("RTT %d = %v, want %v", i, rtt, w)
		}
	}
	if res.Aggregate.RTT.Count != 3 || res.Aggregate.Loss != 0 || res.Aggregate.Completed != 1 {
		t.Errorf("aggregate %+v", res.Aggregate)
	}
}

// One TCP flow on a 1 Gb/s path reaches at least 90 % of line rate in
// goodput (payload bits over completion time, virtual time).
func TestTCPLineRate(t *testing.T) {
	res := run(t, `
topology: line:1
scheme: learn
duration: 2s
workloads:
  - tcp: {from: h1, to: h2, bytes: 10MB}
`, RunOptions{})
	f := res.Flows[0]
	if !f.Done || f.Error != "" {
		t.Fatalf("tcp flow %+v", f)
	}
	if f.ThroughputBps < 0.9e9 {
		t.Errorf("goodput %.4g b/s, below 90%% of 1 Gb/s", f.ThroughputBps)
	}
	t.Logf("goodput %.4g b/s", f.ThroughputBps)
}

func TestAllWorkloadsAndFailure(t *testing.T) {
	y := `
topology: line:3
scheme: learn
duration: 3s
workloads:
  - ping: {from: all, to: all, count: 2, interval: 10ms, at: 10ms}
  - tcp: {from: h1, to: h6, bytes: 2MB, at: 200ms}
  - udp: {from: h2, to: h5, rate: 100Mbps, size: 1000, duration: 100ms, at: 200ms}
  - tcp_rr: {from: h3, to: h4, request: 100, response: 200, count: 50, at: 200ms}
  - shuffle: {hosts: [h1, h3, h5], bytes: 100KB, at: 500ms}
  - ping: {from: h1, to: h6, count: 5, interval: 100ms, at: 1s}
failures:
  - {at: 1.15s, link: [s2, s3], down}
  - {at: 1.25s, link: [s2, s3], up}
`
	dir := t.TempDir()
	res := run(t, y, RunOptions{PcapDir: dir})
	if len(res.Flows) != 35 {
		t.Fatalf("%d flows", len(res.Flows))
	}
	for _, f := range res.Flows[:30] {
		if !f.Done || *f.Loss != 0 {
			t.Errorf("all-pairs ping %s->%s: %+v", f.Src, f.Dst, f)
		}
	}
	for _, f := range res.Flows[30:34] {
		if !f.Done || f.Error != "" {
			t.Errorf("flow %d %s: done %v error %q", f.ID, f.Kind, f.Done, f.Error)
		}
	}
	// The last ping sends at 1.0, 1.1, 1.2, 1.3, 1.4 s; the link is down
	// from 1.15 to 1.25 s, so exactly the third is lost.
	last := res.Flows[34]
	d := last.Detail.(host.PingResult)
	if d.Sent != 5 || d.Received != 4 {
		t.Errorf("ping across the failure: sent %d received %d, want 5/4", d.Sent, d.Received)
	}
	if len(res.Failures) != 2 || res.Failures[0].State != "down" || res.Failures[1].AtS != 1.25 {
		t.Errorf("failures %+v", res.Failures)
	}
	udp := res.Flows[31].Detail.(host.UDPResult)
	if udp.Sent != 1250 || udp.Received != 1250 {
		t.Errorf("udp sent %d received %d, want 1250 each (100 Mb/s of 1000-byte payloads for 100 ms)", udp.Sent, udp.Received)
	}
	rr := res.Flows[32].Detail.(host.RRResult)
	if rr.Transactions != 50 || rr.RTT.Count != 50 {
		t.Errorf("rr %+v", rr)
	}
	sh := res.Flows[33].Detail.(host.ShuffleResult)
	if !sh.CompletedAllHosts || sh.Failed != 0 {
		t.Errorf("shuffle %+v", sh)
	}
	if len(res.Captures) != 6 {
		t.Errorf("captures %v", res.Captures)
	}
	for _, c := range res.Captures {
		st, err := os.Stat(c)
		if err != nil || st.Size() <= 24 {
			t.Errorf("capture %s: %v", c, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "h1-1.pcap")); err != nil {
		t.Error(err)
	}
	if res.Elements["s1"]["frames"] == 0 || res.Elements["h1"] == nil {
		t.Errorf("element counters %v", res.Elements)
	}
	var text strings.Builder
	if err := res.WriteText(&text); err != nil || !strings.Contains(text.String(), "trace_hash "+res.TraceHash) {
		t.Errorf("text output:\n%s", text.String())
	}
	// No line ends in blanks (a flow without a note left the note
	// column's separator behind).
	for i, l := range strings.Split(text.String(), "\n") {
		if strings.TrimRight(l, " ") != l {
			t.Errorf("text line %d ends in blanks: %q", i+1, l)
		}
	}
	if _, err := json.Marshal(res); err != nil {
		t.Error(err)
	}

	// The same scenario, same seed: the same trace, bit for bit.
	again := run(t, y, RunOptions{})
	if again.TraceHash != res.TraceHash || again.Events != res.Events {
		t.Errorf("rerun: hash %s events %d, first %s %d", again.TraceHash, again.Events, res.TraceHash, res.Events)
	}
}

func TestCapturesListed(t *testing.T) {
	dir := t.TempDir()
	res := run(t, `
topology: line:2
scheme: learn
duration: 100ms
captures:
  - {node: s1}
  - {node: h4, port: 1}
workloads:
  - ping: {from: h1, to: h4, count: 1}
`, RunOptions{PcapDir: dir})
	// s1 has 3 connected ports (2 hosts, s2), plus h4's NIC.
	if len(res.Captures) != 4 || filepath.Base(res.Captures[3]) != "h4-1.pcap" {
		t.Errorf("captures %v", res.Captures)
	}
	// An unwritable capture directory is an error, not a silent loss.
	f := filepath.Join(dir, "file")
	os.WriteFile(f, nil, 0o644)
	sc, _ := parse(t, "topology: line:1\nscheme: learn\nduration: 1s\n")
	if _, err := sc.Run(RunOptions{PcapDir: filepath.Join(f, "sub")}); err == nil {
		t.Error("capture into a file's subdirectory succeeded")
	}
}

// The capture files are valid pcap that a standard reader decodes: the
// ping's ICMP echo requests and replies are in h1's capture, with their
// checksums right and time stamps in virtual time.
func TestCaptureDecodes(t *testing.T) {
	dir := t.TempDir()
	run(t, `
topology: line:1
scheme: learn
duration: 1s
workloads:
  - ping: {from: h1, to: h2, count: 3, interval: 100ms, at: 10ms}
`, RunOptions{PcapDir: dir})
	raw, err := os.ReadFile(filepath.Join(dir, "h1-1.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	// Classic pcap, nanosecond magic, Ethernet link type.
	le := binary.LittleEndian
	if len(raw) < 24 || le.Uint32(raw) != 0xa1b23c4d || le.Uint32(raw[20:]) != 1 {
		t.Fatalf("not a nanosecond Ethernet pcap: % x", raw[:min(len(raw), 24)])
	}
	var echo, reply int
	var last time.Time
	for off := 24; off < len(raw); {
		if off+16 > len(raw) {
			t.Fatalf("truncated record header at %d", off)
		}
		ts := time.Unix(int64(le.Uint32(raw[off:])), int64(le.Uint32(raw[off+4:])))
		n := int(le.Uint32(raw[off+8:]))
		if off+16+n > len(raw) || n != int(le.Uint32(raw[off+12:])) {
			t.Fatalf("bad record at %d", off)
		}
		data := raw[off+16 : off+16+n]
		off += 16 + n
		ci := struct{ Timestamp time.Time }{ts}
		p := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.Default)
		if el := p.ErrorLayer(); el != nil {
			t.Fatalf("undecodable frame: %v", el.Error())
		}
		if ic, ok := p.Layer(layers.LayerTypeICMPv4).(*layers.ICMPv4); ok {
			switch ic.TypeCode.Type() {
			case layers.ICMPv4TypeEchoRequest:
				echo++
			case layers.ICMPv4TypeEchoReply:
				reply++
			}
		}
		if ci.Timestamp.Before(last) && echo+reply > 0 {
			t.Errorf("timestamps go back: %v after %v", ci.Timestamp, last)
		}
		last = ci.Timestamp
	}
	if echo != 3 || reply != 3 {
		t.Fatalf("capture has %d echo requests and %d replies, want 3 and 3", echo, reply)
	}
	// Virtual time since the Unix epoch: the last reply arrives shortly
	// after 210 ms.
	if last.UnixNano() < 210_000_000 || last.UnixNano() > 211_000_000 {
		t.Errorf("last record at %v, want just after 210 ms", last.UnixNano())
	}
}

// TestCaptureNamedTwice: a port listed twice (as a whole node and by
// port) gets one capture file, which decodes: two writers on one file
// used to write two headers over each other.
func TestCaptureNamedTwice(t *testing.T) {
	dir := t.TempDir()
	res := run(t, `
topology: line:1
scheme: learn
duration: 1s
captures:
  - {node: h1}
  - {node: h1, port: 1}
workloads:
  - ping: {from: h1, to: h2, count: 3, interval: 100ms, at: 10ms}
`, RunOptions{PcapDir: dir})
	if len(res.Captures) != 1 {
		t.Fatalf("captures %v", res.Captures)
	}
	raw, err := os.ReadFile(res.Captures[0])
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	records := 0
	for off := 24; off < len(raw); records++ {
		if off+16 > len(raw) {
			t.Fatalf("truncated record header at %d", off)
		}
		n := int(le.Uint32(raw[off+8:]))
		if off+16+n > len(raw) || n != int(le.Uint32(raw[off+12:])) || n > 1514 {
			t.Fatalf("bad record at %d", off)
		}
		off += 16 + n
	}
	if len(raw) < 24 || le.Uint32(raw) != 0xa1b23c4d || records < 6 {
		t.Fatalf("%d bytes, %d records", len(raw), records)
	}
}

// TestElementCountersAgent: on a host with an agent, the agent's and the
// stack's counters stay apart (the stack's under "stack."): a name both
// use used to be summed.
func TestElementCountersAgent(t *testing.T) {
	res := run(t, `
topology: line:1
scheme: agent
duration: 1s
workloads:
  - ping: {from: h1, to: h2, count: 3, interval: 100ms, at: 10ms}
`, RunOptions{})
	h1 := res.Elements["h1"]
	if res.Flows[0].Received != 3 || h1["rx_frames"] == 0 || h1["stack.rx_frames"] == 0 {
		t.Fatalf("flow %+v, h1 counters %v", res.Flows[0], h1)
	}
	// The agent sees every frame both ways; the stack only those it receives.
	if h1["rx_frames"] <= h1["stack.rx_frames"] {
		t.Errorf("agent rx_frames %d, stack rx_frames %d", h1["rx_frames"], h1["stack.rx_frames"])
	}
}

// TestCaptureDefaultEveryNIC: without a captures list every NIC of every
// host is captured, the second NIC of a BCube server too (only port 1
// was, though the docs said every NIC).
func TestCaptureDefaultEveryNIC(t *testing.T) {
	dir := t.TempDir()
	res := run(t, "topology: bcube:2,2\nscheme: learn\nduration: 10ms\n", RunOptions{PcapDir: dir})
	want := map[string]bool{}
	for _, h := range []string{"h1", "h2", "h3", "h4"} {
		for _, p := range []string{"1", "2"} {
			want[h+"-"+p+".pcap"] = true
		}
	}
	got := map[string]bool{}
	for _, c := range res.Captures {
		got[filepath.Base(c)] = true
	}
	for w := range want {
		if !got[w] {
			t.Errorf("no %s among %v", w, res.Captures)
		}
	}
}

// TestStackDropsReported: a host with an agent fails while it pings; the
// echo requests its stack sends meanwhile are dropped (node_down) on the
// stack's own port, which the result did not report: ping counted them
// lost and the engine's drops said nothing.
func TestStackDropsReported(t *testing.T) {
	res := run(t, `
topology: line:1
scheme: agent
duration: 1s
workloads:
  - ping: {from: h1, to: h2, count: 10, interval: 50ms, at: 10ms}
failures:
  - {at: 100ms, node: h1, down}
  - {at: 300ms, node: h1, up}
`, RunOptions{})
	f := res.Flows[0]
	lost := f.Sent - f.Received
	if lost < 3 {
		t.Fatalf("flow %+v: the failure should have cost several probes", f)
	}
	if res.Drops["node_down"] < uint64(lost) {
		t.Errorf("ping lost %d, engine drops %v", lost, res.Drops)
	}
	found := false
	for _, p := range res.Ports {
		if p.Node == "h1/stack" && p.Port == 1 && p.Drops["node_down"] > 0 {
			found = true
		}
	}
	if !found {
		t.Errorf("no h1/stack port among %+v", res.Ports)
	}
}

// TestTimingEntriesMerge: timing entries change only the fields they
// name, as link: entries do. A latency-only entry after a cut-through one
// used to reset the node to store-and-forward. With s1 cut-through
// (6 bytes) each of the two switch hops of an echo and its reply saves
// (98 + 4 - 6) bytes = 768 ns over TestPingExactRTT's 4 x (880 ns + 1 us),
// and the latency adds 300 ns per hop.
func TestTimingEntriesMerge(t *testing.T) {
	res := run(t, `
topology: line:1
scheme: learn
duration: 1s
timing:
  - {nodes: all, cut_through: 6}
  - {nodes: [s1], latency: 300ns}
workloads:
  - ping: {from: h1, to: h2, count: 3, interval: 10ms, at: 10ms}
`, RunOptions{})
	d := res.Flows[0].Detail.(host.PingResult)
	if d.Received != 3 {
		t.Fatalf("ping %+v", d)
	}
	want := 4*(880*element.Nanosecond+element.Microsecond) - 2*768*element.Nanosecond + 2*300*element.Nanosecond
	for i, rtt := range d.RTTs[1:] {
		if rtt != want {
			t.Errorf("RTT %d = %v, want %v (cut-through kept, latency added)", i+1, rtt, want)
		}
	}
}
