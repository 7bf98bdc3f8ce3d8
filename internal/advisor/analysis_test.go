package advisor_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/apperr"
)

// The project's decision on the analysis start endpoint: "POST
// {base_url}/v2/top-accounts/{wid}/documents/{vault_id}/analysis with optional
// {"start_tax_job": true}, returns {"correlation_id": "..."}".
func TestStartAnalysisPostsTheDecidedRequestOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		tax      bool
		status   int
		answer   string
		wantBody string
		wantCode apperr.Code
		wantID   string
	}{
		{"the estate analysis sends no body", false, 200, `{"correlation_id":"c-1"}`, "", "", "c-1"},
		{"the tax job sends start_tax_job", true, 200, `{"correlation_id":"c-2"}`, `{"start_tax_job":true}`, "", "c-2"},
		{"404 Vault doesn't exist is NOT_FOUND", false, 404, `{"message":"Vault doesn't exist"}`, "", apperr.NotFound, ""},
		{"400 is BAD_USER_INPUT", true, 400, `{"message":"start_tax_job must be a boolean"}`, `{"start_tax_job":true}`, apperr.BadUserInput, ""},
		{"a 503 is not retried: a second start would be a second analysis", false, 503, `{"message":"Internal server error"}`, "", apperr.UpstreamUnavailable, ""},
		{"an answer without a correlation id ties no events to the start", false, 200, `{}`, "", apperr.UpstreamUnavailable, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				calls = append(calls, r.Method+" "+r.URL.EscapedPath()+" "+r.Header.Get("Authorization")+" "+string(body))
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.answer))
			}))
			defer srv.Close()
			c, _ := advisor.New(advisor.Options{BaseURL: srv.URL, AccessToken: "tok", Backoff: time.Millisecond})
			got, err := c.StartAnalysis(advisor.WithCache(context.Background()), "w 1", "v1", tc.tax)
			want := "POST /v2/top-accounts/w%201/documents/v1/analysis Bearer tok " + tc.wantBody
			if len(calls) != 1 || calls[0] != want {
				t.Errorf("requests %q, want one %q", calls, want)
			}
			if apperr.CodeOf(err) != tc.wantCode && !(tc.wantCode == "" && err == nil) {
				t.Errorf("error %v, want code %q", err, tc.wantCode)
			}
			if got.CorrelationID != tc.wantID {
				t.Errorf("correlation id %q, want %q", got.CorrelationID, tc.wantID)
			}
		})
	}
}
