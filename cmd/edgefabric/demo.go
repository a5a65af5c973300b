package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/edgefabric/edgefabric/emu"
	"github.com/edgefabric/edgefabric/experiment"
)

func newDemoCmd() *cobra.Command {
	var o experiment.DemoOptions
	var asJSON, quiet bool
	c := &cobra.Command{
		Use:   "demo",
		Short: "DumbNet end to end: discover, ping all pairs, iperf3, fail a link, report",
		Long: `demo runs DumbNet on a fat tree (fattree:4 by default) and reports what a
fabric engineer would check first:

  1. bring the fabric up: stateless tag-popping switches, a host agent on
     every host, the controller on one host;
  2. the controller discovers the topology by probing; the result is
     compared with the generated topology, switch IDs, both port numbers of
     every link and every host;
  3. every ordered pair of hosts pings;
  4. iperf3 runs between two pods; a second in, a switch link fails while a
     1 ms ping stream between the same hosts measures the outage: the
     busiest link of the ping stream's path (found by a burst of pings
     first), which iperf3 crosses too unless the agents hashed the two
     flows onto paths that share no switch link (the report then says so).

As root it runs in the emulator with real, unmodified Linux hosts (network
namespaces, the kernel's stack, ping and iperf3) in a lab named by --name,
and tears everything down at the end, also on Ctrl-C, SIGTERM or SIGHUP. A lab of that name that
is running or starting is left alone (exit 2: choose another --name, or stop
it with edgefabric down); the leftovers of a crashed one are removed first.
Without root, or with --engine sim, it runs the same scenario in the
simulator (TCP model instead of iperf3, a 1 ms UDP probe stream instead of
ping) and says so.

The exit code is 0 when the topology was found exactly, every pair answered
and traffic recovered after the failure; 1 otherwise; 2 for bad input (a
topology that cannot be resolved, is not connected, has fewer than two
hosts, relays traffic in hosts, or has no switch-to-switch link between the
iperf3 hosts; a lab name in use). A run that stops early, Ctrl-C included
("interrupted"), prints the report of the steps it completed, the others as
"not reached" (JSON: their keys left out), with the reason (JSON: "error"),
and exits 1.`,
		Example: `  sudo edgefabric demo
  edgefabric demo --engine sim --json
  sudo edgefabric demo --topology leafspine:2,4,2`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Either engine's name in any case, as --ties and --format
			// take theirs (--engine SIM was refused).
			o.Engine = keyword(o.Engine, []string{"emu", "sim"})
			switch o.Engine {
			case "", "emu", "sim":
			default:
				return badInput(fmt.Errorf("--engine %q: want emu or sim", o.Engine))
			}
			// The emulator would refuse a bad lab name only after its
			// checks, as a failure while running (exit 1).
			if err := emu.ValidateName(o.Name); err != nil {
				return badInput(fmt.Errorf("--name: %w", err))
			}
			if !quiet {
				o.Progress = cmd.ErrOrStderr()
			}
			ctx, stop := stopContext()
			defer stop()
			emu.SetStopsOnTerm(true) // down stops the demo rather than pull its lab from under it
			defer emu.SetStopsOnTerm(false)
			rep, err := experiment.Demo(ctx, o)
			if errors.Is(err, experiment.ErrBadInput) {
				return badInput(err)
			}
			if err != nil && rep == nil {
				return err
			}
			// A run that stopped early still reports what it measured.
			if asJSON {
				if err := writeJSON(cmd.OutOrStdout(), rep); err != nil {
					return err
				}
			} else {
				fmt.Fprint(cmd.OutOrStdout(), rep.Text())
			}
			if err != nil {
				return err
			}
			if !rep.OK() {
				return fmt.Errorf("demo: the fabric did not pass every check (see the report)")
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&o.Topology, "topology", "fattree:4", "topology spec or file")
	f.StringVar(&o.Engine, "engine", "", "emu or sim, in any case (default: emu as root, sim otherwise)")
	f.StringVar(&o.Name, "name", "demo", "emulator lab name: 1-16 characters of a-z, 0-9 and _, the first a letter or digit (no -)")
	f.Uint64Var(&o.Seed, "seed", 1, "seed for the scheme and the simulator")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress lines on stderr")
	return c
}
