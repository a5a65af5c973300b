package wire

import (
	"fmt"
	"net/netip"
)

// AxonHello is the bootstrap message an Axon sends on every port to learn
// whether the port faces another Axon or a conventional Ethernet device
// (thesis §3.1.3). It travels as an ordinary 0x88B5 Ethernet frame, since
// the sender does not yet know the kind of link; a host ignores it, an Axon
// answers with Reply set and both mark the port as an Axon port.
//
//	+----------+-------------------------------+-------------+---------+
//	| sub 0x10 |        axon id (8)            |  port (2)   | flags   |
//	+----------+-------------------------------+-------------+---------+
//
// flags: 0x01 reply, 0x02 sender uses 8-bit hops.
type AxonHello struct {
	AxonID uint64
	Port   uint16 // sender's port the hello left on
	Reply  bool
	Wide   bool
}

const (
	axonHelloReply = 0x01
	axonHelloWide  = 0x02
)

func (m *AxonHello) Subtype() Subtype { return SubAxonHello }

func (m *AxonHello) AppendTo(b []byte) ([]byte, error) {
	var f uint8
	if m.Reply {
		f |= axonHelloReply
	}
	if m.Wide {
		f |= axonHelloWide
	}
	b = append(b, byte(SubAxonHello))
	b = appendU64(b, m.AxonID)
	b = appendU16(b, m.Port)
	return append(b, f), nil
}

func (m *AxonHello) DecodeFromBytes(b []byte) error {
	r, _ := startMsg(b, "axon hello", SubAxonHello)
	m.AxonID = r.u64("axon id")
	m.Port = r.u16("port")
	f := r.u8("flags")
	if f&^(axonHelloReply|axonHelloWide) != 0 {
		r.fail("flags %#02x: %w", f, ErrBadValue)
	}
	m.Reply, m.Wide = f&axonHelloReply != 0, f&axonHelloWide != 0
	return r.end()
}

// AxonARP is an Axon-ARP request or reply between the control planes of
// the source and target Axons (thesis §3.2.3), carried in an AxonControl
// packet whose reverse path leads back to the sender.
//
//	+----------+---------------+-------------------------+-------------------------+
//	| sub 0x11 |   seq (4)     |    real MAC (6)         |   route MAC (6)         |
//	|  or 0x12 +-------+-------+------------+------------+-------------+-----------+
//	|          | src IP (1+n)  | tgt IP (1+n)            | src port (2)| tgt port (2)
//	+----------+---------------+-------------------------+-------------+-----------+
//
// In a request, RealMAC is the source host's MAC (from its ARP request) and
// RouteMAC the MAC that indexes the route memory the source Axon allocated
// on the source host's port. In a reply they are the target host's real MAC
// and the MAC indexing the target-side route memory. Both carry the two
// hosts' IPs and the Axon ports they attach to. Seq (an addition) matches a
// reply to its request. IPs use the length-prefixed address encoding.
type AxonARP struct {
	Reply    bool
	Seq      uint32
	RealMAC  MAC
	RouteMAC MAC
	SrcIP    netip.Addr
	TgtIP    netip.Addr
	SrcPort  uint16 // Axon port of the source host
	TgtPort  uint16 // Axon port of the target host
}

func (m *AxonARP) Subtype() Subtype {
	if m.Reply {
		return SubAxonARPReply
	}
	return SubAxonARPRequest
}

func (m *AxonARP) AppendTo(b []byte) ([]byte, error) {
	if err := checkAddrs("axon-arp", m.SrcIP, m.TgtIP); err != nil {
		return b, err
	}
	b = append(b, byte(m.Subtype()))
	b = appendU32(b, m.Seq)
	b = append(b, m.RealMAC[:]...)
	b = append(b, m.RouteMAC[:]...)
	b = appendAddr(b, m.SrcIP)
	b = appendAddr(b, m.TgtIP)
	b = appendU16(b, m.SrcPort)
	return appendU16(b, m.TgtPort), nil
}

func (m *AxonARP) DecodeFromBytes(b []byte) error {
	r, s := startMsg(b, "axon-arp", SubAxonARPRequest, SubAxonARPReply)
	m.Reply = s == SubAxonARPReply
	m.Seq = r.u32("seq")
	m.RealMAC = r.mac("real mac")
	m.RouteMAC = r.mac("route mac")
	m.SrcIP = r.addr("source ip")
	m.TgtIP = r.addr("target ip")
	m.SrcPort = r.u16("source port")
	m.TgtPort = r.u16("target port")
	return r.end()
}

// AxonEtherProbe measures the latency of an external Ethernet network
// between two host ports of one Axon (thesis §3.2.2). The Axon first sends
// a Learn probe from DstPort to SrcPort so that the external switches learn
// the addresses, then a Measure probe from SrcPort to DstPort; SentAt is the
// sender's clock when the probe left, in picoseconds.
//
//	+----------+-----------------+------------+------------+-----------+-------+------------------+
//	| sub 0x13 |  axon id (8)    | src port(2)| dst port(2)|  seq (4)  | phase |  sent at (8, ps) |
//	+----------+-----------------+------------+------------+-----------+-------+------------------+
type AxonEtherProbe struct {
	AxonID  uint64
	SrcPort uint16
	DstPort uint16
	Seq     uint32
	Phase   EtherProbePhase
	SentAt  int64
}

// EtherProbePhase says which leg of an ether probe a frame is. Zero is invalid.
type EtherProbePhase uint8

const (
	EtherProbeLearn   EtherProbePhase = 1
	EtherProbeMeasure EtherProbePhase = 2
)

func (m *AxonEtherProbe) Subtype() Subtype { return SubAxonEtherProbe }

func (m *AxonEtherProbe) AppendTo(b []byte) ([]byte, error) {
	if m.Phase != EtherProbeLearn && m.Phase != EtherProbeMeasure {
		return b, fmt.Errorf("wire: axon ether probe: phase %d: %w", m.Phase, ErrBadValue)
	}
	b = append(b, byte(SubAxonEtherProbe))
	b = appendU64(b, m.AxonID)
	b = appendU16(b, m.SrcPort)
	b = appendU16(b, m.DstPort)
	b = appendU32(b, m.Seq)
	b = append(b, byte(m.Phase))
	return appendU64(b, uint64(m.SentAt)), nil
}

func (m *AxonEtherProbe) DecodeFromBytes(b []byte) error {
	r, _ := startMsg(b, "axon ether probe", SubAxonEtherProbe)
	m.AxonID = r.u64("axon id")
	m.SrcPort = r.u16("source port")
	m.DstPort = r.u16("destination port")
	m.Seq = r.u32("seq")
	m.Phase = EtherProbePhase(r.u8("phase"))
	m.SentAt = int64(r.u64("sent at"))
	if r.err == nil && m.Phase != EtherProbeLearn && m.Phase != EtherProbeMeasure {
		r.fail("phase %d: %w", m.Phase, ErrBadValue)
	}
	return r.end()
}

// ProbeDir says which unit stamped a probe record. Zero is invalid.
type ProbeDir uint8

const (
	ProbeIn  ProbeDir = 1 // input unit, as the probe arrived
	ProbeOut ProbeDir = 2 // output unit, as the probe left
)

// AxonProbeRecordLen is the size of one timestamp record.
const AxonProbeRecordLen = 10

// AxonProbeRecord is one timestamp appended to the tail of a probe by an
// input or output unit (thesis §3.2.2).
//
//	+--------+--------+---------------------------------------+
//	| port   | dir    |       time (8, picoseconds)           |
//	+--------+--------+---------------------------------------+
type AxonProbeRecord struct {
	Port uint8
	Dir  ProbeDir
	Time int64 // the stamping device's clock, picoseconds
}

// AxonProbeBody is the payload of an AxonProbe packet: who sent it, a
// sequence number, and the records the units on the path appended.
//
//	+-----------------------+-----------+------------------------------
//	|     origin (8)        |  seq (4)  | records (10 bytes each) ...
//	+-----------------------+-----------+------------------------------
type AxonProbeBody struct {
	Origin  uint64 // Axon ID of the sender, which is also the final hop
	Seq     uint32
	Records []AxonProbeRecord
}

const axonProbeFixed = 12

func (p *AxonProbeBody) AppendTo(b []byte) ([]byte, error) {
	// Checked first: on error b is left as it was.
	for i, rec := range p.Records {
		if rec.Dir != ProbeIn && rec.Dir != ProbeOut {
			return b, fmt.Errorf("wire: axon probe: record %d direction %d: %w", i, rec.Dir, ErrBadValue)
		}
	}
	b = appendU64(b, p.Origin)
	b = appendU32(b, p.Seq)
	for _, rec := range p.Records {
		b = append(b, rec.Port, byte(rec.Dir))
		b = appendU64(b, uint64(rec.Time))
	}
	return b, nil
}

// DecodeFromBytes decodes a probe body. The body has no length field: it
// runs to the end of b. Zero bytes from a record boundary to the end (no
// record is all zeros: its unit is 1 or 2) are refused as trailing bytes,
// a *TrailingError, so that DecodePadded takes them for a NIC's padding of
// a short packet (decode a received probe with DecodePadded(&body,
// Axon(pkt).Payload(), len(pkt))).
func (p *AxonProbeBody) DecodeFromBytes(b []byte) error {
	r := reader{b: b, what: "axon probe"}
	p.Origin = r.u64("origin")
	p.Seq = r.u32("seq")
	if r.err != nil {
		return r.err
	}
	end := axonProbeEnd(b)
	if rest := end - r.off; rest%AxonProbeRecordLen != 0 {
		return fmt.Errorf("wire: axon probe: %d bytes of records, not a multiple of %d: %w", rest, AxonProbeRecordLen, ErrBadLength)
	}
	p.Records = p.Records[:0]
	for r.off < end {
		rec := AxonProbeRecord{Port: r.u8("port"), Dir: ProbeDir(r.u8("dir")), Time: int64(r.u64("time"))}
		if rec.Dir != ProbeIn && rec.Dir != ProbeOut {
			return fmt.Errorf("wire: axon probe: record %d direction %d: %w", len(p.Records), rec.Dir, ErrBadValue)
		}
		p.Records = append(p.Records, rec)
	}
	return r.end()
}

// axonProbeEnd returns where the probe body b ends if what follows is
// zero padding: the first record boundary from which every byte is zero,
// or len(b).
func axonProbeEnd(b []byte) int {
	for off := axonProbeFixed; off < len(b); off += AxonProbeRecordLen {
		if allZero(b[off:]) {
			return off
		}
	}
	return len(b)
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// AxonProbeStamp is the probe unit: if pkt is an AxonProbe packet whose
// options ask for dir's timestamps, it appends a record to the tail and
// returns the longer packet (0 allocations when cap(pkt) allows);
// otherwise it returns pkt unchanged. A packet of at most MinFrameLen
// bytes may end in a NIC's zero padding (see AxonProbeBody.DecodeFromBytes):
// the record replaces it, appended where the body ends.
func AxonProbeStamp(pkt []byte, port uint8, dir ProbeDir, t int64) ([]byte, error) {
	a, err := ParseAxon(pkt)
	if err != nil {
		return pkt, err
	}
	if a.Type() != AxonProbe {
		return pkt, nil
	}
	want := uint8(AxonOptTimestampIn)
	if dir == ProbeOut {
		want = AxonOptTimestampOut
	} else if dir != ProbeIn {
		return pkt, fmt.Errorf("wire: axon probe: direction %d: %w", dir, ErrBadValue)
	}
	if a.Options()&want == 0 {
		return pkt, nil
	}
	body := a.Payload()
	if len(body) < axonProbeFixed {
		return pkt, fmt.Errorf("wire: axon probe: body of %d bytes, needs %d: %w", len(body), axonProbeFixed, ErrTruncated)
	}
	if len(pkt) <= MinFrameLen {
		// Padded by a NIC: the records end where the zeros start.
		body = body[:axonProbeEnd(body)]
	}
	if rest := len(body) - axonProbeFixed; rest%AxonProbeRecordLen != 0 {
		// AxonProbeBody.DecodeFromBytes rejects it: a record appended
		// now would not even start on a record boundary.
		return pkt, fmt.Errorf("wire: axon probe: %d bytes of records, not a multiple of %d: %w", rest, AxonProbeRecordLen, ErrBadLength)
	}
	pkt = pkt[:a.HeaderLen()+len(body)]
	n := len(pkt)
	pkt = grow(pkt, AxonProbeRecordLen)
	pkt[n] = port
	pkt[n+1] = byte(dir)
	putU64(pkt[n+2:], uint64(t))
	return pkt, nil
}
