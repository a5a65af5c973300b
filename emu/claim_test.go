package emu

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestClaimRecordsOwner: a claim records its process as the lab's owner
// at once, so that a lab still starting is not taken for a crashed one
// (no owner) by status, exec, link or the demo, which removed such a lab
// as leftovers; ReleaseName removes a claim that built nothing, and only
// that.
func TestClaimRecordsOwner(t *testing.T) {
	needRoot(t)
	name := labName()
	cleanupLab(t, name)
	if err := ClaimName(name); err != nil {
		t.Fatal(err)
	}
	if pid, alive := Owner(name); pid != os.Getpid() || !alive || OwnerIsDaemon(name) {
		t.Fatalf("owner %d, alive %v, daemon %v", pid, alive, OwnerIsDaemon(name))
	}
	if err := ClaimName(name); !errors.Is(err, ErrLabExists) {
		t.Fatalf("second claim: %v", err)
	}
	// A directory holding more than the claim (a lab wrote its files) is
	// not given up.
	extra := filepath.Join(LabDir(name), "state.json")
	os.WriteFile(extra, []byte("{}"), 0o644)
	ReleaseName(name)
	if labs, _ := Labs(); !slices.Contains(labs, name) {
		t.Fatal("ReleaseName removed a lab that wrote files")
	}
	os.Remove(extra)
	// Another process's claim is not given up either.
	writeOwnerOf(name, 1, false)
	ReleaseName(name)
	if labs, _ := Labs(); !slices.Contains(labs, name) {
		t.Fatal("ReleaseName removed another process's claim")
	}
	writeOwner(name)
	ReleaseName(name)
	if labs, _ := Labs(); slices.Contains(labs, name) {
		t.Fatal("ReleaseName left the claim")
	}
}

// TestReclaimCrashed: a free name is claimed; a lab whose owner lives is
// refused and left alone; a crashed one (its owner gone, a namespace
// left) is removed and claimed, by exactly one of two processes trying at
// once.
func TestReclaimCrashed(t *testing.T) {
	needRoot(t)
	name := labName()
	cleanupLab(t, name)
	if removed, err := ReclaimCrashed(name, 10*time.Second); err != nil || removed {
		t.Fatalf("free name: removed %v, %v", removed, err)
	}
	if removed, err := ReclaimCrashed(name, 10*time.Second); !errors.Is(err, ErrLabExists) || removed {
		t.Fatalf("own lab: removed %v, %v", removed, err)
	}
	if pid, alive := Owner(name); pid != os.Getpid() || !alive {
		t.Fatalf("the live lab lost its owner: %d %v", pid, alive)
	}
	// Crash it: an owner that is gone (our pid, another start time) and
	// a namespace.
	data, _ := json.Marshal(owner{Pid: os.Getpid(), PidStart: 1})
	if err := os.WriteFile(ownerPath(name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	ns := Prefix(name) + "zz"
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var won, refused int
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			removed, err := ReclaimCrashed(name, 10*time.Second)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && removed:
				won++
			case errors.Is(err, ErrLabExists):
				refused++
			default:
				t.Errorf("ReclaimCrashed: removed %v, %v", removed, err)
			}
		}()
	}
	wg.Wait()
	if won != 1 || refused != 1 {
		t.Fatalf("%d removed and claimed, %d refused; want 1 and 1", won, refused)
	}
	if left, _ := listNS(Prefix(name)); len(left) > 0 {
		t.Fatalf("namespaces left: %v", left)
	}
	if pid, alive := Owner(name); pid != os.Getpid() || !alive {
		t.Fatalf("the new claim has no live owner: %d %v", pid, alive)
	}
}

// TestSpawnDaemonOwnsAtOnce: from the moment SpawnDaemon has started the
// daemon, the daemon is the lab's owner, before it builds anything (it
// was the up process, then nobody: "crashed" while starting).
func TestSpawnDaemonOwnsAtOnce(t *testing.T) {
	needRoot(t)
	name := labName()
	cleanupLab(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	// A "daemon" that never reports ready: sleep.
	go func() { errc <- SpawnDaemon(ctx, name, []string{"sleep", "60"}) }()
	ok := waitUntil(func() bool {
		pid, alive := Owner(name)
		return alive && pid != os.Getpid() && OwnerIsDaemon(name)
	})
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("SpawnDaemon: %v", err)
	}
	if !ok {
		pid, alive := Owner(name)
		t.Fatalf("the daemon never owned the lab: owner %d, alive %v", pid, alive)
	}
	if labs, _ := Labs(); slices.Contains(labs, name) {
		t.Fatalf("lab %s left behind", name)
	}
}

// TestOwnerWritersAtOnce: SpawnDaemon and the daemon it started may both
// record the owner at once; with one temporary file name for both, one
// rename failed (the daemon or the up then gave up: "the daemon never
// recorded itself", seen under load).
func TestOwnerWritersAtOnce(t *testing.T) {
	needRoot(t)
	name := labName()
	cleanupLab(t, name)
	if err := ClaimName(name); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if err := writeOwner(name); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if pid, alive := Owner(name); pid != os.Getpid() || !alive {
		t.Fatalf("owner %d, alive %v", pid, alive)
	}
	if ents, _ := os.ReadDir(LabDir(name)); len(ents) != 1 {
		t.Fatalf("left in the lab directory: %v", ents)
	}
}
