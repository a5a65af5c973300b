package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/edgefabric/edgefabric/emu"
	"github.com/spf13/cobra"
)

func newDownCmd() *cobra.Command {
	var asJSON bool
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "down LAB",
		Short: "Stop a lab and remove everything it created, also after a crash",
		Long: `down stops the lab's daemon and removes every object named with the lab's
prefix ef-LAB-: its namespaces and, with them, their veths, bridges, qdiscs and
TAPs, and its state directory /run/edgefabric/LAB. Processes still running in
the lab's namespaces (commands started with exec, such as iperf3 -s -D) are
killed first: they would keep a namespace alive. When the daemon has crashed,
down reports the leftovers it found and removes them. A process still building
the lab (up, up --foreground, demo) is stopped with SIGTERM and removes what it
built. --timeout bounds each wait: for the daemon's answer, for it to leave,
and after SIGTERM before SIGKILL, so a hung daemon takes up to three times it.`,
		Example: `  edgefabric down demo
  edgefabric down demo --json --timeout 1m`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			name := args[0]
			if err := emu.ValidateName(name); err != nil {
				return badInput(err)
			}
			if timeout <= 0 {
				// Zero or less would kill the daemon at once, with no
				// time to tear its lab down in order.
				return badInput(fmt.Errorf("--timeout %v: must be positive", timeout))
			}
			if err := emu.CheckRoot(os.Geteuid()); err != nil {
				return err
			}
			owner, _ := emu.Owner(name) // before Cleanup removes owner.json
			// A process building a lab without a daemon yet (up, up
			// --foreground, demo) is stopped, not a daemon.
			// A ready lab without a daemon runs in its own process (up
			// --foreground): that process is stopped, not a daemon.
			_, serr := emu.ReadState(name)
			isDaemon := emu.OwnerIsDaemon(name)
			// (No owner record to read: a daemon found by its socket.)
			building := serr != nil && !isDaemon && owner != 0
			inProcess := serr == nil && !isDaemon && owner != 0
			rep, err := emu.Cleanup(name, timeout)
			if rep.Owner != 0 {
				owner = rep.Owner // what Cleanup saw, between claims
			}
			if errors.Is(err, emu.ErrNoLab) {
				return noLab(name)
			}
			if asJSON {
				// Named, as link's report is: one can log many downs.
				named := struct {
					Lab string `json:"lab"`
					emu.CleanupReport
				}{name, rep}
				if jerr := writeJSON(c.OutOrStdout(), named); jerr != nil {
					return jerr
				}
				return err
			}
			w := c.OutOrStdout()
			switch rep.Daemon {
			case "stopped":
				switch {
				case building:
					fmt.Fprintf(w, "lab %s: process %d, still building it, stopped\n", name, owner)
				case inProcess:
					fmt.Fprintf(w, "lab %s: process %d, which ran it, stopped\n", name, owner)
				default:
					fmt.Fprintf(w, "lab %s: daemon stopped\n", name)
				}
			case "killed":
				switch {
				case building:
					fmt.Fprintf(w, "lab %s: process %d, still building it, did not stop on SIGTERM and was killed\n", name, owner)
				case inProcess:
					fmt.Fprintf(w, "lab %s: process %d, which ran it, did not answer and was killed\n", name, owner)
				default:
					fmt.Fprintf(w, "lab %s: daemon did not answer and was killed\n", name)
				}
			case "dead":
				fmt.Fprintf(w, "lab %s: the daemon had crashed\n", name)
			case "in-process":
				// Its namespaces are listed below: not a crash's leftovers.
				fmt.Fprintf(w, "lab %s: it runs in process %d without a daemon: its lab was torn down under it\n", name, owner)
			}
			if len(rep.Killed) > 0 {
				fmt.Fprintf(w, "lab %s: killed %d processes still running in its namespaces (pids %s)\n", name, len(rep.Killed), strings.Trim(fmt.Sprint(rep.Killed), "[]"))
			}
			if len(rep.Leftovers) > 0 {
				fmt.Fprintf(w, "lab %s: removed %d leftover namespaces: %s\n", name, len(rep.Leftovers), strings.Join(rep.Leftovers, " "))
			}
			if rep.RecreatedBy != 0 {
				fmt.Fprintf(w, "lab %s: gone while it stopped; a new lab of this name (pid %d) was started since and is left alone\n", name, rep.RecreatedBy)
				return err
			}
			if err == nil {
				fmt.Fprintf(w, "lab %s removed\n", name)
			}
			return err
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print what was found and removed as JSON")
	c.Flags().DurationVar(&timeout, "timeout", 20*time.Second, "how long each step waits: the daemon's answer, its leaving, SIGTERM before SIGKILL (a hung daemon: up to 3x this)")
	return c
}
