package scenario

import "testing"

// usText picks the unit: microseconds below a millisecond, then
// milliseconds, then seconds.
func TestUsText(t *testing.T) {
	for us, want := range map[float64]string{0: "0.0us", 812.54: "812.5us", 999.9: "999.9us", 1000: "1.00ms", 60668.7: "60.67ms", 1.25e6: "1.250s"} {
		if got := usText(us); got != want {
			t.Errorf("usText(%v) = %q, want %q", us, got, want)
		}
	}
}
