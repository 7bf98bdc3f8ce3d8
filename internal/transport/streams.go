package transport

import (
	"context"
	"net/http"
	"sync"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/transport/fanout"
	"github.com/advisorhq/gateway/internal/transport/socket"
)

// Streams tracks the open WebSockets and SSE streams, so that shutting down can end them: an
// http.Server's Shutdown neither ends long-lived responses nor waits for hijacked connections.
type Streams struct {
	mu       sync.Mutex
	closing  bool
	stopping <-chan struct{} // closed when shutting down begins
	// stopped is done when shutting down begins, for what reacts to it without a goroutine.
	stopped context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup // the streams, and the executions they share
	// writers write the streams' connections.
	writers *socket.Writers
	// watcher waits for idle connections to become readable, so that they hold no goroutine.
	watcher *socket.Watcher
	// wsQueues and sseQueues are the queues that idle connections give back and busy ones
	// take.
	wsQueues  socket.ItemArrays[wsResult]
	sseQueues socket.ItemArrays[*fanout.Result]
	// counts counts the subscriptions and the executions of the fan-out that serves them.
	counts fanout.Counts
}

// Subscriptions counts the open subscriptions: a subscriber counts from the moment its resolver
// has subscribed, so an event stored after that reaches it.
func (s *Streams) Subscriptions() int { return s.counts.Subscriptions() }

// Executions counts the executions serving the subscriptions: as many as the subscriptions when
// none are shared, one for each operation, variables and caller when all are.
func (s *Streams) Executions() int { return s.counts.Executions() }

// NewStreams returns a tracker with no streams, open to new ones.
func NewStreams() *Streams {
	ctx, cancel := context.WithCancel(context.Background())
	return &Streams{stopping: ctx.Done(), stopped: ctx, stop: cancel, writers: socket.NewWriters(),
		watcher: socket.NewWatcher()}
}

// fanout is a fan-out of subscriptions whose executions these streams count and wait for.
func (s *Streams) fanout(share Share, track Track, buffer int) *fanout.Fanout {
	return fanout.New(share, track, buffer, &s.counts, &s.wg)
}

// open registers a stream; it reports false once shutting down has begun. A true answer must
// be matched by a call to done.
func (s *Streams) open() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.wg.Add(1)
	return true
}

func (s *Streams) done() { s.wg.Done() }

// Close ends every open stream and refuses new ones; it returns at once. WebSockets close with
// 1012 (service restart) and SSE responses end without `complete`: clients read both as
// "reconnect", and reach a replica that is not shutting down.
func (s *Streams) Close() {
	s.mu.Lock()
	if !s.closing {
		s.closing = true
		s.stop()
	}
	s.mu.Unlock()
	// The idle connections' readers start, to read the peers' answers to the closes.
	s.watcher.Close()
}

// Wait waits until every stream has ended, or ctx does.
func (s *Streams) Wait(ctx context.Context) error {
	ended := make(chan struct{})
	go func() { s.wg.Wait(); close(ended) }() // ends when the streams do; Close made them end
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
	WriteError(w, http.StatusServiceUnavailable, apperr.EventsUnavailable, "The gateway is shutting down: retry, and another replica will answer")
}
