package command_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/advisorhq/gateway/internal/testrun"
)

// With an OTLP endpoint set, spans are exported there over HTTP, and the last of them are
// flushed when the gateway stops.
func TestSpansAreExportedOverOTLPAndFlushedOnStop(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var exports []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		exports = append(exports, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	env := map[string]string{
		"ADDR": "127.0.0.1:0", "OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL, "OTEL_SERVICE_NAME": "gateway-under-test",
	}
	urls, stop := testrun.Start(t, func(ctx context.Context, stdout io.Writer) error { return run(ctx, nil, env, stdout, io.Discard) },
		testrun.URL, "gateway serving")
	resp, err := http.Post(urls[0]+"/graphql", "application/json", strings.NewReader(`{"query":"{ version }"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("query { version }: status %d", resp.StatusCode)
	}
	if err := stop(); err != nil {
		t.Fatalf("run returned %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(exports) == 0 || exports[0] != "POST /v1/traces application/x-protobuf" {
		t.Errorf("got exports %v, want a POST /v1/traces of protobuf once the gateway stopped", exports)
	}
}
