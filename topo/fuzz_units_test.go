package topo

import (
	"errors"
	"strings"
	"testing"

	"github.com/edgefabric/edgefabric/element"
)

// Fuzz targets of the unit parsers that topology files go through (rate
// and delay of every link): any input gives a value in range or an
// ErrBadValue error on one line, and a value read writes out (FormatRate,
// FormatDelay, as the writers do) and reads back unchanged.

func FuzzRate(f *testing.F) {
	for _, s := range []string{"1G", "10Gbps", "100M", "2.5G", "40Gb/s", "1000000000", "1Gbit/s", "1T", "1000T", "1e3G",
		"0.5", "1.4", "0x10", "1GB/s", "", " 7 k ", "Inf", "NaN", "-1G", "1_000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err != nil {
			if !errors.Is(err, ErrBadValue) || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("ParseRate(%q): bad error %q", s, err)
			}
			return
		}
		if r < 1 || r > 1e15 {
			t.Fatalf("ParseRate(%q) = %d, out of [1, 1e15]", s, r)
		}
		w := FormatRate(r)
		if back, err := ParseRate(w); err != nil || back != r {
			t.Fatalf("ParseRate(%q) = %d, written %q, read back %d, %v", s, r, w, back, err)
		}
	})
}

func FuzzDelay(f *testing.F) {
	for _, s := range []string{"1us", "500ns", "2.5ms", "100ps", "0", "1s", "3600s", "3600.1s", "1µs", "1μs", "0.0001ps",
		".5us", "1.2.3us", "us", "1 ms", "1e3us", "-1us", "0.0000000000001s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDelay(s)
		if err != nil {
			if !errors.Is(err, ErrBadValue) || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("ParseDelay(%q): bad error %q", s, err)
			}
			return
		}
		if d < 0 || d > 3600*element.Second {
			t.Fatalf("ParseDelay(%q) = %d, out of [0, 1h]", s, d)
		}
		w := FormatDelay(d)
		if back, err := ParseDelay(w); err != nil || back != d {
			t.Fatalf("ParseDelay(%q) = %d, written %q, read back %d, %v", s, d, w, back, err)
		}
	})
}
