package topo

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/edgefabric/edgefabric/element"
)

// ParseRate reads a link rate: a number of bits per second with an
// optional SI suffix, "1G", "10Gbps", "100M", "2.5G", "40Gb/s",
// "1000000000". Units are decimal (1G = 10⁹ b/s), as Ethernet rates are.
func ParseRate(s string) (int64, error) {
	t := strings.TrimSpace(s)
	// A capital B is bytes (1GB/s, 10GBps): read as bits, the link would
	// be 8 times slower than meant.
	if strings.Contains(strings.ReplaceAll(t, "Bit", "bit"), "B") {
		return 0, fmt.Errorf("%w: rate %s: rates are in bits per second (10Gbps, 10Gb/s, 10G), and a capital B is bytes", ErrBadValue, quote(s))
	}
	low := strings.ToLower(t)
	for _, suf := range []string{"bps", "b/s", "bit/s"} {
		low = strings.TrimSuffix(low, suf)
	}
	mult := 1.0
	if n := len(low); n > 0 {
		switch low[n-1] {
		case 'k':
			mult, low = 1e3, low[:n-1]
		case 'm':
			mult, low = 1e6, low[:n-1]
		case 'g':
			mult, low = 1e9, low[:n-1]
		case 't':
			mult, low = 1e12, low[:n-1]
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(low), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%w: rate %s: want bits per second like 1G, 10Gbps or 100M", ErrBadValue, quote(s))
	}
	r := v * mult
	if r < 1 || r > 1e15 {
		return 0, fmt.Errorf("%w: rate %s: must be between 1 b/s and 1 Pb/s", ErrBadValue, quote(s))
	}
	return int64(math.Round(r)), nil
}

// FormatRate writes a rate with the largest SI unit that keeps it exact:
// "10G", "100M", "2500M", "1200".
func FormatRate(r int64) string {
	switch {
	case r != 0 && r%1_000_000_000_000 == 0:
		return strconv.FormatInt(r/1_000_000_000_000, 10) + "T"
	case r != 0 && r%1_000_000_000 == 0:
		return strconv.FormatInt(r/1_000_000_000, 10) + "G"
	case r != 0 && r%1_000_000 == 0:
		return strconv.FormatInt(r/1_000_000, 10) + "M"
	case r != 0 && r%1_000 == 0:
		return strconv.FormatInt(r/1_000, 10) + "K"
	}
	return strconv.FormatInt(r, 10)
}

var timeUnits = map[string]element.Time{
	"ps": element.Picosecond, "ns": element.Nanosecond, "us": element.Microsecond,
	"µs": element.Microsecond, "μs": element.Microsecond, "ms": element.Millisecond, "s": element.Second,
}

// ParseDelay reads a propagation delay: a number and a unit, "1us",
// "500ns", "2.5ms", "100ps", or "0". At most one hour.
func ParseDelay(s string) (element.Time, error) {
	t := strings.TrimSpace(s)
	if t == "0" {
		return 0, nil
	}
	i := strings.IndexFunc(t, func(r rune) bool { return r != '.' && (r < '0' || r > '9') })
	if i > 0 {
		if unit, ok := timeUnits[strings.TrimSpace(t[i:])]; ok {
			v, err := strconv.ParseFloat(t[:i], 64)
			if err == nil && v*float64(unit) <= float64(3600*element.Second) {
				return element.Time(math.Round(v * float64(unit))), nil
			}
		}
	}
	return 0, fmt.Errorf("%w: delay %s: want a number and a unit, ps, ns, us, ms or s, such as 1us, 500ns or 2ms (at most 3600s)", ErrBadValue, quote(s))
}

// FormatDelay writes a delay exactly with the largest unit that divides
// it: "1us", "1500ns", "0".
func FormatDelay(d element.Time) string {
	if d == 0 {
		return "0"
	}
	for _, u := range []struct {
		name string
		t    element.Time
	}{{"s", element.Second}, {"ms", element.Millisecond}, {"us", element.Microsecond}, {"ns", element.Nanosecond}} {
		if d%u.t == 0 {
			return strconv.FormatInt(int64(d/u.t), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(d), 10) + "ps"
}
