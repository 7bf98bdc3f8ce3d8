package advisorspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Kind classifies a rejected request the way the service's status codes tell failures apart.
type Kind int

const (
	// Malformed: the body is not a JSON object.
	Malformed Kind = iota + 1
	// Invalid: a field is missing, of the wrong shape, or breaks a rule of its own.
	Invalid
	// Reference: a relationship field names no contact in scope, or the contact itself.
	Reference
	// Immutable: an update tries to change type or external_id.
	Immutable
	// Empty: an update carries no mutable field.
	Empty
	// Conflict: a v1 update carries the external_id of another contact in scope.
	Conflict
)

// Error is a rejected request: the field at fault (empty when the whole body is at fault) and
// the message the service answers with.
type Error struct {
	Kind    Kind
	Field   string
	Message string
}

func (e *Error) Error() string { return e.Message }

func invalid(field, format string, args ...any) *Error {
	return &Error{Kind: Invalid, Field: field, Message: fmt.Sprintf(format, args...)}
}

// object is a decoded JSON object whose values are kept raw so that each can be checked for its
// own type and reported by name.
type object map[string]json.RawMessage

// decodeObject reads a request body. An empty body is an empty object, so that it gets the
// message for what is missing rather than one about syntax.
func decodeObject(body []byte) (object, *Error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return object{}, nil
	}
	var obj object
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, &Error{Kind: Malformed, Message: "Request body must be a JSON object"}
	}
	if dec.More() {
		return nil, &Error{Kind: Malformed, Message: "Request body must be a single JSON object"}
	}
	return obj, nil
}

// sortedKeys gives the object's keys in a fixed order so that the first error found does not
// depend on map iteration.
func (o object) sortedKeys() []string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (o object) has(key string) bool {
	_, ok := o[key]
	return ok
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func asString(raw json.RawMessage) (string, bool) {
	var s string
	if isNull(raw) || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func asBool(raw json.RawMessage) bool {
	var b bool
	return !isNull(raw) && json.Unmarshal(raw, &b) == nil
}

// isNumberLiteral tells a JSON number from a string holding one, which json.Number would also
// accept.
func isNumberLiteral(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && (t[0] == '-' || t[0] >= '0' && t[0] <= '9')
}

func asNumber(raw json.RawMessage) (float64, bool) {
	var n json.Number
	if !isNumberLiteral(raw) || json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

// asInteger accepts only integer literals: 3, not 3.0 or "3".
func asInteger(raw json.RawMessage) (int64, bool) {
	var n json.Number
	if !isNumberLiteral(raw) || json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	return i, err == nil
}

func asObject(raw json.RawMessage) (object, bool) {
	var o object
	if isNull(raw) || json.Unmarshal(raw, &o) != nil {
		return nil, false
	}
	return o, true
}

func asArray(raw json.RawMessage) ([]json.RawMessage, bool) {
	var a []json.RawMessage
	if isNull(raw) || json.Unmarshal(raw, &a) != nil {
		return nil, false
	}
	if a == nil {
		a = []json.RawMessage{}
	}
	return a, true
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// text checks a string field: a string, not blank or whitespace-only, at most max characters.
func text(field string, raw json.RawMessage, max int) (string, *Error) {
	s, ok := asString(raw)
	if !ok {
		return "", invalid(field, "%s must be a string", field)
	}
	if isBlank(s) {
		return "", invalid(field, "%s must not be blank", field)
	}
	if max > 0 && utf8.RuneCountInString(s) > max {
		return "", invalid(field, "%s must be at most %d characters", field, max)
	}
	return s, nil
}

// IsDate reports whether s is a real calendar date written YYYY-MM-DD.
func IsDate(s string) bool {
	if len(s) != len(time.DateOnly) {
		return false
	}
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}
