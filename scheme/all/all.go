// Package all assembles the registry of every fabric scheme edgefabric ships.
package all

import (
	"fmt"

	"github.com/edgefabric/edgefabric/scheme"
	"github.com/edgefabric/edgefabric/scheme/dumbnet"
	"github.com/edgefabric/edgefabric/scheme/stp"
)

// registrars lists every scheme's Register function, explicitly: no init()
// magic. Add a scheme here once.
var registrars = []func(*scheme.Registry) error{
	dumbnet.Register,
	stp.Register,
}

// Registry returns a registry holding every scheme.
func Registry() *scheme.Registry {
	r := &scheme.Registry{}
	for _, reg := range registrars {
		if err := reg(r); err != nil {
			panic(fmt.Sprintf("scheme/all: %v", err)) // a programming error, caught by the package test
		}
	}
	return r
}
