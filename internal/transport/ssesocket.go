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
)

// sseSocket is an SSE subscription over a hijacked HTTP/1.1 connection. The response is written
// here, in chunked encoding, so that an idle stream holds one goroutine (its reader, waiting
// without a buffer to learn that the client left) and no buffer; its writer runs only while
// there is something to write, and its keep-alive and shutdown are timers.
type sseSocket struct {
	socket
	t      sseTransport
	ctx    context.Context
	cancel context.CancelFunc
	out    outbox
	wg     sync.WaitGroup // the writer

	mu        sync.Mutex
	keepAlive *time.Timer
	// ending is set once the stream's last chunk is queued: nothing follows it.
	ending bool
}

func (t sseTransport) newSSESocket(nc net.Conn, ctx context.Context, cancel context.CancelFunc) *sseSocket {
	st := &sseSocket{t: t, ctx: ctx, cancel: cancel}
	_ = nc.SetDeadline(time.Time{}) // the server's, for reading the request, no longer apply
	st.socket.init(nc, t.writeTimeout)
	cw := &connWriter{
		sock: &st.socket, out: &st.out, pool: t.streams.writers, frame: st.frame, closed: func() bool { return false }, wg: &st.wg,
		fail: func() { _ = st.nc.Close() }, // the reader ends, and the stream with it
	}
	st.out.kick = cw.kick
	return st
}

// The chunked encoding's last chunk, which ends the response.
var lastChunk = []byte("0\r\n\r\n")

// serve writes the response's head, subscribes, and waits for the client to leave or the stream
// to end; then it lets everything go. The first and the last are done on goroutines of their
// own (see onFreshStack): this one only waits, for as long as the stream lasts.
func (st *sseSocket) serve(header http.Header, exec graphql.GraphExecutor, opCtx *graphql.OperationContext) {
	var undo func()
	onFreshStack(func() { undo = st.start(header, exec, opCtx) })
	if undo != nil {
		st.awaitGone()
	}
	onFreshStack(func() {
		if undo != nil {
			undo()
		}
		st.cancel()
		st.out.close()
		_ = st.nc.Close()
		st.wg.Wait()
	})
}

// start writes the response's head, subscribes and sets the stream's timers, and returns what
// undoes them; nil when the client could not be written to.
func (st *sseSocket) start(header http.Header, exec graphql.GraphExecutor, opCtx *graphql.OperationContext) (undo func()) {
	if err := st.writeHead(header); err != nil {
		return nil
	}
	member := st.t.fanout.subscribe(st.ctx, exec, opCtx, st)
	st.mu.Lock()
	st.keepAlive = time.AfterFunc(st.t.keepAlive, st.ping)
	st.mu.Unlock()
	// Shutting down ends the stream without `complete`, which graphql-sse clients retry.
	stopOnShutdown := context.AfterFunc(st.t.streams.stopped, func() { st.finish(nil) })
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
		member.leave()
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
	st.writeMu.Lock()
	defer st.writeMu.Unlock()
	return st.writeWaiting(b.Bytes())
}

// awaitGone waits until the connection ends: the client left, or the stream ended and its
// writer closed it. What a client sends on a stream's connection is read and thrown away.
func (st *sseSocket) awaitGone() {
	for st.waitReadable() == nil && st.discard() {
	}
}

// discard reads what arrived and throws it away; false once the connection has ended. The
// buffer is taken here, not in awaitGone, whose frame an idle stream keeps on its stack.
func (st *sseSocket) discard() bool {
	buf := make([]byte, 512)
	_, err := st.nc.Read(buf)
	return err == nil
}

// ping keeps proxies from closing a quiet stream.
func (st *sseSocket) ping() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ending || st.keepAlive == nil {
		return
	}
	st.out.push(outItem{msg: sseKeepAlive})
	st.keepAlive.Reset(st.t.keepAlive)
}

func (st *sseSocket) deliver(m *member, r *result) bool {
	return st.out.pushResult(m, r, st.t.fanout.buffer)
}

func (st *sseSocket) end(_ *member, final *result, _ streamOutcome) {
	if final != nil {
		st.out.push(outItem{msg: final.sseEvent()})
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
		st.out.push(outItem{msg: last})
	}
	st.out.push(outItem{frame: lastChunk, then: func() { _ = st.nc.Close() }})
}

// frame frames a batch: each run of events as one chunk, whole frames (the last chunk) as they
// are.
func (st *sseSocket) frame(buf []byte, batch []outItem) ([]byte, []func()) {
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
		case it.res != nil:
			data = it.res.sseEvent()
		case it.msg != nil:
			data = it.msg
		}
		if data != nil {
			if start < 0 {
				start = len(buf)
				buf = append(buf, "0000000000"...)
			}
			buf = append(buf, data...)
		}
		if it.frame != nil {
			closeRun()
			buf = append(buf, it.frame...)
		}
		if it.then != nil {
			thens = append(thens, it.then)
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
