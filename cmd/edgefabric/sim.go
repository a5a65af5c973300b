package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

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

--pcap DIR writes complete pcap files when the run ends; a run that cannot
write them (a full disk) removes them, prints no results and exits 1.

Ctrl-C (or SIGTERM, SIGHUP, SIGQUIT) stops the run at the next event, in
virtual time: the captures are flushed and closed, complete up to then, and
the results of the run so far are printed, with a line saying at which
simulated time it was interrupted ("interrupted": true and "simulated_s" in
--json); sim then dies of the signal, as uncaught (the shell's $? is 128 +
its number, 130 for Ctrl-C, and a shell loop running sim stops; SIGQUIT
exits 131 instead of dumping goroutines). A second signal, or a run that has not stopped 5 seconds
after the first, ends sim at once: the captures it was writing are removed,
as are the directories --pcap made, and sim dies of the signal (SIGQUIT:
exits 131).

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
			// run stops it at the next event: Run returns with the
			// captures flushed and closed and the results so far. A
			// second signal, or a run that does not stop in time, ends
			// sim at once: what it was writing is cut mid-record and
			// removed (removeCaptures), then the directories --pcap
			// made, and it dies of the signal.
			abort := func() {}
			if pcapDir != "" {
				abort = removeCaptures(pcapDir, sc.PcapFiles(), undo)
			}
			stop, release := stopRunOnSignal(c.ErrOrStderr(), abort)
			if simDeaf {
				stop = nil
			}
			res, err := sc.Run(scenario.RunOptions{PcapDir: pcapDir, Trace: tm, Log: lg, Stop: stop})
			sig := release()
			if err != nil {
				if errors.Is(err, scenario.ErrScenario) {
					return badInput(err)
				}
				if pcapDir != "" {
					// A capture that could not be written (a full disk)
					// is cut mid-record, and no results are printed:
					// the run's captures go, as when a stop aborts it,
					// and the directories --pcap made.
					abort()
					return fmt.Errorf("%w; the run's captures were removed", err)
				}
				return err
			}
			undo = func() {} // what --pcap made holds the captures
			if jsonOut {
				err = writeJSON(c.OutOrStdout(), res)
			} else {
				err = res.WriteText(c.OutOrStdout())
			}
			if sig == nil {
				return err
			}
			// Stopped by the user: the report is printed, then sim dies
			// of the signal, as it would have uncaught, so that a shell
			// running sim in a loop stops the loop on Ctrl-C (a child
			// that exits 130 instead looks to bash as if it handled the
			// signal, and the loop goes on); $? is 128 + the signal.
			msg := fmt.Sprintf("sim: %s came as the run ended: the results are complete", signalName(sig))
			if res.Interrupted {
				msg = fmt.Sprintf("sim: interrupted by %s at simulated time %gs of %gs", signalName(sig), res.SimulatedS, res.DurationS)
			}
			if err != nil {
				msg += fmt.Sprintf("; printing the results: %v", err)
			}
			if sig == syscall.SIGQUIT {
				// Go's own SIGQUIT dumps every goroutine: say 131.
				return exitWith(128+int(syscall.SIGQUIT), errors.New(msg))
			}
			fmt.Fprintf(c.ErrOrStderr(), "edgefabric: %s\n", msg)
			dieOf(sig, func() {})
			return nil // not reached
		},
	}
	c.Flags().BoolVar(&jsonOut, "json", false, "print the results as JSON (with every flow's full detail)")
	c.Flags().StringVar(&pcapDir, "pcap", "", "write pcap captures into `DIR` (the scenario's captures, or every host NIC)")
	c.Flags().Uint64Var(&seed, "seed", 0, "override the scenario's seed")
	c.Flags().StringVar(&logLvl, "log", "off", "element logs on stderr, stamped with virtual time: off, error, warn, info or debug")
	c.Flags().StringVar(&trace, "trace", "full", "what the trace hash covers, in any case: full (every byte) or headers (first 128 bytes of each frame)")
	return c
}

// simStopGrace is how long a run has to stop after the first signal
// before sim gives up on it and dies of the signal. The loop stops
// between two events, within microseconds; what it waits for is the
// setup of a large scenario (which reads no stop) and the flush of the
// captures.
var simStopGrace = 5 * time.Second

// simDeaf, set by tests only, keeps the first signal from the run, as a
// setup that reads no stop would not hear it: the fallback's test.
var simDeaf bool

// stopRunOnSignal catches the stop signals (as stopContext's) during a
// simulator run. The first closes stop, which RunOptions.Stop turns into
// a stop at the next event, and says so on w. A second signal, or
// simStopGrace without release, runs abort and dies of that signal (the
// first, at the timeout), as undoOnSignal does. release stops catching
// and returns the first signal, nil if none came; a signal after it has
// its default action.
func stopRunOnSignal(w io.Writer, abort func()) (stop <-chan struct{}, release func() os.Signal) {
	sigs := stopSignals()
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, sigs...)
	stopCh := make(chan struct{})
	done := make(chan struct{})
	finished := make(chan struct{})
	var first os.Signal // written before finished is closed
	go func() {
		defer close(finished)
		select {
		case first = <-ch:
		case <-done:
			return
		}
		close(stopCh)
		fmt.Fprintf(w, "edgefabric: sim: %s: stopping the run at the next event (again to quit at once, without results)\n", signalName(first))
		t := time.NewTimer(simStopGrace)
		defer t.Stop()
		select {
		case s := <-ch:
			dieOf(s, abort)
		case <-t.C:
			fmt.Fprintf(w, "edgefabric: sim: the run did not stop within %v of %s: quitting without results\n", simStopGrace, signalName(first))
			dieOf(first, abort)
		case <-done:
		}
	}()
	return stopCh, func() os.Signal {
		signal.Stop(ch)
		close(done)
		<-finished // never, when it is dying
		if first == nil {
			// One that came as the run returned, which the select may
			// have left for done.
			select {
			case first = <-ch:
			default:
			}
		}
		return first
	}
}

// signalName is a stop signal's name as kill -l spells it, SIGINT
// rather than Go's "interrupt".
func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return s.String()
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
