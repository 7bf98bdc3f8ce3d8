package transport

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// sseTransport serves operations as Server-Sent Events in the graphql-sse protocol's "distinct
// connections" mode: a POST that accepts text/event-stream gets one `next` event per result and a final `complete`. A comment line
// every keepAlive keeps proxies from closing a quiet stream.
type sseTransport struct {
	keepAlive time.Duration
	streams   *Streams
}

var _ graphql.Transport = sseTransport{}

func (sseTransport) Supports(r *http.Request) bool {
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		return false
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return r.Method == http.MethodPost && err == nil && mt == mediaJSON
}

func (t sseTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	params, err := readParams(r)
	if err != nil {
		w.Header().Set("Content-Type", mediaJSON)
		requestError(w, http.StatusBadRequest, gqlerror.List{gqlerror.Errorf("%s", err.Error())})
		return
	}
	params.Headers = r.Header
	if !t.streams.open() {
		refuseWhileStopping(w)
		return
	}
	defer t.streams.done()
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no") // nginx would otherwise hold events back
	w.WriteHeader(http.StatusOK)

	var mu sync.Mutex
	write := func(s string) bool {
		mu.Lock()
		defer mu.Unlock()
		if _, err := fmt.Fprint(w, s); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write(":\n\n") {
		return
	}
	// Shutting down cancels the operation; the stream then ends without `complete`, which
	// graphql-sse clients retry.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	// The keep-alive goroutine is stopped (done) and waited for before the handler returns:
	// nothing may write to w after that.
	var keepAlive sync.WaitGroup
	defer keepAlive.Wait()
	done := make(chan struct{})
	defer close(done)
	keepAlive.Go(func() {
		tick := time.NewTicker(t.keepAlive)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.streams.stopping:
				cancel()
				return
			case <-tick.C:
				if !write(": keep-alive\n\n") {
					cancel() // the client is gone: end the operation now
					return
				}
			}
		}
	})

	outcome := runOperation(ctx, exec, params, func(resp *graphql.Response, _ bool) bool {
		return write(fmt.Sprintf("event: next\ndata: %s\n\n", mustJSON(resp)))
	})
	if outcome != streamGone {
		write("event: complete\ndata: \n\n")
	}
}
