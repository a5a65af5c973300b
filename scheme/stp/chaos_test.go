package stp_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// bridgeDist returns the bridge-hop distances from the lowest-ID bridge
// over bridge links not in down (bridges it does not reach are absent).
func bridgeDist(l *lab, down map[topo.LinkID]bool) map[topo.NodeID]int {
	var root topo.NodeID = -1
	for i := topo.NodeID(0); int(i) < l.g.NumNodes(); i++ {
		if b := l.fab.Bridge(i); b != nil && (root < 0 || b.ID() < l.fab.Bridge(root).ID()) {
			root = i
		}
	}
	dist := map[topo.NodeID]int{root: 0}
	for q := []topo.NodeID{root}; len(q) > 0; q = q[1:] {
		x := q[0]
		for _, p := range l.g.Ports(x) {
			if p == topo.NoLink || down[p] {
				continue
			}
			o := l.g.Link(p).Other(x).Node
			if _, ok := dist[o]; !ok && l.fab.Bridge(o) != nil {
				dist[o] = dist[x] + 1
				q = append(q, o)
			}
		}
	}
	return dist
}

// bridgeConnected reports whether the bridges stay connected without the
// links in down.
func bridgeConnected(l *lab, down map[topo.LinkID]bool) bool {
	n := 0
	for i := topo.NodeID(0); int(i) < l.g.NumNodes(); i++ {
		if l.fab.Bridge(i) != nil {
			n++
		}
	}
	return len(bridgeDist(l, down)) == n
}

// depth is the largest bridge-hop distance from the lowest-ID bridge.
func depth(l *lab, down map[topo.LinkID]bool) int {
	m := 0
	for _, d := range bridgeDist(l, down) {
		m = max(m, d)
	}
	return m
}

// TestChaos: ten random flips of bridge-to-bridge links (none that would
// split the bridges), 0–3 s apart under RSTP and 0–20 s under 802.1D-1998,
// on nine fabrics, 10 seeds each ($EF_CHAOS_SEEDS for more: 200 each,
// 3,600 runs, passed on 2026-11-25). After settling (15 s, 70 s) every
// port's role and state must be the oracle's, the forwarding links one
// tree, and every pair of hosts must ping. An 802.1D-1998 run whose tree
// ends deeper than 7 bridges is skipped: a relay held back by the hold
// timer sends the root's information aged by the wait, so a hop can add
// up to 2 s (increment and hold time), and past the standard's diameter
// for the default timers (7) message ages reach max age (bcube:3,2 seed
// 18, 11 bridges deep: the farthest bridge heard ages of 17 to 19.98 s and
// took itself for root whenever one ran out). RSTP, one second per hop,
// keeps such trees.
func TestChaos(t *testing.T) {
	n := 10
	if v, err := strconv.Atoi(os.Getenv("EF_CHAOS_SEEDS")); err == nil && v > 0 {
		n = v
	}
	specs := []string{"ring:5", "ring:8", "fattree:4", "leafspine:2,4,2", "spain-testbed", "torus:3,3,1,1", "jellyfish:12,5,3", "hyperx:3,2", "bcube:3,2"}
	for _, proto := range []string{"rstp", "stp"} {
		for _, spec := range specs {
			for seed := uint64(1); seed <= uint64(n); seed++ {
				t.Run(fmt.Sprintf("%s/%s/%d", proto, spec, seed), func(t *testing.T) { chaosRun(t, proto, spec, seed) })
			}
		}
	}
}

func chaosRun(t *testing.T, proto, spec string, seed uint64) {
	l := newLab(t, spec, map[string]string{"protocol": proto})
	gap, settle := 3000, 15*sec
	if proto == "stp" {
		gap, settle = 20000, 70*sec
	}
	l.s.Run(settle)
	r := rand.New(rand.NewPCG(seed, 5))
	var fabric []topo.LinkID
	for i := range l.g.NumLinks() {
		lk := l.g.Link(topo.LinkID(i))
		if l.fab.Bridge(lk.A.Node) != nil && l.fab.Bridge(lk.B.Node) != nil {
			fabric = append(fabric, topo.LinkID(i))
		}
	}
	now := l.s.Now()
	down := map[topo.LinkID]bool{}
	var log []string
	for range 10 {
		now += element.Time(r.IntN(gap)) * element.Millisecond
		id := fabric[r.IntN(len(fabric))]
		fail := !down[id]
		down[id] = fail
		if !bridgeConnected(l, down) {
			down[id] = !fail
			continue
		}
		at := now
		l.s.At(at, func() {
			if fail {
				l.down[id] = true
			} else {
				delete(l.down, id)
			}
			_ = l.s.SetLink(id, !fail)
			lk := l.g.Link(id)
			log = append(log, fmt.Sprintf("%v %s-%s down=%v", at, l.g.Node(lk.A.Node).Name, l.g.Node(lk.B.Node).Name, fail))
		})
	}
	l.s.Run(now + settle)
	// 802.1D-1998's message ages grow by an overestimate and by hold-time
	// delays per hop (diameter 7 with the default timers); RSTP's by one
	// per hop, below max age (20).
	if d, limit := depth(l, l.down), map[string]int{"stp": 7, "rstp": 19}[proto]; d > limit {
		t.Skipf("tree %d bridges deep: beyond %s's diameter %d", d, proto, limit)
	}
	l.checkConverged()
	apps := l.pingAll(l.s.Now())
	l.s.Run(l.s.Now() + 5*sec)
	lost := 0
	for _, a := range *apps {
		if a.Result().Received == 0 {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d pings lost", lost, len(*apps))
	}
	if t.Failed() {
		t.Logf("events %v", log)
	}
}
