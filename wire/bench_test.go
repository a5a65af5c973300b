package wire

import (
	"net/netip"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// The in-place operations must not allocate (docs/wire.md). These tests
// assert it, with testing.AllocsPerRun; the benchmarks below report the
// figures.

type inplaceOp struct {
	name string
	src  func(testing.TB) []byte          // the frame to start from
	op   func(buf []byte) ([]byte, error) // runs on a fresh copy of src
}

var vxo = &VXLANOuter{SrcMAC: macA, DstMAC: macB, Src: netip.MustParseAddr("192.0.2.1"), Dst: netip.MustParseAddr("192.0.2.2"), SrcPort: 50000, VNI: 5000}

func axonSrc(wide bool) func(testing.TB) []byte {
	return func(t testing.TB) []byte {
		h := AxonHeader{Type: AxonEthernet, Wide: wide, Fwd: []uint8{2, 3, 5, 1, 2}, Rev: []uint8{1, 4}}
		return mustAxon(t, h, innerFrame())
	}
}

func inplaceOps() []inplaceOp {
	inner := func(testing.TB) []byte { return innerFrame() }
	dn := func(t testing.TB) []byte {
		f, err := DumbNetPush(innerFrame(), []uint8{2, 3, 5})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	dnEnd := func(t testing.TB) []byte {
		f, err := DumbNetPush(innerFrame(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	mpls := func(t testing.TB) []byte {
		f, _ := DumbNetMPLSPush(innerFrame(), []uint8{2, 3, 5})
		return f
	}
	mplsEnd := func(t testing.TB) []byte {
		f, _ := DumbNetMPLSPush(innerFrame(), nil)
		return f
	}
	tagged := func(t testing.TB) []byte {
		f, _ := VLANPush(innerFrame(), EtherTypeVLAN, vtag(0, false, 100))
		return f
	}
	vx := func(t testing.TB) []byte {
		f, _ := VXLANEncap(nil, vxo, innerFrame())
		return f
	}
	probe := func(t testing.TB) []byte {
		body, _ := (&AxonProbeBody{Origin: 1, Seq: 1}).AppendTo(nil)
		return mustAxon(t, AxonHeader{Type: AxonProbe, Options: AxonOptTimestampIn, Fwd: []uint8{2}}, body)
	}
	hdr, _ := (&AxonHeader{Type: AxonEthernet, Fwd: []uint8{2, 3, 5}}).AppendTo(nil)
	return []inplaceOp{
		{"AxonForward4", axonSrc(false), func(b []byte) ([]byte, error) { _, err := AxonForward(b, 7); return b, err }},
		{"AxonForward8", axonSrc(true), func(b []byte) ([]byte, error) { _, err := AxonForward(b, 7); return b, err }},
		{"AxonNextHop", axonSrc(false), func(b []byte) ([]byte, error) { AxonNextHop(b); return b, nil }},
		{"AxonEncap", inner, func(b []byte) ([]byte, error) { return AxonEncap(b[len(b):], hdr, b[:len(b)/2]) }},
		{"AxonDecap", axonSrc(false), AxonDecap},
		{"AxonProbeStamp", probe, func(b []byte) ([]byte, error) { return AxonProbeStamp(b, 3, ProbeIn, 1) }},
		{"DumbNetPush", inner, func(b []byte) ([]byte, error) { return DumbNetPush(b, []uint8{2, 3, 5}) }},
		{"DumbNetPop", dn, func(b []byte) ([]byte, error) { _, out, err := DumbNetPop(b); return out, err }},
		{"DumbNetStrip", dnEnd, DumbNetStrip},
		{"DumbNetMPLSPush", inner, func(b []byte) ([]byte, error) { return DumbNetMPLSPush(b, []uint8{2, 3, 5}) }},
		{"DumbNetMPLSPop", mpls, func(b []byte) ([]byte, error) { _, out, err := DumbNetMPLSPop(b); return out, err }},
		{"DumbNetMPLSStrip", mplsEnd, DumbNetMPLSStrip},
		{"VLANPush", inner, func(b []byte) ([]byte, error) { return VLANPush(b, EtherTypeVLAN, vtag(0, false, 100)) }},
		{"VLANPop", tagged, func(b []byte) ([]byte, error) { _, _, out, err := VLANPop(b); return out, err }},
		{"VXLANEncap", inner, func(b []byte) ([]byte, error) { return VXLANEncap(b[len(b):], vxo, b) }},
		{"VXLANDecap", vx, func(b []byte) ([]byte, error) { _, in, err := VXLANDecap(b); return in, err }},
	}
}

func TestInPlaceZeroAllocs(t *testing.T) {
	for _, o := range inplaceOps() {
		src := o.src(t)
		buf := make([]byte, len(src), 2048)
		copy(buf, src)
		if _, err := o.op(buf); err != nil {
			t.Fatalf("%s: %v", o.name, err)
		}
		n := testing.AllocsPerRun(100, func() {
			buf = buf[:len(src)]
			copy(buf, src)
			if _, err := o.op(buf); err != nil {
				t.Fatal(err)
			}
		})
		if n != 0 {
			t.Errorf("%s: %v allocations per run, want 0", o.name, n)
		}
	}
}

// BenchmarkInPlace times every pop/push; each iteration first restores
// the frame with a copy of ~70 bytes (a few ns, included in the figure).
func BenchmarkInPlace(b *testing.B) {
	for _, o := range inplaceOps() {
		b.Run(o.name, func(b *testing.B) {
			src := o.src(b)
			buf := make([]byte, len(src), 2048)
			b.ReportAllocs()
			for b.Loop() {
				buf = buf[:len(src)]
				copy(buf, src)
				if _, err := o.op(buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecode times every decoder on its golden vector.
func BenchmarkDecode(b *testing.B) {
	for _, g := range loadGoldens(b) {
		data := g.bytes(b)
		var fn func() error
		switch {
		case g.Encap == "axon":
			var h AxonHeader
			fn = func() error { _, err := h.DecodeFromBytes(data); return err }
			b.Run("AxonHeader/"+g.Name, func(b *testing.B) { benchFn(b, fn) })
			fn = func() error { _, err := ParseAxon(data); return err }
			b.Run("ParseAxon/"+g.Name, func(b *testing.B) { benchFn(b, fn) })
		case messageOf(g, data) != nil:
			m := messageOf(g, data)
			b.Run("Message/"+g.Name, func(b *testing.B) { benchFn(b, func() error { _, err := DecodeMessage(m); return err }) })
		}
		fr, _ := ParseFrame(data)
		if g.Encap == "ethernet" && fr.EtherType() == EtherTypeDumbNet {
			b.Run("ParseDumbNet/"+g.Name, func(b *testing.B) {
				benchFn(b, func() error { _, _, _, err := ParseDumbNet(data); return err })
			})
		}
	}
	arp := goldenBytes(b, "std-arp")
	b.Run("ARP", func(b *testing.B) { benchFn(b, func() error { _, err := DecodeARP(arp); return err }) })
	dhcp := goldenBytes(b, "std-dhcp-discover")
	b.Run("DHCP", func(b *testing.B) { benchFn(b, func() error { _, err := DecodeDHCP(dhcp); return err }) })
	lldp := goldenBytes(b, "std-lldp")
	b.Run("LLDP", func(b *testing.B) { benchFn(b, func() error { _, err := DecodeLLDP(lldp); return err }) })
	vx := goldenBytes(b, "std-vxlan")
	b.Run("VXLAN", func(b *testing.B) { benchFn(b, func() error { _, _, err := VXLANDecap(vx); return err }) })
}

func goldenBytes(b *testing.B, name string) []byte {
	for _, g := range loadGoldens(b) {
		if g.Name == name {
			return g.bytes(b)
		}
	}
	b.Fatalf("no golden %s", name)
	return nil
}

func benchFn(b *testing.B, fn func() error) {
	b.ReportAllocs()
	for b.Loop() {
		if err := fn(); err != nil {
			b.Fatal(err)
		}
	}
}

// The library baselines behind the hand-written hot paths: the same work
// done with gopacket's DecodingLayerParser and SerializeLayers.
func BenchmarkGopacket(b *testing.B) {
	tagged, _ := VLANPush(innerFrame(), EtherTypeVLAN, vtag(0, false, 100))
	b.Run("VLANPop", func(b *testing.B) {
		var eth layers.Ethernet
		var q layers.Dot1Q
		p := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &q)
		p.IgnoreUnsupported = true
		var found []gopacket.LayerType
		buf := gopacket.NewSerializeBuffer()
		b.ReportAllocs()
		for b.Loop() {
			if err := p.DecodeLayers(tagged, &found); err != nil {
				b.Fatal(err)
			}
			eth.EthernetType = q.Type
			if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &eth, gopacket.Payload(q.Payload)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("VLANPush", func(b *testing.B) {
		var eth layers.Ethernet
		p := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth)
		p.IgnoreUnsupported = true
		var found []gopacket.LayerType
		buf := gopacket.NewSerializeBuffer()
		plain := innerFrame()
		b.ReportAllocs()
		for b.Loop() {
			if err := p.DecodeLayers(plain, &found); err != nil {
				b.Fatal(err)
			}
			q := layers.Dot1Q{VLANIdentifier: 100, Type: eth.EthernetType}
			eth.EthernetType = layers.EthernetTypeDot1Q
			if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &eth, &q, gopacket.Payload(eth.Payload)); err != nil {
				b.Fatal(err)
			}
		}
	})
	vx, _ := VXLANEncap(nil, vxo, innerFrame())
	b.Run("VXLANDecap", func(b *testing.B) {
		var eth layers.Ethernet
		var ip layers.IPv4
		var udp layers.UDP
		var v layers.VXLAN
		p := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip, &udp, &v)
		p.IgnoreUnsupported = true
		var found []gopacket.LayerType
		b.ReportAllocs()
		for b.Loop() {
			if err := p.DecodeLayers(vx, &found); err != nil {
				b.Fatal(err)
			}
			if len(v.Payload) == 0 {
				b.Fatal("no inner frame")
			}
		}
	})
	b.Run("VXLANEncap", func(b *testing.B) {
		inner := innerFrame()
		buf := gopacket.NewSerializeBuffer()
		eth := &layers.Ethernet{SrcMAC: hw(macA), DstMAC: hw(macB), EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Flags: layers.IPv4DontFragment, Protocol: layers.IPProtocolUDP,
			SrcIP: vxo.Src.AsSlice(), DstIP: vxo.Dst.AsSlice()}
		udp := &layers.UDP{SrcPort: 50000, DstPort: VXLANPort}
		opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
		udp.SetNetworkLayerForChecksum(ip)
		b.ReportAllocs()
		for b.Loop() {
			if err := gopacket.SerializeLayers(buf, opts, eth, ip, udp, &layers.VXLAN{ValidIDFlag: true, VNI: 5000}, gopacket.Payload(inner)); err != nil {
				b.Fatal(err)
			}
		}
	})
	mpls, _ := DumbNetMPLSPush(innerFrame(), []uint8{2, 3, 5})
	b.Run("MPLSPop", func(b *testing.B) {
		// layers.MPLS is not a DecodingLayer: gopacket.NewPacket is the
		// library's only way to decode it.
		buf := gopacket.NewSerializeBuffer()
		b.ReportAllocs()
		for b.Loop() {
			pk := gopacket.NewPacket(mpls, layers.LayerTypeEthernet, gopacket.DecodeOptions{NoCopy: true, Lazy: true})
			eth, _ := pk.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
			m, _ := pk.Layer(layers.LayerTypeMPLS).(*layers.MPLS)
			if eth == nil || m == nil {
				b.Fatal("no MPLS")
			}
			if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, eth, gopacket.Payload(m.Payload)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
