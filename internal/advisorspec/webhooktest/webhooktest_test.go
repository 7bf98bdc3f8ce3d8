package webhooktest_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/advisorspec/webhooktest"
)

// Every event type of the specification has one body, named for it, that the specification
// accepts.
func TestBodiesCoverEveryEventTypeAndAreValid(t *testing.T) {
	bodies := webhooktest.Bodies[string]()
	var want []string
	for _, typ := range advisorspec.EventTypes {
		want = append(want, string(typ))
	}
	var got []string
	for typ, body := range bodies {
		got = append(got, typ)
		w, err := advisorspec.ParseWebhook([]byte(body))
		if err != nil {
			t.Errorf("testdata/%s.json: got %v, want a valid body", typ, err)
			continue
		}
		if string(w.EventType) != typ {
			t.Errorf("testdata/%s.json: got EventType %q, want %q", typ, w.EventType, typ)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("got bodies for %v, want %v", got, want)
	}
}

func TestWithSetsAndRemovesFields(t *testing.T) {
	base := `{"A": {"B": [1, 2]}, "C": "c"}`
	for _, tc := range []struct {
		path  string
		value any
		want  string
	}{
		{"C", "d", `{"A":{"B":[1,2]},"C":"d"}`},
		{"C", webhooktest.Absent, `{"A":{"B":[1,2]}}`},
		{"A.B.1", 3, `{"A":{"B":[1,3]},"C":"c"}`},
		{"A.New", json.RawMessage(`{"x":null}`), `{"A":{"B":[1,2],"New":{"x":null}},"C":"c"}`},
	} {
		if got := webhooktest.With(base, tc.path, tc.value); got != tc.want {
			t.Errorf("With(%s, %v) = %s, want %s", tc.path, tc.value, got, tc.want)
		}
	}
}
