package wire

import (
	"fmt"
	"net/netip"
)

// DumbNet control messages (DumbNet §4). They travel as 0x88B5 payloads:
// inside a DumbNet frame (inner EtherType 0x88B5) when they follow a path,
// or in a plain broadcast Ethernet frame for the switches' port
// notifications. Paths are encoded as a count byte then one byte per tag.

func appendPath(b []byte, p []uint8) ([]byte, error) {
	if err := checkTags(p); err != nil {
		return b, err
	}
	b = append(b, uint8(len(p)))
	return append(b, p...), nil
}

func (r *reader) path(field string) []uint8 {
	if !r.need(1, field) { // the length byte
		return nil
	}
	n := int(r.b[r.off])
	r.off++
	if r.err == nil && n > DumbNetMaxTags {
		r.fail("%s of %d tags, at most %d: %w", field, n, DumbNetMaxTags, ErrBadLength)
	}
	p := r.bytes(n, field)
	if r.err != nil {
		return nil
	}
	for i, t := range p {
		if t == DumbNetEnd {
			r.fail("%s tag %d is the end marker: %w", field, i, ErrBadHop)
			return nil
		}
	}
	return append([]uint8(nil), p...)
}

// DumbNetProbe is a probing message, PM (DumbNet §4.1): a marker (its
// subtype), the source's identity and the entire path it was sent on (the
// tag sequence of its header). A host that receives it answers with a
// DumbNetProbeReply along the reverse of that path.
//
//	+----------+-----------+----------------+--------------+-----+--------------
//	| sub 0x20 |  seq (4)  |  src MAC (6)   | src IP (1+n) | len | path tags ...
//	+----------+-----------+----------------+--------------+-----+--------------
type DumbNetProbe struct {
	Seq    uint32
	SrcMAC MAC
	SrcIP  netip.Addr
	Path   []uint8
}

func (m *DumbNetProbe) Subtype() Subtype { return SubDumbNetProbe }

func (m *DumbNetProbe) AppendTo(b []byte) ([]byte, error) {
	if err := checkAddrs("dumbnet probe", m.SrcIP); err != nil {
		return b, err
	}
	n := len(b)
	b = append(b, byte(SubDumbNetProbe))
	b = appendU32(b, m.Seq)
	b = append(b, m.SrcMAC[:]...)
	b = appendAddr(b, m.SrcIP)
	b, err := appendPath(b, m.Path)
	if err != nil {
		return b[:n], err
	}
	return b, nil
}

func (m *DumbNetProbe) DecodeFromBytes(b []byte) error {
	r, _ := startMsg(b, "dumbnet probe", SubDumbNetProbe)
	m.Seq = r.u32("seq")
	m.SrcMAC = r.mac("source mac")
	m.SrcIP = r.addr("source ip")
	m.Path = r.path("path")
	return r.end()
}

// DumbNetProbeReply is a host's answer to a PM: its identity, the
// controller's MAC if it knows it (zero otherwise), and the probe's seq and
// path so that the prober can tell which probe got through.
//
//	+----------+-----------+----------------+--------------+------------------+-----+------
//	| sub 0x21 |  seq (4)  |  host MAC (6)  | host IP(1+n) | controller MAC(6)| len | path
//	+----------+-----------+----------------+--------------+------------------+-----+------
type DumbNetProbeReply struct {
	Seq        uint32
	HostMAC    MAC
	HostIP     netip.Addr
	Controller MAC
	Path       []uint8
}

func (m *DumbNetProbeReply) Subtype() Subtype { return SubDumbNetProbeReply }

func (m *DumbNetProbeReply) AppendTo(b []byte) ([]byte, error) {
	if err := checkAddrs("dumbnet probe reply", m.HostIP); err != nil {
		return b, err
	}
	n := len(b)
	b = append(b, byte(SubDumbNetProbeReply))
	b = appendU32(b, m.Seq)
	b = append(b, m.HostMAC[:]...)
	b = appendAddr(b, m.HostIP)
	b = append(b, m.Controller[:]...)
	b, err := appendPath(b, m.Path)
	if err != nil {
		return b[:n], err
	}
	return b, nil
}

func (m *DumbNetProbeReply) DecodeFromBytes(b []byte) error {
	r, _ := startMsg(b, "dumbnet probe reply", SubDumbNetProbeReply)
	m.Seq = r.u32("seq")
	m.HostMAC = r.mac("host mac")
	m.HostIP = r.addr("host ip")
	m.Controller = r.mac("controller mac")
	m.Path = r.path("path")
	return r.end()
}

// DumbNetSwitchID is a switch's answer to tag 0 (DumbNet §4.1). The switch
// pops the 0, sends this message along the rest of the path and echoes the
// query's payload after its ID (Echo, up to the end of the message) so that
// the prober can match it to its probe.
//
//	+----------+-------------------------------+--------------------------
//	| sub 0x22 |        switch id (8)          | echo of the query payload
//	+----------+-------------------------------+--------------------------
type DumbNetSwitchID struct {
	SwitchID uint64
	Echo     []byte
}

func (m *DumbNetSwitchID) Subtype() Subtype { return SubDumbNetSwitchID }

func (m *DumbNetSwitchID) AppendTo(b []byte) ([]byte, error) {
	b = append(b, byte(SubDumbNetSwitchID))
	b = appendU64(b, m.SwitchID)
	return append(b, m.Echo...), nil
}

func (m *DumbNetSwitchID) DecodeFromBytes(b []byte) error {
	r, _ := startMsg(b, "dumbnet switch id", SubDumbNetSwitchID)
	m.SwitchID = r.u64("switch id")
	if r.err != nil {
		return r.err
	}
	m.Echo = append(m.Echo[:0], b[r.off:]...)
	if len(m.Echo) == 0 {
		m.Echo = nil
	}
	return nil
}

// PortState is a link state in a notification. Zero is invalid.
type PortState uint8

const (
	PortUp   PortState = 1
	PortDown PortState = 2
)

func (s PortState) String() string {
	switch s {
	case PortUp:
		return "up"
	case PortDown:
		return "down"
	}
	return fmt.Sprintf("PortState(%d)", uint8(s))
}

func (r *reader) state(field string) PortState {
	s := PortState(r.u8(field))
	if r.err == nil && s != PortUp && s != PortDown {
		r.fail("%s %d: %w", field, s, ErrBadValue)
	}
	return s
}

func checkState(what string, s PortState) error {
	if s != PortUp && s != PortDown {
		return fmt.Errorf("wire: %s: state %d: %w", what, s, ErrBadValue)
	}
	return nil
}

// DumbNetPortStatus is a switch's port up/down notification (DumbNet §4.2
// stage 1), broadcast in a plain Ethernet frame (dst ff:ff:ff:ff:ff:ff,
// EtherType 0x88B5). A switch that receives one from a neighbour decrements
// HopLimit and re-broadcasts it on its other ports while HopLimit stays
// above zero; the limit (5 in the paper) prevents loops without a tree.
//
//	+----------+-------------------------------+-----------+-------+-----------+-----------+
//	| sub 0x23 |        switch id (8)          | port (2)  | state | hop limit |  seq (4)  |
//	+----------+-------------------------------+-----------+-------+-----------+-----------+
type DumbNetPortStatus struct {
	SwitchID uint64
	Port     uint16
	State    PortState
	HopLimit uint8
	Seq      uint32 // per-switch counter, lets hosts suppress duplicates
}

// DumbNetDefaultHopLimit is the paper's hop limit for port notifications.
const DumbNetDefaultHopLimit = 5

func (m *DumbNetPortStatus) Subtype() Subtype { return SubDumbNetPortStatus }

func (m *DumbNetPortStatus) AppendTo(b []byte) ([]byte, error) {
	if err := checkState("dumbnet port status", m.State); err != nil {
		return b, err
	}
	b = append(b, byte(SubDumbNetPortStatus))
	b = appendU64(b, m.SwitchID)
	b = appendU16(b, m.Port)
	b = append(b, byte(m.State), m.HopLimit)
	return appendU32(b, m.Seq), nil
}

func (m *DumbNetPortStatus) DecodeFromBytes(b []byte) error {
	r, _ := startMsg(b, "dumbnet port status", SubDumbNetPortStatus)
	m.SwitchID = r.u64("switch id")
	m.Port = r.u16("port")
	m.State = r.state("state")
	m.HopLimit = r.u8("hop limit")
	m.Seq = r.u32("seq")
	return r.end()
}

// dumbNetPortStatusLen is the size of a port-status message, subtype
// included.
const dumbNetPortStatusLen = 17

// DumbNetPortStatusHop decrements the hop limit of a port-status message
// in place (b starts at the subtype byte) and reports whether the switch
// should re-broadcast it. It checks what DecodeMessage checks (length,
// subtype, state), so that a switch never floods a notification every
// host would drop; on error b is unchanged. 0 allocations.
func DumbNetPortStatusHop(b []byte) (forward bool, err error) {
	if len(b) > 0 && Subtype(b[0]) != SubDumbNetPortStatus {
		return false, fmt.Errorf("wire: dumbnet port status: subtype %#02x: %w", b[0], ErrUnknownType)
	}
	if len(b) != dumbNetPortStatusLen {
		return false, fmt.Errorf("wire: dumbnet port status: %d bytes, want %d: %w", len(b), dumbNetPortStatusLen, ErrBadLength)
	}
	if err := checkState("dumbnet port status", PortState(b[11])); err != nil {
		return false, err
	}
	if b[12] == 0 {
		return false, nil
	}
	b[12]--
	return b[12] > 0, nil
}

// DumbNetHostNotify is the host-to-host flood of stage 1 (DumbNet §4.2): a
// host that learnt of a port change from a switch tells the other hosts,
// which drop duplicates by (Origin, Seq). SwitchSeq is the Seq of the
// switch's DumbNetPortStatus the origin received: hosts keep the last
// one they applied per (SwitchID, Port), as for the switch's own
// broadcast, and drop a copy that is not newer, so that a copy delayed
// past the switch's next alarm for the port cannot undo it. Switches
// number their alarms from 1 and skip 0 when the counter wraps; 0 means
// the number is unknown (a sender that does not fill it in), and such a
// notification is deduplicated by (Origin, Seq) only.
//
//	+----------+--------------+-----------+-------------------------+-----------+-------+----------------+
//	| sub 0x24 |  origin (6)  |  seq (4)  |     switch id (8)       |  port (2) | state | switch seq (4) |
//	+----------+--------------+-----------+-------------------------+-----------+-------+----------------+
type DumbNetHostNotify struct {
	Origin    MAC
	Seq       uint32
	SwitchID  uint64
	Port      uint16
	State     PortState
	SwitchSeq uint32 // the switch's DumbNetPortStatus.Seq; 0: unknown
}

func (m *DumbNetHostNotify) Subtype() Subtype { return SubDumbNetHostNotify }

func (m *DumbNetHostNotify) AppendTo(b []byte) ([]byte, error) {
	if err := checkState("dumbnet host notify", m.State); err != nil {
		return b, err
	}
	b = append(b, byte(SubDumbNetHostNotify))
	b = append(b, m.Origin[:]...)
	b = appendU32(b, m.Seq)
	b = appendU64(b, m.SwitchID)
	b = appendU16(b, m.Port)
	b = append(b, byte(m.State))
	return appendU32(b, m.SwitchSeq), nil
}

func (m *DumbNetHostNotify) DecodeFromBytes(b []byte) error {
	r, _ := startMsg(b, "dumbnet host notify", SubDumbNetHostNotify)
	m.Origin = r.mac("origin")
	m.Seq = r.u32("seq")
	m.SwitchID = r.u64("switch id")
	m.Port = r.u16("port")
	m.State = r.state("state")
	m.SwitchSeq = r.u32("switch seq")
	return r.end()
}

// DumbNetLink is one link of a topology patch or a path graph: switch A's
// port to switch B's port, with flags.
//
//	+-----------------+----------+-----------------+----------+-------+
//	|  switch A (8)   | port A(2)|  switch B (8)   | port B(2)| flags |
//	+-----------------+----------+-----------------+----------+-------+
type DumbNetLink struct {
	A     uint64
	APort uint16
	B     uint64
	BPort uint16
	Flags LinkFlags
}

// LinkFlags qualify a DumbNetLink.
type LinkFlags uint8

const (
	LinkUp      LinkFlags = 0x01 // the link works (clear: it failed)
	LinkPrimary LinkFlags = 0x02 // on the primary path of a path graph
	LinkBackup  LinkFlags = 0x04 // on the backup path
	LinkDetour  LinkFlags = 0x08 // on a local detour
	linkMask              = LinkUp | LinkPrimary | LinkBackup | LinkDetour
)

const dumbNetLinkLen = 21

func appendLinks(b []byte, what string, links []DumbNetLink) ([]byte, error) {
	if len(links) > 0xffff {
		return b, fmt.Errorf("wire: %s: %d links, at most 65535: %w", what, len(links), ErrBadLength)
	}
	b = appendU16(b, uint16(len(links)))
	for i, l := range links {
		if l.Flags&^linkMask != 0 {
			return b, fmt.Errorf("wire: %s: link %d flags %#02x: %w", what, i, l.Flags, ErrBadValue)
		}
		b = appendU64(b, l.A)
		b = appendU16(b, l.APort)
		b = appendU64(b, l.B)
		b = appendU16(b, l.BPort)
		b = append(b, byte(l.Flags))
	}
	return b, nil
}

func (r *reader) links() []DumbNetLink {
	n := int(r.u16("link count"))
	if !r.need(n*dumbNetLinkLen, "links") {
		return nil
	}
	var ls []DumbNetLink
	if n > 0 {
		ls = make([]DumbNetLink, n)
	}
	for i := range ls {
		ls[i] = DumbNetLink{A: r.u64("switch a"), APort: r.u16("port a"), B: r.u64("switch b"), BPort: r.u16("port b"), Flags: LinkFlags(r.u8("flags"))}
		if ls[i].Flags&^linkMask != 0 {
			r.fail("link %d flags %#02x: %w", i, ls[i].Flags, ErrBadValue)
		}
	}
	return ls
}

// DumbNetTopoPatch is the controller's topology patch (DumbNet §4.2 stage
// 2), flooded to every host: the links whose state changed, stamped with
// the topology version they lead to.
//
//	+----------+-------------------------------+-----------+----------------------
//	| sub 0x25 |        version (8)            | count (2) | links (21 bytes each)
//	+----------+-------------------------------+-----------+----------------------
type DumbNetTopoPatch struct {
	Version uint64
	Links   []DumbNetLink
}

func (m *DumbNetTopoPatch) Subtype() Subtype { return SubDumbNetTopoPatch }

func (m *DumbNetTopoPatch) AppendTo(b []byte) ([]byte, error) {
	n := len(b)
	b = append(b, byte(SubDumbNetTopoPatch))
	b = appendU64(b, m.Version)
	b, err := appendLinks(b, "dumbnet topo patch", m.Links)
	if err != nil {
		return b[:n], err
	}
	return b, nil
}

func (m *DumbNetTopoPatch) DecodeFromBytes(b []byte) error {
	r, _ := startMsg(b, "dumbnet topo patch", SubDumbNetTopoPatch)
	m.Version = r.u64("version")
	m.Links = r.links()
	return r.end()
}

// DumbNetPathQuery asks the controller for a path graph from Src to Dst
// (DumbNet §4.3); DstIP may be zero when only the MAC is known.
//
//	+----------+-----------+--------------+--------------+--------------+
//	| sub 0x26 | query (4) |  src MAC (6) |  dst MAC (6) | dst IP (1+n) |
//	+----------+-----------+--------------+--------------+--------------+
type DumbNetPathQuery struct {
	QueryID uint32
	Src     MAC
	Dst     MAC
	DstIP   netip.Addr
}

func (m *DumbNetPathQuery) Subtype() Subtype { return SubDumbNetPathQuery }

func (m *DumbNetPathQuery) AppendTo(b []byte) ([]byte, error) {
	if err := checkAddrs("dumbnet path query", m.DstIP); err != nil {
		return b, err
	}
	b = append(b, byte(SubDumbNetPathQuery))
	b = appendU32(b, m.QueryID)
	b = append(b, m.Src[:]...)
	b = append(b, m.Dst[:]...)
	return appendAddr(b, m.DstIP), nil
}

func (m *DumbNetPathQuery) DecodeFromBytes(b []byte) error {
	r, _ := startMsg(b, "dumbnet path query", SubDumbNetPathQuery)
	m.QueryID = r.u32("query id")
	m.Src = r.mac("source mac")
	m.Dst = r.mac("destination mac")
	m.DstIP = r.addr("destination ip")
	return r.end()
}

// DumbNetPathReply carries a path graph (DumbNet §4.3): where the two hosts
// attach, and the links of the subgraph flagged primary, detour or backup.
//
//	+----------+-----------+---------------+--------------+--------------+
//	| sub 0x27 | query (4) |  version (8)  | src MAC (6)  | dst MAC (6)  |
//	+----------+-----------+--+------------+--------------+--------------+
//	| src switch (8)| src port (2) | dst switch (8) | dst port (2) | count (2) | links
//	+---------------+--------------+----------------+--------------+-----------+------
type DumbNetPathReply struct {
	QueryID   uint32
	Version   uint64
	Src       MAC
	Dst       MAC
	SrcSwitch uint64
	SrcPort   uint16
	DstSwitch uint64
	DstPort   uint16
	Links     []DumbNetLink
}

func (m *DumbNetPathReply) Subtype() Subtype { return SubDumbNetPathReply }

func (m *DumbNetPathReply) AppendTo(b []byte) ([]byte, error) {
	n := len(b)
	b = append(b, byte(SubDumbNetPathReply))
	b = appendU32(b, m.QueryID)
	b = appendU64(b, m.Version)
	b = append(b, m.Src[:]...)
	b = append(b, m.Dst[:]...)
	b = appendU64(b, m.SrcSwitch)
	b = appendU16(b, m.SrcPort)
	b = appendU64(b, m.DstSwitch)
	b = appendU16(b, m.DstPort)
	b, err := appendLinks(b, "dumbnet path reply", m.Links)
	if err != nil {
		return b[:n], err
	}
	return b, nil
}

func (m *DumbNetPathReply) DecodeFromBytes(b []byte) error {
	r, _ := startMsg(b, "dumbnet path reply", SubDumbNetPathReply)
	m.QueryID = r.u32("query id")
	m.Version = r.u64("version")
	m.Src = r.mac("source mac")
	m.Dst = r.mac("destination mac")
	m.SrcSwitch = r.u64("source switch")
	m.SrcPort = r.u16("source port")
	m.DstSwitch = r.u64("destination switch")
	m.DstPort = r.u16("destination port")
	m.Links = r.links()
	return r.end()
}

// DumbNetNeighbors tells a host whom to flood a failure notification to
// (DumbNet §4.2 stage 1: "the message starts from the hosts on the same
// switch, then goes to hosts on the neighboring switches"): each
// neighbour's MAC and the tags from this host's switch to it, twice when
// the fabric allows: a second path sharing no link with the first, so that
// the failure being announced cannot cut both. As of a topology version.
//
//	+----------+---------------+-----------+------------------------------------------------
//	| sub 0x28 |  version (8)  | count (1) | per neighbour: MAC (6), len, tags, len, alt tags
//	+----------+---------------+-----------+------------------------------------------------
type DumbNetNeighbors struct {
	Version   uint64
	Neighbors []DumbNetNeighbor
}

// DumbNetNeighbor is one entry of DumbNetNeighbors; Alt is empty when no
// link-disjoint second path exists.
type DumbNetNeighbor struct {
	MAC  MAC
	Path []uint8
	Alt  []uint8
}

// DumbNetMaxNeighbors bounds a neighbour list (one count byte).
const DumbNetMaxNeighbors = 255

func (m *DumbNetNeighbors) Subtype() Subtype { return SubDumbNetNeighbors }

func (m *DumbNetNeighbors) AppendTo(b []byte) ([]byte, error) {
	if len(m.Neighbors) > DumbNetMaxNeighbors {
		return b, fmt.Errorf("wire: dumbnet neighbors: %d, at most %d: %w", len(m.Neighbors), DumbNetMaxNeighbors, ErrBadLength)
	}
	n := len(b)
	b = append(b, byte(SubDumbNetNeighbors))
	b = appendU64(b, m.Version)
	b = append(b, uint8(len(m.Neighbors)))
	for i, nb := range m.Neighbors {
		b = append(b, nb.MAC[:]...)
		var err error
		if b, err = appendPath(b, nb.Path); err == nil {
			b, err = appendPath(b, nb.Alt)
		}
		if err != nil {
			return b[:n], fmt.Errorf("wire: dumbnet neighbors: neighbour %d: %w", i, err)
		}
	}
	return b, nil
}

func (m *DumbNetNeighbors) DecodeFromBytes(b []byte) error {
	r, _ := startMsg(b, "dumbnet neighbors", SubDumbNetNeighbors)
	m.Version = r.u64("version")
	n := int(r.u8("neighbour count"))
	m.Neighbors = nil
	for i := 0; i < n && r.err == nil; i++ {
		nb := DumbNetNeighbor{MAC: r.mac("neighbour mac"), Path: r.path("neighbour path"), Alt: r.path("neighbour alternative path")}
		if r.err == nil {
			m.Neighbors = append(m.Neighbors, nb)
		}
	}
	return r.end()
}
