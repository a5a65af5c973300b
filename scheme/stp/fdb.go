package stp

import "github.com/edgefabric/edgefabric/element"

// fdb is the filtering database of a learning bridge (802.1D-1998 §7.9):
// dynamic entries mapping a station's MAC to the port it was last seen on.
// Entries age lazily: a lookup that finds an entry older than the aging
// time in force deletes it and misses, so a change of aging time (the short
// aging of a topology change) takes effect at once without a scan; sweep
// reclaims the memory of entries nobody looks up.
type fdb struct {
	m   map[[6]byte]fdbEntry
	max int // capacity; learning beyond it is refused and counted
}

type fdbEntry struct {
	port element.Port
	seen element.Time
}

type learnResult uint8

const (
	learnRefreshed learnResult = iota // known, same port: timestamp updated
	learnNew                          // a new entry
	learnMoved                        // known on another port: station moved
	learnFull                         // table full: not learned
)

func (f *fdb) learn(mac [6]byte, p element.Port, now element.Time) learnResult {
	e, ok := f.m[mac]
	if ok {
		f.m[mac] = fdbEntry{port: p, seen: now}
		if e.port != p {
			return learnMoved
		}
		return learnRefreshed
	}
	if len(f.m) >= f.max {
		return learnFull
	}
	if f.m == nil {
		f.m = make(map[[6]byte]fdbEntry)
	}
	f.m[mac] = fdbEntry{port: p, seen: now}
	return learnNew
}

// lookup returns the port of mac. An entry last seen more than aging ago
// is deleted; expired reports that.
func (f *fdb) lookup(mac [6]byte, now, aging element.Time) (p element.Port, ok, expired bool) {
	e, ok := f.m[mac]
	if !ok {
		return 0, false, false
	}
	if now-e.seen > aging {
		delete(f.m, mac)
		return 0, false, true
	}
	return e.port, true, false
}

// flushPort deletes every entry on port p and returns how many.
func (f *fdb) flushPort(p element.Port) int {
	n := 0
	for mac, e := range f.m {
		if e.port == p {
			delete(f.m, mac)
			n++
		}
	}
	return n
}

// sweep deletes every entry older than aging and returns how many.
func (f *fdb) sweep(now, aging element.Time) int {
	n := 0
	for mac, e := range f.m {
		if now-e.seen > aging {
			delete(f.m, mac)
			n++
		}
	}
	return n
}
