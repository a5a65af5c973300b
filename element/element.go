package element

import (
	"log/slog"
	"math"
	"math/rand/v2"
	"strconv"
)

// Time is a point or span of time in integer picoseconds. Integer time keeps
// serialization exact at 100 Gb/s (one byte is 80 ps). In the simulator it is
// virtual time since the start of the run; in the emulator it is monotonic
// time since the engine started.
type Time int64

// Units of Time.
const (
	Picosecond  Time = 1
	Nanosecond  Time = 1000 * Picosecond
	Microsecond Time = 1000 * Nanosecond
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
)

// Seconds returns t as floating-point seconds, for reports.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// AddSat returns t+d for a non-negative d, saturating at the end of time
// (math.MaxInt64): "never" plus anything stays never, and a sum of valid
// delays that passes an int64 must not wrap into the past.
func (t Time) AddSat(d Time) Time {
	if d > 0 && t > math.MaxInt64-d {
		return math.MaxInt64
	}
	return t + d
}

// timeUnits are the units String picks from, largest first.
var timeUnits = [...]struct {
	d    Time
	name string
}{{Second, "s"}, {Millisecond, "ms"}, {Microsecond, "us"}, {Nanosecond, "ns"}}

// String formats t with the largest unit that keeps it readable, in six
// significant digits: "1.5ms", "-2s", "80ps".
func (t Time) String() string {
	a := t
	if a < 0 {
		a = -a
		if a < 0 { // the most negative Time has no positive counterpart
			a = Second
		}
	}
	for i, u := range timeUnits {
		if a < u.d {
			continue
		}
		s := strconv.FormatFloat(float64(t)/float64(u.d), 'g', 6, 64)
		// Six digits round 999.9999ms up to 1000ms: that is 1s.
		if i > 0 && (s == "1000" || s == "-1000") {
			u = timeUnits[i-1]
			s = strconv.FormatFloat(float64(t)/float64(u.d), 'g', 6, 64)
		}
		return s + u.name
	}
	return strconv.FormatInt(int64(t), 10) + "ps"
}

// Port numbers an element's ports 1..N. Port 0 is never a data port, so the
// zero value is invalid by construction.
type Port uint16

// PortInfo describes one port of an element, as the engine attached it.
type PortInfo struct {
	Port Port
	// Name is the engine's name for the port ("eth1", "s3:2").
	Name string
	// MAC is the port's hardware address, when the engine assigned one.
	MAC [6]byte
	// Rate is the link rate in bits per second; 0 when unknown.
	Rate int64
	// Local marks a port that faces the node's own host stack rather than
	// the fabric: the TAP device in the emulator, the simulated stack in the
	// simulator. Host agents (SPAIN driver, DumbNet agent) sit between a
	// Local port and their fabric ports.
	Local bool
	// Up is the link state at attach time.
	Up bool
}

// Env is everything an element may use to act on the world. The engine
// implements it; an element keeps the Env it was attached with.
type Env interface {
	// Now is the current time: virtual in the simulator, monotonic in the
	// emulator.
	Now() Time
	// Send transmits frame on port p. The engine owns the bytes after the
	// call: the element must not touch frame again.
	Send(p Port, frame []byte)
	// After arms a timer that calls f after d. The returned cancel stops it;
	// calling cancel after the timer fired is harmless.
	After(d Time, f func()) (cancel func())
	// Rand is the element's random source, seeded by the engine. Never use
	// the global source: it would break determinism.
	Rand() *rand.Rand
	// Log is the element's logger.
	Log() *slog.Logger
}

// Element is a forwarding element or control plane driven by an engine.
type Element interface {
	// Attach hands the element its environment and its ports. It is called
	// once, before any other call.
	Attach(env Env, ports []PortInfo)
	// Receive delivers a frame that arrived on port p. frame is valid only
	// until Receive returns: an element that keeps it (or any part of it)
	// must copy it. It may instead hand it on to Send, whole or a slice
	// of it (forwarding in place, a header stripped or rewritten in its
	// bytes): the engine owns the bytes again from that call, as it owns
	// any frame given to Send, and the element must not change them after
	// it. Sending the same bytes on more ports (a flood in place) is
	// allowed: the engines send each as it was at its Send.
	Receive(p Port, frame []byte)
	// LinkChange reports that port p's link went down (up == false) or came
	// back.
	LinkChange(p Port, up bool)
}

// CounterReporter is implemented by elements that count events (frames
// forwarded, drops by reason). Engines read it for status and results.
type CounterReporter interface {
	Counters() map[string]uint64
}

// PortStateReporter is implemented by elements that hold a state per port
// (a spanning-tree bridge: forwarding, blocking, ...), which status
// reports show beside each port. Like Counters, it is called on the
// element's own goroutine.
type PortStateReporter interface {
	PortStateNames() map[Port]string
}

// PortStateVersioner may be implemented by a PortStateReporter: a number
// that changes whenever a port's state may have, so that a watcher (the
// simulator's port-state samples) builds PortStateNames' map only then.
type PortStateVersioner interface {
	PortStateVersion() uint64
}
