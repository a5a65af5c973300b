package scenario

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/topo"
)

// checkParsed is FuzzParse's oracle: an error is a bad-scenario error that
// names the file; a scenario that loads holds only what the resolver
// promises (names resolved, times inside the run, ports and probabilities
// in range), so that the run it sets up cannot trip over it.
func checkParsed(t *testing.T, sc *Scenario, err error) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, ErrScenario) || !strings.HasPrefix(err.Error(), "fuzz.yaml") {
			t.Fatalf("error without ErrScenario or file name: %v", err)
		}
		return
	}
	g := sc.Graph
	if g == nil || sc.Scheme == nil || sc.Duration <= 0 {
		t.Fatalf("loaded without graph, scheme or positive duration: %+v", sc)
	}
	node := func(n topo.NodeID) bool { return n >= 0 && int(n) < g.NumNodes() }
	host := func(n topo.NodeID) bool { return node(n) && g.Node(n).Kind == topo.Host }
	for i, l := range sc.Links {
		if l.Link < -1 || int(l.Link) >= g.NumLinks() || l.Rate < 0 || l.Delay < 0 ||
			l.Queue != 0 && (l.Queue < 64 || l.Queue > 1<<40) ||
			!(l.Fault.Loss >= 0 && l.Fault.Loss <= 1) || !(l.Fault.Corrupt >= 0 && l.Fault.Corrupt <= 1) {
			t.Fatalf("links[%d] out of range: %+v", i, l)
		}
	}
	for i, n := range sc.Timing {
		if !node(n.Node) || n.Timing.Latency < 0 || n.Timing.CutThrough < 0 {
			t.Fatalf("timing[%d] out of range: %+v", i, n)
		}
	}
	if c := sc.TCP; c.RecvWindow != 0 && (c.RecvWindow < 1024 || c.RecvWindow > 1<<30) || c.InitialCwnd < 0 || c.InitialCwnd > 1000 ||
		c.InitialRTO < 0 || c.MinRTO < 0 || c.MaxRTO < 0 || c.DelayedACKTimeout < 0 ||
		c.MinRTO > 0 && c.MaxRTO > 0 && c.MinRTO > c.MaxRTO || c.DelayedACKTimeout > 0 && !c.DelayedACK {
		t.Fatalf("tcp out of range: %+v", c)
	}
	flows := 0
	for i, w := range sc.Workloads {
		if w.At < 0 || w.At >= sc.Duration || w.Interval < 0 || w.Duration < 0 || w.Rate < 0 || w.Bytes < 0 || w.Count < 0 {
			t.Fatalf("workloads[%d] out of range: %+v", i, w)
		}
		if w.Kind == Shuffle {
			if len(w.Hosts) < 2 {
				t.Fatalf("workloads[%d]: shuffle of %d hosts", i, len(w.Hosts))
			}
			for _, h := range w.Hosts {
				if !host(h) {
					t.Fatalf("workloads[%d]: %d is not a host", i, h)
				}
			}
			flows += len(w.Hosts) * (len(w.Hosts) - 1)
			continue
		}
		if w.Kind < Ping || w.Kind > TCPRR || !host(w.Src) || !host(w.Dst) || w.Src == w.Dst {
			t.Fatalf("workloads[%d]: %v from %d to %d", i, w.Kind, w.Src, w.Dst)
		}
		flows++
	}
	if flows > MaxFlows {
		t.Fatalf("%d flows, limit %d", flows, MaxFlows)
	}
	for i, f := range sc.Failures {
		if f.At < 0 || f.At >= sc.Duration || f.Link < -1 || int(f.Link) >= g.NumLinks() || f.Link == -1 && !node(f.Node) || f.What == "" {
			t.Fatalf("failures[%d] out of range: %+v", i, f)
		}
	}
	for i, c := range sc.Captures {
		if !node(c.Node) || int(c.Port) > g.Node(c.Node).Ports {
			t.Fatalf("captures[%d] out of range: %+v", i, c)
		}
	}
}

// FuzzUnits fuzzes the unit parsers every scenario value goes through:
// an ErrBadUnit error or a value in range, and the value, written as a
// plain number in the base unit, reads back unchanged.
func FuzzUnits(f *testing.F) {
	for _, s := range []string{"2s", "100ms", "1.5us", "1.5µs", "500ns", "80ps", "1m", "1min", "1e9", "1Gbps", "10Gb/s",
		"1Gbit/s", "64kbps", "1GB/s", "1500", "64KiB", "10MB", "1GiB", "1.5KB", "-0", "+5", "1e", "1e-5ps", "1E3ms",
		"-1s", "1e400", "NaN", "Inf", ".", "0x10", "9223372036854775807ps"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		bad := func(what string, err error) {
			if !errors.Is(err, ErrBadUnit) {
				t.Fatalf("%s(%q): error without ErrBadUnit: %v", what, s, err)
			}
		}
		if v, err := ParseTime(s); err != nil {
			bad("ParseTime", err)
		} else if v < 0 || v > math.MaxInt64/2 {
			t.Fatalf("ParseTime(%q) = %d, out of range", s, v)
		} else if v < 1<<53 {
			// below 2^53 picoseconds a float64 holds the count exactly
			if back, err := ParseTime(strconv.FormatInt(int64(v), 10) + "ps"); err != nil || back != v {
				t.Fatalf("ParseTime(%q) = %d, read back %d, %v", s, v, back, err)
			}
		}
		if r, err := ParseRate(s); err != nil {
			bad("ParseRate", err)
		} else if r < 1 || r > 1e15 {
			t.Fatalf("ParseRate(%q) = %d, out of range", s, r)
		} else if back, err := ParseRate(strconv.FormatInt(r, 10)); err != nil || back != r {
			t.Fatalf("ParseRate(%q) = %d, read back %d, %v", s, r, back, err)
		}
		if n, err := ParseSize(s); err != nil {
			bad("ParseSize", err)
		} else if n < 0 || n > 1<<50 {
			t.Fatalf("ParseSize(%q) = %d, out of range", s, n)
		} else if back, err := ParseSize(strconv.FormatInt(n, 10)); err != nil || back != n {
			t.Fatalf("ParseSize(%q) = %d, read back %d, %v", s, n, back, err)
		}
	})
}
