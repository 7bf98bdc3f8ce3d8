package advisorspec

import (
	"encoding/json"
	"strconv"
)

// The bulk files are checked a million rows at a time, so their rows are not decoded through
// reflection into maps of raw values (as request bodies are, in error.go): a line that
// json.Valid has accepted is walked in place by the small scanner below, which only needs to
// find where each value ends, and only values are copied out. Everything here assumes valid
// JSON; callers check that first.

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the index just past the string that starts at b[i] (a quote), and whether
// it holds an escape.
func scanString(b []byte, i int) (int, bool) {
	escaped := false
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i + 1, escaped
		}
	}
	return i, escaped
}

// scanValue returns the index just past the value that starts at b[i].
func scanValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		end, _ := scanString(b, i)
		return end
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i, _ = scanString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default:
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// eachMember calls fn with each key (unescaped) and raw value of the object b; it reports false
// when b is not an object.
func eachMember(b []byte, fn func(key string, val []byte)) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] == '"' {
		end, escaped := scanString(b, i)
		key := unquote(b[i:end], escaped)
		i = skipSpace(b, end)
		i = skipSpace(b, i+1) // the colon
		vend := scanValue(b, i)
		fn(key, b[i:vend])
		i = skipSpace(b, vend)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return true
}

// eachElement calls fn with each raw element of the array b; it reports false when b is not an
// array.
func eachElement(b []byte, fn func(i int, val []byte)) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return false
	}
	i = skipSpace(b, i+1)
	for n := 0; i < len(b) && b[i] != ']'; n++ {
		end := scanValue(b, i)
		fn(n, b[i:end])
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return true
}

func unquote(raw []byte, escaped bool) string {
	if !escaped {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s) // raw is a valid JSON string
	return s
}

// scannedString returns the string raw holds; ok is false when raw is another JSON type.
func scannedString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	_, escaped := scanString(raw, 0)
	return unquote(raw, escaped), true
}

// scannedNumber returns the number raw holds; ok is false when raw is another JSON type (a
// string holding digits included).
func scannedNumber(raw []byte) (float64, bool) {
	if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return f, err == nil
}

func scannedNull(raw []byte) bool { return string(raw) == "null" }

// jsonType names the JSON type of raw for messages about a value of the wrong type.
func jsonType(raw []byte) string {
	switch {
	case len(raw) == 0:
		return "nothing"
	case raw[0] == '"':
		return "a string"
	case raw[0] == '{':
		return "an object"
	case raw[0] == '[':
		return "an array"
	case raw[0] == 't' || raw[0] == 'f':
		return "a boolean"
	case raw[0] == 'n':
		return "null"
	default:
		return "a number"
	}
}
