package host

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/edgefabric/edgefabric/element"
)

// TestScenarios runs the scripts in testdata/scenarios: deterministic
// stories of two hosts on one wire whose expected output is checked in
// (regenerate with go test ./host -run Scenarios -rewrite, then read the
// diff). Commands:
//
//	net [rate=bps] [delay=dur] [delack] [mtu=n] [arp-timeout=dur]
//	drop from=a|b kind=data|all|none [nth=n[,n...]]
//	ping name=N from=a to=b|IP [count=n] [interval=dur]
//	tcp name=N from=a to=b bytes=n [port=p]
//	rr name=N from=a to=b req=n resp=n count=n
//	udp name=N from=a to=b rate=bps size=n dur=dur [port=p]
//	run for=dur
//	result name=N
//	counters host=a|b [prefix=p]
//	arp host=a|b ip=IP
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/scenarios", func(t *testing.T, path string) {
		s := &script{}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return s.do(t, d)
		})
	})
}

type script struct {
	n     *fakeNet
	hosts map[string]*Host
	wires map[string]*wireEnd
	apps  map[string]any
}

func dur(t testing.TB, s string) element.Time {
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("duration %q: %v", s, err)
	}
	return element.Time(d.Nanoseconds()) * element.Nanosecond
}

func (s *script) arg(t testing.TB, d *datadriven.TestData, key, def string) string {
	if a, ok := d.Arg(key); ok {
		if len(a.Vals) == 0 {
			return "true"
		}
		return strings.Join(a.Vals, ",")
	}
	if def == "" {
		t.Fatalf("%s: missing %s", d.Pos, key)
	}
	return def
}

func (s *script) num(t testing.TB, d *datadriven.TestData, key, def string) int64 {
	v, err := strconv.ParseInt(s.arg(t, d, key, def), 10, 64)
	if err != nil {
		t.Fatalf("%s: %s: %v", d.Pos, key, err)
	}
	return v
}

func (s *script) host(t testing.TB, d *datadriven.TestData, key string) *Host {
	h := s.hosts[s.arg(t, d, key, "")]
	if h == nil {
		t.Fatalf("%s: no host %q", d.Pos, s.arg(t, d, key, ""))
	}
	return h
}

func (s *script) addr(t testing.TB, d *datadriven.TestData, key string) netip.Addr {
	v := s.arg(t, d, key, "")
	if h := s.hosts[v]; h != nil {
		return h.Addr()
	}
	a, err := netip.ParseAddr(v)
	if err != nil {
		t.Fatalf("%s: %s: %v", d.Pos, key, err)
	}
	return a
}

func (s *script) do(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "net":
		rate := s.num(t, d, "rate", "1000000000")
		delay := dur(t, s.arg(t, d, "delay", "10us"))
		n, a, b, ab, ba := pair(t, rate, delay, func(c *Config) {
			c.TCP.DelayedACK = d.HasArg("delack")
			c.MTU = int(s.num(t, d, "mtu", "1500"))
			if d.HasArg("arp-timeout") {
				c.ARPTimeout = dur(t, s.arg(t, d, "arp-timeout", ""))
			}
		})
		s.n, s.hosts, s.wires, s.apps = n, map[string]*Host{"a": a, "b": b}, map[string]*wireEnd{"a": ab, "b": ba}, map[string]any{}
		return fmt.Sprintf("a %v\nb %v", a.Prefix(), b.Prefix())
	case "drop":
		w := s.wires[s.arg(t, d, "from", "")]
		switch kind := s.arg(t, d, "kind", ""); kind {
		case "none":
			w.drop = nil
		case "all":
			w.drop = func([]byte) bool { return true }
		case "data":
			nth := map[int]bool{}
			for _, v := range strings.Split(s.arg(t, d, "nth", ""), ",") {
				k, _ := strconv.Atoi(v)
				nth[k] = true
			}
			k := 0
			w.drop = func(f []byte) bool {
				if !isData(f) {
					return false
				}
				k++
				return nth[k]
			}
		default:
			t.Fatalf("%s: kind %q", d.Pos, kind)
		}
		return "ok"
	case "ping":
		h := s.host(t, d, "from")
		s.apps[s.arg(t, d, "name", "")] = h.Ping(s.addr(t, d, "to"), int(s.num(t, d, "count", "1")), dur(t, s.arg(t, d, "interval", "1s")))
		return "ok"
	case "tcp":
		h := s.host(t, d, "from")
		s.apps[s.arg(t, d, "name", "")] = h.TCPBulk(s.addr(t, d, "to"), uint16(s.num(t, d, "port", "5001")), s.num(t, d, "bytes", ""))
		return "ok"
	case "rr":
		h := s.host(t, d, "from")
		s.apps[s.arg(t, d, "name", "")] = h.TCPRR(s.addr(t, d, "to"), int(s.num(t, d, "req", "")), int(s.num(t, d, "resp", "")), int(s.num(t, d, "count", "")))
		return "ok"
	case "udp":
		h := s.host(t, d, "from")
		s.apps[s.arg(t, d, "name", "")] = h.UDP(s.addr(t, d, "to"), uint16(s.num(t, d, "port", "5001")), s.num(t, d, "rate", ""), int(s.num(t, d, "size", "")), dur(t, s.arg(t, d, "dur", "")))
		return "ok"
	case "run":
		s.n.run(s.n.now + dur(t, s.arg(t, d, "for", "")))
		return fmt.Sprintf("now %v", s.n.now)
	case "result":
		return s.result(t, d)
	case "counters":
		h := s.host(t, d, "host")
		prefix := s.arg(t, d, "prefix", "-")
		m := h.Counters()
		var names []string
		for k := range m {
			if prefix == "-" || strings.HasPrefix(k, prefix) {
				names = append(names, k)
			}
		}
		sort.Strings(names)
		var b strings.Builder
		for _, k := range names {
			fmt.Fprintf(&b, "%s %d\n", k, m[k])
		}
		return b.String()
	case "arp":
		h := s.host(t, d, "host")
		e, ok := h.ARPCache(s.addr(t, d, "ip"))
		if !ok {
			return "no entry"
		}
		return fmt.Sprintf("mac %v resolved %v expires %v queued %d", e.MAC, e.Resolved, e.Expires, e.Queued)
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}

func (s *script) result(t *testing.T, d *datadriven.TestData) string {
	name := s.arg(t, d, "name", "")
	switch a := s.apps[name].(type) {
	case *PingApp:
		r := a.Result()
		var rtts []string
		for _, x := range r.RTTs {
			rtts = append(rtts, x.String())
		}
		return fmt.Sprintf("done %v sent %d received %d loss %.2f\nrtts %s", a.Done(), r.Sent, r.Received, r.Loss, strings.Join(rtts, " "))
	case *TCPConn:
		r := a.Result()
		completion := "-"
		if r.Completed > 0 {
			completion = element.Time(r.Completed - r.Start).String()
		}
		return fmt.Sprintf("done %v state %s err %v\nacked %d completion %s goodput %.1fMb/s\nretransmits %d fast %d timeouts %d\ncwnd %d ssthresh %d srtt %v rto %v",
			a.Done(), r.State, a.Err(), r.BytesAcked, completion, r.GoodputBps/1e6,
			r.Retransmits, r.FastRetransmits, r.Timeouts, a.Cwnd(), min(a.Ssthresh(), 1<<40), a.SRTT(), a.RTO())
	case *RRApp:
		r := a.Result()
		var rtts []string
		for _, x := range r.RTTs {
			rtts = append(rtts, x.String())
		}
		return fmt.Sprintf("done %v transactions %d err %v\nrtts %s", a.Done(), r.Transactions, a.Err(), strings.Join(rtts, " "))
	case *UDPApp:
		rx := s.hosts["b"]
		if a.h == rx {
			rx = s.hosts["a"]
		}
		r := a.ResultWith(rx)
		return fmt.Sprintf("done %v sent %d received %d lost %d span %v", a.Done(), r.Sent, r.Received, *r.Lost, element.Time(r.End-r.Start))
	}
	t.Fatalf("%s: no app %q", d.Pos, name)
	return ""
}
