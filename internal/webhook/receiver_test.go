package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/event"
	"github.com/advisorhq/gateway/internal/eventlog"
	"github.com/advisorhq/gateway/internal/webhook"
)

const key = "0123456789abcdef-webhook-key"

// progress is a ClientProgressChanged delivery.
const progress = `{"EventType": "ClientProgressChanged", "Wid": "w-1", "Timestamp": "2026-11-22T10:00:00Z",
	"EstateStatus": "InProgress", "CompletionPercentage": 40}`

// flakyLog is the in-memory log, unavailable while down is set, as Redis is in an outage.
type flakyLog struct {
	*eventlog.Memory
	down atomic.Bool
}

func (l *flakyLog) Append(ctx context.Context, firm string, body []byte) (string, bool, error) {
	if l.down.Load() {
		return "", false, fmt.Errorf("append an event: %w", eventlog.ErrUnavailable)
	}
	return l.Memory.Append(ctx, firm, body)
}

// observations records what Receiver.Observe is told.
type observations struct {
	mu  sync.Mutex
	got []string
}

func (o *observations) observe(eventType, outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, eventType+" "+outcome)
}

func (o *observations) take() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	got := o.got
	o.got = nil
	return got
}

// receiver serves a Receiver over a small log on a real loopback server. bodyTimeout, when set,
// is the deadline the gateway's server gives request bodies.
type receiver struct {
	url string
	log *flakyLog
	obs *observations
}

func newReceiver(t *testing.T, bodyTimeout time.Duration) *receiver {
	t.Helper()
	rc := &receiver{log: &flakyLog{Memory: eventlog.NewMemory(100, time.Hour, nil)}, obs: &observations{}}
	h := &webhook.Receiver{Log: rc.log, Keys: []webhook.Key{{Firm: "firm-001", Key: key}}, MaxBytes: 1 << 10, Logger: slog.New(slog.DiscardHandler), Observe: rc.obs.observe}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if bodyTimeout > 0 {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyTimeout))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	rc.url = srv.URL
	return rc
}

type answer struct {
	status     int
	header     http.Header
	body       map[string]any
	retryAfter string
}

func (rc *receiver) send(t *testing.T, method, key, contentType string, body io.Reader) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, rc.url, body)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set(webhook.KeyHeader, key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rc.url, err)
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header}
	if err := json.NewDecoder(resp.Body).Decode(&a.body); err != nil {
		t.Fatalf("got a %d answer that is not JSON: %v", resp.StatusCode, err)
	}
	return a
}

// stalled is a body that never arrives, until the test ends.
func stalled(t *testing.T) io.Reader {
	r, w := io.Pipe()
	t.Cleanup(func() { _ = w.Close() })
	return r
}

func TestReceiverAnswersEachRequestWithItsStatus(t *testing.T) {
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	for _, tc := range []struct {
		name        string
		method      string
		key         string
		contentType string
		body        func(t *testing.T) io.Reader
		bodyTimeout time.Duration
		logDown     bool

		status   int
		error    string // the start of the answer's error
		field    string
		header   [2]string // a header the answer must carry
		observed []string
	}{
		{name: "a missing key is 401 before anything else is looked at", method: "GET", contentType: "text/plain",
			status: 401, error: "Missing or invalid service-api-key header", observed: []string{"unknown unauthorized"}},
		{name: "a wrong key is 401", method: "POST", key: "wrong-key", contentType: "application/json", body: text(progress),
			status: 401, error: "Missing or invalid service-api-key header", observed: []string{"unknown unauthorized"}},
		{name: "a key that is a prefix of the right one is 401", method: "POST", key: key[:8], contentType: "application/json", body: text(progress),
			status: 401, error: "Missing or invalid service-api-key header", observed: []string{"unknown unauthorized"}},
		{name: "GET is 405, naming POST", method: "GET", key: key,
			status: 405, error: "Deliver events with POST", header: [2]string{"Allow", "POST"}},
		{name: "a body that is not JSON by its type is 415", method: "POST", key: key, contentType: "text/plain", body: text(progress),
			status: 415, error: "Content-Type must be application/json"},
		{name: "no Content-Type is 415", method: "POST", key: key, body: text(progress),
			status: 415, error: "Content-Type must be application/json"},
		{name: "a body over the limit is 413", method: "POST", key: key, contentType: "application/json",
			body:   text(`{"EventType": "AssetDeleted", "x": "` + strings.Repeat("a", 2<<10) + `"}`),
			status: 413, error: "The event is larger than the limit of 1 KiB", observed: []string{"unknown invalid"}},
		{name: "a body that is not one JSON object is 400 without a field", method: "POST", key: key, contentType: "application/json", body: text(`[1]`),
			status: 400, error: "the body must be one JSON object", observed: []string{"unknown invalid"}},
		{name: "an EventType the gateway does not know is stored, counted under Unknown", method: "POST", key: key, contentType: "application/json",
			body:   text(`{"EventType": "ClientWentSailing", "Wid": "w", "Timestamp": "2026-11-22T10:00:00Z"}`),
			status: 200, observed: []string{"Unknown stored"}},
		{name: "an EventType the gateway does not know without its envelope is 400", method: "POST", key: key, contentType: "application/json",
			body:   text(`{"EventType": "ClientWentSailing", "Timestamp": "2026-11-22T10:00:00Z"}`),
			status: 400, error: "Wid: is required", field: "Wid", observed: []string{"unknown invalid"}},
		{name: "an EventType in another letter case is missing, counted under no type", method: "POST", key: key, contentType: "application/json",
			body:   text(`{"eventtype": "AssetDeleted", "Wid": "w", "Timestamp": "2026-11-22T10:00:00Z", "AssetName": "Boat"}`),
			status: 400, error: "EventType: ", field: "EventType", observed: []string{"unknown invalid"}},
		{name: "a field out of range is 400 naming the field, counted under its type", method: "POST", key: key, contentType: "application/json",
			body:   text(strings.Replace(progress, `40}`, `101}`, 1)),
			status: 400, error: "CompletionPercentage: must be from 0 to 100, got 101", field: "CompletionPercentage",
			observed: []string{"ClientProgressChanged invalid"}},
		{name: "a field of an analysis payload is 400 naming its path", method: "POST", key: key, contentType: "application/json",
			body:   text(`{"EventType": "TaxJobFailed", "Wid": "w", "Timestamp": "2026-11-22T10:00:00Z", "Payload": {"CorrelationId": "c", "JobId": 7, "DocumentWid": "d", "Reason": "TimedOut"}}`),
			status: 400, error: `Payload.JobId: must be a string`, field: "Payload.JobId", observed: []string{"TaxJobFailed invalid"}},
		{name: "a Reason the gateway does not know is stored", method: "POST", key: key, contentType: "application/json",
			body:   text(`{"EventType": "TaxJobFailed", "Wid": "w", "Timestamp": "2026-11-22T10:00:00Z", "Payload": {"CorrelationId": "c", "JobId": "j", "DocumentWid": "d", "Reason": "Bored"}}`),
			status: 200, observed: []string{"TaxJobFailed stored"}},
		{name: "a body that does not arrive in time is 408", method: "POST", key: key, contentType: "application/json", body: stalled,
			bodyTimeout: 100 * time.Millisecond, status: 408, error: "The body did not arrive in time"},
		{name: "a log that cannot store is 503 with Retry-After", method: "POST", key: key, contentType: "application/json", body: text(progress),
			logDown: true, status: 503, error: "The event could not be stored; deliver it again later", header: [2]string{"Retry-After", "5"},
			observed: []string{"ClientProgressChanged unavailable"}},
		{name: "an event stored is 200 with its id", method: "POST", key: key, contentType: "application/json; charset=utf-8", body: text(progress),
			status: 200, observed: []string{"ClientProgressChanged stored"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := newReceiver(t, tc.bodyTimeout)
			rc.log.down.Store(tc.logDown)
			var body io.Reader
			if tc.body != nil {
				body = tc.body(t)
			}
			got := rc.send(t, tc.method, tc.key, tc.contentType, body)
			if got.status != tc.status {
				t.Fatalf("got status %d (%v), want %d", got.status, got.body, tc.status)
			}
			if msg, _ := got.body["error"].(string); !strings.HasPrefix(msg, tc.error) || tc.error == "" && msg != "" {
				t.Errorf("got error %q, want it to start with %q", msg, tc.error)
			}
			if field, _ := got.body["field"].(string); field != tc.field {
				t.Errorf("got field %q, want %q", field, tc.field)
			}
			if tc.header[0] != "" && got.header.Get(tc.header[0]) != tc.header[1] {
				t.Errorf("got %s %q, want %q", tc.header[0], got.header.Get(tc.header[0]), tc.header[1])
			}
			if obs := rc.obs.take(); strings.Join(obs, ", ") != strings.Join(tc.observed, ", ") {
				t.Errorf("got observed %v, want %v", obs, tc.observed)
			}
			stored, err := rc.log.After(t.Context(), "", 10)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 1, false: 0}[tc.status == 200]; len(stored) != want {
				t.Errorf("got %d events stored, want %d", len(stored), want)
			}
			if tc.status == 200 && (got.body["id"] != stored[0].ID || got.body["duplicate"] != false) {
				t.Errorf("got %v, want id %s and duplicate false", got.body, stored[0].ID)
			}
		})
	}
}

// The receiver checks a delivery once and stores it canonical, so that readers decode it without
// checking it again; a redelivery is the same record, acknowledged with the first one's id.
func TestReceiverStoresTheCanonicalRecordOnce(t *testing.T) {
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	rc := newReceiver(t, 0)
	delivery := `{"Region": "EU", "EventType": "AssetOwnershipAdded", "Wid": "w-1", "Timestamp": "2026-11-22T11:00:00+01:00",
		"AssetName": "Boat", "OwnerAdded": [{"Name": "Jane", "Share": 1}], "assetname": "Car"}`
	first := rc.send(t, "POST", key, "application/json", strings.NewReader(delivery))
	again := rc.send(t, "POST", key, "application/json", strings.NewReader(delivery))
	if first.status != 200 || again.status != 200 {
		t.Fatalf("got statuses %d and %d, want 200 twice", first.status, again.status)
	}
	if first.body["duplicate"] != false || again.body["duplicate"] != true || again.body["id"] != first.body["id"] {
		t.Errorf("got %v then %v, want the same id, the second a duplicate", first.body, again.body)
	}
	if obs := rc.obs.take(); strings.Join(obs, ", ") != "AssetOwnershipAdded stored, AssetOwnershipAdded duplicate" {
		t.Errorf("got observed %v, want stored then duplicate", obs)
	}
	stored, err := rc.log.After(t.Context(), "", 10)
	if err != nil || len(stored) != 1 {
		t.Fatalf("got %d records, %v; want 1", len(stored), err)
	}
	w, bad := advisorspec.ParseWebhook([]byte(delivery))
	if bad != nil {
		t.Fatal(bad)
	}
	if want := event.Record(w); !bytes.Equal(stored[0].Body, want) {
		t.Errorf("got stored %s\nwant      %s", stored[0].Body, want)
	}
	ev, err := event.Decode(stored[0].Body)
	if err != nil {
		t.Fatalf("got %v, want the record decoded", err)
	}
	own, ok := ev.(*event.AssetOwnershipAdded)
	if !ok || own.AssetName != "Boat" || len(own.OwnershipAdded) != 1 || own.OwnershipAdded[0].Name != "Jane" ||
		!own.Timestamp.Equal(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("got %+v, want Boat owned by Jane at 10:00 UTC", ev)
	}
}

// What the receiver pays for a delivery it refuses, counted under its type, and for one it
// stores.
func BenchmarkReceiver(b *testing.B) {
	for _, bc := range []struct {
		name, body string
		status     int
	}{
		{"refused", strings.Replace(progress, `40}`, `101}`, 1), http.StatusBadRequest},
		{"stored", progress, http.StatusOK},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var observed atomic.Int64
			h := &webhook.Receiver{Log: eventlog.NewMemory(100, time.Hour, nil), Keys: []webhook.Key{{Firm: "firm-001", Key: key}},
				Logger: slog.New(slog.DiscardHandler), Observe: func(string, string) { observed.Add(1) }}
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/webhooks", strings.NewReader(bc.body))
				req.Header.Set(webhook.KeyHeader, key)
				req.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != bc.status {
					b.Fatalf("got %d, want %d", w.Code, bc.status)
				}
			}
		})
	}
}

func text(s string) func(*testing.T) io.Reader {
	return func(*testing.T) io.Reader { return strings.NewReader(s) }
}
