// Package experiment reproduces the seeds' evaluations and compares
// schemes. Each reproduction is a named entry of a small explicit registry
// (All, Get) that returns a Report: every row with our figure beside the
// paper's, a note on each difference, and renderers for aligned text,
// Markdown, JSON and a hand-written SVG bar chart.
//
//	rep, err := experiment.SpainTable3(experiment.Options{Quick: true, Seed: 1})
//	fmt.Print(rep.Text())
//	err = rep.Write("docs/repro")   // spain-table3.{json,md,svg}
//
// `edgefabric repro NAME` is the command-line face; later seeds add their
// reproductions to the registry in repro.go.
package experiment
