package transport

import (
	"net/http"
	"strings"
	"testing"
)

// A POST whose body is an array is a batch: each operation is answered in its place, in order,
// one that cannot run with errors and no data while the others run; batches are refused as a
// whole when they are off, empty, or longer than the limit.
func TestABatchAnswersEachOperationInItsPlace(t *testing.T) {
	on := probeServer(t, Config{BatchLimit: 3})
	off := probeServer(t, Config{})
	tests := []struct {
		name   string
		off    bool
		body   string
		status int
		want   string // the whole answer, or for a refusal a part of it
	}{
		{name: "two queries", body: `[{"query":"{ ok }"},{"query":"{ echo(value: \"x\") }"}]`,
			status: 200, want: `[{"data":{"ok":true}},{"data":{"echo":"x"}}]`},
		{name: "an invalid operation between two", body: `[{"query":"{ ok }"},{"query":"{ nope }"},{"query":"{ echo(value: \"y\") }"}]`,
			status: 200, want: `[{"data":{"ok":true}},{"errors":[{"message":"Cannot query field \"nope\" on type \"Query\".","locations":[{"line":1,"column":3}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]},{"data":{"echo":"y"}}]`},
		{name: "an operation without a query", body: `[{"query":"{ ok }"},{"variables":{}}]`,
			status: 200, want: `[{"data":{"ok":true}},{"errors":[{"message":"the request has no query","extensions":{"code":"BAD_USER_INPUT"}}]}]`},
		{name: "a subscription", body: `[{"query":"subscription { hold }"}]`,
			status: 200, want: `they cannot be batched`},
		{name: "a deferred fragment, merged", body: `[{"query":"{ split { a ... @defer(label: \"b\") { b } } }"}]`,
			status: 200, want: `[{"data":{"split":{"a":1,"b":2}}}]`},
		{name: "an empty batch", body: `[]`, status: 400, want: errEmptyBatch.Error()},
		{name: "a batch past the limit", body: `[{"query":"{ ok }"},{"query":"{ ok }"},{"query":"{ ok }"},{"query":"{ ok }"}]`,
			status: 400, want: "at most 3"},
		{name: "a value that is not an operation", body: `[{"query":"{ ok }"},5]`,
			status: 200, want: `[{"data":{"ok":true}},{"errors":[{"message":"each operation of a batch must be a JSON object whose query, operationName and documentId are strings and whose variables and extensions are objects","extensions":{"code":"BAD_USER_INPUT"}}]}]`},
		{name: "a body that is not JSON", body: `[{"query":`, status: 400, want: errBadBatch.Error()},
		{name: "batches off", off: true, body: `[{"query":"{ ok }"}]`, status: 400, want: errBatchesOff.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := on
			if tt.off {
				srv = off
			}
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			a := do(t, req)
			got := strings.TrimSpace(string(a.body))
			if a.status != tt.status || !strings.Contains(got, tt.want) || tt.status == 200 && strings.HasPrefix(tt.want, "[") && got != tt.want {
				t.Fatalf("got %d %s,\nwant %d with %s", a.status, got, tt.status, tt.want)
			}
		})
	}
}
