package plan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// WriteJSON writes the plan as JSON: the fields json.Marshal gives, plus
// ncp when it is not nil, indented two spaces, except that each VLAN takes
// one line. The largest plans hold millions of VLAN links: encoding them
// through encoding/json, indented, took seconds and gigabytes (the whole
// document is built in memory, every link on four lines). Here the VLANs are written as they go, with each node name quoted
// once.
func (p *Plan) WriteJSON(w io.Writer, ncp *NCP) error {
	h := *p
	h.VLANs = nil
	head, err := json.MarshalIndent(struct {
		*Plan
		NCP *NCP `json:"ncp,omitempty"`
	}{&h, ncp}, "", "  ")
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	// The top-level field, indented once (nested fields are indented
	// more), stands for the VLANs.
	marker := []byte("\n  \"vlans\": null")
	i := bytes.Index(head, marker)
	if i < 0 {
		return fmt.Errorf("plan: no vlans field in the plan's JSON")
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.Write(head[:i])
	bw.WriteString("\n  \"vlans\": [")
	quoted := map[string][]byte{}
	q := func(name string) []byte {
		b, ok := quoted[name]
		if !ok {
			b, _ = json.Marshal(name) // a string always marshals
			quoted[name] = b
		}
		return b
	}
	var line []byte
	for vi, v := range p.VLANs {
		line = append(line[:0], "\n    {\"id\": "...)
		line = strconv.AppendInt(line, int64(v.ID), 10)
		line = append(line, ", \"links\": ["...)
		for li, l := range v.Links {
			if li > 0 {
				line = append(line, ", "...)
			}
			line = append(line, '[')
			line = append(line, q(l[0])...)
			line = append(line, ", "...)
			line = append(line, q(l[1])...)
			line = append(line, ']')
		}
		line = append(line, "], \"ports\": ["...)
		for pi, pp := range v.Ports {
			if pi > 0 {
				line = append(line, ", "...)
			}
			line = append(line, '[')
			line = strconv.AppendInt(line, int64(pp[0]), 10)
			line = append(line, ", "...)
			line = strconv.AppendInt(line, int64(pp[1]), 10)
			line = append(line, ']')
		}
		line = append(line, "]}"...)
		if vi < len(p.VLANs)-1 {
			line = append(line, ',')
		}
		bw.Write(line)
	}
	if len(p.VLANs) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]")
	bw.Write(head[i+len(marker):])
	bw.WriteString("\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	return nil
}
