package main

import (
	"strings"
	"testing"
)

// Shell completion offers the values a flag takes, reproductions and
// benchmarks by name, and link's states, never file names for them (it
// offered file names for every flag value).
func TestCompletionValues(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "spain", "fattree:4", "--ties", ""}, "pair\nrandom\nordered\nnode\n:4\n"},
		{[]string{"repro", "spain-table3", "--ties", "o"}, "pair\nrandom\nordered\nnode\n:4\n"},
		{[]string{"up", "ring:3", "--scheme", ""}, "dumbnet\nstp\nkernel-bridge\n:4\n"},
		{[]string{"demo", "--engine", ""}, "emu\nsim\n:4\n"},
		{[]string{"topo", "export", "ring:3", "--format", ""}, "yaml\njson\ndot\nclab\ngraphml\n:4\n"},
		{[]string{"sim", "x.yaml", "--log", ""}, "off\nerror\nwarn\ninfo\ndebug\n:4\n"},
		{[]string{"sim", "x.yaml", "--trace", ""}, "full\nheaders\n:4\n"},
		{[]string{"repro", ""}, "spain-table2\nspain-table3\ndumbnet-fig8\ndumbnet-fig9\ndumbnet-fig10\ndumbnet-fig11\ndumbnet-fig12\ndumbnet-lb\n:4\n"},
		{[]string{"bench", ""}, "spain-plan\n:4\n"},
		{[]string{"link", "lab1", "s1", "s2", ""}, "down\nup\n:4\n"},
		{[]string{"exec", "lab1", ""}, ":4\n"},
		{[]string{"exec", "lab1", "h1", "--", "cat", ""}, ":0\n"}, // file names
		// Directories only for the flags that take one (:16 filters
		// directories); files for a file.
		{[]string{"plan", "spain", "fattree:4", "--out", ""}, ":16\n"},
		{[]string{"repro", "spain-table3", "--out", ""}, ":16\n"},
		{[]string{"sim", "x.yaml", "--pcap", ""}, ":16\n"},
		{[]string{"topo", "export", "ring:3", "-o", ""}, ":0\n"},
	} {
		code, out, _ := topoCLI(append([]string{"__complete"}, c.args...)...)
		// cobra filters by the prefix typed only in the shell script, so
		// the list is whole.
		if code != 0 || out != c.want {
			t.Errorf("%q: exit %d, completions %q, want %q", strings.Join(c.args, " "), code, out, c.want)
		}
	}
}

// TestCompletionHelpTopics: help completes with the commands it can
// describe, as cobra's own help command did before edgefabric replaced
// it; it offered file names.
func TestCompletionHelpTopics(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string // the names offered, in order
	}{
		{[]string{"help", ""}, []string{"bench", "completion", "demo", "down", "exec", "help", "link", "plan", "repro", "sim", "status", "topo", "up"}},
		{[]string{"help", "s"}, []string{"sim", "status"}},
		{[]string{"help", "topo", ""}, []string{"export", "list", "show"}},
		{[]string{"help", "plan", ""}, []string{"spain"}},
		{[]string{"help", "plan", "spain", ""}, nil},
		{[]string{"help", "nosuch", ""}, nil},
	} {
		code, out, _ := topoCLI(append([]string{"__complete"}, c.args...)...)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		directive := lines[len(lines)-1]
		var names []string
		for _, l := range lines[:len(lines)-1] {
			name, _, _ := strings.Cut(l, "\t")
			names = append(names, name)
		}
		if code != 0 || directive != ":4" || strings.Join(names, " ") != strings.Join(c.want, " ") {
			t.Errorf("%q: exit %d, completions %q; want %q and :4 (no file names)", strings.Join(c.args, " "), code, out, c.want)
		}
	}
}
