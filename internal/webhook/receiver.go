// Package webhook receives the Advisor service's event deliveries: it checks the key, checks the
// event against the specification, and stores it in the event log, in canonical form, before
// saying yes, so a delivery the receiver acknowledged is never lost and one it refused is
// retried.
//
// The gateway may serve several firms, each with its own Advisor service account, which delivers
// that firm's events with that firm's service-api-key: the key a delivery carries says whose
// event it is.
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

// Key is one firm's service-api-key: a delivery that carries it is an event of that firm.
type Key struct {
	Firm, Key string
}

// CheckKeys refuses a set of keys the receiver could not attribute deliveries by: none, a key or
// a firm that is empty, or one key given to two firms (or twice), since a delivery with it could
// be either firm's. A firm may have several keys, as while its key is being rotated.
func CheckKeys(keys []Key) error {
	if len(keys) == 0 {
		return errors.New("webhook keys: no firm has a service-api-key: give each firm the gateway serves its key")
	}
	owner := make(map[string]string, len(keys))
	for i, k := range keys {
		switch {
		case k.Firm == "":
			return fmt.Errorf("webhook keys: key #%d has no firm: name the firm whose Advisor service delivers with it", i+1)
		case k.Key == "":
			return fmt.Errorf("webhook keys: firm %q has an empty service-api-key", k.Firm)
		}
		if other, ok := owner[k.Key]; ok {
			if other == k.Firm {
				return fmt.Errorf("webhook keys: firm %q has the same service-api-key twice", k.Firm)
			}
			return fmt.Errorf("webhook keys: firms %q and %q have the same service-api-key, so their deliveries cannot be told apart: give each firm its own", other, k.Firm)
		}
		owner[k.Key] = k.Firm
	}
	return nil
}

// Receiver is the webhook endpoint's handler.
type Receiver struct {
	// Log stores accepted events.
	Log eventlog.Log
	// Keys are the service-api-keys of the firms served, which CheckKeys accepts. A key given
	// to two firms matches neither: its deliveries are refused with 503, to be delivered again
	// once the configuration is fixed, rather than stored as the wrong firm's.
	Keys []Key
	// MaxBytes bounds a delivery's body; 0 means DefaultMaxBytes.
	MaxBytes int64
	// Logger records refusals and failures, never the key or the body.
	Logger *slog.Logger
	// Observe, when set, counts each delivery by event type and outcome. An event of a type
	// the specification does not have is counted under Unknown.
	Observe func(eventType, outcome string)
	// ObserveUnknown, when set, counts each value a stored delivery holds that the
	// specification does not, by the field's name (EventType, Reason, DocumentName...).
	ObserveUnknown func(field string)

	// warned holds the unknown values already logged, so each is logged once per process.
	warned warnedValues
}

// ServeHTTP answers 200 once the event is stored (or was already) as an event of the firm whose
// key it carries, whatever types and enumeration values it holds that the gateway does not know
// yet (the service adds them, and never retries a refusal), 401 for a missing or unknown key before anything else, 405, 415, 413 and 400
// for what is wrong with the request, and 503 when the store cannot be reached, so the sender
// retries.
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	firm, matches := rc.firmOf(r.Header.Get(KeyHeader))
	switch {
	case matches == 0:
		rc.observe("unknown", "unauthorized")
		reply(w, http.StatusUnauthorized, map[string]any{"error": "Missing or invalid service-api-key header"})
		return
	case matches > 1:
		rc.observe("unknown", "unavailable")
		rc.Logger.ErrorContext(r.Context(), "refused a webhook delivery whose service-api-key is configured for several firms; see webhook.CheckKeys", "firms", matches)
		w.Header().Set("Retry-After", "60")
		reply(w, http.StatusServiceUnavailable, map[string]any{"error": "The gateway cannot tell whose event this is; deliver it again later"})
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
		rc.observe(typeLabel(ev), "invalid")
		rc.Logger.WarnContext(r.Context(), "refused a webhook event", "firm", firm, "field", bad.Field, "reason", bad.Message)
		out := map[string]any{"error": bad.Message}
		if bad.Field != "" {
			out["field"] = bad.Field
		}
		reply(w, http.StatusBadRequest, out)
		return
	}
	typ := string(event.EventType(ev.EventType).Known())
	id, dup, err := rc.Log.Append(r.Context(), firm, event.Record(ev))
	if err != nil {
		rc.observe(typ, "unavailable")
		rc.Logger.ErrorContext(r.Context(), "store a webhook event", "firm", firm, "type", typ, "error", err)
		w.Header().Set("Retry-After", "5")
		reply(w, http.StatusServiceUnavailable, map[string]any{"error": "The event could not be stored; deliver it again later"})
		return
	}
	outcome := "stored"
	if dup {
		outcome = "duplicate"
	}
	// The request's span is the event's receipt; the id ties it to the spans of its delivery on
	// every replica. The type is one of the specification's or Unknown.
	trace.SpanFromContext(r.Context()).SetAttributes(attribute.String("event.id", id), attribute.String("event.type", typ),
		attribute.Bool("event.duplicate", dup))
	rc.observe(typ, outcome)
	rc.noteUnknown(r, firm, ev.Unknown)
	reply(w, http.StatusOK, map[string]any{"id": id, "duplicate": dup})
}

// firmOf returns the firm whose key got is, and how many keys it matched (0 for none, more than
// 1 for a key given to several firms). It compares digests of the keys in constant time, with
// every key and without stopping at a match, so neither a key's content, its length nor which
// firm's it is shows in the time taken.
func (rc *Receiver) firmOf(got string) (firm string, matches int) {
	have := sha256.Sum256([]byte(got))
	match := -1
	for i, k := range rc.Keys {
		want := sha256.Sum256([]byte(k.Key))
		eq := subtle.ConstantTimeCompare(want[:], have[:])
		match = subtle.ConstantTimeSelect(eq, i, match)
		matches += eq
	}
	if got == "" || matches == 0 {
		return "", 0
	}
	return rc.Keys[match].Firm, matches
}

// noteUnknown counts the values of a stored delivery that the specification does not have, and
// logs each the first time this process sees it: the gateway's schema has to learn them.
func (rc *Receiver) noteUnknown(r *http.Request, firm string, values []advisorspec.UnknownValue) {
	for _, v := range values {
		if rc.ObserveUnknown != nil {
			rc.ObserveUnknown(v.Field)
		}
		switch {
		case !rc.warned.first(v):
		case v.Unheld:
			rc.Logger.WarnContext(r.Context(), "stored a webhook event holding a whole number wider than the gateway's field holds; it reaches subscribers as null",
				"firm", firm, "field", v.Field, "value", v.Value)
		default:
			rc.Logger.WarnContext(r.Context(), "stored a webhook event holding a value the gateway does not know yet; it reaches subscribers as UNKNOWN",
				"firm", firm, "field", v.Field, "value", v.Value)
		}
	}
}

func (rc *Receiver) observe(eventType, outcome string) {
	if rc.Observe != nil {
		rc.Observe(eventType, outcome)
	}
}

// typeLabel is the EventType of a refused delivery, which ParseWebhook gives back only when it
// is one of the specification's, so that the metric's label set stays bounded.
func typeLabel(refused *advisorspec.Webhook) string {
	if refused == nil {
		return "unknown"
	}
	return string(refused.EventType)
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
