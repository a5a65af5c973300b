// Package testenv holds the checks tests make of the machine they run on:
// a test that needs root or a tool skips without it on a developer's
// machine, and fails under CI (CI set), which runs as root after
// scripts/deps has installed every tool the tests use: a CI run must
// never go green by skipping them.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// packages names the Debian package of the tools whose package is not
// named after them.
var packages = map[string]string{"ping": "iputils-ping", "ip": "iproute2", "tc": "iproute2", "unshare": "util-linux"}

// NeedTools skips t when one of the tools is not on PATH, or fails it
// when CI is set.
func NeedTools(t testing.TB, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := exec.LookPath(name); err != nil {
			pkg := packages[name]
			if pkg == "" {
				pkg = name
			}
			if ci := os.Getenv("CI"); ci != "" {
				t.Fatalf("%s is not installed and CI=%s (scripts/deps installs it: apt-get install %s)", name, ci, pkg)
			}
			t.Skipf("skipping: %s is not installed (apt-get install %s, or run scripts/deps)", name, pkg)
		}
	}
}

// NeedRoot skips t without root, or fails it when CI is set.
func NeedRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if ci := os.Getenv("CI"); ci != "" {
		t.Fatalf("not root and CI=%s: CI runs the suite as root (the emulator's tests need it)", ci)
	}
	t.Skip("skipping: needs root (the emulator creates network namespaces)")
}
