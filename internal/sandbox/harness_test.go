package sandbox_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sandboxtest"
)

// The conformance suite drives the sandbox over real HTTP on loopback, as integrators do. Each
// test gets its own sandbox, so tests run in parallel and never see each other's data.

const (
	testToken = "test-token"
	testUser  = "test-user"
	testPass  = "test-pass"
)

type fixture struct {
	t     *testing.T
	srv   *httptest.Server
	sb    *sandbox.Sandbox
	clock *testClock
}

// newSandbox starts an empty sandbox with test credentials, a settable clock and a file
// directory of the test's own (sandboxtest.Start). opts may change any of that; opts.Empty is ignored in favour
// of withDemo.
func newSandbox(t *testing.T, opts sandbox.Options, withDemo bool) *fixture {
	t.Helper()
	c := newTestClock()
	if opts.AccessToken == "" {
		opts.AccessToken = testToken
	}
	if opts.BasicCredentials == "" {
		opts.BasicCredentials = testUser + ":" + testPass
	}
	if opts.Now == nil {
		opts.Now = c.Now
	}
	opts.Empty = !withDemo
	s := sandboxtest.Start(t, opts)
	return &fixture{t: t, srv: s.Server, sb: s.Sandbox, clock: c}
}

// testClock is a time source that moves only when a test advances it, so that expiry and
// time stamps are tested without waiting. The sandbox's tests keep their own rather than use
// the gateway's, as they import nothing of the gateway (deps_test.go).
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

// newTestClock returns a clock at the fixed time every sandbox test starts from.
func newTestClock() *testClock {
	return &testClock{now: time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// emptySandbox is newSandbox with no data and default options.
func emptySandbox(t *testing.T) *fixture { return newSandbox(t, sandbox.Options{}, false) }

type response struct {
	status int
	header http.Header
	body   []byte
}

// encodeBody turns a test's body into bytes: a string or []byte is sent as is (so malformed
// JSON can be sent), nil sends no body, anything else is marshalled.
func encodeBody(t *testing.T, body any) io.Reader {
	t.Helper()
	switch b := body.(type) {
	case nil:
		return nil
	case string:
		return strings.NewReader(b)
	case []byte:
		return bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("marshal body: %v", err)
		}
		return bytes.NewReader(data)
	}
}

// request builds a request to path on the sandbox (or to an absolute URL) with a JSON body.
func (f *fixture) request(method, path string, body any) *http.Request {
	f.t.Helper()
	url := path
	if !strings.HasPrefix(path, "http") {
		url = f.srv.URL + path
	}
	req, err := http.NewRequest(method, url, encodeBody(f.t, body))
	if err != nil {
		f.t.Fatalf("new request: %v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// v2 sends a request with the bearer token.
func (f *fixture) v2(method, path string, body any) *response {
	f.t.Helper()
	req := f.request(method, path, body)
	req.Header.Set("Authorization", "Bearer "+testToken)
	return f.do(req)
}

// v1 sends a request with the basic credentials.
func (f *fixture) v1(method, path string, body any) *response {
	f.t.Helper()
	req := f.request(method, path, body)
	req.SetBasicAuth(testUser, testPass)
	return f.do(req)
}

func (f *fixture) do(req *http.Request) *response {
	f.t.Helper()
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatalf("read response of %s %s: %v", req.Method, req.URL.Path, err)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: data}
}

// object decodes the response as a JSON object.
func (r *response) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// decode decodes the response into v.
func (r *response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode response: %v: %s", err, r.body)
	}
}

// wantOK fails the test unless the status is 200.
func (r *response) wantOK(t *testing.T) *response {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200; body %s", r.status, r.body)
	}
	return r
}

// wantError checks an error response: its status and its {"message": ...} body.
func (r *response) wantError(t *testing.T, status int, message string) {
	t.Helper()
	if r.status != status {
		t.Errorf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if got := r.object(t)["message"]; got != message {
		t.Errorf("message %q, want %q", got, message)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
}

// str reads a string field of a decoded object.
func str(t *testing.T, m map[string]any, key string) string {
	t.Helper()
	s, ok := m[key].(string)
	if !ok {
		t.Fatalf("field %q is %v, want a string", key, m[key])
	}
	return s
}

// addTopAccount creates a top account and returns its wid.
func (f *fixture) addTopAccount(externalID, name string) string {
	f.t.Helper()
	r := f.v2("POST", "/v2/top-accounts/", map[string]any{"external_id": externalID, "name": name}).wantOK(f.t)
	return str(f.t, r.object(f.t), "wid")
}

// addContact creates a v2 contact and returns its id.
func (f *fixture) addContact(wid string, body map[string]any) string {
	f.t.Helper()
	r := f.v2("POST", "/v2/top-accounts/"+wid+"/contacts/", body).wantOK(f.t)
	return str(f.t, r.object(f.t), "id")
}

// getContact returns a v2 contact as a decoded object.
func (f *fixture) getContact(wid, id string) map[string]any {
	f.t.Helper()
	return f.v2("GET", "/v2/top-accounts/"+wid+"/contacts/"+id, nil).wantOK(f.t).object(f.t)
}

// person is the body of a minimal Individual.
func person(externalID string) map[string]any {
	return map[string]any{"type": "Individual", "external_id": externalID}
}

// addDocument creates a document and returns the upload response.
func (f *fixture) addDocument(wid string, body map[string]any) map[string]any {
	f.t.Helper()
	return f.v2("POST", "/v2/top-accounts/"+wid+"/documents/", body).wantOK(f.t).object(f.t)
}

// pdfDocument is the body of a minimal document.
func pdfDocument(name string, tags ...string) map[string]any {
	b := map[string]any{"name": name, "extension": ".pdf", "category": "family", "sub_category": "family_other"}
	if len(tags) > 0 {
		b["tags"] = tags
	}
	return b
}

// put sends file bytes to a presigned upload address.
func (f *fixture) put(uploadURI, contentType string, data []byte) *response {
	f.t.Helper()
	req, err := http.NewRequest("PUT", uploadURI, bytes.NewReader(data))
	if err != nil {
		f.t.Fatalf("new request: %v", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return f.do(req)
}
