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
	bin := tsharkBin(t)
	path, frames := captureS3(t, nil, 70*sec+sec/2, 110*sec)

	var want []string
	tcn, tca := 0, 0
	for _, fr := range frames {
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

	tsharkCompare(t, bin, path, want, "stp.type", "stp.flags.tc", "stp.flags.tcack", "stp.root.hw",
		"stp.root.cost", "stp.port", "stp.msg_age")
	t.Logf("%d frames, %d TCNs, %d acknowledgments", len(want), tcn, tca)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tsharkBin finds tshark, skipping the test without it unless CI is set.
func tsharkBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("tshark")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tshark not found and CI is set")
		}
		t.Skip("tshark not found")
	}
	return bin
}

// captureS3 runs ring:3 with params to until, s1-s3 failing at fail, and
// captures s3's port toward s2 into a pcap: its path, and the frames.
func captureS3(t *testing.T, params map[string]string, fail, until element.Time) (string, [][]byte) {
	t.Helper()
	l := newLab(t, "ring:3", params)
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
	l.failAt(fail, "s1", "s3")
	l.s.Run(until)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path, rec.frames
}

// tsharkCompare has tshark print fields of every frame of the pcap at
// path ("|"-separated, "_ws.malformed" last) and compares them with want,
// one line per frame; an empty want skips a frame (ARP, ICMP: not ours).
func tsharkCompare(t *testing.T, bin, path string, want []string, fields ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := []string{"-n", "-r", path, "-T", "fields", "-E", "separator=|"}
	for _, f := range append(fields, "_ws.malformed") {
		args = append(args, "-e", f)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
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
}

// TestSimCaptureTsharkRSTP does the same for RST BPDUs: ring:3 with
// protocol=rstp through convergence (proposals, agreements) and the
// failure of s3's root port (its alternate port takes over and signals a
// topology change), every flag compared with tshark's reading.
func TestSimCaptureTsharkRSTP(t *testing.T) {
	bin := tsharkBin(t)
	path, frames := captureS3(t, rstpParams, 10*sec+sec/2, 20*sec)
	var want []string
	seen := map[string]int{}
	for _, fr := range frames {
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
	tsharkCompare(t, bin, path, want, "stp.type", "stp.version", "stp.flags.tc", "stp.flags.proposal",
		"stp.flags.port_role", "stp.flags.learning", "stp.flags.forwarding", "stp.flags.agreement", "stp.root.hw",
		"stp.root.cost", "stp.port", "stp.version_1_length")
	t.Logf("%d frames, flags seen %v", len(want), seen)
}
