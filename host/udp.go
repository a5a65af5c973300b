package host

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"net/netip"

	"github.com/edgefabric/edgefabric/element"
)

// udpMagic opens the header the UDP app writes into each datagram (when it
// fits): magic, sequence number, send time. The receiving host uses it
// for loss, reordering and one-way delay, as iperf's UDP mode does.
//
//	0               4                              12                   20
//	+---------------+-------------------------------+--------------------+
//	|  "EFU1"       |     sequence (u64)            |  send time (ps)    |
//	+---------------+-------------------------------+--------------------+
const (
	udpMagic  = 0x45465531 // "EFU1"
	udpHdrLen = 20
)

// UDPPortStats counts what arrived on one UDP port.
type UDPPortStats struct {
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
}

type udpFlowKey struct {
	src              [4]byte
	srcPort, dstPort uint16
}

// UDPFlowStats describes one UDP app flow as the receiver saw it.
type UDPFlowStats struct {
	Packets    uint64       `json:"packets"`
	Bytes      uint64       `json:"bytes"`
	MaxSeq     uint64       `json:"max_seq"`
	OutOfOrder uint64       `json:"out_of_order"`
	First      element.Time `json:"first_ps"`
	Last       element.Time `json:"last_ps"`
	DelaySum   element.Time `json:"delay_sum_ps"`
	DelayMax   element.Time `json:"delay_max_ps"`
}

// Lost is the number of sequence numbers up to the highest seen that
// never arrived.
func (s *UDPFlowStats) Lost() uint64 {
	if s.Packets == 0 || s.MaxSeq+1 < s.Packets {
		return 0
	}
	return s.MaxSeq + 1 - s.Packets
}

// UDPPort returns what arrived on port so far.
func (h *Host) UDPPort(port uint16) UDPPortStats {
	if s := h.udpPorts[port]; s != nil {
		return *s
	}
	return UDPPortStats{}
}

// UDPFlow returns the receiver's view of the UDP app flow from src:srcPort
// to this host's dstPort.
func (h *Host) UDPFlow(src netip.Addr, srcPort, dstPort uint16) (UDPFlowStats, bool) {
	if !src.Is4() {
		return UDPFlowStats{}, false
	}
	s := h.udpFlows[udpFlowKey{src.As4(), srcPort, dstPort}]
	if s == nil {
		return UDPFlowStats{}, false
	}
	return *s, true
}

func (h *Host) receiveUDP(ip *ipv4) {
	d, reason := parseUDP(ip)
	if reason != "" {
		h.ctr.Inc(reason)
		return
	}
	// Port 68 is DHCP's only on a host that runs the client; on the
	// others it is a port like any other (a UDP workload may aim at it).
	if d.dstPort == dhcpClientPort && h.dhcp != nil {
		h.dhcp.receive(d.payload)
		return
	}
	if !h.ip.IsValid() {
		h.ctr.Inc("drop_no_address")
		return
	}
	h.ctr.Inc("udp_rx")
	if h.udpPorts == nil {
		h.udpPorts = make(map[uint16]*UDPPortStats)
	}
	ps := h.udpPorts[d.dstPort]
	if ps == nil {
		ps = &UDPPortStats{}
		h.udpPorts[d.dstPort] = ps
	}
	ps.Packets++
	ps.Bytes += uint64(len(d.payload))
	p := d.payload
	if len(p) < udpHdrLen || binary.BigEndian.Uint32(p[0:4]) != udpMagic {
		return
	}
	seq := binary.BigEndian.Uint64(p[4:12])
	sent := element.Time(binary.BigEndian.Uint64(p[12:20]))
	if h.udpFlows == nil {
		h.udpFlows = make(map[udpFlowKey]*UDPFlowStats)
	}
	k := udpFlowKey{ip.src, d.srcPort, d.dstPort}
	fs := h.udpFlows[k]
	now := h.env.Now()
	if fs == nil {
		if len(h.udpFlows) >= h.cfg.UDPMaxFlows {
			h.ctr.Inc("udp_flows_full")
			return
		}
		fs = &UDPFlowStats{First: now}
		h.udpFlows[k] = fs
	} else if seq < fs.MaxSeq {
		fs.OutOfOrder++
	}
	fs.Packets++
	fs.Bytes += uint64(len(p))
	fs.MaxSeq = max(fs.MaxSeq, seq)
	fs.Last = now
	// Every stamped datagram counts, one sent at time 0 too: the mean
	// divides the sum by Packets.
	if dl := now - sent; dl >= 0 {
		fs.DelaySum += dl
		fs.DelayMax = max(fs.DelayMax, dl)
	}
}

// sendUDP builds and sends one datagram; payload may be nil for zeros of
// length n.
func (h *Host) sendUDP(dst netip.Addr, srcPort, dstPort uint16, payload []byte, n int) []byte {
	if payload != nil {
		n = len(payload)
	}
	f := h.newIPFrame(dst.As4(), protoUDP, udpLen+n)
	u := f[ethLen+ipLen:]
	binary.BigEndian.PutUint16(u[0:2], srcPort)
	binary.BigEndian.PutUint16(u[2:4], dstPort)
	binary.BigEndian.PutUint16(u[4:6], uint16(udpLen+n))
	copy(u[udpLen:], payload)
	return f
}

// finishUDP writes the checksum of the datagram in f and sends it.
func (h *Host) finishUDP(dst netip.Addr, f []byte) {
	u := f[ethLen+ipLen:]
	var src [4]byte
	if h.ip.Is4() {
		src = h.ip.As4()
	}
	c := l4Checksum(src, dst.As4(), protoUDP, u)
	if c == 0 {
		c = 0xffff // RFC 768: a computed zero is sent as all ones
	}
	binary.BigEndian.PutUint16(u[6:8], c)
	h.ctr.Inc("udp_tx")
	h.output(dst, f)
}

// UDPResult is the outcome of a constant-rate UDP run. Received, Lost,
// InFlight and Loss come from the receiving host (ResultWith); Result
// alone has the sender's view.
//
// Lost counts the datagrams that did not arrive, except those that may
// still be on their way when the result is taken (InFlight): the ones
// sent after the last to arrive, less than the flow's largest one-way
// delay (DelayMax) ago. Loss is Lost over Sent - InFlight. A payload
// under 20 bytes has no room for the sequence header, so the receiver
// cannot count the flow's datagrams apart from others on the port:
// Received is then 0 and Lost and Loss are nil (null in JSON), unknown
// rather than 100 %.
type UDPResult struct {
	Src         string       `json:"src"`
	Dst         string       `json:"dst"`
	SrcPort     uint16       `json:"src_port"`
	DstPort     uint16       `json:"dst_port"`
	Size        int          `json:"size"`
	RateBps     int64        `json:"rate_bps"`
	Sent        uint64       `json:"sent"`
	SentBytes   uint64       `json:"sent_bytes"`
	Received    uint64       `json:"received"`
	InFlight    uint64       `json:"in_flight"`
	Lost        *uint64      `json:"lost"`
	Loss        *float64     `json:"loss"`
	Start       element.Time `json:"start_ps"`
	End         element.Time `json:"end_ps"`
	GoodputBps  float64      `json:"goodput_bps"`
	MeanDelayUs float64      `json:"mean_delay_us"` // 0 when nothing was received
	Error       string       `json:"error,omitempty"`
}

// UDPApp sends fixed-size datagrams at a constant rate for a duration.
type UDPApp struct {
	done
	h        *Host
	dst      netip.Addr
	srcPort  uint16
	dstPort  uint16
	size     int
	rate     int64
	interval element.Time // the mean gap, rounded down (for goodput's span)
	bitTime  uint64       // size·8·Second: the k-th datagram leaves k·bitTime/rate after start
	until    element.Time
	sent     uint64
	start    element.Time
	last     element.Time
	err      error
}

// UDP sends size-byte payloads to dst:dstPort at rateBps (payload bits per
// second, as iperf -b counts) for dur. The first datagram leaves now; the
// app completes after the last one is sent.
func (h *Host) UDP(dst netip.Addr, dstPort uint16, rateBps int64, size int, dur element.Time) *UDPApp {
	a := &UDPApp{h: h, dst: dst, dstPort: dstPort, size: size, rate: rateBps}
	if err := h.appCheck(dst); err != nil {
		a.err = fmt.Errorf("host: %s: udp %v: %w", h.cfg.Name, dst, err)
		a.fire()
		return a
	}
	if rateBps <= 0 || size <= 0 || size > h.cfg.MTU-ipLen-udpLen || dur <= 0 || dstPort == 0 {
		a.err = fmt.Errorf("host: %s: udp %v: rate %d, size %d, duration %v, port %d: %w", h.cfg.Name, dst, rateBps, size, dur, dstPort, ErrBadArgument)
		a.fire()
		return a
	}
	a.bitTime = uint64(size) * 8 * uint64(element.Second)
	a.interval = element.Time(a.bitTime / uint64(rateBps))
	if a.interval <= 0 {
		a.err = fmt.Errorf("host: %s: udp %v: rate %d b/s with %d-byte datagrams: one every %.3g ps, under the clock's 1 ps: %w", h.cfg.Name, dst, rateBps, size, float64(a.bitTime)/float64(rateBps), ErrBadArgument)
		a.fire()
		return a
	}
	port, ok := h.udpSourcePort()
	if !ok {
		a.err = fmt.Errorf("host: %s: udp %v: all %d ephemeral ports in use by running UDP apps: %w", h.cfg.Name, dst, ephemeralPorts, ErrPortsExhausted)
		a.fire()
		return a
	}
	a.srcPort = port
	if h.udpApps == nil {
		h.udpApps = make(map[uint16]*UDPApp)
	}
	h.udpApps[port] = a
	a.OnDone(func() { delete(h.udpApps, port) })
	a.start = h.env.Now()
	a.until = a.start + dur
	a.tick()
	return a
}

// The ephemeral port range, 49152-65535 (RFC 6335 §6, IANA's dynamic
// ports).
const (
	ephemeralFirst = 49152
	ephemeralPorts = 65536 - ephemeralFirst
)

// ephemeralPort returns the next port of the ephemeral range, round
// robin; TCP and UDP draw from the same counter. The callers skip ports
// in use.
func (h *Host) ephemeralPort() uint16 {
	h.nextPort++
	if h.nextPort < ephemeralFirst {
		h.nextPort = ephemeralFirst
	}
	return h.nextPort
}

// udpSourcePort returns an ephemeral port no running UDP app sends from,
// as Linux's autobind picks a port no UDP socket holds, or false when
// all are taken. The counter wraps after 16,384 ports, TCP's included:
// without the check a UDP app took the port of one still running, and a
// receiver, which keys its flows by source address and ports, merged the
// two flows' statistics.
func (h *Host) udpSourcePort() (uint16, bool) {
	for range ephemeralPorts {
		if p := h.ephemeralPort(); h.udpApps[p] == nil {
			return p, true
		}
	}
	return 0, false
}

func (a *UDPApp) tick() {
	h := a.h
	now := h.env.Now()
	f := h.sendUDP(a.dst, a.srcPort, a.dstPort, nil, a.size)
	if a.size >= udpHdrLen {
		p := f[ethLen+ipLen+udpLen:]
		binary.BigEndian.PutUint32(p[0:4], udpMagic)
		binary.BigEndian.PutUint64(p[4:12], a.sent)
		binary.BigEndian.PutUint64(p[12:20], uint64(now))
	}
	h.finishUDP(a.dst, f)
	a.sent++
	a.last = now
	// The exact send time of the next datagram, rounded down to the
	// picosecond: a rounded gap added up would drift from the rate
	// (3 Tb/s of 1-byte datagrams: 2 ps instead of 2.67, 33 % more).
	hi, lo := bits.Mul64(a.sent, a.bitTime)
	if hi < uint64(a.rate) {
		off, _ := bits.Div64(hi, lo, uint64(a.rate))
		if next := a.start + element.Time(off); off < uint64(a.until-a.start) && next >= now {
			h.env.After(next-now, a.tick)
			return
		}
	}
	a.fire()
}

// Result returns the sender's view.
func (a *UDPApp) Result() UDPResult {
	r := UDPResult{Src: a.h.cfg.Name, Dst: a.dst.String(), SrcPort: a.srcPort, DstPort: a.dstPort, Size: a.size, RateBps: a.rate,
		Sent: a.sent, SentBytes: a.sent * uint64(a.size), Start: a.start, End: a.last}
	if a.err != nil {
		r.Error = a.err.Error()
	}
	return r
}

// ResultWith completes the result with the receiving host's counts, as
// of now: what arrived, what may still be in flight, what was lost,
// goodput over the receiver's first-to-last span plus one interval (the
// sending time of the last datagram).
func (a *UDPApp) ResultWith(rx *Host) UDPResult {
	r := a.Result()
	if a.size < udpHdrLen {
		return r // no sequence numbers: loss unknown
	}
	s, ok := rx.UDPFlow(a.h.ip, a.srcPort, a.dstPort)
	// Datagrams sent after the last to arrive, less than the largest
	// one-way delay seen ago, may still be on their way: a flow that runs
	// to the end of a run must not count them as lost. With nothing
	// received there is no delay to go by, and all count as lost.
	next := uint64(0) // the first sequence number after the last to arrive
	if ok {
		next = s.MaxSeq + 1
		r.InFlight = a.sent - min(a.sent, max(next, a.firstSentAfter(a.h.env.Now()-s.DelayMax)))
	}
	lost := uint64(0)
	if counted := r.Sent - r.InFlight; counted > s.Packets {
		lost = counted - s.Packets
	}
	r.Lost = &lost
	loss := 0.0
	if counted := r.Sent - r.InFlight; counted > 0 {
		loss = float64(lost) / float64(counted)
	}
	r.Loss = &loss
	if !ok {
		return r
	}
	r.Received = s.Packets
	r.GoodputBps = bps(int64(s.Bytes), s.Last-s.First+a.interval)
	if s.Packets > 0 {
		r.MeanDelayUs = float64(s.DelaySum) / float64(s.Packets) / float64(element.Microsecond)
	}
	return r
}

// firstSentAfter returns the sequence number of the first datagram that
// leaves (or left) after time t: the smallest k with start +
// floor(k·bitTime/rate) > t, as tick schedules them.
func (a *UDPApp) firstSentAfter(t element.Time) uint64 {
	if t < a.start {
		return 0
	}
	// floor(k·bitTime/rate) > c  <=>  k·bitTime >= (c+1)·rate
	hi, lo := bits.Mul64(uint64(t-a.start)+1, uint64(a.rate))
	if hi >= a.bitTime {
		return math.MaxUint64
	}
	k, rem := bits.Div64(hi, lo, a.bitTime)
	if rem > 0 {
		k++
	}
	return k
}

// Err returns why the app could not run, or nil.
func (a *UDPApp) Err() error { return a.err }
