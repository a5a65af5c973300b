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

// An RST BPDU as old as its max age is not dropped (802.1D-2004 §9.3.4
// checks the age of configuration BPDUs only): it replaces what the port
// held from the same designated port and ages out at once
// (updtRcvdInfoWhile, §17.21.23), so the bridge gives up the stale root
// then, not three hellos after the last good BPDU.
func TestRSTPAgedRSTBPDU(t *testing.T) {
	n := newFakeNet(t, star(t, 2), map[string]string{"protocol": "rstp"})
	sup := superior(5 * 256)
	sup.Type, sup.Version, sup.Role = TypeRST, VersionRSTP, BPDURoleDesignated
	src := [6]byte{2, 0, 0, 0, 0, 9}
	s1 := n.bridge("s1")
	for at := sec; at <= 9*sec; at += 2 * sec {
		n.runUntil(at)
		n.inject("h1", AppendFrame(nil, src, &sup))
	}
	n.runUntil(11 * sec)
	if st := s1.Status(); st.Root != sup.Root || st.RootPort != 1 {
		t.Fatalf("superior root not taken: %+v", st)
	}
	old := sup
	old.MessageAge = 20 * 256
	n.inject("h1", AppendFrame(nil, src, &old))
	n.run(10 * us)
	c := s1.Counters()
	if st := s1.Status(); !st.IsRoot() || c["drop_bpdu_aged"] != 0 || c["bpdu_rx_rst"] != 6 || c["rstp_info_aged"] != 1 {
		t.Fatalf("aged RST BPDU: %+v %v", st, c)
	}
	// A configuration BPDU as old is still dropped, as 802.1D-1998 and
	// §9.3.4 a) have it.
	cfg := superior(20 * 256)
	n.inject("h1", AppendFrame(nil, src, &cfg))
	n.run(10 * us)
	if c := s1.Counters(); !s1.Status().IsRoot() || c["drop_bpdu_aged"] != 1 || c["bpdu_rx_config"] != 0 {
		t.Fatalf("aged configuration BPDU: %+v %v", s1.Status(), c)
	}
}
