package stp

import "github.com/edgefabric/edgefabric/element"

// fdb is the filtering database of a learning bridge (802.1D-1998 §7.9):
// dynamic entries mapping a station's MAC to the port it was last seen on.
//
// Entries live in a slice and the map holds their index, so that
// refreshing a known station (every frame) costs one hash lookup and no
// map write; freed slots are reused. Entries age lazily: a lookup that
// finds an entry older than the aging time in force deletes it and
// misses, so a change of aging time (the short aging of a topology change)
// takes effect at once without a scan; sweep reclaims the memory of
// entries nobody looks up.
type fdb struct {
	idx  map[[6]byte]int32
	ents []fdbEntry
	free []int32
	max  int // capacity; learning beyond it is refused and counted
	// oldest is at most the last-seen time of every entry (exact after
	// a sweep), so that reclaim scans only when an entry may have aged.
	oldest element.Time
}

type fdbEntry struct {
	mac  [6]byte
	port element.Port // 0: free slot
	seen element.Time
}

type learnResult uint8

const (
	learnRefreshed learnResult = iota // known, same port: timestamp updated
	learnNew                          // a new entry
	learnMoved                        // known on another port: station moved
	learnFull                         // table full: not learned
	learnExpired                      // known but aged out: learned anew in its slot
)

func (f *fdb) len() int { return len(f.idx) }

// learn records that mac was seen on port p. An entry older than aging
// (which lazy aging has not deleted yet) is a station that continuous
// aging forgot: it is learned anew (learnExpired), not refreshed or moved.
func (f *fdb) learn(mac [6]byte, p element.Port, now, aging element.Time) learnResult {
	if i, ok := f.idx[mac]; ok {
		e := &f.ents[i]
		old, expired := e.port, now-e.seen > aging
		e.port, e.seen = p, now
		if expired {
			return learnExpired
		}
		if old != p {
			return learnMoved
		}
		return learnRefreshed
	}
	if len(f.idx) >= f.max {
		return learnFull
	}
	if f.idx == nil {
		f.idx = make(map[[6]byte]int32)
	}
	e := fdbEntry{mac: mac, port: p, seen: now}
	var i int32
	if n := len(f.free); n > 0 {
		i = f.free[n-1]
		f.free = f.free[:n-1]
		f.ents[i] = e
	} else {
		i = int32(len(f.ents))
		f.ents = append(f.ents, e)
	}
	f.idx[mac] = i
	return learnNew
}

// get returns mac's entry, aged or not.
func (f *fdb) get(mac [6]byte) (fdbEntry, bool) {
	i, ok := f.idx[mac]
	if !ok {
		return fdbEntry{}, false
	}
	return f.ents[i], true
}

// lookup returns the port of mac. An entry last seen more than aging ago
// is deleted; expired reports that.
func (f *fdb) lookup(mac [6]byte, now, aging element.Time) (p element.Port, ok, expired bool) {
	i, ok := f.idx[mac]
	if !ok {
		return 0, false, false
	}
	e := &f.ents[i]
	if now-e.seen > aging {
		f.del(i)
		return 0, false, true
	}
	return e.port, true, false
}

func (f *fdb) del(i int32) {
	delete(f.idx, f.ents[i].mac)
	f.ents[i] = fdbEntry{}
	f.free = append(f.free, i)
}

// flushPort deletes every entry on port p and returns how many.
func (f *fdb) flushPort(p element.Port) int {
	n := 0
	for i := range f.ents {
		if f.ents[i].port == p {
			f.del(int32(i))
			n++
		}
	}
	return n
}

// sweep deletes every entry older than aging and returns how many.
func (f *fdb) sweep(now, aging element.Time) int {
	n := 0
	oldest := now
	for i := range f.ents {
		e := &f.ents[i]
		if e.port == 0 {
			continue
		}
		if now-e.seen > aging {
			f.del(int32(i))
			n++
		} else if e.seen < oldest {
			oldest = e.seen
		}
	}
	f.oldest = oldest
	return n
}

// reclaim deletes the entries older than aging of a full table, so that
// under lazy aging a station that continuous aging would have forgotten
// does not keep a new one out. It scans only when some entry may have
// aged, so a full table of live stations costs no scan per frame.
func (f *fdb) reclaim(now, aging element.Time) int {
	if now-f.oldest <= aging {
		return 0
	}
	return f.sweep(now, aging)
}
