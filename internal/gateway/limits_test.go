package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The "one small request must not take the gateway down": each of the probes that did
// is refused before any upstream call, with the code and the setting that bounds it.

// recursion is the probe that produced 95 MB: relationships through their targets' cards,
// levels deep.
func recursion(levels int) string {
	inner := "role"
	for range levels - 1 {
		inner = "role target { contact { ... on ContactCard { displayName relationships { " + inner + " } } } }"
	}
	return `{ topAccount(wid: "w1") { relationships { ` + inner + ` } } }`
}

// aliased selects field n times under distinct aliases.
func aliased(n int, field string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, " a%d: %s", i, field)
	}
	b.WriteString(" }")
	return b.String()
}

func TestOperationsOverALimitAreRefusedBeforeTheUpstream(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	for _, tc := range []struct {
		name, query, setting string
	}{
		{"relationships recursing eight levels deep", recursion(8), "GRAPHQL_MAX_DEPTH"},
		{"relationships recursing four levels, within the depth limit", recursion(4), "GRAPHQL_MAX_COST"},
		{"6,000 aliases of __schema", aliased(6000, "__schema { queryType { name } }"), "GRAPHQL_MAX_TOKENS"},
		{"31 aliases of __schema", aliased(31, "__schema { queryType { name } }"), "GRAPHQL_MAX_ALIASES"},
		{"10,000 repeated fields", "{" + strings.Repeat(" version", 10000) + " }", "GRAPHQL_MAX_TOKENS"},
		{"4,000 repeated fields, within the token limit", "{" + strings.Repeat(" version", 4000) + " }", "GRAPHQL_MAX_COST"},
		{"2,400 aliased topAccount lookups", aliased(2400, `topAccount(wid: "w1") { name }`), "GRAPHQL_MAX_TOKENS"},
		{"21 aliased topAccount lookups", aliased(21, `topAccount(wid: "w1") { name }`), "GRAPHQL_MAX_ROOT_FIELDS"},
		{"every top account's every card", `{ topAccounts(limit: 100) { nodes { contacts { ... on ContactCard { displayName relationships { role } } } } } }`, "GRAPHQL_MAX_COST"},
	} {
		// Sequential: each checks that it alone made no upstream request.
		t.Run(tc.name, func(t *testing.T) {
			up.ResetRequests()
			r := gw.post(t, tc.query, nil)
			e := r.wantError(t, "OPERATION_LIMIT_EXCEEDED", "")
			if !strings.HasSuffix(e.Message, "("+tc.setting+")") {
				t.Errorf("got %q, want a message naming %s", e.Message, tc.setting)
			}
			if r.status != http.StatusOK || r.Data != nil {
				t.Errorf("got status %d and data %s, want 200 and no data", r.status, r.Data)
			}
			if reqs := up.Requests(); len(reqs) > 0 {
				t.Errorf("got upstream requests %v, want none", reqs)
			}
		})
	}
}

// GraphQL over HTTP: a request refused before it runs is 400 for a client that accepts
// application/graphql-response+json, and 200 for one that accepts application/json.
func TestARefusedOperationsStatusFollowsTheResponseMediaType(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, true), nil)
	for _, tc := range []struct {
		accept string
		status int
	}{
		{"application/json", http.StatusOK},
		{"application/graphql-response+json", http.StatusBadRequest},
	} {
		t.Run(tc.accept, func(t *testing.T) {
			body, _ := json.Marshal(map[string]any{"query": recursion(8)})
			req, _ := http.NewRequest(http.MethodPost, gw.url+"/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", tc.accept)
			r := gw.do(t, req)
			if r.status != tc.status {
				t.Errorf("got status %d, want %d", r.status, tc.status)
			}
			r.wantError(t, "OPERATION_LIMIT_EXCEEDED", "")
		})
	}
}

// Each limit has its setting.
func TestEachLimitFollowsItsSetting(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	for _, tc := range []struct {
		setting, value, query, message string
	}{
		{"GRAPHQL_MAX_TOKENS", "8", "{ topAccounts { nodes { wid } } }",
			"The operation has 9 tokens; at most 8 are allowed (GRAPHQL_MAX_TOKENS)"},
		{"GRAPHQL_MAX_DEPTH", "2", "{ topAccounts { nodes { wid } } }",
			"The operation is 3 levels deep; at most 2 are allowed (GRAPHQL_MAX_DEPTH)"},
		{"GRAPHQL_MAX_ALIASES", "1", "{ a: version b: version }",
			"The operation has 2 aliases; at most 1 are allowed (GRAPHQL_MAX_ALIASES)"},
		{"GRAPHQL_MAX_ROOT_FIELDS", "1", "{ version topAccounts { nodes { wid } } }",
			"The operation selects 2 root fields; at most 1 are allowed (GRAPHQL_MAX_ROOT_FIELDS)"},
		// topAccounts(limit: 10) { nodes { wid } }: 1 + 1 × (1 + 10 × 1).
		{"GRAPHQL_MAX_COST", "11", "{ topAccounts(limit: 10) { nodes { wid } } }",
			"The operation costs 12; at most 11 is allowed (GRAPHQL_MAX_COST)"},
	} {
		t.Run(tc.setting, func(t *testing.T) {
			t.Parallel()
			gw := newGateway(t, up, map[string]string{tc.setting: tc.value})
			gw.post(t, tc.query, nil).wantError(t, "OPERATION_LIMIT_EXCEEDED", tc.message)
			gw.post(t, "{ version }", nil).ok(t, nil)
		})
	}
}

// A response that grows past MAX_RESPONSE_BYTES ends with one error instead of growing the
// heap; a smaller one is answered.
func TestAResponseOverMaxResponseBytesEndsWithAnError(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, map[string]string{"MAX_RESPONSE_BYTES": "4KiB"})
	small := up.family(t, "SMALL", 2)
	large := up.family(t, "LARGE", 40)
	gw.post(t, familyQuery, map[string]any{"wid": small}).ok(t, nil)
	r := gw.post(t, familyQuery, map[string]any{"wid": large})
	e := r.wantError(t, "OPERATION_LIMIT_EXCEEDED", "")
	if !strings.Contains(e.Message, "at most 4096 (4 KiB) are allowed (MAX_RESPONSE_BYTES)") {
		t.Errorf("got %q, want the message to name the limit and its setting", e.Message)
	}
	if r.Data != nil && string(r.Data) != "null" {
		t.Errorf("got data %.200s, want none", r.Data)
	}
}

// The queries the README and the IDE send pass the default limits.
func TestTheREADMEAndIDEQueriesPassTheDefaultLimits(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	family := regexp.MustCompile("(?s)<!-- README example query.*?```graphql\n(.*?)```").FindSubmatch(readme)
	if family == nil {
		t.Fatal("README.md has no example query block")
	}
	gw := newGateway(t, newUpstream(t, true), nil)
	for _, tc := range []struct{ name, query, want string }{
		{"the README's family query", string(family[1]), "Hartwell Family Joint Revocable Trust"},
		{"GraphiQL's introspection query", graphiQLIntrospection, `"name":"ContactCard"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := gw.post(t, tc.query, nil)
			r.ok(t, nil)
			if !strings.Contains(string(r.Data), tc.want) {
				t.Errorf("got %.200s, want it to contain %s", r.Data, tc.want)
			}
		})
	}
}

// graphiQLIntrospection is the query the IDE at / sends (GraphiQL 4.1.2), ofType nine deep.
const graphiQLIntrospection = `query IntrospectionQuery {
  __schema {
    description
    queryType { name kind } mutationType { name kind } subscriptionType { name kind }
    types { ...FullType }
    directives { name description isRepeatable locations args(includeDeprecated: true) { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description specifiedByURL isOneOf
  fields(includeDeprecated: true) {
    name description args(includeDeprecated: true) { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason
  }
  inputFields(includeDeprecated: true) { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue isDeprecated deprecationReason }
fragment TypeRef on __Type {
  kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType {
  kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } } }
}`

// An operation's work stops when its client goes away, in-memory recursion included: with the
// limits raised so the recursion is allowed, a client that gives up leaves nothing running
// (before, a 10-level query kept running, and growing, after its client left). Not parallel:
// it counts the process's goroutines.
func TestARecursiveOperationStopsWhenItsClientLeaves(t *testing.T) {
	up := newUpstream(t, true)
	gw := newGateway(t, up, map[string]string{
		"GRAPHQL_MAX_DEPTH": "100", "GRAPHQL_MAX_COST": "9000000000000000000", "MAX_RESPONSE_BYTES": "4GiB",
	})
	var page struct {
		TopAccounts struct{ Nodes []struct{ Wid string } }
	}
	gw.post(t, `{ topAccounts(limit: 1) { nodes { wid } } }`, nil).ok(t, &page)
	// The probe: on the demo family, 8 levels answered 95 MB after 86 s. At 10 levels the
	// operation, left to run, still runs minutes later; stopped 100 ms in, it unwinds what it had
	// started, which takes a second on a quiet machine and 20 s under -race on a machine loaded
	// twentyfold, hence the generous wait.
	query := strings.Replace(recursion(10), `"w1"`, fmt.Sprintf("%q", page.TopAccounts.Nodes[0].Wid), 1)
	http.DefaultClient.CloseIdleConnections()
	baseline := runtime.NumGoroutine()

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gw.url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		answer, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		resp.Body.Close()
		t.Fatalf("the recursion was answered within 100 ms (%d %s); make it larger so the client leaves first", resp.StatusCode, answer)
	}
	deadline := time.Now().Add(60 * time.Second)
	for runtime.NumGoroutine() > baseline+5 {
		if time.Now().After(deadline) {
			t.Fatalf("60 s after its client left, the operation still runs: %d goroutines, %d before it", runtime.NumGoroutine(), baseline)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
