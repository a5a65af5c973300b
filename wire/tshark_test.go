package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
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
	bin, lua := needTshark(t)
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
	bin, lua := needTshark(t)
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

// needTshark returns tshark's path and the dissector's. Without tshark
// the test skips, unless CI is set, where it fails.
func needTshark(t *testing.T) (bin, lua string) {
	t.Helper()
	bin, err := exec.LookPath("tshark")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("tshark not found and CI=%s: install it (scripts/deps, or apt-get install tshark)", os.Getenv("CI"))
		}
		t.Skip("tshark not found: install it (scripts/deps, or apt-get install tshark) to check the Lua dissector; CI fails instead of skipping")
	}
	lua, err = filepath.Abs(filepath.Join("..", "contrib", "wireshark", "edgefabric.lua"))
	if err != nil {
		t.Fatal(err)
	}
	return bin, lua
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

// edgefabricVerdict is what the Go decoders say about a frame of one of
// edgefabric's own formats, for comparison with the Lua dissector. ours is
// false for frames that are not ours (tshark's own dissectors judge them).
// When exact is false, only the header was judged: the payload is a
// standard frame (an Axon-encapsulated or DumbNet-tagged Ethernet/IP
// frame) that Wireshark may flag on its own, so only "Go rejects it, the
// dissector must flag it" can be asserted. A message in an Ethernet frame
// (after 0x88B5 or a DumbNet tag stack) or an Axon control packet or probe
// is judged as its receivers decode it, with DecodeMessagePadded or
// DecodePadded: a NIC pads a frame shorter than 60 bytes with zeros, and an
// Axon packet is a frame on its link. unpadded is then b without that
// padding.
func edgefabricVerdict(encap string, b []byte) (ours, exact bool, err error) {
	ours, exact, _, err = edgefabricVerdictPadded(encap, b)
	return ours, exact, err
}

func edgefabricVerdictPadded(encap string, b []byte) (ours, exact bool, unpadded []byte, err error) {
	unpadded = b
	// message decodes a message at the end of the Ethernet frame (its
	// length without VLAN tags) or the Axon packet b.
	frameLen := UntaggedLen(b)
	if encap == "axon" {
		frameLen = len(b)
	}
	message := func(payload []byte) error {
		m, err := DecodeMessagePadded(payload, frameLen)
		if err != nil {
			return err
		}
		enc, err := m.AppendTo(nil)
		if err != nil {
			return err
		}
		if len(enc) < len(payload) {
			unpadded = b[:len(b)-(len(payload)-len(enc))]
		}
		return nil
	}

	if encap == "axon" {
		var h AxonHeader
		payload, err := h.DecodeFromBytes(b)
		if err != nil {
			return true, true, b, err
		}
		switch h.Type {
		case AxonControl:
			err = message(payload)
			return true, true, unpadded, err
		case AxonProbe:
			var p AxonProbeBody
			body, err := DecodePadded(&p, payload, len(b))
			return true, true, b[:len(b)-len(payload)+len(body)], err
		case AxonEthernet:
			_, err = AxonDecap(b)
			return true, false, b, err
		}
		return true, false, b, nil
	}
	f, err := ParseFrame(b)
	if err != nil {
		return false, false, b, nil
	}
	if f.EtherType() == EtherTypeDumbNet {
		_, inner, payload, err := ParseDumbNet(b)
		if err != nil {
			return true, true, b, err
		}
		if inner != EtherTypeLocalExp {
			return true, false, b, nil
		}
		err = message(payload)
		return true, true, unpadded, err
	}
	et, _, off, err := f.InnerEtherType()
	if err != nil || et != EtherTypeLocalExp || off == len(b) {
		// Not ours, or an 0x88B5 frame with no payload at all, which
		// Wireshark's ethertype dissector never hands to ours.
		return false, false, b, nil
	}
	err = message(b[off:])
	return true, true, unpadded, err
}

// TestTsharkAgreesWithGo: every golden frame of edgefabric's own formats,
// cut at every length, with each byte flipped (all bits, the lowest, the
// lowest two: ingress <-> egress, up <-> down) and with a byte appended, is
// dissected by tshark. The Lua dissector must flag exactly the frames the
// Go decoders reject (a malformed frame shown as valid hides a bug in a
// capture; a valid one flagged sends its reader looking for one), and show
// the fields of every frame Go accepts as describe, the Go twin of the
// dissector, lists them: values and order.
func TestTsharkAgreesWithGo(t *testing.T) {
	bin, lua := needTshark(t)
	pcap := filepath.Join(t.TempDir(), "verdicts.pcap")
	f, err := os.Create(pcap)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewPcapWriter(f, LinkTypeEdgefabric, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	type frame struct {
		name   string
		b      []byte
		exact  bool
		err    error
		fields map[string][]string // edgefabric.* fields describe lists, for exact frames Go accepts
	}
	var frames []frame
	names := map[string]bool{}
	add := func(g golden, what string, b []byte) {
		ours, exact, unpadded, verr := edgefabricVerdictPadded(g.Encap, b)
		if !ours {
			return
		}
		fr := frame{name: g.Name + " " + what, b: b, exact: exact, err: verr}
		encap := EncapEthernet
		if g.Encap == "axon" {
			encap = EncapAxon
			err = w.WriteAxon(0, b)
		} else {
			err = w.WriteEthernet(0, b)
		}
		if err != nil {
			t.Fatal(err)
		}
		if exact && verr == nil {
			fl, _, err := describe(encap, unpadded)
			if err != nil {
				t.Fatalf("%s: Go accepts it, describe fails: %v", fr.name, err)
			}
			fr.fields = map[string][]string{}
			for _, fv := range fl {
				if strings.HasPrefix(fv[0], "edgefabric.") {
					fr.fields[fv[0]] = append(fr.fields[fv[0]], fv[1])
					names[fv[0]] = true
				}
			}
		}
		frames = append(frames, fr)
	}
	for _, g := range loadGoldens(t) {
		b := g.bytes(t)
		if ours, _, _ := edgefabricVerdict(g.Encap, b); !ours {
			continue
		}
		add(g, "as is", b)
		add(g, "with a byte appended", append(bytes.Clone(b), 0))
		// A NIC's padding up to 60 bytes is accepted after a message in
		// an Ethernet frame or an Axon packet (and after an Axon probe's
		// records), up to 4 more per VLAN tag (a bridge tagged a padded
		// frame); a non-zero byte in it or a byte past the limit is not.
		limit := MinFrameLen
		if g.Encap != "axon" {
			limit += len(b) - UntaggedLen(b)
		}
		if n := limit - len(b); n > 0 {
			add(g, fmt.Sprintf("padded to %d", limit), append(bytes.Clone(b), make([]byte, n)...))
			add(g, fmt.Sprintf("padded to %d", limit+1), append(bytes.Clone(b), make([]byte, n+1)...))
			c := append(bytes.Clone(b), make([]byte, n)...)
			c[len(c)-1] = 1
			add(g, fmt.Sprintf("padded to %d, last byte 1", limit), c)
			if limit > MinFrameLen && len(b) < MinFrameLen {
				add(g, "padded to 60", append(bytes.Clone(b), make([]byte, MinFrameLen-len(b))...))
			}
		}
		for n := range len(b) {
			add(g, fmt.Sprintf("cut to %d bytes", n), b[:n])
		}
		if g.Name == "backplane-nexthop-egress" {
			// An ingress entry with no prefix and port 0: no flip below makes it.
			c := bytes.Clone(b)
			c[EthHeaderLen+1] = byte(NextHopIngress)
			c[len(c)-2], c[len(c)-1] = 0, 0
			add(g, "as an ingress entry without a prefix", c)
		}
		if g.Name == "overlay-vnet" {
			// Names at the edges of UTF-8 (valid: 2, 3 and 4 bytes; not:
			// overlong, surrogate, above U+10FFFF, cut, lone continuation).
			for _, name := range []string{"\u00e9", "\u20ac", "\U0001f600", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "\x80"} {
				c := append(bytes.Clone(b[:len(b)-len("acme")-1]), byte(len(name)))
				add(g, fmt.Sprintf("named %q", name), append(c, name...))
			}
		}
		for i := range b {
			for _, x := range []byte{0xff, 0x01, 0x03} {
				c := bytes.Clone(b)
				c[i] ^= x
				add(g, fmt.Sprintf("byte %d ^ %#02x", i, x), c)
			}
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	cols := slices.Sorted(maps.Keys(names))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Our expert items are in the MALFORMED group, which also sets
	// _ws.malformed; so do Wireshark's own bounds errors.
	args := []string{"-n", "-X", "lua_script:" + lua, "-r", pcap, "-T", "fields", "-E", "separator=/t",
		"-E", "occurrence=a", "-E", "aggregator=\x1f", "-e", "frame.number", "-e", "_ws.malformed"}
	for _, c := range cols {
		args = append(args, "-e", c)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
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
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(frames) {
		t.Fatalf("tshark shows %d frames, wrote %d", len(lines), len(frames))
	}
	bad, flagged := 0, 0
	for i, fr := range frames {
		row := strings.Split(lines[i], "\t")
		if len(row) != 2+len(cols) || row[0] != fmt.Sprint(i+1) {
			t.Fatalf("tshark line %d: %q", i+1, lines[i])
		}
		isFlagged := row[1] != ""
		if isFlagged {
			flagged++
		}
		switch {
		case fr.err != nil && !isFlagged:
			t.Errorf("%s: Go rejects it (%v), the dissector shows it as valid: %x", fr.name, fr.err, fr.b)
		case fr.err == nil && fr.exact && isFlagged:
			t.Errorf("%s: Go accepts it, the dissector flags it: %x", fr.name, fr.b)
		case fr.fields != nil:
			var diffs []string
			for j, c := range cols {
				var got []string
				if row[2+j] != "" {
					got = strings.Split(row[2+j], "\x1f")
				}
				if !slices.Equal(got, fr.fields[c]) {
					diffs = append(diffs, fmt.Sprintf("%s: tshark %q, Go %q", c, got, fr.fields[c]))
				}
			}
			if diffs == nil {
				continue
			}
			t.Errorf("%s: fields differ: %x\n\t%s", fr.name, fr.b, strings.Join(diffs, "\n\t"))
		default:
			continue
		}
		if bad++; bad == 40 {
			t.Fatal("too many disagreements")
		}
	}
	t.Logf("%d frames, %d flagged", len(frames), flagged)
}

// TestTsharkPaddedEthernetCapture: in a LINKTYPE_ETHERNET capture (no
// encapsulation byte before the frame) a port notification padded to 60
// bytes, as a physical NIC sends it and wire.DecodePadded takes it, is
// shown with its fields and not flagged; 61 bytes are.
func TestTsharkPaddedEthernetCapture(t *testing.T) {
	bin, lua := needTshark(t)
	pcap := filepath.Join(t.TempDir(), "padded.pcap")
	f, err := os.Create(pcap)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewPcapWriter(f, LinkTypeEthernet, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := AppendControlFrame(nil, Broadcast, macA, &DumbNetPortStatus{SwitchID: 7, Port: 3, State: PortDown, HopLimit: 4, Seq: 9})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{MinFrameLen, MinFrameLen + 1} {
		fr := append(bytes.Clone(b), make([]byte, n-len(b))...)
		if _, err := DecodePadded(new(DumbNetPortStatus), fr[EthHeaderLen:], len(fr)); (err == nil) != (n == MinFrameLen) {
			t.Fatalf("DecodePadded of %d bytes: %v", n, err)
		}
		if err := w.WriteEthernet(0, fr); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-n", "-X", "lua_script:"+lua, "-r", pcap, "-T", "fields",
		"-e", "frame.len", "-e", "_ws.malformed", "-e", "edgefabric.dnport.seq")
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
	if got, want := string(out), "60\t\t9\n61\t_ws.malformed\t9\n"; got != want {
		t.Fatalf("tshark shows\n%q, want\n%q", got, want)
	}
}
