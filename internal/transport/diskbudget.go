package transport

import (
	"io"
	"os"

	"github.com/advisorhq/gateway/internal/diskbudget"
)

// defaultUploadDiskBudget applies when Config sets neither DiskBudget nor UploadDiskBudget.
const defaultUploadDiskBudget = 10 << 30

// uploadBudget is the budget cfg gives, or one of its own for the uploads alone.
func uploadBudget(cfg *Config) *diskbudget.Budget {
	if cfg.DiskBudget != nil {
		return cfg.DiskBudget
	}
	limit := cfg.UploadDiskBudget
	if limit <= 0 {
		limit = defaultUploadDiskBudget
	}
	b, _ := diskbudget.New(limit) // limit is positive
	return b
}

// spool is one request's temporary files and the share of the disk budget they hold.
type spool struct {
	budget *diskbudget.Budget
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
	w := s.budget.NewWriter(f)
	n, err := io.Copy(w, r)
	s.held += w.Held()
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
	s.budget.Release(s.held)
	s.held = 0
}
