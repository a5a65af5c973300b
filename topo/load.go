package topo

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Format names a topology file format. The zero value is invalid.
type Format uint8

const (
	FormatInvalid Format = iota
	// FormatYAML is the native format written as YAML.
	FormatYAML
	// FormatJSON is the native format written as JSON.
	FormatJSON
	// FormatClab is a containerlab topology file.
	FormatClab
	// FormatGraphML is GraphML (Topology Zoo or edgefabric's dialect).
	FormatGraphML
	// FormatDOT is Graphviz DOT, export only.
	FormatDOT
)

// ErrExportOnly reports a file in a format edgefabric writes but cannot
// read (DOT).
var ErrExportOnly = errors.New("export-only format")

// ErrNoEffect reports an option given explicitly where it would change
// nothing: hosts per switch for anything but a Topology Zoo style GraphML
// file.
var ErrNoEffect = errors.New("no effect")

// readable names the formats Load reads, for errors.
const readable = "native YAML or JSON, containerlab (.clab.yml) and GraphML"

var formatNames = []string{"invalid", "yaml", "json", "clab", "graphml", "dot"}

func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "format(" + strconv.Itoa(int(f)) + ")"
}

// ParseFormat reads a format name: yaml, json, clab, graphml, dot.
func ParseFormat(s string) (Format, error) {
	for i, n := range formatNames[1:] {
		if strings.EqualFold(s, n) {
			return Format(i + 1), nil
		}
	}
	return FormatInvalid, fmt.Errorf("topo: %w: format %q (want yaml, json, clab, graphml or dot)", ErrBadValue, s)
}

// LoadOptions tune loading.
type LoadOptions struct {
	// Format forces a format; FormatInvalid detects it from the file name
	// and contents.
	Format Format
	// ZooHosts is how many hosts each switch of a GraphML file without
	// edgefabric annotations (a Topology Zoo graph) gets.
	ZooHosts int
	// ZooHostsSet says the caller chose ZooHosts (a command-line flag
	// given): reading anything else than a Topology Zoo style GraphML
	// file, where ZooHosts would be silently ignored, is then an error
	// (ErrNoEffect). ResolveWith refuses it for a spec likewise.
	ZooHostsSet bool
}

// DefaultZooHosts is Load's LoadOptions.ZooHosts: one host per router, so
// that every switch of a Topology Zoo graph is an edge switch.
const DefaultZooHosts = 1

// MaxFileSize bounds the files Load reads.
const MaxFileSize = 1 << 30

// Load reads a topology file: native YAML or JSON, containerlab, or
// GraphML, detected from the name and contents.
func Load(path string) (*Graph, error) {
	return LoadWith(path, LoadOptions{ZooHosts: DefaultZooHosts})
}

// LoadWith is Load with options.
func LoadWith(path string, o LoadOptions) (*Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("topo: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("topo: %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("topo: %s: %w: file larger than %d bytes", path, ErrTooLarge, MaxFileSize)
	}
	return Decode(data, path, o)
}

// Decode reads a topology from data; file names it in errors and helps
// detect the format.
func Decode(data []byte, file string, o LoadOptions) (*Graph, error) {
	f := o.Format
	if f == FormatInvalid {
		f = DetectFormat(file, data)
	}
	if o.ZooHosts < 0 {
		return nil, fmt.Errorf("topo: %w: hosts per switch must not be negative, got %d", ErrBadValue, o.ZooHosts)
	}
	if o.ZooHostsSet && f != FormatGraphML && f != FormatDOT {
		return nil, fmt.Errorf("topo: %s: %w: hosts per switch apply only to GraphML files without edgefabric annotations (Topology Zoo), and this is a %s file", file, ErrNoEffect, formatLong[f])
	}
	var g *Graph
	var err error
	switch f {
	case FormatYAML, FormatJSON:
		g, err = decodeNative(file, data)
	case FormatClab:
		g, err = decodeClab(file, data)
	case FormatGraphML:
		g, err = decodeGraphML(file, data, o)
	case FormatDOT:
		return nil, fmt.Errorf("topo: %s: %w: DOT (Graphviz) can be written but not read; edgefabric reads %s", file, ErrExportOnly, readable)
	default:
		return nil, fmt.Errorf("topo: %s: %w: cannot read format %v", file, ErrBadValue, f)
	}
	if err != nil {
		return nil, err
	}
	if g.Name == "" {
		g.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	return g, nil
}

// formatLong names formats in errors.
var formatLong = map[Format]string{FormatYAML: "native YAML", FormatJSON: "native JSON", FormatClab: "containerlab", FormatGraphML: "GraphML", FormatDOT: "DOT"}

// dotStart matches the start of a DOT graph: [strict] (graph|digraph)
// [ID] '{', keywords in any case as DOT has them.
var dotStart = regexp.MustCompile(`^(?i:strict[ \t\r\n]+)?(?i:di)?(?i:graph)([ \t\r\n]+("([^"\\]|\\.)*"|[^ \t\r\n{"]+))?[ \t\r\n]*\{`)

// DetectFormat guesses a file's format: GraphML by extension or a leading
// '<', JSON by extension or a leading '{', DOT (export only, so that Load
// can say so) by extension .dot or .gv or a leading "graph", "digraph" or
// "strict" opening a DOT graph, containerlab when the top-level mapping has
// a "topology" key, native YAML otherwise.
func DetectFormat(file string, data []byte) Format {
	ext := strings.ToLower(filepath.Ext(file))
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	switch {
	case ext == ".graphml" || ext == ".xml" || bytes.HasPrefix(trimmed, []byte("<")):
		return FormatGraphML
	case ext == ".json" || bytes.HasPrefix(trimmed, []byte("{")):
		return FormatJSON
	case ext == ".dot" || ext == ".gv" || dotStart.Match(trimmed[:min(len(trimmed), 4096)]):
		return FormatDOT
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "topology:") {
			return FormatClab
		}
	}
	return FormatYAML
}

// Export writes g in format f.
func Export(w io.Writer, g *Graph, f Format) error {
	switch f {
	case FormatYAML:
		return WriteYAML(w, g)
	case FormatJSON:
		return WriteJSON(w, g)
	case FormatClab:
		return WriteClab(w, g)
	case FormatGraphML:
		return WriteGraphML(w, g)
	case FormatDOT:
		return WriteDOT(w, g)
	}
	return fmt.Errorf("topo: %w: cannot write format %v", ErrBadValue, f)
}

// dotID quotes s as a DOT string.
func dotID(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`).Replace(s) + `"`
}

// WriteDOT writes g for Graphviz: switches as boxes (with their role),
// hosts as ellipses (relaying hosts as double octagons), each edge labelled
// with its port numbers at both ends and its rate when not the default.
func WriteDOT(w io.Writer, g *Graph) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "graph %s {\n  node [fontsize=10];\n  edge [fontsize=8];\n", dotID(g.Name))
	for i := range g.nodes {
		n := &g.nodes[i]
		shape := "box"
		if n.Kind == Host {
			shape = "ellipse"
			if n.Relay {
				shape = "doubleoctagon"
			}
		}
		label := n.Name
		if n.Role != "" {
			label += "\n" + n.Role
		}
		fmt.Fprintf(bw, "  %s [shape=%s, label=%s];\n", dotID(n.Name), shape, dotID(label))
	}
	for i := range g.links {
		l := &g.links[i]
		fmt.Fprintf(bw, "  %s -- %s [taillabel=\"%d\", headlabel=\"%d\"", dotID(g.nodes[l.A.Node].Name), dotID(g.nodes[l.B.Node].Name), l.A.Port, l.B.Port)
		if l.Rate != DefaultRate {
			fmt.Fprintf(bw, ", label=%s", dotID(FormatRate(l.Rate)))
		}
		bw.WriteString("];\n")
	}
	bw.WriteString("}\n")
	return bw.Flush()
}
