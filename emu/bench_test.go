package emu

import (
	"context"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/scheme/all"
	"github.com/edgefabric/edgefabric/topo"
)

// benchSchemes are the fabrics compared on the same topology in one run:
// the kernel's own bridge (the baseline), a minimal learning-bridge
// element, and the shipped stp scheme's element, both forwarding through
// AF_PACKET.
func benchLab(b *testing.B, which string) *Lab {
	b.Helper()
	needRootB(b)
	if _, err := exec.LookPath("iperf3"); err != nil {
		b.Skip("skipping: iperf3 is not installed")
	}
	var fabrics []*testFabric
	reg := testRegistry(b, &fabrics)
	opts := Options{Name: labName(), Registry: reg}
	name := which
	switch which {
	case KernelBridge:
		opts.Scheme = scheme.Options{Params: map[string]string{"stp": "off"}}
	case "stp":
		opts.Registry = all.Registry()
		opts.ReadyTimeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b.Cleanup(func() { Cleanup(opts.Name, 10*time.Second) })
	l, err := Up(ctx, star(b, 2), name, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Down() })
	if which == "stp" {
		// The stp scheme forwards once its ports leave listening and
		// learning; wait until a ping gets through.
		deadline := time.Now().Add(90 * time.Second)
		for {
			out, err := l.Exec(ctx, "h1", "ping", "-c", "1", "-W", "1", "10.0.0.2")
			if err == nil && strings.Contains(string(out), " 0% packet loss") {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("stp fabric never forwarded: %s", out)
			}
		}
	}
	return l
}

func needRootB(b *testing.B) {
	if err := checkRoot(); err != nil {
		b.Skipf("skipping: %v", err)
	}
}

var benchFabrics = []string{KernelBridge, "learn", "stp"}

// BenchmarkForwardTCP: iperf3 TCP h1 -> h2 across one switch, 3 s per
// iteration; reports Gb/s. Run with -benchtime=1x.
func BenchmarkForwardTCP(b *testing.B) {
	for _, f := range benchFabrics {
		b.Run(f, func(b *testing.B) {
			l := benchLab(b, f)
			var sum float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sum += iperfRun(b, l, "h1", "h2", "10.0.0.2", 3, nil)
			}
			b.ReportMetric(sum/float64(b.N)/1000, "Gb/s")
		})
	}
}

// BenchmarkForwardUDP64: iperf3 UDP with 18-byte payloads, i.e. 64-byte
// Ethernet frames with the FCS, unlimited rate, 3 s per iteration; reports
// the frames per second that arrived.
func BenchmarkForwardUDP64(b *testing.B) {
	for _, f := range benchFabrics {
		b.Run(f, func(b *testing.B) {
			l := benchLab(b, f)
			var sum float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sum += iperfRun(b, l, "h1", "h2", "10.0.0.2", 3, []string{"-u", "-l", "18", "-b", "0"})
			}
			b.ReportMetric(sum/float64(b.N), "pps")
		})
	}
}

// ring3 is three switches in a ring with host h1 on s1 and h2 on s2.
func ring3(t testing.TB) *topo.Graph {
	b := topo.NewBuilder("ring3")
	s1, s2, s3 := b.AddNode("s1", topo.Switch), b.AddNode("s2", topo.Switch), b.AddNode("s3", topo.Switch)
	b.Connect(s1, s2)
	b.Connect(s2, s3)
	b.Connect(s3, s1)
	b.Connect(b.AddNode("h1", topo.Host), s1)
	b.Connect(b.AddNode("h2", topo.Host), s2)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// BenchmarkFailover: the outage h1 -> h2 sees when the direct link s1-s2
// of a 3-ring fails (s1, the lowest bridge ID, is the root, so s2-s3 is
// the blocked link that must take over), for the kernel's 802.1D bridge
// and the stp scheme's element with 802.1D default timers, in the same
// run. Reports the outage in seconds.
func BenchmarkFailover(b *testing.B) {
	needRootB(b)
	if _, err := exec.LookPath("ping"); err != nil {
		b.Skip("skipping: ping is not installed")
	}
	for _, f := range []string{KernelBridge, "stp"} {
		b.Run(f, func(b *testing.B) {
			var sum time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				opts := Options{Name: labName(), Registry: all.Registry(), ReadyTimeout: 3 * time.Minute}
				b.Cleanup(func() { Cleanup(opts.Name, 10*time.Second) })
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				l, err := Up(ctx, ring3(b), f, opts)
				if err != nil {
					cancel()
					b.Fatal(err)
				}
				// Wait until the fabric forwards (STP's listening and
				// learning states).
				for {
					out, err := l.Exec(ctx, "h1", "ping", "-c", "1", "-W", "1", "10.0.0.2")
					if err == nil && strings.Contains(string(out), " 0% packet loss") {
						break
					}
					if ctx.Err() != nil {
						b.Fatal("fabric never forwarded")
					}
				}
				time.Sleep(2 * time.Second) // learning settles, topology change timers expire
				b.StartTimer()
				res, err := l.Failover(ctx, FailoverSpec{From: "h1", To: "h2", A: "s1", B: "s2", Max: 2 * time.Minute})
				b.StopTimer()
				l.Down()
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				if !res.Recovered {
					b.Fatalf("no recovery: %+v", res)
				}
				b.Logf("%s: outage %v (%d of %d probes lost)", f, res.Outage, res.Lost, res.Sent)
				sum += res.Outage
			}
			b.ReportMetric((sum / time.Duration(b.N)).Seconds(), "s-outage")
		})
	}
}

// BenchmarkForwardPPS blasts b.N 60-byte frames (64 on the wire with the
// FCS) from an AF_PACKET socket in h1 to one in h2 across the switch and
// reports the frames per second that arrived, and the loss. Unlike iperf3,
// whose single-threaded UDP sender tops out near 70k datagrams/s here, it
// measures the fabric rather than the sender. Run with -benchtime=200000x.
func BenchmarkForwardPPS(b *testing.B) {
	for _, f := range benchFabrics {
		b.Run(f, func(b *testing.B) {
			l := benchLab(b, f)
			h1, _ := l.node("h1")
			h2, _ := l.node("h2")
			open := func(ln *labNode) *packetPort {
				var pp *packetPort
				err := inNS(ln.h, func() error {
					dev, err := ln.nl.LinkByName("eth0")
					if err != nil {
						return err
					}
					pp, err = openPacketPort(dev.Attrs().Index)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				return pp
			}
			tx, rx := open(h1), open(h2)
			defer tx.Close()
			frame := make([]byte, 60)
			copy(frame[0:6], h2.mac[:])
			copy(frame[6:12], h1.mac[:])
			frame[12], frame[13] = 0x88, 0xb5
			// Teach a learning fabric where h2 is.
			var got atomic.Int64
			var last atomic.Int64
			done := make(chan struct{})
			go func() {
				defer close(done)
				buf := make([]byte, maxFrame+4)
				for {
					n, err := rx.ReadFrame(buf)
					if err != nil {
						return
					}
					if n >= 14 && buf[12] == 0x88 && buf[13] == 0xb5 {
						got.Add(1)
						last.Store(time.Now().UnixNano())
					}
				}
			}()
			warm := make([]byte, 60)
			copy(warm, frame)
			copy(warm[0:6], h1.mac[:])
			copy(warm[6:12], h2.mac[:])
			rx.WriteFrame(warm)
			time.Sleep(100 * time.Millisecond)
			got.Store(0)
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if err := tx.WriteFrame(frame); err != nil {
					b.Fatal(err)
				}
			}
			// Wait until arrivals stop.
			for prev := int64(-1); got.Load() != prev; {
				prev = got.Load()
				time.Sleep(200 * time.Millisecond)
			}
			b.StopTimer()
			rx.Close()
			<-done
			n := got.Load()
			el := time.Duration(last.Load() - start.UnixNano())
			if n == 0 || el <= 0 {
				b.Fatalf("nothing arrived")
			}
			b.ReportMetric(float64(n)/el.Seconds(), "pps")
			b.ReportMetric(100*(1-float64(n)/float64(b.N)), "%loss")
		})
	}
}
