package topo

import (
	"bytes"
	"runtime"
	"testing"
)

// Benchmarks for docs/performance.md. Baselines in the same run:
// BenchmarkBuildBaseline builds the same fattree:48 edge list through the
// bare Builder (no generator logic), BenchmarkLoad* compare each format
// against BenchmarkBuild of the same graph.

func benchGen(b *testing.B, spec string) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(spec, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuildFatTree48(b *testing.B) { benchGen(b, "fattree:48") }
func BenchmarkBuildBCube84(b *testing.B)   { benchGen(b, "bcube:8,4") }

// BenchmarkBuildBaseline replays fattree:48's links through a Builder:
// the floor any generator of this graph pays.
func BenchmarkBuildBaseline(b *testing.B) {
	g, _ := FatTree(48)
	b.ReportAllocs()
	for b.Loop() {
		nb := NewBuilder("x")
		nb.Grow(g.NumNodes(), g.NumLinks())
		for i := range g.NumNodes() {
			nb.AddNode(g.Node(NodeID(i)).Name, g.Node(NodeID(i)).Kind)
		}
		for l := range g.NumLinks() {
			lk := g.Link(LinkID(l))
			nb.ConnectPorts(lk.A, lk.B, lk.Rate, lk.Delay)
		}
		if _, err := nb.Graph(); err != nil {
			b.Fatal(err)
		}
	}
}

func benchLoad(b *testing.B, spec string, f Format) {
	g, err := Parse(spec, 1)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Export(&buf, g, f); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(buf.Bytes(), "bench", LoadOptions{Format: f}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoadFatTree48YAML(b *testing.B)    { benchLoad(b, "fattree:48", FormatYAML) }
func BenchmarkLoadFatTree48JSON(b *testing.B)    { benchLoad(b, "fattree:48", FormatJSON) }
func BenchmarkLoadFatTree48Clab(b *testing.B)    { benchLoad(b, "fattree:48", FormatClab) }
func BenchmarkLoadFatTree48GraphML(b *testing.B) { benchLoad(b, "fattree:48", FormatGraphML) }
func BenchmarkLoadBCube84YAML(b *testing.B)      { benchLoad(b, "bcube:8,4", FormatYAML) }

func BenchmarkExportFatTree48YAML(b *testing.B) {
	g, _ := FatTree(48)
	b.ReportAllocs()
	for b.Loop() {
		var buf bytes.Buffer
		if err := WriteYAML(&buf, g); err != nil {
			b.Fatal(err)
		}
	}
}

func benchStats(b *testing.B, spec string) {
	g, err := Parse(spec, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		Stats(g)
	}
}

func BenchmarkStatsFatTree48(b *testing.B) { benchStats(b, "fattree:48") }
func BenchmarkStatsBCube84(b *testing.B)   { benchStats(b, "bcube:8,4") }

// BenchmarkDiameterFatTree48 against BenchmarkDiameterSlowFatTree48 (one
// plain BFS per switch): the bit-parallel BFS's gain.
func BenchmarkDiameterFatTree48(b *testing.B) {
	g, _ := FatTree(48)
	b.ReportAllocs()
	for b.Loop() {
		g.diameter(StatsOptions{Workers: 1})
	}
}

func BenchmarkDiameterSlowFatTree48(b *testing.B) {
	g, _ := FatTree(48)
	b.ReportAllocs()
	for b.Loop() {
		slowDiameter(g)
	}
}

func BenchmarkHostByIP(b *testing.B) {
	g, _ := FatTree(48)
	ip := HostIP(27648)
	g.HostByIP(ip)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := g.HostByIP(ip); !ok {
			b.Fatal("not found")
		}
	}
}

// BenchmarkHostByIPLinear is the baseline: the former HostByIP, which
// listed the hosts on every call.
func BenchmarkHostByIPLinear(b *testing.B) {
	g, _ := FatTree(48)
	k := 27648
	b.ReportAllocs()
	for b.Loop() {
		if hosts := g.Nodes(Host); hosts[k-1] < 0 {
			b.Fatal("not found")
		}
	}
}

// BenchmarkBuildFatTree74 builds a graph of over 100,000 nodes (108,151:
// 6,845 switches, 101,306 hosts, 303,918 links) and reports the heap the
// finished graph retains, per node and per link.
func BenchmarkBuildFatTree74(b *testing.B) {
	var g *Graph
	var before, after runtime.MemStats
	b.ReportAllocs()
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		g, _ = FatTree(74)
		runtime.GC()
		runtime.ReadMemStats(&after)
	}
	retained := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	b.ReportMetric(retained/float64(g.NumNodes()), "retained-B/node")
	b.ReportMetric(retained/1e6, "retained-MB")
}
