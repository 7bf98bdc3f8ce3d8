package httpserver

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/advisorhq/gateway/internal/tracing"
)

// traced gives every request a server span, continuing the caller's W3C trace when it sends
// one. The span is named by the route the mux matched ("POST /graphql"), never by the path,
// which would make a name per id. It records the method, the route and the status: not the
// query string, which may carry a GET operation's variables, nor any header.
func (d Deps) traced(next http.Handler) http.Handler {
	if d.Tracer == nil {
		return next
	}
	tracer := tracing.Tracer(d.Tracer)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := tracing.Propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method)))
		defer span.End()
		// The recorder unwraps to w, so WebSocket upgrades and streamed responses still reach
		// the connection.
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		r = r.WithContext(ctx)
		next.ServeHTTP(rec, r)
		// The mux wrote the pattern it matched into r (it does not copy the request).
		if route := routeOf(r.Pattern); route != "" {
			span.SetName(r.Method + " " + route)
			span.SetAttributes(attribute.String("http.route", route))
		}
		span.SetAttributes(attribute.Int("http.response.status_code", rec.status))
		if rec.status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(rec.status))
		}
	})
}

// routeOf is a mux pattern without its method: "GET /healthz" is the route /healthz.
func routeOf(pattern string) string {
	if _, route, ok := strings.Cut(pattern, " "); ok {
		return route
	}
	return pattern
}

// operationTrace gives every GraphQL operation a span, named by its type and name
// ("query Family"), and a child span to each field a resolver answers: those are the fields
// that do I/O; a field read from memory gets none, which keeps a list of a thousand cards from
// making thousands of spans. Neither records the document, the variables or an error's message
// (which may quote them): only names and error codes.
type operationTrace struct{ tracer trace.Tracer }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
	graphql.FieldInterceptor
} = operationTrace{}

func (operationTrace) ExtensionName() string                   { return "OperationTrace" }
func (operationTrace) Validate(graphql.ExecutableSchema) error { return nil }

func (o operationTrace) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	op := newOperation(graphql.GetOperationContext(ctx))
	name := op.kind
	attrs := []attribute.KeyValue{attribute.String("graphql.operation.type", op.kind)}
	if op.name != "" {
		name += " " + op.name
		attrs = append(attrs, attribute.String("graphql.operation.name", op.name))
	}
	ctx, span := o.tracer.Start(ctx, name, trace.WithAttributes(attrs...))
	responses := next(ctx)
	var once sync.Once
	end := func() { once.Do(func() { span.End() }) }
	// A subscription ends when its context does, without its handler always being asked again.
	stop := context.AfterFunc(ctx, end)
	subscription := isSubscription(ctx)
	return func(ctx context.Context) *graphql.Response {
		resp := responses(ctx)
		if resp != nil && len(resp.Errors) > 0 {
			span.SetStatus(codes.Error, "the response has errors")
			span.SetAttributes(attribute.StringSlice("graphql.error.codes", errorCodes(resp.Errors)))
		}
		if !subscription || resp == nil || len(resp.Data) == 0 && len(resp.Errors) > 0 {
			stop()
			end()
		}
		return resp
	}
}

func (o operationTrace) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !fc.IsResolver {
		return next(ctx)
	}
	ctx, span := o.tracer.Start(ctx, "resolve "+fc.Object+"."+fc.Field.Name, trace.WithAttributes(
		attribute.String("graphql.field.parent", fc.Object), attribute.String("graphql.field.name", fc.Field.Name)))
	defer span.End()
	res, err := next(ctx)
	if err != nil {
		span.SetStatus(codes.Error, "the resolver failed")
	}
	return res, err
}
