package scenario

import (
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/host"
)

// TestTCPSection: tcp: sets every host's TCP, each value resolved with
// its unit; bad values name their line and field.
func TestTCPSection(t *testing.T) {
	const head = "topology: line:3\nscheme: learn\nduration: 1s\n"
	sc, err := parse(t, head+"tcp:\n  recv_window: 64KiB\n  initial_cwnd: 4\n  initial_rto: 3s\n  min_rto: 1s\n  max_rto: 2m\n  delayed_ack: true\n  delayed_ack_timeout: 200ms\n")
	if err != nil {
		t.Fatal(err)
	}
	want := host.TCPConfig{RecvWindow: 64 << 10, InitialCwnd: 4, InitialRTO: 3 * element.Second, MinRTO: element.Second,
		MaxRTO: 120 * element.Second, DelayedACK: true, DelayedACKTimeout: 200 * element.Millisecond}
	if sc.TCP != want {
		t.Errorf("tcp:\n got  %+v\n want %+v", sc.TCP, want)
	}
	if sc, err := parse(t, head); err != nil || sc.TCP != (host.TCPConfig{}) {
		t.Errorf("no tcp: section: %+v, %v; want the zero config (host defaults)", sc.TCP, err)
	}

	for _, c := range []struct{ name, yaml, want string }{
		{"window too small", "tcp: {recv_window: 100}\n", `test.yaml:4: tcp.recv_window: bad scenario: "100" must be between 1024 and 1073741824 bytes`},
		{"window too big", "tcp: {recv_window: 2GiB}\n", `test.yaml:4: tcp.recv_window: bad scenario: "2GiB" must be between 1024 and 1073741824 bytes`},
		{"cwnd zero", "tcp: {initial_cwnd: 0}\n", `test.yaml:4: tcp.initial_cwnd: bad scenario: "0" is not an integer in [1, 1000]`},
		{"cwnd word", "tcp: {initial_cwnd: ten}\n", `test.yaml:4: tcp.initial_cwnd: bad scenario: "ten" is not an integer in [1, 1000]`},
		{"rto below 1ms", "tcp:\n  min_rto: 10us\n", `test.yaml:5: tcp.min_rto: bad scenario: "10us" must be between 1ms and 600s`},
		{"rto unit", "tcp:\n  initial_rto: 1 fortnight\n", `test.yaml:5: tcp.initial_rto: bad scenario: bad value: "1 fortnight": unknown time unit`},
		{"rto order", "tcp:\n  min_rto: 2s\n  max_rto: 1s\n", `test.yaml:6: tcp.max_rto: bad scenario: 1s is below min_rto 2s`},
		// against a default: the host raised max_rto to min_rto silently
		{"max below default min", "tcp: {max_rto: 50ms}\n", `test.yaml:4: tcp.max_rto: bad scenario: 50ms is below min_rto's default 200ms: give min_rto too`},
		{"min above default max", "tcp: {min_rto: 90s}\n", `test.yaml:4: tcp.min_rto: bad scenario: 90s is above max_rto's default 60s: give max_rto too`},
		{"delayed ack word", "tcp: {delayed_ack: maybe}\n", `test.yaml:4: tcp.delayed_ack: bad scenario: "maybe": want true or false`},
		{"timeout alone", "tcp: {delayed_ack_timeout: 10ms}\n", `test.yaml:4: tcp.delayed_ack_timeout: bad scenario: set without delayed_ack: true, it would change nothing`},
		{"unknown field", "tcp: {rwnd: 1MB}\n", `test.yaml:4: bad scenario: field rwnd not found`},
		{"not a mapping", "tcp: fast\n", `test.yaml:4: bad scenario: cannot unmarshal`},
	} {
		_, err := parse(t, head+c.yaml)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v\n want %s", c.name, err, c.want)
		}
	}
}

// TestTCPRecvWindowLimitsThroughput: with a 64 KiB receive window over a
// path of 4 ms round trip, a transfer runs at most window / RTT (131 Mb/s,
// a tenth of the link) and close to it; with the default 1 MiB window the
// link limits it. So the section reaches the hosts' TCP.
func TestTCPRecvWindowLimitsThroughput(t *testing.T) {
	const y = "topology: line:1\nscheme: learn\nduration: 5s\nlinks: {rate: 1Gbps, delay: 1ms}\nworkloads:\n  - tcp: {from: h1, to: h2, bytes: 10MB}\n"
	throughput := func(extra string) float64 {
		t.Helper()
		_, res := sweepRun(t, y+extra, RunOptions{})
		f := res.Flows[0]
		if !f.Done || f.Error != "" {
			t.Fatalf("tcp flow (%q): done %v, error %q", extra, f.Done, f.Error)
		}
		return f.ThroughputBps
	}
	bound := float64(64<<10) * 8 / 0.004
	small, big := throughput("tcp: {recv_window: 64KiB}\n"), throughput("")
	t.Logf("64 KiB window %.1f Mb/s (window/RTT %.1f), default window %.1f Mb/s", small/1e6, bound/1e6, big/1e6)
	if small > bound || small < 0.8*bound {
		t.Errorf("64 KiB window: %.1f Mb/s, want at most and close to window/RTT %.1f Mb/s", small/1e6, bound/1e6)
	}
	if big < 4*small {
		t.Errorf("default window: %.1f Mb/s, not far above the 64 KiB window's %.1f Mb/s", big/1e6, small/1e6)
	}
}
