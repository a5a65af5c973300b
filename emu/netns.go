package emu

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// netnsDir is where named namespaces live, as with "ip netns".
const netnsDir = "/run/netns"

// inNS runs f on an OS thread switched into namespace ns, then switches the
// thread back. Sockets and devices created by f stay in ns. If the thread
// cannot be switched back, it is left locked so that the Go runtime retires
// it instead of reusing a thread in the wrong namespace.
func inNS(ns netns.NsHandle, f func() error) error {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("emu: current namespace: %w", err)
	}
	defer orig.Close()
	if err := netns.Set(ns); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("emu: enter namespace: %w", err)
	}
	ferr := f()
	if err := netns.Set(orig); err != nil {
		return errors.Join(ferr, fmt.Errorf("emu: leave namespace: %w", err))
	}
	runtime.UnlockOSThread()
	return ferr
}

// netnsDirOnce prepares netnsDir once per process.
var (
	netnsDirOnce sync.Once
	netnsDirErr  error
)

// prepareNetnsDir makes netnsDir a shared mount point, as "ip netns add" does
// on first use. If it is not one while lab namespaces are bound onto files in
// it, the first "ip netns add" of any tool bind-mounts the directory over
// itself, recursively: each lab namespace is then mounted twice, once hidden
// under the new mount, and the hidden copy can be neither unmounted nor
// removed ("device or resource busy") until reboot. On a fresh machine that
// is what happened when a lab and "ip netns add" ran at the same time.
func prepareNetnsDir() error {
	netnsDirOnce.Do(func() {
		if err := os.MkdirAll(netnsDir, 0o755); err != nil {
			netnsDirErr = err
			return
		}
		made := false
		for {
			err := unix.Mount("", netnsDir, "none", unix.MS_SHARED|unix.MS_REC, "")
			if err == nil {
				return
			}
			if !errors.Is(err, unix.EINVAL) || made {
				netnsDirErr = fmt.Errorf("emu: make %s a shared mount: %w", netnsDir, err)
				return
			}
			// EINVAL: not a mount point yet; make it one.
			if err := unix.Mount(netnsDir, netnsDir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
				netnsDirErr = fmt.Errorf("emu: bind-mount %s onto itself: %w", netnsDir, err)
				return
			}
			made = true
		}
	})
	return netnsDirErr
}

// createNS makes a named namespace and returns a handle to it, leaving the
// caller's thread where it was. It brings lo up and applies the sysctls every
// lab namespace gets.
func createNS(name string, ipv6 bool) (netns.NsHandle, error) {
	if err := prepareNetnsDir(); err != nil {
		return -1, err
	}
	var h netns.NsHandle = -1
	err := func() error {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			return err
		}
		defer orig.Close()
		h, err = netns.NewNamed(name) // switches this thread into it
		if err != nil && !errors.Is(err, fs.ErrExist) {
			// The file was made but the bind mount failed: an empty
			// file, ours, that would make the next up of this lab
			// refuse the name (a name taken by someone else is EEXIST,
			// and stays).
			removeIfNotNS(filepath.Join(netnsDir, name))
		}
		if err != nil {
			// NewNamed may have moved the thread already.
			if serr := netns.Set(orig); serr == nil {
				runtime.UnlockOSThread()
			}
			return err
		}
		serr := nsSysctls(ipv6)
		if err := netns.Set(orig); err != nil {
			return errors.Join(serr, err)
		}
		runtime.UnlockOSThread()
		return serr
	}()
	if err != nil {
		if h >= 0 {
			h.Close()
			// Created but not set up: the caller never gets a handle,
			// so its teardown would not know to remove it.
			deleteNS(name)
		}
		return -1, fmt.Errorf("emu: namespace %s: %w", name, err)
	}
	return h, nil
}

// nsSysctls runs inside a fresh namespace. /proc/sys/net follows the netns of
// the calling thread, so writing it here configures only this namespace.
// IPv6 is off by default: router solicitations, MLD reports and DAD probes
// from idle hosts and switch ports would otherwise be flooded through every
// fabric and show up in every counter and capture.
func nsSysctls(ipv6 bool) error {
	v := "1"
	if ipv6 {
		v = "0"
	}
	for _, k := range []string{"net/ipv6/conf/all/disable_ipv6", "net/ipv6/conf/default/disable_ipv6"} {
		if err := os.WriteFile(filepath.Join("/proc/sys", k), []byte(v), 0o644); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("sysctl %s: %w", k, err)
		}
	}
	lo, err := linkByNameHere("lo")
	if err != nil {
		return err
	}
	return linkUpHere(lo)
}

// isNSFile reports whether path is a namespace's bind mount (on nsfs).
func isNSFile(path string) bool {
	var fs unix.Statfs_t
	return unix.Statfs(path, &fs) == nil && fs.Type == unix.NSFS_MAGIC
}

// removeIfNotNS removes path when it is a plain file, not a namespace.
func removeIfNotNS(path string) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && !isNSFile(path) {
		os.Remove(path)
	}
}

// deleteNS removes a named namespace. The kernel destroys its devices (and
// the far ends of its veths) once the last reference is gone.
func deleteNS(name string) error {
	err := netns.DeleteNamed(name)
	if err != nil && (errors.Is(err, unix.ENOENT) || errors.Is(err, os.ErrNotExist)) {
		return nil
	}
	if err != nil && errors.Is(err, unix.EINVAL) {
		// Not a mount point (a half-created namespace): remove the file.
		rerr := os.Remove(filepath.Join(netnsDir, name))
		if rerr == nil || os.IsNotExist(rerr) {
			return nil
		}
		err = rerr
	}
	if err != nil && errors.Is(err, unix.EBUSY) {
		return fmt.Errorf("%w (the namespace is also mounted under a later bind mount of %s, made by another tool while the lab was up; 'umount -l %s' and remove it again, or reboot)",
			err, netnsDir, netnsDir)
	}
	return err
}

// listNS returns the named namespaces whose names start with prefix, sorted.
func listNS(prefix string) ([]string, error) {
	ents, err := os.ReadDir(netnsDir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// openNS opens a handle to the named namespace.
func openNS(name string) (netns.NsHandle, error) {
	h, err := netns.GetFromName(name)
	if err != nil {
		return -1, fmt.Errorf("emu: namespace %s: %w", name, err)
	}
	return h, nil
}

// killNSProcesses kills every process (but this one and spare) that lives
// in one of the named namespaces: commands run there with exec (iperf3 -s
// -D, a backgrounded sleep) would otherwise keep the namespace, and its
// links, alive after down, out of sight of ip netns and of status. It
// returns their pids. Only processes in the lab's own namespaces are
// touched. spare is the lab's own daemon or owner: a Go process that runs
// a lab enters its namespaces on locked threads, and when that thread is
// its main one, /proc/PID/ns/net names a lab namespace for that moment;
// it is stopped in order, not killed on sight. It returns once the
// processes it killed are gone (or after killWait): SIGKILL takes effect
// when the victim next runs, and until then it holds its namespace.
func killNSProcesses(names []string, spare ...int) []int {
	// Held open until the kill is done: processes are matched by their
	// namespace's inode number, and a namespace whose last reference
	// goes meanwhile (its daemon's teardown removing it) frees that
	// number for the next namespace made, anyone's.
	inodes := map[uint64]bool{}
	for _, n := range names {
		h, ok := openRealNS(n)
		if !ok {
			continue
		}
		defer h.Close()
		if ino, ok := nsInode(h); ok {
			inodes[ino] = true
		}
	}
	return killInNamespaces(inodes, spare...)
}

// nsInodes returns the inodes of the named namespaces.
func nsInodes(names []string) map[uint64]bool {
	inodes := map[uint64]bool{}
	for _, n := range names {
		var st unix.Stat_t
		// Only a namespace's inode: an empty file left by a failed
		// mount has a tmpfs inode number, which some namespace may have.
		if p := filepath.Join(netnsDir, n); isNSFile(p) && unix.Stat(p, &st) == nil {
			inodes[st.Ino] = true
		}
	}
	return inodes
}

// namedNS reports whether namespace name is still the namespace h refers
// to (its name was not removed, nor given to another).
func namedNS(h netns.NsHandle, name string) bool {
	ino, ok := nsInode(h)
	return ok && nsInodes([]string{name})[ino]
}

// openRealNS opens the named namespace; false for a name that is no
// namespace (an empty file left by a failed mount), or none at all.
func openRealNS(name string) (netns.NsHandle, bool) {
	h, err := netns.GetFromName(name)
	if err != nil {
		return -1, false
	}
	var fs unix.Statfs_t
	if unix.Fstatfs(int(h), &fs) != nil || fs.Type != unix.NSFS_MAGIC {
		h.Close()
		return -1, false
	}
	return h, true
}

// beforeNSDelete, when set (tests), runs in Lab.Down and Cleanup between
// killing the processes in a lab's namespaces and removing their names.
var beforeNSDelete func()

// nsInode returns the inode of the namespace handle h refers to, which
// /proc/PID/ns/net names as "net:[inode]".
func nsInode(h netns.NsHandle) (uint64, bool) {
	var st unix.Stat_t
	if h < 0 || unix.Fstat(int(h), &st) != nil {
		return 0, false
	}
	return st.Ino, true
}

// beforeProcScan, when set (tests), runs in killInNamespaces before it
// looks through /proc.
var beforeProcScan func()

// killInNamespaces is killNSProcesses for namespaces given by inode. The
// caller holds the namespaces open. Each process is pinned (pin) and
// killed only if, pinned, it is still in one of them.
func killInNamespaces(inodes map[uint64]bool, spare ...int) []int {
	if len(inodes) == 0 {
		return nil
	}
	if beforeProcScan != nil {
		beforeProcScan()
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	var starts []uint64
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || slices.Contains(spare, pid) {
			continue
		}
		if !inNamespaces(pid, inodes) {
			continue
		}
		// Looked at again once pinned: the process seen above may have
		// exited since, and its pid passed to another process, anyone's.
		var start uint64
		p := pin(pid, func() bool {
			var err error
			if !inNamespaces(pid, inodes) {
				return false
			}
			start, err = procStart(pid)
			return err == nil
		})
		if p == nil {
			continue
		}
		if p.signal(unix.SIGKILL) {
			pids = append(pids, pid)
			starts = append(starts, start)
		}
		p.close()
	}
	deadline := time.Now().Add(killWait)
	for i, pid := range pids {
		waitGone(pid, starts[i], time.Until(deadline))
	}
	return pids
}

// inNamespaces reports whether pid runs in one of the namespaces whose
// inodes are given.
func inNamespaces(pid int, inodes map[uint64]bool) bool {
	link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		return false
	}
	// "net:[4026532384]"
	ino, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(link, "net:["), "]"), 10, 64)
	return err == nil && inodes[ino]
}

// killWait bounds how long killNSProcesses waits for its victims to exit.
const killWait = 5 * time.Second
