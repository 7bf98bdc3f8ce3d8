package advisor_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sandboxtest"
)

// againstSandbox returns a client of a demo sandbox and the sandbox's server, which records
// the requests it gets.
func againstSandbox(t *testing.T) (*advisor.Client, *sandboxtest.Server) {
	t.Helper()
	srv := sandboxtest.Start(t, sandbox.Options{AccessToken: "tok", BasicCredentials: "u:p"})
	c, err := advisor.New(advisor.Options{BaseURL: srv.URL, AccessToken: "tok", BasicCredentials: "u:p"})
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

// count is how many of the requests srv recorded are key ("METHOD /path").
func count(srv *sandboxtest.Server, key string) int {
	n := 0
	for _, r := range srv.Requests() {
		if r == key {
			n++
		}
	}
	return n
}

func wantCode(t *testing.T, err error, code apperr.Code, message string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok {
		t.Fatalf("error %v is not an apperr.Error", err)
	}
	if e.Code != code || message != "" && e.Message != message {
		t.Errorf("got %s %q, want %s %q", e.Code, e.Message, code, message)
	}
}

// wantUpstream checks the service's own words on an error that came from its answer.
func wantUpstream(t *testing.T, err error, status int, message string) {
	t.Helper()
	e, _ := apperr.As(err)
	if e == nil || e.Upstream == nil {
		t.Fatalf("error %v carries no upstream answer", err)
	}
	if e.Upstream.Status != status || e.Upstream.Message != message {
		t.Errorf("got upstream %d %q, want %d %q", e.Upstream.Status, e.Upstream.Message, status, message)
	}
}

func TestClientReadsAndWritesTheSandbox(t *testing.T) {
	t.Parallel()
	c, _ := againstSandbox(t)
	ctx := advisor.WithCache(context.Background())
	page, err := c.TopAccounts(ctx, 1, 20)
	if err != nil || page.Pagination.TotalCount < 2 {
		t.Fatalf("TopAccounts: %+v, %v", page, err)
	}
	ta, err := c.CreateTopAccount(ctx, "NEW-1", "New family")
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.CreateContact(ctx, ta.WID, []byte(`{"type":"Individual","external_id":"p1","first_name":"Pat"}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Contact(ctx, ta.WID, id)
	if err != nil || got.FirstName == nil || *got.FirstName != "Pat" {
		t.Errorf("Contact: %+v, %v", got, err)
	}
	contacts, err := c.ClientContacts(ctx, advisor.ClientRef{Ref: "CL-1001", AdvisorID: "adv-001"})
	if err != nil || len(contacts) == 0 || contacts[0].Dob == nil {
		t.Errorf("ClientContacts: %+v, %v", contacts, err)
	}
	doc, err := c.CreateDocument(ctx, ta.WID, []byte(`{"name":"n","extension":"csv","category":"family","sub_category":"family_other"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.UploadFile(ctx, doc.UploadURI, "text/csv", strings.NewReader("a,b\n"), 4); err != nil {
		t.Fatal(err)
	}
	d, err := c.Document(ctx, ta.WID, doc.VaultID)
	if err != nil || d.FileStatus != advisorspec.FileStatusUploaded || d.DownloadURI == "" {
		t.Errorf("Document after upload: %+v, %v", d, err)
	}
	if err := c.DeleteDocument(ctx, ta.WID, doc.VaultID); err != nil {
		t.Fatal(err)
	}
}

func TestClientTranslatesTheServicesErrors(t *testing.T) {
	t.Parallel()
	c, _ := againstSandbox(t)
	ctx := advisor.WithCache(context.Background())
	existing, err := c.CreateTopAccount(ctx, "TAKEN", "Taken")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateTopAccount(ctx, "TAKEN", "Again")
	wantCode(t, err, apperr.Conflict, "A top account with this externalId already exists")
	wantUpstream(t, err, http.StatusConflict, "Container with this externalId already exists")
	if e, _ := apperr.As(err); e.WID != existing.WID {
		t.Errorf("conflict wid %q, want %q", e.WID, existing.WID)
	}
	_, err = c.TopAccount(ctx, "nope")
	wantCode(t, err, apperr.NotFound, "Top account not found")
	wantUpstream(t, err, http.StatusNotFound, "Container not found")
	_, err = c.CreateContact(ctx, existing.WID, []byte(`{"type":"Trust","external_id":"t"}`))
	wantCode(t, err, apperr.BadUserInput, "legalName is required")
	wantUpstream(t, err, http.StatusBadRequest, "legal_name is required")
	_, err = c.CreateClientContact(ctx, advisor.ClientRef{Ref: "CL-1001"}, []byte(`{"type":"Trust","external_id":"t"}`))
	wantCode(t, err, apperr.BadUserInput, "legalName is required") // the v1 422
	wantUpstream(t, err, http.StatusUnprocessableEntity, "legal_name is required")

	bad, _ := advisor.New(advisor.Options{BaseURL: c.BaseURL(), AccessToken: "wrong"})
	_, err = bad.TopAccounts(ctx, 1, 1)
	wantCode(t, err, apperr.Forbidden, "Access Denied")
	if err := bad.Ping(ctx); apperr.CodeOf(err) != apperr.Forbidden {
		t.Errorf("Ping with a wrong token: %v, want FORBIDDEN", err)
	}
}

func TestErrorBodiesOfEveryShapeKeepTheirMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, contentType, body, want string }{
		{"message", "application/json", `{"message":"Container not found"}`, "Container not found"},
		{"error string", "application/json", `{"error":"Container not found"}`, "Container not found"},
		{"error object", "application/json", `{"error":{"message":"Container not found"}}`, "Container not found"},
		{"plain text", "text/plain", "Container not found\n", "Container not found"},
		{"an HTML page gives the status text", "text/html", "<html>nope</html>", "Not Found"},
		{"no body gives the status text", "", "", "Not Found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			c, _ := advisor.New(advisor.Options{BaseURL: srv.URL})
			_, err := c.TopAccount(advisor.WithCache(context.Background()), "w")
			wantCode(t, err, apperr.NotFound, advisor.SchemaMessage("", tc.want))
			wantUpstream(t, err, http.StatusNotFound, tc.want)
		})
	}
}

// flaky answers with the given statuses in turn, then 200 with an empty list.
func flaky(statuses ...int) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		if i < len(statuses) {
			w.WriteHeader(statuses[i])
			_, _ = w.Write([]byte(`{"message":"Internal server error"}`))
			return
		}
		_, _ = w.Write([]byte(`{"contacts":[],"id":"x"}`))
	})), &n
}

func TestReadsAreRetriedWritesAreNot(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		statuses  []int
		write     bool
		wantErr   apperr.Code
		wantTries int32
	}{
		{"a read is retried after 5xx until it succeeds", []int{500, 503}, false, "", 3},
		{"a read gives up after its attempts", []int{500, 502, 503}, false, apperr.UpstreamUnavailable, 3},
		{"a read is not retried after 4xx", []int{404}, false, apperr.NotFound, 1},
		{"a write is never retried", []int{503}, true, apperr.UpstreamUnavailable, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, tries := flaky(tc.statuses...)
			defer srv.Close()
			c, _ := advisor.New(advisor.Options{BaseURL: srv.URL, Backoff: time.Millisecond})
			var err error
			if tc.write {
				_, err = c.CreateContact(advisor.WithCache(context.Background()), "w", []byte(`{}`))
			} else {
				_, err = c.Contacts(advisor.WithCache(context.Background()), "w")
			}
			if apperr.CodeOf(err) != tc.wantErr && !(tc.wantErr == "" && err == nil) {
				t.Errorf("error %v, want code %q", err, tc.wantErr)
			}
			if got := tries.Load(); got != tc.wantTries {
				t.Errorf("%d requests, want %d", got, tc.wantTries)
			}
		})
	}
}

func TestAReadThatTimesOutIsRetried(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			select { // the first attempt hangs until its deadline passes
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		_, _ = w.Write([]byte(`{"contacts":[]}`))
	}))
	defer srv.Close()
	defer close(release)
	c, _ := advisor.New(advisor.Options{BaseURL: srv.URL, Timeout: 50 * time.Millisecond, Backoff: time.Millisecond})
	if _, err := c.Contacts(advisor.WithCache(context.Background()), "w"); err != nil {
		t.Errorf("Contacts: %v, want success on the second attempt", err)
	}
	if got := n.Load(); got != 2 {
		t.Errorf("%d requests, want 2", got)
	}
}

func TestCancellationStopsTheCall(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	}))
	defer srv.Close()
	c, _ := advisor.New(advisor.Options{BaseURL: srv.URL})
	ctx, cancel := context.WithCancel(advisor.WithCache(context.Background()))
	go func() { <-started; cancel() }()
	begin := time.Now()
	_, err := c.Contacts(ctx, "w")
	if apperr.CodeOf(err) != apperr.UpstreamUnavailable || !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want a cancelled UPSTREAM_UNAVAILABLE", err)
	}
	if elapsed := time.Since(begin); elapsed > 5*time.Second {
		t.Errorf("cancellation took %v", elapsed)
	}
}

func TestIdenticalReadsOfOneRequestAreMadeOnce(t *testing.T) {
	t.Parallel()
	c, hits := againstSandbox(t)
	page, err := c.TopAccounts(advisor.WithCache(context.Background()), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	wid := page.TopAccounts[0].WID
	ctx := advisor.WithCache(context.Background())
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := c.Contacts(ctx, wid); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	key := "GET /v2/top-accounts/" + wid + "/contacts/"
	if got := count(hits, key); got != 1 {
		t.Errorf("%d list requests for 20 identical reads, want 1", got)
	}
	// A write clears the request's cache, so the read after it sees the write.
	if _, err := c.CreateContact(ctx, wid, []byte(`{"type":"Individual","external_id":"new-one"}`)); err != nil {
		t.Fatal(err)
	}
	contacts, err := c.Contacts(ctx, wid)
	if err != nil {
		t.Fatal(err)
	}
	if count(hits, key) != 2 || contacts[len(contacts)-1].ExternalID != "new-one" {
		t.Errorf("after a write: %d list requests, last contact %q; want 2 and the new one", count(hits, key), contacts[len(contacts)-1].ExternalID)
	}
	// Without a request cache a read fails rather than going out once per caller.
	_, err = c.Contacts(context.Background(), wid)
	if apperr.CodeOf(err) != apperr.Internal || !errors.Is(err, advisor.ErrNoCache) {
		t.Errorf("a read without a cache: %v, want INTERNAL because of advisor.ErrNoCache", err)
	}
	if count(hits, key) != 2 {
		t.Errorf("%d list requests, want 2", count(hits, key))
	}
}

func TestCredentialsAndSignaturesNeverReachErrors(t *testing.T) {
	t.Parallel()
	c, _ := advisor.New(advisor.Options{BaseURL: "http://127.0.0.1:1", AccessToken: "tok-secret", BasicCredentials: "u:pw-secret", Timeout: time.Second, Attempts: 1})
	_, err := c.ClientContacts(advisor.WithCache(context.Background()), advisor.ClientRef{Ref: "x"})
	upload := c.UploadFile(advisor.WithCache(context.Background()), "http://127.0.0.1:1/uploads/w/v?signature=sig-secret", "text/csv", strings.NewReader("x"), 1)
	for _, e := range []error{err, upload} {
		app, _ := apperr.As(e)
		if app == nil || app.Code != apperr.UpstreamUnavailable {
			t.Fatalf("error %v, want UPSTREAM_UNAVAILABLE", e)
		}
		for _, secret := range []string{"tok-secret", "pw-secret", "sig-secret"} {
			if strings.Contains(app.Message, secret) || strings.Contains(apperr.Redact(e.Error()), secret) {
				t.Errorf("%q leaks through %v", secret, e)
			}
		}
	}
}

func TestNewRefusesABadBaseURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "advisor.example", "ftp://advisor.example", "https://u:p@advisor.example", "https://advisor.example?x=1"} {
		if _, err := advisor.New(advisor.Options{BaseURL: u}); err == nil {
			t.Errorf("New(%q) succeeded, want an error", u)
		}
	}
}

// A lent list is the list Contacts returns, read from the same answer in the request's cache;
// use's own error comes back as it is, and a failed read never calls use.
func TestALentContactListIsTheListedOneAndUsesErrorIsItsOwn(t *testing.T) {
	t.Parallel()
	c, hits := againstSandbox(t)
	ctx := advisor.WithCache(context.Background())
	page, err := c.TopAccounts(ctx, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	wid := page.TopAccounts[0].WID
	listed, err := c.Contacts(ctx, wid)
	if err != nil {
		t.Fatal(err)
	}
	var lent []advisorspec.Contact
	if err := c.LendContacts(ctx, wid, func(l []advisorspec.Contact) error { lent = slices.Clone(l); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(lent, listed) || len(listed) == 0 {
		t.Errorf("lent %d contacts, listed %d: want the same, and some", len(lent), len(listed))
	}
	if got := count(hits, "GET /v2/top-accounts/"+wid+"/contacts/"); got != 1 {
		t.Errorf("%d list requests for a list and a loan of it, want 1", got)
	}
	mine := errors.New("the caller's own")
	if err := c.LendContacts(ctx, wid, func([]advisorspec.Contact) error { return mine }); err != mine {
		t.Errorf("use failed: error %v, want use's own, unwrapped", err)
	}
	called := false
	err = c.LendContacts(ctx, "no such wid", func([]advisorspec.Contact) error { called = true; return nil })
	if apperr.CodeOf(err) != apperr.NotFound || called {
		t.Errorf("an unknown top account: error %v, use called %t; want NOT_FOUND, not called", err, called)
	}
}
