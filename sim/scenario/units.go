package scenario

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/edgefabric/edgefabric/element"
)

// ErrBadUnit is wrapped by every unit-parsing error.
var ErrBadUnit = errors.New("bad value")

// splitNum splits "1.5Gbps" into 1.5 and "Gbps".
func splitNum(s string) (float64, string, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == '-' || s[i] == '+' || s[i] == 'e' || s[i] == 'E') {
		// An 'e' followed by a letter is a unit, not an exponent.
		if (s[i] == 'e' || s[i] == 'E') && (i+1 >= len(s) || !(s[i+1] >= '0' && s[i+1] <= '9' || s[i+1] == '-' || s[i+1] == '+')) {
			break
		}
		i++
	}
	if i == 0 {
		return 0, "", fmt.Errorf("%w: %q is not a number", ErrBadUnit, s)
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, "", fmt.Errorf("%w: %q is not a number", ErrBadUnit, s)
	}
	return v, strings.TrimSpace(s[i:]), nil
}

func scaled(s string, v, mul float64, limit float64) (float64, error) {
	r := v * mul
	if r < 0 {
		return 0, fmt.Errorf("%w: %q is negative", ErrBadUnit, s)
	}
	if r > limit {
		return 0, fmt.Errorf("%w: %q is too large", ErrBadUnit, s)
	}
	return r, nil
}

// ParseTime parses a duration with a unit: "2s", "100ms", "1.5us" (or
// "µs"), "500ns", "80ps", "1m". A bare number is seconds.
func ParseTime(s string) (element.Time, error) {
	v, u, err := splitNum(s)
	if err != nil {
		return 0, err
	}
	var mul element.Time
	switch u {
	case "", "s":
		mul = element.Second
	case "m", "min":
		mul = 60 * element.Second
	case "ms":
		mul = element.Millisecond
	case "us", "µs":
		mul = element.Microsecond
	case "ns":
		mul = element.Nanosecond
	case "ps":
		mul = element.Picosecond
	default:
		return 0, fmt.Errorf("%w: %q: unknown time unit %q (s, ms, us, µs, ns, ps, m, min)", ErrBadUnit, s, u)
	}
	r, err := scaled(s, v, float64(mul), float64(math.MaxInt64/2))
	if err != nil {
		return 0, err
	}
	return element.Time(math.Round(r)), nil
}

// ParseRate parses a bit rate: "1Gbps", "10Gb/s", "100Mbps", "64kbps",
// "1e9" (a bare number is bits per second).
func ParseRate(s string) (int64, error) {
	v, u, err := splitNum(s)
	if err != nil {
		return 0, err
	}
	// A capital B is bytes (GB/s, MBps): the rate would be 8 times what
	// was meant. Rates are in bits; say so rather than read it as bits.
	if strings.Contains(strings.ReplaceAll(u, "Bit", "bit"), "B") {
		return 0, fmt.Errorf("%w: %q: rates are in bits per second (Gbps, Gb/s, Mbps); %q reads as bytes", ErrBadUnit, s, u)
	}
	u = strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(u), "ps"), "/s")
	u = strings.TrimSuffix(u, "bit")
	u = strings.TrimSuffix(u, "b")
	var mul float64
	switch u {
	case "":
		mul = 1
	case "k":
		mul = 1e3
	case "m":
		mul = 1e6
	case "g":
		mul = 1e9
	case "t":
		mul = 1e12
	default:
		return 0, fmt.Errorf("%w: %q: unknown rate unit (bps, kbps, Mbps, Gbps, Tbps)", ErrBadUnit, s)
	}
	r, err := scaled(s, v, mul, 1e15)
	if err != nil {
		return 0, err
	}
	if r < 1 {
		return 0, fmt.Errorf("%w: %q: a rate must be at least 1 bit/s", ErrBadUnit, s)
	}
	return int64(math.Round(r)), nil
}

// ParseSize parses a byte count: "1500", "64KiB", "10MB" (MB = 10^6,
// MiB = 2^20), "1GiB", "1.5KB", "1TiB" (the queue limit). A unit ending in
// a lowercase b ("10Mb", "512Kb", "1b") is bits and refused.
func ParseSize(s string) (int64, error) {
	v, u, err := splitNum(s)
	if err != nil {
		return 0, err
	}
	// A lowercase b is bits (Mb, Kb, as in rates): read as bytes, 10Mb
	// would be eight times what was meant. Sizes are in bytes; say so.
	if strings.HasSuffix(u, "b") || strings.HasSuffix(strings.ToLower(u), "bit") || strings.HasSuffix(strings.ToLower(u), "bits") {
		return 0, fmt.Errorf("%w: %q: sizes are in bytes (B, KB, MB, KiB, MiB); %q reads as bits", ErrBadUnit, s, u)
	}
	var mul float64
	switch strings.ToLower(u) {
	case "", "b":
		mul = 1
	case "kb", "k":
		mul = 1e3
	case "mb", "m":
		mul = 1e6
	case "gb", "g":
		mul = 1e9
	case "kib":
		mul = 1 << 10
	case "mib":
		mul = 1 << 20
	case "gib":
		mul = 1 << 30
	case "tb", "t":
		mul = 1e12
	case "tib":
		mul = 1 << 40
	default:
		return 0, fmt.Errorf("%w: %q: unknown size unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)", ErrBadUnit, s)
	}
	r, err := scaled(s, v, mul, 1<<50)
	if err != nil {
		return 0, err
	}
	return int64(math.Round(r)), nil
}
