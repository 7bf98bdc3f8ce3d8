// Package tracing sets up OpenTelemetry tracing from the standard OTEL_* environment variables
// and holds the small pieces the gateway's packages share: a traced HTTP transport for upstream
// calls and a slog handler that puts the trace id on every line logged with a request's context.
// Nothing here is global: the TracerProvider Setup returns is passed to whoever makes spans.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/advisorhq/gateway/internal/netaddr"
)

// DefaultServiceName is service.name unless OTEL_SERVICE_NAME says otherwise.
const DefaultServiceName = "advisor-gateway"

// Propagator is how a trace crosses a process boundary: W3C traceparent and tracestate, in
// both directions. It is a value, not otel's global, so nothing depends on start-up order.
var Propagator propagation.TextMapPropagator = propagation.TraceContext{}

// Setup returns the TracerProvider the OTEL_* settings ask for, and what flushes and stops it.
// Tracing is off (a nil provider, which the gateway's packages take as "make no spans") unless OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, and off whenever OTEL_SDK_DISABLED=true. Spans go
// over OTLP: HTTP (protobuf) by default, gRPC with OTEL_EXPORTER_OTLP_PROTOCOL=grpc (or its
// _TRACES_ form). The exporter and the sampler read their other settings (headers, TLS,
// timeouts, OTEL_TRACES_SAMPLER and its argument) from the process's environment themselves,
// as the SDK documents them.
func Setup(ctx context.Context, getenv func(string) string) (trace.TracerProvider, func(context.Context) error, error) {
	off := func(context.Context) error { return nil }
	disabled, err := parseBool(getenv("OTEL_SDK_DISABLED"))
	if err != nil {
		return nil, nil, fmt.Errorf("OTEL_SDK_DISABLED: %w", err)
	}
	if disabled || (getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "") {
		return nil, off, nil
	}
	protocol, setting := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	if protocol == "" {
		protocol, setting = getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), "OTEL_EXPORTER_OTLP_PROTOCOL"
	}
	// The endpoint is passed explicitly, so that the getenv the gateway was given decides where
	// spans go, not only whether there are any. A signal's own endpoint is used as it is; the
	// general one gets the signal's path over HTTP, as the specification says.
	endpoint, tracesEndpoint := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	// The exporters take a malformed endpoint quietly and send spans nowhere; refuse it here.
	for _, e := range []struct{ name, value string }{
		{"OTEL_EXPORTER_OTLP_ENDPOINT", endpoint}, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", tracesEndpoint},
	} {
		if err := checkEndpoint(e.value); e.value != "" && err != nil {
			return nil, nil, fmt.Errorf("%s: %w", e.name, err)
		}
	}
	var exp *otlptrace.Exporter
	switch protocol {
	case "", "http/protobuf":
		u := tracesEndpoint
		if u == "" {
			u = strings.TrimSuffix(endpoint, "/") + "/v1/traces"
		}
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u))
	case "grpc":
		u := tracesEndpoint
		if u == "" {
			u = endpoint
		}
		exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(u))
	default:
		return nil, nil, fmt.Errorf("%s: %q is not supported: use http/protobuf or grpc", setting, protocol)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("the OTLP trace exporter: %w", err)
	}
	name := getenv("OTEL_SERVICE_NAME")
	if name == "" {
		name = DefaultServiceName
	}
	// OTEL_RESOURCE_ATTRIBUTES still applies; OTEL_SERVICE_NAME (or the default) names the service.
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(name)))
	if err != nil {
		return nil, nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	// No sampler option: the SDK reads OTEL_TRACES_SAMPLER itself (parent-based always-on by default).
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}

// checkEndpoint accepts an absolute http or https URL naming a host and, if any, a real port.
func checkEndpoint(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return errors.New("must be an absolute http or https URL, such as http://collector:4318")
	}
	return netaddr.URL(u)
}

// parseBool reads a boolean setting as the OpenTelemetry specification does: "true" in any
// case is true, empty is false.
func parseBool(v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(strings.ToLower(v))
	if err != nil {
		return false, errors.New("must be true or false")
	}
	return b, nil
}

// Provider is tp, or a no-op provider when tp is nil, so that a dependency left out traces
// nothing instead of failing.
func Provider(tp trace.TracerProvider) trace.TracerProvider {
	if tp == nil {
		return noop.NewTracerProvider()
	}
	return tp
}

// ChildrenOnly is tp making spans only within a trace already begun: a span started with a
// context that has none is not recorded. It is for clients that background loops also use (the
// event hub's reads of Redis), whose every call would otherwise be a trace of its own.
func ChildrenOnly(tp trace.TracerProvider) trace.TracerProvider {
	return childrenOnly{Provider(tp)}
}

type childrenOnly struct{ trace.TracerProvider }

func (c childrenOnly) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return childTracer{Tracer: c.TracerProvider.Tracer(name, opts...), none: noop.NewTracerProvider().Tracer(name)}
}

type childTracer struct {
	trace.Tracer
	none trace.Tracer
}

func (c childTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return c.none.Start(ctx, name, opts...)
	}
	return c.Tracer.Start(ctx, name, opts...)
}
