package emu

import (
	"encoding/json"
	"strings"
	"testing"
)

// status --json says what a shaped link is held to: it gave only the
// topology's rate, 1 Gb/s, for a lab whose links up --rate 50M shaped.
func TestStatusShapedRate(t *testing.T) {
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{}, ""}, // not shaped: no shaped_rate
		{Options{Rate: 50_000_000}, `"shaped_rate":50000000`},
		{Options{RateLimit: true}, `"shaped_rate":123000000`}, // the topology's own
	} {
		l := recordLab(t, 0)
		l.opts = c.opts
		data, err := json.Marshal(l.Status().Links)
		if err != nil {
			t.Fatal(err)
		}
		got := string(data)
		if c.want == "" && strings.Contains(got, "shaped_rate") || !strings.Contains(got, c.want) || !strings.Contains(got, `"rate":123000000`) {
			t.Errorf("%+v: links %s, want %s and the topology's rate 123000000", c.opts, got, c.want)
		}
	}
}
