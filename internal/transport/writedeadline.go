package transport

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// DefaultWriteTimeout is Config.WriteTimeout's default: long enough for a client on a poor
// network that is reading, far shorter than the minutes a client that stopped reading held a
// goroutine and its answer's buffers for.
const DefaultWriteTimeout = 30 * time.Second

// writeChunk is the most written under one deadline: a large answer is written in pieces, each
// with a fresh deadline, so the bound is on a reader's progress, not on the answer's size.
const writeChunk = 64 << 10

// writeDeadlines gives every write a transport makes through its ResponseWriter a deadline:
// a client that stops reading its answer (or a stream's next event) is cut off after timeout,
// and its handler's goroutine and buffers are let go. The deadline is set per write rather than
// by the server's WriteTimeout, which would also end streams that are merely quiet, and is
// cleared after each write: over HTTP/2 a deadline ends the stream when it passes, whether a
// write is waiting or not, and an operation may work for long between two writes.
type writeDeadlines struct {
	graphql.Transport
	timeout time.Duration
}

func (t writeDeadlines) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: t.timeout}
	t.Transport.Do(dw, r, exec)
	if !dw.hijacked {
		// What is still buffered (the last bytes of the answer, the chunked encoding's end) is
		// written after the handler returns; the server clears this deadline after.
		dw.arm()
	}
}

// deadlineWriter is a ResponseWriter whose writes and flushes each wait at most timeout for
// the client.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	// unsupported is set when the connection takes no deadlines (a test's recorder).
	unsupported bool
	// hijacked is set once the transport took the connection over: its deadlines are its own.
	hijacked bool
}

func (w *deadlineWriter) arm() {
	if w.unsupported {
		return
	}
	if err := w.rc.SetWriteDeadline(time.Now().Add(w.timeout)); errors.Is(err, http.ErrNotSupported) {
		w.unsupported = true
	}
}

func (w *deadlineWriter) disarm() {
	if !w.unsupported {
		_ = w.rc.SetWriteDeadline(time.Time{})
	}
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return w.ResponseWriter.Write(p)
	}
	written := 0
	for len(p) > 0 {
		piece := p[:min(len(p), writeChunk)]
		w.arm()
		n, err := w.ResponseWriter.Write(piece)
		w.disarm()
		written += n
		if err != nil {
			return written, err
		}
		p = p[len(piece):]
	}
	return written, nil
}

// FlushError is what http.ResponseController's Flush calls.
func (w *deadlineWriter) FlushError() error {
	w.arm()
	err := w.rc.Flush()
	w.disarm()
	return err
}

func (w *deadlineWriter) Flush() { _ = w.FlushError() }

// Hijack is what http.ResponseController's Hijack calls: it notes that the connection is no
// longer the server's to bound.
func (w *deadlineWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, rw, err := w.rc.Hijack()
	if err == nil {
		w.hijacked = true
	}
	return nc, rw, err
}

// Unwrap lets http.ResponseController reach the writer's other abilities.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
