package gqlrun

import (
	"encoding/json"
	"testing"
	"time"
)

type named string

type object struct{ Name string }

func TestSizeEstimatesTheJSON(t *testing.T) {
	t.Parallel()
	s := "hello"
	for _, tc := range []struct {
		name  string
		value any
		want  int64
	}{
		{"a string", "hello", 7},
		{"a string pointer", &s, 7},
		{"a nil pointer", (*string)(nil), 4},
		{"an enum", named("FICTION"), 9},
		{"an enum pointer", func() *named { n := named("POETRY"); return &n }(), 8},
		{"a list of strings", []string{"a", "bc"}, 2 + 4 + 5},
		{"a list of enums", []named{"A", "BC"}, 2 + 2 + 3 + 4},
		{"a list of objects counts its punctuation", []*object{{"a"}, {"b"}}, 4},
		{"raw JSON counts itself", json.RawMessage(`{"a":1}`), 7},

		{"an object counts its braces", &object{"a"}, 2},
		{"a time", time.Now(), 36},
	} {
		if got := Size(tc.value); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}
}
