package wire

import (
	"encoding/binary"
	"fmt"
	"io"
	"sync"
	"time"
)

// LinkType is a pcap link-layer header type.
type LinkType uint32

const (
	// LinkTypeEthernet: every record is an Ethernet frame.
	LinkTypeEthernet LinkType = 1
	// LinkTypeEdgefabric (LINKTYPE_USER0, 147): every record starts with
	// one byte saying what follows, Encap*, so that one capture of an Axon
	// port holds both the Ethernet frames of the bootstrap and the Axon
	// packets (which have no Ethernet header). The Lua dissector registers
	// for wtap USER0.
	LinkTypeEdgefabric LinkType = 147
)

// Encapsulation bytes of LinkTypeEdgefabric records.
const (
	EncapEthernet byte = 0x01 // an Ethernet frame follows
	EncapAxon     byte = 0x02 // an Axon packet follows
)

const (
	pcapMagicNano = 0xa1b23c4d // nanosecond timestamps
	pcapSnapLen   = 262144
	pcapMaxSec    = 1<<32 - 1 // the last second a record header holds (2106)
)

// PcapWriter writes a classic pcap file with nanosecond timestamps. Both
// engines use it to capture any port: the simulator passes virtual time,
// the emulator monotonic time since the lab started, both as picoseconds
// since start (DESIGN.md §2); Epoch is added to turn them into wall-clock
// timestamps. Frames are copied out during the call. Safe for concurrent
// use.
type PcapWriter struct {
	mu    sync.Mutex
	w     io.Writer
	lt    LinkType
	epoch int64 // ns since the Unix epoch
	hdr   [17]byte
	err   error
}

// NewPcapWriter writes the file header and returns a writer. epoch is the
// wall-clock time of picosecond 0; the zero time.Time means the Unix epoch.
// Pcap holds seconds since 1970 in 32 bits: an epoch before 1970 is
// refused, and so is a record whose time falls after 2106.
func NewPcapWriter(w io.Writer, lt LinkType, epoch time.Time) (*PcapWriter, error) {
	if lt != LinkTypeEthernet && lt != LinkTypeEdgefabric {
		return nil, fmt.Errorf("wire: pcap: link type %d: %w", lt, ErrUnknownType)
	}
	p := &PcapWriter{w: w, lt: lt}
	if !epoch.IsZero() {
		// Classic pcap counts unsigned 32-bit seconds since 1970.
		if s := epoch.Unix(); s < 0 || s > pcapMaxSec {
			return nil, fmt.Errorf("wire: pcap: epoch %v outside 1970..2106, which pcap timestamps cannot hold: %w", epoch, ErrBadValue)
		}
		p.epoch = epoch.UnixNano()
	}
	var h [24]byte
	binary.LittleEndian.PutUint32(h[0:], pcapMagicNano)
	binary.LittleEndian.PutUint16(h[4:], 2)
	binary.LittleEndian.PutUint16(h[6:], 4)
	binary.LittleEndian.PutUint32(h[16:], pcapSnapLen)
	binary.LittleEndian.PutUint32(h[20:], uint32(lt))
	if _, err := w.Write(h[:]); err != nil {
		return nil, fmt.Errorf("wire: pcap: %w", err)
	}
	return p, nil
}

// LinkType returns the file's link type.
func (p *PcapWriter) LinkType() LinkType { return p.lt }

// WriteEthernet records an Ethernet frame seen at ps picoseconds since start.
func (p *PcapWriter) WriteEthernet(ps int64, frame []byte) error {
	return p.write(ps, EncapEthernet, frame)
}

// WriteAxon records an Axon packet; the file must be LinkTypeEdgefabric.
func (p *PcapWriter) WriteAxon(ps int64, pkt []byte) error {
	if p.lt != LinkTypeEdgefabric {
		return fmt.Errorf("wire: pcap: Axon packet in a link type %d file (use LinkTypeEdgefabric): %w", p.lt, ErrUnknownType)
	}
	return p.write(ps, EncapAxon, pkt)
}

func (p *PcapWriter) write(ps int64, encap byte, data []byte) error {
	if ps < 0 {
		return fmt.Errorf("wire: pcap: negative timestamp %d ps: %w", ps, ErrBadValue)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	ns := p.epoch + ps/1000
	if ns/1e9 > pcapMaxSec {
		return fmt.Errorf("wire: pcap: timestamp %d s after 1970 does not fit 32 bits: %w", ns/1e9, ErrBadValue)
	}
	extra := 0
	if p.lt == LinkTypeEdgefabric {
		extra = 1
	}
	orig := len(data) + extra
	incl := min(orig, pcapSnapLen)
	h := p.hdr[:16+extra]
	binary.LittleEndian.PutUint32(h[0:], uint32(ns/1e9))
	binary.LittleEndian.PutUint32(h[4:], uint32(ns%1e9))
	binary.LittleEndian.PutUint32(h[8:], uint32(incl))
	binary.LittleEndian.PutUint32(h[12:], uint32(orig))
	if extra == 1 {
		h[16] = encap
	}
	if _, err := p.w.Write(h); err != nil {
		p.err = fmt.Errorf("wire: pcap: %w", err)
		return p.err
	}
	if _, err := p.w.Write(data[:incl-extra]); err != nil {
		p.err = fmt.Errorf("wire: pcap: %w", err)
		return p.err
	}
	return nil
}
