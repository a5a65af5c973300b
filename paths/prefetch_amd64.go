package paths

// prefetchAddr asks the CPU to bring the cache line at addr closer
// (PREFETCHT0) and goes on without waiting for it; an unmapped address
// does not fault.
//
//go:noescape
func prefetchAddr(addr uintptr)
