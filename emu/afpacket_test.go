package emu

import (
	"bytes"
	"context"
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/topo"
	"golang.org/x/sys/unix"
)

// auxCmsg builds a PACKET_AUXDATA control message as the kernel does.
func auxCmsg(status uint32, tci, tpid uint16) []byte {
	b := make([]byte, unix.CmsgSpace(sizeofAuxdata))
	binary.NativeEndian.PutUint64(b[0:], uint64(unix.CmsgLen(sizeofAuxdata)))
	binary.NativeEndian.PutUint32(b[8:], unix.SOL_PACKET)
	binary.NativeEndian.PutUint32(b[12:], unix.PACKET_AUXDATA)
	binary.NativeEndian.PutUint32(b[16:], status)
	binary.NativeEndian.PutUint16(b[32:], tci)
	binary.NativeEndian.PutUint16(b[34:], tpid)
	return b
}

func TestVLANAuxdata(t *testing.T) {
	tci, tpid, ok := vlanFromAuxdata(auxCmsg(unix.TP_STATUS_VLAN_VALID|unix.TP_STATUS_VLAN_TPID_VALID, 0x2064, 0x88a8))
	if !ok || tci != 0x2064 || tpid != 0x88a8 {
		t.Fatalf("got %#x %#x %v", tci, tpid, ok)
	}
	if _, tpid, ok := vlanFromAuxdata(auxCmsg(unix.TP_STATUS_VLAN_VALID, 7, 0)); !ok || tpid != 0x8100 {
		t.Fatalf("no TPID flag: tpid %#x ok %v, want 0x8100", tpid, ok)
	}
	for _, bad := range [][]byte{nil, auxCmsg(0, 7, 0x8100), auxCmsg(unix.TP_STATUS_VLAN_VALID, 1, 1)[:20], make([]byte, 16)} {
		if _, _, ok := vlanFromAuxdata(bad); ok {
			t.Errorf("tag read from %x", bad)
		}
	}
	frame := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x08, 0x00, 0xaa}
	buf := make([]byte, 64)
	copy(buf, frame)
	n, err := insertVLAN(buf, len(frame), 0x8100, 0x0005)
	want := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x81, 0x00, 0x00, 0x05, 0x08, 0x00, 0xaa}
	if err != nil || !bytes.Equal(buf[:n], want) {
		t.Fatalf("insertVLAN = %x, %v", buf[:n], err)
	}
	if _, err := insertVLAN(buf, 11, 0x8100, 1); err != errRunt {
		t.Fatalf("runt: %v", err)
	}
	if _, err := insertVLAN(buf[:20], 17, 0x8100, 1); err != errOversize {
		t.Fatalf("no room: %v", err)
	}
}

func FuzzVLANAuxdata(f *testing.F) {
	f.Add(auxCmsg(unix.TP_STATUS_VLAN_VALID, 5, 0x8100), []byte("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x08\x00"))
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, oob, frame []byte) {
		tci, tpid, ok := vlanFromAuxdata(oob)
		if !ok {
			return
		}
		buf := make([]byte, len(frame)+4)
		copy(buf, frame)
		n, err := insertVLAN(buf, len(frame), tpid, tci)
		if err != nil {
			return
		}
		if n != len(frame)+4 || binary.BigEndian.Uint16(buf[14:]) != tci || !bytes.Equal(buf[16:n], frame[12:]) {
			t.Fatalf("bad insert: %x from %x", buf[:n], frame)
		}
	})
}

// tagger sends one 802.1Q-tagged frame on port 1 (s1); the element on the
// other end (s2) records what arrives.
type tagger struct {
	env  element.Env
	send bool
	mu   sync.Mutex
	got  [][]byte
}

func (g *tagger) Attach(env element.Env, _ []element.PortInfo) {
	g.env = env
	if g.send {
		var tick func()
		tick = func() {
			env.Send(1, taggedFrame)
			env.Send(1, bigFrame)
			env.After(50*element.Millisecond, tick)
		}
		env.After(0, tick)
	}
}

func (g *tagger) Receive(p element.Port, f []byte) {
	g.mu.Lock()
	g.got = append(g.got, append([]byte(nil), f...))
	g.mu.Unlock()
}

func (g *tagger) LinkChange(element.Port, bool) {}

var taggedFrame = []byte{
	0x06, 0, 0, 1, 0, 1, 0x06, 0, 0, 0, 0, 1, // dst, src
	0x81, 0x00, 0x20, 0x2a, // 802.1Q, PCP 1, VID 42
	0x88, 0xb5, 's', 'p', 'a', 'i', 'n', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
}

// bigFrame is longer than a host's 1500-byte MTU allows: what a scheme
// that adds headers to a full-size host frame puts on the fabric.
var bigFrame = func() []byte {
	b := make([]byte, 1514+64)
	copy(b, taggedFrame[:12])
	b[12], b[13] = 0x88, 0xb5
	for i := 14; i < len(b); i++ {
		b[i] = byte(i)
	}
	return b
}()

type tagFabric map[topo.NodeID]element.Element

func (f tagFabric) Element(n topo.NodeID) element.Element { return f[n] }

// TestVLANTagSurvives: the kernel strips VLAN tags on receive; the port
// must put them back so that schemes that switch on VLANs (SPAIN, the
// backplane) see their tags. And frames longer than a host's MTU cross
// the fabric (FabricMTU).
func TestVLANTagSurvives(t *testing.T) {
	needRoot(t)
	b := topo.NewBuilder("pair")
	s1, s2 := b.AddNode("s1", topo.Switch), b.AddNode("s2", topo.Switch)
	b.Connect(s1, s2)
	g, _ := b.Graph()
	rx := &tagger{}
	fab := tagFabric{s1: &tagger{send: true}, s2: rx}
	r := &scheme.Registry{}
	r.Register(scheme.Scheme{Name: "tag", New: func(*topo.Graph, scheme.Options) (scheme.Fabric, error) { return fab, nil }})
	upLab(t, g, "tag", Options{Registry: r})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		rx.mu.Lock()
		var tagged, big bool
		for _, f := range rx.got {
			tagged = tagged || bytes.Equal(f, taggedFrame)
			big = big || bytes.Equal(f, bigFrame)
		}
		n := len(rx.got)
		var first []byte
		if n > 0 {
			first = rx.got[0]
		}
		rx.mu.Unlock()
		if tagged && big {
			return
		}
		if n > 6 {
			t.Fatalf("tagged frame arrived %v, big frame %v; first %x", tagged, big, first)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no frame arrived")
}
