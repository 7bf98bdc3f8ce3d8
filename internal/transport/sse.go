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

	"github.com/advisorhq/gateway/internal/transport/fanout"
)

// sseTransport serves operations as Server-Sent Events in the graphql-sse protocol's "distinct
// connections" mode: a POST that accepts text/event-stream gets one `next` event per result and a final `complete`. A comment line
// every cfg.KeepAlive keeps proxies from closing a quiet stream.
type sseTransport struct {
	cfg    *Config
	fanout *fanout.Fanout // shared with the WebSockets
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
	params, status, err := t.params(r)
	if err != nil {
		// Counted as the JSON transport counts its refusals: a malformed body costs its sender.
		w.Header().Set("Content-Type", mediaJSON)
		refuse(w, r, t.cfg.CountRefused, status, err)
		return
	}
	params.Headers = r.Header
	if !t.cfg.Streams.open() {
		refuseWhileStopping(w)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no") // nginx would otherwise hold events back
	// A subscription over HTTP/1.1 takes the connection over, so that while it waits for events
	// it holds no buffer and, on Linux, no goroutine, as a WebSocket does (HTTP/2 cannot be
	// hijacked).
	// The context keeps the request's values, not its end: the handler returns at once. It
	// keeps the caller's token's end, which ends the stream (streamContext).
	sctx, scancel := streamContext(r)
	opCtx, errs := exec.CreateOperationContext(sctx, params)
	if se, ok := statusOf(errs); ok {
		// Refused before it began, with a status of its own (429): answered as HTTP, not as a
		// stream, so that the client sees Retry-After.
		scancel()
		t.cfg.Streams.done()
		answerStatus(w, se, exec.DispatchError(graphql.WithOperationContext(sctx, opCtx), errs).Errors)
		return
	}
	if errs == nil && isSubscription(opCtx) && r.ProtoMajor == 1 {
		if nc, _, err := http.NewResponseController(w).Hijack(); err == nil {
			st := t.newSSESocket(nc, sctx, scancel)
			go st.serve(w.Header(), exec, opCtx, t.cfg.Streams.done)
			return
		}
	}
	defer scancel()
	defer t.cfg.Streams.done()
	rc := http.NewResponseController(w)
	w.WriteHeader(http.StatusOK)

	var mu sync.Mutex
	write := func(b []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write([]byte(":\n\n")) {
		return
	}
	// Shutting down cancels the operation; the stream then ends without `complete`, which
	// graphql-sse clients retry. The request's context ends when the caller's token does: the
	// stream then ends with sseExpired.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if errs == nil && isSubscription(opCtx) {
		t.subscribe(ctx, exec, opCtx, write)
		return
	}
	// The keep-alive goroutine is stopped (done) and waited for before the handler returns:
	// nothing may write to w after that.
	var keepAlive sync.WaitGroup
	defer keepAlive.Wait()
	done := make(chan struct{})
	defer close(done)
	keepAlive.Go(func() {
		tick := time.NewTicker(t.cfg.KeepAlive)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.cfg.Streams.stopping:
				cancel()
				return
			case <-tick.C:
				if !write(sseKeepAlive) {
					cancel() // the client is gone: end the operation now
					return
				}
			}
		}
	})

	emit := func(resp *graphql.Response, _ bool) bool {
		return write(fmt.Appendf(nil, "event: next\ndata: %s\n\n", mustJSON(resp)))
	}
	var outcome fanout.Outcome
	if errs != nil {
		outcome = refuseOperation(ctx, exec, opCtx, errs, emit)
	} else {
		outcome = runCreated(ctx, exec, opCtx, emit)
	}
	switch {
	case credentialsExpired(ctx):
		write(sseExpired)
	case outcome != fanout.Gone:
		write(sseComplete)
	}
}

// params reads the body's parameters within the transport's bounds, as the JSON transport
// reads a POST's; on failure it gives the status to answer with.
func (t sseTransport) params(r *http.Request) (*graphql.RawParams, int, error) {
	body, err := readBody(r, t.cfg.MaxRequestBytes)
	if err != nil {
		return nil, bodyStatus(err), err
	}
	params, err := bodyParams(body, t.cfg.BodyBounds)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	return params, 0, nil
}
