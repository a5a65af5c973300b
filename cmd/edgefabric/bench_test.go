package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/emu"
)

// asCLI makes the test binary act as edgefabric when bench re-executes it
// for a row (bench measures each plan in a child process).
const asCLI = "EDGEFABRIC_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLI) == "1" {
		if os.Getenv(stallReplace) == "1" {
			beforeReplace = func() { time.Sleep(time.Hour) }
		}
		if specs := os.Getenv(killSpec); specs != "" && slices.ContainsFunc(os.Args[1:], func(a string) bool { return slices.Contains(strings.Split(specs, ","), a) }) {
			// A row's plan killed as the out-of-memory killer kills.
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	// Started as a lab daemon without being asked to act as the CLI (an
	// in-process up that spawned os.Executable, the test binary): running
	// the whole suite in the daemon would leave a lab behind. Refuse.
	if os.Getenv(emu.ReadyFDEnv) != "" {
		fmt.Fprintln(os.Stderr, "edgefabric test binary started as a lab daemon without "+asCLI+"=1")
		os.Exit(2)
	}
	// Started with edgefabric's arguments (bench re-executing it for a
	// row) without being asked to act as the CLI: the suite would run
	// again in every child, and the bench in it would start more (a test
	// that let bench run a row once nested hundreds). go test passes only
	// -test.* flags.
	if len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-test.") {
		fmt.Fprintf(os.Stderr, "edgefabric test binary started with arguments %q without %s=1\n", os.Args[1:], asCLI)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// The test binary run with edgefabric's arguments but without asCLI
// refuses at once, rather than running the suite.
func TestMainRefusesCLIArgs(t *testing.T) {
	cmd := exec.Command(os.Args[0], "plan", "spain", "fattree:4")
	cmd.Env = slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, asCLI+"=") })
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || string(out) != `edgefabric test binary started with arguments ["plan" "spain" "fattree:4"] without `+asCLI+"=1\n" {
		t.Fatalf("%v: %q", err, out)
	}
}

func TestBenchSpainPlan(t *testing.T) {
	t.Setenv(asCLI, "1")
	code, out, errOut := topoCLI("bench", "spain-plan", "--rows", "fattree(4)", "--rows", "testbed", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep benchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Baseline) != 2 || len(rep.Rows) != 2 {
		t.Fatalf("baseline %d runs, %d rows; want 2 and 2", len(rep.Baseline), len(rep.Rows))
	}
	want := map[string][2]int{"testbed": {9, 4}, "FatTree(4)": {56, 4}}
	for _, r := range append(rep.Rows, rep.Baseline...) {
		if r.Status != "ok" || r.Wall <= 0 || r.PeakRSS <= 0 {
			t.Errorf("%s: status %q, wall %v, peak RSS %d", r.Name, r.Status, r.Wall, r.PeakRSS)
		}
	}
	for _, r := range rep.Rows {
		if w := want[r.Name]; r.Paths != w[0] || r.VLANs != w[1] || r.Ratio <= 0 {
			t.Errorf("%s: %d paths, %d VLANs, ratio %v; want %v and a positive ratio", r.Name, r.Paths, r.VLANs, r.Ratio, w)
		}
	}
	if rep.Baseline[0].Paths != 65024 || rep.Baseline[0].VLANs != 64 {
		t.Errorf("baseline: %+v", rep.Baseline[0])
	}
	// The text form names every row and says whether the goal was met.
	_, text, _ := topoCLI("bench", "spain-plan", "--rows", "fattree(4)")
	if !strings.Contains(text, "FatTree(4)") || !strings.Contains(text, "≤ 10 s") || !strings.Contains(text, "yes") {
		t.Errorf("text output:\n%s", text)
	}
	// --ties is reported as plan spain spells it, whatever its case.
	code, out, errOut = topoCLI("bench", "spain-plan", "--rows", "testbed", "--ties", "Ordered", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rep = benchReport{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Ties != "ordered" || !strings.Contains(rep.Command, "--ties ordered ") {
		t.Errorf("ties %q, command %q", rep.Ties, rep.Command)
	}
}

func TestBenchBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "nope"}, "unknown benchmark"},
		{[]string{"bench"}, "argument"},
		{[]string{"bench", "spain-plan", "--trials", "0"}, "trials"},
		{[]string{"bench", "spain-plan", "--trials", "10001"}, "1 to 10000"},
		{[]string{"bench", "spain-plan", "--ties", "x"}, "ties"},
		{[]string{"bench", "spain-plan", "--timeout", "0s"}, "timeout"},
		{[]string{"bench", "spain-plan", "--rows", "nosuchrow"}, "no row of Table 3"},
	} {
		code, _, errOut := topoCLI(c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

// A row that outlives --timeout is killed and reported, not waited for.
func TestBenchTimeout(t *testing.T) {
	t.Setenv(asCLI, "1")
	code, _, errOut := topoCLI("bench", "spain-plan", "--rows", "fattree(4)", "--timeout", "1ms", "--json")
	if code != 1 || !strings.Contains(errOut, "baseline") || !strings.Contains(errOut, "timeout") {
		t.Errorf("exit %d, stderr %q; want 1 and a baseline timeout", code, errOut)
	}
	// In text, the rows are still reported, and the baseline's line says
	// why there are no ratios.
	code, out, _ := topoCLI("bench", "spain-plan", "--rows", "fattree(4)", "--timeout", "1ms")
	if code != 1 || !strings.Contains(out, "baseline: fattree:16 plan, before and after the rows: timeout after ") ||
		!regexp.MustCompile(`\nFatTree\(4\) +\d+\.\d .* timeout\n`).MatchString(out) {
		t.Errorf("text: exit %d, stdout\n%s", code, out)
	}
}

func TestReadPlanSummary(t *testing.T) {
	var r benchRun
	ok := `{"topology":"x","vlans":[{"id":1,"links":[["a","b"]]}],"num_paths":7,"packing":{"trial_vlans":[3,-1]},"num_vlans":3,"seconds":{"paths":0.5,"pack":0.25,"prune":0.125,"verify":0}}`
	if err := readPlanSummary(strings.NewReader(ok), &r); err != nil || r.Paths != 7 || r.VLANs != 3 || r.PathsSec != 0.5 || r.PackSec != 0.25 || r.PruneSec != 0.125 {
		t.Errorf("got %+v, %v", r, err)
	}
	for _, bad := range []string{``, `[]`, `{"num_paths":7}`, `{"num_paths":"x","num_vlans":1,"seconds":{}}`, `{"vlans":[{"id":1`, `{"num_paths":1,"num_vlans":1,"seconds":{}`,
		// A key twice stood in for a missing one (num_vlans here).
		`{"num_paths":1,"num_paths":2,"seconds":{"Paths":1}}`} {
		if err := readPlanSummary(strings.NewReader(bad), &benchRun{}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
