package host

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/edgefabric/edgefabric/element"
)

// TCPConfig tunes the TCP model. Zero values take the defaults.
type TCPConfig struct {
	// InitialCwnd is the initial congestion window in segments
	// (RFC 6928). Default 10.
	InitialCwnd int
	// InitialRTO is the retransmission timeout before the first RTT
	// sample (RFC 6298 §2.1). Default 1 s.
	InitialRTO element.Time
	// MinRTO bounds the computed RTO from below. RFC 6298 says 1 s;
	// the default is Linux's 200 ms, what data-center hosts run.
	MinRTO element.Time
	// MaxRTO bounds the backed-off RTO. Default 60 s (RFC 6298 §2.5).
	MaxRTO element.Time
	// RecvWindow is the receive window advertised, in bytes (window
	// scaling, RFC 7323, carries it). The app reads instantly, so the
	// window stays open. Default 1 MiB: ~80x the 1 Gb/s x 100 us product.
	RecvWindow int
	// DelayedACK acknowledges every second full segment, or after
	// DelayedACKTimeout (RFC 1122 §4.2.3.2, RFC 5681 §4.2). Off by
	// default: every segment is acknowledged at once.
	DelayedACK bool
	// DelayedACKTimeout is the delayed-ACK timer. Default 40 ms (Linux's
	// minimum).
	DelayedACKTimeout element.Time
	// MaxRetries is how many consecutive timeouts a connection survives
	// before it gives up. Default 15 (Linux tcp_retries2).
	MaxRetries int
	// SynRetries is how many times a SYN is retransmitted. Default 6.
	SynRetries int
	// TimeWait is how long a closed connection lingers in TIME-WAIT to
	// answer a retransmitted FIN. Default 1 s (shorter than 2 MSL so
	// that large simulations do not hold every finished flow).
	TimeWait element.Time
	// FinTimeout is how long a connection whose FIN is acknowledged waits
	// in FIN-WAIT-2 for the peer's FIN before it goes (Linux's
	// tcp_fin_timeout for a closed socket; the host's apps close theirs).
	// Default 60 s.
	FinTimeout element.Time
	// MaxConns bounds the connection table for passive opens: a SYN that
	// would take it past MaxConns is dropped and counted as
	// drop_tcp_syn_table_full, as a full SYN backlog drops on Linux.
	// Without a bound, SYNs from ever new source ports would grow the
	// table without end. Default 2^21: every flow a scenario may hold,
	// twice over.
	MaxConns int
}

// WithDefaults returns c with every zero field at its default, as a host
// uses it.
func (c TCPConfig) WithDefaults() TCPConfig {
	c.defaults()
	return c
}

func (c *TCPConfig) defaults() {
	if c.MaxConns <= 0 {
		c.MaxConns = 1 << 21
	}
	if c.InitialCwnd <= 0 {
		c.InitialCwnd = 10
	}
	if c.InitialRTO <= 0 {
		c.InitialRTO = element.Second
	}
	if c.MinRTO <= 0 {
		c.MinRTO = 200 * element.Millisecond
	}
	if c.MaxRTO <= 0 {
		c.MaxRTO = 60 * element.Second
	}
	if c.MaxRTO < c.MinRTO {
		c.MaxRTO = c.MinRTO
	}
	if c.RecvWindow <= 0 {
		c.RecvWindow = 1 << 20
	}
	c.RecvWindow = min(c.RecvWindow, 1<<30)
	if c.DelayedACKTimeout <= 0 {
		c.DelayedACKTimeout = 40 * element.Millisecond
	}
	if c.MaxRetries <= 0 {
		c.MaxRetries = 15
	}
	if c.SynRetries <= 0 {
		c.SynRetries = 6
	}
	if c.TimeWait <= 0 {
		c.TimeWait = element.Second
	}
	if c.FinTimeout <= 0 {
		c.FinTimeout = 60 * element.Second
	}
}

// TCPState is a connection's RFC 793 state.
type TCPState uint8

const (
	_ TCPState = iota
	StateSynSent
	StateSynRcvd
	StateEstablished
	StateFinWait1
	StateFinWait2
	StateCloseWait
	StateClosing
	StateLastAck
	StateTimeWait
	StateClosed
)

var stateNames = [...]string{"invalid", "SYN-SENT", "SYN-RECEIVED", "ESTABLISHED", "FIN-WAIT-1", "FIN-WAIT-2",
	"CLOSE-WAIT", "CLOSING", "LAST-ACK", "TIME-WAIT", "CLOSED"}

func (s TCPState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("TCPState(%d)", int(s))
}

// rttGranularity is G of RFC 6298 §2: the clock is exact, but a zero
// variance must not make the RTO equal the SRTT.
const rttGranularity = element.Microsecond

// TCPConn is one TCP connection: a segment-level model on real frames.
//
// Sequence numbers are handled as 64-bit stream offsets: the send side's
// offset o is sequence number iss+1+o, the SYN sits at offset -1 and the
// FIN, once the app closes, at offset sndEnd. This makes wraparound a
// conversion at the edges instead of a hazard in every comparison.
//
// The sender holds no payload unless the app wrote real bytes (Write
// queues zeros, WriteBytes real data): a bulk transfer of any size costs
// a few hundred bytes of state.
type TCPConn struct {
	done
	h      *Host
	key    connKey
	state  TCPState
	active bool // we sent the SYN
	noWS   bool // the peer's SYN had no window scale option
	err    error

	iss, irs     uint32
	mss          int64
	sndWS, rcvWS uint8 // window shifts: peer's (applied to its window field), ours
	sndWnd       int64
	sndWL1       int64 // receive offset of the segment that last set sndWnd (RFC 9293 SND.WL1)
	sndWL2       int64 // and its acknowledgment, as a send offset (SND.WL2)
	maxSndWnd    int64 // the largest window the peer offered (RFC 5961 MAX.SND.WND)

	sndUna, sndNxt, sndMax int64
	sndEnd                 int64 // bytes queued by the app
	finQueued              bool
	chunks                 []chunk

	cwnd, ssthresh int64
	caAcc          int64 // bytes acked toward the next CA increase (RFC 3465)
	dupAcks        int
	recover        int64 // RFC 6582 "recover", as the offset of the highest byte sent
	inRecovery     bool
	partialSeen    bool
	probed         bool         // a window probe's byte is out, not acknowledged
	probeRTO       element.Time // RTO before the first window probe; 0: not probing
	probeBackoff   int          // and its backoff

	srtt, rttvar, rto element.Time
	rttOff            int64
	rttAt             element.Time
	rttTiming         bool
	backoff           int
	synAt             element.Time
	synResent         bool // our SYN went out again: no RTT sample from its ACK (Karn)

	rtoAt       element.Time // retransmission deadline; 0: disarmed
	timerAt     element.Time // when the pending engine timer fires; 0: none
	timerCancel func()
	timerFn     func()

	rcvNxt   int64
	finOff   int64 // offset of the peer's FIN; -1 until seen
	finRcvd  bool
	ooo      []oooSeg
	oooBytes int
	unacked  int // in-order segments not yet acknowledged (delayed ACK)
	ackDue   bool
	ackSent  int64        // the RCV.NXT the last segment with an ACK carried; -1: none yet
	delack   bool         // delayed-ACK engine timer pending
	delackAt element.Time // when the delayed ACK is due; 0: none

	txWaiting bool // parked until the NIC queue drains
	txGrace   bool // just woken: may send one segment past a full queue

	timeWaitAt element.Time // when TIME-WAIT ends

	rxmt  *[16]uint32 // sequence numbers of recent retransmissions
	rxmtI int

	// Statistics.
	start, established, completed element.Time
	retransmits, fastRetransmits  uint64
	timeouts, consecutiveRTO      uint64
	bytesAcked, bytesReceived     int64
	maxCwnd                       int64
	segsOut, segsIn               uint64

	// Callbacks, set by apps. They run inside the engine's context.
	onEstablished func(*TCPConn)
	onData        func(*TCPConn, []byte)
}

type chunk struct {
	off  int64
	data []byte
}

type oooSeg struct {
	off  int64
	data []byte
}

func (c *TCPConn) seqOf(o int64) uint32  { return c.iss + 1 + uint32(o) }
func (c *TCPConn) rseqOf(o int64) uint32 { return c.irs + 1 + uint32(o) }

// rcvOff is the receive offset of the peer's sequence number seq, taken
// within 2^31 of RCV.NXT.
func (c *TCPConn) rcvOff(seq uint32) int64 { return c.rcvNxt + int64(int32(seq-c.rseqOf(c.rcvNxt))) }

// Flow returns the connection's key.
func (c *TCPConn) Flow() FlowKey { return c.key.flow() }

// State returns the connection's state.
func (c *TCPConn) State() TCPState { return c.state }

// Err returns why the connection failed, or nil.
func (c *TCPConn) Err() error { return c.err }

// Cwnd returns the congestion window in bytes.
func (c *TCPConn) Cwnd() int64 { return c.cwnd }

// Ssthresh returns the slow-start threshold in bytes.
func (c *TCPConn) Ssthresh() int64 { return c.ssthresh }

// MSS returns the negotiated maximum segment size.
func (c *TCPConn) MSS() int64 { return c.mss }

// Retransmits returns the number of segments sent again, by any cause.
func (c *TCPConn) Retransmits() uint64 { return c.retransmits }

// FastRetransmits returns the number of fast retransmits (three duplicate
// ACKs, RFC 5681 §3.2); NewReno's partial-ACK retransmissions count in
// Retransmits only.
func (c *TCPConn) FastRetransmits() uint64 { return c.fastRetransmits }

// Timeouts returns the number of retransmission timeouts.
func (c *TCPConn) Timeouts() uint64 { return c.timeouts }

// SRTT returns the smoothed RTT (0 before the first sample).
func (c *TCPConn) SRTT() element.Time { return c.srtt }

// RTO returns the current retransmission timeout, backoff included.
func (c *TCPConn) RTO() element.Time { return c.rto }

// BytesAcked returns the app bytes the peer has acknowledged.
func (c *TCPConn) BytesAcked() int64 { return c.bytesAcked }

// BytesReceived returns the app bytes delivered in order.
func (c *TCPConn) BytesReceived() int64 { return c.bytesReceived }

// InRecovery reports whether NewReno fast recovery is running.
func (c *TCPConn) InRecovery() bool { return c.inRecovery }

// TCPInfo is a snapshot of a connection's congestion state, what SPAIN's
// re-pinning (Algorithm 4) reads, and what reports print.
type TCPInfo struct {
	Flow            FlowKey      `json:"-"`
	State           string       `json:"state"`
	MSS             int64        `json:"mss"`
	Cwnd            int64        `json:"cwnd"`
	Ssthresh        int64        `json:"ssthresh"`
	InRecovery      bool         `json:"in_recovery"`
	SRTT            element.Time `json:"srtt_ps"`
	RTO             element.Time `json:"rto_ps"`
	Retransmits     uint64       `json:"retransmits"`
	FastRetransmits uint64       `json:"fast_retransmits"`
	Timeouts        uint64       `json:"timeouts"`
	BytesAcked      int64        `json:"bytes_acked"`
	BytesReceived   int64        `json:"bytes_received"`
}

// Info returns a snapshot of the connection's state.
func (c *TCPConn) Info() TCPInfo {
	return TCPInfo{Flow: c.Flow(), State: c.state.String(), MSS: c.mss, Cwnd: c.cwnd, Ssthresh: c.ssthresh,
		InRecovery: c.inRecovery, SRTT: c.srtt, RTO: c.rto, Retransmits: c.retransmits,
		FastRetransmits: c.fastRetransmits, Timeouts: c.timeouts, BytesAcked: c.bytesAcked, BytesReceived: c.bytesReceived}
}

// Conn returns the connection with key k, or nil.
func (h *Host) Conn(k FlowKey) *TCPConn {
	if !k.Remote.Is4() {
		return nil
	}
	return h.conns[connKey{k.Remote.As4(), k.LocalPort, k.RemotePort}]
}

// NumConns returns the number of connections in the table (TIME-WAIT
// included).
func (h *Host) NumConns() int { return len(h.conns) }

// SegmentInfo reads an outgoing frame of this host (Ethernet, IPv4, TCP)
// and returns its connection's state and whether this segment is a
// retransmission: what a host agent between the stack and the NIC (SPAIN's
// driver, Algorithm 4: "cwnd(flow) <= W && is_rxmt(flow)") needs, the way a
// Linux driver would read the socket. ok is false for anything else.
func (h *Host) SegmentInfo(frame []byte) (info TCPInfo, rxmt bool, ok bool) {
	if len(frame) < ethLen+ipLen+tcpLen || binary.BigEndian.Uint16(frame[12:14]) != 0x0800 {
		return info, false, false
	}
	ip, reason := parseIPv4(frame[ethLen:])
	if reason != "" || ip.proto != protoTCP || len(ip.l4) < tcpLen {
		return info, false, false
	}
	t := ip.l4
	k := connKey{ip.dst, binary.BigEndian.Uint16(t[0:2]), binary.BigEndian.Uint16(t[2:4])}
	c := h.conns[k]
	if c == nil {
		return info, false, false
	}
	seq := binary.BigEndian.Uint32(t[4:8])
	if c.rxmt != nil {
		// Only the slots written: the others are not sequence number 0.
		for _, s := range c.rxmt[:min(c.rxmtI, len(c.rxmt))] {
			if s == seq {
				rxmt = true
				break
			}
		}
	}
	return c.Info(), rxmt, true
}

// CongestionOf is SegmentInfo in builtin types only, for host agents in
// package scheme, which do not import host: an agent declares
//
//	type stack interface {
//		CongestionOf(frame []byte) (cwnd, mss int64, rxmt, ok bool)
//	}
//
// and asserts it on the stack beside it. cwnd and mss are in bytes.
func (h *Host) CongestionOf(frame []byte) (cwnd, mss int64, rxmt, ok bool) {
	info, rxmt, ok := h.SegmentInfo(frame)
	return info.Cwnd, info.MSS, rxmt, ok
}

// Listen accepts connections to port, handing each to accept (which may
// set callbacks with OnData). accept nil makes the port a sink.
func (h *Host) Listen(port uint16, accept func(*TCPConn)) {
	if accept == nil {
		accept = func(*TCPConn) {}
	}
	h.listeners[port] = accept
}

// Connect opens a connection to dst:port. The SYN leaves now; the result
// reports failure through Err once Done.
func (h *Host) Connect(dst netip.Addr, port uint16) (*TCPConn, error) {
	if err := h.appCheck(dst); err != nil {
		return nil, fmt.Errorf("host: %s: connect %v:%d: %w", h.cfg.Name, dst, port, err)
	}
	if port == 0 {
		return nil, fmt.Errorf("host: %s: connect %v: port 0: %w", h.cfg.Name, dst, ErrBadArgument)
	}
	k := connKey{raddr: dst.As4(), rport: port}
	for range ephemeralPorts {
		k.lport = h.ephemeralPort()
		if h.conns[k] == nil {
			break
		}
	}
	if h.conns[k] != nil {
		return nil, fmt.Errorf("host: %s: connect %v:%d: %w", h.cfg.Name, dst, port, ErrPortsExhausted)
	}
	c := h.newConn(k)
	c.active = true
	c.state = StateSynSent
	h.conns[k] = c
	c.synAt = h.env.Now()
	c.sendSYN()
	return c, nil
}

func (h *Host) newConn(k connKey) *TCPConn {
	cfg := &h.cfg.TCP
	c := &TCPConn{h: h, key: k, iss: h.env.Rand().Uint32(), finOff: -1, recover: -1, ackSent: -1,
		sndUna: -1, rto: cfg.InitialRTO, mss: int64(h.cfg.MTU - ipLen - tcpLen), ssthresh: 1 << 40,
		start: h.env.Now()}
	c.cwnd = int64(cfg.InitialCwnd) * c.mss
	c.maxCwnd = c.cwnd
	for c.rcvWS < 14 && cfg.RecvWindow>>c.rcvWS > 65535 {
		c.rcvWS++
	}
	c.timerFn = c.onTimer
	return c
}

// Write queues n bytes of zeros for sending.
func (c *TCPConn) Write(n int64) {
	if n <= 0 {
		return
	}
	if c.finQueued || c.state == StateClosed {
		c.h.ctr.Inc("tcp_write_after_close")
		return
	}
	c.sndEnd += n
	c.push()
}

// WriteBytes queues a copy of b for sending.
func (c *TCPConn) WriteBytes(b []byte) {
	if len(b) == 0 {
		return
	}
	if c.finQueued || c.state == StateClosed {
		c.h.ctr.Inc("tcp_write_after_close")
		return
	}
	c.chunks = append(c.chunks, chunk{off: c.sndEnd, data: append([]byte(nil), b...)})
	c.sndEnd += int64(len(b))
	c.push()
}

// Close sends a FIN after the queued data.
func (c *TCPConn) Close() {
	if c.finQueued || c.state == StateClosed {
		return
	}
	c.finQueued = true
	c.push()
}

// OnData sets the function that receives in-order payload; b is valid
// only during the call.
func (c *TCPConn) OnData(f func(c *TCPConn, b []byte)) { c.onData = f }

// OnEstablished sets the function called when the handshake completes.
func (c *TCPConn) OnEstablished(f func(c *TCPConn)) { c.onEstablished = f }

// --- output ---

// window is the advertised receive window. It stays at RecvWindow: the
// app consumes in-order data at once, and out-of-order segments are held in
// a separate allowance of the same size, as Linux's window does not shrink
// for them. A window that moved with every held segment would also stop
// duplicate ACKs from counting as duplicates (RFC 5681 §2, condition (e)).
func (c *TCPConn) window() uint16 {
	w := c.h.cfg.TCP.RecvWindow >> c.rcvWS
	return uint16(min(w, 65535))
}

// rcvWnd is RCV.WND in bytes: the window advertised, scaled. Without
// window scaling it is at most 65,535 bytes, whatever RecvWindow says,
// and segments are judged against it (RFC 9293 §3.10.7.4).
func (c *TCPConn) rcvWnd() int64 {
	return int64(c.window()) << c.rcvWS
}

// sendSeg emits one segment. off is a send offset (-1 for the SYN), n the
// payload length.
func (c *TCPConn) sendSeg(off int64, n int, flags uint8) {
	h := c.h
	optLen := 0
	if flags&flagSYN != 0 {
		optLen = 8
	}
	f := h.newIPFrame(c.key.raddr, protoTCP, tcpLen+optLen+n)
	t := f[ethLen+ipLen:]
	binary.BigEndian.PutUint16(t[0:2], c.key.lport)
	binary.BigEndian.PutUint16(t[2:4], c.key.rport)
	binary.BigEndian.PutUint32(t[4:8], c.seqOf(off))
	if flags&flagACK != 0 {
		binary.BigEndian.PutUint32(t[8:12], c.rseqOf(c.rcvNxt))
	}
	t[12] = byte((tcpLen + optLen) / 4 << 4)
	t[13] = flags
	if flags&flagSYN != 0 {
		w := min(h.cfg.TCP.RecvWindow, 65535) // the SYN's window is never scaled
		binary.BigEndian.PutUint16(t[14:16], uint16(w))
		o := t[tcpLen:]
		o[0], o[1] = 2, 4
		binary.BigEndian.PutUint16(o[2:4], uint16(h.cfg.MTU-ipLen-tcpLen))
		o[4], o[5], o[6], o[7] = 1, 3, 3, c.rcvWS
		if c.noWS {
			o[4], o[5], o[6], o[7] = 1, 1, 1, 1 // no-ops keep the layout
		}
	} else {
		binary.BigEndian.PutUint16(t[14:16], c.window())
	}
	if n > 0 {
		c.fillPayload(t[tcpLen+optLen:], off)
	}
	var src [4]byte
	if h.ip.Is4() {
		src = h.ip.As4()
	}
	binary.BigEndian.PutUint16(t[16:18], l4Checksum(src, c.key.raddr, protoTCP, t))
	if flags&flagACK != 0 {
		c.ackDue = false
		c.unacked = 0
		c.delackAt = 0
		c.ackSent = c.rcvNxt
	}
	c.segsOut++
	h.hot.tcpTx++
	h.output(netip.AddrFrom4(c.key.raddr), f)
}

func (c *TCPConn) fillPayload(p []byte, off int64) {
	end := off + int64(len(p))
	for _, ch := range c.chunks {
		ce := ch.off + int64(len(ch.data))
		if ce <= off || ch.off >= end {
			continue
		}
		lo, hi := max(ch.off, off), min(ce, end)
		copy(p[lo-off:hi-off], ch.data[lo-ch.off:hi-ch.off])
	}
}

func (c *TCPConn) sendSYN() {
	if c.state == StateSynSent {
		c.sendSeg(-1, 0, flagSYN)
	} else {
		c.sendSeg(-1, 0, flagSYN|flagACK)
	}
	c.sndNxt, c.sndMax = 0, max(c.sndMax, 0)
	c.setRTO(c.h.env.Now() + c.rto)
}

func (c *TCPConn) sendAck() { c.sendSeg(c.sndNxt, 0, flagACK) }

// canSend reports whether the state allows data and FIN out.
func (c *TCPConn) canSend() bool {
	switch c.state {
	case StateEstablished, StateCloseWait, StateFinWait1, StateClosing, StateLastAck:
		return true
	}
	return false
}

// push sends what the windows allow.
func (c *TCPConn) push() {
	if !c.canSend() {
		return
	}
	for {
		end := c.sndEnd
		if c.finQueued {
			end++
		}
		if c.sndNxt >= end {
			return
		}
		flight := c.sndNxt - c.sndUna
		avail := min(c.cwnd, c.sndWnd) - flight
		n := min(c.mss, c.sndEnd-c.sndNxt)
		if n > 0 && avail < n {
			// Sender-side silly window avoidance (RFC 1122
			// §4.2.3.4): wait for room for a full segment while data
			// is in flight; with nothing in flight send what fits.
			if flight > 0 || avail <= 0 {
				if flight == 0 && c.sndWnd == 0 && c.rtoAt == 0 {
					// Persist, armed once: a pending deadline is not
					// moved by every write or segment received, as
					// Linux's tcp_check_probe_timer does not.
					c.setRTO(c.h.env.Now() + c.rto)
				}
				return
			}
			n = avail
		}
		if c.h.txFull(c) {
			return
		}
		fin := c.finQueued && c.sndNxt+n == c.sndEnd
		c.transmit(c.sndNxt, n, fin)
		adv := n
		if fin {
			adv++
		}
		if !c.rttTiming && c.sndNxt >= c.sndMax {
			c.rttTiming, c.rttOff, c.rttAt = true, c.sndNxt, c.h.env.Now()
		}
		c.sndNxt += adv
		c.sndMax = max(c.sndMax, c.sndNxt)
		if c.rtoAt == 0 || flight == 0 {
			// RFC 6298 §5.1. With nothing in flight a pending
			// deadline is the persist timer's, from before the
			// window opened: the data's own timer starts now.
			c.setRTO(c.h.env.Now() + c.rto)
		}
	}
}

// transmit sends the segment at off (data n bytes, and the FIN if fin),
// counting it as a retransmission when it was sent before.
func (c *TCPConn) transmit(off, n int64, fin bool) {
	flags := uint8(flagACK)
	if fin {
		flags |= flagFIN
		switch c.state {
		case StateEstablished:
			c.state = StateFinWait1
		case StateCloseWait:
			c.state = StateLastAck
		}
	}
	if n > 0 && off+n == c.sndEnd {
		flags |= flagPSH
	}
	if off < c.sndMax {
		c.retransmits++
		c.h.ctr.Inc("tcp_retransmit")
		if c.rxmt == nil {
			c.rxmt = new([16]uint32)
		}
		c.rxmt[c.rxmtI%len(c.rxmt)] = c.seqOf(off)
		c.rxmtI++
	}
	c.sendSeg(off, int(n), flags)
}

// retransmitHead resends the first unacknowledged segment.
func (c *TCPConn) retransmitHead() {
	n := min(c.mss, c.sndEnd-c.sndUna)
	n = max(n, 0)
	fin := c.finQueued && c.sndUna+n == c.sndEnd
	if n == 0 && !fin {
		return
	}
	c.transmit(c.sndUna, n, fin)
}

// --- timers ---

// setRTO arms the retransmission deadline. One engine timer per connection
// is kept, lazily: moving the deadline later (every new ACK does) costs
// nothing, the timer re-arms itself when it fires early.
func (c *TCPConn) setRTO(at element.Time) {
	c.rtoAt = at
	if at == 0 || (c.timerAt != 0 && c.timerAt <= at) {
		return
	}
	if c.timerCancel != nil {
		c.timerCancel()
	}
	c.timerAt = at
	c.timerCancel = c.h.env.After(at-c.h.env.Now(), c.timerFn)
}

func (c *TCPConn) onTimer() {
	c.timerAt, c.timerCancel = 0, nil
	if c.rtoAt == 0 || c.state == StateClosed {
		return
	}
	if now := c.h.env.Now(); now < c.rtoAt {
		c.setRTO(c.rtoAt)
		return
	}
	c.rtoAt = 0
	c.onRTO()
}

func (c *TCPConn) backOff() {
	c.backoff++
	c.rto = min(2*c.rto, c.h.cfg.TCP.MaxRTO)
	c.rttTiming = false // Karn's algorithm
}

func (c *TCPConn) onRTO() {
	cfg := &c.h.cfg.TCP
	switch c.state {
	case StateSynSent, StateSynRcvd:
		if c.backoff >= cfg.SynRetries {
			c.abort(ErrTimeout, false)
			return
		}
		c.timeouts++
		c.h.ctr.Inc("tcp_syn_timeout")
		c.backOff()
		c.retransmits++
		c.sendSYN()
		return
	case StateFinWait2:
		// No FIN from the peer within FinTimeout: the connection goes
		// without a word, as Linux's does.
		c.h.ctr.Inc("tcp_fin_wait2_timeout")
		c.close()
		return
	case StateTimeWait, StateClosed:
		return
	}
	if c.sndWnd == 0 && c.sndUna < c.sndEnd {
		// The persist timer: the peer's window is closed (nothing in
		// flight but, after the first probe, the probe's byte; or a
		// window that shrank under data in flight, RFC 9293 §3.8.6,
		// where nothing may be resent either). Probe with the byte at
		// SND.UNA, backing off to MaxRTO, for as long as the peer
		// answers (RFC 1122 §4.2.2.17: a zero window alone MUST NOT
		// close the connection; processAck resets the count on every
		// answer). A probe is neither a loss nor a retransmission for
		// congestion control or SegmentInfo, and its backoff is undone
		// when the window opens (processAck), as Linux backs off its
		// probe timer without touching the RTO.
		if int(c.consecutiveRTO) >= cfg.MaxRetries {
			c.abort(ErrTimeout, true)
			return
		}
		c.consecutiveRTO++
		c.h.ctr.Inc("tcp_window_probe")
		if c.probeRTO == 0 {
			c.probeRTO, c.probeBackoff = c.rto, c.backoff
		}
		if c.sndMax > c.sndUna {
			c.sendSeg(c.sndUna, 1, flagACK)
		} else {
			c.transmit(c.sndUna, 1, false)
		}
		c.sndNxt = c.sndUna + 1
		c.sndMax = max(c.sndMax, c.sndNxt)
		c.probed = true
		c.backOff()
		c.setRTO(c.h.env.Now() + c.rto)
		return
	}
	if c.sndUna >= c.sndMax {
		return
	}
	if int(c.consecutiveRTO) >= cfg.MaxRetries {
		c.abort(ErrTimeout, true)
		return
	}
	c.timeouts++
	c.consecutiveRTO++
	c.h.ctr.Inc("tcp_timeout")
	if c.backoff == 0 {
		// RFC 5681 eq. 4, once per loss: a segment that times out
		// again keeps the threshold (§3.1).
		c.ssthresh = max((c.sndMax-c.sndUna)/2, 2*c.mss)
	}
	c.cwnd = c.mss // loss window, one segment
	c.caAcc = 0
	c.recover = c.sndMax - 1
	c.inRecovery = false
	c.dupAcks = 0
	c.backOff()
	c.sndNxt = c.sndUna // go back N: resend from the hole
	c.setRTO(c.h.env.Now() + c.rto)
	c.push()
}

// --- input ---

func (h *Host) receiveTCP(ip *ipv4) {
	s, reason := parseTCP(ip)
	if reason != "" {
		h.ctr.Inc(reason)
		return
	}
	if !h.ip.IsValid() || netip.AddrFrom4(ip.dst) != h.ip {
		h.ctr.Inc("drop_tcp_not_unicast")
		return
	}
	if s.srcPort == 0 || s.dstPort == 0 {
		h.ctr.Inc("drop_tcp_port_zero")
		return
	}
	h.hot.tcpRx++
	k := connKey{ip.src, s.dstPort, s.srcPort}
	if c := h.conns[k]; c != nil {
		c.segsIn++
		c.segment(&s)
		return
	}
	if s.flags&flagRST != 0 {
		h.ctr.Inc("tcp_rst_unmatched")
		return
	}
	if s.flags&(flagSYN|flagACK|flagFIN) == flagSYN {
		if accept := h.acceptor(s.dstPort); accept != nil {
			if len(h.conns) >= h.cfg.TCP.MaxConns {
				// No reset: the peer retries, as after a lost SYN.
				h.ctr.Inc("drop_tcp_syn_table_full")
				return
			}
			h.accept(k, &s, accept)
			return
		}
	}
	h.ctr.Inc("tcp_no_conn")
	h.sendReset(k, &s)
}

// acceptor returns the accept function for a port: a listener, the RR
// server, or the sink.
func (h *Host) acceptor(port uint16) func(*TCPConn) {
	if a := h.listeners[port]; a != nil {
		return a
	}
	if port == RRPort {
		return acceptRR
	}
	if !h.cfg.NoSink {
		return func(*TCPConn) {}
	}
	return nil
}

// sendReset answers a segment that has no connection (RFC 793 p. 36).
func (h *Host) sendReset(k connKey, s *tcpSeg) {
	f := h.newIPFrame(k.raddr, protoTCP, tcpLen)
	t := f[ethLen+ipLen:]
	binary.BigEndian.PutUint16(t[0:2], k.lport)
	binary.BigEndian.PutUint16(t[2:4], k.rport)
	if s.flags&flagACK != 0 {
		binary.BigEndian.PutUint32(t[4:8], s.ack)
		t[13] = flagRST
	} else {
		l := uint32(len(s.payload))
		if s.flags&flagSYN != 0 {
			l++
		}
		if s.flags&flagFIN != 0 {
			l++
		}
		binary.BigEndian.PutUint32(t[8:12], s.seq+l)
		t[13] = flagRST | flagACK
	}
	t[12] = tcpLen / 4 << 4
	src := h.ip.As4()
	binary.BigEndian.PutUint16(t[16:18], l4Checksum(src, k.raddr, protoTCP, t))
	h.ctr.Inc("tcp_rst_tx")
	h.output(netip.AddrFrom4(k.raddr), f)
}

func (h *Host) accept(k connKey, s *tcpSeg, accept func(*TCPConn)) {
	c := h.newConn(k)
	c.state = StateSynRcvd
	c.irs = s.seq
	c.synOptions(s)
	h.conns[k] = c
	h.ctr.Inc("tcp_accept")
	accept(c)
	c.synAt = h.env.Now()
	c.sendSYN()
}

// synOptions applies the peer's SYN options: MSS (536 when absent, RFC
// 9293 §3.7.1) and window scaling, used only when both sides offer it.
func (c *TCPConn) synOptions(s *tcpSeg) {
	peerMSS := int64(536)
	if s.mss != 0 {
		peerMSS = int64(s.mss)
	}
	c.mss = max(min(c.mss, peerMSS), 64)
	c.cwnd = int64(c.h.cfg.TCP.InitialCwnd) * c.mss
	c.maxCwnd = c.cwnd
	if s.wscale >= 0 {
		c.sndWS = uint8(s.wscale)
	} else {
		c.sndWS, c.rcvWS = 0, 0
		c.noWS = true // and a SYN-ACK must not offer it (RFC 7323 §1.3)
	}
	c.sndWnd = int64(s.wnd) // a SYN's window is not scaled
	c.sndWL1, c.sndWL2 = -1, 0
	c.maxSndWnd = c.sndWnd
}

func (c *TCPConn) segment(s *tcpSeg) {
	h := c.h
	switch c.state {
	case StateSynSent:
		if s.flags&flagACK != 0 && s.ack != c.iss+1 {
			if s.flags&flagRST == 0 {
				h.sendReset(c.key, s)
			}
			return
		}
		if s.flags&flagRST != 0 {
			if s.flags&flagACK != 0 {
				c.abort(ErrRefused, false)
			}
			return
		}
		if s.flags&(flagSYN|flagACK) != flagSYN|flagACK {
			h.ctr.Inc("tcp_unexpected_in_syn_sent")
			return
		}
		c.irs = s.seq
		c.synOptions(s)
		c.synAcked()
		c.ackDue = true
		if c.onEstablished != nil {
			c.onEstablished(c) // data written here carries the handshake's ACK
		}
		c.push()
		if c.ackDue {
			c.sendAck()
		}
		return
	case StateSynRcvd:
		if s.flags&flagRST != 0 {
			if c.acceptReset(s) {
				h.ctr.Inc("tcp_reset_in_syn_rcvd")
				c.close()
			}
			return
		}
		if s.flags&flagSYN != 0 {
			if s.seq == c.irs { // the peer lost our SYN-ACK
				h.ctr.Inc("tcp_syn_retransmitted_by_peer")
				c.synResent = true // Karn: the handshake's ACK is ambiguous now
				c.sendSeg(-1, 0, flagSYN|flagACK)
			}
			return
		}
		if s.flags&flagACK == 0 {
			h.ctr.Inc("tcp_no_ack")
			return
		}
		if s.ack != c.iss+1 {
			h.sendReset(c.key, s)
			return
		}
		if c.beyondWindow(s) {
			return
		}
		c.synAcked()
		c.sndWnd = int64(s.wnd) << c.sndWS
		c.sndWL1, c.sndWL2 = c.rcvOff(s.seq), 0
		c.maxSndWnd = max(c.maxSndWnd, c.sndWnd)
		if c.onEstablished != nil {
			c.onEstablished(c)
		}
	case StateClosed:
		return
	}
	if s.flags&flagRST != 0 {
		if c.acceptReset(s) {
			if c.state == StateTimeWait {
				// The connection completed; the reset only ends the
				// wait (RFC 9293 §3.10.7.4).
				h.ctr.Inc("tcp_reset_in_time_wait")
				c.close()
				return
			}
			c.abort(ErrReset, false)
		}
		return
	}
	if s.flags&flagSYN != 0 {
		h.ctr.Inc("tcp_challenge_ack") // RFC 5961 §4
		c.sendAck()
		return
	}
	if s.flags&flagACK == 0 {
		h.ctr.Inc("tcp_no_ack")
		return
	}
	if c.beyondWindow(s) {
		return
	}
	if !c.processAck(s) {
		return
	}
	if c.state == StateClosed {
		return
	}
	c.processData(s)
	if c.state == StateClosed {
		return
	}
	c.push()
	if c.ackDue {
		c.sendAck()
	}
}

// beyondWindow drops a segment that starts past the receive window,
// RCV.NXT + RCV.WND, before its ACK field is read, and answers it with an
// ACK (RFC 9293 §3.10.7.4: not acceptable; Linux's tcp_sequence lets a
// segment start at the edge, as here, and drops its data there). Its
// window must not be taken: it would become SND.WL1, far ahead, and every
// later update of the real peer would look older (a forged zero window
// stalled a transfer for good).
func (c *TCPConn) beyondWindow(s *tcpSeg) bool {
	if c.rcvOff(s.seq) <= c.rcvNxt+c.rcvWnd() {
		return false
	}
	c.h.ctr.Inc("drop_tcp_out_of_window")
	c.sendAck()
	return true
}

// synAcked moves the connection to ESTABLISHED once its SYN is acked.
func (c *TCPConn) synAcked() {
	now := c.h.env.Now()
	c.state = StateEstablished
	c.established = now
	c.sndUna = 0
	c.rtoAt = 0
	if c.backoff == 0 {
		if !c.synResent {
			c.rttSample(now - c.synAt)
		}
	} else {
		// RFC 6298 §5.7: after a lost SYN the RTO starts over at 3 s
		// unless a sample comes; we take the standard initial value.
		c.rto = max(c.h.cfg.TCP.InitialRTO, c.rto/element.Time(1<<min(c.backoff, 30)))
		c.backoff = 0
	}
	c.h.ctr.Inc("tcp_established")
}

func (c *TCPConn) rttSample(r element.Time) {
	cfg := &c.h.cfg.TCP
	if c.srtt == 0 {
		c.srtt, c.rttvar = r, r/2
	} else {
		d := c.srtt - r
		if d < 0 {
			d = -d
		}
		c.rttvar = (3*c.rttvar + d) / 4
		c.srtt = (7*c.srtt + r) / 8
	}
	c.rto = min(max(c.srtt+max(rttGranularity, 4*c.rttvar), cfg.MinRTO), cfg.MaxRTO)
	c.backoff = 0
}

// processAck handles the acknowledgment field; false means the segment
// is to be dropped.
func (c *TCPConn) processAck(s *tcpSeg) bool {
	h := c.h
	ackOff := c.sndUna + int64(int32(s.ack-c.seqOf(c.sndUna)))
	if ackOff > c.sndMax {
		h.ctr.Inc("tcp_ack_unsent")
		c.sendAck()
		return false
	}
	if ackOff < c.sndUna-c.maxSndWnd {
		// Older than any window the peer offered: not from the peer
		// (RFC 5961 §5.2, blind data injection). Drop, challenge.
		h.ctr.Inc("tcp_ack_too_old")
		h.ctr.Inc("tcp_challenge_ack")
		c.sendAck()
		return false
	}
	if ackOff < c.sndUna {
		return true // an old ACK: nothing to learn, the data may be new
	}
	wnd := int64(s.wnd) << c.sndWS
	// The window is taken from the newest segment only (RFC 9293
	// §3.10.7.4): an older one, reordered, must not undo an update. An
	// ACK that advances SND.UNA is news whatever its sequence number, and
	// its window is taken too, as Linux does (tcp_may_update_window): a
	// forged segment inside the receive window with a sequence number far
	// ahead would otherwise hold SND.WL1 past every real update, and a
	// forged zero window stalled a transfer for good.
	segOff := c.rcvOff(s.seq)
	fresh := ackOff > c.sndUna || segOff > c.sndWL1 || (segOff == c.sndWL1 && ackOff >= c.sndWL2)
	update := func() {
		if fresh {
			c.sndWnd, c.sndWL1, c.sndWL2 = wnd, segOff, ackOff
			c.maxSndWnd = max(c.maxSndWnd, wnd)
			if wnd > 0 && c.probeRTO != 0 {
				// The window opened: the probes' backoff ends,
				// and data is timed by the RTO from before them.
				c.rto, c.backoff, c.probeRTO = c.probeRTO, c.probeBackoff, 0
			}
		}
	}
	if ackOff > c.sndUna {
		c.newAck(ackOff)
		update()
		return true
	}
	// ackOff == sndUna: a duplicate ACK when it carries nothing else and
	// data is outstanding (RFC 5681 §2). A zero window's ACK answers a
	// window probe: no loss signal, but a sign of life that keeps the
	// persist timer from giving up (RFC 1122 §4.2.2.17), and so is one
	// that opens the window refusing the probe's byte: the probes left
	// unanswered before it count no more (Linux clears icsk_probes_out
	// on every ACK), and the data sent next has MaxRetries timeouts.
	if wnd == 0 || c.probed {
		c.consecutiveRTO = 0
	} else if len(s.payload) == 0 && s.flags&(flagSYN|flagFIN) == 0 && wnd == c.sndWnd && c.sndMax > c.sndUna {
		c.dupAck()
	}
	update()
	if c.probed && c.sndWnd > 0 {
		// The window opened without acknowledging the probe's byte:
		// the peer refused it. Resume at SND.UNA, not after it, or
		// the hole draws duplicate ACKs and a spurious fast
		// retransmit.
		c.probed = false
		c.sndNxt = c.sndUna
	}
	return true
}

func (c *TCPConn) newAck(ackOff int64) {
	now := c.h.env.Now()
	acked := ackOff - c.sndUna
	// Grow cwnd only while it limits the sender (RFC 7661 §4.2's
	// concern): an application- or receive-window-limited flow must not
	// inflate it without bound.
	cwndLimited := c.sndMax-c.sndUna+c.mss > c.cwnd
	dataAcked := min(ackOff, c.sndEnd) - max(c.sndUna, 0)
	if c.rttTiming && ackOff > c.rttOff {
		c.rttTiming = false
		c.rttSample(now - c.rttAt)
	}
	c.consecutiveRTO = 0
	c.probed = false
	c.sndUna = ackOff
	c.sndNxt = max(c.sndNxt, c.sndUna)
	c.bytesAcked += dataAcked
	for len(c.chunks) > 0 && c.chunks[0].off+int64(len(c.chunks[0].data)) <= c.sndUna {
		c.chunks[0] = chunk{}
		c.chunks = c.chunks[1:]
	}
	mss := c.mss
	switch {
	case c.inRecovery && ackOff > c.recover:
		// Full acknowledgment (RFC 6582 §3.2 step 3): deflate.
		flight := c.sndMax - c.sndUna
		c.cwnd = min(c.ssthresh, max(flight, mss)+mss)
		c.inRecovery = false
		c.dupAcks = 0
	case c.inRecovery:
		// Partial acknowledgment (step 4): resend the next hole,
		// deflate by the amount acked, add back one segment.
		c.retransmitHead()
		c.cwnd -= acked
		if acked >= mss {
			c.cwnd += mss
		}
		c.cwnd = max(c.cwnd, mss)
		if !c.partialSeen { // "impatient" variant: reset the timer once
			c.partialSeen = true
			c.setRTO(now + c.rto)
		}
	default:
		c.dupAcks = 0
		if !cwndLimited {
			break
		}
		if c.cwnd < c.ssthresh {
			c.cwnd += min(acked, 2*mss) // slow start, RFC 3465 L = 2
		} else {
			c.caAcc += acked
			if c.caAcc >= c.cwnd {
				c.caAcc -= c.cwnd
				c.cwnd += mss
			}
		}
		c.cwnd = min(c.cwnd, 1<<40)
	}
	c.maxCwnd = max(c.maxCwnd, c.cwnd)
	if c.sndUna >= c.sndMax {
		c.rtoAt = 0
	} else if !c.inRecovery || ackOff > c.recover {
		c.setRTO(now + c.rto) // RFC 6298 §5.3
	}
	if c.sndEnd > 0 && c.sndUna >= c.sndEnd && c.completed == 0 {
		c.completed = now
	}
	if c.finQueued && c.sndUna == c.sndEnd+1 {
		switch c.state {
		case StateFinWait1:
			c.state = StateFinWait2
			if c.finRcvd {
				c.enterTimeWait()
			} else {
				// The FIN-WAIT-2 timer rides on the RTO's: its engine
				// timer is still pending (our FIN was out), so a peer's
				// FIN that follows, as it does, costs no event.
				c.setRTO(now + c.h.cfg.TCP.FinTimeout)
			}
			c.fire()
		case StateClosing:
			c.enterTimeWait()
		case StateLastAck:
			c.close()
		}
	}
}

func (c *TCPConn) dupAck() {
	c.dupAcks++
	c.h.ctr.Inc("tcp_dupack_rx")
	mss := c.mss
	switch {
	case c.inRecovery:
		c.cwnd += mss // inflate for each segment that left the network
	case c.dupAcks == 3 && c.sndUna > c.recover:
		// Fast retransmit (RFC 5681 §3.2, RFC 6582 §3.2 step 2).
		flight := c.sndMax - c.sndUna
		c.ssthresh = max(flight/2, 2*mss)
		c.recover = c.sndMax - 1
		c.inRecovery = true
		c.partialSeen = false
		c.rttTiming = false
		c.fastRetransmits++
		c.h.ctr.Inc("tcp_fast_retransmit")
		// The window is cut before the retransmission leaves, so that a
		// host agent reading the segment (SPAIN) sees the reduced cwnd.
		c.cwnd = c.ssthresh + 3*mss
		c.retransmitHead()
	}
}

// acceptReset applies RFC 5961 §3.2 to a reset in any state but SYN-SENT:
// only one exactly at RCV.NXT is obeyed; one elsewhere in the receive
// window draws a challenge ACK, so that a peer that really lost the
// connection answers with an exact reset (a receiver waiting on a hole
// would otherwise stay ESTABLISHED for good); one outside is ignored.
func (c *TCPConn) acceptReset(s *tcpSeg) bool {
	switch d := s.seq - c.rseqOf(c.rcvNxt); {
	case d == 0:
		return true
	case int64(d) < c.rcvWnd():
		c.h.ctr.Inc("tcp_rst_challenged")
		c.h.ctr.Inc("tcp_challenge_ack")
		c.sendAck()
	default:
		c.h.ctr.Inc("tcp_rst_out_of_window")
	}
	return false
}

// processData handles payload and FIN.
func (c *TCPConn) processData(s *tcpSeg) {
	h := c.h
	fin := s.flags&flagFIN != 0
	n := int64(len(s.payload))
	if n == 0 && !fin {
		return
	}
	off := c.rcvOff(s.seq)
	segEnd := off + n
	if fin {
		segEnd++
	}
	switch c.state {
	case StateEstablished, StateFinWait1, StateFinWait2:
	default:
		// The peer's FIN is in. What comes again (the FIN, when our
		// ACK of it was lost) lies below RCV.NXT and is acknowledged,
		// in every state (RFC 9293 §3.10.7.4); in TIME-WAIT the wait
		// starts over. Anything past the FIN is the peer's error.
		if segEnd <= c.rcvNxt {
			h.ctr.Inc("tcp_rx_duplicate")
			c.ackDue = true
			if c.state == StateTimeWait && fin {
				c.armTimeWait()
			}
		} else {
			h.ctr.Inc("tcp_data_after_fin")
		}
		return
	}
	if segEnd <= c.rcvNxt {
		h.ctr.Inc("tcp_rx_duplicate")
		c.ackDue = true
		return
	}
	// Acceptable: RCV.NXT <= SEG.SEQ < RCV.NXT+RCV.WND (RFC 9293
	// §3.10.7.4); a segment starting at the window's edge is outside it.
	if off >= c.rcvNxt+c.rcvWnd() {
		h.ctr.Inc("drop_tcp_out_of_window")
		c.ackDue = true
		return
	}
	p := s.payload
	if off < c.rcvNxt {
		p = p[c.rcvNxt-off:]
		off = c.rcvNxt
	}
	if fin {
		c.finOff = off + int64(len(p))
	}
	if off > c.rcvNxt {
		c.storeOOO(off, p)
		c.ackDue = true // a duplicate ACK tells the sender of the hole
		return
	}
	hadHole := len(c.ooo) > 0
	c.deliver(p)
	c.drainOOO()
	if c.finOff >= 0 && c.rcvNxt == c.finOff && !c.finRcvd {
		c.peerFin()
		return
	}
	if c.ackSent == c.rcvNxt {
		// The app answered at once and its data carried the ACK of
		// all of it (and of a filled hole): another would be a
		// duplicate, which the sender may count towards a fast
		// retransmit.
		return
	}
	if hadHole || !h.cfg.TCP.DelayedACK {
		c.ackDue = true
		return
	}
	c.unacked++
	if c.unacked >= 2 {
		c.ackDue = true
		return
	}
	// The timeout runs from this segment, the first unacknowledged one:
	// an ACK sent since the last arming cleared the deadline, as Linux's
	// clears its pending timer. The engine timer is kept lazily, as the
	// RTO's: one of an earlier deadline still pending re-arms itself.
	c.delackAt = h.env.Now() + h.cfg.TCP.DelayedACKTimeout
	if !c.delack {
		c.delack = true
		h.env.After(h.cfg.TCP.DelayedACKTimeout, c.delackFire)
	}
}

func (c *TCPConn) delackFire() {
	c.delack = false
	if c.delackAt == 0 || c.unacked == 0 || c.state == StateClosed {
		return
	}
	if now := c.h.env.Now(); now < c.delackAt {
		c.delack = true
		c.h.env.After(c.delackAt-now, c.delackFire)
		return
	}
	c.h.ctr.Inc("tcp_delayed_ack")
	c.sendAck()
}

func (c *TCPConn) deliver(p []byte) {
	if len(p) == 0 {
		return
	}
	c.rcvNxt += int64(len(p))
	c.bytesReceived += int64(len(p))
	if c.onData != nil {
		c.onData(c, p)
	}
}

func (c *TCPConn) storeOOO(off int64, p []byte) {
	h := c.h
	h.ctr.Inc("tcp_rx_out_of_order")
	if len(p) == 0 {
		return
	}
	i := 0
	for i < len(c.ooo) && c.ooo[i].off < off {
		i++
	}
	if i < len(c.ooo) && c.ooo[i].off == off && len(c.ooo[i].data) >= len(p) {
		return // already held
	}
	if c.oooBytes+oooCharge(len(p)) > h.cfg.TCP.RecvWindow {
		h.ctr.Inc("drop_tcp_ooo_full")
		return
	}
	c.ooo = append(c.ooo, oooSeg{})
	copy(c.ooo[i+1:], c.ooo[i:])
	c.ooo[i] = oooSeg{off: off, data: append([]byte(nil), p...)}
	c.oooBytes += oooCharge(len(p))
}

// oooMinCharge is the least a held out-of-order segment counts against
// the reassembly allowance, as Linux charges an skb's true size rather
// than its payload: a peer sending one-byte segments with gaps would
// otherwise make the receiver hold a million tiny buffers in a 1 MiB
// allowance (tens of MB, and a queue shifted on every insertion).
// Segments of a full MSS are charged their length.
const oooMinCharge = 512

func oooCharge(n int) int { return max(n, oooMinCharge) }

func (c *TCPConn) drainOOO() {
	for len(c.ooo) > 0 && c.ooo[0].off <= c.rcvNxt {
		s := c.ooo[0]
		c.ooo[0] = oooSeg{}
		c.ooo = c.ooo[1:]
		c.oooBytes -= oooCharge(len(s.data))
		if end := s.off + int64(len(s.data)); end > c.rcvNxt {
			c.deliver(s.data[c.rcvNxt-s.off:])
		}
	}
	if len(c.ooo) == 0 {
		c.ooo = nil
	}
}

// peerFin handles the peer's FIN, in order. The host's apps never keep a
// half-closed connection open: the FIN is answered with our own once the
// queued data has gone.
func (c *TCPConn) peerFin() {
	c.finRcvd = true
	c.rcvNxt++
	c.ackDue = true
	switch c.state {
	case StateEstablished:
		c.state = StateCloseWait
		c.Close()
	case StateFinWait1:
		c.state = StateClosing
	case StateFinWait2:
		c.enterTimeWait()
	}
}

func (c *TCPConn) enterTimeWait() {
	c.state = StateTimeWait
	c.rtoAt = 0
	c.fire()
	c.armTimeWait()
}

// armTimeWait (re)starts the TIME-WAIT timer; a timer of an earlier start
// finds the deadline moved and does nothing.
func (c *TCPConn) armTimeWait() {
	c.timeWaitAt = c.h.env.Now() + c.h.cfg.TCP.TimeWait
	c.h.env.After(c.h.cfg.TCP.TimeWait, func() {
		if c.state == StateTimeWait && c.h.env.Now() >= c.timeWaitAt {
			c.close()
		}
	})
}

// close removes the connection and completes it.
func (c *TCPConn) close() {
	if c.state == StateTimeWait && c.ackDue {
		c.sendAck()
	}
	c.state = StateClosed
	c.rtoAt = 0
	if c.timerCancel != nil {
		c.timerCancel()
		c.timerCancel, c.timerAt = nil, 0
	}
	if c.h.conns[c.key] == c {
		delete(c.h.conns, c.key)
	}
	c.ooo, c.chunks = nil, nil
	c.fire()
}

// abort ends the connection with err, resetting the peer when rst.
func (c *TCPConn) abort(err error, rst bool) {
	if c.state == StateClosed {
		return
	}
	c.err = fmt.Errorf("host: %s: tcp %v in %v: %w", c.h.cfg.Name, c.Flow(), c.state, err)
	c.h.ctr.Inc("tcp_abort")
	if rst {
		c.sendSeg(c.sndNxt, 0, flagRST|flagACK)
	}
	c.close()
}

// Abort resets the connection.
func (c *TCPConn) Abort() { c.abort(ErrReset, true) }
