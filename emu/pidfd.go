package emu

import (
	"errors"

	"golang.org/x/sys/unix"
)

// Signalling a process that this process did not start goes by pid, and a
// pid names a process only until it exits: the number then passes to the
// next process made, anyone's. A check that pid is still the process
// meant (its start time, the namespace it runs in) and a kill(2) after it
// leave a window in which the process may exit and its pid be reused, and
// the signal then hits the newcomer. A pidfd closes the window: it refers
// to the process that had the pid when it was opened, for good, and a
// signal sent through it reaches that process or, once it has exited,
// fails (ESRCH). So the process is pinned first, the check is made on
// what the pid names after that (if it is the process meant, the pidfd
// refers to it), and the signal goes through the pidfd.

// pidfdOpen is unix.PidfdOpen (a var: tests make it fail with ENOSYS, as
// on a kernel without pidfds).
var pidfdOpen = unix.PidfdOpen

// beforePin and beforeSignal, when set (tests), run with the pid about to
// be pinned, and between the check that a pinned pid is the process meant
// and the signal sent to it: a test puts another process under the pid
// there.
var (
	beforePin    func(pid int)
	beforeSignal func(pid int)
)

// pinned is a process held for signalling.
type pinned struct {
	pid int
	// fd is the pidfd, or -1 on a kernel without pidfds (pidfd_open
	// came in Linux 5.3), where the process is signalled by pid, as it
	// was before pidfds, after check: a pid reused between the two is
	// signalled; nothing better can be done there.
	fd    int
	check func() bool
}

// pin takes hold of pid for signalling when check, run once the process
// is held, says that pid is the process meant (check reads what pid names
// from /proc: the pidfd refers to the process that had the pid when it
// was opened, and only if that is still the one check saw can a signal
// through it arrive). It returns nil for a process gone or not the one
// meant, and for one that cannot be pinned (no file descriptors left):
// signalling it by pid could hit another.
func pin(pid int, check func() bool) *pinned {
	if beforePin != nil {
		beforePin(pid)
	}
	fd, err := pidfdOpen(pid, 0)
	if errors.Is(err, unix.ENOSYS) {
		fd = -1
	} else if err != nil {
		return nil // ESRCH: gone
	}
	if !check() {
		if fd >= 0 {
			unix.Close(fd)
		}
		return nil
	}
	return &pinned{pid: pid, fd: fd, check: check}
}

// signal sends sig to the pinned process and reports whether it was
// delivered: false once the process has exited (its pid may be another's
// by now, and that one is not signalled).
func (p *pinned) signal(sig unix.Signal) bool {
	if p.fd < 0 {
		// Without pidfds: checked again, the window made as short as
		// it can be.
		if !p.check() {
			return false
		}
		if beforeSignal != nil {
			beforeSignal(p.pid)
		}
		return unix.Kill(p.pid, sig) == nil
	}
	if beforeSignal != nil {
		beforeSignal(p.pid)
	}
	return unix.PidfdSendSignal(p.fd, sig, nil, 0) == nil
}

// close lets go of the process.
func (p *pinned) close() {
	if p.fd >= 0 {
		unix.Close(p.fd)
		p.fd = -1
	}
}
