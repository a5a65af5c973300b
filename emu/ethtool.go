package emu

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Legacy ethtool commands (linux/ethtool.h). They are stable ABI and every
// kernel still honours them, so no ethtool binary is needed.
const (
	ethtoolSTXCSUM = 0x17 // set TX checksum offload
	ethtoolSSG     = 0x19 // set scatter-gather
	ethtoolSTSO    = 0x1f // set TCP segmentation offload
	ethtoolSGSO    = 0x24 // set generic segmentation offload
	ethtoolSGRO    = 0x2c // set generic receive offload
	ethtoolGTXCSUM = 0x16 // get TX checksum offload
)

// ethtoolValue is struct ethtool_value.
type ethtoolValue struct {
	cmd  uint32
	data uint32
}

// ifreqData is struct ifreq with the ifr_data member.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data uintptr
	_    [16]byte // rest of the union
}

// offloadsOff turns off TX checksum, TSO, GSO and GRO on device name in the
// calling thread's namespace.
//
// Why: a frame the kernel sends on a veth with TX checksum offload carries
// an unfinished checksum (CHECKSUM_PARTIAL) and only its pseudo-header sum.
// Read through AF_PACKET and written out again, it arrives at a host as an
// ordinary frame with a wrong checksum, and the host drops it. With TX
// checksum off the kernel finishes every checksum in software before the
// frame leaves the stack; with TSO/GSO/GRO off no frame is larger than the
// MTU, so an element never sees a 64 KiB super-frame.
func offloadsOff(name string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("emu: ethtool socket: %w", err)
	}
	defer unix.Close(fd)
	var errs []error
	// GSO and GRO first: TSO depends on TX checksum and falls with it.
	for _, cmd := range []uint32{ethtoolSGSO, ethtoolSGRO, ethtoolSTSO, ethtoolSTXCSUM} {
		if err := ethtoolSet(fd, name, cmd, 0); err != nil && !errors.Is(err, unix.EOPNOTSUPP) {
			errs = append(errs, fmt.Errorf("ethtool cmd %#x on %s: %w", cmd, name, err))
		}
	}
	return errors.Join(errs...)
}

// txChecksum reports whether TX checksum offload is on for device name in
// the calling thread's namespace.
func txChecksum(name string) (bool, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false, err
	}
	defer unix.Close(fd)
	v := ethtoolValue{cmd: ethtoolGTXCSUM}
	if err := ethtoolIoctl(fd, name, &v); err != nil {
		return false, err
	}
	return v.data != 0, nil
}

func ethtoolSet(fd int, name string, cmd, val uint32) error {
	v := ethtoolValue{cmd: cmd, data: val}
	return ethtoolIoctl(fd, name, &v)
}

func ethtoolIoctl(fd int, name string, v *ethtoolValue) error {
	if len(name) >= unix.IFNAMSIZ {
		return fmt.Errorf("interface name %q too long", name)
	}
	var ifr ifreqData
	copy(ifr.name[:], name)
	ifr.data = uintptr(unsafe.Pointer(v))
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(v)
	if e != 0 {
		return e
	}
	return nil
}
