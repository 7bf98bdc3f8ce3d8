package transport

import (
	"encoding/json"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
)

// writeResponse writes a GraphQL response exactly as writeJSON would, but copies its data as
// it is instead of re-encoding it: encoding/json compacts a json.RawMessage byte by byte
// through its scanner (and copies it into its own buffer), which for the family graph's 200 KB
// answer costs more than any resolver. gqlgen writes data compact already; when it holds
// what the encoder would change (whitespace between tokens, or characters it escapes for HTML),
// writeJSON writes it instead.
func writeResponse(w http.ResponseWriter, resp *graphql.Response) {
	if resp == nil || len(resp.Data) == 0 || !unchangedByEncoder(resp.Data) {
		writeJSON(w, resp)
		return
	}
	head := []byte{'{'}
	if len(resp.Errors) > 0 {
		head = appendMember(head, "errors", resp.Errors)
		head = append(head, ',')
	}
	head = append(head, `"data":`...)
	tail := []byte{}
	if resp.Label != "" {
		tail = appendMember(append(tail, ','), "label", resp.Label)
	}
	if len(resp.Path) > 0 {
		tail = appendMember(append(tail, ','), "path", resp.Path)
	}
	if resp.HasNext != nil {
		tail = appendMember(append(tail, ','), "hasNext", resp.HasNext)
	}
	if len(resp.Extensions) > 0 {
		tail = appendMember(append(tail, ','), "extensions", resp.Extensions)
	}
	tail = append(tail, "}\n"...)
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	// Errors are the client's having gone away; there is nothing to tell it.
	if _, err := w.Write(head); err == nil {
		if _, err := w.Write(resp.Data); err == nil {
			_, _ = w.Write(tail)
		}
	}
}

// appendMember appends "name": and v as encoding/json encodes it.
func appendMember(b []byte, name string, v any) []byte {
	value, err := json.Marshal(v)
	if err != nil {
		value = []byte("null")
	}
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, `":`...)
	return append(b, value...)
}

// unchangedByEncoder reports whether encoding/json would write data, a valid JSON value, as it
// is: no whitespace between tokens, and none of <, >, & or U+2028 and U+2029, which it escapes.
func unchangedByEncoder(data []byte) bool {
	inString, escaped := false, false
	for i, c := range data {
		switch {
		case c == '<' || c == '>' || c == '&':
			return false
		case c == 0xE2 && i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xA8 || data[i+2] == 0xA9):
			return false
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return false
		}
	}
	return true
}
