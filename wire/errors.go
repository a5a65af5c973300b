package wire

import (
	"errors"
	"fmt"
)

// Sentinel errors. Decoders wrap them with the format and the detail at
// fault, for example "wire: axon: header length 9, hop counts need 7: bad
// length"; test with errors.Is.
var (
	// ErrTruncated: the buffer ends before the field being read.
	ErrTruncated = errors.New("truncated")
	// ErrBadLength: a length or count field disagrees with the buffer or
	// with another field.
	ErrBadLength = errors.New("bad length")
	// ErrUnknownType: a type, subtype, EtherType or opcode that the
	// format does not define.
	ErrUnknownType = errors.New("unknown type")
	// ErrBadHop: a hop or tag value that cannot name a port (0 in an Axon
	// path, 0xFF inside a DumbNet path, a 4-bit hop above 0xF ...).
	ErrBadHop = errors.New("bad hop")
	// ErrNoHops: a forwarding operation found no hop left to pop.
	ErrNoHops = errors.New("no hops left")
	// ErrNotAtEnd: a host tried to strip a DumbNet path that still has
	// tags before the end marker (the paper's agent drops such packets).
	ErrNotAtEnd = errors.New("path not at end marker")
	// ErrBadValue: a field holds a value the format forbids (non-zero
	// padding, reserved bits set, an address of the wrong family ...).
	ErrBadValue = errors.New("bad value")
	// ErrTrailing: bytes follow a message that defines its own end.
	ErrTrailing = errors.New("trailing bytes")
)

// TrailingError is the ErrTrailing of a message decoder: the message ended
// End bytes into the buffer and Extra bytes followed it. DecodePadded uses
// End to tell a NIC's padding from a longer message.
type TrailingError struct {
	What       string // the format, e.g. "dumbnet port status"
	End, Extra int
}

func (e *TrailingError) Error() string {
	return fmt.Sprintf("wire: %s: %d bytes after the message: %v", e.What, e.Extra, ErrTrailing)
}

func (e *TrailingError) Unwrap() error { return ErrTrailing }
