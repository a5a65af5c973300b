package host

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/edgefabric/edgefabric/element"
)

// ICMP types.
const (
	icmpEchoReply   = 0
	icmpUnreachable = 3
	icmpEcho        = 8
)

func (h *Host) receiveICMP(ip *ipv4) {
	b := ip.l4
	if len(b) < icmpLen {
		h.ctr.Inc("drop_icmp_truncated")
		return
	}
	if fold(checksum(0, b)) != 0 {
		h.ctr.Inc("drop_icmp_bad_checksum")
		return
	}
	switch b[0] {
	case icmpEcho:
		if b[1] != 0 {
			h.ctr.Inc("drop_icmp_bad_code")
			return
		}
		if netip.AddrFrom4(ip.dst) != h.ip {
			// Linux ignores broadcast pings by default
			// (icmp_echo_ignore_broadcasts).
			h.ctr.Inc("icmp_echo_broadcast_ignored")
			return
		}
		h.ctr.Inc("icmp_echo_rx")
		f := h.newIPFrame(ip.src, protoICMP, len(b))
		r := f[ethLen+ipLen:]
		copy(r, b)
		r[0] = icmpEchoReply
		r[2], r[3] = 0, 0
		binary.BigEndian.PutUint16(r[2:4], fold(checksum(0, r)))
		h.ctr.Inc("icmp_echo_reply_tx")
		h.output(netip.AddrFrom4(ip.src), f)
	case icmpEchoReply:
		id := binary.BigEndian.Uint16(b[4:6])
		seq := binary.BigEndian.Uint16(b[6:8])
		p := h.pings[id]
		if p == nil {
			h.ctr.Inc("icmp_echo_reply_unmatched")
			return
		}
		p.reply(netip.AddrFrom4(ip.src), seq)
	case icmpUnreachable:
		h.ctr.Inc("icmp_unreachable_rx")
	default:
		h.ctr.Inc("icmp_other_rx")
	}
}

// PingOptions tunes a ping run. Zero values take the defaults of ping(8).
type PingOptions struct {
	// Count is the number of echo requests. Default 1.
	Count int
	// Interval between requests. Default 1 s.
	Interval element.Time
	// Size is the ICMP payload size in bytes. Default 56 (a 98-byte frame).
	Size int
	// Timeout is how long after the last request the app waits for late
	// replies before it completes. Default 1 s.
	Timeout element.Time
}

// PingResult is the outcome of a ping run. InFlight counts the requests
// not answered yet whose Timeout has not run out: taken before the app is
// done (a run that ends meanwhile), their replies may still be on their
// way, so they are neither received nor lost, and not in Loss, which is
// (Sent - InFlight - Received) / (Sent - InFlight) (0 when nothing is
// counted yet). Once the app is done, InFlight is 0.
type PingResult struct {
	Src        string         `json:"src"`
	Dst        string         `json:"dst"`
	Sent       int            `json:"sent"`
	Received   int            `json:"received"`
	InFlight   int            `json:"in_flight"`
	Duplicates int            `json:"duplicates,omitempty"`
	Loss       float64        `json:"loss"`
	RTT        Summary        `json:"rtt"`
	RTTs       []element.Time `json:"rtt_samples_ps"`
	Error      string         `json:"error,omitempty"`
}

// PingApp sends ICMP echo requests to one destination and times replies.
type PingApp struct {
	done
	h       *Host
	dst     netip.Addr
	id      uint16
	opt     PingOptions
	sentAt  []element.Time // by sequence number (0-based)
	got     []bool
	rtts    []element.Time
	dups    int
	err     error
	started element.Time
}

// Ping sends count echo requests to dst, interval apart, with the default
// payload size; see PingWith.
func (h *Host) Ping(dst netip.Addr, count int, interval element.Time) *PingApp {
	return h.PingWith(dst, PingOptions{Count: count, Interval: interval})
}

// PingWith sends echo requests as opt says. The first request leaves now.
func (h *Host) PingWith(dst netip.Addr, opt PingOptions) *PingApp {
	if opt.Count <= 0 {
		opt.Count = 1
	}
	if opt.Interval <= 0 {
		opt.Interval = element.Second
	}
	if opt.Size <= 0 {
		opt.Size = 56
	}
	if opt.Timeout <= 0 {
		opt.Timeout = element.Second
	}
	p := &PingApp{h: h, dst: dst, opt: opt}
	if err := h.appCheck(dst); err != nil {
		p.err = fmt.Errorf("host: %s: ping %v: %w", h.cfg.Name, dst, err)
		p.fire()
		return p
	}
	if opt.Count > 65536 || opt.Size > h.cfg.MTU-ipLen-icmpLen {
		p.err = fmt.Errorf("host: %s: ping %v: count %d or size %d beyond limits: %w", h.cfg.Name, dst, opt.Count, opt.Size, ErrBadArgument)
		p.fire()
		return p
	}
	if h.pings == nil {
		h.pings = make(map[uint16]*PingApp)
	}
	free := false
	for range 65536 { // find a free identifier
		h.nextPID++
		if h.pings[h.nextPID] == nil {
			free = true
			break
		}
	}
	if !free {
		// Every identifier is taken: a new ping would take over one
		// that is running, its replies and its table slot.
		p.err = fmt.Errorf("host: %s: ping %v: all 65536 ICMP identifiers in use: %w", h.cfg.Name, dst, ErrPortsExhausted)
		p.fire()
		return p
	}
	p.id = h.nextPID
	h.pings[p.id] = p
	p.started = h.env.Now()
	p.sendNext()
	return p
}

// appCheck validates what every app needs: an attached host with an
// address and an IPv4 destination.
func (h *Host) appCheck(dst netip.Addr) error {
	if h.env == nil {
		return ErrNotAttached
	}
	if !h.ip.IsValid() {
		return ErrNoAddress
	}
	if !dst.Is4() {
		return fmt.Errorf("destination %v is not IPv4: %w", dst, ErrBadArgument)
	}
	if dst == h.ip {
		// The stack has no loopback: such packets went out as ARP
		// requests for our own address and were lost.
		return fmt.Errorf("destination %v is the host itself, and the stack has no loopback: %w", dst, ErrBadArgument)
	}
	return nil
}

func (p *PingApp) sendNext() {
	seq := len(p.sentAt)
	h := p.h
	f := h.newIPFrame(p.dst.As4(), protoICMP, icmpLen+p.opt.Size)
	b := f[ethLen+ipLen:]
	b[0] = icmpEcho
	binary.BigEndian.PutUint16(b[4:6], p.id)
	binary.BigEndian.PutUint16(b[6:8], uint16(seq))
	binary.BigEndian.PutUint16(b[2:4], fold(checksum(0, b)))
	p.sentAt = append(p.sentAt, h.env.Now())
	p.got = append(p.got, false)
	h.ctr.Inc("icmp_echo_tx")
	h.output(p.dst, f)
	if len(p.sentAt) < p.opt.Count {
		h.env.After(p.opt.Interval, p.sendNext)
	} else {
		h.env.After(p.opt.Timeout, p.finish)
	}
}

func (p *PingApp) reply(from netip.Addr, seq uint16) {
	if p.fired || from != p.dst || int(seq) >= len(p.sentAt) {
		p.h.ctr.Inc("icmp_echo_reply_unmatched")
		return
	}
	if p.got[seq] {
		p.dups++
		return
	}
	p.got[seq] = true
	p.rtts = append(p.rtts, p.h.env.Now()-p.sentAt[seq])
	if len(p.rtts) == p.opt.Count {
		p.finish()
	}
}

func (p *PingApp) finish() {
	if p.fired {
		return
	}
	if p.h.pings[p.id] == p {
		delete(p.h.pings, p.id)
	}
	p.fire()
}

// Result returns the run's outcome so far (final once Done).
func (p *PingApp) Result() PingResult {
	r := PingResult{Src: p.h.cfg.Name, Dst: p.dst.String(), Sent: len(p.sentAt), Received: len(p.rtts),
		Duplicates: p.dups, RTT: Summarize(p.rtts), RTTs: p.rtts}
	if !p.fired {
		now := p.h.env.Now()
		for i := len(p.sentAt) - 1; i >= 0 && now-p.sentAt[i] < p.opt.Timeout; i-- {
			if !p.got[i] {
				r.InFlight++
			}
		}
	}
	if n := r.Sent - r.InFlight; n > 0 {
		r.Loss = float64(n-r.Received) / float64(n)
	}
	if p.err != nil {
		r.Error = p.err.Error()
	}
	return r
}

// Err returns why the app could not run, or nil.
func (p *PingApp) Err() error { return p.err }
