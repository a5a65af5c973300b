package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestTshark writes one capture holding every golden message and checks
// that tshark, with contrib/wireshark/edgefabric.lua loaded, shows the
// fields the golden files list: our formats through the Lua dissector,
// standard headers (802.1Q, QinQ, ARP, DHCP, VXLAN, MPLS, LLDP) through
// tshark's own dissectors. scripts/deps installs tshark; without it the
// test skips, unless CI is set, where it fails.
func TestTshark(t *testing.T) {
	bin, err := exec.LookPath("tshark")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("tshark not found and CI=%s: install it (scripts/deps, or apt-get install tshark)", os.Getenv("CI"))
		}
		t.Skip("tshark not found: install it (scripts/deps, or apt-get install tshark) to check the Lua dissector; CI fails instead of skipping")
	}
	lua, err := filepath.Abs(filepath.Join("..", "contrib", "wireshark", "edgefabric.lua"))
	if err != nil {
		t.Fatal(err)
	}
	gs := loadGoldens(t)
	pcap := filepath.Join(t.TempDir(), "golden.pcap")
	if p := os.Getenv("EDGEFABRIC_KEEP_PCAP"); p != "" {
		pcap = p // keep the capture to open it in Wireshark
	}
	f, err := os.Create(pcap)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewPcapWriter(f, LinkTypeEdgefabric, time.Unix(1_700_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range gs {
		ts := int64(i) * 1_000_000_000 // 1 ms apart
		if g.Encap == "axon" {
			err = w.WriteAxon(ts, g.bytes(t))
		} else {
			err = w.WriteEthernet(ts, g.bytes(t))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-n", "-X", "lua_script:"+lua, "-r", pcap, "-T", "json", "--no-duplicate-keys",
		"-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE")
	cmd.Env = append(os.Environ(), "WIRESHARK_CONFIG_DIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v\n%s", cmd, err, stderr.String())
	}
	if s := luaErrors(stderr.String()); s != "" {
		t.Fatalf("tshark reported Lua errors:\n%s", s)
	}
	var pkts []struct {
		Source struct {
			Layers map[string]any `json:"layers"`
		} `json:"_source"`
	}
	if err := json.Unmarshal(out, &pkts); err != nil {
		t.Fatalf("tshark JSON: %v", err)
	}
	if len(pkts) != len(gs) {
		t.Fatalf("tshark shows %d packets, wrote %d", len(pkts), len(gs))
	}
	goodChecksums := 0
	defer func() {
		if goodChecksums < len(gs)/2 {
			t.Errorf("tshark verified only %d checksums as good: checksum checking is not on", goodChecksums)
		}
	}()
	for i, g := range gs {
		t.Run(g.Name, func(t *testing.T) {
			got := map[string][]string{}
			flatten(pkts[i].Source.Layers, got)
			if _, ok := got["_ws.malformed"]; ok {
				t.Errorf("tshark flags the frame as malformed")
			}
			// Checksum status 0 is "bad" (1 good, 2 unverified, 3 absent).
			for _, k := range []string{"ip.checksum.status", "udp.checksum.status", "tcp.checksum.status", "icmp.checksum.status"} {
				if slices.Contains(got[k], "0") {
					t.Errorf("tshark finds a bad checksum: %s = %q", k, got[k])
				}
				goodChecksums += len(slices.DeleteFunc(slices.Clone(got[k]), func(v string) bool { return v != "1" }))
			}
			want := map[string][]string{}
			var names []string
			for _, fv := range g.Fields {
				if _, ok := want[fv[0]]; !ok {
					names = append(names, fv[0])
				}
				want[fv[0]] = append(want[fv[0]], fv[1])
			}
			for _, name := range names {
				w, h := want[name], got[name]
				if strings.HasPrefix(name, "edgefabric.") {
					// Ours: exactly these values, in this order.
					if !slices.Equal(w, h) {
						t.Errorf("%s: tshark shows %q, want %q", name, h, w)
					}
					continue
				}
				// tshark's own: each value present (it may show more).
				rest := slices.Clone(h)
				for _, v := range w {
					j := slices.Index(rest, v)
					if j < 0 {
						t.Errorf("%s: tshark shows %q, want %q among them", name, h, v)
						break
					}
					rest = slices.Delete(rest, j, j+1)
				}
			}
		})
	}
}

// TestTsharkMalformed feeds the Lua dissector every golden frame cut at
// every length and with single bytes flipped: tshark must dissect them all
// with no Lua error (bad input becomes an expert item, as in Go).
func TestTsharkMalformed(t *testing.T) {
	bin, err := exec.LookPath("tshark")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("tshark not found and CI=%s", os.Getenv("CI"))
		}
		t.Skip("tshark not found")
	}
	lua, _ := filepath.Abs(filepath.Join("..", "contrib", "wireshark", "edgefabric.lua"))
	pcap := filepath.Join(t.TempDir(), "malformed.pcap")
	f, err := os.Create(pcap)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewPcapWriter(f, LinkTypeEdgefabric, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	frames := 0
	write := func(g golden, b []byte) {
		if g.Encap == "axon" {
			err = w.WriteAxon(0, b)
		} else {
			err = w.WriteEthernet(0, b)
		}
		if err != nil {
			t.Fatal(err)
		}
		frames++
	}
	for _, g := range loadGoldens(t) {
		b := g.bytes(t)
		for n := range len(b) {
			write(g, b[:n])
		}
		for i := range b {
			c := bytes.Clone(b)
			c[i] ^= 0xff
			write(g, c)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-n", "-X", "lua_script:"+lua, "-r", pcap, "-V")
	cmd.Env = append(os.Environ(), "WIRESHARK_CONFIG_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v", cmd, err)
	}
	if n := len(regexp.MustCompile(`(?m)^Frame \d+:`).FindAll(out, -1)); n != frames {
		t.Errorf("tshark dissected %d frames, wrote %d", n, frames)
	}
	if i := bytes.Index(out, []byte("Lua Error")); i >= 0 {
		t.Fatalf("Lua error on malformed input: %s", out[max(0, i-300):min(len(out), i+200)])
	}
}

// flatten collects every leaf "field": "value" of tshark's JSON tree.
func flatten(v any, into map[string][]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch x := x.(type) {
			case string:
				into[k] = append(into[k], x)
			case []any:
				for _, e := range x {
					if s, ok := e.(string); ok {
						into[k] = append(into[k], s)
					} else {
						flatten(e, into)
					}
				}
			default:
				flatten(x, into)
			}
		}
	case []any:
		for _, e := range v {
			flatten(e, into)
		}
	}
}

// luaErrors returns the lines of tshark's stderr that report a Lua
// problem (a bad field, a runtime error), ignoring the root warning.
func luaErrors(stderr string) string {
	var bad []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(strings.ToLower(l), "lua") || strings.Contains(l, "rror") {
			bad = append(bad, l)
		}
	}
	return fmt.Sprint(strings.Join(bad, "\n"))
}
