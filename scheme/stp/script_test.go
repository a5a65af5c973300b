package stp

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// TestScripts runs the scenario scripts in testdata/scripts over the test
// engine (fakenet_test.go). Each directive's output is checked in;
// regenerate with go test -run TestScripts -rewrite after reading the
// diff. Directives:
//
//	topo spec=ring:3 [param=value ...]   build the fabric (scheme params)
//	run for=30s | until=70.5s            advance; prints port state and root changes
//	link a=s1 b=s3 up|down               fail or repair a link
//	states                               every bridge port as role/state
//	status node=s3                       root, root port, cost, timers, TC flags
//	tree                                 CheckTree's verdict
//	send from=h1 to=h3|bcast tag=x       a frame from a host
//	recv tag=x                           frames each host got with that tag
//	counters node=s1                     the bridge's counters
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata/scripts", func(t *testing.T, path string) {
		var n *fakeNet
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			arg := func(k string) string {
				a, ok := d.Arg(k)
				if !ok {
					d.Fatalf(t, "%s needs %s=", d.Cmd, k)
				}
				return a.SingleVal(t)
			}
			if d.Cmd != "topo" && n == nil {
				d.Fatalf(t, "topo first")
			}
			switch d.Cmd {
			case "topo":
				params := map[string]string{}
				for _, a := range d.CmdArgs {
					if a.Key != "spec" {
						params[a.Key] = a.SingleVal(t)
					}
				}
				g, err := topo.Parse(arg("spec"), 1)
				if err != nil {
					return err.Error()
				}
				if _, err := NewFabric(g, params); err != nil {
					return err.Error()
				}
				n = newFakeNet(t, g, params)
				n.logging = true
				var sb strings.Builder
				for _, ns := range n.fab.Statuses() {
					fmt.Fprintf(&sb, "%s %v\n", ns.Node, ns.Bridge)
				}
				return sb.String()
			case "run":
				n.events = n.events[:0]
				switch {
				case d.HasArg("for"):
					n.run(parseDur(t, d, arg("for")))
				case d.HasArg("until"):
					n.runUntil(parseDur(t, d, arg("until")))
				default:
					d.Fatalf(t, "run needs for= or until=")
				}
				out := strings.Join(n.events, "\n")
				n.events = n.events[:0]
				if out == "" {
					return "(no change)"
				}
				return out
			case "link":
				up := d.HasArg("up")
				if !up && !d.HasArg("down") {
					d.Fatalf(t, "link needs up or down")
				}
				n.events = n.events[:0]
				n.setLink(arg("a"), arg("b"), up)
				out := strings.Join(n.events, "\n")
				n.events = n.events[:0]
				return out
			case "states":
				return strings.ReplaceAll(portStates(n), " s", "\ns")
			case "status":
				st := n.bridge(arg("node")).Status()
				return fmt.Sprintf("root %v port %d cost %d\nmax_age %v hello %v forward_delay %v\ntc %v tc_detected %v",
					st.Root, st.RootPort, st.RootPathCost, st.MaxAge, st.HelloTime, st.ForwardDelay, st.TopologyChange, st.TopologyChangeDetected)
			case "tree":
				if err := n.fab.CheckTree(); err != nil {
					return err.Error()
				}
				return "ok"
			case "send":
				to := arg("to")
				dst := [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
				if to != "bcast" {
					dst = n.hostMAC(to)
				}
				n.sendFrom(arg("from"), dst, arg("tag"))
				return ""
			case "recv":
				var out []string
				for _, nd := range n.nodes {
					if nd.st != nil {
						if c := n.received(n.g.Node(nd.id).Name, arg("tag")); c > 0 {
							out = append(out, fmt.Sprintf("%s %d", n.g.Node(nd.id).Name, c))
						}
					}
				}
				if len(out) == 0 {
					return "(none)"
				}
				return strings.Join(out, "\n")
			case "counters":
				c := n.bridge(arg("node")).Counters()
				keys := make([]string, 0, len(c))
				for k := range c {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				var sb strings.Builder
				for _, k := range keys {
					fmt.Fprintf(&sb, "%s %d\n", k, c[k])
				}
				return sb.String()
			}
			d.Fatalf(t, "unknown directive %q", d.Cmd)
			return ""
		})
	})
}

func parseDur(t *testing.T, d *datadriven.TestData, s string) element.Time {
	v, err := parseDuration(s)
	if err != nil {
		d.Fatalf(t, "%s: %v", s, err)
	}
	return v
}
