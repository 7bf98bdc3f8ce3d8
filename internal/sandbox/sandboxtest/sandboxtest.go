// Package sandboxtest serves the sandbox to tests over real loopback HTTP, as the gateway and
// integrators reach it, and records what was asked of it. It is the one harness that the
// sandbox's own conformance tests and the gateway's end-to-end tests start a sandbox with.
// Like the sandbox, it imports no gateway package.
package sandboxtest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/advisorhq/gateway/internal/sandbox"
)

// Server is a handler served on a loopback port, recording every request it is sent. Its
// embedded httptest.Server gives the URL and a Client; closing it early makes the address
// unreachable, as a service that went away.
type Server struct {
	*httptest.Server
	// Sandbox is the sandbox behind the server; nil when the server was made by Serve.
	Sandbox *sandbox.Sandbox

	mu       sync.Mutex
	requests []string
}

// Start starts a sandbox with opts and serves it until the test ends, then closes both.
// opts.FileDir defaults to a directory of the test's own; every other option is the caller's.
func Start(t testing.TB, opts sandbox.Options) *Server {
	t.Helper()
	if opts.FileDir == "" {
		opts.FileDir = t.TempDir()
	}
	sb, err := sandbox.New(opts)
	if err != nil {
		t.Fatalf("sandbox.New: %v", err)
	}
	s := Serve(t, sb)
	s.Sandbox = sb
	// Cleanups run last added first: the server stops before the sandbox closes.
	t.Cleanup(func() {
		s.Close()
		if err := sb.Close(); err != nil {
			t.Errorf("close sandbox: %v", err)
		}
	})
	return s
}

// Serve serves h on a loopback port until the test ends, recording each request, for a test
// that needs an upstream answering what the sandbox never would.
func Serve(t testing.TB, h http.Handler) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// Requests returns the requests since the server started or was last reset, each as
// "METHOD /path".
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// ResetRequests forgets the requests recorded so far.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}
