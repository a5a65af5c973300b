// Package host is edgefabric's simulated end host: an IPv4 stack with ARP,
// ICMP echo, UDP, a DHCP client and a segment-level TCP model, plus the
// workloads the seeds measure with (ping, constant-rate UDP, bulk TCP,
// netperf-style TCP_RR and SPAIN's all-to-all shuffle).
//
// A Host is an element.Element with one port, its NIC (port 1), so either
// engine drives it; in the simulator every host node runs one:
//
//	h := host.New(host.Config{Name: "h1", MAC: mac, IP: netip.MustParsePrefix("10.0.0.1/8")})
//	sim.PlaceHost(n, agent, h) // or Place(n, h) without a host agent
//
// Apps are started from inside the engine's context (a scheduled event or
// a timer), never concurrently with it, and report through a result
// struct that marshals to JSON, a Done flag and OnDone callbacks:
//
//	p := h.Ping(dst, 10, element.Millisecond)
//	c := h.TCPBulk(dst, host.DiscardPort, 10<<20)
//	r := h.TCPRR(dst, 64, 64, 1000)
//	u := h.UDP(dst, 5001, 100_000_000, 1472, element.Second)
//	s := host.StartShuffle(hosts, host.ShuffleOptions{Bytes: 1 << 20})
//
// Every host answers: ICMP echo, a TCP sink on every port (Config.NoSink
// turns it off), the request/response server on RRPort, and UDP counted by
// port and by flow.
//
// Frames are real: Ethernet, IPv4, ICMP, UDP and TCP with correct
// checksums, so a capture of a simulation decodes in tshark. IPv4/TCP/UDP
// are built and parsed in place (the hot path); ARP and DHCP go through
// package wire. Every malformed or unexpected frame is dropped and counted
// by reason in Counters (element.CounterReporter), never a panic.
//
// TCP follows RFC 9293 for the state machine, RFC 5681 and RFC 6582
// (NewReno) for congestion control, RFC 6298 for the RTO with exponential
// backoff, RFC 7323 window scaling, optional delayed ACKs, and no SACK.
// Its state (Cwnd, Retransmits, Timeouts, SRTT, BytesAcked) is exposed per
// connection; Host.SegmentInfo gives a host agent such as SPAIN's driver
// the congestion window of the flow an outgoing frame belongs to and
// whether the frame is a retransmission (SPAIN Algorithm 4).
//
// The host is deterministic: time only from Env.Now, randomness (ISNs,
// DHCP transaction IDs and jitter, shuffle order) only from Env.Rand.
package host
