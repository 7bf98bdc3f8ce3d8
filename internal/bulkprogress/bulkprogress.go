// Package bulkprogress keeps where each bulk upload stands, so that any replica can answer
// for an upload another one runs: in Redis when the gateway has one, in memory otherwise.
package bulkprogress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Phase is how far an upload has come. The values are the GraphQL enum's.
type Phase string

// The phases, in the order an upload goes through them; DONE and FAILED end it.
const (
	Validating Phase = "VALIDATING"
	Uploading  Phase = "UPLOADING"
	Processing Phase = "PROCESSING"
	Done       Phase = "DONE"
	Failed     Phase = "FAILED"
)

// Final reports whether nothing follows p.
func (p Phase) Final() bool { return p == Done || p == Failed }

// Progress is where one upload stands.
type Progress struct {
	ID string `json:"id"`
	// Firm is the id of the firm whose load it is: only that firm's callers see it.
	Firm  string `json:"firm,omitempty"`
	Phase Phase  `json:"phase"`
	// Rows and Bytes are done of RowsTotal and BytesTotal; a total is 0 while unknown.
	Rows       int64 `json:"rows"`
	RowsTotal  int64 `json:"rowsTotal"`
	Bytes      int64 `json:"bytes"`
	BytesTotal int64 `json:"bytesTotal"`
	// Error says why a FAILED upload failed, in words for its user.
	Error string `json:"error,omitempty"`
	// Validation is what the gateway's checks found in the files, as bulk reports it.
	Validation json.RawMessage `json:"validation,omitempty"`
	// Result is what the service reported once it processed the files, as it wrote it.
	Result    json.RawMessage `json:"result,omitempty"`
	UpdatedAt time.Time       `json:"updatedAt"`
}

// Store keeps progress. Each Put replaces the upload's progress and wakes its watchers.
type Store interface {
	Put(ctx context.Context, p Progress) error
	// Get returns the upload's progress; ok is false for an unknown or expired upload.
	Get(ctx context.Context, id string) (p Progress, ok bool, err error)
	// Watch calls see with the upload's progress now and at each change, in order, until the
	// phase is final, ctx ends or the store fails; it returns why it stopped (nil for a final
	// phase). see runs on Watch's goroutine. A watcher that falls behind sees the latest
	// progress, not every step: progress is a state, not a log.
	Watch(ctx context.Context, id string, see func(Progress)) error
}

// TTL is how long an upload's progress is kept after its last change: long enough to look at
// the result of a load the day after.
const TTL = 48 * time.Hour

// ErrUnknown is Watch's answer for an upload it has no progress of.
var ErrUnknown = errors.New("no bulk upload has that id, or its progress has expired")

// check refuses progress a store should not keep.
func check(p Progress) error {
	switch {
	case p.ID == "":
		return errors.New("bulk progress without an id")
	case p.Phase == "":
		return fmt.Errorf("bulk progress of %s without a phase", p.ID)
	}
	return nil
}
