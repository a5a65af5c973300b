package dumbnet

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// ErrBadParam is returned by New for a parameter it cannot use.
var ErrBadParam = errors.New("bad parameter")

// CheckTopology reports why DumbNet cannot run on g, if it cannot: a
// switch with more ports than a one-byte tag names, or a host that relays
// traffic (BCube's servers), since DumbNet forwards only in switches.
func CheckTopology(g *topo.Graph) error {
	for i := range g.NumNodes() {
		nd := g.Node(topo.NodeID(i))
		switch {
		case nd.Kind == topo.Switch && nd.Ports > 254:
			return fmt.Errorf("dumbnet: switch %q has %d ports; a one-byte tag names at most 254", nd.Name, nd.Ports)
		case nd.Kind != topo.Switch && nd.Relay:
			return fmt.Errorf("dumbnet: host %q relays traffic (BCube); DumbNet forwards only in switches", nd.Name)
		}
	}
	return nil
}

// Name is the scheme's registry name.
const Name = "dumbnet"

// Register adds the dumbnet scheme to r.
func Register(r *scheme.Registry) error {
	return r.Register(scheme.Scheme{
		Name:    Name,
		Summary: "DumbNet: stateless tag-popping switches, host agents and a host controller (EuroSys '18)",
		New: func(g *topo.Graph, opts scheme.Options) (scheme.Fabric, error) {
			return New(g, opts)
		},
	})
}

// Fabric is DumbNet on one topology: a Switch on every switch, an Agent on
// every host, the Controller inside one host's agent.
type Fabric struct {
	g        *topo.Graph
	switches map[topo.NodeID]*Switch
	agents   map[topo.NodeID]*Agent
	ctrlNode topo.NodeID
}

// Params of New, given as key=value:
//
//	controller=NAME  host running the controller (default: a host whose Role
//	                 is "controller", else the first host)
//	k=N              shortest paths per destination in the PathTable (4)
//	s=N, eps=N       Algorithm 1's detour window and slack (2, 0)
//	hops=N           hop limit of switch port notifications (5)
//	suppress=DUR     per-port alarm suppression window (1s)
//	flowlets=BOOL    flowlet load balancing (false); flowletgap=DUR (500us)
//	mpls=BOOL        MPLS encoding for data frames (false)
//	maxports=N       highest port discovery probes (the topology's largest
//	                 switch port count: the paper's optional argument)
//	probetimeout=DUR end of a BFS round (50ms); probegap=DUR probe pacing
//	                 (10us): safe for the emulator's user-space forwarders; the
//	                 simulator runs as well with 2ms and 2us
//	search=DUR|off   when hosts start probing for the controller (200ms)
//	querytimeout=DUR first path-query retry (20ms; doubled, 8 retries)
//	auditevery=DUR|off how often the controller re-checks every link even
//	                 when no report says anything changed (30s)
//	holdtime=DUR     how long a frame waits for its path before it is
//	                 dropped (3s); 64 wait per destination, the oldest
//	                 dropped first
//	flapchanges=N|off host-side flap damping: a port whose state a host saw
//	                 change more than N times within flapwindow is not
//	                 flooded until it has been stable for flaphold (4)
//	flapwindow=DUR   (10s); flaphold=DUR (30s)
//	floodpt=N|all    how many PathTable destinations a host sends a
//	                 notification it floods to, beside its flood
//	                 neighbours and the controller: those whose paths
//	                 crossed the link first (16; 0: none)
//	mtu=N            the fabric links' MTU: frames the tags would push past
//	                 it get ICMP "fragmentation needed" (IPv4 with DF) or are
//	                 dropped; unset: no limit
func New(g *topo.Graph, opts scheme.Options) (*Fabric, error) {
	f := &Fabric{g: g, switches: map[topo.NodeID]*Switch{}, agents: map[topo.NodeID]*Agent{}, ctrlNode: -1}
	base := Config{Eps: -1}
	hops := uint8(0)
	var suppress element.Time
	ctrlName := ""
	maxPorts := 0
	for k, v := range opts.Params {
		var err error
		switch k {
		case "controller":
			ctrlName = v
			if v == "" {
				err = errors.New("want the name of a host")
			}
		case "k":
			base.K, err = intIn(v, 1, 64)
		case "s":
			base.S, err = intIn(v, 1, 16)
		case "eps":
			base.Eps, err = intIn(v, 0, 16)
		case "hops":
			var n int
			n, err = intIn(v, 1, 255)
			hops = uint8(n)
		case "suppress":
			suppress, err = dur(v)
		case "flowlets":
			base.Flowlets, err = boolean(v)
		case "flowletgap":
			base.FlowletGap, err = dur(v)
		case "mpls":
			base.MPLS, err = boolean(v)
		case "maxports":
			maxPorts, err = intIn(v, 1, 254)
		case "probetimeout":
			base.ProbeTimeout, err = dur(v)
		case "probegap":
			base.ProbeGap, err = dur(v)
		case "mtu":
			base.MTU, err = intIn(v, 576, 65535)
		case "querytimeout":
			base.QueryTimeout, err = dur(v)
		case "holdtime":
			base.HoldTime, err = dur(v)
		case "search":
			if v == "off" {
				base.Search = -1
			} else if base.Search, err = dur(v); err != nil {
				err = fmt.Errorf("%w, or off", err)
			}
		case "flapchanges":
			if v == "off" {
				base.FlapChanges = -1
			} else if base.FlapChanges, err = intIn(v, 1, maxFlapChanges); err != nil {
				err = fmt.Errorf("%w, or off", err)
			}
		case "flapwindow":
			base.FlapWindow, err = dur(v)
		case "flaphold":
			base.FlapHold, err = dur(v)
		case "floodpt":
			base.FloodPT, err = floodPT(v)
		case "auditevery":
			if v == "off" {
				base.AuditEvery = -1
			} else if base.AuditEvery, err = dur(v); err != nil {
				err = fmt.Errorf("%w, or off", err)
			}
		default:
			return nil, fmt.Errorf("dumbnet: %w: unknown parameter %q (known: controller, k, s, eps, hops, suppress, flowlets, flowletgap, mpls, mtu, maxports, probetimeout, probegap, search, querytimeout, holdtime, auditevery, flapchanges, flapwindow, flaphold, floodpt)", ErrBadParam, k)
		}
		if err != nil {
			return nil, fmt.Errorf("dumbnet: %w: %s=%q: %v", ErrBadParam, k, v, err)
		}
	}
	if err := CheckTopology(g); err != nil {
		return nil, err
	}
	hosts := g.Nodes(topo.Host)
	if len(hosts) == 0 {
		return nil, fmt.Errorf("dumbnet: %w: topology %q has no host to run the controller", ErrBadParam, g.Name)
	}
	if ctrlName == "" {
		// A host the topology marks as the controller (dumbnet-fig1's C3),
		// else the first host.
		f.ctrlNode = hosts[0]
		for _, h := range hosts {
			if g.Node(h).Role == "controller" {
				f.ctrlNode = h
				break
			}
		}
	} else {
		n, ok := g.Lookup(ctrlName)
		if !ok || g.Node(n).Kind != topo.Host {
			return nil, fmt.Errorf("dumbnet: %w: controller=%q is not a host of %q", ErrBadParam, ctrlName, g.Name)
		}
		f.ctrlNode = n
	}
	for i := range g.NumNodes() {
		n := topo.NodeID(i)
		nd := g.Node(n)
		if nd.Kind == topo.Switch {
			if _, set := opts.Params["maxports"]; !set {
				maxPorts = max(maxPorts, nd.Ports)
			}
			f.switches[n] = NewSwitch(SwitchID(n), hops, suppress)
		}
	}
	base.MaxPorts = maxPorts
	base.HopLimit = hops
	for _, h := range hosts {
		mac, ip, err := g.HostAddr(h)
		if err != nil {
			return nil, fmt.Errorf("dumbnet: %w", err)
		}
		cfg := base
		cfg.Name = g.Node(h).Name
		cfg.MAC = wire.MAC(mac)
		cfg.IP = ip.Addr()
		cfg.Controller = h == f.ctrlNode
		f.agents[h] = NewAgent(cfg)
	}
	return f, nil
}

// intIn parses an integer in lo..hi.
func intIn(v string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("want an integer %d..%d", lo, hi)
	}
	return n, nil
}

// maxFloodPT bounds floodpt's number (as many destinations as a host
// waits on at once, maxQueries); no cap at all is spelled "all".
const maxFloodPT = maxQueries

// floodPT parses floodpt into Config.FloodPT: all, or a cap (0: none,
// which Config spells negative).
func floodPT(v string) (int, error) {
	if strings.TrimSpace(v) == "all" {
		return FloodPTAll, nil
	}
	n, err := intIn(v, 0, maxFloodPT)
	if err != nil {
		return 0, fmt.Errorf("%w, or all", err)
	}
	if n == 0 {
		return -1, nil
	}
	return n, nil
}

// boolean parses true or false (and strconv's other spellings: 1, 0, t, f).
func boolean(v string) (bool, error) {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return false, errors.New("want true or false")
	}
	return b, nil
}

// maxDuration bounds the duration parameters (1e6 s, as scheme/stp's):
// element.Time counts picoseconds, so 2563h would wrap to a negative time,
// and the waits built from them (scale) must not wrap either.
const maxDuration = 1_000_000 * element.Second

// dur parses a Go duration ("2ms", "500us") up to maxDuration.
func dur(v string) (element.Time, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		return 0, errors.New("want a duration like 200ms or 2s")
	}
	if d <= 0 {
		return 0, fmt.Errorf("want a positive duration")
	}
	if d > time.Duration(maxDuration/element.Nanosecond) {
		return 0, fmt.Errorf("want a duration of at most %v", time.Duration(maxDuration/element.Nanosecond))
	}
	return element.Time(d.Nanoseconds()) * element.Nanosecond, nil
}

// scale is n×d saturated at maxDuration: a wait built from a duration
// parameter (a query's doubled backoff, a probe's place in the queue
// times the probe gap) must not wrap to a negative time.
func scale(n int, d element.Time) element.Time {
	if n <= 0 || d <= 0 {
		return 0
	}
	if d > maxDuration/element.Time(n) {
		return maxDuration
	}
	return element.Time(n) * d
}

// Element implements scheme.Fabric.
func (f *Fabric) Element(n topo.NodeID) element.Element {
	if s, ok := f.switches[n]; ok {
		return s
	}
	if a, ok := f.agents[n]; ok {
		return a
	}
	return nil
}

// Switch returns the switch on node n, or nil.
func (f *Fabric) Switch(n topo.NodeID) *Switch { return f.switches[n] }

// Agent returns the host agent on node n, or nil.
func (f *Fabric) Agent(n topo.NodeID) *Agent { return f.agents[n] }

// ControllerNode returns the host that runs the controller.
func (f *Fabric) ControllerNode() topo.NodeID { return f.ctrlNode }

// Controller returns the controller.
func (f *Fabric) Controller() *Controller { return f.agents[f.ctrlNode].ctrl }

// Expected returns the topology discovery should find (see Expected).
func (f *Fabric) Expected() (*Topology, error) { return Expected(f.g) }

// Counters returns every element's counters by node name, for status and
// results.
func (f *Fabric) Counters() map[string]map[string]uint64 {
	out := map[string]map[string]uint64{}
	for n, s := range f.switches {
		out[f.g.Node(n).Name] = s.Counters()
	}
	for n, a := range f.agents {
		out[f.g.Node(n).Name] = a.Counters()
	}
	return out
}
