package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/oplimit"
)

// gqlAnswer is a GraphQL-over-HTTP answer as a test reads it.
type gqlAnswer struct {
	status int
	header http.Header
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

func postJSON(t *testing.T, url, body string) gqlAnswer {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return readAnswer(t, resp)
}

func readAnswer(t *testing.T, resp *http.Response) gqlAnswer {
	t.Helper()
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	a := gqlAnswer{status: resp.StatusCode, header: resp.Header}
	if err := json.Unmarshal(data, &a); err != nil {
		// A batch's answer is an array: its first response stands for it here.
		var list []gqlAnswer
		if json.Unmarshal(data, &list) != nil || len(list) == 0 {
			t.Fatalf("status %d: not a GraphQL gqlAnswer: %.300s", resp.StatusCode, data)
		}
		a.Data, a.Errors = list[0].Data, list[0].Errors
	}
	return a
}

// values is a JSON array of n empty objects.
func values(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat("{},", n), ",") + "]"
}

// nested is depth arrays, one in another.
func nested(depth int) string {
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

func op(members string) string { return `{"query":"{ ok }"` + members + `}` }

// Every bound of a body, at its limit and one past it, in a body, a batch and a GET. A refusal
// is 400 (413 for the size) with BAD_USER_INPUT and a message naming the bound; a body at every
// limit runs.
func TestABodyPastItsBoundsIsRefusedNamingTheBound(t *testing.T) {
	t.Parallel()
	srv := probeServer(t, Config{BatchLimit: 3, MaxRequestBytes: 4096, BodyBounds: BodyBounds{Depth: 4, Values: 20}})
	const (
		tooMany  = "variables hold more than 20 values; a request may send at most 20 in its variables and extensions together"
		tooDeep  = "variables nest deeper than 4 levels; at most 4 are allowed"
		badBody  = "the request body must be a JSON object whose query, operationName and documentId are strings and whose variables and extensions are objects"
		badBatch = "the request body must be a JSON object, or an array of them for a batch"
	)
	for _, c := range []struct {
		name, body string
		status     int
		message    string // "" runs
	}{
		// The array and its 19 objects: 20 values (the variables object is their container).
		{"values at the limit", op(`,"variables":{"a":` + values(19) + `}`), 200, ""},
		{"values past the limit", op(`,"variables":{"a":` + values(20) + `}`), 400, tooMany},
		{"extensions past the limit", op(`,"extensions":{"a":` + values(20) + `}`), 400,
			"extensions hold more than 20 values; a request may send at most 20 in its variables and extensions together"},
		{"variables and extensions together", op(`,"variables":{"a":` + values(10) + `},"extensions":{"a":` + values(9) + `}`), 400,
			"extensions hold more than 20 values; a request may send at most 20 in its variables and extensions together"},
		{"depth at the limit", op(`,"variables":{"a":` + nested(3) + `}`), 200, ""},
		{"depth past the limit", op(`,"variables":{"a":` + nested(4) + `}`), 400, tooDeep},
		{"depth in another member", op(`,"other":` + nested(5)), 400, "the request's values nest deeper than 4 levels; at most 4 are allowed"},
		{"members nobody reads count", op(strings.Repeat(`,"x":1`, 21)), 400,
			"the request's values hold more than 20 values; a request may send at most 20 in its variables and extensions together"},
		{"quotes and brackets in strings are not values", op(`,"variables":{"s":"\"[[[[[{{{{{\\"}`), 200, ""},
		{"null members are absent", `{"query":"{ ok }","variables":null,"extensions":null,"operationName":null}`, 200, ""},
		{"a query of the wrong type", `{"query":5,"variables":{"a":` + values(15) + `}}`, 400, badBody},
		{"variables of the wrong type", `{"query":"{ ok }","variables":[1]}`, 400, badBody},
		{"trailing data", op(``) + `{}`, 400, badBody},
		{"not JSON", `{"query":"{ ok }",`, 400, badBody},
		{"too large", op(`,"variables":{"s":"` + strings.Repeat("x", 4096) + `"}`), 413, "The request body is larger than the limit of 4 KiB"},
		{"a batch at the limit", "[" + op(``) + "," + op(``) + "," + op(``) + "]", 200, ""},
		{"a batch past the limit", "[" + op(``) + "," + op(``) + "," + op(``) + "," + op(``) + "]", 400,
			"the batch holds more than 3 operations; at most 3 are allowed (GRAPHQL_BATCH_LIMIT)"},
		// The fourth operation is refused as it begins: what follows it is never read.
		{"a batch refused at its first operation too many", "[" + op(``) + "," + op(``) + "," + op(``) + `,{"query": nonsense`, 400,
			"the batch holds more than 3 operations; at most 3 are allowed (GRAPHQL_BATCH_LIMIT)"},
		{"a batch's values add up", "[" + op(`,"variables":{"a":`+values(10)+`}`) + "," + op(`,"variables":{"a":`+values(10)+`}`) + "]", 400, tooMany},
		{"a batch nests as deep as one operation", "[" + op(`,"variables":{"a":`+nested(4)+`}`) + "]", 400, tooDeep},
		{"a batch that is not JSON", "[" + op(``) + ",", 400, badBatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := postJSON(t, srv.URL+"/graphql", c.body)
			wantAnswer(t, a, c.status, c.message)
		})
	}

	t.Run("GET", func(t *testing.T) {
		t.Parallel()
		for vars, message := range map[string]string{
			`{"a":` + values(19) + `}`: "",
			`{"a":` + values(20) + `}`: tooMany,
			`{"a":` + nested(4) + `}`:  tooDeep,
		} {
			resp, err := http.Get(srv.URL + "/graphql?query=" + url.QueryEscape("{ ok }") + "&variables=" + url.QueryEscape(vars))
			if err != nil {
				t.Fatal(err)
			}
			status := 200
			if message != "" {
				status = 400
			}
			wantAnswer(t, readAnswer(t, resp), status, message)
		}
	})
}

func wantAnswer(t *testing.T, a gqlAnswer, status int, message string) {
	t.Helper()
	if a.status != status {
		t.Errorf("status %d, want %d (%+v)", a.status, status, a.Errors)
	}
	if message == "" {
		if len(a.Errors) > 0 || string(a.Data) != `{"ok":true}` {
			t.Errorf("got %s %+v, want it to run", a.Data, a.Errors)
		}
		return
	}
	if len(a.Errors) != 1 || a.Errors[0].Message != message || a.Errors[0].Extensions["code"] != string(apperr.BadUserInput) || a.Data != nil {
		t.Errorf("got %s %+v, want one BAD_USER_INPUT error %q and no data", a.Data, a.Errors, message)
	}
}

// The default bounds refuse each 2 MiB bomb of the issue with a message that names the bound.
func TestTheDefaultBoundsRefuseBombs(t *testing.T) {
	t.Parallel()
	h := bombHandler()
	for name, body := range bombs() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			a := readAnswer(t, rec.Result())
			if a.status != http.StatusBadRequest || len(a.Errors) != 1 || a.Errors[0].Extensions["code"] != string(apperr.BadUserInput) {
				t.Fatalf("status %d %+v, want 400 BAD_USER_INPUT", a.status, a.Errors)
			}
			t.Log(a.Errors[0].Message)
		})
	}
}

// rateLimited is a refusal with a status of its own, as the rate limits' is.
type rateLimited struct{}

func (rateLimited) Error() string       { return "Too many operations" }
func (rateLimited) Status() int         { return http.StatusTooManyRequests }
func (rateLimited) Header() http.Header { return http.Header{"Retry-After": {"7"}} }

// Every refusal of the JSON transport counts against the caller's rate limit, as an operation
// does; an operation that runs is left to the rate limits' extension, which counts it. A caller
// past its budget is told so with 429 rather than what was wrong.
func TestEveryRefusedRequestCountsAgainstTheRateLimit(t *testing.T) {
	t.Parallel()
	var counted atomic.Int64
	budget := int64(6)
	srv := probeServer(t, Config{BatchLimit: 2, MaxRequestBytes: 1024, BodyBounds: BodyBounds{Values: 5},
		CountRefused: func(ctx context.Context) error {
			if counted.Add(1) > budget {
				return &gqlerror.Error{Message: "Too many operations", Err: rateLimited{}}
			}
			return nil
		}})
	refused := []string{
		`{"query":5}`,
		`{"query":"{ ok }","variables":{"a":` + values(9) + `}}`,
		`{"query":"{ ok }","variables":{"s":"` + strings.Repeat("x", 2000) + `"}}`,
		`[{"query":"{ ok }"},{"query":"{ ok }"},{"query":"{ ok }"}]`,
		`[]`,
		`{`,
	}
	for _, body := range refused {
		if a := postJSON(t, srv.URL+"/graphql", body); a.status/100 != 4 {
			t.Errorf("%.40s: status %d, want a refusal", body, a.status)
		}
	}
	if a := postJSON(t, srv.URL+"/graphql", op(``)); a.status != 200 {
		t.Errorf("a valid operation: status %d", a.status)
	}
	if got := counted.Load(); got != int64(len(refused)) {
		t.Errorf("counted %d refusals, want %d", got, len(refused))
	}
	a := postJSON(t, srv.URL+"/graphql", `{"query":5}`)
	if a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") != "7" || len(a.Errors) != 1 || a.Errors[0].Message != "Too many operations" {
		t.Errorf("past the budget: status %d, Retry-After %q, %+v; want 429 with Retry-After", a.status, a.header.Get("Retry-After"), a.Errors)
	}
}

// limitedServer serves testSchema with the operation limits installed, counting the
// operations that run.
func limitedServer(t *testing.T, limits oplimit.Limits) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var ran atomic.Int64
	es := testExecutor().(*graphql.ExecutableSchemaMock)
	exec := es.ExecFunc
	es.ExecFunc = func(ctx context.Context) graphql.ResponseHandler {
		ran.Add(1)
		return exec(ctx)
	}
	h := testHandler(es, Config{BatchLimit: 10, Streams: NewStreams()})
	oplimit.Install(h, limits)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, &ran
}

// A batch is priced as a whole: operations each within the limits but together past them are
// refused, all of them, before any runs; together within them, they all run.
func TestABatchIsPricedAsAWhole(t *testing.T) {
	t.Parallel()
	batch := func(n int, query string) string {
		ops := make([]string, n)
		for i := range ops {
			ops[i] = fmt.Sprintf(`{"query":%q}`, query)
		}
		return "[" + strings.Join(ops, ",") + "]"
	}
	for _, c := range []struct {
		name    string
		limits  oplimit.Limits
		body    string
		message string // "" runs
	}{
		{"cost within", oplimit.Limits{Cost: 3}, batch(3, "{ ok }"), ""},
		{"cost past", oplimit.Limits{Cost: 3}, batch(4, "{ ok }"), "The batch's 4 operations cost 4 together; a batch may cost at most 3, as one operation may (GRAPHQL_MAX_COST)"},
		{"root fields past", oplimit.Limits{RootFields: 2}, batch(3, "{ ok }"), "The batch's 3 operations select 3 root fields together; a batch may select at most 2, as one operation may (GRAPHQL_MAX_ROOT_FIELDS)"},
		{"aliases past", oplimit.Limits{Aliases: 3}, batch(2, "{ a: ok b: ok }"), "The batch's 2 operations have 4 aliases together; a batch may have at most 3, as one operation may (GRAPHQL_MAX_ALIASES)"},
		{"aliases within", oplimit.Limits{Aliases: 4}, batch(2, "{ a: ok b: ok }"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv, ran := limitedServer(t, c.limits)
			a := postJSON(t, srv.URL, c.body)
			if c.message == "" {
				if a.status != 200 || len(a.Errors) > 0 {
					t.Fatalf("status %d %+v, want the batch to run", a.status, a.Errors)
				}
				if ran.Load() == 0 {
					t.Error("no operation ran")
				}
				return
			}
			if a.status != http.StatusBadRequest || len(a.Errors) != 1 || a.Errors[0].Message != c.message ||
				a.Errors[0].Extensions["code"] != string(apperr.OperationLimitExceeded) {
				t.Errorf("status %d %+v, want 400 OPERATION_LIMIT_EXCEEDED %q", a.status, a.Errors, c.message)
			}
			if n := ran.Load(); n != 0 {
				t.Errorf("%d operations ran; a batch refused as a whole runs none", n)
			}
		})
	}
}

// FuzzScanAcceptsWhatIsJSON: the scan never calls valid JSON malformed, so a bound is the only
// reason it refuses a body encoding/json would read.
func FuzzScanAcceptsWhatIsJSON(f *testing.F) {
	for _, seed := range []string{
		`{"query":"{ ok }","variables":{"a":[1,2.5e-3,-0,true,false,null,"\"\\\u00e9"]}}`,
		`[{"query":"x"},{"variables":{}}]`, `{}`, `[]`, `"x"`, `{"a":{"b":[[]]}}`, " {\t\"a\" :\n1 } ",
	} {
		f.Add([]byte(seed))
	}
	big := BodyBounds{Depth: 1 << 20, Values: 1 << 30}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		trimmed := bytes.TrimSpace(data)
		var err error
		switch {
		case len(trimmed) > 0 && trimmed[0] == '[':
			err = scanBatch(data, big, 1<<30)
		case len(trimmed) > 0 && trimmed[0] == '{':
			s := &bodyScan{data: data, bounds: big}
			s.space()
			err = s.whole(s.value(0))
		default:
			return
		}
		if err != nil {
			t.Errorf("valid JSON %q refused: %v", data, err)
		}
	})
}
