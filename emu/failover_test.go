package emu

import (
	"context"
	"testing"
	"time"
)

// A failure that cuts the hosts apart for good: the probes sent after it
// are lost, and the result says so (it once reported none lost and only
// the probes that came back as sent, since ping prints only replies).
func TestFailoverNotRecovered(t *testing.T) {
	needRoot(t)
	needTool(t, "ping")
	var fabrics []*testFabric
	l := upLab(t, star(t, 2), "learn", Options{Registry: testRegistry(t, &fabrics)})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const iv = 10 * time.Millisecond
	res, err := l.Failover(ctx, FailoverSpec{From: "h1", To: "h2", A: "s1", B: "h2", Interval: iv, Settle: 300 * time.Millisecond, Max: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	if res.Recovered {
		t.Fatalf("recovered without a path: %+v", res)
	}
	// A second without a path at one probe per 10 ms: about 100 probes
	// lost (fewer when ping's pacing slips on a loaded machine), all of
	// them counted as sent.
	if res.Lost < 10 || res.Sent < res.Lost || res.Outage < time.Second {
		t.Errorf("result %+v: want 10 or more probes lost, counted among those sent, an outage of 1 s or more", res)
	}
}
