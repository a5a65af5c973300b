package host

import (
	"errors"
	"testing"
)

// TestUDPSourcePortInUse: a UDP app's source port is one no running UDP
// app holds. The counter, shared with TCP, wraps after 16,384 ports and
// handed out the port of a flow still running; the receiver, which keys
// flows by source address and ports, then merged the two. With all ports
// held, a new app fails with ErrPortsExhausted; a port is free again
// once its app is done.
func TestUDPSourcePortInUse(t *testing.T) {
	n, a, b, _, _ := pair(t, gbps, us, nil)
	n.run(sec)
	long := a.UDP(b.Addr(), 9000, 8000, 100, 100*sec) // one datagram every 100 ms
	a.nextPort = long.srcPort - 1                     // the counter has come round
	other := a.UDP(b.Addr(), 9000, 8000, 100, 100*sec)
	if other.Err() != nil || other.srcPort == long.srcPort {
		t.Fatalf("second flow: port %d (the first's is %d), err %v", other.srcPort, long.srcPort, other.Err())
	}
	n.run(n.now + 1050*ms)
	r1, r2 := long.ResultWith(b), other.ResultWith(b)
	if r1.Sent != 11 || r1.Received != 11 || r2.Received != 11 || *r1.Lost != 0 {
		t.Fatalf("flows as the receiver saw them: %+v, %+v", r1, r2)
	}

	// Every port held: the next app fails, and starts nothing.
	apps := []*UDPApp{long, other}
	for range ephemeralPorts - 2 {
		u := a.UDP(b.Addr(), 9000, 1000, 100, 100*sec)
		if u.Err() != nil {
			t.Fatalf("app %d: %v", len(apps), u.Err())
		}
		apps = append(apps, u)
	}
	tx := a.Counter("udp_tx")
	u := a.UDP(b.Addr(), 9000, 1000, 100, 100*sec)
	if !errors.Is(u.Err(), ErrPortsExhausted) || !u.Done() || a.Counter("udp_tx") != tx {
		t.Fatalf("app with every port held: err %v, done %v, sent %d", u.Err(), u.Done(), a.Counter("udp_tx")-tx)
	}
	// A short one ends; its port is the only one free.
	short := apps[100]
	short.until = n.now + ms // end it at its next datagram
	n.run(n.now + sec)
	if !short.Done() {
		t.Fatal("short app still running")
	}
	if u := a.UDP(b.Addr(), 9000, 1000, 100, 100*sec); u.Err() != nil || u.srcPort != short.srcPort {
		t.Fatalf("after one app ended: port %d (freed %d), err %v", u.srcPort, short.srcPort, u.Err())
	}
}
