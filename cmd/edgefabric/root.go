package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/edgefabric/edgefabric/scheme/spain/plan"
)

// commands lists every verb, one file each. Keep it explicit.
var commands = []func() *cobra.Command{
	newDemoCmd,
	newTopoCmd,
	newSimCmd,
	newPlanCmd,
	newReproCmd,
	newBenchCmd,
	newUpCmd,
	newDownCmd,
	newExecCmd,
	newLinkCmd,
	newStatusCmd,
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "edgefabric",
		Short: "Build, run and measure edge-routed data-center Ethernet fabrics",
		Long: `edgefabric builds, runs and measures data-center Ethernet fabrics in which
the edge decides the path and the core only follows a tag, beside the
spanning-tree baseline. Today DumbNet and STP (the schemes dumbnet and stp) run
in a deterministic simulator (sim) and in a Linux network-namespace emulator
with real, unmodified hosts (up/exec/down); SPAIN's offline planner is
"plan spain". The wire formats of Axon, SPAIN's chirps, the VXLAN overlay and
the VLAN backplane are in place; their elements are not yet.

Topologies are given as a spec (fattree:4, leafspine:2,5,5, hyperx:3,
bcube:8,2, ciscodc:2,2, cube:8,8,8, torus:4,4,4, jellyfish:N,K,R, line:3,
ring:3, spain-fig2, spain-testbed, dumbnet-fig1, dumbnet-testbed) or as a file
(native YAML/JSON, containerlab, GraphML). See "edgefabric topo --help".

Exit codes: 0 success, 1 failure while running, 2 bad input (arguments,
topology files, scenarios).`,
		Example: `  edgefabric topo show fattree:4                              # what a topology holds
  edgefabric sim examples/dumbnet-fattree4.yaml               # a scenario, in the simulator
  sudo edgefabric demo                                        # DumbNet end to end, real hosts
  sudo edgefabric up fattree:4 --scheme dumbnet --name lab1   # a lab to ping and break by hand
  edgefabric plan spain fattree:8 --json                      # SPAIN's VLANs for a fat tree
  edgefabric repro spain-table3 --quick                       # the paper's table, ours beside it`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// No string option means anything when given empty (a default
		// is had by leaving the flag out): "--out ''" planned, wrote
		// nothing and exited 0.
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			var err error
			c.Flags().Visit(func(f *pflag.Flag) {
				if err == nil && f.Value.Type() == "string" && f.Value.String() == "" {
					if _, req := f.Annotations[requiredFlag]; req { // no default to fall back on (--scheme)
						err = badInput(fmt.Errorf("--%s: empty value (it is required; see '%s --help' for its values)", f.Name, c.CommandPath()))
					} else {
						err = badInput(fmt.Errorf("--%s: empty value (leave the flag out for its default; see '%s --help')", f.Name, c.CommandPath()))
					}
				}
			})
			return err
		},
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if c.Name() == "exec" {
			// "exec LAB h1 ip -br addr": the command's own flags reach
			// exec's parser unless -- comes first.
			return badInput(fmt.Errorf("%w (put -- before the command: edgefabric exec LAB NODE -- CMD [ARGS...]; see '%s --help')", plainFlagError(err), c.CommandPath()))
		}
		return badInput(fmt.Errorf("%w (see '%s --help')", plainFlagError(err), c.CommandPath()))
	})
	for _, mk := range commands {
		root.AddCommand(mk())
	}
	registerCompletions(root)
	root.SetHelpCommand(newHelpCmd())
	return root
}

// requiredFlag annotates a flag that has no default: given empty, it is
// refused as required rather than with "leave the flag out".
const requiredFlag = "edgefabric_required"

// setOutput gives the commands their output streams, then adds cobra's
// completion command (which keeps the stream it was made with; cobra adds
// it only when it runs) and refuses unknown subcommands everywhere, the
// root's included: cobra's own "unknown command" error spans four lines
// ("Did you mean this?" and the suggestion on lines of their own), and
// "completion foo" printed help and exited 0.
func setOutput(root *cobra.Command, stdout, stderr io.Writer) {
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.InitDefaultCompletionCmd()
	refuseUnknownSubcommands(root)
}

// refuseUnknownSubcommands makes a command that only groups others (the
// root, topo, plan) print its help when called alone and refuse anything else with exit
// code 2: cobra would print the help for "topo shwo" too, and exit 0.
func refuseUnknownSubcommands(c *cobra.Command) {
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = cobra.ArbitraryArgs
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2 // cobra's default at the root
	}
	c.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		return badInput(fmt.Errorf("unknown command %q for %q%s (see '%s --help')", args[0], c.CommandPath(), didYouMean(c, args[0]), c.CommandPath()))
	}
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
}

// didYouMean is the closest of cobra's suggestions for a mistyped
// subcommand, if any. Cobra lists them in command order, so its first is
// not the nearest ("sin" would get "link" before "sim").
func didYouMean(c *cobra.Command, arg string) string {
	best, bestD := "", 0
	for _, s := range c.SuggestionsFor(arg) {
		if d := editDistance(strings.ToLower(arg), s); best == "" || d < bestD {
			best, bestD = s, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// editDistance is the Levenshtein distance between a and b, by bytes
// (command names are ASCII).
func editDistance(a, b string) int {
	row := make([]int, len(b)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(a); i++ {
		diag := row[0]
		row[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			diag, row[j] = row[j], min(row[j]+1, row[j-1]+1, diag+cost)
		}
	}
	return row[len(b)]
}

// newHelpCmd is cobra's help command, except that an unknown topic is bad
// input (exit 2), not a line on stdout and success. Completion offers the
// commands, as cobra's own help command does (it offered file names).
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "help [command]",
		Short:             "Help about any command",
		Long:              `help prints the help of any command: "edgefabric help plan spain".`,
		ValidArgsFunction: helpTopics,
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return badInput(fmt.Errorf("unknown help topic %q (see 'edgefabric --help')", strings.Join(args, " ")))
			}
			cmd.InitDefaultHelpFlag()
			return cmd.Help()
		},
	}
}

// run executes the CLI and returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	out := &outWriter{w: stdout}
	setOutput(root, out, stderr)
	err := root.Execute()
	reportPeakRSS() // to bench, when it runs this process as a row
	if err == nil && out.err != nil {
		// The human-readable reports print with fmt.Fprint*, which
		// nobody checks: a report that did not reach stdout (a full
		// disk) is a failure, not a success.
		err = fmt.Errorf("writing the output: %w", out.err)
	}
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "edgefabric: %v\n", err)
	var ie *inputError
	var ce *codeError
	switch {
	case errors.As(err, &ie) || isCobraUsageError(err):
		return 2
	case errors.As(err, &ce):
		return ce.code
	}
	return 1
}

// codeError is a failure with an exit status of its own (exec's 126 and
// 127, as a shell gives them).
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string { return e.err.Error() }
func (e *codeError) Unwrap() error { return e.err }

func exitWith(code int, err error) error { return &codeError{code, err} }

// outWriter is stdout, remembering the first write error.
type outWriter struct {
	w   io.Writer
	err error
}

func (o *outWriter) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err != nil {
		o.err = err
	}
	return n, err
}

// rawOut is the writer under c.OutOrStdout(): exec hands it to the
// command it runs, which then gets the terminal (a file) itself.
func rawOut(w io.Writer) io.Writer {
	if o, ok := w.(*outWriter); ok {
		return o.w
	}
	return w
}

// inputError marks an error caused by the user's input: exit code 2.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// badInput wraps err so that the process exits with code 2.
func badInput(err error) error {
	if err == nil {
		return nil
	}
	return &inputError{err}
}

// isCobraUsageError recognizes cobra's own argument errors, which it returns
// as plain errors, by how their messages begin. Only the beginning: a
// failure while running that wraps EINVAL ("write /dev/stdout: invalid
// argument") is no usage error, and once exited 2.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{`unknown command "`, "unknown flag: ", "unknown shorthand flag: ", "accepts ", "requires at least ", `invalid argument "`} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// keyword is the name in known that s spells in any case ("DumbNet",
// "SIM"), so that a flag whose values are a fixed set of lower-case
// keywords takes them as --ties, --format and --log do; s itself when it
// names none, for the caller's error, which lists known.
func keyword(s string, known []string) string {
	for _, k := range known {
		if strings.EqualFold(s, k) {
			return k
		}
	}
	return s
}

// writeJSON prints v as indented JSON: every reporting command's --json.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// exactArgs is cobra.ExactArgs with an error that exits 2 and teaches.
func exactArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			takes := map[int]string{0: "no arguments", 1: "1 argument"}[n]
			if takes == "" {
				takes = fmt.Sprintf("%d arguments", n)
			}
			// The path without the root: the message is prefixed
			// "edgefabric: " already.
			verb := strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
			return badInput(fmt.Errorf("%s takes %s, got %d (usage: %s)", verb, takes, len(args), c.UseLine()))
		}
		return nil
	}
}

// checkOutFiles refuses (bad input) a run whose output files could not be
// put in place in dir: one of them exists and is not a regular file (a
// directory), or links where no file can be made. Called after
// prepareOutDir, it undoes that on refusal; refused now, not after the
// minutes of the run.
func checkOutFiles(flag, dir string, names []string, undo func()) error {
	for _, name := range names {
		if err := plan.CheckOutFile(dir, name); err != nil {
			undo()
			return badInput(fmt.Errorf("%s %s: %w: remove it or give another directory", flag, dir, err))
		}
	}
	return nil
}

// prepareOutDir makes sure the directory an output flag names exists
// (creating it) and takes files: a bad one is a wrong argument, refused
// before a long computation rather than after it. undo removes the
// directories it created, if they are still empty: a run refused after
// this check (a bad topology, no matching row) leaves nothing behind.
func prepareOutDir(flag, dir string) (undo func(), err error) {
	undo = func() {}
	// The directories MkdirAll will create, deepest first.
	var made []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		made = append(made, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return undo, badInput(fmt.Errorf("%s: %w", flag, err))
	}
	undo = func() {
		for _, d := range made {
			if os.Remove(d) != nil { // not empty: keep it and its parents
				return
			}
		}
	}
	f, err := os.CreateTemp(dir, ".edgefabric-write-test-*")
	if err != nil {
		undo()
		return func() {}, badInput(fmt.Errorf("%s: %s is not writable: %w", flag, dir, err))
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		undo()
		return func() {}, err
	}
	return undo, nil
}

// numberFlagErr matches pflag's error for a number or boolean flag that
// does not parse: `invalid argument "abc" for "--seed" flag:
// strconv.ParseUint: parsing "abc": invalid syntax`.
var numberFlagErr = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-[^,]+, )?(--[^"]+)" flag: strconv\.Parse(Uint|Int|Float|Bool): parsing ".*": (invalid syntax|value out of range)$`)

// durationFlagErr matches pflag's error for a duration flag that does
// not parse (`... flag: time: invalid duration "abc"`).
var durationFlagErr = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-[^,]+, )?(--[^"]+)" flag: time: `)

// durationSyntax is what time.ParseDuration reads; its error for a value
// too large is the one for a malformed value.
var durationSyntax = regexp.MustCompile(`^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)

// plainFlagError says what a number, boolean or duration flag wants
// instead of quoting Go's parser (strconv.ParseUint: parsing "abc":
// invalid syntax); other flag errors are already plain.
func plainFlagError(err error) error {
	if m := durationFlagErr.FindStringSubmatch(err.Error()); m != nil {
		if durationSyntax.MatchString(m[1]) {
			// Well formed, beyond what a duration holds (292 years).
			return fmt.Errorf("%s %q: out of range", m[2], m[1])
		}
		return fmt.Errorf("%s %q: want a duration such as 30s, 500ms or 2m", m[2], m[1])
	}
	m := numberFlagErr.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	want := map[string]string{"Uint": "a whole number, 0 or more", "Int": "a whole number", "Float": "a number", "Bool": "true or false"}[m[3]]
	if m[4] == "value out of range" {
		return fmt.Errorf("%s %q: out of range", m[2], m[1])
	}
	return fmt.Errorf("%s %q: want %s", m[2], m[1], want)
}
