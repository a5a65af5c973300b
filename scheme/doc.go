// Package scheme names the fabric schemes edgefabric implements and the
// registry that maps a scheme's name to its constructor.
//
// Each scheme lives in its own package under scheme/ (scheme/stp,
// scheme/dumbnet, ...) and exports Register(r *scheme.Registry). Package
// scheme/all assembles the registry of every scheme; engines look schemes up
// there by name:
//
//	r := all.Registry()
//	s, err := r.Get("dumbnet")
//	fab, err := s.New(g, scheme.Options{Seed: 1})
//	sw := fab.Element(nodeID) // the element that runs on that node
//
// A scheme never imports an engine: its elements act only through the
// element.Env they are attached with.
package scheme
