package emu

import (
	"fmt"
	"math"

	"github.com/edgefabric/edgefabric/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// tbfBucketMin is the least bucket: four full host frames, and never less
// than one full fabric frame (FabricMTU, its Ethernet header and a VLAN
// tag an element may send) with room to spare for the kernel's rounding of
// the bucket to whole microseconds and 64 ns ticks (under a byte per tick
// at the rates where this floor applies). tbf drops every frame larger
// than its bucket without a trace in the emulator's counters (the kernel
// logs "burst ... is lower than device mtu"), so a smaller bucket lost
// every jumbo frame on links below 72 Mb/s.
const tbfBucketMin = max(4*1514, FabricMTU+14+4+64)

// minShapedRate is the slowest rate tbf is given. The bucket goes to the
// kernel as a time in 64 ns ticks, in 32 bits (at most 274 s), besides its
// size in bytes (addTBF): below about 270 b/s a jumbo bucket overflowed
// the ticks (a garbage bucket), and below 8 b/s the rate in bytes per
// second was 0, which tbf takes as no limit at all.
const minShapedRate = 1000

// tbfParams computes a token bucket for rate bits/s: the bucket holds 1 ms
// of traffic but at least tbfBucketMin (so that a bucket at 10 Mb/s still
// passes a jumbo frame), and the queue holds 20 ms more, about what a
// shallow-buffered data-center switch port holds.
func tbfParams(rate int64) (bytesPerSec uint64, burst, limit uint32) {
	bytesPerSec = uint64(rate) / 8
	b := bytesPerSec / 1000
	if b < tbfBucketMin {
		b = tbfBucketMin
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

// shapedRate is the rate link l is shaped to: opts.Rate when given, else
// the topology's; 0 when links are not shaped.
func shapedRate(g *topo.Graph, l topo.LinkID, opts Options) int64 {
	switch {
	case opts.Rate > 0:
		return opts.Rate
	case opts.RateLimit:
		return g.Link(l).Rate
	}
	return 0
}

// checkRates refuses, before anything is built, a link that would be
// shaped below minShapedRate, and a negative rate (which Up refuses:
// CheckScheme must refuse what Up would).
func checkRates(g *topo.Graph, opts Options) error {
	if opts.Rate < 0 {
		return fmt.Errorf("emu: %w: rate %d", ErrBadOption, opts.Rate)
	}
	for i := range g.NumLinks() {
		if r := shapedRate(g, topo.LinkID(i), opts); r != 0 && r < minShapedRate {
			lk := g.Link(topo.LinkID(i))
			return fmt.Errorf("emu: %w: link %s-%s at %d b/s: links are shaped no slower than %d b/s", ErrBadOption,
				g.Node(lk.A.Node).Name, g.Node(lk.B.Node).Name, r, minShapedRate)
		}
	}
	return nil
}

// rateLimits shapes every link when asked: a tbf root qdisc on both veth
// ends, so each direction is held to the link's rate where it leaves its
// sender, as on a real cable.
func (l *Lab) rateLimits() error {
	if !l.opts.RateLimit && l.opts.Rate <= 0 {
		return nil
	}
	if err := checkRates(l.g, l.opts); err != nil {
		return err
	}
	for i := 0; i < l.g.NumLinks(); i++ {
		lk := l.g.Link(topo.LinkID(i))
		rate := shapedRate(l.g, topo.LinkID(i), l.opts)
		bps, burst, limit := tbfParams(rate)
		for _, e := range []topo.End{lk.A, lk.B} {
			ln := l.nodes[e.Node]
			name := ln.ifnames[e.Port-1]
			dev, err := ln.nl.LinkByName(name)
			if err != nil {
				return fmt.Errorf("emu: %s %s: %w", ln.ns, name, err)
			}
			if err := inNS(ln.h, func() error { return addTBF(dev.Attrs().Index, bps, burst, limit) }); err != nil {
				return fmt.Errorf("emu: %s %s: tbf %d b/s: %w", ln.ns, name, rate, err)
			}
		}
	}
	return nil
}

// addTBF adds a tbf root qdisc to interface ifindex: rate bps bytes/s, a
// bucket of burst bytes, a queue of limit bytes. It runs on a thread
// inside the interface's namespace (the request's socket is opened there).
//
// The bucket goes to the kernel as a byte count (TCA_TBF_BURST) besides
// the usual time in ticks: from the time alone the kernel caps the bucket
// at 2^32-1 ns (about 4.3 s of traffic) and drops every frame larger than
// what the rate sends in that time, at 1 kb/s every frame over 536 bytes
// (every full-size host frame), below 17 kb/s every jumbo frame. The
// netlink package's Tbf has no field for it, so the request is built by
// hand, as the package builds it otherwise.
func addTBF(ifindex int, bps uint64, burst, limit uint32) error {
	req := nl.NewNetlinkRequest(unix.RTM_NEWQDISC, unix.NLM_F_CREATE|unix.NLM_F_EXCL|unix.NLM_F_ACK)
	req.AddData(&nl.TcMsg{Family: nl.FAMILY_ALL, Ifindex: int32(ifindex), Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT})
	req.AddData(nl.NewRtAttr(nl.TCA_KIND, nl.ZeroTerminated("tbf")))
	opt := nl.TcTbfQopt{Limit: limit, Buffer: netlink.Xmittime(bps, burst)}
	opt.Rate.Rate = uint32(min(bps, math.MaxUint32))
	options := nl.NewRtAttr(nl.TCA_OPTIONS, nil)
	options.AddRtAttr(nl.TCA_TBF_PARMS, opt.Serialize())
	if bps >= 1<<32 {
		options.AddRtAttr(nl.TCA_TBF_RATE64, nl.Uint64Attr(bps))
	}
	options.AddRtAttr(nl.TCA_TBF_BURST, nl.Uint32Attr(burst))
	req.AddData(options)
	_, err := req.Execute(unix.NETLINK_ROUTE, 0)
	return err
}
