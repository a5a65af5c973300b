package sim

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/edgefabric/edgefabric/element"
)

// refPipe is an independent model of one link direction: the serializer's
// free time kept as an exact rational, every instant a frame ends rounded
// down to the picosecond only at the end.
type refPipe struct {
	free  *big.Rat
	q     []refFrame // queued or in flight, not delivered
	drops map[string]int
	up    bool
}
type refFrame struct {
	id      int
	n       int
	end     element.Time
	deliver element.Time
}

func floorRat(r *big.Rat) element.Time {
	q := new(big.Int).Quo(r.Num(), r.Denom()) // truncates toward zero; r >= 0
	return element.Time(q.Int64())
}

// TestPipeMatchesExactModel drives one link with random sends (any size,
// bursts that fill the queue), failures and repairs at rates that divide
// 8e12 and rates that do not, random delays, receiver latencies and queue
// limits, and checks every delivery time and every drop against refPipe.
func TestPipeMatchesExactModel(t *testing.T) {
	rates := []int64{1e9, 3e9, 7e9 + 1, 1e15, 999_999_937, 10e9, 123_456_789}
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		rate := rates[rng.IntN(len(rates))]
		delay := element.Time(rng.IntN(3000000))
		lat := element.Time(rng.IntN(2000000))
		limit := 64 + rng.IntN(6000)
		g := line(t, 0, rate, delay)
		s := mustNew(t, g, Options{QueueBytes: limit})
		a, b := &rec{}, &rec{}
		must(t, s.Place(0, a))
		must(t, s.Place(1, b))
		must(t, s.SetTiming(1, Timing{Latency: lat}))
		ref := &refPipe{free: new(big.Rat), drops: map[string]int{}, up: true}
		type dl struct {
			t  element.Time
			id int
		}
		var want []dl
		now := element.Time(0)
		id := 0
		// flush records the model's deliveries up to T.
		flush := func(T element.Time) {
			for len(ref.q) > 0 && ref.q[0].deliver <= T {
				want = append(want, dl{ref.q[0].deliver, ref.q[0].id})
				ref.q = ref.q[1:]
			}
		}
		for range 200 {
			now += element.Time(rng.IntN(20000000))
			op := rng.IntN(10)
			T := now
			id++
			myid := id
			n := rng.IntN(1600)
			switch {
			case op < 8:
				s.At(T, func() {
					f := frameOf(max(n, 8), 0)
					f[0], f[1], f[2], f[3] = byte(myid), byte(myid>>8), byte(myid>>16), byte(myid>>24)
					a.env.Send(1, f)
				})
			case op == 8:
				s.At(T, func() { s.SetLink(0, false) })
			default:
				s.At(T, func() { s.SetLink(0, true) })
			}
			// Every action is scheduled before the run, so it comes before
			// any delivery at its own time.
			flush(T - 1)
			switch {
			case op < 8:
				sz := max(n, 8)
				if !ref.up {
					ref.drops["link_down"]++
					break
				}
				// The queue holds the frames not fully serialized by T.
				qb := 0
				for _, f := range ref.q {
					if f.end > T {
						qb += f.n
					}
				}
				if qb+sz > limit {
					ref.drops["queue_full"]++
					break
				}
				wire := 8 + max(sz, 60) + 4
				start := new(big.Rat).SetInt64(int64(T))
				if ref.free.Cmp(start) > 0 {
					start.Set(ref.free)
				}
				endR := new(big.Rat).Add(start, big.NewRat(int64(wire)*8e12, rate))
				ref.free = new(big.Rat).Add(start, big.NewRat(int64(wire+12)*8e12, rate))
				end := floorRat(endR)
				ref.q = append(ref.q, refFrame{id: myid, n: sz, end: end, deliver: end + delay + lat})
			case op == 8:
				if ref.up {
					ref.drops["link_down"] += len(ref.q)
					ref.q = nil
					ref.up = false
					tr := new(big.Rat).SetInt64(int64(T))
					if ref.free.Cmp(tr) > 0 {
						ref.free = tr
					}
				}
			default:
				ref.up = true
			}
		}
		s.Run(now + element.Second)
		flush(now + element.Second)
		var got []dl
		for _, g := range b.got {
			got = append(got, dl{g.t, int(g.frame[0]) | int(g.frame[1])<<8 | int(g.frame[2])<<16 | int(g.frame[3])<<24})
		}
		st, _ := s.PortStats(0, 1)
		if len(got) != len(want) {
			t.Fatalf("seed %d rate %d: got %d deliveries, want %d; drops %v ref %v", seed, rate, len(got), len(want), st.DropMap(), ref.drops)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("seed %d rate %d delay %d lat %d: delivery %d: got %+v want %+v", seed, rate, delay, lat, i, got[i], want[i])
			}
		}
		if int(st.Drops[DropQueueFull]) != ref.drops["queue_full"] || int(st.Drops[DropLinkDown]) != ref.drops["link_down"] {
			t.Fatalf("seed %d: drops %v ref %v", seed, st.DropMap(), ref.drops)
		}
	}
}
