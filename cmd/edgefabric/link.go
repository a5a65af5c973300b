package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/edgefabric/edgefabric/emu"
	"github.com/spf13/cobra"
)

func newLinkCmd() *cobra.Command {
	var asJSON bool
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "link LAB A B down|up",
		Short: "Fail or repair the link(s) between two nodes of a running lab",
		Long: `link sets both veth ends of every link between nodes A and B down (or up),
like pulling (or plugging) a cable, and tells the elements on both ends at once.
It returns when both ends of a repaired link are up again. Under a spanning
tree (the stp scheme, kernel-bridge with STP on) the ports then spend two
forward delays (30 s by default) listening and learning before they pass
traffic, as on a real switch. A daemon that does not answer within --timeout
(30s) is reported as such (exit 1): the link may or may not have changed then;
'edgefabric status LAB' tells.`,
		Example: `  edgefabric link demo s1 s2 down
  edgefabric link demo s1 s2 up --json --timeout 5s`,
		Args: exactArgs(4),
		RunE: func(c *cobra.Command, args []string) error {
			name, a, b, state := args[0], args[1], args[2], strings.ToLower(args[3])
			if err := emu.ValidateName(name); err != nil {
				return badInput(err)
			}
			if state != "up" && state != "down" {
				return badInput(fmt.Errorf("link state %q: want down or up", args[3]))
			}
			if timeout <= 0 {
				return badInput(fmt.Errorf("--timeout %v: must be positive", timeout))
			}
			if err := emu.CheckRoot(os.Geteuid()); err != nil {
				return err
			}
			// Unknown nodes are told from the state file, as exec tells
			// them, when there is one; the daemon checks them anyway.
			st, _ := emu.ReadState(name)
			if st != nil {
				for _, n := range []string{a, b} {
					if !slices.ContainsFunc(st.Nodes, func(sn emu.StateNode) bool { return sn.Name == n }) {
						return unknownNode(name, n, st)
					}
				}
			}
			err := emu.RemoteSetLinkWithin(name, a, b, state == "up", timeout)
			if err != nil {
				if errors.Is(err, emu.ErrDaemon) {
					_, err := labNotAnswering(name, "link", "emu.Lab.SetLink", err, timeout)
					return err
				}
				// The daemon's refusals come as text: name the lab as
				// exec does.
				msg := strings.TrimPrefix(err.Error(), fmt.Sprintf("emu: lab %q: ", name))
				switch {
				case strings.HasPrefix(msg, emu.ErrUnknownNode.Error()):
					n := a
					if !strings.Contains(msg, strconv.Quote(a)) {
						n = b
					}
					return unknownNode(name, n, st)
				case strings.Contains(msg, emu.ErrNoLink.Error()):
					return badInput(fmt.Errorf("lab %s: %s", name, msg))
				}
				return err
			}
			if asJSON {
				return writeJSON(c.OutOrStdout(), map[string]string{"lab": name, "a": a, "b": b, "state": state})
			}
			fmt.Fprintf(c.OutOrStdout(), "lab %s: link %s-%s %s\n", name, a, b, state)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, `print the result as JSON: {"lab", "a", "b", "state"}`)
	c.Flags().DurationVar(&timeout, "timeout", emu.DefaultCallTimeout, "how long to wait for the lab's daemon to answer")
	return c
}
