package sim

import (
	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/wire"
)

// Pcap adapts a wire.PcapWriter to PacketWriter: every frame is recorded as
// an Ethernet frame stamped with its virtual time (picoseconds since the
// start of the run, which the writer turns into nanoseconds past its epoch).
type Pcap struct{ W *wire.PcapWriter }

// WritePacket records frame at virtual time t.
func (p Pcap) WritePacket(t element.Time, frame []byte) error {
	return p.W.WriteEthernet(int64(t), frame)
}
