package sim

import (
	"fmt"
	"slices"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/topo"
)

// Fault is a link impairment, drawn for every frame as it is queued for
// transmission, with draws from a random source seeded by the run seed and
// the link direction (so that faulting one link leaves the others' draws
// alone). It plays the role of smoltcp's FaultInjector wrapper.
type Fault struct {
	// Loss is the probability that a frame vanishes on the wire: it is
	// transmitted (it occupies the link, is in TxFrames and the sender's
	// capture) and never arrives (counted as fault_loss on the sending
	// port when it would have).
	Loss float64
	// Corrupt is the probability that one random bit of the frame flips
	// and its FCS no longer matches: the next store-and-forward receiver
	// drops it (bad_fcs); a cut-through receiver forwards it, poisoned, as
	// Axon §3.3.1 describes.
	Corrupt float64
}

func (f *Fault) active() bool { return f.Loss > 0 || f.Corrupt > 0 }

// SetFault impairs both directions of link l (a zero Fault clears it).
func (s *Sim) SetFault(l topo.LinkID, f Fault) error {
	if l < 0 || int(l) >= s.g.NumLinks() {
		return fmt.Errorf("sim: link %d: %w", l, ErrNoSuchLink)
	}
	if !(f.Loss >= 0 && f.Loss <= 1 && f.Corrupt >= 0 && f.Corrupt <= 1) {
		return fmt.Errorf("sim: link %d fault %+v: %w: probabilities must be in [0,1]", l, f, ErrBadOption)
	}
	s.pipes[2*l].fault = f
	s.pipes[2*l+1].fault = f
	return nil
}

// PacketWriter records frames with their time: a pcap file writer (the
// wire package's PcapWriter) or a test's recorder.
type PacketWriter interface {
	WritePacket(t element.Time, frame []byte) error
}

// Capture records every frame sent on port p of node n (at the time its
// transmission starts; one still queued when the link fails never starts
// and is not in it) and every frame handed to the element on that port (at
// the time Receive is called), in time order. Frames lost on the way are
// in the capture of the port that sent them, not of the one they were
// going to; the port's drop counters have them. A nil w stops the
// capture. The first write error is reported by Err.
func (s *Sim) Capture(n topo.NodeID, p element.Port, w PacketWriter) error {
	nd, err := s.node(n)
	if err != nil {
		return err
	}
	if p < 1 || int(p) > len(nd.ports) {
		return fmt.Errorf("sim: capture %s port %d: %w", nd.name, p, topo.ErrBadPort)
	}
	// Frames that started under the old writer go to it first.
	if out := nd.ports[p-1].out; out >= 0 {
		s.pipes[out].capture(s.now)
	}
	nd.ports[p-1].capture = w
	if w != nil && !slices.Contains(s.captured, nd.ports[p-1].out) && nd.ports[p-1].out >= 0 {
		s.captured = append(s.captured, nd.ports[p-1].out)
	}
	return nil
}
