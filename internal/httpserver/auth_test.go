package httpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/graph"
	"github.com/advisorhq/gateway/graph/generated"
	"github.com/advisorhq/gateway/internal/metrics"
)

const goodToken = "Bearer let-me-in"

// authServer is the handler with an Authenticate hook that accepts only goodToken.
func authServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(New(Deps{
		Log:     slog.New(slog.DiscardHandler),
		Schema:  generated.NewExecutableSchema(generated.Config{Resolvers: &graph.Resolver{}}),
		Metrics: metrics.New(),
		Authenticate: func(ctx context.Context, h http.Header) (context.Context, error) {
			if h.Get("Authorization") != goodToken {
				return ctx, errors.New("a valid bearer token is required")
			}
			return ctx, nil
		},
		Config: Config{Transport: testTransport()},
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestAuthenticateRefusesHTTPRequestsWithoutCredentials(t *testing.T) {
	srv := authServer(t)
	tests := []struct {
		name   string
		header string
		status int
	}{
		{"no credentials", "", http.StatusUnauthorized},
		{"wrong credentials", "Bearer guess", http.StatusUnauthorized},
		{"good credentials", goodToken, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", strings.NewReader(`{"query":"{ __typename }"}`))
			req.Header.Set("Content-Type", "application/json")
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if tt.status == http.StatusUnauthorized {
				var out struct {
					Errors []struct {
						Message    string
						Extensions struct{ Code string }
					}
				}
				if err := json.Unmarshal(body, &out); err != nil || len(out.Errors) != 1 ||
					out.Errors[0].Extensions.Code != "UNAUTHENTICATED" || resp.Header.Get("WWW-Authenticate") == "" {
					t.Fatalf("want one UNAUTHENTICATED error and a WWW-Authenticate header, got %s %v", body, resp.Header)
				}
			}
		})
	}
}
