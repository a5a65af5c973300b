package experiment

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/edgefabric/edgefabric/experiment/flowsim"
	"github.com/edgefabric/edgefabric/paths"
	"github.com/edgefabric/edgefabric/scheme/spain/plan"
	"github.com/edgefabric/edgefabric/topo"
)

// spainRow is one topology of SPAIN's Tables 2 and 3 with the paper's
// figures (nil where the paper gives none).
type spainRow struct {
	name, spec string
	// slow rows are skipped by --quick; oneTrial rows run one packing
	// trial (FatTree(48) and BCube(48,2), whose first tree cover already
	// reaches the known optimum, and BCube(8,4), where a trial takes
	// minutes).
	slow, oneTrial bool
	// Table 2.
	optimum, heuristic, trialsForBest *float64
	// Table 3.
	switches, links, hosts  float64
	covSTP, covSPAIN        float64
	ncpSTP, ncpSPAIN        float64
	vlans, gain1, gainAlpha float64
	note2, note3            string
	// note3All is a Table 3 note that holds whatever the tie rule (the
	// notes above are written for pair ties).
	note3All string
}

var spainRows = []spainRow{
	{name: "testbed", spec: "spain-testbed", note3All: testbedNote, optimum: f64(4), heuristic: f64(4), trialsForBest: f64(4),
		switches: 4, links: 6, hosts: 80, covSTP: -1, covSPAIN: -1, ncpSTP: -1, ncpSPAIN: -1, vlans: 4, gain1: -1, gainAlpha: -1},
	{name: "FatTree(4)", spec: "fattree:4", note3: ftNote, optimum: f64(4), heuristic: f64(4), trialsForBest: f64(1),
		switches: 20, links: 32, hosts: 16, covSTP: 37.50, covSPAIN: 100, ncpSTP: 35.00, ncpSPAIN: 0, vlans: 4, gain1: 1.00, gainAlpha: 2.00},
	{name: "FatTree(8)", spec: "fattree:8", note3: ftNote, note2: ft2Note, optimum: f64(16), heuristic: f64(16), trialsForBest: f64(1),
		switches: 80, links: 256, hosts: 128, covSTP: 15.62, covSPAIN: 100, ncpSTP: 17.00, ncpSPAIN: 0, vlans: 16, gain1: 1.00, gainAlpha: 4.00},
	{name: "FatTree(16)", spec: "fattree:16", note3: ftNote, note2: ft2Note, optimum: f64(64), heuristic: f64(64), trialsForBest: f64(1),
		switches: 320, links: 2048, hosts: 1024, covSTP: 7.03, covSPAIN: 100, ncpSTP: 21.00, ncpSPAIN: 0, vlans: 64, gain1: 1.00, gainAlpha: 8.00},
	{name: "FatTree(48)", spec: "fattree:48", note3: ftNote, slow: true, oneTrial: true, optimum: f64(576), heuristic: f64(576), trialsForBest: f64(1),
		switches: 2880, links: 55296, hosts: 27648, covSTP: 2.17, covSPAIN: 100, ncpSTP: 17.00, ncpSPAIN: 0, vlans: 576, gain1: 1.00, gainAlpha: 24.00},
	{name: "HyperX(3)", spec: "hyperx:3", note3: hxNote, note2: hx2Note, heuristic: f64(12), trialsForBest: f64(475),
		switches: 9, links: 18, hosts: 216, covSTP: 44.44, covSPAIN: 100, ncpSTP: 10.83, ncpSPAIN: 0, vlans: 12, gain1: 3.02, gainAlpha: 1.81},
	{name: "HyperX(4)", spec: "hyperx:4", note3: hxNote, note2: hx2Note, heuristic: f64(38), trialsForBest: f64(304),
		switches: 16, links: 48, hosts: 384, covSTP: 31.25, covSPAIN: 100, ncpSTP: 21.41, ncpSPAIN: 0, vlans: 38, gain1: 4.38, gainAlpha: 2.49},
	{name: "HyperX(8)", spec: "hyperx:8", note3: hxNote, heuristic: f64(290),
		switches: 64, links: 448, hosts: 1536, covSTP: 14.06, covSPAIN: 100, ncpSTP: 16.31, ncpSPAIN: 0, vlans: 290, gain1: 9.46, gainAlpha: 5.18},
	{name: "HyperX(16)", spec: "hyperx:16", note3: hxNote, slow: true, heuristic: f64(971),
		switches: 256, links: 3840, hosts: 6144, covSTP: 6.64, covSPAIN: 100, ncpSTP: 17.86, ncpSPAIN: 0, vlans: 971, gain1: 19.37, gainAlpha: 10.49},
	{name: "CiscoDC(2,2)", spec: "ciscodc:2,2", note3: cdNote, note2: cd2Note, heuristic: f64(9), trialsForBest: f64(1549),
		switches: 14, links: 31, hosts: 192, covSTP: 32.26, covSPAIN: 90.32, ncpSTP: 12.14, ncpSPAIN: 0.71, vlans: 9, gain1: 2.20, gainAlpha: 2.00},
	{name: "CiscoDC(3,2)", spec: "ciscodc:3,2", note3: cdNote + " " + cdBadRow, note2: cd2Note, heuristic: f64(12), trialsForBest: f64(52),
		switches: 20, links: 46, hosts: 288, covSTP: 34.15, covSPAIN: 92.68, ncpSTP: 12.88, ncpSPAIN: 0, vlans: 12, gain1: 2.22, gainAlpha: 2.00},
	{name: "CiscoDC(4,3)", spec: "ciscodc:4,3", note3: cdNote + " " + cdBadRow, note2: cd2Note, heuristic: f64(18), trialsForBest: f64(39),
		switches: 34, links: 81, hosts: 576, covSTP: 35.53, covSPAIN: 94.74, ncpSTP: 14.64, ncpSPAIN: 0.30, vlans: 18, gain1: 2.23, gainAlpha: 2.00},
	{name: "CiscoDC(8,8)", spec: "ciscodc:8,8", note3: cdNote, heuristic: f64(38),
		switches: 146, links: 361, hosts: 3072, covSTP: 37.67, covSPAIN: 97.51, ncpSTP: 17.91, ncpSPAIN: 0.23, vlans: 38, gain1: 2.24, gainAlpha: 2.00},
	{name: "BCube(8,2)", spec: "bcube:8,2", note3: bcNote + " " + bcPruned, note2: bcPruned, optimum: f64(16), heuristic: f64(16),
		switches: 16, links: 128, hosts: 64, covSTP: 56.25, covSPAIN: 100, ncpSTP: 23.81, ncpSPAIN: 0.14, vlans: 16, gain1: 1.44, gainAlpha: 1.17},
	{name: "BCube(48,2)", spec: "bcube:48,2", note3: bcNote, slow: true, oneTrial: true, optimum: f64(96), heuristic: f64(96),
		switches: 96, links: 4608, hosts: 2304, covSTP: 51.04, covSPAIN: 100, ncpSTP: 22.50, ncpSPAIN: 0.36, vlans: 96, gain1: 1.04, gainAlpha: 1.04},
	{name: "BCube(8,4)", spec: "bcube:8,4", note3: bcNote + " " + bc84Note, note2: bc84VLANs, slow: true, oneTrial: true, optimum: f64(2048), heuristic: f64(2048),
		switches: 2048, links: 16384, hosts: 4096, covSTP: 31.82, covSPAIN: 100, ncpSTP: 43.19, ncpSPAIN: 0, vlans: 2048, gain1: 1.68, gainAlpha: 1.59},
	// Table 2 only.
	{name: "BCube(2,3)", spec: "bcube:2,3", note2: bc23Note, optimum: f64(12), heuristic: f64(12), trialsForBest: f64(290), vlans: -1},
	{name: "BCube(3,2)", spec: "bcube:3,2", optimum: f64(6), heuristic: f64(6), trialsForBest: f64(6), vlans: -1},
}

// Per-family explanations of the differences (docs/spain-plan.md has the
// long form).
const (
	testbedNote = "Not a row of the paper's Table 3, which covers the simulated topologies only: the paper's figures shown come from §10.1 (the Open Cirrus racks: the core switch TS and the rack switches S1–S3, 80 servers, the three TS–rack links and the three cross-connects Fig. 4 adds, 6 links) and Table 2 (4 VLANs)."
	ftNote      = "Gain PS=1: the paper's 1.00 means its Algorithm 1 broke ties the same way for every pair (all first paths through one core, like STP); ours starts every pair's port scans at its own random offset (--ties pair), so first paths spread over the cores (with --ties ordered, 1.00 as in the paper: docs/repro/ordered). PS=α: our α is p/2 (max-flow between edge switches), the paper's (p/2)²; the spreading lifts our gain above p/2 from FatTree(8) on. NCP STP: ours is the share of edge-switch pairs cut off, averaged over 10 random failure sets (noisy on small rows: FatTree(4) has 32 links, 1.3 failures per set); its expectation is about 14–16 % on every FatTree (exactly 14.03 % on FatTree(4), 14.67 % on FatTree(16)), below the paper's 35, 17, 21, 17 %, which we cannot reproduce: the paper does not say which node pairs it counts."
	hxNote      = "Fewer VLANs than the paper: the parallel tree-cover packer (with its majority round for the paths in no BFS tree) and pruning (Table 2 shows what the serial Algorithm 2 gives). NCP STP below the paper's: the 802.1D tree of a HyperX is shallow (every switch is within two hops of the root), so tree paths have at most four links. Gains above the paper's: see the throughput note in docs/spain-plan.md."
	ft2Note     = "The serial Algorithm 2 misses the paper's (p/2)² in one trial: first fit in random subgraph order lets paths through different cores share a subgraph until it can take no more, whatever the tie-breaking (FatTree(8), seed 1: 66 VLANs with pair ties, 62 with random ones, 19 with ordered ones; with k = (p/2)² = 16, 209, 212 and 211; docs/spain-plan.md). The parallel tree-cover packer reaches the optimum."
	hx2Note     = "The serial Algorithm 2 needs more VLANs than the paper's 475/304-trial best; we run 10 trials."
	cdNote      = "The uncovered links are the aggregation-pair and core-core links, as in the paper. More VLANs than the paper: a random port offset per pair in Algorithm 1 diversifies the paths of different pairs (with --ties ordered, every pair resolving ties alike, 7, 8, 9 and 14 VLANs, fewer than the paper's: docs/repro/ordered)."
	cdBadRow    = "The paper's coverage figures for CiscoDC(3,2) and (4,3) (34.15/92.68 % and 35.53/94.74 %) imply 41 and 76 links, not the 46 and 81 it lists; our counts follow the listed topology."
	cd2Note     = "The paper's best took up to 1549 trials (CiscoDC(2,2)); we run 10."
	bcNote      = "Servers relay, so they are both the path endpoints and bridges; VLAN 1 is rooted at the level-0 switch with the lowest bridge ID, which reproduces the paper's STP coverage of the two-level rows. Our gains are far above the paper's: under STP every flow between servers of different level-0 groups crosses the root switch's links, which our unit-capacity, max-load model makes the bottleneck; the paper's near-1 gains at saturation point to a host-side limit its text does not specify (see docs/spain-plan.md)."
	bc84VLANs   = "One trial (seed 1) needs one VLAN more than the paper's p^(l−1)·l = 2048 (one per switch); with --slow-trials 10 the best trial needs 2048. With pair ties a path corrects the servers' address digits in a cyclic order from a random start, which a VLAN around one switch can hold; with --ties random (every tie at random) a path corrects them in any order and the same packer needs 2524 in one trial (docs/repro/random) and 2391 in ten (docs/spain-plan.md). With --ties ordered it needs 1523 (docs/repro/ordered) and with --ties node 1902 (docs/repro/node), below 2048: p^(l−1)·l is the optimum of the paper's path set, not a lower bound for every Algorithm 1 path set."
	bc84Note    = bc84VLANs + " STP coverage below the paper's: 802.1D gives ties at equal root cost to the lowest bridge ID; ours number level-0 switches first, which leaves 1463 of the 2048 switches as leaves of the tree (links to them carry no host traffic); the paper's figure implies 930 leaves, another bridge-ID order it does not give."
	bc23Note    = "Both our packers need fewer VLANs than the paper's 12 for our k = α = 3 path set: the paper's optimum is for its own path set, not a lower bound for every Algorithm 1 path set."
	bcPruned    = "Where fewer VLANs than the paper's optimum p^(l−1)·l: tree cover reaches it (one VLAN per switch), then pruning moves every path of one VLAN into others that stay loop-free with it. The paper's optimum is for its own path set; ours fits into fewer, verified like every plan."
)

// tiesWords names a tie-breaking rule in the tables' notes. The per-row
// explanations are written for the default, pair ties; other runs leave
// them out and point to the discussion instead.
func tiesWords(t paths.Ties) string {
	const left = "per-row explanations, written for pair ties, are left out: see docs/spain-plan.md"
	switch t {
	case paths.TiesRandom:
		return "at random, at every node anew (--ties random; " + left + ")"
	case paths.TiesOrdered:
		return "in port order, the same way for every pair (--ties ordered; " + left + ")"
	case paths.TiesNode:
		return "by a fixed port preference per node drawn from the seed, the same way for every pair (--ties node; " + left + ")"
	}
	return "in port order from one random offset per pair, the same way at every node"
}

// plural is "1 trial" or "10 trials".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// paperVal turns a Table 3 figure into a cell value; negative means the
// paper has none.
func paperVal(v float64) *float64 {
	if v < 0 {
		return nil
	}
	return f64(v)
}

// Table 2 and 3 settings: the paper's where it gives them.
const (
	spainTrials     = 10   // packing trials N
	spainFailProb   = 0.04 // Table 3 NCP
	spainNCPTrials  = 10   // "averaged over 10 randomized trials"
	spainTputTrials = 10   // "the mean of 10 randomized trials"
	flowsPerHost    = 16   // flows queued per host for the throughput runs
	simFlowLimit    = 2500 // up to this many flows, the event simulation cross-checks the max-load formula
	serialPathLimit = 500_000
)

// rowTrials is the packing trials N for a row: opt.SlowTrials (at least
// one) on the oneTrial rows, spainTrials on every other.
func rowTrials(row spainRow, opt Options) int {
	if row.oneTrial {
		return max(1, opt.SlowTrials)
	}
	return spainTrials
}

// trialsWords says how many packing trials the rows run, for the notes.
func trialsWords(opt Options) string {
	return fmt.Sprintf("N = %d trials (%d on FatTree(48), BCube(48,2) and BCube(8,4): --slow-trials)", spainTrials, rowTrials(spainRow{oneTrial: true}, opt))
}

// SpainTable2 reproduces Table 2: the VLANs the packing needs, with the
// paper's serial Algorithm 2 (best of N) and with the parallel packer.
func SpainTable2(opt Options) (*Report, error) {
	r := &Report{
		Name:    "spain-table2",
		Command: opt.command("spain-table2"),
		Title:   "SPAIN Table 2: performance of the VLAN mapping heuristic",
		Columns: []Column{
			{Key: "optimum", Title: "optimal VLANs", Digits: 0},
			{Key: "serial", Title: "Alg. 2 serial", Digits: 0},
			{Key: "trials", Title: "trials for best", Digits: 0},
			{Key: "unpruned", Title: "parallel unpruned", Digits: 0},
			{Key: "parallel", Title: "parallel", Digits: 0},
		},
		Chart: "parallel",
		Notes: []string{
			fmt.Sprintf("k = α (computed by max-flow) for every row; %s for both packers; ties in Algorithm 1 broken %s (seed %d).", trialsWords(opt), tiesWords(opt.Ties), opt.Seed),
			"'optimal VLANs' is the paper's known optimum ((p/2)² for FatTree, p^(l−1)·l for BCube, 4 for the testbed), the optimum for the paper's path sets; we do not compute optima, and ours pack into fewer where pruning finds room ('parallel unpruned' is the best trial before pruning: the optimum on every FatTree and BCube(p,2) row).",
			"The paper's Table 2 gives the heuristic's count only for HyperX(3), (4) and CiscoDC(2,2), (3,2), (4,3); for HyperX(8), (16) and CiscoDC(8,8) the paper figure shown is Table 3's #VLANs.",
			fmt.Sprintf("The parallel packer prunes: it deletes each VLAN whose paths can all move into other VLANs, in every trial on path sets up to %d paths (keeping the best pruned trial), in the best trial only up to %d; 'parallel' is the count after pruning. The serial column is Algorithm 2 as published, unpruned.", paths.PruneEachLimit, paths.PruneLimit),
			"The paper's 'SPAIN's heuristic' figure is shown as the paper value of both the serial and the parallel column.",
			fmt.Sprintf("The serial Algorithm 2 is skipped (–) on path sets above %d paths: one first-fit trial there takes minutes; see docs/spain-plan.md.", serialPathLimit),
		},
	}
	for _, row := range spainRows {
		if !opt.keep(row.name, spainTable2Rows(false)) || opt.Quick && row.slow {
			continue
		}
		t0 := time.Now()
		g, err := topo.Parse(row.spec, opt.Seed)
		if err != nil {
			return nil, err
		}
		p, err := plan.Compute(g, plan.Options{Trials: rowTrials(row, opt), Seed: opt.Seed, Ties: opt.Ties})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", row.name, err)
		}
		// The best trial before pruning: pruning may keep another one
		// (every trial is pruned on small path sets, and a worse trial
		// can prune better).
		unpruned := -1
		for _, n := range p.Packing.TrialVLANs {
			if n >= 0 && (unpruned < 0 || n < unpruned) {
				unpruned = n
			}
		}
		vals := map[string]Value{
			"optimum":  {Paper: row.optimum},
			"unpruned": {Ours: f64(float64(unpruned))},
			"parallel": {Ours: f64(float64(p.NumVLANs)), Paper: row.heuristic},
			"serial":   {Paper: row.heuristic},
			"trials":   {Paper: row.trialsForBest},
		}
		note := fmt.Sprintf("parallel best by %s, %s", p.Packing.Strategy, plural(rowTrials(row, opt), "trial"))
		if p.Packing.Pruned > 0 {
			note += fmt.Sprintf(", the kept trial pruned %d → %d", p.NumVLANs+p.Packing.Pruned, p.NumVLANs)
		}
		note += "."
		if p.NumPaths <= serialPathLimit {
			pk, err := paths.Pack(p.F, p.PS, p.Tree.Links, paths.PackOptions{Trials: rowTrials(row, opt), Seed: opt.Seed})
			switch {
			case errors.Is(err, paths.ErrTooManyVLANs):
				note += " Serial Algorithm 2 exceeded 4094 VLANs in every trial."
			case err != nil:
				return nil, err
			default:
				// Verified like every plan: loop-free VLANs, VLAN 1 the
				// tree, every path inside one VLAN.
				sp := *p
				sp.Pack = pk
				if err := sp.Verify(); err != nil {
					return nil, fmt.Errorf("%s: serial Algorithm 2: %w", row.name, err)
				}
				vals["serial"] = Value{Ours: f64(float64(len(pk.VLANs))), Paper: row.heuristic}
				first := 0
				for i, n := range pk.TrialVLANs {
					if n == len(pk.VLANs) {
						first = i
						break
					}
				}
				vals["trials"] = Value{Ours: f64(float64(first + 1)), Paper: row.trialsForBest}
			}
		} else {
			note += fmt.Sprintf(" Serial not run: %d paths.", p.NumPaths)
		}
		if row.note2 != "" && opt.Ties == paths.TiesPair {
			note += " " + row.note2
		}
		r.Rows = append(r.Rows, Row{Name: row.name, Values: vals, Note: note, Seconds: time.Since(t0).Seconds()})
		if opt.Progress != nil {
			opt.Progress(fmt.Sprintf("%s: %d VLANs (%.1fs)", row.name, p.NumVLANs, time.Since(t0).Seconds()))
		}
	}
	if len(r.Rows) == 0 {
		return nil, fmt.Errorf("experiment: %w: no row of spain-table2 selected", ErrUnknownRepro)
	}
	return r, nil
}

// SpainTable3 reproduces Table 3.
func SpainTable3(opt Options) (*Report, error) {
	r := &Report{
		Name:    "spain-table3",
		Command: opt.command("spain-table3"),
		Title:   "SPAIN Table 3: summary of simulation results",
		Columns: []Column{
			{Key: "switches", Title: "#switches", Digits: 0},
			{Key: "links", Title: "#links", Digits: 0},
			{Key: "hosts", Title: "#hosts", Digits: 0},
			{Key: "cov_stp", Title: "cov. STP %", Digits: 2},
			{Key: "cov_spain", Title: "cov. SPAIN %", Digits: 2},
			{Key: "ncp_stp", Title: "NCP STP %", Digits: 2},
			{Key: "ncp_spain", Title: "NCP SPAIN %", Digits: 2},
			{Key: "vlans", Title: "#VLANs", Digits: 0},
			{Key: "gain1", Title: "gain PS=1", Digits: 2},
			{Key: "gain_alpha", Title: "gain PS=α", Digits: 2},
		},
		Chart: "vlans",
		Notes: []string{
			fmt.Sprintf("PS = k = α computed by max-flow per topology; ties in Algorithm 1 broken %s; packing %s; NCP at f = %.2f over %d trials; throughput: %d·H unit flows between random distinct hosts (H hosts, so %[5]d per host on average), unit link capacity, max-min fair, mean of %d trials; seed %d.",
				tiesWords(opt.Ties), trialsWords(opt), spainFailProb, spainNCPTrials, flowsPerHost, spainTputTrials, opt.Seed),
			"#links counts fabric links (both ends forward), as the paper's figures do.",
			fmt.Sprintf("VLANs: the parallel packer's, pruned (each VLAN whose paths can all move into other VLANs is deleted): every trial on path sets up to %d paths, keeping the best pruned one; the best trial only up to %d.", paths.PruneEachLimit, paths.PruneLimit),
		},
	}
	for _, row := range spainRows {
		if row.vlans < 0 || !opt.keep(row.name, spainTable3Rows(false)) || opt.Quick && row.slow {
			continue
		}
		t0 := time.Now()
		g, err := topo.Parse(row.spec, opt.Seed)
		if err != nil {
			return nil, err
		}
		p, err := plan.Compute(g, plan.Options{Trials: rowTrials(row, opt), Seed: opt.Seed, Ties: opt.Ties})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", row.name, err)
		}
		ncp, err := p.NCP(spainFailProb, spainNCPTrials, opt.Seed)
		if err != nil {
			return nil, err
		}
		g1, ga, method, err := throughputGain(p, opt.Seed)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", row.name, err)
		}
		switches := 0
		hosts := 0
		for v := range g.NumNodes() {
			switch g.Node(topo.NodeID(v)).Kind {
			case topo.Switch:
				switches++
			case topo.Host:
				hosts++
			}
		}
		vals := map[string]Value{
			"switches":   {f64(float64(switches)), paperVal(row.switches)},
			"links":      {f64(float64(p.FabricLinks)), paperVal(row.links)},
			"hosts":      {f64(float64(hosts)), paperVal(row.hosts)},
			"cov_stp":    {f64(100 * p.STPCoverage), paperVal(row.covSTP)},
			"cov_spain":  {f64(100 * p.Coverage), paperVal(row.covSPAIN)},
			"ncp_stp":    {f64(100 * ncp.STP), paperVal(row.ncpSTP)},
			"ncp_spain":  {f64(100 * ncp.SPAIN), paperVal(row.ncpSPAIN)},
			"vlans":      {f64(float64(p.NumVLANs)), paperVal(row.vlans)},
			"gain1":      {f64(g1), paperVal(row.gain1)},
			"gain_alpha": {f64(ga), paperVal(row.gainAlpha)},
		}
		note := fmt.Sprintf("α = %d, %d paths, %s", p.Alpha, p.NumPaths, plural(rowTrials(row, opt), "packing trial"))
		if p.Packing.Pruned > 0 {
			note += fmt.Sprintf(", pruned %d → %d VLANs", p.NumVLANs+p.Packing.Pruned, p.NumVLANs)
		}
		note += fmt.Sprintf(", VLAN 1 rooted at %s, throughput by %s.", p.Root, method)
		if row.note3 != "" && opt.Ties == paths.TiesPair {
			note += " " + row.note3
		}
		if row.note3All != "" {
			note += " " + row.note3All
		}
		r.Rows = append(r.Rows, Row{Name: row.name, Values: vals, Note: note, Seconds: time.Since(t0).Seconds()})
		if opt.Progress != nil {
			opt.Progress(fmt.Sprintf("%s: %d VLANs, coverage %.2f%% (%.1fs)", row.name, p.NumVLANs, 100*p.Coverage, time.Since(t0).Seconds()))
		}
	}
	if len(r.Rows) == 0 {
		return nil, fmt.Errorf("experiment: %w: no row of spain-table3 selected", ErrUnknownRepro)
	}
	return r, nil
}

// throughputGain runs §8's throughput experiment: flowsPerHost·H unit flows
// between random distinct hosts, all queued at time 0, unit capacity on
// every directed link (host links included), max-min fair sharing; the
// time until all complete under STP divided by that under SPAIN with the
// first path of each pair (PS = 1) and with a random one of its α paths
// (PS = α), averaged over trials. It returns the two gains and the method
// used ("event simulation" or "max-load", exact for equal flows).
func throughputGain(p *plan.Plan, seed uint64) (g1, ga float64, method string, err error) {
	w, err := newTputWorkload(p)
	if err != nil {
		return 0, 0, "", err
	}
	nflows := flowsPerHost * len(w.hosts)
	method = "max-load"
	makespan := func(routes [][]int32, check bool) (float64, error) {
		m, checked, err := unitMakespan(w.nl, routes, check)
		if checked {
			method = "max-load, checked by event simulation"
		}
		return m, err
	}
	for t := range spainTputTrials {
		r := rand.New(rand.NewPCG(seed^0x7470_7574, uint64(t)))
		_, stp, one, alpha := w.routes(r, nflows)
		check := t == 0 && nflows <= simFlowLimit
		ms, err := makespan(stp, check)
		if err != nil {
			return 0, 0, "", err
		}
		m1, err := makespan(one, check)
		if err != nil {
			return 0, 0, "", err
		}
		ma, err := makespan(alpha, check)
		if err != nil {
			return 0, 0, "", err
		}
		g1 += ms / m1
		ga += ms / ma
	}
	return g1 / spainTputTrials, ga / spainTputTrials, method, nil
}

// tputWorkload routes the throughput experiment's flows over directed
// links: link l from its A end to its B end is 2l, the other way 2l+1.
type tputWorkload struct {
	p     *plan.Plan
	hosts []topo.NodeID
	// hostLink is a plain host's link to its edge node (relaying hosts
	// are edge nodes themselves and have none).
	hostLink map[topo.NodeID]topo.LinkID
	nl       int // directed links
	tree     []topo.LinkID
}

func newTputWorkload(p *plan.Plan) (*tputWorkload, error) {
	f := p.F
	g := f.G
	w := &tputWorkload{p: p, hostLink: make(map[topo.NodeID]topo.LinkID), nl: 2 * g.NumLinks()}
	for v := range g.NumNodes() {
		n := topo.NodeID(v)
		if g.Node(n).Kind != topo.Host {
			continue
		}
		w.hosts = append(w.hosts, n)
		if !g.Node(n).Relay {
			for _, l := range g.Ports(n) {
				if l != topo.NoLink && g.Link(l).Other(n).Node == f.HostEdge[n] {
					w.hostLink[n] = l
					break
				}
			}
		}
	}
	if len(w.hosts) < 2 {
		return nil, fmt.Errorf("throughput gain needs at least 2 hosts, the topology has %d", len(w.hosts))
	}
	return w, nil
}

// dir is link l's directed index when crossed from node from.
func (w *tputWorkload) dir(l topo.LinkID, from topo.NodeID) int32 {
	a, _ := w.p.F.Ends(l)
	if a == from {
		return int32(2 * l)
	}
	return int32(2*l + 1)
}

// walk appends the directed links of the fabric path ls, given from node
// from, traversed from from (or, with reverse, from its far end).
func (w *tputWorkload) walk(buf []int32, from topo.NodeID, ls []topo.LinkID, reverse bool) []int32 {
	f := w.p.F
	if !reverse {
		v := from
		for _, l := range ls {
			buf = append(buf, w.dir(l, v))
			v = f.Other(l, v)
		}
		return buf
	}
	// Reverse: find the far end first.
	v := from
	for _, l := range ls {
		v = f.Other(l, v)
	}
	for i := len(ls) - 1; i >= 0; i-- {
		buf = append(buf, w.dir(ls[i], v))
		v = f.Other(ls[i], v)
	}
	return buf
}

// routes draws n flows between random distinct hosts from r and returns
// their ends and their routes under STP (the tree), SPAIN PS = 1 (the
// pair's first path) and SPAIN PS = α (one of the pair's paths at random).
// Hosts on one edge node take the same route in all three.
func (w *tputWorkload) routes(r *rand.Rand, n int) (ends [][2]topo.NodeID, stp, one, alpha [][]int32) {
	f, ps, hosts := w.p.F, w.p.PS, w.hosts
	for range n {
		s := hosts[r.IntN(len(hosts))]
		d := hosts[r.IntN(len(hosts)-1)]
		if d == s {
			d = hosts[len(hosts)-1]
		}
		ends = append(ends, [2]topo.NodeID{s, d})
		es, ed := f.HostEdge[s], f.HostEdge[d]
		var head []int32
		if l, ok := w.hostLink[s]; ok {
			head = append(head, w.dir(l, s))
		}
		var tail int32 = -1
		if l, ok := w.hostLink[d]; ok {
			tail = w.dir(l, ed)
		}
		mk := func(fabric func([]int32) []int32) []int32 {
			rt := append([]int32(nil), head...)
			rt = fabric(rt)
			if tail >= 0 {
				rt = append(rt, tail)
			}
			return rt
		}
		w.tree = w.p.Tree.PathBetween(es, ed, w.tree[:0])
		stp = append(stp, mk(func(b []int32) []int32 { return w.walk(b, es, w.tree, false) }))
		if es == ed {
			one = append(one, stp[len(stp)-1])
			alpha = append(alpha, stp[len(stp)-1])
			continue
		}
		i, j := f.EdgeIndex[es], f.EdgeIndex[ed]
		rev := i > j
		if rev {
			i, j = j, i
		}
		pi := int(j)*(int(j)-1)/2 + int(i)
		lo, hi := ps.PairPaths(pi)
		from := ps.Pairs[pi].A
		one = append(one, mk(func(b []int32) []int32 { return w.walk(b, from, ps.Path(lo), rev) }))
		pick := lo + r.IntN(hi-lo)
		alpha = append(alpha, mk(func(b []int32) []int32 { return w.walk(b, from, ps.Path(pick), rev) }))
	}
	return ends, stp, one, alpha
}

// unitMakespan is the time until the last of the routes' unit flows
// completes on unit-capacity links (nl directed links): their max load
// (flowsim's package comment). With check it also runs the event
// simulation and fails if the two disagree, so that the shortcut stays
// checked against the model; the figure returned is the max load either
// way, so that it does not depend on which instances are checked.
func unitMakespan(nl int, routes [][]int32, check bool) (ms float64, checked bool, err error) {
	m, err := flowsim.MaxLoad(nl, routes)
	if err != nil || !check {
		return float64(m), false, err
	}
	caps := make([]float64, nl)
	for i := range caps {
		caps[i] = 1
	}
	fl := make([]flowsim.Flow, len(routes))
	for i, r := range routes {
		fl[i] = flowsim.Flow{Path: r, Size: 1}
	}
	res, err := flowsim.Run(flowsim.Network{Cap: caps}, fl)
	if err != nil {
		return 0, false, err
	}
	if math.Abs(res.Makespan-float64(m)) > 1e-6*float64(m) {
		return 0, false, fmt.Errorf("flow simulation makespan %v disagrees with max load %d", res.Makespan, m)
	}
	return float64(m), true, nil
}

// spainTable2Rows and spainTable3Rows name the rows SpainTable2 and
// SpainTable3 go through (Repro.Rows).
func spainTable2Rows(quick bool) []string { return spainRowNames(quick, true) }
func spainTable3Rows(quick bool) []string { return spainRowNames(quick, false) }

func spainRowNames(quick, table2 bool) []string {
	var out []string
	for _, r := range spainRows {
		if !(quick && r.slow) && (table2 || r.vlans >= 0) {
			out = append(out, r.name)
		}
	}
	return out
}

// SpainTopology is one topology of SPAIN's Table 3, for tools that run
// their own measurements over the same rows (edgefabric bench).
type SpainTopology struct {
	Name, Spec string
	// Slow marks the rows --quick skips.
	Slow bool
}

// SpainTable3Topologies lists Table 3's rows in the paper's order.
func SpainTable3Topologies() []SpainTopology {
	var out []SpainTopology
	for _, r := range spainRows {
		if r.vlans >= 0 {
			out = append(out, SpainTopology{r.name, r.spec, r.slow})
		}
	}
	return out
}
