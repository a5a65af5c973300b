package emu

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// tapPort is a TAP device's fd: frames the host's kernel sends on the TAP
// are read here, frames written here arrive at the host's kernel.
type tapPort struct {
	f *os.File
}

// ifreqFlags is struct ifreq with the ifr_flags member.
type ifreqFlags struct {
	name  [unix.IFNAMSIZ]byte
	flags uint16
	_     [22]byte
}

// openTAP creates TAP device name in the calling thread's namespace. The
// device lives as long as the fd (not persistent), so a crashed daemon
// leaves no TAP behind. No IFF_VNET_HDR and no TUNSETOFFLOAD: the kernel
// then finishes every checksum and segments every frame before handing it
// to us.
func openTAP(name string) (*tapPort, error) {
	if len(name) >= unix.IFNAMSIZ {
		return nil, fmt.Errorf("emu: tap name %q too long", name)
	}
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("emu: open /dev/net/tun: %w", err)
	}
	var ifr ifreqFlags
	copy(ifr.name[:], name)
	ifr.flags = unix.IFF_TAP | unix.IFF_NO_PI
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TUNSETIFF, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		unix.Close(fd)
		return nil, fmt.Errorf("emu: tap %s: TUNSETIFF: %w", name, e)
	}
	return &tapPort{f: os.NewFile(uintptr(fd), "tap:"+name)}, nil
}

// ReadFrame reads one frame. A frame longer than the buffer is not an
// error for tun: it copies what fits and returns that length, so a read
// that fills the buffer may have been cut. Frames longer than len(buf)-4
// (maxFrame, the limit of the AF_PACKET ports too) are refused whole, as
// errOversize, never handed on truncated; the host can send them by
// raising its TAP's MTU.
func (t *tapPort) ReadFrame(buf []byte) (int, error) {
	n, err := t.f.Read(buf)
	if err != nil {
		return 0, err
	}
	if n > len(buf)-4 {
		return 0, errOversize
	}
	return n, nil
}

func (t *tapPort) WriteFrame(frame []byte) error {
	_, err := t.f.Write(frame)
	return err
}

func (t *tapPort) Close() error { return t.f.Close() }
