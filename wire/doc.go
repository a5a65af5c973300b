// Package wire holds the bytes every edgefabric scheme puts on a link:
// edgefabric's own headers and control messages, in-place header
// operations for the forwarding hot paths, thin helpers over gopacket for
// the standard headers, and a pcap writer.
//
// # Three ways to touch a frame
//
// Hot paths use views and in-place operations that never allocate; the
// frame stays in the caller's buffer and the result is a sub-slice of it:
//
//	out, err := wire.AxonForward(pkt, inPort)        // Axon header processing
//	tag, frame, err := wire.DumbNetPop(frame)        // DumbNet switch
//	frame, err = wire.DumbNetStrip(frame)            // DumbNet receiving host
//	_, tag, frame, err := wire.VLANPop(frame)        // 802.1Q
//	vni, inner, err := wire.VXLANDecap(frame)        // VTEP receive
//
// Operations that make a frame longer (DumbNetPush, VLANPush, VXLANEncap,
// AxonEncap, AxonProbeStamp) work like append: pass a slice with spare
// capacity (headroom is not needed, the payload is moved) and use the
// returned slice; they allocate only when the capacity is short.
//
// Everything else uses a parsed struct with AppendTo to encode and
// DecodeFromBytes to decode: AxonHeader, DumbNetHeader, and the control
// messages, which all implement Message and share one registry of
// Subtype values (subtype.go). A control message travels after EtherType
// 0x88B5 (AppendControlFrame, DecodeControlFrame), inside a DumbNet frame,
// or as the payload of an AxonControl packet; DecodeMessage decodes any of
// them. Decoders refuse bytes after a message, except through DecodePadded
// and DecodeMessagePadded, which drop the zero padding a NIC adds to a
// frame shorter than MinFrameLen (60 bytes) not counting its VLAN tags
// (pass UntaggedLen(frame): a bridge may tag a padded frame), an Axon
// packet included (decode an AxonControl payload or an AxonProbeBody
// through them, with the packet's length).
//
// Standard headers (ARP, IPv4, UDP, LLDP, DHCPv4, 802.1Q/QinQ, MPLS,
// VXLAN) are built and parsed through gopacket and insomniacslk/dhcp in
// std.go; only the per-frame operations above are written by hand, each
// with a benchmark against the library (docs/wire.md).
//
// # Errors
//
// Decoders never panic and never read past the buffer. Errors wrap one of
// the sentinels (ErrTruncated, ErrBadLength, ErrUnknownType, ErrBadHop,
// ErrNoHops, ErrNotAtEnd, ErrBadValue, ErrTrailing) with the format and the
// field at fault: "wire: axon: header length 9, 2 forward and 3 reverse
// hops need 8: bad length".
//
// # Captures
//
// PcapWriter writes nanosecond pcap files from picosecond timestamps. Use
// LinkTypeEthernet for ordinary ports and LinkTypeEdgefabric (USER0) for
// ports that carry Axon packets; contrib/wireshark/edgefabric.lua dissects
// every format here. docs/wire.md describes the formats byte by byte.
package wire
