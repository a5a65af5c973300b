package topo

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// FuzzClabPortNames: the label edgefabric.port-names, a JSON object from
// port number to name that WriteClab writes and decodeClab reads (no
// other target reaches it: the fuzzer does not invent the label). Any
// input gives distinct ports in 1..MaxPorts with distinct printable
// names, or one-line ErrBadValue; what is read, written as WriteClab
// writes it, reads back the same.
func FuzzClabPortNames(f *testing.F) {
	for _, s := range []string{`{"1":"ethernet-1/1","49":"Ethernet49"}`, `{}`, `{"1":"a","1":"b"}`, `{"01":"a"}`,
		`{"1":"a","2":"a"}`, `{"65536":"x"}`, `{"1":"\u0007"}`, `{"1":5}`, `[]`, `{"1":"a"} x`, `{"1":"a"`, `{"1":"\ud83d\ude00"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, err := parseClabPortNames(s, "n")
		if err != nil {
			if !errors.Is(err, ErrBadValue) || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("%q: bad error %q", s, err)
			}
			return
		}
		ports := map[Port]bool{}
		byName := map[string]bool{}
		var b strings.Builder
		b.WriteByte('{')
		for i, pn := range names {
			if pn.port < 1 || ports[pn.port] || pn.name == "" || !printable(pn.name) || byName[pn.name] {
				t.Fatalf("%q: port %d name %q", s, pn.port, pn.name)
			}
			ports[pn.port], byName[pn.name] = true, true
			if i > 0 {
				b.WriteByte(',')
			}
			q, _ := json.Marshal(pn.name)
			b.WriteString(strconv.Quote(strconv.Itoa(int(pn.port))) + ":" + string(q))
		}
		b.WriteByte('}')
		back, err := parseClabPortNames(b.String(), "n")
		if err != nil || len(back) != len(names) {
			t.Fatalf("%q written as %q: %v", s, b.String(), err)
		}
		for i := range back {
			if back[i] != names[i] {
				t.Fatalf("%q written as %q: %v, read back %v", s, b.String(), names[i], back[i])
			}
		}
	})
}
