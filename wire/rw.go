package wire

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// reader is a bounds-checked cursor over a message body. The first failed
// read records an error naming the field; later reads return zero values,
// so a decoder can read every field and check r.err once. It never panics
// and never reads past b.
type reader struct {
	b    []byte
	off  int
	what string // format name for errors, e.g. "dumbnet probe"
	err  error
}

func (r *reader) need(n int, field string) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || len(r.b)-r.off < n {
		r.err = fmt.Errorf("wire: %s: %s needs %d bytes at offset %d, have %d: %w",
			r.what, field, n, r.off, len(r.b)-r.off, ErrTruncated)
		return false
	}
	return true
}

func (r *reader) u8(field string) uint8 {
	if !r.need(1, field) {
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *reader) u16(field string) uint16 {
	if !r.need(2, field) {
		return 0
	}
	v := binary.BigEndian.Uint16(r.b[r.off:])
	r.off += 2
	return v
}

func (r *reader) u32(field string) uint32 {
	if !r.need(4, field) {
		return 0
	}
	v := binary.BigEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

func (r *reader) u64(field string) uint64 {
	if !r.need(8, field) {
		return 0
	}
	v := binary.BigEndian.Uint64(r.b[r.off:])
	r.off += 8
	return v
}

func (r *reader) mac(field string) (m MAC) {
	if !r.need(6, field) {
		return m
	}
	copy(m[:], r.b[r.off:])
	r.off += 6
	return m
}

// bytes returns a sub-slice of the input (no copy).
func (r *reader) bytes(n int, field string) []byte {
	if !r.need(n, field) {
		return nil
	}
	v := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return v
}

// addr reads a length-prefixed IP address: one byte 0 (no address), 4
// (IPv4) or 16 (IPv6), then that many bytes.
func (r *reader) addr(field string) netip.Addr {
	if !r.need(1, field) { // the length byte
		return netip.Addr{}
	}
	n := r.b[r.off]
	r.off++
	switch n {
	case 0:
		return netip.Addr{}
	case 4:
		if !r.need(4, field) {
			return netip.Addr{}
		}
		a := netip.AddrFrom4([4]byte(r.b[r.off : r.off+4]))
		r.off += 4
		return a
	case 16:
		if !r.need(16, field) {
			return netip.Addr{}
		}
		a := netip.AddrFrom16([16]byte(r.b[r.off : r.off+16]))
		r.off += 16
		return a
	}
	r.err = fmt.Errorf("wire: %s: %s length %d, want 0, 4 or 16: %w", r.what, field, n, ErrBadValue)
	return netip.Addr{}
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("wire: "+r.what+": "+format, args...)
	}
}

// end checks that the whole body was consumed.
func (r *reader) end() error {
	if r.err == nil && r.off != len(r.b) {
		r.err = &TrailingError{What: r.what, End: r.off, Extra: len(r.b) - r.off}
	}
	return r.err
}

func appendU16(b []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(b, v) }
func appendU32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }
func appendU64(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }

// checkAddrs refuses addresses appendAddr cannot represent: a zone (the
// fe80::1 of "fe80::1%eth0") is not carried, and dropping it silently
// would decode as another address.
func checkAddrs(what string, addrs ...netip.Addr) error {
	for _, a := range addrs {
		if a.Zone() != "" {
			return fmt.Errorf("wire: %s: address %v has a zone, which is not carried: %w", what, a, ErrBadValue)
		}
	}
	return nil
}

// appendAddr writes the length-prefixed form read by reader.addr. The
// caller has refused a zone (checkAddrs).
func appendAddr(b []byte, a netip.Addr) []byte {
	switch {
	case !a.IsValid():
		return append(b, 0)
	case a.Is4():
		v := a.As4()
		return append(append(b, 4), v[:]...)
	default:
		v := a.As16()
		return append(append(b, 16), v[:]...)
	}
}

func putU64(b []byte, v uint64) { binary.BigEndian.PutUint64(b, v) }
