package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/edgefabric/edgefabric/paths"
	"github.com/edgefabric/edgefabric/scheme/spain/plan"
	"github.com/edgefabric/edgefabric/topo"
)

func newPlanCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "plan",
		Short: "Compute a scheme's offline configuration for a topology",
		Long: `plan computes the offline, centralized configuration a scheme needs before
its switches and hosts can run: for SPAIN, the path sets, the VLANs they are
packed into, and the per-switch, per-port VLAN membership to deploy.`,
		Example: `  edgefabric plan spain fattree:8 --json            # 16 VLANs, coverage 1, STP coverage 0.15625
  edgefabric plan spain spain-testbed --out /tmp/spain  # per-switch VLAN config and V_reach maps`,
	}
	c.AddCommand(newPlanSpainCmd())
	return c
}

func newPlanSpainCmd() *cobra.Command {
	var (
		kArg       string
		trials     int
		asJSON     bool
		outDir     string
		serial     bool
		failProb   float64
		ncpTrials  int
		topoF      topoFlags
		printVLANs bool
		tiesArg    string
		noPrune    bool
		withPaths  bool
		skipArgs   []string
	)
	c := &cobra.Command{
		Use:   "spain TOPO",
		Short: "SPAIN path sets and VLANs (spain-cots-multipath.txt §4-§5)",
		Long: `spain computes SPAIN's offline configuration for TOPO (a spec such as fattree:8
or a topology file): up to k paths per pair of edge switches (Algorithm 1),
packed into loop-free VLANs (Algorithm 2, best of --trials randomized runs;
by default also the parallel tree-cover packer on every core), VLAN 1 being
the default 802.1D spanning tree. Every VLAN is verified loop-free and every
path verified to lie inside one VLAN before anything is printed or written.

Each tree-cover trial uses every core; its trees scan ports in another
regular order, so more trials can only lower the count. Paths that lie in
none of its shortest-path trees (loose paths: a fifth on BCube(8,4)) are
placed two ways at once, keeping the one that needs fewer VLANs:
best fit alone, or first the majority round (for every root, the tree most
of those paths follow, taken as a bundle while it holds at least half as
many as the first) and then best fit; the summary says how many paths were
loose and which way won. On the largest fabrics a trial takes seconds
(FatTree(48): 3 s, 30 s for the default ten; BCube(8,4): 40 s):
--trials 1 gives a first plan sooner.

The parallel packer then prunes: newest first, it tries to move every path
only one VLAN holds into another VLAN that stays loop-free with it, and
deletes the VLAN when all of them move. Up to 50,000 paths it prunes every
trial and keeps the best pruned one; up to 2,000,000 the best trial only.
--no-prune keeps the trials as they came out; --serial never prunes.

--out DIR writes plan.json, switches.json and switches.txt (per switch, per
port: native and tagged VLANs, and the interface names a containerlab or
GraphML file gives) and vreach.json (V_reach per edge switch); with --paths
also paths.json, every pair's paths with the VLANs that hold each.
--skip-vlans 1002-1005,3968-4094 keeps IDs out of the plan (reserved on the
switches, or in use; repeat the flag to add more): the VLANs take the lowest
free IDs instead.
--ties picks how Algorithm 1 chooses among equal-cost paths: pair (the
default: a plain shortest-path search scanning ports in order, with every
node's scan starting at one offset drawn per pair; a pair resolves its
ties alike at every node, pairs differ, so first paths spread over the
equal-cost routes, and on BCube a path corrects its address digits in a
cyclic order, which packs into about the paper's p^(l−1)·l VLANs: exactly
2,048 on BCube(8,4) with ten trials), random (every tie at random, at every
node anew), ordered (lowest port first; every pair resolves ties alike, as
the paper's FatTree gains of 1.00 reflect, and packs into fewer VLANs at
the cost of load spread) or node (every node prefers its ports in its own
fixed order, drawn from the seed: pairs resolve a tie at a node alike,
nodes differ).
--trials N runs N trials of each packer: by default tree cover, first fit
(Algorithm 2) and best fit, so 3N in all (first and best fit only up to
2,000,000 paths); --serial runs N of Algorithm 2 alone. At most 10,000.
--fail-prob F adds Table 3's NCP: the share of edge-switch pairs left without
a working path when each fabric link fails with probability F, averaged over
--ncp-trials random failure sets (giving either flag computes NCP; F
defaults to 0.04).

Limits: k times the number of edge-node pairs may not exceed 50,000,000
paths (about 100 bytes each); a fabric needing more than 4094 VLANs is
refused with advice. Bad options and topologies exit with code 2, and a bad
--out is refused before any planning.

Edge switches are switches with hosts; in BCube the servers themselves.
See docs/spain-plan.md.`,
		Example: `  edgefabric plan spain fattree:8 --json                                # 16 VLANs, coverage 1, STP coverage 0.15625
  edgefabric plan spain spain-testbed --out /tmp/spain                  # per-switch VLAN config and V_reach maps
  edgefabric plan spain fattree:4 --out /tmp/ft4 --paths                # also every path and the VLANs holding it
  edgefabric plan spain examples/topologies/two-tier.yaml --k 2 --vlans # two paths per pair, every VLAN listed
  edgefabric plan spain hyperx:4 --fail-prob 0.04                       # add NCP against STP`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) (err error) {
			undo := func() {} // removes an --out directory a refused run made
			defer func() {
				if err != nil {
					undo()
				}
			}()
			seed := topoF.seed
			opt := plan.Options{Trials: trials, Seed: seed, Serial: serial, NoPrune: noPrune}
			ties, err := parseTiesFlag(tiesArg)
			if err != nil {
				return err
			}
			opt.Ties = ties
			k, err := parseKFlag(kArg)
			if err != nil {
				return err
			}
			opt.K = k
			if opt.SkipVLANs, err = parseSkipVLANs(skipArgs); err != nil {
				return err
			}
			for _, id := range opt.SkipVLANs {
				if id < 2 || id > paths.MaxVLANs {
					return badInput(fmt.Errorf("--skip-vlans %d: only IDs 2 to %d can be skipped (VLAN 1 is the default tree; 802.1Q reserves 0 and 4095)", id, paths.MaxVLANs))
				}
			}
			if trials < 1 || trials > plan.MaxTrials {
				return badInput(fmt.Errorf("--trials %d: must be 1 to %d", trials, plan.MaxTrials))
			}
			if !(failProb >= 0 && failProb <= 1) { // NaN too
				return badInput(fmt.Errorf("--fail-prob %v: must be a probability in [0,1]", failProb))
			}
			if ncpTrials < 1 || ncpTrials > plan.MaxNCPTrials {
				return badInput(fmt.Errorf("--ncp-trials %d: must be 1 to %d", ncpTrials, plan.MaxNCPTrials))
			}
			if withPaths && outDir == "" {
				return badInput(errors.New("--paths writes paths.json into the --out directory: give --out DIR too"))
			}
			if serial && noPrune {
				return badInput(errors.New("--no-prune: --serial never prunes (it is Algorithm 2 as published): give one of the two"))
			}
			if printVLANs && asJSON {
				return badInput(errors.New("--vlans lists the VLANs in the text summary, and --json always has them: give one of the two"))
			}
			if outDir != "" {
				// Refused now, not after minutes of planning.
				if undo, err = prepareOutDir("--out", outDir); err != nil {
					return err
				}
				if err := checkOutFiles("--out", outDir, plan.OutFiles(withPaths), undo); err != nil {
					return err
				}
			}
			// Until the files are written (which a signal stops in
			// order), a signal removes the directory --out made.
			unguard := func() {}
			if outDir != "" {
				unguard = undoOnSignal(undo)
			}
			defer func() { unguard() }()
			g, err := topoF.resolve(args[0])
			if err != nil {
				return err
			}
			p, err := plan.Compute(g, opt)
			if errors.Is(err, paths.ErrNoHosts) && topo.IsSpec(args[0]) {
				return badInput(fmt.Errorf("%w (SPAIN plans paths between switches with hosts: give the spec hosts per switch, see 'edgefabric topo list')", err))
			}
			if errors.Is(err, paths.ErrNoHosts) {
				// Lab files often leave hosts out or give them a kind the
				// loader takes for a switch: say how to mark them.
				return badInput(fmt.Errorf("%w (SPAIN plans paths between switches with hosts: in a containerlab file, label host nodes edgefabric.kind: host or role: host; in a native file, kind: host; a Topology Zoo GraphML file gets --hosts-per-switch N, 1 by default; see docs/topology.md)", err))
			}
			if err != nil {
				if errors.Is(err, paths.ErrDisconnected) ||
					errors.Is(err, plan.ErrTooManyVLANs) || errors.Is(err, paths.ErrBadK) ||
					errors.Is(err, paths.ErrTooLarge) {
					return badInput(err)
				}
				return err
			}
			if p.Pairs == 0 {
				// Not an error (the plan is VLAN 1), but nothing was
				// planned: say so where a script's JSON does not hide it.
				hint := ""
				if strings.HasSuffix(args[0], ".clab.yml") || strings.HasSuffix(args[0], ".clab.yaml") {
					hint = "; in a containerlab file a linux node cabled more than once is a switch: label dual-homed servers edgefabric.kind: host"
				}
				fmt.Fprintf(c.ErrOrStderr(), "edgefabric: note: %s has %s with hosts: no pair to plan paths for, VLAN 1 is the whole plan%s\n",
					g.Name, plural(p.EdgeNodes, "edge node"), hint)
			}
			var ncp *plan.NCP
			if c.Flags().Changed("fail-prob") || c.Flags().Changed("ncp-trials") {
				n, err := p.NCP(failProb, ncpTrials, seed)
				if err != nil {
					return badInput(err)
				}
				ncp = &n
			}
			if outDir != "" {
				// A signal while writing (a paths.json can take minutes)
				// stops the write, which removes its temporary files;
				// before and after, signals keep their default action.
				ctx, stop := stopContext()
				unguard()
				unguard = func() {}
				removed, err := p.WriteDirContext(ctx, outDir, ncp, withPaths)
				interrupted := ctx.Err() != nil
				stop()
				if err != nil && interrupted {
					return fmt.Errorf("plan: interrupted while writing into %s: its files are as they were", outDir)
				}
				if err != nil {
					return err
				}
				for _, f := range removed {
					// An earlier plan's: it would sit beside this one.
					fmt.Fprintf(c.ErrOrStderr(), "edgefabric: removed %s, an earlier plan's (this run was not given --paths)\n", inDir(outDir, f))
				}
			}
			if asJSON {
				return p.WriteJSON(c.OutOrStdout(), ncp)
			}
			writePlanSummary(c.OutOrStdout(), p, ncp, printVLANs)
			if outDir != "" {
				files := "plan.json,switches.json,switches.txt,vreach.json"
				if withPaths {
					files += "," + plan.PathsFile
				}
				fmt.Fprintf(c.OutOrStdout(), "wrote %s\n", inDir(outDir, "{"+files+"}"))
			}
			return nil
		},
	}
	topoF.register(c)
	c.Flags().StringVar(&kArg, "k", "alpha", `paths per pair of edge switches: a number, or "alpha" for the maximum number of edge-disjoint paths`)
	c.Flags().IntVar(&trials, "trials", 10, "randomized trials per packer (Algorithm 2's N; 3N in all by default); the best is kept")
	c.Flags().BoolVar(&asJSON, "json", false, "print the plan as JSON")
	c.Flags().StringVar(&outDir, "out", "", "write the deployment files into this directory")
	c.Flags().BoolVar(&serial, "serial", false, "pack with the paper's serial Algorithm 2 only")
	c.Flags().Float64Var(&failProb, "fail-prob", 0.04, "link-failure probability for NCP (computed when this or --ncp-trials is given)")
	c.Flags().IntVar(&ncpTrials, "ncp-trials", 10, "random failure sets NCP averages over")
	c.Flags().BoolVar(&printVLANs, "vlans", false, "list every VLAN's links in the text summary (the JSON always has them)")
	c.Flags().BoolVar(&withPaths, "paths", false, "with --out, also write paths.json: every computed path, its nodes and the VLANs that hold it (about 100 bytes a path)")
	c.Flags().BoolVar(&noPrune, "no-prune", false, "keep the parallel packer's best trial as it is: do not delete VLANs whose paths fit into others")
	c.Flags().StringArrayVar(&skipArgs, "skip-vlans", nil, "VLAN `IDS` the plan must not use, such as 1002-1005 (reserved on Cisco IOS) or IDs in use: the VLANs take the lowest free IDs (separate with commas or repeat the flag)")
	c.Flags().StringVar(&tiesArg, "ties", "pair", `Algorithm 1's tie-breaking among equal-cost paths: "pair" (one random port offset per pair, at every node), "random" (at random at every node), "ordered" (lowest port first) or "node" (a random fixed port preference per node)`)
	// One seed drives the random topologies and the planner alike.
	c.Flags().Lookup("seed").Usage = "seed for tie-breaking, packing orders, failures and random topologies"
	return c
}

// inDir names file name in directory dir as the user gave dir, once
// separated: "--out dir/" printed "wrote dir//{...}" (filepath.Join would
// also clean "--out ." away, printing "wrote {...}").
func inDir(dir, name string) string {
	return strings.TrimRight(dir, "/") + "/" + name
}

func writePlanSummary(w io.Writer, p *plan.Plan, ncp *plan.NCP, vlans bool) {
	fmt.Fprintf(w, "SPAIN plan for %s\n", p.Topology)
	// Edge nodes: switches with hosts, or relaying servers (BCube).
	fmt.Fprintf(w, "  edge nodes        %d (%s), fabric links %d\n", p.EdgeNodes, plural(p.Pairs, "pair"), p.FabricLinks)
	if p.Pairs == 0 {
		// No pair of edge switches: nothing to route, α is 0 by
		// definition and k only a floor.
		fmt.Fprintf(w, "  k                 %d (%s; alpha = %d: no pair of edge nodes)\n", p.K, p.KMode, p.Alpha)
	} else if !p.AlphaExact {
		// The max-flow search stopped at its cap: α may be larger.
		fmt.Fprintf(w, "  k                 %d (%s; alpha >= %d: the search for alpha stopped at its cap of %d max-flows, a lower bound)\n", p.K, p.KMode, p.Alpha, paths.MaxAlphaEvals)
	} else {
		fmt.Fprintf(w, "  k                 %d (%s; alpha = %d)\n", p.K, p.KMode, p.Alpha)
	}
	fmt.Fprintf(w, "  paths             %d (ties %s)\n", p.NumPaths, p.Ties)
	// On BCube the busiest bridge is often a relaying server: say so.
	what := "switch"
	if n, ok := p.F.G.Lookup(p.MaxSwitchVLANsAt); ok && p.F.G.Node(n).Kind != topo.Switch {
		what = "relaying server"
	}
	fmt.Fprintf(w, "  VLANs             %d (VLAN 1 = 802.1D tree rooted at %s); at most %d on one %s (%s)\n", p.NumVLANs, p.Root, p.MaxSwitchVLANs, what, p.MaxSwitchVLANsAt)
	if len(p.SkipVLANs) > 0 {
		ids := make([]int, len(p.VLANs))
		for i, v := range p.VLANs {
			ids[i] = v.ID
		}
		fmt.Fprintf(w, "  VLAN IDs          %s (skipping %s)\n", plan.Ranges(ids), plan.Ranges(p.SkipVLANs))
	}
	trials := "1 trial"
	if p.Packing.Trials != 1 {
		trials = fmt.Sprintf("%d trials", p.Packing.Trials)
	}
	if p.NumPaths == 0 {
		// Trials over no path all give VLAN 1 alone: no choice was made.
		fmt.Fprintf(w, "  packing           nothing to pack (no path): VLAN 1 only")
	} else {
		fmt.Fprintf(w, "  packing           %s, %s, best: trial %d (%s)", p.Packing.Algorithm, trials, p.Packing.BestTrial, p.Packing.Strategy)
	}
	if p.Packing.Pruned > 0 {
		fmt.Fprintf(w, ", pruned %d -> %d VLANs", p.NumVLANs+p.Packing.Pruned, p.NumVLANs)
	}
	if p.Packing.LooseWay != "" {
		fmt.Fprintf(w, "\n  loose paths       %d (in no BFS tree of tree cover), placed by %s", p.Packing.LoosePaths, p.Packing.LooseWay)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  coverage          SPAIN %.2f %%, STP %.2f %%\n", 100*p.Coverage, 100*p.STPCoverage)
	if ncp != nil {
		fmt.Fprintf(w, "  NCP               SPAIN %.2f %%, STP %.2f %% (f = %.3g, %s)\n", 100*ncp.SPAIN, 100*ncp.STP, ncp.FailProb, plural(ncp.Trials, "failure set"))
	}
	if vlans {
		for _, v := range p.VLANs {
			fmt.Fprintf(w, "  VLAN %d:", v.ID)
			// With the port numbers: they tell parallel links apart.
			for i, l := range v.Links {
				fmt.Fprintf(w, " %s:%d-%s:%d", l[0], v.Ports[i][0], l[1], v.Ports[i][1])
			}
			fmt.Fprintln(w)
		}
	}
}

// parseSkipVLANs reads every --skip-vlans given: all of them are kept out
// (a second --skip-vlans replaced the first, so that "--skip-vlans
// 1002-1005 --skip-vlans 4000" planned VLANs into the reserved IDs).
func parseSkipVLANs(args []string) ([]int, error) {
	seen := map[int]bool{}
	for _, a := range args {
		if a == "" {
			return nil, badInput(errors.New("--skip-vlans: empty value (leave the flag out for its default; see 'edgefabric plan spain --help')"))
		}
		ids, err := plan.ParseRanges(a)
		if err != nil {
			return nil, badInput(fmt.Errorf("--skip-vlans %w", err))
		}
		for _, id := range ids {
			seen[id] = true
		}
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

// plural is "1 pair" or "n pairs".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// parseKFlag reads --k: "alpha" (any case, or α) is 0, Compute's α;
// otherwise a number of paths, at least 1.
func parseKFlag(s string) (int, error) {
	switch strings.ToLower(s) {
	case "alpha", "α":
		return 0, nil
	case "":
		return 0, badInput(fmt.Errorf(`--k "": want a number of paths or "alpha"`))
	}
	k, err := strconv.Atoi(s)
	if errors.Is(err, strconv.ErrRange) && strings.HasPrefix(s, "-") {
		return 0, badInput(fmt.Errorf("--k %s: %w", s, paths.ErrBadK))
	}
	if errors.Is(err, strconv.ErrRange) {
		return 0, badInput(fmt.Errorf("--k %s: far more paths than any plan can hold (at most %d in all)", s, paths.MaxPaths))
	}
	if err != nil {
		return 0, badInput(fmt.Errorf("--k %q: want a number of paths or \"alpha\"", s))
	}
	if k < 1 {
		return 0, badInput(fmt.Errorf("--k %d: %w", k, paths.ErrBadK))
	}
	return k, nil
}

// parseTiesFlag reads --ties (plan, repro and bench share it); a bad value
// is bad input.
func parseTiesFlag(s string) (paths.Ties, error) {
	t, err := paths.ParseTies(strings.ToLower(s))
	if err != nil || s == "" {
		return 0, badInput(fmt.Errorf("--ties %q: want \"pair\", \"random\", \"ordered\" or \"node\"", s))
	}
	return t, nil
}
