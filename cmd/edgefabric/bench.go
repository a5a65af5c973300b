package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/edgefabric/edgefabric/experiment"
	"github.com/edgefabric/edgefabric/scheme/spain/plan"
)

// benchBaseline is the row every other is divided by: small enough to run
// twice per bench, large enough (65,024 paths) to measure.
const benchBaseline = "fattree:16"

// benchRun is one measured child process.
type benchRun struct {
	Name     string  `json:"name"`
	Spec     string  `json:"spec"`
	Status   string  `json:"status"` // "ok", "timeout" or "failed: ..."
	Wall     float64 `json:"wall_seconds"`
	CPU      float64 `json:"cpu_seconds"` // user + system, all threads
	PeakRSS  int64   `json:"peak_rss_bytes"`
	Paths    int     `json:"num_paths,omitempty"`
	VLANs    int     `json:"num_vlans,omitempty"`
	PathsSec float64 `json:"paths_seconds,omitempty"`
	PackSec  float64 `json:"pack_seconds,omitempty"`
	PruneSec float64 `json:"prune_seconds,omitempty"`
	// Ratio is Wall over the baseline's mean wall time in this run, and
	// RSSRatio PeakRSS over the baseline's mean peak RSS.
	Ratio    float64 `json:"x_baseline,omitempty"`
	RSSRatio float64 `json:"rss_x_baseline,omitempty"`
}

type benchReport struct {
	Name     string     `json:"name"`
	Command  string     `json:"command"`
	Trials   int        `json:"trials"`
	Ties     string     `json:"ties"`
	Goal     float64    `json:"goal_seconds"`
	Baseline []benchRun `json:"baseline"`
	Rows     []benchRun `json:"rows"`
}

func newBenchCmd() *cobra.Command {
	var (
		asJSON  bool
		quick   bool
		rows    []string
		trials  int
		ties    string
		timeout time.Duration
		seed    uint64
	)
	c := &cobra.Command{
		Use:   "bench spain-plan",
		Short: "Measure wall time, CPU time and peak memory of the SPAIN planner on every Table 3 row",
		Long: `bench spain-plan runs "edgefabric plan spain SPEC --trials N --json" for every
topology of SPAIN's Table 3, each in its own process, and reports its wall
time, CPU time (user + system over all threads), peak resident memory, the
path-set, packing and pruning phases, and its wall time and peak memory as
multiples of a baseline measured in the same run: the FatTree(16) plan, run
before the first row and after the last (the mean of the two). Machines are
shared and noisy; the ratio is the figure to compare across runs and
machines. The goal is every row within 10 s on a 2-core machine; the
last column says whether this run met it.

A row that exceeds --timeout is killed and reported as a timeout in the table
(a measurement: the command still exits 0). A row whose plan fails (killed
by the kernel's out-of-memory killer, say) is reported with the reason, and
the command exits 1. The baseline must finish: if it does not, the rows are
still reported, without ratios, and the command exits 1. Ctrl-C or SIGTERM kills the row being measured and reports nothing
(exit 1). See docs/performance.md for the checked-in figures.`,
		Example: `  edgefabric bench spain-plan --quick
  edgefabric bench spain-plan --rows 'fattree(8)' --json
  edgefabric bench spain-plan --trials 10 --timeout 5m`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if args[0] != "spain-plan" {
				return badInput(fmt.Errorf("bench %q: unknown benchmark (known: spain-plan)", args[0]))
			}
			if trials < 1 || trials > plan.MaxTrials {
				return badInput(fmt.Errorf("--trials %d: must be 1 to %d", trials, plan.MaxTrials))
			}
			tr, err := parseTiesFlag(ties)
			if err != nil {
				return err
			}
			ties = tr.String() // as plan spain spells it: the report compares across runs
			if err := checkRowsFlag(rows, []string{"FatTree(4)"}); err != nil {
				return err
			}
			if timeout <= 0 {
				return badInput(fmt.Errorf("--timeout %v: must be positive", timeout))
			}
			var sel []experiment.SpainTopology
			var names, all []string
			for _, t := range experiment.SpainTable3Topologies() {
				all = append(all, t.Name)
			}
			for _, t := range experiment.SpainTable3Topologies() {
				if quick && t.Slow {
					continue
				}
				names = append(names, t.Name)
				if experiment.MatchRows(t.Name, rows, all) {
					sel = append(sel, t)
				}
			}
			if err := noRowMatches("Table 3", names, all, rows, quick); err != nil {
				return err
			}
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			common := []string{"--trials", strconv.Itoa(trials), "--ties", ties, "--seed", strconv.FormatUint(seed, 10), "--json"}
			rep := benchReport{Name: "spain-plan", Command: "edgefabric plan spain SPEC " + strings.Join(common, " "),
				Trials: trials, Ties: ties, Goal: 10}
			// A signal stops the row being measured (its process is
			// killed, its plan file removed) and the bench with it,
			// exit 1: the child ran on alone for up to --timeout, and
			// its temporary file stayed.
			ctx, stop := stopContext()
			defer stop()
			progress := func(r benchRun) {
				if !asJSON {
					fmt.Fprintf(c.ErrOrStderr(), "%s: %s, %.1f s\n", r.Name, r.Status, r.Wall)
				}
			}
			interrupted := func() error {
				if ctx.Err() == nil {
					return nil
				}
				return errors.New("bench: interrupted; nothing reported")
			}
			base := func() {
				r := benchChild(ctx, exe, "baseline FatTree(16)", benchBaseline, common, timeout)
				progress(r)
				rep.Baseline = append(rep.Baseline, r)
			}
			base()
			for _, t := range sel {
				if err := interrupted(); err != nil {
					return err
				}
				r := benchChild(ctx, exe, t.Name, t.Spec, common, timeout)
				progress(r)
				rep.Rows = append(rep.Rows, r)
			}
			if err := interrupted(); err != nil {
				return err
			}
			base()
			if err := interrupted(); err != nil {
				return err
			}
			// A row that runs out of time is a measurement (the table
			// says so); a baseline that does leaves no ratios, which are
			// what the benchmark is for: the rows are still reported,
			// and the command fails.
			var baseErr error
			for _, b := range rep.Baseline {
				if b.Status != "ok" && baseErr == nil {
					baseErr = fmt.Errorf("bench: baseline %s %s: no ratios", benchBaseline, b.Status)
				}
			}
			if baseErr == nil {
				mean := (rep.Baseline[0].Wall + rep.Baseline[1].Wall) / 2
				meanRSS := float64(rep.Baseline[0].PeakRSS+rep.Baseline[1].PeakRSS) / 2
				for i := range rep.Rows {
					if rep.Rows[i].Status == "ok" && mean > 0 {
						rep.Rows[i].Ratio = rep.Rows[i].Wall / mean
					}
					if rep.Rows[i].Status == "ok" && meanRSS > 0 {
						rep.Rows[i].RSSRatio = float64(rep.Rows[i].PeakRSS) / meanRSS
					}
				}
			}
			// A row whose plan failed measured nothing: reported, and
			// the command fails, as for the baseline (it exited 0, so a
			// script took a bench whose rows all failed for a success).
			runErr := baseErr
			var failed []string
			for _, r := range rep.Rows {
				if r.Status != "ok" && r.Status != "timeout" {
					failed = append(failed, fmt.Sprintf("%s (%s)", r.Name, r.Status))
				}
			}
			if len(failed) > 0 {
				msg := "bench: " + plural(len(failed), "row") + " failed: " + strings.Join(failed, "; ")
				if baseErr != nil {
					msg = baseErr.Error() + "; " + strings.TrimPrefix(msg, "bench: ")
				}
				runErr = errors.New(msg)
			}
			if asJSON {
				if err := writeJSON(c.OutOrStdout(), rep); err != nil {
					return err
				}
				return runErr
			}
			writeBench(c.OutOrStdout(), &rep)
			return runErr
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the measurements as JSON")
	c.Flags().BoolVar(&quick, "quick", false, "skip the slow rows (FatTree(48), HyperX(16), BCube(48,2), BCube(8,4))")
	c.Flags().StringArrayVar(&rows, "rows", nil, "only rows whose name contains this, or the one row whose whole name it is (case-insensitive; repeat for several)")
	c.Flags().IntVar(&trials, "trials", 1, "packing trials per plan (the planner's --trials)")
	c.Flags().StringVar(&ties, "ties", "pair", `Algorithm 1's tie-breaking: "pair", "random", "ordered" or "node"`)
	c.Flags().DurationVar(&timeout, "timeout", 15*time.Minute, "kill a row after this long and report it as a timeout")
	c.Flags().Uint64Var(&seed, "seed", 1, "the planner's seed")
	return c
}

// benchPeakEnv names the descriptor on which a row's process writes its
// own peak RSS as it ends (reportPeakRSS). The kernel's rusage cannot
// give it: Go starts a child with vfork, in its parent's memory, and
// Linux counts the high-water mark of the memory a process left at exec
// into its maxrss, so every row smaller than the bench process was
// reported at the bench's own peak.
const benchPeakEnv = "EDGEFABRIC_BENCH_PEAK_FD"

// reportPeakRSS writes this process's peak RSS in bytes (VmHWM, the
// high-water mark of its own memory, from which rusage's maxrss is
// taken too) on the descriptor benchPeakEnv names, when it names one:
// bench runs each row so. run calls it as a command ends.
func reportPeakRSS() {
	v := os.Getenv(benchPeakEnv)
	if v == "" {
		return
	}
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return
	}
	// Only the pipe bench gives: the variable set by hand, or
	// inherited by a process whose descriptor of that number is
	// something else (a file, a socket), must not have a number written
	// into it, nor be closed (TestBenchPeakFDOnlyAPipe).
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return
	}
	f := os.NewFile(uintptr(fd), benchPeakEnv)
	if f == nil {
		return
	}
	defer f.Close()
	if kb := statusKB("/proc/self/status", "VmHWM:"); kb > 0 {
		fmt.Fprintf(f, "%d\n", kb*1024)
	}
}

// statusKB is the value in kB of a "Key:  N kB" line of a /proc status
// file, or 0.
func statusKB(file, key string) int64 {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, key); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return 0
}

// benchChild runs one plan in a child process and measures it from the
// outside: wall clock, and CPU time from the kernel's rusage; peak RSS is
// the child's own high-water mark, which it reports as it ends
// (benchPeakEnv), or rusage's maxrss, which holds the bench's own peak
// too, from a child that does not report it (killed on --timeout).
// When parent ends (a signal), the child is killed; so it is when this
// process dies, by its parent-death signal.
func benchChild(parent context.Context, exe, name, spec string, common []string, timeout time.Duration) benchRun {
	r := benchRun{Name: name, Spec: spec}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, append([]string{"plan", "spain", spec}, common...)...)
	// The parent-death signal is sent when the thread that started the
	// child ends: keep it until the child has been waited for.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// The plan's JSON lists every VLAN (hundreds of MB on the big rows).
	// It goes to a file and is read back as a token stream: a bench that
	// held it in memory would grow, and a child's peak RSS starts at its
	// parent's size at fork.
	out, err := os.CreateTemp("", "edgefabric-bench-*.json")
	if err != nil {
		r.Status = "failed: " + err.Error()
		return r
	}
	defer os.Remove(out.Name())
	defer out.Close()
	var errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &errOut
	peakR, peakW, err := os.Pipe()
	if err != nil {
		r.Status = "failed: " + err.Error()
		return r
	}
	defer peakR.Close()
	cmd.ExtraFiles = []*os.File{peakW} // descriptor 3
	cmd.Env = append(os.Environ(), benchPeakEnv+"=3")
	t0 := time.Now()
	err = cmd.Start()
	peakW.Close()
	if err == nil {
		err = cmd.Wait()
	}
	r.Wall = time.Since(t0).Seconds()
	if st := cmd.ProcessState; st != nil {
		r.CPU = (st.UserTime() + st.SystemTime()).Seconds()
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
			r.PeakRSS = ru.Maxrss * 1024 // kilobytes on Linux
		}
	}
	// The child has ended: the pipe holds its report, if any, and EOF.
	if b, rerr := io.ReadAll(io.LimitReader(peakR, 64)); rerr == nil {
		if n, perr := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); perr == nil && n > 0 {
			r.PeakRSS = n
		}
	}
	switch {
	case parent.Err() != nil:
		r.Status = "interrupted"
		return r
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		r.Status = "timeout"
		return r
	case err != nil:
		r.Status = "failed: " + strings.TrimSpace(firstLine(errOut.String(), err.Error()))
		return r
	}
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		r.Status = "failed: " + err.Error()
		return r
	}
	if err := readPlanSummary(bufio.NewReader(out), &r); err != nil {
		r.Status = "failed: unreadable plan JSON: " + err.Error()
		return r
	}
	r.Status = "ok"
	return r
}

// readPlanSummary takes num_paths, num_vlans and the phase times from a
// plan's JSON, skipping everything else token by token.
func readPlanSummary(rd io.Reader, r *benchRun) error {
	dec := json.NewDecoder(rd)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("want an object, got %v (%v)", t, err)
	}
	// Each key once: a count would take a key given twice for a
	// missing one.
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		switch key {
		case "num_paths", "num_vlans", "seconds":
			if seen[key] {
				return fmt.Errorf("%s given twice", key)
			}
			seen[key] = true
		}
		switch key {
		case "num_paths":
			err = dec.Decode(&r.Paths)
		case "num_vlans":
			err = dec.Decode(&r.VLANs)
		case "seconds":
			var sec struct{ Paths, Pack, Prune float64 }
			err = dec.Decode(&sec)
			r.PathsSec, r.PackSec, r.PruneSec = sec.Paths, sec.Pack, sec.Prune
		default:
			err = skipValue(dec)
		}
		if err != nil {
			return err
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return fmt.Errorf("truncated object (%v)", err)
	}
	for _, k := range []string{"num_paths", "num_vlans", "seconds"} {
		if !seen[k] {
			return fmt.Errorf("%s missing", k)
		}
	}
	return nil
}

// skipValue consumes one JSON value without keeping it.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

func firstLine(s, fallback string) string {
	if s = strings.TrimSpace(s); s == "" {
		return fallback
	}
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func writeBench(w io.Writer, rep *benchReport) {
	fmt.Fprintf(w, "SPAIN planner benchmark: %s, one process per row\n", rep.Command)
	b := rep.Baseline
	if b[0].Status == "ok" && b[1].Status == "ok" {
		fmt.Fprintf(w, "baseline: %s plan, before and after the rows: %.2f s and %.2f s wall, %.0f and %.0f MB peak RSS\n\n",
			benchBaseline, b[0].Wall, b[1].Wall, float64(b[0].PeakRSS)/1e6, float64(b[1].PeakRSS)/1e6)
	} else {
		fmt.Fprintf(w, "baseline: %s plan, before and after the rows: %s after %.1f s and %s after %.1f s: no ratios\n\n",
			benchBaseline, b[0].Status, b[0].Wall, b[1].Status, b[1].Wall)
	}
	table := [][]string{{"topology", "paths", "VLANs", "wall s", "CPU s", "peak RSS MB", "paths s", "pack s", "prune s", "× baseline", "RSS × baseline", "≤ 10 s"}}
	for _, r := range rep.Rows {
		rss := fmt.Sprintf("%.0f", float64(r.PeakRSS)/1e6)
		if r.Status != "ok" {
			table = append(table, []string{r.Name, "", "", fmt.Sprintf("%.1f", r.Wall), fmt.Sprintf("%.1f", r.CPU), rss, "", "", "", "", "", r.Status})
			continue
		}
		met := "yes"
		if r.Wall > rep.Goal {
			met = "no"
		}
		ratio, rssRatio := "-", "-"
		if r.Ratio > 0 {
			ratio, rssRatio = fmt.Sprintf("%.1f", r.Ratio), fmt.Sprintf("%.1f", r.RSSRatio)
		}
		table = append(table, []string{r.Name, strconv.Itoa(r.Paths), strconv.Itoa(r.VLANs),
			fmt.Sprintf("%.2f", r.Wall), fmt.Sprintf("%.2f", r.CPU), rss,
			fmt.Sprintf("%.2f", r.PathsSec), fmt.Sprintf("%.2f", r.PackSec), fmt.Sprintf("%.2f", r.PruneSec), ratio, rssRatio, met})
	}
	width := make([]int, len(table[0]))
	for _, row := range table {
		for i, cell := range row {
			width[i] = max(width[i], utf8.RuneCountInString(cell))
		}
	}
	for _, row := range table {
		var b strings.Builder
		for i, cell := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(cell))
			if i == 0 {
				b.WriteString(cell + pad)
			} else {
				b.WriteString("  " + pad + cell)
			}
		}
		fmt.Fprintln(w, b.String())
	}
}
