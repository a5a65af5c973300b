package sim

import (
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/edgefabric/edgefabric/element"
)

// pipe is one direction of a link: an output queue with a byte limit and
// drop-tail, a serializer at the link rate, and propagation delay.
//
// Because the queue is FIFO and the link's rate and delay are fixed, a
// frame's whole future is known the moment it is queued: it starts when the
// serializer is free, ends one serialization time later, and arrives one
// delay after that. So the pipe computes those times at enqueue and keeps
// one pending event, for the delivery of its oldest frame, instead of one
// event per frame per stage (htsim's Pipe/Queue habit). The event list grows
// with busy links, not with traffic.
type pipe struct {
	s                *Sim
	from, to         int32
	fromPort, toPort element.Port
	rate             int64 // bits per second; 0 means unlimited
	delay            element.Time
	limit            int // queue limit in bytes
	idx              int32
	up               bool
	pending          bool
	gen              uint32       // bumped when the link fails, to void the pending event
	busy             element.Time // the serializer is free from this time
	// frac is the fraction of a picosecond past busy at which the
	// serializer is really free, in units of 1/rate ps: carried to a frame
	// sent back to back, so that a link holds its rate at any rate.
	frac uint64
	fl   []flight
	dh   int // next frame to deliver
	qh   int // oldest frame still counted in the queue
	// cn is the next frame to write to the sending port's capture: a
	// frame is written once its transmission has started, so that one
	// still queued when the link fails is never in it.
	cn           int
	qbytes       int
	fault        Fault
	rng          *rand.Rand
	psPerByteNum int64 // 8e12, kept as a field to make the formula explicit
	// psPerByte is 8e12/rate when rate divides it (1, 10, 25, 40, 100
	// Gb/s...), else 0: serialize's fast path, a multiply where the
	// general case divides 128 bits twice (5 % of an event's time).
	psPerByte int64
}

// flight is a frame between Send and delivery.
type flight struct {
	frame   []byte
	start   element.Time // serialization starts
	end     element.Time // serialization ends: the frame leaves the queue
	deliver element.Time // Receive is called at the far end
	tail    element.Time // the frame's last byte has arrived at the far end
	// srcTail is when the last byte of the frame this one was forwarded
	// from, cut through, arrives at the forwarding node (src: 1 + the
	// pipe it came on; 0 for a frame not sent from a cut-through
	// Receive). If that link fails before then, this frame is truncated.
	srcTail  element.Time
	src      int32
	qlen     int32
	poisoned bool
	lost     bool  // a loss fault: transmitted, never delivered
	flip     int32 // a corruption fault: 1 + the bit it flips on delivery
}

func (pp *pipe) init(s *Sim, from int32, fp element.Port, to int32, tp element.Port, rate int64, delay element.Time, limit, idx int) {
	*pp = pipe{s: s, from: from, fromPort: fp, to: to, toPort: tp, rate: rate, delay: delay,
		limit: limit, idx: int32(idx), up: true, psPerByteNum: 8 * int64(element.Second)}
	pp.setRate(rate)
}

// setRate sets the link's rate in bit/s (0: no serialization delay).
func (pp *pipe) setRate(rate int64) {
	pp.rate, pp.psPerByte, pp.frac = rate, 0, 0
	if rate > 0 && pp.psPerByteNum%rate == 0 {
		pp.psPerByte = pp.psPerByteNum / rate
	}
}

// ser returns the time to clock n bytes onto the link. Integer picoseconds:
// exact for every rate that divides 8e12 (1, 10, 25, 40, 100 Gb/s...).
func (pp *pipe) ser(n int) element.Time {
	if pp.rate <= 0 || n <= 0 {
		return 0
	}
	if n < 1<<20 { // n·8e12 < 2^63: every real frame
		return element.Time(int64(n) * pp.psPerByteNum / pp.rate)
	}
	// A frame of a megabyte or more (an element may send anything, and a
	// queue may be set to 1 TiB) would overflow the product: take it in
	// 128 bits, saturating at the end of time.
	hi, lo := bits.Mul64(uint64(n), uint64(pp.psPerByteNum))
	if hi >= uint64(pp.rate) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(pp.rate))
	return element.Time(min(q, math.MaxInt64))
}

// serialize returns when a frame of n bytes on the wire that starts at
// start ends, and makes the serializer free again after ifg more bytes.
// Times are whole picoseconds; at a rate that does not divide 8e12 the
// fraction left over carries to the next frame when it follows back to
// back (starts when the serializer is free), so that a busy link holds
// its rate exactly: rounding each frame down on its own made it faster
// (by up to 2 ps a frame; at 1 Pb/s a 64-byte frame took no time at all).
func (pp *pipe) serialize(start element.Time, n, ifg int) (end element.Time) {
	var frac uint64
	if start == pp.busy {
		frac = pp.frac
	}
	if pp.rate <= 0 {
		pp.busy, pp.frac = start, 0
		return start
	}
	if pp.psPerByte > 0 && n+ifg < 1<<20 { // exact, and (n+ifg)·8e12 < 2^63
		pp.busy = start.AddSat(element.Time(int64(n+ifg) * pp.psPerByte))
		return start.AddSat(element.Time(int64(n) * pp.psPerByte))
	}
	d, _ := pp.div(n, frac)
	free, rem := pp.div(n+ifg, frac)
	pp.busy, pp.frac = start.AddSat(free), rem
	return start.AddSat(d)
}

// div returns (n·8e12 + frac) / rate picoseconds, saturating, and the
// remainder, in 128-bit arithmetic (n·8e12 overflows an int64 past a
// megabyte).
func (pp *pipe) div(n int, frac uint64) (element.Time, uint64) {
	hi, lo := bits.Mul64(uint64(n), uint64(pp.psPerByteNum))
	lo, c := bits.Add64(lo, frac, 0)
	hi += c
	if hi >= uint64(pp.rate) {
		return math.MaxInt64, 0
	}
	q, r := bits.Div64(hi, lo, uint64(pp.rate))
	if q > math.MaxInt64 {
		return math.MaxInt64, 0
	}
	return element.Time(q), r
}

// drain retires from the queue count every frame whose serialization has
// ended by now.
func (pp *pipe) drain(now element.Time) {
	for pp.qh < len(pp.fl) && pp.fl[pp.qh].end <= now {
		pp.qbytes -= int(pp.fl[pp.qh].qlen)
		pp.qh++
	}
	pp.compact()
}

// compact drops entries delivered, drained and captured from the front
// of fl.
func (pp *pipe) compact() {
	lo := min(pp.dh, pp.qh, pp.cn)
	if lo == len(pp.fl) {
		clear(pp.fl)
		pp.fl = pp.fl[:0]
		pp.dh, pp.qh, pp.cn = 0, 0, 0
		return
	}
	if lo >= 64 && 2*lo >= len(pp.fl) {
		n := copy(pp.fl, pp.fl[lo:])
		clear(pp.fl[n:])
		pp.fl = pp.fl[:n]
		pp.dh -= lo
		pp.qh -= lo
		pp.cn -= lo
	}
}

// capture writes to the sending port's capture every frame whose
// transmission has started by now, stamped with its start.
func (pp *pipe) capture(now element.Time) {
	w := pp.s.nodes[pp.from].ports[pp.fromPort-1].capture
	for ; pp.cn < len(pp.fl) && pp.fl[pp.cn].start <= now; pp.cn++ {
		if w != nil {
			pp.s.captureErr(w.WritePacket(pp.fl[pp.cn].start, pp.fl[pp.cn].frame))
		}
	}
}

func (pp *pipe) setUp(up bool) {
	pp.up = up
	if up {
		return
	}
	// Everything not yet delivered is lost with the link; what had not
	// started yet was never transmitted.
	now := pp.s.now
	if pp.s.nodes[pp.to].timing.CutThrough > 0 {
		// A cut-through receiver may have forwarded frames whose tail
		// will now never arrive: what it sent from them is truncated.
		pp.s.truncate(pp.to, pp.idx, now, 0, false)
	}
	pp.capture(now)
	st := &pp.s.nodes[pp.from].ports[pp.fromPort-1].stats
	for i := pp.dh; i < len(pp.fl); i++ {
		st.Drops[DropLinkDown]++
		if pp.fl[i].start > now {
			st.TxFrames--
			st.TxBytes -= uint64(len(pp.fl[i].frame))
		}
		pp.s.recycle(pp.fl[i].frame)
	}
	clear(pp.fl)
	pp.fl = pp.fl[:0]
	pp.dh, pp.qh, pp.cn, pp.qbytes = 0, 0, 0, 0
	pp.pending = false
	pp.gen++
	if pp.busy > pp.s.now {
		pp.busy = pp.s.now
	}
	pp.frac = 0
}

// send queues frame; the caller has checked the link is up.
func (pp *pipe) send(frame []byte, st *PortStats) {
	s := pp.s
	now := s.now
	pp.capture(now)
	// qbytes may still count frames that finished serializing since the
	// last delivery (deliver drains as it goes); drain only when that
	// matters, which spares the send path a walk over cold entries.
	if n := pp.qbytes + len(frame); n > pp.limit || n > st.MaxQueue {
		pp.drain(now)
	}
	if pp.qbytes+len(frame) > pp.limit {
		st.Drops[DropQueueFull]++
		s.recycle(frame)
		return
	}
	poisoned, lost := false, false
	var flip int32
	if pp.fault.active() {
		if pp.rng == nil {
			pp.rng = rand.New(rand.NewPCG(s.opts.Seed^0xFA017, splitmix(uint64(pp.idx)+1)))
		}
		// A lost frame vanishes on the wire: it is transmitted (it takes
		// its time on the link, counts in TxFrames and the sender's
		// capture) and never delivered (fault_loss, at delivery time).
		if pp.fault.Loss > 0 && pp.rng.Float64() < pp.fault.Loss {
			lost = true
		} else if pp.fault.Corrupt > 0 && len(frame) > 0 && pp.rng.Float64() < pp.fault.Corrupt {
			// Flipped on delivery, not here: the sender's capture shows
			// the frame as sent, the receiver's as received.
			flip = int32(pp.rng.IntN(8*len(frame))) + 1
			poisoned = true
		}
	}
	fr := &s.framing
	wire := max(len(frame), fr.MinFrame) + fr.FCS
	serT := pp.ser(fr.Preamble + wire)
	start := max(now, pp.busy)
	rx := &s.rx
	var src int32
	var srcTail element.Time
	if rx.active && rx.ct {
		src, srcTail = rx.src, rx.srcTail
		// Cut-through: the frame may start before its input has fully
		// arrived, but may not end before the input's tail is in.
		start = max(start, rx.tail-serT)
		if rx.poisoned {
			if start >= rx.tail {
				// The whole frame was buffered before it could leave: the
				// CRC check caught it here (Axon §3.3.1).
				st.Drops[DropBadFCS]++
				s.recycle(frame)
				return
			}
			poisoned = true
		}
	}
	// Saturating sums: rate, delay and latency are each bounded, but a
	// 1 b/s link with a months-long delay into a node with a months-long
	// latency adds up past int64 (see element.Time.AddSat).
	end := pp.serialize(start, fr.Preamble+wire, fr.IFG)
	to := &s.nodes[pp.to]
	tail := end.AddSat(pp.delay)
	deliver := tail
	// A frame to a reserved group address a cut-through node consumes,
	// and takes whole (see deliver).
	if d := to.timing.CutThrough; d > 0 && !arrivesLinkLocal(frame, flip) {
		deliver = start.AddSat(pp.delay).AddSat(pp.ser(fr.Preamble + min(d, wire)))
	}
	deliver = deliver.AddSat(to.timing.Latency)
	st.TxFrames++
	st.TxBytes += uint64(len(frame))
	pp.qbytes += len(frame)
	if pp.qbytes > st.MaxQueue {
		st.MaxQueue = pp.qbytes
	}
	pp.fl = append(pp.fl, flight{frame: frame, start: start, end: end, deliver: deliver, tail: tail, src: src, srcTail: srcTail, qlen: int32(len(frame)), poisoned: poisoned, lost: lost, flip: flip})
	pp.capture(now)
	if !pp.pending {
		pp.pending = true
		s.schedule(deliver, evPipe, pp.idx, pp.gen)
	}
}

// deliver hands the oldest frame in flight to the far end.
func (s *Sim) deliver(ev event) {
	pp := &s.pipes[ev.idx()]
	if ev.gen() != pp.gen || pp.dh >= len(pp.fl) {
		return // the link failed after this event was scheduled
	}
	pp.capture(s.now)
	f := pp.fl[pp.dh]
	pp.fl[pp.dh].frame = nil
	if f.flip > 0 {
		f.frame[(f.flip-1)/8] ^= 1 << ((f.flip - 1) % 8)
	}
	pp.dh++
	if pp.dh < len(pp.fl) {
		s.schedule(pp.fl[pp.dh].deliver, evPipe, pp.idx, pp.gen)
	} else {
		pp.pending = false
	}
	pp.drain(s.now) // the entries just delivered are hot in cache
	to := &s.nodes[pp.to]
	pt := &to.ports[pp.toPort-1]
	switch {
	case f.lost:
		s.nodes[pp.from].ports[pp.fromPort-1].stats.Drops[DropFaultLoss]++
	case !to.up:
		pt.stats.Drops[DropNodeDown]++
	case f.poisoned && (to.timing.CutThrough == 0 || linkLocal(f.frame)):
		// A cut-through node forwards a frame before its FCS arrives, but
		// one addressed to the link itself (a BPDU) it never forwards:
		// it takes it whole and checks it, as a store-and-forward node.
		pt.stats.Drops[DropBadFCS]++
	case to.elem == nil:
		// Nothing runs here: the frame falls on the floor, counted so
		// that the loss is visible.
		pt.stats.Drops[DropNoElement]++
	default:
		pt.stats.RxFrames++
		pt.stats.RxBytes += uint64(len(f.frame))
		switch s.opts.Trace {
		case TraceFull:
			s.hash.frame(s.now, pp.to, pp.toPort, f.frame)
		case TraceHeaders:
			s.hash.frame(s.now, pp.to, pp.toPort, f.frame[:min(len(f.frame), TraceHeaderBytes)])
			s.hash.mix(uint64(len(f.frame)))
		}
		if pt.capture != nil {
			// The port's own transmissions started by now come first,
			// so the capture stays in time order.
			s.pipes[pp.idx^1].capture(s.now)
			s.captureErr(pt.capture.WritePacket(s.now, f.frame))
		}
		s.rx = rxContext{active: true, ct: to.timing.CutThrough > 0 && !linkLocal(f.frame), tail: f.tail.AddSat(to.timing.Latency), poisoned: f.poisoned,
			src: pp.idx + 1, srcTail: f.tail}
		if cap(f.frame) == poolCap {
			s.rx.buf = f.frame
		}
		to.elem.Receive(pp.toPort, f.frame)
		handed := cap(f.frame) == poolCap && s.rx.buf == nil
		s.rx = rxContext{}
		if handed {
			// The element forwarded the buffer in place: it is queued,
			// and its own delivery (or drop) recycles it.
			return
		}
	}
	s.recycle(f.frame)
}

// truncate poisons the frames node n forwarded, cut through, from frames
// that reached it on pipe src and whose tail will never arrive: those
// whose last byte was due after now (the link failed now) or, with exact,
// the one whose last byte was due at tail. Such a frame left with a tail
// the node never had, so it ends in a bad FCS as a corrupted one does:
// the next store-and-forward node drops it (bad_fcs), a cut-through one
// forwards it poisoned. A frame already delivered to a cut-through next
// hop has been forwarded in turn: its copies are truncated too.
//
// Every frame forwarded from a frame whose tail is after now ends after
// now (its start waits for that tail), so none has been drained and
// compacted away: they are all still in the output pipes.
func (s *Sim) truncate(n, src int32, now, tail element.Time, exact bool) {
	for _, pt := range s.nodes[n].ports {
		if pt.out < 0 {
			continue
		}
		q := &s.pipes[pt.out]
		for j := range q.fl {
			f := &q.fl[j]
			if f.src != src+1 || f.poisoned || exact && f.srcTail != tail || !exact && f.srcTail <= now {
				continue
			}
			f.poisoned = true
			if j < q.dh {
				s.truncate(q.to, q.idx, now, f.tail, true)
			}
		}
	}
}

// arrivesLinkLocal reports whether frame, with bit flip-1 flipped on the
// way when flip > 0, arrives addressed to a reserved group address.
func arrivesLinkLocal(frame []byte, flip int32) bool {
	if flip > 0 && (flip-1)/8 < 6 && len(frame) >= 6 {
		var a [6]byte
		copy(a[:], frame)
		a[(flip-1)/8] ^= 1 << ((flip - 1) % 8)
		return linkLocal(a[:])
	}
	return linkLocal(frame)
}

// linkLocal reports whether frame goes to one of IEEE 802.1D's reserved
// group addresses 01-80-C2-00-00-00 to -0F (BPDUs, LLDP, pause), which a
// bridge consumes and never forwards.
func linkLocal(frame []byte) bool {
	return len(frame) >= 6 && frame[0] == 0x01 && frame[1] == 0x80 && frame[2] == 0xc2 &&
		frame[3] == 0 && frame[4] == 0 && frame[5]&0xf0 == 0
}
