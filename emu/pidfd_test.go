package emu

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Between the check that a pid is the process meant and the signal sent
// to it, the process may exit and its pid pass to another. These tests
// make that happen there: the process is killed and reaped, and a new
// one is given its pid (through /proc/sys/kernel/ns_last_pid, which sets
// the pid the kernel hands out next).

// takePid starts sleep as pid, which must be free, or returns nil when
// another process, anyone's, took the pid first every time. The new
// process must not have started at start: it would pass for the old one.
func takePid(t *testing.T, pid int, start uint64) *exec.Cmd {
	t.Helper()
	for range 20 {
		if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0); err != nil {
			t.Fatalf("set the next pid: %v", err)
		}
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if s, err := procStart(cmd.Process.Pid); cmd.Process.Pid == pid && err == nil && s != start {
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			return cmd
		}
		cmd.Process.Kill()
		cmd.Wait()
	}
	return nil
}

// replaceProcess returns a hook that kills and reaps cmd, whose pid the
// hook is given, and starts another process under its pid (once; later
// calls do nothing). *newcomer is that process, nil if the pid went to
// another.
func replaceProcess(t *testing.T, cmd *exec.Cmd, newcomer **exec.Cmd) func(pid int) {
	start, err := procStart(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	done := false
	return func(pid int) {
		if done || pid != cmd.Process.Pid {
			return
		}
		done = true
		cmd.Process.Kill()
		cmd.Wait()
		*newcomer = takePid(t, pid, start)
	}
}

// wantUntouched checks that nothing signalled cmd, an unrelated process
// (what says how it came in the way): it is sent SIGUSR1 and must die of
// that, not of a signal sent before.
func wantUntouched(t *testing.T, cmd *exec.Cmd, what string) {
	t.Helper()
	cmd.Process.Signal(syscall.SIGUSR1)
	cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGUSR1 {
		t.Fatalf("pid %d, %s, ended with %v: it was signalled", cmd.Process.Pid, what, cmd.ProcessState)
	}
}

// raceSignal runs try, which starts a process, passes it to replace and
// has it signalled; replace sets *hook to replace the process under its
// pid (replaceProcess). It tries again until that worked (another
// process, anyone's, may take the freed pid first), and returns the
// process that took the pid.
func raceSignal(t *testing.T, hook *func(pid int), try func(replace func(cmd *exec.Cmd))) *exec.Cmd {
	t.Helper()
	needRoot(t)
	needTool(t, "sleep")
	defer func() { *hook = nil }()
	for range 5 {
		var newcomer *exec.Cmd
		try(func(cmd *exec.Cmd) { *hook = replaceProcess(t, cmd, &newcomer) })
		*hook = nil
		if newcomer != nil {
			return newcomer
		}
	}
	t.Fatal("could not give a pid to another process: other processes took it each time")
	return nil
}

// TestStopProcessRecycledPid: stopProcess checks that the pid is still
// the process that started at the recorded time, then signals it. A pid
// recycled between the two went to an unrelated process, which got the
// SIGTERM. Now the process is pinned by a pidfd, and the signal goes to
// it or nowhere.
func TestStopProcessRecycledPid(t *testing.T) {
	newcomer := raceSignal(t, &beforeSignal, func(replace func(*exec.Cmd)) {
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cmd.Process.Kill(); cmd.Wait() }()
		start, err := procStart(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		replace(cmd)
		if !stopProcess(cmd.Process.Pid, start, time.Second) {
			t.Errorf("stopProcess reports the process killed; it was gone")
		}
	})
	wantUntouched(t, newcomer, "which took the pid of the process meant")
}

// TestKillNSProcessesRecycledPid: the kill of what runs in a lab's
// namespaces finds a process there, then kills it. A pid recycled in
// between, before the process is pinned or after it was checked, went
// to an unrelated process outside the lab, which got the SIGKILL. Now
// the process is pinned by a pidfd, then checked (its namespace read
// again), and the signal goes through the pidfd.
func TestKillNSProcessesRecycledPid(t *testing.T) {
	for _, stage := range []struct {
		name string
		hook *func(int)
	}{{"before the pin", &beforePin}, {"between check and signal", &beforeSignal}} {
		t.Run(stage.name, func(t *testing.T) {
			_, ns := testNS(t, "pid")
			newcomer := raceSignal(t, stage.hook, func(replace func(*exec.Cmd)) {
				cmd := exec.Command("sleep", "60")
				if err := StartIn(ns, cmd); err != nil {
					t.Fatal(err)
				}
				defer func() { cmd.Process.Kill(); cmd.Wait() }()
				replace(cmd)
				if killed := killNSProcesses([]string{ns}); len(killed) != 0 {
					t.Errorf("killed %v; the lab's process was gone", killed)
				}
			})
			wantUntouched(t, newcomer, "which took the pid of the lab's process")
		})
	}
}

// TestSignalWithoutPidfd: on a kernel without pidfd_open (before 5.3),
// processes are still stopped and killed, by pid.
func TestSignalWithoutPidfd(t *testing.T) {
	pidfdOpen = func(int, int) (int, error) { return -1, unix.ENOSYS }
	defer func() { pidfdOpen = unix.PidfdOpen }()
	_, ns := testNS(t, "nopidfd")
	cmd := startSleep(t, ns)
	if killed := killNSProcesses([]string{ns}); !slices.Equal(killed, []int{cmd.Process.Pid}) {
		t.Fatalf("killed %v, want [%d]", killed, cmd.Process.Pid)
	}
	wantSignal(t, cmd, syscall.SIGKILL)
	cmd = exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	start, err := procStart(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if !stopProcess(cmd.Process.Pid, start, 5*time.Second) {
		t.Fatal("stopProcess: sleep did not leave on SIGTERM")
	}
	wantSignal(t, cmd, syscall.SIGTERM)
}

// wantSignal waits for cmd, which sig must have ended.
func wantSignal(t *testing.T, cmd *exec.Cmd, sig syscall.Signal) {
	t.Helper()
	cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != sig {
		t.Fatalf("pid %d ended with %v, want %v", cmd.Process.Pid, cmd.ProcessState, sig)
	}
}

// newUnnamedNS makes a network namespace without a name, held only by
// the handle returned.
func newUnnamedNS(t *testing.T) netns.NsHandle {
	t.Helper()
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	defer orig.Close()
	h, err := netns.New()
	if serr := netns.Set(orig); serr != nil {
		t.Fatalf("leave the new namespace: %v", serr) // the thread stays locked, and is retired
	}
	runtime.UnlockOSThread()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestKillNSProcessesHoldsNamespaces: down's first kill looked up the
// inode numbers of the lab's namespaces by name, then looked through
// /proc for processes in them, holding nothing open. A namespace removed
// in between (its daemon tearing the lab down) frees its number, which
// the kernel gives to the next namespace made, anyone's: its processes
// were killed. Here the namespace is removed there, and namespaces are
// made until one has its number (which cannot happen while down holds
// the namespace open) and a process is started in it.
func TestKillNSProcessesHoldsNamespaces(t *testing.T) {
	needRoot(t)
	needTool(t, "sleep")
	ns := Prefix(labName()) + "ino"
	leftoverNS(t, ns)
	t.Cleanup(func() { deleteNS(ns) })
	var old uint64
	for ino := range nsInodes([]string{ns}) {
		old = ino
	}
	if old == 0 {
		t.Fatal("no inode for the namespace")
	}
	var made []netns.NsHandle
	t.Cleanup(func() {
		for _, h := range made {
			h.Close()
		}
	})
	var other *exec.Cmd
	beforeProcScan = func() {
		beforeProcScan = nil
		if err := deleteNS(ns); err != nil {
			t.Errorf("remove %s: %v", ns, err)
			return
		}
		deadline := time.Now().Add(5 * time.Second)
		for len(made) < 200 && time.Now().Before(deadline) {
			h := newUnnamedNS(t)
			made = append(made, h)
			if got, _ := nsInode(h); got == old {
				cmd := exec.Command("sleep", "60")
				if err := inNS(h, cmd.Start); err != nil {
					t.Error(err)
					return
				}
				t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
				other = cmd
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	defer func() { beforeProcScan = nil }()
	if killed := killNSProcesses([]string{ns}); len(killed) != 0 {
		t.Errorf("killed %v; nothing ran in the lab's namespace", killed)
	}
	if other == nil {
		t.Logf("no namespace took the number %d in %d tries", old, len(made))
		return
	}
	wantUntouched(t, other, "in a namespace that took the inode number of the lab's")
}
