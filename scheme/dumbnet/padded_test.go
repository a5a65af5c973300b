package dumbnet_test

import (
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/edgefabric/edgefabric/wire"
)

// padNIC sends as a physical NIC does: a frame shorter than Ethernet's
// minimum leaves padded with zero bytes to 60 (a veth and the simulator
// send it as it is).
type padNIC struct {
	element.Element
	padded *int
}

type padEnv struct {
	element.Env
	padded *int
}

func (p padNIC) Attach(env element.Env, ports []element.PortInfo) {
	p.Element.Attach(padEnv{env, p.padded}, ports)
}

func (e padEnv) Send(p element.Port, frame []byte) {
	if len(frame) < wire.MinFrameLen {
		frame = append(frame, make([]byte, wire.MinFrameLen-len(frame))...)
		*e.padded++
	}
	e.Env.Send(p, frame)
}

// TestPaddedFabric runs discovery, every pair's ping and a failover on a
// fabric whose every element pads its frames: port notifications (31
// bytes), switch ID replies, probes and host notifications arrive padded
// and must be taken as they would be unpadded.
func TestPaddedFabric(t *testing.T) {
	g, err := topo.Parse("fattree:4", 1)
	if err != nil {
		t.Fatal(err)
	}
	padded := 0
	l := newLabWrapped(t, g, map[string]string{"k": "1"}, func(n topo.NodeID, e element.Element) element.Element {
		return padNIC{e, &padded}
	}, true)
	res := runFailover(t, l, "h5", "h16") // discovers first
	if padded == 0 {
		t.Fatal("no frame was padded: the test checks nothing")
	}
	if res.received == 0 || res.outage >= 10*element.Millisecond {
		t.Fatalf("failover: sent %d, received %d, outage %v", res.sent, res.received, res.outage)
	}
	ok, total, failed := l.pingAll(t)
	if ok != total {
		t.Fatalf("%d/%d pairs answered; failed: %v", ok, total, failed)
	}
	relayed := uint64(0)
	for i := range g.NumNodes() {
		n := topo.NodeID(i)
		c := l.f.Element(n).(element.CounterReporter).Counters()
		if c["drop_bad_control"] != 0 {
			t.Errorf("%s dropped %d control frames: %v", l.name(n), c["drop_bad_control"], c)
		}
		relayed += c["notify_relayed"]
	}
	if relayed == 0 {
		t.Error("no switch relayed a port notification")
	}
	sn, _ := l.g.Lookup("h5")
	if a := l.f.Agent(sn).Counters(); a["failovers"] == 0 || a["notify_received"] == 0 {
		t.Fatalf("source agent did not fail over: %v", a)
	}
	want, err := dumbnet.Expected(g)
	if err != nil {
		t.Fatal(err)
	}
	got := l.f.Controller().Topology()
	if len(got.Switches) != len(want.Switches) || len(got.Hosts) != len(want.Hosts) || len(got.Links) != len(want.Links) {
		t.Fatalf("controller knows %d switches, %d hosts, %d links; want %d, %d, %d",
			len(got.Switches), len(got.Hosts), len(got.Links), len(want.Switches), len(want.Hosts), len(want.Links))
	}
}
