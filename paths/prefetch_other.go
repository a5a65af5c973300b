//go:build !amd64

package paths

// prefetchAddr does nothing where no prefetch instruction is wired up.
func prefetchAddr(addr uintptr) {}
