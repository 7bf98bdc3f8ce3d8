package transport

import (
	"bytes"
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
// is: none of <, >, & or U+2028 and U+2029, which it escapes, and no whitespace between
// tokens. It runs over every response, so it looks for bytes with bytes.IndexByte, which is
// many times faster than a loop over them. A valid JSON string holds no raw tab or line
// break, so any of them is whitespace between tokens. A space can be in a string (a name),
// and usually is: whitespace between tokens always has a punctuation mark ({}[]:,) or an end
// of data beside it (two values are never next to each other in valid JSON), so a space with
// neither beside it is in a string; only when one is in doubt is data walked string by string.
func unchangedByEncoder(data []byte) bool {
	for _, c := range []byte("<>&\t\n\r") {
		if bytes.IndexByte(data, c) >= 0 {
			return false
		}
	}
	// U+2028 and U+2029 are E2 80 A8 and E2 80 A9 in UTF-8.
	if bytes.IndexByte(data, 0xE2) >= 0 && (bytes.Contains(data, []byte("\u2028")) || bytes.Contains(data, []byte("\u2029"))) {
		return false
	}
	for i := 0; ; {
		s := bytes.IndexByte(data[i:], ' ')
		if s < 0 {
			return true
		}
		start := i + s
		end := start + 1
		for end < len(data) && data[end] == ' ' {
			end++
		}
		if start == 0 || end == len(data) || isPunctuation(data[start-1]) || isPunctuation(data[end]) {
			return noSpaceBetweenTokens(data)
		}
		i = end
	}
}

func isPunctuation(c byte) bool {
	switch c {
	case '{', '}', '[', ']', ':', ',':
		return true
	}
	return false
}

// noSpaceBetweenTokens reports whether every space in data, a valid JSON value without tabs
// or line breaks, is inside a string, by jumping from string to string.
func noSpaceBetweenTokens(data []byte) bool {
	for i := 0; i < len(data); {
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			return bytes.IndexByte(data[i:], ' ') < 0
		}
		if bytes.IndexByte(data[i:i+q], ' ') >= 0 {
			return false
		}
		end, ok := stringEnd(data, i+q+1)
		if !ok {
			return false
		}
		i = end + 1
	}
	return true
}

// stringEnd is the index of the quote that ends the JSON string whose contents start at i.
func stringEnd(data []byte, i int) (int, bool) {
	for {
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			return 0, false
		}
		end := i + q
		backslashes := 0
		for end-1-backslashes >= 0 && data[end-1-backslashes] == '\\' {
			backslashes++
		}
		if backslashes%2 == 0 {
			return end, true
		}
		i = end + 1
	}
}
