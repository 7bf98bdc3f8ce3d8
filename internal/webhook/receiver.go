// Package webhook receives the Advisor service's event deliveries: it checks the shared key,
// checks the event against the specification, and stores it in the event log, in canonical form,
// before saying yes, so a delivery the receiver acknowledged is never lost and one it refused is
// retried.
package webhook

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"os"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/bytesize"
	"github.com/advisorhq/gateway/internal/event"
	"github.com/advisorhq/gateway/internal/eventlog"
)

// KeyHeader carries the shared key on every delivery.
const KeyHeader = "service-api-key"

// DefaultMaxBytes bounds one delivery; the largest event the specification describes is a few
// kilobytes.
const DefaultMaxBytes = 256 << 10

// Receiver is the webhook endpoint's handler.
type Receiver struct {
	// Log stores accepted events.
	Log eventlog.Log
	// Key is the expected service-api-key.
	Key string
	// MaxBytes bounds a delivery's body; 0 means DefaultMaxBytes.
	MaxBytes int64
	// Logger records refusals and failures, never the key or the body.
	Logger *slog.Logger
	// Observe, when set, counts each delivery by event type and outcome.
	Observe func(eventType, outcome string)
}

// ServeHTTP answers 200 once the event is stored (or was already), 401 for a missing or wrong
// key before anything else, 405, 415, 413 and 400 for what is wrong with the request, and 503
// when the store cannot be reached, so the sender retries.
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !rc.authorized(r.Header.Get(KeyHeader)) {
		rc.observe("unknown", "unauthorized")
		reply(w, http.StatusUnauthorized, map[string]any{"error": "Missing or invalid service-api-key header"})
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		reply(w, http.StatusMethodNotAllowed, map[string]any{"error": "Deliver events with POST"})
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		reply(w, http.StatusUnsupportedMediaType, map[string]any{"error": "Content-Type must be application/json"})
		return
	}
	limit := rc.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			rc.observe("unknown", "invalid")
			reply(w, http.StatusRequestEntityTooLarge, map[string]any{"error": fmt.Sprintf("The event is larger than the limit of %s", bytesize.Format(limit))})
			return
		}
		if errors.Is(err, os.ErrDeadlineExceeded) { // the server's body deadline: a stalled sender
			reply(w, http.StatusRequestTimeout, map[string]any{"error": "The body did not arrive in time"})
			return
		}
		reply(w, http.StatusBadRequest, map[string]any{"error": "The body could not be read"})
		return
	}
	// Checked once, here: what is stored is the canonical record, which every reader decodes
	// without checking again.
	ev, bad := advisorspec.ParseWebhook(body)
	if bad != nil {
		rc.observe(typeLabel(body), "invalid")
		rc.Logger.WarnContext(r.Context(), "refused a webhook event", "field", bad.Field, "reason", bad.Message)
		out := map[string]any{"error": bad.Message}
		if bad.Field != "" {
			out["field"] = bad.Field
		}
		reply(w, http.StatusBadRequest, out)
		return
	}
	typ := string(ev.EventType)
	id, dup, err := rc.Log.Append(r.Context(), event.Record(ev))
	if err != nil {
		rc.observe(typ, "unavailable")
		rc.Logger.ErrorContext(r.Context(), "store a webhook event", "type", typ, "error", err)
		w.Header().Set("Retry-After", "5")
		reply(w, http.StatusServiceUnavailable, map[string]any{"error": "The event could not be stored; deliver it again later"})
		return
	}
	outcome := "stored"
	if dup {
		outcome = "duplicate"
	}
	// The request's span is the event's receipt; the id ties it to the spans of its delivery on
	// every replica. The type is one of the specification's, checked above.
	trace.SpanFromContext(r.Context()).SetAttributes(attribute.String("event.id", id), attribute.String("event.type", typ),
		attribute.Bool("event.duplicate", dup))
	rc.observe(typ, outcome)
	reply(w, http.StatusOK, map[string]any{"id": id, "duplicate": dup})
}

// authorized compares digests of the keys in constant time, so neither the key's content nor
// its length shows in the time taken.
func (rc *Receiver) authorized(got string) bool {
	want := sha256.Sum256([]byte(rc.Key))
	have := sha256.Sum256([]byte(got))
	return got != "" && subtle.ConstantTimeCompare(want[:], have[:]) == 1
}

func (rc *Receiver) observe(eventType, outcome string) {
	if rc.Observe != nil {
		rc.Observe(eventType, outcome)
	}
}

// typeLabel is the EventType of a refused body when it is one of the specification's, so the
// metric's label set stays bounded.
func typeLabel(body []byte) string {
	var env struct{ EventType string }
	_ = json.Unmarshal(body, &env)
	if advisorspec.EventType(env.EventType).Group() != "" {
		return env.EventType
	}
	return "unknown"
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
