// Package diskbudget bounds the bytes that the gateway's temporary files hold on the disk at
// once: multipart uploads in flight and the copies bulk loads keep while they run. Each user's
// own limit (a request's MaxUploadBytes, a load's files) does not bound what many of them put on
// a disk the gateway shares with its logs and the rest of the host; one Budget, shared by all of
// them, does.
package diskbudget

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/advisorhq/gateway/internal/bytesize"
)

// Budget is a number of bytes that its users reserve before they write and release once the
// file is removed. It is safe for concurrent use.
type Budget struct {
	limit int64
	used  atomic.Int64
}

// New returns a budget of limit bytes; limit must be positive.
func New(limit int64) (*Budget, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("a disk budget must be positive, not %d bytes", limit)
	}
	return &Budget{limit: limit}, nil
}

// Limit is the budget's size in bytes.
func (b *Budget) Limit() int64 { return b.limit }

// Used is how many bytes are reserved now.
func (b *Budget) Used() int64 { return b.used.Load() }

// Reserve takes n bytes from the budget; it reports false, and takes nothing, when they would
// exceed it.
func (b *Budget) Reserve(n int64) bool {
	if n < 0 {
		return false
	}
	for {
		used := b.used.Load()
		if used+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

// Release gives back n bytes that Reserve took.
func (b *Budget) Release(n int64) { b.used.Add(-n) }

// ErrSpent ends a write that would take the budget's users past its limit. Errors that wrap it
// say whose budget it was (see Spent).
var ErrSpent = errors.New("the disk budget for temporary files is spent")

// Spent is the error of a write refused by b: it wraps ErrSpent and names the setting, so that
// an operator reading it knows what to change.
func (b *Budget) Spent() error {
	return fmt.Errorf("%w: the temporary files of uploads and bulk loads in progress would exceed %s (UPLOAD_DISK_BUDGET)",
		ErrSpent, bytesize.Format(b.limit))
}

// Writer writes to w what the budget allows, reserving each write before it is made, so that a
// refused file never puts more on the disk than the budget allows. Held counts what it
// reserved: its owner releases that once the file is removed.
type Writer struct {
	b    *Budget
	w    io.Writer
	held int64
}

// NewWriter returns a Writer to w within b.
func (b *Budget) NewWriter(w io.Writer) *Writer { return &Writer{b: b, w: w} }

func (w *Writer) Write(p []byte) (int, error) {
	if !w.b.Reserve(int64(len(p))) {
		return 0, w.b.Spent()
	}
	w.held += int64(len(p))
	return w.w.Write(p)
}

// Held is how many bytes the writer reserved.
func (w *Writer) Held() int64 { return w.held }
