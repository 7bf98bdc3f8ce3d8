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
		{"a space beside a comma inside a string", &graphql.Response{Data: json.RawMessage(`{"a":"Lee, Ann","b":"[ x ]: y {"}`)}, true},
		{"spaces inside strings only, far from any mark", &graphql.Response{Data: json.RawMessage(`{"a":"Person 0","b":["x  y"]}`)}, true},
		{"a space before a colon", &graphql.Response{Data: json.RawMessage(`{"a" :1}`)}, false},
		{"a space after the data", &graphql.Response{Data: json.RawMessage(`{"a":"b c"} `)}, false},
		{"a space before the data", &graphql.Response{Data: json.RawMessage(` {"a":"b c"}`)}, false},
		{"a tab inside an escape-free string's neighbourhood", &graphql.Response{Data: json.RawMessage("{\"a\":\"b\",\t\"c\":1}")}, false},
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

// unchangedByEncoder says yes exactly when encoding/json writes the data as it is.
func FuzzUnchangedByEncoderAgreesWithTheEncoder(f *testing.F) {
	for _, seed := range []string{`{"a":"b c","n":[1,2.5,null,true]}`, `{"a" :1}`, `{"a":"x, y"}`, "[1,\n2]", `"a b"`, ` 1`, `{"a":"<"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		encoded, err := json.Marshal(json.RawMessage(data))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := unchangedByEncoder(data), string(encoded) == string(data); got != want {
			t.Errorf("unchangedByEncoder(%q) = %v, want %v", data, got, want)
		}
	})
}
