package emu

import (
	"errors"
	"strings"
	"testing"
)

func TestNeighWarning(t *testing.T) {
	limit := func(v string) func(string) ([]byte, error) {
		return func(string) ([]byte, error) { return []byte(v), nil }
	}
	if w := neighWarning(16, limit("1024\n")); w != "" {
		t.Errorf("16 hosts (240 entries) under 1024: warned %q", w)
	}
	w := neighWarning(54, limit("1024\n"))
	if !strings.Contains(w, "2862") || !strings.Contains(w, "gc_thresh3=5724") {
		t.Errorf("54 hosts: warning %q should name the 2862 entries needed and the sysctl", w)
	}
	if w := neighWarning(54, limit("16384")); w != "" {
		t.Errorf("raised limit: warned %q", w)
	}
	// No /proc, or garbage in it: no warning rather than a wrong one.
	if w := neighWarning(54, func(string) ([]byte, error) { return nil, errors.New("no") }); w != "" {
		t.Errorf("unreadable: warned %q", w)
	}
	if w := neighWarning(54, limit("lots")); w != "" {
		t.Errorf("garbage: warned %q", w)
	}
}
