package element

import (
	"math"
	"slices"
	"testing"
)

// Tests from the second mutation sweep of the package: each pins an outcome
// that a mutant changed without failing the earlier tests.

// Six significant digits would round a time just below a unit up to a
// thousand of the smaller one ("1000ms"); String says one of the larger
// unit instead, and never goes past seconds.
func TestTimeStringRoundsToNextUnit(t *testing.T) {
	for _, c := range []struct {
		t    Time
		want string
	}{
		{Second - 1, "1s"},
		{-(Second - 1), "-1s"},
		{Second - 400*Nanosecond, "1s"},
		{Millisecond - 1, "1ms"},
		{-(Millisecond - 1), "-1ms"},
		{Second - 600*Nanosecond, "999.999ms"},
		{Millisecond - 600*Picosecond, "999.999us"},
		{Microsecond - 1, "999.999ns"},
		{1000 * Second, "1000s"},
		{999_999_600 * Millisecond, "1e+06s"},
	} {
		if got := c.t.String(); got != c.want {
			t.Errorf("Time(%d).String() = %q, want %q", int64(c.t), got, c.want)
		}
	}
}

// The extremes of Time: the most negative has no positive counterpart
// (negating it overflows), and still prints in seconds, as its opposite
// does.
func TestTimeStringExtremes(t *testing.T) {
	for _, c := range []struct {
		t    Time
		want string
	}{
		{math.MaxInt64, "9.22337e+06s"},
		{math.MinInt64, "-9.22337e+06s"},
		{math.MinInt64 + 1, "-9.22337e+06s"},
	} {
		if got := c.t.String(); got != c.want {
			t.Errorf("Time(%d).String() = %q, want %q", int64(c.t), got, c.want)
		}
	}
}

// Adding zero to a new counter creates it: Names and Snapshot list it at
// zero (an element can declare the counters it reports), and adding to
// it later counts from zero.
func TestCountersAddZeroCreates(t *testing.T) {
	var c Counters
	c.Add("declared", 0)
	if n := c.Names(); !slices.Equal(n, []string{"declared"}) {
		t.Fatalf("Names() = %v, want [declared]", n)
	}
	if s := c.Snapshot(); len(s) != 1 || s["declared"] != 0 {
		t.Fatalf("Snapshot() = %v", s)
	}
	c.Inc("declared")
	if c.Get("declared") != 1 {
		t.Fatalf("counts wrong: %v", c.Snapshot())
	}
}
