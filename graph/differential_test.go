package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/graph"
	"github.com/advisorhq/gateway/graph/generated"
	"github.com/advisorhq/gateway/graph/stock"
	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/analysis"
	"github.com/advisorhq/gateway/internal/bulkprogress"
	"github.com/advisorhq/gateway/internal/callerauth"
	"github.com/advisorhq/gateway/internal/event"
	"github.com/advisorhq/gateway/internal/eventhub"
	"github.com/advisorhq/gateway/internal/eventlog"
	"github.com/advisorhq/gateway/internal/family"
	"github.com/advisorhq/gateway/internal/nodeid"
	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/tenant"
	"github.com/advisorhq/gateway/internal/vault"
)

var (
	differentialN    = flag.Int("differential.n", 0, "operations the differential test runs; 0: 3000, or 1000 with -short or -race")
	differentialSeed = flag.Uint64("differential.seed", 24, "seed of the differential test's operations")
)

// The gateway's executor is rendered by internal/execgen from gqlgen's templates with changes
// of its own (fields answered from memory, field sets of its own, lists without goroutines).
// It must answer every operation exactly as gqlgen's stock executor, generated from the same
// schema and configuration (graph/stock), answers it over the same resolvers and the same
// upstream answers: random valid operations over the whole schema run on both, and their
// responses must be the same bytes. GraphQL leaves the order of errors to the executor, and
// gqlgen's follows which concurrent field failed first, so errors are compared in path order.
func TestDifferentialExecutorAnswersAsStockGqlgen(t *testing.T) {
	n := *differentialN
	if n == 0 {
		n = 3000
		if testing.Short() || raceEnabled {
			n = 1000
		}
	}
	env := newDifferentialEnv(t)
	ours := newExecutor(generated.NewExecutableSchema(generated.Config{Resolvers: env.resolver}))
	theirs := newExecutor(stock.NewExecutableSchema(env.resolver))
	gen := newOpGen(ours.schema, env.values, *differentialSeed)

	start := time.Now()
	var ran, invalid, differences, fields, failed, nulled int
	messages := map[string]bool{}
	for ran < n {
		op := gen.operation()
		q, vars := op.render()
		a, err := env.run(ours, q, vars)
		if err != nil {
			invalid++
			if invalid > n/5+20 {
				t.Fatalf("the generator made %d invalid operations, the last:\n%s\n%v", invalid, q, err)
			}
			continue
		}
		ran++
		fields += op.size()
		b, err := env.run(theirs, q, vars)
		if err != nil {
			t.Fatalf("the stock executor refused what ours accepted:\n%s\n%v", q, err)
		}
		if bytes.Equal(a, b) {
			var resp struct {
				Data   json.RawMessage
				Errors []struct{ Message string }
			}
			if err := json.Unmarshal(a, &resp); err != nil {
				t.Fatalf("the response is not JSON: %v\n%s", err, a)
			}
			if len(resp.Errors) > 0 {
				failed++
			}
			if string(resp.Data) == "null" {
				nulled++
			}
			for _, e := range resp.Errors {
				messages[e.Message] = true
			}
			continue
		}
		differences++
		small := shrink(op, func(o *operation) bool { return env.differ(ours, theirs, o) })
		q, vars = small.render()
		a, _ = env.run(ours, q, vars)
		b, _ = env.run(theirs, q, vars)
		t.Errorf("operation %d answers differently; the smallest operation that shows it:\n%s\nvariables %s\nours:  %s\nstock: %s",
			ran, q, mustJSON(t, vars), a, b)
		if differences >= 5 {
			t.Fatal("stopping after 5 differences")
		}
	}
	t.Logf("%d operations (%d fields; seed %d; %d invalid ones generated and skipped) ran on both executors in %v: %d differences",
		ran, fields, *differentialSeed, invalid, time.Since(start).Round(time.Millisecond), differences)
	t.Logf("%d answers had errors (%d distinct messages), %d of them with data null", failed, len(messages), nulled)
	if testing.Verbose() {
		for _, m := range slices.Sorted(maps.Keys(messages)) {
			t.Log(m)
		}
	}
}

// anExecutor is an executor and the schema it serves, set up as the server sets gqlgen's up
// for what the executors differ in: gqlgen's error presenter, so that every error reads as
// the executor wrote it.
type anExecutor struct {
	exec   *executor.Executor
	schema graphql.ExecutableSchema
}

func newExecutor(es graphql.ExecutableSchema) anExecutor {
	return anExecutor{exec: executor.New(es), schema: es}
}

// differentialEnv is one firm's gateway resolvers over the sandbox's seeded demo data, with the
// upstream's answers recorded: a request both executors make gets the same answer.
type differentialEnv struct {
	resolver *graph.Resolver
	firm     *tenant.Firm
	caller   callerauth.Caller
	values   map[string][]any
}

func newDifferentialEnv(t testing.TB) *differentialEnv {
	t.Helper()
	// A fixed clock and seed: ids, timestamps and presigned addresses are the same on every run.
	now := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	sink := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(sink.Close)
	firms := sandbox.DefaultFirms()
	firms[0].WebhookKey = "differential-webhook-key"
	sb, err := sandbox.New(sandbox.Options{Firms: firms, Seed: 24, Now: clock, FileDir: t.TempDir(), WebhookURL: sink.URL})
	if err != nil {
		t.Fatalf("sandbox.New: %v", err)
	}
	t.Cleanup(func() { sb.Close() })

	first := firms[0]
	dir, err := tenant.NewDirectory([]tenant.Firm{{ID: first.ID, AccessToken: first.AccessToken, BasicCredentials: first.BasicCredentials}})
	if err != nil {
		t.Fatal(err)
	}
	const base = "http://sandbox.test"
	upstream := &recorded{h: sb}
	api, err := advisor.New(advisor.Options{BaseURL: base, Firms: dir, HTTPClient: &http.Client{Transport: upstream}, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	firm, _ := dir.Lookup(first.ID)

	log := eventlog.NewMemory(1000, time.Hour, clock)
	progress := bulkprogress.NewMemory(clock)
	docs := vault.NewService(api, vault.DefaultDetailConcurrency)
	hub := eventhub.New(log, eventhub.Options{})
	env := &differentialEnv{
		resolver: &graph.Resolver{
			Version:  "differential",
			Family:   family.NewService(api),
			Vault:    docs,
			Hub:      hub,
			Analysis: analysis.NewService(api, hub, docs, eventhub.MaxRecent),
			Bulk:     graph.Bulk{Progress: progress},
			Access:   &tenant.Policy{Firms: dir},
		},
		firm:   firm,
		caller: callerauth.Caller{AdvisorID: sandbox.DefaultAdvisorID, TeamID: sandbox.DefaultTeamID, FirmID: first.ID},
	}
	for _, p := range []bulkprogress.Progress{
		{ID: "bulk-processing", Firm: first.ID, Phase: bulkprogress.Processing, Rows: 40, RowsTotal: 40, Bytes: 4096, BytesTotal: 4096, UpdatedAt: now},
		{ID: "bulk-failed", Firm: first.ID, Phase: bulkprogress.Failed, Rows: 3, Error: "The Clients file has no valid row", UpdatedAt: now},
		{ID: "bulk-other-firm", Firm: sandbox.SecondFirmID, Phase: bulkprogress.Done, UpdatedAt: now},
	} {
		if err := progress.Put(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	env.values = env.discover(t)
	env.seedEvents(t, sb, base, log, first.AccessToken, env.values["wids"][1:])
	// One document's reads fail, as a service that is down fails: its fileStatus, which cannot
	// be null, takes its document with it, and that document's list with the list.
	broken := "/documents/" + env.values["vaultId"][1].(string)
	upstream.fails = func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, broken) }
	return env
}

// seedEvents stores one event of every type for each of the top accounts, as the sandbox fills
// them in: analysis events name a document of their top account.
func (env *differentialEnv) seedEvents(t testing.TB, sb http.Handler, base string, log eventlog.Log, token string, wids []any) {
	t.Helper()
	var list []map[string]any
	for _, wid := range wids {
		for _, typ := range advisorspec.EventTypes {
			list = append(list, map[string]any{"EventType": string(typ), "Wid": wid})
		}
	}
	body, _ := json.Marshal(list)
	req := httptest.NewRequest(http.MethodPost, base+"/sandbox/events", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	sb.ServeHTTP(rec, req)
	var sent struct{ Events []json.RawMessage }
	if err := json.Unmarshal(rec.Body.Bytes(), &sent); err != nil || len(sent.Events) != len(list) {
		t.Fatalf("POST /sandbox/events: %d %s (%v)", rec.Code, rec.Body, err)
	}
	for _, raw := range sent.Events {
		w, perr := advisorspec.ParseWebhook(raw)
		if perr != nil {
			t.Fatalf("the sandbox's event %s: %v", raw, perr)
		}
		if _, _, err := log.Append(context.Background(), env.firm.ID, event.Record(w)); err != nil {
			t.Fatal(err)
		}
	}
}

// discover reads the demo data's identifiers with our executor: the values arguments are drawn
// from, beside ones that match nothing.
func (env *differentialEnv) discover(t testing.TB) map[string][]any {
	t.Helper()
	const q = `{
		topAccounts(limit: 100) { nodes { id wid externalId
			contacts { ... on ContactCard { id contactId externalId } }
			documents(first: 2) { nodes { id vaultId tags } pageInfo { endCursor } } } }
		client(ref: "CL-1001") { id ref contacts { ... on ContactCard { id contactId externalId } } }
	}`
	out, err := env.run(newExecutor(generated.NewExecutableSchema(generated.Config{Resolvers: env.resolver})), q, nil)
	if err != nil {
		t.Fatal(err)
	}
	type card struct{ ID, ContactID, ExternalID string }
	var resp struct {
		Data struct {
			TopAccounts struct {
				Nodes []struct {
					ID, Wid, ExternalID string
					Contacts            []card
					Documents           struct {
						Nodes []struct {
							ID, VaultID string
							Tags        []string
						}
						PageInfo struct{ EndCursor *string }
					}
				}
			}
			Client struct {
				ID, Ref  string
				Contacts []card
			}
		}
		Errors []any
	}
	if err := json.Unmarshal(out, &resp); err != nil || len(resp.Errors) > 0 || len(resp.Data.Client.Contacts) == 0 {
		t.Fatalf("discovery answered %s (%v)", out, err)
	}
	v := map[string][]any{
		"wid":                 {"no-such-wid"},
		"id":                  {"no-such-id"},
		"externalId":          {"no-such-external-id"},
		"vaultId":             {"no-such-vault-id"},
		"after":               {"bm8tc3VjaC1jdXJzb3I"},
		"tags":                {"no-such-tag"},
		"ref":                 {resp.Data.Client.Ref, "CL-NONE"},
		"advisorId":           {env.caller.AdvisorID, "another-advisor"},
		"teamId":              {env.caller.TeamID, "another-team"},
		"page":                {1, 1, 2, 3},
		"limit":               {1, 2, 5, 20, 20, 100},
		"first":               {1, 2, 3, 100, 100, 0},
		"last":                {1, 3, 50, 50, 1000, 0},
		"Query.bulkUpload.id": {"bulk-processing", "bulk-failed", "bulk-other-firm", "bulk-none"},
		"wids":                {"no-such-wid"},
		// Global ids of every type, beside forged ones (not base64url, a key of no type, a
		// bulk load of another firm) and a service id.
		"Query.node.id": {"no such id", "AcgAAXg", nodeid.Encode("BulkUpload", "bulk-other-firm"), "bulk-processing",
			nodeid.Encode("BulkUpload", "bulk-processing"), resp.Data.Client.ID},
	}
	for _, ta := range resp.Data.TopAccounts.Nodes {
		v["wid"] = append(v["wid"], ta.Wid, ta.Wid, ta.Wid)
		v["wids"] = append(v["wids"], ta.Wid)
		v["Query.node.id"] = append(v["Query.node.id"], ta.ID)
		for _, c := range ta.Contacts {
			v["id"] = append(v["id"], c.ID, c.ContactID)
			v["Query.node.id"] = append(v["Query.node.id"], c.ID)
			v["externalId"] = append(v["externalId"], c.ExternalID)
		}
		for _, d := range ta.Documents.Nodes {
			v["vaultId"] = append(v["vaultId"], d.VaultID)
			v["Query.node.id"] = append(v["Query.node.id"], d.ID)
			for _, tag := range d.Tags {
				if !slices.Contains(v["tags"], any(tag)) {
					v["tags"] = append(v["tags"], tag)
				}
			}
		}
		if c := ta.Documents.PageInfo.EndCursor; c != nil {
			v["after"] = append(v["after"], *c)
		}
	}
	for _, c := range resp.Data.Client.Contacts {
		v["Client.contact.id"] = append(v["Client.contact.id"], c.ID, c.ContactID)
		v["Query.node.id"] = append(v["Query.node.id"], c.ID)
	}
	v["Query.nodes.ids"] = v["Query.node.id"]
	v["Client.contact.id"] = append(v["Client.contact.id"], "no-such-id")
	return v
}

// run executes an operation as the server does: as the firm's caller, with the request's own
// upstream cache and budget (larger than the server's, so that no operation runs out of it:
// which of concurrent fields would be refused is a race). The error is the operation's refusal.
func (env *differentialEnv) run(e anExecutor, query string, vars map[string]any) ([]byte, error) {
	ctx := tenant.WithFirm(callerauth.WithCaller(context.Background(), env.caller), env.firm)
	ctx = advisor.WithBudget(advisor.WithCache(ctx), 100000)
	ctx = graphql.StartOperationTrace(ctx)
	opCtx, errs := e.exec.CreateOperationContext(ctx, &graphql.RawParams{Query: query, Variables: vars})
	if errs != nil {
		return nil, errs
	}
	handler, ctx := e.exec.DispatchOperation(ctx, opCtx)
	resp := handler(ctx)
	slices.SortStableFunc(resp.Errors, func(a, b *gqlerror.Error) int {
		return strings.Compare(a.Path.String()+"\x00"+a.Message, b.Path.String()+"\x00"+b.Message)
	})
	return json.Marshal(resp)
}

// differ reports whether o is valid and answered differently by the two executors.
func (env *differentialEnv) differ(ours, theirs anExecutor, o *operation) bool {
	q, vars := o.render()
	a, err := env.run(ours, q, vars)
	if err != nil {
		return false
	}
	b, err := env.run(theirs, q, vars)
	return err == nil && !bytes.Equal(a, b)
}

// recorded answers each distinct upstream request once from the sandbox, in process, and
// replays that answer whenever it is asked again: both executors see the same bytes, whatever
// the order in which their fields ask.
type recorded struct {
	h http.Handler
	// fails, when set, picks requests answered 503 instead.
	fails   func(*http.Request) bool
	mu      sync.Mutex
	answers map[string]*answer
}

type answer struct {
	once   sync.Once
	status int
	header http.Header
	body   []byte
}

func (r *recorded) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body.Close()
	}
	key := fmt.Sprintf("%s %s %s %s", req.Method, req.URL, req.Header.Get("Authorization"), body)
	r.mu.Lock()
	if r.answers == nil {
		r.answers = map[string]*answer{}
	}
	a := r.answers[key]
	if a == nil {
		a = &answer{}
		r.answers[key] = a
	}
	r.mu.Unlock()
	a.once.Do(func() {
		if r.fails != nil && r.fails(req) {
			a.status, a.header, a.body = http.StatusServiceUnavailable, http.Header{"Content-Type": {"application/json"}}, []byte(`{"message":"unavailable"}`)
			return
		}
		in := req.Clone(context.Background())
		in.Body = io.NopCloser(bytes.NewReader(body))
		in.RequestURI = req.URL.RequestURI()
		rec := httptest.NewRecorder()
		r.h.ServeHTTP(rec, in)
		a.status, a.header, a.body = rec.Code, rec.Header(), rec.Body.Bytes()
	})
	return &http.Response{
		StatusCode: a.status, Status: http.StatusText(a.status), Header: a.header.Clone(),
		Body: io.NopCloser(bytes.NewReader(a.body)), ContentLength: int64(len(a.body)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: req,
	}, nil
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
