package emu

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// netnsRaceEnv asks the test binary, re-run inside a private mount
// namespace, to play the fresh-machine race; its value says whether
// createNS prepares /run/netns first ("prepare") or not ("skip").
const netnsRaceEnv = "EDGEFABRIC_NETNS_RACE"

// TestNetnsDirRace reproduces what happened on fresh machines: a lab's
// namespaces are bound onto files in /run/netns while it is not yet a mount
// point, then "ip netns add" (another test, another tool) bind-mounts the
// directory over itself, and the lab's namespaces can no longer be removed.
// It runs in a private mount namespace with a fresh /run, so the real
// /run/netns is never touched. Without the preparation the same script must
// fail, so the test shows the race rather than assuming it.
func TestNetnsDirRace(t *testing.T) {
	if mode := os.Getenv(netnsRaceEnv); mode != "" {
		netnsRaceChild(t, mode == "prepare")
		return
	}
	needRoot(t)
	needTool(t, "unshare")
	needTool(t, "ip")
	run := func(mode string) (string, error) {
		cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c",
			`mount -t tmpfs edgefabric-test /run && exec "$0" -test.run '^TestNetnsDirRace$' -test.v`, os.Args[0])
		cmd.Env = append(os.Environ(), netnsRaceEnv+"="+mode)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("prepare"); err != nil {
		t.Fatalf("with /run/netns prepared: %v\n%s", err, out)
	}
	out, err := run("skip")
	if err == nil || !strings.Contains(out, "busy") {
		t.Fatalf("without preparing /run/netns the race should leave a namespace that cannot be removed; got %v\n%s", err, out)
	}
}

// netnsRaceChild is the script, run in the private mount namespace.
func netnsRaceChild(t *testing.T, prepare bool) {
	if _, err := os.Stat(netnsDir); err == nil {
		t.Fatalf("%s exists in the fresh /run", netnsDir)
	}
	if !prepare {
		netnsDirOnce.Do(func() {}) // createNS then skips the preparation
		if err := os.MkdirAll(netnsDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	name := Prefix(labName()) + "race"
	h, err := createNS(name, false)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	other := name + "ip"
	if out, err := exec.Command("ip", "netns", "add", other).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v\n%s", err, out)
	}
	if out, err := exec.Command("ip", "netns", "del", other).CombinedOutput(); err != nil {
		t.Errorf("ip netns del: %v\n%s", err, out)
	}
	if err := deleteNS(name); err != nil {
		t.Fatalf("deleteNS: %v", err)
	}
	if left, _ := listNS(name); len(left) > 0 {
		t.Fatalf("namespaces left: %v", left)
	}
}

// TestExecSeesOwnSys: a program started in a namespace sees sysfs as the
// namespace does (/sys/class/net lists its interfaces only, here lo), as
// under "ip netns exec", and the remount stays in the child's own mount
// namespace: this process still sees the machine's interfaces afterwards.
func TestExecSeesOwnSys(t *testing.T) {
	needRoot(t)
	before, err := os.ReadDir("/sys/class/net")
	if err != nil {
		t.Fatal(err)
	}
	_, name := testNS(t, "sys")
	out, err := ExecIn(t.Context(), name, "ls", "/sys/class/net")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := strings.Fields(string(out)); len(got) != 1 || got[0] != "lo" {
		t.Fatalf("/sys/class/net in the namespace lists %q, want only lo (the machine has %d entries)", got, len(before))
	}
	after, err := os.ReadDir("/sys/class/net")
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Fatalf("the machine's /sys/class/net changed: %d entries before, %d after", len(before), len(after))
	}
	// Twice more: every start gets its own mount namespace on a fresh thread.
	for range 2 {
		if out, err := ExecIn(t.Context(), name, "ls", "/sys/class/net"); err != nil || strings.TrimSpace(string(out)) != "lo" {
			t.Fatalf("again: %q %v", out, err)
		}
	}
}

// killNSProcesses kills what runs in a lab namespace but the pids it is
// told to spare (the lab's own daemon, caught on a thread inside one of its
// namespaces, is stopped in order instead; down once SIGKILLed a
// foreground lab that way).
func TestKillNSProcessesSpares(t *testing.T) {
	_, name := testNS(t, "kill")
	start := func() *exec.Cmd {
		cmd := exec.Command("sleep", "60")
		if err := StartIn(name, cmd); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	a, b := start(), start()
	defer a.Process.Kill()
	defer b.Process.Kill()
	killed := killNSProcesses([]string{name}, a.Process.Pid)
	if len(killed) != 1 || killed[0] != b.Process.Pid {
		t.Fatalf("killed %v, want only %d (spared %d)", killed, b.Process.Pid, a.Process.Pid)
	}
	b.Wait()
	if killed := killNSProcesses([]string{name}); len(killed) != 1 || killed[0] != a.Process.Pid {
		t.Fatalf("killed %v, want %d", killed, a.Process.Pid)
	}
	a.Wait()
}

// killNSProcesses returns only once what it killed is gone: down reports
// them killed, and a namespace lives as long as a process in it (CI once
// found the process of a lab it had just taken down still running).
func TestKillNSProcessesWaits(t *testing.T) {
	_, name := testNS(t, "wait")
	var pids []int
	for range 8 {
		pids = append(pids, startSleep(t, name).Process.Pid)
	}
	killed := killNSProcesses([]string{name})
	slices.Sort(killed)
	if !slices.Equal(killed, pids) {
		t.Fatalf("killed %v, want %v", killed, pids)
	}
	for _, pid := range killed {
		if running(pid) {
			t.Errorf("pid %d still runs when killNSProcesses returns", pid)
		}
	}
}
