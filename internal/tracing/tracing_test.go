package tracing

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func TestSetupIsOffUnlessAnEndpointIsSet(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		wantOn  bool
		wantErr string
	}{
		{name: "nothing set", env: nil},
		{name: "an endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, wantOn: true},
		{name: "a traces endpoint over gRPC", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, wantOn: true},
		{name: "disabled wins", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "TRUE"}},
		{name: "an unknown protocol is named", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
			wantErr: "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{name: "a bad boolean is named", env: map[string]string{"OTEL_SDK_DISABLED": "maybe"}, wantErr: "OTEL_SDK_DISABLED"},
		{name: "an endpoint with no port number is named", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:not-a-port"},
			wantErr: "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{name: "an endpoint beyond the ports is named", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:99999"},
			wantErr: "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{name: "a traces endpoint that is no URL is named", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "collector:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			wantErr: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp, shutdown, err := Setup(context.Background(), func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = shutdown(context.Background()) }()
			if _, on := tp.(*sdktrace.TracerProvider); on != tc.wantOn || !on && tp != nil {
				t.Errorf("got provider %T, want on=%v", tp, tc.wantOn)
			}
		})
	}
}

func TestTransportSendsTraceparentAndNoURL(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Clone() }))
	defer srv.Close()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	client := &http.Client{Transport: Transport(nil, tp)}
	req, _ := http.NewRequestWithContext(WithOperation(context.Background(), "getContact"), http.MethodGet, srv.URL+"/v2/contacts/secret-id?q=secret-term", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("got %d spans, want 1", len(spans))
	}
	s := spans[0]
	if s.Name() != "getContact" {
		t.Errorf("got span %q, want getContact", s.Name())
	}
	want := "00-" + s.SpanContext().TraceID().String() + "-" + s.SpanContext().SpanID().String() + "-01"
	if tp := got.Get("Traceparent"); tp != want {
		t.Errorf("got traceparent %q, want %q", tp, want)
	}
	if req.Header.Get("Traceparent") != "" {
		t.Error("the caller's request was changed")
	}
	for _, a := range s.Attributes() {
		if strings.Contains(a.Value.Emit(), "secret") {
			t.Errorf("attribute %s carries the URL: %s", a.Key, a.Value.Emit())
		}
	}
}

func TestLogLinesCarryTheTraceOfTheirContext(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	ctx, span := Tracer(tp).Start(context.Background(), "request")
	defer span.End()
	for _, tc := range []struct {
		name      string
		ctx       context.Context
		wantTrace string
	}{
		{name: "with a span", ctx: ctx, wantTrace: span.SpanContext().TraceID().String()},
		{name: "without one", ctx: context.Background(), wantTrace: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(LogHandler(slog.NewJSONHandler(&buf, nil))).With("component", "test")
			log.InfoContext(tc.ctx, "hello")
			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatal(err)
			}
			if got, _ := line["trace_id"].(string); got != tc.wantTrace {
				t.Errorf("got trace_id %q, want %q", got, tc.wantTrace)
			}
			if tc.wantTrace != "" && line["span_id"] != span.SpanContext().SpanID().String() {
				t.Errorf("got span_id %v, want %s", line["span_id"], span.SpanContext().SpanID())
			}
		})
	}
}
