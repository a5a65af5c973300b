package emu

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgefabric/edgefabric/scheme/all"
)

// TestShippedSchemes runs every shipped scheme's elements, unchanged from
// the simulator, on a 3-switch ring with unmodified hosts, and pings
// across it.
func TestShippedSchemes(t *testing.T) {
	needRoot(t)
	needTool(t, "ping")
	reg := all.Registry()
	for _, name := range reg.Names() {
		t.Run(name, func(t *testing.T) {
			g := ring3(t)
			l := upLab(t, g, name, Options{Registry: reg, ReadyTimeout: 2 * time.Minute})
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			var out []byte
			var err error
			for ctx.Err() == nil {
				out, err = l.Exec(ctx, "h1", "ping", "-c", "1", "-W", "1", "10.0.0.2")
				if err == nil && strings.Contains(string(out), " 0% packet loss") {
					return
				}
			}
			t.Fatalf("%s: h1 never reached h2: %v\n%s\n%+v", name, err, out, l.Status())
		})
	}
}
