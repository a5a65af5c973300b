package element

import (
	"fmt"
	"slices"
	"testing"
)

// Time.String switches unit at exactly one of the larger unit, keeps the
// sign in every unit, and prints six significant digits.
func TestTimeStringUnitBoundaries(t *testing.T) {
	for _, c := range []struct {
		t    Time
		want string
	}{
		{Second, "1s"},
		{Millisecond, "1ms"},
		{Microsecond, "1us"},
		{Nanosecond, "1ns"},
		{Nanosecond - 1, "999ps"},
		{-Second, "-1s"},
		{-1500 * Microsecond, "-1.5ms"},
		{-1500 * Nanosecond, "-1.5us"},
		{-1500 * Picosecond, "-1.5ns"},
		{-999 * Picosecond, "-999ps"},
		{999_999 * Picosecond, "999.999ns"},
		{999_999 * Nanosecond, "999.999us"},
		{999_999 * Microsecond, "999.999ms"},
		{1_234_567 * Millisecond, "1234.57s"},
	} {
		if got := c.t.String(); got != c.want {
			t.Errorf("Time(%d).String() = %q, want %q", int64(c.t), got, c.want)
		}
	}
	for _, c := range []struct {
		t    Time
		want float64
	}{{Second, 1}, {Millisecond, 1e-3}, {Microsecond, 1e-6}, {Nanosecond, 1e-9}, {Picosecond, 1e-12}} {
		if got := c.t.Seconds(); got != c.want {
			t.Errorf("Time(%d).Seconds() = %v, want %v", int64(c.t), got, c.want)
		}
	}
}

// Names is sorted whatever the map's order: with twelve names a random
// order is sorted once in 479,001,600.
func TestCounterNamesSorted(t *testing.T) {
	var c Counters
	var want []string
	for i := 12; i > 0; i-- {
		name := fmt.Sprintf("c%02d", i)
		c.Add(name, uint64(i))
		want = append(want, name)
	}
	slices.Sort(want)
	if got := c.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	if c.Get("c07") != 7 || len(c.Snapshot()) != 12 {
		t.Fatalf("counts wrong: %v", c.Snapshot())
	}
}
