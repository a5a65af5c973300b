package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/emu"
)

// TestKeywordFlagsAnyCase: --scheme, --engine and --trace take their
// keywords in any case, as --ties, --format and --log do, and pass on
// the canonical lower-case name; a value that names none is still
// refused with the values listed. "--scheme DumbNet", "--engine SIM" and
// "--trace HEADERS" were refused.
func TestKeywordFlagsAnyCase(t *testing.T) {
	for in, want := range map[string]string{"DumbNet": "dumbnet", "STP": "stp", "Kernel-Bridge": "kernel-bridge", "stp": "stp", "nosuch": "nosuch"} {
		if got := schemeName(in); got != want {
			t.Errorf("schemeName(%q) = %q, want %q", in, got, want)
		}
	}
	// The checks that depend on the scheme see its canonical name:
	// dumbnet's refusal of --ipv6, kernel-bridge's of --delay.
	if _, _, err := upOptions("line:2", upFlags{scheme: "DumbNet", name: "t1", seed: 1}); err != nil {
		t.Errorf("up --scheme DumbNet: %v", err)
	}
	if _, _, err := upOptions("line:2", upFlags{scheme: "DUMBNET", name: "t1", seed: 1, ipv6: true}); err == nil || !strings.HasPrefix(err.Error(), "--ipv6: dumbnet's host agents") {
		t.Errorf("up --scheme DUMBNET --ipv6: %v, want dumbnet's refusal", err)
	}
	if _, _, err := upOptions("line:2", upFlags{scheme: "Kernel-Bridge", name: "t1", seed: 1, delay: "1ms"}); err == nil || !strings.HasPrefix(err.Error(), "--delay: the kernel bridge") {
		t.Errorf("up --scheme Kernel-Bridge --delay 1ms: %v, want kernel-bridge's refusal", err)
	}
	code, out, errOut := runCLI(t, "up", "line:2", "--scheme", "Dumb-Net", "--name", "t1")
	if want := "edgefabric: --scheme: unknown scheme \"Dumb-Net\" (known: dumbnet, stp, kernel-bridge)\n"; code != 2 || out != "" || errOut != want {
		t.Errorf("up --scheme Dumb-Net: exit %d, stdout %q, stderr\n got  %q\n want %q", code, out, errOut, want)
	}

	// line:2 fails the demo's failover check (one switch link, no
	// other path): exit 1, with the report.
	code, out, errOut = runCLI(t, "demo", "--engine", "SIM", "-q", "--topology", "line:2", "--json")
	var rep struct {
		Engine string `json:"engine"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code == 2 || err != nil || rep.Engine != "sim" {
		t.Errorf("demo --engine SIM: exit %d, engine %q, stderr %q", code, rep.Engine, errOut)
	}
	code, out, errOut = runCLI(t, "demo", "--engine", "simulator")
	if want := "edgefabric: --engine \"simulator\": want emu or sim\n"; code != 2 || out != "" || errOut != want {
		t.Errorf("demo --engine simulator: exit %d, stdout %q, stderr\n got  %q\n want %q", code, out, errOut, want)
	}

	p := writeFile(t, t.TempDir(), "ring.yaml", ringScenario)
	hash := func(trace string) string {
		code, out, errOut := runCLI(t, "sim", p, "--json", "--trace", trace)
		var r struct {
			TraceHash string `json:"trace_hash"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.TraceHash == "" {
			t.Fatalf("sim --trace %s: exit %d: %s", trace, code, errOut)
		}
		return r.TraceHash
	}
	if h, want := hash("HEADERS"), hash("headers"); h != want {
		t.Errorf("sim --trace HEADERS: trace hash %s, want --trace headers' %s", h, want)
	}
	if h, want := hash("Full"), hash("full"); h != want {
		t.Errorf("sim --trace Full: trace hash %s, want --trace full's %s", h, want)
	}
	code, out, errOut = runCLI(t, "sim", p, "--trace", "head")
	if want := "edgefabric: --trace \"head\": want full or headers\n"; code != 2 || out != "" || errOut != want {
		t.Errorf("sim --trace head: exit %d, stdout %q, stderr\n got  %q\n want %q", code, out, errOut, want)
	}
}

// TestUpSchemeAnyCase: a lab started with --scheme in another case runs
// the scheme under its own name: the daemon was given the name as typed.
func TestUpSchemeAnyCase(t *testing.T) {
	bin, name := rootLab(t, "lk")
	labCleanup(t, name)
	if code, out, errOut := labBin(t, bin, false, "", "up", "line:1", "--scheme", "Kernel-Bridge", "-p", "stp=off", "--name", name); code != 0 {
		t.Fatalf("up --scheme Kernel-Bridge: exit %d\n%s%s", code, out, errOut)
	}
	st, err := emu.ReadState(name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Scheme != emu.KernelBridge {
		t.Errorf("up --scheme Kernel-Bridge: the lab runs scheme %q, want %q", st.Scheme, emu.KernelBridge)
	}
	if code, out, errOut := labBin(t, bin, false, "", "down", name); code != 0 {
		t.Errorf("down: exit %d\n%s%s", code, out, errOut)
	}
}
