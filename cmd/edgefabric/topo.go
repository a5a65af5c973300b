package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/edgefabric/edgefabric/topo"
)

// topoFlags are the flags every topo subcommand shares.
type topoFlags struct {
	seed     uint64
	zooHosts int
	c        *cobra.Command
}

func (f *topoFlags) register(c *cobra.Command) {
	f.c = c
	c.Flags().Uint64Var(&f.seed, "seed", 1, "seed for random topologies (jellyfish)")
	c.Flags().IntVar(&f.zooHosts, "hosts-per-switch", topo.DefaultZooHosts, "hosts added to each switch of a GraphML file without edgefabric annotations (Topology Zoo); refused elsewhere")
}

func (f *topoFlags) resolve(arg string) (*topo.Graph, error) {
	if f.zooHosts < 0 {
		return nil, badInput(fmt.Errorf("--hosts-per-switch must not be negative, got %d", f.zooHosts))
	}
	// Given explicitly, the flag must take effect: on a spec or a file
	// with its own hosts it would be silently ignored.
	set := f.c.Flags().Changed("hosts-per-switch")
	g, err := topo.ResolveWith(arg, f.seed, topo.LoadOptions{ZooHosts: f.zooHosts, ZooHostsSet: set})
	if errors.Is(err, topo.ErrNoEffect) {
		return nil, badInput(fmt.Errorf("--hosts-per-switch: %w", err))
	}
	if err != nil {
		return nil, badInput(err)
	}
	return g, nil
}

func newTopoCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "topo",
		Short: "Build, inspect and convert topologies",
		Long: `topo builds a topology from a spec or reads it from a file, summarizes it and
converts it between formats.

Specs:
  ` + strings.Join(topo.Specs(), "\n  ") + `

Files: native YAML or JSON, containerlab (.clab.yml), GraphML (Topology Zoo);
DOT is written, not read. See docs/topology.md.`,
		Example: `  edgefabric topo list                                  # every spec, with what it builds
  edgefabric topo show fattree:4                        # switches, hosts, links, diameter, bisection
  edgefabric topo export bcube:4,2 --format clab > bcube.clab.yml`,
	}
	c.AddCommand(newTopoShowCmd(), newTopoExportCmd(), newTopoListCmd())
	return c
}

func newTopoShowCmd() *cobra.Command {
	var f topoFlags
	var asJSON, exact bool
	c := &cobra.Command{
		Use:   "show SPEC|FILE",
		Short: "Summarize a topology: switches, hosts, links, diameter, degree, bisection",
		Long: `show builds or loads a topology and prints its size and shape: switches,
hosts (and how many relay, as BCube servers do), fabric links (both ends
forward: switch to switch, and the links of relaying hosts) and host
links, the diameter in switch hops (the longest shortest path between two
forwarding nodes over fabric links), the largest number of connected ports
of any node, an upper-bound estimate of the bisection bandwidth in bits
per second, how many links have each rate, the range of link delays, and
whether every node reaches every other.

On large fabrics the diameter is given as bounds unless --exact-diameter is
set. "edgefabric topo list" lists the specs.`,
		Example: `  edgefabric topo show fattree:4
  edgefabric topo show leafspine:2,5,5 --json
  edgefabric topo show jellyfish:20,8,5 --seed 7
  edgefabric topo show examples/topologies/triangle-zoo.graphml --hosts-per-switch 2`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			g, err := f.resolve(args[0])
			if err != nil {
				return err
			}
			o := topo.StatsOptions{}
			if exact {
				o.DiameterBudget = -1
			}
			s := topo.StatsWith(g, o)
			if asJSON {
				return writeJSON(c.OutOrStdout(), s)
			}
			writeSummary(c.OutOrStdout(), s)
			return nil
		},
	}
	f.register(c)
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	c.Flags().BoolVar(&exact, "exact-diameter", false, "compute the exact diameter however long it takes")
	return c
}

// writeSummary prints aligned "key: value" lines.
func writeSummary(w io.Writer, s topo.Summary) {
	diameter := strconv.Itoa(s.Diameter) + " switch hops"
	if s.Diameter == 1 {
		diameter = "1 switch hop"
	}
	switch {
	case s.Diameter < 0:
		diameter = "infinite (the fabric is not connected)"
	case !s.DiameterExact:
		diameter = fmt.Sprintf("%d to %d switch hops (bounds; --exact-diameter for the exact value)", s.Diameter, s.DiameterUpper)
	}
	hosts := strconv.Itoa(s.Hosts)
	if s.RelayHosts > 0 {
		hosts += fmt.Sprintf(" (%d relaying)", s.RelayHosts)
	}
	connected := "yes"
	if !s.Connected {
		connected = "no"
	}
	rows := [][2]string{
		{"topology", s.Name},
		{"switches", strconv.Itoa(s.Switches)},
		{"hosts", hosts},
		{"fabric links", strconv.Itoa(s.FabricLinks)},
		{"host links", strconv.Itoa(s.HostLinks)},
		{"diameter", diameter},
		{"max degree", strconv.Itoa(s.MaxDegree)},
		{"bisection", humanRate(s.BisectionBps) + " (estimate, upper bound)"},
		{"link rates", rateList(s.Rates)},
		{"link delays", delayRange(s.DelayMinNs, s.DelayMaxNs)},
		{"connected", connected},
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%-13s %s\n", r[0]+":", r[1])
	}
}

// rateList prints how many links have each rate, fastest first:
// "11 x 10 Gb/s, 3 x 1 Gb/s".
func rateList(rs []topo.RateCount) string {
	if len(rs) == 0 {
		return "no links"
	}
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%d x %s", r.Links, humanRate(r.Bps)))
	}
	return strings.Join(parts, ", ")
}

// delayRange prints the link delays' range: "1 us", "0 ns to 16.09 ms".
func delayRange(minNs, maxNs int64) string {
	if minNs == maxNs {
		return humanDelay(minNs)
	}
	return humanDelay(minNs) + " to " + humanDelay(maxNs)
}

// humanDelay prints ns with the largest unit that keeps it at least 1, to
// four significant digits.
func humanDelay(ns int64) string {
	for _, u := range []struct {
		div  float64
		name string
	}{{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}} {
		if float64(ns) >= u.div {
			return strconv.FormatFloat(float64(ns)/u.div, 'g', 4, 64) + " " + u.name
		}
	}
	return strconv.FormatInt(ns, 10) + " ns"
}

// humanRate prints b/s with an SI prefix: "8 Gb/s", "13.824 Tb/s".
func humanRate(bps int64) string {
	v := float64(bps)
	for _, u := range []struct {
		div  float64
		name string
	}{{1e12, "Tb/s"}, {1e9, "Gb/s"}, {1e6, "Mb/s"}, {1e3, "kb/s"}} {
		if v >= u.div {
			return strconv.FormatFloat(v/u.div, 'f', -1, 64) + " " + u.name
		}
	}
	return strconv.FormatInt(bps, 10) + " b/s"
}

func newTopoExportCmd() *cobra.Command {
	var f topoFlags
	var format, out string
	c := &cobra.Command{
		Use:   "export SPEC|FILE [--format yaml|json|dot|clab|graphml] [-o FILE]",
		Short: "Write a topology in another format",
		Long: `export builds or loads a topology and writes it as native YAML or JSON (the
format edgefabric reads back unchanged), Graphviz dot, a containerlab
topology (.clab.yml) or GraphML, to standard output or to --output.

Without --format, an --output name ending in .json, .clab.yml (.clab.yaml),
.graphml (.xml) or .dot (.gv) gets that format, as edgefabric reads such a
file back by its name; anything else gets native YAML. A --format the name
contradicts (--format yaml -o x.graphml) is refused.

--output replaces an existing file only once the new one is complete: an
export that fails, or Ctrl-C, leaves it as it was (and no temporary file
beside it).`,
		Example: `  edgefabric topo export fattree:4 > fattree4.yaml
  edgefabric topo export spain-testbed --format clab -o spain.clab.yml
  edgefabric topo export ring:5 --format dot | dot -Tsvg > ring5.svg`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			// A file named for one format holding another: edgefabric
			// reads a .graphml or .json file back as its name says, so
			// "-o x.graphml" wrote YAML it could not read.
			named := topo.FormatInvalid
			if out != "-" {
				named = formatOfName(out)
			}
			ff := named
			if format != "" { // given (empty, it is refused)
				var err error
				if ff, err = topo.ParseFormat(format); err != nil {
					return badInput(fmt.Errorf("--format: %w", err))
				}
				// A .yaml file may hold a containerlab topology or JSON
				// (YAML too): the reader tells them apart by content.
				if named != topo.FormatInvalid && ff != named && !(named == topo.FormatYAML && (ff == topo.FormatClab || ff == topo.FormatJSON)) {
					return badInput(fmt.Errorf("--format %s: --output %s names a %s file: give --format %s, or a name that fits", ff, out, named, named))
				}
			}
			if ff == topo.FormatInvalid {
				ff = topo.FormatYAML
			}
			g, err := f.resolve(args[0])
			if err != nil {
				return err
			}
			if out == "" || out == "-" {
				return topo.Export(c.OutOrStdout(), g, ff)
			}
			// An existing file is replaced whole or not at all.
			return writeReplacing("--output", out, func(w io.Writer) error { return topo.Export(w, g, ff) })
		},
	}
	f.register(c)
	c.Flags().StringVar(&format, "format", "", "output format: yaml, json, dot, clab or graphml (default: what the --output name says, else yaml)")
	c.Flags().StringVarP(&out, "output", "o", "", "write to this file instead of standard output")
	return c
}

// formatOfName is the export format a file name asks for, as
// topo.DetectFormat reads the file back (.graphml and .xml are GraphML,
// .json JSON, .dot and .gv DOT), with containerlab's .clab.yml and
// .clab.yaml, and .yaml and .yml native YAML; FormatInvalid for any other
// name.
func formatOfName(name string) topo.Format {
	base := strings.ToLower(filepath.Base(name))
	if strings.HasSuffix(base, ".clab.yml") || strings.HasSuffix(base, ".clab.yaml") {
		return topo.FormatClab
	}
	switch filepath.Ext(base) {
	case ".graphml", ".xml":
		return topo.FormatGraphML
	case ".json":
		return topo.FormatJSON
	case ".dot", ".gv":
		return topo.FormatDOT
	case ".yaml", ".yml":
		return topo.FormatYAML
	}
	return topo.FormatInvalid
}

func newTopoListCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "list",
		Short: "List the topology specs",
		Long: `list prints every topology spec: the generators with their arguments
(optional ones in brackets) and the fixed topologies from the papers.`,
		Example: `  edgefabric topo list
  edgefabric topo list --json`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			if asJSON {
				return writeJSON(c.OutOrStdout(), topo.SpecInfos())
			}
			for _, s := range topo.Specs() {
				fmt.Fprintln(c.OutOrStdout(), s)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON: a list of {spec, usage}")
	return c
}
