package all

import "testing"

// TestRegistry catches a scheme registered twice or without a constructor:
// Registry panics on either.
func TestRegistry(t *testing.T) {
	r := Registry()
	if len(r.Names()) != len(registrars) {
		t.Fatalf("registry has %d schemes, registrars lists %d", len(r.Names()), len(registrars))
	}
}
