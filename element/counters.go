package element

import (
	"maps"
	"slices"
)

// Counters is a small set of named event counters: frames forwarded, drops
// by reason. Counting a drop, rather than dropping silently, is how elements
// report bad input. The zero value is ready to use.
type Counters struct {
	m map[string]uint64
}

// Inc adds one to the named counter.
func (c *Counters) Inc(name string) { c.Add(name, 1) }

// Add adds n to the named counter. Adding zero creates the counter if
// it is new, so that Names and Snapshot list it (at zero).
func (c *Counters) Add(name string, n uint64) {
	if c.m == nil {
		c.m = make(map[string]uint64)
	}
	c.m[name] += n
}

// Get returns the named counter's value.
func (c *Counters) Get(name string) uint64 { return c.m[name] }

// Snapshot returns a copy of all counters.
func (c *Counters) Snapshot() map[string]uint64 { return maps.Clone(c.m) }

// Names returns the counter names in sorted order.
func (c *Counters) Names() []string {
	return slices.Sorted(maps.Keys(c.m))
}
