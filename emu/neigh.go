package emu

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The kernel keeps one neighbour (ARP) table for every network namespace of
// the machine, bounded by net.ipv4.neigh.default.gc_thresh3 (1024 entries
// by default). A lab whose hosts all talk to each other needs about
// hosts×(hosts-1) entries: past the bound the kernel drops packets before
// they reach any interface ("neighbor table overflow" in dmesg), which
// looks like a fabric losing traffic. The setting is machine-wide, so the
// emulator never changes it; it warns when a lab can overflow it.

const gcThresh3 = "/proc/sys/net/ipv4/neigh/default/gc_thresh3"

// neighWarning returns a warning when hosts talking all-to-all would
// overflow the kernel's shared neighbour table, or "" when they fit.
func neighWarning(hosts int, readFile func(string) ([]byte, error)) string {
	b, err := readFile(gcThresh3)
	if err != nil {
		return ""
	}
	limit, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return ""
	}
	need := hosts * (hosts - 1)
	if need <= limit {
		return ""
	}
	return fmt.Sprintf("%d hosts talking all-to-all need up to %d kernel neighbour entries, "+
		"and the machine-wide limit is %d (shared by every namespace): past it the kernel drops packets. "+
		"Raise it with: sysctl -w net.ipv4.neigh.default.gc_thresh2=%d net.ipv4.neigh.default.gc_thresh3=%d",
		hosts, need, limit, need, 2*need)
}

func readProc(path string) ([]byte, error) { return os.ReadFile(path) }
