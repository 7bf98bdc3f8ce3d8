package gqlrun

import (
	"bytes"
	"context"
	"sync"
)

// A response is written to one buffer, presized to what its fields charged (Lane.Size): the
// family query's is 170 KB, a third of what the query allocates, and garbage collection
// follows bytes allocated. A transport that writes the response and then holds nothing of it
// lends the response a buffer from a pool and takes it back after (WithResponseBuffer).

// lent is the buffer lent to the response executed within a context, once it has taken it.
type lent struct{ buf *bytes.Buffer }

type lentKey struct{}

// maxPooled bounds the buffers kept for the next responses: a rare huge answer's is left to
// the collector rather than held by the pool.
const maxPooled = 1 << 20

var responseBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// WithResponseBuffer lends the first response executed within ctx a pooled buffer. release
// gives it back: call it once the response has been written and nothing holds its Data (a
// deferred part, a queue of a subscriber's results), and never otherwise.
func WithResponseBuffer(ctx context.Context) (_ context.Context, release func()) {
	l := &lent{}
	return context.WithValue(ctx, lentKey{}, l), func() {
		if b := l.buf; b != nil && b.Cap() <= maxPooled {
			l.buf = nil
			b.Reset()
			responseBuffers.Put(b)
		}
	}
}

// ResponseBuffer is the buffer a response of about size bytes is written to: the one ctx
// lends, the first time it is asked, or a buffer of its own.
func ResponseBuffer(ctx context.Context, size int) *bytes.Buffer {
	if l, ok := ctx.Value(lentKey{}).(*lent); ok && l.buf == nil {
		b := responseBuffers.Get().(*bytes.Buffer)
		b.Grow(size)
		l.buf = b
		return b
	}
	b := new(bytes.Buffer)
	b.Grow(size)
	return b
}
