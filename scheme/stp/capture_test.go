package stp_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme/stp"
	"github.com/edgefabric/edgefabric/sim"
	"github.com/edgefabric/edgefabric/wire"
)

// tee writes a pcap and keeps the frames for the test to decode itself.
type tee struct {
	p      sim.Pcap
	frames [][]byte
}

func (t *tee) WritePacket(at element.Time, f []byte) error {
	t.frames = append(t.frames, append([]byte(nil), f...))
	return t.p.WritePacket(at, f)
}

// TestSimCaptureTshark captures the BPDUs on s3's port toward s2 in ring:3
// through convergence, a failure of s3's root port (a TCN goes out there
// and is acknowledged) and reconvergence, and checks that tshark's own
// STP dissector reads every frame the way DecodeFrame does. It skips
// without tshark unless CI is set.
func TestSimCaptureTshark(t *testing.T) {
	bin, err := exec.LookPath("tshark")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tshark not found and CI is set")
		}
		t.Skip("tshark not found")
	}
	l := newLab(t, "ring:3", nil)
	path := filepath.Join(t.TempDir(), "s3-3.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := wire.NewPcapWriter(f, wire.LinkTypeEthernet, time.Unix(1_700_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	rec := &tee{p: sim.Pcap{W: w}}
	if err := l.s.Capture(l.id("s3"), 3, rec); err != nil {
		t.Fatal(err)
	}
	l.failAt(70*sec+sec/2, "s1", "s3")
	l.s.Run(110 * sec)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	var want []string
	tcn, tca := 0, 0
	for _, fr := range rec.frames {
		var m stp.BPDU
		if !stp.IsBridgeGroup(fr) {
			want = append(want, "")
			continue
		}
		if err := stp.DecodeFrame(fr, &m); err != nil {
			t.Fatalf("captured frame %x: %v", fr, err)
		}
		if m.Type == stp.TypeTCN {
			tcn++
			want = append(want, "0x80||||||")
			continue
		}
		if m.TCA {
			tca++
		}
		mac := m.Root.MAC()
		want = append(want, fmt.Sprintf("0x00|%d|%d|%02x:%02x:%02x:%02x:%02x:%02x|%d|0x%04x|%g",
			b2i(m.TC), b2i(m.TCA), mac[0], mac[1], mac[2], mac[3], mac[4], mac[5], m.RootPathCost, uint16(m.Port), float64(m.MessageAge)/256))
	}
	if tcn == 0 || tca == 0 {
		t.Fatalf("capture holds %d TCNs and %d acknowledgments, want some of each", tcn, tca)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-n", "-r", path, "-T", "fields", "-E", "separator=|",
		"-e", "stp.type", "-e", "stp.flags.tc", "-e", "stp.flags.tcack", "-e", "stp.root.hw",
		"-e", "stp.root.cost", "-e", "stp.port", "-e", "stp.msg_age", "-e", "_ws.malformed")
	cmd.Env = append(os.Environ(), "WIRESHARK_CONFIG_DIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v\n%s", cmd, err, stderr.String())
	}
	got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("tshark shows %d frames, the capture has %d", len(got), len(want))
	}
	for i := range want {
		if want[i] == "" {
			continue // a data frame (ARP, ICMP): not ours to check here
		}
		if got[i] != want[i]+"|" {
			t.Errorf("frame %d: tshark %q, we decode %q", i+1, got[i], want[i])
		}
	}
	t.Logf("%d frames, %d TCNs, %d acknowledgments", len(want), tcn, tca)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestSimCaptureTsharkRSTP does the same for RST BPDUs: ring:3 with
// protocol=rstp through convergence (proposals, agreements) and the
// failure of s3's root port (its alternate port takes over and signals a
// topology change), every flag compared with tshark's reading.
func TestSimCaptureTsharkRSTP(t *testing.T) {
	bin, err := exec.LookPath("tshark")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tshark not found and CI is set")
		}
		t.Skip("tshark not found")
	}
	l := newLab(t, "ring:3", rstpParams)
	path := filepath.Join(t.TempDir(), "s3-3.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := wire.NewPcapWriter(f, wire.LinkTypeEthernet, time.Unix(1_700_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	rec := &tee{p: sim.Pcap{W: w}}
	if err := l.s.Capture(l.id("s3"), 3, rec); err != nil {
		t.Fatal(err)
	}
	l.failAt(10*sec+sec/2, "s1", "s3")
	l.s.Run(20 * sec)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var want []string
	seen := map[string]int{}
	for _, fr := range rec.frames {
		var m stp.BPDU
		if !stp.IsBridgeGroup(fr) {
			want = append(want, "")
			continue
		}
		if err := stp.DecodeFrame(fr, &m); err != nil {
			t.Fatalf("captured frame %x: %v", fr, err)
		}
		if m.Type != stp.TypeRST {
			t.Fatalf("an RSTP fabric sent %+v", m)
		}
		for name, on := range map[string]bool{"proposal": m.Proposal, "agreement": m.Agreement, "tc": m.TC, "forwarding": m.Forwarding} {
			if on {
				seen[name]++
			}
		}
		mac := m.Root.MAC()
		want = append(want, fmt.Sprintf("0x02|2|%d|%d|%d|%d|%d|%d|%02x:%02x:%02x:%02x:%02x:%02x|%d|0x%04x|0",
			b2i(m.TC), b2i(m.Proposal), m.Role, b2i(m.Learning), b2i(m.Forwarding), b2i(m.Agreement),
			mac[0], mac[1], mac[2], mac[3], mac[4], mac[5], m.RootPathCost, uint16(m.Port)))
	}
	for _, name := range []string{"proposal", "agreement", "tc", "forwarding"} {
		if seen[name] == 0 {
			t.Fatalf("no BPDU with %s in the capture (%v)", name, seen)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-n", "-r", path, "-T", "fields", "-E", "separator=|",
		"-e", "stp.type", "-e", "stp.version", "-e", "stp.flags.tc", "-e", "stp.flags.proposal", "-e", "stp.flags.port_role",
		"-e", "stp.flags.learning", "-e", "stp.flags.forwarding", "-e", "stp.flags.agreement", "-e", "stp.root.hw",
		"-e", "stp.root.cost", "-e", "stp.port", "-e", "stp.version_1_length", "-e", "_ws.malformed")
	cmd.Env = append(os.Environ(), "WIRESHARK_CONFIG_DIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v\n%s", cmd, err, stderr.String())
	}
	got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("tshark shows %d frames, the capture has %d", len(got), len(want))
	}
	for i := range want {
		if want[i] != "" && got[i] != want[i]+"|" {
			t.Errorf("frame %d: tshark %q, we decode %q", i+1, got[i], want[i])
		}
	}
	t.Logf("%d frames, flags seen %v", len(want), seen)
}
