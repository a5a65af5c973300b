// Package scenario reads edgefabric simulation scenarios and runs them in
// package sim: a topology, a fabric scheme, link settings, per-node timing,
// workloads (ping, constant-rate UDP, bulk TCP, TCP request/response, the
// SPAIN all-to-all shuffle), timed link and node failures, captures, a
// duration and a seed.
//
// A scenario file is YAML. It is parsed into raw structs that remember the
// line of every value, then resolved in one place (node names looked up in
// the topology, units parsed, the scheme found in the registry), so that
// every error names the file, the line and the field and wraps ErrScenario:
//
//	sc, err := scenario.Load("examples/stp-fattree4.yaml", scenario.Options{})
//	res, err := sc.Run(scenario.RunOptions{PcapDir: "/tmp/caps"})
//	res.WriteText(os.Stdout) // or encode res as JSON: it carries trace_hash
//
// Setup builds the simulation without running it, for callers that want to
// look inside (the Sim, a host's stack) before and after Execute. Every host
// runs a host.Host with the topology's address plan; the scheme's element
// runs on every switch, and on a host it sits between the NICs and the stack
// (sim.PlaceHost). docs/sim.md documents the format and the results.
package scenario
