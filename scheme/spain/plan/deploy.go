package plan

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/edgefabric/edgefabric/internal/outfile"
	"github.com/edgefabric/edgefabric/topo"
)

// PortConfig is one port's VLAN membership, vendor-neutral: Untagged is
// the native VLAN (1 on spanning-tree and host ports, 0 for none) and
// Tagged the VLANs the port accepts and sends with an 802.1Q tag.
// Interface and PeerInterface are the ports' names in the topology file
// (containerlab interfaces, GraphML port names), when it gave them.
type PortConfig struct {
	Port          int    `json:"port"`
	Interface     string `json:"interface,omitempty"`
	Peer          string `json:"peer"` // "node:port"
	PeerInterface string `json:"peer_interface,omitempty"`
	HostPort      bool   `json:"host_port,omitempty"`
	Untagged      int    `json:"untagged,omitempty"`
	Tagged        []int  `json:"tagged"`
}

// SwitchConfig is what the switch configuration module (§5.1) pushes to
// one forwarding node: the VLANs it must create and each port's mode.
// Unused lists the ports the topology declares but cables to nothing:
// they belong in no VLAN (a factory default leaves them in VLAN 1, where
// a cable plugged in later, with 802.1D off, can close a loop).
type SwitchConfig struct {
	Name   string       `json:"name"`
	VLANs  []int        `json:"vlans"`
	Ports  []PortConfig `json:"ports"`
	Unused []int        `json:"unused_ports,omitempty"`
	// UnusedInterfaces are the names of the Unused ports, aligned with
	// them, when the topology names ports.
	UnusedInterfaces []string `json:"unused_interfaces,omitempty"`
}

// Deployment is the per-switch configuration of a plan.
type Deployment struct {
	Topology string         `json:"topology"`
	Switches []SwitchConfig `json:"switches"`
}

// Deployment derives the switch configuration (§5.1): a port is tagged for
// VLAN v when its link is in v; a port facing end hosts is tagged for every
// VLAN that reaches its switch, "so that tagged packets from end-hosts are
// accepted". VLAN 1 is native (untagged) on the spanning tree's ports and
// on host ports, so that hosts without SPAIN keep working (§7).
func (p *Plan) Deployment() *Deployment {
	g := p.F.G
	inTree := make([]bool, g.NumLinks())
	for _, l := range p.Tree.Links {
		inTree[l] = true
	}
	d := &Deployment{Topology: p.Topology}
	for v := range g.NumNodes() {
		n := topo.NodeID(v)
		if !g.Node(n).Forwards() {
			continue
		}
		sc := SwitchConfig{Name: g.Node(n).Name}
		member := map[int]bool{1: true}
		for _, l := range g.Ports(n) {
			if l != topo.NoLink && p.F.IsFabric(l) {
				for _, id := range p.LinkVLANs(l) {
					member[id] = true
				}
			}
		}
		all := make([]int, 0, len(member))
		for id := range member {
			all = append(all, id)
		}
		slices.Sort(all)
		sc.VLANs = all
		// On a node whose ports have names (a containerlab or GraphML
		// file), a port is declared by its name: numbers without one are
		// gaps in the numbering (e1-1, e1-2, e1-10), not ports.
		named := false
		for i := range g.Ports(n) {
			if g.PortName(n, topo.Port(i+1)) != "" {
				named = true
				break
			}
		}
		for i, l := range g.Ports(n) {
			if l == topo.NoLink {
				if name := g.PortName(n, topo.Port(i+1)); !named || name != "" {
					sc.Unused = append(sc.Unused, i+1)
					if name != "" {
						sc.UnusedInterfaces = append(sc.UnusedInterfaces, name)
					}
				}
				continue
			}
			peer := g.Link(l).Other(n)
			pc := PortConfig{
				Port:          i + 1,
				Interface:     g.PortName(n, topo.Port(i+1)),
				Peer:          g.Node(peer.Node).Name + ":" + strconv.Itoa(int(peer.Port)),
				PeerInterface: g.PortName(peer.Node, peer.Port),
				Tagged:        []int{},
			}
			if p.F.IsFabric(l) {
				if inTree[l] {
					pc.Untagged = 1
				}
				for _, id := range p.LinkVLANs(l) {
					if id != 1 {
						pc.Tagged = append(pc.Tagged, id)
					}
				}
			} else {
				pc.HostPort = true
				pc.Untagged = 1
				pc.Tagged = append(pc.Tagged, all[1:]...)
			}
			sc.Ports = append(sc.Ports, pc)
		}
		d.Switches = append(d.Switches, sc)
	}
	return d
}

// Reach is V_reach(es) for one edge node (§6.1): the VLANs that reach it.
// A VLAN may be several disjoint trees under one ID (§4.1), so each entry
// also names the tree (its lowest-named node): a host may use VLAN v
// towards es only when its own edge node is in the same tree of v.
type Reach struct {
	Edge  string      `json:"edge"`
	VLANs []ReachVLAN `json:"vlans"`
}

// ReachVLAN is one VLAN reaching an edge node.
type ReachVLAN struct {
	ID   int    `json:"id"`
	Tree string `json:"tree"`
}

// ReachMap is the reachability map R that hosts download at boot.
type ReachMap struct {
	Topology string  `json:"topology"`
	Edges    []Reach `json:"edges"`
}

// Reach computes V_reach(es) for every edge node.
func (p *Plan) Reach() *ReachMap {
	g := p.F.G
	n := g.NumNodes()
	parent := make([]int32, n)
	find := func(v int32) int32 {
		for parent[v] != v {
			parent[v] = parent[parent[v]]
			v = parent[v]
		}
		return v
	}
	rm := &ReachMap{Topology: p.Topology, Edges: make([]Reach, len(p.F.Edges))}
	for i, e := range p.F.Edges {
		rm.Edges[i].Edge = g.Node(e).Name
	}
	present := make([]bool, n)
	for vi, ls := range p.Pack.VLANs {
		for v := range parent {
			parent[v] = int32(v)
			present[v] = false
		}
		for _, l := range ls {
			a, b := p.F.Ends(l)
			present[a], present[b] = true, true
			ra, rb := find(int32(a)), find(int32(b))
			if ra != rb {
				parent[ra] = rb
			}
		}
		// Name each tree by its lexically smallest node name.
		label := map[int32]string{}
		for v := range n {
			if !present[v] {
				continue
			}
			r := find(int32(v))
			if s, ok := label[r]; !ok || g.Node(topo.NodeID(v)).Name < s {
				label[r] = g.Node(topo.NodeID(v)).Name
			}
		}
		for i, e := range p.F.Edges {
			switch {
			case present[e]:
				rm.Edges[i].VLANs = append(rm.Edges[i].VLANs, ReachVLAN{ID: p.id(vi), Tree: label[find(int32(e))]})
			case vi == 0:
				// VLAN 1 reaches every edge node, even one it holds no
				// link of (a fabric of one forwarding node): the tree
				// is that node alone, named after it.
				rm.Edges[i].VLANs = append(rm.Edges[i].VLANs, ReachVLAN{ID: 1, Tree: g.Node(e).Name})
			}
		}
	}
	return rm
}

// Summary renders the deployment readably, one line per port.
func (d *Deployment) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "SPAIN switch configuration for %s\n", d.Topology)
	// What the per-port lines leave implicit and a switch's factory
	// defaults get wrong (docs/spain-plan.md, switch configuration).
	b.WriteString("Turn 802.1D off (SPAIN §5.5). \"untagged none\": the port is not in VLAN 1 (remove it from the factory default).\n")
	// Names with spaces (Zoo cities, free-form GraphML ports) are quoted,
	// so that every line splits on whitespace.
	quote := func(s string) string {
		if s == "" || strings.ContainsFunc(s, unicode.IsSpace) || strings.ContainsRune(s, '"') {
			return strconv.Quote(s)
		}
		return s
	}
	for _, s := range d.Switches {
		fmt.Fprintf(&b, "\n%s: VLANs %s\n", quote(s.Name), ranges(s.VLANs))
		// Ports the topology file named (interfaces) are shown by name
		// too, and peers by their interface: what the device calls them.
		width, peerWidth := 0, 14
		peers := make([]string, len(s.Ports))
		for i, pc := range s.Ports {
			if pc.Interface != "" {
				width = max(width, utf8.RuneCountInString(quote(pc.Interface)))
			}
			node, port, _ := cutLast(pc.Peer, ':')
			if pc.PeerInterface != "" {
				port = pc.PeerInterface
			}
			peers[i] = quote(node) + ":" + quote(port)
			peerWidth = max(peerWidth, utf8.RuneCountInString(peers[i]))
		}
		for i, pc := range s.Ports {
			kind := "fabric"
			if pc.HostPort {
				kind = "host"
			}
			un := "none"
			if pc.Untagged != 0 {
				un = strconv.Itoa(pc.Untagged)
			}
			port := fmt.Sprintf("%-3d", pc.Port)
			if width > 0 {
				iface := "-"
				if pc.Interface != "" {
					iface = quote(pc.Interface)
				}
				port += " " + fmt.Sprintf("%-*s", width, iface)
			}
			fmt.Fprintf(&b, "  port %s %-6s -> %-*s untagged %-4s tagged %s\n", port, kind, peerWidth, peers[i], un, ranges(pc.Tagged))
		}
		if len(s.Unused) > 0 {
			list := ranges(s.Unused)
			if len(s.UnusedInterfaces) == len(s.Unused) {
				names := make([]string, len(s.Unused))
				for i, n := range s.UnusedInterfaces {
					names[i] = fmt.Sprintf("%d %s", s.Unused[i], quote(n))
				}
				list = strings.Join(names, ", ")
			}
			fmt.Fprintf(&b, "  ports %s uncabled: in no VLAN (take them out of VLAN 1, or shut them down)\n", list)
		}
	}
	return b.String()
}

// cutLast splits s around the last sep.
func cutLast(s string, sep byte) (before, after string, found bool) {
	if i := strings.LastIndexByte(s, sep); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// Ranges formats sorted IDs as "2-5,7" ("none" for none): the form
// switches.txt and --skip-vlans use.
func Ranges(ids []int) string { return ranges(ids) }

// ParseRanges reads VLAN IDs written as Ranges writes them
// ("1002-1005,4000"), ascending and without repeats; "" and "none" are
// none. An ID is 12 bits: 0 to 4095 (which of them a caller may use is its
// own check).
func ParseRanges(s string) ([]int, error) {
	if s == "" || s == "none" {
		return nil, nil
	}
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			if !strings.Contains(s, ",") {
				return nil, fmt.Errorf("%q: empty: want IDs and ranges such as 1002-1005,4000", s)
			}
			return nil, fmt.Errorf("%q: an empty item between commas", s)
		}
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a {
			return nil, fmt.Errorf("%q: want IDs and ranges such as 1002-1005,4000", part)
		}
		if b > 4095 {
			return nil, fmt.Errorf("%q: a VLAN ID is at most 4095", part)
		}
		for id := a; id <= b; id++ {
			seen[id] = true
		}
	}
	ids := make([]int, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

// ranges formats sorted IDs as "2-5,7".
func ranges(ids []int) string {
	if len(ids) == 0 {
		return "none"
	}
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(ids[i]))
		} else {
			parts = append(parts, strconv.Itoa(ids[i])+"-"+strconv.Itoa(ids[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// PathsFile is the file WriteDir writes the path set into when asked.
const PathsFile = "paths.json"

// WriteDir writes what deployment needs into dir: plan.json (the plan with
// its VLANs, and ncp when not nil), switches.json and switches.txt (per
// switch, per port), and vreach.json (V_reach per edge node, for the
// repository hosts download from); with withPaths also paths.json
// (WritePathsJSON). The plan has been verified by Compute before anything
// is written.
//
// Without withPaths, a paths.json an earlier plan wrote there is removed,
// so that the directory never holds the paths of another plan; removed
// says so. A paths.json not in WritePathsJSON's format is left alone.
//
// The files are written under temporary names and renamed into place only
// once all of them are written (outfile.Group): a write that fails (a
// full disk, a directory where a file goes) leaves the earlier plan's
// files as they were, not some of this plan's beside some of that one's,
// and its error names the file (dir/plan.json), not the temporary one. A
// file replaced keeps its permissions and, where the process may give
// them, its owner and group; a symbolic link is followed and its target
// replaced, the link kept; a file that may not be written (read-only) is
// refused. Two writers into one directory rename their files under a
// lock on it, one after the other, so the directory ends with the files
// of one plan (the last to take the lock), not some of each.
func (p *Plan) WriteDir(dir string, ncp *NCP, withPaths bool) (removed []string, err error) {
	return p.WriteDirContext(context.Background(), dir, ncp, withPaths)
}

// WriteDirContext is WriteDir that stops writing once ctx is done (a
// signal: a paths.json can take minutes), removing its temporary files
// and leaving the directory as it was.
func (p *Plan) WriteDirContext(ctx context.Context, dir string, ncp *NCP, withPaths bool) (removed []string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	d := p.Deployment()
	type outFile struct {
		name  string
		write func(io.Writer) error
	}
	files := []outFile{ // in OutFiles' order
		{"plan.json", func(w io.Writer) error { return p.WriteJSON(w, ncp) }},
		{"switches.json", d.WriteJSON},
		{"switches.txt", func(w io.Writer) error { _, err := io.WriteString(w, d.Summary()); return err }},
		{"vreach.json", p.Reach().WriteJSON},
	}
	if withPaths {
		files = append(files, outFile{PathsFile, p.WritePathsJSON})
	}
	// Each file is written beside its place (outfile), so that the
	// earlier plan's stay as they were until all of this one's are.
	var out outfile.Group
	defer out.Discard()
	for _, f := range files {
		w, err := out.Create(filepath.Join(dir, f.name))
		if err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
		bw := bufio.NewWriterSize(ctxWriter{ctx, w}, 1<<20)
		err = f.write(bw)
		if err == nil {
			err = bw.Flush()
		}
		if err == nil {
			err = w.Close()
		}
		var pe *fs.PathError
		if err != nil && !errors.As(err, &pe) {
			// Not the system's, which names the file: say which.
			err = fmt.Errorf("%s: %w", f.name, err)
		}
		if err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	// Only the renames are serialized: the long writes above run at once.
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	defer unlock()
	// Renaming over a directory would fail half-way through: check first.
	for _, f := range files {
		if err := CheckOutFile(dir, f.name); err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
	}
	err = out.Commit(func(i int) {
		if afterRename != nil {
			afterRename(dir, i)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	if !withPaths {
		stale := filepath.Join(dir, PathsFile)
		if ours, _ := writtenByPlan(stale); ours {
			if err := os.Remove(stale); err != nil {
				return nil, fmt.Errorf("plan: stale %s: %w", PathsFile, err)
			}
			removed = append(removed, PathsFile)
		}
	}
	return removed, nil
}

// afterRename, when set (by tests), runs after WriteDir renamed file i
// into dir, with the directory's lock held.
var afterRename func(dir string, i int)

// lockDir waits for an exclusive lock on dir and takes it: flock on the
// directory itself, so no lock file is left behind; closing releases it.
// Where the file system cannot lock (some network ones), writers go
// unserialized, as before the lock existed.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, syscall.ENOLCK), errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.EINVAL):
	default:
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}

// ctxWriter fails its writes once ctx is done.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(b)
}

// CheckOutFile reports an error when WriteDir could not put dir/name in
// place, naming the file as name (outfile.Check): it exists and is not a
// regular file (a directory, a socket), its symbolic links followed; it
// may not be written (made read-only); or no file can be created beside
// it, or beside the file a link at it leads to (the new file is written
// there and renamed over it: a dangling link's target is created).
func CheckOutFile(dir, name string) error {
	err := outfile.Check(filepath.Join(dir, name))
	var e *outfile.Error
	var pe *fs.PathError
	switch {
	case errors.As(err, &e):
		named := *e
		named.Path = name
		return &named
	case errors.As(err, &pe):
		return &fs.PathError{Op: pe.Op, Path: name, Err: pe.Err}
	}
	return err
}

// OutFiles names the files WriteDir writes (with withPaths, paths.json
// too), so that a caller can check the directory before planning.
func OutFiles(withPaths bool) []string {
	names := []string{"plan.json", "switches.json", "switches.txt", "vreach.json"}
	if withPaths {
		names = append(names, PathsFile)
	}
	return names
}

// writtenByPlan reports whether file begins as WritePathsJSON's output
// does: {"topology": ..., then "pairs".
func writtenByPlan(file string) (bool, error) {
	f, err := os.Open(file)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	i := bytes.Index(head, []byte("\n  \"pairs\": ["))
	// The topology's line, then the pairs'.
	return bytes.HasPrefix(head, []byte("{\n  \"topology\": ")) && i > 0 && bytes.Count(head[:i], []byte("\n")) == 1, nil
}

// WriteJSON writes the deployment as JSON with one port per line (indented
// JSON puts every VLAN ID on its own line: 316 MB for FatTree(48)).
func (d *Deployment) WriteJSON(w io.Writer) error {
	return writeListJSON(w, "topology", d.Topology, "switches", len(d.Switches), func(i int) []any {
		s := d.Switches[i]
		out := []any{raw("{\"name\": "), s.Name, raw(", \"vlans\": "), s.VLANs, raw(",\n     \"ports\": [")}
		for j, pc := range s.Ports {
			out = append(out, raw("\n      "), pc)
			if j < len(s.Ports)-1 {
				out = append(out, raw(","))
			}
		}
		out = append(out, raw("]"))
		if len(s.Unused) > 0 {
			out = append(out, raw(",\n     \"unused_ports\": "), s.Unused)
		}
		if len(s.UnusedInterfaces) > 0 {
			out = append(out, raw(",\n     \"unused_interfaces\": "), s.UnusedInterfaces)
		}
		return append(out, raw("}"))
	})
}

// PairPaths is one pair of edge nodes' computed paths (Algorithm 1), each
// with its nodes from Src to Dst and the IDs of every VLAN that holds it
// (at least one: Verify checked it).
type PairPaths struct {
	Src   string      `json:"src"`
	Dst   string      `json:"dst"`
	Paths []PathVLANs `json:"paths"`
}

// PathVLANs is one path and the VLANs that hold it, ascending. Ports[i]
// are the port numbers of hop i (Nodes[i] to Nodes[i+1]) at its two ends,
// which tell parallel links apart, as VLAN.Ports do.
type PathVLANs struct {
	Nodes []string `json:"nodes"`
	Ports [][2]int `json:"ports"`
	VLANs []int    `json:"vlans"`
}

// WritePathsJSON writes the path set with one pair per line:
// {"topology": ..., "pairs": [{"src", "dst", "paths": [{"nodes", "ports", "vlans"}]}]}.
// Large: about 100 bytes a path (FatTree(48): 15.9 M paths, 1.5 GB).
func (p *Plan) WritePathsJSON(w io.Writer) error {
	ps, g := p.PS, p.F.G
	var nodes []topo.NodeID
	return writeListJSON(w, "topology", p.Topology, "pairs", len(ps.Pairs), func(i int) []any {
		pr := ps.Pairs[i]
		pp := PairPaths{Src: g.Node(pr.A).Name, Dst: g.Node(pr.B).Name}
		lo, hi := ps.PairPaths(i)
		for j := lo; j < hi; j++ {
			path := ps.Path(j)
			nodes = p.F.PathNodes(pr.A, path, nodes[:0])
			pv := PathVLANs{Nodes: make([]string, len(nodes)), Ports: make([][2]int, len(path)), VLANs: p.vlansOf(path)}
			for k, n := range nodes {
				pv.Nodes[k] = g.Node(n).Name
			}
			for k, l := range path {
				lk := g.Link(l)
				a, b := lk.A, lk.B
				if a.Node != nodes[k] {
					a, b = b, a
				}
				pv.Ports[k] = [2]int{int(a.Port), int(b.Port)}
			}
			pp.Paths = append(pp.Paths, pv)
		}
		return []any{pp}
	})
}

// WriteJSON writes the reachability map with one edge node per line.
func (rm *ReachMap) WriteJSON(w io.Writer) error {
	return writeListJSON(w, "topology", rm.Topology, "edges", len(rm.Edges), func(i int) []any {
		return []any{rm.Edges[i]}
	})
}

// raw is literal JSON text for writeJSON; every other value is encoded.
type raw string

// writeListJSON writes {"k": v, "list": [item, ...]}, one item per line;
// item(i) gives the pieces of item i for writeJSON.
func writeListJSON(w io.Writer, k, v, list string, n int, item func(i int) []any) error {
	if err := writeJSON(w, raw("{\n  "), k, raw(": "), v, raw(",\n  "), list, raw(": [")); err != nil {
		return err
	}
	for i := range n {
		if err := writeJSON(w, raw("\n    ")); err != nil {
			return err
		}
		if err := writeJSON(w, item(i)...); err != nil {
			return err
		}
		if i < n-1 {
			if err := writeJSON(w, raw(",")); err != nil {
				return err
			}
		}
	}
	end := raw("]\n}\n")
	if n > 0 {
		end = "\n  ]\n}\n"
	}
	return writeJSON(w, end)
}

// writeJSON writes each piece in order: raw text as it is, any other
// value JSON-encoded on one line.
func writeJSON(w io.Writer, pieces ...any) error {
	for _, x := range pieces {
		b, ok := x.(raw)
		var buf []byte
		if ok {
			buf = []byte(b)
		} else {
			var err error
			if buf, err = json.Marshal(x); err != nil {
				return err
			}
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}
