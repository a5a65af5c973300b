package stp

import (
	"fmt"

	"github.com/edgefabric/edgefabric/element"
)

// State is a port state of 802.1D-1998 §8.4. The zero value is invalid.
type State uint8

const (
	StateInvalid State = iota
	// Disabled: the link is down; the port takes no part in anything.
	Disabled
	// Blocking: BPDUs are received and processed, frames are discarded
	// and nothing is learned.
	Blocking
	// Listening: on its way to forwarding; BPDUs only, as in Blocking.
	Listening
	// Learning: source addresses are learned, frames still discarded.
	Learning
	// Forwarding: frames are learned from and relayed.
	Forwarding
	// Discarding: RSTP's one state for what 802.1D-1998 calls disabled
	// (with the link up), blocking and listening (802.1D-2004 §17.4):
	// BPDUs only.
	Discarding
)

var stateNames = [...]string{"invalid", "disabled", "blocking", "listening", "learning", "forwarding", "discarding"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// MarshalText makes states readable in JSON reports.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Role is what the spanning tree made of a port. 802.1D-1998 has no role
// variable; the role follows from the port's information (§8.6.10,
// §8.6.8): the root port, a designated port, or neither, which is a
// blocked (alternate or backup) port. RSTP names the last two apart
// (802.1D-2004 §17.7). The zero value is invalid.
type Role uint8

const (
	RoleInvalid Role = iota
	// RoleDisabled: the port is disabled.
	RoleDisabled
	// RoleRoot: the port offering the best path to the root.
	RoleRoot
	// RoleDesignated: this bridge is the designated bridge of the port's
	// LAN: it relays frames between that LAN and the root.
	RoleDesignated
	// RoleBlocked: neither root nor designated; the port stays blocked
	// because another path to the root exists.
	RoleBlocked
	// RoleLocal: the port faces the node's own host stack (a relaying
	// host's local port); it takes no part in the spanning tree and
	// always forwards.
	RoleLocal
	// RoleAlternate (RSTP): a blocked port that offers another path to
	// the root, ready to take over as root port at once.
	RoleAlternate
	// RoleBackup (RSTP): a blocked port to a LAN this bridge is already
	// designated for through another port.
	RoleBackup
)

var roleNames = [...]string{"invalid", "disabled", "root", "designated", "blocked", "local", "alternate", "backup"}

func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("role(%d)", uint8(r))
}

// MarshalText makes roles readable in JSON reports.
func (r Role) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// MarshalText writes a bridge identifier as String does.
func (id BridgeID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// Status is a bridge's spanning tree state, for tests and reports.
type Status struct {
	Bridge       BridgeID     `json:"bridge"`
	Root         BridgeID     `json:"root"`
	RootPathCost uint32       `json:"root_path_cost"`
	RootPort     element.Port `json:"root_port"` // 0 on the root bridge
	// MaxAge, HelloTime and ForwardDelay are the values in use, learned
	// from the root.
	MaxAge       element.Time `json:"max_age_ps"`
	HelloTime    element.Time `json:"hello_time_ps"`
	ForwardDelay element.Time `json:"forward_delay_ps"`
	// TopologyChange is set while the root signals a topology change;
	// the MAC table then ages entries out after ForwardDelay.
	TopologyChange bool `json:"topology_change"`
	// TopologyChangeDetected is set while this bridge's notification has
	// not been acknowledged.
	TopologyChangeDetected bool `json:"topology_change_detected"`
	// Protocol is "stp" (802.1D-1998) or "rstp" (802.1D-2004).
	Protocol string       `json:"protocol"`
	Ports    []PortStatus `json:"ports"`
}

// IsRoot reports whether the bridge believes it is the root.
func (s Status) IsRoot() bool { return s.Root == s.Bridge }

// PortStatus is one port's spanning tree state.
type PortStatus struct {
	Port     element.Port `json:"port"`
	ID       PortID       `json:"id"`
	Role     Role         `json:"role"`
	State    State        `json:"state"`
	PathCost uint32       `json:"path_cost"`
	// The port's designated information: the best BPDU seen on its LAN,
	// or this bridge's own when the port is designated.
	DesignatedRoot   BridgeID `json:"designated_root"`
	DesignatedCost   uint32   `json:"designated_cost"`
	DesignatedBridge BridgeID `json:"designated_bridge"`
	DesignatedPort   PortID   `json:"designated_port"`
	// Edge is RSTP's operEdge: no bridge answered on the port (or it is
	// configured an edge port), so it forwards without a handshake.
	Edge bool `json:"edge,omitempty"`
}
