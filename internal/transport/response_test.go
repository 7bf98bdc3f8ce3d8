package transport

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// writeResponse writes every response byte for byte as encoding/json does, whether it copies
// the data or leaves it to the encoder.
func TestWriteResponseWritesWhatTheEncoderWrites(t *testing.T) {
	t.Parallel()
	yes := true
	for _, tc := range []struct {
		name   string
		resp   *graphql.Response
		copied bool // the data is written as it is
	}{
		{"data only", &graphql.Response{Data: json.RawMessage(`{"a":"b c","n":[1,2.5,null,true],"e":"q\"\\ x"}`)}, true},
		{"errors, data and extensions", &graphql.Response{
			Errors: gqlerror.List{{Message: "no <such> & thing", Path: ast.Path{ast.PathName("a")}, Extensions: map[string]any{"code": "NOT_FOUND"}}},
			Data:   json.RawMessage(`{"a":null}`), Extensions: map[string]any{"cost": 3}}, true},
		{"label, path and hasNext", &graphql.Response{Data: json.RawMessage(`{}`), Label: "l", Path: ast.Path{ast.PathIndex(0)}, HasNext: &yes}, true},
		{"data the encoder escapes", &graphql.Response{Data: json.RawMessage(`{"a":"<b>&c"}`)}, false},
		{"data with U+2028", &graphql.Response{Data: json.RawMessage("{\"a\":\"x\u2028y\"}")}, false},
		{"data with whitespace between tokens", &graphql.Response{Data: json.RawMessage("{ \"a\" :\n[1, 2]}")}, false},
		{"whitespace after a string that ends in escaped backslashes", &graphql.Response{Data: json.RawMessage(`{"a":"x\\\\", "b":1}`)}, false},
		{"an escaped quote, then whitespace in the same string", &graphql.Response{Data: json.RawMessage(`{"a":"x\" y","b":[1,2]}`)}, true},
		{"whitespace after the last string", &graphql.Response{Data: json.RawMessage(`{"a":"x","b":[1, 2]}`)}, false},
		{"other non-ASCII", &graphql.Response{Data: json.RawMessage(`{"a":"Zoë — 信託"}`)}, true},
		{"no data", &graphql.Response{Errors: gqlerror.List{{Message: "bad"}}}, false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, want := httptest.NewRecorder(), httptest.NewRecorder()
			writeResponse(got, tc.resp)
			writeJSON(want, tc.resp)
			if got.Body.String() != want.Body.String() {
				t.Errorf("got  %q\nwant %q", got.Body.String(), want.Body.String())
			}
			if copied := tc.resp != nil && len(tc.resp.Data) > 0 && unchangedByEncoder(tc.resp.Data); copied != tc.copied {
				t.Errorf("data copied as it is: %v, want %v", copied, tc.copied)
			}
			if g, w := got.Header().Get("Content-Type"), want.Header().Get("Content-Type"); g != w {
				t.Errorf("Content-Type %q, want %q", g, w)
			}
		})
	}
}
