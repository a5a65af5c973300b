package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/edgefabric/edgefabric/emu"
	"github.com/spf13/cobra"
)

func newStatusCmd() *cobra.Command {
	var asJSON bool
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "status [LAB]",
		Short: "Show a lab's nodes, ports, counters and links, or list the labs",
		Long: `status asks a lab's daemon for a snapshot: every node's element, per-port
frames, bytes and drops by reason, the elements' own counters, kernel bridge
port states, and which links are up. Without LAB it lists the labs on this
machine, including crashed ones whose leftovers 'edgefabric down' removes,
and broken ones: running, but with namespaces removed under them (exec
refuses those, and status LAB exits 1 after the snapshot).
A daemon that does not answer within --timeout (30s) is reported as such
(exit 1); the lab list waits for each daemon 5s, or --timeout when given,
and lists one that did not answer as "daemon N does not answer" (in --json, state
"not answering").`,
		Example: `  edgefabric status
  edgefabric status demo
  edgefabric status demo --json --timeout 5s`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 {
				return badInput(fmt.Errorf("%s takes at most one lab (usage: %s)", c.Name(), c.UseLine()))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			// Bad input first, as down, link, exec and up check it.
			if timeout <= 0 {
				return badInput(fmt.Errorf("--timeout %v: must be positive", timeout))
			}
			if len(args) > 0 {
				if err := emu.ValidateName(args[0]); err != nil {
					return badInput(err)
				}
			}
			if err := emu.CheckRoot(os.Geteuid()); err != nil {
				return err
			}
			if len(args) == 0 {
				each := listTimeout
				if c.Flags().Changed("timeout") {
					each = timeout
				}
				return listLabs(c.OutOrStdout(), asJSON, each)
			}
			name := args[0]
			st, err := emu.RemoteStatusWithin(name, timeout)
			if errors.Is(err, emu.ErrDaemon) {
				// A lab that exists but cannot give its status: with
				// --json its entry of the lab list goes to stdout, the
				// error to stderr (exit 1).
				e, err := labNotAnswering(name, "status", "emu.Lab.Status", err, timeout)
				if asJSON && e.State != "" {
					if jerr := writeJSON(c.OutOrStdout(), e); jerr != nil {
						return jerr
					}
				}
				return err
			}
			if err != nil {
				return err
			}
			if asJSON {
				if err := writeJSON(c.OutOrStdout(), st); err != nil {
					return err
				}
			} else {
				printStatus(c.OutOrStdout(), st)
			}
			// Its daemon answers, from what it holds; namespaces
			// removed under it (ip netns delete) it does not see, and
			// it said "ready" of a lab exec could not enter.
			return brokenLab(name)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	c.Flags().DurationVar(&timeout, "timeout", emu.DefaultCallTimeout, "how long to wait for the lab's daemon to answer")
	return c
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// idleLab is the entry of the lab list of lab name, which exists and
// whose daemon does not answer: "starting" (a live daemon, no state file
// yet), "not answering" (a live daemon with its state file), "in-process"
// (a live owner that is no daemon: emu.Up in a test or the demo, or an up
// --foreground before it is ready) or "crashed" (no live owner). A live
// daemon named by the state file is a live owner too: its owner.json
// alone said crashed once that file was gone. (A lab is judged broken,
// its namespaces gone, when its daemon answers: one that does not is the
// trouble to report first.)
func idleLab(name string) labEntry {
	e := labEntry{Name: name, State: "crashed"}
	st, _ := emu.ReadState(name)
	if pid, alive := emu.Owner(name); alive {
		e.State, e.Pid = "in-process", pid
		if emu.OwnerIsDaemon(name) {
			e.State = "not answering"
			if st == nil {
				e.State = "starting" // no state file yet
			}
		}
	} else if st != nil && emu.ProcessAlive(st.Pid, st.PidStart) {
		e.State, e.Pid = "not answering", st.Pid
	}
	return e
}

// labLive returns the process that runs the lab of state file st: its
// owner (owner.json) while that runs, or else the daemon st names while
// that runs.
func labLive(st *emu.State) (pid int, live bool) {
	if pid, ok := emu.Owner(st.Name); ok {
		return pid, true
	}
	if emu.ProcessAlive(st.Pid, st.PidStart) {
		return st.Pid, true
	}
	return 0, false
}

// brokenEntry is e, the entry of a live lab with state file st, marked
// "broken" when namespaces of st's nodes are gone.
func brokenEntry(e labEntry, st *emu.State) labEntry {
	if gone := emu.MissingNamespaces(st); len(gone) > 0 {
		e.State, e.Gone, e.Nodes = "broken", gone, len(st.Nodes)
	}
	return e
}

// brokenLab is the error of a running lab whose namespaces are gone, in
// part or all; nil for a lab whose namespaces are all there (or that has
// no state file to name them).
func brokenLab(name string) error {
	st, err := emu.ReadState(name)
	if err != nil {
		return nil
	}
	pid, live := labLive(st)
	if !live {
		return nil
	}
	e := brokenEntry(labEntry{Name: name, Pid: pid}, st)
	if e.State != "broken" {
		return nil
	}
	return brokenErr(e)
}

// brokenErr is the one error every lab verb gives for a broken lab (a
// failure, exit 1): which namespaces are gone and what to do.
func brokenErr(e labEntry) error {
	return fmt.Errorf("lab %s is broken: %s while process %d still runs it (removed outside edgefabric?): run 'edgefabric down %s' to remove the rest", e.Name, goneText(e), e.Pid, e.Name)
}

// goneText says which of a broken lab's namespaces are gone.
func goneText(e labEntry) string {
	switch {
	case len(e.Gone) == 1:
		return fmt.Sprintf("the namespace of node %s (%s%s) is gone", e.Gone[0], emu.Prefix(e.Name), e.Gone[0])
	case len(e.Gone) == e.Nodes:
		return fmt.Sprintf("the namespaces of all its %d nodes are gone", e.Nodes)
	}
	return fmt.Sprintf("the namespaces of %d of its %d nodes are gone (%s)", len(e.Gone), e.Nodes, listSome(e.Gone, 3))
}

// labNotRunning is the one error every lab verb gives for lab name when
// it cannot reach the lab (no daemon answers, or no state file): what
// state the lab is in and what to do, a failure (exit 1); or noLab (exit
// 2) when there is no such lab. verb names the command that failed, api
// the Go call that does the same from the lab's own process. It returns
// the lab's entry of the lab list too (State "" for no such lab).
func labNotRunning(name, verb, api string) (labEntry, error) {
	return labNotAnswering(name, verb, api, nil, 0)
}

// labNotAnswering is labNotRunning after a call that failed with err
// (ErrDaemon) within timeout: a daemon that is alive but let the call
// time out is told as such, with the bound it had.
func labNotAnswering(name, verb, api string, err error, timeout time.Duration) (labEntry, error) {
	e := idleLab(name)
	// Only a process that serves the lab (a daemon, or an up --foreground
	// once ready) accepts a call and then lets it time out.
	if (e.State == "not answering" || e.State == "in-process") && errors.Is(err, os.ErrDeadlineExceeded) {
		what := ""
		if verb == "link" {
			what = " (the link may or may not have changed)"
		}
		who := "daemon"
		if e.State == "in-process" {
			who = "process"
		}
		return e, fmt.Errorf("lab %s: %s %d did not answer %s within %v%s: give it more --timeout, or run 'edgefabric down %s'", name, who, e.Pid, verb, timeout, what, name)
	}
	switch e.State {
	case "starting":
		return e, fmt.Errorf("lab %s is starting (daemon pid %d): try again once its up has returned", name, e.Pid)
	case "not answering":
		return e, fmt.Errorf("lab %s: daemon %d does not answer: run 'edgefabric down %s'", name, e.Pid, name)
	case "in-process":
		if emu.OwnerIsCommand(name) {
			return e, fmt.Errorf("lab %s is run by edgefabric process %d without a daemon (a demo, or an up --foreground still starting): %s works on it once an up --foreground is ready; a demo's lab is its own ('edgefabric down %s' stops it)", name, e.Pid, verb, name)
		}
		return e, fmt.Errorf("lab %s runs in process %d without a daemon: %s works from that process only (%s), or, for an up --foreground, once it is ready", name, e.Pid, verb, api)
	}
	if labs, _ := emu.Labs(); !contains(labs, name) {
		return labEntry{}, noLab(name)
	}
	return e, fmt.Errorf("lab %s has no live daemon (crashed?): run 'edgefabric down %s' to remove its leftovers", name, name)
}

// unknownNode is the one error exec and link give for a node that lab
// name does not have (bad input): it names the lab's nodes (from its state
// file st, if any) when they are few, and otherwise says how to list them.
func unknownNode(name, node string, st *emu.State) error {
	const maxListed = 12
	var nodes []string
	if st != nil {
		for _, n := range st.Nodes {
			nodes = append(nodes, n.Name)
		}
	}
	hint := fmt.Sprintf("'edgefabric status %s' lists its nodes", name)
	if len(nodes) > 0 && len(nodes) <= maxListed {
		hint = "nodes: " + strings.Join(nodes, ", ")
	}
	return badInput(fmt.Errorf("lab %s: %w %q (%s)", name, emu.ErrUnknownNode, node, hint))
}

// noLab is the one error every lab verb gives for a lab that does not
// exist: bad input, naming the labs there are.
func noLab(name string) error {
	return badInput(fmt.Errorf("no lab %q (labs: %s)", name, strings.Join(mustLabs(), ", ")))
}

func mustLabs() []string {
	l, _ := emu.Labs()
	if len(l) == 0 {
		return []string{"none"}
	}
	return l
}

// labEntry is one line of the lab list.
type labEntry struct {
	Name  string `json:"name"`
	State string `json:"state"` // "running" (a daemon), "broken" (a daemon that answers, of a lab whose namespaces are gone), "starting" or "not answering" (a daemon that does not answer yet, or any more), "in-process" (emu.Up in a live process) or "crashed"
	Pid   int    `json:"pid,omitempty"`
	// Gone names the nodes of a broken lab whose namespaces are gone.
	Gone  []string `json:"gone,omitempty"`
	Nodes int      `json:"-"` // a broken lab's nodes, for its text
}

// listTimeout is how long the lab list waits for each daemon by default:
// less than a single status waits, so that one hung daemon does not hold
// up the list of all.
const listTimeout = 5 * time.Second

func listLabs(w io.Writer, asJSON bool, each time.Duration) error {
	names, err := emu.Labs()
	if err != nil {
		return err
	}
	out := []labEntry{}
	for _, n := range names {
		e := labEntry{Name: n, State: "running"}
		if st, err := emu.RemoteStatusWithin(n, each); err == nil {
			e.Pid = st.Pid
			if sf, err := emu.ReadState(n); err == nil {
				e = brokenEntry(e, sf)
			}
		} else {
			e = idleLab(n)
		}
		out = append(out, e)
	}
	if asJSON {
		return writeJSON(w, out)
	}
	if len(out) == 0 {
		fmt.Fprintln(w, "no labs")
		return nil
	}
	for _, e := range out {
		switch e.State {
		case "running":
			fmt.Fprintf(w, "%s\trunning (pid %d)\n", e.Name, e.Pid)
		case "in-process":
			fmt.Fprintf(w, "%s\trunning in process %d, no daemon\n", e.Name, e.Pid)
		case "starting":
			fmt.Fprintf(w, "%s\tstarting (daemon pid %d)\n", e.Name, e.Pid)
		case "not answering":
			fmt.Fprintf(w, "%s\tdaemon %d does not answer: run 'edgefabric down %s'\n", e.Name, e.Pid, e.Name)
		case "broken":
			fmt.Fprintf(w, "%s\tbroken (process %d): %s: run 'edgefabric down %s'\n", e.Name, e.Pid, goneText(e), e.Name)
		default:
			fmt.Fprintf(w, "%s\tcrashed: run 'edgefabric down %s'\n", e.Name, e.Name)
		}
	}
	return nil
}

func printStatus(w io.Writer, st *emu.Status) {
	fmt.Fprintln(w, st.String())
	// The table goes through a buffer so that the padding tabwriter puts
	// before empty last cells (no drops, a node without ports) is cut.
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tKIND\tELEMENT\tADDRESS\tPORT\tIF\tUP\tRX\tTX\tDROPS")
	for _, n := range st.Nodes {
		addr := n.IP
		if len(n.Ports) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\t\t\t\t\t\n", n.Name, n.Kind, orDash(n.Element), addr)
		}
		for i, p := range n.Ports {
			name, kind, el := n.Name, n.Kind, orDash(n.Element)
			if i > 0 {
				name, kind, el, addr = "", "", "", ""
			}
			up := "up"
			if !p.Up {
				up = "down"
			}
			if p.STP != "" {
				up += "/" + p.STP
			}
			if p.Local {
				up += "/local"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%d\t%d\t%s\n", name, kind, el, addr, p.Port, p.Interface, up, p.RxFrames, p.TxFrames, fmtMap(p.Drops))
		}
	}
	tw.Flush()
	for line := range strings.Lines(table.String()) {
		fmt.Fprintln(w, strings.TrimRight(line, " \n"))
	}
	// The elements' own counters, below the table: they are too wide for
	// a column.
	for _, n := range st.Nodes {
		if len(n.Counters) > 0 {
			fmt.Fprintf(w, "%s: %s\n", n.Name, fmtMap(n.Counters))
		}
	}
	down := []string{}
	for _, l := range st.Links {
		if !l.Up {
			down = append(down, fmt.Sprintf("%s:%s-%s:%s", l.A, l.AIf, l.B, l.BIf))
		}
	}
	if len(down) > 0 {
		fmt.Fprintf(w, "links down: %s\n", strings.Join(down, " "))
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func fmtMap(m map[string]uint64) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}
