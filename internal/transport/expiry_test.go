package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/advisorhq/gateway/internal/apperr"
)

// Every stream ends when its caller's token does, with a last word the client understands: an
// SSE stream (whether it took its connection over, on HTTP/1.1, or not, on HTTP/2) with a
// `next` carrying an UNAUTHENTICATED error and `complete`; a multipart @defer answer with a last
// part carrying that error and the closing boundary; a WebSocket with 4403. (Before, an SSE
// stream over HTTP/1.1 went on delivering: it ran in a context that had dropped the request's
// deadline with its end.)
func TestEveryStreamEndsWhenItsCallersTokenExpires(t *testing.T) {
	const expiry = 400 * time.Millisecond
	for _, tc := range []struct {
		name string
		h2   bool
		// follow opens the stream and reads it to its end, returning its last word.
		follow func(t *testing.T, srv *lifetimeServer) string
	}{
		{"SSE over HTTP/1.1", false, func(t *testing.T, srv *lifetimeServer) string {
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			postRaw(t, conn, "text/event-stream", `{"query":"subscription { hold }"}`)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			return readRest(t, resp)
		}},
		{"SSE over HTTP/2", true, func(t *testing.T, srv *lifetimeServer) string {
			return postH2(t, srv, "text/event-stream", `{"query":"subscription { hold }"}`)
		}},
		{"multipart @defer over HTTP/1.1", false, func(t *testing.T, srv *lifetimeServer) string {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", strings.NewReader(`{"query":"{ deferred(size: 10) }"}`))
			req.Header.Set("Accept", "multipart/mixed")
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer http.DefaultClient.CloseIdleConnections()
			return readRest(t, resp)
		}},
		{"multipart @defer over HTTP/2", true, func(t *testing.T, srv *lifetimeServer) string {
			return postH2(t, srv, "multipart/mixed", `{"query":"{ deferred(size: 10) }"}`)
		}},
		{"WebSocket", false, func(t *testing.T, srv *lifetimeServer) string {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/graphql",
				&websocket.DialOptions{Subprotocols: []string{protocolTransportWS}})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.CloseNow()
			for _, m := range []string{`{"type":"connection_init"}`, `{"id":"h","type":"subscribe","payload":{"query":"subscription { hold }"}}`} {
				if err := conn.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
					t.Fatal(err)
				}
			}
			for {
				if _, _, err := conn.Read(ctx); err != nil {
					var ce websocket.CloseError
					if !errors.As(err, &ce) {
						t.Fatalf("the socket ended with %v, want a close frame", err)
					}
					return fmt.Sprintf("%d %s", ce.Code, ce.Reason)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newLifetimeServer(t, Config{}, tc.h2, expiry)
			start := time.Now()
			last := tc.follow(t, srv)
			if took := time.Since(start); took > expiry+2*time.Second {
				t.Errorf("the stream ended %v after it opened, want about %v", took, expiry)
			}
			switch tc.name {
			case "WebSocket":
				if want := fmt.Sprintf("%d Forbidden: the caller's token has expired", closeForbidden); last != want {
					t.Errorf("closed with %q, want %q", last, want)
				}
			default:
				if !strings.Contains(last, `"code":"`+string(apperr.Unauthenticated)+`"`) || !strings.Contains(last, "the caller's token has expired") {
					t.Errorf("the stream ended with %q, want an %s error saying the token expired", last, apperr.Unauthenticated)
				}
				if strings.HasPrefix(tc.name, "SSE") && !strings.HasSuffix(last, "event: complete\ndata: \n\n") {
					t.Errorf("the SSE stream ended with %q, want complete after the error", last)
				}
				if strings.HasPrefix(tc.name, "multipart") && (!strings.HasSuffix(last, "\r\n-----\r\n") || !strings.Contains(last, `"hasNext":false`)) {
					t.Errorf("the multipart answer ended with %q, want a last part (hasNext false) and the closing boundary", last)
				}
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			if err := srv.streams.Wait(ctx); err != nil || !eventually(func() bool { return srv.inFlight.Load() == 0 }) {
				t.Errorf("streams or handlers still running after the expiry: %v, %d", err, srv.inFlight.Load())
			}
		})
	}
}

// readRest reads resp's body to its end and returns its last 300 bytes.
func readRest(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the stream: %v (got %q)", err, body)
	}
	return string(body[max(0, len(body)-300):])
}

// postH2 posts body over HTTP/2 accepting accept, and reads the answer to its end.
func postH2(t *testing.T, srv *lifetimeServer, accept, body string) string {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs},
		ForceAttemptHTTP2: true,
	}, Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", strings.NewReader(body))
	req.Header.Set("Accept", accept)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ProtoMajor != 2 {
		t.Fatalf("answered over HTTP/%d, want HTTP/2", resp.ProtoMajor)
	}
	return readRest(t, resp)
}
