// Package flowsim is a flow-level network simulator with max-min fair
// bandwidth sharing, the model of SPAIN §8's throughput experiment: flows
// with a size follow fixed paths over directed links with a capacity; at
// every instant each flow gets its max-min fair rate (progressive
// filling); the simulation advances from one flow completion to the next
// and reports when the last flow finishes.
//
//	net := flowsim.Network{Cap: caps}               // per directed link
//	res, err := flowsim.Run(net, []flowsim.Flow{{Path: []int32{0, 5}, Size: 1}})
//	fmt.Println(res.Makespan)
//
// Flows with identical paths and sizes always have identical rates, so
// they are simulated as one class with a multiplicity; a run costs one
// progressive filling per distinct completion time.
//
// A property the tests check and the SPAIN reproduction relies on: when
// every flow has the same size S and every link the same capacity C, and
// all flows start at once, the makespan is exactly S·n_max/C, where n_max
// is the largest number of flows crossing one directed link. (The flows on
// that link share it equally, so none finishes before S·n_max/C; and under
// max-min fairness every flow always gets at least C/n(t) on its most
// loaded link, where n(t) ≤ n_max, so all finish by then.) MaxLoad
// computes that bound directly.
package flowsim
