package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/emu"
)

// TestEmuVerbsBadInput: wrong arguments exit 2 with a message, before
// anything needs root or touches the system.
func TestEmuVerbsBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"up", "line:2"}, "--scheme is required"},
		{[]string{"up", "line:2", "--scheme", "nosuch"}, "unknown scheme"},
		{[]string{"up", "line:2", "--scheme", "kernel-bridge", "--name", "Bad-Name"}, "bad lab name"},
		{[]string{"up", "line:2", "--scheme", "kernel-bridge", "--rate", "fast"}, "--rate"},
		{[]string{"up", "line:2", "--scheme", "kernel-bridge", "-p", "novalue"}, "key=value"},
		{[]string{"up", "nosuchtopo:9", "--scheme", "kernel-bridge"}, ""},
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

// buildBinary builds edgefabric for tests that run it as a daemon.
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
		if os.Getenv("CI") == "true" {
			t.Fatal("ping is not installed")
		}
		t.Skip("skipping: ping is not installed (apt-get install iputils-ping)")
	}
	bin := buildBinary(t)
	name := fmt.Sprintf("c%d", os.Getpid()%1000000)
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
