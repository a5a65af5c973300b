package element

import "testing"

// Tests from the first mutation sweep of the package: each pins an outcome
// that a mutant changed without failing the earlier tests (a counter's full
// 64 bits, an Add of zero, the six significant digits of every unit).

// A counter holds 64 bits (byte counts pass 2^32 in seconds at 100 Gb/s),
// and adding zero neither resets nor changes anything.
func TestCountersWideAndAddZero(t *testing.T) {
	var c Counters
	c.Add("bytes", 5<<32+7)
	c.Inc("frames")
	c.Add("frames", 0)
	c.Add("idle", 0)
	if c.Get("bytes") != 5<<32+7 || c.Get("frames") != 1 || c.Get("idle") != 0 {
		t.Fatalf("counts wrong: %v", c.Snapshot())
	}
}

// Time.String keeps six significant digits in every unit, no more.
func TestTimeStringSixDigits(t *testing.T) {
	for _, c := range []struct {
		t    Time
		want string
	}{
		{1_234_567 * Picosecond, "1.23457us"},
		{1_234_567 * Nanosecond, "1.23457ms"},
		{1_234_567 * Microsecond, "1.23457s"},
		{-1_234_567 * Nanosecond, "-1.23457ms"},
	} {
		if got := c.t.String(); got != c.want {
			t.Errorf("Time(%d).String() = %q, want %q", int64(c.t), got, c.want)
		}
	}
}
