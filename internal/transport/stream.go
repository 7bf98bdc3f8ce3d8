package transport

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
)

// streamOutcome is how an operation's stream ended.
type streamOutcome int

const (
	streamDone        streamOutcome = iota // the stream ended (complete)
	streamFailed                           // an error ended it; it was sent
	streamUnavailable                      // the event store is down; the error was sent
	streamGone                             // the client went away
)

// isSubscription reports whether opCtx is a subscription, which streams.
func isSubscription(opCtx *graphql.OperationContext) bool {
	return opCtx.Operation != nil && opCtx.Operation.Operation == ast.Subscription
}

// runOperation executes one operation and passes each response to emit until the stream ends,
// emit refuses (the client is gone) or ctx ends. A response with errors and no data ends the
// stream: it is the operation's last word.
func runOperation(ctx context.Context, exec graphql.GraphExecutor, params *graphql.RawParams,
	emit func(resp *graphql.Response, final bool) bool,
) streamOutcome {
	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		return refuseOperation(ctx, exec, opCtx, errs, emit)
	}
	return runCreated(ctx, exec, opCtx, emit)
}

// refuseOperation answers an operation that cannot be executed with errs, its only response.
func refuseOperation(ctx context.Context, exec graphql.GraphExecutor, opCtx *graphql.OperationContext, errs gqlerror.List,
	emit func(resp *graphql.Response, final bool) bool,
) streamOutcome {
	resp := exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs)
	if !emit(resp, true) {
		return streamGone
	}
	return streamFailed
}

// runCreated is runOperation for an operation already parsed and validated.
func runCreated(ctx context.Context, exec graphql.GraphExecutor, opCtx *graphql.OperationContext,
	emit func(resp *graphql.Response, final bool) bool,
) streamOutcome {
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	for {
		resp := responses(ctx)
		if ctx.Err() != nil {
			return streamGone
		}
		if resp == nil {
			return streamDone
		}
		final := len(resp.Data) == 0 && len(resp.Errors) > 0
		if !emit(resp, final) {
			return streamGone
		}
		if final {
			if hasCode(resp.Errors, apperr.EventsUnavailable) {
				return streamUnavailable
			}
			return streamFailed
		}
	}
}

// hasCode reports whether one of errs carries code, as the error presenter sets it.
func hasCode(errs gqlerror.List, code apperr.Code) bool {
	for _, e := range errs {
		if e.Extensions["code"] == code {
			return true
		}
	}
	return false
}

// initHeaders turns a connection_init payload into request headers, so that credentials sent
// there reach resolvers as they would in an HTTP request: {"Authorization": "..."} or
// {"headers": {"Authorization": "..."}}.
// The handshake's own headers, which say nothing to an operation, are left out: the result
// lives as long as the connection.
func initHeaders(base http.Header, payload map[string]any) http.Header {
	h := make(http.Header, len(base))
	for k, v := range base {
		if _, handshake := handshakeHeaders[k]; !handshake {
			h[k] = v
		}
	}
	set := func(m map[string]any) {
		for k, v := range m {
			if s, ok := v.(string); ok && k != "headers" {
				h.Set(k, s)
			}
		}
	}
	set(payload)
	if inner, ok := payload["headers"].(map[string]any); ok {
		set(inner)
	}
	return h
}

// handshakeHeaders are the upgrade request's headers that only the handshake reads.
var handshakeHeaders = map[string]struct{}{
	"Connection": {}, "Upgrade": {}, "Sec-Websocket-Key": {}, "Sec-Websocket-Version": {},
	"Sec-Websocket-Extensions": {}, "Sec-Websocket-Protocol": {}, "Accept-Encoding": {},
	"Cache-Control": {}, "Pragma": {},
}

// originAllowed lets a WebSocket upgrade through when it comes from no browser (no Origin), from
// the gateway's own pages, or from an origin CORS allows. Browsers do not apply CORS to
// WebSockets, so without this any site could open one with its visitors' cookies.
func originAllowed(r *http.Request, allowed []string) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if _, host, ok := strings.Cut(origin, "://"); ok && strings.EqualFold(host, r.Host) {
		return true
	}
	for _, a := range allowed {
		if a == "*" || strings.EqualFold(a, origin) {
			return true
		}
	}
	return false
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the values marshalled here are built by this package
	}
	return b
}
