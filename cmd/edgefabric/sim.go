package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/edgefabric/edgefabric/sim"
	"github.com/edgefabric/edgefabric/sim/scenario"
)

func newSimCmd() *cobra.Command {
	var (
		jsonOut bool
		pcapDir string
		seed    uint64
		trace   string
		logLvl  string
	)
	c := &cobra.Command{
		Use:   "sim SCENARIO.yaml",
		Short: "Run a scenario in the deterministic discrete-event simulator",
		Long: `sim runs a scenario file: a topology, a fabric scheme, workloads (ping, udp,
tcp, tcp_rr, shuffle), timed link and node failures, and a duration, all in
virtual time. It prints per-flow results (throughput, RTT percentiles, loss),
their aggregate, when the port states (stp) last changed after the start and
each failure, engine drops by reason and the run's trace_hash: the same
scenario and seed give the same hash on any machine.

--pcap DIR writes complete pcap files when the run ends. Ctrl-C (or SIGTERM,
SIGHUP, SIGQUIT) during the run removes the captures it was writing, which a
stop leaves cut mid-record, and the directories --pcap made: shorten the
scenario's duration to keep a capture of a long run.

The scenario format is described in docs/sim.md; examples/ has working files.`,
		Example: `  edgefabric sim examples/stp-fattree4.yaml
  edgefabric sim examples/stp-fattree4.yaml --json --pcap /tmp/caps --seed 2
  edgefabric sim examples/stp-ring3-node-failure.yaml --log debug`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) (err error) {
			undo := func() {} // removes a --pcap directory a refused run made
			defer func() {
				if err != nil {
					undo()
				}
			}()
			opt := scenario.Options{}
			if c.Flags().Changed("seed") {
				opt.Seed, opt.SeedSet = seed, true
			}
			var tm sim.TraceMode
			// Either mode in any case, as --log takes its levels.
			switch strings.ToLower(trace) {
			case "full":
				tm = sim.TraceFull
			case "headers":
				tm = sim.TraceHeaders
			default:
				return badInput(fmt.Errorf("--trace %q: want full or headers", trace))
			}
			// The five levels the help names, in any case, as --ties and
			// --format take theirs: slog's own parser took "INFO" and
			// "debug+4" but refused "OFF".
			lv, ok := map[string]slog.Level{"off": 0, "error": slog.LevelError, "warn": slog.LevelWarn, "info": slog.LevelInfo, "debug": slog.LevelDebug}[strings.ToLower(logLvl)]
			if !ok {
				return badInput(fmt.Errorf("--log %q: want off, error, warn, info or debug", logLvl))
			}
			var lg *slog.Logger
			if !strings.EqualFold(logLvl, "off") {
				// Wall-clock stamps say nothing about a simulation; the
				// engine adds the virtual time as t=.
				lg = slog.New(slog.NewTextHandler(c.ErrOrStderr(), &slog.HandlerOptions{Level: lv,
					ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
						if len(groups) == 0 && a.Key == slog.TimeKey {
							return slog.Attr{}
						}
						return a
					}}))
			}
			sc, err := scenario.Load(args[0], opt)
			if err != nil {
				return badInput(err)
			}
			if pcapDir != "" {
				// Checked before the run, not after minutes of it: a
				// directory that cannot be made is a wrong argument.
				if undo, err = prepareOutDir("--pcap", pcapDir); err != nil {
					return err
				}
				if err := checkOutFiles("--pcap", pcapDir, sc.PcapFiles(), undo); err != nil {
					return err
				}
			}
			// A stop signal (Ctrl-C, SIGTERM, SIGHUP, SIGQUIT) during the
			// run removes the captures it was writing, which it cannot
			// flush: they belong to the simulator's goroutine, which
			// reads no signal, and were cut at a buffer's end, mid-record
			// (tshark: "cut short in the middle of a packet"). Then the
			// directories --pcap made, and death by the signal.
			unguard := func() {}
			if pcapDir != "" {
				unguard = undoOnSignal(removeCaptures(pcapDir, sc.PcapFiles(), undo))
			}
			res, err := sc.Run(scenario.RunOptions{PcapDir: pcapDir, Trace: tm, Log: lg})
			unguard()
			if err != nil {
				if errors.Is(err, scenario.ErrScenario) {
					return badInput(err)
				}
				return err
			}
			if jsonOut {
				return writeJSON(c.OutOrStdout(), res)
			}
			return res.WriteText(c.OutOrStdout())
		},
	}
	c.Flags().BoolVar(&jsonOut, "json", false, "print the results as JSON (with every flow's full detail)")
	c.Flags().StringVar(&pcapDir, "pcap", "", "write pcap captures into `DIR` (the scenario's captures, or every host NIC)")
	c.Flags().Uint64Var(&seed, "seed", 0, "override the scenario's seed")
	c.Flags().StringVar(&logLvl, "log", "off", "element logs on stderr, stamped with virtual time: off, error, warn, info or debug")
	c.Flags().StringVar(&trace, "trace", "full", "what the trace hash covers, in any case: full (every byte) or headers (first 128 bytes of each frame)")
	return c
}

// removeCaptures returns the undo of a simulator run stopped by a signal:
// it removes the capture files names in dir that the run created or
// truncated, then runs undo (the directories --pcap made). A file of an
// earlier run that this one has not opened yet (the signal came while
// the run was being set up) is kept: what it was before the run (os.Stat,
// following a link as the capture does) tells them apart.
func removeCaptures(dir string, names []string, undo func()) func() {
	before := map[string]os.FileInfo{}
	for _, name := range names {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
			before[name] = fi
		}
	}
	return func() {
		for _, name := range names {
			p := filepath.Join(dir, name)
			fi, err := os.Stat(p)
			if err != nil {
				continue
			}
			if b, ok := before[name]; ok && os.SameFile(b, fi) && b.Size() == fi.Size() && b.ModTime().Equal(fi.ModTime()) {
				continue // not opened by this run
			}
			if real, err := filepath.EvalSymlinks(p); err == nil {
				p = real // the file written, not the link
			}
			os.Remove(p)
		}
		undo()
	}
}
