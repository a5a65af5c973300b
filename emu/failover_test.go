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

// TestRecoveredOnlyByProbesSentAfter: a reply that arrives late to a
// probe sent before the link went down is no recovery (a loaded machine
// made the demo's cut edge on line:2 look recovered, and the demo then
// waited for an iperf3 that could not finish); a reply to a probe sent
// after is, while replies keep coming.
func TestRecoveredOnlyByProbesSentAfter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	iv := time.Millisecond
	down := t0.Add(1000*iv + iv/2) // probes 1..1001 may have left before
	first := firstSentAfter(t0, down, iv)
	if first != 1002 {
		t.Fatalf("first probe surely after the failure: %d, want 1002", first)
	}
	late := down.Add(10 * iv) // well after the old 3-interval bound
	for _, c := range []struct {
		maxGot int
		lastRx time.Time
		now    time.Time
		want   bool
	}{
		{1001, late, late, false}, // a late reply to a probe sent before
		{1002, late, late, true},
		{1002, late, late.Add(5 * iv), false}, // replies stopped since
		{2000, late, late.Add(4 * iv), true},
	} {
		if got := recoveredBy(c.maxGot, first, c.lastRx, c.now, iv); got != c.want {
			t.Errorf("maxGot %d, %v since the last reply: recovered %v, want %v", c.maxGot, c.now.Sub(c.lastRx), got, c.want)
		}
	}
}

// TestFailoverReportsFailedRepair: with Repair, a link that cannot be
// brought back is an error, not a result that says nothing of it (the
// repair's error was dropped, and the lab stayed cut for whatever was
// measured on it next). Here s1's end of the link is deleted while it is
// down, so that the repair must fail.
func TestFailoverReportsFailedRepair(t *testing.T) {
	needRoot(t)
	needTool(t, "ping")
	var fabrics []*testFabric
	l := upLab(t, star(t, 2), "learn", Options{Registry: testRegistry(t, &fabrics)})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var lid int
	var ifname string
	for i, lk := range l.Status().Links {
		if lk.A == "s1" && lk.B == "h2" {
			lid, ifname = i, lk.AIf
		} else if lk.A == "h2" && lk.B == "s1" {
			lid, ifname = i, lk.BIf
		}
	}
	if ifname == "" {
		t.Fatal("no link s1-h2")
	}
	type result struct {
		res FailoverResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := l.Failover(ctx, FailoverSpec{From: "h1", To: "h2", A: "s1", B: "h2", Settle: 300 * time.Millisecond, Max: 2 * time.Second, Repair: true})
		done <- result{res, err}
	}()
	linkDown := func() bool { l.mu.Lock(); defer l.mu.Unlock(); return !l.links[lid] }
	if !waitUntil(linkDown) {
		t.Fatal("Failover did not take the link down")
	}
	if out, err := l.Exec(ctx, "s1", "ip", "link", "del", ifname); err != nil {
		t.Fatalf("ip link del %s: %v\n%s", ifname, err, out)
	}
	r := <-done
	if r.err == nil {
		t.Fatalf("Failover with a repair that cannot succeed returned %+v and no error", r.res)
	}
	t.Logf("error, as it should: %v", r.err)
}
