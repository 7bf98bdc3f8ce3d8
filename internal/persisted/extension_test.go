package persisted_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/callerauth"
	"github.com/advisorhq/gateway/internal/eventlog/eventlogtest"
	"github.com/advisorhq/gateway/internal/persisted"
	"github.com/advisorhq/gateway/internal/ratelimit"
)

// The tests run the extension in gqlgen's own handler, over GET and POST, against a schema
// whose fields answer, fail as they run, or are refused by an extension after this one, as the
// operation limits and the rate limits are in the gateway.
const testSchema = `
type Query { version: String fail: String refused: String }
type Mutation { bump: Int }
`

// refuseField refuses, once it has validated, every operation selecting "refused".
type refuseField struct{}

func (refuseField) ExtensionName() string                   { return "RefuseField" }
func (refuseField) Validate(graphql.ExecutableSchema) error { return nil }
func (refuseField) MutateOperationContext(_ context.Context, op *graphql.OperationContext) *gqlerror.Error {
	for _, sel := range op.Operation.SelectionSet {
		if f, ok := sel.(*ast.Field); ok && f.Name == "refused" {
			return gqlerror.Errorf("refused by a later extension")
		}
	}
	return nil
}

// testServer serves the schema with ext. A request's caller is its X-Firm and X-Advisor
// headers, when it has them, and its address otherwise. mutations counts the mutations run.
type testServer struct {
	url       string
	mu        sync.Mutex
	mutations int
}

func newTestServer(t *testing.T, ext *persisted.Extension) *testServer {
	t.Helper()
	ts := &testServer{}
	schema := gqlparser.MustLoadSchema(&ast.Source{Name: "test.graphqls", Input: testSchema})
	srv := handler.New(&graphql.ExecutableSchemaMock{
		SchemaFunc: func() *ast.Schema { return schema },
		ExecFunc: func(ctx context.Context) graphql.ResponseHandler {
			op := graphql.GetOperationContext(ctx).Operation
			if op.Operation == ast.Mutation {
				ts.mu.Lock()
				ts.mutations++
				ts.mu.Unlock()
				return graphql.OneShot(&graphql.Response{Data: json.RawMessage(`{"bump":1}`)})
			}
			f := op.SelectionSet[0].(*ast.Field)
			if f.Name == "fail" {
				return graphql.OneShot(&graphql.Response{Data: json.RawMessage(`{"fail":null}`),
					Errors: gqlerror.List{gqlerror.Errorf("Forbidden: not this caller's")}})
			}
			return graphql.OneShot(&graphql.Response{Data: json.RawMessage(`{"version":"1"}`)})
		},
	})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.Use(ext)
	srv.Use(refuseField{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := ratelimit.WithClient(r.Context(), r.Header.Get("X-Address"))
		if firm := r.Header.Get("X-Firm"); firm != "" {
			ctx = callerauth.WithCaller(ctx, callerauth.Caller{FirmID: firm, AdvisorID: r.Header.Get("X-Advisor")})
		}
		srv.ServeHTTP(w, r.WithContext(ctx))
	})
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	ts.url = s.URL
	return ts
}

type response struct {
	status int
	Data   json.RawMessage
	Errors []struct {
		Message    string
		Extensions map[string]any
	}
	Extensions map[string]any
}

func hashOf(doc string) string {
	sum := sha256.Sum256([]byte(doc))
	return hex.EncodeToString(sum[:])
}

func apq(doc string) map[string]any {
	return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hashOf(doc)}}
}

// caller is who sends a request: a firm's advisor, or an address.
type caller struct{ firm, advisor, address string }

func (ts *testServer) send(t *testing.T, method string, who caller, doc string) response {
	t.Helper()
	var req *http.Request
	if method == http.MethodGet {
		ext, _ := json.Marshal(apq(doc))
		q := url.Values{"query": {doc}, "extensions": {string(ext)}}
		req, _ = http.NewRequest(http.MethodGet, ts.url+"?"+q.Encode(), nil)
	} else {
		body, _ := json.Marshal(map[string]any{"query": doc, "extensions": apq(doc)})
		req, _ = http.NewRequest(http.MethodPost, ts.url, strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Firm", who.firm)
	req.Header.Set("X-Advisor", who.advisor)
	req.Header.Set("X-Address", who.address)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r response
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("%s %q: %v", method, doc, err)
	}
	r.status = resp.StatusCode
	return r
}

// outcomes counts what Config.Observe is told.
type outcomes struct {
	mu sync.Mutex
	n  map[string]int
}

func (o *outcomes) observe(outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == nil {
		o.n = make(map[string]int)
	}
	o.n[outcome]++
}

func (o *outcomes) count(outcome string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n[outcome]
}

var ada = caller{firm: "f1", advisor: "ada"}

// A document sent with its hash is registered only once it has run and answered without
// errors: not one that fails to validate, one a later extension refuses (as the operation and
// rate limits do), one that fails as it runs (as authorization does), nor a mutation sent by
// GET, which does not run it.
func TestADocumentIsRegisteredOnlyOnceItHasRunWithoutErrors(t *testing.T) {
	cases := []struct {
		name       string
		method     string
		doc        string
		registered bool
	}{
		{"a query that runs", http.MethodPost, "query Runs { version }", true},
		{"a query that runs, by GET", http.MethodGet, "query RunsByGet { version }", true},
		{"a mutation that runs", http.MethodPost, "mutation Bump { bump }", true},
		{"a mutation sent by GET", http.MethodGet, "mutation BumpByGet { bump }", false},
		{"a document that does not validate", http.MethodPost, "query Invalid { nope }", false},
		{"a query refused after validating", http.MethodPost, "query Refused { refused }", false},
		{"a query that fails as it runs", http.MethodPost, "query Fails { fail }", false},
	}
	store := persisted.NewMemory(1 << 20)
	ts := newTestServer(t, persisted.New(persisted.Config{Store: store}))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ts.send(t, c.method, ada, c.doc)
			t.Logf("%s: %d %s %v", c.method, r.status, r.Data, r.Errors)
			if _, ok, _ := store.Get(context.Background(), hashOf(c.doc)); ok != c.registered {
				t.Errorf("registered: %v, want %v", ok, c.registered)
			}
		})
	}
	if ts.mutations != 1 {
		t.Errorf("%d mutations ran, want the one sent by POST", ts.mutations)
	}
}

// A caller may register so many documents, and so many bytes of them, a period. Past either,
// its operations still run and answer, saying PERSISTED_QUERY_LIMIT in
// extensions.persistedQuery, and register nothing. An advisor of the same id in another firm,
// or another address, is another caller.
func TestACallerPastItsQuotaRunsItsOperationsAndRegistersNothing(t *testing.T) {
	docs := func(prefix string, n, size int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("query %s%d { version }\n#%s", prefix, i, strings.Repeat("x", size))
		}
		return out
	}
	cases := []struct {
		name   string
		cfg    persisted.Config
		docs   []string
		allows int
	}{
		{"documents", persisted.Config{CallerDocuments: 3}, docs("D", 5, 10), 3},
		// Each document is 3 KiB and a little; a quota of 10 KiB holds three of them.
		{"bytes", persisted.Config{CallerBytes: 10 << 10}, docs("B", 5, 3<<10-200), 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := persisted.NewMemory(1 << 20)
			var seen outcomes
			c.cfg.Store, c.cfg.Observe = store, seen.observe
			ts := newTestServer(t, persisted.New(c.cfg))
			registered := func(doc string) bool {
				_, ok, _ := store.Get(context.Background(), hashOf(doc))
				return ok
			}
			for i, doc := range c.docs {
				r := ts.send(t, http.MethodPost, ada, doc)
				if r.status != http.StatusOK || len(r.Errors) > 0 || string(r.Data) != `{"version":"1"}` {
					t.Fatalf("document %d: %d %s %v; want it run and answered", i, r.status, r.Data, r.Errors)
				}
				pq, _ := r.Extensions["persistedQuery"].(map[string]any)
				if within := i < c.allows; within {
					if pq != nil || !registered(doc) {
						t.Errorf("document %d, within the quota: registered %v, extensions %v; want it registered", i, registered(doc), pq)
					}
					continue
				}
				if registered(doc) {
					t.Errorf("document %d, past the quota, was registered", i)
				}
				msg, _ := pq["message"].(string)
				if pq["code"] != string(persisted.CodeLimit) || !strings.Contains(msg, "was not registered") {
					t.Errorf("document %d, past the quota: extensions.persistedQuery %v; want PERSISTED_QUERY_LIMIT saying why", i, pq)
				}
			}
			if n := seen.count(persisted.OutcomeLimited); n != len(c.docs)-c.allows {
				t.Errorf("%d outcomes %q, want %d", n, persisted.OutcomeLimited, len(c.docs)-c.allows)
			}
			for _, other := range []caller{{firm: "f2", advisor: "ada"}, {address: "192.0.2.9"}} {
				doc := fmt.Sprintf("query Other { version }\n# %v", other)
				ts.send(t, http.MethodPost, other, doc)
				if !registered(doc) {
					t.Errorf("%+v, another caller, could not register", other)
				}
			}
		})
	}
}

// Many callers filling a shared Redis: each registers what its quota allows, and no more, and
// all of them together no more than the store's budget, as Redis measures it.
func TestFillingARedisStoreIsBoundedPerCallerAndInAll(t *testing.T) {
	client := eventlogtest.SharedClient(t)
	prefix := eventlogtest.KeyPrefix("persisted-fill")
	const budget = 1 << 20
	store := persisted.NewRedis(client, prefix, time.Hour, persisted.MaxBytes(budget))
	quota := ratelimit.NewRedis(client, prefix)
	t.Cleanup(func() { client.Del(context.Background(), store.Keys()...) })
	var seen outcomes
	ts := newTestServer(t, persisted.New(persisted.Config{Store: store, Quota: quota, Observe: seen.observe}))
	doc := func(who, i int) string {
		return fmt.Sprintf("query Fill%d_%d { version }\n#%s", who, i, strings.Repeat("x", persisted.MaxRegisteredBytes-200))
	}
	// One caller: the default quota of 4 MiB holds 64 documents of 64 KiB.
	const sent = 80
	for i := range sent {
		ts.send(t, http.MethodPost, ada, doc(0, i))
	}
	if n := seen.count(persisted.OutcomeRegistered); n < 60 || n > 64 {
		t.Errorf("one caller registered %d documents of 64 KiB, want the 64 its 4 MiB allow", n)
	}
	// Twenty more, each within its quota.
	for who := 1; who <= 20; who++ {
		for i := range 3 {
			ts.send(t, http.MethodPost, caller{address: fmt.Sprintf("192.0.2.%d", who)}, doc(who, i))
		}
	}
	used := redisBytes(t, client, store)
	t.Logf("%d registered, %d refused; Redis holds %d KiB against a budget of %d KiB",
		seen.count(persisted.OutcomeRegistered), seen.count(persisted.OutcomeLimited), used>>10, budget>>10)
	if used > budget*11/10 {
		t.Errorf("Redis holds %d KiB of documents, want at most the budget of %d KiB", used>>10, budget>>10)
	}
	if _, ok, _ := store.Get(context.Background(), hashOf(doc(20, 2))); !ok {
		t.Error("the last document registered was not kept")
	}
}
