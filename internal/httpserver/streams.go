package httpserver

import (
	"context"
	"net/http"
	"sync"

	"github.com/advisorhq/gateway/internal/apperr"
)

// streams tracks the open WebSockets and SSE streams, so that shutting down can end them: an
// http.Server's Shutdown neither ends long-lived responses nor waits for hijacked connections.
type streams struct {
	mu       sync.Mutex
	closing  bool
	stopping chan struct{} // closed when shutting down begins
	wg       sync.WaitGroup
}

func newStreams() *streams { return &streams{stopping: make(chan struct{})} }

// open registers a stream; it reports false once shutting down has begun. A true answer must
// be matched by a call to done.
func (s *streams) open() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.wg.Add(1)
	return true
}

func (s *streams) done() { s.wg.Done() }

// close tells every stream to end, and refuses new ones.
func (s *streams) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closing {
		s.closing = true
		close(s.stopping)
	}
}

// wait waits until every stream has ended, or ctx does.
func (s *streams) wait(ctx context.Context) error {
	ended := make(chan struct{})
	go func() { s.wg.Wait(); close(ended) }() // ends when the streams do; close made them end
	select {
	case <-ended:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// refuseWhileStopping answers a stream asked for while shutting down, so the client retries.
func refuseWhileStopping(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	writeCodedError(w, http.StatusServiceUnavailable, apperr.EventsUnavailable, "The gateway is shutting down: retry, and another replica will answer")
}
