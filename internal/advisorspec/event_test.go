package advisorspec_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/advisorspec/webhooktest"
)

// The sample client and the instant most bodies carry.
const wid = webhooktest.Wid

var stamp = time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)

// bodies are full webhook bodies of every event type, with the specification's fields. They
// live once, in webhooktest's testdata, for every test that needs them.
var bodies = webhooktest.Bodies[advisorspec.EventType]()

// with returns a body with one field set or, given absent, removed (webhooktest.With).
var (
	with   = webhooktest.With
	absent = webhooktest.Absent
)

// A body that breaks the specification is refused with an *Error naming the field's path in
// the body.
func TestParseWebhookRefusesWithTheFieldsPath(t *testing.T) {
	var (
		ajc      = bodies[advisorspec.AssistantJobCompleted]
		ajf      = bodies[advisorspec.AssistantJobFailed]
		review   = bodies[advisorspec.AssistantMultiDocumentRequiresReview]
		tjc      = bodies[advisorspec.TaxJobCompleted]
		tjf      = bodies[advisorspec.TaxJobFailed]
		accepted = bodies[advisorspec.ClientAcceptedInvitation]
		declined = bodies[advisorspec.ClientDeclinedInvitation]
		progress = bodies[advisorspec.ClientProgressChanged]
		added    = bodies[advisorspec.AssetAdded]
		benAdded = bodies[advisorspec.AssetBeneficiaryAdded]
		benDel   = bodies[advisorspec.AssetBeneficiaryDeleted]
		ownAdded = bodies[advisorspec.AssetOwnershipAdded]
		ownDel   = bodies[advisorspec.AssetOwnershipDeleted]
		started  = bodies[advisorspec.DocumentStarted]
		pending  = bodies[advisorspec.DocumentPendingValidation]
		done     = bodies[advisorspec.DocumentCompleted]
		raw      = func(s string) json.RawMessage { return json.RawMessage(s) }
	)
	tests := []struct {
		name  string
		body  string
		field string
		// message, when set, must occur in the error's Message.
		message string
	}{
		// The body.
		{name: "body is a JSON array", body: `[{"EventType": "AssetDeleted"}]`, field: ""},
		{name: "body is a JSON string", body: `"AssetDeleted"`, field: ""},
		{name: "body is JSON null", body: `null`, field: ""},
		{name: "body is a number", body: `42`, field: ""},
		{name: "body is empty", body: ``, field: ""},
		{name: "body is not JSON", body: `{"Wid": `, field: ""},
		{name: "body holds two JSON objects", body: bodies[advisorspec.AssetDeleted] + ` {}`, field: ""},

		// The envelope.
		{name: "EventType missing", body: with(progress, "EventType", absent), field: "EventType", message: "required"},
		{name: "EventType null", body: with(progress, "EventType", nil), field: "EventType", message: "required"},
		{name: "EventType empty", body: with(progress, "EventType", ""), field: "EventType"},
		{name: "EventType not a string", body: with(progress, "EventType", 7), field: "EventType"},
		{name: "Wid missing", body: with(progress, "Wid", absent), field: "Wid", message: "required"},
		{name: "Wid empty", body: with(progress, "Wid", ""), field: "Wid"},
		{name: "Wid blank", body: with(progress, "Wid", "   "), field: "Wid"},
		{name: "Wid over 64 characters", body: with(progress, "Wid", strings.Repeat("w", 65)), field: "Wid", message: "64"},
		{name: "Wid not a string", body: with(progress, "Wid", 12345), field: "Wid"},
		{name: "Wid missing on an analysis event", body: with(ajf, "Wid", absent), field: "Wid"},
		{name: "Timestamp missing", body: with(progress, "Timestamp", absent), field: "Timestamp"},
		{name: "Timestamp empty", body: with(progress, "Timestamp", ""), field: "Timestamp"},
		{name: "Timestamp not a date-time", body: with(progress, "Timestamp", "yesterday"), field: "Timestamp"},
		{name: "Timestamp a date without a time", body: with(progress, "Timestamp", "2026-11-22"), field: "Timestamp"},
		{name: "Timestamp with an impossible month", body: with(progress, "Timestamp", "2026-13-22T09:30:00Z"), field: "Timestamp"},
		{name: "Timestamp a Unix time number", body: with(progress, "Timestamp", 1795340000), field: "Timestamp"},

		// The analysis envelope.
		{name: "AssistantJobCompleted without Payload", body: with(ajc, "Payload", absent), field: "Payload", message: "required"},
		{name: "AssistantJobFailed without Payload", body: with(ajf, "Payload", absent), field: "Payload"},
		{name: "AssistantMultiDocumentRequiresReview without Payload", body: with(review, "Payload", absent), field: "Payload"},
		{name: "TaxJobCompleted without Payload", body: with(tjc, "Payload", absent), field: "Payload"},
		{name: "TaxJobFailed without Payload", body: with(tjf, "Payload", absent), field: "Payload"},
		{name: "analysis Payload null", body: with(tjf, "Payload", nil), field: "Payload"},
		{name: "analysis Payload a string", body: with(tjf, "Payload", "{}"), field: "Payload"},
		{name: "analysis Payload an array", body: with(tjf, "Payload", []any{}), field: "Payload"},
		{name: "analysis fields at the top level instead of in Payload",
			body:  `{"Wid": "w1", "EventType": "TaxJobFailed", "Timestamp": "2026-11-22T09:30:00Z", "CorrelationId": "c", "JobId": "j", "DocumentWid": "d", "Reason": "TimedOut"}`,
			field: "Payload"},
		{name: "ExternalId a number", body: with(ajc, "ExternalId", 4711), field: "ExternalId"},
		{name: "ExternalId a boolean", body: with(tjf, "ExternalId", true), field: "ExternalId"},
		{name: "ExternalId an object", body: with(review, "ExternalId", map[string]any{"id": "crm-1"}), field: "ExternalId"},

		// Analysis payloads: required fields and types.
		{name: "Payload.CorrelationId missing", body: with(ajc, "Payload.CorrelationId", absent), field: "Payload.CorrelationId"},
		{name: "Payload.CorrelationId not a string", body: with(ajf, "Payload.CorrelationId", 5), field: "Payload.CorrelationId"},
		{name: "Payload.JobId missing", body: with(tjf, "Payload.JobId", absent), field: "Payload.JobId"},
		{name: "Payload.DocumentWid missing", body: with(review, "Payload.DocumentWid", absent), field: "Payload.DocumentWid"},
		{name: "Payload.DocumentWid empty", body: with(tjc, "Payload.DocumentWid", ""), field: "Payload.DocumentWid"},
		{name: "AssistantJobCompleted Payload.Documents missing", body: with(ajc, "Payload.Documents", absent), field: "Payload.Documents"},
		{name: "AssistantJobCompleted Payload.Documents not an array", body: with(ajc, "Payload.Documents", map[string]any{}), field: "Payload.Documents"},
		{name: "AssistantJobCompleted Documents item not an object", body: with(ajc, "Payload.Documents.1", "vault-gen-002"), field: "Payload.Documents[1]"},
		{name: "AssistantJobCompleted Documents item without DocumentType", body: with(ajc, "Payload.Documents.1.DocumentType", absent), field: "Payload.Documents[1].DocumentType"},
		{name: "AssistantJobCompleted Documents item without VaultId", body: with(ajc, "Payload.Documents.0.VaultId", absent), field: "Payload.Documents[0].VaultId"},
		{name: "AssistantJobCompleted category not estate", body: with(ajc, "Payload.category", "tax"), field: "Payload.category", message: "estate"},
		{name: "AssistantJobCompleted category not a string", body: with(ajc, "Payload.category", 1), field: "Payload.category"},
		{name: "TaxJobCompleted category not tax", body: with(tjc, "Payload.category", "estate"), field: "Payload.category", message: "tax"},
		{name: "TaxJobCompleted category in another case", body: with(tjc, "Payload.category", "Tax"), field: "Payload.category"},
		{name: "source_document not an object", body: with(ajc, "Payload.source_document", "vault-doc-001"), field: "Payload.source_document"},
		{name: "source_document without vault_id", body: with(tjc, "Payload.source_document.vault_id", absent), field: "Payload.source_document.vault_id"},
		{name: "source_document uploaded_at not a date-time", body: with(ajc, "Payload.source_document.uploaded_at", "last Tuesday"), field: "Payload.source_document.uploaded_at"},
		{name: "source_document uploaded_at not a string", body: with(tjc, "Payload.source_document.uploaded_at", 1795340000), field: "Payload.source_document.uploaded_at"},
		{name: "source_document name not a string", body: with(ajc, "Payload.source_document.name", []any{"a"}), field: "Payload.source_document.name"},
		{name: "AssistantJobFailed Reason missing", body: with(ajf, "Payload.Reason", absent), field: "Payload.Reason"},
		{name: "TaxJobFailed Reason missing", body: with(tjf, "Payload.Reason", absent), field: "Payload.Reason"},
		{name: "TaxJobCompleted PresentationStatus not a string", body: with(tjc, "Payload.PresentationStatus", true), field: "Payload.PresentationStatus"},
		{name: "DetectedDocumentCount negative", body: with(review, "Payload.DetectedDocumentCount", -1), field: "Payload.DetectedDocumentCount"},
		{name: "DetectedDocumentCount a string", body: with(review, "Payload.DetectedDocumentCount", "3"), field: "Payload.DetectedDocumentCount"},
		{name: "DetectedDocumentCount 1.5 is not an integer", body: with(review, "Payload.DetectedDocumentCount", raw("1.5")), field: "Payload.DetectedDocumentCount"},
		{name: "VaultLink not a string", body: with(review, "Payload.VaultLink", 3), field: "Payload.VaultLink"},

		// Client events.
		{name: "ClientAcceptedInvitation RegistrationEmail over 320 characters", body: with(accepted, "RegistrationEmail", strings.Repeat("a", 309)+"@example.com"), field: "RegistrationEmail", message: "320"},
		{name: "ClientDeclinedInvitation RegistrationEmail over 320 characters", body: with(declined, "RegistrationEmail", strings.Repeat("a", 309)+"@example.com"), field: "RegistrationEmail"},
		{name: "ClientAcceptedInvitation RegistrationEmail not a string", body: with(accepted, "RegistrationEmail", 1), field: "RegistrationEmail"},
		{name: "ClientAcceptedInvitation AdvisorWid over 64 characters", body: with(accepted, "AdvisorWid", strings.Repeat("a", 65)), field: "AdvisorWid"},
		{name: "ClientDeclinedInvitation TeamId over 64 characters", body: with(declined, "TeamId", strings.Repeat("t", 65)), field: "TeamId"},
		{name: "ClientAcceptedInvitation CompanyId over 64 characters", body: with(accepted, "CompanyId", strings.Repeat("c", 65)), field: "CompanyId"},
		{name: "UserSubscriptionCreated NewPlan missing", body: with(bodies[advisorspec.UserSubscriptionCreated], "NewPlan", absent), field: "NewPlan"},
		{name: "UserSubscriptionCreated NewPlan empty", body: with(bodies[advisorspec.UserSubscriptionCreated], "NewPlan", ""), field: "NewPlan"},
		{name: "UserSubscriptionCanceled OldPlan missing", body: with(bodies[advisorspec.UserSubscriptionCanceled], "OldPlan", absent), field: "OldPlan"},
		{name: "UserSubscriptionChanged OldPlan missing", body: with(bodies[advisorspec.UserSubscriptionChanged], "OldPlan", absent), field: "OldPlan"},
		{name: "UserSubscriptionChanged NewPlan missing", body: with(bodies[advisorspec.UserSubscriptionChanged], "NewPlan", absent), field: "NewPlan"},
		{name: "UserSubscriptionReactivated OldPlan missing", body: with(bodies[advisorspec.UserSubscriptionReactivated], "OldPlan", absent), field: "OldPlan"},
		{name: "UserSubscriptionReactivated OldPlan not a string", body: with(bodies[advisorspec.UserSubscriptionReactivated], "OldPlan", 3), field: "OldPlan"},
		{name: "ClientProgressChanged EstateStatus missing", body: with(progress, "EstateStatus", absent), field: "EstateStatus"},
		{name: "ClientProgressChanged CompletionPercentage missing", body: with(progress, "CompletionPercentage", absent), field: "CompletionPercentage"},
		{name: "ClientProgressChanged CompletionPercentage above 100", body: with(progress, "CompletionPercentage", 101), field: "CompletionPercentage", message: "101"},
		{name: "ClientProgressChanged CompletionPercentage below 0", body: with(progress, "CompletionPercentage", -1), field: "CompletionPercentage"},
		{name: `ClientProgressChanged CompletionPercentage "50" is a string`, body: with(progress, "CompletionPercentage", "50"), field: "CompletionPercentage"},
		{name: "ClientProgressChanged CompletionPercentage 1.5 is not an integer", body: with(progress, "CompletionPercentage", raw("1.5")), field: "CompletionPercentage"},
		{name: "ClientProgressChanged CompletionPercentage a boolean", body: with(progress, "CompletionPercentage", true), field: "CompletionPercentage"},

		// Asset events.
		{name: "AssetAdded AssetName missing", body: with(added, "AssetName", absent), field: "AssetName"},
		{name: "AssetDeleted AssetName missing", body: with(bodies[advisorspec.AssetDeleted], "AssetName", absent), field: "AssetName"},
		{name: "AssetDeleted AssetName empty", body: with(bodies[advisorspec.AssetDeleted], "AssetName", ""), field: "AssetName"},
		{name: "AssetOwnershipDeleted AssetName not a string", body: with(ownDel, "AssetName", 1), field: "AssetName"},
		{name: `AssetAdded DollarAmount "850000" is a string`, body: with(added, "DollarAmount", "850000"), field: "DollarAmount"},
		{name: "AssetAdded DollarAmount 1.5 is not an integer", body: with(added, "DollarAmount", raw("1.5")), field: "DollarAmount"},
		{name: "AssetBeneficiaryAdded BeneficiaryAdded missing", body: with(benAdded, "BeneficiaryAdded", absent), field: "BeneficiaryAdded"},
		{name: "AssetBeneficiaryAdded BeneficiaryAdded not an array", body: with(benAdded, "BeneficiaryAdded", "Emma Smith"), field: "BeneficiaryAdded"},
		{name: "AssetBeneficiaryAdded names item not an object", body: with(benAdded, "BeneficiaryAdded.1", "Liam Smith"), field: "BeneficiaryAdded[1]"},
		{name: "AssetBeneficiaryAdded names item without Name", body: with(benAdded, "BeneficiaryAdded.1.Name", absent), field: "BeneficiaryAdded[1].Name"},
		{name: "AssetBeneficiaryAdded names item with an empty Name", body: with(benAdded, "BeneficiaryAdded.0.Name", ""), field: "BeneficiaryAdded[0].Name"},
		{name: "AssetBeneficiaryAdded names item with a Name not a string", body: with(benAdded, "BeneficiaryAdded.0.Name", 7), field: "BeneficiaryAdded[0].Name"},
		{name: "AssetBeneficiaryDeleted BeneficiaryDeleted missing", body: with(benDel, "BeneficiaryDeleted", absent), field: "BeneficiaryDeleted"},
		{name: "AssetBeneficiaryDeleted names item not an object", body: with(benDel, "BeneficiaryDeleted.0", []any{"Liam"}), field: "BeneficiaryDeleted[0]"},
		{name: "AssetOwnershipAdded without OwnershipAdded or OwnerAdded", body: with(ownAdded, "OwnershipAdded", absent), field: "OwnershipAdded"},
		{name: "AssetOwnershipAdded OwnershipAdded item without Name", body: with(ownAdded, "OwnershipAdded.0", map[string]any{"FullName": "Jane"}), field: "OwnershipAdded[0].Name"},
		{name: "AssetOwnershipAdded OwnerAdded item not an object",
			body:  `{"Wid": "w1", "EventType": "AssetOwnershipAdded", "Timestamp": "2026-11-22T09:30:00Z", "AssetName": "Boat", "OwnerAdded": ["Jane Smith"]}`,
			field: "OwnerAdded[0]"},
		{name: "AssetOwnershipAdded OwnerAdded not an array",
			body:  `{"Wid": "w1", "EventType": "AssetOwnershipAdded", "Timestamp": "2026-11-22T09:30:00Z", "AssetName": "Boat", "OwnerAdded": {"Name": "Jane Smith"}}`,
			field: "OwnerAdded"},
		{name: "AssetOwnershipDeleted OwnerDeleted missing", body: with(ownDel, "OwnerDeleted", absent), field: "OwnerDeleted"},
		{name: "AssetOwnershipDeleted names item without Name", body: with(ownDel, "OwnerDeleted.0", map[string]any{}), field: "OwnerDeleted[0].Name"},

		// Document events.
		{name: "DocumentStarted DocumentName missing", body: with(started, "DocumentName", absent), field: "DocumentName"},
		{name: "DocumentStarted DocumentProgressPercentage missing", body: with(started, "DocumentProgressPercentage", absent), field: "DocumentProgressPercentage"},
		{name: "DocumentPendingValidation DocumentProgressPercentage above 100", body: with(pending, "DocumentProgressPercentage", 101), field: "DocumentProgressPercentage"},
		{name: "DocumentCompleted DocumentProgressPercentage below 0", body: with(done, "DocumentProgressPercentage", -5), field: "DocumentProgressPercentage"},
		{name: `DocumentCompleted DocumentProgressPercentage "50" is a string`, body: with(done, "DocumentProgressPercentage", "50"), field: "DocumentProgressPercentage"},
		{name: "DocumentStarted DocumentProgressPercentage 1.5 is not an integer", body: with(started, "DocumentProgressPercentage", raw("1.5")), field: "DocumentProgressPercentage"},
		{name: "DocumentStarted IsRecommendedDocument a string", body: with(started, "IsRecommendedDocument", "true"), field: "IsRecommendedDocument"},
		{name: "DocumentStarted WasCompletedBefore a number", body: with(started, "WasCompletedBefore", 1), field: "WasCompletedBefore"},
		{name: "DocumentCompleted UserTier not a string", body: with(done, "UserTier", 2), field: "UserTier"},
		{name: "DocumentOwnerInfo not an object", body: with(started, "DocumentOwnerInfo", "Jane Smith"), field: "DocumentOwnerInfo"},
		{name: "DocumentOwnerInfo IsPrimary a string", body: with(done, "DocumentOwnerInfo.IsPrimary", "yes"), field: "DocumentOwnerInfo.IsPrimary"},
		{name: "DocumentOwnerInfo FirstName not a string", body: with(done, "DocumentOwnerInfo.FirstName", false), field: "DocumentOwnerInfo.FirstName"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := advisorspec.ParseWebhook([]byte(tc.body))
			if err == nil {
				t.Fatalf("got %s accepted, want it refused", w.Canonical)
			}
			if w != nil && (w.Canonical != nil || w.Wid != "") { // its type alone may come back
				t.Errorf("got a webhook with the error: %s", w.Canonical)
			}
			if err.Field != tc.field {
				t.Errorf("got Field %q, want %q (error: %v)", err.Field, tc.field, err)
			}
			if want := map[bool]advisorspec.Kind{true: advisorspec.Malformed, false: advisorspec.Invalid}[tc.field == ""]; err.Kind != want {
				t.Errorf("got Kind %d, want %d", err.Kind, want)
			}
			if tc.message != "" && !strings.Contains(err.Message, tc.message) {
				t.Errorf("got Message %q, want it to mention %q", err.Message, tc.message)
			}
			if tc.field != "" && !strings.HasPrefix(err.Message, tc.field+": ") || err.Message == tc.field+": " || err.Message == "" {
				t.Errorf("got Message %q, want the field and then what is wrong with it", err.Message)
			}
		})
	}
}

// Limits are inclusive: a value exactly at the limit is accepted.
func TestParseWebhookAcceptsValuesAtTheLimits(t *testing.T) {
	tests := []struct{ name, body string }{
		{"Wid of 64 characters", with(bodies[advisorspec.AssetDeleted], "Wid", strings.Repeat("w", 64))},
		{"Wid of 64 non-ASCII characters", with(bodies[advisorspec.AssetDeleted], "Wid", strings.Repeat("é", 64))},
		{"RegistrationEmail of 320 characters", with(bodies[advisorspec.ClientAcceptedInvitation], "RegistrationEmail", strings.Repeat("a", 308)+"@example.com")},
		{"AdvisorWid of 64 characters", with(bodies[advisorspec.ClientDeclinedInvitation], "AdvisorWid", strings.Repeat("a", 64))},
		{"invitation ids absent", `{"Wid": "w1", "EventType": "ClientAcceptedInvitation", "Timestamp": "2026-11-22T09:30:00Z"}`},
		{"DocumentProgressPercentage 0", with(bodies[advisorspec.DocumentCompleted], "DocumentProgressPercentage", 0)},
		{"DocumentProgressPercentage 100", with(bodies[advisorspec.DocumentStarted], "DocumentProgressPercentage", 100)},
		{"an empty names array", with(bodies[advisorspec.AssetBeneficiaryAdded], "BeneficiaryAdded", []any{})},
		{"AssetAdded without DollarAmount", with(bodies[advisorspec.AssetAdded], "DollarAmount", absent)},
		{"a document event without DocumentOwnerInfo", with(bodies[advisorspec.DocumentPendingValidation], "DocumentOwnerInfo", absent)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { mustParse(t, tc.body) })
	}
	w := mustParse(t, with(bodies[advisorspec.AssetDeleted], "Wid", strings.Repeat("w", 64)))
	if got := w.Wid; got != strings.Repeat("w", 64) {
		t.Errorf("got Wid %q, want 64 w", got)
	}
}

func mustParse(t *testing.T, body string) *advisorspec.Webhook {
	t.Helper()
	w, err := advisorspec.ParseWebhook([]byte(body))
	if err != nil {
		t.Fatalf("got %v, want %s accepted", err, body)
	}
	return w
}

// Each type belongs to the specification's group, and a delivery's envelope is read as sent.
func TestEveryEventTypeBelongsToTheSpecificationsGroup(t *testing.T) {
	want := map[advisorspec.EventType]advisorspec.EventGroup{
		advisorspec.AssistantJobCompleted: advisorspec.GroupAnalysis, advisorspec.AssistantJobFailed: advisorspec.GroupAnalysis,
		advisorspec.AssistantMultiDocumentRequiresReview: advisorspec.GroupAnalysis, advisorspec.TaxJobCompleted: advisorspec.GroupAnalysis,
		advisorspec.TaxJobFailed:             advisorspec.GroupAnalysis,
		advisorspec.ClientAcceptedInvitation: advisorspec.GroupClient, advisorspec.ClientDeclinedInvitation: advisorspec.GroupClient,
		advisorspec.UserSubscriptionCreated: advisorspec.GroupClient, advisorspec.UserSubscriptionCanceled: advisorspec.GroupClient,
		advisorspec.UserSubscriptionChanged: advisorspec.GroupClient, advisorspec.UserSubscriptionReactivated: advisorspec.GroupClient,
		advisorspec.ClientProgressChanged: advisorspec.GroupClient,
		advisorspec.AssetAdded:            advisorspec.GroupAsset, advisorspec.AssetDeleted: advisorspec.GroupAsset, advisorspec.AssetBeneficiaryAdded: advisorspec.GroupAsset,
		advisorspec.AssetBeneficiaryDeleted: advisorspec.GroupAsset, advisorspec.AssetOwnershipAdded: advisorspec.GroupAsset, advisorspec.AssetOwnershipDeleted: advisorspec.GroupAsset,
		advisorspec.DocumentStarted: advisorspec.GroupDocument, advisorspec.DocumentPendingValidation: advisorspec.GroupDocument, advisorspec.DocumentCompleted: advisorspec.GroupDocument,
	}
	if len(advisorspec.EventTypes) != 21 || len(want) != 21 {
		t.Fatalf("got %d types listed and %d in the table, want the specification's 21", len(advisorspec.EventTypes), len(want))
	}
	for _, typ := range advisorspec.EventTypes {
		t.Run(string(typ), func(t *testing.T) {
			if got := typ.Group(); got != want[typ] {
				t.Errorf("got group %q, want %q", got, want[typ])
			}
			if !slices.Contains(advisorspec.EventGroups, typ.Group()) {
				t.Errorf("got group %q, want one of %v", typ.Group(), advisorspec.EventGroups)
			}
			body, ok := bodies[typ]
			if !ok {
				t.Fatalf("no sample body for %s", typ)
			}
			w := mustParse(t, body)
			wantWid := wid
			if typ == advisorspec.ClientDeclinedInvitation {
				wantWid = "u-5510" // the user's, who declined
			}
			if w.EventType != typ || w.Wid != wantWid || !w.Timestamp.Equal(stamp) {
				t.Errorf("got %s for %s at %s, want %s for %s at %s", w.EventType, w.Wid, w.Timestamp, typ, wantWid, stamp)
			}
		})
	}
	if got := advisorspec.EventType("ClientWaved").Group(); got != "" {
		t.Errorf("got group %q for an unknown type, want none", got)
	}
}

// An event's date-time is ISO 8601: RFC 3339 with an offset, or without one, taken as UTC.
func TestParseDateTime(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     time.Time
	}{
		{"RFC 3339 in UTC", "2026-11-22T09:30:00Z", stamp},
		{"RFC 3339 with an offset is converted to UTC", "2026-11-22T10:30:00+01:00", stamp},
		{"RFC 3339 with a negative offset and fractional seconds", "2026-11-22T04:30:00.25-05:00", stamp.Add(250 * time.Millisecond)},
		{"ISO date-time without an offset is UTC", "2026-11-22T09:30:00", stamp},
		{"ISO date-time without an offset, seven fractional digits", "2026-11-22T09:30:00.1234567", stamp.Add(123456700 * time.Nanosecond)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := advisorspec.ParseDateTime(tc.in)
			if err != nil || !got.Equal(tc.want) || got.Location() != time.UTC {
				t.Errorf("got %s (%s), %v; want %s in UTC", got, got.Location(), err, tc.want)
			}
			w := mustParse(t, with(bodies[advisorspec.ClientProgressChanged], "Timestamp", tc.in))
			if !w.Timestamp.Equal(tc.want) {
				t.Errorf("got Timestamp %s, want %s", w.Timestamp, tc.want)
			}
		})
	}
}

// The canonical form holds what the specification describes and nothing else, in one spelling,
// so that a reader can decode it with encoding/json and equal events are stored alike.
func TestCanonicalFormKeepsOnlyTheSpecificationsFieldsInOneSpelling(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"a flat event keeps its fields in the specification's order",
			`{"CompletionPercentage": 40, "Timestamp": "2026-11-22T09:30:00Z", "EstateStatus": "InProgress", "EventType": "ClientProgressChanged", "Wid": "w1"}`,
			`{"EventType":"ClientProgressChanged","Wid":"w1","Timestamp":"2026-11-22T09:30:00Z","EstateStatus":"InProgress","CompletionPercentage":40}`},
		{"an analysis event keeps its envelope and its Payload",
			bodies[advisorspec.TaxJobCompleted],
			`{"EventType":"TaxJobCompleted","Wid":"` + wid + `","Timestamp":"2026-11-22T09:30:00Z","ExternalId":"crm-4711","Payload":{"CorrelationId":"corr-tax-1","JobId":"job-tax-1","DocumentWid":"vault-doc-004","source_document":{"vault_id":"vault-doc-004","name":"2025 Form 1040","extension":"pdf","uploaded_at":"2026-11-21T18:05:12Z"},"category":"tax","PresentationStatus":"insightsUnavailable"}}`},
		{"date-times are RFC 3339 in UTC",
			`{"EventType": "AssistantJobFailed", "Wid": "w1", "Timestamp": "2026-11-22T10:30:00.5+01:00", "Payload": {"CorrelationId": "", "JobId": "", "DocumentWid": "d1", "Reason": "UploadTimeout"}}`,
			`{"EventType":"AssistantJobFailed","Wid":"w1","Timestamp":"2026-11-22T09:30:00.5Z","Payload":{"CorrelationId":"","JobId":"","DocumentWid":"d1","Reason":"UploadTimeout"}}`},
		{"unknown fields, fields that differ only in case and nulls are left out",
			`{"EventType": "AssetAdded", "Wid": "w1", "Timestamp": "2026-11-22T09:30:00Z", "AssetName": "Boat", "assetname": "Car", "DollarAmount": null, "Region": {"x": 1}}`,
			`{"EventType":"AssetAdded","Wid":"w1","Timestamp":"2026-11-22T09:30:00Z","AssetName":"Boat"}`},
		{"an empty uploaded_at is left out", with(bodies[advisorspec.AssistantJobCompleted], "Payload.source_document.uploaded_at", ""), ""},
		{"OwnerAdded is written OwnershipAdded, its items with Name only",
			`{"EventType": "AssetOwnershipAdded", "Wid": "w1", "Timestamp": "2026-11-22T09:30:00Z", "AssetName": "Boat", "OwnershipAdded": null, "OwnerAdded": [{"Name": "Jane Smith", "Share": 1}]}`,
			`{"EventType":"AssetOwnershipAdded","Wid":"w1","Timestamp":"2026-11-22T09:30:00Z","AssetName":"Boat","OwnershipAdded":[{"Name":"Jane Smith"}]}`},
		{"strings are encoded as encoding/json encodes them",
			`{"EventType": "AssetDeleted", "Wid": "w\u0031", "Timestamp": "2026-11-22T09:30:00Z", "AssetName": "a\/b <c>"}`,
			`{"EventType":"AssetDeleted","Wid":"w1","Timestamp":"2026-11-22T09:30:00Z","AssetName":"a/b \u003cc\u003e"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := mustParse(t, tc.body)
			if tc.want != "" && string(w.Canonical) != tc.want {
				t.Errorf("got  %s\nwant %s", w.Canonical, tc.want)
			}
			if tc.want == "" && bytes.Contains(w.Canonical, []byte("uploaded_at")) {
				t.Errorf("got %s, want no uploaded_at", w.Canonical)
			}
		})
	}
}

// The canonical form of a delivery is a delivery whose canonical form is itself, for every type
// and whatever the delivery added: storing it loses nothing the specification describes.
func TestCanonicalFormIsItsOwnCanonicalForm(t *testing.T) {
	extra := map[string]any{"Nested": []any{1, "two", nil}}
	for _, typ := range advisorspec.EventTypes {
		t.Run(string(typ), func(t *testing.T) {
			body := with(with(bodies[typ], "Region", extra), "eventtype", "Bogus")
			w := mustParse(t, body)
			again := mustParse(t, string(w.Canonical))
			if !bytes.Equal(again.Canonical, w.Canonical) {
				t.Errorf("got  %s\nwant %s", again.Canonical, w.Canonical)
			}
			if again.EventType != w.EventType || again.Wid != w.Wid || !again.Timestamp.Equal(w.Timestamp) {
				t.Errorf("got envelope %s %s %s, want %s %s %s", again.EventType, again.Wid, again.Timestamp, w.EventType, w.Wid, w.Timestamp)
			}
			if !json.Valid(w.Canonical) {
				t.Errorf("got invalid JSON %s", w.Canonical)
			}
			plain := mustParse(t, bodies[typ])
			if !bytes.Equal(plain.Canonical, w.Canonical) {
				t.Errorf("unknown fields changed the canonical form:\ngot  %s\nwant %s", w.Canonical, plain.Canonical)
			}
			for _, name := range advisorspec.EventFields(typ) {
				// Every sample body carries every field; the canonical form must keep it.
				if !bytes.Contains(w.Canonical, []byte(strconv.Quote(name)+":")) {
					t.Errorf("got %s, want it to hold %s", w.Canonical, name)
				}
			}
		})
	}
}

func ExampleParseWebhook() {
	w, err := advisorspec.ParseWebhook([]byte(`{"Wid": "w1", "EventType": "AssetOwnershipAdded",
		"Timestamp": "2026-11-22T10:30:00+01:00", "AssetName": "Boat", "OwnerAdded": [{"Name": "Jane Smith"}], "Region": "EU"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(w.EventType, w.EventType.Group(), w.Wid, w.Timestamp)
	fmt.Println(string(w.Canonical))
	_, err = advisorspec.ParseWebhook([]byte(`{"Wid": "w1", "EventType": "ClientProgressChanged", "Timestamp": "2026-11-22T09:30:00Z", "EstateStatus": "InProgress", "CompletionPercentage": 101}`))
	fmt.Println(err.Field, "|", err.Message)
	// Output:
	// AssetOwnershipAdded asset w1 2026-11-22 09:30:00 +0000 UTC
	// {"EventType":"AssetOwnershipAdded","Wid":"w1","Timestamp":"2026-11-22T09:30:00Z","AssetName":"Boat","OwnershipAdded":[{"Name":"Jane Smith"}]}
	// CompletionPercentage | CompletionPercentage: must be from 0 to 100, got 101
}
