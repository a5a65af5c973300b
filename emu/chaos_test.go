package emu

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/scheme/all"
	"github.com/edgefabric/edgefabric/topo"
)

// TestChaosRSTPRecovers: the stp scheme's RSTP bridges on fattree:4 with
// real hosts; a round ($EF_CHAOS_SEEDS rounds if set) of twelve random
// flips of switch links, up to a second apart, then every link back up.
// 8 s later every pair of hosts must ping (3 tries each). Four rounds of
// RSTP and two of 802.1D-1998 (60 s to settle) passed on 2026-11-25.
func TestChaosRSTPRecovers(t *testing.T) {
	needRoot(t)
	g, err := topo.Parse("fattree:4", 1)
	if err != nil {
		t.Fatal(err)
	}
	l := upLab(t, g, "stp", Options{Registry: all.Registry(), Scheme: scheme.Options{Params: map[string]string{"protocol": "rstp"}}})
	rounds := 1
	if v, err := strconv.Atoi(os.Getenv("EF_CHAOS_SEEDS")); err == nil && v > 0 {
		rounds = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rounds)*2*time.Minute)
	defer cancel()
	var sw []topo.LinkID
	for i := range g.NumLinks() {
		lk := g.Link(topo.LinkID(i))
		if g.Node(lk.A.Node).Kind == topo.Switch && g.Node(lk.B.Node).Kind == topo.Switch {
			sw = append(sw, topo.LinkID(i))
		}
	}
	ips := map[string]string{}
	for _, h := range g.Nodes(topo.Host) {
		_, ip, _ := g.HostAddr(h)
		ips[g.Node(h).Name] = ip.Addr().String()
	}
	for round := range rounds {
		r := rand.New(rand.NewPCG(uint64(round+1), 7))
		down := map[topo.LinkID]bool{}
		var log []string
		for range 12 {
			time.Sleep(time.Duration(r.IntN(1000)) * time.Millisecond)
			id := sw[r.IntN(len(sw))]
			lk := g.Link(id)
			a, b := g.Node(lk.A.Node).Name, g.Node(lk.B.Node).Name
			down[id] = !down[id]
			if err := l.SetLink(a, b, !down[id]); err != nil {
				t.Fatal(err)
			}
			log = append(log, fmt.Sprintf("%s-%s down=%v", a, b, down[id]))
		}
		for id, d := range down {
			if d {
				lk := g.Link(id)
				if err := l.SetLink(g.Node(lk.A.Node).Name, g.Node(lk.B.Node).Name, true); err != nil {
					t.Fatal(err)
				}
			}
		}
		time.Sleep(8 * time.Second)
		var mu sync.Mutex
		var failed []string
		var wg sync.WaitGroup
		for src := range ips {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for dst, ip := range ips {
					if src == dst {
						continue
					}
					ok := false
					for range 3 {
						out, err := l.Exec(ctx, src, "ping", "-c", "1", "-W", "1", ip)
						if ok = err == nil && strings.Contains(string(out), " 0% packet loss"); ok {
							break
						}
					}
					if !ok {
						mu.Lock()
						failed = append(failed, src+"->"+dst)
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		if len(failed) > 0 {
			t.Fatalf("round %d: %d of %d pairs silent: %v\nevents %v", round, len(failed), len(ips)*(len(ips)-1), failed, log)
		}
		t.Logf("round %d: every pair pings (events %v)", round, log)
	}
}
