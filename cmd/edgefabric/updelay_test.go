package main

import (
	"strings"
	"testing"
)

// TestUpDumbNetProbeTimeoutFollowsDelay: with --delay, DumbNet's discovery
// round (50 ms by default) is given the probes' longest round trip twice
// over, unless probetimeout is given: at 30 ms a link the fabric was never
// ready ("element on h1 reports not ready").
func TestUpDumbNetProbeTimeoutFollowsDelay(t *testing.T) {
	for _, c := range []struct {
		topo, scheme, delay string
		params              []string
		want                string
	}{
		// line:1: one switch, 2 host links a probe's way: 50ms + 2 x 2 x 2 x 30ms
		{"line:1", "dumbnet", "30ms", nil, "290ms"},
		// fattree:4: diameter 4, so 6 links a way: 50ms + 2 x 2 x 6 x 5ms
		{"fattree:4", "dumbnet", "5ms", nil, "170ms"},
		{"line:1", "dumbnet", "30ms", []string{"probetimeout=1s"}, "1s"},
		{"line:1", "dumbnet", "", nil, ""},
		{"line:1", "stp", "30ms", nil, ""},
	} {
		f := upFlags{scheme: c.scheme, name: "x", delay: c.delay, params: c.params}
		_, o, err := upOptions(c.topo, f)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if got := o.Scheme.Params["probetimeout"]; got != c.want {
			t.Errorf("%s %s --delay %q %v: probetimeout %q, want %q", c.topo, c.scheme, c.delay, c.params, got, c.want)
		}
	}
	// For real: ready, and a ping takes the delay's round trip.
	bin, name := rootLab(t, "dd")
	labCleanup(t, name)
	if code, out, errOut := labBin(t, bin, false, "", "up", "line:1", "--scheme", "dumbnet", "--delay", "30ms", "--name", name); code != 0 {
		t.Fatalf("up --delay 30ms: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ := labBin(t, bin, false, "", "exec", name, "h1", "--", "ping", "-c", "1", "10.0.0.2")
	if code != 0 || !strings.Contains(out, "1 received") {
		t.Errorf("ping over 30 ms links: exit %d\n%s", code, out)
	}
}

// TestUpDumbNetRefusesIPv6: --ipv6 with dumbnet is bad input (its agents
// drop IPv6 neighbour discovery: pings went unanswered, the lab "up").
func TestUpDumbNetRefusesIPv6(t *testing.T) {
	code, out, errOut := topoCLI("up", "line:1", "--scheme", "dumbnet", "--ipv6", "--name", "x")
	want := "edgefabric: --ipv6: dumbnet's host agents carry IPv4 only (they answer ARP; IPv6 neighbour discovery is multicast, which they drop): use stp or kernel-bridge for IPv6\n"
	if code != 2 || out != "" || errOut != want {
		t.Errorf("exit %d, stdout %q, stderr\n got  %q\n want %q", code, out, errOut, want)
	}
}
