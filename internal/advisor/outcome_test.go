package advisor_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/apperr"
)

// upstreams of the outcome test, each a way for an answer not to come.
func hangingUpstream(t *testing.T) string {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // past the client's deadline: the request arrived, its answer never does
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	return srv.URL
}

func brokenUpstream(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The request arrived whole; the connection drops before any answer.
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func closedUpstream(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close() // its port now refuses connections: nothing can have been sent
	return srv.URL
}

func statusUpstream(status int) func(*testing.T) string {
	return func(t *testing.T) string {
		t.Helper()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
}

func TestAWriteWhoseAnswerNeverCameHasAnUnknownOutcome(t *testing.T) {
	t.Parallel()
	const mayHave = "the change may or may not have been applied, so check before you retry"
	write := func(c *advisor.Client) error {
		_, err := c.CreateTopAccount(advisor.WithCache(context.Background()), "e", "n")
		return err
	}
	read := func(c *advisor.Client) error {
		_, err := c.TopAccount(advisor.WithCache(context.Background()), "w")
		return err
	}
	upload := func(c *advisor.Client) error {
		return c.UploadFile(advisor.WithCache(context.Background()), c.BaseURL()+"/uploads/w/v?signature=s", "text/csv", strings.NewReader("a,b\n"), 4)
	}
	for _, tc := range []struct {
		name        string
		upstream    func(*testing.T) string
		call        func(*advisor.Client) error
		wantOutcome string
		wantMessage string
	}{
		{"a write that timed out", hangingUpstream, write, apperr.OutcomeUnknown, "The Advisor service did not answer in time; " + mayHave},
		{"a write whose connection broke", brokenUpstream, write, apperr.OutcomeUnknown, "The connection to the Advisor service broke before it answered; " + mayHave},
		{"a write that met a proxy's 502", statusUpstream(http.StatusBadGateway), write, apperr.OutcomeUnknown, "The Advisor service failed to answer; " + mayHave},
		{"a write that met a proxy's 504", statusUpstream(http.StatusGatewayTimeout), write, apperr.OutcomeUnknown, "The Advisor service failed to answer; " + mayHave},
		{"an upload that timed out", hangingUpstream, upload, apperr.OutcomeUnknown, "The Advisor service did not answer in time; " + mayHave},
		{"a write that could not connect was not applied", closedUpstream, write, "", "The Advisor service could not be reached"},
		{"an upload that could not connect was not applied", closedUpstream, upload, "", "The Advisor service could not be reached"},
		{"a write the service refused with 503", statusUpstream(http.StatusServiceUnavailable), write, "", "The Advisor service failed to answer"},
		{"a read that timed out has no outcome", hangingUpstream, read, "", "The Advisor service did not answer in time"},
		{"a read whose connection broke has no outcome", brokenUpstream, read, "", "The Advisor service could not be reached"},
		{"a read that met a 502 has no outcome", statusUpstream(http.StatusBadGateway), read, "", "The Advisor service failed to answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := advisor.New(advisor.Options{BaseURL: tc.upstream(t), AccessToken: "tok", Timeout: 100 * time.Millisecond,
				UploadTimeout: 100 * time.Millisecond, Attempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			err = tc.call(c)
			wantCode(t, err, apperr.UpstreamUnavailable, tc.wantMessage)
			if e, _ := apperr.As(err); e != nil && e.Outcome != tc.wantOutcome {
				t.Errorf("got outcome %q, want %q (%v)", e.Outcome, tc.wantOutcome, err)
			}
		})
	}
}
