package sim

import (
	"fmt"
	"hash/crc32"
	"math/bits"

	"github.com/edgefabric/edgefabric/element"
)

// Drop is why the engine discarded a frame. The zero value is invalid.
type Drop uint8

const (
	_ Drop = iota // the zero value is invalid
	// DropQueueFull: the output queue's byte limit was reached (drop-tail).
	DropQueueFull
	// DropLinkDown: sent on a down link, or in flight or queued when the link
	// failed.
	DropLinkDown
	// DropNodeDown: sent by or delivered to a failed node.
	DropNodeDown
	// DropBadFCS: the frame's CRC was bad (a corruption fault) and a
	// store-and-forward port, a host, or a congested cut-through port that
	// had buffered the whole frame discarded it (Axon §3.3.1).
	DropBadFCS
	// DropFaultLoss: a loss fault on the link ate the frame.
	DropFaultLoss
	// DropNoLink: sent on a port that exists but is not cabled (a send on
	// a port the node does not have is counted by Sim.BadPortSends).
	DropNoLink
	// DropNoElement: delivered to a node on which no element was placed.
	DropNoElement
	numDrops
)

var dropNames = [numDrops]string{"invalid", "queue_full", "link_down", "node_down", "bad_fcs", "fault_loss", "no_link", "no_element"}

func (d Drop) String() string {
	if d < numDrops {
		return dropNames[d]
	}
	return fmt.Sprintf("drop(%d)", uint8(d))
}

// PortStats counts one port's traffic. Tx counts frames queued for
// transmission on the link (taken back for those still queued when the
// link fails: they never started), Rx frames handed to the element; Drops are
// charged to the port where the frame was lost: the sending port for queue,
// link and fault drops, the receiving port for bad-FCS drops at a
// store-and-forward receiver, node_down at either end.
type PortStats struct {
	TxFrames, TxBytes uint64
	RxFrames, RxBytes uint64
	Drops             [numDrops]uint64
	// MaxQueue is the largest output-queue occupancy seen, in bytes.
	MaxQueue int
}

// DropCount returns the number of frames dropped for reason d.
func (s *PortStats) DropCount(d Drop) uint64 {
	if d >= numDrops {
		return 0
	}
	return s.Drops[d]
}

// TotalDrops sums the drops over every reason.
func (s *PortStats) TotalDrops() uint64 {
	var t uint64
	for _, n := range s.Drops {
		t += n
	}
	return t
}

// DropMap returns the non-zero drop counters by name, for reports.
func (s *PortStats) DropMap() map[string]uint64 {
	m := map[string]uint64{}
	for d := Drop(1); d < numDrops; d++ {
		if s.Drops[d] != 0 {
			m[d.String()] = s.Drops[d]
		}
	}
	return m
}

// traceHash is a running 64-bit hash of every delivered event: its time,
// node, port, length and bytes. Frame bytes go through CRC-32C, which is
// hardware-accelerated on amd64 and arm64, so hashing a 1514-byte frame
// costs tens of nanoseconds; the fields are folded in with a multiply-xor
// mix so that the order of events matters.
//
// Every event is mixed in as whole words, the same way: its time, alone in
// a word; then a word whose top byte names the kind of event and whose
// other bits hold the node and port, each in bits of its own; then the
// kind's fixed payload (a frame's length and CRC). So the words of two
// different runs can only be equal if their events are: no field shares
// bits with another (the node of a timer once overlapped bits 40 up of
// its time, so that a timer at 1.1 s on node 0 hashed as one at 0 s on
// node 1), and one kind's words cannot be read as another's.
type traceHash uint64

// The kinds of event, in the top byte of an event's second word.
const (
	hashFrame = 'F'
	hashLink  = 'L'
	hashTimer = 'T'
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (h *traceHash) mix(x uint64) {
	v := uint64(*h) ^ x
	hi, lo := bits.Mul64(v, 0x9E3779B97F4A7C15)
	*h = traceHash(hi ^ lo)
}

// frame mixes in a frame delivered to node's port at t.
func (h *traceHash) frame(t element.Time, node int32, port element.Port, frame []byte) {
	h.mix(uint64(t))
	h.mix(hashFrame<<56 | uint64(uint32(node))<<16 | uint64(port))
	h.mix(uint64(uint32(len(frame)))<<32 | uint64(crc32.Checksum(frame, castagnoli)))
}

// linkChange mixes in a LinkChange(port, up) on node at t.
func (h *traceHash) linkChange(t element.Time, node int32, port element.Port, up bool) {
	var u uint64
	if up {
		u = 1
	}
	h.mix(uint64(t))
	h.mix(hashLink<<56 | uint64(uint32(node))<<17 | uint64(port)<<1 | u)
}

// timer mixes in a timer of node's firing at t.
func (h *traceHash) timer(t element.Time, node int32) {
	h.mix(uint64(t))
	h.mix(hashTimer<<56 | uint64(uint32(node)))
}
