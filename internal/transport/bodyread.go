package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/advisorhq/gateway/internal/bytesize"
)

// tooLargeError is a body past the transport's bound on its size.
type tooLargeError struct{ limit int64 }

func (e *tooLargeError) Error() string { return TooLarge(e.limit) }

// errBodyUnread and errBodyLate are bodies that could not be read whole.
var (
	errBodyUnread = errors.New("the request body could not be read")
	errBodyLate   = errors.New("the request body did not arrive in time")
)

// maxPresized bounds the buffer a declared length may size at once when no bound on the body's
// size is known here: a client may declare any length.
const maxPresized = 4 << 20

// WholeBody is a request body that a layer in front of the transports has read whole (to bound
// it and count what it costs): readBody takes its bytes as they are rather than reading them
// into a buffer of its own, as long as nothing has read from it since.
type WholeBody struct {
	bytes.Reader
	b []byte
}

// NewWholeBody is b as a request body.
func NewWholeBody(b []byte) *WholeBody {
	w := &WholeBody{b: b}
	w.Reset(b)
	return w
}

// Close does nothing: the bytes are in memory.
func (*WholeBody) Close() error { return nil }

// readBody reads r's body whole, refusing one past maxBytes (0: the server in front bounds it)
// as soon as it passes. A declared length sizes the buffer once, so reading costs one copy of
// the body, not io.ReadAll's doublings, which hold three times its size for a while.
func readBody(r *http.Request, maxBytes int64) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	if maxBytes > 0 && r.ContentLength > maxBytes {
		return nil, &tooLargeError{maxBytes}
	}
	if w, ok := r.Body.(*WholeBody); ok && w.Len() == len(w.b) {
		if maxBytes > 0 && int64(len(w.b)) > maxBytes {
			return nil, &tooLargeError{maxBytes}
		}
		w.Reset(nil) // read, as far as anyone after this can tell
		return w.b, nil
	}
	src := r.Body
	if maxBytes > 0 {
		src = io.NopCloser(io.LimitReader(r.Body, maxBytes+1))
	}
	presize := int64(maxPresized)
	if maxBytes > 0 {
		presize = maxBytes
	}
	body, err := ReadWhole(src, r.ContentLength, presize)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, errBodyLate
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &tooLargeError{mbe.Limit}
		}
		return nil, errBodyUnread
	}
	if maxBytes > 0 && int64(len(body)) > maxBytes {
		return nil, &tooLargeError{maxBytes}
	}
	return body, nil
}

// ReadWhole reads src to its end into one buffer, sized once from declared (a Content-Length;
// 0 or less for none) up to presize, so that reading costs one copy of the body rather than
// io.ReadAll's doublings, which hold three times its size for a while. Its error is src's,
// unwrapped: the caller tells a deadline from a broken connection.
func ReadWhole(src io.Reader, declared, presize int64) ([]byte, error) {
	var buf bytes.Buffer
	if declared > 0 {
		// bytes.MinRead more: ReadFrom grows the buffer unless that much is free when it
		// looks for the end.
		buf.Grow(int(min(declared, presize+1)) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(src)
	return buf.Bytes(), err
}

// bodyStatus is the status that answers a body readBody refused.
func bodyStatus(err error) int {
	var tl *tooLargeError
	switch {
	case errors.As(err, &tl):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, errBodyLate):
		return http.StatusRequestTimeout
	default:
		return http.StatusBadRequest
	}
}

// TooLarge is the message of a request refused for its size, the same from the server's
// limit on JSON bodies and from the upload transport's on multipart ones.
func TooLarge(limit int64) string {
	return fmt.Sprintf("The request body is larger than the limit of %s", bytesize.Format(limit))
}
