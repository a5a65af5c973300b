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
	} {
		code, out, _ := topoCLI(append([]string{"__complete"}, c.args...)...)
		// cobra filters by the prefix typed only in the shell script, so
		// the list is whole.
		if code != 0 || out != c.want {
			t.Errorf("%q: exit %d, completions %q, want %q", strings.Join(c.args, " "), code, out, c.want)
		}
	}
}
