// Package emu is edgefabric's Linux emulator: it builds a lab from any
// topology out of network namespaces and veth pairs, and runs a scheme's
// sans-IO elements on real frames.
//
// Every host is a network namespace with the unmodified kernel stack; every
// switch is a namespace whose ports eth1..ethN are veth ends; every link is
// one veth pair created straight into the two namespaces (so nothing of a lab
// lives in the root namespace). A scheme's element runs on its node's ports
// through AF_PACKET sockets, one goroutine per element, with the element
// contract unchanged: calls never overlap, timers fire on the element's own
// goroutine, Send writes to the port's socket. A host whose scheme runs a
// host agent gets a TAP device named eth0 that carries its address; the
// agent sits between that TAP (its Local port) and the fabric-facing veths
// fab0..fabN-1. The built-in scheme "kernel-bridge" instead makes every
// switch namespace a Linux bridge with 802.1D STP: the baseline that
// schemes are measured against.
//
// Use it from Go:
//
//	lab, err := emu.Up(ctx, g, "stp", emu.Options{Name: "demo"})
//	defer lab.Down()
//	out, err := lab.Exec(ctx, "h1", "ping", "-c1", "10.0.0.2")
//	err = lab.SetLink("s1", "s2", false)
//	st := lab.Status()
//
// or run a lab as a daemon (the edgefabric up/exec/link/status/down verbs):
// Serve runs the daemon's control socket, Dial talks to it, Cleanup removes
// what a lab left behind, also after a crash. Every object a lab creates
// carries the lab's prefix "ef-<lab>-"; nothing else is ever touched.
//
// See docs/emulator.md for the address plan, the names, offloads, rate
// limits, link failures and readiness.
package emu
