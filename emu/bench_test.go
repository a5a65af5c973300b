package emu

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/scheme/all"
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
