package transport

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

const goodToken = "Bearer let-me-in"

// acceptGoodToken is an Authenticate hook that accepts only goodToken.
func acceptGoodToken(ctx context.Context, h http.Header) (context.Context, error) {
	if h.Get("Authorization") != goodToken {
		return ctx, errors.New("a valid bearer token is required")
	}
	return ctx, nil
}

func TestAuthenticateVetsConnectionInitOnWebSockets(t *testing.T) {
	srv := probeServer(t, Config{Authenticate: acceptGoodToken})
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

// A connection lives no longer than the credentials it was opened with: when the context
// Authenticate returned ends (the token's exp), the socket closes with 4403, and the client
// reconnects with fresh credentials.
func TestAWebSocketClosesWhenItsCredentialsExpire(t *testing.T) {
	expiring := func(ctx context.Context, _ http.Header) (context.Context, error) {
		authed, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		context.AfterFunc(ctx, cancel)
		return authed, nil
	}
	srv := probeServer(t, Config{Authenticate: expiring})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{protocolTransportWS}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	if err := conn.Write(ctx, websocket.MessageText, []byte(`{"type":"connection_init"}`)); err != nil {
		t.Fatal(err)
	}
	if _, data, err := conn.Read(ctx); err != nil || !strings.Contains(string(data), "connection_ack") {
		t.Fatalf("got %s, %v; want connection_ack", data, err)
	}
	_, _, err = conn.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusCode(closeForbidden) || !strings.Contains(ce.Reason, "expired") {
		t.Fatalf("got %v, want a 4403 close saying the credentials expired", err)
	}
}
