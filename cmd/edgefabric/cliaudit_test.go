package main

import (
	"strings"
	"testing"
)

// TestBoolFlagValuePlain: a boolean flag given a value that is no boolean
// is told as the number flags are, without Go's parser in the message
// ("strconv.ParseBool: parsing \"maybe\": invalid syntax").
func TestBoolFlagValuePlain(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"topo", "list", "--json=maybe"}, `edgefabric: --json "maybe": want true or false (see 'edgefabric topo list --help')` + "\n"},
		{[]string{"demo", "-q=2"}, `edgefabric: --quiet "2": want true or false (see 'edgefabric demo --help')` + "\n"},
	} {
		code, out, errOut := topoCLI(c.args...)
		if code != 2 || out != "" || errOut != c.want {
			t.Errorf("%v: exit %d, stdout %q, stderr\n got  %q\n want %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestSimLogLevels: sim --log takes the five levels its help names, in
// any case, and nothing else: slog's parser took "INFO" and "debug+4" but
// refused "OFF".
func TestSimLogLevels(t *testing.T) {
	p := writeFile(t, t.TempDir(), "s.yaml", "name: t\ntopology: line:1\nscheme: stp\nduration: 1ms\n")
	for _, lv := range []string{"OFF", "Info", "debug"} {
		if code, _, errOut := runCLI(t, "sim", p, "--log", lv); code != 0 {
			t.Errorf("--log %s: exit %d, stderr %q", lv, code, errOut)
		}
	}
	for _, lv := range []string{"debug+4", "info-2", "warning"} {
		code, out, errOut := runCLI(t, "sim", p, "--log", lv)
		want := `edgefabric: --log "` + lv + `": want off, error, warn, info or debug` + "\n"
		if code != 2 || out != "" || errOut != want {
			t.Errorf("--log %s: exit %d, stdout %q, stderr %q; want 2 and %q", lv, code, out, errOut, want)
		}
	}
}

// TestUpRateHelpUnit: up --help names the unit of --rate, as the error
// for a bad one does.
func TestUpRateHelpUnit(t *testing.T) {
	code, out, _ := topoCLI("up", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for line := range strings.Lines(out) {
		if strings.Contains(line, "--rate string") && !strings.Contains(line, "bits per second") {
			t.Errorf("--rate's help names no unit: %q", line)
		}
	}
}

// TestUpRefusesSplitHosts: up refuses a topology whose hosts the fabric
// does not join, as plan spain and demo do (it waited out its --timeout,
// 110 s for stp, then failed with "element on h3 reports not ready"),
// unless --no-wait-reach asks for no reachability and the scheme has no
// readiness of its own that needs it (dumbnet's discovery does).
func TestUpRefusesSplitHosts(t *testing.T) {
	split := writeFile(t, t.TempDir(), "split.yaml", `name: split
nodes:
  - {name: s1, kind: switch}
  - {name: s2, kind: switch}
  - {name: h1, kind: host}
  - {name: h2, kind: host}
links:
  - [s1:1, h1:1]
  - [s2:1, h2:1]
`)
	for _, args := range [][]string{
		{"up", split, "--scheme", "dumbnet", "--name", "nosuchlab_t"},
		{"up", split, "--scheme", "stp", "--name", "nosuchlab_t"},
		{"up", split, "--scheme", "dumbnet", "--name", "nosuchlab_t", "--no-wait-reach"},
	} {
		code, out, errOut := runCLI(t, args...)
		want := "edgefabric: topology " + split + " is not connected: h1 cannot reach h2, and the lab would never be ready"
		if code != 2 || out != "" || !strings.HasPrefix(errOut, want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", args, code, out, errOut, want)
		}
	}
	// Joined by cables, yet cut off: only switches (and relay hosts)
	// carry traffic through, and a plain host uses its first NIC only.
	dir := t.TempDir()
	viaHost := writeFile(t, dir, "viahost.yaml", `name: viahost
nodes:
  - {name: s1, kind: switch}
  - {name: h1, kind: host}
  - {name: h2, kind: host}
  - {name: h3, kind: host}
links:
  - [s1:1, h1:1]
  - [h1:2, h2:1]
  - [s1:2, h3:1]
`)
	secondNIC := writeFile(t, dir, "secondnic.yaml", `name: secondnic
nodes:
  - {name: s1, kind: switch}
  - {name: s2, kind: switch}
  - {name: h1, kind: host}
  - {name: h2, kind: host}
  - {name: h3, kind: host}
links:
  - [s1:1, h1:1]
  - [s2:1, h1:2]
  - [s2:2, h2:1]
  - [s1:2, h3:1]
`)
	// h1's first NIC on another host, its second on the switch.
	hostFirst := writeFile(t, dir, "hostfirst.yaml", `name: hostfirst
nodes:
  - {name: s1, kind: switch}
  - {name: h1, kind: host}
  - {name: h2, kind: host}
  - {name: h3, kind: host}
links:
  - [h1:1, h3:2]
  - [s1:1, h1:2]
  - [s1:2, h2:1]
  - [s1:3, h3:1]
`)
	for _, c := range []struct{ file, scheme, far string }{
		{viaHost, "stp", "h2"}, {viaHost, "dumbnet", "h2"}, {viaHost, "kernel-bridge", "h2"},
		{secondNIC, "stp", "h2"}, {secondNIC, "kernel-bridge", "h2"},
		// DumbNet's agent uses its first cabled NIC only (it drops
		// probes on any other: drop_probe_other_nic).
		{secondNIC, "dumbnet", "h2"},
		{hostFirst, "dumbnet", "h2"},
	} {
		_, _, err := upOptions(c.file, upFlags{scheme: c.scheme, name: "nosuchlab_t"})
		if want := "topology " + c.file + " is not connected: h1 cannot reach " + c.far; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s with %s: %v, want %q...", c.file, c.scheme, err, want)
		}
	}
	// Two hosts on one cable need no switch.
	direct := writeFile(t, dir, "direct.yaml", "name: direct\nnodes:\n  - {name: h1, kind: host}\n  - {name: h2, kind: host}\nlinks:\n  - [h1:1, h2:1]\n")
	if _, _, err := upOptions(direct, upFlags{scheme: "kernel-bridge", name: "nosuchlab_t"}); err != nil {
		t.Errorf("two hosts on one cable: %v", err)
	}
	if _, _, err := upOptions(split, upFlags{scheme: "stp", name: "nosuchlab_t", noWait: true}); err != nil {
		t.Errorf("stp --no-wait-reach: %v", err)
	}
	if _, _, err := upOptions("line:2", upFlags{scheme: "dumbnet", name: "nosuchlab_t"}); err != nil {
		t.Errorf("line:2: %v", err)
	}
}

// TestUpParamTwice: a scheme parameter given twice is refused, as a
// scenario file's duplicate key is; the last one won silently.
func TestUpParamTwice(t *testing.T) {
	code, out, errOut := runCLI(t, "up", "line:2", "--scheme", "stp", "--name", "nosuchlab_t", "-p", "hello=1s", "-p", "hello=2s")
	if want := "edgefabric: --param \"hello=2s\": hello given twice\n"; code != 2 || out != "" || errOut != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, errOut, want)
	}
}
