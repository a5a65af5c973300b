package sim

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// TestScripts runs the engine from the text scripts in testdata/script
// (etcd-io/raft's interaction tests): each command's output is checked in;
// regenerate with go test ./sim -run TestScripts -rewrite.
//
//	topology line:3                       build, place a hub on every switch and a recorder on every host
//	timing s1 ct=6 latency=300ns          per-node timing
//	queue s1 s2 bytes=3000                output-queue limit of a link
//	fault h1 s1 loss=0.5 corrupt=1        link fault
//	send h1 size=1514 tag=7 count=2       frames from a node (port=1 by default), now
//	run 20us | run                        advance (or run until idle); prints what was delivered
//	link s1 s2 down | node s2 up          failures and repairs, now
//	stats h1 s1                           port counters
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata/script", func(t *testing.T, path string) {
		var sc *script
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "topology" && sc == nil {
				d.Fatalf(t, "topology first")
			}
			out, err := sc.do(t, d)
			if d.Cmd == "topology" && err == nil {
				sc = out.(*script)
				return sc.flush()
			}
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return out.(string)
		})
	})
}

type script struct {
	s   *Sim
	g   *topo.Graph
	log strings.Builder
	els []*scriptEl
}

// scriptEl floods on switches and records on hosts, logging everything.
type scriptEl struct {
	sc    *script
	name  string
	env   element.Env
	ports int
	hub   bool
	ct    int
}

func (e *scriptEl) Attach(env element.Env, ports []element.PortInfo) {
	e.env, e.ports = env, len(ports)
}
func (e *scriptEl) CutThrough() int { return e.ct }
func (e *scriptEl) Receive(p element.Port, f []byte) {
	tag := -1
	if len(f) > 0 {
		tag = int(f[0])
	}
	fmt.Fprintf(&e.sc.log, "%v %s:%d rx tag=%d len=%d\n", e.env.Now(), e.name, p, tag, len(f))
	if !e.hub {
		return
	}
	for q := 1; q <= e.ports; q++ {
		if element.Port(q) != p {
			e.env.Send(element.Port(q), append([]byte(nil), f...))
		}
	}
}
func (e *scriptEl) LinkChange(p element.Port, up bool) {
	fmt.Fprintf(&e.sc.log, "%v %s:%d link %s\n", e.env.Now(), e.name, p, map[bool]string{true: "up", false: "down"}[up])
}

func (sc *script) flush() string {
	out := sc.log.String()
	sc.log.Reset()
	if out == "" {
		return "ok\n"
	}
	return out
}

// positional returns the arguments given without a value, in order.
func positional(d *datadriven.TestData) []string {
	var p []string
	for _, a := range d.CmdArgs {
		if len(a.Vals) == 0 {
			p = append(p, a.Key)
		}
	}
	return p
}

func argStr(d *datadriven.TestData, key, def string) string {
	if a, ok := d.Arg(key); ok && len(a.Vals) > 0 {
		return a.Vals[0]
	}
	return def
}

func (sc *script) node(name string) (topo.NodeID, error) {
	n, ok := sc.g.Lookup(name)
	if !ok {
		return 0, fmt.Errorf("unknown node %q", name)
	}
	return n, nil
}

func (sc *script) link(a, b string) (topo.LinkID, error) {
	na, err := sc.node(a)
	if err != nil {
		return 0, err
	}
	nb, err := sc.node(b)
	if err != nil {
		return 0, err
	}
	for _, l := range sc.g.Ports(na) {
		if l != topo.NoLink && sc.g.Link(l).Other(na).Node == nb {
			return l, nil
		}
	}
	return 0, fmt.Errorf("no link %s-%s", a, b)
}

func parseDur(s string) (element.Time, error) {
	for _, u := range []struct {
		suf string
		m   element.Time
	}{{"ps", 1}, {"ns", element.Nanosecond}, {"us", element.Microsecond}, {"ms", element.Millisecond}, {"s", element.Second}} {
		if v, ok := strings.CutSuffix(s, u.suf); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			return element.Time(f * float64(u.m)), nil
		}
	}
	return 0, fmt.Errorf("bad duration %q", s)
}

func (sc *script) do(t *testing.T, d *datadriven.TestData) (any, error) {
	pos := positional(d)
	switch d.Cmd {
	case "topology":
		g, err := topo.Parse(pos[0], 1)
		if err != nil {
			return nil, err
		}
		s, err := New(g, Options{Seed: 1})
		if err != nil {
			return nil, err
		}
		nsc := &script{s: s, g: g}
		for i := range g.NumNodes() {
			n := g.Node(topo.NodeID(i))
			e := &scriptEl{sc: nsc, name: n.Name, hub: n.Kind == topo.Switch}
			nsc.els = append(nsc.els, e)
			if err := s.Place(topo.NodeID(i), e); err != nil {
				return nil, err
			}
		}
		s.Run(0)
		return nsc, nil
	case "timing":
		n, err := sc.node(pos[0])
		if err != nil {
			return nil, err
		}
		ct, _ := strconv.Atoi(argStr(d, "ct", "0"))
		lat, err := parseDur(argStr(d, "latency", "0ns"))
		if err != nil {
			return nil, err
		}
		// The engine fixes timing at start; scripts set it through the
		// element's CutThrough and the node's timing directly.
		sc.els[n].ct = ct
		sc.s.nodes[n].timing = Timing{Latency: lat, CutThrough: ct}
		return "ok\n", nil
	case "queue", "fault", "link":
		l, err := sc.link(pos[0], pos[1])
		if err != nil {
			return nil, err
		}
		switch d.Cmd {
		case "queue":
			b, _ := strconv.Atoi(argStr(d, "bytes", "0"))
			err = sc.s.SetQueue(l, b)
		case "fault":
			loss, _ := strconv.ParseFloat(argStr(d, "loss", "0"), 64)
			cor, _ := strconv.ParseFloat(argStr(d, "corrupt", "0"), 64)
			err = sc.s.SetFault(l, Fault{Loss: loss, Corrupt: cor})
		case "link":
			err = sc.s.SetLink(l, pos[2] == "up")
		}
		if err != nil {
			return nil, err
		}
		return sc.flush(), nil
	case "node":
		n, err := sc.node(pos[0])
		if err != nil {
			return nil, err
		}
		if err := sc.s.SetNode(n, pos[1] == "up"); err != nil {
			return nil, err
		}
		return sc.flush(), nil
	case "send":
		n, err := sc.node(pos[0])
		if err != nil {
			return nil, err
		}
		size, _ := strconv.Atoi(argStr(d, "size", "60"))
		tag, _ := strconv.Atoi(argStr(d, "tag", "0"))
		count, _ := strconv.Atoi(argStr(d, "count", "1"))
		port, _ := strconv.Atoi(argStr(d, "port", "1"))
		for range count {
			sc.els[n].env.Send(element.Port(port), frameOf(size, byte(tag)))
		}
		return "ok\n", nil
	case "run":
		if len(pos) == 0 {
			sc.s.RunAll()
		} else {
			dt, err := parseDur(pos[0])
			if err != nil {
				return nil, err
			}
			sc.s.Run(sc.s.Now() + dt)
		}
		return sc.flush() + fmt.Sprintf("now %v\n", sc.s.Now()), nil
	case "stats":
		var b strings.Builder
		for _, name := range pos {
			n, err := sc.node(name)
			if err != nil {
				return nil, err
			}
			for p := 1; p <= sc.g.Node(n).Ports; p++ {
				st, _ := sc.s.PortStats(n, element.Port(p))
				fmt.Fprintf(&b, "%s:%d tx=%d/%dB rx=%d/%dB maxq=%d drops=%v\n", name, p, st.TxFrames, st.TxBytes, st.RxFrames, st.RxBytes, st.MaxQueue, st.DropMap())
			}
		}
		return b.String(), nil
	}
	d.Fatalf(t, "unknown command %q", d.Cmd)
	return nil, nil
}
