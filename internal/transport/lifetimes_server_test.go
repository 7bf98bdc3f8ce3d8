package transport

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/callerauth"
)

// lifetimeServer serves testSchema through the transports with cfg, over HTTP/1.1 or, with
// h2, HTTP/2 over TLS. Its requests run in contexts that expire, as Authenticate's do, after
// expireAfter when it is not zero. inFlight counts the handlers that have not returned.
type lifetimeServer struct {
	*httptest.Server
	streams  *Streams
	inFlight atomic.Int64
}

func newLifetimeServer(t *testing.T, cfg Config, h2 bool, expireAfter time.Duration) *lifetimeServer {
	t.Helper()
	if cfg.KeepAlive == 0 {
		cfg.KeepAlive = time.Minute
	}
	if cfg.MaxMessageBytes == 0 {
		cfg.MaxMessageBytes = 1 << 20
	}
	cfg.Streams = NewStreams()
	if expireAfter > 0 && cfg.Authenticate == nil {
		cfg.Authenticate = func(ctx context.Context, _ http.Header) (context.Context, error) {
			return expiring(ctx, expireAfter), nil
		}
	}
	gql := testHandler(testExecutor(), cfg)
	s := &lifetimeServer{streams: cfg.Streams}
	mux := http.NewServeMux()
	mux.Handle("/graphql", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		if expireAfter > 0 && !IsWebSocket(r) {
			r = r.WithContext(expiring(r.Context(), expireAfter))
		}
		gql.ServeHTTP(w, r)
	}))
	s.Server = httptest.NewUnstartedServer(mux)
	if h2 {
		s.EnableHTTP2 = true
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(func() {
		cfg.Streams.Close()
		s.Close()
	})
	return s
}

// expiring is ctx ending after d as callerauth's Authenticate ends a context at its token's exp.
func expiring(ctx context.Context, d time.Duration) context.Context {
	authed, cancel := context.WithDeadlineCause(ctx, time.Now().Add(d), callerauth.ErrCredentialsExpired)
	context.AfterFunc(ctx, cancel)
	return authed
}
