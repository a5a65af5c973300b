package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/emu"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/topo"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
)

// Tests from a mutation sweep of the lab verbs (up, down, exec, link and
// the lab list of status): each pins an outcome that a small change to
// those verbs left unnoticed.

// TestLabUpOptions: up turns every flag into the matching emu.Options
// field, and the defaults are the documented ones (--name lab, --seed 1,
// --timeout 0 = the emulator's own, down --timeout 20s).
func TestLabUpOptions(t *testing.T) {
	f := upFlags{scheme: emu.KernelBridge, name: "opt1", rate: "topo", seed: 7, params: []string{"stp=off", "hello_time=3"},
		ipv6: true, timeout: 90 * time.Second, noWait: true}
	g, o, err := upOptions("line:2", f)
	if err != nil {
		t.Fatal(err)
	}
	want := emu.Options{Name: "opt1", Scheme: scheme.Options{Seed: 7, Params: map[string]string{"stp": "off", "hello_time": "3"}},
		IPv6: true, ReadyTimeout: 90 * time.Second, Topology: "line:2", WaitReach: false, RateLimit: true}
	if !reflect.DeepEqual(o, want) || g == nil || g.NumNodes() != 6 {
		t.Errorf("upOptions(all flags):\n got  %+v\n want %+v", o, want)
	}
	f = upFlags{scheme: emu.KernelBridge, name: "opt2", rate: "100M", seed: 1}
	rate, err := topo.ParseRate("100M")
	if err != nil {
		t.Fatal(err)
	}
	_, o, err = upOptions("ring:3", f)
	want = emu.Options{Name: "opt2", Scheme: scheme.Options{Seed: 1, Params: map[string]string{}}, Topology: "ring:3", WaitReach: true, Rate: rate}
	if err != nil || !reflect.DeepEqual(o, want) {
		t.Errorf("upOptions(--rate 100M): %v\n got  %+v\n want %+v", err, o, want)
	}
	for _, c := range []struct {
		cmd  func() *cobra.Command
		flag string
		def  string
	}{
		{newUpCmd, "name", "lab"},
		{newUpCmd, "seed", "1"},
		{newUpCmd, "timeout", "0s"},
		{newUpCmd, "rate", ""},
		{newDownCmd, "timeout", "20s"},
	} {
		c0 := c.cmd()
		if fl := c0.Flags().Lookup(c.flag); fl == nil || fl.DefValue != c.def {
			t.Errorf("%s --%s: default %v, want %q", c0.Name(), c.flag, fl, c.def)
		}
	}
}

// TestLabDaemonArgs: the daemon gets every option up was given, and
// nothing it was not.
func TestLabDaemonArgs(t *testing.T) {
	all := upFlags{scheme: "stp", name: "d1", rate: "10M", delay: "topo", seed: 42, params: []string{"a=1", "b=2"}, ipv6: true,
		timeout: 90 * time.Second, verbose: true, noWait: true, asJSON: true, fg: true}
	want := []string{"up", "--foreground", "--scheme", "stp", "--name", "d1", "--seed", "42", "--rate", "10M", "--delay", "topo",
		"--param", "a=1", "--param", "b=2", "--ipv6", "--timeout", "1m30s", "--verbose", "--no-wait-reach", "--", "ring:3"}
	if got := all.args("ring:3"); !slices.Equal(got, want) {
		t.Errorf("args, all flags:\n got  %q\n want %q", got, want)
	}
	want = []string{"up", "--foreground", "--scheme", "kernel-bridge", "--name", "lab", "--seed", "1", "--", "line:2"}
	if got := (upFlags{scheme: "kernel-bridge", name: "lab", seed: 1}).args("line:2"); !slices.Equal(got, want) {
		t.Errorf("args, defaults:\n got  %q\n want %q", got, want)
	}
}

// TestLabDaemonArgsDashTopology: the daemon's arguments, read as up reads
// them, give back the topology and the flags, also for a topology file
// whose name starts with '-' (up -- -lab.yaml): the daemon read it as
// flags ("unknown shorthand flag") and failed.
func TestLabDaemonArgsDashTopology(t *testing.T) {
	for _, topoArg := range []string{"ring:3", "-lab.yaml", "--x"} {
		f := upFlags{scheme: "stp", name: "d1", seed: 7, params: []string{"a=1"}, noWait: true}
		c := newUpCmd()
		if err := c.ParseFlags(f.args(topoArg)[1:]); err != nil {
			t.Errorf("topology %q: the daemon's arguments do not parse: %v", topoArg, err)
			continue
		}
		fl := c.Flags()
		scheme, _ := fl.GetString("scheme")
		fg, _ := fl.GetBool("foreground")
		noWait, _ := fl.GetBool("no-wait-reach")
		if got := fl.Args(); !slices.Equal(got, []string{topoArg}) || scheme != "stp" || !fg || !noWait {
			t.Errorf("topology %q: daemon parses args %q, scheme %q, foreground %v, no-wait-reach %v", topoArg, got, scheme, fg, noWait)
		}
	}
}

// upBadInput is up's bad input, with the exact one-line error (prefix
// and tail).
func upBadInput(t *testing.T) []struct {
	args         []string
	prefix, tail string
} {
	noHosts := writeFile(t, t.TempDir(), "nohost.yaml", "nodes:\n  - {name: s1}\n  - {name: s2}\nlinks:\n  - [s1, s2]\n")
	return []struct {
		args         []string
		prefix, tail string
	}{
		{[]string{"up", "line:2", "--scheme", "nosuch"}, "edgefabric: --scheme: unknown scheme \"nosuch\" (known: ", ", kernel-bridge)\n"},
		{[]string{"up", "line:2", "--scheme", "kernel-bridge", "--timeout", "0"}, "edgefabric: --timeout 0s: must be positive\n", ""},
		{[]string{"up", "line:2", "--scheme", "kernel-bridge", "-p", "=1"}, "edgefabric: --param \"=1\": want key=value\n", ""},
		{[]string{"up", "line:2", "--scheme", "kernel-bridge", "--timeout", "-1s"}, "edgefabric: --timeout -1s: must be positive\n", ""},
		{[]string{"up", noHosts, "--scheme", "kernel-bridge"}, "edgefabric: topology " + noHosts + " has no hosts\n", ""},
	}
}

// TestLabBadInputExact: exec's and link's bad input (and up's, when not
// root: as root, TestLabBadInputBeforeRoot runs those as nobody, so that
// an up that failed to refuse them could not build a lab), with the exact
// one-line error, exit 2, nothing on stdout.
func TestLabBadInputExact(t *testing.T) {
	badName := "edgefabric: emu: bad lab name \"Bad-Name\": use 1-16 characters of a-z, 0-9 and _ (no '-'), starting with a letter or digit\n"
	cases := []struct {
		args         []string
		prefix, tail string
	}{
		{[]string{"exec", "Bad-Name", "h1", "--", "true"}, badName, ""},
		{[]string{"link", "Bad-Name", "s1", "s2", "down"}, badName, ""},
		// The command's own flags, without -- before them (found in review).
		{[]string{"exec", "lab1", "h1", "ip", "-br", "addr"}, "edgefabric: unknown shorthand flag: 'b' in -br (put -- before the command: edgefabric exec LAB NODE -- CMD [ARGS...]; see 'edgefabric exec --help')\n", ""},
	}
	if os.Geteuid() != 0 {
		cases = append(cases, upBadInput(t)...)
	}
	for _, c := range cases {
		code, out, errOut := topoCLI(c.args...)
		if code != 2 || out != "" || !strings.HasPrefix(errOut, c.prefix) || !strings.HasSuffix(errOut, c.tail) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr\n got  %q\n want %q...%q", c.args, code, out, errOut, c.prefix, c.tail)
		}
	}
}

// labBin runs the edgefabric binary as root (or as nobody), bounded by a
// minute, and returns its exit code and output.
func labBin(t *testing.T, bin string, nobody bool, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	if nobody {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var o, e bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("edgefabric %v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("edgefabric %v: still running after a minute", args)
	}
	return code, o.String(), e.String()
}

// TestLabBadInputBeforeRoot: bad input is refused with exit 2 before the
// root check, so a user without root learns what is wrong with the
// command, not only that it needs root.
func TestLabBadInputBeforeRoot(t *testing.T) {
	bin, _ := rootLab(t, "lr")
	os.Chmod(filepath.Dir(bin), 0o755) // t.TempDir and its parent are private
	os.Chmod(filepath.Dir(filepath.Dir(bin)), 0o755)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"up", "line:2", "--scheme", "kernel-bridge", "-p", "=1"}, "edgefabric: --param \"=1\": want key=value\n"},
		{[]string{"down", "nosuchlab_t", "--timeout", "0s"}, "edgefabric: --timeout 0s: must be positive\n"},
		{[]string{"exec", "nosuchlab_t", "h1", "--", ""}, "edgefabric: exec: the command is an empty string (usage: edgefabric exec LAB NODE -- CMD [ARGS...] [flags])\n"},
		{[]string{"link", "nosuchlab_t", "s1", "s2", "sideways"}, "edgefabric: link state \"sideways\": want down or up\n"},
		{[]string{"status", "nosuchlab_t", "--timeout", "0s"}, "edgefabric: --timeout 0s: must be positive\n"},
		{[]string{"status", "Bad-Name"}, "edgefabric: emu: bad lab name \"Bad-Name\": use 1-16 characters of a-z, 0-9 and _ (no '-'), starting with a letter or digit\n"},
	} {
		if code, out, errOut := labBin(t, bin, true, "", c.args...); code != 2 || out != "" || errOut != c.want {
			t.Errorf("%v as nobody: exit %d, stdout %q, stderr\n got  %q\n want %q", c.args, code, out, errOut, c.want)
		}
	}
	for _, c := range upBadInput(t) {
		if code, out, errOut := labBin(t, bin, true, "", c.args...); code != 2 || out != "" || !strings.HasPrefix(errOut, c.prefix) || !strings.HasSuffix(errOut, c.tail) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v as nobody: exit %d, stdout %q, stderr\n got  %q\n want %q...%q", c.args, code, out, errOut, c.prefix, c.tail)
		}
	}
	// Input that is fine: the root check comes before any look-up of the
	// lab (exit 1, whether the lab exists or not).
	needsRoot := "edgefabric: emu: the emulator needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN): run as root (effective uid 65534)\n"
	for _, args := range [][]string{
		{"exec", "nosuchlab_t", "h1", "--", "true"},
		{"link", "nosuchlab_t", "s1", "s2", "down"},
		{"down", "nosuchlab_t"},
		{"status", "nosuchlab_t"},
	} {
		if code, out, errOut := labBin(t, bin, true, "", args...); code != 1 || out != "" || errOut != needsRoot {
			t.Errorf("%v as nobody: exit %d, stdout %q, stderr\n got  %q\n want %q", args, code, out, errOut, needsRoot)
		}
	}
}

// TestLabNoSuchLab: link and exec on a lab that does not exist are bad
// input (exit 2) and say so; link takes its state in any case.
func TestLabNoSuchLab(t *testing.T) {
	if err := emu.CheckRoot(os.Geteuid()); err != nil {
		t.Skipf("skipping: %v", err)
	}
	name := fmt.Sprintf("lq%d", os.Getpid())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"link", name, "s1", "s2", "DOWN"}, "edgefabric: no lab \"" + name + "\" (labs: "},
		{[]string{"exec", name, "h1", "--", "true"}, "edgefabric: no lab \"" + name + "\" (labs: "},
		{[]string{"down", name}, "edgefabric: no lab \"" + name + "\" (labs: "},
	} {
		if code, out, errOut := topoCLI(c.args...); code != 2 || out != "" || !strings.HasPrefix(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr\n got  %q\n want %q", c.args, code, out, errOut, c.want)
		}
	}
}

// labCleanup removes lab name when the test ends and fails the test if
// anything of it is left.
func labCleanup(t *testing.T, name string) {
	t.Cleanup(func() {
		emu.Cleanup(name, 10*time.Second)
		if labs, _ := emu.Labs(); contains(labs, name) {
			t.Errorf("lab %s left behind", name)
		}
	})
}

// fakeLab writes the state directory of a lab that this test invents,
// with owner.json and state.json when given.
func fakeLab(t *testing.T, name string, owner, state any) {
	t.Helper()
	labCleanup(t, name)
	if err := os.MkdirAll(emu.LabDir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	// A real owner record has its process's start time (without it the
	// pid is nobody's): fill it in for the test's stand-in processes.
	if m, ok := owner.(map[string]any); ok && m["pid"] != nil && m["pid_start"] == nil {
		m["pid_start"] = pidStart(t, m["pid"].(int))
	}
	for file, v := range map[string]any{"owner.json": owner, "state.json": state} {
		if v == nil {
			continue
		}
		data, _ := json.Marshal(v)
		if err := os.WriteFile(filepath.Join(emu.LabDir(name), file), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// pidStart reads a process's start time, field 22 of /proc/PID/stat.
func pidStart(t *testing.T, pid int) uint64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return start
}

// startChild starts a process of the test's own (a stand-in daemon, a
// command left in a lab namespace) that the test reaps when it ends.
func startChild(t *testing.T, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	return cmd
}

// TestLabListAndDownStates: status lists every state a lab can be in
// (in text and JSON) and down says what it found, exactly; the labs are
// state directories this test writes, the daemons processes it starts.
func TestLabListAndDownStates(t *testing.T) {
	bin, _ := rootLab(t, "ll")
	id := os.Getpid() % 1000000
	crashed, inproc, starting, mute, dead := fmt.Sprintf("lc%d", id), fmt.Sprintf("li%d", id), fmt.Sprintf("ls%d", id), fmt.Sprintf("ln%d", id), fmt.Sprintf("ld%d", id)

	// No labs at all: an empty list, a JSON array (not null). Only when
	// no other lab exists on this machine before and after.
	if labs, _ := emu.Labs(); len(labs) == 0 {
		_, text, _ := topoCLI("status")
		_, js, _ := topoCLI("status", "--json")
		if labs, _ := emu.Labs(); len(labs) == 0 && (text != "no labs\n" || js != "[]\n") {
			t.Errorf("no labs: status said %q, --json %q", text, js)
		}
	}

	fakeLab(t, crashed, nil, nil)
	fakeLab(t, inproc, map[string]any{"pid": os.Getpid()}, nil)
	sleeper := startChild(t, "sleep", "600")
	fakeLab(t, starting, map[string]any{"pid": sleeper.Process.Pid, "daemon": true}, nil)
	muteSleeper := startChild(t, "sleep", "600")
	fakeLab(t, mute, map[string]any{"pid": muteSleeper.Process.Pid, "daemon": true},
		emu.State{Name: mute, Scheme: "stp", Topology: "line:2", Pid: muteSleeper.Process.Pid, PidStart: pidStart(t, muteSleeper.Process.Pid), Prefix: emu.Prefix(mute)})
	// A crashed daemon: its pid with another start time is not it.
	fakeLab(t, dead, nil, emu.State{Name: dead, Scheme: "stp", Topology: "line:2", Pid: os.Getpid(), PidStart: 1, Prefix: emu.Prefix(dead),
		Nodes: []emu.StateNode{{Name: "h1", Kind: "host", Namespace: emu.Prefix(dead) + "n1"}}})
	ns, ns2 := emu.Prefix(dead)+"n1", emu.Prefix(dead)+"n2"
	for _, ns := range []string{ns, ns2} {
		if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
			t.Fatalf("ip netns add %s: %v\n%s", ns, err, out)
		}
		t.Cleanup(func() { exec.Command("ip", "netns", "delete", ns).Run() })
	}
	left := startChild(t, "ip", "netns", "exec", ns, "sleep", "600")
	// Until ip has entered the namespace and exec'd sleep (same pid): down
	// must find it there. A fixed wait can be too short on a loaded machine.
	var nsStat syscall.Stat_t
	if err := syscall.Stat(filepath.Join("/run/netns", ns), &nsStat); err != nil {
		t.Fatal(err)
	}
	inNS := fmt.Sprintf("net:[%d]", nsStat.Ino)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		link, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", left.Process.Pid))
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", left.Process.Pid))
		if link == inNS && string(comm) == "sleep\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ip netns exec %s sleep 600: pid %d is %q in %s after 10 s, want sleep in %s", ns, left.Process.Pid, comm, link, inNS)
		}
	}

	code, out, errOut := topoCLI("status")
	lines := strings.Split(out, "\n")
	for _, want := range []string{
		crashed + "\tcrashed: run 'edgefabric down " + crashed + "'",
		fmt.Sprintf("%s\trunning in process %d, no daemon", inproc, os.Getpid()),
		fmt.Sprintf("%s\tstarting (daemon pid %d)", starting, sleeper.Process.Pid),
		fmt.Sprintf("%s\tdaemon %d does not answer: run 'edgefabric down %s'", mute, muteSleeper.Process.Pid, mute),
		dead + "\tcrashed: run 'edgefabric down " + dead + "'",
	} {
		if code != 0 || !slices.Contains(lines, want) {
			t.Errorf("status: exit %d, no line %q in\n%s%s", code, want, out, errOut)
		}
	}
	code, out, _ = topoCLI("status", "--json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil {
		t.Fatalf("status --json: exit %d, %v\n%s", code, err, out)
	}
	got := map[string]map[string]any{}
	for _, e := range list {
		got[e["name"].(string)] = e
	}
	for name, want := range map[string]map[string]any{
		crashed:  {"name": crashed, "state": "crashed"},
		inproc:   {"name": inproc, "state": "in-process", "pid": float64(os.Getpid())},
		starting: {"name": starting, "state": "starting", "pid": float64(sleeper.Process.Pid)},
		mute:     {"name": mute, "state": "not answering", "pid": float64(muteSleeper.Process.Pid)},
		dead:     {"name": dead, "state": "crashed"},
	} {
		if !reflect.DeepEqual(got[name], want) {
			t.Errorf("status --json: %s is %v, want %v", name, got[name], want)
		}
	}

	// link on a lab without a daemon: a failure (exit 1) that says what
	// to do, as status does.
	code, out, errOut = topoCLI("link", crashed, "s1", "s2", "down")
	if want := "edgefabric: lab " + crashed + " has no live daemon (crashed?): run 'edgefabric down " + crashed + "' to remove its leftovers\n"; code != 1 || out != "" || errOut != want {
		t.Errorf("link on a crashed lab: exit %d, stdout %q, stderr\n got  %q\n want %q", code, out, errOut, want)
	}

	// exec on a crashed lab whose state file is left: refused as link
	// and status refuse (it ran the command in the leftover namespace,
	// where nothing forwards, and exited 0).
	code, out, errOut = topoCLI("exec", dead, "h1", "--", "true")
	if want := "edgefabric: lab " + dead + " has no live daemon (crashed?): run 'edgefabric down " + dead + "' to remove its leftovers\n"; code != 1 || out != "" || errOut != want {
		t.Errorf("exec on a crashed lab: exit %d, stdout %q, stderr\n got  %q\n want %q", code, out, errOut, want)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"down", crashed, "--json"}, "{\n  \"lab\": \"" + crashed + "\",\n  \"daemon\": \"none\",\n  \"leftovers\": [],\n  \"killed_processes\": [],\n  \"state_removed\": true\n}\n"},
		{[]string{"down", inproc}, "lab " + inproc + ": it runs in process " + fmt.Sprint(os.Getpid()) + " without a daemon: its lab was torn down under it\nlab " + inproc + " removed\n"},
		{[]string{"down", starting}, "lab " + starting + ": daemon stopped\nlab " + starting + " removed\n"}, // a starting daemon that leaves on SIGTERM
		{[]string{"down", mute, "--json"}, "{\n  \"lab\": \"" + mute + "\",\n  \"daemon\": \"killed\",\n  \"leftovers\": [],\n  \"killed_processes\": [],\n  \"state_removed\": true\n}\n"},
		{[]string{"down", dead}, fmt.Sprintf("lab %s: the daemon had crashed\nlab %s: killed 1 processes still running in its namespaces (pids %d)\nlab %s: removed 2 leftover namespaces: %s %s\nlab %s removed\n",
			dead, dead, left.Process.Pid, dead, ns, ns2, dead)},
	} {
		// The binary, not run(): down must not count this test as the
		// lab's own process.
		if code, out, errOut := labBin(t, bin, false, "", c.args...); code != 0 || out != c.want || errOut != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout\n got  %q\n want %q", c.args, code, errOut, out, c.want)
		}
	}
	for _, p := range []*exec.Cmd{sleeper, muteSleeper, left} {
		if err := syscall.Kill(p.Process.Pid, 0); err == nil {
			if data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Process.Pid)); !strings.Contains(string(data), ") Z") {
				t.Errorf("%v (pid %d) still runs after down", p.Args, p.Process.Pid)
			}
		}
	}
}

// TestLabVerbsOutputs: on a real lab, up's report, exec's pass-through of
// stdin, stdout, stderr and exit status (a signal as 128+signal, as a
// shell reports it), link's report and that it fails exactly the link
// named, the lab list's pid, down's JSON, and up --json.
func TestLabVerbsOutputs(t *testing.T) {
	bin, name := rootLab(t, "lo")
	labCleanup(t, name)
	ef := func(wantCode int, stdin string, args ...string) (string, string) {
		t.Helper()
		code, out, errOut := labBin(t, bin, false, stdin, args...)
		if code != wantCode {
			t.Fatalf("edgefabric %v: exit %d, want %d\n%s%s", args, code, wantCode, out, errOut)
		}
		return out, errOut
	}
	// line:1: one switch, exactly two hosts (the try line needs two).
	out, _ := ef(0, "", "up", "line:1", "--scheme", "kernel-bridge", "-p", "stp=off", "--name", name)
	st, err := emu.ReadState(name)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("lab %s up: scheme kernel-bridge on line:1, 3 nodes (2 hosts), 2 links; daemon pid %d, log /run/edgefabric/%s/daemon.log\n"+
		"try: edgefabric exec %s h1 -- ping -c 3 10.0.0.2   (h2)\n", name, st.Pid, name, name)
	if out != want {
		t.Errorf("up said\n%s\nwant\n%s", out, want)
	}

	if out, errOut := ef(0, "ping\n", "exec", name, "h1", "--", "cat"); out != "ping\n" || errOut != "" {
		t.Errorf("exec cat: stdout %q, stderr %q; want stdin on stdout", out, errOut)
	}
	if out, errOut := ef(4, "", "exec", name, "s1", "--", "sh", "-c", "echo out; echo err >&2; exit 4"); out != "out\n" || errOut != "err\n" {
		t.Errorf("exec: stdout %q, stderr %q; want \"out\\n\", \"err\\n\"", out, errOut)
	}
	ef(128+int(syscall.SIGTERM), "", "exec", name, "h1", "--", "sh", "-c", "kill -TERM $$")
	ef(128+int(syscall.SIGKILL), "", "exec", name, "h1", "--", "sh", "-c", "kill -KILL $$")
	// As a shell: 127 for a command not found, 126 for a file that
	// cannot be run (both exited 1).
	ef(127, "", "exec", name, "h1", "--", "nosuchcmd_t")
	ef(126, "", "exec", name, "h1", "--", "/etc/passwd")

	if out, _ := ef(0, "", "link", name, "s1", "h1", "DOWN"); out != "lab "+name+": link s1-h1 down\n" {
		t.Errorf("link down said %q", out)
	}
	var status emu.Status
	js, _ := ef(0, "", "status", name, "--json")
	if err := json.Unmarshal([]byte(js), &status); err != nil {
		t.Fatal(err)
	}
	var down []string
	for _, l := range status.Links {
		if !l.Up {
			down = append(down, l.A+"-"+l.B)
		}
	}
	if len(status.Links) != 2 || len(down) != 1 || (down[0] != "s1-h1" && down[0] != "h1-s1") {
		t.Errorf("after link s1 h1 down: links down %v of %d, want s1-h1 only", down, len(status.Links))
	}
	if out, errOut := ef(2, "", "link", name, "s1", "s9", "down"); out != "" || !strings.HasPrefix(errOut, "edgefabric: lab "+name+": unknown node \"s9\" (nodes: ") ||
		strings.Count(errOut, "\n") != 1 {
		t.Errorf("link to an unknown node: stdout %q, stderr %q", out, errOut)
	}
	if out, _ := ef(0, "", "link", name, "h1", "s1", "up", "--json"); out != `{
  "a": "h1",
  "b": "s1",
  "lab": "`+name+`",
  "state": "up"
}
` {
		t.Errorf("link up --json said %q", out)
	}

	js, _ = ef(0, "", "status", "--json")
	var list []labEntry
	if err := json.Unmarshal([]byte(js), &list); err != nil || !slices.ContainsFunc(list, func(e labEntry) bool {
		return reflect.DeepEqual(e, labEntry{Name: name, State: "running", Pid: st.Pid})
	}) {
		t.Errorf("status --json: %v; want %s running with pid %d in\n%s", err, name, st.Pid, js)
	}
	// The daemon removed its state directory itself: it is gone all the
	// same (this once said false, as if the state were left behind).
	if out, _ := ef(0, "", "down", name, "--json"); out != "{\n  \"lab\": \""+name+"\",\n  \"daemon\": \"stopped\",\n  \"leftovers\": [],\n  \"killed_processes\": [],\n  \"state_removed\": true\n}\n" {
		t.Errorf("down --json said %q", out)
	}

	// up --json: the lab's status, as one JSON document.
	out, _ = ef(0, "", "up", "line:1", "--scheme", "kernel-bridge", "-p", "stp=off", "--name", name, "--json")
	var upState emu.Status
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&upState); err != nil || dec.More() || upState.Name != name || upState.Pid <= 0 || len(upState.Nodes) != 3 || len(upState.Links) != 2 {
		t.Errorf("up --json: %v\n%s", err, out)
	}
	if out, _ := ef(0, "", "down", name); out != "lab "+name+": daemon stopped\nlab "+name+" removed\n" {
		t.Errorf("down said %q", out)
	}
	if nss, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(nss), emu.Prefix(name)) {
		t.Errorf("namespaces of %s left after down:\n%s", name, nss)
	}
}

// TestUpForegroundText: up --foreground prints the lab's status, runs
// until SIGTERM, then removes the lab and says so; stderr stays quiet
// without -v.
func TestUpForegroundText(t *testing.T) {
	bin, name := rootLab(t, "lg")
	labCleanup(t, name)
	up := startForeground(t, bin, func(out string) bool { return strings.Contains(out, "\n") },
		"up", "line:2", "--scheme", "kernel-bridge", "-p", "stp=off", "--name", name, "--foreground")
	up.cmd.Process.Signal(syscall.SIGTERM)
	if err := up.wait(t, "SIGTERM"); err != nil {
		t.Fatalf("up after SIGTERM: %v\n%s", err, up.stderr.String())
	}
	stdout, stderr := &up.stdout, &up.stderr
	out := stdout.String()
	if !strings.HasPrefix(out, "lab "+name+": scheme kernel-bridge on line:2, 6 nodes, 5/5 links up, ready, up ") || !strings.HasSuffix(out, "\nlab "+name+" down\n") || stderr.String() != "" {
		t.Errorf("up --foreground: stdout\n%s\nstderr\n%s", out, stderr.String())
	}
	if labs, _ := emu.Labs(); contains(labs, name) {
		t.Errorf("lab %s still there after SIGTERM", name)
	}
}

// TestUpForegroundRefusesExistingLab: up --foreground refuses, with exit
// 2 and touching nothing, a name that has a state directory, as up does:
// here a daemon still starting (it once built a second lab of the same
// name beside it, and overwrote its owner file).
func TestUpForegroundRefusesExistingLab(t *testing.T) {
	bin, name := rootLab(t, "lx")
	sleeper := startChild(t, "sleep", "600")
	fakeLab(t, name, map[string]any{"pid": sleeper.Process.Pid, "daemon": true}, nil)
	owner, _ := os.ReadFile(filepath.Join(emu.LabDir(name), "owner.json"))
	code, out, errOut := labBin(t, bin, false, "", "up", "line:2", "--scheme", "kernel-bridge", "-p", "stp=off", "--name", name, "--foreground")
	want := fmt.Sprintf("edgefabric: emu: lab %q: lab already exists (run 'edgefabric status %s', or 'edgefabric down %s' to remove it)\n", name, name, name)
	if code != 2 || out != "" || errOut != want {
		t.Errorf("up --foreground on a starting lab: exit %d, stdout %q, stderr\n got  %q\n want %q", code, out, errOut, want)
	}
	if now, _ := os.ReadFile(filepath.Join(emu.LabDir(name), "owner.json")); !bytes.Equal(now, owner) {
		t.Errorf("owner.json changed: %s, was %s", now, owner)
	}
	if nss, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(nss), emu.Prefix(name)) {
		t.Errorf("up --foreground built namespaces beside the starting lab:\n%s", nss)
	}
	// A crashed lab's leftover namespace, no state directory: the same
	// refusal, and no state directory made.
	emu.Cleanup(name, 10*time.Second)
	ns := emu.Prefix(name) + "n1"
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v\n%s", ns, err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "delete", ns).Run() })
	code, out, errOut = labBin(t, bin, false, "", "up", "line:2", "--scheme", "kernel-bridge", "-p", "stp=off", "--name", name, "--foreground")
	want = fmt.Sprintf("edgefabric: emu: lab %q: lab already exists: it has crashed, its process is gone (run 'edgefabric down %s' to remove what it left)\n", name, name)
	if code != 2 || out != "" || errOut != want {
		t.Errorf("up --foreground on a lab's leftovers: exit %d, stdout %q, stderr\n got  %q\n want %q", code, out, errOut, want)
	}
	if _, err := os.Stat(emu.LabDir(name)); err == nil {
		t.Errorf("up --foreground refused lab %s but left %s", name, emu.LabDir(name))
	}
}

// immutableFile creates an immutable file, which nobody can remove, until
// the test ends; it skips the test where the file system cannot.
func immutableFile(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, 0x10 /* FS_IMMUTABLE_FL */); err != nil {
		t.Skipf("skipping: cannot make %s immutable: %v", path, err)
	}
	t.Cleanup(func() { unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, 0) })
	return path
}

// TestLabDownReportsFailure: when down cannot remove everything, it says
// what it did and what failed and exits 1, in text (not "removed") and in
// JSON (the report, still parseable). The obstacle is an immutable file
// in a lab directory this test writes.
func TestLabDownReportsFailure(t *testing.T) {
	if err := emu.CheckRoot(os.Geteuid()); err != nil {
		t.Skipf("skipping: %v", err)
	}
	name := fmt.Sprintf("lf%d", os.Getpid())
	state := emu.State{Name: name, Scheme: "stp", Topology: "line:2", Pid: os.Getpid(), PidStart: 1, Prefix: emu.Prefix(name)}
	fakeLab(t, name, nil, nil)
	stuck := immutableFile(t, filepath.Join(emu.LabDir(name), "stuck"))
	wantErr := "edgefabric: emu: unlinkat " + stuck + ": operation not permitted\n"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"down", name}, "lab " + name + ": the daemon had crashed\n"},
		{[]string{"down", name, "--json"}, "{\n  \"lab\": \"" + name + "\",\n  \"daemon\": \"dead\",\n  \"leftovers\": [],\n  \"killed_processes\": [],\n  \"state_removed\": false\n}\n"},
	} {
		// A crashed daemon's state file, removed by each down.
		data, _ := json.Marshal(state)
		if err := os.WriteFile(filepath.Join(emu.LabDir(name), "state.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out, errOut := topoCLI(c.args...); code != 1 || out != c.want || errOut != wantErr {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1, %q, %q", c.args, code, out, errOut, c.want, wantErr)
		}
	}
	// Only the directory is left, and it cannot be removed: a failure
	// (exit 1), not an unknown lab (exit 2), which status still lists.
	if code, out, errOut := topoCLI("down", name); code != 1 || out != "" || errOut != wantErr {
		t.Errorf("down of a lab whose directory stays: exit %d, stdout %q, stderr %q; want exit 1, \"\", %q", code, out, errOut, wantErr)
	}
}

// TestUpForegroundReportsDownFailure: a foreground lab that cannot remove
// everything when it ends says what failed and exits 1.
func TestUpForegroundReportsDownFailure(t *testing.T) {
	bin, name := rootLab(t, "le")
	labCleanup(t, name)
	up := startForeground(t, bin, jsonPrinted, "up", "line:1", "--scheme", "kernel-bridge", "-p", "stp=off", "--name", name, "--foreground", "--json")
	stuck := immutableFile(t, filepath.Join(emu.LabDir(name), "stuck"))
	up.cmd.Process.Signal(syscall.SIGTERM)
	err := up.wait(t, "SIGTERM")
	stderr := &up.stderr
	var ee *exec.ExitError
	want := "lab " + name + " down\nedgefabric: emu: unlinkat " + stuck + ": operation not permitted\n"
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || stderr.String() != want {
		t.Errorf("up after SIGTERM: %v, stderr\n got  %q\n want %q", err, stderr.String(), want)
	}
	if nss, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(nss), emu.Prefix(name)) {
		t.Errorf("namespaces of %s left:\n%s", name, nss)
	}
}

// TestShellWord: up's "try:" line quotes a node name a shell would split
// or expand, so that it can be pasted; plain names stay as they are.
func TestShellWord(t *testing.T) {
	for in, want := range map[string]string{
		"h1": "h1", "leaf-1.a": "leaf-1.a", "h 1": "'h 1'", "": "''",
		"it's": `'it'\''s'`, "$x": "'$x'", "a*": "'a*'",
	} {
		if got := shellWord(in); got != want {
			t.Errorf("shellWord(%q) = %s, want %s", in, got, want)
		}
	}
}
