package topo

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
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

// MaxFileSize bounds the files Load reads: 64 MiB, four times the
// largest export of fattree:48 (GraphML, 16 MB). Reading a file takes 12
// to 60 times its size in memory (fattree:48: 130 MB for 3 MB of YAML,
// 345 MB for 5.7 MB of containerlab), so the 1 GiB this was let a file
// exhaust memory, and /dev/zero was read for a gigabyte before it was
// refused.
const MaxFileSize = 64 << 20

// ErrNotRegular reports a path Load will not read: neither a regular file
// nor a pipe (a device such as /dev/zero, a directory, a socket).
var ErrNotRegular = errors.New("not a regular file or a pipe")

// Load reads a topology file: native YAML or JSON, containerlab, or
// GraphML, detected from the name and contents.
func Load(path string) (*Graph, error) {
	return LoadWith(path, LoadOptions{ZooHosts: DefaultZooHosts})
}

// LoadWith is Load with options.
func LoadWith(path string, o LoadOptions) (*Graph, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Decode(data, path, o)
}

// readFile reads a topology file of at most MaxFileSize bytes. A regular
// file larger than that is refused before anything is read, a pipe (or
// standard input, whatever it is) once it has given one byte more than
// that; anything else is refused without being opened (ErrNotRegular): a
// device may never end (/dev/zero), and opening one can have effects.
func readFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		// Said as opening it would ("open x.yaml: no such file or
		// directory"): the user asked for a file to be read.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = &fs.PathError{Op: "open", Path: pe.Path, Err: pe.Err}
		}
		return nil, fmt.Errorf("topo: %w", err)
	}
	if err := checkReadable(path, fi); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("topo: %w", err)
	}
	defer f.Close()
	// What was opened, which may have replaced what was looked at.
	if fi, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("topo: %w", err)
	}
	if err := checkReadable(path, fi); err != nil {
		return nil, err
	}
	if fi.Mode().IsRegular() && fi.Size() > MaxFileSize {
		return nil, fmt.Errorf("topo: %s: %w: file of %d bytes, larger than %d", path, ErrTooLarge, fi.Size(), MaxFileSize)
	}
	// Bounded all the same: a file may grow, and a pipe says nothing
	// of its size.
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("topo: %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("topo: %s: %w: file larger than %d bytes", path, ErrTooLarge, MaxFileSize)
	}
	return data, nil
}

// checkReadable refuses what readFile does not read: anything but a
// regular file, a pipe, or this process's standard input (a terminal,
// for one).
func checkReadable(path string, fi os.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() || m&os.ModeNamedPipe != 0 {
		return nil
	}
	if in, err := os.Stdin.Stat(); err == nil && os.SameFile(fi, in) {
		return nil
	}
	what := "an irregular file"
	switch {
	case m.IsDir():
		what = "a directory"
	case m&os.ModeCharDevice != 0:
		what = "a character device"
	case m&os.ModeDevice != 0:
		what = "a block device"
	case m&os.ModeSocket != 0:
		what = "a socket"
	}
	return fmt.Errorf("topo: %s: %w (%s)", path, ErrNotRegular, what)
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
	// A byte-order mark (Windows editors write one) must not hide a
	// topology key on the first line.
	sc := bufio.NewScanner(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
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
