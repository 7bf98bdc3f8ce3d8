package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/familyload"
	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sandboxtest"
	"github.com/advisorhq/gateway/internal/testnpm"
)

// The gateway's end-to-end tests build it through this package, as the command does, on a
// loopback port, against a sandbox behind a server that counts what the gateway asks of it.

// repoRoot is the module's root as seen from this package's directory, where its tests run:
// the README, docs/ and other packages' files are read from there.
const repoRoot = "../.."

const (
	upstreamToken = "upstream-token"
	upstreamBasic = "gw:upstream-pass"
	webhookKey    = "test-webhook-key-0123456789"
)

// upstream is a sandbox (or, from stubUpstream, a stand-in) that records every request made to
// it (sandboxtest).
type upstream struct {
	*sandboxtest.Server
}

// newUpstream starts a sandbox with the demo data (or none) and a fixed seed.
func newUpstream(t testing.TB, demo bool) *upstream {
	t.Helper()
	return startUpstream(t, sandbox.Options{Seed: 11, Empty: !demo})
}

// startUpstream starts a sandbox with opts and the gateway's upstream credentials.
func startUpstream(t testing.TB, opts sandbox.Options) *upstream {
	t.Helper()
	opts.AccessToken, opts.BasicCredentials = upstreamToken, upstreamBasic
	return &upstream{sandboxtest.Start(t, opts)}
}

// rest calls the sandbox directly, as a test's way to arrange data.
func (u *upstream) rest(t testing.TB, method, path string, body any) map[string]any {
	t.Helper()
	return sandboxJSON(t, method, u.URL+path, body, func(r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+upstreamToken)
	})
}

// sandboxJSON sends body as JSON to a sandbox endpoint, authenticated by auth, and returns
// the answer, which must be 200.
func sandboxJSON(t testing.TB, method, url string, body any, auth func(*http.Request)) map[string]any {
	t.Helper()
	req := jsonRequest(method, url, body)
	auth(req)
	status, out := doJSON(t, req)
	if status != http.StatusOK {
		t.Fatalf("%s %s: status %d: %v", method, url, status, out)
	}
	return out
}

// jsonRequest is a request carrying body as JSON.
func jsonRequest(method, url string, body any) *http.Request {
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, url, bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	return req
}

// doJSON sends req and returns the status and the decoded JSON answer, whatever the status.
func doJSON(t testing.TB, req *http.Request) (int, map[string]any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// testGateway is a running gateway, as the tests reach it.
type testGateway struct {
	url string
	up  *upstream
}

// newGateway runs the gateway against up; env adds to or overrides its settings.
func newGateway(t testing.TB, up *upstream, env map[string]string) *testGateway {
	t.Helper()
	settings := map[string]string{
		"ADDR":                      "127.0.0.1:0",
		"ADVISOR_BASE_URL":          up.URL,
		"ADVISOR_FIRM":              sandbox.DemoFirmID,
		"ADVISOR_ACCESS_TOKEN":      upstreamToken,
		"ADVISOR_BASIC_CREDENTIALS": upstreamBasic,
		"WEBHOOK_API_KEY":           webhookKey,
		"AUTH_DISABLED":             "true",
	}
	for k, v := range env {
		settings[k] = v
	}
	return &testGateway{url: started(t, nil, settings, "gateway serving"), up: up}
}

// gqlError is one error of a GraphQL response.
type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// result is a GraphQL response.
type result struct {
	status int
	header http.Header
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

// post sends a GraphQL operation as JSON.
func (g *testGateway) post(t testing.TB, query string, vars map[string]any) *result {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, g.url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return g.do(t, req)
}

func (g *testGateway) do(t testing.TB, req *http.Request) *result {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	r := &result{status: resp.StatusCode, header: resp.Header}
	if err := json.Unmarshal(data, r); err != nil {
		t.Fatalf("response is not JSON (status %d): %s", resp.StatusCode, data)
	}
	return r
}

// ok fails the test unless the response has no errors, and decodes its data into v.
func (r *result) ok(t testing.TB, v any) {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %+v", r.Errors)
	}
	if v != nil {
		if err := json.Unmarshal(r.Data, v); err != nil {
			t.Fatalf("decode data: %v: %s", err, r.Data)
		}
	}
}

// wantError checks that the response carries exactly one error with this code and message.
func (r *result) wantError(t testing.TB, code, message string) gqlError {
	t.Helper()
	if len(r.Errors) != 1 {
		t.Fatalf("got %d errors %+v, want one %s %q", len(r.Errors), r.Errors, code, message)
	}
	e := r.Errors[0]
	if e.Extensions["code"] != code || message != "" && e.Message != message {
		t.Errorf("got %v %q, want %s %q", e.Extensions["code"], e.Message, code, message)
	}
	return e
}

// family arranges a top account with n cards (familyload.Seed: every card type, references
// covering every relationship field) and returns its wid.
func (u *upstream) family(t testing.TB, name string, n int) string {
	t.Helper()
	wid, err := familyload.Seed(context.Background(), http.DefaultClient, u.URL, upstreamToken, name, n)
	if err != nil {
		t.Fatal(err)
	}
	return wid
}

// familyQuery selects a top account, all its cards with every relationship field, and the
// whole family graph: the query issue 28's load test sends too.
const familyQuery = familyload.Query

// contains reports whether s has every one of parts.
func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// npmInstall installs a test client's pinned packages on first use, probe among them.
func npmInstall(t *testing.T, dir, probe string) {
	t.Helper()
	// Long enough to wait for another test process's install and then, rarely, to run one.
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	if err := testnpm.Install(ctx, dir, probe); err != nil {
		t.Fatal(err)
	}
}
