package stp

import (
	"fmt"

	"github.com/edgefabric/edgefabric/element"
)

// The Rapid Spanning Tree Protocol (802.1D-2004 clause 17), as the Common
// and Internal Spanning Tree of 802.1Q-2005 clause 13 refines it for a
// bridge alone in its region: the state machines of §17.22–17.31, each a
// function that makes at most one transition and says whether it made
// one, run over every port until none moves (as a conforming
// implementation evaluates them, and as mstpd, the Linux daemon, does).
// Names follow the standard's, so that the code can be read beside it.
//
// What RSTP changes against 802.1D-1998 (the rest of this package): a
// port that loses its root port's information turns an alternate port
// into the root port at once; a designated port on a point-to-point link
// forwards as soon as its neighbour agrees to its proposal (the neighbour
// first puts its own designated ports into discarding, "sync"); a port
// that hears no bridge becomes an edge port and forwards; information
// ages after three missed hellos instead of max age; and a topology
// change flushes the MAC tables of the other ports at once instead of
// shortening their aging.
//
// Choices the standard leaves or that we make: every link is full duplex
// and point to point (operPointToPointMAC); AutoEdge is on for every port
// and Config.Edge sets AdminEdge; ForceProtocolVersion is 2; timers count
// whole seconds, ticked once a second, so the configured timers must be
// whole seconds (validate); a port's Hello Time is always the bridge's own
// (as 802.1Q-2011 has it, where 802.1D-2004 copies the sender's), so a
// neighbour's hello is neither recorded nor compared.

// Protocol selects the spanning tree protocol of a bridge.
type Protocol uint8

const (
	// ProtocolSTP is 802.1D-1998's spanning tree protocol (clause 8).
	ProtocolSTP Protocol = iota
	// ProtocolRSTP is 802.1D-2004's rapid spanning tree protocol
	// (clause 17).
	ProtocolRSTP
)

func (p Protocol) String() string {
	switch p {
	case ProtocolSTP:
		return "stp"
	case ProtocolRSTP:
		return "rstp"
	}
	return fmt.Sprintf("protocol(%d)", uint8(p))
}

// RSTP's fixed parameters (802.1D-2004 Table 17-1).
const (
	// MigrateTime is how long a port waits before it changes protocol
	// (and, on a point-to-point link, before an unanswered designated
	// port becomes an edge port): 3 s.
	MigrateTime = 3
	// TxHoldCount is the most BPDUs a port sends in a second.
	TxHoldCount = 6
)

// prioVec is a spanning tree priority vector (§17.6): root bridge, root
// path cost, designated bridge, designated port. Lower is better.
type prioVec struct {
	root   BridgeID
	cost   uint32
	bridge BridgeID
	port   PortID
}

func (a prioVec) cmp(b prioVec) int {
	switch {
	case a.root != b.root:
		return cmpU(uint64(a.root), uint64(b.root))
	case a.cost != b.cost:
		return cmpU(uint64(a.cost), uint64(b.cost))
	case a.bridge != b.bridge:
		return cmpU(uint64(a.bridge), uint64(b.bridge))
	}
	return cmpU(uint64(a.port), uint64(b.port))
}

func cmpU(a, b uint64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

// rtimes are the timer values a priority vector travels with (§17.19.18),
// in whole seconds. Hello Time is not among them: see above.
type rtimes struct {
	msgAge, maxAge, fwdDelay int
}

// infoIs (§17.19.10) says where a port's priority vector came from.
type infoIs uint8

const (
	infoDisabled infoIs = iota
	infoAged
	infoMine
	infoReceived
)

// rcvdInfo is rcvInfo's verdict on a received BPDU (§17.21.8).
type rcvdInfo uint8

const (
	superiorDesignatedInfo rcvdInfo = iota
	repeatedDesignatedInfo
	inferiorDesignatedInfo
	inferiorRootAlternateInfo
	otherInfo
)

// The states of the per-port machines.
const (
	// Port Receive (§17.23).
	prxDiscard uint8 = iota
	prxReceive
)

const (
	// Port Protocol Migration (§17.24).
	ppmCheckingRSTP uint8 = iota
	ppmSelectingSTP
	ppmSensing
)

const (
	// Bridge Detection (§17.25).
	bdmEdge uint8 = iota
	bdmNotEdge
)

const (
	// Port Transmit (§17.26).
	ptxInit uint8 = iota
	ptxIdle
	ptxPeriodic
	ptxConfig
	ptxTCN
	ptxRSTP
)

const (
	// Port Information (§17.27).
	pimDisabled uint8 = iota
	pimAged
	pimUpdate
	pimCurrent
	pimReceive
	pimSuperiorDesignated
	pimRepeatedDesignated
	pimInferiorDesignated
	pimNotDesignated
	pimOther
)

const (
	// Port Role Transitions (§17.29).
	prtInitPort uint8 = iota
	prtDisablePort
	prtDisabledPort
	prtRootPort
	prtRootProposed
	prtRootAgreed
	prtRootSynced
	prtReroot
	prtRootForward
	prtRootLearn
	prtRerooted
	prtDesignatedPort
	prtDesignatedPropose
	prtDesignatedAgreed
	prtDesignatedSynced
	prtDesignatedRetired
	prtDesignatedForward
	prtDesignatedLearn
	prtDesignatedDiscard
	prtBlockPort
	prtAlternatePort
	prtAlternateProposed
	prtAlternateAgreed
	prtBackupPort
)

const (
	// Port State Transition (§17.30).
	pstDiscarding uint8 = iota
	pstLearning
	pstForwarding
)

const (
	// Topology Change (§17.31).
	tcmInactive uint8 = iota
	tcmLearning
	tcmDetected
	tcmActive
	tcmNotifiedTCN
	tcmNotifiedTC
	tcmPropagating
	tcmAcknowledged
)

// rport is one port's RSTP state: the variables of §17.19 and the state of
// each per-port machine.
type rport struct {
	on bool // takes part (not a local port, not beyond MaxPort)

	prx, ppm, bdm, ptx, pim, prt, pst, tcm uint8

	portEnabled                   bool
	adminEdge, autoEdge, operEdge bool

	agree, agreed, disputed, fdbFlush     bool
	forward, forwarding, learn, learning  bool
	mcheck, newInfo, proposed, proposing  bool
	rcvdBpdu, rcvdMsg, rcvdRSTP, rcvdSTP  bool
	rcvdTc, rcvdTcAck, rcvdTcn            bool
	reRoot, reselect, selected, sendRSTP  bool
	sync, synced, tcAck, tcProp, updtInfo bool

	infoIs       infoIs
	rcvdInfo     rcvdInfo
	role         Role // RoleDisabled, RoleRoot, RoleDesignated, RoleAlternate or RoleBackup
	selectedRole Role

	portPrio, desPrio, msgPrio    prioVec
	portTimes, desTimes, msgTimes rtimes
	msg                           BPDU // the BPDU being received

	// Timers, in seconds (§17.17), and the transmit count (§17.19.44).
	edgeDelayWhile, fdWhile, helloWhen, mdelayWhile   int
	rbWhile, rcvdInfoWhile, rrWhile, tcWhile, txCount int
}

// rstpBridge is the per-bridge RSTP state (§17.18).
type rstpBridge struct {
	hello       int // Bridge Hello Time, seconds: every port's Hello Time
	bridgePrio  prioVec
	bridgeTimes rtimes
	rootPrio    prioVec
	rootPortID  PortID
	rootPort    element.Port
	rootTimes   rtimes
	prsInit     bool // Port Role Selection is in INIT_BRIDGE
	running     bool // runMachines is on the stack
}

// wholeSeconds converts a configured timer to RSTP's whole seconds
// (validate has checked that it is whole).
func wholeSeconds(t element.Time) int { return int(t / element.Second) }

// rstpAttach is BEGIN (§17.18.1) for every machine.
func (b *Bridge) rstpAttach(up []bool) {
	c := &b.cfg
	rs := &rstpBridge{hello: wholeSeconds(c.HelloTime), prsInit: true}
	rs.bridgePrio = prioVec{root: b.id, bridge: b.id}
	rs.bridgeTimes = rtimes{maxAge: wholeSeconds(c.MaxAge), fwdDelay: wholeSeconds(c.ForwardDelay)}
	rs.rootPrio, rs.rootTimes = rs.bridgePrio, rs.bridgeTimes
	b.rs = rs
	b.desRoot = b.id
	for i := range b.ports {
		p := &b.ports[i]
		if p.local {
			if up[i] {
				p.state = Forwarding
			}
			continue
		}
		if p.num > MaxPort {
			continue
		}
		r := &p.rs
		r.on = true
		r.portEnabled = up[i]
		r.adminEdge = b.isEdgeCfg(p.num)
		r.autoEdge = true
		r.portPrio = prioVec{root: b.id, bridge: b.id, port: p.id}
		r.desPrio = r.portPrio
		r.portTimes, r.desTimes = rs.bridgeTimes, rs.bridgeTimes
		if up[i] {
			p.state = Discarding
		}
		b.prxDiscard(r)
		b.ppmCheckingRSTP(r)
		if r.adminEdge {
			r.bdm, r.operEdge = bdmEdge, true
		} else {
			r.bdm, r.operEdge = bdmNotEdge, false
		}
		r.ptx, r.newInfo, r.txCount = ptxInit, true, 0
		b.pimToDisabled(r)
	}
	// Port Role Selection's INIT_BRIDGE: updtRoleDisabledTree.
	for i := range b.ports {
		if r := &b.ports[i].rs; r.on {
			r.selectedRole = RoleDisabled
		}
	}
	for i := range b.ports {
		if r := &b.ports[i].rs; r.on {
			b.prtInitPort(r)
		}
	}
	for i := range b.ports {
		if p := &b.ports[i]; p.rs.on {
			b.pstToDiscarding(p)
		}
	}
	for i := range b.ports {
		if p := &b.ports[i]; p.rs.on {
			b.tcmToInactive(p)
		}
	}
	b.runMachines()
	b.env.After(element.Second, b.rstpTick)
}

// rstpTick is the Port Timers state machine (§17.22): once a second, every
// timer that runs counts down one.
func (b *Bridge) rstpTick() {
	b.env.After(element.Second, b.rstpTick)
	for i := range b.ports {
		r := &b.ports[i].rs
		if !r.on {
			continue
		}
		for _, t := range []*int{&r.helloWhen, &r.tcWhile, &r.fdWhile, &r.rcvdInfoWhile, &r.rrWhile,
			&r.rbWhile, &r.mdelayWhile, &r.edgeDelayWhile, &r.txCount} {
			if *t > 0 {
				*t--
			}
		}
	}
	b.runMachines()
}

// rstpLinkChange sets portEnabled (§17.19.18's MAC_Operational) and lets
// the machines react.
func (b *Bridge) rstpLinkChange(p *port, up bool) {
	r := &p.rs
	if !r.on || r.portEnabled == up {
		return
	}
	r.portEnabled = up
	if up {
		b.setState(p, Discarding)
		b.ctr.Inc("port_enabled")
	} else {
		b.setState(p, Disabled)
		b.ctr.Inc("port_disabled")
	}
	b.runMachines()
}

// rstpReceive takes a valid BPDU (§9.3.4) into the Port Receive machine.
func (b *Bridge) rstpReceive(p *port, m *BPDU) {
	r := &p.rs
	if !r.on {
		b.ctr.Inc("drop_port_invalid")
		return
	}
	switch m.Type {
	case TypeTCN:
		b.ctr.Inc("bpdu_rx_tcn")
	case TypeRST:
		b.ctr.Inc("bpdu_rx_rst")
	default:
		b.ctr.Inc("bpdu_rx_config")
	}
	r.msg = *m
	r.rcvdBpdu = true
	b.runMachines()
}

// maxRounds bounds one run of the machines. Every run settles in a few
// rounds; a run that does not is a bug, counted and cut short rather
// than spinning an engine forever.
const maxRounds = 1000

// runMachines runs every state machine until none makes a transition.
func (b *Bridge) runMachines() {
	if b.rs.running {
		return // a machine's action started this; the outer run goes on
	}
	b.rs.running = true
	defer func() { b.rs.running = false }()
	for range maxRounds {
		moved := false
		for i := range b.ports {
			p := &b.ports[i]
			if !p.rs.on {
				continue
			}
			moved = b.prxStep(&p.rs) || moved
			moved = b.ppmStep(&p.rs) || moved
			moved = b.bdmStep(&p.rs) || moved
			moved = b.ptxStep(p) || moved
			moved = b.pimStep(&p.rs) || moved
		}
		moved = b.prsStep() || moved
		for i := range b.ports {
			p := &b.ports[i]
			if !p.rs.on {
				continue
			}
			role := p.rs.role
			moved = b.prtStep(&p.rs) || moved
			if p.rs.role != role {
				b.stateVer++ // PortStateNames shows the role
			}
			moved = b.pstStep(p) || moved
			moved = b.tcmStep(p) || moved
		}
		if !moved {
			return
		}
	}
	b.ctr.Inc("rstp_rounds_exceeded")
	b.log.Error("stp: rstp state machines did not settle", "bridge", b.cfg.Name, "rounds", maxRounds)
}

// ---- Port Receive (§17.23) ----------------------------------------------

func (b *Bridge) prxDiscard(r *rport) {
	r.prx = prxDiscard
	r.rcvdBpdu, r.rcvdRSTP, r.rcvdSTP = false, false, false
	r.rcvdMsg = false // clearAllRcvdMsgs
	r.edgeDelayWhile = MigrateTime
}

func (b *Bridge) prxStep(r *rport) bool {
	if (r.rcvdBpdu || r.edgeDelayWhile != MigrateTime) && !r.portEnabled {
		b.prxDiscard(r)
		return true
	}
	if r.rcvdBpdu && r.portEnabled && (r.prx == prxDiscard || !r.rcvdMsg) {
		// RECEIVE
		r.prx = prxReceive
		if r.msg.Type == TypeRST { // updtBPDUVersion
			r.rcvdRSTP = true
		} else {
			r.rcvdSTP = true
		}
		r.operEdge, r.rcvdBpdu = false, false
		r.rcvdMsg = true
		r.edgeDelayWhile = MigrateTime
		return true
	}
	return false
}

// ---- Port Protocol Migration (§17.24) -----------------------------------

func (b *Bridge) ppmCheckingRSTP(r *rport) {
	r.ppm = ppmCheckingRSTP
	r.mcheck = false
	r.sendRSTP = true // rstpVersion
	r.mdelayWhile = MigrateTime
}

func (b *Bridge) ppmStep(r *rport) bool {
	switch r.ppm {
	case ppmCheckingRSTP:
		if r.mdelayWhile != MigrateTime && !r.portEnabled {
			b.ppmCheckingRSTP(r)
			return true
		}
		if r.mdelayWhile == 0 {
			r.ppm = ppmSensing
			r.rcvdRSTP, r.rcvdSTP = false, false
			return true
		}
	case ppmSelectingSTP:
		if r.mdelayWhile == 0 || !r.portEnabled || r.mcheck {
			r.ppm = ppmSensing
			r.rcvdRSTP, r.rcvdSTP = false, false
			return true
		}
	case ppmSensing:
		if !r.portEnabled || r.mcheck || !r.sendRSTP && r.rcvdRSTP {
			b.ppmCheckingRSTP(r)
			return true
		}
		if r.sendRSTP && r.rcvdSTP {
			r.ppm = ppmSelectingSTP
			r.sendRSTP = false
			r.mdelayWhile = MigrateTime
			b.ctr.Inc("rstp_port_to_stp")
			return true
		}
	}
	return false
}

// ---- Bridge Detection (§17.25) ------------------------------------------

func (b *Bridge) bdmStep(r *rport) bool {
	switch r.bdm {
	case bdmEdge:
		if (!r.portEnabled || !r.autoEdge) && !r.adminEdge || !r.operEdge {
			r.bdm, r.operEdge = bdmNotEdge, false
			return true
		}
	case bdmNotEdge:
		if !r.portEnabled && r.adminEdge || r.edgeDelayWhile == 0 && r.autoEdge && r.sendRSTP && r.proposing {
			r.bdm, r.operEdge = bdmEdge, true
			b.ctr.Inc("rstp_edge_detected")
			return true
		}
	}
	return false
}

// ---- Port Transmit (§17.26) ---------------------------------------------

func (b *Bridge) ptxStep(p *port) bool {
	r := &p.rs
	if !r.portEnabled {
		if r.ptx == ptxInit && r.newInfo && r.txCount == 0 {
			return false
		}
		r.ptx, r.newInfo, r.txCount = ptxInit, true, 0
		return true
	}
	switch r.ptx {
	case ptxInit, ptxPeriodic, ptxConfig, ptxTCN, ptxRSTP:
		r.ptx = ptxIdle
		r.helloWhen = b.rs.hello
		return true
	}
	// IDLE: every transition is qualified by selected && !updtInfo.
	if !r.selected || r.updtInfo {
		return false
	}
	if r.helloWhen == 0 {
		r.ptx = ptxPeriodic
		r.newInfo = r.newInfo || r.role == RoleDesignated || r.role == RoleRoot && r.tcWhile != 0
		return true
	}
	if !r.newInfo || r.txCount >= TxHoldCount {
		return false
	}
	switch {
	case r.sendRSTP:
		r.ptx = ptxRSTP
		r.newInfo = false
		b.txRstp(p)
		r.txCount++
		r.tcAck = false
	case r.role == RoleDesignated:
		r.ptx = ptxConfig
		r.newInfo = false
		b.txConfig(p)
		r.txCount++
		r.tcAck = false
	case r.role == RoleRoot:
		r.ptx = ptxTCN
		r.newInfo = false
		b.send(p, &BPDU{Type: TypeTCN})
		b.ctr.Inc("bpdu_tx_tcn")
		r.txCount++
	default:
		return false
	}
	return true
}

func secs256(s int) Time256 {
	if s < 0 {
		return 0
	}
	if s > 255 {
		return 0xffff
	}
	return Time256(s * 256)
}

// bpduFrom fills the fields a configuration and an RST BPDU share from
// the port's designated priority vector and times.
func (b *Bridge) bpduFrom(r *rport, m *BPDU) {
	m.Root, m.RootPathCost = r.desPrio.root, r.desPrio.cost
	m.Bridge, m.Port = r.desPrio.bridge, r.desPrio.port
	m.MessageAge = secs256(r.desTimes.msgAge)
	m.MaxAge = secs256(r.desTimes.maxAge)
	m.HelloTime = secs256(b.rs.hello)
	m.ForwardDelay = secs256(r.desTimes.fwdDelay)
	m.TC = r.tcWhile != 0
}

// txRstp is §17.21.20.
func (b *Bridge) txRstp(p *port) {
	r := &p.rs
	if r.role == RoleDisabled {
		return
	}
	m := BPDU{Type: TypeRST, Version: VersionRSTP, Proposal: r.proposing, Learning: r.learning,
		Forwarding: r.forwarding, Agreement: r.agree}
	switch r.role {
	case RoleRoot:
		m.Role = BPDURoleRoot
	case RoleDesignated:
		m.Role = BPDURoleDesignated
	default:
		m.Role = BPDURoleAltBackup
	}
	b.bpduFrom(r, &m)
	b.send(p, &m)
	b.ctr.Inc("bpdu_tx_rst")
}

// txConfig is §17.21.19: a configuration BPDU for a neighbour that speaks
// 802.1D-1998.
func (b *Bridge) txConfig(p *port) {
	r := &p.rs
	if r.role == RoleDisabled {
		return
	}
	m := BPDU{Type: TypeConfig, TCA: r.tcAck}
	b.bpduFrom(r, &m)
	b.send(p, &m)
	b.ctr.Inc("bpdu_tx_config")
}

// ---- Port Information (§17.27) ------------------------------------------

func (b *Bridge) pimToDisabled(r *rport) {
	r.pim = pimDisabled
	r.rcvdMsg = false
	r.proposing, r.proposed, r.agree, r.agreed = false, false, false, false
	r.rcvdInfoWhile = 0
	r.infoIs = infoDisabled
	r.reselect, r.selected = true, false
}

func (b *Bridge) pimToAged(r *rport) {
	r.pim = pimAged
	r.infoIs = infoAged
	r.reselect, r.selected = true, false
}

func (b *Bridge) pimStep(r *rport) bool {
	if !r.portEnabled && r.infoIs != infoDisabled {
		b.pimToDisabled(r)
		return true
	}
	switch r.pim {
	case pimDisabled:
		if r.portEnabled {
			b.pimToAged(r)
			return true
		}
		if r.rcvdMsg {
			b.pimToDisabled(r)
			return true
		}
	case pimAged:
		if r.selected && r.updtInfo {
			b.pimToUpdate(r)
			return true
		}
	case pimUpdate, pimSuperiorDesignated, pimRepeatedDesignated, pimInferiorDesignated, pimNotDesignated, pimOther:
		r.pim = pimCurrent
		return true
	case pimCurrent:
		if r.rcvdMsg && !r.updtInfo {
			r.pim = pimReceive
			r.rcvdInfo = b.rcvInfo(r)
			return true
		}
		if r.infoIs == infoReceived && r.rcvdInfoWhile == 0 && !r.updtInfo && !r.rcvdMsg {
			b.pimToAged(r)
			b.ctr.Inc("rstp_info_aged")
			return true
		}
		if r.selected && r.updtInfo {
			b.pimToUpdate(r)
			return true
		}
	case pimReceive:
		switch r.rcvdInfo {
		case superiorDesignatedInfo:
			r.pim = pimSuperiorDesignated
			r.agreed, r.proposing = false, false
			b.recordProposal(r)
			b.setTcFlags(r)
			r.agree = r.agree && b.betterOrSameInfo(r, infoReceived)
			b.recordAgreement(r)
			r.synced = r.synced && r.agreed
			r.portPrio = r.msgPrio   // recordPriority
			r.portTimes = r.msgTimes // recordTimes
			b.updtRcvdInfoWhile(r)
			r.infoIs = infoReceived
			r.reselect, r.selected = true, false
			r.rcvdMsg = false
		case repeatedDesignatedInfo:
			r.pim = pimRepeatedDesignated
			b.recordProposal(r)
			b.setTcFlags(r)
			b.recordAgreement(r)
			b.updtRcvdInfoWhile(r)
			r.rcvdMsg = false
		case inferiorDesignatedInfo:
			r.pim = pimInferiorDesignated
			b.recordDispute(r)
			r.rcvdMsg = false
		case inferiorRootAlternateInfo:
			r.pim = pimNotDesignated
			b.recordAgreement(r)
			b.setTcFlags(r)
			r.rcvdMsg = false
		default:
			r.pim = pimOther
			r.rcvdMsg = false
		}
		return true
	}
	return false
}

func (b *Bridge) pimToUpdate(r *rport) {
	r.pim = pimUpdate
	r.proposing, r.proposed = false, false
	r.agreed = r.agreed && b.betterOrSameInfo(r, infoMine)
	r.synced = r.synced && r.agreed
	r.portPrio, r.portTimes = r.desPrio, r.desTimes
	r.updtInfo = false
	r.infoIs = infoMine
	r.newInfo = true
}

// betterOrSameInfo is §17.21.1.
func (b *Bridge) betterOrSameInfo(r *rport, newInfoIs infoIs) bool {
	switch {
	case newInfoIs == infoReceived && r.infoIs == infoReceived:
		return r.msgPrio.cmp(r.portPrio) <= 0
	case newInfoIs == infoMine && r.infoIs == infoMine:
		return r.desPrio.cmp(r.portPrio) <= 0
	}
	return false
}

// nearestSecond rounds a wire time to whole seconds.
func nearestSecond(t Time256) int { return (int(t) + 128) / 256 }

// rcvInfo is §17.21.8: what the received BPDU is against the port's
// priority vector.
func (b *Bridge) rcvInfo(r *rport) rcvdInfo {
	m := &r.msg
	if m.Type == TypeTCN {
		r.rcvdTcn = true
		return otherInfo
	}
	designated := true // a configuration BPDU conveys a designated port
	if m.Type == TypeRST {
		switch {
		case m.Role == BPDURoleDesignated:
		case m.Role == BPDURoleUnknown && m.Version == VersionRSTP:
			// §9.2.9: Unknown is accepted on receipt and read as
			// a configuration BPDU would be (in an MST BPDU the
			// value means a master port: not designated).
		case m.Role == BPDURoleUnknown:
			return otherInfo
		default:
			designated = false
		}
	}
	r.msgPrio = prioVec{root: m.Root, cost: m.RootPathCost, bridge: m.Bridge, port: m.Port}
	r.msgTimes = rtimes{msgAge: nearestSecond(m.MessageAge), maxAge: nearestSecond(m.MaxAge), fwdDelay: nearestSecond(m.ForwardDelay)}
	c := r.msgPrio.cmp(r.portPrio)
	if designated {
		// Superior (§17.6): better, or from the very port that holds
		// the port's information now, whatever it says.
		if c < 0 || r.msgPrio.bridge.MAC() == r.portPrio.bridge.MAC() && r.msgPrio.port&0x0fff == r.portPrio.port&0x0fff {
			return superiorDesignatedInfo
		}
		if c == 0 && r.msgTimes != r.portTimes {
			return superiorDesignatedInfo
		}
		if c == 0 && r.infoIs == infoReceived {
			return repeatedDesignatedInfo
		}
		return inferiorDesignatedInfo
	}
	if c >= 0 {
		return inferiorRootAlternateInfo
	}
	return otherInfo
}

// recordAgreement is §17.21.9 (every link is point to point).
func (b *Bridge) recordAgreement(r *rport) {
	if r.msg.Type == TypeRST && r.msg.Agreement {
		r.agreed, r.proposing = true, false
		return
	}
	r.agreed = false
}

// recordDispute is §17.21.10.
func (b *Bridge) recordDispute(r *rport) {
	if r.msg.Type == TypeRST && r.msg.Learning {
		r.disputed, r.agreed = true, false
	}
}

// recordProposal is §17.21.11.
func (b *Bridge) recordProposal(r *rport) {
	if r.msg.Type == TypeRST && r.msg.Proposal {
		r.proposed = true
	}
}

// setTcFlags is §17.21.17.
func (b *Bridge) setTcFlags(r *rport) {
	if r.msg.TC {
		r.rcvdTc = true
	}
	if r.msg.TCA {
		r.rcvdTcAck = true
	}
}

// updtRcvdInfoWhile is §17.21.23: three hellos, unless the information is
// as old as its max age.
func (b *Bridge) updtRcvdInfoWhile(r *rport) {
	if r.portTimes.msgAge+1 <= r.portTimes.maxAge {
		r.rcvdInfoWhile = 3 * b.rs.hello
	} else {
		r.rcvdInfoWhile = 0
	}
}

// ---- Port Role Selection (§17.28) ---------------------------------------

func (b *Bridge) prsStep() bool {
	if !b.rs.prsInit {
		any := false
		for i := range b.ports {
			if r := &b.ports[i].rs; r.on && r.reselect {
				any = true
				break
			}
		}
		if !any {
			return false
		}
	}
	b.rs.prsInit = false
	// ROLE_SELECTION: clearReselectTree, updtRolesTree, setSelectedTree.
	for i := range b.ports {
		b.ports[i].rs.reselect = false
	}
	b.updtRolesTree()
	for i := range b.ports {
		if r := &b.ports[i].rs; r.on {
			r.selected = true
		}
	}
	return true
}

// updtRolesTree is §17.21.25.
func (b *Bridge) updtRolesTree() {
	rs := b.rs
	oldRoot := rs.rootPrio.root
	rs.rootPrio, rs.rootPortID, rs.rootPort = rs.bridgePrio, 0, 0
	var rootPort *port
	for i := range b.ports {
		p := &b.ports[i]
		r := &p.rs
		if !r.on || r.infoIs != infoReceived || r.portPrio.bridge.MAC() == b.id.MAC() {
			continue
		}
		rpp := r.portPrio
		rpp.cost = addCost(rpp.cost, p.pathCost)
		// The root path priority vector with the receiving port's
		// identifier as the last component (§17.6).
		if c := rpp.cmp(rs.rootPrio); c < 0 || c == 0 && (rs.rootPortID == 0 || p.id <= rs.rootPortID) {
			rs.rootPrio, rs.rootPortID, rootPort = rpp, p.id, p
		}
	}
	if rootPort != nil {
		rs.rootPort = rootPort.num
		rs.rootTimes = rootPort.rs.portTimes
		rs.rootTimes.msgAge++
	} else {
		rs.rootTimes = rs.bridgeTimes
	}
	if rs.rootPrio.root != oldRoot {
		b.ctr.Inc("root_changes")
	}
	b.desRoot, b.rootCost, b.rootPort = rs.rootPrio.root, rs.rootPrio.cost, rs.rootPort
	for i := range b.ports {
		p := &b.ports[i]
		r := &p.rs
		if !r.on {
			continue
		}
		r.desPrio = prioVec{root: rs.rootPrio.root, cost: rs.rootPrio.cost, bridge: b.id, port: p.id}
		r.desTimes = rs.rootTimes
		switch {
		case r.infoIs == infoDisabled:
			r.selectedRole = RoleDisabled
		case r.infoIs == infoAged:
			r.selectedRole, r.updtInfo = RoleDesignated, true
		case r.infoIs == infoMine:
			r.selectedRole = RoleDesignated
			if r.portPrio != r.desPrio || r.portTimes != r.desTimes {
				r.updtInfo = true
			}
		case p == rootPort:
			r.selectedRole, r.updtInfo = RoleRoot, false
		case r.desPrio.cmp(r.portPrio) >= 0:
			// The port's information is better than what this
			// bridge would send: someone else is designated.
			if r.portPrio.bridge.MAC() != b.id.MAC() {
				r.selectedRole = RoleAlternate
			} else {
				r.selectedRole = RoleBackup
			}
			r.updtInfo = false
		default:
			r.selectedRole, r.updtInfo = RoleDesignated, true
		}
	}
}

// ---- Port Role Transitions (§17.29) -------------------------------------

func (b *Bridge) prtInitPort(r *rport) {
	r.prt = prtInitPort
	if r.role != RoleDisabled {
		b.stateVer++ // PortStateNames shows the role
	}
	r.role = RoleDisabled
	r.learn, r.forward = false, false
	r.synced = false
	r.sync, r.reRoot = true, true
	r.rrWhile = r.desTimes.fwdDelay
	r.fdWhile = r.desTimes.maxAge
	r.rbWhile = 0
}

// allSynced is §17.20.3, as 802.1Q-2005 §13.25.1 refines it: every port
// selected, in its selected role and synced, the root port excepted when
// the asking port is root or alternate, the asking port when designated.
func (b *Bridge) allSynced(r *rport) bool {
	for i := range b.ports {
		q := &b.ports[i].rs
		if !q.on {
			continue
		}
		if !q.selected || q.role != q.selectedRole || q.updtInfo {
			return false
		}
		switch r.role {
		case RoleRoot, RoleAlternate:
			if q.role != RoleRoot && !q.synced {
				return false
			}
		case RoleDesignated:
			if q != r && !q.synced {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// reRooted is §17.20.10: no other port has been root port recently.
func (b *Bridge) reRooted(r *rport) bool {
	for i := range b.ports {
		q := &b.ports[i].rs
		if q.on && q != r && q.rrWhile != 0 {
			return false
		}
	}
	return true
}

func (b *Bridge) setSyncTree() {
	for i := range b.ports {
		b.ports[i].rs.sync = true
	}
}

func (b *Bridge) setReRootTree() {
	for i := range b.ports {
		b.ports[i].rs.reRoot = true
	}
}

func (b *Bridge) prtStep(r *rport) bool {
	fwdDelay := r.desTimes.fwdDelay // FwdDelay
	maxAge := r.desTimes.maxAge
	hello := b.rs.hello
	forwardDelay := fwdDelay // the forwardDelay of §17.20: Hello Time where RSTP is spoken
	if r.sendRSTP {
		forwardDelay = hello
	}
	qualified := r.selected && !r.updtInfo
	if r.role != r.selectedRole && qualified {
		switch r.selectedRole {
		case RoleDisabled:
			r.prt = prtDisablePort
			r.role = RoleDisabled
			r.learn, r.forward = false, false
		case RoleRoot:
			b.prtToRootPort(r, fwdDelay)
		case RoleDesignated:
			r.prt = prtDesignatedPort
			r.role = RoleDesignated
		default: // alternate, backup
			r.prt = prtBlockPort
			r.role = r.selectedRole
			r.learn, r.forward = false, false
		}
		return true
	}
	switch r.prt {
	case prtInitPort:
		r.prt = prtDisablePort
		r.role = RoleDisabled
		r.learn, r.forward = false, false
		return true
	case prtDisablePort:
		if qualified && !r.learning && !r.forwarding {
			b.prtToDisabledPort(r, maxAge)
			return true
		}
	case prtDisabledPort:
		if qualified && (r.sync || r.reRoot || !r.synced || r.fdWhile != maxAge) {
			b.prtToDisabledPort(r, maxAge)
			return true
		}

	case prtRootProposed, prtRootAgreed, prtRootSynced, prtReroot, prtRootForward, prtRootLearn, prtRerooted:
		b.prtToRootPort(r, fwdDelay)
		return true
	case prtRootPort:
		if !qualified {
			return false
		}
		switch {
		case !r.forward && !r.reRoot:
			r.prt = prtReroot
			b.setReRootTree()
			return true
		case r.agreed && !r.synced || r.sync && r.synced:
			r.prt = prtRootSynced
			r.synced, r.sync = true, false
			return true
		case b.allSynced(r) && !r.agree || r.proposed && r.agree:
			r.prt = prtRootAgreed
			r.proposed, r.sync = false, false
			r.agree, r.newInfo = true, true
			return true
		case r.proposed && !r.agree:
			r.prt = prtRootProposed
			b.setSyncTree()
			r.proposed = false
			return true
		}
		if r.fdWhile == 0 || b.reRooted(r) && r.rbWhile == 0 {
			if !r.learn {
				r.prt = prtRootLearn
				r.fdWhile = forwardDelay
				r.learn = true
				return true
			}
			if !r.forward {
				r.prt = prtRootForward
				r.fdWhile = 0
				r.forward = true
				return true
			}
		}
		if r.reRoot && r.forward {
			r.prt = prtRerooted
			r.reRoot = false
			return true
		}
		if r.rrWhile != fwdDelay {
			b.prtToRootPort(r, fwdDelay)
			return true
		}

	case prtDesignatedPropose, prtDesignatedAgreed, prtDesignatedSynced, prtDesignatedRetired,
		prtDesignatedForward, prtDesignatedLearn, prtDesignatedDiscard:
		r.prt = prtDesignatedPort
		r.role = RoleDesignated
		return true
	case prtDesignatedPort:
		if !qualified {
			return false
		}
		switch {
		case r.reRoot && r.rrWhile == 0:
			r.prt = prtDesignatedRetired
			r.reRoot = false
			return true
		case !r.learning && !r.forwarding && !r.synced || r.agreed && !r.synced || r.operEdge && !r.synced || r.sync && r.synced:
			r.prt = prtDesignatedSynced
			r.rrWhile = 0
			r.synced, r.sync = true, false
			return true
		case b.allSynced(r) && (r.proposed || !r.agree):
			r.prt = prtDesignatedAgreed
			r.proposed, r.sync = false, false
			r.agree, r.newInfo = true, true
			return true
		case !r.forward && !r.agreed && !r.proposing && !r.operEdge:
			r.prt = prtDesignatedPropose
			r.proposing = true
			r.edgeDelayWhile = MigrateTime // EdgeDelay on a point-to-point link
			r.newInfo = true
			return true
		}
		if (r.fdWhile == 0 || r.agreed || r.operEdge) && (r.rrWhile == 0 || !r.reRoot) && !r.sync {
			if !r.learn {
				r.prt = prtDesignatedLearn
				r.learn = true
				r.fdWhile = forwardDelay
				return true
			}
			if !r.forward {
				r.prt = prtDesignatedForward
				r.forward = true
				r.fdWhile = 0
				r.agreed = r.sendRSTP
				return true
			}
		}
		if (r.sync && !r.synced || r.reRoot && r.rrWhile != 0 || r.disputed) && !r.operEdge && (r.learn || r.forward) {
			r.prt = prtDesignatedDiscard
			r.learn, r.forward, r.disputed = false, false, false
			r.fdWhile = forwardDelay
			return true
		}

	case prtBlockPort:
		if qualified && !r.learning && !r.forwarding {
			b.prtToAlternatePort(r, forwardDelay)
			return true
		}
	case prtBackupPort, prtAlternateProposed, prtAlternateAgreed:
		b.prtToAlternatePort(r, forwardDelay)
		return true
	case prtAlternatePort:
		if !qualified {
			return false
		}
		switch {
		case b.allSynced(r) && !r.agree || r.proposed && r.agree:
			r.prt = prtAlternateAgreed
			r.proposed = false
			r.agree, r.newInfo = true, true
			return true
		case r.proposed && !r.agree:
			r.prt = prtAlternateProposed
			b.setSyncTree()
			r.proposed = false
			return true
		case r.rbWhile != 2*hello && r.role == RoleBackup:
			r.prt = prtBackupPort
			r.rbWhile = 2 * hello
			return true
		case r.fdWhile != forwardDelay || r.sync || r.reRoot || !r.synced:
			b.prtToAlternatePort(r, forwardDelay)
			return true
		}
	}
	return false
}

func (b *Bridge) prtToDisabledPort(r *rport, maxAge int) {
	r.prt = prtDisabledPort
	r.fdWhile = maxAge
	r.synced = true
	r.rrWhile = 0
	r.sync, r.reRoot = false, false
}

func (b *Bridge) prtToRootPort(r *rport, fwdDelay int) {
	r.prt = prtRootPort
	r.role = RoleRoot
	r.rrWhile = fwdDelay
}

func (b *Bridge) prtToAlternatePort(r *rport, forwardDelay int) {
	r.prt = prtAlternatePort
	r.fdWhile = forwardDelay
	r.synced = true
	r.rrWhile = 0
	r.sync, r.reRoot = false, false
}

// ---- Port State Transition (§17.30) -------------------------------------

func (b *Bridge) pstToDiscarding(p *port) {
	r := &p.rs
	r.pst = pstDiscarding
	r.learning, r.forwarding = false, false
	if r.portEnabled {
		b.setState(p, Discarding)
	}
}

func (b *Bridge) pstStep(p *port) bool {
	r := &p.rs
	switch r.pst {
	case pstDiscarding:
		if r.learn {
			r.pst = pstLearning
			r.learning = true
			if r.portEnabled {
				b.setState(p, Learning)
			}
			return true
		}
	case pstLearning:
		if !r.learn {
			b.pstToDiscarding(p)
			return true
		}
		if r.forward {
			r.pst = pstForwarding
			r.forwarding = true
			if r.portEnabled {
				b.setState(p, Forwarding)
			}
			return true
		}
	case pstForwarding:
		if !r.forward {
			b.pstToDiscarding(p)
			return true
		}
	}
	return false
}

// ---- Topology Change (§17.31) -------------------------------------------

// flush is fdbFlush: the port's MAC table entries go at once (an edge
// port's never: its stations cannot have moved).
func (b *Bridge) flush(p *port) {
	if !p.rs.operEdge {
		if n := b.fdb.flushPort(p.num); n > 0 {
			b.ctr.Add("flushed", uint64(n))
		}
	}
	p.rs.fdbFlush = false
}

func (b *Bridge) tcmToInactive(p *port) {
	r := &p.rs
	r.tcm = tcmInactive
	r.fdbFlush = true
	b.flush(p)
	r.tcWhile = 0
	r.tcAck = false
}

// newTcWhile is §17.21.7.
func (b *Bridge) newTcWhile(r *rport) {
	if r.tcWhile != 0 {
		return
	}
	if r.sendRSTP {
		r.tcWhile = b.rs.hello + 1
		r.newInfo = true
		return
	}
	r.tcWhile = b.rs.rootTimes.maxAge + b.rs.rootTimes.fwdDelay
}

// setTcPropTree is §17.21.18: every other port propagates the change.
func (b *Bridge) setTcPropTree(r *rport) {
	for i := range b.ports {
		if q := &b.ports[i].rs; q.on && q != r {
			q.tcProp = true
		}
	}
}

func (b *Bridge) tcmStep(p *port) bool {
	r := &p.rs
	active := r.role == RoleRoot || r.role == RoleDesignated
	switch r.tcm {
	case tcmInactive:
		if r.learn && !r.fdbFlush {
			b.tcmToLearning(r)
			return true
		}
	case tcmLearning:
		if active && r.forward && !r.operEdge {
			r.tcm = tcmDetected
			b.newTcWhile(r)
			b.setTcPropTree(r)
			r.newInfo = true
			b.ctr.Inc("topology_changes")
			return true
		}
		if r.rcvdTc || r.rcvdTcn || r.rcvdTcAck || r.tcProp {
			b.tcmToLearning(r)
			return true
		}
		if !active && !(r.learn || r.learning) {
			b.tcmToInactive(p)
			return true
		}
	case tcmNotifiedTCN:
		r.tcm = tcmNotifiedTC
		b.notifiedTC(r)
		return true
	case tcmDetected, tcmNotifiedTC, tcmPropagating, tcmAcknowledged:
		r.tcm = tcmActive
		return true
	case tcmActive:
		switch {
		case !active || r.operEdge:
			b.tcmToLearning(r)
		case r.rcvdTcn:
			r.tcm = tcmNotifiedTCN
			b.newTcWhile(r)
		case r.rcvdTc:
			r.tcm = tcmNotifiedTC
			b.notifiedTC(r)
		case r.tcProp:
			r.tcm = tcmPropagating
			b.newTcWhile(r)
			r.fdbFlush = true
			b.flush(p)
			r.tcProp = false
		case r.rcvdTcAck:
			r.tcm = tcmAcknowledged
			r.tcWhile = 0
			r.rcvdTcAck = false
		default:
			return false
		}
		return true
	}
	return false
}

func (b *Bridge) tcmToLearning(r *rport) {
	r.tcm = tcmLearning
	r.rcvdTc, r.rcvdTcn, r.rcvdTcAck, r.tcProp = false, false, false, false
}

func (b *Bridge) notifiedTC(r *rport) {
	r.rcvdTcn, r.rcvdTc = false, false
	if r.role == RoleDesignated {
		r.tcAck = true
	}
	b.setTcPropTree(r)
}

// rstpTopologyChange reports whether any port signals a topology change
// (tcWhile running).
func (b *Bridge) rstpTopologyChange() bool {
	for i := range b.ports {
		if r := &b.ports[i].rs; r.on && r.tcWhile != 0 {
			return true
		}
	}
	return false
}
