package advisorspec_test

import (
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// A refused delivery of a known type says its type, so that the receiver can count refusals by
// type without reading the body again; one whose type is missing or unknown says nothing.
func TestParseWebhookRefusalCarriesOnlyAKnownType(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       advisorspec.EventType // "": no Webhook
	}{
		{"not JSON", `{"EventType":`, ""},
		{"no EventType", `{"Wid": "w1", "Timestamp": "2026-11-22T09:30:00Z"}`, ""},
		{"EventType spelled in another case", `{"eventtype": "AssetDeleted", "Wid": "w1", "Timestamp": "2026-11-22T09:30:00Z"}`, ""},
		{"an unknown type without its Wid", `{"EventType": "ClientWaved", "Timestamp": "2026-11-22T09:30:00Z"}`, ""},
		{"a known type without its Wid", `{"EventType": "AssetDeleted", "Timestamp": "2026-11-22T09:30:00Z", "AssetName": "Boat"}`, advisorspec.AssetDeleted},
		{"a known type with a field out of range", `{"EventType": "ClientProgressChanged", "Wid": "w1", "Timestamp": "2026-11-22T09:30:00Z",
			"EstateStatus": "InProgress", "CompletionPercentage": 101}`, advisorspec.ClientProgressChanged},
		{"an analysis event with a bad Payload", `{"EventType": "TaxJobFailed", "Wid": "w1", "Timestamp": "2026-11-22T09:30:00Z", "Payload": 1}`, advisorspec.TaxJobFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := advisorspec.ParseWebhook([]byte(tc.body))
			if err == nil {
				t.Fatalf("got %s accepted, want it refused", tc.body)
			}
			switch {
			case tc.want == "" && w != nil:
				t.Errorf("got %+v, want no Webhook", w)
			case tc.want != "" && (w == nil || w.EventType != tc.want || w.Wid != "" || w.Canonical != nil):
				t.Errorf("got %+v, want a Webhook holding EventType %s alone", w, tc.want)
			}
		})
	}
}
