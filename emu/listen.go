package emu

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"
)

// WaitListening waits until a TCP socket listens on port in node's
// namespace, as its /proc/net/tcp and tcp6 show it. A server started in the
// background (iperf3 -s, -D) is not listening the moment its start
// returns; a client sent right away would be refused. Connecting to find
// out would not do: iperf3 -s -1 takes the probe for its one client.
func (l *Lab) WaitListening(ctx context.Context, node string, port int) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		out, err := l.Exec(ctx, node, "cat", "/proc/net/tcp", "/proc/net/tcp6")
		if err == nil && listening(out, port) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("emu: %s: nothing listens on TCP port %d: %w", node, port, ctx.Err())
		case <-tick.C:
		}
	}
}

// listening reports whether the /proc/net/tcp (or tcp6) table holds a
// socket in state LISTEN (0A) on port. Each line after the header reads
// "sl local_address rem_address st ...", the local address as hex
// ADDR:PORT.
func listening(table []byte, port int) bool {
	for _, line := range bytes.Split(table, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) < 4 || !bytes.Equal(f[3], []byte("0A")) {
			continue
		}
		i := bytes.LastIndexByte(f[1], ':')
		if i < 0 {
			continue
		}
		if p, err := strconv.ParseUint(string(f[1][i+1:]), 16, 16); err == nil && int(p) == port {
			return true
		}
	}
	return false
}
