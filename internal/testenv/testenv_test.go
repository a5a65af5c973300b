package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A missing tool skips the test without CI and fails it under CI; a tool
// that is there lets it go on. Run in a child process, so that the child
// test's failure is observed, not suffered.
func TestNeedTools(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") != "" {
		NeedTools(t, "sh", "no-such-tool-edgefabric")
		t.Log("went on")
		return
	}
	for _, c := range []struct {
		ci, want string
	}{
		{"", "--- SKIP: TestNeedTools"},
		{"true", "--- FAIL: TestNeedTools"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNeedTools$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", "CI="+c.ci)
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), c.want) || strings.Contains(string(out), "went on") {
			t.Errorf("CI=%q: want %q and no 'went on':\n%s", c.ci, c.want, out)
		}
	}
	NeedTools(t, "sh") // present: nothing happens
}
