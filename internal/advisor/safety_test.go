package advisor_test

import (
	"context"
	"encoding/base64"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/apperr"
)

func TestRedirectsAreNotFollowed(t *testing.T) {
	t.Parallel()
	const redirected = "The Advisor service answered with a redirect, which the gateway does not follow"
	// elsewhere stands for whatever a redirect points at: it must never see a request, least of
	// all one with the gateway's credentials.
	var seen, withCredentials atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		if r.Header.Get("Authorization") != "" {
			withCredentials.Add(1)
		}
	}))
	defer elsewhere.Close()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/steal?to=here", http.StatusFound)
	}))
	defer upstream.Close()
	following := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}

	for _, tc := range []struct {
		name string
		http *http.Client
		call func(*advisor.Client) error
	}{
		{"a read with the default client", nil, func(c *advisor.Client) error {
			_, err := c.TopAccount(advisor.WithCache(context.Background()), "w")
			return err
		}},
		{"a v1 read with the default client", nil, func(c *advisor.Client) error {
			_, err := c.ClientContacts(advisor.WithCache(context.Background()), advisor.ClientRef{Ref: "r"})
			return err
		}},
		{"a write with the default client", nil, func(c *advisor.Client) error {
			_, err := c.CreateTopAccount(advisor.WithCache(context.Background()), "e", "n")
			return err
		}},
		{"a ping with the default client", nil, func(c *advisor.Client) error { return c.Ping(advisor.WithCache(context.Background())) }},
		{"a read with a given client", &http.Client{}, func(c *advisor.Client) error {
			_, err := c.TopAccount(advisor.WithCache(context.Background()), "w")
			return err
		}},
		{"a read with a given client that follows redirects", following, func(c *advisor.Client) error {
			_, err := c.TopAccount(advisor.WithCache(context.Background()), "w")
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := advisor.New(advisor.Options{BaseURL: upstream.URL, AccessToken: "tok-secret-123", BasicCredentials: "user:pw-secret-123", HTTPClient: tc.http})
			if err != nil {
				t.Fatal(err)
			}
			err = tc.call(c)
			wantCode(t, err, apperr.UpstreamUnavailable, redirected)
			if e, _ := apperr.As(err); e != nil && (strings.Contains(e.Message, elsewhere.URL) || e.Outcome != "") {
				t.Errorf("got message %q outcome %q, want no address and no outcome", e.Message, e.Outcome)
			}
			if !strings.Contains(err.Error(), elsewhere.URL) {
				t.Errorf("got cause %v, want the redirect's target in it for the log", err)
			}
		})
	}
	if got := seen.Load(); got != 0 {
		t.Errorf("got %d requests at the redirect's target (%d with credentials), want 0", got, withCredentials.Load())
	}
	if following.CheckRedirect(nil, nil) != nil {
		t.Errorf("got the given client's redirect policy changed, want it left as it was")
	}
}

func TestErrorMessagesShowNoSecretsOrUpstreamAddress(t *testing.T) {
	t.Parallel()
	const (
		token    = "tok-SECRET-0123456789"
		user     = "api-user"
		password = "pw-SECRET-987654"
	)
	basic := user + ":" + password
	basic64 := base64.StdEncoding.EncodeToString([]byte(basic))
	for _, tc := range []struct {
		name   string
		status int
		body   string // {{base}} and {{host}} stand for the upstream's address
		want   string // what the caller reads, when the case pins it
	}{
		{"the raw token", http.StatusBadRequest, `{"message":"token ` + token + ` is not valid here"}`, "token REDACTED is not valid here"},
		{"the token as a header", http.StatusForbidden, `{"message":"Authorization: Bearer ` + token + ` denied"}`, "Authorization: Bearer REDACTED denied"},
		{"basic credentials as a header", http.StatusForbidden, `{"error":"got Basic ` + basic64 + `"}`, "got Basic REDACTED"},
		{"basic credentials in base64 without the prefix", http.StatusBadRequest, `{"error":{"message":"credentials ` + basic64 + `"}}`, "credentials REDACTED"},
		{"basic credentials raw", http.StatusUnprocessableEntity, `{"message":"login ` + basic + ` refused"}`, "login REDACTED refused"},
		{"the password alone", http.StatusUnprocessableEntity, "password " + password + " is wrong", "password REDACTED is wrong"},
		{"a presigned address", http.StatusBadRequest, `{"message":"upload to http://store.example/u/w/v?X-Amz-Signature=sig-SECRET first"}`, "upload to http://store.example/u/w/v?REDACTED first"},
		{"the upstream's base address", http.StatusNotFound, `{"message":"no {{base}}/v2/top-accounts/w here"}`, "no the Advisor service/v2/top-accounts/w here"},
		{"the upstream's address with credentials in it", http.StatusNotFound, `{"message":"see http://` + user + `:` + password + `@{{host}}/x"}`, "see the Advisor service/x"},
		{"the upstream's bare host and port", http.StatusConflict, `{"message":"served by {{host}}, twice: {{host}}.","wid":"w1"}`, "served by the Advisor service, twice: the Advisor service."},
		{"the upstream's host name", http.StatusNotFound, `{"message":"resolved 127.0.0.1 first"}`, "resolved the Advisor service first"},
		{"the token upper-cased", http.StatusBadRequest, `{"message":"token ` + strings.ToUpper(token) + ` is not valid"}`, "token REDACTED is not valid"},
		{"the token in base64", http.StatusBadRequest, `{"message":"token ` + base64.StdEncoding.EncodeToString([]byte(token)) + ` is not valid"}`, "token REDACTED is not valid"},
		{"the token cut short", http.StatusBadRequest, `{"message":"token ` + token[:14] + `... is not valid"}`, "token REDACTED... is not valid"},
		{"the upstream as localhost", http.StatusNotFound, `{"message":"no {{localhost}}/v2 here"}`, "no the Advisor service/v2 here"},
		{"a message without secrets is kept, in the schema's words", http.StatusNotFound, `{"message":"Container not found"}`, "Top account not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body := strings.ReplaceAll(tc.body, "{{base}}", srv.URL)
				body = strings.ReplaceAll(body, "{{host}}", srv.Listener.Addr().String())
				body = strings.ReplaceAll(body, "{{localhost}}", "localhost:"+strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port))
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(body))
			}))
			defer srv.Close()
			c, err := advisor.New(advisor.Options{BaseURL: srv.URL, AccessToken: token, BasicCredentials: basic})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.CreateTopAccount(advisor.WithCache(context.Background()), "e", "n")
			e, ok := apperr.As(err)
			if !ok {
				t.Fatalf("got %v, want an apperr.Error", err)
			}
			if e.Upstream == nil {
				t.Fatalf("got no upstream answer on %v", err)
			}
			for _, secret := range []string{token, password, basic64, "sig-SECRET", srv.URL, srv.Listener.Addr().String()} {
				if strings.Contains(e.Message, secret) || strings.Contains(e.Upstream.Message, secret) {
					t.Errorf("got message %q, upstream message %q, want them without %q", e.Message, e.Upstream.Message, secret)
				}
			}
			if e.Message != tc.want {
				t.Errorf("got message %q, want %q", e.Message, tc.want)
			}
			for _, secret := range []string{token, password, basic64} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("got cause %q, want it without %q", err.Error(), secret)
				}
			}
		})
	}
}
