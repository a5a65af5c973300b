package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/emu"
)

// TestEmuVerbsBadInput: wrong arguments exit 2 with a message, before
// anything needs root or touches the system.
func TestEmuVerbsBadInput(t *testing.T) {
	// Node 1's name is unfit for a namespace and becomes "n1", which node 0
	// is already called.
	clash := filepath.Join(t.TempDir(), "clash.yaml")
	if err := os.WriteFile(clash, []byte("name: clash\nnodes:\n  - {name: n1, kind: host}\n  - {name: a-b, kind: host}\nlinks:\n  - [n1, a-b]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"up", "line:2"}, "--scheme is required"},
		{[]string{"up", "line:2", "--scheme", "nosuch"}, "unknown scheme"},
		{[]string{"up", "line:2", "--scheme", "kernel-bridge", "--name", "Bad-Name"}, "bad lab name"},
		{[]string{"up", "line:2", "--scheme", "kernel-bridge", "--rate", "fast"}, "--rate"},
		{[]string{"up", "line:2", "--scheme", "stp", "--delay", "soon"}, "--delay"},
		{[]string{"up", "line:2", "--scheme", "stp", "--delay", "50us"}, "--delay 50us: below 100µs the emulator applies no delay"},
		{[]string{"up", "line:2", "--scheme", "kernel-bridge", "--delay", "topo"}, "--delay: the kernel bridge forwards in the kernel"},
		{[]string{"up", "line:2", "--scheme", "kernel-bridge", "-p", "novalue"}, "key=value"},
		{[]string{"up", "nosuchtopo:9", "--scheme", "kernel-bridge"}, ""},
		{[]string{"up", clash, "--scheme", "kernel-bridge"}, `nodes "n1" and "a-b" map to the same namespace suffix n1`},
		// Scheme parameters are checked before a daemon starts.
		{[]string{"up", "line:2", "--scheme", "stp", "-p", "bogus=1"}, `unknown param "bogus"`},
		{[]string{"up", "line:2", "--scheme", "kernel-bridge", "-p", "bogus=1"}, `unknown param "bogus"`},
		{[]string{"up"}, "takes 1 argument"},
		{[]string{"down"}, "takes 1 argument"},
		{[]string{"down", "a-b"}, "bad lab name"},
		{[]string{"link", "lab", "s1", "s2", "sideways"}, "want down or up"},
		{[]string{"link", "lab", "s1"}, "takes 4 argument"},
		{[]string{"exec", "lab", "h1"}, "needs a lab, a node and a command"},
		{[]string{"exec", "lab", "--", "h1", "ping"}, `put "--" right after`},
		{[]string{"status", "a", "b"}, "at most one lab"},
		{[]string{"status", "A"}, "bad lab name"},
	} {
		var out, errb bytes.Buffer
		code := run(c.args, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, code, errb.String(), c.want)
		}
	}
}

// buildBinary builds edgefabric for tests that run it as a daemon. go
// build takes GOFLAGS from the environment: GOFLAGS=-overlay=FILE go test
// builds this binary from the overlaid sources too.
func buildBinary(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("skipping: the go tool is needed to build the daemon binary")
	}
	bin := filepath.Join(t.TempDir(), "edgefabric")
	out, err := exec.Command(gobin, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestEmuVerbsLifecycle(t *testing.T) {
	if err := emu.CheckRoot(os.Geteuid()); err != nil {
		t.Skipf("skipping: %v", err)
	}
	if _, err := exec.LookPath("ping"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("ping is not installed and CI=%s (scripts/deps installs it)", os.Getenv("CI"))
		}
		t.Skip("skipping: ping is not installed (apt-get install iputils-ping)")
	}
	bin := buildBinary(t)
	name := fmt.Sprintf("c%d", os.Getpid())
	t.Cleanup(func() {
		emu.Cleanup(name, 10*time.Second) // also when the test failed midway
		if labs, _ := emu.Labs(); contains(labs, name) {
			t.Errorf("lab %s left behind", name)
		}
	})
	ef := func(wantCode int, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if code != wantCode {
			t.Fatalf("edgefabric %v: exit %d, want %d\n%s", args, code, wantCode, out.String())
		}
		return out.String()
	}
	// Not root: a clear error, exit 1, nothing created.
	os.Chmod(filepath.Dir(bin), 0o755) // t.TempDir and its parent are private
	os.Chmod(filepath.Dir(filepath.Dir(bin)), 0o755)
	nobody := exec.Command(bin, "up", "line:2", "--scheme", "kernel-bridge", "--name", name)
	nobody.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if out, err := nobody.CombinedOutput(); err == nil || !strings.Contains(string(out), "needs root") {
		t.Fatalf("up as nobody: %v\n%s", err, out)
	} else if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("up as nobody: %v, want exit 1", err)
	}
	if labs, _ := emu.Labs(); contains(labs, name) {
		t.Fatal("up as nobody created the lab")
	}
	out := ef(0, "up", "line:2", "--scheme", "kernel-bridge", "--name", name, "-p", "stp=off")
	if !strings.Contains(out, "lab "+name+" up") {
		t.Fatalf("up said:\n%s", out)
	}
	ef(2, "up", "line:2", "--scheme", "kernel-bridge", "--name", name) // exists
	ef(0, "exec", name, "h1", "--", "ping", "-c", "1", "-W", "2", "10.0.0.4")
	ef(3, "exec", name, "h1", "--", "sh", "-c", "exit 3") // the command's status
	ef(2, "exec", name, "h9", "--", "true")
	ef(0, "link", name, "s1", "s2", "down")
	ef(1, "exec", name, "h1", "--", "ping", "-c", "1", "-W", "1", "10.0.0.4")
	ef(2, "link", name, "h1", "h4", "down")
	var st emu.Status
	if err := json.Unmarshal([]byte(ef(0, "status", name, "--json")), &st); err != nil {
		t.Fatal(err)
	}
	downLinks := 0
	for _, l := range st.Links {
		if !l.Up {
			downLinks++
		}
	}
	if st.Name != name || len(st.Nodes) != 6 || downLinks != 1 {
		t.Fatalf("status: %d nodes, %d links down: %+v", len(st.Nodes), downLinks, st)
	}
	ef(0, "link", name, "s1", "s2", "up")
	ef(0, "exec", name, "h1", "--", "ping", "-c", "1", "-W", "2", "10.0.0.4")
	if out := ef(0, "status"); !strings.Contains(out, name+"\trunning") {
		t.Fatalf("status list:\n%s", out)
	}
	if out := ef(0, "down", name); !strings.Contains(out, "daemon stopped") {
		t.Fatalf("down said:\n%s", out)
	}
	ef(2, "down", name) // nothing left
	ef(2, "exec", name, "h1", "--", "true")
}

// TestEmuDownWhileStarting: down on a lab whose up is still starting stops
// its daemon (it once kept running and, failing a minute later, removed by
// name the next lab of that name), and two ups of one name at once leave
// the winner whole and refuse the other with exit 2.
func TestEmuDownWhileStarting(t *testing.T) {
	bin, name := rootLab(t, "w")
	// STP with 802.1D timers: the up waits about 30 s for convergence.
	up := exec.Command(bin, "up", "ring:3", "--scheme", "stp", "--name", name)
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if pid, ok := emu.Owner(name); ok && pid > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the daemon never recorded itself")
		}
		time.Sleep(100 * time.Millisecond)
	}
	pid, _ := emu.Owner(name)
	if out, err := exec.Command(bin, "down", name).CombinedOutput(); err != nil {
		t.Fatalf("down: %v\n%s", err, out)
	}
	done := make(chan error, 1)
	go func() { done <- up.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		up.Process.Kill()
		t.Fatal("up still waiting 30 s after down")
	}
	if syscall.Kill(pid, 0) == nil {
		if data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); !strings.Contains(string(data), ") Z") {
			t.Fatalf("daemon %d still runs after down", pid)
		}
	}
	// Two ups of one name at once.
	type res struct {
		code int
		out  string
	}
	results := make(chan res, 2)
	for range 2 {
		go func() {
			cmd := exec.Command(bin, "up", "line:2", "--scheme", "kernel-bridge", "-p", "stp=off", "--name", name)
			out, err := cmd.CombinedOutput()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			results <- res{code, string(out)}
		}()
	}
	a, b := <-results, <-results
	if a.code+b.code != 2 || a.code*b.code != 0 {
		t.Fatalf("two ups: exit %d and %d, want 0 and 2\n%s\n%s", a.code, b.code, a.out, b.out)
	}
	labs, _ := emu.Labs()
	if !contains(labs, name) {
		t.Fatal("the winner's lab is gone")
	}
	// Every namespace of the winner's lab is still there.
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), emu.Prefix(name)); n != 6 {
		t.Fatalf("%d namespaces named %s*, want 6 (line:2)", n, emu.Prefix(name))
	}
}

// TestEmuDownKillsExecProcesses: a command left running in a lab's
// namespace (exec ... &, iperf3 -s -D) is killed by down; it would keep
// the namespace, and its links, alive out of sight.
func TestEmuDownKillsExecProcesses(t *testing.T) {
	bin, name := rootLab(t, "k")
	if out, err := exec.Command(bin, "up", "line:2", "--scheme", "kernel-bridge", "-p", "stp=off", "--name", name).CombinedOutput(); err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	marker := fmt.Sprintf("sleep %d", 600+os.Getpid()%1000)
	if out, err := exec.Command(bin, "exec", name, "h2", "--", "sh", "-c", "setsid "+marker+" >/dev/null 2>&1 &").CombinedOutput(); err != nil {
		t.Fatalf("exec: %v\n%s", err, out)
	}
	time.Sleep(300 * time.Millisecond)
	out, err := exec.Command(bin, "down", name).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "killed 1 processes") {
		t.Fatalf("down: %v\n%s", err, out)
	}
	if p, _ := exec.Command("pgrep", "-f", marker).Output(); len(p) > 0 {
		exec.Command("pkill", "-f", marker).Run()
		t.Fatalf("%q still runs after down (pid %s)", marker, p)
	}
}

// rootLab skips without root, else builds the binary and returns it with a
// lab name of this process (prefix + pid) removed when the test ends.
func rootLab(t *testing.T, prefix string) (bin, name string) {
	t.Helper()
	if err := emu.CheckRoot(os.Geteuid()); err != nil {
		t.Skipf("skipping: %v", err)
	}
	bin = buildBinary(t)
	name = fmt.Sprintf("%s%d", prefix, os.Getpid())
	t.Cleanup(func() { emu.Cleanup(name, 10*time.Second) })
	return bin, name
}

// up --foreground --json: stdout is the lab's state as one JSON document
// and nothing else (it printed the text status, then "lab X down"); the
// closing line goes to stderr.
func TestUpForegroundJSON(t *testing.T) {
	if err := emu.CheckRoot(os.Geteuid()); err != nil {
		t.Skipf("skipping: %v", err)
	}
	bin := buildBinary(t)
	name := fmt.Sprintf("f%d", os.Getpid())
	t.Cleanup(func() {
		emu.Cleanup(name, 10*time.Second)
		if labs, _ := emu.Labs(); contains(labs, name) {
			t.Errorf("lab %s left behind", name)
		}
	})
	up := startForeground(t, bin, jsonPrinted, "up", "line:2", "--scheme", "kernel-bridge", "-p", "stp=off", "--name", name, "--foreground", "--json")
	downOut, err := exec.Command(bin, "down", name).CombinedOutput()
	if err != nil {
		t.Fatalf("down: %v\n%s", err, downOut)
	}
	if err := up.wait(t, "down"); err != nil {
		t.Fatalf("up: %v\n%s\ndown said: %s", err, up.stderr.String(), downOut)
	}
	// No daemon ran it: down names the process it stopped.
	if want := fmt.Sprintf("lab %s: process %d, which ran it, stopped\nlab %s removed\n", name, up.cmd.Process.Pid, name); string(downOut) != want {
		t.Errorf("down said %q, want %q", downOut, want)
	}
	var st emu.Status
	out := up.stdout.String()
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&st); err != nil || st.Name != name {
		t.Fatalf("stdout is not the lab's JSON state: %v\n%s", err, out)
	}
	if rest, _ := io.ReadAll(io.MultiReader(dec.Buffered(), strings.NewReader(out[dec.InputOffset():]))); len(bytes.TrimSpace(rest)) > 0 {
		t.Fatalf("more than the JSON document on stdout: %q", rest)
	}
	if !strings.Contains(up.stderr.String(), "lab "+name+" down") {
		t.Fatalf("stderr lacks the closing line:\n%s", up.stderr.String())
	}
}

// lockedBuffer is a bytes.Buffer a test may read while a command writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// foreground is an `up --foreground` run as a child process.
type foreground struct {
	cmd            *exec.Cmd
	stdout, stderr lockedBuffer
	done           chan error
}

// startForeground runs bin with args (an up --foreground command line) and
// returns once its stdout satisfies ready, failing the test if it exits
// first or takes more than 60 s.
func startForeground(t *testing.T, bin string, ready func(stdout string) bool, args ...string) *foreground {
	t.Helper()
	f := &foreground{cmd: exec.Command(bin, args...), done: make(chan error, 1)}
	f.cmd.Stdout, f.cmd.Stderr = &f.stdout, &f.stderr
	if err := f.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { f.done <- f.cmd.Wait() }()
	deadline := time.After(60 * time.Second)
	for !ready(f.stdout.String()) {
		select {
		case err := <-f.done:
			t.Fatalf("up exited early: %v\n%s%s", err, f.stdout.String(), f.stderr.String())
		case <-deadline:
			f.cmd.Process.Kill()
			t.Fatalf("no status within 60 s:\n%s", f.stdout.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return f
}

// wait returns up's exit error once it ends, after what (for the failure
// message) should have ended it; it kills up and fails the test after 60 s.
func (f *foreground) wait(t *testing.T, what string) error {
	t.Helper()
	select {
	case err := <-f.done:
		return err
	case <-time.After(60 * time.Second):
		f.cmd.Process.Kill()
		t.Fatalf("up did not exit after %s", what)
		return nil
	}
}

// jsonPrinted: up --json has printed its status (the document ends in "}").
func jsonPrinted(stdout string) bool { return strings.HasSuffix(strings.TrimSpace(stdout), "}") }
