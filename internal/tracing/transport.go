package tracing

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// scope names the gateway's own instrumentation.
const scope = "github.com/advisorhq/gateway"

// Tracer is the gateway's tracer of tp (nil: a no-op one).
func Tracer(tp trace.TracerProvider) trace.Tracer { return Provider(tp).Tracer(scope) }

type operationKey struct{}

// WithOperation names the upstream operation the requests made with ctx belong to (such as
// "listContacts"), which names their client spans. Without it a span is named by its method.
func WithOperation(ctx context.Context, op string) context.Context {
	return context.WithValue(ctx, operationKey{}, op)
}

// Transport is base with a client span around every request, and the span's W3C traceparent
// sent with it. It is written here rather than taken from otelhttp because otelhttp records the
// full URL, whose path and query carry what callers asked for (external ids, search terms: a
// GraphQL variable's value); the span says the method, the peer, the operation and the status.
// A nil or no-op tp returns base as it is.
func Transport(base http.RoundTripper, tp trace.TracerProvider) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	if tp == nil {
		return base
	}
	return &transport{base: base, tracer: Tracer(tp)}
}

type transport struct {
	base   http.RoundTripper
	tracer trace.Tracer
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	name := "HTTP " + req.Method
	attrs := []attribute.KeyValue{attribute.String("http.request.method", req.Method)}
	if op, ok := req.Context().Value(operationKey{}).(string); ok && op != "" {
		name = op
		attrs = append(attrs, attribute.String("upstream.operation", op))
	}
	host, port := req.URL.Hostname(), req.URL.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[req.URL.Scheme]
	}
	attrs = append(attrs, attribute.String("server.address", host))
	if p, err := strconv.Atoi(port); err == nil {
		attrs = append(attrs, attribute.Int("server.port", p))
	}
	ctx, span := t.tracer.Start(req.Context(), name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	// RoundTrip must not change the caller's request: the copy carries the span and its header.
	req = req.WithContext(ctx)
	req.Header = req.Header.Clone()
	Propagator.Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		// The error's type only: its text may hold the URL.
		span.SetAttributes(attribute.String("error.type", errorType(err)))
		span.SetStatus(codes.Error, "no answer")
		span.End()
		return nil, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 500 {
		span.SetStatus(codes.Error, strconv.Itoa(resp.StatusCode))
	}
	// The span ends with the round trip, not the body's reading: the callers read bodies at
	// once, and ending here needs no wrapper around the body.
	span.End()
	return resp, nil
}

// errorType classifies a transport failure without its message.
func errorType(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	default:
		return "transport"
	}
}
