package emu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxFrame bounds one frame read from a port: a 9000-byte jumbo frame plus
// Ethernet and two VLAN headers. Offloads are off, so nothing larger comes.
const maxFrame = 9216 + 14 + 8

// sizeofAuxdata is sizeof(struct tpacket_auxdata).
const sizeofAuxdata = int(unsafe.Sizeof(unix.TpacketAuxdata{}))

// frameIO is one port's transport: an AF_PACKET socket or a TAP fd. It is
// an interface so that the element runner can be tested without a kernel.
type frameIO interface {
	// ReadFrame reads one frame into buf and returns its length; it blocks
	// until a frame arrives or the port is closed (then it returns an
	// error wrapping os.ErrClosed).
	ReadFrame(buf []byte) (int, error)
	// WriteFrame sends one frame.
	WriteFrame(frame []byte) error
	Close() error
}

// packetPort is an AF_PACKET socket bound to one interface.
type packetPort struct {
	f  *os.File
	rc syscall.RawConn
	fd int

	// Read state, reused by the one reader goroutine so that a read
	// allocates nothing: the closure handed to RawConn.Read and its
	// in/out values.
	oob    [64]byte // one cmsg with a tpacket_auxdata (36 bytes)
	rdata  []byte
	rn     int
	roobn  int
	rflags int
	rerr   error
	readFn func(fd uintptr) bool
}

// ethPAll is ETH_P_ALL in network byte order, as socket(2) and bind(2) want.
var ethPAll = htons(unix.ETH_P_ALL)

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// openPacketPort opens an AF_PACKET socket on interface ifindex. Call it on a
// thread inside the interface's namespace: the socket stays there.
//
// The socket is created with protocol 0, which receives nothing, and only
// bind(2) sets ETH_P_ALL together with the interface: a socket created with
// ETH_P_ALL would first see every interface's frames until bound.
// PACKET_IGNORE_OUTGOING keeps the socket from reading its own sends.
// PACKET_AUXDATA delivers the VLAN tag that the receive path strips from
// every tagged frame, so that ReadFrame can put it back.
func openPacketPort(ifindex int) (*packetPort, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("emu: af_packet socket: %w", err)
	}
	fail := func(what string, err error) (*packetPort, error) {
		unix.Close(fd)
		return nil, fmt.Errorf("emu: af_packet %s: %w", what, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1); err != nil {
		return fail("ignore outgoing", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1); err != nil {
		return fail("auxdata", err)
	}
	// Room for bursts: 4 MiB each way (the kernel doubles it).
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 4<<20)
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, 4<<20)
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: ethPAll, Ifindex: ifindex}); err != nil {
		return fail("bind", err)
	}
	f := os.NewFile(uintptr(fd), fmt.Sprintf("af_packet:%d", ifindex))
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("emu: af_packet: %w", err)
	}
	p := &packetPort{f: f, rc: rc, fd: fd}
	p.readFn = func(fd uintptr) bool {
		p.rn, p.roobn, p.rflags, _, p.rerr = unix.Recvmsg(int(fd), p.rdata, p.oob[:], unix.MSG_TRUNC)
		return p.rerr != unix.EAGAIN
	}
	return p, nil
}

// ReadFrame reads one frame, with its VLAN tag restored.
func (p *packetPort) ReadFrame(buf []byte) (int, error) {
	// Leave 4 bytes of room for a tag to be put back.
	p.rdata = buf[:len(buf)-4]
	err := p.rc.Read(p.readFn)
	data, n, oobn, flags, rerr := p.rdata, p.rn, p.roobn, p.rflags, p.rerr
	p.rdata = nil
	if err != nil {
		return 0, err
	}
	if rerr != nil {
		return 0, rerr
	}
	if flags&unix.MSG_TRUNC != 0 || n > len(data) {
		return 0, errOversize
	}
	if tci, tpid, ok := vlanFromAuxdata(p.oob[:oobn]); ok {
		return insertVLAN(buf, n, tpid, tci)
	}
	return n, nil
}

var (
	errOversize = errors.New("frame larger than the read buffer")
	errRunt     = errors.New("frame shorter than an Ethernet header")
)

// vlanFromAuxdata extracts the stripped VLAN tag from the PACKET_AUXDATA
// control message in oob, parsed in place (no allocation per frame).
// Anything malformed reads as "no tag".
//
//	struct cmsghdr { u64 len; s32 level; s32 type; } then the data, and
//	struct tpacket_auxdata { u32 status, len, snaplen; u16 mac, net,
//	                         vlan_tci, vlan_tpid; }
func vlanFromAuxdata(oob []byte) (tci, tpid uint16, ok bool) {
	const hdr = 16
	for len(oob) >= hdr {
		l := binary.NativeEndian.Uint64(oob[0:8])
		level := int32(binary.NativeEndian.Uint32(oob[8:12]))
		typ := int32(binary.NativeEndian.Uint32(oob[12:16]))
		if l < hdr || l > uint64(len(oob)) {
			return 0, 0, false
		}
		data := oob[hdr:l]
		if level == unix.SOL_PACKET && typ == unix.PACKET_AUXDATA && len(data) >= sizeofAuxdata {
			status := binary.NativeEndian.Uint32(data[0:4])
			if status&unix.TP_STATUS_VLAN_VALID == 0 {
				return 0, 0, false
			}
			tci = binary.NativeEndian.Uint16(data[16:18])
			tpid = binary.NativeEndian.Uint16(data[18:20])
			if status&unix.TP_STATUS_VLAN_TPID_VALID == 0 || tpid == 0 {
				tpid = 0x8100
			}
			return tci, tpid, true
		}
		next := (l + 7) &^ 7 // CMSG_ALIGN
		if next >= uint64(len(oob)) {
			break
		}
		oob = oob[next:]
	}
	return 0, 0, false
}

// insertVLAN puts a VLAN tag (tpid, tci) back after the MAC addresses of the
// n-byte frame in buf, which must have 4 bytes of room beyond n. It returns
// the new length.
func insertVLAN(buf []byte, n int, tpid, tci uint16) (int, error) {
	if n < 12 {
		return 0, errRunt
	}
	if n+4 > len(buf) {
		return 0, errOversize
	}
	copy(buf[16:n+4], buf[12:n])
	binary.BigEndian.PutUint16(buf[12:], tpid)
	binary.BigEndian.PutUint16(buf[14:], tci)
	return n + 4, nil
}

// WriteFrame sends one frame out of the interface.
func (p *packetPort) WriteFrame(frame []byte) error {
	_, err := unix.Write(p.fd, frame)
	if err == unix.EAGAIN {
		// The socket's send buffer is full: wait for room like a NIC
		// ring would make the sender wait.
		var werr error
		err = p.rc.Write(func(fd uintptr) bool {
			_, werr = unix.Write(int(fd), frame)
			return werr != unix.EAGAIN
		})
		if err == nil {
			err = werr
		}
	}
	return err
}

// stats returns the kernel's PACKET_STATISTICS for the socket: frames
// received and frames dropped for lack of buffer space, since the last call.
func (p *packetPort) stats() (packets, drops uint32, err error) {
	var st *unix.TpacketStats
	cerr := p.rc.Control(func(fd uintptr) {
		st, err = unix.GetsockoptTpacketStats(int(fd), unix.SOL_PACKET, unix.PACKET_STATISTICS)
	})
	if cerr != nil {
		return 0, 0, cerr
	}
	if err != nil {
		return 0, 0, err
	}
	return st.Packets, st.Drops, nil
}

func (p *packetPort) Close() error { return p.f.Close() }
