// Package element is the contract between edgefabric's forwarding elements and
// the engines that drive them.
//
// Every forwarding element (a switch data plane, an Axon, a SPAIN host driver,
// a DumbNet host agent, a VTEP, a controller) is a pure state machine: it never
// opens a socket, starts a goroutine, reads the clock or uses the global random
// source. An engine (the simulator in package sim, the Linux emulator in
// package emu) owns all of that and hands the element an Env. Calls into one
// element never overlap, so an element needs no locks, and the simulator stays
// deterministic: the same seed gives the same trace, bit for bit.
//
// A minimal element, a two-port repeater:
//
//	type repeater struct{ env element.Env }
//
//	func (r *repeater) Attach(env element.Env, ports []element.PortInfo) { r.env = env }
//	func (r *repeater) Receive(p element.Port, frame []byte) {
//		out := element.Port(3 - p) // 1 -> 2, 2 -> 1
//		r.env.Send(out, append([]byte(nil), frame...)) // frame is only valid during the call
//	}
//	func (r *repeater) LinkChange(p element.Port, up bool) {}
//
// The engine calls Attach once, before any other call; Receive for every frame
// that arrives on a port; LinkChange when a port's link goes down or comes up.
// Timers armed with Env.After fire as calls into the element too, never
// concurrently with Receive.
package element
