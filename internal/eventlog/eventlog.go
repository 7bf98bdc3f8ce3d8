// Package eventlog is the record of webhook events: an append-only, bounded, de-duplicating log
// whose ids are ordered cursors. With Redis it is a Redis Stream shared by every gateway replica,
// announced on pub/sub; without, an in-process log with the same behaviour inside one process.
//
// Every event belongs to a firm, the tenant whose Advisor service delivered it. The firms share
// one log, so that ids order every event and a cursor is one position for all; each record
// carries its firm, and readers hand a firm only its own records.
package eventlog

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Record is one stored event: its id, its firm and the bytes stored for it. The log does not look
// inside; the webhook receiver stores each event in canonical form (event.Record), so that a body
// is the same for the same event, and de-duplication and readers can rely on it.
type Record struct {
	ID string
	// Firm is the firm the event belongs to; "" for a record stored before events had firms,
	// which readers attribute to a firm of their choosing (eventhub.Options.DefaultFirm).
	Firm string
	Body []byte
}

// Log stores events and tells watchers when there are new ones.
type Log interface {
	// Append stores body as an event of firm and returns its id. A body identical to one the
	// same firm stored within the de-duplication window is not stored again: the first one's id
	// comes back with duplicate set. The same body from another firm is another event. An empty
	// firm is refused with ErrNoFirm.
	Append(ctx context.Context, firm string, body []byte) (id string, duplicate bool, err error)
	// After returns up to n records with ids after the given one ("" or "0-0" for the oldest
	// kept), oldest first.
	After(ctx context.Context, after string, n int) ([]Record, error)
	// Before returns up to n records with ids before the given one ("" for the newest), newest
	// first.
	Before(ctx context.Context, before string, n int) ([]Record, error)
	// Bounds returns the oldest and newest ids kept, both "0-0" when the log is empty.
	Bounds(ctx context.Context) (oldest, newest string, err error)
	// Trimmed returns the newest id dropped to keep the log bounded, "0-0" when none was.
	Trimmed(ctx context.Context) (string, error)
	// Watch calls wake whenever records may have been appended (by any replica), until ctx
	// ends. A wake-up can be lost (pub/sub is at-most-once), so readers also poll.
	Watch(ctx context.Context, wake func())
	// Ping reports whether the log can be written now: a store that answers but refuses writes
	// (a Redis out of memory) fails it. Each call may write to the store, so callers bound how
	// often they ask.
	Ping(ctx context.Context) error
}

// ErrUnavailable wraps every failure to reach the store, or to write to it, so callers can answer
// "try again".
var ErrUnavailable = errors.New("the event store is unavailable")

// ErrNoFirm is Append's answer for an event of no firm: every event stored now belongs to one,
// so that no reader can mistake it for a record stored before events had firms.
var ErrNoFirm = errors.New("an event must belong to a firm: the firm is empty")

// Zero is the id before every record.
const Zero = "0-0"

// ID is a parsed record id: milliseconds and a sequence number, as Redis Streams number entries.
type ID struct{ MS, Seq uint64 }

// ParseID reads an id such as 1732266000000-0.
func ParseID(s string) (ID, error) {
	ms, seq, ok := strings.Cut(s, "-")
	a, err1 := strconv.ParseUint(ms, 10, 64)
	b, err2 := strconv.ParseUint(seq, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return ID{}, fmt.Errorf("%q is not an event id such as 1732266000000-0", s)
	}
	return ID{a, b}, nil
}

func (id ID) String() string { return fmt.Sprintf("%d-%d", id.MS, id.Seq) }

// Less orders ids.
func (id ID) Less(o ID) bool { return id.MS < o.MS || id.MS == o.MS && id.Seq < o.Seq }

// Less reports whether id a comes before id b; ids that do not parse sort first.
func Less(a, b string) bool {
	x, _ := ParseID(a)
	y, _ := ParseID(b)
	return x.Less(y)
}

// digest is the de-duplication key of a firm's body: a redelivery is byte-identical and comes
// from the same firm. The firm's length comes first, so that no two (firm, body) pairs hash the
// same input: firm "a" with body "b..." and firm "ab" with body "..." differ.
func digest(firm string, body []byte) string {
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(firm)))
	h.Write(n[:])
	h.Write([]byte(firm))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}
