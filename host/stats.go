package host

import (
	"slices"

	"github.com/edgefabric/edgefabric/element"
)

// Summary describes a set of time samples (RTTs, completion times). Times
// are in microseconds for reading; the samples themselves are kept exact,
// in picoseconds, by the results that carry them.
type Summary struct {
	Count  int     `json:"count"`
	MinUs  float64 `json:"min_us"`
	MeanUs float64 `json:"mean_us"`
	P50Us  float64 `json:"p50_us"`
	P90Us  float64 `json:"p90_us"`
	P99Us  float64 `json:"p99_us"`
	MaxUs  float64 `json:"max_us"`
}

// Summarize computes a Summary; percentiles are nearest-rank (the sample
// at rank ceil(p*n)), so every reported value is a real sample.
func Summarize(samples []element.Time) Summary {
	n := len(samples)
	if n == 0 {
		return Summary{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	var sum float64
	for _, v := range s {
		sum += float64(v)
	}
	us := func(t element.Time) float64 { return float64(t) / float64(element.Microsecond) }
	return Summary{
		Count:  n,
		MinUs:  us(s[0]),
		MeanUs: sum / float64(n) / float64(element.Microsecond),
		P50Us:  us(Percentile(s, 0.50)),
		P90Us:  us(Percentile(s, 0.90)),
		P99Us:  us(Percentile(s, 0.99)),
		MaxUs:  us(s[n-1]),
	}
}

// Percentile returns the nearest-rank p-quantile (0 < p <= 1) of sorted
// samples, or 0 for none.
func Percentile(sorted []element.Time, p float64) element.Time {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	r := int(p*float64(n) + 0.999999999)
	r = min(max(r, 1), n)
	return sorted[r-1]
}

// done is the completion signal every app shares: a flag and callbacks.
type done struct {
	fired bool
	fns   []func()
}

// OnDone registers f to run when the app completes (immediately if it
// already has). f runs inside the engine's context.
func (d *done) OnDone(f func()) {
	if d.fired {
		f()
		return
	}
	d.fns = append(d.fns, f)
}

// Done reports whether the app has completed.
func (d *done) Done() bool { return d.fired }

func (d *done) fire() {
	if d.fired {
		return
	}
	d.fired = true
	fns := d.fns
	d.fns = nil
	for _, f := range fns {
		f()
	}
}

// bps returns bytes over an interval as bits per second.
func bps(bytes int64, d element.Time) float64 {
	if d <= 0 {
		return 0
	}
	return float64(bytes) * 8 / d.Seconds()
}
