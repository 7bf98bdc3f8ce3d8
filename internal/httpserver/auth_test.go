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
	"time"

	"github.com/coder/websocket"

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
		Authenticate: func(_ context.Context, h http.Header) error {
			if h.Get("Authorization") != goodToken {
				return errors.New("a valid bearer token is required")
			}
			return nil
		},
		Config: Config{MaxRequestBytes: 1 << 20, KeepAlive: time.Minute},
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

func TestAuthenticateVetsConnectionInitOnWebSockets(t *testing.T) {
	srv := authServer(t)
	tests := []struct {
		name     string
		protocol string
		header   http.Header
		payload  map[string]any
		accepted bool
	}{
		{"no credentials: 4403", protocolTransportWS, nil, nil, false},
		{"wrong token in the payload: 4403", protocolTransportWS, nil, map[string]any{"Authorization": "Bearer guess"}, false},
		{"token in the payload", protocolTransportWS, nil, map[string]any{"Authorization": goodToken}, true},
		{"token in the payload's headers", protocolTransportWS, nil, map[string]any{"headers": map[string]any{"Authorization": goodToken}}, true},
		{"token on the upgrade request", protocolTransportWS, http.Header{"Authorization": {goodToken}}, nil, true},
		{"legacy protocol, no credentials", protocolLegacy, nil, nil, false},
		{"legacy protocol, token in the payload", protocolLegacy, nil, map[string]any{"Authorization": goodToken}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/graphql"
			conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{tt.protocol}, HTTPHeader: tt.header})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.CloseNow()
			msg, _ := json.Marshal(map[string]any{"type": "connection_init", "payload": tt.payload})
			if err := conn.Write(ctx, websocket.MessageText, msg); err != nil {
				t.Fatal(err)
			}
			var got []string
			for {
				_, data, err := conn.Read(ctx)
				if err != nil {
					status := websocket.CloseStatus(err)
					if tt.accepted {
						t.Fatalf("closed with %d after %v, want connection_ack", status, got)
					}
					want := websocket.StatusCode(closeForbidden)
					if tt.protocol == protocolLegacy {
						want = websocket.StatusPolicyViolation
						if len(got) == 0 || got[0] != "connection_error" {
							t.Fatalf("legacy clients get connection_error before the close, got %v", got)
						}
					}
					if status != want {
						t.Fatalf("close code %d, want %d", status, want)
					}
					return
				}
				var m struct{ Type string }
				_ = json.Unmarshal(data, &m)
				got = append(got, m.Type)
				if m.Type == "connection_ack" {
					if !tt.accepted {
						t.Fatal("connection_ack for refused credentials")
					}
					return
				}
			}
		})
	}
}
