package transport

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/advisorhq/gateway/internal/transport/fanout"
	"github.com/advisorhq/gateway/internal/transport/socket"
)

// sseSocket is an SSE subscription over a hijacked HTTP/1.1 connection. The response is written
// here, in chunked encoding, so that an idle stream holds no goroutine where the streams' watcher
// waits on it (Linux; elsewhere its reader, waiting without a buffer to learn that the client
// left) and no buffer; its writer runs only while
// there is something to write, and its keep-alive and shutdown are timers.
type sseSocket struct {
	socket.Conn
	t      sseTransport
	ctx    context.Context
	cancel context.CancelFunc
	out    socket.Outbox[*fanout.Result]
	w      socket.Writer[*fanout.Result] // writes out; beside it, as both are touched for each delivery
	quota  socket.Quota                  // the subscription's results waiting
	wg     sync.WaitGroup                // the writer

	mu        sync.Mutex
	keepAlive *time.Timer
	// ending is set once the stream's last chunk is queued: nothing follows it.
	ending bool
}

func (t sseTransport) newSSESocket(nc net.Conn, ctx context.Context, cancel context.CancelFunc) *sseSocket {
	st := &sseSocket{t: t, ctx: ctx, cancel: cancel}
	_ = nc.SetDeadline(time.Time{}) // the server's, for reading the request, no longer apply
	st.Conn.Init(nc, t.cfg.WriteTimeout)
	st.out.ShareArrays(&t.cfg.Streams.sseQueues)
	st.w.Init(&st.Conn, &st.out, t.cfg.Streams.writers, st, &st.wg)
	return st
}

// The chunked encoding's last chunk, which ends the response.
var lastChunk = []byte("0\r\n\r\n")

// serve writes the response's head, subscribes, and reads until the client leaves or the stream
// ends; then it lets everything go, and calls done. It may return before then: an idle stream
// is waited on by the streams' watcher. The first and the last are done on goroutines of their
// own (see socket.OnFreshStack), so that a reader that waits keeps the smallest stack.
func (st *sseSocket) serve(header http.Header, exec graphql.GraphExecutor, opCtx *graphql.OperationContext, done func()) {
	var undo func()
	socket.OnFreshStack(func() { undo = st.start(header, exec, opCtx) })
	end := func() {
		socket.OnFreshStack(func() {
			if undo != nil {
				undo()
			}
			st.cancel()
			st.out.Close()
			_ = st.Close()
			st.wg.Wait()
		})
		done()
	}
	if undo == nil {
		end()
		return
	}
	// What a client sends on a stream's connection is read and thrown away.
	st.ReadLoop(st.t.cfg.Streams.watcher, alwaysIdle, st.discard, end)
}

// alwaysIdle says that a stream's reader holds nothing read: it waits before each read.
func alwaysIdle() bool { return true }

// start writes the response's head, subscribes and sets the stream's timers, and returns what
// undoes them; nil when the client could not be written to.
func (st *sseSocket) start(header http.Header, exec graphql.GraphExecutor, opCtx *graphql.OperationContext) (undo func()) {
	if err := st.writeHead(header); err != nil {
		return nil
	}
	// A client that vanished leaves what is written unacknowledged: TCP ends the stream two
	// keep-alive intervals later, rather than after minutes of retransmissions.
	if err := st.SetUserTimeout(2 * st.t.cfg.KeepAlive); err != nil {
		st.t.cfg.Log.Debug("sse: set TCP_USER_TIMEOUT", "err", err)
	}
	member := st.t.fanout.Subscribe(st.ctx, exec, opCtx, st)
	st.mu.Lock()
	st.keepAlive = time.AfterFunc(st.t.cfg.KeepAlive, st.ping)
	st.mu.Unlock()
	// Shutting down ends the stream without `complete`, which graphql-sse clients retry.
	stopOnShutdown := context.AfterFunc(st.t.cfg.Streams.stopped, func() { st.finish(nil) })
	// The caller's token's end ends the stream with an error that says so.
	stopOnExpiry := context.AfterFunc(st.ctx, func() {
		if credentialsExpired(st.ctx) {
			st.finish(sseExpired)
		}
	})
	return func() {
		stopOnShutdown()
		stopOnExpiry()
		st.mu.Lock()
		st.keepAlive.Stop()
		st.mu.Unlock()
		member.Leave()
	}
}

// writeHead writes the status line and headers, those the handlers before set among them, and
// the first comment, which tells the client the stream is open.
func (st *sseSocket) writeHead(header http.Header) error {
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 200 OK\r\n")
	h := header.Clone()
	h.Set("Transfer-Encoding", "chunked")
	h.Set("Connection", "close") // the connection ends with the stream
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	_ = h.Write(&b)
	b.WriteString("\r\n")
	b.Write(appendChunk(nil, []byte(":\n\n")))
	st.LockWrite()
	defer st.UnlockWrite()
	return st.WriteWaiting(b.Bytes())
}

// discard reads what arrived and throws it away; false once the connection has ended. The
// buffer is taken here, not in the loop that waits, whose frame a waiting reader keeps on its
// stack.
func (st *sseSocket) discard() bool {
	buf := make([]byte, 512)
	_, err := st.NetConn().Read(buf)
	return err == nil
}

// ping keeps proxies from closing a quiet stream; one that results kept busy since the last
// ping needs no comment.
func (st *sseSocket) ping() {
	busy := st.out.HadResults()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ending || st.keepAlive == nil {
		return
	}
	if !busy {
		st.out.Push(socket.Item[*fanout.Result]{Msg: sseKeepAlive})
	}
	st.keepAlive.Reset(st.t.cfg.KeepAlive)
}

func (st *sseSocket) Deliver(m *fanout.Member, r *fanout.Result) bool {
	return st.out.PushResult(&st.quota, r, m.Buffer())
}

func (st *sseSocket) End(_ *fanout.Member, final *fanout.Result, _ fanout.Outcome) {
	if final != nil {
		st.out.Push(socket.Item[*fanout.Result]{Msg: sseEvent(final)})
	}
	st.finish(sseComplete)
}

// finish queues the stream's end: last (when not nil), the last chunk, and closing the
// connection once they are written.
func (st *sseSocket) finish(last []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ending {
		return
	}
	st.ending = true
	if last != nil {
		st.out.Push(socket.Item[*fanout.Result]{Msg: last})
	}
	st.out.Push(socket.Item[*fanout.Result]{Frame: lastChunk, Then: func() { _ = st.Close() }})
}

// Whole is the writer's: every batch is framed as a chunk.
func (st *sseSocket) Whole([]socket.Item[*fanout.Result]) ([]byte, bool) { return nil, false }

// WriteClosed is the writer's: the last chunk closes the socket, and nothing follows it.
func (st *sseSocket) WriteClosed() bool { return false }

// WriteFailed is the writer's: the reader ends, and the stream with it.
func (st *sseSocket) WriteFailed() { _ = st.Close() }

// Frame is the writer's: each run of events as one chunk, whole frames (the last chunk) as
// they are.
func (st *sseSocket) Frame(buf []byte, batch []socket.Item[*fanout.Result]) ([]byte, []func()) {
	var thens []func()
	// A chunk's size comes first: room is kept for it and filled in once the run is in.
	const sizeRoom = 8 + 2 // hex digits of a chunk up to 4 GiB, CRLF
	start := -1
	closeRun := func() {
		if start < 0 {
			return
		}
		size := strconv.AppendInt(nil, int64(len(buf)-start-sizeRoom), 16)
		pad := sizeRoom - 2 - len(size)
		// Leading zeros are allowed in a chunk size; they keep the room exact.
		for i := range pad {
			buf[start+i] = '0'
		}
		copy(buf[start+pad:], size)
		buf[start+sizeRoom-2], buf[start+sizeRoom-1] = '\r', '\n'
		buf = append(buf, '\r', '\n')
		start = -1
	}
	for _, it := range batch {
		var data []byte
		switch {
		case it.IsResult():
			data = sseEvent(it.Res)
		case it.Msg != nil:
			data = it.Msg
		}
		if data != nil {
			if start < 0 {
				start = len(buf)
				buf = append(buf, "0000000000"...)
			}
			buf = append(buf, data...)
		}
		if it.Frame != nil {
			closeRun()
			buf = append(buf, it.Frame...)
		}
		if it.Then != nil {
			thens = append(thens, it.Then)
		}
	}
	closeRun()
	return buf, thens
}

// appendChunk appends data as one chunk of the chunked encoding.
func appendChunk(b, data []byte) []byte {
	b = strconv.AppendInt(b, int64(len(data)), 16)
	b = append(b, '\r', '\n')
	b = append(b, data...)
	return append(b, '\r', '\n')
}
