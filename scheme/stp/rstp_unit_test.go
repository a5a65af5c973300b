package stp

import "testing"

// rcvInfo reads an RST BPDU's Unknown role as a configuration BPDU's
// (designated), but an MST BPDU's role 0 (a master port) as nothing it
// can use, as mstpd does (802.1D-2004 §9.2.9).
func TestRcvInfoUnknownRole(t *testing.T) {
	var b Bridge
	better := BPDU{Type: TypeRST, Root: 1, Bridge: 1, Port: 0x8001, MaxAge: 20 * 256, ForwardDelay: 15 * 256}
	for _, c := range []struct {
		version uint8
		role    BPDURole
		want    rcvdInfo
	}{
		{VersionRSTP, BPDURoleUnknown, superiorDesignatedInfo},
		{3, BPDURoleUnknown, otherInfo},
		{3, BPDURoleDesignated, superiorDesignatedInfo},
		{VersionRSTP, BPDURoleRoot, otherInfo}, // better, but from a root port
	} {
		r := rport{portPrio: prioVec{root: 5, bridge: 5, port: 0x8002}, infoIs: infoReceived}
		r.msg = better
		r.msg.Version, r.msg.Role = c.version, c.role
		if got := b.rcvInfo(&r); got != c.want {
			t.Errorf("version %d role %d: %d, want %d", c.version, c.role, got, c.want)
		}
	}
}
