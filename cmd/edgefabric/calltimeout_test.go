package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/emu"
)

// TestHungDaemonTimeout: status LAB and link wait for a daemon that
// accepts but never answers no longer than --timeout, and say so; the
// lab list takes --timeout for each daemon too; a --timeout that is not
// positive is bad input. The daemon is a socket this test holds open and
// a process that only sleeps.
func TestHungDaemonTimeout(t *testing.T) {
	if err := emu.CheckRoot(os.Geteuid()); err != nil {
		t.Skipf("skipping: %v", err)
	}
	// A daemon, and an up --foreground that serves its ready lab (not a
	// daemon: it was told "still starting", and link not that the link
	// may have changed).
	hungLab(t, fmt.Sprintf("ht%d", os.Getpid()), "daemon", map[string]any{"daemon": true})
	hungLab(t, fmt.Sprintf("hf%d", os.Getpid()), "process", map[string]any{"stops_on_term": true})
}

func hungLab(t *testing.T, name, who string, ownerFields map[string]any) {
	daemon := startChild(t, "sleep", "600")
	pid := daemon.Process.Pid
	ownerFields["pid"] = pid
	fakeLab(t, name, ownerFields, emu.State{
		Name: name, Scheme: "stp", Topology: "line:1", Pid: pid, PidStart: pidStart(t, pid), Prefix: emu.Prefix(name),
		Nodes: []emu.StateNode{{Name: "s1", Kind: "switch", Namespace: emu.Prefix(name) + "n1"}, {Name: "h1", Kind: "host", Namespace: emu.Prefix(name) + "n2"}},
	})
	ln, err := net.Listen("unix", filepath.Join(emu.LabDir(name), "ctl.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var held []net.Conn // accepted, read from by no one, never answered
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()

	hint := "give it more --timeout, or run 'edgefabric down " + name + "'"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"status", name, "--timeout", "200ms"},
			fmt.Sprintf("edgefabric: lab %s: %s %d did not answer status within 200ms: %s\n", name, who, pid, hint)},
		{[]string{"link", name, "s1", "h1", "down", "--timeout", "300ms"},
			fmt.Sprintf("edgefabric: lab %s: %s %d did not answer link within 300ms (the link may or may not have changed): %s\n", name, who, pid, hint)},
	} {
		start := time.Now()
		code, out, errOut := topoCLI(tc.args...)
		if took := time.Since(start); code != 1 || out != "" || errOut != tc.want || took > 10*time.Second {
			t.Errorf("%v: exit %d after %v, stdout %q, stderr\n got  %q\n want %q", tc.args, code, took.Round(time.Millisecond), out, errOut, tc.want)
		}
	}

	start := time.Now()
	code, out, errOut := topoCLI("status", "--timeout", "200ms")
	if who != "daemon" {
		line := fmt.Sprintf("%s\trunning in process %d, no daemon", name, pid)
		if code != 0 || !strings.Contains(out, line+"\n") || time.Since(start) > 10*time.Second {
			t.Errorf("status --timeout 200ms: exit %d, stderr %q, no line %q in\n%s", code, errOut, line, out)
		}
	} else {
		line := fmt.Sprintf("%s\tdaemon %d does not answer: run 'edgefabric down %s'", name, pid, name)
		if took := time.Since(start); code != 0 || errOut != "" || !strings.Contains(out, line+"\n") || took > 10*time.Second {
			t.Errorf("status --timeout 200ms: exit %d after %v, stderr %q, no line %q in\n%s", code, took.Round(time.Millisecond), errOut, line, out)
		}
	}

	for _, args := range [][]string{
		{"status", name, "--timeout", "0s"},
		{"status", "--timeout", "-1s"},
		{"link", name, "s1", "h1", "up", "--timeout", "0"},
	} {
		code, out, errOut := topoCLI(args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "--timeout") || !strings.Contains(errOut, "must be positive") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and --timeout refused", args, code, out, errOut)
		}
	}
	// The stand-in daemon goes before the cleanup, which would otherwise
	// give it 5 s to leave after its unanswered down.
	daemon.Process.Kill()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			break
		}
	}
}
