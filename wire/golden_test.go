package wire

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the cases in golden_test.go")

// A golden vector: the bytes of one message kind and the fields a decoder
// (ours in Go, ours in Lua, or tshark's own) must show for them. Field
// names are Wireshark's: edgefabric.* for our formats, tshark's own for
// standard headers. The files double as fuzz seed corpora.
type golden struct {
	Name   string      `json:"name"`
	Encap  string      `json:"encap"` // "ethernet" or "axon"
	Hex    string      `json:"hex"`
	Fields [][2]string `json:"fields"`
}

var (
	macA = MAC{0x02, 0x00, 0x00, 0x00, 0x00, 0x0a}
	macB = MAC{0x02, 0x00, 0x00, 0x00, 0x00, 0x0b}
	macC = MAC{0x02, 0x00, 0x00, 0x00, 0x00, 0x0c}
	ipA  = netip.MustParseAddr("10.0.0.1")
	ipB  = netip.MustParseAddr("10.0.0.2")
	ip6A = netip.MustParseAddr("2001:db8::1")
)

// innerFrame is a small IPv4/UDP frame used as a payload.
func innerFrame() []byte {
	b, err := AppendUDPFrame(nil, macB, macA, netip.AddrPortFrom(ipA, 40000), netip.AddrPortFrom(ipB, 5001), 64, []byte("edgefabric"))
	if err != nil {
		panic(err)
	}
	return b
}

func ctl(dst, src MAC, m Message) func() ([]byte, error) {
	return func() ([]byte, error) { return AppendControlFrame(nil, dst, src, m) }
}

func axonPkt(h AxonHeader, payload func() ([]byte, error)) func() ([]byte, error) {
	return func() ([]byte, error) {
		b, err := h.AppendTo(nil)
		if err != nil {
			return nil, err
		}
		p, err := payload()
		return append(b, p...), err
	}
}

func dumbnetPkt(path []uint8, m Message) func() ([]byte, error) {
	return func() ([]byte, error) {
		f, err := AppendControlFrame(nil, macB, macA, m)
		if err != nil {
			return nil, err
		}
		return DumbNetPush(f, path)
	}
}

func msgBytes(m Message) func() ([]byte, error) {
	return func() ([]byte, error) { return m.AppendTo(nil) }
}

type goldenCase struct {
	name  string
	encap byte
	build func() ([]byte, error)
}

func goldenCases() []goldenCase {
	E, A := EncapEthernet, EncapAxon
	probe := &DumbNetProbe{Seq: 7, SrcMAC: macA, SrcIP: ipA, Path: []uint8{1, 0, 2, 9}}
	link1 := DumbNetLink{A: 0x5301, APort: 1, B: 0x5302, BPort: 2, Flags: LinkUp | LinkPrimary}
	link2 := DumbNetLink{A: 0x5302, APort: 3, B: 0x5304, BPort: 1, Flags: LinkUp | LinkBackup}
	return []goldenCase{
		{"axon-ethernet", A, axonPkt(AxonHeader{Type: AxonEthernet, Fwd: []uint8{2, 3, 5}, Rev: []uint8{1, 4}},
			func() ([]byte, error) { return innerFrame(), nil })},
		{"axon-ethernet-wide", A, axonPkt(AxonHeader{Type: AxonEthernet, Wide: true, Fwd: []uint8{17, 40}, Rev: []uint8{200}},
			func() ([]byte, error) { return innerFrame(), nil })},
		{"axon-error", A, axonPkt(AxonHeader{Type: AxonError, Rev: []uint8{3, 1}},
			func() ([]byte, error) { return innerFrame(), nil })},
		{"axon-probe", A, axonPkt(AxonHeader{Type: AxonProbe, Options: AxonOptTimestampIn | AxonOptTimestampOut, Fwd: []uint8{2, 0xf}, Rev: []uint8{1}},
			func() ([]byte, error) {
				p := AxonProbeBody{Origin: 0xa1, Seq: 3, Records: []AxonProbeRecord{
					{Port: 0xf, Dir: ProbeOut, Time: 1_000_000}, {Port: 1, Dir: ProbeIn, Time: 2_500_000}}}
				return p.AppendTo(nil)
			})},
		{"axon-arp-request", A, axonPkt(AxonHeader{Type: AxonControl, Fwd: []uint8{4, 0xf}, Rev: []uint8{2}},
			msgBytes(&AxonARP{Seq: 9, RealMAC: macA, RouteMAC: MAC{0x06, 0, 0, 0, 0x01, 0x07}, SrcIP: ipA, TgtIP: ipB, SrcPort: 1, TgtPort: 3}))},
		{"axon-arp-reply", A, axonPkt(AxonHeader{Type: AxonControl, Fwd: []uint8{2, 0xf}, Rev: []uint8{4}},
			msgBytes(&AxonARP{Reply: true, Seq: 9, RealMAC: macB, RouteMAC: MAC{0x06, 0, 0, 0, 0x03, 0x02}, SrcIP: ipA, TgtIP: ipB, SrcPort: 1, TgtPort: 3}))},
		{"axon-hello", E, ctl(Broadcast, macA, &AxonHello{AxonID: 0xa1, Port: 5, Wide: true})},
		{"axon-ether-probe", E, ctl(macB, macA, &AxonEtherProbe{AxonID: 0xa1, SrcPort: 6, DstPort: 7, Seq: 1, Phase: EtherProbeMeasure, SentAt: 123_456_789})},
		{"dumbnet-data", E, func() ([]byte, error) { return DumbNetPush(innerFrame(), []uint8{2, 3, 5}) }},
		{"dumbnet-probe", E, dumbnetPkt([]uint8{1, 0, 2, 9}, probe)},
		{"dumbnet-probe-reply", E, dumbnetPkt([]uint8{4, 9}, &DumbNetProbeReply{Seq: 7, HostMAC: macB, HostIP: ipB, Controller: macC, Path: []uint8{1, 2}})},
		{"dumbnet-switch-id", E, func() ([]byte, error) {
			echo, err := probe.AppendTo(nil)
			if err != nil {
				return nil, err
			}
			return dumbnetPkt([]uint8{9}, &DumbNetSwitchID{SwitchID: 0x5303, Echo: echo})()
		}},
		{"dumbnet-port-status", E, ctl(Broadcast, macC, &DumbNetPortStatus{SwitchID: 0x5302, Port: 3, State: PortDown, HopLimit: DumbNetDefaultHopLimit, Seq: 12})},
		{"dumbnet-host-notify", E, dumbnetPkt([]uint8{3, 1}, &DumbNetHostNotify{Origin: macA, Seq: 4, SwitchID: 0x5302, Port: 3, State: PortDown, SwitchSeq: 12})},
		{"dumbnet-topo-patch", E, dumbnetPkt([]uint8{9}, &DumbNetTopoPatch{Version: 42, Links: []DumbNetLink{{A: 0x5302, APort: 3, B: 0x5304, BPort: 1}}})},
		{"dumbnet-path-query", E, dumbnetPkt([]uint8{9}, &DumbNetPathQuery{QueryID: 77, Src: macA, Dst: macB, DstIP: ipB})},
		{"dumbnet-path-reply", E, dumbnetPkt([]uint8{1}, &DumbNetPathReply{QueryID: 77, Version: 42, Src: macA, Dst: macB,
			SrcSwitch: 0x5301, SrcPort: 9, DstSwitch: 0x5304, DstPort: 4, Links: []DumbNetLink{link1, link2}})},
		{"dumbnet-neighbors", E, dumbnetPkt([]uint8{2}, &DumbNetNeighbors{Version: 42, Neighbors: []DumbNetNeighbor{{MAC: macB, Path: []uint8{3}}, {MAC: macC, Path: []uint8{1, 4, 2}, Alt: []uint8{2, 3, 2}}}})},
		{"dumbnet-mpls", E, func() ([]byte, error) { return DumbNetMPLSPush(innerFrame(), []uint8{2, 3, 5}) }},
		{"spain-chirp-unicast", E, func() ([]byte, error) {
			return AppendChirpFrame(nil, macB, 7, &Chirp{IP: ipA, MAC: macA, EdgeSwitch: 0xe5, WantReply: true})
		}},
		{"spain-chirp-broadcast", E, func() ([]byte, error) {
			return AppendChirpFrame(nil, Broadcast, 1, &Chirp{IP: ip6A, MAC: macA, EdgeSwitch: 0xe5})
		}},
		{"overlay-vport", E, ctl(macB, macA, &OverlayVPort{Op: RecordAdd, Switch: 1, MAC: MAC{0, 0, 0, 0, 0, 1}, VNI: 5000, Port: 30, IP: ipA})},
		{"overlay-vnet", E, ctl(macB, macA, &OverlayVNet{Op: RecordAdd, VNI: 5000, VLAN: 20, Name: "acme"})},
		{"backplane-nexthop-ingress", E, ctl(macB, macA, &BackplaneNextHop{Kind: NextHopIngress, Prefix: netip.MustParsePrefix("192.0.2.0/24"), VLAN: 101, MAC: macC})},
		{"backplane-nexthop-egress", E, ctl(macB, macA, &BackplaneNextHop{Kind: NextHopEgress, VLAN: 101, MAC: macC, Port: 4})},
		{"std-8021q", E, func() ([]byte, error) { return VLANPush(innerFrame(), EtherTypeVLAN, vtag(3, false, 100)) }},
		{"std-qinq", E, func() ([]byte, error) {
			f, err := VLANPush(innerFrame(), EtherTypeVLAN, vtag(0, false, 100))
			if err != nil {
				return nil, err
			}
			return VLANPush(f, EtherTypeQinQ, vtag(0, false, 2000))
		}},
		{"std-arp", E, func() ([]byte, error) {
			return AppendARPFrame(nil, Broadcast, 0, &ARP{Op: ARPRequest, SenderMAC: macA, SenderIP: ipA, TargetIP: ipB})
		}},
		{"std-dhcp-discover", E, func() ([]byte, error) {
			m, err := dhcpv4.New(dhcpv4.WithHwAddr(macA[:]), dhcpv4.WithMessageType(dhcpv4.MessageTypeDiscover),
				dhcpv4.WithTransactionID(dhcpv4.TransactionID{0x12, 0x34, 0x56, 0x78}), dhcpv4.WithBroadcast(true))
			if err != nil {
				return nil, err
			}
			return AppendDHCPFrame(nil, Broadcast, macA, netip.IPv4Unspecified(), netip.AddrFrom4([4]byte{255, 255, 255, 255}), m)
		}},
		{"std-vxlan", E, func() ([]byte, error) {
			return VXLANEncap(nil, &VXLANOuter{SrcMAC: macA, DstMAC: macB, Src: netip.MustParseAddr("192.0.2.1"), Dst: netip.MustParseAddr("192.0.2.2"),
				SrcPort: VXLANSourcePort(innerFrame()), VNI: 5000}, innerFrame())
		}},
		{"std-vxlan6", E, func() ([]byte, error) {
			return VXLANEncap(nil, &VXLANOuter{SrcMAC: macA, DstMAC: macB, Src: ip6A, Dst: netip.MustParseAddr("2001:db8::2"),
				SrcPort: 50000, VNI: 0xabcdef}, innerFrame())
		}},
		{"std-icmp-echo", E, func() ([]byte, error) {
			return AppendICMPEchoFrame(nil, macB, macA, ipA, ipB, 64, &ICMPEcho{ID: 0x1234, Seq: 7, Data: []byte("ping")})
		}},
		{"std-tcp-synack", E, func() ([]byte, error) {
			return AppendTCPFrame(nil, macB, macA, ipA, ipB, 64, &TCPSegment{SrcPort: 5001, DstPort: 40000, Seq: 1000, Ack: 2001,
				Flags: TCPSyn | TCPAck, Window: 65535})
		}},
		{"std-lldp", E, func() ([]byte, error) {
			return AppendLLDPFrame(nil, macA, &LLDP{Chassis: macA, PortID: "eth3", TTL: 120, SysName: "leaf1"})
		}},
	}
}

func goldenPath(name string) string { return filepath.Join("testdata", "golden", name+".json") }

func encapName(e byte) string {
	if e == EncapAxon {
		return "axon"
	}
	return "ethernet"
}

func loadGoldens(t testing.TB) []golden {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files (%v); run go test -run TestGolden -update", err)
	}
	var gs []golden
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var g golden
		if err := json.Unmarshal(data, &g); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		gs = append(gs, g)
	}
	return gs
}

// marshal writes one field per line, so that diffs of golden files read well.
func (g golden) marshal() []byte {
	var b bytes.Buffer
	q := func(s string) string { v, _ := json.Marshal(s); return string(v) }
	fmt.Fprintf(&b, "{\n  \"name\": %s,\n  \"encap\": %s,\n  \"hex\": %s,\n  \"fields\": [\n", q(g.Name), q(g.Encap), q(g.Hex))
	for i, f := range g.Fields {
		sep := ","
		if i == len(g.Fields)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "    [%s, %s]%s\n", q(f[0]), q(f[1]), sep)
	}
	b.WriteString("  ]\n}\n")
	return b.Bytes()
}

func (g golden) bytes(t testing.TB) []byte {
	b, err := hex.DecodeString(g.Hex)
	if err != nil {
		t.Fatalf("%s: %v", g.Name, err)
	}
	return b
}

// TestGolden checks every golden vector three ways: the encoder still
// produces the stored bytes; decoding them shows the stored fields; and
// re-encoding the decoded values gives the same bytes.
func TestGolden(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			b, err := c.build()
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			fields, re, err := describe(c.encap, b)
			if err != nil {
				t.Fatalf("describe: %v", err)
			}
			if !bytes.Equal(re, b) {
				t.Fatalf("re-encoded bytes differ:\n got %x\nwant %x", re, b)
			}
			g := golden{Name: c.name, Encap: encapName(c.encap), Hex: hex.EncodeToString(b), Fields: fields}
			if *update {
				if err := os.WriteFile(goldenPath(c.name), g.marshal(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			data, err := os.ReadFile(goldenPath(c.name))
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			var want golden
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			if want.Hex != g.Hex {
				t.Errorf("encoder output changed:\n got %s\nwant %s", g.Hex, want.Hex)
			}
			got, _, err := describe(c.encap, want.bytes(t))
			if err != nil {
				t.Fatalf("decode golden bytes: %v", err)
			}
			if !reflect.DeepEqual([][2]string(got), want.Fields) {
				t.Errorf("decoded fields differ:\n got %v\nwant %v", got, want.Fields)
			}
		})
	}
}

// TestGoldenFilesHaveCases catches a golden file left behind by a renamed
// case (it would still seed the fuzzers but no longer be checked).
func TestGoldenFilesHaveCases(t *testing.T) {
	names := map[string]bool{}
	for _, c := range goldenCases() {
		names[c.name] = true
	}
	for _, g := range loadGoldens(t) {
		if !names[g.Name] {
			t.Errorf("golden file %s has no case in goldenCases", g.Name)
		}
	}
}

// fieldList collects Wireshark field name/value pairs in dissection order.
type fieldList [][2]string

func (f *fieldList) add(name string, v any) {
	var s string
	switch v := v.(type) {
	case MAC:
		s = v.String()
	case netip.Addr:
		s = v.String()
	case bool:
		s = map[bool]string{false: "0", true: "1"}[v]
	case []byte:
		parts := make([]string, len(v))
		for i, c := range v {
			parts[i] = fmt.Sprintf("%02x", c)
		}
		s = strings.Join(parts, ":")
	case string:
		s = v
	default:
		s = fmt.Sprint(v)
	}
	*f = append(*f, [2]string{name, s})
}

func (f *fieldList) addr(prefix string, a netip.Addr) {
	switch {
	case a.Is4():
		f.add(prefix+"_ipv4", a)
	case a.IsValid():
		f.add(prefix+"_ipv6", a)
	}
}

// describe is the Go twin of the Lua dissector: it decodes a golden frame
// with this package's decoders, lists the fields Wireshark must show, and
// re-encodes the decoded values.
func describe(encap byte, b []byte) (fieldList, []byte, error) {
	var f fieldList
	if encap == EncapAxon {
		var h AxonHeader
		payload, err := h.DecodeFromBytes(b)
		if err != nil {
			return nil, nil, err
		}
		f.add("edgefabric.axon.type", uint8(h.Type))
		f.add("edgefabric.axon.wide", h.Wide)
		f.add("edgefabric.axon.hdr_len", h.Len())
		f.add("edgefabric.axon.fwd_count", len(h.Fwd))
		f.add("edgefabric.axon.rev_count", len(h.Rev))
		f.add("edgefabric.axon.options", h.Options)
		for _, v := range h.Fwd {
			f.add("edgefabric.axon.fwd_hop", v)
		}
		for _, v := range h.Rev {
			f.add("edgefabric.axon.rev_hop", v)
		}
		re, err := h.AppendTo(nil)
		if err != nil {
			return nil, nil, err
		}
		var rest []byte
		switch h.Type {
		case AxonEthernet, AxonError:
			ff, r2, err := describeEthernet(payload)
			if err != nil {
				return nil, nil, err
			}
			f = append(f, ff...)
			rest = r2
		case AxonProbe:
			var p AxonProbeBody
			if err := p.DecodeFromBytes(payload); err != nil {
				return nil, nil, err
			}
			f.add("edgefabric.probe.origin", p.Origin)
			f.add("edgefabric.probe.seq", p.Seq)
			for _, r := range p.Records {
				f.add("edgefabric.probe.port", r.Port)
				f.add("edgefabric.probe.dir", uint8(r.Dir))
				f.add("edgefabric.probe.time", r.Time)
			}
			if rest, err = p.AppendTo(nil); err != nil {
				return nil, nil, err
			}
		case AxonControl:
			ff, r2, err := describeMessage(payload)
			if err != nil {
				return nil, nil, err
			}
			f = append(f, ff...)
			rest = r2
		}
		return f, append(re, rest...), nil
	}
	return describeEthernet(b)
}

func describeEthernet(b []byte) (fieldList, []byte, error) {
	var f fieldList
	fr, err := ParseFrame(b)
	if err != nil {
		return nil, nil, err
	}
	et, tags, off, err := fr.InnerEtherType()
	if err != nil {
		return nil, nil, err
	}
	switch {
	case fr.EtherType() == EtherTypeDumbNet:
		var h DumbNetHeader
		payload, err := h.DecodeFromBytes(b)
		if err != nil {
			return nil, nil, err
		}
		for _, t := range h.Tags {
			f.add("edgefabric.dumbnet.tag", t)
		}
		f.add("edgefabric.dumbnet.inner_type", fmt.Sprintf("0x%04x", h.InnerType))
		re := append([]byte(nil), b[:EthHeaderLen]...)
		if re, err = h.AppendTo(re); err != nil {
			return nil, nil, err
		}
		if h.InnerType == EtherTypeLocalExp {
			ff, r2, err := describeMessage(payload)
			if err != nil {
				return nil, nil, err
			}
			return append(f, ff...), append(re, r2...), nil
		}
		return f, append(re, payload...), nil
	case fr.EtherType() == EtherTypeMPLS:
		p := b[EthHeaderLen:]
		for len(p) >= 4 {
			e := uint32(p[0])<<24 | uint32(p[1])<<16 | uint32(p[2])<<8 | uint32(p[3])
			f.add("mpls.label", e>>12)
			p = p[4:]
			if e&0x100 != 0 {
				break
			}
		}
		// Round trip: a switch pops every hop, the host strips the end.
		c := append([]byte(nil), b...)
		var path []uint8
		for {
			port, out, err := DumbNetMPLSPop(c)
			if err != nil {
				break
			}
			path = append(path, uint8(port))
			c = out
		}
		plain, err := DumbNetMPLSStrip(c)
		if err != nil {
			return nil, nil, err
		}
		re, err := DumbNetMPLSPush(append([]byte(nil), plain...), path)
		return f, re, err
	case et == EtherTypeLocalExp:
		if tags > 0 {
			_, tag, _ := VLANOf(b)
			f.add("vlan.id", tag.VID())
		}
		ff, r2, err := describeMessage(b[off:])
		if err != nil {
			return nil, nil, err
		}
		return append(f, ff...), append(append([]byte(nil), b[:off]...), r2...), nil
	case tags > 0:
		c := append([]byte(nil), b...)
		var stack []struct {
			tpid uint16
			tag  VLANTag
		}
		for {
			tpid, tag, out, err := VLANPop(c)
			if err != nil {
				break
			}
			if tpid == EtherTypeQinQ {
				f.add("ieee8021ad.id", tag.VID())
			} else {
				f.add("vlan.id", tag.VID())
			}
			stack = append(stack, struct {
				tpid uint16
				tag  VLANTag
			}{tpid, tag})
			c = out
		}
		for i := len(stack) - 1; i >= 0; i-- {
			if c, err = VLANPush(c, stack[i].tpid, stack[i].tag); err != nil {
				return nil, nil, err
			}
		}
		return f, c, nil
	case et == EtherTypeARP:
		a, err := DecodeARP(b)
		if err != nil {
			return nil, nil, err
		}
		f.add("arp.opcode", a.Op)
		f.add("arp.src.hw_mac", a.SenderMAC)
		f.add("arp.src.proto_ipv4", a.SenderIP)
		f.add("arp.dst.proto_ipv4", a.TargetIP)
		re, err := AppendARPFrame(nil, fr.Dst(), 0, &a)
		return f, re, err
	case et == EtherTypeLLDP:
		l, err := DecodeLLDP(b)
		if err != nil {
			return nil, nil, err
		}
		f.add("lldp.chassis.id.mac", l.Chassis)
		f.add("lldp.port.id", l.PortID)
		f.add("lldp.time_to_live", l.TTL)
		f.add("lldp.tlv.system.name", l.SysName)
		re, err := AppendLLDPFrame(nil, fr.Src(), &l)
		return f, re, err
	case et == EtherTypeIPv4 || et == EtherTypeIPv6:
		if vni, inner, err := VXLANDecap(b); err == nil {
			f.add("vxlan.vni", vni)
			if _, _, _, err := DecodeUDP(inner); err != nil {
				return nil, nil, err
			}
			// Re-encapsulate with the outer fields read back, so that the
			// round trip covers the outer headers too (they are checked
			// against gopacket in TestVXLANAgainstGopacket).
			o := &VXLANOuter{SrcMAC: fr.Src(), DstMAC: fr.Dst(), VNI: vni}
			ip := b[off:]
			var udp []byte
			if et == EtherTypeIPv4 {
				o.Src, o.Dst, o.TTL = netip.AddrFrom4([4]byte(ip[12:16])), netip.AddrFrom4([4]byte(ip[16:20])), ip[8]
				udp = ip[int(ip[0]&0xf)*4:]
			} else {
				o.Src, o.Dst, o.TTL = netip.AddrFrom16([16]byte(ip[8:24])), netip.AddrFrom16([16]byte(ip[24:40])), ip[7]
				udp = ip[ipv6HdrLen:]
			}
			o.SrcPort = uint16(udp[0])<<8 | uint16(udp[1])
			re, err := VXLANEncap(nil, o, inner)
			return f, re, err
		}
		if m, err := DecodeDHCP(b); err == nil {
			f.add("dhcp.hw.mac_addr", MAC(m.ClientHWAddr))
			f.add("dhcp.option.dhcp", uint8(m.MessageType()))
			src, dst, _, _ := DecodeUDP(b)
			re, err := AppendDHCPFrame(nil, fr.Dst(), fr.Src(), src.Addr(), dst.Addr(), m)
			return f, re, err
		}
		if src, dst, e, err := DecodeICMPEcho(b); err == nil {
			f.add("icmp.type", map[bool]int{false: 8, true: 0}[e.Reply])
			f.add("icmp.ident", e.ID)
			f.add("icmp.seq", e.Seq)
			re, err := AppendICMPEchoFrame(nil, fr.Dst(), fr.Src(), src, dst, b[EthHeaderLen+8], &e)
			return f, re, err
		}
		if src, dst, s, err := DecodeTCP(b); err == nil {
			f.add("tcp.srcport", s.SrcPort)
			f.add("tcp.dstport", s.DstPort)
			f.add("tcp.seq_raw", s.Seq)
			f.add("tcp.ack_raw", s.Ack)
			f.add("tcp.flags.syn", s.Flags&TCPSyn != 0)
			f.add("tcp.flags.ack", s.Flags&TCPAck != 0)
			f.add("tcp.window_size_value", s.Window)
			re, err := AppendTCPFrame(nil, fr.Dst(), fr.Src(), src, dst, b[EthHeaderLen+8], &s)
			return f, re, err
		}
		src, dst, payload, err := DecodeUDP(b)
		if err != nil {
			return nil, nil, err
		}
		f.add("udp.srcport", src.Port())
		f.add("udp.dstport", dst.Port())
		re, err := AppendUDPFrame(nil, fr.Dst(), fr.Src(), src, dst, b[EthHeaderLen+8], payload)
		return f, re, err
	}
	return nil, nil, fmt.Errorf("describe: EtherType %#04x", et)
}

func describeMessage(b []byte) (fieldList, []byte, error) {
	var f fieldList
	m, err := DecodeMessage(b)
	if err != nil {
		return nil, nil, err
	}
	f.add("edgefabric.subtype", fmt.Sprintf("0x%02x", uint8(m.Subtype())))
	links := func(ls []DumbNetLink) {
		f.add("edgefabric.link_count", len(ls))
		for _, l := range ls {
			f.add("edgefabric.link.a", l.A)
			f.add("edgefabric.link.a_port", l.APort)
			f.add("edgefabric.link.b", l.B)
			f.add("edgefabric.link.b_port", l.BPort)
			f.add("edgefabric.link.flags", uint8(l.Flags))
		}
	}
	path := func(p []uint8) {
		f.add("edgefabric.path_len", len(p))
		for _, t := range p {
			f.add("edgefabric.path_tag", t)
		}
	}
	switch m := m.(type) {
	case *Chirp:
		f.add("edgefabric.chirp.want_reply", m.WantReply)
		f.addr("edgefabric.chirp", m.IP)
		f.add("edgefabric.chirp.mac", m.MAC)
		f.add("edgefabric.chirp.edge_switch", m.EdgeSwitch)
	case *AxonHello:
		f.add("edgefabric.hello.axon_id", m.AxonID)
		f.add("edgefabric.hello.port", m.Port)
		f.add("edgefabric.hello.reply", m.Reply)
		f.add("edgefabric.hello.wide", m.Wide)
	case *AxonARP:
		f.add("edgefabric.aarp.seq", m.Seq)
		f.add("edgefabric.aarp.real_mac", m.RealMAC)
		f.add("edgefabric.aarp.route_mac", m.RouteMAC)
		f.addr("edgefabric.aarp.src", m.SrcIP)
		f.addr("edgefabric.aarp.tgt", m.TgtIP)
		f.add("edgefabric.aarp.src_port", m.SrcPort)
		f.add("edgefabric.aarp.tgt_port", m.TgtPort)
	case *AxonEtherProbe:
		f.add("edgefabric.eprobe.axon_id", m.AxonID)
		f.add("edgefabric.eprobe.src_port", m.SrcPort)
		f.add("edgefabric.eprobe.dst_port", m.DstPort)
		f.add("edgefabric.eprobe.seq", m.Seq)
		f.add("edgefabric.eprobe.phase", uint8(m.Phase))
		f.add("edgefabric.eprobe.sent_at", m.SentAt)
	case *DumbNetProbe:
		f.add("edgefabric.dnprobe.seq", m.Seq)
		f.add("edgefabric.dnprobe.src_mac", m.SrcMAC)
		f.addr("edgefabric.dnprobe.src", m.SrcIP)
		path(m.Path)
	case *DumbNetProbeReply:
		f.add("edgefabric.dnreply.seq", m.Seq)
		f.add("edgefabric.dnreply.host_mac", m.HostMAC)
		f.addr("edgefabric.dnreply.host", m.HostIP)
		f.add("edgefabric.dnreply.controller", m.Controller)
		path(m.Path)
	case *DumbNetSwitchID:
		f.add("edgefabric.dnswid.switch_id", m.SwitchID)
		if len(m.Echo) > 0 { // an empty field is not shown
			f.add("edgefabric.dnswid.echo", m.Echo)
		}
	case *DumbNetPortStatus:
		f.add("edgefabric.dnport.switch_id", m.SwitchID)
		f.add("edgefabric.dnport.port", m.Port)
		f.add("edgefabric.dnport.state", uint8(m.State))
		f.add("edgefabric.dnport.hop_limit", m.HopLimit)
		f.add("edgefabric.dnport.seq", m.Seq)
	case *DumbNetHostNotify:
		f.add("edgefabric.dnnotify.origin", m.Origin)
		f.add("edgefabric.dnnotify.seq", m.Seq)
		f.add("edgefabric.dnnotify.switch_id", m.SwitchID)
		f.add("edgefabric.dnnotify.port", m.Port)
		f.add("edgefabric.dnnotify.state", uint8(m.State))
		f.add("edgefabric.dnnotify.switch_seq", m.SwitchSeq)
	case *DumbNetTopoPatch:
		f.add("edgefabric.dnpatch.version", m.Version)
		links(m.Links)
	case *DumbNetPathQuery:
		f.add("edgefabric.dnquery.id", m.QueryID)
		f.add("edgefabric.dnquery.src", m.Src)
		f.add("edgefabric.dnquery.dst", m.Dst)
		f.addr("edgefabric.dnquery.dst", m.DstIP)
	case *DumbNetPathReply:
		f.add("edgefabric.dnpath.id", m.QueryID)
		f.add("edgefabric.dnpath.version", m.Version)
		f.add("edgefabric.dnpath.src", m.Src)
		f.add("edgefabric.dnpath.dst", m.Dst)
		f.add("edgefabric.dnpath.src_switch", m.SrcSwitch)
		f.add("edgefabric.dnpath.src_port", m.SrcPort)
		f.add("edgefabric.dnpath.dst_switch", m.DstSwitch)
		f.add("edgefabric.dnpath.dst_port", m.DstPort)
		links(m.Links)
	case *DumbNetNeighbors:
		f.add("edgefabric.dnnbr.version", m.Version)
		f.add("edgefabric.dnnbr.count", len(m.Neighbors))
		for _, nb := range m.Neighbors {
			f.add("edgefabric.dnnbr.mac", nb.MAC)
			path(nb.Path)
			path(nb.Alt)
		}
	case *OverlayVPort:
		f.add("edgefabric.vport.op", uint8(m.Op))
		f.add("edgefabric.vport.switch", m.Switch)
		f.add("edgefabric.vport.mac", m.MAC)
		f.add("edgefabric.vport.vni", m.VNI)
		f.add("edgefabric.vport.port", m.Port)
		f.addr("edgefabric.vport", m.IP)
	case *OverlayVNet:
		f.add("edgefabric.vnet.op", uint8(m.Op))
		f.add("edgefabric.vnet.vni", m.VNI)
		f.add("edgefabric.vnet.vlan", m.VLAN)
		if m.Name != "" {
			f.add("edgefabric.vnet.name", m.Name)
		}
	case *BackplaneNextHop:
		f.add("edgefabric.nexthop.kind", uint8(m.Kind))
		if m.Prefix.IsValid() {
			f.addr("edgefabric.nexthop.prefix", m.Prefix.Addr())
			f.add("edgefabric.nexthop.prefix_len", m.Prefix.Bits())
		}
		f.add("edgefabric.nexthop.vlan", m.VLAN)
		f.add("edgefabric.nexthop.mac", m.MAC)
		f.add("edgefabric.nexthop.port", m.Port)
	default:
		return nil, nil, fmt.Errorf("describe: no description for %T", m)
	}
	re, err := m.AppendTo(nil)
	return f, re, err
}
