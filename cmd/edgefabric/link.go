package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/edgefabric/edgefabric/emu"
	"github.com/spf13/cobra"
)

func newLinkCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "link LAB A B down|up",
		Short: "Fail or repair the link(s) between two nodes of a running lab",
		Long: `link sets both veth ends of every link between nodes A and B down (or up),
like pulling (or plugging) a cable, and tells the elements on both ends at once.
It returns when a repaired link passes traffic again.`,
		Example: `  edgefabric link demo s1 s2 down
  edgefabric link demo s1 s2 up --json`,
		Args: exactArgs(4),
		RunE: func(c *cobra.Command, args []string) error {
			name, a, b, state := args[0], args[1], args[2], strings.ToLower(args[3])
			if err := emu.ValidateName(name); err != nil {
				return badInput(err)
			}
			if state != "up" && state != "down" {
				return badInput(fmt.Errorf("link state %q: want down or up", args[3]))
			}
			if err := emu.CheckRoot(os.Geteuid()); err != nil {
				return err
			}
			err := emu.RemoteSetLink(name, a, b, state == "up")
			if err != nil {
				if strings.Contains(err.Error(), emu.ErrUnknownNode.Error()) || strings.Contains(err.Error(), emu.ErrNoLink.Error()) {
					return badInput(err)
				}
				if errors.Is(err, emu.ErrDaemon) {
					if labs, _ := emu.Labs(); !contains(labs, name) {
						return noLab(name)
					}
					return fmt.Errorf("%w (is lab %s up? see 'edgefabric status')", err, name)
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
	return c
}
