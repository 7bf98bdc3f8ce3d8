package transport

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The JSON transport answers as GraphQL over HTTP specifies: POST and GET (queries only), each
// answered in the media type the client accepts; a request that cannot be executed has errors,
// each with a code, and no data, with 200 in application/json and 400 in
// application/graphql-response+json.
func TestTheJSONTransportAnswersAsGraphQLOverHTTPSays(t *testing.T) {
	srv := probeServer(t, Config{})
	get := func(params url.Values) string { return "?" + params.Encode() }
	tests := []struct {
		name    string
		method  string
		accept  string
		query   string // GET's query string
		body    string // POST's body
		status  int
		media   string
		want    string // in the body
		notData bool   // the body has no "data" entry
		header  [2]string
	}{
		{name: "a POST", method: http.MethodPost, body: `{"query":"{ ok }"}`,
			status: 200, media: mediaJSON, want: `{"data":{"ok":true}}`},
		{name: "a POST accepting graphql-response+json", method: http.MethodPost, accept: mediaGraphQLResponse, body: `{"query":"{ ok }"}`,
			status: 200, media: mediaGraphQLResponse, want: `{"data":{"ok":true}}`},
		{name: "a POST whose variables fill its arguments", method: http.MethodPost,
			body:   `{"query":"query($v: String) { echo(value: $v) }","variables":{"v":"hi"}}`,
			status: 200, media: mediaJSON, want: `{"data":{"echo":"hi"}}`},
		{name: "a GET", method: http.MethodGet, query: get(url.Values{"query": {"{ ok }"}}),
			status: 200, media: mediaJSON, want: `{"data":{"ok":true}}`},
		{name: "a GET with variables", method: http.MethodGet,
			query:  get(url.Values{"query": {"query($v: String) { echo(value: $v) }"}, "variables": {`{"v":"there"}`}}),
			status: 200, media: mediaJSON, want: `{"data":{"echo":"there"}}`},
		{name: "a GET whose variables are not an object", method: http.MethodGet,
			query:  get(url.Values{"query": {"{ ok }"}, "variables": {`[1]`}}),
			status: 400, media: mediaJSON, want: "the variables parameter must be a JSON object", notData: true},
		{name: "a mutation over GET", method: http.MethodGet, query: get(url.Values{"query": {"mutation { read(files: []) }"}}),
			status: 405, media: mediaJSON, want: "GET serves queries only", notData: true, header: [2]string{"Allow", "POST"}},
		{name: "a mutation over POST", method: http.MethodPost, body: `{"query":"mutation { read(files: []) }"}`,
			status: 200, media: mediaJSON, want: `{"data":{"read":[]}}`, header: [2]string{"Cache-Control", "no-store"}},
		{name: "a subscription", method: http.MethodPost, body: `{"query":"subscription { hold }"}`,
			status: 200, media: mediaJSON, want: "Subscriptions stream", notData: true},
		{name: "an invalid query in application/json", method: http.MethodPost, body: `{"query":"{ nope }"}`,
			status: 200, media: mediaJSON, want: `"code":"GRAPHQL_VALIDATION_FAILED"`, notData: true},
		{name: "an invalid query in graphql-response+json", method: http.MethodPost, accept: mediaGraphQLResponse, body: `{"query":"{ nope }"}`,
			status: 400, media: mediaGraphQLResponse, want: `"code":"GRAPHQL_VALIDATION_FAILED"`, notData: true},
		{name: "a body that is not JSON", method: http.MethodPost, body: `{"query":`,
			status: 400, media: mediaJSON, want: errBadBody.Error(), notData: true},
		{name: "an empty body", method: http.MethodPost, body: ` `,
			status: 400, media: mediaJSON, want: "the request body is empty", notData: true},
		{name: "a body without a query", method: http.MethodPost, body: `{"variables":{}}`,
			status: 400, media: mediaJSON, want: "the request has no query", notData: true},
		{name: "a query and a documentId", method: http.MethodPost, body: `{"query":"{ ok }","documentId":"abc"}`,
			status: 400, media: mediaJSON, want: "both a query and a documentId", notData: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, srv.URL+"/graphql"+tt.query, strings.NewReader(tt.body))
			if tt.method == http.MethodPost {
				req.Header.Set("Content-Type", "application/json")
			}
			if tt.accept != "" {
				req.Header.Set("Accept", tt.accept)
			}
			a := do(t, req)
			if a.status != tt.status || !strings.Contains(string(a.body), tt.want) {
				t.Fatalf("got %d %s, want %d with %s", a.status, a.body, tt.status, tt.want)
			}
			if ct := a.header.Get("Content-Type"); ct != tt.media+"; charset=utf-8" {
				t.Errorf("got Content-Type %q, want %s; charset=utf-8", ct, tt.media)
			}
			if tt.notData && strings.Contains(string(a.body), `"data"`) {
				t.Errorf("got %s, want no data entry in an answer to a request that was not executed", a.body)
			}
			if k := tt.header[0]; k != "" && a.header.Get(k) != tt.header[1] {
				t.Errorf("got %s: %q, want %q", k, a.header.Get(k), tt.header[1])
			}
		})
	}
}

// do sends req and reads its answer.
func do(t *testing.T, req *http.Request) answer {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, b}
}
