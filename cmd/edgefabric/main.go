// Command edgefabric builds, runs and measures data-center Ethernet fabrics in
// which the edge decides the path and the core follows a tag. Run
// `edgefabric --help` for the verbs.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
