package emu

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// StateDir holds one directory per lab: state.json, ctl.sock, daemon.log.
const StateDir = "/run/edgefabric"

// LabDir returns the lab's state directory.
func LabDir(name string) string { return filepath.Join(StateDir, name) }

func statePath(name string) string  { return filepath.Join(LabDir(name), "state.json") }
func socketPath(name string) string { return filepath.Join(LabDir(name), "ctl.sock") }

// LogPath returns the lab daemon's log file.
func LogPath(name string) string { return filepath.Join(LabDir(name), "daemon.log") }

// State is what a lab daemon writes to state.json: enough for exec (which
// needs no daemon) and for down to find and check the daemon.
type State struct {
	Name     string `json:"name"`
	Scheme   string `json:"scheme"`
	Topology string `json:"topology"`
	Pid      int    `json:"pid"`
	// PidStart is the daemon's start time in clock ticks since boot
	// (/proc/PID/stat field 22), so that a recycled pid is never signalled.
	PidStart uint64      `json:"pid_start"`
	Started  time.Time   `json:"started"`
	Prefix   string      `json:"prefix"`
	Nodes    []StateNode `json:"nodes"`
	Links    []StateLink `json:"links"`
}

// StateNode is one node of a lab.
type StateNode struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	IP        string `json:"ip,omitempty"`
}

// StateLink is one link: its ends and their interfaces.
type StateLink struct {
	A   string `json:"a"`
	AIf string `json:"a_if"`
	B   string `json:"b"`
	BIf string `json:"b_if"`
}

// ErrBadState is returned for a state file that cannot be read.
var ErrBadState = errors.New("bad state file")

// ParseState decodes and checks a state file.
func ParseState(data []byte) (*State, error) {
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("emu: %w: %v", ErrBadState, err)
	}
	if err := ValidateName(s.Name); err != nil {
		return nil, fmt.Errorf("emu: %w: %v", ErrBadState, err)
	}
	if s.Pid < 0 {
		return nil, fmt.Errorf("emu: %w: pid %d", ErrBadState, s.Pid)
	}
	for _, n := range s.Nodes {
		if !strings.HasPrefix(n.Namespace, Prefix(s.Name)) || strings.ContainsAny(n.Namespace, "/\x00") {
			return nil, fmt.Errorf("emu: %w: node %q: namespace %q lacks the lab's prefix", ErrBadState, n.Name, n.Namespace)
		}
	}
	return &s, nil
}

// ReadState reads a lab's state file.
func ReadState(name string) (*State, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(statePath(name))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("emu: lab %q: %w", name, ErrNoLab)
		}
		return nil, fmt.Errorf("emu: %w", err)
	}
	s, err := ParseState(data)
	if err != nil {
		return nil, err
	}
	if s.Name != name {
		return nil, fmt.Errorf("emu: %w: %s names lab %q", ErrBadState, statePath(name), s.Name)
	}
	return s, nil
}

// State returns the lab's state record.
func (l *Lab) State() State {
	s := State{Name: l.name, Scheme: l.scheme, Topology: l.opts.Topology, Started: l.start.UTC(), Prefix: Prefix(l.name)}
	if s.Topology == "" {
		s.Topology = l.g.Name
	}
	for _, ln := range l.nodes {
		n := StateNode{Name: ln.name, Kind: ln.kind.String(), Namespace: ln.ns}
		if ln.ip.IsValid() {
			n.IP = ln.ip.String()
		}
		s.Nodes = append(s.Nodes, n)
	}
	for _, ls := range l.Status().Links {
		s.Links = append(s.Links, StateLink{A: ls.A, AIf: ls.AIf, B: ls.B, BIf: ls.BIf})
	}
	return s
}

// NodeNamespace returns the namespace of node in a lab run by a daemon.
func NodeNamespace(lab, node string) (string, error) {
	s, err := ReadState(lab)
	if err != nil {
		return "", err
	}
	for _, n := range s.Nodes {
		if n.Name == node {
			return n.Namespace, nil
		}
	}
	return "", fmt.Errorf("emu: lab %s: %w %q", lab, ErrUnknownNode, node)
}

// Request is one control-socket request: one JSON object per connection.
type Request struct {
	Op string `json:"op"` // "status", "link", "down"
	A  string `json:"a,omitempty"`
	B  string `json:"b,omitempty"`
	Up bool   `json:"up,omitempty"`
}

// Response answers a Request.
type Response struct {
	OK     bool    `json:"ok"`
	Error  string  `json:"error,omitempty"`
	Status *Status `json:"status,omitempty"`
}

// ErrBadRequest is answered to a malformed control request.
var ErrBadRequest = errors.New("bad control request")

// maxRequest bounds a control request.
const maxRequest = 4096

// ParseRequest decodes and checks a control request.
func ParseRequest(data []byte) (Request, error) {
	var r Request
	if len(data) > maxRequest {
		return r, fmt.Errorf("emu: %w: %d bytes", ErrBadRequest, len(data))
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("emu: %w: %v", ErrBadRequest, err)
	}
	switch r.Op {
	case "status", "down":
	case "link":
		if r.A == "" || r.B == "" {
			return r, fmt.Errorf("emu: %w: link needs a and b", ErrBadRequest)
		}
	default:
		return r, fmt.Errorf("emu: %w: unknown op %q", ErrBadRequest, r.Op)
	}
	return r, nil
}

// Serve runs a lab's daemon side: it writes state.json, answers the control
// socket, and returns (after removing the socket and state) when ctx is done
// or a "down" request arrives. The caller then calls lab.Down.
func Serve(ctx context.Context, l *Lab) error {
	dir := LabDir(l.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("emu: %w", err)
	}
	st := l.State()
	st.Pid = os.Getpid()
	st.PidStart, _ = procStart(st.Pid)
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := statePath(l.name) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("emu: %w", err)
	}
	if err := os.Rename(tmp, statePath(l.name)); err != nil {
		return fmt.Errorf("emu: %w", err)
	}
	os.Remove(socketPath(l.name))
	ln, err := listenPrivate(socketPath(l.name))
	if err != nil {
		return fmt.Errorf("emu: control socket: %w", err)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	// The caller calls lab.Down once Serve returns: the requests still
	// being answered finish first (Down refuses any that come later). A
	// client that has not sent its request by then is cut off: an idle
	// one held the daemon's exit for its 30-s deadline.
	var inflight sync.WaitGroup
	var connMu sync.Mutex
	conns := map[net.Conn]bool{}
	defer func() {
		connMu.Lock()
		for c := range conns {
			c.SetReadDeadline(time.Now())
		}
		connMu.Unlock()
		inflight.Wait()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			break
		}
		// Set here, not in the handler: the cut-off above must come after.
		c.SetDeadline(time.Now().Add(30 * time.Second))
		connMu.Lock()
		conns[c] = true
		connMu.Unlock()
		inflight.Add(1)
		go func() {
			defer inflight.Done()
			defer func() {
				connMu.Lock()
				delete(conns, c)
				connMu.Unlock()
			}()
			defer c.Close()
			line, err := bufio.NewReaderSize(io.LimitReader(c, maxRequest+1), maxRequest+1).ReadBytes('\n')
			if err != nil && err != io.EOF {
				return
			}
			resp := handle(l, line, stop)
			json.NewEncoder(c).Encode(resp)
		}()
	}
	os.Remove(socketPath(l.name))
	os.Remove(statePath(l.name))
	return nil
}

// socketBound, when set (tests), is called with the path a control
// socket was bound at, before its mode is set.
var socketBound func(path string)

// listenPrivate listens on a unix socket at path that only root can
// connect to, from the moment it exists: whoever may connect may take
// links down or stop the lab. A socket is made with the mode the umask
// leaves (with umask 0, anyone's), and one made at path and then set to
// 0600 could be connected to in between, the connection lasting. So it
// is bound in a directory of its own only root can enter, set to 0600,
// and then moved to path.
func listenPrivate(path string) (net.Listener, error) {
	dir, err := os.MkdirTemp(filepath.Dir(path), ".ctl-*") // 0700
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, filepath.Base(path))
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, err
	}
	// The file moves: its removal is Serve's, by its final name.
	ln.SetUnlinkOnClose(false)
	if socketBound != nil {
		socketBound(tmp)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

func handle(l *Lab, line []byte, stop func()) Response {
	req, err := ParseRequest(line)
	if err != nil {
		return Response{Error: err.Error()}
	}
	switch req.Op {
	case "status":
		s := l.Status()
		s.Pid = os.Getpid()
		return Response{OK: true, Status: &s}
	case "link":
		if err := l.SetLink(req.A, req.B, req.Up); err != nil {
			return Response{Error: err.Error()}
		}
		return Response{OK: true}
	default: // down
		stop()
		return Response{OK: true}
	}
}

// call sends one request to a lab's daemon.
func call(name string, req Request, timeout time.Duration) (*Response, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	c, err := net.DialTimeout("unix", socketPath(name), timeout)
	if err != nil {
		return nil, fmt.Errorf("emu: lab %q: %w: no daemon answers on %s (%v)", name, ErrDaemon, socketPath(name), err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	data, _ := json.Marshal(req)
	if _, err := c.Write(append(data, '\n')); err != nil {
		return nil, fmt.Errorf("emu: lab %q: %w: %v", name, ErrDaemon, err)
	}
	var resp Response
	if err := json.NewDecoder(io.LimitReader(c, 64<<20)).Decode(&resp); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, fmt.Errorf("emu: lab %q: %w: no answer within %v: %w", name, ErrDaemon, timeout, err)
		}
		return nil, fmt.Errorf("emu: lab %q: %w: bad answer: %v", name, ErrDaemon, err)
	}
	if !resp.OK {
		// The daemon's Lab names the lab in its errors already ("emu:
		// lab x: unknown node"): name it once.
		msg := strings.TrimPrefix(resp.Error, "emu: lab "+name+": ")
		return &resp, fmt.Errorf("emu: lab %q: %s", name, msg)
	}
	return &resp, nil
}

// DefaultCallTimeout bounds the wait for a lab's daemon to answer a
// request (status LAB and link take --timeout to change it).
const DefaultCallTimeout = 30 * time.Second

// RemoteStatus asks a lab's daemon for its status.
func RemoteStatus(name string) (*Status, error) { return RemoteStatusWithin(name, DefaultCallTimeout) }

// RemoteStatusWithin is RemoteStatus with its own bound on the wait.
func RemoteStatusWithin(name string, timeout time.Duration) (*Status, error) {
	resp, err := call(name, Request{Op: "status"}, timeout)
	if err != nil {
		return nil, err
	}
	if resp.Status == nil {
		return nil, fmt.Errorf("emu: lab %q: %w: status missing", name, ErrDaemon)
	}
	return resp.Status, nil
}

// RemoteSetLink asks a lab's daemon to fail or repair the links between a
// and b.
func RemoteSetLink(name, a, b string, up bool) error {
	return RemoteSetLinkWithin(name, a, b, up, DefaultCallTimeout)
}

// RemoteSetLinkWithin is RemoteSetLink with its own bound on the wait.
// When the daemon does not answer in time, the links may or may not have
// changed.
func RemoteSetLinkWithin(name, a, b string, up bool, timeout time.Duration) error {
	_, err := call(name, Request{Op: "link", A: a, B: b, Up: up}, timeout)
	return err
}

// CleanupReport says what Cleanup found and did.
type CleanupReport struct {
	// Daemon is "stopped" (answered and shut down), "killed" (alive but
	// unresponsive), "dead" (state file but no process: a crash),
	// "in-process" (the lab of a live process that runs no daemon) or
	// "none".
	Daemon string `json:"daemon"`
	// Owner is the pid the lab's owner record named when down first
	// looked (0 for none): the daemon, or the process building the lab.
	Owner int `json:"-"`
	// Leftovers are the namespaces still present after the daemon was
	// gone: what a crashed daemon left behind. All were removed.
	Leftovers []string `json:"leftovers"`
	// Killed are the processes still running in the lab's namespaces
	// (commands started with exec) that were killed.
	Killed []int `json:"killed_processes"`
	// StateRemoved says the lab had a state directory and it is gone:
	// removed by Cleanup, or by the daemon itself as it stopped.
	StateRemoved bool `json:"state_removed"`
	// RecreatedBy is the pid of a new lab of the same name that was
	// claimed while this one was stopping (another down had removed it
	// first): that lab was left alone. 0 otherwise.
	RecreatedBy int `json:"recreated_by,omitempty"`
}

// Cleanup stops a lab's daemon if one runs and removes everything named
// with the lab's prefix: its namespaces (and with them every veth, bridge,
// qdisc and TAP) and its state directory. It works for a crashed lab too,
// and reports what it found. Nothing without the prefix is touched.
func Cleanup(name string, timeout time.Duration) (rep CleanupReport, err error) {
	return cleanup(name, timeout, false)
}

// cleanupBeforeSweep, when set (tests), runs just before cleanup looks
// whether the lab was re-created, so that a test can re-create it there.
var cleanupBeforeSweep func()

// cleanup is Cleanup; claimsLocked says the caller holds lockClaims
// (ReclaimCrashed), which cleanup otherwise takes for its sweep.
//
// With only given, a lab whose live owner is none of those pids is left
// alone (RecreatedBy): SpawnDaemon cleans up after its own daemon only.
func cleanup(name string, timeout time.Duration, claimsLocked bool, only ...int) (rep CleanupReport, err error) {
	// Empty lists, not null, in the JSON: every field is always there.
	defer func() {
		if rep.Leftovers == nil {
			rep.Leftovers = []string{}
		}
		if rep.Killed == nil {
			rep.Killed = []int{}
		}
	}()
	if err := checkRoot(); err != nil {
		return rep, err
	}
	if err := ValidateName(name); err != nil {
		return rep, err
	}
	// What the lab is, read between claims: a claim makes the state
	// directory, then writes the owner record, and a look in between
	// took a lab being claimed for a lab without an owner.
	unlockLook := func() {}
	if !claimsLocked {
		if unlockLook, err = lockClaims(); err != nil {
			return rep, err
		}
	}
	_, statErr := os.Stat(LabDir(name))
	hadStateDir := statErr == nil
	o, hasOwner := readOwner(name)
	st, serr := ReadState(name)
	firstNS, nsErr := listNS(Prefix(name))
	unlockLook()
	if !hadStateDir && nsErr == nil && len(firstNS) == 0 {
		// Nothing of the lab: no such lab, even if an up claims the name
		// a moment later (that lab was not the one asked for, and
		// reporting it "left alone" made a down of nothing exit 0).
		return rep, fmt.Errorf("emu: lab %q: %w (nothing named %s* exists)", name, ErrNoLab, Prefix(name))
	}
	// Neither record names a live process (both unreadable: corrupt, or
	// removed), but the lab's daemon may still answer on its socket: ask
	// it who it is, so that it is stopped in order like any daemon. It
	// was left running, holding the lab's namespaces, nameless once
	// their names were removed, and its elements, for ever.
	if serr != nil && !(hasOwner && alive(o.Pid, o.PidStart)) {
		if rs, err := RemoteStatusWithin(name, timeout); err == nil && rs.Name == name && rs.Pid > 0 {
			if start, err := procStart(rs.Pid); err == nil {
				st, serr = &State{Name: name, Pid: rs.Pid, PidStart: start}, nil
			}
		}
	}
	if hasOwner {
		rep.Owner = o.Pid
	}
	if len(only) > 0 && hasOwner && alive(o.Pid, o.PidStart) && !slices.Contains(only, o.Pid) {
		// A caller cleaning up after its own lab (SpawnDaemon) finds the
		// name owned by another process: a newer lab, left alone.
		rep.RecreatedBy = o.Pid
		return rep, nil
	}
	// An edgefabric command still building its lab (no state file of
	// its own yet) is stopped first: it removes what it built, and says
	// it was interrupted. Killing the commands in its namespaces first
	// (the demo's iperf3) made it fail on its own, remove its lab, and
	// leave this down nothing to report.
	building := hasOwner && alive(o.Pid, o.PidStart) && o.StopsOnTerm && !o.Daemon && !(serr == nil && st.Pid == o.Pid)
	if building {
		rep.Daemon = "stopped"
		if !stopProcess(o.Pid, o.PidStart, timeout) {
			rep.Daemon = "killed"
		}
	}
	// The lab's own process is stopped below, in order; it may be caught
	// inside one of its namespaces, so the sweep must spare it.
	// (Only while the pid is still that process: a recycled one is not.)
	var spare []int
	if hasOwner && alive(o.Pid, o.PidStart) {
		spare = append(spare, o.Pid)
	}
	if serr == nil && st.Pid > 0 && alive(st.Pid, st.PidStart) {
		spare = append(spare, st.Pid)
	}
	// Processes in the lab's namespaces go first, while the namespaces
	// are still there to find them by: a daemon's teardown unlinks them.
	if left, err := listNS(Prefix(name)); err == nil {
		rep.Killed = killNSProcesses(left, spare...)
	}
	if !building {
		rep.Daemon = "none"
		if hasOwner && alive(o.Pid, o.PidStart) {
			rep.Daemon = "in-process" // a live process's lab, torn down as asked
		}
	}
	if serr == nil && st.Pid > 0 {
		rep.Daemon = "dead"
		if alive(st.Pid, st.PidStart) {
			// A daemon running many elements on a busy machine may be
			// slow to answer and to tear down: give each step the full
			// timeout before escalating to SIGTERM, then SIGKILL.
			_, cerr := call(name, Request{Op: "down"}, timeout)
			wait := timeout
			if cerr != nil {
				// No answer: perhaps it is already stopping (another
				// down asked first and its socket is gone). A daemon
				// that leaves in order was stopped, not killed.
				wait = min(timeout, 5*time.Second)
			}
			if waitGone(st.Pid, st.PidStart, wait) {
				rep.Daemon = "stopped"
			} else {
				rep.Daemon = "killed"
				stopProcess(st.Pid, st.PidStart, timeout)
			}
		}
	} else if rep.Daemon == "in-process" && o.Daemon {
		// A daemon still building its lab (no state file yet): left
		// running, it would tear down, by name, whatever lab takes the
		// name next. One that leaves on SIGTERM was stopped.
		rep.Daemon = "stopped"
		if !stopProcess(o.Pid, o.PidStart, timeout) {
			rep.Daemon = "killed"
		}
	}
	// The sweep removes by name. While this lab was stopping, its daemon
	// may have removed it and a new up may have claimed the name: that
	// lab is not the one asked for. Claims are locked for the sweep, so
	// none can start in the middle of it.
	if cleanupBeforeSweep != nil {
		cleanupBeforeSweep()
	}
	if !claimsLocked {
		unlock, err := lockClaims()
		if err != nil {
			return rep, err
		}
		defer unlock()
		if n, ok := readOwner(name); ok && alive(n.Pid, n.PidStart) && (!hasOwner || n.Pid != o.Pid || n.PidStart != o.PidStart) {
			rep.RecreatedBy = n.Pid
			return rep, nil
		}
	}
	left, err := listNS(Prefix(name))
	if err != nil {
		return rep, fmt.Errorf("emu: list namespaces: %w", err)
	}
	// A process the first sweep killed may still be exiting, in its
	// namespace: it is killed again, harmlessly, but reported once.
	killed := func(pids []int) {
		for _, pid := range pids {
			if !slices.Contains(rep.Killed, pid) {
				rep.Killed = append(rep.Killed, pid)
			}
		}
	}
	// Held open until the second kill below: a namespace that is gone
	// frees its inode number for the next one made, anyone's, and the
	// kill goes by inode.
	var held []netns.NsHandle
	defer func() {
		for _, h := range held {
			h.Close()
		}
	}()
	inodes := map[uint64]bool{}
	for _, ns := range left {
		if h, ok := openRealNS(ns); ok {
			held = append(held, h)
			if ino, ok := nsInode(h); ok {
				inodes[ino] = true
			}
		}
	}
	killed(killInNamespaces(inodes, spare...))
	if beforeNSDelete != nil {
		beforeNSDelete()
	}
	var errs []error
	for _, ns := range left {
		if err := deleteNS(ns); err != nil {
			errs = append(errs, fmt.Errorf("emu: remove namespace %s: %w", ns, err))
		}
	}
	// And once their names are gone: a command forked into one after
	// the kill (an exec racing this down) would keep it alive, nameless.
	killed(killInNamespaces(inodes, spare...))
	rep.Leftovers = left
	hadState := false
	if _, err := os.Stat(LabDir(name)); err == nil {
		hadState = true
		if err := os.RemoveAll(LabDir(name)); err != nil {
			errs = append(errs, fmt.Errorf("emu: %w", err))
		} else {
			rep.StateRemoved = true
		}
	} else if hadStateDir && os.IsNotExist(err) {
		rep.StateRemoved = true // the daemon removed it as it stopped
	}
	// No such lab only when nothing of it existed: a state directory that
	// could not be removed is a failure to report, not an unknown name;
	// one seen at first is this lab's, gone since (its owner removed it).
	if rep.Daemon == "none" && len(left) == 0 && !hadState && !hadStateDir {
		return rep, fmt.Errorf("emu: lab %q: %w (nothing named %s* exists)", name, ErrNoLab, Prefix(name))
	}
	return rep, errors.Join(errs...)
}

// Labs lists the labs that exist on this machine: those with a state
// directory and those with leftover namespaces.
func Labs() ([]string, error) {
	set := map[string]bool{}
	ents, err := os.ReadDir(StateDir)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, e := range ents {
		if e.IsDir() && ValidateName(e.Name()) == nil {
			set[e.Name()] = true
		}
	}
	nss, err := listNS("ef-")
	if err != nil {
		return nil, err
	}
	for _, ns := range nss {
		rest := strings.TrimPrefix(ns, "ef-")
		if i := strings.IndexByte(rest, '-'); i > 0 && ValidateName(rest[:i]) == nil {
			set[rest[:i]] = true
		}
	}
	var out []string
	for n := range set {
		out = append(out, n)
	}
	sortStrings(out)
	return out, nil
}

// ownStart is this process's start time (procStart of its own pid), read
// once.
var ownStart = sync.OnceValue(func() uint64 {
	s, _ := procStart(os.Getpid())
	return s
})

// procStart reads a process's start time (clock ticks since boot).
func procStart(pid int) (uint64, error) {
	start, _, err := procStat(pid)
	return start, err
}

// procStat reads pid's start time (in clock ticks since boot) and its
// state letter, in one read: two reads could straddle the reaping of a
// zombie, the second finding nothing.
func procStat(pid int) (start uint64, state byte, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	return parseProcStat(data)
}

// parseProcStat takes the start time and the state from a
// /proc/PID/stat line. The command name may hold spaces and parentheses:
// fields count from the last ')'.
func parseProcStat(data []byte) (start uint64, state byte, err error) {
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0, 0, errors.New("bad /proc stat")
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return 0, 0, errors.New("bad /proc stat")
	}
	start, err = strconv.ParseUint(f[19], 10, 64) // field 22 overall
	return start, f[0][0], err
}

// alive reports whether pid runs and is the process that started at
// start. A zombie, or a process already dead, is as good as gone; so is
// a record without a start time (0), whose process cannot be told from
// another that got its pid: it is never signalled.
func alive(pid int, start uint64) bool {
	if start == 0 || pid <= 0 {
		return false
	}
	s, state, err := procStat(pid)
	return err == nil && s == start && state != 'Z' && state != 'X'
}

// ProcessAlive reports whether pid runs and is the process that started
// at start (clock ticks since boot, field 22 of /proc/PID/stat), as the
// emulator judges a lab's owner and daemon: a zombie, a recycled pid or a
// record without a start time is not it.
func ProcessAlive(pid int, start uint64) bool { return alive(pid, start) }

// MissingNamespaces lists the nodes of state file st whose namespaces are
// gone (removed with ip netns delete, say): a file in /run/netns that is
// no namespace's mount is none.
func MissingNamespaces(st *State) []string {
	var gone []string
	for _, n := range st.Nodes {
		if !isNSFile(filepath.Join(netnsDir, n.Namespace)) {
			gone = append(gone, n.Name)
		}
	}
	return gone
}

func waitGone(pid int, start uint64, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !alive(pid, start) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return !alive(pid, start)
}

// owner records the process that built a lab, daemon or not, so that a
// lab run in-process (emu.Up from a test or the demo) is told apart from
// a crashed one.
type owner struct {
	Pid      int    `json:"pid"`
	PidStart uint64 `json:"pid_start"`
	// Daemon: the owner is a daemon SpawnDaemon started (down may stop
	// it even before it wrote its state file), not a test or the demo.
	Daemon bool `json:"daemon,omitempty"`
	// StopsOnTerm: the owner removes its lab when sent SIGTERM (an
	// edgefabric command: up while it starts a daemon, up --foreground,
	// demo), so down stops it rather than tear the lab down under it,
	// which left it running to build on, or to tear down, by name, the
	// next lab of that name.
	StopsOnTerm bool `json:"stops_on_term,omitempty"`
}

// ownerStopsOnTerm is what this process's owner records say (SetStopsOnTerm).
var ownerStopsOnTerm atomic.Bool

// SetStopsOnTerm declares that this process removes its labs when sent
// SIGTERM (it cancels Up's context and calls Down, or kills the daemon it
// spawns and cleans up): down then stops it with SIGTERM, as it stops a
// daemon, instead of tearing its lab down under it. The edgefabric
// commands that own labs call it; a program using emu that does not handle
// SIGTERM must not.
func SetStopsOnTerm(on bool) { ownerStopsOnTerm.Store(on) }

func ownerPath(name string) string { return filepath.Join(LabDir(name), "owner.json") }

func writeOwner(name string) error {
	return writeOwnerOf(name, os.Getpid(), os.Getenv(ReadyFDEnv) != "")
}

// writeOwnerOf records pid as lab name's owner. The file is replaced
// whole (rename), so that a reader never takes a half-written one for no
// owner, a crash.
func writeOwnerOf(name string, pid int, daemon bool) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if err := os.MkdirAll(LabDir(name), 0o755); err != nil {
		return fmt.Errorf("emu: %w", err)
	}
	o := owner{Pid: pid, Daemon: daemon, StopsOnTerm: daemon || pid == os.Getpid() && ownerStopsOnTerm.Load()}
	o.PidStart, _ = procStart(o.Pid)
	data, _ := json.Marshal(o)
	// A file of its own per writer: SpawnDaemon and its daemon may
	// write at once, and a shared temporary name would make one rename
	// fail.
	f, err := os.CreateTemp(LabDir(name), "owner-*.tmp")
	if err != nil {
		return fmt.Errorf("emu: %w", err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("emu: %w", err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("emu: %w", err)
	}
	if err := os.Rename(f.Name(), ownerPath(name)); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("emu: %w", err)
	}
	return nil
}

// Owner returns the pid of the process that built lab name and whether it
// still runs. A lab whose owner is gone but whose namespaces remain has
// crashed.
func Owner(name string) (pid int, running bool) {
	o, ok := readOwner(name)
	if !ok {
		return 0, false
	}
	return o.Pid, alive(o.Pid, o.PidStart)
}

// OwnerIsDaemon reports whether lab name was built by a daemon (rather
// than in-process by a test or the demo) that still runs.
func OwnerIsDaemon(name string) bool {
	o, ok := readOwner(name)
	return ok && o.Daemon && alive(o.Pid, o.PidStart)
}

// OwnerIsCommand reports whether lab name's live owner is an edgefabric
// command that stops on SIGTERM (SetStopsOnTerm: up, up --foreground,
// demo), rather than another program using emu.
func OwnerIsCommand(name string) bool {
	o, ok := readOwner(name)
	return ok && o.StopsOnTerm && alive(o.Pid, o.PidStart)
}

func readOwner(name string) (owner, bool) {
	var o owner
	if ValidateName(name) != nil {
		return o, false // not a lab's name: no path under StateDir
	}
	data, err := os.ReadFile(ownerPath(name))
	if err != nil || json.Unmarshal(data, &o) != nil || o.Pid <= 0 {
		return owner{}, false
	}
	return o, true
}

// stopProcess sends SIGTERM, waits up to timeout, then SIGKILL, only to
// the process that started at start: it is pinned (pin) while pid is
// that process, and the signals go to it alone, even if it exits and its
// pid is reused meanwhile. It reports whether the process left on SIGTERM
// (or was gone already), not SIGKILL.
func stopProcess(pid int, start uint64, timeout time.Duration) bool {
	p := pin(pid, func() bool { return alive(pid, start) })
	if p == nil {
		return !alive(pid, start)
	}
	defer p.close()
	p.signal(unix.SIGTERM)
	if waitGone(pid, start, timeout) || !p.signal(unix.SIGKILL) {
		return true
	}
	waitGone(pid, start, 5*time.Second)
	return false
}

// ReadyFDEnv names the environment variable through which SpawnDaemon tells
// the daemon which fd to report readiness on.
const ReadyFDEnv = "EDGEFABRIC_READY_FD"

// ClaimName refuses a lab name in use (a state directory or namespaces)
// with ErrLabExists and claims it by creating its state directory,
// atomically: of two claims of one name, the second fails. SpawnDaemon
// claims the name for its daemon; a lab run in the foreground by hand
// claims it itself (Up only looks for namespaces, and a lab still starting
// has none yet). The claim records the calling process as the lab's owner
// at once, so that a lab still starting is never taken for a crashed one
// (no owner); ReleaseName gives up a claim that built nothing.
func ClaimName(name string) error {
	unlock, err := lockClaims()
	if err != nil {
		return err
	}
	defer unlock()
	return claimName(name)
}

// ReclaimCrashed claims lab name when it is free, or, when a crashed lab
// holds it (leftovers, no live owner), removes that lab with Cleanup and
// claims the name then, in one step: of two processes doing this at once,
// the second finds the first one's claim, never a half-removed lab. A lab
// with a live owner is refused with ErrLabExists. It reports whether it
// removed leftovers.
func ReclaimCrashed(name string, timeout time.Duration) (removed bool, err error) {
	unlock, err := lockClaims()
	if err != nil {
		return false, err
	}
	defer unlock()
	err = claimName(name)
	if !errors.Is(err, ErrLabExists) {
		return false, err
	}
	if pid, alive := Owner(name); alive {
		return false, fmt.Errorf("emu: lab %q: %w (owner pid %d runs; run 'edgefabric down %s' to remove it)", name, ErrLabExists, pid, name)
	}
	if st, serr := ReadState(name); serr == nil && st.Pid > 0 && alive(st.Pid, st.PidStart) {
		return false, fmt.Errorf("emu: lab %q: %w (daemon pid %d runs; run 'edgefabric down %s' to remove it)", name, ErrLabExists, st.Pid, name)
	}
	if _, err := cleanup(name, timeout, true); err != nil && !errors.Is(err, ErrNoLab) {
		return false, err
	}
	return true, claimName(name)
}

// ReleaseName gives up a claim of lab name by this process that built
// nothing (Up failed before its first namespace): the state directory
// goes when it holds only this process's owner record. Anything else,
// another owner or files a lab wrote, is left alone.
func ReleaseName(name string) {
	if o, ok := readOwner(name); !ok || o.Pid != os.Getpid() {
		return
	}
	ents, err := os.ReadDir(LabDir(name))
	if err != nil || len(ents) != 1 {
		return
	}
	os.Remove(ownerPath(name))
	os.Remove(LabDir(name))
}

// lockClaims serializes claims of lab names on this machine (an flock on
// StateDir/.claims), so that ReclaimCrashed's look, clean up and claim
// cannot interleave with another claim.
func lockClaims() (unlock func(), err error) {
	if err := os.MkdirAll(StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("emu: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(StateDir, ".claims"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("emu: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("emu: lock %s: %w", f.Name(), err)
	}
	return func() { f.Close() }, nil // closing releases the lock
}

func claimName(name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if labs, err := Labs(); err != nil {
		return fmt.Errorf("emu: %w", err)
	} else if slices.Contains(labs, name) {
		if _, running := Owner(name); !running {
			if st, err := ReadState(name); err != nil || !alive(st.Pid, st.PidStart) {
				return fmt.Errorf("emu: lab %q: %w: it has crashed, its process is gone (run 'edgefabric down %s' to remove what it left)", name, ErrLabExists, name)
			}
		}
		return fmt.Errorf("emu: lab %q: %w (run 'edgefabric status %s', or 'edgefabric down %s' to remove it)", name, ErrLabExists, name, name)
	}
	if err := os.MkdirAll(filepath.Dir(LabDir(name)), 0o755); err != nil {
		return fmt.Errorf("emu: %w", err)
	}
	if err := os.Mkdir(LabDir(name), 0o755); errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("emu: lab %q: %w (another up of this name is starting)", name, ErrLabExists)
	} else if err != nil {
		return fmt.Errorf("emu: %w", err)
	}
	if err := writeOwner(name); err != nil {
		os.RemoveAll(LabDir(name))
		return err
	}
	return nil
}

// spawnPipe makes SpawnDaemon's readiness pipe (a var: tests make it fail).
var spawnPipe = os.Pipe

// SpawnDaemon starts argv (the edgefabric binary running a lab in the
// foreground) as a detached daemon for lab name, with its output in
// LogPath(name), and waits until it reports ready (nil) or failure (its
// error), or dies, or ctx ends (then it is killed and cleaned up).
func SpawnDaemon(ctx context.Context, name string, argv []string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if len(argv) == 0 {
		return fmt.Errorf("emu: spawn: %w: no command", ErrBadOption)
	}
	// Refuse before touching anything: the daemon would refuse too, but
	// only after this had truncated the running lab's log. Of two ups
	// with one name at once, the second fails here, before it could start
	// a daemon (whose cleanup would remove the first one's namespaces).
	if err := ClaimName(name); err != nil {
		return err
	}
	// Until the daemon has started, the claim is this process's, and
	// nothing but its owner record and the log is in it: a failure
	// removes it, or the name stayed taken by a lab that never was
	// (listed as crashed once this process had exited).
	logf, err := os.OpenFile(LogPath(name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		os.RemoveAll(LabDir(name))
		return fmt.Errorf("emu: %w", err)
	}
	defer logf.Close()
	pr, pw, err := spawnPipe()
	if err != nil {
		os.RemoveAll(LabDir(name))
		return fmt.Errorf("emu: %w", err)
	}
	defer pr.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{pw} // fd 3
	cmd.Env = append(os.Environ(), ReadyFDEnv+"=3")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // survive the terminal
	if err := cmd.Start(); err != nil {
		pw.Close()
		os.RemoveAll(LabDir(name)) // ours: the name was free above
		return fmt.Errorf("emu: start daemon: %w", err)
	}
	// The daemon owns the lab from now on (it records itself again once
	// it builds): until then, this process's claim would make it look
	// in-process, or, once this process exits, crashed.
	if err := writeOwnerOf(name, cmd.Process.Pid, true); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		os.RemoveAll(LabDir(name))
		return err
	}
	pw.Close()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	msg := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(pr).ReadString('\n')
		msg <- strings.TrimSpace(line)
	}()
	select {
	case m := <-msg:
		if m == "ready" {
			return nil
		}
		<-exited
		// Nothing of this name existed before (checked above), so all
		// that carries the prefix is the failed daemon's: remove it, or
		// the next up with this name would be refused.
		var err error
		if m == "" {
			if log := tail(LogPath(name), 20); strings.TrimSpace(log) != "" {
				err = fmt.Errorf("emu: lab %s: %w died before it was ready; its log:\n%s", name, ErrDaemon, log)
			} else {
				err = fmt.Errorf("emu: lab %s: %w died before it was ready, without a word in its log (killed?)", name, ErrDaemon)
			}
		} else {
			err = errors.New(strings.TrimPrefix(m, "error: "))
		}
		cleanup(name, 5*time.Second, false, os.Getpid(), cmd.Process.Pid)
		return err
	case <-ctx.Done():
		cmd.Process.Signal(unix.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		cleanup(name, 5*time.Second, false, os.Getpid(), cmd.Process.Pid)
		return fmt.Errorf("emu: lab %s: %w", name, ctxErr(ctx))
	}
}

// NotifyReady is called by a daemon started by SpawnDaemon once its lab is
// up (err nil) or has failed. Outside SpawnDaemon it does nothing.
func NotifyReady(err error) {
	fd, perr := strconv.Atoi(os.Getenv(ReadyFDEnv))
	if perr != nil || fd < 3 {
		return
	}
	f := os.NewFile(uintptr(fd), "ready")
	if f == nil {
		return
	}
	defer f.Close()
	os.Unsetenv(ReadyFDEnv)
	if err != nil {
		fmt.Fprintf(f, "error: %s\n", strings.ReplaceAll(err.Error(), "\n", "; "))
		return
	}
	fmt.Fprintln(f, "ready")
}

func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
