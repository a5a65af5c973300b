package emu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/scheme"
	"golang.org/x/sys/unix"
)

// daemonEnv makes the test binary act as a lab daemon (see TestMain): the
// value is the lab's name.
const daemonEnv = "EMU_TEST_DAEMON"

func TestMain(m *testing.M) {
	if name := os.Getenv(daemonEnv); name != "" {
		os.Exit(testDaemon(name))
	}
	if name := os.Getenv(panicEnv); name != "" {
		os.Exit(testPanicLab(name))
	}
	os.Exit(m.Run())
}

// testDaemon runs a kernel-bridge lab on a 2-host star as a daemon would.
func testDaemon(name string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	g := star(nil, 2)
	schemeName := KernelBridge
	if os.Getenv("EMU_TEST_DAEMON_FAIL") != "" {
		schemeName = "nosuch"
	}
	l, err := Up(ctx, g, schemeName, Options{Name: name, Topology: "star2", Scheme: scheme.Options{Params: map[string]string{"stp": "off"}}})
	if err != nil {
		NotifyReady(err)
		return 1
	}
	defer l.Down()
	go func() {
		// Serve writes the state before it listens; report ready once
		// the socket is there (net.Listen binds and listens at once).
		if waitUntil(func() bool { _, err := os.Stat(socketPath(name)); return err == nil }) {
			NotifyReady(nil)
			return
		}
		NotifyReady(errors.New("control socket did not appear"))
	}()
	if err := Serve(ctx, l); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func spawnTestDaemon(t *testing.T) string {
	t.Helper()
	name := labName()
	t.Setenv(daemonEnv, name)
	cleanupLab(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := SpawnDaemon(ctx, name, []string{os.Args[0], "-test.run=^$"}); err != nil {
		t.Fatalf("SpawnDaemon: %v", err)
	}
	return name
}

func TestDaemonLifecycle(t *testing.T) {
	needRoot(t)
	name := spawnTestDaemon(t)
	st, err := RemoteStatus(name)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Ready || len(st.Nodes) != 3 || st.Pid == 0 {
		t.Fatalf("status: %+v", st)
	}
	// Only root may take the lab's links down or stop it.
	if fi, err := os.Stat(socketPath(name)); err != nil {
		t.Fatal(err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Fatalf("control socket mode %v, want 0600", fi.Mode().Perm())
	}
	if err := RemoteSetLink(name, "h1", "s1", false); err != nil {
		t.Fatal(err)
	}
	if err := RemoteSetLink(name, "h1", "h2", false); err == nil || !strings.Contains(err.Error(), "no link") {
		t.Fatalf("link between non-neighbours: %v", err)
	}
	st, _ = RemoteStatus(name)
	if st.Links[0].Up {
		t.Fatalf("link h1-s1 reported up after down: %+v", st.Links[0])
	}
	ns, err := NodeNamespace(name, "h2")
	if err != nil || ns != Prefix(name)+"h2" {
		t.Fatalf("NodeNamespace = %q, %v", ns, err)
	}
	rep, err := Cleanup(name, 10*time.Second)
	if err != nil || rep.Daemon != "stopped" || len(rep.Leftovers) != 0 {
		t.Fatalf("Cleanup = %+v, %v; want a clean stop", rep, err)
	}
	if _, err := os.Stat(LabDir(name)); !os.IsNotExist(err) {
		t.Fatalf("state directory left after a clean stop: %v", err)
	}
	if _, err := RemoteStatus(name); !errors.Is(err, ErrDaemon) {
		t.Fatalf("status after down: %v", err)
	}
}

func TestDownRemovesLeftoversOfKilledDaemon(t *testing.T) {
	needRoot(t)
	name := spawnTestDaemon(t)
	s, err := ReadState(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Kill(s.Pid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !waitGone(s.Pid, s.PidStart, 10*time.Second) {
		t.Fatal("daemon survived SIGKILL")
	}
	labs, _ := Labs()
	found := false
	for _, l := range labs {
		found = found || l == name
	}
	if !found {
		t.Fatalf("Labs() = %v, misses the crashed lab %s", labs, name)
	}
	rep, err := Cleanup(name, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Daemon != "dead" || len(rep.Leftovers) != 3 || !rep.StateRemoved {
		t.Fatalf("Cleanup = %+v; want the dead daemon's 3 namespaces reported", rep)
	}
	if left, _ := listNS(Prefix(name)); len(left) != 0 {
		t.Fatalf("left after cleanup: %v", left)
	}
	if _, err := Cleanup(name, time.Second); !errors.Is(err, ErrNoLab) {
		t.Fatalf("second Cleanup = %v, want ErrNoLab", err)
	}
}

func TestParseState(t *testing.T) {
	for _, bad := range []string{
		``, `{`, `[]`, `{"name":"Bad-Name"}`, `{"name":"ok","pid":-1}`,
		`{"name":"ok","nodes":[{"name":"h1","namespace":"/etc"}]}`,
		`{"name":"ok","nodes":[{"name":"h1","namespace":"ef-other-h1"}]}`,
		`{"name":"ok","nodes":[{"name":"h1","namespace":"ef-ok-../../x"}]}`,
	} {
		if _, err := ParseState([]byte(bad)); !errors.Is(err, ErrBadState) {
			t.Errorf("ParseState(%q) = %v, want ErrBadState", bad, err)
		}
	}
	s, err := ParseState([]byte(`{"name":"ok","pid":5,"nodes":[{"name":"h1","namespace":"ef-ok-h1"}]}`))
	if err != nil || s.Pid != 5 || s.Nodes[0].Namespace != "ef-ok-h1" {
		t.Fatalf("ParseState = %+v, %v", s, err)
	}
}

func TestParseRequest(t *testing.T) {
	for _, bad := range []string{``, `nope`, `{"op":"reboot"}`, `{"op":"link","a":"h1"}`, `{"op":"status"}` + strings.Repeat(" ", maxRequest)} {
		if _, err := ParseRequest([]byte(bad)); !errors.Is(err, ErrBadRequest) {
			t.Errorf("ParseRequest(%.40q) = %v, want ErrBadRequest", bad, err)
		}
	}
	r, err := ParseRequest([]byte(`{"op":"link","a":"s1","b":"s2","up":true}`))
	if err != nil || r.A != "s1" || !r.Up {
		t.Fatalf("ParseRequest = %+v, %v", r, err)
	}
}

func TestNames(t *testing.T) {
	for _, ok := range []string{"a", "lab1", "x_y", "0123456789abcdef"} {
		if err := ValidateName(ok); err != nil {
			t.Errorf("ValidateName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a-b", "A", "_a", "0123456789abcdefg", "a/b", "a.b"} {
		if err := ValidateName(bad); !errors.Is(err, ErrBadLabName) {
			t.Errorf("ValidateName(%q) = %v, want ErrBadLabName", bad, err)
		}
	}
}

func FuzzParseState(f *testing.F) {
	f.Add([]byte(`{"name":"ok","pid":5,"nodes":[{"name":"h1","namespace":"ef-ok-h1"}]}`))
	f.Add([]byte(`{"name":"x","nodes":[{"namespace":"ef-x-../.."}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseState(data)
		if err != nil {
			return
		}
		for _, n := range s.Nodes {
			if !strings.HasPrefix(n.Namespace, Prefix(s.Name)) || strings.Contains(n.Namespace, "/") {
				t.Fatalf("accepted namespace %q outside lab %q", n.Namespace, s.Name)
			}
		}
	})
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(`{"op":"link","a":"s1","b":"s2","up":true}`))
	f.Add([]byte(`{"op":"status"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRequest(data)
		if err == nil && r.Op == "link" && (r.A == "" || r.B == "") {
			t.Fatalf("accepted link request without ends: %+v", r)
		}
	})
}

// TestSpawnFailureLeavesNothing: a daemon that fails (here: a scheme that
// does not exist) reports its error and leaves no state behind, so the
// name can be used again.
func TestSpawnFailureLeavesNothing(t *testing.T) {
	needRoot(t)
	name := labName()
	t.Setenv(daemonEnv, name)
	t.Setenv("EMU_TEST_DAEMON_FAIL", "1")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := SpawnDaemon(ctx, name, []string{os.Args[0], "-test.run=^$"})
	if err == nil || !strings.Contains(err.Error(), "unknown scheme") {
		t.Fatalf("SpawnDaemon = %v, want the daemon's error", err)
	}
	if labs, _ := Labs(); slices.Contains(labs, name) {
		t.Fatalf("failed daemon left lab %s behind", name)
	}
	if err := SpawnDaemon(ctx, name, []string{"/nonexistent/edgefabric"}); err == nil {
		t.Fatal("spawning a missing binary succeeded")
	}
	if labs, _ := Labs(); slices.Contains(labs, name) {
		t.Fatalf("failed spawn left lab %s behind", name)
	}
}

// TestCleanupStopsDaemonWithoutRecords: a running daemon whose state
// file and owner record are both unreadable still answers on its socket;
// Cleanup asks it who it is and stops it. It removed the lab's namespace
// names and its state directory and left the daemon running for good,
// holding the namespaces, nameless, out of reach of every down.
func TestCleanupStopsDaemonWithoutRecords(t *testing.T) {
	needRoot(t)
	name := spawnTestDaemon(t)
	st, err := RemoteStatus(name)
	if err != nil {
		t.Fatal(err)
	}
	start, err := procStart(st.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer stopProcess(st.Pid, start, time.Second) // should the test fail
	for _, f := range []string{statePath(name), ownerPath(name)} {
		if err := os.WriteFile(f, []byte("{garbage"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Cleanup(name, 10*time.Second)
	if err != nil {
		t.Fatalf("Cleanup: %v", err)
	}
	if rep.Daemon != "stopped" {
		t.Errorf("Cleanup reports daemon %q, want stopped", rep.Daemon)
	}
	if !waitGone(st.Pid, start, time.Second) {
		t.Errorf("daemon %d still runs after down", st.Pid)
	}
}

// TestSpawnSetupFailureReleasesName: a SpawnDaemon that fails after its
// claim but before the daemon starts (here: no pipe, as when the process
// is out of file descriptors) gives the name back. Its claim stayed, and
// the lab was listed as crashed once the up had exited.
func TestSpawnSetupFailureReleasesName(t *testing.T) {
	needRoot(t)
	name := labName()
	cleanupLab(t, name)
	errPipe := errors.New("test: no pipe")
	spawnPipe = func() (*os.File, *os.File, error) { return nil, nil, errPipe }
	defer func() { spawnPipe = os.Pipe }()
	if err := SpawnDaemon(context.Background(), name, []string{"/bin/true"}); !errors.Is(err, errPipe) {
		t.Fatalf("SpawnDaemon = %v, want the pipe's error", err)
	}
	if _, err := os.Stat(LabDir(name)); !os.IsNotExist(err) {
		t.Errorf("state directory after the failed spawn: %v, want none", err)
	}
	if labs, _ := Labs(); slices.Contains(labs, name) {
		t.Errorf("lab %s listed after a spawn that started nothing", name)
	}
}

// FuzzParseProcStat: a /proc/PID/stat line (the command name in
// parentheses may hold anything, ')' and spaces included) gives the start
// time and state it holds, or an error; an accepted line written back
// with another command name parses to the same.
func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("1234 (sleep) S 1 1234 1234 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10 18446744073709551615\n"))
	f.Add([]byte("7 (a) b) c) Z 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 42"))
	f.Add([]byte("1 (x) R"))
	f.Fuzz(func(t *testing.T, data []byte) {
		start, state, err := parseProcStat(data)
		if err != nil {
			return
		}
		i := strings.LastIndexByte(string(data), ')')
		again, state2, err := parseProcStat([]byte("1 (other name)" + string(data[i+1:])))
		if err != nil || again != start || state2 != state {
			t.Fatalf("%q: %d %c, rewritten: %d %c %v", data, start, state, again, state2, err)
		}
		if state == ' ' || state == ')' {
			t.Fatalf("%q: state %q", data, state)
		}
	})
}
