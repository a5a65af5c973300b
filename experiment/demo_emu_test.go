package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/element"
	"github.com/edgefabric/edgefabric/emu"
	"github.com/edgefabric/edgefabric/internal/testenv"
	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/topo"
)

// demoTopo is the smallest topology with a link to fail that the fabric
// routes around: two spines, two leaves, a host on each (about 8 s).
const demoTopo = "leafspine:2,2,1"

var demoLabSeq atomic.Int32

// demoLab returns a lab name unique to this test process, and removes
// whatever of that lab is left when the test ends.
func demoLab(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("rd%d_%d", os.Getpid(), demoLabSeq.Add(1))
	t.Cleanup(func() {
		if _, err := emu.Cleanup(name, 10*time.Second); err != nil && !errors.Is(err, emu.ErrNoLab) {
			t.Errorf("cleanup: %v", err)
		}
		if labs, _ := emu.Labs(); slices.Contains(labs, name) {
			t.Errorf("lab %s left behind", name)
		}
	})
	return name
}

func needDemoEmu(t *testing.T) {
	t.Helper()
	testenv.NeedRoot(t)
	testenv.NeedTools(t, "ping", "iperf3", "ip")
}

// fakeLab writes lab name's state directory with owner as its owner.json
// (none when nil): a lab as the demo finds it, without building one.
func fakeLab(t *testing.T, name string, owner any) {
	t.Helper()
	if err := os.MkdirAll(emu.LabDir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if owner != nil {
		// A real owner record has its process's start time (field 22 of
		// /proc/PID/stat; without it the pid is nobody's): fill it in.
		if m, ok := owner.(map[string]any); ok && m["pid_start"] == nil {
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", m["pid"].(int)))
			if err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
			m["pid_start"], _ = strconv.ParseUint(f[19], 10, 64)
		}
		data, _ := json.Marshal(owner)
		if err := os.WriteFile(filepath.Join(emu.LabDir(name), "owner.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// progressFunc receives the demo's progress lines.
type progressFunc func(line string)

func (f progressFunc) Write(p []byte) (int, error) { f(string(p)); return len(p), nil }

// TestDemoEmuLabInUse: a lab of the demo's name that something holds (a
// process running it, a daemon, an up or a demo that has claimed the name
// and not built yet) is left alone, and the demo is refused as bad input.
// It once removed it as "leftovers of an earlier lab" and ran.
func TestDemoEmuLabInUse(t *testing.T) {
	needDemoEmu(t)
	sleeper := exec.Command("sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	for _, c := range []struct {
		what  string
		owner any
		state string
	}{
		{"in-process", map[string]any{"pid": os.Getpid()}, fmt.Sprintf("running (pid %d)", os.Getpid())},
		{"daemon", map[string]any{"pid": sleeper.Process.Pid, "daemon": true}, fmt.Sprintf("running (pid %d)", sleeper.Process.Pid)},
		// A claim as up or another demo makes it, nothing built yet.
		{"claimed", nil, fmt.Sprintf("running (pid %d)", os.Getpid())},
	} {
		name := demoLab(t)
		if c.owner == nil {
			if err := emu.ClaimName(name); err != nil {
				t.Fatal(err)
			}
		} else {
			fakeLab(t, name, c.owner)
		}
		// Bounded should the demo run after all: it stops at its first
		// step.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := Demo(ctx, DemoOptions{Engine: "emu", Name: name, Topology: demoTopo, Progress: progressFunc(func(string) { cancel() })})
		cancel()
		want := fmt.Sprintf("demo: lab %s is %s: choose another --name or run 'edgefabric down %s'", name, c.state, name)
		if !errors.Is(err, ErrBadInput) || !errors.Is(err, emu.ErrLabExists) || err.Error() != want {
			t.Errorf("%s: %v\nwant %s (ErrBadInput, emu.ErrLabExists)", c.what, err, want)
		}
		if _, err := os.Stat(emu.LabDir(name)); err != nil {
			t.Errorf("%s: the lab is gone: %v", c.what, err)
		}
		if pid, _ := emu.Owner(name); pid == 0 {
			t.Errorf("%s: the lab lost its owner", c.what)
		}
	}
}

// TestDemoEmuCrashedLab: the leftovers of a crashed lab (an owner that is
// gone, a namespace) are still removed before the demo builds its own;
// interrupted at once, it reports no step as measured and leaves nothing.
func TestDemoEmuCrashedLab(t *testing.T) {
	needDemoEmu(t)
	name := demoLab(t)
	// Our pid with another start time: a process that is gone.
	fakeLab(t, name, map[string]any{"pid": os.Getpid(), "pid_start": 1})
	ns := emu.Prefix(name) + "zz"
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var lines []string
	rep, err := Demo(ctx, DemoOptions{Engine: "emu", Name: name, Topology: demoTopo, Progress: progressFunc(func(l string) {
		lines = append(lines, l)
		if strings.Contains(l, "bringing up") {
			cancel()
		}
	})})
	if !slices.Contains(lines, fmt.Sprintf("demo: removed the leftovers of a crashed %q lab\n", name)) {
		t.Errorf("no word of the crashed lab's removal: %q", lines)
	}
	if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) || err.Error() != "demo: interrupted" {
		t.Errorf("Demo: %v, want demo: interrupted (ErrInterrupted)", err)
	}
	if rep == nil {
		t.Fatal("no report")
	}
	if rep.StoppedBefore != DemoDiscovery || strings.Count(rep.Text(), "not reached\n") != 4 || rep.Error != "demo: interrupted" {
		t.Errorf("stopped before %v, report:\n%s", rep.StoppedBefore, rep.Text())
	}
	if labs, _ := emu.Labs(); slices.Contains(labs, name) {
		t.Errorf("lab %s left behind", name)
	}
}

// TestDemoEmuSameName: a second demo of one name, started while the first
// builds its lab, is refused at once and leaves the first alone, which
// runs to its end. The second once removed the first's namespaces.
func TestDemoEmuSameName(t *testing.T) {
	needDemoEmu(t)
	name := demoLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	second := make(chan error, 1)
	var once sync.Once
	rep, err := Demo(ctx, DemoOptions{Engine: "emu", Name: name, Topology: demoTopo, Progress: progressFunc(func(l string) {
		if strings.Contains(l, "bringing up") {
			once.Do(func() {
				go func() {
					ctx2, cancel2 := context.WithTimeout(context.Background(), time.Minute)
					defer cancel2()
					_, err := Demo(ctx2, DemoOptions{Engine: "emu", Name: name, Topology: demoTopo})
					second <- err
				}()
			})
		}
	})})
	select {
	case err2 := <-second:
		if !errors.Is(err2, ErrBadInput) || !errors.Is(err2, emu.ErrLabExists) {
			t.Errorf("second demo: %v, want the name refused", err2)
		}
	case <-time.After(time.Minute):
		t.Fatal("the second demo did not return")
	}
	if err != nil || rep.StoppedBefore != 0 {
		t.Fatalf("first demo: %v, stopped before %v", err, rep.StoppedBefore)
	}
	if !rep.OK() {
		t.Errorf("first demo failed its checks:\n%s", rep.Text())
	}
}

// TestDemoEmuInterruptAfterFailover: Ctrl-C while iperf3 still runs, after
// the failover was measured, stops the run at once: interrupted, the
// failover reported, iperf3 not reached. It once waited for iperf3 to
// finish and reported success.
func TestDemoEmuInterruptAfterFailover(t *testing.T) {
	needDemoEmu(t)
	name := demoLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var at time.Time
	rep, err := Demo(ctx, DemoOptions{Engine: "emu", Name: name, Topology: demoTopo, Progress: progressFunc(func(l string) {
		if strings.HasPrefix(l, "demo: failover:") {
			at = time.Now()
			cancel()
		}
	})})
	if at.IsZero() {
		t.Fatalf("never reached the end of the failover: %v", err)
	}
	// iperf3 had several seconds left.
	if took := time.Since(at); took > 3*time.Second {
		t.Errorf("the demo returned %v after the interrupt", took)
	}
	if !errors.Is(err, ErrInterrupted) || err.Error() != "demo: interrupted" {
		t.Errorf("Demo: %v, want demo: interrupted (ErrInterrupted)", err)
	}
	if rep.StoppedBefore != DemoIperf3 || rep.Error != "demo: interrupted" {
		t.Errorf("stopped before %v, error %q", rep.StoppedBefore, rep.Error)
	}
	text := rep.Text()
	if !strings.Contains(text, "  iperf3         not reached\n") || !strings.Contains(text, "  failover       link ") ||
		!strings.Contains(text, "  stopped early  demo: interrupted\n") {
		t.Errorf("report:\n%s", text)
	}
	js, _ := json.Marshal(rep)
	if strings.Contains(string(js), `"iperf3_mbps"`) || !strings.Contains(string(js), `"failed_link"`) {
		t.Errorf("JSON: %s", js)
	}
}

// TestProcWaitInterruptFirst: an interrupt wins over a process that has
// ended too; a select over both picked either at random, so an interrupt
// after the failover line let the demo finish half the time once iperf3
// was done (TestDemoEmuInterruptAfterFailover failed so under load).
func TestProcWaitInterruptFirst(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := started(cmd)
	<-p.done
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 100 {
		if err := p.wait(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("wait after an interrupt, the process ended too: %v, want context.Canceled", err)
		}
	}
	if err := p.wait(context.Background()); err != nil {
		t.Fatalf("wait without an interrupt: %v", err)
	}
}

// TestDemoEmuDiscoveryFromControllerStart: an emulator lab's element
// clock runs from the start of its build (namespaces, veths), and the
// controller starts discovering only when its agent is attached, after
// it: the demo's discovery_ms counted the build too (fattree:4: 342 ms
// where discovery took 275, the simulator's 253). It now runs from the
// controller's start, through the registry and discoveryMS the demo uses.
func TestDemoEmuDiscoveryFromControllerStart(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedTools(t, "ip")
	g, err := topo.Parse("leafspine:2,2,1", 1)
	if err != nil {
		t.Fatal(err)
	}
	var fab *dumbnet.Fabric
	var start atomic.Int64
	reg, err := dumbnetRegistry(&fab, &start)
	if err != nil {
		t.Fatal(err)
	}
	l, err := emu.Up(context.Background(), g, "dumbnet", emu.Options{Name: fmt.Sprintf("xrdc%d", os.Getpid()), Registry: reg,
		Topology: "leafspine:2,2,1", Scheme: scheme.Options{Seed: 1}, ReadyTimeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Down()
	c := fab.Controller()
	for deadline := time.Now().Add(time.Minute); !c.Done(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("discovery did not end")
		}
	}
	ms := float64(element.Millisecond)
	got, doneAt, at := discoveryMS(c, &start), float64(c.DoneAt())/ms, float64(start.Load())/ms
	t.Logf("controller attached at %.1f ms of the lab's clock, discovery done at %.1f ms: %.1f ms", at, doneAt, got)
	if !(at > 0) {
		t.Fatalf("controller attached at %v ms: the lab's build took no time?", at)
	}
	// Every BFS round ends with one probetimeout wait (50 ms).
	if low := float64(c.Rounds()) * 50; math.Abs(got-(doneAt-at)) > 1e-6 || got < low {
		t.Errorf("discovery %.1f ms, want DoneAt − attach time = %.1f ms, at least %d rounds × 50 ms", got, doneAt-at, c.Rounds())
	}
}
