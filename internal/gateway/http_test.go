package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/sandbox/sandboxtest"
)

// auditDir holds the graphql-http audit runner; the test installs its pinned packages itself.
const auditDir = "testdata/audit"

func TestGraphQLOverHTTPAuditPassesWithoutWarnings(t *testing.T) {
	t.Parallel()
	npmInstall(t, auditDir, "graphql-http")
	gw := newGateway(t, newUpstream(t, true), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "node", filepath.Join(auditDir, "audit.mjs"), gw.url+"/graphql").Output()
	if err != nil {
		t.Fatalf("run the audit: %v", err)
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var a struct{ ID, Name, Status, Reason string }
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("audit output %q: %v", sc.Text(), err)
		}
		n++
		if a.Status != "ok" {
			t.Errorf("audit %s %q: %s: %s", a.ID, a.Name, a.Status, a.Reason)
		}
	}
	if n < 50 {
		t.Errorf("only %d audits ran, want the whole suite", n)
	}
}

func get(t *testing.T, rawURL string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, rawURL, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

func TestGETServesQueriesOnly(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, true), nil)
	q := url.Values{"query": {"{ topAccounts(limit: 1) { pageInfo { totalCount } } }"}}
	resp, body := get(t, gw.url+"/graphql?"+q.Encode(), nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"totalCount":3`) {
		t.Errorf("GET query: status %d, body %s", resp.StatusCode, body)
	}
	m := url.Values{"query": {`mutation { createTopAccount(input: {externalId: "X", name: "X"}) { wid } }`}}
	resp, body = get(t, gw.url+"/graphql?"+m.Encode(), nil)
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET mutation: status %d, Allow %q, body %s; want 405 and Allow: POST", resp.StatusCode, resp.Header.Get("Allow"), body)
	}
	if got := gw.up.Requests(); strings.Contains(strings.Join(got, " "), "POST") {
		t.Errorf("a mutation over GET reached the upstream: %v", got)
	}
}

func TestBodiesOverTheLimitAreRefusedBeforeParsing(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, true), map[string]string{"MAX_REQUEST_BYTES": "1KiB"})
	big := `{"query":"{ version }","variables":{"pad":"` + strings.Repeat("x", 2000) + `"}}`
	for _, tc := range []struct {
		name   string
		body   io.Reader
		length int64
	}{
		{"with a declared length", strings.NewReader(big), int64(len(big))},
		{"chunked, length unknown", io.MultiReader(strings.NewReader(big)), -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, gw.url+"/graphql", tc.body)
			req.ContentLength = tc.length
			req.Header.Set("Content-Type", "application/json")
			r := gw.do(t, req)
			if r.status != http.StatusRequestEntityTooLarge {
				t.Errorf("status %d, want 413", r.status)
			}
			r.wantError(t, "BAD_USER_INPUT", "The request body is larger than the limit of 1 KiB")
		})
	}
	small := gw.post(t, "{ version }", nil)
	small.ok(t, nil)
}

func TestCORSAllowsOnlyTheListedOrigins(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, true), map[string]string{"CORS_ALLOWED_ORIGINS": "https://app.example.com, http://localhost:3000"})
	for _, tc := range []struct {
		origin  string
		allowed bool
	}{
		{"https://app.example.com", true},
		{"http://localhost:3000", true},
		{"https://evil.example.com", false},
	} {
		t.Run(tc.origin, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodOptions, gw.url+"/graphql", nil)
			req.Header.Set("Origin", tc.origin)
			req.Header.Set("Access-Control-Request-Method", "POST")
			req.Header.Set("Access-Control-Request-Headers", "content-type, graphql-require-preflight")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			got := resp.Header.Get("Access-Control-Allow-Origin")
			creds := resp.Header.Get("Access-Control-Allow-Credentials")
			if tc.allowed && (got != tc.origin || creds != "true") {
				t.Errorf("preflight: Allow-Origin %q, Allow-Credentials %q; want %q and true", got, creds, tc.origin)
			}
			if !tc.allowed && (got != "" || creds != "") {
				t.Errorf("preflight from a refused origin: Allow-Origin %q, Allow-Credentials %q; want neither", got, creds)
			}
		})
	}
}

func TestIntrospectionAndSuggestionsCanBeSwitchedOff(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	on := newGateway(t, up, nil)
	off := newGateway(t, up, map[string]string{"GRAPHQL_INTROSPECTION": "false", "GRAPHQL_IDE": "false"})

	on.post(t, "{ __schema { queryType { name } } }", nil).ok(t, nil)
	misspelt := "{ topAcounts { nodes { wid } } }"
	if r := on.post(t, misspelt, nil); len(r.Errors) == 0 || !strings.Contains(r.Errors[0].Message, "Did you mean") {
		t.Errorf("with introspection on, a misspelt field should be answered with a suggestion: %+v", r.Errors)
	}
	if r := off.post(t, misspelt, nil); len(r.Errors) == 0 || strings.Contains(r.Errors[0].Message, "Did you mean") {
		t.Errorf("with introspection off, suggestions would leak the schema: %+v", r.Errors)
	}
	if resp, _ := get(t, on.url+"/", nil); resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("IDE: status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp, _ := get(t, off.url+"/", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("IDE switched off: status %d, want 404", resp.StatusCode)
	}
}

// Switching introspection off, as production should, is the operator's choice: a client asking
// for the schema is told so in a validation error, and the gateway logs nothing about it.
func TestIntrospectionSwitchedOffIsTheCallersErrorNotTheGateways(t *testing.T) {
	t.Parallel()
	printed, log, _ := runWithLog(t, map[string]string{"ADDR": "127.0.0.1:0", "GRAPHQL_INTROSPECTION": "false"})
	var base string
	for _, line := range printed {
		if strings.Contains(line, "gateway serving") {
			base = regexp.MustCompile(`http://\S+`).FindString(line)
		}
	}
	gw := &testGateway{url: base}
	for _, tc := range []struct {
		name, query, field string
	}{
		{"the schema", "query Schema { __schema { queryType { name } } }", "__schema"},
		{"a type", `query Type { __type(name: "Query") { name } }`, "__type"},
		{"the schema beside a field", "query Both { viewer { advisorId } __schema { types { name } } }", "__schema"},
	} {
		for _, accept := range []struct {
			mediaType string
			status    int
		}{{"application/graphql-response+json", http.StatusBadRequest}, {"application/json", http.StatusOK}} {
			t.Run(tc.name+" as "+accept.mediaType, func(t *testing.T) {
				body, _ := json.Marshal(map[string]any{"query": tc.query})
				req, _ := http.NewRequest(http.MethodPost, gw.url+"/graphql", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", accept.mediaType)
				r := gw.do(t, req)
				r.wantError(t, "GRAPHQL_VALIDATION_FAILED", `Introspection is disabled on this gateway: "`+tc.field+`" is not served.`)
				if r.status != accept.status || string(r.Data) != "" && string(r.Data) != "null" {
					t.Errorf("status %d, data %s; want %d and no data: the operation must not run", r.status, r.Data, accept.status)
				}
			})
		}
	}
	// __typename tells nothing of the schema and normalized caches need it.
	gw.post(t, "query Typename { __typename viewer { __typename } }", nil).ok(t, nil)
	for line := range strings.Lines(log.String()) {
		if level := logValue(line, "level"); level == "ERROR" || level == "WARN" {
			t.Errorf("a refused introspection is logged as the gateway's fault: %s", line)
		}
	}
}

// readAfterStart gets a readiness URL of a gateway just started, once its event hub has read
// the log for the first time (until then it is rightly not ready), or after 10 s.
func readAfterStart(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, body := get(t, url, nil)
		if !strings.Contains(string(body), "has not been read yet") || time.Now().After(deadline) {
			return resp, body
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Readiness is what this replica can do (events need the store); the upstream's state is shown
// with ?verbose but never takes the replica, and its webhook receiver, out of a load balancer.
func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	if resp, body := get(t, gw.url+"/healthz", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz: %d %s", resp.StatusCode, body)
	}
	if resp, body := readAfterStart(t, gw.url+"/readyz?verbose"); resp.StatusCode != http.StatusOK ||
		!contains(string(body), `"events":"ok"`, `"advisories":{"advisor":"ok"}`) {
		t.Errorf("/readyz?verbose with the upstream up: %d %s", resp.StatusCode, body)
	}

	wrongToken := newGateway(t, up, map[string]string{"ADVISOR_ACCESS_TOKEN": "wrong"})
	if resp, body := readAfterStart(t, wrongToken.url+"/readyz?verbose"); resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Access Denied") {
		t.Errorf("/readyz?verbose with refused credentials: %d %s; want 200 naming the refusal", resp.StatusCode, body)
	}
	up.Close()
	for _, path := range []string{"/readyz", "/readyz?verbose"} {
		resp, body := get(t, gw.url+path, nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"status":"ok"`) {
			t.Errorf("%s with the upstream down: %d %s; want 200: this replica still receives webhooks and serves events", path, resp.StatusCode, body)
		}
		if strings.Contains(string(body), up.URL) || strings.Contains(string(body), strings.TrimPrefix(up.URL, "http://")) {
			t.Errorf("%s shows the upstream's address: %s", path, body)
		}
		if path == "/readyz?verbose" && !strings.Contains(string(body), `"advisor":"The Advisor service could not be reached"`) {
			t.Errorf("/readyz?verbose with the upstream down does not say so: %s", body)
		}
	}
	if resp, _ := get(t, gw.url+"/healthz", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz must not depend on the upstream: %d", resp.StatusCode)
	}
}

func TestMetricsCountUpstreamRequestsAndOperations(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := up.family(t, "METRICS", 4)
	gw.post(t, familyQuery, map[string]any{"wid": wid}).ok(t, nil)
	gw.post(t, `query Broken { topAccount(wid: "nope") { contact(id: "a", externalId: "b") { __typename } } }`, nil)
	_, body := get(t, gw.url+"/metrics", nil)
	for _, want := range []string{
		`advisor_upstream_requests_total{operation="get_top_account",status="200"} 1`,
		`advisor_upstream_requests_total{operation="list_contacts",status="200"} 1`,
		`advisor_upstream_requests_total{operation="get_top_account",status="404"} 1`,
		`graphql_operations_total{operation="Family",outcome="ok"} 1`,
		`graphql_operation_duration_seconds_bucket{operation="Family",outcome="ok",le=`,
		`advisor_upstream_request_duration_seconds_count{operation="list_contacts"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// stubUpstream answers the listed paths with fixed JSON bodies and 404 elsewhere, to give the
// gateway what the sandbox never would.
func stubUpstream(t *testing.T, routes map[string]string) *upstream {
	t.Helper()
	return &upstream{sandboxtest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := routes[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			body = `{"message":"Container not found"}`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))}
}

func TestADanglingReferenceIsNullAndTheQuerySucceeds(t *testing.T) {
	t.Parallel()
	up := stubUpstream(t, map[string]string{
		"/v2/top-accounts/w1": `{"wid":"w1","external_id":"F","name":"F"}`,
		"/v2/top-accounts/w1/contacts/": `{"contacts":[
			{"id":"1","external_id":"ann","type":"Individual","first_name":"Ann"},
			{"id":"2","external_id":"t","type":"Trust","legal_name":"T","trust_creator":["ann","gone"]}]}`,
	})
	gw := newGateway(t, up, nil)
	var got struct {
		TopAccount struct {
			Contacts []struct {
				TrustCreators []struct {
					ExternalID string
					Contact    *struct{ DisplayName string }
				}
			}
			Relationships []struct {
				Target struct {
					ExternalID string
					Contact    *struct{ DisplayName string }
				}
			}
		}
	}
	gw.post(t, `{ topAccount(wid: "w1") {
		contacts { ... on Trust { trustCreators { externalId contact { ... on ContactCard { displayName } } } } }
		relationships { target { externalId contact { ... on ContactCard { displayName } } } }
	} }`, nil).ok(t, &got)
	refs := got.TopAccount.Contacts[1].TrustCreators
	if len(refs) != 2 || refs[0].Contact == nil || refs[0].Contact.DisplayName != "Ann" || refs[1].ExternalID != "gone" || refs[1].Contact != nil {
		t.Errorf("trust creators %+v, want Ann resolved and \"gone\" null", refs)
	}
	rels := got.TopAccount.Relationships
	if len(rels) != 2 || rels[1].Target.ExternalID != "gone" || rels[1].Target.Contact != nil {
		t.Errorf("relationships %+v, want the edge to \"gone\" with a null contact", rels)
	}
}

func TestUpstreamFailuresGetCodesAndLeakNothing(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	down := newUpstream(t, true)
	downURL := down.URL
	down.Close()
	odd := stubUpstream(t, map[string]string{
		"/v2/top-accounts/w1/contacts/": `{"contacts":[{"id":"1","type":"Hologram"}]}`,
		"/v2/top-accounts/w1":           `{"wid":"w1","external_id":"F","name":"F"}`,
	})
	for _, tc := range []struct {
		name    string
		env     map[string]string
		query   string
		code    string
		message string
	}{
		{"refused credentials are FORBIDDEN", map[string]string{"ADVISOR_ACCESS_TOKEN": "wrong-secret-token"},
			`{ topAccounts { nodes { wid } } }`, "FORBIDDEN", "Access Denied"},
		{"an upstream that does not answer is UPSTREAM_UNAVAILABLE", map[string]string{"ADVISOR_BASE_URL": downURL, "UPSTREAM_TIMEOUT": "1s"},
			`{ topAccounts { nodes { wid } } }`, "UPSTREAM_UNAVAILABLE", "The Advisor service could not be reached"},
		{"a card of a type the gateway does not know is INTERNAL", map[string]string{"ADVISOR_BASE_URL": odd.URL},
			`{ topAccount(wid: "w1") { contacts { __typename } } }`, "INTERNAL", "Internal error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw := newGateway(t, up, tc.env)
			r := gw.post(t, tc.query, nil)
			e := r.wantError(t, tc.code, tc.message)
			raw, _ := json.Marshal(r.Errors)
			for _, secret := range []string{"wrong-secret-token", upstreamToken, up.URL, downURL, odd.URL, "Hologram"} {
				if strings.Contains(string(raw), secret) {
					t.Errorf("the error shows %q: %s", secret, raw)
				}
			}
			if len(e.Path) == 0 {
				t.Errorf("the error has no path: %+v", e)
			}
		})
	}
}
