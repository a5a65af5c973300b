package host

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/edgefabric/edgefabric/element"
)

// TCPResult is the outcome of a bulk transfer (or any connection).
type TCPResult struct {
	Src             string  `json:"src"`
	Dst             string  `json:"dst"`
	SrcPort         uint16  `json:"src_port"`
	DstPort         uint16  `json:"dst_port"`
	Bytes           int64   `json:"bytes"`
	BytesAcked      int64   `json:"bytes_acked"`
	BytesReceived   int64   `json:"bytes_received"`
	Start           int64   `json:"start_ps"`
	Established     int64   `json:"established_ps"`
	Completed       int64   `json:"completed_ps"`
	CompletionUs    float64 `json:"completion_us"`
	GoodputBps      float64 `json:"goodput_bps"`
	Retransmits     uint64  `json:"retransmits"`
	FastRetransmits uint64  `json:"fast_retransmits"`
	Timeouts        uint64  `json:"timeouts"`
	SRTTUs          float64 `json:"srtt_us"`
	Cwnd            int64   `json:"cwnd"`
	MaxCwnd         int64   `json:"max_cwnd"`
	SegmentsOut     uint64  `json:"segments_out"`
	SegmentsIn      uint64  `json:"segments_in"`
	State           string  `json:"state"`
	Error           string  `json:"error,omitempty"`
}

// Result returns the connection's outcome so far. Completion is the time
// the last data byte was acknowledged, measured from the SYN; goodput is
// the acknowledged bytes over that span.
func (c *TCPConn) Result() TCPResult {
	r := TCPResult{Src: c.h.cfg.Name, Dst: netip.AddrFrom4(c.key.raddr).String(), SrcPort: c.key.lport, DstPort: c.key.rport,
		Bytes: c.sndEnd, BytesAcked: c.bytesAcked, BytesReceived: c.bytesReceived,
		Start: int64(c.start), Established: int64(c.established), Completed: int64(c.completed),
		Retransmits: c.retransmits, FastRetransmits: c.fastRetransmits, Timeouts: c.timeouts,
		SRTTUs: float64(c.srtt) / float64(element.Microsecond), Cwnd: c.cwnd, MaxCwnd: c.maxCwnd,
		SegmentsOut: c.segsOut, SegmentsIn: c.segsIn, State: c.state.String()}
	if c.completed > 0 {
		d := c.completed - c.start
		r.CompletionUs = float64(d) / float64(element.Microsecond)
		r.GoodputBps = bps(c.bytesAcked, d)
	}
	if c.err != nil {
		r.Error = c.err.Error()
	}
	return r
}

// TCPBulk opens a connection to dst:dstPort (any port of a host with the
// sink on; DiscardPort by convention), sends bytes of data and closes.
// The connection is Done once its FIN is acknowledged, or on error.
func (h *Host) TCPBulk(dst netip.Addr, dstPort uint16, bytes int64) *TCPConn {
	c, err := h.Connect(dst, dstPort)
	if err != nil {
		return h.failedConn(dst, dstPort, err)
	}
	if bytes < 0 {
		c.abort(fmt.Errorf("%d bytes: %w", bytes, ErrBadArgument), true)
		return c
	}
	c.Write(bytes)
	c.Close()
	return c
}

// failedConn is a closed connection carrying err, for apps that could not
// start, so that callers always get something with Err and Result.
func (h *Host) failedConn(dst netip.Addr, port uint16, err error) *TCPConn {
	c := &TCPConn{h: h, state: StateClosed, err: err, finOff: -1}
	if dst.Is4() {
		c.key = connKey{raddr: dst.As4(), rport: port}
	}
	if h.env != nil {
		c.start = h.env.Now()
	}
	c.fire()
	return c
}

// The request/response protocol on RRPort, in the manner of netperf's
// TCP_RR: the client opens with an 8-byte preamble (request size, response
// size, big-endian u32 each; the role of netperf's control connection),
// then sends requests of exactly the request size; the server answers each
// complete request with a response of the response size.
const rrMaxSize = 1 << 24

type rrServer struct {
	hdr       [8]byte
	hdrN      int
	req, resp int64
	have      int64
}

func acceptRR(c *TCPConn) {
	s := &rrServer{}
	c.OnData(s.data)
}

func (s *rrServer) data(c *TCPConn, b []byte) {
	if s.hdrN < len(s.hdr) {
		n := copy(s.hdr[s.hdrN:], b)
		s.hdrN += n
		b = b[n:]
		if s.hdrN < len(s.hdr) {
			return
		}
		s.req = int64(binary.BigEndian.Uint32(s.hdr[0:4]))
		s.resp = int64(binary.BigEndian.Uint32(s.hdr[4:8]))
		if s.req <= 0 || s.resp <= 0 || s.req > rrMaxSize || s.resp > rrMaxSize {
			c.h.ctr.Inc("rr_bad_preamble")
			c.abort(fmt.Errorf("rr preamble sizes %d/%d: %w", s.req, s.resp, ErrBadArgument), true)
			return
		}
	}
	s.have += int64(len(b))
	for s.have >= s.req {
		s.have -= s.req
		c.h.ctr.Inc("rr_served")
		c.Write(s.resp)
	}
}

// RRResult is the outcome of a request/response run.
type RRResult struct {
	Src          string         `json:"src"`
	Dst          string         `json:"dst"`
	ReqSize      int            `json:"req_size"`
	RespSize     int            `json:"resp_size"`
	Count        int            `json:"count"`
	Transactions int            `json:"transactions"`
	PerSecond    float64        `json:"transactions_per_second"`
	RTT          Summary        `json:"rtt"`
	RTTs         []element.Time `json:"rtt_samples_ps"`
	Retransmits  uint64         `json:"retransmits"`
	Timeouts     uint64         `json:"timeouts"`
	Error        string         `json:"error,omitempty"`
}

// RRApp runs request/response transactions over one connection, like
// netperf TCP_RR (Axon thesis §4.4.3): one request outstanding at a time,
// the next leaves as soon as the response is in.
type RRApp struct {
	done
	h           *Host
	dst         netip.Addr
	req, resp   int
	count       int
	conn        *TCPConn
	sentAt      element.Time
	first, last element.Time
	have        int64
	rtts        []element.Time
	err         error
}

// TCPRR runs count transactions of reqSize-byte requests and
// respSize-byte responses against dst's RRPort.
func (h *Host) TCPRR(dst netip.Addr, reqSize, respSize, count int) *RRApp {
	a := &RRApp{h: h, dst: dst, req: reqSize, resp: respSize, count: count}
	if reqSize <= 0 || respSize <= 0 || reqSize > rrMaxSize || respSize > rrMaxSize || count <= 0 {
		a.err = fmt.Errorf("host: %s: tcp_rr %v: sizes %d/%d, count %d: %w", h.cfg.Name, dst, reqSize, respSize, count, ErrBadArgument)
		a.fire()
		return a
	}
	c, err := h.Connect(dst, RRPort)
	if err != nil {
		a.err = err
		a.fire()
		return a
	}
	a.conn = c
	c.OnEstablished(func(c *TCPConn) {
		var pre [8]byte
		binary.BigEndian.PutUint32(pre[0:4], uint32(reqSize))
		binary.BigEndian.PutUint32(pre[4:8], uint32(respSize))
		c.WriteBytes(pre[:])
		a.request()
	})
	c.OnData(a.data)
	c.OnDone(func() {
		if c.err != nil && a.err == nil {
			a.err = c.err
		}
		a.fire()
	})
	return a
}

func (a *RRApp) request() {
	a.sentAt = a.h.env.Now()
	if len(a.rtts) == 0 {
		a.first = a.sentAt
	}
	a.conn.Write(int64(a.req))
}

func (a *RRApp) data(c *TCPConn, b []byte) {
	a.have += int64(len(b))
	for a.have >= int64(a.resp) && len(a.rtts) < a.count {
		a.have -= int64(a.resp)
		now := a.h.env.Now()
		a.rtts = append(a.rtts, now-a.sentAt)
		a.last = now
		if len(a.rtts) == a.count {
			c.Close()
			return
		}
		a.request()
	}
}

// Conn returns the app's connection (nil if it could not start).
func (a *RRApp) Conn() *TCPConn { return a.conn }

// Err returns why the run failed, or nil.
func (a *RRApp) Err() error { return a.err }

// Result returns the run's outcome so far.
func (a *RRApp) Result() RRResult {
	r := RRResult{Src: a.h.cfg.Name, Dst: a.dst.String(), ReqSize: a.req, RespSize: a.resp, Count: a.count,
		Transactions: len(a.rtts), RTT: Summarize(a.rtts), RTTs: a.rtts}
	if len(a.rtts) > 0 && a.last > a.first {
		r.PerSecond = float64(len(a.rtts)) / (a.last - a.first).Seconds()
	}
	if a.conn != nil {
		r.Retransmits, r.Timeouts = a.conn.retransmits, a.conn.timeouts
	}
	if a.err != nil {
		r.Error = a.err.Error()
	}
	return r
}
