package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// WriteJSON must say exactly what encoding/json says (decoded, the two
// are equal), with and without NCP, on names that need escaping, and put
// each VLAN on a line of its own.
func TestWriteJSONMatchesEncodingJSON(t *testing.T) {
	p := compute(t, "fattree:4", Options{Trials: 1, Seed: 1})
	// A node name JSON must escape.
	for i := range p.VLANs[1].Links {
		if p.VLANs[1].Links[i][0] == p.VLANs[1].Links[0][0] {
			p.VLANs[1].Links[i][0] = "s\"1\\<é>\n"
		}
	}
	ncp := &NCP{FailProb: 0.04, Trials: 3, STP: 0.1, SPAIN: 0.01}
	for _, n := range []*NCP{nil, ncp} {
		var buf bytes.Buffer
		if err := p.WriteJSON(&buf, n); err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(struct {
			*Plan
			NCP *NCP `json:"ncp,omitempty"`
		}{p, n})
		if err != nil {
			t.Fatal(err)
		}
		var got, exp any
		if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, buf.String())
		}
		if err := json.Unmarshal(want, &exp); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, exp) {
			t.Fatalf("ncp %v: WriteJSON differs from encoding/json:\n%s\nwant\n%s", n, buf.String(), want)
		}
		if lines := strings.Count(buf.String(), `{"id": `); lines != len(p.VLANs) {
			t.Errorf("%d VLAN lines, want %d", lines, len(p.VLANs))
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// A write error is returned, not dropped.
func TestWriteJSONReportsWriteErrors(t *testing.T) {
	p := compute(t, "fattree:4", Options{Trials: 1, Seed: 1})
	if err := p.WriteJSON(failWriter{}, nil); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("got %v, want the write error", err)
	}
}
