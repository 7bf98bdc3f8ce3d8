package advisor_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
)

// recorder is an upstream that answers every request with an empty object and keeps the raw
// paths it was asked for.
type recorder struct {
	mu    sync.Mutex
	paths []string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.paths = append(r.paths, req.Method+" "+req.URL.EscapedPath())
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{}`))
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.paths
	r.paths = nil
	return p
}

// idCalls are the client's calls that put an id in the service's path, each with the argument
// that carries the id under test; the others are good.
func idCalls(c *advisor.Client) map[string]struct {
	arg  string
	call func(ctx context.Context, id string) error
} {
	type idCall = struct {
		arg  string
		call func(ctx context.Context, id string) error
	}
	body := []byte(`{}`)
	ref := func(id string) advisor.ClientRef { return advisor.ClientRef{Ref: id} }
	return map[string]idCall{
		"TopAccount": {"wid", func(ctx context.Context, id string) error { _, err := c.TopAccount(ctx, id); return err }},
		"UpdateTopAccount": {"wid", func(ctx context.Context, id string) error {
			n := "n"
			_, err := c.UpdateTopAccount(ctx, id, nil, &n)
			return err
		}},
		"Contacts":       {"wid", func(ctx context.Context, id string) error { _, err := c.Contacts(ctx, id); return err }},
		"Contact wid":    {"wid", func(ctx context.Context, id string) error { _, err := c.Contact(ctx, id, "c1"); return err }},
		"Contact id":     {"id", func(ctx context.Context, id string) error { _, err := c.Contact(ctx, "w1", id); return err }},
		"CreateContact":  {"wid", func(ctx context.Context, id string) error { _, err := c.CreateContact(ctx, id, body); return err }},
		"UpdateContact":  {"id", func(ctx context.Context, id string) error { _, err := c.UpdateContact(ctx, "w1", id, body); return err }},
		"ClientContacts": {"ref", func(ctx context.Context, id string) error { _, err := c.ClientContacts(ctx, ref(id)); return err }},
		"ClientContact ref": {"ref", func(ctx context.Context, id string) error {
			_, err := c.ClientContact(ctx, ref(id), "c1")
			return err
		}},
		"ClientContact id": {"id", func(ctx context.Context, id string) error {
			_, err := c.ClientContact(ctx, ref("CL-1"), id)
			return err
		}},
		"CreateClientContact": {"ref", func(ctx context.Context, id string) error {
			_, err := c.CreateClientContact(ctx, ref(id), body)
			return err
		}},
		"UpdateClientContact": {"id", func(ctx context.Context, id string) error {
			_, err := c.UpdateClientContact(ctx, ref("CL-1"), id, body)
			return err
		}},
		"Documents": {"wid", func(ctx context.Context, id string) error {
			_, err := c.Documents(ctx, id, advisorspec.DocumentQuery{Limit: 10})
			return err
		}},
		"Document wid":     {"wid", func(ctx context.Context, id string) error { _, err := c.Document(ctx, id, "v1"); return err }},
		"Document vaultId": {"vaultId", func(ctx context.Context, id string) error { _, err := c.Document(ctx, "w1", id); return err }},
		"CreateDocument":   {"wid", func(ctx context.Context, id string) error { _, err := c.CreateDocument(ctx, id, body); return err }},
		"UpdateDocument": {"vaultId", func(ctx context.Context, id string) error {
			_, err := c.UpdateDocument(ctx, "w1", id, body)
			return err
		}},
		"DeleteDocument wid": {"wid", func(ctx context.Context, id string) error { return c.DeleteDocument(ctx, id, "v1") }},
		"DeleteDocument":     {"vaultId", func(ctx context.Context, id string) error { return c.DeleteDocument(ctx, "w1", id) }},
		"DeleteClient":       {"externalId", func(ctx context.Context, id string) error { return c.DeleteClient(ctx, ref(id)) }},
	}
}

func TestIDsThatAreNoPathSegmentAreRefusedBeforeTheUpstream(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c, err := advisor.New(advisor.Options{BaseURL: srv.URL, AccessToken: "tok-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{
		"empty":                   "",
		"dot":                     ".",
		"dot-dot":                 "..",
		"a slash":                 "a/b",
		"a leading slash":         "/w1",
		"a backslash":             `..\..`,
		"percent-encoded dots":    "%2e%2e",
		"percent-encoded slash":   "a%2Fb",
		"a newline":               "w1\nX-Injected: 1",
		"a NUL":                   "w1\x00",
		"a DEL":                   "w1\x7f",
		"a bidi override":         "w1\u202e",
		"a zero-width space":      "w\u200b1",
		"invalid UTF-8":           "w\xff1",
		"256 characters":          strings.Repeat("w", 256),
		"a megabyte":              strings.Repeat("w", 1<<20),
		"65 multibyte characters": strings.Repeat("é", 65),
	}
	for name, tc := range idCalls(c) {
		for what, id := range bad {
			if tc.arg == "id" && what == "65 multibyte characters" {
				continue // contact ids may be longer than 64; "256 characters" covers them
			}
			t.Run(name+"/"+what, func(t *testing.T) {
				err := tc.call(advisor.WithCache(context.Background()), id)
				e, ok := apperr.As(err)
				if !ok || e.Code != apperr.BadUserInput || e.Field != tc.arg || !strings.HasPrefix(e.Message, tc.arg+" ") {
					t.Fatalf("got %v, want BAD_USER_INPUT about %s", err, tc.arg)
				}
				if len(e.Message) > 200 {
					t.Errorf("the message is %d bytes long: it should not quote the id back", len(e.Message))
				}
			})
		}
	}
	if paths := rec.take(); len(paths) > 0 {
		t.Errorf("the upstream was asked %v", paths)
	}
}

func TestGoodIDsReachTheUpstreamEscaped(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c, err := advisor.New(advisor.Options{BaseURL: srv.URL, AccessToken: "tok-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, id, want string
	}{
		{"an ordinary wid", "w1", "GET /v2/top-accounts/w1"},
		{"three dots are a name", "...", "GET /v2/top-accounts/..."},
		{"a dotted name", "a.b", "GET /v2/top-accounts/a.b"},
		{"a space", "Smith family", "GET /v2/top-accounts/Smith%20family"},
		{"a question mark and a hash", "a?b#c", "GET /v2/top-accounts/a%3Fb%23c"},
		{"64 characters", strings.Repeat("w", 64), "GET /v2/top-accounts/" + strings.Repeat("w", 64)},
		{"64 multibyte characters", strings.Repeat("é", 64), "GET /v2/top-accounts/" + strings.Repeat("%C3%A9", 64)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.TopAccount(advisor.WithCache(context.Background()), tc.id); err != nil {
				t.Fatal(err)
			}
			if got := rec.take(); len(got) != 1 || got[0] != tc.want {
				t.Errorf("the upstream was asked %v, want [%s]", got, tc.want)
			}
		})
	}
	if err := c.DeleteDocument(advisor.WithCache(context.Background()), "w 1", "v?1"); err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); len(got) != 1 || got[0] != "DELETE /v2/top-accounts/w%201/documents/v%3F1" {
		t.Errorf("the upstream was asked %v, want every segment escaped", got)
	}
}
