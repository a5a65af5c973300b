package emu

import (
	"fmt"

	"github.com/edgefabric/edgefabric/topo"
	"github.com/vishvananda/netlink"
)

// tbfParams computes a token bucket for rate bits/s: the bucket holds 1 ms
// of traffic but at least a few full frames (so that a bucket at 10 Mb/s
// still passes a 1514-byte frame), and the queue holds 20 ms more, about
// what a shallow-buffered data-center switch port holds.
func tbfParams(rate int64) (bytesPerSec uint64, burst, limit uint32) {
	bytesPerSec = uint64(rate) / 8
	b := bytesPerSec / 1000
	if b < 4*1514 {
		b = 4 * 1514
	}
	l := bytesPerSec/50 + b
	if b > 1<<30 {
		b = 1 << 30
	}
	if l > 1<<31 {
		l = 1 << 31
	}
	return bytesPerSec, uint32(b), uint32(l)
}

// rateLimits shapes every link when asked: a tbf root qdisc on both veth
// ends, so each direction is held to the link's rate where it leaves its
// sender, as on a real cable.
func (l *Lab) rateLimits() error {
	if !l.opts.RateLimit && l.opts.Rate <= 0 {
		return nil
	}
	for i := 0; i < l.g.NumLinks(); i++ {
		lk := l.g.Link(topo.LinkID(i))
		rate := lk.Rate
		if l.opts.Rate > 0 {
			rate = l.opts.Rate
		}
		bps, burst, limit := tbfParams(rate)
		for _, e := range []topo.End{lk.A, lk.B} {
			ln := l.nodes[e.Node]
			name := ln.ifnames[e.Port-1]
			dev, err := ln.nl.LinkByName(name)
			if err != nil {
				return fmt.Errorf("emu: %s %s: %w", ln.ns, name, err)
			}
			q := &netlink.Tbf{
				QdiscAttrs: netlink.QdiscAttrs{LinkIndex: dev.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
				Rate:       bps,
				Limit:      limit,
				Buffer:     netlink.Xmittime(bps, burst),
			}
			if err := ln.nl.QdiscAdd(q); err != nil {
				return fmt.Errorf("emu: %s %s: tbf %d b/s: %w", ln.ns, name, rate, err)
			}
		}
	}
	return nil
}
