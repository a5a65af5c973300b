package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/edgefabric/edgefabric/internal/outfile"
	"github.com/edgefabric/edgefabric/paths"
)

// ErrUnknownRepro is returned by Get; the message lists the known ones.
var ErrUnknownRepro = errors.New("unknown reproduction")

// Options tunes a reproduction run.
type Options struct {
	// Quick skips the slow rows (each reproduction says which).
	Quick bool
	// Rows, when set, keeps only rows whose name contains one of them
	// (case-insensitive).
	Rows []string
	Seed uint64
	// Ties is Algorithm 1's tie-breaking rule for the SPAIN tables.
	Ties paths.Ties
	// SlowTrials is the packing trials N of the SPAIN rows that run one
	// trial by default (FatTree(48), BCube(48,2), BCube(8,4)); 0 means 1.
	SlowTrials int
	// Progress, when set, receives one line per finished row.
	Progress func(string)
	// Context, when set, stops an emulator reproduction early (its labs
	// taken down); nil means context.Background().
	Context context.Context
}

func (o Options) ctx() context.Context {
	if o.Context == nil {
		return context.Background()
	}
	return o.Context
}

// keep applies the --rows filter to row, one of names (every row of the
// reproduction).
func (o Options) keep(row string, names []string) bool { return MatchRows(row, o.Rows, names) }

// command is the command line that runs reproduction name with these
// options (defaults left out).
func (o Options) command(name string) string {
	c := "edgefabric repro " + name
	if o.Quick {
		c += " --quick"
	}
	for _, r := range o.Rows {
		c += " --rows '" + r + "'"
	}
	if o.Ties != paths.TiesPair {
		c += " --ties " + o.Ties.String()
	}
	if o.SlowTrials > 1 {
		c += fmt.Sprintf(" --slow-trials %d", o.SlowTrials)
	}
	if o.Seed != 1 {
		c += fmt.Sprintf(" --seed %d", o.Seed)
	}
	return c
}

// MatchRows is the --rows filter over a table whose rows are names: a
// value that is a row's whole name keeps that row alone, any other value
// every row whose name contains it, case ignored either way ("FatTree(4)"
// keeps FatTree(4) but not FatTree(48), "fattree" every FatTree); no
// filter keeps every row.
func MatchRows(name string, rows, names []string) bool {
	if len(rows) == 0 {
		return true
	}
	for _, r := range rows {
		if slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, r) }) {
			if strings.EqualFold(name, r) {
				return true
			}
			continue
		}
		if strings.Contains(strings.ToLower(name), strings.ToLower(r)) {
			return true
		}
	}
	return false
}

// Unmatched returns the values of rows (a row filter, as Options.Rows)
// that keep none of the rows named: with several values, one mistyped
// would otherwise drop its row without a word while the others run.
func Unmatched(names, rows []string) []string {
	var out []string
	for _, r := range rows {
		if !slices.ContainsFunc(names, func(n string) bool { return MatchRows(n, []string{r}, names) }) {
			out = append(out, r)
		}
	}
	return out
}

// Repro is one named reproduction of a seed's evaluation.
type Repro struct {
	Name    string
	Summary string
	Run     func(opt Options) (*Report, error)
	// Rows names the rows Run goes through, in order (quick: those it
	// goes through with Options.Quick), before any filter.
	Rows func(quick bool) []string
	// SPAIN is set for the SPAIN tables, the only ones Options.Ties and
	// Options.SlowTrials change.
	SPAIN bool
	// Emu is set for the reproductions that run in the emulator (root),
	// the only ones Options.Context stops.
	Emu bool
	// Unseeded is set for the reproductions no random number decides,
	// which Options.Seed does not change: dumbnet-fig8 (fixed topologies;
	// the controller's discovery draws none, and the host agents' one
	// draw, a flow-hash key, touches no frame: the hosts send nothing).
	Unseeded bool
}

// registry lists every reproduction, explicitly. Later seeds add theirs
// here.
var registry = []Repro{
	{"spain-table2", "SPAIN Table 2: VLANs needed by the packing heuristic, serial and parallel", SpainTable2, spainTable2Rows, true, false, false},
	{"spain-table3", "SPAIN Table 3: coverage, NCP, VLANs and throughput gain over STP", SpainTable3, spainTable3Rows, true, false, false},
	{"dumbnet-fig8", "DumbNet Fig. 8: topology discovery time against switches and ports per switch", DumbNetFig8, dumbnetFig8RowNames, false, false, true},
	{"dumbnet-fig9", "DumbNet Fig. 9: one host's TCP throughput through Go bridges, DumbNet's MPLS option and DumbNet, as ratios (emulator, root)", DumbNetFig9, dumbnetFig9RowNames, false, true, false},
	{"dumbnet-fig10", "DumbNet Fig. 10: echo round trips of every host pair at once, kernel bridges, Go bridges and DumbNet (emulator, root)", DumbNetFig10, dumbnetFig10RowNames, false, true, false},
	{"dumbnet-fig11", "DumbNet Fig. 11: failure notification delay, failover against 802.1D and RSTP", DumbNetFig11, dumbnetFig11RowNames, false, false, false},
	{"dumbnet-fig12", "DumbNet Fig. 12: path graph size against ε and path length", DumbNetFig12, dumbnetFig12RowNames, false, false, false},
	{"dumbnet-lb", "DumbNet §7.2.2: aggregate TCP throughput between two leaves through both uplinks, against spanning trees (emulator, root)", DumbNetLB, dumbnetLBRowNames, false, true, false},
}

// All returns the reproductions in registry order.
func All() []Repro { return slices.Clone(registry) }

// Get returns a copy of the named reproduction (like All, it never hands
// out the registry itself).
func Get(name string) (*Repro, error) {
	for _, r := range registry {
		if r.Name == name {
			return &r, nil
		}
	}
	var names []string
	for _, r := range registry {
		names = append(names, r.Name)
	}
	return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownRepro, name, strings.Join(names, ", "))
}

// Column is one measured quantity of a report.
type Column struct {
	Key   string `json:"key"`
	Title string `json:"title"`
	// Digits after the decimal point when printed.
	Digits int `json:"digits"`
}

// Value is one cell: ours beside the paper's (nil where the paper gives
// none, or where we did not run the row). Values are finite, as JSON
// needs: a figure we could not get is nil, and the row's note says why
// (Table 2's serial column past 4094 VLANs).
type Value struct {
	Ours  *float64 `json:"ours"`
	Paper *float64 `json:"paper"`
}

// Row is one topology of a report.
type Row struct {
	Name   string           `json:"name"`
	Values map[string]Value `json:"values"`
	// Note explains the differences from the paper in this row.
	Note string `json:"note,omitempty"`
	// Seconds is the wall time the row took.
	Seconds float64 `json:"seconds"`
}

// Report is a reproduction's result.
type Report struct {
	Name string `json:"name"`
	// Command is the command line that makes this report.
	Command string `json:"command"`
	Title   string `json:"title"`
	// RowTitle heads the column of row names ("topology" when empty).
	RowTitle string   `json:"row_title,omitempty"`
	Columns  []Column `json:"columns"`
	Rows     []Row    `json:"rows"`
	Notes    []string `json:"notes"`
	// Chart names the column the SVG plots.
	Chart string `json:"chart"`
}

func f64(v float64) *float64 { return &v }

func (r *Report) rowTitle() string {
	if r.RowTitle == "" {
		return "topology"
	}
	return r.RowTitle
}

// hasPaper says whether the paper gives a figure for column c in some
// row: the text and Markdown leave out a paper column that would be
// dashes only.
func (r *Report) hasPaper(c Column) bool {
	for _, row := range r.Rows {
		if row.Values[c.Key].Paper != nil {
			return true
		}
	}
	return false
}

func (c Column) format(v *float64) string {
	if v == nil {
		return "–"
	}
	return strconv.FormatFloat(*v, 'f', c.Digits, 64)
}

// Text renders the report as aligned columns: for every quantity, ours
// then the paper's (where the paper gives one in some row).
func (r *Report) Text() string {
	head := []string{r.rowTitle()}
	for _, c := range r.Columns {
		head = append(head, c.Title)
		if r.hasPaper(c) {
			head = append(head, "paper")
		}
	}
	rows := [][]string{head}
	for _, row := range r.Rows {
		line := []string{row.Name}
		for _, c := range r.Columns {
			v := row.Values[c.Key]
			line = append(line, c.format(v.Ours))
			if r.hasPaper(c) {
				line = append(line, c.format(v.Paper))
			}
		}
		rows = append(rows, line)
	}
	width := make([]int, len(head))
	for _, l := range rows {
		for i, s := range l {
			width[i] = max(width[i], len([]rune(s)))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", r.Title)
	for _, l := range rows {
		for i, s := range l {
			pad := width[i] - len([]rune(s))
			if i == 0 {
				b.WriteString(s + strings.Repeat(" ", pad))
			} else {
				b.WriteString("  " + strings.Repeat(" ", pad) + s)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\nDifferences:\n")
	for _, row := range r.Rows {
		if row.Note != "" {
			fmt.Fprintf(&b, "  %s: %s\n", row.Name, row.Note)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "  * %s\n", n)
	}
	return b.String()
}

// Markdown renders the report as a table with "ours (paper)" cells.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", r.Title)
	cmd := r.Command
	if cmd == "" {
		cmd = "edgefabric repro " + r.Name
	}
	alone := ""
	for _, c := range r.Columns {
		if !r.hasPaper(c) {
			alone = " A column the paper gives no figure for shows ours alone."
		}
	}
	fmt.Fprintf(&b, "Generated by `%s`. Each cell is ours, then the paper's in parentheses; – where there is none.%s\n\n", cmd, alone)
	b.WriteString("| " + r.rowTitle() + " |")
	for _, c := range r.Columns {
		b.WriteString(" " + c.Title + " |")
	}
	b.WriteString(" time (s) |\n|---|")
	for range r.Columns {
		b.WriteString("---:|")
	}
	b.WriteString("---:|\n")
	for _, row := range r.Rows {
		b.WriteString("| " + row.Name + " |")
		for _, c := range r.Columns {
			v := row.Values[c.Key]
			if r.hasPaper(c) {
				fmt.Fprintf(&b, " %s (%s) |", c.format(v.Ours), c.format(v.Paper))
			} else {
				fmt.Fprintf(&b, " %s |", c.format(v.Ours))
			}
		}
		fmt.Fprintf(&b, " %.1f |\n", row.Seconds)
	}
	b.WriteString("\n## Differences from the paper\n\n")
	for _, row := range r.Rows {
		if row.Note != "" {
			fmt.Fprintf(&b, "* **%s**: %s\n", row.Name, row.Note)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "* %s\n", n)
	}
	return b.String()
}

// SVG renders a grouped bar chart of the Chart column: ours beside the
// paper's for every row, on a log scale when values span more than two
// decades. Hand-written SVG, no dependency.
func (r *Report) SVG() string {
	var col Column
	for _, c := range r.Columns {
		if c.Key == r.Chart {
			col = c
		}
	}
	const (
		barW, gap, left, top, plotH = 14, 14, 60, 40, 260
	)
	n := len(r.Rows)
	title := r.Title + ": " + col.Title
	// Wide enough for the title too (about 8 px a character at 14 px).
	width := max(left+n*(2*barW+gap)+40, left+8*len([]rune(title))+20)
	// The row names hang below the axis at 60°: the canvas takes the
	// longest, and the legend goes below them (a name of 38 characters,
	// Fig. 11's, ran 90 px off the bottom, and Fig. 8's crossed the
	// legend). Short names (up to 12 characters) keep the old 120 px.
	labelBottom, labelRight := 0.0, 0.0
	for i, row := range r.Rows {
		w := svgLabelPx * float64(len([]rune(row.Name)))
		// The baseline runs w at 60° from its anchor; the glyphs reach
		// some 8 px (ascent) to its upper right and 3 px (descent) below.
		labelBottom = max(labelBottom, float64(top+plotH+12)+w*math.Sin(math.Pi/3)+3)
		labelRight = max(labelRight, float64(left+gap/2+i*(2*barW+gap)+barW/2)+w*math.Cos(math.Pi/3)+7)
	}
	width = max(width, int(math.Ceil(labelRight))+10)
	// The legend's baseline: its boxes reach 9 px above it.
	ly := max(top+plotH+100, int(math.Ceil(labelBottom))+15)
	height := ly + 20
	maxV, minV := 0.0, math.Inf(1)
	for _, row := range r.Rows {
		for _, v := range []*float64{row.Values[col.Key].Ours, row.Values[col.Key].Paper} {
			if finite(v) && *v > 0 {
				maxV = max(maxV, *v)
				minV = min(minV, *v)
			}
		}
	}
	logScale := maxV > 0 && maxV/minV > 100
	scale := func(v float64) float64 {
		if maxV <= 0 || v <= 0 {
			return 0
		}
		if logScale {
			lo := math.Floor(math.Log10(minV))
			return plotH * (math.Log10(v) - lo + 0.1) / (math.Log10(maxV) - lo + 0.1)
		}
		return plotH * v / maxV
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	if logScale {
		title += " (log scale)"
	}
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14">%s</text>`+"\n", left, html.EscapeString(title))
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, top+plotH, width-20, top+plotH)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, top, left, top+plotH)
	// Ticks with light grid lines, under the bars: every decade on a log
	// scale, a 1-2-5 step on a linear one.
	for _, t := range axisTicks(maxV, minV, logScale) {
		y := float64(top+plotH) - scale(t)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n",
			left+1, y, width-20, y, left-4, y+4, strconv.FormatFloat(t, 'g', 6, 64))
	}
	for i, row := range r.Rows {
		x := left + gap/2 + i*(2*barW+gap)
		v := row.Values[col.Key]
		for k, p := range []*float64{v.Ours, v.Paper} {
			fill := []string{"#1f77b4", "#ff7f0e"}[k]
			if !finite(p) {
				// No figure, or one that is not a number (a Report
				// built by hand; ours never are): no bar, rather than a
				// "NaN" height no SVG reader takes, or an infinite one
				// that flattens every other bar.
				continue
			}
			h := scale(*p)
			fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"><title>%s %s: %s</title></rect>`+"\n",
				x+k*barW, float64(top+plotH)-h, barW-1, h, fill, html.EscapeString(row.Name), []string{"ours", "paper"}[k], col.format(p))
		}
		fmt.Fprintf(&b, `<text transform="translate(%d,%d) rotate(60)">%s</text>`+"\n", x+barW/2, top+plotH+12, html.EscapeString(row.Name))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="#1f77b4"/><text x="%d" y="%d">edgefabric</text>`+"\n", left, ly-9, left+14, ly)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="#ff7f0e"/><text x="%d" y="%d">paper</text>`+"\n", left+100, ly-9, left+114, ly)
	b.WriteString("</svg>\n")
	return b.String()
}

// finite says v holds a number the chart can draw.
func finite(v *float64) bool { return v != nil && !math.IsNaN(*v) && !math.IsInf(*v, 0) }

// svgLabelPx is the width the SVG allows a character of a row name at
// its 11 px: generous (DejaVu Sans averages 5.6–6.2 px on the names of
// docs/repro), so that a name fits whatever sans-serif font draws it.
const svgLabelPx = 6.5

// axisTicks are the values the chart's axis labels: the decades from
// minV's to maxV's on a log scale; on a linear one the multiples of a
// step of 1, 2 or 5 times a power of ten that gives at most five of them
// up to maxV. None without a positive value.
func axisTicks(maxV, minV float64, logScale bool) []float64 {
	if !(maxV > 0) || math.IsInf(maxV, 0) {
		return nil
	}
	var ticks []float64
	if logScale {
		for d := math.Floor(math.Log10(minV)); d <= math.Floor(math.Log10(maxV)); d++ {
			ticks = append(ticks, math.Pow(10, d))
		}
		return ticks
	}
	raw := maxV / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if raw <= m*mag {
			step = m * mag
			break
		}
	}
	for k := 1; float64(k)*step <= maxV*(1+1e-9); k++ {
		ticks = append(ticks, float64(k)*step)
	}
	return ticks
}

// Write saves NAME.json, NAME.md and NAME.svg into dir, created if
// missing. Each file is written beside its place and put there once all
// are written (outfile.Group): a failure (a full disk) leaves the earlier
// files, not a mix, and its error names the file (dir/NAME.json), not the
// temporary one. A file replaced keeps its permissions and, where the
// process may give them, its owner and group; a symbolic link is followed
// and its target replaced, the link kept; a file that may not be written
// (read-only) is refused.
func (r *Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	data := [][]byte{append(js, '\n'), []byte(r.Markdown()), []byte(r.SVG())}
	var out outfile.Group
	defer out.Discard()
	for i, ext := range ReportExts {
		f, err := out.Create(filepath.Join(dir, r.Name+ext))
		if err != nil {
			return fmt.Errorf("experiment: %w", err)
		}
		if _, err := f.Write(data[i]); err != nil {
			return fmt.Errorf("experiment: %w", err)
		}
	}
	if err := out.Commit(nil); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	return nil
}

// ReportExts are the extensions of the files Report.Write writes, after
// the report's name.
var ReportExts = []string{".json", ".md", ".svg"}
