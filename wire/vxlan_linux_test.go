//go:build linux

package wire

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/edgefabric/edgefabric/internal/testenv"
)

// TestVXLANLinuxInterop checks VXLANEncap and VXLANDecap against the Linux
// kernel's vxlan device (DESIGN.md §4). Two namespaces joined by a veth
// pair: in "b" a vxlan device (VNI 5000, UDP 4789) with address 10.9.0.2;
// in "a" a raw socket on the veth. We send an ARP request for 10.9.0.2
// encapsulated by VXLANEncap; the kernel must decapsulate it, answer, and
// encapsulate the reply, which VXLANDecap must open. Needs root and ip(8);
// skips otherwise (CI runs as root).
func TestVXLANLinuxInterop(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedTools(t, "ip")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prefix := fmt.Sprintf("efwire%d", os.Getpid())
	nsA, nsB := prefix+"a", prefix+"b"
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v\n%s", args, err, out)
		}
	}
	for _, ns := range []string{nsA, nsB} {
		ip("netns", "add", ns)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	}
	macVA := MAC{0x02, 0xef, 0, 0, 0x0a, 0x01}
	macVB := MAC{0x02, 0xef, 0, 0, 0x0b, 0x01}
	macVX := MAC{0x02, 0xef, 0, 0, 0x0b, 0x02}
	ip("-n", nsA, "link", "add", "va", "address", macVA.String(), "type", "veth", "peer", "name", "vb", "netns", nsB, "address", macVB.String())
	ip("-n", nsA, "addr", "add", "192.0.2.1/24", "dev", "va")
	ip("-n", nsA, "link", "set", "va", "up")
	ip("-n", nsB, "addr", "add", "192.0.2.2/24", "dev", "vb")
	ip("-n", nsB, "link", "set", "vb", "up")
	ip("-n", nsB, "link", "add", "vx0", "address", macVX.String(), "type", "vxlan", "id", "5000",
		"local", "192.0.2.2", "remote", "192.0.2.1", "dstport", "4789", "dev", "vb")
	ip("-n", nsB, "addr", "add", "10.9.0.2/24", "dev", "vx0")
	ip("-n", nsB, "link", "set", "vx0", "up")

	fd := rawSocketIn(t, nsA, "va")
	defer unix.Close(fd)

	inner, err := AppendARPFrame(nil, Broadcast, 0, &ARP{Op: ARPRequest, SenderMAC: macA,
		SenderIP: netip.MustParseAddr("10.9.0.1"), TargetIP: netip.MustParseAddr("10.9.0.2")})
	if err != nil {
		t.Fatal(err)
	}
	outer := &VXLANOuter{SrcMAC: macVA, DstMAC: macVB, Src: netip.MustParseAddr("192.0.2.1"),
		Dst: netip.MustParseAddr("192.0.2.2"), SrcPort: VXLANSourcePort(inner), VNI: 5000}
	frame, err := VXLANEncap(nil, outer, inner)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2048)
	deadline := time.Now().Add(10 * time.Second)
	nextSend := time.Now()
	for time.Now().Before(deadline) {
		if time.Now().After(nextSend) { // resend: the first may race the kernel's own ARP for 192.0.2.1
			if _, err := unix.Write(fd, frame); err != nil {
				t.Fatalf("send: %v", err)
			}
			nextSend = time.Now().Add(time.Second)
		}
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			continue // timeout: send again
		}
		vni, in, err := VXLANDecap(buf[:n])
		if err != nil {
			continue // the kernel's own ARP, ICMP port unreachable ...
		}
		reply, err := DecodeARP(in)
		if err != nil || reply.Op != ARPReply {
			continue
		}
		if vni != 5000 || reply.SenderIP != netip.MustParseAddr("10.9.0.2") || reply.SenderMAC != macVX || reply.TargetMAC != macA {
			t.Fatalf("kernel's answer: VNI %d, %+v", vni, reply)
		}
		return
	}
	t.Fatal("no VXLAN-encapsulated ARP reply from the kernel's vxlan device within 10 s")
}

// rawSocketIn opens an AF_PACKET socket bound to ifname inside namespace ns.
func rawSocketIn(t *testing.T, ns, ifname string) int {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	h, err := netns.GetFromName(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := netns.Set(h); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := netns.Set(orig); err != nil {
			panic(err) // this thread is in the wrong namespace; do not let it run anything else
		}
	}()
	proto := uint16(unix.ETH_P_ALL)<<8 | uint16(unix.ETH_P_ALL)>>8 // htons
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(proto))
	if err != nil {
		t.Fatal(err)
	}
	ifi, err := ifIndex(ifname)
	if err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: proto, Ifindex: ifi}); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	tv := unix.Timeval{Usec: 200_000}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	return fd
}

func ifIndex(name string) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return 0, err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFINDEX, ifr); err != nil {
		return 0, fmt.Errorf("SIOCGIFINDEX %s: %w", name, err)
	}
	return int(ifr.Uint32()), nil
}
