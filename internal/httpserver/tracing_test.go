package httpserver

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/advisorhq/gateway/graph"
	"github.com/advisorhq/gateway/graph/generated"
	"github.com/advisorhq/gateway/internal/metrics"
)

// A request's span is named by the route it matched, never by its path, so that ids and probes
// of unknown paths do not each make a span name; a caller's traceparent is continued.
func TestRequestSpansAreNamedByRoute(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	srv := httptest.NewServer(New(Deps{
		Log: slog.New(slog.DiscardHandler), Schema: generated.NewExecutableSchema(generated.Config{Resolvers: &graph.Resolver{}}),
		Metrics: metrics.New(), Tracer: tp, Config: Config{Transport: testTransport()},
	}))
	defer srv.Close()
	const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for _, tc := range []struct {
		name, path, traceparent, want string
		wantStatus                    int
	}{
		{name: "a route with a method", path: "/healthz", want: "GET /healthz", wantStatus: http.StatusOK},
		{name: "a route without one", path: "/graphql?query=%7Bversion%7D", want: "GET /graphql", wantStatus: http.StatusOK},
		{name: "no route: the method only", path: "/no/such/path/12345", want: "GET", wantStatus: http.StatusNotFound},
		{name: "a caller's trace is continued", path: "/healthz", traceparent: parent, want: "GET /healthz", wantStatus: http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+tc.path, nil)
			if tc.traceparent != "" {
				req.Header.Set("Traceparent", tc.traceparent)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			var server sdktrace.ReadOnlySpan
			for _, s := range rec.Ended() {
				if s.SpanKind() == trace.SpanKindServer {
					server = s
				}
			}
			rec.Reset()
			if server == nil {
				t.Fatal("no server span")
			}
			if server.Name() != tc.want {
				t.Errorf("got span %q, want %q", server.Name(), tc.want)
			}
			var status int64
			for _, a := range server.Attributes() {
				if a.Key == "http.response.status_code" {
					status = a.Value.AsInt64()
				}
			}
			if status != int64(tc.wantStatus) {
				t.Errorf("got status %d, want %d", status, tc.wantStatus)
			}
			if tc.traceparent != "" && server.Parent().TraceID().String() != "0af7651916cd43dd8448eb211c80319c" {
				t.Errorf("got parent %v, want the caller's trace", server.Parent())
			}
		})
	}
}
