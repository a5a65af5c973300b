package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/edgefabric/edgefabric/experiment"
	"github.com/edgefabric/edgefabric/scheme/spain/plan"
)

func newReproCmd() *cobra.Command {
	var (
		asJSON bool
		quick  bool
		rows   []string
		outDir string
		seed   uint64
		quiet  bool
		ties   string
		slow   int
	)
	var list []string
	for _, r := range experiment.All() {
		list = append(list, fmt.Sprintf("%-14s %s", r.Name, r.Summary))
	}
	c := &cobra.Command{
		Use:   "repro NAME",
		Short: "Reproduce a seed paper's evaluation (tables, figures), ours beside the paper's",
		Long: `repro runs a named reproduction of a seed paper's evaluation and prints every
row with our figure beside the paper's and a note on each difference.
--out DIR also writes NAME.json, NAME.md and NAME.svg (docs/repro holds the
checked-in full runs). dumbnet-fig9, dumbnet-fig10 and dumbnet-lb run in the
emulator with real hosts and need root; Ctrl-C takes their labs down and
writes nothing (exit 1).

Reproductions:
  ` + strings.Join(list, "\n  "),
		Example: `  edgefabric repro spain-table3 --quick                  # every row but the slow ones
  edgefabric repro spain-table3 --rows 'fattree(4)' --json
  edgefabric repro spain-table2 --ties ordered --out /tmp/repro
  edgefabric repro dumbnet-fig8 --quick                  # discovery time up to 216 switches
  edgefabric repro dumbnet-fig11 --json                  # notification delays, failover against 802.1D
  sudo edgefabric repro dumbnet-fig10                    # round trips of real hosts in the emulator (about 6 min)`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) (err error) {
			undo := func() {} // removes an --out directory a refused run made
			defer func() {
				if err != nil {
					undo()
				}
			}()
			r, err := experiment.Get(args[0])
			if err != nil {
				return badInput(err)
			}
			if err := checkRowsFlag(rows, r.Rows(false)); err != nil {
				return err
			}
			tr, err := parseTiesFlag(ties)
			if err != nil {
				return err
			}
			if !r.SPAIN {
				for _, f := range []string{"ties", "slow-trials"} {
					if c.Flags().Changed(f) {
						return badInput(fmt.Errorf("--%s applies to the SPAIN tables only, not to %s", f, r.Name))
					}
				}
			}
			// Refused, not ignored: a --seed that changes nothing would
			// read as a second, independent run.
			if r.Unseeded && c.Flags().Changed("seed") {
				return badInput(fmt.Errorf("--seed does not apply to %s: no random number decides it, and every seed gives the same run", r.Name))
			}
			if quick && slices.Equal(r.Rows(true), r.Rows(false)) {
				return badInput(fmt.Errorf("--quick: %s has no slow rows to leave out", r.Name))
			}
			if slow < 1 || slow > plan.MaxTrials {
				return badInput(fmt.Errorf("--slow-trials %d: must be 1 to %d", slow, plan.MaxTrials))
			}
			if err := noRowMatches(r.Name, r.Rows(quick), r.Rows(false), rows, quick); err != nil {
				return err
			}
			// Last of the checks: it creates the directory.
			if outDir != "" {
				if undo, err = prepareOutDir("--out", outDir); err != nil {
					return err
				}
				var names []string
				for _, ext := range experiment.ReportExts {
					names = append(names, r.Name+ext)
				}
				if err := checkOutFiles("--out", outDir, names, undo); err != nil {
					return err
				}
			}
			opt := experiment.Options{Quick: quick, Rows: rows, Seed: seed, Ties: tr, SlowTrials: slow}
			// An emulator reproduction stops on Ctrl-C and takes its labs
			// down; the others keep the signals' default action (a context
			// they do not read would swallow Ctrl-C).
			ctx := context.Background()
			if r.Emu {
				var stop context.CancelFunc
				ctx, stop = stopContext()
				defer stop()
				opt.Context = ctx
			}
			if !quiet && !asJSON {
				opt.Progress = func(s string) { fmt.Fprintln(c.ErrOrStderr(), s) }
			}
			// A run that reads no context: a signal removes the --out
			// directory it made, as for plan spain.
			unguard := func() {}
			if !r.Emu && outDir != "" {
				unguard = undoOnSignal(undo)
			}
			rep, err := r.Run(opt)
			unguard()
			if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
				// Ctrl-C or a stop signal. Run took the labs down as it
				// returned; a teardown that failed is joined to the error.
				if msg := err.Error(); msg != context.Canceled.Error() {
					return fmt.Errorf("repro %s: interrupted; nothing written: %s", r.Name, msg)
				}
				return fmt.Errorf("repro %s: interrupted; nothing written", r.Name)
			}
			if err != nil {
				if errors.Is(err, experiment.ErrUnknownRepro) {
					return badInput(err)
				}
				return err
			}
			if outDir != "" {
				if err := rep.Write(outDir); err != nil {
					return err
				}
			}
			if asJSON {
				return writeJSON(c.OutOrStdout(), rep)
			}
			fmt.Fprint(c.OutOrStdout(), rep.Text())
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	c.Flags().BoolVar(&quick, "quick", false, "skip the slow rows (SPAIN: FatTree(48), HyperX(16), BCube(48,2), BCube(8,4); dumbnet-fig8: above 216 switches and Fig. 8(b))")
	c.Flags().StringArrayVar(&rows, "rows", nil, "only rows whose name contains this, or the one row whose whole name it is ('fattree(4)' is FatTree(4) alone; case-insensitive; repeat the flag for several: --rows fattree --rows 'bcube(8,2)')")
	c.Flags().StringVar(&outDir, "out", "", "write NAME.json, NAME.md and NAME.svg into this directory")
	c.Flags().Uint64Var(&seed, "seed", 1, "seed: SPAIN tables: tie-breaking, packing, failures and flows; dumbnet-fig11: DumbNet's random choices (the stream's path, hence the link that fails); dumbnet-fig12: the switch pairs; dumbnet-fig9, -fig10, -lb: the fabrics' own; refused for dumbnet-fig8, which no random number decides")
	c.Flags().IntVar(&slow, "slow-trials", 1, "SPAIN tables: packing trials on FatTree(48), BCube(48,2) and BCube(8,4), which run one by default (the other rows run 10); BCube(8,4) takes about 40 s per trial and needs 2,049 VLANs in one, 2,048 (the paper's figure) in ten")
	c.Flags().BoolVar(&quiet, "quiet", false, "no per-row progress on stderr")
	c.Flags().StringVar(&ties, "ties", "pair", `SPAIN tables: Algorithm 1's tie-breaking, "pair" (one random port offset per pair, at every node), "random" (at random at every node), "ordered" (lowest port first, as the paper's FatTree gains suggest) or "node" (a random fixed port preference per node)`)
	return c
}

// checkRowsFlag refuses an empty --rows value: every row name contains
// the empty string, so it would select everything.
// noRowMatches refuses the --rows values that keep none of names, the
// rows table goes through (all: with --quick off): with several values,
// a typo would otherwise drop its row without a word.
func noRowMatches(table string, names, all, rows []string, quick bool) error {
	bad := experiment.Unmatched(names, rows)
	if len(bad) == 0 {
		return nil
	}
	why := ""
	if quick && len(experiment.Unmatched(all, bad)) < len(bad) {
		why = " (--quick leaves out the slow rows)"
	}
	return badInput(fmt.Errorf("no row of %s matches --rows %s%s; its rows: %s", table, strings.Join(bad, ","), why, listRows(names)))
}

// listRows joins row names for a message: with ", ", or with "; " when a
// name has ", " in it (dumbnet-fig11's "notification, median host"), so
// that the list reads unambiguously either way.
func listRows(names []string) string {
	sep := ", "
	if slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, ", ") }) {
		sep = "; "
	}
	return strings.Join(names, sep)
}

func checkRowsFlag(rows, names []string) error {
	for _, r := range rows {
		if strings.TrimSpace(r) == "" {
			// The example is a row of this table (dumbnet-fig11 has no
			// FatTree(4) row).
			ex := "fattree(4)"
			if !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, ex) }) && len(names) > 0 {
				ex = strings.ToLower(names[0])
			}
			return badInput(fmt.Errorf("--rows: empty: give part of a row's name, e.g. --rows '%s'", ex))
		}
	}
	return nil
}
