package host

import (
	"fmt"
	"net/netip"

	"github.com/edgefabric/edgefabric/element"
)

// ShuffleOptions describe SPAIN's shuffle workload (§10.1): an all-to-all
// memory-to-memory bulk transfer in which every host sends Bytes to every
// other host over Threads simultaneous connections, visiting destinations
// in a random order "to avoid deterministic hot spots".
type ShuffleOptions struct {
	// Bytes sent to each peer. Default 500 MB, the paper's value.
	Bytes int64
	// Threads is the number of concurrent transfers per host. Default 10.
	Threads int
	// Port is the destination port. Default DiscardPort.
	Port uint16
}

func (o *ShuffleOptions) defaults() {
	if o.Bytes <= 0 {
		o.Bytes = 500_000_000
	}
	if o.Threads <= 0 {
		o.Threads = 10
	}
	if o.Port == 0 {
		o.Port = DiscardPort
	}
}

// ShuffleHostResult is one host's share of a shuffle.
type ShuffleHostResult struct {
	Host         string  `json:"host"`
	Peers        int     `json:"peers"`
	Completed    int     `json:"completed"`
	Failed       int     `json:"failed"`
	Bytes        int64   `json:"bytes"`
	CompletionUs float64 `json:"completion_us"` // until its last transfer ended, completed or failed
	GoodputBps   float64 `json:"goodput_bps"`
	Retransmits  uint64  `json:"retransmits"`
	Timeouts     uint64  `json:"timeouts"`
	Error        string  `json:"error,omitempty"`
}

// ShuffleApp is one host's side of a shuffle: its transfers to every peer.
type ShuffleApp struct {
	done
	h       *Host
	opt     ShuffleOptions
	order   []netip.Addr
	next    int
	active  int
	ok      int
	failed  int
	bytes   int64
	rxmt    uint64
	rtos    uint64
	start   element.Time
	end     element.Time
	err     error
	firstEr error
}

// ShuffleTo starts this host's part of a shuffle toward peers (its own
// address is skipped). The destination order is a permutation drawn from
// the engine's random source.
func (h *Host) ShuffleTo(peers []netip.Addr, opt ShuffleOptions) *ShuffleApp {
	opt.defaults()
	a := &ShuffleApp{h: h, opt: opt}
	if h.env == nil || !h.ip.IsValid() {
		err := ErrNotAttached
		if h.env != nil {
			err = ErrNoAddress
		}
		a.err = fmt.Errorf("host: %s: shuffle: %w", h.cfg.Name, err)
		a.fire()
		return a
	}
	a.start = h.env.Now()
	for _, p := range peers {
		if p != h.ip {
			a.order = append(a.order, p)
		}
	}
	r := h.env.Rand()
	r.Shuffle(len(a.order), func(i, j int) { a.order[i], a.order[j] = a.order[j], a.order[i] })
	for a.active < opt.Threads && a.next < len(a.order) {
		a.launch()
	}
	if len(a.order) == 0 {
		a.end = a.start
		a.fire()
	}
	return a
}

func (a *ShuffleApp) launch() {
	dst := a.order[a.next]
	a.next++
	a.active++
	c := a.h.TCPBulk(dst, a.opt.Port, a.opt.Bytes)
	c.OnDone(func() { a.finished(c) })
}

func (a *ShuffleApp) finished(c *TCPConn) {
	a.active--
	a.rxmt += c.retransmits
	a.rtos += c.timeouts
	a.bytes += c.bytesAcked
	if c.err != nil {
		a.failed++
		if a.firstEr == nil {
			a.firstEr = c.err
		}
	} else {
		a.ok++
	}
	if a.next < len(a.order) {
		a.launch()
		return
	}
	if a.active == 0 {
		a.end = a.h.env.Now()
		a.fire()
	}
}

// Result returns the host's share so far.
func (a *ShuffleApp) Result() ShuffleHostResult {
	r := ShuffleHostResult{Host: a.h.cfg.Name, Peers: len(a.order), Completed: a.ok, Failed: a.failed, Bytes: a.bytes,
		Retransmits: a.rxmt, Timeouts: a.rtos}
	if a.fired && a.end >= a.start {
		d := a.end - a.start
		r.CompletionUs = float64(d) / float64(element.Microsecond)
		r.GoodputBps = bps(a.bytes, d)
	}
	switch {
	case a.err != nil:
		r.Error = a.err.Error()
	case a.firstEr != nil:
		r.Error = a.firstEr.Error()
	}
	return r
}

// ShuffleResult holds the metrics of SPAIN's Table 5.
type ShuffleResult struct {
	Hosts             int                 `json:"hosts"`
	BytesPerPair      int64               `json:"bytes_per_pair"`
	Threads           int                 `json:"threads"`
	MeanGoodputBps    float64             `json:"mean_goodput_per_host_bps"`
	AggregateGoodput  float64             `json:"aggregate_goodput_bps"`
	MeanCompletionUs  float64             `json:"mean_completion_per_host_us"`
	TotalTimeUs       float64             `json:"total_shuffle_time_us"`
	Failed            int                 `json:"failed_transfers"`
	PerHost           []ShuffleHostResult `json:"per_host"`
	CompletedAllHosts bool                `json:"completed"`
}

// Shuffle is a shuffle across a set of hosts.
type Shuffle struct {
	done
	apps    []*ShuffleApp
	opt     ShuffleOptions
	pending int
}

// StartShuffle starts SPAIN's shuffle among hosts: each sends opt.Bytes to
// every other. The hosts must be driven by one engine whose context this
// is (the simulator runs all of them in one loop).
func StartShuffle(hosts []*Host, opt ShuffleOptions) *Shuffle {
	opt.defaults()
	s := &Shuffle{opt: opt}
	var peers []netip.Addr
	for _, h := range hosts {
		if h.ip.IsValid() {
			peers = append(peers, h.ip)
		}
	}
	s.pending = len(hosts)
	for _, h := range hosts {
		a := h.ShuffleTo(peers, opt)
		s.apps = append(s.apps, a)
		a.OnDone(func() {
			s.pending--
			if s.pending == 0 {
				s.fire()
			}
		})
	}
	if len(hosts) == 0 {
		s.fire()
	}
	return s
}

// Apps returns the per-host apps.
func (s *Shuffle) Apps() []*ShuffleApp { return s.apps }

// Result returns the shuffle's metrics so far: per-host goodput is the
// bytes a host sent over its completion time; the aggregate is their sum
// (SPAIN Table 5); the total time runs from the start to the last host's
// completion.
func (s *Shuffle) Result() ShuffleResult {
	r := ShuffleResult{Hosts: len(s.apps), BytesPerPair: s.opt.Bytes, Threads: s.opt.Threads, CompletedAllHosts: s.fired}
	var start, end element.Time = -1, 0
	n := 0
	for _, a := range s.apps {
		hr := a.Result()
		r.PerHost = append(r.PerHost, hr)
		r.Failed += hr.Failed
		if !a.fired || a.err != nil {
			continue
		}
		n++
		r.AggregateGoodput += hr.GoodputBps
		r.MeanCompletionUs += hr.CompletionUs
		if start < 0 || a.start < start {
			start = a.start
		}
		end = max(end, a.end)
	}
	if n > 0 {
		r.MeanGoodputBps = r.AggregateGoodput / float64(n)
		r.MeanCompletionUs /= float64(n)
		r.TotalTimeUs = float64(end-start) / float64(element.Microsecond)
	}
	return r
}
