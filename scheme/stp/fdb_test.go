package stp

import "testing"

// A station that speaks again after its entry aged out is learned anew,
// as under continuous aging, even when no lookup or sweep has deleted the
// entry yet (lazy aging, docs/stp.md choice 4): on its old port it is
// learned, not silently refreshed, and on another port it is learned, not
// counted as a station that moved. The old entry counts as aged out.
func TestRelearnAfterAging(t *testing.T) {
	n := newFakeNet(t, star(t, 2), map[string]string{"aging": "60s"})
	n.runUntil(66 * sec) // after the topology change of 30 s to 65 s
	s1 := n.bridge("s1")
	h1, h2 := n.hostMAC("h1"), n.hostMAC("h2")
	n.sendFrom("h1", h2, "a") // learned at 66 s; the sweep comes at 126 s, then 186 s
	n.run(10 * us)
	// 70 s later, h1 speaks again on port 1: the 126 s sweep kept the
	// entry (60 s old then, not older), the next is at 186 s.
	n.runUntil(136 * sec)
	n.sendFrom("h1", h2, "b")
	n.run(10 * us)
	c := s1.Counters()
	if c["learned"] != 2 || c["aged_out"] != 1 {
		t.Fatalf("back on its port after aging: %v, want learned 2, aged_out 1", c)
	}
	// 70 s later again, h1's address shows up on port 2.
	n.runUntil(206*sec + 20*us)
	f := append(append(append([]byte(nil), h2[:]...), h1[:]...), 0x88, 0xb5, 'm')
	for len(f) < 60 {
		f = append(f, 0)
	}
	n.inject("h2", f)
	n.run(10 * us)
	c = s1.Counters()
	if p, ok := s1.Lookup(h1); !ok || p != 2 {
		t.Fatalf("h1 at port %d %v, want 2", p, ok)
	}
	if c["learned"] != 3 || c["moved"] != 0 || c["aged_out"] != 2 {
		t.Fatalf("on another port after aging: %v, want learned 3, moved 0, aged_out 2", c)
	}
}
