package emu

import (
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"
)

// A table as the kernel writes it: a LISTEN socket on 5201 (IPv6 any),
// one ESTABLISHED on 22, one LISTEN on 22.
const procNetTCP = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:1451 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 31345 1 0000000000000000 100 0 0 10 0
   1: 0100007F:0016 0100007F:D2F4 01 00000000:00000000 00:00000000 00000000     0        0 31346 1 0000000000000000 20 4 30 10 -1
   2: 00000000:0017 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 31347 1 0000000000000000 100 0 0 10 0
`

func TestListening(t *testing.T) {
	for _, c := range []struct {
		port int
		want bool
	}{
		{5201, true}, // LISTEN
		{22, false},  // only established
		{23, true},
		{0, false},
		{0x1452, false},
	} {
		if got := listening([]byte(procNetTCP), c.port); got != c.want {
			t.Errorf("listening(%d) = %v, want %v", c.port, got, c.want)
		}
	}
	for _, bad := range []string{"", "\n\n", "0: x 0A", "0: :zz y 0A", "0: 1451 y 0A", "0: :1451"} {
		if listening([]byte(bad), 0x1451) {
			t.Errorf("listening(%q) = true", bad)
		}
	}
}

func FuzzListening(f *testing.F) {
	f.Add([]byte(procNetTCP), 5201)
	f.Fuzz(func(t *testing.T, table []byte, port int) {
		listening(table, port) // no panic, whatever the table
		// Whatever precedes it, a LISTEN line for the port is found.
		port &= 0xffff
		line := fmt.Sprintf("\n 9: 00000000:%04X 00000000:0000 0A 0", port)
		if !listening(append(table, line...), port) {
			t.Errorf("listening(%q + %q, %d) = false", table, line, port)
		}
	})
}

// WaitListening waits for a real server in a real namespace, and gives up,
// with an error that names the port, when nothing comes to listen.
func TestWaitListening(t *testing.T) {
	needRoot(t)
	needTool(t, "iperf3")
	var fabrics []*testFabric
	l := upLab(t, star(t, 2), "learn", Options{Registry: testRegistry(t, &fabrics)})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := l.WaitListening(ctx, "h2", 5299); err == nil {
		t.Fatal("WaitListening: nothing listens on 5299, and it returned nil")
	}
	srv := exec.Command("iperf3", "-s", "-1", "-p", "5299")
	if err := l.Start("h2", srv); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.WaitListening(ctx, "h2", 5299); err != nil {
		t.Fatal(err)
	}
	if out, err := l.Exec(ctx, "h1", "iperf3", "-c", "10.0.0.2", "-p", "5299", "-t", "1"); err != nil {
		t.Fatalf("iperf3 right after WaitListening: %v\n%s", err, out)
	}
}
