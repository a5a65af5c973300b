package plan

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Two plans written into one directory at once end as one plan's files,
// not some of each (a known gap until the directory lock): writer A stops
// after its first rename and waits for writer B to finish (300 ms at
// most). With the lock B cannot rename until A is done, so the directory
// ends with B's files; without it B would finish during A's pause and A's
// last three files would land beside B's plan.json.
func TestWriteDirTwoWritersOnePlan(t *testing.T) {
	a, b := triangle(t), compute(t, "fattree:4", Options{Trials: 1, Seed: 1})
	want := func(p *Plan) map[string]string {
		d := t.TempDir()
		if _, err := p.WriteDir(d, nil, false); err != nil {
			t.Fatal(err)
		}
		return readOutFiles(t, d)
	}
	wantA, wantB := want(a), want(b)

	dir := t.TempDir()
	aRenamed, bDone := make(chan struct{}), make(chan struct{})
	var first atomic.Bool // not a sync.Once: B's calls must not wait for A's
	afterRename = func(d string, i int) {
		if d != dir || !first.CompareAndSwap(false, true) {
			return
		}
		close(aRenamed) // A's first rename: B starts now
		select {
		case <-bDone:
		case <-time.After(300 * time.Millisecond):
		}
	}
	defer func() { afterRename = nil }()
	var wg sync.WaitGroup
	var errA, errB error
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, errA = a.WriteDir(dir, nil, false)
	}()
	<-aRenamed
	_, errB = b.WriteDir(dir, nil, false)
	close(bDone)
	wg.Wait()
	if errA != nil || errB != nil {
		t.Fatalf("writes: %v, %v", errA, errB)
	}
	fromA, fromB := 0, 0
	for name, data := range readOutFiles(t, dir) {
		switch data {
		case wantA[name]:
			fromA++
		case wantB[name]:
			fromB++
		default:
			t.Errorf("%s is neither plan's", name)
		}
	}
	if fromB != len(OutFiles(false)) {
		t.Errorf("%d files of plan A and %d of plan B, want all of B (the last writer)", fromA, fromB)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != len(OutFiles(false)) {
		t.Errorf("%d entries, want %d (no temporary file left)", len(ents), len(OutFiles(false)))
	}
}

// readOutFiles reads the files WriteDir writes without paths from dir,
// by name.
func readOutFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, name := range OutFiles(false) {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(data)
	}
	return files
}
