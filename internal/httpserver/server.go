// Package httpserver builds the gateway's HTTP handler: the routes, the GraphQL endpoint with
// its limits, CORS, authentication and per-operation wiring (the per-request cache, logs, metrics) over the
// transports of internal/transport, the IDE, health and readiness checks and metrics. Every
// dependency is passed in.
package httpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/trace"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/compress"
	"github.com/advisorhq/gateway/internal/gqlrun"
	"github.com/advisorhq/gateway/internal/metrics"
	"github.com/advisorhq/gateway/internal/oplimit"
	"github.com/advisorhq/gateway/internal/persisted"
	"github.com/advisorhq/gateway/internal/ratelimit"
	"github.com/advisorhq/gateway/internal/tracing"
	"github.com/advisorhq/gateway/internal/transport"
)

// Config are the HTTP-facing settings.
type Config struct {
	// Transport configures the transports: what a request, an upload or a WebSocket message may
	// hold, the streams' keep-alive and buffers, batches, and which subscriptions share an
	// execution. Its AllowedOrigins may also call the gateway from a browser, with credentials
	// (CORS), and its MaxRequestBytes bounds every JSON body before anything parses it. Its
	// Authenticate, Log, Streams and CountRefused are the handler's: New sets them from Deps
	// (Authenticate, Log) and from its own streams and rate limits.
	Transport transport.Config
	// Introspection serves the schema to introspection queries and lets validation suggest
	// field names ("Did you mean ...").
	Introspection bool
	// IDE serves a GraphQL IDE at /.
	IDE bool
	// Limits bound each operation: its size, shape and cost before it runs, its response as it
	// runs. The zero value bounds nothing.
	Limits oplimit.Limits
	// BodyTimeout is how long a request body may take to begin arriving; every byte that
	// arrives extends it (bodyMinRate). Zero leaves bodies unbounded in time.
	BodyTimeout time.Duration
}

// ReadyCheck is one thing /readyz asks about, such as the event store.
type ReadyCheck struct {
	Name  string
	Check func(context.Context) error
	// Advisory checks report on something this replica depends on but cannot fix by being
	// taken out of a load balancer, such as the upstream: /readyz?verbose shows their state,
	// and they never make the replica unready (which would also stop it receiving webhooks).
	Advisory bool
}

// Deps are what the handler needs.
type Deps struct {
	Log     *slog.Logger
	Schema  graphql.ExecutableSchema
	Metrics *metrics.Metrics
	// PerRequest installs what one request shares: the upstream cache and budget. Nil
	// installs nothing.
	PerRequest func(context.Context) context.Context
	// Webhooks receives the Advisor service's event deliveries at /webhooks.
	Webhooks http.Handler
	Ready    []ReadyCheck
	// Authenticate vets the credentials a GraphQL request carries: its headers over HTTP and
	// SSE, or on a WebSocket the upgrade's headers merged with connection_init's payload, so
	// a browser, which cannot set headers on a WebSocket, sends the same credentials there.
	// The context it returns, which carries the caller, is the one the operations run in. A
	// refusal is 401 over HTTP, with the error's message and a WWW-Authenticate challenge
	// (the error's Status and WWWAuthenticate methods, when it has them, say otherwise), and
	// close code 4403 on a WebSocket. Nil accepts everyone.
	Authenticate func(ctx context.Context, headers http.Header) (context.Context, error)
	Config       Config
	// Assistant serves the pop-out chat assistant at /assistant and below. Nil serves none.
	Assistant http.Handler
	// Persisted serves operations named by id: automatic persisted queries and trusted
	// documents. Nil serves none: every request sends its document.
	Persisted *persisted.Extension
	// RateLimits counts each caller's operations against its budgets. Nil limits none.
	RateLimits *ratelimit.Extension
	// FamilyPage draws a top account's family at /family/{wid}, with its files under
	// /family/assets/. Nil serves none.
	FamilyPage http.Handler
	// Tracer makes the spans of requests, operations and resolvers; nil makes none.
	Tracer trace.TracerProvider
}

// readyTimeout bounds each readiness check.
const readyTimeout = 3 * time.Second

// Handler is the gateway's HTTP handler.
type Handler struct {
	http.Handler
	streams *transport.Streams
	workers *gqlrun.Workers
}

// CloseStreams ends every open subscription stream and refuses new ones; it returns at once.
// WebSockets close with 1012 (service restart) and SSE responses end without `complete`:
// clients read both as "reconnect", and reach a replica that is not shutting down. Register
// it with the http.Server's RegisterOnShutdown.
func (h *Handler) CloseStreams() { h.streams.Close() }

// Subscriptions counts the open subscriptions, each subscriber once however many share an
// execution.
func (h *Handler) Subscriptions() int { return h.streams.Subscriptions() }

// Executions counts the executions serving the open subscriptions; subscribers that share one
// count once.
func (h *Handler) Executions() int { return h.streams.Executions() }

// Close lets go of the goroutines the handler keeps for the concurrent fields of operations
// (gqlrun.Workers). Call it once the server has stopped: a request after it still runs, its
// fields each on a goroutine of its own.
func (h *Handler) Close() { h.workers.Close() }

// WaitStreams waits until the streams CloseStreams ended have finished, or ctx ends.
// http.Server.Shutdown does not wait for WebSockets: their connections are hijacked.
func (h *Handler) WaitStreams(ctx context.Context) error { return h.streams.Wait(ctx) }

// New returns the gateway's handler.
func New(d Deps) *Handler {
	st, workers := transport.NewStreams(), gqlrun.NewWorkers()
	mux := http.NewServeMux()
	mux.Handle("/graphql", d.cors(withClient(d.authenticated(d.limits(d.graphQL(st, workers))))))
	mux.Handle("/graphql/schema.graphql", d.cors(d.authenticated(schemaSDL(d.Schema, d.Config.Introspection))))
	if d.Config.IDE {
		mux.Handle("GET /{$}", idePage("Advisor GraphQL gateway", "/graphql"))
		mux.Handle("GET /ide/", ideAssets())
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", d.ready)
	if d.FamilyPage != nil {
		// The page holds nothing of the family: it asks /graphql, with the caller's credentials.
		mux.Handle("GET /family/", d.FamilyPage)
	}
	if d.Assistant != nil {
		mux.Handle("GET /assistant", d.Assistant)
		mux.Handle("GET /assistant/", d.Assistant)
	}
	if d.Webhooks != nil {
		mux.Handle("/webhooks", d.Webhooks)
	}
	mux.Handle("GET /metrics", d.Metrics.Handler())
	// Traced outermost, so that the request's log line carries its trace id.
	return &Handler{Handler: d.traced(d.logged(bodyDeadline(d.Config.BodyTimeout, compress.Handler(mux)))), streams: st, workers: workers}
}

// graphQL is the GraphQL handler with explicit transports (gqlgen's default server adds more
// than the gateway wants and is marked as not for production): OPTIONS, GET and POST as
// GraphQL over HTTP specifies them, multipart uploads, SSE and WebSockets.
func (d Deps) graphQL(st *transport.Streams, workers *gqlrun.Workers) http.Handler {
	srv := handler.New(d.Schema)
	tc := d.Config.Transport
	tc.Authenticate, tc.Log, tc.Streams, tc.CountRefused = d.Authenticate, d.Log, st, d.countRefused()
	tc.Workers = workers
	for _, t := range transport.New(tc) {
		srv.AddTransport(t)
	}
	// First, so that it sees every operation whole: what the limits, @oneOf and the resolvers
	// made of it.
	srv.Use(operationLog{log: d.Log})
	if d.Tracer != nil {
		srv.Use(operationTrace{tracer: tracing.Tracer(d.Tracer)})
	}
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.SetValidationRulesFn(validationRules(d.Config.Introspection))
	var presenter []apperr.PresenterOption
	if d.Config.Introspection {
		srv.Use(extension.Introspection{})
		// The presenter lists an enum's values and a @oneOf input's members, as introspection would.
		presenter = append(presenter, apperr.WithSchema(d.Schema.Schema()))
	} else {
		// Suggestions would leak the schema introspection hides: gqlgen's switch quiets its
		// rules, validationRules the others, withoutSuggestions what is left.
		srv.SetDisableSuggestion(true)
	}
	if d.RateLimits != nil {
		// First: an operation a caller may not send costs nothing more, not even parsing.
		srv.Use(d.RateLimits)
	}
	if d.Persisted != nil {
		// Before the limits, which must measure the document an id names.
		srv.Use(d.Persisted)
	}
	oplimit.Install(srv, d.Config.Limits)
	srv.Use(d.Metrics.Extension())
	srv.Use(&oneOfVariables{})
	d.scoped(srv)
	present := apperr.Presenter(d.Log, presenter...)
	if !d.Config.Introspection {
		present = withoutSuggestions(present)
	}
	srv.SetErrorPresenter(present)
	srv.SetRecoverFunc(apperr.Recover(d.Log))
	return srv
}

// authenticated refuses HTTP requests whose credentials Authenticate rejects, and runs the
// others in the context it returns. WebSocket upgrades pass: their credentials may come in
// connection_init, which the transport vets.
func (d Deps) authenticated(next http.Handler) http.Handler {
	if d.Authenticate == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions || transport.IsWebSocket(r) {
			next.ServeHTTP(w, r)
			return
		}
		ctx, err := d.Authenticate(r.Context(), r.Header)
		if err != nil {
			writeRefusal(w, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// withClient keeps the client's address in the request's context, where the rate limits find
// it for a caller without an identity.
func withClient(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(ratelimit.WithClient(r.Context(), r.RemoteAddr)))
	})
}

// refusal is what an authentication error may say about how to answer it.
type refusal interface {
	Status() int
	WWWAuthenticate() string
}

// writeRefusal answers a request Authenticate refused: 401 with a Bearer challenge, unless the
// error says the fault is the gateway's (it cannot check any token now), which is 503, or that
// the caller may not come in at all (a firm the gateway does not serve), which is 403.
func writeRefusal(w http.ResponseWriter, err error) {
	status, challenge := http.StatusUnauthorized, `Bearer realm="advisor-gateway"`
	var r refusal
	if errors.As(err, &r) {
		status, challenge = r.Status(), r.WWWAuthenticate()
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "30")
		transport.WriteError(w, status, apperr.UpstreamUnavailable,
			"Callers cannot be authenticated now: the identity provider's signing keys cannot be fetched. Try again shortly")
		return
	}
	if status == http.StatusForbidden {
		// The caller is who it says, and may not come in: another token would not help.
		transport.WriteError(w, status, apperr.Forbidden, err.Error())
		return
	}
	if challenge != "" {
		w.Header().Set("WWW-Authenticate", challenge)
	}
	transport.WriteError(w, status, apperr.Unauthenticated, "Unauthorized: "+err.Error())
}

// countRefused counts a request refused before it became an operation against its caller's
// operations a second, as the rate limits count every operation before it is parsed: a
// malformed or oversized request costs its sender too. Nil without rate limits.
func (d Deps) countRefused() func(context.Context) error {
	if d.RateLimits == nil {
		return nil
	}
	return func(ctx context.Context) error {
		if err := d.RateLimits.MutateOperationParameters(ctx, &graphql.RawParams{}); err != nil {
			return err
		}
		return nil
	}
}

// limits refuses oversized bodies with 413 before anything parses them, and multipart requests
// without a preflight header: a cross-site HTML form can send multipart/form-data without a
// CORS preflight, but cannot set a custom header. Each refusal counts against the caller's
// rate limit.
func (d Deps) limits(next http.Handler) http.Handler {
	count := d.countRefused()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		refuse := func(status int, message string) {
			if count != nil {
				_ = count(r.Context()) // spent or not, the refusal says what was wrong
			}
			writeError(w, status, message)
		}
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
			if r.Header.Get("GraphQL-Require-Preflight") == "" && r.Header.Get("Apollo-Require-Preflight") == "" {
				refuse(http.StatusBadRequest,
					"A multipart request must carry a GraphQL-Require-Preflight (or Apollo-Require-Preflight) header")
				return
			}
			next.ServeHTTP(w, r) // the upload transport enforces its own limits as it streams
			return
		}
		limit := d.Config.Transport.MaxRequestBytes
		if r.ContentLength > limit {
			refuse(http.StatusRequestEntityTooLarge, transport.TooLarge(limit))
			return
		}
		body, err := transport.ReadWhole(io.LimitReader(r.Body, limit+1), r.ContentLength, limit)
		if errors.Is(err, errBodyTimeout) {
			refuse(http.StatusRequestTimeout, "The request body did not arrive in time")
			return
		}
		if err != nil {
			refuse(http.StatusBadRequest, "The request body could not be read")
			return
		}
		if int64(len(body)) > limit {
			refuse(http.StatusRequestEntityTooLarge, transport.TooLarge(limit))
			return
		}
		r.Body = transport.NewWholeBody(body) // the transport takes these bytes, not a copy
		next.ServeHTTP(w, r)
	})
}

// scoped gives each operation its own upstream cache and budget, and each event of a
// subscription its own too, so a long-lived subscription never serves what an earlier event
// loaded.
func (d Deps) scoped(srv *handler.Server) {
	if d.PerRequest == nil {
		d.PerRequest = func(ctx context.Context) context.Context { return ctx }
	}
	srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		return next(d.PerRequest(ctx))
	})
	srv.AroundResponses(func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		if !isSubscription(ctx) {
			return next(ctx)
		}
		return next(d.PerRequest(ctx))
	})
}

func isSubscription(ctx context.Context) bool {
	if !graphql.HasOperationContext(ctx) {
		return false
	}
	op := graphql.GetOperationContext(ctx).Operation
	return op != nil && op.Operation == ast.Subscription
}

// ready answers 200 when every required check passes and 503 otherwise, with each check's
// state; ?verbose adds the advisory checks' states under "advisories". A failure is described
// by its safe message only.
func (d Deps) ready(w http.ResponseWriter, r *http.Request) {
	verbose := r.URL.Query().Has("verbose")
	checks := make(map[string]string, len(d.Ready))
	advisories := make(map[string]string)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range d.Ready {
		if c.Advisory && !verbose {
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
			defer cancel()
			state := "ok"
			if err := c.Check(ctx); err != nil {
				state = "unavailable"
				if e, ok := apperr.As(err); ok {
					state = e.Message
				}
				d.Log.WarnContext(ctx, "readiness check failed", "check", c.Name, "advisory", c.Advisory, "error", apperr.Redact(err.Error()))
			}
			mu.Lock()
			defer mu.Unlock()
			if c.Advisory {
				advisories[c.Name] = state
			} else {
				checks[c.Name] = state
			}
		})
	}
	wg.Wait()
	status, code := "ok", http.StatusOK
	for _, s := range checks {
		if s != "ok" {
			status, code = "unavailable", http.StatusServiceUnavailable
		}
	}
	out := map[string]any{"status": status, "checks": checks}
	if verbose {
		out["advisories"] = advisories
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(out)
}

// logged writes one line per request. The query string is left out: it may carry variables.
func (d Deps) logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		level := slog.LevelInfo
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" || r.URL.Path == "/metrics" {
			level = slog.LevelDebug
		}
		d.Log.Log(r.Context(), level, "request", "method", r.Method, "path", r.URL.Path,
			"status", rec.status, "duration", time.Since(start))
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

// Unwrap lets http.ResponseController (and WebSocket upgrades) reach the real writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Flush passes flushes through, for streamed responses.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// writeError answers a request the client got wrong with a GraphQL-shaped error, as the
// transports do.
func writeError(w http.ResponseWriter, status int, message string) {
	transport.WriteError(w, status, apperr.BadUserInput, message)
}

func writeJSON(w http.ResponseWriter, v any) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	_ = json.NewEncoder(w).Encode(v) // the client went away; nothing to tell it
}
