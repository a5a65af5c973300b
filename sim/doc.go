// Package sim is edgefabric's deterministic discrete-event simulator: it
// drives the same sans-IO elements the emulator runs (switch data planes,
// host agents, host stacks) over a topology whose links have a rate, a
// propagation delay and, per direction, an output queue with a byte limit
// and drop-tail.
//
// Time is integer picoseconds (element.Time). Events are ordered by (time,
// sequence number), so two runs with the same graph, elements and seed are
// identical bit for bit; TraceHash summarizes a run for asserting that.
//
// Use:
//
//	s, err := sim.New(g, sim.Options{Seed: 1})
//	s.Place(sw, bridge)               // a switch's data plane, ports 1..N
//	s.PlaceHost(h, agent, stack)      // a host: agent may be nil
//	s.SetTiming(sw, sim.Timing{Latency: 500 * element.Nanosecond, CutThrough: 6})
//	s.At(2*element.Second, func() { s.SetLink(l, false) })
//	s.Run(10 * element.Second)
//	st, _ := s.PortStats(sw, 1)       // frames, bytes, drops by reason
//
// The link model: a frame given to Env.Send (an Ethernet frame without
// preamble or FCS) is padded to 60 bytes, gets a 4-byte FCS and an 8-byte
// preamble, and is followed by a 12-byte inter-frame gap (Framing). It
// waits in the sending port's FIFO queue, is serialized at the link rate and
// arrives one propagation delay later. A store-and-forward node's element
// gets Receive when the frame's last byte is in, plus the node's processing
// latency; a cut-through node's element gets it once the first CutThrough
// bytes are in, and what it sends from that call may start at once but
// never ends before the input's tail has arrived. A frame corrupted by a
// Fault carries a bad FCS: a store-and-forward receiver drops it, a
// cut-through one forwards it poisoned until a node buffers it whole (a host,
// a store-and-forward switch, or a congested cut-through port), which drops
// it (Axon §3.3.1).
//
// Since a FIFO link's future is fixed once a frame is queued, each link
// direction keeps a single pending event (its oldest frame's delivery), as
// htsim's Pipe does: the event list grows with busy links, not with traffic.
//
// Ownership follows element.Env: Send takes the frame; the frame passed to
// Receive is valid only during the call, unless the element hands it on to
// one Send (forwarding in place). Buffers handed out by the Env's optional
// Alloc (see Allocator) are recycled after delivery (one forwarded in
// place, after its last).
//
// Failures: SetLink and SetNode, called at scheduled times with At, take
// links and nodes down and back up; both ends of every affected link get
// LinkChange, and every frame lost on the way is counted by reason in
// PortStats. Capture records any port's traffic through a PacketWriter (a
// pcap file writer).
package sim
