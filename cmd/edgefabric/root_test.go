package main

import (
	"strings"
	"testing"
)

// TestUnknownSubcommand: a mistyped command, at the root or under a group
// (topo, plan), or an unknown help topic is bad input, exit 2 with one line
// on stderr; cobra alone printed the group's help and exited 0, and four
// lines at the root. A group alone and
// help on a real command still print help and succeed.
func TestUnknownSubcommand(t *testing.T) {
	bad := []struct {
		args []string
		want string
	}{
		{[]string{"topo", "shwo", "fattree:4"}, "edgefabric: unknown command \"shwo\" for \"edgefabric topo\"; did you mean \"show\"? (see 'edgefabric topo --help')\n"},
		{[]string{"plan", "spian", "fattree:4"}, "edgefabric: unknown command \"spian\" for \"edgefabric plan\"; did you mean \"spain\"? (see 'edgefabric plan --help')\n"},
		{[]string{"plan", "axon"}, "edgefabric: unknown command \"axon\" for \"edgefabric plan\" (see 'edgefabric plan --help')\n"},
		{[]string{"help", "bogus"}, "edgefabric: unknown help topic \"bogus\" (see 'edgefabric --help')\n"},
		{[]string{"help", "topo", "shwo"}, "edgefabric: unknown help topic \"topo shwo\" (see 'edgefabric --help')\n"},
		// At the root too: cobra's own error took four lines.
		{[]string{"topp", "fattree:4"}, "edgefabric: unknown command \"topp\" for \"edgefabric\"; did you mean \"topo\"? (see 'edgefabric --help')\n"},
		{[]string{"nosuch"}, "edgefabric: unknown command \"nosuch\" for \"edgefabric\" (see 'edgefabric --help')\n"},
	}
	for _, c := range bad {
		code, out, errOut := topoCLI(c.args...)
		if code != 2 || out != "" || errOut != c.want {
			t.Errorf("%v: exit %d, stdout %q, stderr\n got  %q\n want %q", c.args, code, out, errOut, c.want)
		}
	}
	good := []struct {
		args []string
		want string
	}{
		{[]string{"topo"}, "topo builds a topology"},
		{[]string{"plan"}, "plan computes the offline"},
		{[]string{"help", "plan", "spain"}, "spain computes SPAIN's offline configuration"},
		{[]string{"help"}, "edgefabric builds, runs and measures"},
	}
	for _, c := range good {
		code, out, errOut := topoCLI(c.args...)
		if code != 0 || !strings.HasPrefix(out, c.want) || errOut != "" {
			t.Errorf("%v: exit %d, stdout %.60q, stderr %q", c.args, code, out, errOut)
		}
	}
}

// TestCompletionUnknownShell: cobra's completion command is refused like
// any unknown subcommand (it printed its help and exited 0), with the
// nearest shell suggested; a real shell still gets its script.
func TestCompletionUnknownShell(t *testing.T) {
	if code, out, errOut := topoCLI("completion", "zhs"); code != 2 || out != "" ||
		errOut != "edgefabric: unknown command \"zhs\" for \"edgefabric completion\"; did you mean \"zsh\"? (see 'edgefabric completion --help')\n" {
		t.Errorf("completion zhs: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, out, _ := topoCLI("completion", "bash"); code != 0 || !strings.HasPrefix(out, "# bash completion V2 for edgefabric") {
		t.Errorf("completion bash: exit %d, %.60q", code, out)
	}
}

// TestEmptyStringOptionRefused: an option given with an empty value is
// bad input on every command (plan spain --out "" planned, wrote
// nothing and exited 0; sim --pcap "" captured nothing).
func TestEmptyStringOptionRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
		cmd  string
	}{
		{[]string{"plan", "spain", "fattree:4", "--out", ""}, "out", "plan spain"},
		{[]string{"sim", "x.yaml", "--pcap="}, "pcap", "sim"},
		{[]string{"repro", "spain-table3", "--out", ""}, "out", "repro"},
		{[]string{"topo", "export", "ring:3", "--format", ""}, "format", "topo export"},
		{[]string{"up", "ring:3", "--scheme", "stp", "--rate", ""}, "rate", "up"},
	} {
		want := "edgefabric: --" + c.flag + ": empty value (leave the flag out for its default; see 'edgefabric " + c.cmd + " --help')\n"
		if code, out, errOut := topoCLI(c.args...); code != 2 || out != "" || errOut != want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", c.args, code, out, errOut)
		}
	}
	// --scheme has no default to leave the flag out for (found in review).
	const want = "edgefabric: --scheme: empty value (it is required; see 'edgefabric up --help' for its values)\n"
	if code, out, errOut := topoCLI("up", "ring:3", "--scheme", "", "--name", "x"); code != 2 || out != "" || errOut != want {
		t.Errorf("up --scheme '': exit %d, stdout %q, stderr %q, want %q", code, out, errOut, want)
	}
}
