package gateway_test

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sandboxPorts are the addresses the sandbox listens on when run alone (`go run . sandbox`):
// its HTTP API, its session host and its SFTP server. Issue 26 found 9090 held by another
// service (it is Prometheus's default port), and the README's commands then asked that service.
var sandboxPorts = []string{"127.0.0.1:9090", "127.0.0.1:9443", "127.0.0.1:2222"}

var (
	holdPorts sync.Once
	// strayRequests counts the requests that reached the stand-ins holding sandboxPorts.
	strayRequests atomic.Int64
)

// holdSandboxPorts makes sure every one of sandboxPorts is held by something other than the
// gateway under test for the rest of the test binary's run: a stand-in for an unrelated service
// that refuses every request with 401 and counts it, or, where a port is taken already, what
// took it (held anyway, which is what the tests want). Tests of this package run in parallel
// and release nothing, so the ports stay held until the binary exits. It returns the count of
// requests the stand-ins have had, which a test that must never reach them checks.
func holdSandboxPorts(t testing.TB) func() int64 {
	t.Helper()
	holdPorts.Do(func() {
		for _, addr := range sandboxPorts {
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				continue // held by something else already
			}
			srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				strayRequests.Add(1)
				http.Error(w, "not the sandbox", http.StatusUnauthorized)
			})}
			go func() { _ = srv.Serve(ln) }() // until the test binary exits
		}
	})
	for _, addr := range sandboxPorts {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			t.Fatalf("%s should be held by another service for this test, and nothing answers there: %v", addr, err)
		}
		_ = c.Close()
	}
	return strayRequests.Load
}
