package httpserver

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// bodyMinRate is how much more time each byte of a request body buys, as Apache's
// mod_reqtimeout does it (MinRate): a large upload that keeps coming is never cut, a body that
// drips (one byte every few seconds, to hold a connection) is.
const bodyMinRate = 500 // bytes a second

// errBodyTimeout is what reading a body that did not arrive in time returns. The error wraps
// the read's os.ErrDeadlineExceeded as well, which is how the transports, which read multipart
// bodies themselves, tell a late body (408) from a malformed one.
var errBodyTimeout = errors.New("the request body did not arrive in time")

// bodyDeadline bounds the time a request body may take: it must begin within timeout, and each
// byte that arrives extends the deadline by 1/bodyMinRate seconds. Requests without a body
// (GET, WebSocket upgrades) are not touched.
func bodyDeadline(timeout time.Duration, next http.Handler) http.Handler {
	if timeout <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		b := &deadlineBody{body: r.Body, rc: http.NewResponseController(w), start: time.Now(), timeout: timeout, length: r.ContentLength}
		if b.extend() != nil {
			next.ServeHTTP(w, r) // a writer without deadlines (not a network connection)
			return
		}
		r.Body = b
		next.ServeHTTP(w, r)
	})
}

type deadlineBody struct {
	body    io.ReadCloser
	rc      *http.ResponseController
	start   time.Time
	timeout time.Duration
	length  int64 // -1 when unknown
	read    int64
	done    bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	b.read += int64(n)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return n, fmt.Errorf("%w: it must begin within %s and keep coming at %d bytes a second (REQUEST_BODY_TIMEOUT): %w",
			errBodyTimeout, b.timeout, bodyMinRate, err)
	case err == io.EOF || b.read == b.length:
		// The body is in: the deadline must not outlive it and cut a response that streams
		// (SSE) or a mutation that runs long. net/http clears it too when it starts watching
		// for the client leaving, but only at EOF, which a body read to its length has not met.
		b.finish()
	case n > 0:
		_ = b.extend()
	}
	return n, err
}

func (b *deadlineBody) Close() error {
	b.finish()
	return b.body.Close()
}

func (b *deadlineBody) extend() error {
	if b.done {
		return nil
	}
	grace := time.Duration(b.read) * time.Second / bodyMinRate
	return b.rc.SetReadDeadline(b.start.Add(b.timeout + grace))
}

func (b *deadlineBody) finish() {
	if !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
}
