package transport

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/advisorhq/gateway/internal/transport/fanout"
	"github.com/advisorhq/gateway/internal/transport/socket"
)

// sseStream is one SSE subscriber whose connection cannot be taken over (HTTP/2), written
// through its ResponseWriter. The request's goroutine writes its results: it holds that
// goroutine anyway, and results that queue up while it writes go out together, in one flush.
type sseStream struct {
	out   socket.Outbox[*fanout.Result]
	quota socket.Quota  // the subscription's results waiting
	wake  chan struct{} // the outbox's kick
	ended chan struct{} // closed by end
	// outcome is how the stream ended; set before ended closes.
	outcome fanout.Outcome
	buffer  int
}

func (st *sseStream) Deliver(_ *fanout.Member, r *fanout.Result) bool {
	return st.out.PushResult(&st.quota, r, st.buffer)
}

func (st *sseStream) End(_ *fanout.Member, final *fanout.Result, outcome fanout.Outcome) {
	if final != nil {
		st.out.Push(socket.Item[*fanout.Result]{Msg: sseEvent(final)})
	}
	st.outcome = outcome
	close(st.ended)
}

// subscribe streams a subscription's results, sharing its execution where the fanout may,
// until it ends, the client leaves, or the server shuts down. writeRaw writes and flushes.
func (t sseTransport) subscribe(ctx context.Context, exec graphql.GraphExecutor, opCtx *graphql.OperationContext,
	writeRaw func([]byte) bool,
) {
	st := &sseStream{wake: make(chan struct{}, 1), ended: make(chan struct{}), buffer: t.fanout.Buffer()}
	st.out.SetKick(func() {
		select {
		case st.wake <- struct{}{}:
		default:
		}
	})
	defer st.out.Close()
	member := t.fanout.Subscribe(ctx, exec, opCtx, st)
	defer member.Leave()
	tick := time.NewTicker(t.cfg.KeepAlive)
	defer tick.Stop()
	// flush writes what is queued; false when the client is gone.
	var buf []byte
	flush := func() bool {
		for {
			batch := st.out.Take()
			if batch == nil {
				return true
			}
			buf = buf[:0]
			for _, it := range batch {
				if it.IsResult() {
					buf = append(buf, sseEvent(it.Res)...)
				} else {
					buf = append(buf, it.Msg...)
				}
			}
			st.out.Written(batch)
			if !writeRaw(buf) {
				return false
			}
		}
	}
	for {
		select {
		case <-st.wake:
			if !flush() {
				return
			}
		case <-tick.C:
			if !writeRaw(sseKeepAlive) {
				return
			}
		case <-st.ended:
			if flush() {
				writeRaw(sseComplete)
			}
			return
		case <-ctx.Done():
			if credentialsExpired(ctx) && flush() {
				writeRaw(sseExpired)
			}
			return
		case <-t.cfg.Streams.stopping:
			return
		}
	}
}
