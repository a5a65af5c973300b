package element

import (
	"math"
	"testing"
)

func TestTimeString(t *testing.T) {
	for _, c := range []struct {
		t    Time
		want string
	}{
		{0, "0ps"},
		{80 * Picosecond, "80ps"},
		{12_112 * Nanosecond, "12.112us"},
		{1500 * Microsecond, "1.5ms"},
		{-2 * Second, "-2s"},
	} {
		if got := c.t.String(); got != c.want {
			t.Errorf("Time(%d).String() = %q, want %q", int64(c.t), got, c.want)
		}
	}
	if s := (1500 * Millisecond).Seconds(); s != 1.5 {
		t.Errorf("Seconds() = %v, want 1.5", s)
	}
}

func TestCounters(t *testing.T) {
	var c Counters
	if c.Get("x") != 0 || c.Snapshot() != nil {
		t.Fatal("zero Counters not empty")
	}
	c.Inc("drop_truncated")
	c.Add("forwarded", 3)
	c.Inc("drop_truncated")
	if c.Get("drop_truncated") != 2 || c.Get("forwarded") != 3 {
		t.Fatalf("counts wrong: %v", c.Snapshot())
	}
	snap := c.Snapshot()
	snap["forwarded"] = 99
	if c.Get("forwarded") != 3 {
		t.Fatal("Snapshot is not a copy")
	}
	if n := c.Names(); len(n) != 2 || n[0] != "drop_truncated" || n[1] != "forwarded" {
		t.Fatalf("Names() = %v", n)
	}
}

// AddSat adds, and saturates at the end of time instead of wrapping.
func TestTimeAddSat(t *testing.T) {
	for _, c := range []struct{ t, d, want Time }{
		{1, 2, 3},
		{5, 0, 5},
		{math.MaxInt64, 0, math.MaxInt64},
		{math.MaxInt64, 1, math.MaxInt64},
		{math.MaxInt64 - 1, 1, math.MaxInt64},
		{math.MaxInt64 - 1, 2, math.MaxInt64},
		{Second, math.MaxInt64, math.MaxInt64},
	} {
		if got := c.t.AddSat(c.d); got != c.want {
			t.Errorf("%d.AddSat(%d) = %d, want %d", c.t, c.d, got, c.want)
		}
	}
}
