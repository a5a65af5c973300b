package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"syscall"

	"github.com/edgefabric/edgefabric/emu"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
)

// exitFunc ends the process with the command's exit status; tests replace
// it.
var exitFunc = os.Exit

func newExecCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "exec LAB NODE -- CMD [ARGS...]",
		Short: "Run a command inside a node of a running lab (ping, iperf3, ip, ...)",
		Long: `exec runs an ordinary program inside a node's network namespace, with this
terminal's stdin, stdout and stderr, and exits with the program's status
(128+N when signal N killed it, as a shell does). SIGINT, SIGTERM and SIGHUP
sent to exec are passed on to the program, which decides how to end. Hosts run the unmodified
kernel stack, so ping, iperf3, ip, tcpdump and DHCP clients behave as on a
server. Put "--" before the command so that its flags are not taken for
exec's own. A command that is not found exits 127, one that cannot be run
126, as in a shell.`,
		Example: `  edgefabric exec demo h1 -- ping -c 3 10.0.0.2
  edgefabric exec demo h2 -- iperf3 -s -D
  edgefabric exec demo s1 -- ip -s link`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) < 3 {
				return badInput(fmt.Errorf("%s needs a lab, a node and a command (usage: %s)", c.Name(), c.UseLine()))
			}
			if d := c.ArgsLenAtDash(); d >= 0 && d != 2 {
				return badInput(fmt.Errorf(`%s: put "--" right after LAB and NODE (usage: %s)`, c.Name(), c.UseLine()))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			name, node, argv := args[0], args[1], args[2:]
			if argv[0] == "" {
				return badInput(fmt.Errorf("%s: the command is an empty string (usage: %s)", c.Name(), c.UseLine()))
			}
			if err := emu.ValidateName(name); err != nil {
				return badInput(err)
			}
			if err := emu.CheckRoot(os.Geteuid()); err != nil {
				return err
			}
			ns, err := nodeNamespace(name, node)
			if err != nil {
				return err
			}
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = c.InOrStdin(), rawOut(c.OutOrStdout()), c.ErrOrStderr()
			// Caught from before the start, so that none is lost; those
			// that arrive before it are passed on once it has started.
			sigs, stop := catchSignals()
			defer stop()
			release, err := emu.StartInHeld(ns, cmd)
			if err != nil {
				err = fmt.Errorf("exec %s in %s/%s: %w", argv[0], name, node, err)
				// As a shell says: 127 for a command not found, 126 for
				// one that cannot be run. Only for the command's own
				// errors: a node's namespace that is gone is no missing
				// command.
				var xe *exec.Error
				var pe *fs.PathError
				if !errors.As(err, &xe) && !(errors.As(err, &pe) && pe.Op == "fork/exec") {
					return err
				}
				switch {
				case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
					return exitWith(127, err)
				case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOEXEC):
					return exitWith(126, err)
				}
				return err
			}
			done := make(chan struct{})
			go forwardSignals(sigs, cmd.Process, done)
			err = cmd.Wait()
			close(done)
			release()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code := ee.ExitCode()
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					// Killed by a signal: 128+signal, as a shell says
					// (it was 137, SIGKILL's, for every signal).
					code = 128 + int(ws.Signal())
				}
				exitFunc(code)
				return fmt.Errorf("%s exited with status %d", argv[0], code)
			}
			return err
		},
	}
}

// nodeNamespace is the namespace of node in lab name, read from the lab's
// state file. A lab without one is not running (yet): exec says why, as
// status and link do, and fails (exit 1); no such lab, or no such node,
// is bad input (exit 2).
func nodeNamespace(name, node string) (string, error) {
	for try := 0; ; try++ {
		st, err := emu.ReadState(name)
		if errors.Is(err, emu.ErrNoLab) {
			e, nerr := labNotRunning(name, "exec", "emu.Lab.Exec")
			// "not answering": its state file has been written since,
			// by a daemon that has just come up. Read it again, once.
			if e.State == "not answering" && try == 0 {
				continue
			}
			return "", nerr
		}
		if err != nil {
			return "", err
		}
		i := slices.IndexFunc(st.Nodes, func(n emu.StateNode) bool { return n.Name == node })
		if i < 0 {
			return "", unknownNode(name, node, st)
		}
		// A crashed lab's state file outlives it: its namespaces are
		// left, but no element forwards any more, and a command run
		// there would only seem to find the fabric broken. Its daemon
		// counts as alive though its owner record be gone.
		pid, live := labLive(st)
		if !live {
			_, cerr := labNotRunning(name, "exec", "emu.Lab.Exec")
			return "", cerr
		}
		// A live lab whose namespaces were removed under it: the node's
		// own could not be entered ("namespace ...: no such file or
		// directory"), and any other's leaves the fabric in pieces.
		if gone := emu.MissingNamespaces(st); len(gone) > 0 {
			return "", brokenErr(labEntry{Name: name, State: "broken", Pid: pid, Gone: gone, Nodes: len(st.Nodes)})
		}
		return st.Nodes[i].Namespace, nil
	}
}

// forwarded are the signals exec passes on to the command it runs.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// catchSignals catches the signals exec passes on, but those ignored when
// exec started (nohup, a background job of a shell without job control):
// the command inherits them ignored, and they stay so. stop ends the
// catching.
func catchSignals() (<-chan os.Signal, func()) {
	sigs := make(chan os.Signal, 8)
	var caught []os.Signal
	for _, s := range forwarded {
		if !signal.Ignored(s) {
			caught = append(caught, s)
		}
	}
	if len(caught) > 0 {
		signal.Notify(sigs, caught...)
	}
	return sigs, func() { signal.Stop(sigs) }
}

// forwardSignals passes the signals exec receives on to the command it
// runs until done is closed, so that the command ends (or not) as it
// chooses and exec exits as it does. A signal exec cannot catch (SIGKILL)
// takes the command with it: emu.StartInHeld starts it with a
// parent-death signal.
//
// A SIGINT while exec belongs to its terminal's foreground process group
// came from the terminal (Ctrl-C), which sent it to the command too: it
// is not sent twice (a second one can make a program quit without its
// orderly shutdown).
func forwardSignals(sigs <-chan os.Signal, p *os.Process, done <-chan struct{}) {
	for {
		select {
		case s := <-sigs:
			if s == syscall.SIGINT && inForeground() {
				continue
			}
			p.Signal(s) // an error: the command has ended
		case <-done:
			return
		}
	}
}

// inForeground reports whether this process belongs to the foreground
// process group of its controlling terminal (none: false).
func inForeground() bool {
	fd, err := unix.Open("/dev/tty", unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	pg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && pg == unix.Getpgrp()
}
