package httpserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptrace"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/callerauth"
)

// operationLog writes one line per GraphQL operation, on every transport: its name, its type,
// how long it took, its status ("ok", or the codes of the errors it answered with) and how many
// requests it made to the upstream, and the caller's advisor and firm. Never its variables, its query or its errors' messages,
// which may quote the variables: a request line tells who was refused what, not with which
// data. A subscription's line is written when its stream ends, with the events it sent.
type operationLog struct{ log *slog.Logger }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
	graphql.ResponseInterceptor
} = operationLog{}

func (operationLog) ExtensionName() string                   { return "OperationLog" }
func (operationLog) Validate(graphql.ExecutableSchema) error { return nil }

// maxLoggedName bounds an operation name in the log: a client chooses it.
const maxLoggedName = 64

// operation is what one operation's line reports, gathered as it runs. A subscription's
// responses are made one after another, but the line may be written from the goroutine that
// sees its context end, hence the lock.
type operation struct {
	name, kind string
	start      time.Time
	upstream   atomic.Int64

	mu     sync.Mutex
	codes  []string // distinct, in the order they first appeared
	events int
	once   sync.Once
}

type operationKey struct{}

// InterceptOperation follows an operation that was parsed and validated, to its end.
func (l operationLog) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	opCtx := graphql.GetOperationContext(ctx)
	op := newOperation(opCtx)
	ctx = context.WithValue(ctx, operationKey{}, op)
	// Every request the upstream client makes for this operation carries its context; a trace
	// counts them where they are made (every attempt, uploads included, none for a read the
	// request cache answers), without the client knowing about operations.
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GetConn: func(string) { op.upstream.Add(1) }})
	responses := next(ctx)
	finish := func() { op.once.Do(func() { l.write(ctx, op) }) }
	// A subscription ends when its context does (the client completes it, leaves, or the server
	// shuts down) without its handler always being asked once more; the same holds for a query
	// whose client left before it was answered.
	stop := context.AfterFunc(ctx, finish)
	subscription := isSubscription(ctx)
	return func(ctx context.Context) *graphql.Response {
		resp := responses(ctx)
		op.record(resp)
		// A query has one response. A subscription's stream ends with nil, or with errors and
		// no data, which the transports send as its last word.
		if !subscription || resp == nil || len(resp.Data) == 0 && len(resp.Errors) > 0 {
			stop()
			finish()
		}
		return resp
	}
}

// InterceptResponse writes the line of an operation that never ran: one that failed to parse or
// validate, or that a limit refused before it began. Every other response passes through.
func (l operationLog) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if _, running := ctx.Value(operationKey{}).(*operation); running || !graphql.HasOperationContext(ctx) {
		return resp
	}
	op := newOperation(graphql.GetOperationContext(ctx))
	op.record(resp)
	l.write(ctx, op)
	return resp
}

func newOperation(opCtx *graphql.OperationContext) *operation {
	op := &operation{name: opCtx.OperationName, kind: "unknown", start: operationStart(opCtx)}
	if o := opCtx.Operation; o != nil {
		op.kind = string(o.Operation)
		if o.Name != "" {
			op.name = o.Name // the document's own name, which a client need not repeat
		}
	} else if m := leadingOperation.FindStringSubmatch(opCtx.RawQuery); m != nil {
		// A document that did not parse or validate: its first words still tell which of a
		// client's operations failed.
		op.kind = "query" // the shorthand { ... } is a query
		if m[1] != "" {
			op.kind = m[1]
		}
		if op.name == "" {
			op.name = m[2]
		}
	}
	if len(op.name) > maxLoggedName {
		op.name = strings.ToValidUTF8(op.name[:maxLoggedName], "") + "..."
	}
	return op
}

// leadingOperation matches the start of a document whose first definition is an operation:
// its type and name, after what GraphQL ignores (white space, commas, comments).
var leadingOperation = regexp.MustCompile(`^(?:[\s,\x{FEFF}]|#[^\n\r]*)*(?:\{|(query|mutation|subscription)(?:[\s,]|#[^\n\r]*)*([_A-Za-z][_0-9A-Za-z]*)?)`)

// operationStart is when the operation's request began to be read: a WebSocket's operations
// share the socket's request, so its start is not theirs.
func operationStart(opCtx *graphql.OperationContext) time.Time {
	switch {
	case !opCtx.Stats.Read.Start.IsZero():
		return opCtx.Stats.Read.Start
	case !opCtx.Stats.OperationStart.IsZero():
		return opCtx.Stats.OperationStart
	}
	return time.Now()
}

// record notes a response's error codes; a nil response is the end of a stream.
func (op *operation) record(resp *graphql.Response) {
	if resp == nil {
		return
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	op.events++
	for _, code := range errorCodes(resp.Errors) {
		if !slices.Contains(op.codes, code) {
			op.codes = append(op.codes, code)
		}
	}
}

func (l operationLog) write(ctx context.Context, op *operation) {
	op.mu.Lock()
	status := "ok"
	if len(op.codes) > 0 {
		status = strings.Join(op.codes, ",")
	}
	attrs := []any{"name", op.name, "type", op.kind, "duration", time.Since(op.start), "status", status,
		"upstream_calls", op.upstream.Load()}
	if op.kind == "subscription" {
		attrs = append(attrs, "events", op.events)
	}
	op.mu.Unlock()
	// Who asked: the caller's ids, which are not secrets (the token never is in the context).
	if c, ok := callerauth.FromContext(ctx); ok {
		attrs = append(attrs, "advisor", c.AdvisorID, "firm", c.FirmID)
	}
	// The context may have ended (that is how a subscription's line gets written); the line is
	// still wanted.
	l.log.InfoContext(context.WithoutCancel(ctx), "operation", attrs...)
}

// errorCodes are the codes errs carry, as the error presenter set them; "error" stands for
// one without (the presenter gives every error one, so it would be a bug).
func errorCodes(errs gqlerror.List) []string {
	codes := make([]string, 0, len(errs))
	for _, e := range errs {
		code, ok := e.Extensions["code"]
		if !ok || code == nil {
			codes = append(codes, "error")
			continue
		}
		codes = append(codes, fmt.Sprint(code))
	}
	return codes
}
