package transport

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/callerauth"
)

// lifetimeSchema answers as large as a test asks, and defers a part until the operation ends,
// for the tests of what bounds an answer's and a stream's life.
const lifetimeSchema = `
type Query {
  "A string of size bytes."
  big(size: Int!): String
  "A first part of size bytes that says more follows; the rest never comes, until the operation ends."
  deferred(size: Int!): String
}
type Subscription {
  hold: Boolean
  ticks(n: Int!, size: Int!, every: Int!): String
}
`

func lifetimeExecutor() graphql.ExecutableSchema {
	schema := gqlparser.MustLoadSchema(&ast.Source{Name: "lifetime.graphqls", Input: lifetimeSchema})
	return &graphql.ExecutableSchemaMock{
		SchemaFunc:     func() *ast.Schema { return schema },
		ComplexityFunc: func(context.Context, string, string, int, map[string]any) (int, bool) { return 0, false },
		ExecFunc: func(ctx context.Context) graphql.ResponseHandler {
			opCtx := graphql.GetOperationContext(ctx)
			f, _ := opCtx.Operation.SelectionSet[0].(*ast.Field)
			args := f.ArgumentMap(opCtx.Variables)
			switch f.Name {
			case "big":
				data, _ := json.Marshal(map[string]string{"big": strings.Repeat("x", int(args["size"].(int64)))})
				return graphql.OneShot(&graphql.Response{Data: data})
			case "deferred":
				first := true
				return func(ctx context.Context) *graphql.Response {
					if !first {
						<-ctx.Done() // as the generated executor waits for a deferred part
						return nil
					}
					first = false
					data, _ := json.Marshal(map[string]string{"deferred": strings.Repeat("x", int(args["size"].(int64)))})
					hasNext := true
					return &graphql.Response{Data: data, HasNext: &hasNext}
				}
			case "ticks":
				return ticks(int(args["n"].(int64)), int(args["size"].(int64)), time.Duration(args["every"].(int64))*time.Millisecond)
			default: // hold
				sent := false
				return func(ctx context.Context) *graphql.Response {
					if !sent {
						sent = true
						return &graphql.Response{Data: json.RawMessage(`{"hold":true}`)}
					}
					<-ctx.Done()
					return nil
				}
			}
		},
	}
}

// lifetimeServer serves lifetimeSchema through the transports with cfg, over HTTP/1.1 or, with
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
	log := slog.New(slog.DiscardHandler)
	cfg.Log = log
	cfg.Streams = NewStreams()
	if expireAfter > 0 && cfg.Authenticate == nil {
		cfg.Authenticate = func(ctx context.Context, _ http.Header) (context.Context, error) {
			return expiring(ctx, expireAfter), nil
		}
	}
	gql := handler.New(lifetimeExecutor())
	for _, tr := range New(cfg) {
		gql.AddTransport(tr)
	}
	gql.SetErrorPresenter(apperr.Presenter(log))
	gql.SetRecoverFunc(apperr.Recover(log))
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
