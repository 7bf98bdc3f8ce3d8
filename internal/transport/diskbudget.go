package transport

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
)

// defaultUploadDiskBudget applies when Config.UploadDiskBudget is not set.
const defaultUploadDiskBudget = 10 << 30

// diskBudget bounds the bytes that all uploads in flight hold in temporary files. Each request's
// own limit (MaxUploadBytes) does not bound what many requests at once put on the disk, which the
// gateway shares with its logs and the rest of the host.
type diskBudget struct {
	limit int64
	used  atomic.Int64
}

func newDiskBudget(limit int64) *diskBudget {
	if limit <= 0 {
		limit = defaultUploadDiskBudget
	}
	return &diskBudget{limit: limit}
}

// reserve takes n bytes from the budget; it reports false, and takes nothing, when they would
// exceed it.
func (b *diskBudget) reserve(n int64) bool {
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

func (b *diskBudget) release(n int64) { b.used.Add(-n) }

// errOverBudget ends the spilling of a file that would take the uploads in flight past the
// disk budget.
var errOverBudget = errors.New("the disk budget for uploads is spent")

// spool is one request's temporary files and the share of the disk budget they hold.
type spool struct {
	budget *diskBudget
	files  []*os.File
	held   int64
}

// spill copies r into a new temporary file, reserving each write from the budget before it is
// made, so that a refused upload never puts more on the disk than the budget allows.
func (s *spool) spill(r io.Reader) (*os.File, int64, error) {
	f, err := os.CreateTemp("", "gateway-upload-")
	if err != nil {
		return nil, 0, err
	}
	s.files = append(s.files, f)
	n, err := io.Copy(budgeted{s, f}, r)
	return f, n, err
}

// release removes the files and gives their share back to the budget. It may be called more
// than once.
func (s *spool) release() {
	for _, f := range s.files {
		_ = f.Close()
		_ = os.Remove(f.Name())
	}
	s.files = nil
	s.budget.release(s.held)
	s.held = 0
}

// budgeted writes to a spool's file what the budget allows.
type budgeted struct {
	s *spool
	f *os.File
}

func (b budgeted) Write(p []byte) (int, error) {
	if !b.s.budget.reserve(int64(len(p))) {
		return 0, errOverBudget
	}
	b.s.held += int64(len(p))
	return b.f.Write(p)
}
