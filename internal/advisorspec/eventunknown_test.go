package advisorspec_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// The service adds event types and enumeration values before receivers know them, and it does
// not retry a delivery the receiver refused (webhook-events.md; README: "answers 2xx only after
// the event is durably stored, 5xx otherwise"). A value the specification does not have is
// therefore accepted, kept as sent, and listed in Unknown; only the envelope stays required.
func TestParseWebhookAcceptsValuesItDoesNotKnow(t *testing.T) {
	var (
		ajc      = bodies[advisorspec.AssistantJobCompleted]
		ajf      = bodies[advisorspec.AssistantJobFailed]
		tjc      = bodies[advisorspec.TaxJobCompleted]
		tjf      = bodies[advisorspec.TaxJobFailed]
		progress = bodies[advisorspec.ClientProgressChanged]
		started  = bodies[advisorspec.DocumentStarted]
		pending  = bodies[advisorspec.DocumentPendingValidation]
		done     = bodies[advisorspec.DocumentCompleted]
	)
	for _, tc := range []struct {
		name, body, field, value string
	}{
		{"an EventType the specification does not have", `{"EventType":"ClientMovedHouse","Wid":"w1","Timestamp":"2026-11-22T09:30:00Z","NewAddress":{"City":"Lyon"}}`, "EventType", "ClientMovedHouse"},
		{"an EventType in another case", with(progress, "EventType", "clientProgressChanged"), "EventType", "clientProgressChanged"},
		{"an EventType in GraphQL's spelling", with(progress, "EventType", "CLIENT_PROGRESS_CHANGED"), "EventType", "CLIENT_PROGRESS_CHANGED"},
		{"a Documents DocumentType outside the enumeration (flowchart)", with(ajc, "Payload.Documents.2.DocumentType", "Flowchart"), "DocumentType", "Flowchart"},
		{"a Documents DocumentType in GraphQL's spelling", with(ajc, "Payload.Documents.0.DocumentType", "STANDARD_EXEC_SUMMARY"), "DocumentType", "STANDARD_EXEC_SUMMARY"},
		{"an AssistantJobFailed Reason outside its values", with(ajf, "Payload.Reason", "ModelOverloaded"), "Reason", "ModelOverloaded"},
		{"a TaxJobFailed Reason of the estate set only", with(tjf, "Payload.Reason", "FileTooLarge"), "Reason", "FileTooLarge"},
		{"an AssistantJobFailed Reason of the tax set only", with(ajf, "Payload.Reason", "VaultFailed"), "Reason", "VaultFailed"},
		{"a TaxJobFailed Reason in another case", with(tjf, "Payload.Reason", "timedOut"), "Reason", "timedOut"},
		{"a TaxJobCompleted PresentationStatus outside its values", with(tjc, "Payload.PresentationStatus", "Filed"), "PresentationStatus", "Filed"},
		{"an EstateStatus outside its values", with(progress, "EstateStatus", "Started"), "EstateStatus", "Started"},
		{"an EstateStatus in GraphQL's spelling", with(progress, "EstateStatus", "IN_PROGRESS"), "EstateStatus", "IN_PROGRESS"},
		{"a DocumentName outside the supported names", with(started, "DocumentName", "Living Will"), "DocumentName", "Living Will"},
		{"a DocumentName without spaces", with(done, "DocumentName", "JointRevocableTrust"), "DocumentName", "JointRevocableTrust"},
		{"a DocumentName in another case", with(pending, "DocumentName", "last will and testament"), "DocumentName", "last will and testament"},
		{"a DocumentOwnerInfo ContactType outside its values", with(started, "DocumentOwnerInfo.ContactType", "Trust"), "ContactType", "Trust"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := advisorspec.ParseWebhook([]byte(tc.body))
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			want := []advisorspec.UnknownValue{{Field: tc.field, Value: tc.value}}
			if !slices.Equal(w.Unknown, want) {
				t.Errorf("Unknown = %v, want %v", w.Unknown, want)
			}
			if strict := w.Strict(); strict == nil || !strings.HasSuffix(strict.Field, tc.field) || !strings.Contains(strict.Message, tc.value) {
				t.Errorf("Strict() = %v, want a refusal of %s naming %q", strict, tc.field, tc.value)
			}
			if !bytes.Contains(w.Canonical, []byte(`"`+tc.value+`"`)) {
				t.Errorf("the canonical form %s lost the value %q", w.Canonical, tc.value)
			}
			again, err := advisorspec.ParseWebhook(w.Canonical)
			if err != nil || !bytes.Equal(again.Canonical, w.Canonical) {
				t.Errorf("the canonical form does not read back as itself: %v\n%s\n%s", err, w.Canonical, again.Canonical)
			}
		})
	}
}

// A delivery holding only the specification's values has nothing for a strict sender to refuse.
func TestStrictAcceptsTheSpecificationsValues(t *testing.T) {
	for typ, body := range bodies {
		w, err := advisorspec.ParseWebhook([]byte(body))
		if err != nil || w.Strict() != nil || w.Unknown != nil {
			t.Errorf("%s: got %v, Strict %v, Unknown %v; want it accepted with nothing unknown", typ, err, w.Strict(), w.Unknown)
		}
	}
}

// An event of a type the specification does not have is kept whole, the envelope checked: a
// gateway that knows the type reads all of it later.
func TestParseWebhookKeepsAnUnknownTypeWhole(t *testing.T) {
	body := `{"EventType": "ClientMovedHouse", "Wid": "w1", "Timestamp": "2026-11-22T09:30:00Z", "NewAddress": {"City": "Lyon"}}`
	w, err := advisorspec.ParseWebhook([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"EventType":"ClientMovedHouse","Wid":"w1","Timestamp":"2026-11-22T09:30:00Z","NewAddress":{"City":"Lyon"}}`
	if string(w.Canonical) != want || w.Known() || w.Wid != "w1" || w.Timestamp.IsZero() {
		t.Errorf("got %+v (%s), want it kept whole as %s", w, w.Canonical, want)
	}
	for _, bad := range []struct{ name, body, field string }{
		{"no Wid", `{"EventType": "ClientMovedHouse", "Timestamp": "2026-11-22T09:30:00Z"}`, "Wid"},
		{"no Timestamp", `{"EventType": "ClientMovedHouse", "Wid": "w1"}`, "Timestamp"},
		{"a Timestamp that is not one", `{"EventType": "ClientMovedHouse", "Wid": "w1", "Timestamp": "soon"}`, "Timestamp"},
		{"a Wid that is not a string", `{"EventType": "ClientMovedHouse", "Wid": 7, "Timestamp": "2026-11-22T09:30:00Z"}`, "Wid"},
	} {
		if _, err := advisorspec.ParseWebhook([]byte(bad.body)); err == nil || err.Field != bad.field {
			t.Errorf("%s: got %v, want a refusal naming %s", bad.name, err, bad.field)
		}
	}
}

// webhook-events.md: "AssetAdded | DollarAmount integer, the dollar value", with no bound, and
// "DetectedDocumentCount | integer | Number of documents detected in the file." The gateway
// holds a DollarAmount in 64 bits (the schema's BigInt) and a DetectedDocumentCount in 32 (an
// Int). A whole number wider is no reason to lose the event, which the service would not send
// again: it is kept without that field, listed in Unknown as Unheld, and no refusal for Strict.
func TestParseWebhookKeepsAnEventWhoseIntegerIsWiderThanTheGatewayHolds(t *testing.T) {
	var (
		added  = bodies[advisorspec.AssetAdded]
		review = bodies[advisorspec.AssistantMultiDocumentRequiresReview]
		raw    = func(s string) json.RawMessage { return json.RawMessage(s) }
	)
	for _, tc := range []struct {
		name, body, field, value string
		unheld                   bool
	}{
		{"a DollarAmount beyond 32 bits is held", with(added, "DollarAmount", raw("3000000000")), "DollarAmount", "3000000000", false},
		{"a DollarAmount beyond 2^53 is held", with(added, "DollarAmount", raw("9007199254740993")), "DollarAmount", "9007199254740993", false},
		{"a negative DollarAmount beyond 32 bits is held", with(added, "DollarAmount", raw("-3000000000")), "DollarAmount", "-3000000000", false},
		{"a DollarAmount beyond 64 bits is not", with(added, "DollarAmount", raw("99999999999999999999")), "DollarAmount", "99999999999999999999", true},
		{"a DetectedDocumentCount of 32 bits is held", with(review, "Payload.DetectedDocumentCount", raw("2147483647")), "DetectedDocumentCount", "2147483647", false},
		{"a DetectedDocumentCount beyond 32 bits is not", with(review, "Payload.DetectedDocumentCount", raw("2147483648")), "DetectedDocumentCount", "2147483648", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := advisorspec.ParseWebhook([]byte(tc.body))
			if err != nil || w.Strict() != nil {
				t.Fatalf("refused: %v, Strict %v", err, w.Strict())
			}
			kept := bytes.Contains(w.Canonical, []byte(`"`+tc.field+`":`+tc.value))
			if !tc.unheld {
				if !kept || w.Unknown != nil {
					t.Fatalf("canonical %s, Unknown %v; want the value kept and nothing unknown", w.Canonical, w.Unknown)
				}
				return
			}
			want := []advisorspec.UnknownValue{{Field: tc.field, Value: tc.value, Unheld: true}}
			if !slices.Equal(w.Unknown, want) {
				t.Errorf("Unknown = %v, want %v", w.Unknown, want)
			}
			if bytes.Contains(w.Canonical, []byte(`"`+tc.field+`"`)) {
				t.Errorf("the canonical form %s keeps the field, which the gateway cannot read back", w.Canonical)
			}
		})
	}
}
