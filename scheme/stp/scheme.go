package stp

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/paths"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/topo"
)

// Name is the scheme's registry name.
const Name = "stp"

// ErrParam is wrapped by every error about a scheme parameter.
var ErrParam = errors.New("bad parameter")

// Register adds the stp scheme to r.
func Register(r *scheme.Registry) error {
	return r.Register(scheme.Scheme{
		Name:    Name,
		Summary: "baseline: learning bridges on one IEEE 802.1D spanning tree (STP, or RSTP with protocol=rstp)",
		New: func(g *topo.Graph, opts scheme.Options) (scheme.Fabric, error) {
			return NewFabric(g, opts.Params)
		},
	})
}

// Params are the scheme's settings, as key=value strings. Durations take a
// Go duration ("2s", "500ms") or a number of seconds ("2", "1.5").
var Params = []struct{ Key, Help string }{
	{"protocol", "stp (802.1D-1998, the default) or rstp (802.1D-2004's rapid spanning tree: alternate ports take over at once, proposal and agreement, edge ports; timers in whole seconds)"},
	{"protocol.<node>", "one bridge's protocol (protocol.s2=stp): an RSTP port that hears 802.1D-1998 BPDUs speaks them on that port"},
	{"hello", "hello time, default 2s"},
	{"max_age", "max age, default 20s"},
	{"forward_delay", "forward delay, default 15s"},
	{"priority", "bridge priority of every bridge, 0..65535, default 32768 (61440 for relaying hosts, BCube's servers, so that a switch is root)"},
	{"priority.<node>", "bridge priority of one bridge (priority.s1=4096)"},
	{"aging", "MAC table aging time, default 300s"},
	{"path_cost.<node>:<port>", "one port's path cost, 1..200000000 (path_cost.s2:3=100), default from the link rate"},
	{"max_entries", "MAC table capacity per bridge, 1..16777216, default 65536"},
	{"edge_ports", "true: host-facing ports forward at once, PortFast-style (default false, classic 802.1D)"},
	{"stp", "off: plain learning bridges without the spanning tree (loops storm); default on"},
}

// Fabric is the stp scheme on one topology: a Bridge on every switch and
// relaying host, nothing on plain hosts.
type Fabric struct {
	g       *topo.Graph
	bridges []*Bridge // by NodeID; nil on plain hosts
	settle  element.Time
}

// SettleTime is how long a bridge may take before it forwards on a port:
// 2 x forward delay (listening, learning) plus max age (a stale root's
// information expiring); under RSTP three hellos (information aging) plus
// 2 x forward delay; 0 without the spanning tree (scheme.Settler).
func (f *Fabric) SettleTime() element.Time { return f.settle }

// NewFabric builds a bridge for every forwarding node of g. Bridge IDs are
// the priority and the node's plan address topo.BridgeMAC, so that in a
// topology of equal priorities the lowest NodeID becomes the root.
func NewFabric(g *topo.Graph, params map[string]string) (*Fabric, error) {
	ps, err := parseParams(g, params)
	if err != nil {
		return nil, err
	}
	base := ps.cfg
	f := &Fabric{g: g, bridges: make([]*Bridge, g.NumNodes())}
	if c := base.withDefaults(); !c.NoSTP {
		protos := map[Protocol]bool{c.Protocol: true}
		for _, pr := range ps.proto {
			protos[pr] = true
		}
		if protos[ProtocolSTP] {
			f.settle = 2*c.ForwardDelay + c.MaxAge
		}
		if protos[ProtocolRSTP] {
			// Information ages in three hellos; a port that no
			// neighbour answers forwards after two forward delays
			// at worst (an 802.1D-1998 neighbour), sooner as an
			// edge.
			f.settle = max(f.settle, 3*c.HelloTime+2*c.ForwardDelay)
		}
	}
	for n := topo.NodeID(0); int(n) < g.NumNodes(); n++ {
		node := g.Node(n)
		if !node.Forwards() {
			continue
		}
		if node.Ports > int(MaxPort) {
			return nil, fmt.Errorf("stp: node %q: %d ports, an 802.1D port identifier numbers at most %d: %w",
				node.Name, node.Ports, MaxPort, ErrConfig)
		}
		cfg := base
		cfg.Name = node.Name
		cfg.MAC = topo.BridgeMAC(n)
		if node.Kind != topo.Switch && !ps.prioSet {
			// A relaying host (a BCube server) gets the worst settable
			// priority, as an operator would set it, so that a switch is
			// root whenever there is one (the SPAIN planner assumes the
			// same of VLAN 1).
			cfg.Priority, cfg.PriorityZero = paths.RelayPriority, false
		}
		if p, ok := ps.prio[node.Name]; ok {
			cfg.Priority, cfg.PriorityZero = p, p == 0
		}
		cfg.PathCost = ps.cost[node.Name]
		if pr, ok := ps.proto[node.Name]; ok {
			cfg.Protocol = pr
		}
		ports := g.Ports(n)
		cfg.PortRate = make([]int64, len(ports))
		edge := make([]bool, len(ports))
		for i, l := range ports {
			if l == topo.NoLink {
				continue
			}
			cfg.PortRate[i] = g.Link(l).Rate
			peer := g.Link(l).Other(n)
			edge[i] = !g.Node(peer.Node).Forwards()
		}
		if ps.edge {
			cfg.Edge = edge
		}
		b, err := New(cfg)
		if err != nil {
			return nil, fmt.Errorf("stp: node %q: %w", node.Name, err)
		}
		f.bridges[n] = b
	}
	return f, nil
}

// Element returns the bridge of a switch or relaying host, nil on a plain
// host.
func (f *Fabric) Element(n topo.NodeID) element.Element {
	if n < 0 || int(n) >= len(f.bridges) || f.bridges[n] == nil {
		return nil
	}
	return f.bridges[n]
}

// Bridge returns node n's bridge, or nil.
func (f *Fabric) Bridge(n topo.NodeID) *Bridge {
	if n < 0 || int(n) >= len(f.bridges) {
		return nil
	}
	return f.bridges[n]
}

// Graph returns the topology the fabric was built for.
func (f *Fabric) Graph() *topo.Graph { return f.g }

type parsed struct {
	cfg     Config
	prioSet bool                               // "priority" was given: it applies to relaying hosts too
	prio    map[string]uint16                  // per-node priorities
	cost    map[string]map[element.Port]uint32 // per-port path costs by node
	proto   map[string]Protocol                // per-node protocols
	edge    bool
}

func parseParams(g *topo.Graph, params map[string]string) (parsed, error) {
	ps := parsed{prio: map[string]uint16{}, cost: map[string]map[element.Port]uint32{}, proto: map[string]Protocol{}}
	c := &ps.cfg
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first bad key reported is the same every run
	for _, k := range keys {
		v := params[k]
		bad := func(format string, a ...any) error {
			return fmt.Errorf("stp: param %s=%q: %w: %s", k, v, ErrParam, fmt.Sprintf(format, a...))
		}
		switch {
		case k == "hello" || k == "max_age" || k == "forward_delay" || k == "aging":
			d, err := parseDuration(v)
			if err != nil {
				return ps, bad("%v", err)
			}
			switch k {
			case "hello":
				c.HelloTime = d
			case "max_age":
				c.MaxAge = d
			case "forward_delay":
				c.ForwardDelay = d
			case "aging":
				c.AgingTime = d
			}
		case k == "priority" || strings.HasPrefix(k, "priority."):
			// Decimal, or hex with 0x as bridge IDs are written
			// (never octal: "010" is ten).
			base, digits := 10, v
			if h, ok := strings.CutPrefix(strings.ToLower(v), "0x"); ok {
				base, digits = 16, h
			}
			p, err := strconv.ParseUint(digits, base, 16)
			if err != nil {
				return ps, bad("want an integer 0..65535")
			}
			if k == "priority" {
				c.Priority, c.PriorityZero = uint16(p), p == 0
				ps.prioSet = true
				continue
			}
			name := strings.TrimPrefix(k, "priority.")
			if _, why := bridgeNode(g, name); why != "" {
				return ps, bad("%s", why)
			}
			ps.prio[name] = uint16(p)
		case strings.HasPrefix(k, "path_cost."):
			name, port, ok := strings.Cut(strings.TrimPrefix(k, "path_cost."), ":")
			if !ok {
				return ps, bad("want path_cost.<node>:<port>")
			}
			n, why := bridgeNode(g, name)
			if why != "" {
				return ps, bad("%s", why)
			}
			pn, err := strconv.Atoi(port)
			if err != nil || pn < 1 || pn > g.Node(n).Ports {
				return ps, bad("node %q has ports 1..%d", name, g.Node(n).Ports)
			}
			// 802.1t widened the range from 1998's 1..65535.
			c, err := strconv.ParseUint(v, 10, 32)
			if err != nil || c < 1 || c > MaxPathCost {
				return ps, bad("want a cost 1..200000000")
			}
			if ps.cost[name] == nil {
				ps.cost[name] = map[element.Port]uint32{}
			}
			ps.cost[name][element.Port(pn)] = uint32(c)
		case k == "max_entries":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > MaxMaxEntries {
				return ps, bad("want an integer 1..%d", MaxMaxEntries)
			}
			c.MaxEntries = n
		case k == "stp":
			switch v {
			case "on":
			case "off":
				c.NoSTP = true
			default:
				return ps, bad("want on or off")
			}
		case k == "protocol" || strings.HasPrefix(k, "protocol."):
			var pr Protocol
			switch v {
			case "stp":
				pr = ProtocolSTP
			case "rstp":
				pr = ProtocolRSTP
			default:
				return ps, bad("want stp or rstp")
			}
			if k == "protocol" {
				c.Protocol = pr
				continue
			}
			name := strings.TrimPrefix(k, "protocol.")
			if _, why := bridgeNode(g, name); why != "" {
				return ps, bad("%s", why)
			}
			ps.proto[name] = pr
		case k == "edge_ports":
			on, err := strconv.ParseBool(v)
			if err != nil {
				return ps, bad("want true or false")
			}
			ps.edge = on
		default:
			known := make([]string, len(Params))
			for i, p := range Params {
				known[i] = p.Key
			}
			return ps, fmt.Errorf("stp: unknown param %q: %w (known: %s)", k, ErrParam, strings.Join(known, ", "))
		}
	}
	d := c.withDefaults()
	if err := d.validate(); err != nil {
		return ps, fmt.Errorf("%w: %w", err, ErrParam)
	}
	for _, name := range slices.Sorted(maps.Keys(ps.proto)) {
		d.Protocol = ps.proto[name]
		if err := d.validate(); err != nil {
			return ps, fmt.Errorf("%w (protocol.%s): %w", err, name, ErrParam)
		}
	}
	return ps, nil
}

// bridgeNode finds the node a per-node parameter names, which must run a
// bridge; the second result says what is wrong otherwise.
func bridgeNode(g *topo.Graph, name string) (topo.NodeID, string) {
	n, ok := g.Lookup(name)
	if !ok {
		return 0, fmt.Sprintf("no node %q in topology %q", name, g.Name)
	}
	if !g.Node(n).Forwards() {
		return 0, fmt.Sprintf("node %q is a host, it runs no bridge", name)
	}
	return n, ""
}

// parseDuration reads "2s", "500ms" or a plain number of seconds, into
// picoseconds. Zero and negative durations are refused.
func parseDuration(s string) (element.Time, error) {
	var sec float64
	if d, err := time.ParseDuration(s); err == nil {
		sec = d.Seconds()
	} else if f, err2 := strconv.ParseFloat(s, 64); err2 == nil {
		sec = f
	} else {
		return 0, fmt.Errorf("want a duration like 2s or 500ms")
	}
	if math.IsNaN(sec) || sec <= 0 || sec > 1e6 {
		return 0, fmt.Errorf("want a positive duration")
	}
	return element.Time(math.Round(sec * float64(element.Second))), nil
}
