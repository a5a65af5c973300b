package wire_test

import (
	"bytes"
	"fmt"
	"net/netip"
	"time"

	"github.com/edgefabric/edgefabric/wire"
)

func hostFrame() []byte {
	f, _ := wire.AppendUDPFrame(make([]byte, 0, 256),
		wire.MAC{2, 0, 0, 0, 0, 0xb}, wire.MAC{2, 0, 0, 0, 0, 0xa},
		netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:5001"), 64, []byte("hi"))
	return f
}

// An edge Axon prepends a header from route memory; each Axon on the path
// pops the next forward hop and records the input port in the reverse path.
func ExampleAxonForward() {
	h := wire.AxonHeader{Type: wire.AxonEthernet, Fwd: []uint8{2, 3, 5}}
	hdr, _ := h.AppendTo(nil)
	pkt, _ := wire.AxonEncap(nil, hdr, hostFrame())
	for _, in := range []uint8{1, 4} {
		out, _ := wire.AxonForward(pkt, in)
		fmt.Println("in", in, "out", out)
	}
	var got wire.AxonHeader
	payload, _ := got.DecodeFromBytes(pkt)
	fmt.Println("forward", got.Fwd, "reverse", got.Rev, "payload", len(payload), "bytes")
	// Output:
	// in 1 out 2
	// in 4 out 3
	// forward [5] reverse [4 1] payload 60 bytes
}

// A DumbNet host pushes the path; every switch pops one tag; the
// destination host strips the end marker and gets the original frame back.
func ExampleDumbNetPush() {
	orig := hostFrame()
	frame, _ := wire.DumbNetPush(bytes.Clone(orig), []uint8{2, 3, 5})
	for {
		port, out, err := wire.DumbNetPop(frame)
		if err != nil {
			break // wire.ErrNoHops: only the end marker is left
		}
		fmt.Println("switch forwards to port", port)
		frame = out
	}
	plain, err := wire.DumbNetStrip(frame)
	fmt.Println(err, bytes.Equal(plain, orig))
	// Output:
	// switch forwards to port 2
	// switch forwards to port 3
	// switch forwards to port 5
	// <nil> true
}

func ExampleVXLANEncap() {
	inner := hostFrame()
	o := &wire.VXLANOuter{Src: netip.MustParseAddr("192.0.2.1"), Dst: netip.MustParseAddr("192.0.2.2"),
		SrcPort: wire.VXLANSourcePort(inner), VNI: 5000}
	frame, _ := wire.VXLANEncap(make([]byte, 0, 2048), o, inner)
	vni, got, err := wire.VXLANDecap(frame)
	fmt.Println(len(frame)-len(inner), vni, bytes.Equal(got, inner), err)
	// Output: 50 5000 true <nil>
}

func ExampleDecodeControlFrame() {
	chirp := &wire.Chirp{IP: netip.MustParseAddr("10.0.0.1"), MAC: wire.MAC{2, 0, 0, 0, 0, 0xa}, EdgeSwitch: 7, WantReply: true}
	frame, _ := wire.AppendChirpFrame(nil, wire.MAC{2, 0, 0, 0, 0, 0xb}, 100, chirp)
	m, _ := wire.DecodeControlFrame(frame)
	c := m.(*wire.Chirp)
	fmt.Println(m.Subtype(), c.IP, c.MAC, c.EdgeSwitch, c.WantReply)
	_, err := wire.DecodeControlFrame(frame[:len(frame)-1])
	fmt.Println(err)
	// Output:
	// spain-chirp 10.0.0.1 02:00:00:00:00:0a 7 true
	// wire: spain chirp: edge switch needs 8 bytes at offset 13, have 7: truncated
}

func ExamplePcapWriter() {
	var buf bytes.Buffer
	w, _ := wire.NewPcapWriter(&buf, wire.LinkTypeEdgefabric, time.Unix(0, 0))
	_ = w.WriteEthernet(1_000_000, hostFrame())                                  // at 1 µs
	_ = w.WriteAxon(2_000_000, []byte{0x01, 0x06, 0x01, 0x00, 0x00, 0x20, 0xaa}) // at 2 µs
	fmt.Println(buf.Len())                                                       // file header 24, two record headers of 16 + 1 encapsulation byte, 60 + 7 bytes of data
	// Output: 125
}
