package transport

import (
	"context"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

const splitQuery = `{"query":"{ split { a ... @defer(label: \"b\") { b } } }"}`

// A client that accepts multipart/mixed gets a deferred answer in parts as they come, in the
// incremental delivery format Apollo Client reads; any other client gets one answer with the
// parts merged in, each field in the place the operation selected it.
func TestADeferredAnswerComesInPartsOrMerged(t *testing.T) {
	srv := probeServer(t, Config{})
	tests := []struct {
		accept string
		// parts are the multipart answer's parts; nil expects one JSON answer, whole.
		parts []string
		whole string
	}{
		{accept: "multipart/mixed; deferSpec=20220824, application/json", parts: []string{
			`{"data":{"split":{"a":1,"b":null}},"hasNext":true}`,
			`{"incremental":[{"data":{"b":2},"path":["split"],"label":"b"}],"hasNext":false}`,
		}},
		{accept: mediaJSON, whole: `{"data":{"split":{"a":1,"b":2}}}`},
		{accept: mediaGraphQLResponse, whole: `{"data":{"split":{"a":1,"b":2}}}`},
		{accept: "", whole: `{"data":{"split":{"a":1,"b":2}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.accept, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", strings.NewReader(splitQuery))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", tt.accept)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			mt, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
			if tt.parts == nil {
				body, _ := io.ReadAll(resp.Body)
				if mt == "multipart/mixed" || strings.TrimSpace(string(body)) != tt.whole {
					t.Fatalf("got %s %s, want %s", mt, body, tt.whole)
				}
				return
			}
			if mt != "multipart/mixed" || params["boundary"] != multipartBoundary || params["deferspec"] != "20220824" {
				t.Fatalf("got Content-Type %q, want multipart/mixed with boundary %q and deferSpec=20220824", resp.Header.Get("Content-Type"), multipartBoundary)
			}
			mr := multipart.NewReader(resp.Body, multipartBoundary)
			for i, want := range tt.parts {
				part, err := mr.NextPart()
				if err != nil {
					t.Fatalf("part %d: %v", i, err)
				}
				got, _ := io.ReadAll(part)
				if string(got) != want || part.Header.Get("Content-Type") != "application/json; charset=utf-8" {
					t.Fatalf("part %d: got %s (%s), want %s", i, got, part.Header.Get("Content-Type"), want)
				}
			}
			if _, err := mr.NextPart(); err != io.EOF {
				t.Fatalf("after the last part: got %v, want the closing boundary", err)
			}
		})
	}
}

// Merging puts each deferred part at its path, through objects and lists, in the place of the
// null that held it, and keeps the errors of every part.
func TestMergingPutsEachPartInItsPlace(t *testing.T) {
	part := func(data, path string, hasNext bool, errs ...string) *graphql.Response {
		var p ast.Path
		if path != "" {
			if err := json.Unmarshal([]byte(path), &p); err != nil {
				t.Fatal(err)
			}
		}
		r := &graphql.Response{Data: json.RawMessage(data), Path: p, HasNext: &hasNext}
		for _, e := range errs {
			r.Errors = append(r.Errors, &gqlerror.Error{Message: e})
		}
		return r
	}
	tests := []struct {
		name   string
		parts  []*graphql.Response
		data   string
		errors int
	}{
		{"a field of the root", []*graphql.Response{
			part(`{"a":1,"b":null,"c":3}`, "", true), part(`{"b":2}`, `[]`, false),
		}, `{"a":1,"b":2,"c":3}`, 0},
		{"through a list", []*graphql.Response{
			part(`{"l":[{"x":1,"y":null},{"x":2,"y":null}]}`, "", true),
			part(`{"y":"second"}`, `["l",1]`, true),
			part(`{"y":"first"}`, `["l",0]`, false),
		}, `{"l":[{"x":1,"y":"first"},{"x":2,"y":"second"}]}`, 0},
		{"a path that is not there, and errors", []*graphql.Response{
			part(`{"a":1}`, "", true, "first"), part(`{"b":2}`, `["missing"]`, false, "second"),
		}, `{"a":1}`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rest := tt.parts[1:]
			next := func(context.Context) *graphql.Response {
				if len(rest) == 0 {
					return nil
				}
				r := rest[0]
				rest = rest[1:]
				return r
			}
			merged := mergeDeferred(context.Background(), tt.parts[0], next)
			if string(merged.Data) != tt.data || len(merged.Errors) != tt.errors {
				t.Fatalf("got %s with %d errors, want %s with %d", merged.Data, len(merged.Errors), tt.data, tt.errors)
			}
		})
	}
}
