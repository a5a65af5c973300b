package emu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// KernelBridge is the built-in scheme name that wires every switch
// namespace as a Linux bridge running the kernel's IEEE 802.1D STP: the
// baseline fabric every scheme is compared with. Hosts stay plain.
const KernelBridge = "kernel-bridge"

// kbConfig holds the kernel bridge's STP settings, from the scheme params
// stp=on|off, forward_delay, hello_time, max_age (seconds, as in 802.1D and
// "ip link ... type bridge", which takes hundredths of seconds).
type kbConfig struct {
	stp                         bool
	forwardDelay, hello, maxAge time.Duration
}

// parseKBParams reads the kernel-bridge params. 802.1D defaults: forward
// delay 15 s, hello 2 s, max age 20 s; the kernel accepts forward delay
// 2..30 s, hello 1..10 s, max age 6..40 s.
func parseKBParams(p map[string]string) (kbConfig, error) {
	c := kbConfig{stp: true, forwardDelay: 15 * time.Second, hello: 2 * time.Second, maxAge: 20 * time.Second}
	for k, v := range p {
		switch k {
		case "stp":
			switch v {
			case "on", "true", "1":
				c.stp = true
			case "off", "false", "0":
				c.stp = false
			default:
				return c, fmt.Errorf("emu: kernel-bridge: %w: stp=%q (on or off)", ErrBadOption, v)
			}
		case "forward_delay", "hello_time", "max_age":
			f, err := strconv.ParseFloat(v, 64)
			lo, hi := kbRange[k][0], kbRange[k][1]
			if err != nil || !(f >= lo && f <= hi) { // NaN fails both
				return c, fmt.Errorf("emu: kernel-bridge: %w: %s=%q (seconds, %g..%g)", ErrBadOption, k, v, lo, hi)
			}
			d := time.Duration(f * float64(time.Second))
			switch k {
			case "forward_delay":
				c.forwardDelay = d
			case "hello_time":
				c.hello = d
			default:
				c.maxAge = d
			}
		default:
			return c, fmt.Errorf("emu: kernel-bridge: %w: unknown param %q (known: stp, forward_delay, hello_time, max_age)", ErrBadOption, k)
		}
	}
	return c, nil
}

// kbRange is what the kernel accepts for each timer, in seconds.
var kbRange = map[string][2]float64{"forward_delay": {2, 30}, "hello_time": {1, 10}, "max_age": {6, 40}}

// centis converts to the bridge's clock_t unit, hundredths of a second.
func centis(d time.Duration) uint32 { return uint32(d / (10 * time.Millisecond)) }

// setBridgeSTP sets STP and its timers on bridge ifindex. It runs on a
// thread inside the bridge's namespace: the request's socket is opened
// there. The netlink package has no field for these attributes, so the
// request is built by hand.
func setBridgeSTP(ifindex int, c kbConfig) error {
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(ifindex)
	req.AddData(msg)
	info := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	info.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated("bridge"))
	data := info.AddRtAttr(nl.IFLA_INFO_DATA, nil)
	stp := uint32(0)
	if c.stp {
		stp = 1
	}
	data.AddRtAttr(unix.IFLA_BR_FORWARD_DELAY, nl.Uint32Attr(centis(c.forwardDelay)))
	data.AddRtAttr(unix.IFLA_BR_HELLO_TIME, nl.Uint32Attr(centis(c.hello)))
	data.AddRtAttr(unix.IFLA_BR_MAX_AGE, nl.Uint32Attr(centis(c.maxAge)))
	data.AddRtAttr(unix.IFLA_BR_STP_STATE, nl.Uint32Attr(stp))
	req.AddData(info)
	_, err := req.Execute(unix.NETLINK_ROUTE, 0)
	return err
}

// Bridge port states (linux/if_bridge.h BR_STATE_*).
const (
	brDisabled   = 0
	brListening  = 1
	brLearning   = 2
	brForwarding = 3
	brBlocking   = 4
)

// BridgePortStateName names a kernel bridge port state.
func BridgePortStateName(s uint8) string {
	switch s {
	case brDisabled:
		return "disabled"
	case brListening:
		return "listening"
	case brLearning:
		return "learning"
	case brForwarding:
		return "forwarding"
	case brBlocking:
		return "blocking"
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// bridgePortStates returns the STP state of every bridge port, by ifindex,
// in the calling thread's namespace.
func bridgePortStates() (map[int]uint8, error) {
	req := nl.NewNetlinkRequest(unix.RTM_GETLINK, unix.NLM_F_DUMP)
	req.AddData(nl.NewIfInfomsg(unix.AF_BRIDGE))
	msgs, err := req.Execute(unix.NETLINK_ROUTE, 0)
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return nil, err
	}
	return parseBridgeDump(msgs)
}

// parseBridgeDump decodes an AF_BRIDGE link dump into port states. Messages
// it cannot read are an error, never a panic.
func parseBridgeDump(msgs [][]byte) (map[int]uint8, error) {
	out := make(map[int]uint8)
	for _, m := range msgs {
		if len(m) < unix.SizeofIfInfomsg {
			return nil, fmt.Errorf("emu: bridge dump: short message (%d bytes)", len(m))
		}
		ans := nl.DeserializeIfInfomsg(m)
		attrs, err := parseAttrs(m[ans.Len():])
		if err != nil {
			return nil, fmt.Errorf("emu: bridge dump: %w", err)
		}
		for _, a := range attrs {
			if a.typ&^unix.NLA_F_NESTED != unix.IFLA_PROTINFO {
				continue
			}
			infos, err := parseAttrs(a.value)
			if err != nil {
				return nil, fmt.Errorf("emu: bridge dump: protinfo: %w", err)
			}
			for _, in := range infos {
				if in.typ == unix.IFLA_BRPORT_STATE && len(in.value) >= 1 {
					out[int(ans.Index)] = in.value[0]
				}
			}
		}
	}
	return out, nil
}

// rtAttr is one netlink route attribute: its type and value.
type rtAttr struct {
	typ   uint16
	value []byte
}

// parseAttrs splits b into route attributes (struct rtattr { u16 len;
// u16 type; } and the value, each padded to 4 bytes). An attribute whose
// length runs past b is an error; the last one may lack its padding.
// (nl.ParseRouteAttr panicked on that: it stepped over the padding
// whether or not b held it.)
func parseAttrs(b []byte) ([]rtAttr, error) {
	var out []rtAttr
	for len(b) >= unix.SizeofRtAttr {
		l := int(binary.NativeEndian.Uint16(b[0:2]))
		if l < unix.SizeofRtAttr || l > len(b) {
			return nil, fmt.Errorf("attribute of length %d in %d bytes: %w", l, len(b), unix.EINVAL)
		}
		out = append(out, rtAttr{typ: binary.NativeEndian.Uint16(b[2:4]), value: b[unix.SizeofRtAttr:l]})
		b = b[min((l+unix.RTA_ALIGNTO-1)&^(unix.RTA_ALIGNTO-1), len(b)):]
	}
	return out, nil
}
