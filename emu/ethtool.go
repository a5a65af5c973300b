package emu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
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

	ethtoolGSTRINGS   = 0x1b // get a string set
	ethtoolGSSETINFO  = 0x37 // get string set sizes
	ethtoolGFEATURES  = 0x3a // get device features
	ethtoolSFEATURES  = 0x3b // set device features
	ethSSFeatures     = 4    // ETH_SS_FEATURES: the feature names
	ethGStringLen     = 32
	maxEthtoolStrings = 4096 // far above any kernel's feature count
)

// ethtoolValue is struct ethtool_value.
type ethtoolValue struct {
	cmd  uint32
	data uint32
}

// ifreqData is struct ifreq with the ifr_data member.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer // a pointer, not a uintptr: the GC sees it
	_    [16]byte       // rest of the union
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
	// The legacy TSO switch knows only the TSO bits of its day: Linux
	// 6.18's tx-tcp-accecn-segmentation stays on (and the kernel keeps it
	// active without TX checksum), so an AccECN connection could still
	// hand a veth 64 KiB super-frames; so could SCTP's (its segmentation
	// needs no checksum offload). Every segmentation feature, by name,
	// goes off.
	if err := featuresOff(fd, name, isSegmentation); err != nil && !errors.Is(err, unix.EOPNOTSUPP) {
		errs = append(errs, fmt.Errorf("ethtool features on %s: %w", name, err))
	}
	return errors.Join(errs...)
}

// isSegmentation matches the names of the segmentation offloads:
// tx-tcp-segmentation, tx-tcp6-segmentation, tx-tcp-accecn-segmentation,
// tx-sctp-segmentation, tx-udp-segmentation, the tunnels' (tx-gre-,
// tx-udp_tnl-segmentation, ...), tx-gso-list and tx-gso-partial.
func isSegmentation(feature string) bool {
	return strings.HasPrefix(feature, "tx-") &&
		(strings.HasSuffix(feature, "-segmentation") || feature == "tx-gso-list" || feature == "tx-gso-partial")
}

// featureNames returns the device's feature names, by bit
// (ETH_SS_FEATURES).
func featureNames(fd int, name string) ([]string, error) {
	info := make([]byte, 24) // ethtool_sset_info with one data word
	binary.NativeEndian.PutUint32(info[0:], ethtoolGSSETINFO)
	binary.NativeEndian.PutUint64(info[8:], 1<<ethSSFeatures)
	if err := ethtoolBuf(fd, name, info); err != nil {
		return nil, err
	}
	if binary.NativeEndian.Uint64(info[8:])&(1<<ethSSFeatures) == 0 {
		return nil, unix.EOPNOTSUPP
	}
	n := binary.NativeEndian.Uint32(info[16:])
	if n == 0 || n > maxEthtoolStrings {
		return nil, fmt.Errorf("%d feature names", n)
	}
	gs := make([]byte, 12+int(n)*ethGStringLen) // ethtool_gstrings
	binary.NativeEndian.PutUint32(gs[0:], ethtoolGSTRINGS)
	binary.NativeEndian.PutUint32(gs[4:], ethSSFeatures)
	binary.NativeEndian.PutUint32(gs[8:], n)
	if err := ethtoolBuf(fd, name, gs); err != nil {
		return nil, err
	}
	names := make([]string, n)
	for i := range names {
		b := gs[12+i*ethGStringLen : 12+(i+1)*ethGStringLen]
		if j := strings.IndexByte(string(b), 0); j >= 0 {
			b = b[:j]
		}
		names[i] = string(b)
	}
	return names, nil
}

// featuresOff turns off every feature of device name whose name match
// accepts (ETHTOOL_SFEATURES); one the device cannot change stays as it
// is, as with the legacy switches.
func featuresOff(fd int, name string, match func(string) bool) error {
	names, err := featureNames(fd, name)
	if err != nil {
		return err
	}
	blocks := (len(names) + 31) / 32
	sf := make([]byte, 8+8*blocks) // ethtool_sfeatures: {valid, requested} per block
	binary.NativeEndian.PutUint32(sf[0:], ethtoolSFEATURES)
	binary.NativeEndian.PutUint32(sf[4:], uint32(blocks))
	some := false
	for i, f := range names {
		if match(f) {
			off := 8 + 8*(i/32)
			binary.NativeEndian.PutUint32(sf[off:], binary.NativeEndian.Uint32(sf[off:])|1<<(i%32))
			some = true
		}
	}
	if !some {
		return nil
	}
	return ethtoolBuf(fd, name, sf)
}

// activeFeatures returns the names of device name's active features that
// match accepts (ETHTOOL_GFEATURES), in the calling thread's namespace.
func activeFeatures(name string, match func(string) bool) ([]string, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	names, err := featureNames(fd, name)
	if err != nil {
		return nil, err
	}
	blocks := (len(names) + 31) / 32
	gf := make([]byte, 8+16*blocks) // ethtool_gfeatures
	binary.NativeEndian.PutUint32(gf[0:], ethtoolGFEATURES)
	binary.NativeEndian.PutUint32(gf[4:], uint32(blocks))
	if err := ethtoolBuf(fd, name, gf); err != nil {
		return nil, err
	}
	var on []string
	for i, f := range names {
		active := binary.NativeEndian.Uint32(gf[8+16*(i/32)+8:]) // available, requested, active
		if match(f) && active&(1<<(i%32)) != 0 {
			on = append(on, f)
		}
	}
	return on, nil
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
	ifr.data = unsafe.Pointer(v)
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(v)
	if e != 0 {
		return e
	}
	return nil
}

// ethtoolBuf runs the ethtool command whose struct buf holds (its first
// word is the command); the kernel reads and writes buf in place.
func ethtoolBuf(fd int, name string, buf []byte) error {
	if len(name) >= unix.IFNAMSIZ {
		return fmt.Errorf("interface name %q too long", name)
	}
	var ifr ifreqData
	copy(ifr.name[:], name)
	ifr.data = unsafe.Pointer(&buf[0])
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(buf)
	if e != 0 {
		return e
	}
	return nil
}
