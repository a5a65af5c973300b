package emu

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// iperfTCP runs an iperf3 TCP test from client to server (at ip) for secs
// seconds and returns the received rate in Mb/s.
func iperfTCP(t testing.TB, l *Lab, client, server, ip string, secs int) float64 {
	return iperfRun(t, l, client, server, ip, secs, nil)
}

func iperfRun(t testing.TB, l *Lab, client, server, ip string, secs int, extra []string) float64 {
	t.Helper()
	srv := exec.Command("iperf3", "-s", "-1", "-p", "5201")
	if err := l.Start(server, srv); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs+20)*time.Second)
	defer cancel()
	if err := l.WaitListening(ctx, server, 5201); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"iperf3", "-c", ip, "-p", "5201", "-J", "-t", strconv.Itoa(secs)}, extra...)
	out, err := l.Exec(ctx, client, args...)
	var r iperfResult
	if err == nil {
		if err = json.Unmarshal(out, &r); err == nil && r.Error != "" {
			err = errors.New(r.Error)
		}
	}
	if err != nil {
		t.Fatalf("iperf3: %v\n%s", err, out)
	}
	for i, a := range extra {
		if a == "-l" && i+1 < len(extra) && r.End.SumReceived.Seconds > 0 {
			// UDP: datagrams per second that arrived (iperf3's own
			// packet counts mix sender and receiver views).
			size, _ := strconv.Atoi(extra[i+1])
			return float64(r.End.SumReceived.Bytes) / float64(size) / r.End.SumReceived.Seconds
		}
	}
	return r.End.SumReceived.BitsPerSecond / 1e6
}

type iperfResult struct {
	Error string `json:"error"`
	End   struct {
		SumReceived struct {
			BitsPerSecond float64 `json:"bits_per_second"`
			Bytes         int64   `json:"bytes"`
			Seconds       float64 `json:"seconds"`
		} `json:"sum_received"`
		Sum struct {
			BitsPerSecond float64 `json:"bits_per_second"`
			Packets       int64   `json:"packets"`
			LostPackets   int64   `json:"lost_packets"`
			Seconds       float64 `json:"seconds"`
		} `json:"sum"`
	} `json:"end"`
}
