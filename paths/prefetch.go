package paths

import "unsafe"

// prefetchAhead is how many items ahead of the one it works on a pass
// over items far apart in memory (paths in a tree's list, the majority
// round's records) asks for the next one's cache line: each item costs
// a cache miss that would otherwise stall the pass, and the work on the
// items in between hides it.
const prefetchAhead = 8

// prefetchPath asks for the path seg[i+prefetchAhead]'s first links to be
// brought into the cache, and for the offset of seg[i+2*prefetchAhead]:
// where the paths are far apart, reading the offset is a cache miss of
// its own, which would stall the request for the links.
func (ps *PathSet) prefetchPath(seg []uint32, i int) {
	if k := i + 2*prefetchAhead; k < len(seg) {
		ps.prefetchOff(seg[k])
	}
	if k := i + prefetchAhead; k < len(seg) {
		ps.prefetchLinks(seg[k])
	}
}

// prefetchOff asks for path j's offset.
func (ps *PathSet) prefetchOff(j uint32) { prefetchAddr(addrOf(ps.PathOff, j)) }

// prefetchLinks asks for path j's first links (reading its offset).
func (ps *PathSet) prefetchLinks(j uint32) {
	if o := ps.PathOff[j]; int(o) < len(ps.Links) {
		prefetchAddr(addrOf(ps.Links, o))
	}
}

// addrOf is the address of s[i], for prefetchAddr (which only hints: the
// address is never dereferenced by Go code).
func addrOf[T any](s []T, i uint32) uintptr { return uintptr(unsafe.Pointer(&s[i])) }
