package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzReadPlanSummary: bench reads three fields of a planner's JSON
// without decoding its VLAN lists. What it accepts is the first value of
// the input, an object with each of num_paths, num_vlans and seconds
// once, and it reads the values a full decode finds.
func FuzzReadPlanSummary(f *testing.F) {
	f.Add([]byte(`{"topology":"x","vlans":[{"id":1,"links":[["a","b"]]}],"num_paths":7,"num_vlans":3,"seconds":{"paths":0.5,"pack":0.25,"prune":0.125}}`))
	f.Add([]byte(`{"num_paths":1,"num_paths":2,"seconds":{"Paths":1}}`))
	f.Add([]byte(`{"num_vlans":1,"seconds":{},"num_paths":0} trailing`))
	f.Add([]byte(`{"num_paths":1,"num_vlans":1,"seconds":{},"NUM_PATHS":5}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r benchRun
		if err := readPlanSummary(bytes.NewReader(data), &r); err != nil {
			return
		}
		// The exact keys (a decode into a struct would also take
		// NUM_PATHS, which bench need not).
		var full struct {
			NumPaths, NumVLANs int
			Seconds            struct{ Paths, Pack, Prune float64 }
		}
		var keys map[string]json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(data))
		var first json.RawMessage
		if err := dec.Decode(&first); err != nil || json.Unmarshal(first, &keys) != nil {
			t.Fatalf("%q accepted, but its first value is no object", data)
		}
		for _, k := range []string{"num_paths", "num_vlans", "seconds"} {
			if _, ok := keys[k]; !ok {
				t.Fatalf("%q accepted without %s", data, k)
			}
		}
		if json.Unmarshal(keys["num_paths"], &full.NumPaths) != nil || json.Unmarshal(keys["num_vlans"], &full.NumVLANs) != nil ||
			json.Unmarshal(keys["seconds"], &full.Seconds) != nil {
			t.Fatalf("%q accepted, but a full decode fails", data)
		}
		if r.Paths != full.NumPaths || r.VLANs != full.NumVLANs || r.PathsSec != full.Seconds.Paths || r.PackSec != full.Seconds.Pack || r.PruneSec != full.Seconds.Prune {
			t.Fatalf("%q: read %+v, full decode %+v", data, r, full)
		}
	})
}
