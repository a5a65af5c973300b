package emu

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FailoverSpec describes one failover measurement: a steady ping stream
// between two unmodified hosts while the link A-B fails.
type FailoverSpec struct {
	From, To string        // host names: the stream runs From -> To
	A, B     string        // the link to fail (pick one on the active path)
	Interval time.Duration // probe interval; default 10 ms
	Settle   time.Duration // stream time before the failure; default 1 s
	Max      time.Duration // longest wait for recovery; default 120 s
	Repair   bool          // repair the link afterwards (a failed repair is an error)
}

// FailoverResult is the measured outage.
type FailoverResult struct {
	// Outage is the time between the replies around the longest run of
	// lost probes that ends after the failure (until now if no reply came
	// back): how long the hosts could not talk. Zero when no probe was
	// lost.
	Outage time.Duration `json:"outage_ns"`
	Lost   int           `json:"lost"`
	Sent   int           `json:"sent"`
	// Recovered says probes got through again after the failure before
	// Max ran out.
	Recovered bool `json:"recovered"`
}

var icmpSeqRE = regexp.MustCompile(`icmp_seq=(\d+) `)

// Failover measures the outage the hosts see when link A-B fails. The
// stream is the ping of host From, so the measurement includes everything
// a real host goes through (its ARP cache included).
func (l *Lab) Failover(ctx context.Context, s FailoverSpec) (res FailoverResult, err error) {
	if s.Interval <= 0 {
		s.Interval = 10 * time.Millisecond
	}
	if s.Settle <= 0 {
		s.Settle = time.Second
	}
	if s.Max <= 0 {
		s.Max = 120 * time.Second
	}
	to, err := l.node(s.To)
	if err != nil {
		return res, err
	}
	if !to.ip.IsValid() {
		return res, fmt.Errorf("emu: failover: %q: %w", s.To, ErrNotHost)
	}
	if _, err := l.node(s.A); err != nil {
		return res, err
	}
	if _, err := l.node(s.B); err != nil {
		return res, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	iv := strconv.FormatFloat(s.Interval.Seconds(), 'f', 3, 64)
	// -O: ping prints only replies otherwise, and the probes lost after
	// the last one (a failure the fabric never recovers from) would go
	// uncounted, in Lost and in Sent.
	cmd := exec.CommandContext(ctx, "ping", "-n", "-O", "-i", iv, "-W", "1", to.ip.Addr().String())
	out, err := cmd.StdoutPipe()
	if err != nil {
		return res, err
	}
	// ping sends probe n no earlier than (n-1) intervals after it starts,
	// which is after t0: this bounds from below when a probe left.
	t0 := time.Now()
	if err := l.Start(s.From, cmd); err != nil {
		return res, fmt.Errorf("emu: failover: ping: %w", err)
	}
	defer cmd.Wait()
	defer cancel()

	var mu sync.Mutex
	got := map[int]time.Time{}
	lastRx := time.Time{}
	maxGot := 0 // the highest sequence number answered
	sent := 0   // the highest sequence number ping has sent, answered or not
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			m := icmpSeqRE.FindStringSubmatch(sc.Text() + " ")
			if m == nil {
				continue
			}
			seq, _ := strconv.Atoi(m[1])
			mu.Lock()
			sent = max(sent, seq)
			if strings.Contains(sc.Text(), "bytes from") {
				got[seq] = time.Now()
				lastRx = time.Now()
				maxGot = max(maxGot, seq)
			}
			mu.Unlock()
		}
	}()
	select {
	case <-time.After(s.Settle):
	case <-ctx.Done():
		return res, ctx.Err()
	}
	failAt := time.Now()
	if err := l.SetLink(s.A, s.B, false); err != nil {
		return res, err
	}
	if s.Repair {
		// A repair that fails leaves the lab cut for whatever is measured
		// on it next: an error, never a silent result.
		defer func() {
			if rerr := l.SetLink(s.A, s.B, true); rerr != nil {
				err = errors.Join(err, fmt.Errorf("emu: failover: repair %s-%s: %w", s.A, s.B, rerr))
			}
		}()
	}
	// Recovered once a probe sent after the link went down has come back,
	// then keep streaming one more second to see no second outage
	// follows. Only probes numbered from firstAfter on surely left after
	// SetLink returned: a reply that merely arrives late (a loaded
	// machine, a probe that crossed the link just before) is no recovery;
	// it once made a cut edge look recovered.
	firstAfter := firstSentAfter(t0, time.Now(), s.Interval)
	deadline := failAt.Add(s.Max)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		mu.Lock()
		rec := recoveredBy(maxGot, firstAfter, lastRx, time.Now(), s.Interval)
		mu.Unlock()
		if rec {
			res.Recovered = true
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
			}
			break
		}
		time.Sleep(s.Interval)
	}
	cancel()
	mu.Lock()
	defer mu.Unlock()
	maxSeq := 0
	for seq := range got {
		maxSeq = max(maxSeq, seq)
	}
	if len(got) == 0 {
		return res, fmt.Errorf("emu: failover: no probe from %s to %s ever got through", s.From, s.To)
	}
	if !res.Recovered {
		// Everything sent after the last reply was lost. (When the
		// stream recovered, the last probes may merely be in flight.)
		maxSeq = max(maxSeq, sent)
	}
	var outage time.Duration
	res.Lost, outage = longestGap(got, maxSeq, s.Interval, failAt)
	if !res.Recovered {
		// Everything after the last reply was lost too.
		outage = max(outage, time.Since(failAt))
	}
	res.Outage = max(outage, 0)
	res.Sent = maxSeq
	return res, nil
}

// firstSentAfter is the lowest ping sequence number surely sent after
// down by a ping started after t0 with this interval: ping sends probe n
// no earlier than (n-1) intervals after it starts (pacing only slips
// later).
func firstSentAfter(t0, down time.Time, interval time.Duration) int {
	return int(down.Sub(t0)/interval) + 2
}

// recoveredBy says whether a ping stream has recovered at now: a probe
// numbered firstAfter or later has been answered (maxGot is the highest
// answered), and the last reply, at lastRx, is recent.
func recoveredBy(maxGot, firstAfter int, lastRx, now time.Time, interval time.Duration) bool {
	return maxGot >= firstAfter && now.Sub(lastRx) < 5*interval
}

// longestGap finds the longest run of lost probes among sequence numbers
// 1..maxSeq, given the arrival time of each probe that came back, and
// returns the number lost and the outage: the time between the replies
// around the run (ping's own pacing slips on a loaded machine), or the run
// counted in intervals when it has no reply on one side. Only runs that
// end after the failure at failAt count, in the outage and in the number
// lost: a probe lost before it (to the bulk flow's slow start filling a
// queue) is not the failover's.
func longestGap(got map[int]time.Time, maxSeq int, interval time.Duration, failAt time.Time) (lost int, outage time.Duration) {
	run, longest, lastOK := 0, 0, 0
	for seq := 1; seq <= maxSeq+1; seq++ {
		t, ok := got[seq]
		if ok && run > 0 && t.Before(failAt) {
			lost -= run // a run over before the failure
			run, lastOK = 0, seq
			continue
		}
		if ok || seq == maxSeq+1 {
			if run > longest {
				longest = run
				// A run of lost probes lasted at least its count of
				// intervals; replies around it can only stretch that
				// (ping's pacing slips on a loaded machine), never
				// shrink it.
				outage = time.Duration(run) * interval
				if t0, ok0 := got[lastOK]; ok0 && ok {
					outage = max(outage, t.Sub(t0)-interval)
				}
			}
			run, lastOK = 0, seq
			continue
		}
		lost++
		run++
	}
	return lost, outage
}
