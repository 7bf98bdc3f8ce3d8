package webhook_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/eventlog"
	"github.com/advisorhq/gateway/internal/webhook"
)

// The service adds event types and values before the gateway knows them and never retries a
// refusal (the receiver answers "2xx only after the event is durably stored, 5xx otherwise"):
// such an event is stored and answered 200, each unknown value is counted by its field, and
// logged once per process however often it arrives.
func TestReceiverStoresUnknownValuesCountingAndLoggingEachOnce(t *testing.T) {
	var logged bytes.Buffer
	var mu sync.Mutex
	var counted []string
	h := &webhook.Receiver{Log: eventlog.NewMemory(100, time.Hour, nil), Keys: []webhook.Key{{Firm: "firm-001", Key: key}},
		Logger: slog.New(slog.NewTextHandler(&logged, nil)),
		ObserveUnknown: func(field string) {
			mu.Lock()
			defer mu.Unlock()
			counted = append(counted, field)
		}}
	for i, body := range []string{
		`{"EventType": "ClientMovedHouse", "Wid": "w-1", "Timestamp": "2026-11-22T10:00:00Z", "City": "Lyon"}`,
		`{"EventType": "ClientMovedHouse", "Wid": "w-2", "Timestamp": "2026-11-22T10:00:00Z", "City": "Nice"}`,
		`{"EventType": "AssistantJobFailed", "Wid": "w-1", "Timestamp": "2026-11-22T10:00:00Z",
			"Payload": {"CorrelationId": "c", "JobId": "j", "DocumentWid": "d", "Reason": "ModelOverloaded"}}`,
		// "AssetAdded | DollarAmount integer, the dollar value": no bound, but wider than 64 bits.
		`{"EventType": "AssetAdded", "Wid": "w-1", "Timestamp": "2026-11-22T10:00:00Z", "AssetName": "Ranch", "DollarAmount": 99999999999999999999}`,
	} {
		req := httptest.NewRequest(http.MethodPost, "/webhooks", strings.NewReader(body))
		req.Header.Set(webhook.KeyHeader, key)
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("delivery %d: got %d %s, want 200", i, w.Code, w.Body)
		}
	}
	if got := strings.Join(counted, ","); got != "EventType,EventType,Reason,DollarAmount" {
		t.Errorf("counted %s, want EventType twice, Reason and DollarAmount once", got)
	}
	if !strings.Contains(logged.String(), "wider than the gateway's field holds") {
		t.Errorf("the DollarAmount wider than 64 bits is not logged as such:\n%s", logged.String())
	}
	for value, want := range map[string]int{"value=ClientMovedHouse": 1, "value=ModelOverloaded": 1, "value=99999999999999999999": 1} {
		if got := strings.Count(logged.String(), value); got != want {
			t.Errorf("logged %s %d times, want %d:\n%s", value, got, want, logged.String())
		}
	}
}
