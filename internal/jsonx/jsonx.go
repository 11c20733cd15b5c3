// Package jsonx encodes JSON as the MCP SDK and the team API send it:
// encoding/json without HTML escaping.
package jsonx

import (
	"bytes"
	"encoding/json"
)

// Marshal is json.Marshal without HTML escaping: <, > and & stay as they
// are (escaped, each is six bytes, and a note of markup would outgrow the
// bodies a server takes), and no newline follows.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
