package httpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/metrics"
)

// recorder is a slog handler that keeps every record, its attributes flattened to strings.
type recorder struct {
	mu      sync.Mutex
	records []map[string]string
}

func (*recorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *recorder) WithAttrs([]slog.Attr) slog.Handler     { return h }
func (h *recorder) WithGroup(string) slog.Handler          { return h }

func (h *recorder) Handle(_ context.Context, r slog.Record) error {
	rec := map[string]string{"msg": r.Message, "level": r.Level.String()}
	r.Attrs(func(a slog.Attr) bool {
		rec[a.Key] = a.Value.String()
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, rec)
	return nil
}

// find returns the records whose message is msg, waiting a little for them: the server logs
// after it has answered.
func (h *recorder) find(t *testing.T, msg string, want int) []map[string]string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		h.mu.Lock()
		var out []map[string]string
		for _, r := range h.records {
			if r["msg"] == msg {
				out = append(out, r)
			}
		}
		h.mu.Unlock()
		if len(out) >= want || time.Now().After(deadline) {
			return out
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// everything is every record's message and attributes, for looking for what must not be there.
func (h *recorder) everything() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	b, _ := json.Marshal(h.records)
	return string(b)
}

// loggedSchema is a schema whose fields call a fake upstream: calls(n) makes n requests,
// fail(code) answers an error with that code, ticks(n) sends n events of one request each.
const loggedSchema = `
type Query {
  calls(n: Int!, secret: String): Int
  fail(code: String!): Int
}
type Mutation { fail(code: String!, secret: String): Int }
type Subscription { ticks(n: Int!): Int }
`

// loggedExecutor executes loggedSchema, making its upstream requests to upstream with the
// operation's context, as the gateway's upstream client does.
func loggedExecutor(upstream string) graphql.ExecutableSchema {
	schema := gqlparser.MustLoadSchema(&ast.Source{Name: "logged.graphqls", Input: loggedSchema})
	call := func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, upstream, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	return &graphql.ExecutableSchemaMock{
		SchemaFunc:     func() *ast.Schema { return schema },
		ComplexityFunc: func(context.Context, string, string, int, map[string]any) (int, bool) { return 0, false },
		ExecFunc: func(ctx context.Context) graphql.ResponseHandler {
			opCtx := graphql.GetOperationContext(ctx)
			field := opCtx.Operation.SelectionSet[0].(*ast.Field)
			args := field.ArgumentMap(opCtx.Variables)
			switch field.Name {
			case "fail":
				err := &gqlerror.Error{Message: "no", Extensions: map[string]any{"code": args["code"]}}
				return graphql.OneShot(&graphql.Response{Data: json.RawMessage(`{"fail":null}`), Errors: gqlerror.List{err}})
			case "calls":
				n, _ := args["n"].(int64)
				for range n {
					if err := call(ctx); err != nil {
						panic(err)
					}
				}
				return graphql.OneShot(&graphql.Response{Data: fmt.Appendf(nil, `{"calls":%d}`, n)})
			default: // ticks
				n, _ := args["n"].(int64)
				sent := int64(0)
				return func(ctx context.Context) *graphql.Response {
					if sent == n {
						return nil
					}
					sent++
					if err := call(ctx); err != nil {
						panic(err)
					}
					return &graphql.Response{Data: fmt.Appendf(nil, `{"ticks":%d}`, sent)}
				}
			}
		},
	}
}

func TestEachOperationIsLoggedOnceWithItsNameTypeStatusAndUpstreamCalls(t *testing.T) {
	const secret = "hunter2-variable-value"
	upstream := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(upstream.Close)
	tests := []struct {
		name      string
		body      map[string]any
		sse       bool              // over Server-Sent Events rather than one JSON answer
		want      map[string]string // attributes of the operation line
		wantNoKey string            // an attribute the line must not have
	}{
		{
			name: "a named query and its upstream requests",
			body: map[string]any{"query": `query Family($n: Int!, $s: String) { calls(n: $n, secret: $s) }`,
				"variables": map[string]any{"n": 3, "s": secret}},
			want:      map[string]string{"name": "Family", "type": "query", "status": "ok", "upstream_calls": "3"},
			wantNoKey: "events",
		},
		{
			name: "an anonymous mutation that fails",
			body: map[string]any{"query": `mutation($s: String) { fail(code: "NOT_FOUND", secret: $s) }`,
				"variables": map[string]any{"s": secret}},
			want: map[string]string{"name": "", "type": "mutation", "status": "NOT_FOUND", "upstream_calls": "0"},
		},
		{
			name: "the operation named by operationName among several",
			body: map[string]any{"query": `query A { calls(n: 1) } query B { fail(code: "FORBIDDEN") }`, "operationName": "B"},
			want: map[string]string{"name": "B", "type": "query", "status": "FORBIDDEN", "upstream_calls": "0"},
		},
		{
			name: "a query that fails validation, which never runs",
			body: map[string]any{"query": `query Typo($s: String) { nothing(secret: $s) }`, "variables": map[string]any{"s": secret}},
			want: map[string]string{"name": "Typo", "type": "query", "status": "GRAPHQL_VALIDATION_FAILED", "upstream_calls": "0"},
		},
		{
			name: "a mutation that does not parse, named by its first words",
			body: map[string]any{"query": "# a comment\n, mutation  Broken($s: String) { fail(code: $s", "variables": map[string]any{"s": secret}},
			want: map[string]string{"name": "Broken", "type": "mutation", "status": "GRAPHQL_PARSE_FAILED", "upstream_calls": "0"},
		},
		{
			name: "a document that does not parse, named by operationName",
			body: map[string]any{"query": `fragment F on Query { calls(n: 1) } query Named {`, "operationName": "Named"},
			want: map[string]string{"name": "Named", "type": "unknown", "status": "GRAPHQL_PARSE_FAILED", "upstream_calls": "0"},
		},
		{
			name: "a shorthand query that fails validation",
			body: map[string]any{"query": `{ nothing }`},
			want: map[string]string{"name": "", "type": "query", "status": "GRAPHQL_VALIDATION_FAILED", "upstream_calls": "0"},
		},
		{
			name: "a subscription, logged when its stream ends",
			body: map[string]any{"query": `subscription Ticks($n: Int!) { ticks(n: $n) }`, "variables": map[string]any{"n": 2}},
			sse:  true,
			want: map[string]string{"name": "Ticks", "type": "subscription", "status": "ok", "upstream_calls": "2", "events": "2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			h := New(Deps{
				Log:     slog.New(rec),
				Schema:  loggedExecutor(upstream.URL),
				Metrics: metrics.New(),
				Config:  Config{Transport: testTransport()},
			})
			srv := httptest.NewServer(h)
			t.Cleanup(func() { h.CloseStreams(); srv.Close() })

			body, _ := json.Marshal(tt.body)
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			if tt.sse {
				req.Header.Set("Accept", "text/event-stream")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() { // to the end of the answer, or of the stream
			}
			resp.Body.Close()

			lines := rec.find(t, "operation", 1)
			if len(lines) != 1 {
				t.Fatalf("got %d operation lines %v, want 1", len(lines), lines)
			}
			for k, want := range tt.want {
				if got, ok := lines[0][k]; !ok || got != want {
					t.Errorf("got %s=%q (present: %v), want %q; line %v", k, got, ok, want, lines[0])
				}
			}
			if tt.wantNoKey != "" {
				if _, ok := lines[0][tt.wantNoKey]; ok {
					t.Errorf("got %s on the line %v, want none", tt.wantNoKey, lines[0])
				}
			}
			if _, err := time.ParseDuration(lines[0]["duration"]); err != nil {
				t.Errorf("got duration %q, want a duration", lines[0]["duration"])
			}
			// The request line stays beside it.
			if got := rec.find(t, "request", 1); len(got) != 1 || got[0]["path"] != "/graphql" || got[0]["level"] != "INFO" {
				t.Errorf("got request lines %v, want one at INFO for /graphql", got)
			}
			all := rec.everything()
			for _, leak := range []string{secret, "secret:", "ticks(", "calls(", "nothing("} {
				if strings.Contains(all, leak) {
					t.Errorf("got %q in the log, want neither variables nor the query: %s", leak, all)
				}
			}
		})
	}
}
