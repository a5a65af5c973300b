package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"syscall"

	"github.com/edgefabric/edgefabric/emu"
	"github.com/spf13/cobra"
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
(128+N when signal N killed it, as a shell does). Hosts run the unmodified
kernel stack, so ping, iperf3, ip, tcpdump and DHCP clients behave as on a
server. Put "--" before the command so that its flags are not taken for
exec's own. A command that is not found exits 127, one that cannot be run
126, as in a shell.`,
		Example: `  edgefabric exec demo h1 -- ping -c 3 10.0.0.2
  edgefabric exec demo h2 -- iperf3 -s -D
  edgefabric exec demo s1 -- ip -s link`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) < 3 {
				return badInput(fmt.Errorf("%s needs a lab, a node and a command (usage: %s)", c.CommandPath(), c.UseLine()))
			}
			if d := c.ArgsLenAtDash(); d >= 0 && d != 2 {
				return badInput(fmt.Errorf(`%s: put "--" right after LAB and NODE (usage: %s)`, c.CommandPath(), c.UseLine()))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			name, node, argv := args[0], args[1], args[2:]
			if argv[0] == "" {
				return badInput(fmt.Errorf("%s: the command is an empty string (usage: %s)", c.CommandPath(), c.UseLine()))
			}
			if err := emu.ValidateName(name); err != nil {
				return badInput(err)
			}
			if err := emu.CheckRoot(os.Geteuid()); err != nil {
				return err
			}
			ns, err := emu.NodeNamespace(name, node)
			if err != nil {
				if errors.Is(err, emu.ErrNoLab) {
					return noLab(name)
				}
				if errors.Is(err, emu.ErrUnknownNode) {
					return badInput(err)
				}
				return err
			}
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = c.InOrStdin(), rawOut(c.OutOrStdout()), c.ErrOrStderr()
			if err := emu.StartIn(ns, cmd); err != nil {
				err = fmt.Errorf("exec %s in %s/%s: %w", argv[0], name, node, err)
				// As a shell says: 127 for a command not found, 126 for
				// one that cannot be run.
				switch {
				case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
					return exitWith(127, err)
				case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOEXEC):
					return exitWith(126, err)
				}
				return err
			}
			err = cmd.Wait()
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
